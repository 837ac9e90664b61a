//! Running criterion bench binaries and reading their results from `CRITERION_HOME`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::report::Figure;

/// Runs a criterion bench binary (`exe --bench [filter] ...`) with short warm-up and
/// measurement times (groups that set their own keep them), results under `home`.
pub fn run(exe: &Path, home: &Path, filter: Option<&str>) -> crate::Result {
    let mut cmd = Command::new(exe);
    cmd.arg("--bench");
    if let Some(f) = filter {
        cmd.arg(f);
    }
    cmd.args(["--warm-up-time", "1", "--measurement-time", "2", "--noplot"])
        .env("CRITERION_HOME", home);
    let name = exe
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    println!(
        "==> criterion {name}{}",
        filter.map(|f| format!(" {f:?}")).unwrap_or_default()
    );
    let status = cmd
        .status()
        .map_err(|e| format!("{}: could not start: {e}", exe.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("criterion bench {name} failed ({status})").into())
    }
}

/// Every benchmark under `home`: full id (`group/function`) -> its `new` directory.
pub fn index(home: &Path) -> BTreeMap<String, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![home.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.file_name().is_some_and(|n| n == "benchmark.json")
                && dir.file_name().is_some_and(|n| n == "new")
                && let Ok(text) = std::fs::read_to_string(&path)
                && let Ok(v) = serde_json::from_str::<Value>(&text)
                && let Some(id) = v["full_id"].as_str()
            {
                out.insert(id.to_owned(), dir.clone());
            }
        }
    }
    out
}

/// One benchmark's time per iteration, in ns: criterion's median estimate, and the smallest
/// and largest per-iteration mean of its samples.
pub fn figure(dir: &Path) -> crate::Result<Figure> {
    let read = |name: &str| -> crate::Result<Value> {
        let path = dir.join(name);
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?)
    };
    let estimates = read("estimates.json")?;
    let median = estimates["median"]["point_estimate"]
        .as_f64()
        .ok_or_else(|| format!("{}: no median estimate", dir.display()))?;
    let sample = read("sample.json")?;
    let per_iter: Vec<f64> = match (sample["iters"].as_array(), sample["times"].as_array()) {
        (Some(iters), Some(times)) => iters
            .iter()
            .zip(times)
            .filter_map(|(i, t)| Some(t.as_f64()? / i.as_f64().filter(|i| *i > 0.0)?))
            .collect(),
        _ => Vec::new(),
    };
    let spread =
        Figure::from_samples(&per_iter).ok_or_else(|| format!("{}: no samples", dir.display()))?;
    Ok(Figure {
        median,
        min: spread.min,
        max: spread.max,
        runs: spread.runs,
    })
}

/// The results of a criterion run, looked up by full id.
#[derive(Debug)]
pub struct Results {
    index: BTreeMap<String, PathBuf>,
}

impl Results {
    /// Reads the index of `home`.
    pub fn load(home: &Path) -> Self {
        Self { index: index(home) }
    }

    /// The figure of `id` in µs.
    pub fn micros(&self, id: &str) -> crate::Result<Figure> {
        let dir = self.index.get(id).ok_or_else(|| {
            format!(
                "no criterion result for `{id}` (have: {})",
                self.index.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })?;
        Ok(figure(dir)?.scaled(1e-3))
    }

    /// The ids starting with `prefix`.
    pub fn ids_with_prefix<'a>(&'a self, prefix: &'a str) -> impl Iterator<Item = &'a str> {
        self.index
            .keys()
            .filter(move |k| k.starts_with(prefix))
            .map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_bench(home: &Path, dir: &str, id: &str, median: f64, iters: &[f64], times: &[f64]) {
        let new = home.join(dir).join("new");
        std::fs::create_dir_all(&new).unwrap();
        std::fs::write(
            new.join("benchmark.json"),
            serde_json::json!({"group_id": "g", "full_id": id}).to_string(),
        )
        .unwrap();
        std::fs::write(
            new.join("estimates.json"),
            serde_json::json!({"median": {"point_estimate": median}}).to_string(),
        )
        .unwrap();
        std::fs::write(
            new.join("sample.json"),
            serde_json::json!({"sampling_mode": "Linear", "iters": iters, "times": times})
                .to_string(),
        )
        .unwrap();
        // A saved baseline must not be mistaken for the latest run.
        let base = home.join(dir).join("base");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::write(
            base.join("benchmark.json"),
            serde_json::json!({"full_id": "stale"}).to_string(),
        )
        .unwrap();
    }

    #[test]
    fn reads_median_and_per_iteration_spread_by_full_id() {
        let home = tempfile::tempdir().unwrap();
        write_bench(
            home.path(),
            "no-op call/run_tool_use in a spawned task",
            "no-op call/run_tool_use in a spawned task",
            2500.0,
            &[10.0, 20.0, 40.0],
            &[30_000.0, 40_000.0, 100_000.0],
        );
        write_bench(home.path(), "spawn/bare", "spawn/bare", 1.0, &[1.0], &[1.0]);
        let results = Results::load(home.path());
        let f = results
            .micros("no-op call/run_tool_use in a spawned task")
            .unwrap();
        assert_eq!((f.median, f.min, f.max, f.runs), (2.5, 2.0, 3.0, 3));
        assert_eq!(
            results.ids_with_prefix("spawn/").collect::<Vec<_>>(),
            ["spawn/bare"]
        );
        assert!(results.ids_with_prefix("stale").next().is_none());
        let err = results.micros("nope").unwrap_err().to_string();
        assert!(err.contains("no criterion result for `nope`"), "{err}");
    }
}
