//! Regression tests for faults found by the reliability work (docs/reliability.md), each
//! named after what it was.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, cmd, one, runner};
use serde_json::json;
use tool_hooks::ToolCallInfo;

fn bash(command: &str) -> ToolCallInfo {
    ToolCallInfo::new("Bash", json!({"command": command}), "toolu_01")
}

/// A hook that exits leaving a background process: one it detached from our pipes
/// (`nohup … >/dev/null 2>&1 &`, as SessionStart hooks start watchers) goes on running, as
/// under Claude Code; one still holding our pipes past the grace goes on too (Claude Code
/// waits for the pipes, so `afplay done.aiff &` in a Stop hook plays to the end), reported,
/// its later output unused, and is killed with its group at the hook's timeout (it was
/// only reported, and ran for ever; then it was killed 200 ms after the hook exited).
#[tokio::test]
async fn background_processes_of_a_hook_that_exited() {
    let env = Env::new();
    for (i, daemon) in [
        // Detached from our pipes: the hook's intent.
        "nohup sleep 1000 >/dev/null 2>&1 </dev/null &",
        // Holding stdout and stderr open.
        "sleep 1000 &",
    ]
    .iter()
    .enumerate()
    {
        let pid_file = env.path(&format!("pid{i}"));
        let hook = format!(
            "echo $$ > '{}'; {daemon} echo '{{\"systemMessage\": \"started\"}}'",
            pid_file.display()
        );
        let r = runner(one(
            "PreToolUse",
            "Bash",
            vec![json!({"type": "command", "command": hook, "timeout": 2})],
        ));
        let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
        assert_eq!(out.common.system_messages[0].text, "started", "{daemon}");
        let pgid: i32 = env.read(&format!("pid{i}")).trim().parse().unwrap();
        if i == 1 {
            let text = &out.common.errors[0].text;
            assert!(
                text.contains("its later output is not used") && !text.contains("was killed"),
                "{:?}",
                out.common.errors
            );
            assert_eq!(
                common::live_group_members(pgid).len(),
                1,
                "{daemon}: killed before the hook's timeout"
            );
            // Polled without blocking the runtime, whose task kills the group.
            for _ in 0..100 {
                if common::live_group_members(pgid).is_empty() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
            assert!(
                common::live_group_members(pgid).is_empty(),
                "{daemon}: the process in group {pgid} is still running after the timeout"
            );
        } else {
            assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
            tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
            let left = common::live_group_members(pgid);
            assert_eq!(left.len(), 1, "{daemon}: the watcher was killed");
            // The test's own cleanup.
            for pid in left {
                let _ = std::process::Command::new("kill")
                    .args(["-9", &pid.to_string()])
                    .status();
            }
        }
    }
}

/// The session's cwd removed by an earlier command (`cd build && rm -rf ../build`): hooks
/// start where Bash now runs, so a guard still blocks (every hook failed to start, and
/// nothing was blocked, until a later command moved the session).
#[tokio::test]
async fn hooks_still_run_after_the_cwd_is_removed() {
    let env = Env::new();
    let gone = env.path("build");
    std::fs::create_dir(&gone).unwrap();
    let ctx = tool_core::ToolUseContext::new(&gone);
    std::fs::remove_dir(&gone).unwrap();
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd("echo 'no Bash today' >&2; exit 2")],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &ctx).await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    let d = out.decision.expect("the guard decided");
    assert_eq!(d.behavior, tool_hooks::PermissionDecision::Deny);
    assert!(d.message.contains("no Bash today"), "{}", d.message);
}

/// JSON output after a byte order mark (PowerShell's `Out-File`, Windows editors) is JSON,
/// as JavaScript's `trim()` has it; it was taken for plain text and the deny ignored.
#[tokio::test]
async fn json_after_a_byte_order_mark_is_read() {
    let env = Env::new();
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd(
            r#"printf '\357\273\277{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"bom"}}'"#,
        )],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    let d = out.decision.expect("the hook decided");
    assert_eq!(
        (d.behavior, d.message.as_str()),
        (tool_hooks::PermissionDecision::Deny, "bom")
    );
}
