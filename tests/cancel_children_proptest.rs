//! Invariant 5 with real processes, over random turns: every child process a call started is
//! gone once the call is cancelled, whatever cancelled it. Each turn runs real
//! `tools_builtin::Bash` calls (and the same Bash with the `cancel` interrupt behaviour, which a
//! user interrupt stops): short sleeps, sleeps of ten minutes (some with a second sleep in the
//! background of the same shell), and failing commands (read-only ones, which cancel their
//! siblings under `AnyError` only, and ones that write, which cancel them under `BashFailure`
//! too), with random user interrupts, `stop_queued`, discards, the host's cancel and the
//! executor dropped, at random times. A turn still going after the events ends with a
//! discard, a drop or the host's cancel. Then no process with the turn's marker (a number
//! only its commands hold) may be left.
//!
//! The fixed scenarios are in `tests/fault_matrix/cancel.rs`; this covers their combinations.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use proptest::prelude::*;
use serde_json::{Value, json};
use tokio::time::Instant;
use tool_core::{
    InputError, InterruptBehavior, MaxResultSize, ProgressSender, Tool, ToolError, ToolResult,
    ToolUseContext, ValidationError, async_trait,
};
use tool_exec::{
    ExecutorConfig, ExecutorEvent, Pipeline, SiblingPolicy, StreamingToolExecutor, ToolUse,
};

/// Bash with the `cancel` interrupt behaviour (Bash itself is `block`): a user interrupt
/// stops it. Not named Bash, so its failures cancel siblings only under `AnyError`.
struct Interruptible(tools_builtin::Bash);

#[async_trait]
impl Tool for Interruptible {
    fn name(&self) -> &str {
        "Interruptible"
    }
    fn input_schema(&self) -> Value {
        Tool::input_schema(&self.0)
    }
    fn description(&self) -> Cow<'_, str> {
        Tool::description(&self.0)
    }
    fn max_result_size(&self) -> MaxResultSize {
        Tool::max_result_size(&self.0)
    }
    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        Tool::is_concurrency_safe(&self.0, input)
    }
    fn is_read_only(&self, input: &Value) -> bool {
        Tool::is_read_only(&self.0, input)
    }
    fn parse_input(&self, input: Value) -> Result<Value, InputError> {
        Tool::parse_input(&self.0, input)
    }
    async fn validate_input(
        &self,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        Tool::validate_input(&self.0, input, ctx).await
    }
    async fn call(
        &self,
        input: Value,
        ctx: ToolUseContext,
        progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        Tool::call(&self.0, input, ctx, progress).await
    }
}

#[derive(Debug, Clone, Copy)]
enum Command {
    /// Sleeps this many milliseconds (read-only, so concurrency-safe).
    Short(u64),
    /// Sleeps ten minutes.
    Long,
    /// Sleeps ten minutes, with another such sleep in the background of the same shell.
    LongWithChild,
    /// Sleeps this many milliseconds, then fails (read-only).
    FailReadOnly(u64),
    /// Sleeps this many milliseconds, then fails (not read-only: runs alone).
    FailWrites(u64),
}

impl Command {
    /// The command line; every sleep holds `marker`.
    fn line(self, marker: &str) -> String {
        match self {
            Self::Short(ms) => format!("sleep 0.{ms:03}{marker}"),
            Self::Long => format!("sleep 600.{marker}"),
            Self::LongWithChild => format!("sleep 600.{marker} & sleep 600.{marker}"),
            Self::FailReadOnly(ms) => format!("sleep 0.{ms:03}{marker}; false"),
            Self::FailWrites(ms) => format!("sleep 0.{ms:03}{marker}; touch written; exit 3"),
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Call {
    interruptible: bool,
    command: Command,
    /// Milliseconds after the previous block.
    delay: u64,
}

impl Call {
    /// The block of the `i`-th call.
    fn tool_use(self, i: usize, marker: &str) -> ToolUse {
        let name = if self.interruptible {
            "Interruptible"
        } else {
            "Bash"
        };
        ToolUse::new(
            format!("t{i}"),
            name,
            json!({"command": self.command.line(marker)}),
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Interrupt,
    StopQueued,
    Discard,
    HostCancel,
    Drop,
}

fn call() -> impl Strategy<Value = Call> {
    (
        any::<bool>(),
        prop_oneof![
            3 => (10u64..150).prop_map(Command::Short),
            3 => Just(Command::Long),
            1 => Just(Command::LongWithChild),
            1 => (10u64..150).prop_map(Command::FailReadOnly),
            1 => (10u64..150).prop_map(Command::FailWrites),
        ],
        0u64..40,
    )
        .prop_map(|(interruptible, command, delay)| Call {
            interruptible,
            command,
            delay,
        })
}

fn events() -> impl Strategy<Value = Vec<(u64, Event)>> {
    prop::collection::vec(
        (
            0u64..300,
            prop_oneof![
                3 => Just(Event::Interrupt),
                1 => Just(Event::StopQueued),
                1 => Just(Event::Discard),
                1 => Just(Event::HostCancel),
                1 => Just(Event::Drop),
            ],
        ),
        0..3,
    )
}

/// When a turn still going is ended, and how.
const END_AT_MS: u64 = 350;

fn ending() -> impl Strategy<Value = Event> {
    prop::sample::select(vec![Event::Discard, Event::HostCancel, Event::Drop])
}

fn policy() -> impl Strategy<Value = SiblingPolicy> {
    prop::sample::select(vec![
        SiblingPolicy::BashFailure,
        SiblingPolicy::AnyError,
        SiblingPolicy::Never,
    ])
}

/// A number no other process's command line holds.
fn marker() -> String {
    static N: AtomicU64 = AtomicU64::new(1);
    format!(
        "7717{}{:04}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Fields of `/proc/PID/stat` after the command name: state.
fn state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].chars().next()
}

/// Live (not zombie) processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
                && state(pid).is_some_and(|s| s != 'Z' && s != 'X')
        })
        .collect()
}

/// What `processes_with(needle)` still finds after signals had a few seconds to land.
async fn settle(needle: &str) -> Vec<u32> {
    for _ in 0..200 {
        if processes_with(needle).is_empty() {
            return Vec::new();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    processes_with(needle)
}

/// Fires `event`; whether it ended the stream.
fn fire(
    event: Event,
    exec: &mut Option<StreamingToolExecutor>,
    host: &tool_core::CancellationToken,
) -> bool {
    match (event, exec.as_mut()) {
        (Event::HostCancel, _) => host.cancel(),
        (Event::Drop, _) => *exec = None,
        (_, None) => {}
        (Event::Interrupt, Some(exec)) => exec.interrupt(),
        (Event::StopQueued, Some(exec)) => exec.stop_queued("not run"),
        (Event::Discard, Some(exec)) => exec.discard(),
    }
    matches!(event, Event::Discard | Event::Drop)
}

async fn next_event(exec: &mut Option<StreamingToolExecutor>) -> Option<ExecutorEvent> {
    match exec {
        Some(exec) => exec.next().await,
        None => None,
    }
}

/// How many turns had processes of theirs alive when something cancelled calls.
static KILLED_SOMETHING: AtomicU64 = AtomicU64::new(0);

async fn run_turn(
    calls: Vec<Call>,
    mut events: Vec<(u64, Event)>,
    ending: Event,
    policy: SiblingPolicy,
) -> Result<(), TestCaseError> {
    let marker = marker();
    let dir = tempfile::tempdir().unwrap();
    let bash = tools_builtin::Bash::default();
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(bash), Arc::new(Interruptible(bash))];
    let ctx = ToolUseContext::new(dir.path()).with_tools(tools);
    let host = ctx.cancellation().clone();
    let config = ExecutorConfig {
        sibling_policy: policy,
        ..ExecutorConfig::default()
    };
    let mut exec = Some(StreamingToolExecutor::new(
        Arc::new(Pipeline::allow_all()),
        ctx,
        config,
    ));

    // The timeline: blocks at their arrival times (then `finish`), the events at theirs, the
    // ending last.
    let mut timeline: Vec<(u64, Option<usize>, Option<Event>)> = Vec::new();
    let mut t = 0;
    for (i, c) in calls.iter().enumerate() {
        t += c.delay;
        timeline.push((t, Some(i), None));
    }
    timeline.push((t, None, None));
    events.sort_by_key(|&(at, _)| at);
    for (at, event) in events {
        timeline.push((at, None, Some(event)));
    }
    timeline.sort_by_key(|&(at, i, e)| (at, e.is_none(), i.is_none()));
    timeline.push((END_AT_MS, None, Some(ending)));

    let start = Instant::now();
    let mut next = 0;
    let mut stream_done = false;
    let mut ended_early = false;
    let mut got = Vec::new();
    let mut killed_something = false;
    // Until the stream ended and every event but the ending fired (a turn over before the
    // ending needs none).
    while !(stream_done && next + 1 >= timeline.len()) {
        let deadline = timeline
            .get(next)
            .map_or(start, |&(at, _, _)| start + Duration::from_millis(at));
        tokio::select! {
            event = next_event(&mut exec), if !stream_done => match event {
                Some(ExecutorEvent::Result(r)) => {
                    prop_assert!(!ended_early, "a result after the discard");
                    got.push(r.tool_use.id.clone());
                }
                Some(_) => {}
                None => stream_done = true,
            },
            () = tokio::time::sleep_until(deadline), if next < timeline.len() => {
                let (_, add, event) = timeline[next];
                next += 1;
                match (add, event) {
                    (Some(i), _) => {
                        if let Some(exec) = &exec {
                            exec.add_tool(calls[i].tool_use(i, &marker));
                        }
                    }
                    (None, None) => {
                        if let Some(exec) = &exec {
                            exec.finish();
                        }
                    }
                    (None, Some(event)) => {
                        if event != Event::StopQueued && !killed_something && !stream_done {
                            killed_something = !processes_with(&marker).is_empty();
                        }
                        ended_early |= fire(event, &mut exec, &host);
                    }
                }
            }
        }
    }
    let ids: Vec<String> = (0..calls.len()).map(|i| format!("t{i}")).collect();
    prop_assert!(ids.starts_with(&got), "{got:?} is not a prefix of {ids:?}");
    if !ended_early {
        prop_assert_eq!(&got, &ids);
    }
    drop(exec);
    if killed_something {
        KILLED_SOMETHING.fetch_add(1, Ordering::Relaxed);
    }
    let left = settle(&marker).await;
    prop_assert!(
        left.is_empty(),
        "processes with `{}` still running after the turn: {:?}",
        marker,
        left
    );
    Ok(())
}

/// The random turns, then a check that enough of them did cancel running processes.
#[test]
fn no_child_process_outlives_its_cancellation() {
    const CASES: u32 = 64;
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: CASES,
        max_shrink_iters: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let strategy = (
        prop::collection::vec(call(), 1..6),
        events(),
        ending(),
        policy(),
    );
    let outcome = runner.run(&strategy, |(calls, events, ending, policy)| {
        rt.block_on(async move {
            tokio::time::timeout(
                Duration::from_secs(120),
                run_turn(calls, events, ending, policy),
            )
            .await
            .map_err(|_| TestCaseError::fail("the turn never ended"))?
        })
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    let killed = KILLED_SOMETHING.load(Ordering::Relaxed);
    eprintln!("{killed} of {CASES} turns cancelled calls with processes running");
    assert!(
        killed >= u64::from(CASES) / 4,
        "only {killed} of {CASES} turns cancelled calls with processes running"
    );
}
