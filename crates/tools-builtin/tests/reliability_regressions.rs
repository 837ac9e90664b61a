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

/// A notebook of one code cell `c1`, for the write tests below.
const ONE_CELL_NOTEBOOK: &str = r#"{
 "cells": [
  {
   "cell_type": "code",
   "execution_count": null,
   "id": "c1",
   "metadata": {},
   "outputs": [],
   "source": ["x = 1"]
  }
 ],
 "metadata": {},
 "nbformat": 4,
 "nbformat_minor": 5
}
"#;

/// A link swapped after the permission check steered the write where the check never
/// looked: acceptEdits allowed Write, Edit and NotebookEdit of `sw/hooks/…` while `sw` led
/// to `safe`, then `sw` was made to lead to `.git` (or to a folder an `Edit` deny rule
/// forbids) and the write landed there, reported as a success, since the write-time check
/// only kept it inside the working directories. It now also refuses a real path that is
/// protected (unless the call named a protected path itself, which the permission step then
/// asked about) or denied, outside the working directories too; a link that leads where the
/// check allowed, a protected path named as such, and a working directory that is itself a
/// link to a protected folder still write.
#[tokio::test]
async fn a_link_swapped_after_the_check_steered_a_write_into_git_or_a_denied_folder() {
    use std::sync::Arc;
    use tool_core::{
        PermissionMode, PermissionResult, RuleSource, SourcedRule, ToolPermissionContext,
    };
    let project = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(project.path()).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let out = fs::canonicalize(outside.path()).unwrap();
    // The same bytes in each folder, so every content check passes and only the path decides.
    for base in [&root, &out] {
        for dir in [".git/hooks", "safe/hooks", "secret/hooks"] {
            let dir = base.join(dir);
            fs::create_dir_all(&dir).unwrap();
            fs::write(dir.join("a.txt"), "same\n").unwrap();
            fs::write(dir.join("n.ipynb"), ONE_CELL_NOTEBOOK).unwrap();
        }
    }
    let rule = |behavior: &str, at: &Path| SourcedRule {
        source: RuleSource::ProjectSettings,
        rule: format!("Edit(/{}{behavior})", at.display()),
    };
    let perm = ToolPermissionContext {
        mode: PermissionMode::AcceptEdits,
        deny: vec![
            rule("/**", &root.join("secret")),
            rule("/**", &out.join("secret")),
        ],
        allow: vec![rule("/**", &out)],
        ..ToolPermissionContext::default()
    };
    let engine = Arc::new(
        tool_perms::PermissionEngine::new(&perm, tool_perms::PathRoots::for_cwd(&root)).unwrap(),
    );
    let c = ctx(&root).with_permission(perm);
    c.app_state().set(tool_perms::SessionEngine(engine.clone()));

    for base in [&root, &out] {
        let sw = base.join("sw");
        let point = |to: &str| {
            let _ = fs::remove_file(&sw);
            symlink(to, &sw).unwrap();
        };
        let hooks = sw.join("hooks");
        point("safe");
        text(&Read, &c, json!({"file_path": hooks.join("a.txt")})).await;
        text(&Read, &c, json!({"file_path": hooks.join("n.ipynb")})).await;
        let calls = [
            (
                &Write as &dyn Tool,
                json!({"file_path": hooks.join("pre-commit"), "content": "#!/bin/sh\nid\n"}),
            ),
            (
                &Edit,
                json!({"file_path": hooks.join("new.txt"), "old_string": "", "new_string": "x\n"}),
            ),
            (
                &Edit,
                json!({"file_path": hooks.join("a.txt"), "old_string": "same", "new_string": "pwned"}),
            ),
            (
                &NotebookEdit,
                json!({"notebook_path": hooks.join("n.ipynb"), "cell_id": "c1", "new_source": "pwned"}),
            ),
        ];
        for (to, why) in [
            (".git", "which is in a protected directory (.git)"),
            ("secret", "which the deny rule Edit("),
        ] {
            for (tool, input) in &calls {
                // The permission step and the checks before the call see `sw` lead to `safe`.
                point("safe");
                let decided = engine.decide(*tool, input, &c).await;
                assert!(
                    matches!(decided, PermissionResult::Allow { .. }),
                    "{}: {decided:?}",
                    tool.name()
                );
                tool.validate_input(&tool.parse_input(input.clone()).unwrap(), &c)
                    .await
                    .unwrap();
                // Swapped before the call.
                point(to);
                let err = call(*tool, &c, input.clone()).await.unwrap_err();
                assert!(
                    err.contains(&format!(
                        "refusing to write: the path resolves to {}",
                        base.join(to).join("hooks").display()
                    )) && err.contains(why)
                        && err.contains("swapped in after the permission check")
                        && err.contains("Write to the real path instead"),
                    "{} to {to}: {err}",
                    tool.name()
                );
            }
            // Nothing landed there, nothing there changed.
            let there = base.join(to).join("hooks");
            assert_eq!(names(&there), ["a.txt", "n.ipynb"], "{}", there.display());
            assert_eq!(fs::read_to_string(there.join("a.txt")).unwrap(), "same\n");
            assert_eq!(
                fs::read_to_string(there.join("n.ipynb")).unwrap(),
                ONE_CELL_NOTEBOOK
            );
        }

        // A link that leads where the check allowed still writes, and stays a link.
        point("safe");
        for (tool, input) in &calls {
            call(*tool, &c, input.clone()).await.unwrap();
        }
        let safe = base.join("safe/hooks");
        assert_eq!(
            fs::read_to_string(safe.join("pre-commit")).unwrap(),
            "#!/bin/sh\nid\n"
        );
        assert_eq!(fs::read_to_string(safe.join("a.txt")).unwrap(), "pwned\n");
        assert!(fs::symlink_metadata(&sw).unwrap().file_type().is_symlink());
        // A protected path the call named itself is what the permission step asked about.
        let named = base.join(".git/hooks/named");
        call(
            &Write,
            &c,
            json!({"file_path": named, "content": "asked\n"}),
        )
        .await
        .unwrap();
        assert_eq!(fs::read_to_string(&named).unwrap(), "asked\n");
    }

    // A working directory that is itself a link to a protected folder: its files are what
    // the session works on (the permission step asks about each), not a swap.
    let claude = root.join("home/.claude");
    fs::create_dir_all(&claude).unwrap();
    let wd = root.join("cfg");
    symlink(&claude, &wd).unwrap();
    let c = ctx(&wd);
    call(
        &Write,
        &c,
        json!({"file_path": wd.join("notes.md"), "content": "n\n"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(claude.join("notes.md")).unwrap(), "n\n");
}

/// An approved write of one protected path landed in another: approving an Edit of
/// `.vscode/settings.json` (protected: `.vscode`) rewrote `.git/config` when the repository
/// ships `.vscode/settings.json -> ../.git/config` (whose `core.fsmonitor` the next
/// `git status` runs), and a Write of `.vscode/sw/hooks/pre-commit` landed in `.git/hooks`
/// when `sw` was swapped from `../safe` to `../.git` after the approval: the write-time check
/// let any protected real path through once the named path was protected. It now refuses a
/// real path protected by something else than what protects the named path (another
/// protected folder); a link within one protected folder (`.git/config-link -> config`,
/// named as such) still writes.
#[tokio::test]
async fn an_approved_write_of_one_protected_path_landed_in_another() {
    use std::sync::Arc;
    use tool_core::{PermissionMode, PermissionResult, ToolPermissionContext};
    let project = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(project.path()).unwrap();
    let git = root.join(".git");
    for dir in [".git/hooks", "safe/hooks", ".vscode"] {
        fs::create_dir_all(root.join(dir)).unwrap();
    }
    let config = git.join("config");
    let original = "[core]\n\tbare = false\n";
    fs::write(&config, original).unwrap();
    let perm = ToolPermissionContext {
        mode: PermissionMode::AcceptEdits,
        ..ToolPermissionContext::default()
    };
    let engine = Arc::new(
        tool_perms::PermissionEngine::new(&perm, tool_perms::PathRoots::for_cwd(&root)).unwrap(),
    );
    let c = ctx(&root).with_permission(perm);
    c.app_state().set(tool_perms::SessionEngine(engine.clone()));

    // The link the repository ships: the permission step asks (a protected path), the user
    // approves, and the call runs.
    let settings = root.join(".vscode/settings.json");
    symlink("../.git/config", &settings).unwrap();
    text(&Read, &c, json!({"file_path": settings})).await;
    let refused = |err: &str, real: &Path| {
        assert!(
            err.contains(&format!(
                "refusing to write: the path resolves to {}",
                real.display()
            )) && err.contains("which is in a protected directory (.git)")
                && err.contains("(.vscode)")
                && err.contains("Write to the real path instead"),
            "{err}"
        );
    };
    for (tool, input) in [
        (
            &Edit as &dyn Tool,
            json!({"file_path": settings, "old_string": "[core]",
                   "new_string": "[core]\n\tfsmonitor = touch PWNED; false"}),
        ),
        (
            &Write,
            json!({"file_path": settings, "content": "[core]\n\tfsmonitor = touch PWNED\n"}),
        ),
    ] {
        let decided = engine.decide(tool, &input, &c).await;
        assert!(
            matches!(decided, PermissionResult::Ask { .. }),
            "{}: {decided:?}",
            tool.name()
        );
        tool.validate_input(&tool.parse_input(input.clone()).unwrap(), &c)
            .await
            .unwrap();
        let err = call(tool, &c, input).await.unwrap_err();
        refused(&err, &config);
        assert_eq!(fs::read_to_string(&config).unwrap(), original);
        assert!(
            fs::symlink_metadata(&settings)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    // The swap: `sw` leads to `safe` at the approval, to `.git` at the write.
    let sw = root.join(".vscode/sw");
    symlink("../safe", &sw).unwrap();
    let write = json!({"file_path": sw.join("hooks/pre-commit"), "content": "#!/bin/sh\nid\n"});
    Write
        .validate_input(&Write.parse_input(write.clone()).unwrap(), &c)
        .await
        .unwrap();
    fs::remove_file(&sw).unwrap();
    symlink("../.git", &sw).unwrap();
    let err = call(&Write, &c, write).await.unwrap_err();
    refused(&err, &git.join("hooks"));
    assert!(names(&git.join("hooks")).is_empty());

    // A link within one protected folder, named as such, still writes (and stays a link).
    let link = git.join("config-link");
    symlink("config", &link).unwrap();
    text(&Read, &c, json!({"file_path": link})).await;
    call(
        &Edit,
        &c,
        json!({"file_path": link, "old_string": "bare = false", "new_string": "bare = true"}),
    )
    .await
    .unwrap();
    assert_eq!(
        fs::read_to_string(&config).unwrap(),
        "[core]\n\tbare = true\n"
    );
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // A settings file is its own place, not any file of `.claude` (found by a second
    // adversarial review: an approved Write of `.claude/commands/deploy.md`, a link to
    // `../settings.json`, put a hook in the project's settings).
    fs::create_dir_all(root.join(".claude/commands")).unwrap();
    let project_settings = root.join(".claude/settings.json");
    fs::write(&project_settings, "{}\n").unwrap();
    let deploy = root.join(".claude/commands/deploy.md");
    symlink("../settings.json", &deploy).unwrap();
    text(&Read, &c, json!({"file_path": deploy})).await;
    let err = call(
        &Write,
        &c,
        json!({"file_path": deploy, "content": "{\"hooks\":{}}\n"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains(&format!(
            "refusing to write: the path resolves to {}",
            project_settings.display()
        )),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&project_settings).unwrap(), "{}\n");
}

/// The write-time check compared what protects a path by the engine's words only: any
/// `.vscode` passed for any other `.vscode`, any `.bashrc` for any other. An approved write
/// of `.vscode/a.json` landed in another directory's `.vscode/b.json` through a link, one of
/// `x/.bashrc` in another directory's `.bashrc`, and a path named outside the working
/// directories (`/elsewhere/.vscode/settings.json`) wrote the project's `.vscode/tasks.json`.
/// A protected real path is now allowed only when it is in the same protected place as the
/// named path (the same protected directory, the same sensitive file); a link within one
/// protected directory still writes.
#[tokio::test]
async fn a_write_of_one_protected_place_landed_in_another_of_the_same_name() {
    use std::sync::Arc;
    use tool_core::{PermissionMode, ToolPermissionContext};
    let project = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(project.path()).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let elsewhere = fs::canonicalize(elsewhere.path()).unwrap();
    for dir in [".vscode", "other/.vscode", "x", "home"] {
        fs::create_dir_all(root.join(dir)).unwrap();
    }
    fs::create_dir_all(elsewhere.join(".vscode")).unwrap();
    let perm = ToolPermissionContext {
        mode: PermissionMode::AcceptEdits,
        ..ToolPermissionContext::default()
    };
    let engine = Arc::new(
        tool_perms::PermissionEngine::new(&perm, tool_perms::PathRoots::for_cwd(&root)).unwrap(),
    );
    let c = ctx(&root).with_permission(perm);
    c.app_state().set(tool_perms::SessionEngine(engine));

    let original = "{}\n";
    let other_b = root.join("other/.vscode/b.json");
    let bashrc = root.join("home/.bashrc");
    let tasks = root.join(".vscode/tasks.json");
    for f in [&other_b, &bashrc, &tasks] {
        fs::write(f, original).unwrap();
    }
    // (named, link target, real path, the protected place named, the one written)
    let cases = [
        (
            root.join(".vscode/a.json"),
            "../other/.vscode/b.json".to_owned(),
            other_b.clone(),
            root.join(".vscode"),
            root.join("other/.vscode"),
        ),
        (
            root.join("x/.bashrc"),
            "../home/.bashrc".to_owned(),
            bashrc.clone(),
            root.join("x/.bashrc"),
            bashrc.clone(),
        ),
        (
            elsewhere.join(".vscode/settings.json"),
            tasks.display().to_string(),
            tasks.clone(),
            elsewhere.join(".vscode"),
            root.join(".vscode"),
        ),
    ];
    for (named, target, real, named_place, real_place) in cases {
        symlink(&target, &named).unwrap();
        text(&Read, &c, json!({"file_path": named})).await;
        let err = call(
            &Write,
            &c,
            json!({"file_path": named, "content": "{\"pwned\": true}\n"}),
        )
        .await
        .unwrap_err();
        assert!(
            err.contains(&format!(
                "refusing to write: the path resolves to {}",
                real.display()
            )) && err.contains(&real_place.display().to_string())
                && err.contains(&named_place.display().to_string()),
            "{}: {err}",
            named.display()
        );
        assert_eq!(fs::read_to_string(&real).unwrap(), original);
        assert!(
            fs::symlink_metadata(&named)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    // A link within one protected directory, named as such, still writes.
    let d = root.join(".vscode/d.json");
    fs::write(&d, original).unwrap();
    let link = root.join(".vscode/c.json");
    symlink("d.json", &link).unwrap();
    text(&Read, &c, json!({"file_path": link})).await;
    call(
        &Write,
        &c,
        json!({"file_path": link, "content": "{\"ok\": 1}\n"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&d).unwrap(), "{\"ok\": 1}\n");
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

/// A directory on the path that is a dangling link (`dangdir -> nodir`) failed Write, and
/// Edit creating a file, with "File exists (os error 17)" (what `mkdir` says of the link).
/// The refusal now names the link and the missing directory it leads to.
#[tokio::test]
async fn a_dangling_link_on_the_path_said_file_exists() {
    let dir = tempfile::tempdir().unwrap();
    let dangling = dir.path().join("dangdir");
    symlink("nodir", &dangling).unwrap();
    let c = ctx(dir.path());
    for (tool, input) in [
        (
            &Write as &dyn Tool,
            json!({"file_path": dangling.join("f.txt"), "content": "x\n"}),
        ),
        (
            &Edit,
            json!({"file_path": dangling.join("sub/g.txt"), "old_string": "", "new_string": "x\n"}),
        ),
    ] {
        let err = fail(tool, &c, input).await;
        assert!(
            err.text.contains(&format!(
                "{} is a symbolic link to a missing directory (nodir)",
                dangling.display()
            )) && !err.text.contains("os error"),
            "{}: {}",
            tool.name(),
            err.text
        );
    }
    assert_eq!(names(dir.path()), ["dangdir"]);
}

/// A chain of links leading to a missing directory (`a -> b`, `b -> nodir2`; `viadang ->
/// dang/x`, `dang -> nodir`) was reported as "a is a symbolic link to a missing directory
/// (b)", naming `b`, which exists (a link itself), as the directory to create. The refusal now
/// follows the chain to the first component that does not exist and names it, with the
/// links it leads through.
#[tokio::test]
async fn a_chain_of_links_to_a_missing_directory_named_the_wrong_one() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    symlink("b", root.join("a")).unwrap();
    symlink("nodir2", root.join("b")).unwrap();
    symlink("dang/x", root.join("viadang")).unwrap();
    symlink("nodir", root.join("dang")).unwrap();
    let c = ctx(&root);
    for (link, through, missing) in [("a", "b", "nodir2"), ("viadang", "dang", "nodir")] {
        for (tool, input) in [
            (
                &Write as &dyn Tool,
                json!({"file_path": root.join(link).join("sub/f"), "content": "x\n"}),
            ),
            (
                &Edit,
                json!({"file_path": root.join(link).join("g.txt"), "old_string": "", "new_string": "x\n"}),
            ),
        ] {
            let err = fail(tool, &c, input).await;
            assert!(
                err.text.contains(&format!(
                    "{} is a symbolic link to a missing directory: it leads through {} to {}, \
                     which does not exist",
                    root.join(link).display(),
                    root.join(through).display(),
                    root.join(missing).display()
                )) && !err.text.contains("os error"),
                "{} {link}: {}",
                tool.name(),
                err.text
            );
        }
    }
    assert_eq!(names(&root), ["a", "b", "dang", "viadang"]);
}

/// A change that kept the file's mtime and size (`touch -r`, `cp -p` of a same-sized
/// version) after the Read slipped past the checks before the call, and the write then
/// refused it in plain text saying "modified since read": neither the validation error
/// (`<tool_use_error>`, with the tool's code) that a change is refused with before the call,
/// nor "File has been unexpectedly modified", what a change found at the write says
/// (Claude Code's texts). Now the checks before the call compare the content, and a change
/// made after them is refused at the write with the write's text.
#[tokio::test]
async fn a_same_size_change_that_kept_the_mtime_was_refused_in_the_wrong_words() {
    use tool_core::tool_use_error;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.txt");
    let nb = dir.path().join("n.ipynb");
    let c = ctx(dir.path());
    let cases = [
        (
            &Edit as &dyn Tool,
            json!({"file_path": f, "old_string": "alpha", "new_string": "omega"}),
            7,
        ),
        (&Write, json!({"file_path": f, "content": "replaced\n"}), 3),
        (
            &NotebookEdit,
            json!({"notebook_path": nb, "cell_id": "c1", "new_source": "y = 2"}),
            10,
        ),
    ];
    // Another process changes the file to as many bytes and puts the mtime back.
    let change_keeping_the_mtime = |path: &Path, from: &str, to: &str| {
        let before = fs::read_to_string(path).unwrap();
        let mtime = fs::metadata(path).unwrap().modified().unwrap();
        let after = before.replacen(from, to, 1);
        assert!(before != after && before.len() == after.len());
        fs::write(path, after).unwrap();
        fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
    };
    for (tool, input, code) in &cases {
        fs::write(&f, "v1 alpha\n").unwrap();
        fs::write(&nb, ONE_CELL_NOTEBOOK.replace("x = 1", "v1 = 1")).unwrap();
        let path = if tool.name() == "NotebookEdit" {
            &nb
        } else {
            &f
        };
        text(&Read, &c, json!({"file_path": path})).await;
        // Changed after the Read: refused before the call, as any change since the Read is.
        change_keeping_the_mtime(path, "v1", "v2");
        let before = fs::read(path).unwrap();
        let err = fail(*tool, &c, input.clone()).await;
        assert_eq!(
            (err.text, err.code),
            (tool_use_error(MODIFIED_MESSAGE), Some(*code)),
            "{}",
            tool.name()
        );
        assert_eq!(fs::read(path).unwrap(), before);
        // Changed after the checks before the call: refused at the write, with its text.
        text(&Read, &c, json!({"file_path": path})).await;
        tool.validate_input(&tool.parse_input(input.clone()).unwrap(), &c)
            .await
            .unwrap();
        change_keeping_the_mtime(path, "v2", "v3");
        let before = fs::read(path).unwrap();
        let err = call(*tool, &c, input.clone()).await.unwrap_err();
        assert_eq!(
            err,
            "File has been unexpectedly modified. Read it again before attempting to write it.",
            "{}",
            tool.name()
        );
        assert_eq!(fs::read(path).unwrap(), before);
    }
}
