//! Property tests of the executor's invariants (design.md 1-3 and 5) over random turns:
//! safe and unsafe tools, random durations and arrival times, failures, panics, unknown
//! names, invalid inputs, Bash failures, user interrupts and discards at random points, and
//! safe calls a PreToolUse hook makes unsafe after they were scheduled.
//! Some calls of the cancellable tools last a minute, longer than the test waits after the
//! turn: an interrupt or a discard that did not stop them leaves them running (or shows
//! their result), so cancellation is checked, not assumed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use proptest::prelude::*;
use serde_json::json;
use tool_exec::{
    Ending, ExecutorConfig, ExecutorEvent, Pipeline, REJECT_MESSAGE, SiblingPolicy,
    StreamingToolExecutor, ToolUse,
};

/// The answer of calls not started after `stop_queued`.
const NOT_RUN: &str = "not run";

/// How long a long call lasts: far past the ten seconds the test waits after the turn.
const LONG_MS: u64 = 60_000;

#[derive(Debug, Clone)]
struct Block {
    name: &'static str,
    ms: u64,
    end: &'static str,
    modify: bool,
    delay: u64,
    /// A PreToolUse hook makes the call unsafe.
    rewrite: bool,
}

#[derive(Debug, Clone, Copy)]
enum Event {
    None,
    Interrupt(u64),
    Discard(u64),
    StopQueued(u64),
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
        prop::bool::weighted(0.2),
    )
        .prop_map(|(name, ms, end, modify, delay, rewrite)| Block {
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
            rewrite,
        })
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        4 => Just(Event::None),
        1 => (0u64..100).prop_map(Event::Interrupt),
        1 => (0u64..100).prop_map(Event::Discard),
        1 => (0u64..100).prop_map(Event::StopQueued),
    ]
}

fn policy() -> impl Strategy<Value = SiblingPolicy> {
    prop::sample::select(vec![
        SiblingPolicy::BashFailure,
        SiblingPolicy::Never,
        SiblingPolicy::AnyError,
    ])
}

fn is_unsafe(name: &str) -> bool {
    matches!(name, "Edit" | "Bash" | "Sleep")
}

fn is_cancellable(name: &str) -> bool {
    matches!(name, "Sleep" | "Peek")
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

fn run_case(
    blocks: Vec<Block>,
    event: Event,
    policy: SiblingPolicy,
    cap: usize,
) -> Result<(), TestCaseError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    rt.block_on(async move {
        let log: Arc<Mutex<common::Log>> = Arc::default();
        let config = ExecutorConfig {
            max_concurrency: cap,
            sibling_policy: policy,
        };
        let pipeline = Pipeline::new(
            Arc::new(tool_exec::AllowAll),
            Arc::new(tool_exec::DenyAsks),
            Arc::new(common::RewritesUnsafe),
        );
        let mut exec = StreamingToolExecutor::new(Arc::new(pipeline), common::ctx(&log), config);
        let ids: Vec<String> = (0..blocks.len()).map(|i| format!("t{i}")).collect();
        let mut results = Vec::new();
        let mut discarded = false;
        let mut interrupted = false;
        // The blocks added after the interrupt.
        let mut after_interrupt = Vec::new();
        // The blocks added after `stop_queued`.
        let mut stopped = false;
        let mut after_stop = Vec::new();
        let mut elapsed = 0u64;
        let mut pending_event = event;
        for (i, b) in blocks.iter().enumerate() {
            let wake = elapsed + b.delay;
            // Fire the random event if it falls before this block arrives.
            match pending_event {
                Event::Interrupt(at) if at <= wake => {
                    tokio::time::sleep(Duration::from_millis(at - elapsed)).await;
                    elapsed = at;
                    exec.interrupt();
                    interrupted = true;
                    pending_event = Event::None;
                }
                Event::Discard(at) if at <= wake => {
                    tokio::time::sleep(Duration::from_millis(at - elapsed)).await;
                    elapsed = at;
                    exec.discard();
                    discarded = true;
                    pending_event = Event::None;
                }
                Event::StopQueued(at) if at <= wake => {
                    tokio::time::sleep(Duration::from_millis(at - elapsed)).await;
                    elapsed = at;
                    exec.stop_queued(NOT_RUN);
                    stopped = true;
                    pending_event = Event::None;
                }
                _ => {}
            }
            tokio::time::sleep(Duration::from_millis(wake - elapsed)).await;
            elapsed = wake;
            let input = if b.end == "invalid" {
                json!({"ms": "not a number"})
            } else {
                json!({"ms": b.ms, "end": b.end, "modify": b.modify, "command": "cmd", "rewrite": b.rewrite})
            };
            if interrupted {
                after_interrupt.push(ids[i].clone());
            }
            if stopped {
                after_stop.push(ids[i].clone());
            }
            exec.add_tool(ToolUse::new(ids[i].clone(), b.name, input));
        }
        exec.finish();
        match pending_event {
            Event::Interrupt(_) => {
                exec.interrupt();
                interrupted = true;
            }
            Event::Discard(_) => {
                exec.discard();
                discarded = true;
            }
            Event::StopQueued(_) => exec.stop_queued(NOT_RUN),
            Event::None => {}
        }
        while let Some(ev) = exec.next().await {
            if let ExecutorEvent::Result(r) = ev {
                results.push(*r);
            }
        }
        // Let cancelled calls wind down.
        tokio::time::sleep(Duration::from_secs(10)).await;

        let got: Vec<String> = results.iter().map(|r| r.tool_use.id.clone()).collect();
        // 1. One result per id, in arrival order (a prefix of it when discarded).
        if discarded {
            prop_assert!(ids.starts_with(&got), "{got:?} is not a prefix of {ids:?}");
        } else {
            prop_assert_eq!(&got, &ids);
            for r in &results {
                prop_assert_eq!(&r.outcome.result.tool_use_id, &r.tool_use.id);
            }
        }
        let log = log.lock().unwrap();
        // An interrupt stops what it must: a call added after it never starts and is
        // rejected (a call of no known tool is answered as such, as Claude Code does); a
        // long cancellable call never runs to its end.
        if interrupted {
            for r in &results {
                let id = &r.tool_use.id;
                if after_interrupt.contains(id) && r.outcome.ending != Ending::UnknownTool {
                    // (A sibling's failure before it takes precedence, as in Claude Code.)
                    let text = r.outcome.result.content.joined_text();
                    prop_assert!(
                        text == REJECT_MESSAGE
                            || text.starts_with("<tool_use_error>Cancelled: parallel tool call "),
                        "{}: {}",
                        id,
                        text
                    );
                    prop_assert!(
                        !log.started.contains(id),
                        "{} started after the interrupt",
                        id
                    );
                }
            }
        }
        // After `stop_queued` nothing starts: a block added then is answered without running
        // (by the text, or by a sibling's failure before it), unless it names no tool.
        for r in &results {
            let id = &r.tool_use.id;
            if after_stop.contains(id) && r.outcome.ending != Ending::UnknownTool {
                prop_assert!(!log.started.contains(id), "{} started after stop_queued", id);
                let text = r.outcome.result.content.joined_text();
                prop_assert!(
                    text == NOT_RUN
                        || text.starts_with("<tool_use_error>Cancelled: parallel tool call "),
                    "{}: {}",
                    id,
                    text
                );
            }
        }
        if interrupted || discarded {
            for (r, b) in results.iter().zip(&blocks) {
                if b.ms == LONG_MS {
                    prop_assert!(
                        r.outcome.ending != Ending::Succeeded,
                        "{} ran its whole minute despite the {}",
                        r.tool_use.id,
                        if discarded { "discard" } else { "interrupt" }
                    );
                }
            }
        }
        // 2. No unsafe overlap; the cap holds.
        prop_assert!(log.violations.is_empty(), "{:?}", log.violations);
        prop_assert!(log.max_parallel <= cap);
        // 5. Nothing is left running.
        prop_assert!(log.running.is_empty(), "still running: {:?}", log.running);
        // 3. Modifiers applied in arrival order, from unsafe tools that succeeded only.
        if !discarded {
            let mut expected = PathBuf::from("/w");
            for (r, b) in results.iter().zip(&blocks) {
                let own_success =
                    r.outcome.ending == Ending::Succeeded && !r.outcome.result.is_error;
                if (is_unsafe(b.name) || b.rewrite) && b.modify && own_success {
                    expected.push(&r.tool_use.id);
                }
            }
            prop_assert_eq!(exec.final_context().unwrap().cwd(), expected.as_path());
        }
        Ok(())
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn executor_invariants_hold(
        blocks in prop::collection::vec(block(), 0..12),
        event in event(),
        policy in policy(),
        cap in 1usize..6,
    ) {
        quiet_expected_panics();
        run_case(blocks, event, policy, cap)?;
    }
}
