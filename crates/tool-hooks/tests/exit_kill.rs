//! The last-resort kill of an immediate exit (`tool_core::process::kill_child_process_groups`,
//! which a second Ctrl-C runs before `exit`) reaches a hook's background job that still
//! holds the hook's pipes: the hook itself was reaped, so the job is no child of this
//! process, and `exit` runs neither the task that would kill it at the hook's timeout nor
//! its destructors. A test binary of its own: the kill takes every child of this process.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::{Env, cmd, live_group_members, one, runner};
use serde_json::json;
use tool_hooks::ToolCallInfo;

#[tokio::test]
async fn an_immediate_exit_kills_a_job_left_on_a_hooks_pipes() {
    let env = Env::new();
    let hook = format!("echo $$ > '{}'; sleep 300 &", env.path("pid").display());
    let r = runner(one("PreToolUse", "Bash", vec![cmd(&hook)]));
    let ctx = env.ctx();
    let call = ToolCallInfo::new("Bash", json!({"command": "ls"}), "toolu_01");
    let out = r.run_pre_tool_use(&call, &ctx).await;
    assert!(!out.common.cancelled);
    let pgid: i32 = env.read("pid").trim().parse().unwrap();
    assert!(
        !live_group_members(pgid).is_empty(),
        "the job is left running"
    );
    // What a second signal does before `std::process::exit`.
    tool_core::process::kill_child_process_groups();
    let mut left = live_group_members(pgid);
    for _ in 0..80 {
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
        left = live_group_members(pgid);
    }
    assert!(
        left.is_empty(),
        "still running after the exit kill: {left:?}"
    );
    drop(r);
}
