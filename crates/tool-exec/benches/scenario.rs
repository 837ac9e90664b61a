//! Scenario bench: recorded-style turns (tool_use blocks arriving over a streamed response,
//! tools with given durations), read from the files of `benches/scenarios/` at the workspace
//! root (or the directory in `TOOLWRIGHT_SCENARIOS`), each run three ways in the same
//! process:
//!
//! - **streaming**: each block is handed to the executor the moment it arrives;
//! - **batch**: the same blocks run with `run_tools` after the stream has ended;
//! - **oracle**: the lower bound, the finish time of the same schedule with zero overhead,
//!   computed by simulating the executor's rules (FIFO, unsafe calls alone, the cap, and the
//!   default sibling policy: a failing Bash that may write cancels the others) on the exact durations.
//!
//! Then a scaling table: the executor's wall time and peak memory for 10, 100, 1,000 and
//! 10,000 queued no-op calls, each count measured in a fresh child process (this binary run
//! with `--scale N`) so that the peak resident set (`VmHWM`) belongs to that count alone.
//!
//! Prints Markdown tables (median of 5 runs, min–max); with `TOOLWRIGHT_BENCH_OUT=<file>`
//! also writes every raw sample there as JSON for `cargo xtask bench exec`. Under
//! `cargo test --all-targets` (no `--bench` argument) it parses every scenario file and runs
//! the shortest turn once, as a smoke check.
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss
)]

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::{
    MaxResultSize, ProgressSender, Tool, ToolError, ToolResult, ToolUseContext, async_trait,
};
use tool_exec::{
    DEFAULT_MAX_CONCURRENCY, ExecutorConfig, ExecutorEvent, Pipeline, PlannedCall,
    StreamingToolExecutor, ToolUse, run_tools, schedule_makespan,
};

/// One turn, as written in a scenario file (see `benches/scenarios/README.md`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Turn {
    name: String,
    /// Read for the documentation of the file; not used by the bench.
    #[serde(default, rename = "description")]
    _description: String,
    stream_end_ms: u64,
    #[serde(default)]
    target_vs_batch: Option<f64>,
    calls: Vec<Call>,
    #[serde(skip)]
    file: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Call {
    tool: String,
    at_ms: u64,
    ms: u64,
    safe: bool,
    #[serde(default)]
    fails: bool,
}

/// A tool that sleeps for `ms` (or until cancelled), then succeeds or fails as told.
struct Timed {
    name: String,
}

#[async_trait]
impl Tool for Timed {
    fn name(&self) -> &str {
        &self.name
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "ms": {"type": "integer"}, "safe": {"type": "boolean"}, "fails": {"type": "boolean"}
        }})
    }
    fn description(&self) -> Cow<'_, str> {
        "sleeps".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        input["safe"].as_bool().unwrap_or(false)
    }
    fn is_read_only(&self, input: &Value) -> bool {
        self.is_concurrency_safe(input)
    }
    async fn call(
        &self,
        input: Value,
        ctx: ToolUseContext,
        _p: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        let ms = input["ms"].as_u64().unwrap_or(0);
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => {}
            () = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled(None)),
        }
        if input["fails"].as_bool().unwrap_or(false) {
            return Err(ToolError::Message("Exit code 1".into()));
        }
        Ok(ToolResult::text("done"))
    }
}

/// Does nothing: the cost of the executor alone.
struct Noop;

#[async_trait]
impl Tool for Noop {
    fn name(&self) -> &str {
        "Noop"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    fn description(&self) -> Cow<'_, str> {
        "does nothing".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn is_concurrency_safe(&self, _: &Value) -> bool {
        true
    }
    async fn call(
        &self,
        _input: Value,
        _ctx: ToolUseContext,
        _p: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text("ok"))
    }
}

fn scenario_dir() -> PathBuf {
    std::env::var_os("TOOLWRIGHT_SCENARIOS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/scenarios"),
        PathBuf::from,
    )
}

/// Every `*.json` file of `dir`, parsed and checked, in file-name order.
fn load_turns(dir: &Path) -> Vec<Turn> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("scenario directory {}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no *.json scenario in {}", dir.display());
    files
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            let mut turn: Turn = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("scenario {}: {e}", path.display()));
            turn.file = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(!turn.calls.is_empty(), "{}: no calls", turn.file);
            assert!(
                turn.calls.windows(2).all(|w| w[0].at_ms <= w[1].at_ms),
                "{}: calls must be listed in arrival order",
                turn.file
            );
            assert!(
                turn.calls.iter().all(|c| c.at_ms <= turn.stream_end_ms),
                "{}: a call arrives after stream_end_ms",
                turn.file
            );
            turn
        })
        .collect()
}

fn ctx_for(names: impl IntoIterator<Item = String>) -> ToolUseContext {
    let mut names: Vec<String> = names.into_iter().collect();
    names.sort();
    names.dedup();
    let tools: Vec<Arc<dyn Tool>> = names
        .into_iter()
        .map(|name| Arc::new(Timed { name }) as Arc<dyn Tool>)
        .collect();
    ToolUseContext::new(std::env::temp_dir()).with_tools(tools)
}

fn ctx(turn: &Turn) -> ToolUseContext {
    ctx_for(turn.calls.iter().map(|c| c.tool.clone()))
}

fn blocks(turn: &Turn) -> Vec<(ToolUse, u64)> {
    turn.calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let input = json!({"ms": c.ms, "safe": c.safe, "fails": c.fails});
            (ToolUse::new(format!("toolu_{i}"), &c.tool, input), c.at_ms)
        })
        .collect()
}

async fn streaming(turn: &Turn) -> Duration {
    let start = Instant::now();
    let mut exec = StreamingToolExecutor::new(
        Arc::new(Pipeline::allow_all()),
        ctx(turn),
        ExecutorConfig::default(),
    );
    for (tool_use, at) in blocks(turn) {
        tokio::time::sleep_until((start + Duration::from_millis(at)).into()).await;
        exec.add_tool(tool_use);
    }
    tokio::time::sleep_until((start + Duration::from_millis(turn.stream_end_ms)).into()).await;
    exec.finish();
    let mut results = 0;
    while let Some(event) = exec.next().await {
        results += usize::from(matches!(event, ExecutorEvent::Result(_)));
    }
    let took = start.elapsed();
    assert_eq!(
        results,
        turn.calls.len(),
        "{}: one result per call",
        turn.file
    );
    took
}

async fn batch(turn: &Turn) -> Duration {
    let start = Instant::now();
    tokio::time::sleep_until((start + Duration::from_millis(turn.stream_end_ms)).into()).await;
    let uses = blocks(turn).into_iter().map(|(u, _)| u).collect();
    let (results, _) = run_tools(
        Arc::new(Pipeline::allow_all()),
        ctx(turn),
        uses,
        ExecutorConfig::default(),
    )
    .await;
    let took = start.elapsed();
    assert_eq!(
        results.len(),
        turn.calls.len(),
        "{}: one result per call",
        turn.file
    );
    took
}

/// Start and finish of each call under the executor's rules with zero overhead (the same
/// rules as [`schedule_makespan`], per call).
fn simulate(calls: &[PlannedCall], cap: usize) -> Vec<(Duration, Duration)> {
    let cap = cap.max(1);
    let mut times: Vec<Option<(Duration, Duration)>> = vec![None; calls.len()];
    let mut next = 0;
    let mut now = Duration::ZERO;
    while next < calls.len() {
        let running: Vec<usize> = (0..next)
            .filter(|&i| times[i].is_some_and(|(_, f)| f > now))
            .collect();
        let call = calls[next];
        let running_unsafe = running.iter().any(|&i| !calls[i].concurrency_safe);
        if call.arrival <= now
            && running.len() < cap
            && (running.is_empty() || (call.concurrency_safe && !running_unsafe))
        {
            times[next] = Some((now, now + call.duration));
            next += 1;
            continue;
        }
        let wake = running
            .iter()
            .filter_map(|&i| times[i].map(|(_, f)| f))
            .chain([call.arrival])
            .filter(|t| *t > now)
            .min();
        match wake {
            Some(t) => now = t,
            None => break,
        }
    }
    times.into_iter().flatten().collect()
}

/// The zero-overhead finish time of the turn: the simulated schedule, cut short where a
/// failing Bash that is not read-only cancels its siblings (those running stop then; later ones end on arrival),
/// and never before the stream ends.
fn oracle(turn: &Turn, cap: usize) -> Duration {
    let calls: Vec<PlannedCall> = turn
        .calls
        .iter()
        .map(|c| PlannedCall {
            concurrency_safe: c.safe,
            arrival: Duration::from_millis(c.at_ms),
            duration: Duration::from_millis(c.ms),
        })
        .collect();
    let times = simulate(&calls, cap);
    let plain = times.iter().map(|t| t.1).max().unwrap_or_default();
    assert_eq!(
        plain,
        schedule_makespan(&calls, cap),
        "{}: simulation",
        turn.file
    );
    let failure = turn
        .calls
        .iter()
        .zip(&times)
        // A read-only Bash (here: a safe one) that fails cancels nothing.
        .filter(|(c, _)| c.fails && c.tool == "Bash" && !c.safe)
        .map(|(_, t)| t.1)
        .min();
    let end = match failure {
        None => plain,
        Some(f) => calls
            .iter()
            .zip(&times)
            .map(|(c, &(start, finish))| {
                if start < f {
                    finish.min(f)
                } else {
                    c.arrival.max(f)
                }
            })
            .max()
            .unwrap_or_default(),
    };
    end.max(Duration::from_millis(turn.stream_end_ms))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn stats(xs: &[f64]) -> (f64, f64, f64) {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn rss_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Child mode: `n` no-op calls queued at once, run to the end; prints one JSON line.
fn scale_child(rt: &tokio::runtime::Runtime, n: usize) {
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Noop)];
    let ctx = ToolUseContext::new(std::env::temp_dir()).with_tools(tools);
    let uses: Vec<ToolUse> = (0..n)
        .map(|i| ToolUse::new(format!("toolu_{i}"), "Noop", json!({})))
        .collect();
    let start_rss = rss_kib("VmRSS:");
    let took = rt.block_on(async move {
        let start = Instant::now();
        let mut exec = StreamingToolExecutor::new(
            Arc::new(Pipeline::allow_all()),
            ctx,
            ExecutorConfig::default(),
        );
        for u in uses {
            exec.add_tool(u);
        }
        exec.finish();
        let mut results = 0;
        while let Some(event) = exec.next().await {
            results += usize::from(matches!(event, ExecutorEvent::Result(_)));
        }
        assert_eq!(results, n);
        start.elapsed()
    });
    println!(
        "{}",
        json!({"calls": n, "wall_ms": ms(took), "start_rss_kib": start_rss, "peak_rss_kib": rss_kib("VmHWM:")})
    );
}

fn scale_runs(n: usize, runs: usize) -> Vec<Value> {
    let exe = std::env::current_exe().unwrap();
    (0..runs)
        .map(|_| {
            let out = std::process::Command::new(&exe)
                .args(["--scale", &n.to_string()])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "scale child failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let text = String::from_utf8_lossy(&out.stdout);
            let line = text.lines().last().unwrap_or_default();
            serde_json::from_str(line).unwrap_or_else(|e| panic!("scale child said {line:?}: {e}"))
        })
        .collect()
}

fn write_atomically(path: &Path, text: &str) {
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    if let Some(i) = args.iter().position(|a| a == "--scale") {
        let n = args.get(i + 1).and_then(|a| a.parse().ok()).unwrap();
        scale_child(&rt, n);
        return;
    }
    // `cargo bench` (and `cargo xtask bench`) pass `--bench`; under `cargo test --all-targets`
    // this checks every file and runs the shortest turn once instead.
    let full = args.iter().any(|a| a == "--bench");
    let dir = scenario_dir();
    let mut turns = load_turns(&dir);
    let runs = if full { 5 } else { 1 };
    if !full {
        turns.sort_by_key(|t| t.stream_end_ms);
        turns.truncate(1);
    }
    let cap = DEFAULT_MAX_CONCURRENCY;
    println!(
        "| turn | streaming ms (min–max) | batch ms (min–max) | oracle ms | streaming/batch | streaming/oracle |"
    );
    println!("|---|---|---|---|---|---|");
    let mut out_turns = Vec::new();
    for turn in &turns {
        let (mut s, mut b) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            s.push(ms(rt.block_on(streaming(turn))));
            b.push(ms(rt.block_on(batch(turn))));
        }
        let o = ms(oracle(turn, cap));
        let (sm, smin, smax) = stats(&s);
        let (bm, bmin, bmax) = stats(&b);
        assert!(
            smin >= o - 1.0,
            "{}: a real run ({smin:.1} ms) cannot beat the zero-overhead bound ({o:.1} ms)",
            turn.file
        );
        println!(
            "| {} | {sm:.1} ({smin:.1}–{smax:.1}) | {bm:.1} ({bmin:.1}–{bmax:.1}) | {o:.1} | {:.2} | {:.3} |",
            turn.name,
            sm / bm,
            sm / o
        );
        out_turns.push(json!({
            "file": turn.file, "name": turn.name, "calls": turn.calls.len(),
            "target_vs_batch": turn.target_vs_batch,
            "streaming_ms": s, "batch_ms": b, "oracle_ms": o,
        }));
    }
    let counts: &[usize] = if full {
        &[10, 100, 1_000, 10_000]
    } else {
        &[10]
    };
    println!("\n| queued no-op calls | wall ms (min–max) | µs per call | peak RSS MiB |");
    println!("|---|---|---|---|");
    let mut out_scaling = Vec::new();
    for &n in counts {
        let samples = scale_runs(n, runs);
        let walls: Vec<f64> = samples
            .iter()
            .map(|v| v["wall_ms"].as_f64().unwrap())
            .collect();
        let peak = samples
            .iter()
            .filter_map(|v| v["peak_rss_kib"].as_u64())
            .max()
            .unwrap_or(0);
        let (wm, wmin, wmax) = stats(&walls);
        println!(
            "| {n} | {wm:.2} ({wmin:.2}–{wmax:.2}) | {:.2} | {:.1} |",
            wm * 1000.0 / n as f64,
            peak as f64 / 1024.0
        );
        out_scaling.push(json!({"calls": n, "runs": samples}));
    }
    if let Some(path) = std::env::var_os("TOOLWRIGHT_BENCH_OUT") {
        let doc = json!({"max_concurrency": cap, "turns": out_turns, "scaling": out_scaling});
        write_atomically(Path::new(&path), &doc.to_string());
    }
}
