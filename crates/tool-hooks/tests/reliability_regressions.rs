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

/// A hook that forked a daemon and exited left the daemon running for ever: with its
/// output redirected (nothing held our pipes) it was never noticed, and one holding the
/// pipes was only reported. Now the hook's process group ends with the hook.
#[tokio::test]
async fn daemon_forked_by_a_hook_outlived_the_hook() {
    let env = Env::new();
    for (i, daemon) in [
        // Detached from our pipes.
        "sleep 1000 >/dev/null 2>&1 </dev/null &",
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
        assert!(
            wait_group_gone(pgid).is_empty(),
            "{daemon}: the daemon in process group {pgid} is still running"
        );
        if i == 1 {
            assert!(
                out.common.errors[0].text.contains("the process was killed"),
                "{:?}",
                out.common.errors
            );
        } else {
            assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
        }
    }
}
