//! Regression tests for faults found by the reliability work (docs/reliability.md), each
//! named after what it was.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::os::unix::fs::{FileTypeExt, symlink};
use std::path::Path;
use std::time::Duration;

use common::{ctx, fail, run, text};
use serde_json::{Value, json};
use tool_core::{MODIFIED_MESSAGE, ProgressSender, Tool, ToolUseContext};
use tools_builtin::{Edit, NotebookEdit, Read, Write};

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Runs `call` directly (the pipeline already validated and checked permissions).
async fn call(tool: &dyn Tool, ctx: &ToolUseContext, input: Value) -> Result<String, String> {
    let input = tool.parse_input(input).unwrap();
    tool.call(input, ctx.clone(), ProgressSender::none())
        .await
        .map(|r| r.data.content.joined_text())
        .map_err(|e| e.to_model_text())
}

/// After the permission check allowed a write inside the project, another process replaced
/// the file (or a directory on its path) with a symlink leading out of the project: the
/// write followed it and replaced a file outside the working directories.
#[tokio::test]
async fn a_symlink_swapped_in_after_the_check_redirected_the_write() {
    let project = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    // The same bytes as the project's file, so every content check passes and only the
    // path decides.
    let secret = outside.path().join("secret.txt");
    fs::write(&secret, "inside\n").unwrap();
    let c = ctx(project.path());

    // The file itself.
    let f = project.path().join("a.txt");
    fs::write(&f, "inside\n").unwrap();
    text(&Read, &c, json!({"file_path": f})).await;
    let edit = json!({"file_path": f, "old_string": "inside", "new_string": "pwned"});
    let write = json!({"file_path": f, "content": "pwned\n"});
    // Checked while it is a plain file...
    Edit.validate_input(&Edit.parse_input(edit.clone()).unwrap(), &c)
        .await
        .unwrap();
    // ...swapped before the call.
    fs::remove_file(&f).unwrap();
    symlink(&secret, &f).unwrap();
    for (tool, input) in [(&Edit as &dyn Tool, edit), (&Write as &dyn Tool, write)] {
        let err = call(tool, &c, input).await.unwrap_err();
        assert!(
            err.contains("outside the working directories"),
            "{}: {err}",
            tool.name()
        );
        assert_eq!(fs::read_to_string(&secret).unwrap(), "inside\n");
    }

    // A directory on the path.
    let sub = project.path().join("sub");
    fs::create_dir(&sub).unwrap();
    let new = sub.join("new.txt");
    let input = json!({"file_path": new, "content": "x"});
    Write
        .validate_input(&Write.parse_input(input.clone()).unwrap(), &c)
        .await
        .unwrap();
    fs::remove_dir(&sub).unwrap();
    symlink(outside.path(), &sub).unwrap();
    let err = call(&Write, &c, input).await.unwrap_err();
    assert!(err.contains("outside the working directories"), "{err}");
    assert_eq!(names(outside.path()), ["secret.txt"]);

    // Links that stay inside still work, and the link stays a link.
    let real = project.path().join("real.txt");
    let link = project.path().join("link.txt");
    fs::write(&real, "one\n").unwrap();
    symlink(&real, &link).unwrap();
    text(&Read, &c, json!({"file_path": link})).await;
    run(
        &Edit,
        &c,
        json!({"file_path": link, "old_string": "one", "new_string": "two"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&real).unwrap(), "two\n");
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // A path outside the working directories that the permission check named itself is
    // written as given.
    let direct = outside.path().join("direct.txt");
    run(&Write, &c, json!({"file_path": direct, "content": "ok\n"}))
        .await
        .unwrap();
    assert_eq!(fs::read_to_string(&direct).unwrap(), "ok\n");
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Write, Edit and NotebookEdit on a FIFO blocked for ever (opening it waits for a writer),
/// and a device path such as /dev/null would have been replaced by a plain file.
#[tokio::test]
async fn a_fifo_path_hung_write_and_edit() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let fifo = dir.path().join("pipe");
    let notebook = dir.path().join("pipe.ipynb");
    mkfifo(&fifo);
    mkfifo(&notebook);
    let cases = [
        (
            &Write as &dyn Tool,
            json!({"file_path": fifo, "content": "x"}),
        ),
        (
            &Edit as &dyn Tool,
            json!({"file_path": fifo, "old_string": "a", "new_string": "b"}),
        ),
        (
            &NotebookEdit as &dyn Tool,
            json!({"notebook_path": notebook, "new_source": "x", "cell_id": "c"}),
        ),
    ];
    // A hang guard only.
    tokio::time::timeout(Duration::from_secs(60), async {
        for (tool, input) in cases {
            let err = fail(tool, &c, input.clone()).await;
            assert!(
                err.text.contains("not a regular file"),
                "{}: {}",
                tool.name(),
                err.text
            );
            let err = call(tool, &c, input).await.unwrap_err();
            assert!(
                err.contains("not a regular file"),
                "{} call: {err}",
                tool.name()
            );
        }
    })
    .await
    .expect("a write to a FIFO hung");
    // Still a FIFO: nothing replaced it.
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

/// A change that kept the file's mtime (within the millisecond of the Read, or restored by
/// `cp -p`, rsync or `touch -r`) passed the stale check: Edit then changed a file the model
/// had not seen.
#[tokio::test]
async fn a_change_that_kept_the_mtime_slipped_past_the_stale_check() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.txt");
    fs::write(&f, "alpha beta\n").unwrap();
    let c = ctx(dir.path());
    text(&Read, &c, json!({"file_path": f})).await;
    let mtime = fs::metadata(&f).unwrap().modified().unwrap();
    // Another process changes it and puts the mtime back.
    fs::write(&f, "alpha gamma\n").unwrap();
    fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    for (tool, input) in [
        (
            &Edit as &dyn Tool,
            json!({"file_path": f, "old_string": "alpha", "new_string": "omega"}),
        ),
        (
            &Write as &dyn Tool,
            json!({"file_path": f, "content": "replaced\n"}),
        ),
    ] {
        let err = fail(tool, &c, input).await;
        assert!(err.text.contains(MODIFIED_MESSAGE), "{}", err.text);
        assert_eq!(fs::read_to_string(&f).unwrap(), "alpha gamma\n");
    }
    // A new Read shows the new content (not "unchanged", whatever the mtime says), and the
    // edit then goes through.
    let shown = text(&Read, &c, json!({"file_path": f})).await;
    assert!(shown.contains("alpha gamma"), "{shown}");
    run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "alpha", "new_string": "omega"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&f).unwrap(), "omega gamma\n");
}

/// A writer killed mid-write (SIGKILL) left its `.NAME.tw-tmp.PID.TAG.N` file for ever. The
/// next write in the same directory removes those whose process is gone, and no other. A
/// file written from another PID namespace or host (another tag: its PID means nothing
/// here), or named before tags, is removed only once it is old: a live writer in a
/// container sharing the directory had its file deleted under it.
#[tokio::test]
async fn temp_files_of_a_killed_writer_stayed_for_ever() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f.txt");
    let c = ctx(dir.path());
    let tag = tool_core::temp_file::writer_tag();
    // A process that has certainly ended.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let stale = dir.path().join(format!(".f.txt.tw-tmp.{dead}.{tag}.0"));
    let stale_other = dir.path().join(format!(".g.txt.tw-tmp.{dead}.{tag}.3"));
    let live = format!(".f.txt.tw-tmp.1.{tag}.0"); // pid 1 is always there
    let lookalike = format!("f.txt.tw-tmp.{dead}.{tag}.0"); // not hidden: not ours
    let foreign = format!(".f.txt.tw-tmp.{dead}.0badc0de.0");
    let untagged = format!(".f.txt.tw-tmp.{dead}.1");
    let foreign_old = format!(".h.txt.tw-tmp.{dead}.0badc0de.0");
    for p in [&stale, &stale_other] {
        fs::write(p, "half").unwrap();
    }
    for name in [&live, &lookalike, &foreign, &untagged, &foreign_old] {
        fs::write(dir.path().join(name), "half").unwrap();
    }
    let long_ago = std::time::SystemTime::now() - tool_core::temp_file::STALE_TEMP_AGE;
    fs::File::options()
        .write(true)
        .open(dir.path().join(&foreign_old))
        .unwrap()
        .set_modified(long_ago)
        .unwrap();
    run(&Write, &c, json!({"file_path": f, "content": "new\n"}))
        .await
        .unwrap();
    let mut kept = vec![live, untagged, foreign, "f.txt".to_owned(), lookalike];
    kept.sort();
    assert_eq!(names(dir.path()), kept);
}

/// Overwriting a file of a few MB with unrelated content spent minutes diffing the two for
/// the structured patch (O(N·D) with no deadline). The diff now has a deadline.
#[test]
fn diff_of_two_large_unrelated_files_never_ended() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big.txt");
    let line = |c: char| std::iter::repeat_n(c, 99).chain(['\n']).collect::<String>();
    fs::write(&f, line('a').repeat(30_000)).unwrap();
    let new = line('b').repeat(40_000);
    let (tx, rx) = std::sync::mpsc::channel();
    let path = f.clone();
    let expected = new.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let c = ctx(path.parent().unwrap());
            // Every line: Write replaces the whole file only after the whole file was seen.
            text(
                &Read,
                &c,
                json!({"file_path": path, "limit": 30_000, "allow_large": true}),
            )
            .await;
            let out = run(&Write, &c, json!({"file_path": path, "content": expected}))
                .await
                .unwrap();
            tx.send(out.structured["structuredPatch"].as_array().map(Vec::len))
                .unwrap();
        });
    });
    // A hang guard: the write takes well under a second of diffing now.
    let hunks = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the Write of a 4 MB file did not finish");
    assert!(hunks.is_some_and(|n| n >= 1));
    assert_eq!(fs::read_to_string(&f).unwrap(), new);
}

/// A write through a link in the project to a file outside the working directories was
/// refused as if the link had been swapped in, even when the session's permission engine
/// allows writing that file (by a rule, or in bypassPermissions mode): the model was told to
/// write to the real path instead. The real path is now checked by the engine at the call,
/// and a link swapped after that check (to another file) is still refused.
#[tokio::test]
async fn a_write_through_a_link_to_an_allowed_outside_file_was_refused() {
    use std::sync::Arc;
    let project = tempfile::tempdir().unwrap();
    let allowed = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let target = allowed.path().join("o.txt");
    fs::write(&target, "out\n").unwrap();
    let forbidden = other.path().join("f.txt");
    fs::write(&forbidden, "out\n").unwrap();
    let perm = tool_core::ToolPermissionContext {
        allow: vec![tool_core::SourcedRule {
            source: tool_core::RuleSource::ProjectSettings,
            rule: format!("Edit(/{}/**)", allowed.path().display()),
        }],
        ..tool_core::ToolPermissionContext::default()
    };
    let engine =
        tool_perms::PermissionEngine::new(&perm, tool_perms::PathRoots::for_cwd(project.path()))
            .unwrap();
    let c = ctx(project.path()).with_permission(perm);
    c.app_state()
        .set(tool_perms::SessionEngine(Arc::new(engine)));

    // A link to the file, and a link to its directory.
    let link = project.path().join("lo.txt");
    symlink(&target, &link).unwrap();
    let dir_link = project.path().join("linked");
    symlink(allowed.path(), &dir_link).unwrap();
    text(&Read, &c, json!({"file_path": link})).await;
    call(
        &Edit,
        &c,
        json!({"file_path": link, "old_string": "out", "new_string": "OUT"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&target).unwrap(), "OUT\n");
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    call(
        &Write,
        &c,
        json!({"file_path": dir_link.join("new.txt"), "content": "made\n"}),
    )
    .await
    .unwrap();
    assert_eq!(
        fs::read_to_string(allowed.path().join("new.txt")).unwrap(),
        "made\n"
    );

    // A link to a file not there yet (created through it, as the writer follows it).
    let dangling = project.path().join("new-link.txt");
    symlink(allowed.path().join("later.txt"), &dangling).unwrap();
    call(
        &Write,
        &c,
        json!({"file_path": dangling, "content": "later\n"}),
    )
    .await
    .unwrap();
    assert_eq!(
        fs::read_to_string(allowed.path().join("later.txt")).unwrap(),
        "later\n"
    );
    assert!(
        fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // A link to a file no rule allows is still refused, and the file is untouched.
    let bad = project.path().join("bad.txt");
    symlink(&forbidden, &bad).unwrap();
    text(&Read, &c, json!({"file_path": bad})).await;
    let err = call(&Write, &c, json!({"file_path": bad, "content": "pwned\n"}))
        .await
        .unwrap_err();
    assert!(err.contains("outside the working directories"), "{err}");
    assert_eq!(fs::read_to_string(&forbidden).unwrap(), "out\n");
}
