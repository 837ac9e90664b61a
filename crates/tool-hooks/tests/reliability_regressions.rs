//! Regression tests for faults found by the reliability work (docs/reliability.md), each
//! named after what it was.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, cmd, one, runner, wait_group_gone};
use serde_json::json;
use tool_hooks::ToolCallInfo;

fn bash(command: &str) -> ToolCallInfo {
    ToolCallInfo::new("Bash", json!({"command": command}), "toolu_01")
}

/// A hook that exits leaving a background process: one it detached from our pipes
/// (`nohup … >/dev/null 2>&1 &`, as SessionStart hooks start watchers) goes on running, as
/// under Claude Code; one still holding our pipes past the grace is killed with its group
/// and reported (it was only reported, and ran for ever).
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
        let r = runner(one("PreToolUse", "Bash", vec![cmd(&hook)]));
        let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
        assert_eq!(out.common.system_messages[0].text, "started", "{daemon}");
        let pgid: i32 = env.read(&format!("pid{i}")).trim().parse().unwrap();
        if i == 1 {
            assert!(
                wait_group_gone(pgid).is_empty(),
                "{daemon}: the process in group {pgid} is still running"
            );
            assert!(
                out.common.errors[0].text.contains("the process was killed"),
                "{:?}",
                out.common.errors
            );
        } else {
            assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
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
