//! Calls stuck in a system call that never returns (a path on a hung network mount), found
//! by review 30: the steps before the tool runs must hold no runtime worker, so that the
//! rest of the process (the signal handlers above all) goes on, and a call the executor
//! answers without its task after a hard interrupt reports the time it really ran.
//!
//! A hung mount is emulated with a FIFO nobody writes to: opening it for reading blocks in
//! the kernel until a writer comes, which the test provides at its end, so that the threads
//! it held are let go.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};
use tool_core::{
    MaxResultSize, ProgressSender, Tool, ToolError, ToolResult, ToolUseContext, ValidationError,
    async_trait,
};
use tool_exec::{
    Ending, ExecutorConfig, ExecutorEvent, Pipeline, STUCK_CALL_GRACE, StreamingToolExecutor,
    ToolCallResult, ToolUse,
};

/// Where a call of [`HungPath`] opens its FIFO: its input's `stuck_in` names the step.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    Validation,
    ObservableInput,
    Call,
}

impl Step {
    fn name(self) -> &'static str {
        match self {
            Self::Validation => "validation",
            Self::ObservableInput => "observable_input",
            Self::Call => "call",
        }
    }
}

/// A concurrency-safe tool that opens `fifo` for reading (blocking in the kernel, as a
/// `stat` of a path on a hung mount does) in the step its input's `stuck_in` names; `entered`
/// counts the calls that got there.
struct HungPath {
    fifo: PathBuf,
    entered: Arc<AtomicUsize>,
}

impl HungPath {
    fn hang_if(&self, input: &Value, step: Step) {
        if input["stuck_in"] == step.name() {
            self.entered.fetch_add(1, Ordering::SeqCst);
            // Blocks until a writer opens the FIFO.
            let _ = std::fs::File::open(&self.fifo);
        }
    }
}

#[async_trait]
impl Tool for HungPath {
    fn name(&self) -> &str {
        "HungPath"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn description(&self) -> Cow<'_, str> {
        "opens a FIFO nobody writes to".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(1000)
    }
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        true
    }
    fn is_read_only(&self, _input: &Value) -> bool {
        true
    }
    fn observable_input(&self, input: &Value, _ctx: &ToolUseContext) -> Option<Value> {
        self.hang_if(input, Step::ObservableInput);
        None
    }
    async fn validate_input(
        &self,
        input: &Value,
        _ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        self.hang_if(input, Step::Validation);
        Ok(())
    }
    async fn call(
        &self,
        input: Value,
        _ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        self.hang_if(&input, Step::Call);
        Ok(ToolResult::text("ran"))
    }
}

/// A FIFO in `dir`.
fn fifo_in(dir: &Path) -> PathBuf {
    let fifo = dir.join("hung");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo failed");
    fifo
}

/// Lets every reader blocked in opening `fifo` go: the FIFO is opened for reading and
/// writing (which, on Linux, never blocks and counts as a writer), then closed.
fn release(fifo: &Path) {
    let _ = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(fifo);
}

/// Waits (at most 10 s) until `count` reaches `n`.
fn wait_for(count: &AtomicUsize, n: usize, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while count.load(Ordering::SeqCst) < n {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
    // Into the open itself.
    std::thread::sleep(Duration::from_millis(200));
}

/// A runtime of two workers, as on a two-core machine.
fn two_workers() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// Whether a task spawned on `runtime` now runs within 5 s (a worker is free for it).
fn a_worker_is_free(runtime: &tokio::runtime::Runtime) -> bool {
    let (tx, rx) = std::sync::mpsc::channel();
    runtime.spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        let _ = tx.send(());
    });
    rx.recv_timeout(Duration::from_secs(5)).is_ok()
}

/// Two calls stuck in `step` of the pipeline, on a runtime of two workers: a task spawned
/// meanwhile still runs (before the fix, a stuck validation held its worker, and two of them
/// every worker: not even the handler of the signal that should end the process ran). Once
/// the FIFO is opened for writing, both calls end and get their results.
fn two_calls_stuck_in(step: Step) {
    let dir = tempfile::tempdir().unwrap();
    let fifo = fifo_in(dir.path());
    let entered = Arc::new(AtomicUsize::new(0));
    let tool: Arc<dyn Tool> = Arc::new(HungPath {
        fifo: fifo.clone(),
        entered: Arc::clone(&entered),
    });
    let runtime = two_workers();
    let (results_tx, results_rx) = std::sync::mpsc::channel();
    runtime.spawn(async move {
        let ctx = ToolUseContext::new(std::env::temp_dir()).with_tools(vec![tool]);
        let mut executor = StreamingToolExecutor::new(
            Arc::new(Pipeline::allow_all()),
            ctx,
            ExecutorConfig::default(),
        );
        for id in ["s1", "s2"] {
            executor.add_tool(ToolUse::new(
                id,
                "HungPath",
                json!({"stuck_in": step.name()}),
            ));
        }
        executor.finish();
        let mut ids = Vec::new();
        while let Some(event) = executor.next().await {
            if let ExecutorEvent::Result(r) = event {
                ids.push(r.tool_use.id.clone());
            }
        }
        let _ = results_tx.send(ids);
    });
    wait_for(&entered, 2, "the two calls never reached their step");
    let free = a_worker_is_free(&runtime);
    // Let the stuck threads go before asserting, so that a failure does not hang the test.
    let deadline = Instant::now() + Duration::from_secs(10);
    let ids = loop {
        release(&fifo);
        if let Ok(ids) = results_rx.recv_timeout(Duration::from_millis(100)) {
            break ids;
        }
        assert!(
            Instant::now() < deadline,
            "the calls did not end once the FIFO had a writer"
        );
    };
    assert!(
        free,
        "two calls stuck in their {} held both runtime workers: nothing else could run",
        step.name()
    );
    assert_eq!(ids, ["s1", "s2"]);
    runtime.shutdown_timeout(Duration::from_secs(5));
}

/// Review 30, finding 1: two Reads of files on a hung mount, stuck in Read's own input
/// check (its `stat`), held both workers of a two-core machine, so that the signal that
/// should end the run was never handled. A tool's validation now runs off the workers.
#[test]
fn a_validation_stuck_in_a_system_call_holds_no_runtime_worker() {
    two_calls_stuck_in(Step::Validation);
}

/// The input hooks and permission checks see (a file tool's absolute path, which may look
/// at the disk for the form of a name) is computed off the workers too.
#[test]
fn an_observable_input_stuck_in_a_system_call_holds_no_runtime_worker() {
    two_calls_stuck_in(Step::ObservableInput);
}

/// Review 30, finding 4: a call the executor answers without its task, after a hard
/// interrupt and [`STUCK_CALL_GRACE`], was reported as taking 0.0 ms although it had run
/// for the whole grace: its duration is now the time from its start to that answer.
#[test]
fn a_call_abandoned_after_the_grace_reports_the_time_it_ran() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = fifo_in(dir.path());
    let entered = Arc::new(AtomicUsize::new(0));
    let tool: Arc<dyn Tool> = Arc::new(HungPath {
        fifo: fifo.clone(),
        entered: Arc::clone(&entered),
    });
    let runtime = two_workers();
    let ctx = ToolUseContext::new(std::env::temp_dir()).with_tools(vec![tool]);
    let host = ctx.cancellation().clone();
    let (results_tx, results_rx) = std::sync::mpsc::channel::<Vec<ToolCallResult>>();
    runtime.spawn(async move {
        let mut executor = StreamingToolExecutor::new(
            Arc::new(Pipeline::allow_all()),
            ctx,
            ExecutorConfig::default(),
        );
        executor.add_tool(ToolUse::new("s1", "HungPath", json!({"stuck_in": "call"})));
        executor.finish();
        let mut results = Vec::new();
        while let Some(event) = executor.next().await {
            if let ExecutorEvent::Result(r) = event {
                results.push(*r);
            }
        }
        let _ = results_tx.send(results);
    });
    wait_for(&entered, 1, "the call never started");
    host.cancel();
    let results = results_rx.recv_timeout(STUCK_CALL_GRACE + Duration::from_secs(10));
    release(&fifo);
    let results = results.expect("the stuck call was never answered");
    assert_eq!(results.len(), 1);
    let outcome = &results[0].outcome;
    assert_eq!(outcome.ending, Ending::Cancelled);
    assert!(
        outcome.duration >= STUCK_CALL_GRACE,
        "the abandoned call is reported as taking {:?}, not the {:?} and more it ran",
        outcome.duration,
        STUCK_CALL_GRACE
    );
    runtime.shutdown_timeout(Duration::from_secs(5));
}
