//! PreToolUse with real hook processes: exit codes, JSON fields, aggregation, stdin JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Instant;

use common::{Env, cmd, one, runner};
use serde_json::{Value, json};
use tool_core::{PermissionMode, PermissionResult, RuleSource, ToolPermissionContext};
use tool_hooks::{HookRunner, HooksConfig, PermissionDecision, ToolCallInfo};

fn bash(command: &str) -> ToolCallInfo {
    ToolCallInfo::new(
        "Bash",
        json!({"command": command, "description": "d"}),
        "toolu_01",
    )
}

fn json_hook(out: &Value) -> Value {
    cmd(&format!(
        "cat >/dev/null; printf '%s' '{}'",
        out.to_string().replace('\'', "'\\''")
    ))
}

#[tokio::test]
async fn none_runner_is_empty() {
    let env = Env::new();
    let out = HookRunner::none()
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await;
    assert_eq!(out, Default::default());
    assert!(!HookRunner::none().has_hooks("PreToolUse", Some("Bash")));
}

#[tokio::test]
async fn exit_codes() {
    let env = Env::new();
    // exit 0 with plain stdout: no decision, no error.
    let r = runner(one("PreToolUse", "Bash", vec![cmd("echo hello; exit 0")]));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.decision.is_none());
    assert!(out.common.errors.is_empty());
    assert_eq!(out.common.runs[0].exit_code, Some(0));

    // exit 2: deny with the stderr, formatted as Claude Code does.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd("echo 'Use rg instead of grep' >&2; exit 2")],
    ));
    let out = r.run_pre_tool_use(&bash("grep x"), &env.ctx()).await;
    let d = out.decision.unwrap();
    assert_eq!(d.behavior, PermissionDecision::Deny);
    assert_eq!(
        d.message,
        "PreToolUse:Bash hook error: [echo 'Use rg instead of grep' >&2; exit 2]: Use rg instead of grep"
    );
    assert!(d.from_blocking_error);
    assert!(matches!(
        d.to_permission_result(),
        Some(PermissionResult::Deny { .. })
    ));

    // exit 2 without stderr.
    let r = runner(one("PreToolUse", "Bash", vec![cmd("exit 2")]));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(
        d.message,
        "PreToolUse:Bash hook error: [exit 2]: No stderr output"
    );

    // other non-zero: non-blocking error naming the hook, first stderr line.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd("echo 'first line' >&2; echo second >&2; exit 1")],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.decision.is_none());
    assert_eq!(out.common.errors.len(), 1);
    let e = &out.common.errors[0];
    assert_eq!(e.hook, "echo 'first line' >&2; echo second >&2; exit 1");
    assert_eq!(e.text, "failed with exit code 1: first line");

    // 127: command not found is a non-blocking error too.
    let r = runner(one("PreToolUse", "Bash", vec![cmd("/nonexistent/hook.sh")]));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.decision.is_none());
    assert!(
        out.common.errors[0]
            .text
            .starts_with("failed with exit code 127"),
        "{:?}",
        out.common.errors
    );

    // Exec form of a missing program: cannot start.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json!({"type": "command", "command": "/nonexistent/x", "args": []})],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(
        out.common.errors[0].text.contains("cannot start"),
        "{:?}",
        out.common.errors
    );

    // Non-zero exit with schema-valid JSON: the JSON alone decides, no error.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd(
            r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask"}}'; exit 3"#,
        )],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.common.errors.is_empty());
    let d = out.decision.unwrap();
    assert_eq!(d.behavior, PermissionDecision::Ask);
    assert_eq!(
        d.message,
        "Hook PreToolUse:Bash asked for confirmation for this tool"
    );
}

#[tokio::test]
async fn json_fields() {
    let env = Env::new();
    let hso = |v: Value| json!({"hookSpecificOutput": v});
    // allow with reason and additional context; systemMessage.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json_hook(&json!({
            "systemMessage": "careful",
            "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                "permissionDecisionReason": "safe command", "additionalContext": "ctx here"}
        }))],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    let d = out.decision.clone().unwrap();
    assert_eq!(
        (d.behavior, d.reason.as_deref()),
        (PermissionDecision::Allow, Some("safe command"))
    );
    assert_eq!(out.common.system_messages[0].text, "careful");
    assert_eq!(out.common.additional_contexts[0].text, "ctx here");
    assert!(matches!(
        d.to_permission_result(),
        Some(PermissionResult::Allow {
            updated_input: None,
            ..
        })
    ));

    // deny: reason goes to the model.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json_hook(&hso(
            json!({"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "not here"}),
        ))],
    ));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(
        (d.behavior, d.message.as_str(), d.from_blocking_error),
        (PermissionDecision::Deny, "not here", false)
    );

    // deny without reason: worded as Claude Code's pipeline words it (semantics §3.5).
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json_hook(&hso(
            json!({"hookEventName": "PreToolUse", "permissionDecision": "deny"}),
        ))],
    ));
    assert_eq!(
        r.run_pre_tool_use(&bash("ls"), &env.ctx())
            .await
            .decision
            .unwrap()
            .message,
        "Hook PreToolUse:Bash denied this tool"
    );

    // defer.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json_hook(&hso(
            json!({"hookEventName": "PreToolUse", "permissionDecision": "defer"}),
        ))],
    ));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(d.behavior, PermissionDecision::Defer);
    assert!(d.to_permission_result().is_none());

    // legacy top-level decisions.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json_hook(&json!({"decision": "approve", "reason": "ok"}))],
    ));
    assert_eq!(
        r.run_pre_tool_use(&bash("ls"), &env.ctx())
            .await
            .decision
            .unwrap()
            .behavior,
        PermissionDecision::Allow
    );
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json_hook(
            &json!({"decision": "block", "reason": "legacy no"}),
        )],
    ));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(
        (d.behavior, d.message.as_str()),
        (PermissionDecision::Deny, "legacy no")
    );
    // A legacy block without a reason keeps Claude Code's blocking-error text.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json_hook(&json!({"decision": "block"}))],
    ));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(
        (d.behavior, d.message.as_str()),
        (PermissionDecision::Deny, "Blocked by hook")
    );

    // continue:false + stopReason.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json_hook(
            &json!({"continue": false, "stopReason": "build broken"}),
        )],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.common.prevent_continuation());
    assert_eq!(
        out.common.stop.unwrap().reason.as_deref(),
        Some("build broken")
    );

    // updatedInput with allow accompanies the decision.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json_hook(&hso(
            json!({"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "ls -la"}}),
        ))],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert_eq!(
        out.decision.unwrap().updated_input,
        Some(json!({"command": "ls -la"}))
    );

    // updatedInput without decision: passthrough update.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json_hook(&hso(
            json!({"hookEventName": "PreToolUse", "updatedInput": {"command": "ls -1"}}),
        ))],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.decision.is_none());
    assert_eq!(out.passthrough_input, Some(json!({"command": "ls -1"})));
    assert_eq!(out.effective_input(), Some(&json!({"command": "ls -1"})));

    // updatedInput with deny is ignored.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json_hook(&hso(
            json!({"hookEventName": "PreToolUse", "permissionDecision": "deny", "updatedInput": {"command": "x"}}),
        ))],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.effective_input().is_none());
}

#[tokio::test]
async fn stdin_json_fields_and_env() {
    let env = Env::new();
    let hook = format!(
        "cat > '{}'; printf '%s' \"$CLAUDE_PROJECT_DIR\" > '{}'",
        env.path("in.json").display(),
        env.path("pd").display()
    );
    let r = runner(one("PreToolUse", "Bash", vec![cmd(&hook)]))
        .with_transcript_path("/tmp/t.jsonl")
        .with_project_dir("/proj/root");
    let ctx = env.ctx().with_permission(ToolPermissionContext {
        mode: PermissionMode::AcceptEdits,
        ..Default::default()
    });
    r.run_pre_tool_use(&bash("ls"), &ctx).await;
    let got: Value = serde_json::from_str(&env.read("in.json")).unwrap();
    assert_eq!(
        got,
        json!({
            "session_id": "sess-123",
            "transcript_path": "/tmp/t.jsonl",
            "cwd": env.root().to_string_lossy(),
            "hook_event_name": "PreToolUse",
            "permission_mode": "acceptEdits",
            "tool_name": "Bash",
            "tool_input": {"command": "ls", "description": "d"},
            "tool_use_id": "toolu_01"
        })
    );
    assert_eq!(env.read("pd"), "/proj/root");
}

#[tokio::test]
async fn exec_form_and_placeholder() {
    let env = Env::new();
    env.script(
        "hooks/write.sh",
        "#!/bin/sh\nprintf '%s|%s' \"$1\" \"$2\" > \"$CLAUDE_PROJECT_DIR/out\"\n",
    );
    let r = runner(one(
        "PreToolUse",
        "*",
        vec![json!({"type": "command", "command": "${CLAUDE_PROJECT_DIR}/hooks/write.sh", "args": ["a b", "${CLAUDE_PROJECT_DIR}/x"]})],
    ))
    .with_project_dir(env.root());
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    assert_eq!(env.read("out"), format!("a b|{}/x", env.root().display()));
    // Shell form sees the variable too.
    let r = runner(one(
        "PreToolUse",
        "*",
        vec![cmd(
            "echo \"${CLAUDE_PROJECT_DIR}\" > \"$CLAUDE_PROJECT_DIR/out2\"",
        )],
    ))
    .with_project_dir(env.root());
    r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert_eq!(env.read("out2").trim(), env.root().to_string_lossy());
}

fn decide(decision: &str, delay: f64, updated: Option<&str>) -> Value {
    let mut h = json!({"hookEventName": "PreToolUse", "permissionDecision": decision});
    if let Some(u) = updated {
        h["updatedInput"] = json!({"command": u});
    }
    let out = json!({"hookSpecificOutput": h}).to_string();
    cmd(&format!("sleep {delay}; printf '%s' '{out}'"))
}

#[tokio::test]
async fn parallel_conflicting_decisions() {
    let env = Env::new();
    let cases: Vec<(Vec<Value>, PermissionDecision)> = vec![
        (
            vec![
                decide("allow", 0.0, None),
                decide("ask", 0.1, None),
                decide("deny", 0.2, None),
            ],
            PermissionDecision::Deny,
        ),
        (
            vec![decide("deny", 0.2, None), decide("allow", 0.0, None)],
            PermissionDecision::Deny,
        ),
        (
            vec![decide("allow", 0.0, None), decide("ask", 0.1, None)],
            PermissionDecision::Ask,
        ),
        (
            vec![decide("ask", 0.0, None), decide("defer", 0.1, None)],
            PermissionDecision::Defer,
        ),
        (
            vec![decide("allow", 0.1, None), decide("allow", 0.0, None)],
            PermissionDecision::Allow,
        ),
    ];
    for (hooks, expected) in cases {
        let n = hooks.len();
        let r = runner(one("PreToolUse", "Bash", hooks));
        let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
        let behavior = out.decision.unwrap().behavior;
        assert_eq!(behavior, expected);
        // Behind a deferral, another hook's ask is kept for hosts that do not defer.
        let behind = out.ask_behind_defer.map(|d| d.behavior);
        if behavior == PermissionDecision::Defer {
            assert_eq!(behind, Some(PermissionDecision::Ask), "{n} hooks");
        } else {
            assert_eq!(behind, None);
        }
    }
    // An exit-2 block cannot be overridden by a later-finishing allow.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![
            cmd("echo blocked >&2; exit 2"),
            decide("allow", 0.2, Some("ls")),
        ],
    ));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(d.behavior, PermissionDecision::Deny);
    assert!(d.message.ends_with("]: blocked"));
    assert_eq!(d.updated_input, None);
}

#[tokio::test]
async fn updated_input_in_configuration_order_and_parallel() {
    let env = Env::new();
    // The first hook finishes last; the last hook in configuration order still wins. The
    // order is not left to timing: the third hook, once it printed its decision, writes its
    // pid to `third`; the first waits for that file, then until the runner has reaped the
    // third (its pid is gone), and only then prints its own.
    let third = env.path("third");
    let third_finishes = match decide("ask", 0.0, Some("third")) {
        Value::Object(mut h) => {
            let command = h["command"].as_str().unwrap().to_owned();
            h["command"] = json!(format!(
                "{command}; echo $$ > '{t}.tmp' && mv '{t}.tmp' '{t}'",
                t = third.display()
            ));
            Value::Object(h)
        }
        other => panic!("{other}"),
    };
    let first_waits = match decide("allow", 0.0, Some("first")) {
        Value::Object(mut h) => {
            let command = h["command"].as_str().unwrap().to_owned();
            // Each loop gives up after a minute or so, so that a failure leaves no hook behind.
            h["command"] = json!(format!(
                "i=0; while [ ! -s '{t}' ] && [ $i -lt 3000 ]; do sleep 0.02; i=$((i+1)); done; \
                 p=$(cat '{t}'); i=0; while kill -0 \"$p\" 2>/dev/null && [ $i -lt 3000 ]; \
                 do sleep 0.02; i=$((i+1)); done; {command}",
                t = third.display()
            ));
            Value::Object(h)
        }
        other => panic!("{other}"),
    };
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![
            first_waits,
            decide("allow", 0.0, Some("second")),
            third_finishes,
        ],
    ));
    let start = Instant::now();
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    let elapsed = start.elapsed();
    let d = out.decision.unwrap();
    assert_eq!(d.behavior, PermissionDecision::Ask);
    assert_eq!(d.updated_input, Some(json!({"command": "third"})));
    // The first hook finished last (it started first and ended after the third was reaped):
    // finish order did not decide.
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    assert!(
        out.common.runs[0].duration > out.common.runs[2].duration,
        "{elapsed:?}: {:?}",
        out.common.runs
    );
    // Reversed configuration order gives the other winner, whatever the timing.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![
            decide("allow", 0.0, Some("second")),
            decide("allow", 0.3, Some("first")),
        ],
    ));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(d.updated_input, Some(json!({"command": "first"})));
}

#[tokio::test]
async fn on_failure_block() {
    let env = Env::new();
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json!({"type": "command", "command": "echo boom >&2; exit 1", "onFailure": "block"})],
    ));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(d.behavior, PermissionDecision::Deny);
    assert_eq!(
        d.message,
        "PreToolUse:Bash hook error: [echo boom >&2; exit 1]: failed with exit code 1: boom"
    );
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json!({"type": "command", "command": "echo '{bad'", "onFailure": "block"})],
    ));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(d.behavior, PermissionDecision::Deny);
    assert!(d.message.contains("not valid JSON"), "{}", d.message);
}

#[tokio::test]
async fn if_conditions_and_matchers() {
    let env = Env::new();
    let mark = |name: &str| cmd(&format!("echo x >> '{}'", env.path(name).display()));
    let mut h1 = mark("git");
    h1["if"] = json!("Bash(git *)");
    let mut h2 = mark("ts");
    h2["if"] = json!("Edit(*.ts)");
    let hooks = json!({"PreToolUse": [
        {"matcher": "Bash", "hooks": [h1]},
        {"matcher": "Edit|Write", "hooks": [h2]},
        {"matcher": "Notebook.*", "hooks": [mark("regex")]},
        {"matcher": "mcp__memory__.*", "hooks": [mark("mcp")]},
    ]});
    let r = runner(hooks);
    let ctx = env.ctx();
    r.run_pre_tool_use(&bash("ls -la"), &ctx).await;
    r.run_pre_tool_use(&bash("cd repo && git status"), &ctx)
        .await;
    r.run_pre_tool_use(
        &ToolCallInfo::new("Edit", json!({"file_path": "/a/x.ts"}), "1"),
        &ctx,
    )
    .await;
    r.run_pre_tool_use(
        &ToolCallInfo::new("Edit", json!({"file_path": "/a/x.rs"}), "2"),
        &ctx,
    )
    .await;
    r.run_pre_tool_use(
        &ToolCallInfo::new("Write", json!({"file_path": "/a/y.ts"}), "3"),
        &ctx,
    )
    .await;
    r.run_pre_tool_use(&ToolCallInfo::new("NotebookEdit", json!({}), "4"), &ctx)
        .await;
    r.run_pre_tool_use(
        &ToolCallInfo::new("mcp__memory__create", json!({}), "5"),
        &ctx,
    )
    .await;
    r.run_pre_tool_use(
        &ToolCallInfo::new("mcp__other__create", json!({}), "6"),
        &ctx,
    )
    .await;
    assert_eq!(env.read("git").lines().count(), 1);
    // Only the Edit of a .ts file: not the .rs edit, not the Write (the rule names Edit).
    assert_eq!(env.read("ts").lines().count(), 1);
    assert_eq!(env.read("regex").lines().count(), 1);
    assert_eq!(env.read("mcp").lines().count(), 1);
}

#[tokio::test]
async fn custom_rule_matcher_is_used() {
    struct Always;
    impl tool_hooks::RuleMatcher for Always {
        fn matches(&self, rule: &str, _: &str, _: &Value) -> bool {
            rule == "Custom(yes)"
        }
    }
    let env = Env::new();
    let mut h = cmd("echo '{\"systemMessage\":\"ran\"}'");
    h["if"] = json!("Custom(yes)");
    let r = runner(one("PreToolUse", "*", vec![h])).with_rule_matcher(std::sync::Arc::new(Always));
    let out = r.run_pre_tool_use(&bash("anything"), &env.ctx()).await;
    assert_eq!(out.common.system_messages.len(), 1);
}

/// A matcher that fails open for every rule but `Exact(...)`: the call "could not be
/// matched as written".
struct FailsOpen;

impl tool_hooks::RuleMatcher for FailsOpen {
    fn matches(&self, _: &str, _: &str, _: &Value) -> bool {
        true
    }
    fn match_rule(&self, rule: &str, _: &str, _: &Value) -> tool_hooks::IfMatch {
        if rule.starts_with("Exact(") {
            tool_hooks::IfMatch::Exact
        } else {
            tool_hooks::IfMatch::FailOpen
        }
    }
}

/// A hook whose `if` matched only because the call could not be matched as written (the
/// fail-open) still runs, and its deny, ask and `continue: false` stand; but its allow is no
/// decision (the user is still asked) and its `updatedInput` is not taken, on PreToolUse
/// and on PermissionRequest. The same hook behind an exact match approves as before. (An
/// approver `if: "Bash(npm test *)"` approved `X=rm; $X -rf ~`.)
#[tokio::test]
async fn a_fail_open_if_match_never_approves() {
    let env = Env::new();
    let with_if = |rule: &str, out: Value| {
        let mut h = json_hook(&out);
        h["if"] = json!(rule);
        h
    };
    let rewritten = json!({"command": "echo rewritten"});
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "allow", "updatedInput": rewritten}});
    let run = |hooks: Vec<Value>| {
        let r = runner(one("PreToolUse", "Bash", hooks))
            .with_rule_matcher(std::sync::Arc::new(FailsOpen));
        let ctx = env.ctx();
        async move { r.run_pre_tool_use(&bash("X=rm; $X -rf ~"), &ctx).await }
    };
    let out = run(vec![with_if("Bash(npm test *)", allow.clone())]).await;
    assert!(out.decision.is_none(), "{:?}", out.decision);
    assert!(
        out.passthrough_input.is_none(),
        "{:?}",
        out.passthrough_input
    );
    assert_eq!(out.common.runs.len(), 1, "the hook did not run");
    // Legacy `decision: "approve"` and a passthrough rewrite: not taken either.
    let out = run(vec![
        with_if("Bash(npm test *)", json!({"decision": "approve"})),
        with_if(
            "Bash(npm *)",
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": rewritten}}),
        ),
    ])
    .await;
    assert!(out.decision.is_none(), "{:?}", out.decision);
    assert!(
        out.passthrough_input.is_none(),
        "{:?}",
        out.passthrough_input
    );
    // A deny, an ask and `continue: false` stand.
    for (out_json, behavior) in [
        (
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}}),
            PermissionDecision::Deny,
        ),
        (
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}),
            PermissionDecision::Ask,
        ),
    ] {
        let out = run(vec![with_if("Bash(rm *)", out_json)]).await;
        assert_eq!(out.decision.map(|d| d.behavior), Some(behavior));
    }
    let out = run(vec![with_if(
        "Bash(rm *)",
        json!({"continue": false, "stopReason": "stop"}),
    )])
    .await;
    assert!(out.common.stop.is_some());
    // Behind an exact match, the same hook approves with its input.
    let out = run(vec![with_if("Exact(x)", allow)]).await;
    let d = out.decision.unwrap();
    assert_eq!(d.behavior, PermissionDecision::Allow);
    assert_eq!(d.updated_input, Some(rewritten.clone()));

    // PermissionRequest: the allow is no verdict; a deny is one.
    let allow = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "allow", "updatedInput": rewritten}}});
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "deny", "message": "no"}}});
    let request = |rule: &str, out: &Value| {
        let r = runner(one(
            "PermissionRequest",
            "Bash",
            vec![with_if(rule, out.clone())],
        ))
        .with_rule_matcher(std::sync::Arc::new(FailsOpen));
        let ctx = env.ctx();
        async move {
            r.run_permission_request(&bash("X=rm; $X -rf ~"), &[], &ctx)
                .await
                .verdict
        }
    };
    assert_eq!(request("Bash(npm test *)", &allow).await, None);
    assert!(matches!(
        request("Bash(rm *)", &deny).await,
        Some(tool_hooks::PermissionRequestVerdict::Deny { .. })
    ));
    assert!(matches!(
        request("Exact(x)", &allow).await,
        Some(tool_hooks::PermissionRequestVerdict::Allow { .. })
    ));
}

#[tokio::test]
async fn identical_handlers_run_once() {
    let env = Env::new();
    let h = cmd(&format!("echo x >> '{}'", env.path("count").display()));
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [h.clone()]}, {"matcher": "*", "hooks": [h]}]});
    runner(hooks)
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await;
    assert_eq!(env.read("count").lines().count(), 1);

    // Identity is the shell, the command and the `if` (as Claude Code's): a copy that only
    // adds a timeout or a status message is the same hook, configured as the last copy is;
    // another `if` or shell is another hook.
    let c = "./check.sh";
    let hooks = json!({"PreToolUse": [
        {"matcher": "Bash", "hooks": [cmd(c)]},
        {"matcher": "*", "hooks": [
            {"type": "command", "command": c, "timeout": 10, "statusMessage": "checking"},
            {"type": "command", "command": c, "if": "Bash(git *)"},
            {"type": "command", "command": c, "shell": "powershell"}
        ]}
    ]});
    let (config, diags) = HooksConfig::from_hooks_value(&hooks, RuleSource::UserSettings);
    assert!(diags.is_empty(), "{diags:?}");
    let matching = config.matching("PreToolUse", Some("Bash"));
    assert_eq!(matching.len(), 3, "{matching:?}");
    assert_eq!(
        matching[0].timeout,
        Some(std::time::Duration::from_secs(10))
    );
    assert_eq!(matching[1].if_condition.as_deref(), Some("Bash(git *)"));
}

/// The shell in a hook's identity is the one that runs it: without `shell` that is `sh`,
/// so a copy with `"shell": "bash"` is another hook and both run, each under its own shell
/// (the copy without `shell` was merged into the bash one, as if bash were the default,
/// and ran under bash only).
#[tokio::test]
async fn the_default_shell_is_not_bash_for_de_duplication() {
    let env = Env::new();
    let log = env.path("shells");
    // `$0` of `sh -c` / `bash -c` is the shell's name.
    let c = format!("echo \"$0\" >> '{}'", log.display());
    let hooks = json!({"PreToolUse": [
        {"matcher": "Bash", "hooks": [cmd(&c)]},
        {"matcher": "*", "hooks": [{"type": "command", "command": c, "shell": "bash"}]}
    ]});
    let r = runner(hooks);
    let matching = r.config().matching("PreToolUse", Some("Bash"));
    assert_eq!(matching.len(), 2, "{matching:?}");
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    assert_eq!(out.common.runs.len(), 2);
    // (By path, as Claude Code's `/bin/sh`.)
    let mut shells: Vec<String> = env
        .read("shells")
        .lines()
        .map(|l| l.rsplit('/').next().unwrap_or(l).to_owned())
        .collect();
    shells.sort();
    assert_eq!(shells, ["bash", "sh"]);
    // In exec form no shell runs: `shell` does not make another hook.
    let hooks = json!({"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "/bin/true", "args": []},
        {"type": "command", "command": "/bin/true", "args": [], "shell": "bash"}
    ]}]});
    assert_eq!(
        runner(hooks)
            .config()
            .matching("PreToolUse", Some("Bash"))
            .len(),
        1
    );
}

/// A field of another event in `hookSpecificOutput`, of a type our one struct reads for
/// that event only (`decision` is PermissionRequest's object), does not make the output
/// invalid: the PreToolUse deny holds. It was a schema error, and the hook failed open.
#[tokio::test]
async fn other_events_fields_keep_the_deny() {
    let env = Env::new();
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json_hook(&json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "no", "decision": "block"}}))],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    let d = out.decision.expect("the hook denied");
    assert_eq!(
        (d.behavior, d.message.as_str()),
        (PermissionDecision::Deny, "no")
    );
    // The hook's own field of the wrong type is still an error naming the schema.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json_hook(&json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "permissionDecision": 5}}))],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.decision.is_none());
    assert!(
        out.common.errors[0].text.contains("hook output schema"),
        "{:?}",
        out.common.errors
    );
}
