//! Overhead of running command hooks through [`HookRunner`] compared with a bare spawn.
//!
//! - `spawn/bare`: `sh -c 'cat >/dev/null'` fed the same stdin JSON, via tokio::process.
//! - `spawn/hook`: the same command as a PreToolUse hook (matching, stdin JSON, process
//!   group, bounded capture, output parsing and aggregation). Target: ≤ 1.2x bare.
//! - `parallel/one` vs `parallel/eight`: hooks of `sleep 0.1`; eight should take ≤ 1.3x one.
//!
//! With `TOOLWRIGHT_BENCH_OUT=<file>` (set by `cargo xtask bench hooks`) it measures `bare` and
//! `hook` instead in interleaved rounds (one of each per round, alternating which goes
//! first), so that load from elsewhere on a shared machine hits both alike, and writes the
//! samples (ms) there as JSON.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tool_core::{RuleSource, ToolUseContext};
use tool_hooks::{HookRunner, HooksConfig, ToolCallInfo};

fn runner(commands: &[&str]) -> HookRunner {
    let hooks: Vec<_> = commands
        .iter()
        .map(|c| json!({"type": "command", "command": c}))
        .collect();
    let (config, diags) = HooksConfig::from_hooks_value(
        &json!({"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}),
        RuleSource::UserSettings,
    );
    assert!(diags.is_empty());
    HookRunner::new(config)
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir();
    let ctx = ToolUseContext::new(&dir).with_session_id("bench");
    let call = ToolCallInfo::new(
        "Bash",
        json!({"command": "cargo test --workspace", "description": "run tests"}),
        "toolu_bench",
    );
    let input = serde_json::to_vec(&json!({
        "session_id": "bench", "transcript_path": "", "cwd": dir, "hook_event_name": "PreToolUse",
        "permission_mode": "default", "tool_name": "Bash",
        "tool_input": {"command": "cargo test --workspace", "description": "run tests"}, "tool_use_id": "toolu_bench"
    }))
    .unwrap();

    let mut g = c.benchmark_group("spawn");
    g.sample_size(50).measurement_time(Duration::from_secs(5));
    g.bench_function("bare", |b| {
        b.to_async(&rt).iter(|| async {
            let mut child = tokio::process::Command::new("sh")
                .arg("-c")
                .arg("cat >/dev/null")
                .current_dir(&dir)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(&input).await.unwrap();
            drop(stdin);
            child.wait_with_output().await.unwrap();
        });
    });
    let one = runner(&["cat >/dev/null"]);
    g.bench_function("hook", |b| {
        b.to_async(&rt).iter(|| async {
            let out = one.run_pre_tool_use(&call, &ctx).await;
            assert!(out.common.errors.is_empty());
        });
    });
    g.finish();

    let mut g = c.benchmark_group("parallel");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    let single = runner(&["sleep 0.1"]);
    g.bench_function("one", |b| {
        b.to_async(&rt)
            .iter(|| single.run_pre_tool_use(&call, &ctx))
    });
    let cmds: Vec<String> = (0..8).map(|i| format!("sleep 0.1; : {i}")).collect();
    let refs: Vec<&str> = cmds.iter().map(String::as_str).collect();
    let eight = runner(&refs);
    g.bench_function("eight", |b| {
        b.to_async(&rt).iter(|| eight.run_pre_tool_use(&call, &ctx))
    });
    g.finish();
}

/// `bare` and `hook` in interleaved rounds; the samples (ms) as JSON to `out`.
fn interleaved(out: &std::path::Path) {
    const WARM: usize = 20;
    const ROUNDS: usize = 300;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir();
    let ctx = ToolUseContext::new(&dir).with_session_id("bench");
    let call = ToolCallInfo::new(
        "Bash",
        json!({"command": "cargo test --workspace", "description": "run tests"}),
        "toolu_bench",
    );
    let input = serde_json::to_vec(&json!({
        "session_id": "bench", "transcript_path": "", "cwd": dir, "hook_event_name": "PreToolUse",
        "permission_mode": "default", "tool_name": "Bash",
        "tool_input": {"command": "cargo test --workspace", "description": "run tests"}, "tool_use_id": "toolu_bench"
    }))
    .unwrap();
    let one = runner(&["cat >/dev/null"]);
    let (bare, hook) = rt.block_on(async {
        let bare_once = || async {
            let start = std::time::Instant::now();
            let mut child = tokio::process::Command::new("sh")
                .arg("-c")
                .arg("cat >/dev/null")
                .current_dir(&dir)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(&input).await.unwrap();
            drop(stdin);
            child.wait_with_output().await.unwrap();
            start.elapsed().as_secs_f64() * 1e3
        };
        let hook_once = || async {
            let start = std::time::Instant::now();
            let out = one.run_pre_tool_use(&call, &ctx).await;
            assert!(out.common.errors.is_empty());
            start.elapsed().as_secs_f64() * 1e3
        };
        let (mut bare, mut hook) = (Vec::new(), Vec::new());
        for round in 0..WARM + ROUNDS {
            let (b, h) = if round % 2 == 0 {
                let b = bare_once().await;
                (b, hook_once().await)
            } else {
                let h = hook_once().await;
                (bare_once().await, h)
            };
            if round >= WARM {
                bare.push(b);
                hook.push(h);
            }
        }
        (bare, hook)
    });
    let doc = json!({"rounds": ROUNDS, "samples_ms": {"bare": bare, "hook": hook}});
    let tmp = out.with_extension("json.tmp");
    std::fs::write(&tmp, doc.to_string()).unwrap();
    std::fs::rename(&tmp, out).unwrap();
}

criterion_group!(benches, bench);

fn main() {
    if let Some(out) = std::env::var_os("TOOLWRIGHT_BENCH_OUT") {
        interleaved(std::path::Path::new(&out));
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
