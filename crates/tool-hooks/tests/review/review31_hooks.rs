//! Review 31's hooks findings, each with real hook scripts in a temp dir: an approver chosen
//! by an `if` approves only a call its `if` covers whole (every subcommand), a `matcher`
//! naming a shortened MCP tool by its full name selects its calls, and an `async` hook's
//! context names its tool as a synchronous hook's does.

use std::borrow::Cow;
use std::sync::Arc;

use crate::common::{Env, cmd, one, runner};
use serde_json::{Value, json};
use tool_core::{
    MaxResultSize, McpToolInfo, Message, ProgressSender, Tool, ToolError, ToolResult,
    ToolUseContext, async_trait,
};
use tool_hooks::{PermissionDecision, PermissionRequestVerdict, ToolCallInfo};

fn bash(command: &str) -> ToolCallInfo {
    ToolCallInfo::new("Bash", json!({"command": command}), "toolu_01")
}

/// A command hook that appends its stdin (one line per run) to `log` and prints `output`.
fn logging_hook(log: &std::path::Path, output: &Value) -> Value {
    cmd(&format!(
        "cat >> '{}'; echo >> '{}'; echo '{}'",
        log.display(),
        log.display(),
        output
    ))
}

/// How many times the hook logging to `log` ran.
fn runs(log: &std::path::Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.is_empty())
        .count()
}

/// The review's case: an approver chosen by `if: "Bash(npm test*)"` approved any compound
/// command holding `npm test`, so `npm test x; rm -rf zz` ran unasked. The hook still runs
/// for such a command (a guard must), but its allow, and the `updatedInput` with it, are
/// not taken unless the `if` covers every subcommand, as an allow rule with the same
/// pattern must; a command made only of covered subcommands is still approved.
#[tokio::test]
async fn an_approver_approves_only_a_command_its_if_covers_whole() {
    let env = Env::new();
    let log = env.path("ran.log");
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "updatedInput": {"command": "npm test x"}}});
    let mut hook = logging_hook(&log, &allow);
    hook["if"] = json!("Bash(npm test*)");
    let r = runner(one("PreToolUse", "Bash", vec![hook]));
    let ctx = env.ctx();
    let not_covered = [
        "npm test x; rm -rf zz",
        "npm test x & rm -rf zz",
        "npm test x && rm -rf zz",
        "npm test x || rm -rf zz",
        "npm test x | rm -rf zz",
        "npm test x $(rm -rf zz)",
        "npm test x `rm -rf zz`",
        "npm test x <(rm -rf zz)",
        "npm test x >(rm -rf zz)",
        "npm test x\nrm -rf zz",
    ];
    for (i, command) in not_covered.into_iter().enumerate() {
        let out = r.run_pre_tool_use(&bash(command), &ctx).await;
        assert!(out.decision.is_none(), "{command:?}: {:?}", out.decision);
        assert!(out.passthrough_input.is_none(), "{command:?}");
        assert_eq!(runs(&log), i + 1, "{command:?}: the hook did not run");
    }
    for command in [
        "npm test x",
        "npm test x && npm test y",
        "npm test x; npm test y",
        "npm test x 2>&1",
        "npm test x &> /dev/null",
    ] {
        let out = r.run_pre_tool_use(&bash(command), &ctx).await;
        let decision = out.decision.expect(command);
        assert_eq!(decision.behavior, PermissionDecision::Allow, "{command:?}");
        assert_eq!(
            decision.updated_input,
            Some(json!({"command": "npm test x"})),
            "{command:?}"
        );
    }
}

/// Legacy `decision: "approve"` from such a hook is no approval either, while a deny, an
/// ask and `continue: false` from a hook whose `if` matched one subcommand still stand.
#[tokio::test]
async fn a_partly_covering_if_still_guards() {
    let env = Env::new();
    let ctx = env.ctx();
    let with_if = |rule: &str, out: Value| {
        let mut h = cmd(&format!("echo '{out}'"));
        h["if"] = json!(rule);
        h
    };
    let command = "git status; rm -rf zz";
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![with_if("Bash(git status*)", json!({"decision": "approve"}))],
    ));
    let out = r.run_pre_tool_use(&bash(command), &ctx).await;
    assert!(out.decision.is_none(), "{:?}", out.decision);
    for (out_json, behavior) in [
        (
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}}),
            PermissionDecision::Deny,
        ),
        (
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}),
            PermissionDecision::Ask,
        ),
        (
            json!({"decision": "block", "reason": "no"}),
            PermissionDecision::Deny,
        ),
    ] {
        let r = runner(one(
            "PreToolUse",
            "Bash",
            vec![with_if("Bash(git status*)", out_json.clone())],
        ));
        let out = r.run_pre_tool_use(&bash(command), &ctx).await;
        assert_eq!(
            out.decision.map(|d| d.behavior),
            Some(behavior),
            "{out_json}"
        );
    }
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![with_if("Bash(git status*)", json!({"continue": false}))],
    ));
    let out = r.run_pre_tool_use(&bash(command), &ctx).await;
    assert!(out.common.stop.is_some());
}

/// The review's PermissionRequest case: an approver with `if: "Bash(git status*)"` allowed
/// `git status; rm -rf zz` (with its `updatedPermissions`). Its allow is no verdict now, so
/// the user is asked; `git status` alone is still allowed with the updates.
#[tokio::test]
async fn a_permission_request_approver_approves_only_what_its_if_covers() {
    let env = Env::new();
    let log = env.path("ran.log");
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow", "updatedPermissions": [{"type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "rm *"}], "behavior": "allow",
            "destination": "session"}]}}});
    let mut hook = logging_hook(&log, &allow);
    hook["if"] = json!("Bash(git status*)");
    let r = runner(one("PermissionRequest", "Bash", vec![hook]));
    let ctx = env.ctx();
    for command in ["git status; rm -rf zz", "git status & rm -rf zz"] {
        let out = r.run_permission_request(&bash(command), &[], &ctx).await;
        assert!(out.verdict.is_none(), "{command:?}: {:?}", out.verdict);
    }
    assert_eq!(runs(&log), 2, "the hook did not run");
    let out = r
        .run_permission_request(&bash("git status"), &[], &ctx)
        .await;
    match out.verdict {
        Some(PermissionRequestVerdict::Allow {
            updated_permissions,
            ..
        }) => assert_eq!(updated_permissions.len(), 1),
        other => panic!("not allowed: {other:?}"),
    }
}

/// An MCP tool whose full name (`mcp__srv__a_very_long…`) is too long for the API, offered
/// under a shortened name with a hash, as tools-mcp names it.
struct LongMcpTool;

const SHORT_NAME: &str = "mcp__srv__a_very_long_tool_name_that_goes_on_and_on_and_f169a7c9";
const FULL_NAME: &str =
    "mcp__srv__a_very_long_tool_name_that_goes_on_and_on_and_on_for_ever_and_ever";

#[async_trait]
impl Tool for LongMcpTool {
    fn name(&self) -> &str {
        SHORT_NAME
    }
    fn mcp_info(&self) -> Option<McpToolInfo> {
        Some(McpToolInfo {
            server_name: "srv".into(),
            tool_name: "a_very_long_tool_name_that_goes_on_and_on_and_on_for_ever_and_ever".into(),
            source: None,
        })
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn description(&self) -> Cow<'_, str> {
        "long".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(1000)
    }
    async fn call(
        &self,
        _input: Value,
        _ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        Err(ToolError::msg("not called"))
    }
}

/// The review's case: a blocking guard whose `matcher` names the shortened MCP tool by its
/// full name never ran, with no warning. A matcher accepts either name, as permission rules
/// and `if` do: an exact name equal to the full name, and a regex that matches the full
/// name, select the shortened tool's calls (on PreToolUse, PermissionRequest and
/// PostToolUse); a name of another tool still does not.
#[tokio::test]
async fn a_matcher_names_a_shortened_mcp_tool_by_its_full_name_too() {
    let env = Env::new();
    let ctx = env
        .ctx()
        .with_tools(vec![Arc::new(LongMcpTool) as Arc<dyn Tool>]);
    let call = ToolCallInfo::new(SHORT_NAME, json!({}), "toolu_01");
    let guard = cmd("echo 'full-name guard' >&2; exit 2");
    for matcher in [
        FULL_NAME,
        SHORT_NAME,
        "mcp__srv__a_very_long_tool_name_that_goes_on_and_on_and_on_for_ever_and_ever|Read",
        "on_for_ever_and_ever$",
        "^mcp__srv__.*_ever$",
    ] {
        let r = runner(one("PreToolUse", matcher, vec![guard.clone()]));
        let out = r.run_pre_tool_use(&call, &ctx).await;
        let decision = out
            .decision
            .unwrap_or_else(|| panic!("{matcher:?}: the guard did not run"));
        assert_eq!(decision.behavior, PermissionDecision::Deny, "{matcher:?}");
        assert!(decision.message.contains("full-name guard"), "{matcher:?}");
    }
    for matcher in ["mcp__srv__a_very_long_tool_name", "mcp__srv__other", "Bash"] {
        let r = runner(one("PreToolUse", matcher, vec![guard.clone()]));
        let out = r.run_pre_tool_use(&call, &ctx).await;
        assert!(out.decision.is_none(), "{matcher:?}: {:?}", out.decision);
    }
    // The other tool events select by the full name too.
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "deny", "message": "no"}}});
    let r = runner(one(
        "PermissionRequest",
        FULL_NAME,
        vec![cmd(&format!("echo '{deny}'"))],
    ));
    let out = r.run_permission_request(&call, &[], &ctx).await;
    assert!(
        matches!(out.verdict, Some(PermissionRequestVerdict::Deny { .. })),
        "{:?}",
        out.verdict
    );
    let ctx_json = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
        "additionalContext": "seen"}});
    let r = runner(one(
        "PostToolUse",
        FULL_NAME,
        vec![cmd(&format!("echo '{ctx_json}'"))],
    ));
    let out = r.run_post_tool_use(&call, &json!({}), &ctx).await;
    assert_eq!(out.common.additional_contexts.len(), 1);
}

/// The texts of `messages` (system messages and attachments' content).
fn texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|m| match m {
            Message::System(s) => s.clone(),
            Message::Attachment(a) => a.text.clone(),
            other => format!("{other:?}"),
        })
        .collect()
}

/// The review's case: an `async: true` PostToolUse hook's context read `PostToolUse hook
/// additional context: async-ctx`, where a synchronous hook's reads `PostToolUse:Bash hook
/// additional context: …`. A background result now names its tool the same way, as the
/// host words it (`messages(&event, None, false)`, tool-exec's `take_background_messages`).
#[tokio::test]
async fn an_async_hooks_context_names_its_tool() {
    let env = Env::new();
    let out = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
        "additionalContext": "async-ctx"}});
    let mut hook = cmd(&format!("echo '{out}'"));
    hook["async"] = json!(true);
    let r = runner(one("PostToolUse", "Bash", vec![hook]));
    let ctx = env.ctx();
    r.run_post_tool_use(&bash("echo hi"), &json!({"stdout": "hi"}), &ctx)
        .await;
    r.wait_for_async().await;
    let results = r.take_async_results();
    assert_eq!(results.len(), 1);
    let said = texts(&results[0].common.messages(&results[0].event, None, false));
    assert_eq!(
        said,
        [
            "<system-reminder>\nPostToolUse:Bash hook additional context: async-ctx\n</system-reminder>"
        ]
    );
}
