//! `cargo xtask bench [all|exec]`: runs the benchmarks and writes one Markdown report,
//! every figure a ratio against a baseline measured in the same run.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;

/// Criterion's point estimate (mean, in ns) of one benchmark.
fn criterion_mean_ns(root: &Path, group: &str, bench: &str) -> super::Result<f64> {
    let dir = |s: &str| s.replace(['/', ':', '\\', '?', '*', '"', '<', '>', '|'], "_");
    let path = root
        .join("target/criterion")
        .join(dir(group))
        .join(dir(bench))
        .join("new/estimates.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: Value = serde_json::from_str(&text)?;
    json["mean"]["point_estimate"]
        .as_f64()
        .ok_or_else(|| format!("{}: no mean estimate", path.display()).into())
}

fn exec(root: &Path, report: &mut String) -> super::Result {
    super::run(
        "cargo bench -p tool-exec --bench pipeline",
        super::cargo().args([
            "bench",
            "-p",
            "tool-exec",
            "--bench",
            "pipeline",
            "--",
            "--warm-up-time",
            "1",
            "--measurement-time",
            "3",
        ]),
    )?;
    let base = criterion_mean_ns(root, "no-op call", "baseline: tokio spawn + join")?;
    let pipeline = criterion_mean_ns(root, "no-op call", "run_tool_use in a spawned task")?;
    let executor = criterion_mean_ns(root, "no-op call", "streaming executor, one call")?;
    writeln!(report, "## exec\n")?;
    writeln!(
        report,
        "| figure | ours | baseline | ratio | target |\n|---|---|---|---|---|"
    )?;
    writeln!(
        report,
        "| pipeline overhead per no-op call | {:.2} µs | {:.2} µs (tokio spawn+join) | {:.2} | ≤ 3 |",
        pipeline / 1000.0,
        base / 1000.0,
        pipeline / base
    )?;
    writeln!(
        report,
        "| executor (driver + pipeline), one no-op call | {:.2} µs | {:.2} µs (tokio spawn+join) | {:.2} | |",
        executor / 1000.0,
        base / 1000.0,
        executor / base
    )?;
    println!("==> cargo bench -p tool-exec --bench scenario");
    let out = super::cargo()
        .args(["bench", "-q", "-p", "tool-exec", "--bench", "scenario"])
        .current_dir(root)
        .output()
        .map_err(|e| format!("scenario bench: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "scenario bench failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let table: String = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| format!("{l}\n"))
        .collect();
    writeln!(
        report,
        "\n### streaming turns (median of 5; targets: streaming/batch ≤ 0.70 read-heavy, streaming/oracle ≤ 1.05)\n\n{table}"
    )?;
    Ok(())
}

/// Runs the chosen benchmarks and writes `target/bench/report.md`.
pub fn run(root: &Path, args: &[String]) -> super::Result {
    let which = args.first().map_or("all", String::as_str);
    let mut report = String::from("# Toolwright benchmarks\n\n");
    match which {
        "all" | "exec" => exec(root, &mut report)?,
        other => return Err(format!("unknown bench `{other}`: expected all or exec").into()),
    }
    let dir = root.join("target/bench");
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("report.md"), &report)?;
    println!("\n{report}");
    println!("(written to {})", dir.join("report.md").display());
    Ok(())
}
