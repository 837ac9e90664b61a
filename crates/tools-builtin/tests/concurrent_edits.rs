//! Edit, Write and NotebookEdit calls that run at the same time on one file (`toolwright
//! serve` runs each MCP `tools/call` on its own, and two sessions side by side): each call's
//! read, staleness check, write and read-cache update is one step for the other calls of
//! the process. No change that was reported written is lost: a later call either builds
//! on it (same read cache) or is refused as modified since read (another read cache).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{Failure, ctx, run, text};
use serde_json::json;
use tool_core::{MODIFIED_MESSAGE, ToolUseContext};
use tools_builtin::{Edit, NotebookEdit, Read, Write};

/// How many Edits run at once in each trial.
const EDITS: usize = 24;
/// How many times each scenario is repeated (the race is a matter of timing).
const TRIALS: usize = 8;

/// Call-time refusal when the file changed between the checks and the write.
const UNEXPECTEDLY_MODIFIED: &str = "File has been unexpectedly modified.";

fn line(i: usize) -> String {
    format!("line {i:02} of the file\n")
}

fn upper(i: usize) -> String {
    format!("LINE {i:02} OF THE FILE\n")
}

/// A file of `EDITS` distinct lines, padded so that each write takes a moment (and still
/// shown whole by one Read: under 2000 lines and 256 KiB).
fn fill(path: &Path) {
    let mut body: String = (0..EDITS).map(line).collect();
    body.push_str(&format!("{}\n", "padding ".repeat(12)).repeat(400));
    fs::write(path, body).unwrap();
}

/// Runs Edit `i` (line `i` to upper case) through validate_input and call, as the
/// executor does, on its own task.
fn spawn_edit(
    c: &ToolUseContext,
    path: &Path,
    i: usize,
) -> tokio::task::JoinHandle<(usize, Result<String, Failure>)> {
    let (c, input) = (
        c.clone(),
        json!({"file_path": path, "old_string": line(i), "new_string": upper(i)}),
    );
    tokio::spawn(async move {
        let out = run(&Edit, &c, input).await;
        (i, out.map(|o| o.content.joined_text()))
    })
}

/// Awaits every Edit; returns (index, result) in index order.
async fn join_all(
    handles: Vec<tokio::task::JoinHandle<(usize, Result<String, Failure>)>>,
) -> Vec<(usize, Result<String, Failure>)> {
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        out.push(h.await.expect("an Edit task panicked"));
    }
    out.sort_by_key(|(i, _)| *i);
    out
}

/// Every Edit that said it updated the file has its change in the file; every other was
/// refused as modified since read. Returns how many succeeded.
fn check_outcomes(path: &Path, outcomes: &[(usize, Result<String, Failure>)]) -> usize {
    let final_text = fs::read_to_string(path).unwrap();
    let mut ok = 0;
    for (i, outcome) in outcomes {
        match outcome {
            Ok(said) => {
                assert!(
                    said.contains("has been updated successfully"),
                    "edit {i}: {said}"
                );
                assert!(
                    final_text.contains(&upper(*i)),
                    "edit {i} reported success but its change is lost; file starts:\n{}",
                    &final_text[..final_text.len().min(900)]
                );
                ok += 1;
            }
            Err(f) => assert!(
                f.text.contains(MODIFIED_MESSAGE) || f.text.contains(UNEXPECTEDLY_MODIFIED),
                "edit {i} failed, not as modified since read: {}",
                f.text
            ),
        }
    }
    ok
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_edits_in_one_session_all_land() {
    for trial in 0..TRIALS {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("shared.txt");
        fill(&f);
        let c = ctx(dir.path());
        text(&Read, &c, json!({"file_path": f})).await;
        let handles = (0..EDITS).map(|i| spawn_edit(&c, &f, i)).collect();
        let outcomes = join_all(handles).await;
        check_outcomes(&f, &outcomes);
        // One read cache: each Edit sees the ones before it recorded and applies its
        // change on top, so none is refused.
        for (i, outcome) in &outcomes {
            if let Err(e) = outcome {
                panic!("trial {trial}: edit {i} was refused: {}", e.text);
            }
        }
        let final_text = fs::read_to_string(&f).unwrap();
        for i in 0..EDITS {
            assert!(
                final_text.contains(&upper(i)),
                "trial {trial}: edit {i} lost"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_edits_from_two_sessions_never_lose_a_reported_write() {
    for _ in 0..TRIALS {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("shared.txt");
        fill(&f);
        let sessions = [ctx(dir.path()), ctx(dir.path())];
        for c in &sessions {
            text(&Read, c, json!({"file_path": f})).await;
        }
        let handles = (0..EDITS)
            .map(|i| spawn_edit(&sessions[i % 2], &f, i))
            .collect();
        let outcomes = join_all(handles).await;
        let ok = check_outcomes(&f, &outcomes);
        // The first write wins; the other session's read is stale after it.
        assert!(ok >= 1, "no Edit succeeded");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn edits_through_a_symlink_and_the_target_are_serialised() {
    for _ in 0..TRIALS {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("target.txt");
        let link = dir.path().join("link.txt");
        fill(&f);
        std::os::unix::fs::symlink(&f, &link).unwrap();
        let c = ctx(dir.path());
        text(&Read, &c, json!({"file_path": f})).await;
        text(&Read, &c, json!({"file_path": link})).await;
        // Two names, two read-cache entries: a write through one leaves the other stale.
        let names: [PathBuf; 2] = [f.clone(), link.clone()];
        let handles = (0..EDITS)
            .map(|i| spawn_edit(&c, &names[i % 2], i))
            .collect();
        let outcomes = join_all(handles).await;
        assert!(check_outcomes(&f, &outcomes) >= 1, "no Edit succeeded");
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writes_and_edits_keep_what_they_report() {
    for _ in 0..TRIALS {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("shared.txt");
        fill(&f);
        let c = ctx(dir.path());
        text(&Read, &c, json!({"file_path": f})).await;
        let mut handles = Vec::new();
        for i in 0..EDITS {
            handles.push(spawn_edit(&c, &f, i));
        }
        // A Write of the whole file among them: it is never refused (one read cache), and
        // the Edits after it find their line gone (refused: not found).
        let (c2, f2) = (c.clone(), f.clone());
        let write = tokio::spawn(async move {
            run(
                &Write,
                &c2,
                json!({"file_path": f2, "content": "written whole\n"}),
            )
            .await
        });
        let mut outcomes = Vec::new();
        for h in handles {
            outcomes.push(h.await.unwrap());
        }
        if let Err(e) = write.await.unwrap() {
            panic!("the Write was refused: {}", e.text);
        }
        // The Edits before the Write were replaced by it; those after it found their line
        // gone: the file is what the Write wrote.
        assert_eq!(fs::read_to_string(&f).unwrap(), "written whole\n");
        for (i, outcome) in outcomes {
            if let Err(e) = outcome {
                assert!(
                    e.text.contains("String to replace not found"),
                    "edit {i}: {}",
                    e.text
                );
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_notebook_edits_in_one_session_all_land() {
    const CELLS: usize = 12;
    for trial in 0..TRIALS {
        let dir = tempfile::tempdir().unwrap();
        let nb = dir.path().join("n.ipynb");
        let cells: Vec<_> = (0..CELLS)
            .map(|i| {
                json!({"cell_type": "code", "id": format!("c{i}"), "metadata": {},
                       "source": [format!("x = {i}")], "outputs": [], "execution_count": null})
            })
            .collect();
        let doc = json!({"cells": cells, "metadata": {"language_info": {"name": "python"}},
                         "nbformat": 4, "nbformat_minor": 5});
        fs::write(&nb, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        let c = ctx(dir.path());
        text(&Read, &c, json!({"file_path": nb})).await;
        let handles: Vec<_> = (0..CELLS)
            .map(|i| {
                let (c, input) = (
                    c.clone(),
                    json!({"notebook_path": nb, "cell_id": format!("c{i}"),
                           "new_source": format!("y = {i}")}),
                );
                tokio::spawn(async move { (i, run(&NotebookEdit, &c, input).await) })
            })
            .collect();
        for h in handles {
            let (i, out) = h.await.unwrap();
            if let Err(e) = out {
                panic!("trial {trial}: cell {i} edit refused: {}", e.text);
            }
        }
        let after: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(&nb).unwrap()).unwrap();
        for i in 0..CELLS {
            let source = &after["cells"][i]["source"];
            let joined = match source {
                serde_json::Value::Array(parts) => {
                    parts.iter().filter_map(|p| p.as_str()).collect::<String>()
                }
                other => other.as_str().unwrap_or_default().to_owned(),
            };
            assert_eq!(joined, format!("y = {i}"), "trial {trial}: cell {i} lost");
        }
    }
}
