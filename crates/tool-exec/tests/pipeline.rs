//! The per-call pipeline, one test per step, against the texts of the semantics doc.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_core::{
    Attachment, CANCEL_MESSAGE, DecisionReason, Message, PermissionResult, ProgressSender, Tool,
    ToolResultContent, ToolUseContext, async_trait,
};
use tool_exec::{
    AllowAll, DenyAsks, Ending, HookCall, HookDecision, Hooks, NoHooks, PermissionRequestOutcome,
    PermissionRequestVerdict, Permissions, Pipeline, PostToolUseOutcome, PreToolUseOutcome,
    PromptAnswer, Prompter, REJECT_MESSAGE, ToolUse,
};

/// Permissions with a fixed answer, recording what it was asked.
struct Fixed {
    decide: PermissionResult,
    rule_based: Option<PermissionResult>,
    asked: Mutex<Vec<Value>>,
}

#[async_trait]
impl Permissions for Fixed {
    async fn decide(
        &self,
        _tool: &dyn Tool,
        input: &Value,
        _ctx: &ToolUseContext,
    ) -> PermissionResult {
        self.asked.lock().unwrap().push(input.clone());
        self.decide.clone()
    }
    async fn check_rule_based(
        &self,
        _tool: &dyn Tool,
        _input: &Value,
        _ctx: &ToolUseContext,
    ) -> Option<PermissionResult> {
        self.rule_based.clone()
    }
}

fn fixed(decide: PermissionResult, rule_based: Option<PermissionResult>) -> Arc<Fixed> {
    Arc::new(Fixed {
        decide,
        rule_based,
        asked: Mutex::default(),
    })
}

struct Answer(PromptAnswer, Mutex<u32>);

#[async_trait]
impl Prompter for Answer {
    async fn prompt(&self, _request: &tool_exec::PromptRequest) -> PromptAnswer {
        *self.1.lock().unwrap() += 1;
        self.0.clone()
    }
}

#[derive(Default)]
struct ScriptedHooks {
    pre: PreToolUseOutcome,
    post: PostToolUseOutcome,
    permission: Option<PermissionRequestVerdict>,
    permission_stop: Option<Option<String>>,
    permission_asked: Mutex<u32>,
    failures: Mutex<Vec<(String, bool)>>,
    post_outputs: Mutex<Vec<Value>>,
}

#[async_trait]
impl Hooks for ScriptedHooks {
    async fn pre_tool_use(&self, _call: HookCall<'_>, _ctx: &ToolUseContext) -> PreToolUseOutcome {
        self.pre.clone()
    }
    async fn post_tool_use(
        &self,
        _call: HookCall<'_>,
        output: &Value,
        _ctx: &ToolUseContext,
    ) -> PostToolUseOutcome {
        self.post_outputs.lock().unwrap().push(output.clone());
        self.post.clone()
    }
    async fn post_tool_use_failure(
        &self,
        _call: HookCall<'_>,
        error: &str,
        is_interrupt: bool,
        _ctx: &ToolUseContext,
    ) -> PostToolUseOutcome {
        self.failures
            .lock()
            .unwrap()
            .push((error.to_owned(), is_interrupt));
        self.post.clone()
    }
    async fn permission_request(
        &self,
        _call: HookCall<'_>,
        _suggestions: &[tool_core::PermissionUpdate],
        _ctx: &ToolUseContext,
    ) -> PermissionRequestOutcome {
        *self.permission_asked.lock().unwrap() += 1;
        PermissionRequestOutcome {
            verdict: self.permission.clone(),
            messages: vec![Message::System("PermissionRequest ran".into())],
            stop: self.permission_stop.clone(),
        }
    }
}

fn deny(msg: &str) -> PermissionResult {
    PermissionResult::deny(
        msg,
        DecisionReason::Other {
            reason: "test".into(),
        },
    )
}

async fn run(pipeline: &Pipeline, name: &str, input: Value) -> tool_exec::CallOutcome {
    let log = Arc::default();
    run_in(pipeline, &common::ctx(&log), name, input).await
}

async fn run_in(
    pipeline: &Pipeline,
    ctx: &ToolUseContext,
    name: &str,
    input: Value,
) -> tool_exec::CallOutcome {
    pipeline
        .run_tool_use(
            &ToolUse::new("toolu_1", name, input),
            ctx.child(),
            ProgressSender::none(),
        )
        .await
}

fn text(outcome: &tool_exec::CallOutcome) -> String {
    outcome.result.content.joined_text()
}

#[tokio::test]
async fn unknown_tool() {
    let out = run(&Pipeline::allow_all(), "Nope", json!({})).await;
    assert_eq!(
        text(&out),
        "<tool_use_error>Error: No such tool available: Nope</tool_use_error>"
    );
    assert!(out.result.is_error);
    assert_eq!(out.ending, Ending::UnknownTool);
}

#[tokio::test]
async fn already_cancelled() {
    let log = Arc::default();
    let ctx = common::ctx(&log);
    let child = ctx.child();
    child.cancellation().cancel();
    let out = Pipeline::allow_all()
        .run_tool_use(
            &ToolUse::new("t", "Read", json!({})),
            child,
            ProgressSender::none(),
        )
        .await;
    assert_eq!(text(&out), CANCEL_MESSAGE);
    assert!(log.lock().unwrap().started.is_empty());
}

#[tokio::test]
async fn schema_errors_use_the_input_validation_text() {
    let out = run(&Pipeline::allow_all(), "Read", json!({"ms": "soon"})).await;
    assert_eq!(
        text(&out),
        "<tool_use_error>InputValidationError: Read failed due to the following issue:\nThe parameter `ms` type is expected as `number` but provided as `string`</tool_use_error>"
    );
    assert_eq!(out.ending, Ending::InvalidInput);
}

#[tokio::test]
async fn hook_deny_stops_before_permission_and_call() {
    let perms = fixed(PermissionResult::allow(), None);
    let hooks = ScriptedHooks {
        pre: PreToolUseOutcome {
            decision: Some(HookDecision::Deny {
                message: "PreToolUse:Bash hook error: [./guard.sh]: no rm".into(),
            }),
            messages: vec![Message::Attachment(Attachment::new(
                "hook_additional_context",
                "ctx",
            ))],
            ..Default::default()
        },
        ..Default::default()
    };
    let pipeline = Pipeline::new(perms.clone(), Arc::new(DenyAsks), Arc::new(hooks));
    let out = run(&pipeline, "Bash", json!({})).await;
    assert_eq!(
        text(&out),
        "PreToolUse:Bash hook error: [./guard.sh]: no rm"
    );
    assert!(out.result.is_error);
    assert_eq!(out.ending, Ending::Denied);
    assert_eq!(out.messages_before.len(), 1);
    assert!(
        perms.asked.lock().unwrap().is_empty(),
        "permission must not be consulted after a hook deny"
    );
}

#[tokio::test]
async fn hook_allow_still_obeys_deny_rules_but_skips_the_prompt() {
    let hook_allow = ScriptedHooks {
        pre: PreToolUseOutcome {
            decision: Some(HookDecision::Allow {
                updated_input: None,
                reason: None,
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let denied = Pipeline::new(
        fixed(
            deny("no"),
            Some(deny("Permission to use Bash has been denied.")),
        ),
        Arc::new(DenyAsks),
        Arc::new(hook_allow),
    );
    let out = run(&denied, "Bash", json!({})).await;
    assert_eq!(text(&out), "Permission to use Bash has been denied.");

    let hook_allow = ScriptedHooks {
        pre: PreToolUseOutcome {
            decision: Some(HookDecision::Allow {
                updated_input: None,
                reason: None,
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let perms = fixed(PermissionResult::ask("would ask"), None);
    let allowed = Pipeline::new(perms.clone(), Arc::new(DenyAsks), Arc::new(hook_allow));
    let out = run(&allowed, "Bash", json!({})).await;
    assert_eq!(out.ending, Ending::Succeeded);
    assert_eq!(out.decision, Some(("accept", "hook")));
    assert!(perms.asked.lock().unwrap().is_empty());
}

/// A hook's allow met by an ask rule goes through the permission decision as usual (the
/// semantics' "ask -> call canUseTool"), not straight to the user: in don't-ask mode that
/// decision is a deny, and no one is asked.
#[tokio::test]
async fn hook_allow_met_by_an_ask_rule_goes_through_the_permission_decision() {
    let hook_allow = ScriptedHooks {
        pre: PreToolUseOutcome {
            decision: Some(HookDecision::Allow {
                updated_input: None,
                reason: None,
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let dont_ask =
        "Permission to use Bash has been denied because Claude Code is running in don't ask mode.";
    let perms = fixed(
        deny(dont_ask),
        Some(PermissionResult::ask("Bash(git push:*) asks")),
    );
    let prompter = Arc::new(Answer(
        PromptAnswer::AllowOnce {
            updated_input: None,
        },
        Mutex::new(0),
    ));
    let pipeline = Pipeline::new(perms.clone(), prompter.clone(), Arc::new(hook_allow));
    let out = run(&pipeline, "Bash", json!({"command": "git push"})).await;
    assert_eq!(text(&out), dont_ask);
    assert_eq!(out.ending, Ending::Denied);
    assert_eq!(*prompter.1.lock().unwrap(), 0);
    assert_eq!(perms.asked.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn hook_ask_does_not_put_a_denied_call_to_the_user() {
    let hook_ask = || ScriptedHooks {
        pre: PreToolUseOutcome {
            decision: Some(HookDecision::Ask {
                updated_input: None,
                reason: Some("confirm every Bash".into()),
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let allow_all_prompts = || {
        Arc::new(Answer(
            PromptAnswer::AllowOnce {
                updated_input: None,
            },
            Mutex::new(0),
        ))
    };
    // A deny rule: refused, the user never asked.
    let prompter = allow_all_prompts();
    let denied = Pipeline::new(
        fixed(
            deny("no"),
            Some(deny("Permission to use Bash has been denied.")),
        ),
        prompter.clone(),
        Arc::new(hook_ask()),
    );
    let out = run(&denied, "Bash", json!({})).await;
    assert_eq!(text(&out), "Permission to use Bash has been denied.");
    assert_eq!(out.ending, Ending::Denied);
    assert_eq!(*prompter.1.lock().unwrap(), 0);
    // No deny rule: the hook's ask goes to the user, even where the rules would allow.
    let prompter = allow_all_prompts();
    let asked = Pipeline::new(
        fixed(PermissionResult::allow(), None),
        prompter.clone(),
        Arc::new(hook_ask()),
    );
    let out = run(&asked, "Bash", json!({})).await;
    assert_eq!(out.ending, Ending::Succeeded);
    assert_eq!(*prompter.1.lock().unwrap(), 1);
}

#[tokio::test]
async fn hook_updated_input_reaches_the_call() {
    let hooks = ScriptedHooks {
        pre: PreToolUseOutcome {
            updated_input: Some(json!({"end": "fail"})),
            ..Default::default()
        },
        ..Default::default()
    };
    let perms = fixed(PermissionResult::allow(), None);
    let pipeline = Pipeline::new(perms.clone(), Arc::new(DenyAsks), Arc::new(hooks));
    let out = run(&pipeline, "Edit", json!({"end": "ok"})).await;
    assert_eq!(text(&out), "toolu_1 failed");
    assert_eq!(
        perms.asked.lock().unwrap()[0],
        json!({"end": "fail"}),
        "permission sees the rewritten input"
    );
}

#[tokio::test]
async fn ask_goes_to_the_prompter() {
    let allow = Answer(
        PromptAnswer::AllowOnce {
            updated_input: None,
        },
        Mutex::new(0),
    );
    let allow = Arc::new(allow);
    let pipeline = Pipeline::new(
        fixed(PermissionResult::ask("ok?"), None),
        allow.clone(),
        Arc::new(NoHooks),
    );
    let out = run(&pipeline, "Edit", json!({})).await;
    assert_eq!(out.ending, Ending::Succeeded);
    assert_eq!(out.decision, Some(("accept", "user_temporary")));
    assert_eq!(*allow.1.lock().unwrap(), 1);

    // "Always" is logged as the permanent answer it is.
    let always = Pipeline::new(
        fixed(PermissionResult::ask("ok?"), None),
        Arc::new(Answer(
            PromptAnswer::AllowAlways {
                updated_input: None,
                updates: Vec::new(),
            },
            Mutex::new(0),
        )),
        Arc::new(NoHooks),
    );
    let out = run(&always, "Edit", json!({})).await;
    assert_eq!(out.decision, Some(("accept", "user_permanent")));

    let reject = Pipeline::new(
        fixed(PermissionResult::ask("ok?"), None),
        Arc::new(Answer(PromptAnswer::Deny { feedback: None }, Mutex::new(0))),
        Arc::new(NoHooks),
    );
    let out = run(&reject, "Edit", json!({})).await;
    assert_eq!(text(&out), REJECT_MESSAGE);
    assert!(
        out.interrupt_turn,
        "a rejection without feedback ends the turn"
    );

    let feedback = Pipeline::new(
        fixed(PermissionResult::ask("ok?"), None),
        Arc::new(Answer(
            PromptAnswer::Deny {
                feedback: Some("use git mv".into()),
            },
            Mutex::new(0),
        )),
        Arc::new(NoHooks),
    );
    let out = run(&feedback, "Edit", json!({})).await;
    assert!(text(&out).ends_with("To tell you how to proceed, the user said:\nuse git mv"));
    assert!(!out.interrupt_turn);
}

#[tokio::test]
async fn permission_request_hooks_answer_before_the_prompter() {
    let prompter = Arc::new(Answer(PromptAnswer::Deny { feedback: None }, Mutex::new(0)));
    let pipeline = |permission, rule_based| {
        let hooks = Arc::new(ScriptedHooks {
            permission,
            ..ScriptedHooks::default()
        });
        let p = Pipeline::new(
            fixed(PermissionResult::ask("ok?"), rule_based),
            prompter.clone(),
            hooks.clone(),
        );
        (p, hooks)
    };
    let allow = |input: Option<Value>| {
        Some(PermissionRequestVerdict::Allow {
            hook: "approver".into(),
            updated_input: input,
            updated_permissions: Vec::new(),
        })
    };

    // Allow: the call runs, nobody is asked, the hook is the source.
    let (p, hooks) = pipeline(allow(None), None);
    let out = run(&p, "Edit", json!({})).await;
    assert_eq!(out.ending, Ending::Succeeded);
    assert_eq!(out.decision, Some(("accept", "hook")));
    assert_eq!(*hooks.permission_asked.lock().unwrap(), 1);
    assert!(
        out.messages_before
            .contains(&Message::System("PermissionRequest ran".into()))
    );

    // An allow's input still has to pass the deny rules.
    let (p, _) = pipeline(allow(Some(json!({"x": 1}))), Some(deny("no x")));
    let out = run(&p, "Edit", json!({})).await;
    assert_eq!(out.ending, Ending::Denied);
    assert_eq!(text(&out), "no x");

    // An ask rule still goes to the user (who says no here).
    let (p, _) = pipeline(allow(None), Some(PermissionResult::ask("sure?")));
    let out = run(&p, "Edit", json!({})).await;
    assert_eq!(text(&out), REJECT_MESSAGE);

    // Deny: the hook's message, and `interrupt` stops the turn.
    let (p, _) = pipeline(
        Some(PermissionRequestVerdict::Deny {
            hook: "guard".into(),
            message: "not today".into(),
            interrupt: true,
        }),
        None,
    );
    let out = run(&p, "Edit", json!({})).await;
    assert_eq!(out.ending, Ending::Denied);
    assert_eq!(text(&out), "not today");
    assert_eq!(out.decision, Some(("reject", "hook")));
    assert!(out.interrupt_turn);

    // `continue: false` overrides even an allow: nothing runs and the turn stops.
    let hooks = Arc::new(ScriptedHooks {
        permission: allow(None),
        permission_stop: Some(Some("maintenance".into())),
        ..ScriptedHooks::default()
    });
    let p = Pipeline::new(
        fixed(PermissionResult::ask("ok?"), None),
        prompter.clone(),
        hooks,
    );
    let out = run(&p, "Edit", json!({})).await;
    assert_eq!(out.ending, Ending::Denied);
    assert_eq!(
        text(&out),
        "Execution stopped by PermissionRequest hook: maintenance"
    );
    assert!(out.interrupt_turn);

    // No verdict: the user is asked as before.
    assert_eq!(*prompter.1.lock().unwrap(), 1);
    let (p, _) = pipeline(None, None);
    let out = run(&p, "Edit", json!({})).await;
    assert_eq!(text(&out), REJECT_MESSAGE);
    assert_eq!(*prompter.1.lock().unwrap(), 2);

    // An allowed call never reaches PermissionRequest.
    let hooks = Arc::new(ScriptedHooks::default());
    let p = Pipeline::new(Arc::new(AllowAll), prompter.clone(), hooks.clone());
    run(&p, "Edit", json!({})).await;
    assert_eq!(*hooks.permission_asked.lock().unwrap(), 0);
}

#[tokio::test]
async fn deny_text_is_plain_not_wrapped() {
    let pipeline = Pipeline::new(
        fixed(deny("Permission to use Edit has been denied."), None),
        Arc::new(DenyAsks),
        Arc::new(NoHooks),
    );
    let out = run(&pipeline, "Edit", json!({})).await;
    assert_eq!(text(&out), "Permission to use Edit has been denied.");
}

#[tokio::test]
async fn failures_are_formatted_and_reach_post_tool_use_failure() {
    let hooks = Arc::new(ScriptedHooks::default());
    let pipeline = Pipeline::new(Arc::new(AllowAll), Arc::new(DenyAsks), hooks.clone());
    let out = run(&pipeline, "Bash", json!({"end": "shell"})).await;
    assert_eq!(text(&out), "Exit code 2\nboom");
    assert_eq!(
        out.ending,
        Ending::Failed {
            class: "ShellError".into()
        }
    );
    assert_eq!(
        hooks.failures.lock().unwrap().as_slice(),
        &[("Exit code 2\nboom".to_owned(), false)]
    );
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result() {
    let out = run(&Pipeline::allow_all(), "Edit", json!({"end": "panic"})).await;
    assert!(out.result.is_error);
    assert!(text(&out).starts_with("<tool_use_error>Error calling tool (Edit): the tool panicked: tool toolu_1 panicked on purpose"));
    assert_eq!(
        out.ending,
        Ending::Failed {
            class: "Panic".into()
        }
    );
}

#[tokio::test]
async fn empty_results_get_the_notice() {
    let out = run(&Pipeline::allow_all(), "Read", json!({"end": "empty"})).await;
    assert_eq!(
        out.result.content,
        ToolResultContent::Text("(Read completed with no output)".into())
    );
}

#[tokio::test]
async fn large_results_are_persisted_in_the_results_dir() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::default();
    let ctx = common::ctx(&log).with_results_dir(dir.path());
    let out = run_in(&Pipeline::allow_all(), &ctx, "Read", json!({"end": "big"})).await;
    let path = out.persisted.clone().unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap().len(), 60_000);
    assert!(
        text(&out)
            .starts_with("<persisted-output>\nOutput too large (58.6KB). Full output saved to: ")
    );
    // The global limit applies below the tool's own 100,000.
    let small = Pipeline::allow_all().with_max_result_chars(100_000);
    let out = run_in(&small, &ctx, "Grep", json!({"end": "big"})).await;
    assert!(out.persisted.is_none());
}

#[tokio::test]
async fn post_hooks_add_messages_and_replace_output_of_the_tool_shape() {
    let hooks = |replacement: Value| {
        Arc::new(ScriptedHooks {
            post: PostToolUseOutcome {
                messages: vec![Message::Attachment(Attachment::new(
                    "hook_additional_context",
                    "formatted",
                ))],
                updated_output: Some(replacement),
                stop: None,
            },
            ..Default::default()
        })
    };
    // The replacement has the tool's output shape: the tool renders it.
    let scripted = hooks(json!("redacted"));
    let pipeline = Pipeline::new(Arc::new(AllowAll), Arc::new(DenyAsks), scripted.clone());
    let out = run(&pipeline, "Edit", json!({})).await;
    assert_eq!(text(&out), "rendered: redacted");
    assert_eq!(out.messages_after.len(), 1);
    assert_eq!(
        scripted.post_outputs.lock().unwrap()[0],
        json!("toolu_1 done")
    );
    // Another shape: ignored, the tool's own output stands, and the user is told.
    let pipeline = Pipeline::new(
        Arc::new(AllowAll),
        Arc::new(DenyAsks),
        hooks(json!({"stdout": "x"})),
    );
    let out = run(&pipeline, "Edit", json!({})).await;
    assert_eq!(text(&out), "toolu_1 done");
    assert!(
        out.messages_after
            .iter()
            .any(|m| matches!(m, Message::System(t)
            if t.contains("updatedToolOutput") && t.contains("Edit"))),
        "{:?}",
        out.messages_after
    );
}

#[tokio::test]
async fn stop_continuation_is_reported() {
    let hooks = ScriptedHooks {
        pre: PreToolUseOutcome {
            stop: Some(Some("build is red".into())),
            ..Default::default()
        },
        ..Default::default()
    };
    let pipeline = Pipeline::new(Arc::new(AllowAll), Arc::new(DenyAsks), Arc::new(hooks));
    let out = run(&pipeline, "Edit", json!({})).await;
    assert_eq!(out.stop_turn, Some(Some("build is red".into())));
    assert!(
        matches!(out.messages_after.last(), Some(Message::Attachment(a)) if a.kind == "hook_stopped_continuation")
    );
}

#[tokio::test]
async fn hook_cancellation_stops_the_call() {
    let hooks = ScriptedHooks {
        pre: PreToolUseOutcome {
            cancelled: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let pipeline = Pipeline::new(Arc::new(AllowAll), Arc::new(DenyAsks), Arc::new(hooks));
    let out = run(&pipeline, "Edit", json!({})).await;
    assert_eq!(text(&out), CANCEL_MESSAGE);
}

/// Allows every call, but the call is cancelled while the answer is on its way.
struct CancelledWhileDeciding;

#[async_trait]
impl Permissions for CancelledWhileDeciding {
    async fn decide(
        &self,
        _tool: &dyn Tool,
        _input: &Value,
        ctx: &ToolUseContext,
    ) -> PermissionResult {
        ctx.cancellation().cancel();
        PermissionResult::allow()
    }
    async fn check_rule_based(
        &self,
        _tool: &dyn Tool,
        _input: &Value,
        _ctx: &ToolUseContext,
    ) -> Option<PermissionResult> {
        None
    }
}

#[tokio::test]
async fn a_call_cancelled_while_its_permission_was_decided_does_not_start() {
    let log = Arc::default();
    let pipeline = Pipeline::new(
        Arc::new(CancelledWhileDeciding),
        Arc::new(DenyAsks),
        Arc::new(NoHooks),
    );
    let out = run_in(&pipeline, &common::ctx(&log), "Edit", json!({})).await;
    assert_eq!(text(&out), CANCEL_MESSAGE);
    assert_eq!(out.ending, Ending::Cancelled);
    assert!(log.lock().unwrap().started.is_empty());
}

/// Panics while its input is validated, outside `call`.
struct PanicsInValidation;

#[async_trait]
impl Tool for PanicsInValidation {
    fn name(&self) -> &str {
        "Fragile"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn description(&self) -> std::borrow::Cow<'_, str> {
        "panics in validate_input".into()
    }
    fn max_result_size(&self) -> tool_core::MaxResultSize {
        tool_core::MaxResultSize::Chars(1000)
    }
    async fn validate_input(
        &self,
        _input: &Value,
        _ctx: &ToolUseContext,
    ) -> Result<(), tool_core::ValidationError> {
        panic!("validation panicked on purpose")
    }
    async fn call(
        &self,
        _input: Value,
        _ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<tool_core::ToolResult, tool_core::ToolError> {
        Ok(tool_core::ToolResult::text("ran"))
    }
}

#[tokio::test]
async fn a_panic_outside_the_call_is_the_calls_error() {
    let ctx = ToolUseContext::new(std::env::temp_dir())
        .with_tools(vec![Arc::new(PanicsInValidation) as Arc<dyn Tool>]);
    let out = run_in(&Pipeline::allow_all(), &ctx, "Fragile", json!({})).await;
    assert!(out.result.is_error);
    assert_eq!(
        text(&out),
        "<tool_use_error>Error calling tool (Fragile): validation panicked on purpose</tool_use_error>"
    );
    assert_eq!(
        out.ending,
        Ending::Failed {
            class: "Panic".into()
        }
    );
}

/// An input a hook rewrote goes through the schema step again: a rewrite the tool cannot
/// take is refused before anything runs, and says why.
#[tokio::test]
async fn a_hook_rewrite_the_tool_cannot_take_is_refused_before_the_call() {
    let log = Arc::default();
    let rewrite = |input: Value| ScriptedHooks {
        pre: PreToolUseOutcome {
            decision: Some(HookDecision::Allow {
                updated_input: Some(input),
                reason: None,
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    let pipeline = Pipeline::new(
        fixed(PermissionResult::allow(), None),
        Arc::new(DenyAsks),
        Arc::new(rewrite(json!({"ms": "soon"}))),
    );
    let out = run_in(&pipeline, &common::ctx(&log), "Edit", json!({"ms": 1})).await;
    assert_eq!(out.ending, Ending::InvalidInput);
    assert_eq!(
        text(&out),
        "<tool_use_error>InputValidationError: the input as changed by a hook or the permission prompt is not valid: Edit failed due to the following issue:\nThe parameter `ms` type is expected as `number` but provided as `string`</tool_use_error>"
    );
    assert!(log.lock().unwrap().started.is_empty());
    // The hook accepted the call: the outcome says so (what `tool_result` reports).
    assert_eq!(out.decision, Some(("accept", "hook")));
    assert!(
        matches!(
            out.decision_reason,
            Some(tool_core::DecisionReason::Hook { .. })
        ),
        "{:?}",
        out.decision_reason
    );
    // The same hook's `continue: false` still ends the turn.
    let pipeline = Pipeline::new(
        fixed(PermissionResult::allow(), None),
        Arc::new(DenyAsks),
        Arc::new(ScriptedHooks {
            pre: PreToolUseOutcome {
                stop: Some(Some("policy".into())),
                ..rewrite(json!({"ms": "soon"})).pre
            },
            ..Default::default()
        }),
    );
    let out = run_in(&pipeline, &common::ctx(&log), "Edit", json!({"ms": 1})).await;
    assert_eq!(out.ending, Ending::InvalidInput);
    assert_eq!(out.stop_turn, Some(Some("policy".into())));
    assert!(
        out.messages_after
            .iter()
            .any(|m| matches!(m, Message::Attachment(a)
            if a.kind == "hook_stopped_continuation")),
        "{:?}",
        out.messages_after
    );
    // A rewrite it can take runs.
    let pipeline = Pipeline::new(
        fixed(PermissionResult::allow(), None),
        Arc::new(DenyAsks),
        Arc::new(rewrite(json!({"ms": 2, "end": "ok"}))),
    );
    let out = run_in(&pipeline, &common::ctx(&log), "Edit", json!({"ms": 1})).await;
    assert_eq!(out.ending, Ending::Succeeded);
}

/// Echoes the input it is called with; `note` is a field only the user fills.
struct EchoesUserFields;

#[async_trait]
impl Tool for EchoesUserFields {
    fn name(&self) -> &str {
        "Echo"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn description(&self) -> std::borrow::Cow<'_, str> {
        "echoes its input".into()
    }
    fn max_result_size(&self) -> tool_core::MaxResultSize {
        tool_core::MaxResultSize::Chars(1000)
    }
    fn user_supplied_fields(&self) -> &'static [&'static str] {
        &["answers", "note"]
    }
    async fn call(
        &self,
        input: Value,
        _ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<tool_core::ToolResult, tool_core::ToolError> {
        Ok(tool_core::ToolResult::text(input.to_string()))
    }
}

/// The fields only the user fills (AskUserQuestion's `answers` and `annotations`) never
/// reach the tool from the model: dropped before the schema step, whatever approves the
/// call; a hook's rewrite may still supply them, as the user's stand-in.
#[tokio::test]
async fn fields_only_the_user_fills_never_come_from_the_model() {
    let ctx = ToolUseContext::new(std::env::temp_dir())
        .with_tools(vec![Arc::new(EchoesUserFields) as Arc<dyn Tool>]);
    let model = json!({"question": "q", "answers": {"q": "B"}, "note": "force-push"});
    let out = run_in(&Pipeline::allow_all(), &ctx, "Echo", model.clone()).await;
    assert_eq!(text(&out), json!({"question": "q"}).to_string());
    let supplied = json!({"question": "q", "answers": {"q": "A"}});
    let hooked = Pipeline::new(
        fixed(PermissionResult::allow(), None),
        Arc::new(DenyAsks),
        Arc::new(ScriptedHooks {
            pre: PreToolUseOutcome {
                decision: Some(HookDecision::Allow {
                    updated_input: Some(supplied.clone()),
                    reason: None,
                }),
                ..Default::default()
            },
            ..Default::default()
        }),
    );
    let out = run_in(&hooked, &ctx, "Echo", model).await;
    assert_eq!(text(&out), supplied.to_string());
}
