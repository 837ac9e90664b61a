//! Scenario bench: recorded-style turns (tool_use blocks arriving over a streamed response,
//! tools with given durations) run three ways, in the same process:
//!
//! - **streaming**: each block is handed to the executor the moment it arrives;
//! - **batch**: the same blocks run with `run_tools` after the stream has ended;
//! - **oracle**: the lower bound, the finish time of the same schedule with zero overhead,
//!   computed by simulating the executor's rules on the exact durations.
//!
//! Prints a Markdown table: median of 5 runs (min–max) and the ratios streaming/batch
//! (target ≤ 0.70 on the mixed read-heavy turn) and streaming/oracle (target ≤ 1.05).
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss
)]

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};
use tool_core::{
    MaxResultSize, ProgressSender, Tool, ToolError, ToolResult, ToolUseContext, async_trait,
};
use tool_exec::{
    ExecutorConfig, Pipeline, PlannedCall, StreamingToolExecutor, ToolUse, run_tools,
    schedule_makespan,
};

struct Timed {
    name: &'static str,
    safe: bool,
}

#[async_trait]
impl Tool for Timed {
    fn name(&self) -> &str {
        self.name
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"ms": {"type": "integer"}}})
    }
    fn description(&self) -> Cow<'_, str> {
        "sleeps".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn is_concurrency_safe(&self, _: &Value) -> bool {
        self.safe
    }
    async fn call(
        &self,
        input: Value,
        _ctx: ToolUseContext,
        _p: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        tokio::time::sleep(Duration::from_millis(input["ms"].as_u64().unwrap_or(0))).await;
        Ok(ToolResult::text("done"))
    }
}

/// (tool, arrival ms, duration ms)
type Turn = (&'static str, Vec<(&'static str, u64, u64)>, u64);

fn turns() -> Vec<Turn> {
    vec![
        (
            "mixed, read-heavy",
            vec![
                ("Glob", 90, 40),
                ("Grep", 160, 120),
                ("Read", 240, 30),
                ("Read", 300, 30),
                ("Read", 360, 30),
                ("Read", 420, 30),
                ("Grep", 520, 90),
                ("Edit", 700, 20),
                ("Read", 780, 30),
                ("Bash", 880, 150),
            ],
            1000,
        ),
        (
            "mixed, ends with a slow Bash",
            vec![
                ("Glob", 100, 40),
                ("Grep", 180, 80),
                ("Read", 260, 30),
                ("Read", 320, 30),
                ("Read", 380, 30),
                ("Edit", 600, 20),
                ("Bash", 800, 300),
                ("Read", 900, 30),
            ],
            1000,
        ),
        (
            "all reads",
            (0..10).map(|i| ("Read", 80 * (i + 1), 120)).collect(),
            900,
        ),
        (
            "unsafe chain",
            vec![
                ("Edit", 100, 50),
                ("Edit", 200, 50),
                ("Edit", 300, 50),
                ("Edit", 400, 50),
                ("Bash", 500, 200),
            ],
            600,
        ),
    ]
}

fn safe(name: &str) -> bool {
    matches!(name, "Glob" | "Grep" | "Read")
}

fn ctx() -> ToolUseContext {
    let tools: Vec<Arc<dyn Tool>> = ["Glob", "Grep", "Read", "Edit", "Bash"]
        .into_iter()
        .map(|n| {
            Arc::new(Timed {
                name: n,
                safe: safe(n),
            }) as Arc<dyn Tool>
        })
        .collect();
    ToolUseContext::new("/tmp").with_tools(tools)
}

fn blocks(turn: &Turn) -> Vec<(ToolUse, u64)> {
    turn.1
        .iter()
        .enumerate()
        .map(|(i, (name, at, ms))| (ToolUse::new(format!("t{i}"), *name, json!({"ms": ms})), *at))
        .collect()
}

async fn streaming(turn: &Turn) -> Duration {
    let start = Instant::now();
    let mut exec = StreamingToolExecutor::new(
        Arc::new(Pipeline::allow_all()),
        ctx(),
        ExecutorConfig::default(),
    );
    for (tool_use, at) in blocks(turn) {
        tokio::time::sleep_until((start + Duration::from_millis(at)).into()).await;
        exec.add_tool(tool_use);
    }
    tokio::time::sleep_until((start + Duration::from_millis(turn.2)).into()).await;
    exec.finish();
    while exec.next().await.is_some() {}
    start.elapsed()
}

async fn batch(turn: &Turn) -> Duration {
    let start = Instant::now();
    tokio::time::sleep_until((start + Duration::from_millis(turn.2)).into()).await;
    let uses = blocks(turn).into_iter().map(|(u, _)| u).collect();
    run_tools(
        Arc::new(Pipeline::allow_all()),
        ctx(),
        uses,
        ExecutorConfig::default(),
    )
    .await;
    start.elapsed()
}

/// The executor's rules on exact durations with zero overhead.
fn oracle(turn: &Turn, cap: usize) -> Duration {
    let calls: Vec<PlannedCall> = turn
        .1
        .iter()
        .map(|(n, at, ms)| PlannedCall {
            concurrency_safe: safe(n),
            arrival: Duration::from_millis(*at),
            duration: Duration::from_millis(*ms),
        })
        .collect();
    schedule_makespan(&calls, cap).max(Duration::from_millis(turn.2))
}

fn stats(mut xs: Vec<Duration>) -> (Duration, Duration, Duration) {
    xs.sort();
    (xs[xs.len() / 2], xs[0], xs[xs.len() - 1])
}

fn ms(d: Duration) -> String {
    format!("{:.1}", d.as_secs_f64() * 1000.0)
}

fn main() {
    // `cargo bench` passes `--bench`; under `cargo test --all-targets` this runs one short
    // turn once as a smoke check instead of the full measurement.
    let full = std::env::args().any(|a| a == "--bench");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (turns, runs) = if full {
        (turns(), 5)
    } else {
        (
            turns()
                .into_iter()
                .filter(|t| t.0 == "unsafe chain")
                .collect(),
            1,
        )
    };
    println!(
        "| turn | streaming ms (min–max) | batch ms (min–max) | oracle ms | streaming/batch | streaming/oracle |"
    );
    println!("|---|---|---|---|---|---|");
    for turn in turns {
        let mut s = Vec::new();
        let mut b = Vec::new();
        for _ in 0..runs {
            s.push(rt.block_on(streaming(&turn)));
            b.push(rt.block_on(batch(&turn)));
        }
        let (sm, smin, smax) = stats(s);
        let (bm, bmin, bmax) = stats(b);
        let o = oracle(&turn, 10);
        assert!(sm >= o, "a real run cannot beat the zero-overhead bound");
        println!(
            "| {} | {} ({}–{}) | {} ({}–{}) | {} | {:.2} | {:.3} |",
            turn.0,
            ms(sm),
            ms(smin),
            ms(smax),
            ms(bm),
            ms(bmin),
            ms(bmax),
            ms(o),
            sm.as_secs_f64() / bm.as_secs_f64(),
            sm.as_secs_f64() / o.as_secs_f64()
        );
    }
}
