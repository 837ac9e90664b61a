//! Hooks that misbehave: real scripts configured in the project's settings, on a Read
//! (or a Write) that must go through whatever the hook does.

use std::path::PathBuf;

use serde_json::json;
use tool_exec::ToolCallResult;

use crate::rig::{Rig, assert_no_process, call, messages, nonce, rig, text};

/// A rig whose PreToolUse hook for `matcher` runs `body` (a shell script) with `timeout`.
async fn with_hook(matcher: &str, timeout: Option<f64>, allow: &[&str]) -> Rig {
    // The script lives in the project, written once the project exists; the settings find
    // it through $CLAUDE_PROJECT_DIR.
    let mut handler =
        json!({"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/hook.sh"});
    if let Some(t) = timeout {
        handler["timeout"] = json!(t);
    }
    let settings = json!({
        "permissions": {"allow": allow},
        "hooks": {"PreToolUse": [{"matcher": matcher, "hooks": [handler]}]},
    });
    rig().settings(settings).build().await
}

fn pid_file(rig: &Rig) -> PathBuf {
    rig.path("hook.pid")
}

/// Reads hello.txt through a hook running `body`; returns the result.
async fn read_through(body: &str, timeout: Option<f64>) -> (Rig, ToolCallResult) {
    let rig = with_hook("Read", timeout, &[]).await;
    let body = body.replace("PIDFILE", &pid_file(&rig).display().to_string());
    rig.script("hooks/hook.sh", &body);
    let r = rig
        .run_one(call(
            "toolu_1",
            "Read",
            json!({"file_path": rig.path("hello.txt")}),
        ))
        .await;
    (rig, r)
}

fn assert_read_went_through(r: &ToolCallResult) {
    assert!(!r.outcome.result.is_error, "{}", text(r));
    assert!(text(r).contains("hello from the project"), "{}", text(r));
}

fn assert_hook_error(r: &ToolCallResult, expected: &str) {
    let msgs = messages(r);
    assert!(
        msgs.iter().any(|m| m.starts_with("PreToolUse hook error: ")
            && expected.split(" | ").any(|e| m.contains(e))),
        "expected a hook error containing {expected:?}, got {msgs:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_hangs_until_its_timeout() {
    let marker = format!("1000.{}", nonce());
    let (rig, r) = read_through(&format!("echo $$ > PIDFILE; sleep {marker}"), Some(1.0)).await;
    assert_read_went_through(&r);
    assert_hook_error(&r, "timed out after 1s; its process group was killed");
    assert_no_process(&marker, Some(&pid_file(&rig))).await;
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_crashes() {
    let (rig, r) = read_through("echo $$ > PIDFILE; kill -9 $$", None).await;
    assert_read_went_through(&r);
    // Killed under the `sh -c` that runs the command: the shell reports 128 + 9.
    assert_hook_error(&r, "was killed by a signal | failed with exit code 137");
    assert_no_process("hooks/hook.sh", Some(&pid_file(&rig))).await;
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_prints_garbage() {
    // Broken JSON is plain text (Claude Code's rule): no decision, the call goes on, with a
    // notice that says so (it may have been a deny that was not taken).
    let (rig, r) = read_through(
        r#"echo $$ > PIDFILE; printf '{"hookSpecificOutput": {"permissionDecision": deny'"#,
        None,
    )
    .await;
    assert_read_went_through(&r);
    let notices = messages(&r);
    assert!(
        notices.len() == 1 && notices[0].contains("read as plain text"),
        "{notices:?}"
    );
    assert_no_process("hooks/hook.sh", Some(&pid_file(&rig))).await;
    rig.assert_survives().await;
    for (body, expected) in [
        (
            r"echo $$ > PIDFILE; printf '{\377\376\000junk'",
            "stdout is not valid UTF-8",
        ),
        (
            r#"echo $$ > PIDFILE; echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "sure"}}'"#,
            "unknown variant `sure`",
        ),
    ] {
        let (rig, r) = read_through(body, None).await;
        assert_read_went_through(&r);
        assert_hook_error(&r, expected);
        assert_no_process("hooks/hook.sh", Some(&pid_file(&rig))).await;
        rig.assert_survives().await;
        rig.assert_no_temp_files();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_prints_100_mb() {
    // Plain text: drained and ignored.
    let (rig, r) = read_through(
        "echo $$ > PIDFILE; head -c 100000000 /dev/zero | tr '\\0' a",
        None,
    )
    .await;
    assert_read_went_through(&r);
    assert!(messages(&r).is_empty(), "{:?}", messages(&r));
    rig.assert_survives().await;
    // JSON-looking: not parsed, a decision that cannot be read: a PreToolUse hook's refuses
    // the call (review 38: a deny in it must not be lost), saying why.
    let (rig, r) = read_through(
        "echo $$ > PIDFILE; printf '{\"systemMessage\": \"'; head -c 100000000 /dev/zero | tr '\\0' a",
        None,
    )
    .await;
    assert!(r.outcome.result.is_error, "{}", text(&r));
    assert!(
        text(&r).contains("exceeds the 16777216 byte capture limit")
            && text(&r).contains("the call is refused")
            && !text(&r).contains("hello from the project"),
        "{}",
        text(&r)
    );
    assert_no_process("hooks/hook.sh", Some(&pid_file(&rig))).await;
    // The next call, its hook quiet again, runs.
    rig.script("hooks/hook.sh", "exit 0");
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_forks_a_daemon() {
    let held = format!("1000.{}", nonce());
    let detached = format!("1000.{}", nonce());
    let (rig, r) = read_through(
        &format!(
            "echo $$ > PIDFILE; sleep {held} & (sleep {detached} >/dev/null 2>&1 </dev/null &); \
             echo '{{\"systemMessage\": \"daemons started\"}}'"
        ),
        Some(2.0),
    )
    .await;
    assert_read_went_through(&r);
    assert!(
        messages(&r).contains(&"daemons started".to_owned()),
        "{:?}",
        messages(&r)
    );
    // The one holding our pipes is reported (its later output is not used) and left to run
    // until the hook's timeout (2 s here), when the hook's process group is killed: both are
    // gone then.
    assert_hook_error(&r, "its later output is not used");
    assert_no_process(&held, Some(&pid_file(&rig))).await;
    assert_no_process(&detached, None).await;
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_never_reads_stdin() {
    // 8 MB of input (far above a pipe buffer) to a hook that exits without reading it.
    let rig = with_hook("Write", None, &["Write"]).await;
    rig.script(
        "hooks/hook.sh",
        &format!(
            "echo $$ > {}; echo '{{\"systemMessage\": \"not reading\"}}'",
            pid_file(&rig).display()
        ),
    );
    let target = rig.path("big.txt");
    let content = "z".repeat(8 * 1024 * 1024);
    let r = rig
        .run_one(call(
            "toolu_1",
            "Write",
            json!({"file_path": target, "content": content}),
        ))
        .await;
    assert!(!r.outcome.result.is_error, "{}", text(&r));
    assert!(messages(&r).contains(&"not reading".to_owned()));
    assert_eq!(std::fs::metadata(&target).unwrap().len(), 8 * 1024 * 1024);
    // One that never reads and never exits is stopped by its timeout.
    let marker = format!("1000.{}", nonce());
    let rig2 = with_hook("Write", Some(1.0), &["Write"]).await;
    rig2.script(
        "hooks/hook.sh",
        &format!("echo $$ > {}; sleep {marker}", pid_file(&rig2).display()),
    );
    let r = rig2
        .run_one(call(
            "toolu_2",
            "Write",
            json!({"file_path": rig2.path("big.txt"), "content": "z".repeat(8 * 1024 * 1024)}),
        ))
        .await;
    assert!(!r.outcome.result.is_error, "{}", text(&r));
    assert_hook_error(&r, "timed out after 1s");
    assert_no_process(&marker, Some(&pid_file(&rig2))).await;
    for rig in [&rig, &rig2] {
        rig.assert_survives().await;
        rig.assert_no_temp_files();
    }
}
