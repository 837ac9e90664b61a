//! Property tests of the executor's invariants (design.md 1-3 and 5) over random turns:
//! safe and unsafe tools, random durations and arrival times, failures, panics, unknown
//! names, invalid inputs, Bash failures, permission prompts (allowed, refused with feedback,
//! rejected, which stops the turn), safe calls a PreToolUse hook makes unsafe after they were
//! scheduled, and up to three events at random times: user interrupts, `stop_queued`, discards,
//! the host cancelling the context's token, and the executor dropped mid-turn.
//!
//! The results are read while the blocks are added and the events fire (one loop), as an
//! agent loop reads them, so events land before, between and after results.
//! Some calls of the cancellable tools last a minute, longer than the test waits after the
//! turn: an interrupt or a discard that did not stop them leaves them running (or shows
//! their result), so cancellation is checked, not assumed.
//!
//! What each call must get is judged from the test tools' own log (which calls started,
//! which returned a context modifier, which waits ran to their end), never from what the
//! executor says about them. The run ends with a check that the generator did produce the
//! cases the checks are about (discards and drops after some results were read, a host's
//! cancel, rejected prompts, `stop_queued` then an interrupt, sibling cancels).
//!
//! `a_block_added_after_the_hosts_cancel_is_rejected_not_started` pins a bug these
//! properties found: the driver took a command sent after the host's cancel before the
//! cancel itself.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use serde_json::json;
use tokio::time::Instant;
use tool_exec::{
    Ending, ExecutorConfig, ExecutorEvent, Pipeline, REJECT_MESSAGE, REJECT_WITH_FEEDBACK_PREFIX,
    SiblingPolicy, StreamingToolExecutor, ToolCallResult, ToolUse,
};

/// The answer of calls not started after `stop_queued`.
const NOT_RUN: &str = "not run";

/// How long a long call lasts: far past the ten seconds the test waits after the turn.
const LONG_MS: u64 = 60_000;

/// How the text of a call a sibling's failure cancelled begins.
const SIBLING: &str = "<tool_use_error>Cancelled: parallel tool call ";

/// How a permission question about the call is answered (only calls whose tool exists and
/// whose input is valid get that far; a call a hook rewrites is allowed by the hook).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ask {
    No,
    Allow,
    /// Rejected without feedback: the turn stops (a hard interrupt).
    Reject,
    /// Refused with feedback: only this call is refused.
    Feedback,
}

#[derive(Debug, Clone)]
struct Block {
    name: &'static str,
    ms: u64,
    end: &'static str,
    modify: bool,
    delay: u64,
    /// A PreToolUse hook makes the call unsafe...
    rewrite: bool,
    /// ... after this many milliseconds.
    hook_ms: u64,
    ask: Ask,
    /// How long the user takes to answer.
    ask_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    Interrupt,
    StopQueued,
    Discard,
    /// The host cancels the context's token.
    HostCancel,
    /// The host drops the executor.
    Drop,
}

fn block() -> impl Strategy<Value = Block> {
    (
        prop::sample::select(vec![
            "Read", "Grep", "Edit", "Bash", "Sleep", "Peek", "Mystery",
        ]),
        prop_oneof![5 => 0u64..40, 1 => Just(LONG_MS)],
        prop::sample::select(vec![
            "ok", "ok", "ok", "fail", "shell", "panic", "empty", "invalid",
        ]),
        any::<bool>(),
        0u64..15,
        // Made unsafe by a hook (at once, or after a while) in a fifth of the calls.
        prop_oneof![
            8 => Just(None),
            2 => prop_oneof![Just(0u64), 1u64..20].prop_map(Some),
        ],
        prop_oneof![
            17 => Just(Ask::No),
            1 => Just(Ask::Allow),
            1 => Just(Ask::Reject),
            1 => Just(Ask::Feedback),
        ],
        0u64..30,
    )
        .prop_map(
            |(name, ms, end, modify, delay, rewrite, ask, ask_ms)| Block {
                rewrite: rewrite.is_some(),
                hook_ms: rewrite.unwrap_or(0),
                name,
                // Only calls an interrupt cancels may be long: a blocking one runs to its end.
                ms: if ms == LONG_MS && !is_cancellable(name) {
                    40
                } else {
                    ms
                },
                end,
                modify,
                delay,
                ask,
                ask_ms,
            },
        )
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        3 => Just(Event::Interrupt),
        2 => Just(Event::StopQueued),
        2 => Just(Event::Discard),
        2 => Just(Event::HostCancel),
        1 => Just(Event::Drop),
    ]
}

/// Up to three events, each at its own time (a block arrives every 0-14 ms; calls last
/// 0-40 ms or a minute), or `stop_queued` followed by an interrupt.
fn events() -> impl Strategy<Value = Vec<(u64, Event)>> {
    prop_oneof![
        3 => Just(Vec::new()),
        4 => prop::collection::vec((0u64..150, event()), 1..4),
        1 => (0u64..120, 0u64..40).prop_map(|(at, gap)| vec![
            (at, Event::StopQueued),
            (at + gap, Event::Interrupt),
        ]),
    ]
}

fn policy() -> impl Strategy<Value = SiblingPolicy> {
    prop::sample::select(vec![
        SiblingPolicy::BashFailure,
        SiblingPolicy::Never,
        SiblingPolicy::AnyError,
    ])
}

/// Not concurrency-safe, whatever the input.
fn is_unsafe(name: &str) -> bool {
    matches!(name, "Edit" | "Bash" | "Sleep")
}

fn is_cancellable(name: &str) -> bool {
    matches!(name, "Sleep" | "Peek")
}

fn is_known(name: &str) -> bool {
    name != "Mystery"
}

/// Scheduled as not concurrency-safe when its block arrives: an unsafe tool, or a known
/// tool whose input does not parse. Such a call starts only when every earlier call ended,
/// and nothing after it starts before it ended.
fn is_barrier(b: &Block) -> bool {
    is_known(b.name) && (is_unsafe(b.name) || b.end == "invalid")
}

/// Panics of the test tools are expected; keep them out of the output.
fn quiet_expected_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.to_string().contains("panicked on purpose") {
                default(info);
            }
        }));
    });
}

/// What a result says, judged from its text and the block the test sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The tool's own successful output.
    OwnOk,
    /// The tool's own failure (error, shell failure, panic).
    OwnErr,
    /// `REJECT_MESSAGE`: an interrupt, or the user's rejection.
    Reject,
    /// The `stop_queued` text.
    NotRun,
    /// A sibling's failure cancelled it.
    Sibling,
    Unknown,
    Invalid,
    /// Refused by the user, with feedback.
    Feedback,
    Other,
}

fn text_of(r: &ToolCallResult) -> String {
    r.outcome.result.content.joined_text()
}

fn classify(b: &Block, r: &ToolCallResult) -> Kind {
    let id = &r.tool_use.id;
    let text = text_of(r);
    let own_ok = match b.end {
        "ok" => Some(format!("{id} done")),
        "empty" => Some(format!("({} completed with no output)", b.name)),
        _ => None,
    };
    let own_err = match b.end {
        "fail" => text == format!("{id} failed"),
        "shell" => text == "Exit code 2\nboom",
        "panic" => {
            text.starts_with(&format!("<tool_use_error>Error calling tool ({})", b.name))
                && text.contains(&format!("tool {id} panicked on purpose"))
        }
        _ => false,
    };
    if text == REJECT_MESSAGE {
        Kind::Reject
    } else if text == NOT_RUN {
        Kind::NotRun
    } else if text.starts_with(SIBLING) {
        Kind::Sibling
    } else if r.outcome.ending == Ending::UnknownTool
        && text.contains(&format!("No such tool available: {}", b.name))
    {
        Kind::Unknown
    } else if text == format!("{REJECT_WITH_FEEDBACK_PREFIX}{}", common::FEEDBACK) {
        Kind::Feedback
    } else if own_ok.is_some_and(|t| t == text) {
        Kind::OwnOk
    } else if own_err {
        Kind::OwnErr
    } else if r.outcome.ending == Ending::InvalidInput {
        Kind::Invalid
    } else {
        Kind::Other
    }
}

/// When each kind of event first fired.
#[derive(Debug, Clone, Copy, Default)]
struct Fired {
    interrupt: Option<Instant>,
    stop: Option<Instant>,
    discard: Option<Instant>,
    host: Option<Instant>,
    drop: Option<Instant>,
}

impl Fired {
    /// When each fired, in milliseconds from `start`.
    fn describe(&self, start: Instant) -> String {
        let ms = |t: Option<Instant>| t.map(|t| (t - start).as_millis());
        format!(
            "interrupt at {:?}, stop_queued at {:?}, discard at {:?}, host's cancel at {:?}, drop at {:?} (ms)",
            ms(self.interrupt),
            ms(self.stop),
            ms(self.discard),
            ms(self.host),
            ms(self.drop)
        )
    }
}

/// The earliest of `times`.
fn earliest(times: &[Option<Instant>]) -> Option<Instant> {
    times.iter().flatten().min().copied()
}

/// How many cases reached the situations the checks are about.
#[derive(Debug, Default)]
struct Coverage {
    /// A discard after at least one result was read, before the last.
    mid_discard: AtomicUsize,
    mid_drop: AtomicUsize,
    /// The host's cancel while results were still to come.
    mid_host_cancel: AtomicUsize,
    /// A prompt rejected without feedback ended the turn.
    rejection: AtomicUsize,
    /// `stop_queued`, then an interrupt, while results were still to come.
    stop_then_interrupt: AtomicUsize,
    /// A started call that cannot be cancelled kept its result through a soft interrupt.
    block_survived_interrupt: AtomicUsize,
    sibling: AtomicUsize,
    feedback: AtomicUsize,
    /// A call that ran alone saw a context modifier of an earlier call.
    modifier_seen: AtomicUsize,
}

impl Coverage {
    fn bump(counter: &AtomicUsize) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
}

enum Action {
    Add(usize),
    Finish,
    Fire(Event),
}

async fn next_event(exec: &mut Option<StreamingToolExecutor>) -> Option<ExecutorEvent> {
    match exec {
        Some(exec) => exec.next().await,
        None => None,
    }
}

/// The path components after `/w`.
fn parts_after_w(path: &Path) -> Vec<String> {
    path.strip_prefix("/w")
        .map(|rest| {
            rest.components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_else(|_| vec![format!("<not under /w: {}>", path.display())])
}

fn run_case(
    blocks: Vec<Block>,
    events: Vec<(u64, Event)>,
    policy: SiblingPolicy,
    cap: usize,
    coverage: &Coverage,
) -> Result<(), TestCaseError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    // A turn that never ends is a failure, not a hang (the clock is paused: a day passes
    // at once when nothing else can happen).
    rt.block_on(async move {
        tokio::time::timeout(
            Duration::from_secs(24 * 3600),
            turn(blocks, events, policy, cap, coverage),
        )
        .await
        .map_err(|_| TestCaseError::fail("the turn never ended"))?
    })
}

#[allow(clippy::too_many_lines)]
async fn turn(
    blocks: Vec<Block>,
    events: Vec<(u64, Event)>,
    policy: SiblingPolicy,
    cap: usize,
    coverage: &Coverage,
) -> Result<(), TestCaseError> {
    let log: Arc<Mutex<common::Log>> = Arc::default();
    let config = ExecutorConfig {
        max_concurrency: cap,
        sibling_policy: policy,
    };
    let pipeline = Pipeline::new(
        Arc::new(common::AsksWhenTold),
        Arc::new(common::Answers(Arc::clone(&log))),
        Arc::new(common::RewritesUnsafe),
    );
    let ctx = common::ctx(&log);
    let host = ctx.cancellation().clone();
    let mut exec = Some(StreamingToolExecutor::new(Arc::new(pipeline), ctx, config));
    let ids: Vec<String> = (0..blocks.len()).map(|i| format!("t{i}")).collect();
    let index_of = |id: &str| ids.iter().position(|i| i == id).unwrap();

    // The turn as a timeline: the blocks at their arrival times (then `finish`), the events
    // at theirs; an event fires before a block arriving in the same millisecond.
    let mut actions: Vec<(u64, u8, Action)> = Vec::new();
    let mut t = 0;
    for (i, b) in blocks.iter().enumerate() {
        t += b.delay;
        actions.push((t, 1, Action::Add(i)));
    }
    actions.push((t, 2, Action::Finish));
    for &(at, event) in &events {
        actions.push((at, 0, Action::Fire(event)));
    }
    actions.sort_by_key(|&(at, rank, _)| (at, rank));

    let start = Instant::now();
    let mut fired = Fired::default();
    // What had fired when each block was added, and when.
    let mut added: Vec<Option<(Fired, Instant)>> = vec![None; blocks.len()];
    let mut results: Vec<ToolCallResult> = Vec::new();
    let mut started_events: Vec<String> = Vec::new();
    // Results read after a discard or a drop (there must be none).
    let mut after_discard: Vec<String> = Vec::new();
    let mut stream_done = false;
    let mut stop_at_mid = false;
    let mut next = 0;
    while !(stream_done && next == actions.len()) {
        let deadline = actions
            .get(next)
            .map_or(start, |(at, _, _)| start + Duration::from_millis(*at));
        tokio::select! {
            event = next_event(&mut exec), if !stream_done => match event {
                Some(ExecutorEvent::Result(r)) => {
                    if fired.discard.is_some() || fired.drop.is_some() {
                        after_discard.push(r.tool_use.id.clone());
                    }
                    results.push(*r);
                }
                Some(ExecutorEvent::Started { tool_use_id, .. }) => started_events.push(tool_use_id),
                Some(ExecutorEvent::Progress(_)) => {}
                None => stream_done = true,
            },
            () = tokio::time::sleep_until(deadline), if next < actions.len() => {
                let action = &actions[next].2;
                next += 1;
                let mid = !stream_done && fired.discard.is_none() && fired.drop.is_none();
                let some_read = !results.is_empty() && results.len() < blocks.len();
                match *action {
                    Action::Add(i) => {
                        if let Some(exec) = &exec {
                            let b = &blocks[i];
                            let input = if b.end == "invalid" {
                                json!({"ms": "not a number"})
                            } else {
                                let mut input = json!({"ms": b.ms, "end": b.end, "modify": b.modify, "command": "cmd", "rewrite": b.rewrite, "hook_ms": b.hook_ms});
                                match b.ask {
                                    Ask::No => {}
                                    Ask::Allow => input["ask"] = json!("allow"),
                                    Ask::Reject => input["ask"] = json!("reject"),
                                    Ask::Feedback => input["ask"] = json!("feedback"),
                                }
                                input["ask_ms"] = json!(b.ask_ms);
                                input
                            };
                            added[i] = Some((fired, Instant::now()));
                            exec.add_tool(ToolUse::new(ids[i].clone(), b.name, input));
                        }
                    }
                    Action::Finish => {
                        if let Some(exec) = &exec {
                            exec.finish();
                        }
                    }
                    Action::Fire(Event::Interrupt) => {
                        fired.interrupt.get_or_insert_with(Instant::now);
                        if let Some(exec) = &exec {
                            exec.interrupt();
                        }
                        if mid && stop_at_mid {
                            Coverage::bump(&coverage.stop_then_interrupt);
                        }
                    }
                    Action::Fire(Event::StopQueued) => {
                        fired.stop.get_or_insert_with(Instant::now);
                        if let Some(exec) = &exec {
                            exec.stop_queued(NOT_RUN);
                        }
                        stop_at_mid |= mid;
                    }
                    Action::Fire(Event::Discard) => {
                        fired.discard.get_or_insert_with(Instant::now);
                        if let Some(exec) = &mut exec {
                            exec.discard();
                        }
                        if mid && some_read {
                            Coverage::bump(&coverage.mid_discard);
                        }
                    }
                    Action::Fire(Event::HostCancel) => {
                        fired.host.get_or_insert_with(Instant::now);
                        host.cancel();
                        if mid {
                            Coverage::bump(&coverage.mid_host_cancel);
                        }
                    }
                    Action::Fire(Event::Drop) => {
                        fired.drop.get_or_insert_with(Instant::now);
                        exec = None;
                        if mid && some_read {
                            Coverage::bump(&coverage.mid_drop);
                        }
                    }
                }
            }
        }
    }
    // Let cancelled calls wind down.
    tokio::time::sleep(Duration::from_secs(10)).await;

    let log = log.lock().unwrap();
    let started: HashSet<&str> = log.started.iter().map(String::as_str).collect();
    let got: Vec<String> = results.iter().map(|r| r.tool_use.id.clone()).collect();
    let ended_early = fired.discard.is_some() || fired.drop.is_some();

    // 1. One result per id, in arrival order; a prefix of them when the turn was discarded
    // or the executor dropped, and nothing read after that.
    prop_assert!(ids.starts_with(&got), "{got:?} is not a prefix of {ids:?}");
    if !ended_early {
        prop_assert_eq!(&got, &ids);
    }
    prop_assert!(
        after_discard.is_empty(),
        "results read after the discard or drop: {:?}",
        after_discard
    );
    for r in &results {
        prop_assert_eq!(&r.outcome.result.tool_use_id, &r.tool_use.id);
    }
    // Calls start in arrival order, each once, and every call that ran was announced.
    let started_order: Vec<usize> = started_events.iter().map(|id| index_of(id)).collect();
    prop_assert!(
        started_order.windows(2).all(|w| w[0] < w[1]),
        "starts out of order: {started_events:?}"
    );
    if !ended_early {
        for id in &log.started {
            prop_assert!(
                started_events.contains(id),
                "{} ran without a Started event",
                id
            );
        }
    }

    // Each result, judged against what the test sent and what the tools logged.
    // Whether a hard interrupt may have happened (the host's cancel, or a user's rejection:
    // logged when the user answered, whether or not that answer came before a cancel that
    // withdrew it).
    let hard_maybe = fired.host.is_some() || !log.rejected_at.is_empty();
    let interrupt_maybe = fired.interrupt.is_some() || hard_maybe;
    let kinds: Vec<Kind> = results
        .iter()
        .zip(&blocks)
        .map(|(r, b)| classify(b, r))
        .collect();
    for ((r, b), &kind) in results.iter().zip(&blocks).zip(&kinds) {
        let id = r.tool_use.id.as_str();
        let text = text_of(r);
        let ran = started.contains(id);
        let what = format!("{id} ({b:?}, ran: {ran}, {kind:?}): {text:?}");
        prop_assert!(kind != Kind::Other, "unexpected text: {}", what);
        // 5. Only a tool's own success is not an error; failures, panics, shell failures,
        // invalid input and unknown tools always are.
        prop_assert_eq!(r.outcome.result.is_error, kind != Kind::OwnOk, "{}", what);
        if matches!(b.end, "fail" | "shell" | "panic" | "invalid") || !is_known(b.name) {
            prop_assert!(r.outcome.result.is_error, "{}", what);
        }
        prop_assert_eq!(kind == Kind::Unknown, !is_known(b.name), "{}", what);
        match kind {
            Kind::OwnOk => prop_assert!(
                ran && matches!(b.end, "ok" | "empty") && r.outcome.ending == Ending::Succeeded,
                "{}",
                what
            ),
            Kind::OwnErr => prop_assert!(
                ran && matches!(b.end, "fail" | "shell" | "panic")
                    && matches!(r.outcome.ending, Ending::Failed { .. }),
                "{}",
                what
            ),
            Kind::Invalid => prop_assert!(b.end == "invalid" && !ran, "{}", what),
            Kind::Feedback => prop_assert!(b.ask == Ask::Feedback && !ran, "{}", what),
            Kind::NotRun => prop_assert!(fired.stop.is_some() && !ran, "{}", what),
            Kind::Reject => prop_assert!(interrupt_maybe, "{} with no interrupt", what),
            Kind::Sibling => prop_assert!(policy != SiblingPolicy::Never, "{}", what),
            Kind::Unknown | Kind::Other => {}
        }
        // 3. Interrupts and `stop_queued`, whenever they came: a call that ran is never
        // answered with the text for calls not started; one that cannot be cancelled keeps
        // its own result (or a sibling's failure cancelled it) unless a hard interrupt came;
        // a known call that did not run is answered with one of the texts for that.
        prop_assert!(!(ran && kind == Kind::NotRun), "{} ran", what);
        if ran && !is_cancellable(b.name) && !hard_maybe {
            prop_assert!(
                matches!(kind, Kind::OwnOk | Kind::OwnErr | Kind::Sibling),
                "{} ran and cannot be cancelled",
                what
            );
            if fired.interrupt.is_some() && matches!(kind, Kind::OwnOk | Kind::OwnErr) {
                Coverage::bump(&coverage.block_survived_interrupt);
            }
        }
        if matches!(kind, Kind::Reject | Kind::NotRun) && !is_cancellable(b.name) && !hard_maybe {
            prop_assert!(!ran, "{} ran", what);
        }
        if is_known(b.name) && !ran {
            prop_assert!(
                matches!(
                    kind,
                    Kind::Reject | Kind::NotRun | Kind::Sibling | Kind::Invalid | Kind::Feedback
                ),
                "{} never ran",
                what
            );
        }
        // A call added after an interrupt (or the host's cancel) never runs, is never
        // announced as started, and is rejected; one added after `stop_queued` never runs,
        // is never announced, and is answered with its text (an interrupt or a rejection
        // before it takes precedence; a sibling's failure always does).
        if let Some((before, at)) = added[index_of(id)]
            && is_known(b.name)
        {
            let announced = started_events.iter().any(|s| s == id);
            if before.interrupt.is_some() || before.host.is_some() {
                prop_assert!(!ran, "{} ran after the interrupt", what);
                prop_assert!(
                    !announced,
                    "{} was announced as started after the interrupt",
                    what
                );
                prop_assert!(
                    matches!(kind, Kind::Reject | Kind::Sibling),
                    "{} after the interrupt",
                    what
                );
            } else if before.stop.is_some() {
                let rejected_before = log.rejected_at.iter().any(|&r| r <= at);
                prop_assert!(!ran, "{} ran after stop_queued", what);
                prop_assert!(
                    !announced,
                    "{} was announced as started after stop_queued",
                    what
                );
                prop_assert!(
                    matches!(kind, Kind::NotRun | Kind::Sibling)
                        || (kind == Kind::Reject && rejected_before),
                    "{} after stop_queued",
                    what
                );
            }
        }
    }
    if kinds.contains(&Kind::Feedback) {
        Coverage::bump(&coverage.feedback);
    }
    if results.iter().any(|r| r.outcome.interrupt_turn) {
        Coverage::bump(&coverage.rejection);
    }

    // 5. The sibling policy. A sibling's failure is one call's own failure, not replaced
    // (under `BashFailure` a Bash call's; under `AnyError` any error of a call that went
    // through the pipeline); there is at most one, since every later failure is answered as
    // cancelled by it. Nothing after the first call scheduled as unsafe at or after it runs,
    // and with no event and no rejection, every known call there is answered as cancelled by
    // it.
    let sources: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|&(i, &kind)| match policy {
            SiblingPolicy::Never => false,
            SiblingPolicy::BashFailure => blocks[i].name == "Bash" && kind == Kind::OwnErr,
            SiblingPolicy::AnyError => {
                matches!(kind, Kind::OwnErr | Kind::Invalid | Kind::Feedback)
            }
        })
        .map(|(i, _)| i)
        .collect();
    let siblings: Vec<usize> = (0..kinds.len())
        .filter(|&i| kinds[i] == Kind::Sibling)
        .collect();
    if !siblings.is_empty() {
        Coverage::bump(&coverage.sibling);
    }
    match policy {
        SiblingPolicy::Never => {
            prop_assert!(siblings.is_empty(), "cancelled by a sibling: {siblings:?}");
        }
        SiblingPolicy::BashFailure | SiblingPolicy::AnyError => {
            prop_assert!(
                sources.len() <= 1,
                "several failures were not cancelled: {sources:?}"
            );
            let by_rejection = policy == SiblingPolicy::AnyError
                && results.iter().any(|r| r.outcome.interrupt_turn);
            if !siblings.is_empty() && !by_rejection {
                prop_assert_eq!(
                    sources.len(),
                    1,
                    "cancelled by a sibling with no failure to do it: {:?}",
                    siblings
                );
            }
        }
    }
    if let Some(&e) = sources.first() {
        let b = &blocks[e];
        let desc = if b.end == "invalid" {
            b.name.to_owned()
        } else {
            format!("{}(cmd)", b.name)
        };
        let expected = format!("{SIBLING}{desc} errored</tool_use_error>");
        for &i in &siblings {
            prop_assert_eq!(text_of(&results[i]), expected.clone());
        }
        if policy == SiblingPolicy::BashFailure {
            // Bash runs alone: what it cancels came after it.
            prop_assert!(siblings.iter().all(|&i| i > e), "{siblings:?} before t{e}");
        }
        let barrier = (e..blocks.len()).find(|&j| is_barrier(&blocks[j]));
        if let Some(j) = barrier {
            let first = if j == e { j + 1 } else { j };
            let quiet = events.is_empty() && log.rejected_at.is_empty();
            for i in first..results.len() {
                if !is_known(blocks[i].name) {
                    continue;
                }
                prop_assert!(
                    !started.contains(ids[i].as_str()),
                    "t{} ran after t{}'s failure",
                    i,
                    e
                );
                if quiet {
                    prop_assert_eq!(kinds[i], Kind::Sibling, "t{} after t{}'s failure", i, e);
                } else {
                    prop_assert!(
                        matches!(kinds[i], Kind::Sibling | Kind::Reject | Kind::NotRun),
                        "t{} after t{}'s failure: {:?}",
                        i,
                        e,
                        kinds[i]
                    );
                }
            }
        }
    }

    // Nothing starts after a discard, a drop or the host's cancel, nor after an interrupt:
    // a call still before its tool then (waiting for the user's answer, or in a slow hook)
    // is stopped there, whether or not its tool can be cancelled. `stop_queued` lets such a
    // call go on, as running calls do; not so a call scheduled as safe that a hook made
    // unsafe: it waits to run alone, and is answered as a call not started.
    let hard_at = earliest(&[fired.discard, fired.drop, fired.host]);
    for (id, &at) in log.started.iter().zip(&log.started_at) {
        let b = &blocks[index_of(id)];
        let waits_before_tool = (b.ask == Ask::Allow && !b.rewrite)
            || (b.rewrite && b.hook_ms > 0 && is_unsafe(b.name));
        let when = || {
            format!(
                "{id} started at {} ms, after {}",
                (at - start).as_millis(),
                fired.describe(start)
            )
        };
        if let Some(t) = hard_at {
            prop_assert!(at <= t, "{}", when());
        }
        let soft_at = if waits_before_tool {
            fired.interrupt
        } else {
            earliest(&[fired.interrupt, fired.stop])
        };
        if let Some(t) = soft_at {
            prop_assert!(at <= t, "{}", when());
        }
    }

    // An interrupt, a discard, a drop or the host's cancel (all within the first 190 ms)
    // stops every long call: none waits out its minute. (Not so a rejection: the rejected
    // call may have waited behind a long one.)
    if fired.interrupt.is_some()
        || fired.discard.is_some()
        || fired.drop.is_some()
        || fired.host.is_some()
    {
        for (b, id) in blocks.iter().zip(&ids) {
            if b.ms == LONG_MS {
                prop_assert!(
                    !log.slept.contains(id),
                    "{} ran its whole minute despite the {}",
                    id,
                    fired.describe(start)
                );
            }
        }
    }
    // 2. No unsafe overlap; the cap holds.
    prop_assert!(log.violations.is_empty(), "{:?}", log.violations);
    prop_assert!(log.max_parallel <= cap);
    // 5. Nothing is left running.
    prop_assert!(log.running.is_empty(), "still running: {:?}", log.running);

    // 3. Context modifiers, from the tools' own log: those of calls that ran not
    // concurrency-safe apply in arrival order (those calls end in arrival order), and
    // before the next call starts. A call scheduled as unsafe runs alone, after every
    // earlier call ended: it sees exactly the modifiers of the earlier ones. Any call sees
    // a prefix of those (a call scheduled as safe captured its context when it was
    // scheduled, before an earlier call a hook made unsafe ended), all of them when no
    // earlier call was made unsafe by a hook.
    let applied: Vec<usize> = log
        .modified
        .iter()
        .filter(|(_, safe)| !safe)
        .map(|(id, _)| index_of(id))
        .collect();
    prop_assert!(
        applied.windows(2).all(|w| w[0] < w[1]),
        "unsafe calls with modifiers ended out of order: {:?}",
        log.modified
    );
    for (id, cwd) in &log.cwd_seen {
        let i = index_of(id);
        let earlier: Vec<String> = applied
            .iter()
            .filter(|&&j| j < i)
            .map(|&j| ids[j].clone())
            .collect();
        let parts = parts_after_w(cwd);
        prop_assert!(
            earlier.starts_with(&parts),
            "{} saw {} but the earlier modifiers were {:?}",
            id,
            cwd.display(),
            earlier
        );
        if is_unsafe(blocks[i].name) || !blocks[..i].iter().any(|b| b.rewrite) {
            prop_assert_eq!(
                &parts,
                &earlier,
                "{} did not see every earlier modifier",
                id
            );
        }
        if is_unsafe(blocks[i].name) && !parts.is_empty() {
            Coverage::bump(&coverage.modifier_seen);
        }
    }
    if !ended_early {
        let final_ctx = exec.as_ref().and_then(StreamingToolExecutor::final_context);
        prop_assert!(
            final_ctx.is_some(),
            "the stream ended without a final context"
        );
        let mut expected = PathBuf::from("/w");
        for &j in &applied {
            expected.push(&ids[j]);
        }
        prop_assert_eq!(final_ctx.unwrap().cwd(), expected.as_path());
    }
    Ok(())
}

/// The generator's turns, each run on a paused clock; then a check that the cases the
/// checks are about did come up.
#[test]
fn executor_invariants_hold() {
    quiet_expected_panics();
    let coverage = Coverage::default();
    let mut runner = TestRunner::new(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let strategy = (
        prop::collection::vec(block(), 0..12),
        events(),
        policy(),
        1usize..6,
    );
    let outcome = runner.run(&strategy, |(blocks, events, policy, cap)| {
        run_case(blocks, events, policy, cap, &coverage)
    });
    if let Err(e) = outcome {
        panic!("{e}");
    }
    let counts = [
        ("discard after some results", &coverage.mid_discard, 20),
        ("drop after some results", &coverage.mid_drop, 10),
        ("host's cancel mid-turn", &coverage.mid_host_cancel, 20),
        ("rejected prompt", &coverage.rejection, 20),
        (
            "stop_queued then interrupt",
            &coverage.stop_then_interrupt,
            20,
        ),
        (
            "blocking call kept its result through an interrupt",
            &coverage.block_survived_interrupt,
            20,
        ),
        ("sibling cancelled", &coverage.sibling, 20),
        ("refused with feedback", &coverage.feedback, 20),
        ("modifier seen by a later call", &coverage.modifier_seen, 20),
    ];
    for (what, count, at_least) in counts {
        let count = count.load(Ordering::Relaxed);
        eprintln!("{what}: {count}");
        assert!(
            count >= at_least,
            "only {count} cases of {what} (at least {at_least} expected): the generator no longer reaches them"
        );
    }
}

/// The host's cancel comes before any command sent after it: a block added after the host
/// cancelled the context's token is answered with the rejection text (an interrupt's, which
/// takes precedence over `stop_queued`'s) and never announced as started. The driver took a
/// command and the cancellation in random order when both were ready, so each case runs
/// many times.
#[test]
fn a_block_added_after_the_hosts_cancel_is_rejected_not_started() {
    for round in 0..64 {
        for stop_first in [false, true] {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            let (texts, started) = rt.block_on(async {
                let log: Arc<Mutex<common::Log>> = Arc::default();
                let ctx = common::ctx(&log);
                let host = ctx.cancellation().clone();
                let mut exec = StreamingToolExecutor::new(
                    Arc::new(Pipeline::allow_all()),
                    ctx,
                    ExecutorConfig::default(),
                );
                exec.add_tool(ToolUse::new("a", "Edit", json!({"ms": 10})));
                if stop_first {
                    exec.stop_queued(NOT_RUN);
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
                host.cancel();
                exec.add_tool(ToolUse::new("b", "Edit", json!({"ms": 10})));
                exec.finish();
                let mut texts = Vec::new();
                let mut started = Vec::new();
                while let Some(event) = exec.next().await {
                    match event {
                        ExecutorEvent::Result(r) => texts.push(text_of(&r)),
                        ExecutorEvent::Started { tool_use_id, .. } => started.push(tool_use_id),
                        ExecutorEvent::Progress(_) => {}
                    }
                }
                (texts, started)
            });
            let what = format!("round {round}, stop_queued first: {stop_first}");
            assert_eq!(texts, ["a done", REJECT_MESSAGE], "{what}");
            assert_eq!(started, ["a"], "{what}");
        }
    }
}
