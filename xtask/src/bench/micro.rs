//! The in-process micro-benchmark sections. `shell` (Bash spawn, crates/tools-builtin/
//! benches/spawn.rs) and `hooks` (a command hook, crates/tool-hooks/benches/hooks.rs) compare
//! with a bare spawn in interleaved rounds, so that load from elsewhere hits both sides alike;
//! `perms` (a permission decision) and `search` (ToolSearch) are criterion benches, whose
//! figure is criterion's median time per iteration with the smallest and largest
//! per-iteration sample mean.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::Section;
use super::build::{Exes, Kind};
use super::criterion::{self, Results};
use super::report::{Figure, Row, Target, Unit};

fn home(root: &Path) -> PathBuf {
    root.join("target/bench/criterion")
}

/// Runs the criterion bench `bench` with `filter` and returns its results.
fn run_bench(
    root: &Path,
    exes: &Exes,
    bench: &str,
    filter: Option<&str>,
) -> crate::Result<Results> {
    criterion::run(exes.get(Kind::Bench, bench)?, &home(root), filter)?;
    Ok(Results::load(&home(root)))
}

fn compare(
    out: &mut Section,
    results: &Results,
    (section, figure): (&str, &str),
    ours: &str,
    (name, base): (&str, &str),
    target: Target,
) {
    let row = match (results.micros(ours), results.micros(base)) {
        (Ok(o), Ok(b)) if o.median >= 1000.0 => Row::compare(
            section,
            figure,
            Unit::Millis,
            o.scaled(1e-3),
            (name, b.scaled(1e-3)),
            target,
        ),
        (Ok(o), Ok(b)) => Row::compare(section, figure, Unit::Micros, o, (name, b), target),
        (Err(e), _) | (_, Err(e)) => Row::failed(section, figure, e.to_string()),
    };
    out.rows.push(row);
}

/// The rows of the spawn bench's JSON (samples in ms per variant).
pub fn shell_rows(doc: &Value) -> crate::Result<Vec<Row>> {
    let figure = |variant: &str| samples(doc, variant);
    let base = ("tokio::process bash -c", figure("baseline")?);
    let rounds = doc["rounds"].as_u64().unwrap_or(0);
    Ok(vec![
        Row::compare(
            "shell",
            "Bash spawn (`echo hi` through the Bash tool)",
            Unit::Millis,
            figure("tool")?,
            base,
            Target::RatioAtMost(1.3),
        )
        .with_note(format!("median of {rounds} interleaved rounds")),
        Row::compare(
            "shell",
            "… bare spawn in a session of its own (as the tool spawns under a terminal)",
            Unit::Millis,
            figure("new_session")?,
            base,
            Target::Report,
        )
        .with_note("what a new session costs (fork instead of posix_spawn)"),
    ])
}

/// Runs the bench `bench` with `TOOLWRIGHT_BENCH_OUT` set and returns the JSON it wrote.
fn json_bench(root: &Path, exes: &Exes, bench: &str) -> crate::Result<Value> {
    let exe = exes.get(Kind::Bench, bench)?;
    let json_path = root.join(format!("target/bench/{bench}.json"));
    let _ = std::fs::remove_file(&json_path);
    println!("==> {bench} bench (interleaved rounds)");
    let status = Command::new(exe)
        .arg("--bench")
        .env("TOOLWRIGHT_BENCH_OUT", &json_path)
        .status()
        .map_err(|e| format!("{bench} bench: could not start: {e}"))?;
    if !status.success() {
        return Err(format!("{bench} bench failed ({status})").into());
    }
    let text =
        std::fs::read_to_string(&json_path).map_err(|e| format!("{}: {e}", json_path.display()))?;
    Ok(serde_json::from_str(&text)?)
}

/// The figure of `samples_ms.<variant>` in a bench's JSON.
fn samples(doc: &Value, variant: &str) -> crate::Result<Figure> {
    let xs: Vec<f64> = doc["samples_ms"][variant]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    Ok(Figure::from_samples(&xs).ok_or_else(|| format!("no samples for `{variant}`"))?)
}

/// `shell`: `echo hi` through the Bash tool against tokio::process of the same command.
pub fn shell(root: &Path, exes: &Exes, out: &mut Section) -> crate::Result {
    out.rows
        .extend(shell_rows(&json_bench(root, exes, "spawn")?)?);
    Ok(())
}

/// `hooks`: one command hook round-trip against `sh -c 'cat >/dev/null'` with the same stdin,
/// in interleaved rounds (crates/tool-hooks/benches/hooks.rs with `TOOLWRIGHT_BENCH_OUT`).
pub fn hooks(root: &Path, exes: &Exes, out: &mut Section) -> crate::Result {
    let doc = json_bench(root, exes, "hooks")?;
    let f = |k: &str| samples(&doc, k);
    let rounds = doc["rounds"].as_u64().unwrap_or(0);
    out.rows.push(
        Row::compare(
            "hooks",
            "command hook round-trip (PreToolUse, `cat >/dev/null`)",
            Unit::Millis,
            f("hook")?,
            ("sh -c cat, same stdin", f("bare")?),
            Target::RatioAtMost(1.2),
        )
        .with_note(format!("median of {rounds} interleaved rounds")),
    );
    Ok(())
}

/// `perms`: a Bash decision against 1,002 rules, compared with the tree-sitter parse alone;
/// a path decision against 1,000 rules.
pub fn perms(root: &Path, exes: &Exes, out: &mut Section) -> crate::Result {
    let results = run_bench(
        root,
        exes,
        "decide",
        Some("^(tree-sitter parse only|decide )"),
    )?;
    compare(
        out,
        &results,
        (
            "perms",
            "permission decision, Bash with 5 subcommands, 1,002 rules",
        ),
        "decide Bash, 5 subcommands, 1002 rules",
        (
            "tree-sitter parse alone",
            "tree-sitter parse only (5 subcommands)",
        ),
        Target::Report,
    );
    out.rows
        .push(match results.micros("decide Edit path, 1000 path rules") {
            Ok(f) => Row::alone(
                "perms",
                "permission decision, Edit path, 1,000 path rules",
                Unit::Micros,
                f,
                Target::Report,
            ),
            Err(e) => Row::failed("perms", "permission decision, Edit path", e.to_string()),
        });
    Ok(())
}

/// The slowest query of a ToolSearch run: (query, figure).
pub fn slowest<'a>(
    figures: impl IntoIterator<Item = (&'a str, Figure)>,
) -> Option<(&'a str, Figure)> {
    figures
        .into_iter()
        .max_by(|a, b| a.1.median.total_cmp(&b.1.median))
}

/// `search`: a ToolSearch query over 10,000 generated tools; the slowest query form counts.
pub fn search(root: &Path, exes: &Exes, out: &mut Section) -> crate::Result {
    const GROUP: &str = "ToolSearch 10000 tools/";
    let results = run_bench(root, exes, "search", None)?;
    let mut figures = Vec::new();
    for id in results.ids_with_prefix(GROUP) {
        if let Some(q) = id
            .strip_prefix(GROUP)
            .and_then(|f| f.strip_prefix("query "))
        {
            figures.push((q, results.micros(id)?));
        }
    }
    let count = figures.len();
    let (query, f) = slowest(figures).ok_or("no ToolSearch query results")?;
    out.rows.push(
        Row::alone(
            "search",
            "ToolSearch query, 10,000 tools (slowest query form)",
            Unit::Micros,
            f,
            Target::Below(1000.0),
        )
        .with_note(format!("slowest of {count} query forms: `{query}`")),
    );
    if let Ok(build) = results.micros(&format!("{GROUP}build index")) {
        out.rows.push(Row::alone(
            "search",
            "ToolSearch index build, 10,000 tools",
            Unit::Millis,
            build.scaled(1e-3),
            Target::Report,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_rows_compare_medians_of_the_interleaved_samples() {
        let doc = serde_json::json!({"rounds": 3, "samples_ms": {
            "baseline": [2.0, 2.2, 2.1], "new_session": [2.3, 2.2, 2.4],
            "tool": [2.6, 2.8, 2.7]
        }});
        let rows = shell_rows(&doc).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].ours.unwrap().median, 2.7);
        assert_eq!(rows[0].baseline.as_ref().unwrap().1.median, 2.1);
        assert_eq!(rows[0].target, Target::RatioAtMost(1.3));
        assert_eq!(rows[0].note, "median of 3 interleaved rounds");
        assert_eq!(rows[1].ours.unwrap().median, 2.3);
        let err = shell_rows(&serde_json::json!({"samples_ms": {}})).unwrap_err();
        assert!(
            err.to_string().contains("no samples for `baseline`"),
            "{err}"
        );
    }

    #[test]
    fn the_slowest_query_counts() {
        let f = |m: f64| Figure {
            median: m,
            min: m,
            max: m,
            runs: 3,
        };
        let got = slowest([("a", f(3.0)), ("b", f(9.0)), ("c", f(1.0))]).unwrap();
        assert_eq!(got.0, "b");
        assert!(slowest(Vec::<(&str, Figure)>::new()).is_none());
    }
}
