//! Speed check for the file tools against `rg` and `fd` (Debian's `fdfind`), on a generated
//! tree. Run in release: `cargo run -p tools-builtin --release --example bench_files [-- DIR]`.
//! With a DIR (a real source tree), only the search comparisons run on it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::{ProgressSender, Tool, ToolUseContext};
use tools_builtin::{Glob, Grep, Read};

const FILES: usize = 20_000;
const FILE_BYTES: usize = 10_500;

fn generate(root: &Path) {
    let words = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "lambda", "sigma", "omega",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..FILES {
        let dir = root.join(format!("d{}/s{}", i % 40, i % 7));
        fs::create_dir_all(&dir).unwrap();
        let ext = ["rs", "py", "txt", "md", "js"][i % 5];
        let mut body = String::with_capacity(FILE_BYTES + 100);
        while body.len() < FILE_BYTES {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            body.push_str(words[(seed % 10) as usize]);
            body.push(if seed.is_multiple_of(11) { '\n' } else { ' ' });
        }
        if i % 50 == 0 {
            body.push_str(&format!("\nneedle{i} found here\n"));
        }
        fs::write(dir.join(format!("f{i}.{ext}")), body).unwrap();
    }
}

fn best_of<F: FnMut()>(runs: usize, mut f: F) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .min()
        .unwrap()
}

fn run_cmd(cmd: &str, args: &[&str], dir: &Path) -> usize {
    let out = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    out.stdout.iter().filter(|&&b| b == b'\n').count()
}

async fn call(tool: &dyn Tool, ctx: &ToolUseContext, input: Value) -> usize {
    let input = tool.parse_input(input).unwrap();
    let out = tool
        .call(input, ctx.clone(), ProgressSender::none())
        .await
        .unwrap();
    out.data.content.joined_text().lines().count()
}

fn peak_rss_kib() -> u64 {
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

const RG: &[&str] = &[
    "--no-config",
    "--hidden",
    "--max-columns=500",
    "--glob=!.git",
    "--glob=!.svn",
    "--glob=!.hg",
    "--glob=!.bzr",
];

fn row(name: &str, ours: Duration, theirs: Duration, tool: &str) {
    println!(
        "| {name} | {:.1} ms | {:.1} ms ({tool}) | {:.2} |",
        ours.as_secs_f64() * 1e3,
        theirs.as_secs_f64() * 1e3,
        ours.as_secs_f64() / theirs.as_secs_f64()
    );
}

#[tokio::main]
async fn main() {
    let arg = std::env::args().nth(1).map(PathBuf::from);
    let tmp = tempfile::tempdir().unwrap();
    let root = match &arg {
        Some(dir) => dir.clone(),
        None => {
            let t = Instant::now();
            generate(tmp.path());
            eprintln!("generated {FILES} files in {:?}", t.elapsed());
            tmp.path().to_path_buf()
        }
    };
    let ctx = ToolUseContext::new(&root);
    let runs = 5;
    println!("| case | Toolwright | reference | ratio |\n|---|---|---|---|");
    // Warm the page cache once.
    run_cmd("rg", &[RG, &["-l", "needle"]].concat(), &root);

    let mut n = (0, 0);
    let ours = best_of(runs, || {
        n.0 = futures_block(call(
            &Grep,
            &ctx,
            json!({"pattern": "needle\\d+", "head_limit": 0}),
        ))
    });
    let theirs = best_of(runs, || {
        n.1 = run_cmd("rg", &[RG, &["-l", "needle\\d+"]].concat(), &root)
    });
    row(
        &format!(
            "Grep files_with_matches ({} / {} files)",
            n.0.saturating_sub(1),
            n.1
        ),
        ours,
        theirs,
        "rg -l",
    );

    let ours = best_of(runs, || {
        n.0 = futures_block(call(
            &Grep,
            &ctx,
            json!({"pattern": "needle\\d+", "output_mode": "content", "head_limit": 0}),
        ))
    });
    let theirs = best_of(runs, || {
        n.1 = run_cmd("rg", &[RG, &["-n", "needle\\d+"]].concat(), &root)
    });
    row(
        &format!("Grep content -n ({} / {} lines)", n.0, n.1),
        ours,
        theirs,
        "rg -n",
    );

    let ours = best_of(runs, || {
        n.0 = futures_block(call(
            &Grep,
            &ctx,
            json!({"pattern": "lambda sigma", "output_mode": "count", "head_limit": 0}),
        ))
    });
    let theirs = best_of(runs, || {
        n.1 = run_cmd("rg", &[RG, &["-c", "lambda sigma"]].concat(), &root)
    });
    row(
        &format!(
            "Grep count, dense ({} / {} files)",
            n.0.saturating_sub(2),
            n.1
        ),
        ours,
        theirs,
        "rg -c",
    );

    let ours = best_of(runs, || {
        n.0 = futures_block(call(&Glob, &ctx, json!({"pattern": "**/*.rs"})))
    });
    let theirs = best_of(runs, || {
        n.1 = run_cmd("fdfind", &["-H", "-I", "-t", "f", "--glob", "*.rs"], &root)
    });
    row(
        &format!("Glob **/*.rs (100 of {} files)", n.1),
        ours,
        theirs,
        "fdfind -HI",
    );

    if arg.is_none() {
        let big = tmp.path().join("huge.log");
        {
            let mut f = fs::File::create(&big).unwrap();
            for i in 0..100_000 {
                writeln!(f, "log line {i}").unwrap();
            }
            f.set_len(1 << 30).unwrap();
        }
        let before = peak_rss_kib();
        let t = Instant::now();
        futures_block(call(
            &Read,
            &ctx,
            json!({"file_path": big, "offset": 50_000, "limit": 100}),
        ));
        let took = t.elapsed();
        let after = peak_rss_kib();
        println!(
            "\nRead 1 GiB (sparse) offset 50000 limit 100: {:.0} ms, peak RSS {} MiB (was {} MiB before the read)",
            took.as_secs_f64() * 1e3,
            after / 1024,
            before / 1024
        );
    }
}

/// Runs a future to completion from synchronous timing code.
fn futures_block<F: std::future::Future>(f: F) -> F::Output {
    tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(f))
}
