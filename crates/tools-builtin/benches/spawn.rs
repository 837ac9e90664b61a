//! Bash spawn overhead: `echo hi` through the Bash tool (own process group, timeout, bounded
//! capture, persistent cwd, output shaping) against a bare `tokio::process::Command` of the
//! same command (`bash -c 'echo hi'`, output captured), in the same run. Target: ≤ 1.3x.
//!
//! A third variant, the bare spawn in a session of its own (as the tool spawns when it has a
//! controlling terminal; without one, as here, it uses a process group), shows what
//! the new session costs.
//!
//! The variants run interleaved, one call each per round in a rotating order, so that load
//! from elsewhere on a shared machine hits them alike; each figure is the median of the
//! rounds. Prints a Markdown table; with `TOOLWRIGHT_BENCH_OUT=<file>` also writes every
//! sample (ms) there as JSON for `cargo xtask bench shell`. Without `--bench` (under
//! `cargo test --all-targets`) it runs three rounds as a smoke check.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};
use tool_core::{ProgressSender, Tool, ToolUseContext};
use tools_builtin::Bash;

const COMMAND: &str = "echo hi";
const VARIANTS: [&str; 3] = ["baseline", "new_session", "tool"];

struct Setup {
    dir: PathBuf,
    tool: Arc<dyn Tool>,
    input: Value,
    ctx: ToolUseContext,
}

async fn bare(dir: &Path, session: bool) {
    let mut cmd = tokio::process::Command::new("bash");
    cmd.args(["-c", COMMAND])
        .current_dir(dir)
        .stdin(std::process::Stdio::null());
    if session {
        tool_core::process::new_session(cmd.as_std_mut());
    }
    let out = cmd.output().await.unwrap();
    assert_eq!(out.stdout, b"hi\n");
}

/// One call of `variant`, in ms.
async fn once(s: &Setup, variant: &str) -> f64 {
    let start = Instant::now();
    match variant {
        "baseline" => bare(&s.dir, false).await,
        "new_session" => bare(&s.dir, true).await,
        _ => {
            let out = s
                .tool
                .call(s.input.clone(), s.ctx.clone(), ProgressSender::none())
                .await
                .unwrap();
            assert_eq!(out.data.content.joined_text().trim(), "hi");
        }
    }
    start.elapsed().as_secs_f64() * 1e3
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (warm, rounds) = if full { (20, 300) } else { (0, 3) };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let tool: Arc<dyn Tool> = Arc::new(Bash::default());
    let setup = Setup {
        input: tool.parse_input(json!({ "command": COMMAND })).unwrap(),
        ctx: ToolUseContext::new(&dir),
        tool,
        dir,
    };
    let samples: Vec<Vec<f64>> = rt.block_on(async {
        let mut samples = vec![Vec::with_capacity(rounds); VARIANTS.len()];
        for round in 0..warm + rounds {
            for k in 0..VARIANTS.len() {
                let v = (round + k) % VARIANTS.len();
                let ms = once(&setup, VARIANTS[v]).await;
                if round >= warm {
                    samples[v].push(ms);
                }
            }
        }
        samples
    });
    let base = median(&samples[0]);
    println!(
        "| variant (median of {rounds} interleaved rounds) | ms | vs baseline |\n|---|---|---|"
    );
    for (name, s) in VARIANTS.iter().zip(&samples) {
        println!("| {name} | {:.3} | {:.2} |", median(s), median(s) / base);
    }
    if let Some(path) = std::env::var_os("TOOLWRIGHT_BENCH_OUT") {
        let doc: serde_json::Map<String, Value> = VARIANTS
            .iter()
            .zip(&samples)
            .map(|(name, s)| ((*name).to_owned(), json!(s)))
            .collect();
        let doc = json!({ "command": COMMAND, "rounds": rounds, "samples_ms": doc });
        let path = PathBuf::from(path);
        let tmp = path.with_extension("json.tmp");
        std::fs::write(&tmp, doc.to_string()).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
    }
}
