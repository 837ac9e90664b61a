//! Review 38: a guard's decision too long to read (stdout past [`MAX_STDOUT_BYTES`]) refuses
//! the call, as one nested too deep does, for PermissionRequest hooks as for PreToolUse
//! hooks: a deny in it must not be lost, and the call must not run on an allow rule because
//! the hook's answer was cut.

use crate::common::{Env, cmd, one, runner};
use serde_json::json;
use tool_hooks::{MAX_STDOUT_BYTES, PermissionDecision, PermissionRequestVerdict, ToolCallInfo};

fn bash(command: &str) -> ToolCallInfo {
    ToolCallInfo::new("Bash", json!({"command": command}), "toolu_01")
}

/// A hook that prints `event`'s deny with a reason longer than the capture limit.
fn oversized_deny(env: &Env, event: &str) -> String {
    let decision = match event {
        "PreToolUse" => json!({"hookEventName": event, "permissionDecision": "deny",
            "permissionDecisionReason": "x".repeat(MAX_STDOUT_BYTES + 1024)}),
        _ => json!({"hookEventName": event, "decision": {"behavior": "deny",
            "message": "x".repeat(MAX_STDOUT_BYTES + 1024)}}),
    };
    let file = env.path(&format!("{event}.json"));
    std::fs::write(&file, json!({ "hookSpecificOutput": decision }).to_string()).unwrap();
    format!("cat '{}'", file.display())
}

#[tokio::test]
async fn a_guard_decision_past_the_capture_limit_refuses_the_call() {
    let env = Env::new();
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd(&oversized_deny(&env, "PreToolUse"))],
    ));
    let out = r.run_pre_tool_use(&bash("touch ran"), &env.ctx()).await;
    let decision = out.decision.expect("the call was not refused");
    assert_eq!(decision.behavior, PermissionDecision::Deny);
    assert!(
        decision.message.contains("capture limit") && decision.message.contains("refused"),
        "{}",
        decision.message
    );

    let r = runner(one(
        "PermissionRequest",
        "Bash",
        vec![cmd(&oversized_deny(&env, "PermissionRequest"))],
    ));
    let out = r
        .run_permission_request(&bash("touch ran"), &[], &env.ctx())
        .await;
    assert!(
        matches!(out.verdict, Some(PermissionRequestVerdict::Deny { .. })),
        "{:?}",
        out.verdict
    );

    // Nor one nested too deep to read (review 36 refused it for PreToolUse only).
    let deep = format!(
        "{{\"hookSpecificOutput\": {{\"hookEventName\": \"PermissionRequest\", \"decision\": {{\"behavior\": \"deny\"}}}}, \"debug\": {}{}}}",
        "[".repeat(130),
        "]".repeat(130)
    );
    std::fs::write(env.path("deep.json"), &deep).unwrap();
    let show = format!("cat '{}'", env.path("deep.json").display());
    let r = runner(one("PermissionRequest", "Bash", vec![cmd(&show)]));
    let out = r
        .run_permission_request(&bash("touch ran"), &[], &env.ctx())
        .await;
    assert!(
        matches!(out.verdict, Some(PermissionRequestVerdict::Deny { .. })),
        "{:?}",
        out.verdict
    );

    // Elsewhere (PostToolUse) the cut output is still only said, not a refusal.
    let r = runner(one(
        "PostToolUse",
        "Bash",
        vec![cmd(&oversized_deny(&env, "PreToolUse"))],
    ));
    let out = r
        .run_post_tool_use(&bash("ls"), &json!({"stdout": ""}), &env.ctx())
        .await;
    assert!(
        out.common.blocking_errors.is_empty()
            && out
                .common
                .errors
                .iter()
                .any(|e| e.text.contains("capture limit")),
        "{:?}",
        out.common.errors
    );
}
