//! The streaming executor: scheduling, order, cancellation, modifiers. Timing runs on tokio's
//! paused clock, so durations are exact and tests take no wall time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use serde_json::json;
use tokio::time::Instant;
use tool_exec::{
    ExecutorConfig, ExecutorEvent, Pipeline, REJECT_MESSAGE, SiblingPolicy, StreamingToolExecutor,
    ToolCallResult, ToolUse, run_tools,
};

fn tu(id: &str, name: &str, ms: u64) -> ToolUse {
    ToolUse::new(id, name, json!({"ms": ms}))
}

async fn collect(executor: StreamingToolExecutor) -> (Vec<ToolCallResult>, usize) {
    let (results, progress, _) = collect_all(executor).await;
    (results, progress)
}

/// Results, the number of progress events, and each `Started` event's running set.
async fn collect_all(
    mut executor: StreamingToolExecutor,
) -> (Vec<ToolCallResult>, usize, Vec<(String, Vec<String>)>) {
    let mut results = Vec::new();
    let mut progress = 0;
    let mut started = Vec::new();
    while let Some(event) = executor.next().await {
        match event {
            ExecutorEvent::Result(r) => results.push(*r),
            ExecutorEvent::Progress(_) => progress += 1,
            ExecutorEvent::Started {
                tool_use_id,
                running,
            } => started.push((tool_use_id, running)),
        }
    }
    (results, progress, started)
}

fn ids(results: &[ToolCallResult]) -> Vec<String> {
    results.iter().map(|r| r.tool_use.id.clone()).collect()
}

fn executor(log: &Arc<Mutex<common::Log>>, config: ExecutorConfig) -> StreamingToolExecutor {
    StreamingToolExecutor::new(Arc::new(Pipeline::allow_all()), common::ctx(log), config)
}

#[tokio::test(start_paused = true)]
async fn safe_tools_run_together_unsafe_alone_results_in_order() {
    let log = Arc::default();
    let start = Instant::now();
    let exec = executor(&log, ExecutorConfig::default());
    // A slow safe call first: its result must still come first.
    exec.add_tool(tu("a", "Read", 300));
    exec.add_tool(tu("b", "Grep", 100));
    exec.add_tool(tu("c", "Edit", 50));
    exec.add_tool(tu("d", "Read", 10));
    exec.finish();
    let (results, progress, started) = collect_all(exec).await;
    assert_eq!(ids(&results), ["a", "b", "c", "d"]);
    assert_eq!(progress, 4);
    let s = |id: &str, running: &[&str]| {
        (
            id.to_owned(),
            running.iter().map(|r| (*r).to_owned()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        started,
        [
            s("a", &["a"]),
            s("b", &["a", "b"]),
            s("c", &["c"]),
            s("d", &["d"])
        ]
    );
    let log = log.lock().unwrap();
    assert!(log.violations.is_empty(), "{:?}", log.violations);
    assert_eq!(log.max_parallel, 2);
    // a,b together (300) then c (50) then d (10).
    assert_eq!(start.elapsed(), Duration::from_millis(360));
}

#[tokio::test(start_paused = true)]
async fn tools_start_while_the_stream_is_still_arriving() {
    let log = Arc::default();
    let start = Instant::now();
    let exec = executor(&log, ExecutorConfig::default());
    exec.add_tool(tu("a", "Read", 100));
    tokio::time::sleep(Duration::from_millis(80)).await; // the model keeps streaming
    assert_eq!(log.lock().unwrap().started, ["a"]);
    exec.add_tool(tu("b", "Read", 100));
    exec.finish();
    let (results, _) = collect(exec).await;
    assert_eq!(ids(&results), ["a", "b"]);
    assert_eq!(start.elapsed(), Duration::from_millis(180));
}

#[tokio::test(start_paused = true)]
async fn the_cap_limits_parallel_calls() {
    let log = Arc::default();
    let exec = executor(
        &log,
        ExecutorConfig {
            max_concurrency: 3,
            ..Default::default()
        },
    );
    for i in 0..10 {
        exec.add_tool(tu(&format!("r{i}"), "Read", 10));
    }
    exec.finish();
    let (results, _) = collect(exec).await;
    assert_eq!(results.len(), 10);
    assert_eq!(log.lock().unwrap().max_parallel, 3);
}

#[tokio::test(start_paused = true)]
async fn a_failing_bash_cancels_its_siblings() {
    let log = Arc::default();
    let exec = executor(&log, ExecutorConfig::default());
    exec.add_tool(ToolUse::new(
        "b",
        "Bash",
        json!({"ms": 10, "end": "shell", "command": "make test"}),
    ));
    exec.add_tool(tu("r", "Read", 10));
    exec.add_tool(tu("e", "Edit", 10));
    exec.finish();
    let (results, _) = collect(exec).await;
    let texts: Vec<String> = results
        .iter()
        .map(|r| r.outcome.result.content.joined_text())
        .collect();
    assert_eq!(texts[0], "Exit code 2\nboom");
    assert_eq!(
        texts[1],
        "<tool_use_error>Cancelled: parallel tool call Bash(make test) errored</tool_use_error>"
    );
    assert_eq!(texts[2], texts[1]);
    assert_eq!(
        log.lock().unwrap().started,
        ["b"],
        "queued siblings never run"
    );
}

#[tokio::test(start_paused = true)]
async fn running_safe_siblings_are_cancelled_too_and_other_failures_do_not_cascade() {
    let log = Arc::default();
    let exec = executor(&log, ExecutorConfig::default());
    exec.add_tool(tu("slow", "Read", 1000));
    exec.add_tool(ToolUse::new("p", "Peek", json!({"ms": 5, "end": "shell"})));
    exec.add_tool(tu("r2", "Read", 10));
    exec.finish();
    let (results, _) = collect(exec).await;
    // Peek (not Bash) failing cancels nothing under the default policy.
    assert!(results.iter().filter(|r| r.outcome.result.is_error).count() == 1);

    let log = Arc::default();
    let exec = executor(
        &log,
        ExecutorConfig {
            sibling_policy: SiblingPolicy::AnyError,
            ..Default::default()
        },
    );
    let start = Instant::now();
    exec.add_tool(tu("slow", "Read", 1000));
    exec.add_tool(ToolUse::new("p", "Peek", json!({"ms": 5, "end": "fail"})));
    exec.finish();
    let (results, _) = collect(exec).await;
    assert!(
        results[0]
            .outcome
            .result
            .content
            .joined_text()
            .contains("Cancelled: parallel tool call Peek errored")
    );
    assert!(
        start.elapsed() < Duration::from_millis(100),
        "the slow sibling was cancelled, not awaited"
    );
}

/// Whatever the sibling policy: the rejection the executor gives a cancelled call is not a
/// failure that cancels its siblings (under `AnyError` it once cancelled the Block tool).
#[tokio::test(start_paused = true)]
async fn interrupt_cancels_cancel_tools_and_lets_block_tools_finish() {
    for policy in [
        SiblingPolicy::BashFailure,
        SiblingPolicy::AnyError,
        SiblingPolicy::Never,
    ] {
        let log = Arc::default();
        let exec = executor(
            &log,
            ExecutorConfig {
                sibling_policy: policy,
                ..Default::default()
            },
        );
        exec.add_tool(tu("peek", "Peek", 1000)); // safe, cancellable
        exec.add_tool(tu("read", "Read", 200)); // safe, block
        exec.add_tool(tu("edit", "Edit", 10)); // queued behind them
        tokio::time::sleep(Duration::from_millis(50)).await;
        exec.interrupt();
        exec.add_tool(tu("late", "Read", 10)); // arrives after the interrupt
        exec.finish();
        let (results, _) = collect(exec).await;
        let texts: Vec<String> = results
            .iter()
            .map(|r| r.outcome.result.content.joined_text())
            .collect();
        assert_eq!(ids(&results), ["peek", "read", "edit", "late"]);
        assert_eq!(
            texts,
            [REJECT_MESSAGE, "read done", REJECT_MESSAGE, REJECT_MESSAGE],
            "{policy:?}"
        );
        assert_eq!(log.lock().unwrap().started, ["peek", "read"]);
    }
}

/// A call that ran to success before the cancellation reached it keeps its result: it did
/// what it did, and the rejection text ("NOT written") would have the model do it again.
/// Calls the cancellation did stop get the synthetic texts.
#[tokio::test(start_paused = true)]
async fn a_call_that_succeeded_anyway_keeps_its_result() {
    let log = Arc::default();
    let exec = executor(&log, ExecutorConfig::default());
    exec.add_tool(ToolUse::new(
        "done",
        "Peek",
        json!({"ms": 100, "stubborn": true}),
    ));
    exec.add_tool(tu("stopped", "Peek", 1000));
    tokio::time::sleep(Duration::from_millis(50)).await;
    exec.interrupt();
    exec.finish();
    let (results, _) = collect(exec).await;
    let texts: Vec<String> = results
        .iter()
        .map(|r| r.outcome.result.content.joined_text())
        .collect();
    assert_eq!(texts, ["done done", REJECT_MESSAGE]);

    // The same when a failing sibling cancels the others.
    let log = Arc::default();
    let exec = executor(
        &log,
        ExecutorConfig {
            sibling_policy: SiblingPolicy::AnyError,
            ..Default::default()
        },
    );
    exec.add_tool(ToolUse::new(
        "done",
        "Peek",
        json!({"ms": 100, "stubborn": true}),
    ));
    exec.add_tool(tu("stopped", "Peek", 1000));
    exec.add_tool(ToolUse::new("p", "Peek", json!({"ms": 10, "end": "fail"})));
    exec.finish();
    let (results, _) = collect(exec).await;
    let texts: Vec<String> = results
        .iter()
        .map(|r| r.outcome.result.content.joined_text())
        .collect();
    assert_eq!(texts[0], "done done");
    assert!(
        texts[1].contains("Cancelled: parallel tool call"),
        "{texts:?}"
    );
}

/// Cancelling the context's token (the host's hard cancel) answers every call, running or
/// queued, with the rejection text, as a hard interrupt does.
#[tokio::test(start_paused = true)]
async fn the_hosts_cancellation_is_a_hard_interrupt() {
    let log = Arc::default();
    let ctx = common::ctx(&log);
    let host = ctx.cancellation().clone();
    let exec = StreamingToolExecutor::new(
        Arc::new(Pipeline::allow_all()),
        ctx,
        ExecutorConfig::default(),
    );
    exec.add_tool(tu("peek", "Peek", 1000)); // safe, cancellable
    exec.add_tool(tu("read", "Read", 1000)); // safe, block
    exec.add_tool(tu("edit", "Edit", 10)); // queued behind them
    tokio::time::sleep(Duration::from_millis(50)).await;
    host.cancel();
    exec.finish();
    let (results, _) = collect(exec).await;
    let texts: Vec<String> = results
        .iter()
        .map(|r| r.outcome.result.content.joined_text())
        .collect();
    assert_eq!(texts, [REJECT_MESSAGE, REJECT_MESSAGE, REJECT_MESSAGE]);
    assert_eq!(log.lock().unwrap().started, ["peek", "read"]);
}

#[tokio::test(start_paused = true)]
async fn discard_cancels_everything_and_yields_nothing() {
    let log: Arc<Mutex<common::Log>> = Arc::default();
    let mut exec = executor(&log, ExecutorConfig::default());
    exec.add_tool(tu("a", "Sleep", 10_000));
    exec.add_tool(tu("b", "Read", 10));
    tokio::time::sleep(Duration::from_millis(5)).await;
    exec.discard();
    assert!(exec.next().await.is_none());
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(
        log.lock().unwrap().running.is_empty(),
        "running calls were cancelled"
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_the_executor_cancels_running_calls() {
    let log: Arc<Mutex<common::Log>> = Arc::default();
    let exec = executor(&log, ExecutorConfig::default());
    exec.add_tool(tu("a", "Edit", 10_000));
    tokio::time::sleep(Duration::from_millis(5)).await;
    drop(exec);
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(log.lock().unwrap().running.is_empty());
}

#[tokio::test(start_paused = true)]
async fn context_modifiers_apply_in_order_from_unsafe_tools_only() {
    let log = Arc::default();
    let m = |id: &str, name: &str| ToolUse::new(id, name, json!({"ms": 10, "modify": true}));
    let (results, ctx) = run_tools(
        Arc::new(Pipeline::allow_all()),
        common::ctx(&log),
        vec![
            m("e1", "Edit"),
            m("r1", "Read"),
            m("e2", "Edit"),
            tu("r2", "Read", 1),
        ],
        ExecutorConfig::default(),
    )
    .await;
    assert_eq!(ids(&results), ["e1", "r1", "e2", "r2"]);
    assert_eq!(ctx.cwd(), PathBuf::from("/w/e1/e2"));
    let seen = log.lock().unwrap().cwd_seen.clone();
    let cwd_of = |id: &str| seen.iter().find(|(i, _)| i == id).unwrap().1.clone();
    assert_eq!(
        cwd_of("r1"),
        PathBuf::from("/w/e1"),
        "a tool started after an unsafe tool sees its modifier"
    );
    assert_eq!(cwd_of("r2"), PathBuf::from("/w/e1/e2"));
}

#[tokio::test(start_paused = true)]
async fn unknown_tools_and_panics_still_get_one_result_each() {
    let log = Arc::default();
    let exec = executor(&log, ExecutorConfig::default());
    exec.add_tool(tu("x", "Mystery", 0));
    exec.add_tool(ToolUse::new("p", "Edit", json!({"end": "panic"})));
    exec.add_tool(ToolUse::new("i", "Read", json!({"ms": "bad"})));
    exec.add_tool(tu("ok", "Read", 1));
    exec.finish();
    let (results, _) = collect(exec).await;
    assert_eq!(ids(&results), ["x", "p", "i", "ok"]);
    assert!(results[..3].iter().all(|r| r.outcome.result.is_error));
    assert!(!results[3].outcome.result.is_error);
}

#[tokio::test(start_paused = true)]
async fn a_rejected_prompt_ends_the_turn() {
    use tool_core::async_trait;
    use tool_exec::{NoHooks, PromptAnswer, Prompter};
    struct No;
    #[async_trait]
    impl Prompter for No {
        async fn prompt(&self, p: &tool_exec::PromptRequest) -> PromptAnswer {
            if p.tool_name == "Edit" {
                PromptAnswer::Deny { feedback: None }
            } else {
                PromptAnswer::AllowOnce {
                    updated_input: None,
                }
            }
        }
    }
    let log = Arc::default();
    let pipeline = Pipeline::new(
        Arc::new(prompting::AskFor(None)),
        Arc::new(No),
        Arc::new(NoHooks),
    );
    let exec = StreamingToolExecutor::new(
        Arc::new(pipeline),
        common::ctx(&log),
        ExecutorConfig::default(),
    );
    exec.add_tool(tu("e", "Edit", 1));
    exec.add_tool(tu("b", "Bash", 1));
    exec.finish();
    let (results, _) = collect(exec).await;
    assert_eq!(
        results[0].outcome.result.content.joined_text(),
        REJECT_MESSAGE
    );
    assert_eq!(
        results[1].outcome.result.content.joined_text(),
        REJECT_MESSAGE
    );
    assert!(log.lock().unwrap().started.is_empty());
}

/// Permissions and users for the tests that prompt.
mod prompting {
    use tool_core::{PermissionResult, Tool, ToolUseContext, async_trait};
    use tool_exec::{Permissions, PromptAnswer, Prompter};

    /// Asks for the named tool (every tool with `None`), allows the others.
    pub struct AskFor(pub Option<&'static str>);
    #[async_trait]
    impl Permissions for AskFor {
        async fn decide(
            &self,
            tool: &dyn Tool,
            _: &serde_json::Value,
            _: &ToolUseContext,
        ) -> PermissionResult {
            if self.0.is_none_or(|name| tool.name() == name) {
                PermissionResult::ask("?")
            } else {
                PermissionResult::allow()
            }
        }
        async fn check_rule_based(
            &self,
            _: &dyn Tool,
            _: &serde_json::Value,
            _: &ToolUseContext,
        ) -> Option<PermissionResult> {
            None
        }
    }
    /// A user who has not answered yet.
    pub struct Pending;
    #[async_trait]
    impl Prompter for Pending {
        async fn prompt(&self, _: &tool_exec::PromptRequest) -> PromptAnswer {
            std::future::pending().await
        }
    }
}

/// A pipeline that asks for `Peek` (and nobody answers) over a read-only, hence
/// concurrency-safe, `Bash`, a cancellable `Peek` and a blocking `Read`.
fn prompting_executor(log: &Arc<Mutex<common::Log>>) -> StreamingToolExecutor {
    use tool_core::{Tool, ToolUseContext};
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(common::TestTool::new("Bash", true, log)),
        Arc::new(common::TestTool::new("Peek", true, log).cancellable()),
        Arc::new(common::TestTool::new("Read", true, log)),
    ];
    let pipeline = Pipeline::new(
        Arc::new(prompting::AskFor(Some("Peek"))),
        Arc::new(prompting::Pending),
        Arc::new(tool_exec::NoHooks),
    );
    StreamingToolExecutor::new(
        Arc::new(pipeline),
        ToolUseContext::new("/w").with_tools(tools),
        ExecutorConfig::default(),
    )
}

#[tokio::test(start_paused = true)]
async fn a_sibling_failure_withdraws_a_pending_prompt_without_ending_the_turn() {
    let log = Arc::default();
    let exec = prompting_executor(&log);
    exec.add_tool(tu("p", "Peek", 1));
    exec.add_tool(ToolUse::new(
        "b",
        "Bash",
        json!({"ms": 10, "end": "shell", "command": "ls nope"}),
    ));
    exec.add_tool(tu("r", "Read", 1000));
    exec.finish();
    let (results, _) = collect(exec).await;
    let sibling =
        "<tool_use_error>Cancelled: parallel tool call Bash(ls nope) errored</tool_use_error>";
    assert_eq!(results[0].outcome.result.content.joined_text(), sibling);
    assert_eq!(
        results[1].outcome.result.content.joined_text(),
        "Exit code 2\nboom"
    );
    assert_eq!(results[2].outcome.result.content.joined_text(), sibling);
    for r in &results {
        assert!(
            !r.outcome.interrupt_turn,
            "{} would stop the turn as a user rejection",
            r.tool_use.id
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_soft_interrupt_withdraws_a_pending_prompt_and_blocking_calls_finish() {
    let log = Arc::default();
    let exec = prompting_executor(&log);
    exec.add_tool(tu("p", "Peek", 1));
    exec.add_tool(tu("r", "Read", 1000));
    exec.finish();
    let handle = exec.handle();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        handle.interrupt();
    });
    let (results, _) = collect(exec).await;
    assert_eq!(
        results[0].outcome.result.content.joined_text(),
        REJECT_MESSAGE
    );
    assert_eq!(results[1].outcome.result.content.joined_text(), "r done");
    assert!(!results[0].outcome.interrupt_turn);
    // Withdrawn, not refused: telemetry must not count a permission denial.
    assert_eq!(results[0].outcome.ending, tool_exec::Ending::Cancelled);
}

#[tokio::test(start_paused = true)]
async fn a_tool_that_panics_while_being_scheduled_still_gets_its_one_result() {
    use std::borrow::Cow;
    use tool_core::{
        InterruptBehavior, MaxResultSize, ProgressSender, Tool, ToolError, ToolResult,
        ToolUseContext, async_trait,
    };
    /// Panics when asked whether it is concurrency-safe or how it takes an interrupt.
    struct Unschedulable;
    #[async_trait]
    impl Tool for Unschedulable {
        fn name(&self) -> &str {
            "Unschedulable"
        }
        fn input_schema(&self) -> serde_json::Value {
            json!({"type": "object"})
        }
        fn description(&self) -> Cow<'_, str> {
            "panics".into()
        }
        fn max_result_size(&self) -> MaxResultSize {
            MaxResultSize::Chars(1000)
        }
        fn is_concurrency_safe(&self, _: &serde_json::Value) -> bool {
            panic!("is_concurrency_safe panicked on purpose")
        }
        fn interrupt_behavior(&self) -> InterruptBehavior {
            panic!("interrupt_behavior panicked on purpose")
        }
        async fn call(
            &self,
            _: serde_json::Value,
            _: ToolUseContext,
            _: ProgressSender,
        ) -> Result<ToolResult, ToolError> {
            Ok(ToolResult::text("ran"))
        }
    }
    let log = Arc::default();
    let mut tools = common::tools(&log);
    tools.push(Arc::new(Unschedulable));
    let mut exec = StreamingToolExecutor::new(
        Arc::new(Pipeline::allow_all()),
        ToolUseContext::new("/w").with_tools(tools),
        ExecutorConfig::default(),
    );
    exec.add_tool(tu("u", "Unschedulable", 1));
    exec.add_tool(tu("r", "Read", 1));
    exec.finish();
    let mut results = Vec::new();
    while let Some(event) = exec.next().await {
        if let ExecutorEvent::Result(r) = event {
            results.push(*r);
        }
    }
    assert_eq!(ids(&results), ["u", "r"]);
    // A flag that panics reads as "not safe", as Claude Code reads an `isConcurrencySafe`
    // that throws: the call runs (alone) all the same.
    assert_eq!(results[0].outcome.result.content.joined_text(), "ran");
    assert!(!results[0].outcome.concurrency_safe);
    assert_eq!(results[1].outcome.result.content.joined_text(), "r done");
    assert!(exec.final_context().is_some(), "the turn ended cleanly");
}

/// An executor whose PreToolUse hooks make the calls marked `"rewrite": true` unsafe.
fn rewriting_executor(log: &Arc<Mutex<common::Log>>) -> StreamingToolExecutor {
    let pipeline = Pipeline::new(
        Arc::new(tool_exec::AllowAll),
        Arc::new(tool_exec::DenyAsks),
        Arc::new(common::RewritesUnsafe),
    );
    StreamingToolExecutor::new(
        Arc::new(pipeline),
        common::ctx(log),
        ExecutorConfig::default(),
    )
}

/// A call scheduled as concurrency-safe whose input a hook made unsafe runs alone: it waits
/// for the calls running beside it, nothing starts beside it, and its context modifier
/// applies. Two such calls do not wait for each other.
#[tokio::test(start_paused = true)]
async fn a_call_a_hook_made_unsafe_runs_alone_and_its_modifier_applies() {
    let log: Arc<Mutex<common::Log>> = Arc::default();
    let exec = rewriting_executor(&log);
    let start = Instant::now();
    exec.add_tool(tu("a", "Read", 100));
    let rewritten = json!({"ms": 50, "rewrite": true, "modify": true});
    exec.add_tool(ToolUse::new("x", "Read", rewritten.clone()));
    exec.add_tool(ToolUse::new("y", "Read", rewritten));
    exec.add_tool(tu("b", "Read", 10));
    exec.finish();
    let mut exec = exec;
    let mut results = Vec::new();
    while let Some(event) = exec.next().await {
        if let ExecutorEvent::Result(r) = event {
            results.push(*r);
        }
    }
    assert_eq!(ids(&results), ["a", "x", "y", "b"]);
    assert_eq!(
        exec.final_context().unwrap().cwd(),
        std::path::Path::new("/w/x/y"),
        "the modifiers of x and y applied, in order"
    );
    let log = log.lock().unwrap();
    assert!(log.violations.is_empty(), "{:?}", log.violations);
    // All four started at once (all were safe as the model wrote them), but `x` and `y`
    // waited before running: `a` (with `b`) 100 ms, then `x` alone, then `y` alone.
    assert_eq!(start.elapsed(), Duration::from_millis(200));
}

/// `stop_queued` (a response that broke off): started calls finish, cancellable ones too;
/// the queued ones, and any added later, get the given text without running.
#[tokio::test(start_paused = true)]
async fn stop_queued_lets_started_calls_finish_and_runs_nothing_more() {
    let log: Arc<Mutex<common::Log>> = Arc::default();
    let exec = executor(&log, ExecutorConfig::default());
    exec.add_tool(tu("s", "Sleep", 100)); // unsafe, cancellable: runs
    exec.add_tool(tu("e", "Edit", 10)); // queued behind it
    exec.add_tool(tu("r", "Read", 10)); // queued behind the barrier
    let handle = exec.handle();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        handle.stop_queued("not run");
        handle.add_tool(tu("late", "Read", 10));
        handle.finish();
    });
    let (results, _) = collect(exec).await;
    assert_eq!(ids(&results), ["s", "e", "r", "late"]);
    assert_eq!(results[0].outcome.result.content.joined_text(), "s done");
    for r in &results[1..] {
        assert_eq!(r.outcome.result.content.joined_text(), "not run");
        assert!(r.outcome.result.is_error);
    }
    assert_eq!(log.lock().unwrap().started, ["s"]);
}

/// A user interrupt lets a running `Block` tool finish, but a `Block` call still in its
/// PreToolUse hooks has done nothing yet: its hooks are stopped and it is answered as a call
/// that never started (Claude Code's aborted signal stops it at its next step), instead of
/// running once its hooks are done. A call whose hooks are done before the interrupt runs.
#[tokio::test(start_paused = true)]
async fn an_interrupt_stops_a_blocking_call_still_in_its_hooks() {
    let log: Arc<Mutex<common::Log>> = Arc::default();
    let exec = rewriting_executor(&log);
    let start = Instant::now();
    exec.add_tool(ToolUse::new("r", "Read", json!({"ms": 100}))); // running
    exec.add_tool(ToolUse::new(
        "h",
        "Read",
        json!({"ms": 10, "hook_ms": 5000}),
    ));
    exec.finish();
    let handle = exec.handle();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        handle.interrupt();
    });
    let (results, _) = collect(exec).await;
    let texts: Vec<String> = results
        .iter()
        .map(|r| r.outcome.result.content.joined_text())
        .collect();
    assert_eq!(texts, ["r done", REJECT_MESSAGE]);
    assert_eq!(log.lock().unwrap().started, ["r"], "h never ran");
    // Its hook did not hold the turn for its five seconds.
    assert_eq!(start.elapsed(), Duration::from_millis(100));
}

/// The same for a `Block` call whose PermissionRequest hook still runs: the hook is stopped
/// and no question is put; the call is answered as one that never started.
#[tokio::test(start_paused = true)]
async fn an_interrupt_stops_a_blocking_call_in_its_permission_request_hook() {
    use tool_core::{Tool, ToolUseContext, async_trait};
    /// A PermissionRequest hook that takes five seconds, unless its call is stopped.
    struct SlowPermissionRequest;
    #[async_trait]
    impl tool_exec::Hooks for SlowPermissionRequest {
        async fn pre_tool_use(
            &self,
            _: tool_exec::HookCall<'_>,
            _: &ToolUseContext,
        ) -> tool_exec::PreToolUseOutcome {
            tool_exec::PreToolUseOutcome::default()
        }
        async fn post_tool_use(
            &self,
            _: tool_exec::HookCall<'_>,
            _: &serde_json::Value,
            _: &ToolUseContext,
        ) -> tool_exec::PostToolUseOutcome {
            tool_exec::PostToolUseOutcome::default()
        }
        async fn post_tool_use_failure(
            &self,
            _: tool_exec::HookCall<'_>,
            _: &str,
            _: bool,
            _: &ToolUseContext,
        ) -> tool_exec::PostToolUseOutcome {
            tool_exec::PostToolUseOutcome::default()
        }
        async fn permission_request(
            &self,
            _: tool_exec::HookCall<'_>,
            _: &[tool_core::PermissionUpdate],
            ctx: &ToolUseContext,
        ) -> tool_exec::PermissionRequestOutcome {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_secs(5)) => {}
                () = ctx.cancellation().cancelled() => {}
            }
            tool_exec::PermissionRequestOutcome::default()
        }
    }
    let log: Arc<Mutex<common::Log>> = Arc::default();
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(common::TestTool::new("Read", true, &log))];
    let pipeline = Pipeline::new(
        Arc::new(prompting::AskFor(Some("Read"))),
        Arc::new(prompting::Pending),
        Arc::new(SlowPermissionRequest),
    );
    let exec = StreamingToolExecutor::new(
        Arc::new(pipeline),
        ToolUseContext::new("/w").with_tools(tools),
        ExecutorConfig::default(),
    );
    let start = Instant::now();
    exec.add_tool(tu("r", "Read", 10));
    exec.finish();
    let handle = exec.handle();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        handle.interrupt();
    });
    let (results, _) = collect(exec).await;
    assert_eq!(
        results[0].outcome.result.content.joined_text(),
        REJECT_MESSAGE
    );
    assert!(log.lock().unwrap().started.is_empty(), "r never ran");
    assert_eq!(start.elapsed(), Duration::from_millis(20));
}

/// A call held to run alone (a hook made it unsafe) has not started its tool: an interrupt
/// answers it as a queued call instead of letting it run once the others finish; so does
/// `stop_queued`.
#[tokio::test(start_paused = true)]
async fn a_call_held_to_run_alone_does_not_start_after_an_interrupt() {
    for stop in [false, true] {
        let log: Arc<Mutex<common::Log>> = Arc::default();
        let exec = rewriting_executor(&log);
        exec.add_tool(tu("a", "Read", 100));
        exec.add_tool(ToolUse::new(
            "x",
            "Read",
            json!({"ms": 10, "rewrite": true}),
        ));
        exec.finish();
        let handle = exec.handle();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            if stop {
                handle.stop_queued("not run");
            } else {
                handle.interrupt();
            }
        });
        let (results, _) = collect(exec).await;
        assert_eq!(results[0].outcome.result.content.joined_text(), "a done");
        let expected = if stop { "not run" } else { REJECT_MESSAGE };
        assert_eq!(results[1].outcome.result.content.joined_text(), expected);
        assert!(!log.lock().unwrap().started.contains(&"x".to_owned()));
    }
}

/// A Bash call that never ran (its validation panicked) is no failed Bash command: the calls
/// beside it are not cancelled (only a Bash call that ran and failed cascades).
#[tokio::test(start_paused = true)]
async fn a_bash_call_that_never_ran_cancels_no_sibling() {
    use std::borrow::Cow;
    use tool_core::{
        MaxResultSize, ProgressSender, Tool, ToolError, ToolResult, ToolUseContext,
        ValidationError, async_trait,
    };
    /// A concurrency-safe "Bash" whose validation panics.
    struct BrokenBash;
    #[async_trait]
    impl Tool for BrokenBash {
        fn name(&self) -> &str {
            "Bash"
        }
        fn input_schema(&self) -> serde_json::Value {
            json!({"type": "object"})
        }
        fn description(&self) -> Cow<'_, str> {
            "panics in validation".into()
        }
        fn max_result_size(&self) -> MaxResultSize {
            MaxResultSize::Chars(1000)
        }
        fn is_concurrency_safe(&self, _: &serde_json::Value) -> bool {
            true
        }
        async fn validate_input(
            &self,
            _: &serde_json::Value,
            _: &ToolUseContext,
        ) -> Result<(), ValidationError> {
            panic!("validation panicked on purpose")
        }
        async fn call(
            &self,
            _: serde_json::Value,
            _: ToolUseContext,
            _: ProgressSender,
        ) -> Result<ToolResult, ToolError> {
            Ok(ToolResult::text("unreachable"))
        }
    }
    let log = Arc::default();
    let mut tools: Vec<Arc<dyn tool_core::Tool>> = common::tools(&log)
        .into_iter()
        .filter(|t| t.name() != "Bash")
        .collect();
    tools.push(Arc::new(BrokenBash));
    let mut exec = StreamingToolExecutor::new(
        Arc::new(Pipeline::allow_all()),
        ToolUseContext::new("/w").with_tools(tools),
        ExecutorConfig::default(),
    );
    exec.add_tool(tu("r", "Read", 50));
    exec.add_tool(tu("b", "Bash", 1));
    exec.finish();
    let mut results = Vec::new();
    while let Some(event) = exec.next().await {
        if let ExecutorEvent::Result(r) = event {
            results.push(*r);
        }
    }
    assert_eq!(ids(&results), ["r", "b"]);
    assert_eq!(results[0].outcome.result.content.joined_text(), "r done");
    assert!(results[1].outcome.result.is_error);
}

/// A read-only Bash command that fails (`ls docs` with no docs) cancels no sibling (Claude
/// Code since 2.1.128): a model exploring in parallel keeps its other results. Read-only is
/// judged on the input the call ran with, after the schema step's repairs (a model's
/// `"timeout": "60000"`), not on the model's raw input.
#[tokio::test(start_paused = true)]
async fn a_failed_read_only_bash_command_cancels_no_sibling() {
    use std::borrow::Cow;
    use tool_core::{
        InputError, MaxResultSize, ProgressSender, Tool, ToolError, ToolResult, ToolUseContext,
        async_trait,
    };
    /// A "Bash" whose command is read-only when it says `ls` and always fails; its schema
    /// step trims the command.
    struct FailingBash;
    #[async_trait]
    impl Tool for FailingBash {
        fn name(&self) -> &str {
            "Bash"
        }
        fn input_schema(&self) -> serde_json::Value {
            json!({"type": "object"})
        }
        fn description(&self) -> Cow<'_, str> {
            "fails".into()
        }
        fn max_result_size(&self) -> MaxResultSize {
            MaxResultSize::Chars(1000)
        }
        fn is_concurrency_safe(&self, input: &serde_json::Value) -> bool {
            self.is_read_only(input)
        }
        fn is_read_only(&self, input: &serde_json::Value) -> bool {
            input["command"] == "ls docs"
        }
        fn parse_input(
            &self,
            mut input: serde_json::Value,
        ) -> Result<serde_json::Value, InputError> {
            if let Some(command) = input["command"].as_str() {
                input["command"] = command.trim().into();
            }
            Ok(input)
        }
        async fn call(
            &self,
            _: serde_json::Value,
            _: ToolUseContext,
            _: ProgressSender,
        ) -> Result<ToolResult, ToolError> {
            Err(ToolError::msg("ls: cannot access 'docs': No such file"))
        }
    }
    for (command, cancelled) in [
        ("ls docs", false),
        (" ls docs ", false),
        ("make docs", true),
    ] {
        let log = Arc::default();
        let mut tools: Vec<Arc<dyn tool_core::Tool>> = common::tools(&log)
            .into_iter()
            .filter(|t| t.name() != "Bash")
            .collect();
        tools.push(Arc::new(FailingBash));
        let mut exec = StreamingToolExecutor::new(
            Arc::new(Pipeline::allow_all()),
            ToolUseContext::new("/w").with_tools(tools),
            ExecutorConfig::default(),
        );
        exec.add_tool(ToolUse::new("b", "Bash", json!({"command": command})));
        exec.add_tool(tu("r", "Peek", 50));
        exec.finish();
        let mut results = Vec::new();
        while let Some(event) = exec.next().await {
            if let ExecutorEvent::Result(r) = event {
                results.push(*r);
            }
        }
        assert_eq!(ids(&results), ["b", "r"]);
        let sibling = results[1].outcome.result.content.joined_text();
        assert_eq!(
            sibling.contains("Cancelled: parallel tool call Bash"),
            cancelled,
            "{command}: {sibling}"
        );
    }
}
