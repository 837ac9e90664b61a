//! Files changed under the tools: another process edits a file between Read and Edit, and a
//! symlink is swapped in after the permission check.

use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_core::{MODIFIED_MESSAGE, PermissionResult, Tool, ToolUseContext};
use tool_exec::{Permissions, Prompter};

use crate::rig::{call, rig, text};

fn sh(script: &str) {
    let status = Command::new("sh").args(["-c", script]).status().unwrap();
    assert!(status.success(), "{script}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_edited_by_another_process_between_read_and_edit() {
    let rig = rig()
        .settings(json!({"permissions": {"allow": ["Edit"]}}))
        .build()
        .await;
    let f = rig.path("notes.txt");
    std::fs::write(&f, "alpha beta\n").unwrap();
    let edit = |id: &str| {
        call(
            id,
            "Edit",
            json!({"file_path": f, "old_string": "alpha", "new_string": "omega"}),
        )
    };
    for (i, change) in [
        // An editor saving a new version.
        format!("sleep 0.01; printf 'alpha gamma\\n' > '{}'", f.display()),
        // A tool that restores the mtime (rsync, cp -p): only the content tells.
        format!(
            "touch -r '{f}' '{f}.ref'; printf 'alpha delta\\n' > '{f}'; touch -r '{f}.ref' '{f}'; rm '{f}.ref'",
            f = f.display()
        ),
    ]
    .iter()
    .enumerate()
    {
        let read = rig
            .run_one(call(&format!("toolu_r{i}"), "Read", json!({"file_path": f})))
            .await;
        assert!(!read.outcome.result.is_error, "{}", text(&read));
        let before_edit = std::fs::read(&f).unwrap();
        sh(change);
        let changed = std::fs::read(&f).unwrap();
        assert_ne!(before_edit, changed);
        let r = rig.run_one(edit(&format!("toolu_e{i}"))).await;
        assert!(r.outcome.result.is_error, "case {i}: {}", text(&r));
        assert!(text(&r).contains(MODIFIED_MESSAGE), "case {i}: {}", text(&r));
        assert_eq!(std::fs::read(&f).unwrap(), changed, "case {i}: the file was written");
    }
    // Read again: the edit goes through.
    let read = rig
        .run_one(call("toolu_r9", "Read", json!({"file_path": f})))
        .await;
    assert!(text(&read).contains("alpha delta"), "{}", text(&read));
    let r = rig.run_one(edit("toolu_e9")).await;
    assert!(!r.outcome.result.is_error, "{}", text(&r));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "omega delta\n");
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}

/// A change to the file system, armed for the next allowed call.
type Armed = Arc<Mutex<Option<Box<dyn FnOnce() + Send>>>>;

/// The session's permission engine, plus a swap done right after it allowed a call.
struct SwapAfterCheck {
    inner: Arc<dyn Permissions>,
    swap: Armed,
}

#[tool_core::async_trait]
impl Permissions for SwapAfterCheck {
    async fn decide(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> PermissionResult {
        let decision = self.inner.decide(tool, input, ctx).await;
        if matches!(decision, PermissionResult::Allow { .. })
            && let Some(swap) = self.swap.lock().unwrap().take()
        {
            swap();
        }
        decision
    }
    async fn check_rule_based(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> Option<PermissionResult> {
        self.inner.check_rule_based(tool, input, ctx).await
    }
    async fn resolve_ask(
        &self,
        prompter: &dyn Prompter,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
        ask: PermissionResult,
    ) -> PermissionResult {
        self.inner
            .resolve_ask(prompter, tool, input, ctx, ask)
            .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symlink_swapped_after_the_permission_check() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.txt");
    let swap: Armed = Arc::default();
    let slot = swap.clone();
    let rig = rig()
        .settings(json!({"permissions": {"allow": ["Edit(/**)"]}}))
        .wrap_permissions(move |inner| Arc::new(SwapAfterCheck { inner, swap: slot }))
        .build()
        .await;
    let arm = |f: Box<dyn FnOnce() + Send>| *swap.lock().unwrap() = Some(f);

    // The file itself becomes a link to a file outside (with the same bytes, so that only
    // the path can tell).
    let f = rig.path("config.txt");
    std::fs::write(&f, "setting = 1\n").unwrap();
    std::fs::write(&secret, "setting = 1\n").unwrap();
    let read = rig
        .run_one(call("toolu_r", "Read", json!({"file_path": f})))
        .await;
    assert!(!read.outcome.result.is_error);
    let cases: [(&str, Value); 2] = [
        (
            "Edit",
            json!({"file_path": f, "old_string": "1", "new_string": "2"}),
        ),
        ("Write", json!({"file_path": f, "content": "setting = 3\n"})),
    ];
    for (i, (tool, input)) in cases.into_iter().enumerate() {
        let (link, target) = (f.clone(), secret.clone());
        arm(Box::new(move || {
            let _ = std::fs::remove_file(&link);
            symlink(&target, &link).unwrap();
        }));
        let r = rig.run_one(call(&format!("toolu_{i}"), tool, input)).await;
        assert!(r.outcome.result.is_error, "{tool}: {}", text(&r));
        assert!(
            text(&r).contains("outside the working directories"),
            "{tool}: {}",
            text(&r)
        );
        assert_eq!(std::fs::read_to_string(&secret).unwrap(), "setting = 1\n");
        // Put the plain file back for the next case.
        std::fs::remove_file(&f).unwrap();
        std::fs::write(&f, "setting = 1\n").unwrap();
        let read = rig
            .run_one(call(
                &format!("toolu_r{i}"),
                "Read",
                json!({"file_path": f}),
            ))
            .await;
        assert!(!read.outcome.result.is_error);
    }

    // A directory on the path becomes a link to a directory outside.
    let sub: PathBuf = rig.path("sub");
    std::fs::create_dir(&sub).unwrap();
    let (link, target) = (sub.clone(), outside.path().to_path_buf());
    arm(Box::new(move || {
        std::fs::remove_dir(&link).unwrap();
        symlink(&target, &link).unwrap();
    }));
    let r = rig
        .run_one(call(
            "toolu_d",
            "Write",
            json!({"file_path": sub.join("new.txt"), "content": "planted\n"}),
        ))
        .await;
    assert!(r.outcome.result.is_error, "{}", text(&r));
    assert!(
        text(&r).contains("outside the working directories"),
        "{}",
        text(&r)
    );
    assert!(!outside.path().join("new.txt").exists());
    let mut left: Vec<String> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["secret.txt"], "something was written outside");
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}
