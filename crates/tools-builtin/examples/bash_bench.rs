//! Bash figures, in one run: the spawn overhead of the Bash tool against a bare
//! `tokio::process::Command` of the same command (median of N interleaved runs), and the
//! peak RSS of this process while a command prints 1 GiB.
//!
//! `cargo run --release -p tools-builtin --example bash_bench [N]`
#![allow(
    missing_docs,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::cast_precision_loss
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tool_core::{ProgressSender, Tool, ToolUseContext};
use tools_builtin::Bash;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0.0);
    kb / 1024.0
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path());
    let tool: Arc<dyn Tool> = Arc::new(Bash::default());
    let input = tool.parse_input(json!({"command": "true"})).unwrap();
    let (mut ours, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let t = Instant::now();
        tool.call(input.clone(), ctx.clone(), ProgressSender::none())
            .await
            .unwrap();
        ours.push(t.elapsed());
        let t = Instant::now();
        tokio::process::Command::new("bash")
            .args(["-c", "true"])
            .current_dir(dir.path())
            .output()
            .await
            .unwrap();
        bare.push(t.elapsed());
    }
    let (o, b) = (median(ours), median(bare));
    println!(
        "| Bash spawn, `true` (median of {n}) | {:.2} ms | {:.2} ms (tokio Command) | {:.2} | ≤ 1.3 |",
        o.as_secs_f64() * 1e3,
        b.as_secs_f64() * 1e3,
        o.as_secs_f64() / b.as_secs_f64()
    );
    let before = peak_rss_mib();
    let big = tool
        .parse_input(
            json!({"command": "head -c 1073741824 /dev/zero | tr '\\\\0' 'a'", "timeout": 600000}),
        )
        .unwrap();
    let t = Instant::now();
    let result = tool
        .call(
            big,
            ctx.clone().with_results_dir(dir.path().join("r")),
            ProgressSender::none(),
        )
        .await
        .unwrap();
    println!(
        "| peak RSS while a command prints 1 GiB | {:.1} MiB (before: {before:.1} MiB; took {:.1} s; result {} chars) | | | < 64 MiB |",
        peak_rss_mib(),
        t.elapsed().as_secs_f64(),
        result.data.content.joined_text().len()
    );
}
