//! Runs one built-in tool once, through tool-core's API (`parse_input`, then `call`), in the
//! current directory, and prints the text the model would see. `cargo xtask bench` times this
//! binary as a whole process against `rg` and `fdfind` (both sides pay process start), and
//! reads its peak resident set for the memory figures.
//!
//! ```text
//! tool_once [--peak-rss] <Read|Glob|Grep|Bash> '<input JSON>'
//! cargo run --release -p tools-builtin --example tool_once -- Grep '{"pattern": "fn main", "head_limit": 0}'
//! ```
//!
//! With `--peak-rss` the last line on standard error is `peak_rss_kib=<VmHWM>`. Exits 1 when
//! the call fails, 2 on bad arguments.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use tool_core::{ProgressSender, Tool, ToolUseContext};
use tools_builtin::{Bash, Glob, Grep, Read};

fn tool(name: &str) -> Option<Arc<dyn Tool>> {
    Some(match name {
        "Read" => Arc::new(Read),
        "Glob" => Arc::new(Glob),
        "Grep" => Arc::new(Grep),
        "Bash" => Arc::new(Bash::default()),
        _ => return None,
    })
}

/// This process's peak resident set, in KiB (`VmHWM` of `/proc/self/status`).
fn peak_rss_kib() -> Option<u64> {
    std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

async fn run(name: &str, input: &str) -> Result<String, String> {
    let tool =
        tool(name).ok_or_else(|| format!("unknown tool `{name}`: Read, Glob, Grep or Bash"))?;
    let input: serde_json::Value =
        serde_json::from_str(input).map_err(|e| format!("input is not JSON: {e}"))?;
    let input = tool.parse_input(input).map_err(|e| e.to_string())?;
    let cwd = std::env::current_dir().map_err(|e| format!("current directory: {e}"))?;
    let results = tempfile::tempdir().map_err(|e| format!("results directory: {e}"))?;
    let ctx = ToolUseContext::new(cwd).with_results_dir(results.path().to_path_buf());
    let out = tool
        .call(input, ctx, ProgressSender::none())
        .await
        .map_err(|e| e.to_model_text())?;
    Ok(out.data.content.joined_text())
}

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let rss = args.first().is_some_and(|a| a == "--peak-rss");
    if rss {
        args.remove(0);
    }
    let [name, input] = args.as_slice() else {
        eprintln!("usage: tool_once [--peak-rss] <Read|Glob|Grep|Bash> '<input JSON>'");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tool_once: tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(run(name, input));
    let code = match result {
        Ok(text) => {
            let mut stdout = std::io::stdout().lock();
            let written = stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.write_all(b"\n"))
                .and_then(|()| stdout.flush());
            match written {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("tool_once: stdout: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(e) => {
            eprintln!("tool_once: {name} failed: {e}");
            ExitCode::FAILURE
        }
    };
    if rss {
        eprintln!("peak_rss_kib={}", peak_rss_kib().unwrap_or(0));
    }
    code
}
