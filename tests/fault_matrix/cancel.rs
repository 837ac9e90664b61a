//! Cancellation at every stage of the pipeline, injected when the call is known to be in
//! that stage: during validation, a PreToolUse hook, a permission ask, the call, the
//! persistence of a large result, a PostToolUse hook. Plus a user interrupt and a dropped
//! executor mid-call. Cancelling the turn's token is a hard interrupt: whatever the stage,
//! the model is told the call was rejected (Claude Code's `user_interrupted`).

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::Notify;
use tool_core::{CancellationToken, ToolUseContext};
use tool_exec::{
    HookCall, Hooks, PostToolUseOutcome, PreToolUseOutcome, REJECT_MESSAGE, ToolCallResult, ToolUse,
};

use crate::rig::{
    Faulty, NeverAnswers, Rig, assert_no_process, call, messages, nonce, rig, text, wait_for_file,
};

/// A context for one turn with its own token (cancelling it is the user's hard interrupt
/// of that turn; the session goes on).
fn turn_ctx(rig: &Rig) -> (ToolUseContext, CancellationToken) {
    let token = CancellationToken::new();
    (rig.ctx.clone().with_cancellation(token.clone()), token)
}

/// Runs `calls`, cancels the turn once `reached` completes, returns the results.
async fn cancel_when(
    rig: &Rig,
    calls: &[ToolUse],
    reached: impl std::future::Future<Output = ()>,
) -> Vec<ToolCallResult> {
    let (ctx, token) = turn_ctx(rig);
    let turn = rig.start_in(ctx, calls);
    reached.await;
    token.cancel();
    turn.results().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_validation() {
    let (tool, entered) = Faulty::new();
    let rig = rig()
        .tool(tool)
        .settings(json!({"permissions": {"allow": ["Faulty"]}}))
        .build()
        .await;
    let r = cancel_when(
        &rig,
        &[call(
            "toolu_1",
            "Faulty",
            json!({"fault": "hang-validation"}),
        )],
        entered.notified(),
    )
    .await;
    assert!(r[0].outcome.result.is_error);
    assert_eq!(text(&r[0]), REJECT_MESSAGE);
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}

/// A rig whose `event` hook on `matcher` marks the stage reached, then sleeps.
async fn with_sleeping_hook(event: &str, matcher: &str, allow: &[&str]) -> (Rig, String) {
    let marker = format!("1000.{}", nonce());
    let settings = json!({
        "permissions": {"allow": allow},
        "hooks": {event: [{"matcher": matcher, "hooks": [
            {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/stage.sh"}
        ]}]},
    });
    let (tool, _) = Faulty::new();
    let rig = rig().tool(tool).settings(settings).build().await;
    rig.script(
        "hooks/stage.sh",
        &format!(
            "echo $$ > {}; touch {}; sleep {marker}",
            rig.path("hook.pid").display(),
            rig.path("stage").display()
        ),
    );
    (rig, marker)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_pre_tool_use_hook() {
    let (rig, marker) = with_sleeping_hook("PreToolUse", "Faulty", &["Faulty"]).await;
    let r = cancel_when(
        &rig,
        &[call("toolu_1", "Faulty", json!({"fault": "ok"}))],
        wait_for_file(&rig.path("stage")),
    )
    .await;
    assert!(r[0].outcome.result.is_error);
    assert_eq!(text(&r[0]), REJECT_MESSAGE);
    assert!(
        messages(&r[0]).contains(&"PreToolUse hooks were cancelled".to_owned()),
        "{:?}",
        messages(&r[0])
    );
    assert_no_process(&marker, Some(&rig.path("hook.pid"))).await;
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_permission_ask() {
    let (tool, _) = Faulty::new();
    let asked = Arc::new(Notify::new());
    let rig = rig()
        .tool(tool)
        .settings(json!({"permissions": {"ask": ["Faulty"]}}))
        .prompter(NeverAnswers {
            asked: asked.clone(),
        })
        .build()
        .await;
    let r = cancel_when(
        &rig,
        &[
            call("toolu_1", "Faulty", json!({"fault": "ok"})),
            call("toolu_2", "Faulty", json!({"fault": "ok"})),
        ],
        asked.notified(),
    )
    .await;
    // The asked call is rejected (nothing ran) and the turn ends: the next does not run.
    // The prompt was withdrawn, not answered "no": that alone does not stop a turn (a
    // sibling's failure withdraws prompts too); the cancellation does.
    assert_eq!(text(&r[0]), REJECT_MESSAGE);
    assert!(!r[0].outcome.interrupt_turn);
    assert!(r[1].outcome.result.is_error, "{}", text(&r[1]));
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_the_call() {
    let (tool, entered) = Faulty::new();
    let failure_hook = format!(
        "cat > '{}'",
        std::env::temp_dir()
            .join(format!("failure-{}.json", nonce()))
            .display()
    );
    let rig = rig()
        .tool(tool)
        .settings(json!({
            "permissions": {"allow": ["Faulty", "Bash"]},
            "hooks": {"PostToolUseFailure": [{"matcher": "Faulty", "hooks": [{"type": "command", "command": failure_hook}]}]}
        }))
        .build()
        .await;
    // A tool that honours its token.
    let r = cancel_when(
        &rig,
        &[call("toolu_1", "Faulty", json!({"fault": "wait"}))],
        entered.notified(),
    )
    .await;
    assert_eq!(text(&r[0]), REJECT_MESSAGE);
    // The interrupted call's PostToolUseFailure hooks still ran, told it was an interrupt.
    let file = failure_hook
        .trim_start_matches("cat > '")
        .trim_end_matches('\'');
    let input: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let _ = std::fs::remove_file(file);
    assert_eq!(input["hook_event_name"], "PostToolUseFailure");
    assert_eq!(input["is_interrupt"], true, "{input}");
    // A real process: Bash's whole process group goes.
    let marker = format!("1000.{}", nonce());
    let command = format!(
        "echo $$ > {}; touch {}; sleep {marker} & sleep {marker}",
        rig.path("bash.pid").display(),
        rig.path("stage").display()
    );
    let r = cancel_when(
        &rig,
        &[call("toolu_2", "Bash", json!({"command": command}))],
        wait_for_file(&rig.path("stage")),
    )
    .await;
    assert!(r[0].outcome.result.is_error);
    assert_eq!(text(&r[0]), REJECT_MESSAGE);
    assert_no_process(&marker, Some(&rig.path("bash.pid"))).await;
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_failure_hook_cannot_hold_a_cancelled_turn() {
    let (tool, entered) = Faulty::new();
    let marker = format!("1000.{}", nonce());
    let rig = rig()
        .tool(tool)
        .settings(json!({
            "permissions": {"allow": ["Faulty"]},
            "hooks": {"PostToolUseFailure": [{"matcher": "Faulty", "hooks": [
                {"type": "command", "command": format!("sleep {marker}"), "timeout": 600}
            ]}]}
        }))
        .build()
        .await;
    let started = std::time::Instant::now();
    let r = cancel_when(
        &rig,
        &[call("toolu_1", "Faulty", json!({"fault": "wait"}))],
        entered.notified(),
    )
    .await;
    assert_eq!(text(&r[0]), REJECT_MESSAGE);
    // Not a speed check: the hook would run 600 s; the grace is 5 s.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(60),
        "the hook held the turn for {:?}",
        started.elapsed()
    );
    assert_no_process(&marker, None).await;
    rig.assert_survives().await;
}

/// Hooks that cancel the turn the moment the PostToolUse hooks are done: persistence, which
/// comes next, runs with the token cancelled.
struct CancelBeforePersistence {
    inner: Arc<dyn Hooks>,
    token: CancellationToken,
}

#[tool_core::async_trait]
impl Hooks for CancelBeforePersistence {
    async fn pre_tool_use(&self, call: HookCall<'_>, ctx: &ToolUseContext) -> PreToolUseOutcome {
        self.inner.pre_tool_use(call, ctx).await
    }
    async fn post_tool_use(
        &self,
        call: HookCall<'_>,
        output: &Value,
        ctx: &ToolUseContext,
    ) -> PostToolUseOutcome {
        let out = self.inner.post_tool_use(call, output, ctx).await;
        self.token.cancel();
        out
    }
    async fn post_tool_use_failure(
        &self,
        call: HookCall<'_>,
        error: &str,
        is_interrupt: bool,
        ctx: &ToolUseContext,
    ) -> PostToolUseOutcome {
        self.inner
            .post_tool_use_failure(call, error, is_interrupt, ctx)
            .await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_persistence() {
    let (tool, _) = Faulty::new();
    let token = CancellationToken::new();
    let cancel = token.clone();
    let rig = rig()
        .tool(tool)
        .settings(json!({"permissions": {"allow": ["Faulty"]}}))
        .wrap_hooks(move |inner| {
            Arc::new(CancelBeforePersistence {
                inner,
                token: cancel,
            })
        })
        .build()
        .await;
    let ctx = rig.ctx.clone().with_cancellation(token.clone());
    let r = rig
        .start_in(ctx, &[call("toolu_big", "Faulty", json!({"fault": "big"}))])
        .results()
        .await;
    assert!(token.is_cancelled());
    // The call had finished: its result stands, whole on disk, previewed for the model.
    assert!(!r[0].outcome.result.is_error, "{}", text(&r[0]));
    let path = r[0]
        .outcome
        .persisted
        .clone()
        .expect("the result was persisted");
    assert_eq!(path, rig.results.join("toolu_big.txt"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "y".repeat(200_000));
    assert!(
        text(&r[0]).starts_with("<persisted-output>"),
        "{}",
        text(&r[0])
    );
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_during_a_post_tool_use_hook() {
    let (rig, marker) = with_sleeping_hook("PostToolUse", "Faulty", &["Faulty"]).await;
    let r = cancel_when(
        &rig,
        &[call("toolu_1", "Faulty", json!({"fault": "ok"}))],
        wait_for_file(&rig.path("stage")),
    )
    .await;
    // The call ran; the hooks after it were stopped.
    assert!(!r[0].outcome.result.is_error, "{}", text(&r[0]));
    assert_eq!(text(&r[0]), "ok");
    assert_no_process(&marker, Some(&rig.path("hook.pid"))).await;
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_interrupt_and_dropped_executor_mid_call() {
    let (tool, entered) = Faulty::interruptible();
    let rig = rig()
        .tool(tool)
        .settings(json!({"permissions": {"allow": ["Bash", "Interruptible"]}}))
        .build()
        .await;
    // A soft interrupt (Esc): a `cancel` tool is stopped and the queued call is rejected.
    let turn = rig.start(&[
        call("toolu_1", "Interruptible", json!({"fault": "wait"})),
        call("toolu_2", "Interruptible", json!({"fault": "ok"})),
    ]);
    entered.notified().await;
    turn.executor.interrupt();
    let r = turn.results().await;
    assert_eq!(text(&r[0]), REJECT_MESSAGE);
    assert_eq!(text(&r[1]), REJECT_MESSAGE);
    // Bash is a `block` tool: it finishes, and only what was queued is rejected.
    let command = format!(
        "touch {}; while [ ! -e {} ]; do sleep 0.02; done; echo finished",
        rig.path("stage").display(),
        rig.path("go").display()
    );
    let turn = rig.start(&[
        call("toolu_3", "Bash", json!({"command": command})),
        call("toolu_4", "Bash", json!({"command": "echo never"})),
    ]);
    wait_for_file(&rig.path("stage")).await;
    turn.executor.interrupt();
    // The go-ahead comes only after the interrupt.
    std::fs::write(rig.path("go"), "").unwrap();
    let r = turn.results().await;
    assert!(!r[0].outcome.result.is_error, "{}", text(&r[0]));
    assert!(text(&r[0]).contains("finished"), "{}", text(&r[0]));
    assert_eq!(text(&r[1]), REJECT_MESSAGE);
    // The host drops the executor mid-call (a crashed consumer): nothing keeps running.
    std::fs::remove_file(rig.path("stage")).unwrap();
    let marker = format!("1000.{}", nonce());
    let command = format!(
        "echo $$ > {}; touch {}; sleep {marker}",
        rig.path("bash.pid").display(),
        rig.path("stage").display()
    );
    let turn = rig.start(&[call("toolu_5", "Bash", json!({"command": command}))]);
    wait_for_file(&rig.path("stage")).await;
    drop(turn);
    assert_no_process(&marker, Some(&rig.path("bash.pid"))).await;
    rig.assert_survives().await;
    rig.assert_no_temp_files();
}
