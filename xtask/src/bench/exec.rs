//! `exec`: the pipeline's overhead per no-op call (criterion, crates/tool-exec/benches/
//! pipeline.rs) and the streaming turns of `benches/scenarios/` against batch and the oracle,
//! plus the executor's scaling table (crates/tool-exec/benches/scenario.rs).

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::build::{Exes, Kind};
use super::report::{Extra, Figure, Row, Target, Unit};
use super::{Section, criterion, scenario};

const SECTION: &str = "exec";

/// The streaming/oracle target of every turn.
pub const ORACLE_TARGET: f64 = 1.05;

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default()
}

/// The rows and the scaling table from the scenario bench's JSON.
pub fn from_scenario_json(doc: &Value) -> crate::Result<(Vec<Row>, Extra)> {
    let turns = doc["turns"]
        .as_array()
        .ok_or("scenario output: no `turns`")?;
    let mut rows = Vec::new();
    for t in turns {
        let name = t["name"].as_str().unwrap_or("?");
        let file = t["file"].as_str().unwrap_or("?");
        let streaming = Figure::from_samples(&floats(&t["streaming_ms"]))
            .ok_or_else(|| format!("scenario output: `{name}` has no streaming runs"))?;
        let batch = Figure::from_samples(&floats(&t["batch_ms"]))
            .ok_or_else(|| format!("scenario output: `{name}` has no batch runs"))?;
        let oracle = t["oracle_ms"]
            .as_f64()
            .ok_or_else(|| format!("scenario output: `{name}` has no oracle"))?;
        let target = t["target_vs_batch"]
            .as_f64()
            .map_or(Target::Report, Target::RatioAtMost);
        rows.push(
            Row::compare(
                SECTION,
                format!("streaming turn vs batch: {name}"),
                Unit::Millis,
                streaming,
                ("batch", batch),
                target,
            )
            .with_note(format!(
                "{file}; best possible (oracle/batch): {:.2}",
                oracle / batch.median
            )),
        );
        rows.push(Row::compare(
            SECTION,
            format!("streaming turn vs oracle: {name}"),
            Unit::Millis,
            streaming,
            ("oracle (critical path)", Figure::computed(oracle)),
            Target::RatioAtMost(ORACLE_TARGET),
        ));
    }
    let mut md = String::from(
        "| queued no-op calls | wall time | per call | peak RSS | RSS growth |\n|---|---|---|---|---|\n",
    );
    let scaling = doc["scaling"]
        .as_array()
        .ok_or("scenario output: no `scaling`")?;
    for s in scaling {
        let calls = s["calls"].as_u64().unwrap_or(0);
        let runs = s["runs"].as_array().map(Vec::as_slice).unwrap_or_default();
        let walls: Vec<f64> = runs.iter().filter_map(|r| r["wall_ms"].as_f64()).collect();
        let wall = Figure::from_samples(&walls)
            .ok_or_else(|| format!("scenario output: no scaling runs for {calls} calls"))?;
        let kib = |key: &str| {
            runs.iter()
                .filter_map(|r| r[key].as_u64())
                .max()
                .unwrap_or(0)
        };
        let (peak, start) = (kib("peak_rss_kib"), kib("start_rss_kib"));
        let per_call = if calls == 0 {
            0.0
        } else {
            wall.median * 1000.0 / calls as f64
        };
        let _ = writeln!(
            md,
            "| {calls} | {:.2} ms ({:.2}–{:.2}) | {per_call:.2} µs | {:.1} MiB | {:.1} MiB |",
            wall.median,
            wall.min,
            wall.max,
            peak as f64 / 1024.0,
            peak.saturating_sub(start) as f64 / 1024.0
        );
    }
    let extra = Extra {
        title: format!(
            "Executor scaling (median of {} runs, each in a fresh process; concurrency cap {})",
            scaling
                .first()
                .and_then(|s| s["runs"].as_array())
                .map_or(0, Vec::len),
            doc["max_concurrency"].as_u64().unwrap_or(0)
        ),
        markdown: md,
        json: doc["scaling"].clone(),
    };
    Ok((rows, extra))
}

/// The pipeline rows from criterion's results of crates/tool-exec/benches/pipeline.rs.
fn pipeline_rows(home: &Path, exe: &Path) -> Vec<Row> {
    const FIGURE: &str = "pipeline overhead per no-op call (run_tool_use, no hooks, allow-all)";
    if let Err(e) = criterion::run(exe, home, None) {
        return vec![Row::failed(SECTION, FIGURE, e.to_string())];
    }
    let results = criterion::Results::load(home);
    let base = results.micros("no-op call/baseline: tokio spawn + join");
    let ours = results.micros("no-op call/run_tool_use in a spawned task");
    let (base, ours) = match (base, ours) {
        (Ok(b), Ok(o)) => (b, o),
        (Err(e), _) | (_, Err(e)) => return vec![Row::failed(SECTION, FIGURE, e.to_string())],
    };
    let mut rows = vec![Row::compare(
        SECTION,
        FIGURE,
        Unit::Micros,
        ours,
        ("tokio spawn+join", base),
        Target::RatioAtMost(3.0),
    )];
    if let Ok(exec) = results.micros("no-op call/streaming executor, one call") {
        rows.push(Row::compare(
            SECTION,
            "streaming executor, one no-op call (driver + pipeline)",
            Unit::Micros,
            exec,
            ("tokio spawn+join", base),
            Target::Report,
        ));
    }
    rows
}

/// Runs the scenario bench on `dir` and reads its JSON.
fn scenario_doc(root: &Path, exe: &Path, dir: &Path) -> crate::Result<Value> {
    let json_path = root.join("target/bench/scenario.json");
    let _ = std::fs::remove_file(&json_path);
    println!("==> scenario bench on {}", dir.display());
    let status = Command::new(exe)
        .arg("--bench")
        .env("TOOLWRIGHT_SCENARIOS", dir)
        .env("TOOLWRIGHT_BENCH_OUT", &json_path)
        .status()
        .map_err(|e| format!("scenario bench: could not start: {e}"))?;
    if !status.success() {
        return Err(format!("scenario bench failed ({status})").into());
    }
    let text =
        std::fs::read_to_string(&json_path).map_err(|e| format!("{}: {e}", json_path.display()))?;
    Ok(serde_json::from_str(&text)?)
}

/// Runs the section.
pub fn run(root: &Path, exes: &Exes, out: &mut Section) -> crate::Result {
    let scenario_dir = root.join("benches/scenarios");
    let scenarios = scenario::load_dir(&scenario_dir)?;
    let home = root.join("target/bench/criterion");
    let pipeline = exes.get(Kind::Bench, "pipeline")?;
    let pipeline = pipeline_rows(&home, pipeline);
    let exe = exes.get(Kind::Bench, "scenario")?;
    let turns = scenario_doc(root, exe, &scenario_dir).and_then(|doc| from_scenario_json(&doc));
    match turns {
        Ok((rows, extra)) => {
            // The turns with a streaming/batch target first (the headline rows), then
            // the pipeline, then the other turns.
            let (headline, others): (Vec<Row>, Vec<Row>) = rows.into_iter().partition(|r| {
                let turn = r.figure.split_once(": ").map_or("", |(_, t)| t);
                scenarios
                    .iter()
                    .any(|(_, s)| s.name == turn && s.target_vs_batch.is_some())
            });
            out.rows.extend(headline);
            out.rows.extend(pipeline);
            out.rows.extend(others);
            out.extras.push(extra);
        }
        Err(e) => {
            out.rows.extend(pipeline);
            out.rows
                .push(Row::failed(SECTION, "streaming turns", e.to_string()));
        }
    }
    out.notes.push(format!(
        "exec: turns are the {} files of benches/scenarios/ (median of 5 runs each way); the oracle is the turn's zero-overhead finish time under the executor's rules; the pipeline overhead is criterion's median",
        scenarios.len()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scenario_output_becomes_rows_and_a_scaling_table() {
        let doc = json!({
            "max_concurrency": 10,
            "turns": [{
                "file": "read-heavy.json", "name": "mixed, read-heavy", "calls": 10,
                "target_vs_batch": 0.7,
                "streaming_ms": [1035.0, 1033.0, 1034.0, 1040.0, 1032.0],
                "batch_ms": [1330.0, 1325.0, 1329.0, 1339.0, 1328.0],
                "oracle_ms": 1030.0
            }, {
                "file": "write-chain.json", "name": "write chain", "calls": 7,
                "target_vs_batch": null,
                "streaming_ms": [803.0], "batch_ms": [1180.0], "oracle_ms": 800.0
            }],
            "scaling": [{"calls": 1000, "runs": [
                {"calls": 1000, "wall_ms": 9.0, "start_rss_kib": 2048, "peak_rss_kib": 5120},
                {"calls": 1000, "wall_ms": 11.0, "start_rss_kib": 2048, "peak_rss_kib": 5632}
            ]}]
        });
        let (rows, extra) = from_scenario_json(&doc).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].figure, "streaming turn vs batch: mixed, read-heavy");
        assert_eq!(rows[0].target, Target::RatioAtMost(0.7));
        assert_eq!(rows[0].ours.unwrap().median, 1034.0);
        assert!((rows[0].ratio().unwrap() - 1034.0 / 1329.0).abs() < 1e-9);
        assert!(
            rows[0].note.contains("best possible (oracle/batch): 0.78"),
            "{}",
            rows[0].note
        );
        assert_eq!(rows[1].target, Target::RatioAtMost(ORACLE_TARGET));
        assert_eq!(rows[1].baseline.as_ref().unwrap().1.runs, 0);
        assert_eq!(rows[2].target, Target::Report);
        assert!(extra.title.contains("median of 2 runs") && extra.title.contains("cap 10"));
        assert!(
            extra
                .markdown
                .contains("| 1000 | 10.00 ms (9.00–11.00) | 10.00 µs | 5.5 MiB | 3.5 MiB |"),
            "{}",
            extra.markdown
        );
        assert!(from_scenario_json(&json!({"turns": [{"name": "x"}], "scaling": []})).is_err());
    }
}
