//! PostToolUse, PostToolUseFailure, PostToolBatch, PermissionRequest, PermissionDenied,
//! generic events, in-process hooks and async hooks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{Env, cmd, one, runner};
use serde_json::{Map, Value, json};
use tool_core::{
    PermissionMode, PermissionUpdate, RuleBehavior, RuleSource, RuleValue, ToolUseContext,
    UpdateDestination,
};
use tool_hooks::{
    BatchToolCall, HookOutput, HookRunner, HookSpecificOutput, HooksConfig, Matcher, NativeHook,
    NativeHookError, PermissionDecision, PermissionRequestVerdict, ToolCallInfo,
};

fn printer(v: &Value) -> Value {
    cmd(&format!(
        "cat > \"$CLAUDE_PROJECT_DIR/stdin-$$.json\"; printf '%s' '{v}'"
    ))
}

fn capture(env: &Env, name: &str) -> Value {
    cmd(&format!("cat > '{}'", env.path(name).display()))
}

/// How long a step may take before the test calls it a hang: a guard, not a timing
/// assertion (each step ends on an event well before it, even on a loaded machine).
const HANG_GUARD: Duration = Duration::from_secs(30);

/// A shell loop that waits until `go` exists (the test's go-ahead); it gives up after a
/// minute or so, so that a failed test leaves no hook behind for long.
fn wait_for_go(go: &std::path::Path) -> String {
    format!(
        "i=0; while [ ! -e '{}' ] && [ $i -lt 3000 ]; do sleep 0.02; i=$((i+1)); done",
        go.display()
    )
}

#[tokio::test]
async fn post_tool_use_fields() {
    let env = Env::new();
    let hooks = one(
        "PostToolUse",
        "mcp__srv__.*",
        vec![
            capture(&env, "in.json"),
            printer(&json!({"decision": "block", "reason": "lint failed",
                "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "see lint",
                    "updatedMCPToolOutput": {"content": [{"type": "text", "text": "redacted"}]}}})),
            printer(
                &json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": {"ok": true}}}),
            ),
            cmd("echo 'formatter crashed' >&2; exit 2"),
        ],
    );
    let r = runner(hooks).with_project_dir(env.root());
    let mut call = ToolCallInfo::new("mcp__srv__get", json!({"id": 1}), "toolu_9");
    call.duration = Some(Duration::from_millis(42));
    call.mcp_server = Some(json!({"name": "srv", "source": "project"}));
    let out = r
        .run_post_tool_use(&call, &json!({"result": "secret"}), &env.ctx())
        .await;
    assert_eq!(
        out.updated_mcp_tool_output,
        Some(json!({"content": [{"type": "text", "text": "redacted"}]}))
    );
    assert_eq!(out.updated_tool_output, Some(json!({"ok": true})));
    assert_eq!(out.common.additional_contexts[0].text, "see lint");
    let blocking: Vec<&str> = out
        .common
        .blocking_errors
        .iter()
        .map(|b| b.text.as_str())
        .collect();
    assert_eq!(
        blocking,
        [
            "lint failed",
            "[echo 'formatter crashed' >&2; exit 2]: formatter crashed"
        ]
    );
    let got: Value = serde_json::from_str(&env.read("in.json")).unwrap();
    assert_eq!(got["hook_event_name"], "PostToolUse");
    assert_eq!(got["tool_response"], json!({"result": "secret"}));
    assert_eq!(got["duration_ms"], 42);
    assert_eq!(got["tool_use_id"], "toolu_9");
    assert_eq!(
        got["mcp_server"],
        json!({"name": "srv", "source": "project"})
    );
    // Messages in Claude Code's attachment kinds.
    let lint = &out.common.blocking_errors[0].hook;
    let msgs = out
        .common
        .messages("PostToolUse", Some("mcp__srv__get"), true);
    let kinds: Vec<(String, String)> = msgs
        .iter()
        .map(|m| match m {
            tool_core::Message::Attachment(a) => (a.kind.clone(), a.text.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            (
                "hook_blocking_error".to_owned(),
                format!("<system-reminder>\nPostToolUse:mcp__srv__get hook blocking error from command: \"{lint}\": lint failed\n</system-reminder>")
            ),
            (
                "hook_blocking_error".to_owned(),
                "<system-reminder>\nPostToolUse:mcp__srv__get hook blocking error from command: \"echo 'formatter crashed' >&2; exit 2\": [echo 'formatter crashed' >&2; exit 2]: formatter crashed\n</system-reminder>".to_owned()
            ),
            (
                "hook_additional_context".to_owned(),
                "<system-reminder>\nPostToolUse:mcp__srv__get hook additional context: see lint\n</system-reminder>".to_owned()
            ),
        ]
    );
    assert_eq!(out.common.stop_turn(), None);
}

#[tokio::test]
async fn post_tool_use_failure_input() {
    let env = Env::new();
    let r = runner(one(
        "PostToolUseFailure",
        "Bash",
        vec![capture(&env, "in.json"), printer(&json!({"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "try again"}}))],
    ))
    .with_project_dir(env.root());
    let mut call = ToolCallInfo::new("Bash", json!({"command": "false"}), "toolu_2");
    call.duration = Some(Duration::from_millis(7));
    let out = r
        .run_post_tool_use_failure(&call, "Exit code 1", true, &env.ctx())
        .await;
    assert_eq!(out.common.additional_contexts[0].text, "try again");
    let got: Value = serde_json::from_str(&env.read("in.json")).unwrap();
    assert_eq!(got["error"], "Exit code 1");
    assert_eq!(got["is_interrupt"], true);
    assert_eq!(got["duration_ms"], 7);
    assert_eq!(got["hook_event_name"], "PostToolUseFailure");
}

#[tokio::test]
async fn post_tool_batch() {
    let env = Env::new();
    let r = runner(
        json!({"PostToolBatch": [{"hooks": [capture(&env, "in.json"), cmd("echo '{\"decision\":\"block\",\"reason\":\"stop loop\"}'")]}]}),
    );
    let calls = [
        BatchToolCall {
            call: ToolCallInfo::new("Read", json!({"file_path": "/a"}), "t1"),
            tool_response: Some(json!("text")),
        },
        BatchToolCall {
            call: ToolCallInfo::new("Bash", json!({"command": "ls"}), "t2"),
            tool_response: None,
        },
    ];
    let out = r.run_post_tool_batch(&calls, &env.ctx()).await;
    assert!(out.common.is_blocked());
    assert_eq!(out.common.blocking_errors[0].text, "stop loop");
    let got: Value = serde_json::from_str(&env.read("in.json")).unwrap();
    assert_eq!(
        got["tool_calls"],
        json!([
            {"tool_name": "Read", "tool_input": {"file_path": "/a"}, "tool_use_id": "t1", "tool_response": "text"},
            {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t2"}
        ])
    );
}

#[tokio::test]
async fn permission_request_decisions() {
    let env = Env::new();
    let allow = |input: Value, perms: Value| {
        printer(
            &json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": input, "updatedPermissions": perms}}}),
        )
    };
    let rule = json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test"}], "behavior": "allow", "destination": "localSettings"}]);
    let mode = json!([{"type": "setMode", "mode": "acceptEdits", "destination": "session"}]);
    let r = runner(one(
        "PermissionRequest",
        "Bash",
        vec![
            capture(&env, "in.json"),
            allow(json!({"command": "npm test -- a"}), rule),
            allow(json!({"command": "npm test -- b"}), mode),
            cmd("exit 2"),
        ],
    ))
    .with_project_dir(env.root());
    let suggestion = PermissionUpdate::AddRules {
        rules: vec![RuleValue {
            tool_name: "Bash".into(),
            rule_content: Some("npm test".into()),
        }],
        behavior: RuleBehavior::Allow,
        destination: UpdateDestination::LocalSettings,
    };
    let call = ToolCallInfo::new("Bash", json!({"command": "npm test"}), "toolu_3");
    let out = r
        .run_permission_request(&call, std::slice::from_ref(&suggestion), &env.ctx())
        .await;
    match out.verdict.unwrap() {
        PermissionRequestVerdict::Allow {
            updated_input,
            updated_permissions,
            ..
        } => {
            assert_eq!(updated_input, Some(json!({"command": "npm test -- b"})));
            assert_eq!(updated_permissions.len(), 2);
            assert_eq!(updated_permissions[0], suggestion);
            assert!(matches!(
                updated_permissions[1],
                PermissionUpdate::SetMode {
                    mode: PermissionMode::AcceptEdits,
                    ..
                }
            ));
        }
        other => panic!("{other:?}"),
    }
    // exit 2 is not blocking on PermissionRequest.
    assert!(out.common.blocking_errors.is_empty());
    assert_eq!(out.common.errors.len(), 1);
    let got: Value = serde_json::from_str(&env.read("in.json")).unwrap();
    assert!(got.get("tool_use_id").is_none());
    assert_eq!(got["permission_suggestions"][0]["type"], "addRules");

    // Deny beats allow.
    let r = runner(one(
        "PermissionRequest",
        "*",
        vec![
            allow(json!({"command": "x"}), json!([])),
            printer(&json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "policy", "interrupt": true}}})),
        ],
    ))
    .with_project_dir(env.root());
    let out = r.run_permission_request(&call, &[], &env.ctx()).await;
    assert_eq!(
        out.verdict,
        Some(PermissionRequestVerdict::Deny {
            hook: out.common.runs[1].hook.clone(),
            message: "policy".into(),
            interrupt: true
        })
    );
    // No decision: None (show the prompt).
    let r = runner(one("PermissionRequest", "*", vec![cmd("true")]));
    assert!(
        r.run_permission_request(&call, &[], &env.ctx())
            .await
            .verdict
            .is_none()
    );
}

#[tokio::test]
async fn permission_denied_retry() {
    let env = Env::new();
    let r = runner(one(
        "PermissionDenied",
        "Bash",
        vec![capture(&env, "in.json"), printer(&json!({"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": true}}))],
    ))
    .with_project_dir(env.root());
    let out = r
        .run_permission_denied(
            &ToolCallInfo::new("Bash", json!({"command": "rm"}), "t"),
            "classifier said no",
            &env.ctx(),
        )
        .await;
    assert!(out.retry);
    let got: Value = serde_json::from_str(&env.read("in.json")).unwrap();
    assert_eq!(got["reason"], "classifier said no");
}

#[tokio::test]
async fn generic_events() {
    let env = Env::new();
    let mut with_if = cmd("echo never > never");
    with_if["if"] = json!("Bash");
    let hooks = json!({
        "SessionStart": [{"matcher": "startup|resume", "hooks": [
            cmd("echo 'Project uses pnpm'"),
            capture(&env, "ss.json"),
            cmd("echo '{\"hookSpecificOutput\":{\"hookEventName\":\"SessionStart\",\"additionalContext\":\"json ctx\",\"sessionTitle\":\"T\"}}'"),
            with_if,
            // Text that only looks like JSON is plain text, hence context.
            cmd("echo '{project: pnpm}'"),
            // A failing hook's partial stdout is not context.
            cmd("echo 'half a context'; exit 1"),
        ]}],
        "UserPromptSubmit": [{"hooks": [cmd("echo 'no secrets' >&2; exit 2")]}],
        "Stop": [{"hooks": [cmd("echo '{\"decision\":\"block\",\"reason\":\"tests not run\"}'")]}]
    });
    // The `if` on SessionStart is said to never run; the rest loads as written.
    let (config, diags) =
        tool_hooks::HooksConfig::from_hooks_value(&hooks, tool_core::RuleSource::UserSettings);
    let places: Vec<&str> = diags.iter().map(|d| d.location.as_str()).collect();
    assert_eq!(places, ["hooks.SessionStart[0].hooks[3].if"], "{diags:?}");
    let r = tool_hooks::HookRunner::new(config);
    let mut extra = Map::new();
    extra.insert("source".into(), json!("startup"));
    let out = r
        .run_event("SessionStart", extra.clone(), Some("startup"), &env.ctx())
        .await;
    let texts = |list: &[tool_hooks::HookMessage]| -> Vec<String> {
        list.iter().map(|c| c.text.clone()).collect()
    };
    assert_eq!(texts(&out.common.additional_contexts), ["json ctx"]);
    // Plain stdout is context too: Claude Code's "hook success" output.
    assert_eq!(
        texts(&out.common.stdout_contexts),
        ["Project uses pnpm", "{project: pnpm}"]
    );
    let said: Vec<String> = out
        .common
        .messages("SessionStart", Some("startup"), false)
        .iter()
        .filter_map(|m| match m {
            tool_core::Message::Attachment(a) => Some(a.text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        said,
        [
            "<system-reminder>\nSessionStart hook additional context: json ctx\n</system-reminder>",
            "<system-reminder>\nSessionStart:startup hook success: Project uses pnpm\n</system-reminder>",
            "<system-reminder>\nSessionStart:startup hook success: {project: pnpm}\n</system-reminder>",
        ]
    );
    assert_eq!(out.common.errors.len(), 1, "{:?}", out.common.errors);
    assert!(out.common.errors[0].text.contains("exit code 1"));
    assert_eq!(out.hook_specific[0].1.extra["sessionTitle"], "T");
    assert!(!env.path("never").exists());
    let got: Value = serde_json::from_str(&env.read("ss.json")).unwrap();
    assert_eq!(got["source"], "startup");
    assert_eq!(got["hook_event_name"], "SessionStart");
    // Matcher: "clear" does not match.
    assert!(
        r.run_event("SessionStart", extra, Some("clear"), &env.ctx())
            .await
            .common
            .runs
            .is_empty()
    );

    let mut extra = Map::new();
    extra.insert("prompt".into(), json!("my password is x"));
    let out = r
        .run_event("UserPromptSubmit", extra, None, &env.ctx())
        .await;
    assert!(out.common.is_blocked());
    assert!(out.common.blocking_errors[0].text.ends_with("no secrets"));

    let mut extra = Map::new();
    extra.insert("stop_hook_active".into(), json!(false));
    let out = r.run_event("Stop", extra, None, &env.ctx()).await;
    assert_eq!(out.common.blocking_errors[0].text, "tests not run");
}

struct Native {
    calls: AtomicUsize,
}

#[async_trait::async_trait]
impl NativeHook for Native {
    fn name(&self) -> &str {
        "native-guard"
    }
    async fn run(
        &self,
        input: &Value,
        _ctx: &ToolUseContext,
    ) -> Result<HookOutput, NativeHookError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let command = input["tool_input"]["command"].as_str().unwrap_or_default();
        if command.contains("sudo") {
            return Err(NativeHookError::Blocking("no sudo".into()));
        }
        if command == "fail" {
            return Err(NativeHookError::Failed("broken".into()));
        }
        if command == "slow" {
            tokio::time::sleep(Duration::from_secs(100)).await;
        }
        let mut hso = HookSpecificOutput::for_event("PreToolUse");
        hso.permission_decision = Some(PermissionDecision::Allow);
        let mut m = Map::new();
        m.insert("command".into(), json!(format!("{command} --safe")));
        hso.updated_input = Some(m);
        Ok(HookOutput {
            hook_specific_output: Some(hso),
            ..HookOutput::default()
        })
    }
}

#[tokio::test]
async fn native_hooks() {
    let env = Env::new();
    let hook = Arc::new(Native {
        calls: AtomicUsize::new(0),
    });
    let mut config = HooksConfig::new();
    config.add(
        "PreToolUse",
        Matcher::parse(Some("Bash")).unwrap(),
        tool_hooks::HookHandler::native(hook.clone()).with_timeout(Duration::from_millis(300)),
    );
    let r = HookRunner::new(config);
    let bash = |c: &str| ToolCallInfo::new("Bash", json!({"command": c}), "t");
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(
        (d.behavior, d.updated_input),
        (
            PermissionDecision::Allow,
            Some(json!({"command": "ls --safe"}))
        )
    );
    let d = r
        .run_pre_tool_use(&bash("sudo ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(d.message, "PreToolUse:Bash hook error: no sudo");
    let out = r.run_pre_tool_use(&bash("fail"), &env.ctx()).await;
    assert_eq!(
        out.common.errors[0].to_string(),
        "hook `native-guard`: broken"
    );
    let start = Instant::now();
    let out = r.run_pre_tool_use(&bash("slow"), &env.ctx()).await;
    // The 300 ms timeout stopped it: the hook itself sleeps 100 s (a bound, not a speed check).
    assert!(start.elapsed() < HANG_GUARD, "{:?}", start.elapsed());
    assert!(out.common.errors[0].text.contains("timed out"));
    assert_eq!(hook.calls.load(Ordering::SeqCst), 4);
    // Not run for other tools.
    r.run_pre_tool_use(&ToolCallInfo::new("Read", json!({}), "t"), &env.ctx())
        .await;
    assert_eq!(hook.calls.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn async_hooks_run_detached() {
    let env = Env::new();
    // The hook cannot finish before the test creates `go`.
    let go = env.path("go");
    let hook = format!(
        "{}; {}",
        wait_for_go(&go),
        r#"echo '{"systemMessage":"tests passed","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"all green"}}'"#
    );
    let r = runner(one(
        "PostToolUse",
        "*",
        vec![json!({"type": "command", "async": true, "command": hook})],
    ));
    let out = tokio::time::timeout(
        HANG_GUARD,
        r.run_post_tool_use(
            &ToolCallInfo::new("Edit", json!({}), "t"),
            &json!({}),
            &env.ctx(),
        ),
    )
    .await
    .expect("async hook must not block: the call waited for it");
    assert!(out.common.runs.is_empty() && out.common.additional_contexts.is_empty());
    assert!(r.take_async_results().is_empty());
    // A host about to exit waits for it (its results are all in when the wait ends).
    assert_eq!(r.pending_async(), 1);
    let mut wait = std::pin::pin!(r.wait_for_async());
    assert!(
        tokio::time::timeout(Duration::from_millis(200), &mut wait)
            .await
            .is_err(),
        "the wait ended while the hook still ran"
    );
    std::fs::write(&go, "").unwrap();
    tokio::time::timeout(HANG_GUARD, wait)
        .await
        .expect("the wait ends when the hook does");
    assert_eq!(r.pending_async(), 0);
    let delivered = r.take_async_results();
    assert_eq!(delivered.len(), 1, "{delivered:?}");
    assert_eq!(delivered[0].event, "PostToolUse");
    assert_eq!(delivered[0].common.additional_contexts[0].text, "all green");
    assert_eq!(delivered[0].common.system_messages[0].text, "tests passed");
}

/// Takes background results until `n` arrived (or the hang guard ran out).
async fn wait_async(r: &HookRunner, n: usize) -> Vec<tool_hooks::AsyncHookResult> {
    let mut delivered = Vec::new();
    let deadline = Instant::now() + HANG_GUARD;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        delivered.extend(r.take_async_results());
        if delivered.len() >= n {
            break;
        }
    }
    delivered
}

/// `asyncRewake: true` implies `async` (it ran in the foreground, holding up the call): the
/// hook runs in the background, and only an exit code 2 says something, to the model: its
/// stderr (else stdout), on any event, with the next model request. An exit 0 delivers
/// nothing, not even its JSON (Claude Code ignores an asyncRewake hook's output).
#[tokio::test]
async fn async_rewake_runs_in_the_background_and_wakes_on_exit_2() {
    let env = Env::new();
    // Neither hook can finish before the test creates `go`.
    let go = env.path("go");
    let failing = format!(
        "{}; {}",
        wait_for_go(&go),
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"unused"}}'; echo 'tests failed: 3' >&2; exit 2"#
    );
    let passing = format!(
        "{}; {}",
        wait_for_go(&go),
        r#"echo '{"systemMessage":"unused","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"unused"}}'"#
    );
    let r = runner(one(
        "PostToolUse",
        "*",
        vec![
            json!({"type": "command", "asyncRewake": true, "command": &failing}),
            json!({"type": "command", "asyncRewake": true, "command": &passing}),
        ],
    ));
    let out = tokio::time::timeout(
        HANG_GUARD,
        r.run_post_tool_use(
            &ToolCallInfo::new("Edit", json!({}), "t"),
            &json!({}),
            &env.ctx(),
        ),
    )
    .await
    .expect("an asyncRewake hook must not block: the call waited for it");
    assert_eq!(out.common, Default::default());
    assert!(r.take_async_results().is_empty());
    std::fs::write(&go, "").unwrap();
    let mut delivered = wait_async(&r, 2).await;
    assert_eq!(delivered.len(), 2, "{delivered:?}");
    delivered.sort_by_key(|d| d.common.wake_messages.is_empty());
    let woke = &delivered[0].common;
    assert_eq!(delivered[0].event, "PostToolUse");
    assert_eq!(woke.wake_messages.len(), 1, "{woke:?}");
    assert_eq!(woke.wake_messages[0].hook, failing);
    assert_eq!(woke.wake_messages[0].text, "tests failed: 3");
    assert!(woke.additional_contexts.is_empty() && woke.errors.is_empty());
    let messages = woke.messages("PostToolUse", None, false);
    assert_eq!(
        messages,
        [tool_core::Message::Attachment(tool_core::Attachment::new(
            "queued_command",
            format!(
                "<system-reminder>\nPostToolUse hook blocking error from command \"{failing}\": tests failed: 3\n</system-reminder>"
            ),
        ))]
    );
    assert!(
        delivered[1]
            .common
            .messages("PostToolUse", None, false)
            .is_empty()
    );

    // Any event, a non-blocking one too; no stderr: the stdout.
    let r = runner(json!({"Notification": [{"hooks": [
        {"type": "command", "asyncRewake": true, "command": "echo 'look at the build'; exit 2"}
    ]}]}));
    let out = r
        .run_event("Notification", Map::new(), Some("idle_prompt"), &env.ctx())
        .await;
    assert_eq!(out.common, Default::default());
    let delivered = wait_async(&r, 1).await;
    assert_eq!(delivered.len(), 1, "{delivered:?}");
    assert_eq!(
        delivered[0].common.wake_messages[0].text,
        "look at the build"
    );
    assert!(delivered[0].common.errors.is_empty());

    // Exit 0 says nothing, whatever it printed; another exit code is a notice for the user.
    let r = runner(json!({"Notification": [{"hooks": [
        {"type": "command", "asyncRewake": true, "command": "echo '{\"continue\": \"no\"}'"},
        {"type": "command", "asyncRewake": true, "command": "echo 'no config' >&2; exit 1"}
    ]}]}));
    r.run_event("Notification", Map::new(), Some("idle_prompt"), &env.ctx())
        .await;
    let mut delivered = wait_async(&r, 2).await;
    assert_eq!(delivered.len(), 2, "{delivered:?}");
    delivered.sort_by_key(|d| !d.common.errors.is_empty());
    assert!(
        delivered[0]
            .common
            .messages("Notification", None, false)
            .is_empty()
    );
    assert_eq!(
        delivered[1].common.messages("Notification", None, false),
        [tool_core::Message::System(
            "Notification hook error: hook `echo 'no config' >&2; exit 1`: failed with exit code 1: no config".into()
        )]
    );
}

#[tokio::test]
async fn empty_config_is_none() {
    let (config, _) = HooksConfig::from_hooks_value(&json!({}), RuleSource::UserSettings);
    let r = HookRunner::new(config);
    assert_eq!(format!("{r:?}"), "HookRunner(none)");
}

#[tokio::test]
async fn extra_env_and_already_cancelled() {
    let env = Env::new();
    let r = runner(
        json!({"SessionStart": [{"hooks": [cmd("echo 'export FOO=1' >> \"$CLAUDE_ENV_FILE\"")]}]}),
    );
    let env_file = env.path("env.sh");
    let vars = [(
        "CLAUDE_ENV_FILE".to_owned(),
        env_file.to_string_lossy().into_owned(),
    )];
    let out = r
        .run_event_with_env(
            "SessionStart",
            Map::new(),
            Some("startup"),
            &vars,
            &env.ctx(),
        )
        .await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    assert_eq!(env.read("env.sh"), "export FOO=1\n");
    // A call whose token is already cancelled starts no hook.
    let ctx = env.ctx();
    ctx.cancellation().cancel();
    let r = runner(one(
        "PreToolUse",
        "*",
        vec![cmd(&format!("touch '{}'", env.path("ran").display()))],
    ));
    let out = r
        .run_pre_tool_use(&ToolCallInfo::new("Bash", json!({}), "t"), &ctx)
        .await;
    assert!(out.common.cancelled && out.common.runs.is_empty());
    assert!(!env.path("ran").exists());
}
