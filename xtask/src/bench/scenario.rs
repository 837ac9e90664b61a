//! The executor's scenario files (`benches/scenarios/*.json`): parsed and checked here before
//! the scenario bench (crates/tool-exec/benches/scenario.rs) runs them, so a broken file is
//! reported with its name and what is wrong.
//!
//! A file is one turn:
//!
//! ```json
//! {
//!   "name": "mixed, read-heavy",
//!   "description": "what the turn is",
//!   "stream_end_ms": 1000,
//!   "target_vs_batch": 0.70,
//!   "calls": [
//!     { "tool": "Grep", "at_ms": 160, "ms": 120, "safe": true },
//!     { "tool": "Bash", "at_ms": 880, "ms": 150, "safe": false, "fails": true }
//!   ]
//! }
//! ```
//!
//! `at_ms` is when the block closes in the stream (from the start of the turn, in arrival
//! order), `ms` how long the tool runs, `safe` whether it is concurrency-safe, `fails`
//! whether it fails (a failing `Bash` cancels its siblings); `stream_end_ms` is when the
//! response ends; `target_vs_batch` is an optional target for streaming/batch.

use std::path::Path;

use serde::Deserialize;

/// One call of a turn.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Call {
    /// The tool's name (any name; `Bash` matters for the sibling policy).
    pub tool: String,
    /// When the block arrives, in ms from the start of the turn.
    pub at_ms: u64,
    /// How long the call runs, in ms.
    pub ms: u64,
    /// Whether the call is concurrency-safe.
    pub safe: bool,
    /// Whether the call fails.
    #[serde(default)]
    pub fails: bool,
}

/// One turn.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// The turn's name in the report.
    pub name: String,
    /// What the turn is.
    #[serde(default)]
    pub description: String,
    /// When the response stream ends, in ms.
    pub stream_end_ms: u64,
    /// The target for streaming/batch, if the turn has one.
    #[serde(default)]
    pub target_vs_batch: Option<f64>,
    /// The calls, in arrival order.
    pub calls: Vec<Call>,
}

impl Scenario {
    /// Parses and checks one file's text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let s: Self = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if s.name.trim().is_empty() {
            return Err("`name` is empty".into());
        }
        if s.calls.is_empty() {
            return Err("`calls` is empty".into());
        }
        for (i, c) in s.calls.iter().enumerate() {
            if c.tool.trim().is_empty() {
                return Err(format!("call {i}: `tool` is empty"));
            }
            if c.at_ms > s.stream_end_ms {
                return Err(format!(
                    "call {i} ({}) arrives at {} ms, after the stream ends ({} ms)",
                    c.tool, c.at_ms, s.stream_end_ms
                ));
            }
            if i > 0 && c.at_ms < s.calls[i - 1].at_ms {
                return Err(format!(
                    "call {i} ({}) arrives at {} ms, before the call listed above it: list calls in arrival order",
                    c.tool, c.at_ms
                ));
            }
        }
        if let Some(t) = s.target_vs_batch
            && !(t > 0.0 && t.is_finite())
        {
            return Err(format!(
                "`target_vs_batch` must be a positive number, not {t}"
            ));
        }
        Ok(s)
    }
}

/// Every `*.json` file of `dir`, parsed and checked, in file-name order, with its file name.
pub fn load_dir(dir: &Path) -> crate::Result<Vec<(String, Scenario)>> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("scenario directory {}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| format!("scenario directory {}: {e}", dir.display()))?
            .path();
        if path.extension().is_some_and(|e| e == "json") {
            files.push(path);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(format!("no *.json scenario file in {}", dir.display()).into());
    }
    files
        .iter()
        .map(|path| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("scenario {}: {e}", path.display()))?;
            let s = Scenario::parse(&text).map_err(|e| format!("scenario {name}: {e}"))?;
            Ok((name, s))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{
        "name": "t", "description": "d", "stream_end_ms": 500, "target_vs_batch": 0.7,
        "calls": [
            {"tool": "Read", "at_ms": 10, "ms": 30, "safe": true},
            {"tool": "Bash", "at_ms": 10, "ms": 50, "safe": false, "fails": true}
        ]
    }"#;

    #[test]
    fn parses_a_turn() {
        let s = Scenario::parse(GOOD).unwrap();
        assert_eq!(s.stream_end_ms, 500);
        assert_eq!(s.target_vs_batch, Some(0.7));
        assert_eq!(
            s.calls[1],
            Call {
                tool: "Bash".into(),
                at_ms: 10,
                ms: 50,
                safe: false,
                fails: true
            }
        );
        assert!(!s.calls[0].fails, "fails defaults to false");
    }

    #[test]
    fn rejects_bad_turns_saying_why() {
        let bad = |from: &str, to: &str| Scenario::parse(&GOOD.replace(from, to)).unwrap_err();
        assert!(bad("\"ms\": 30,", "\"ms\": 30, \"slow\": 1,").contains("unknown field `slow`"));
        assert!(bad(", \"safe\": true}", "}").contains("missing field `safe`"));
        assert!(
            bad("\"at_ms\": 10, \"ms\": 50", "\"at_ms\": 5, \"ms\": 50").contains("arrival order")
        );
        assert!(
            bad("\"at_ms\": 10, \"ms\": 30", "\"at_ms\": 600, \"ms\": 30")
                .contains("after the stream ends")
        );
        assert!(bad("0.7", "-1").contains("positive number"));
        assert!(bad("\"name\": \"t\"", "\"name\": \" \"").contains("`name` is empty"));
        let empty = r#"{"name": "e", "stream_end_ms": 1, "calls": []}"#;
        assert!(
            Scenario::parse(empty)
                .unwrap_err()
                .contains("`calls` is empty")
        );
        assert!(Scenario::parse("[]").is_err());
    }

    #[test]
    fn the_workspace_scenarios_cover_the_required_turns() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../benches/scenarios");
        let all = load_dir(&dir).unwrap();
        assert!(all.len() >= 6, "{} scenario files", all.len());
        let any = |f: &dyn Fn(&Scenario) -> bool| all.iter().any(|(_, s)| f(s));
        assert!(any(&|s| s
            .calls
            .iter()
            .any(|c| c.fails && c.tool == "Bash")));
        assert!(any(&|s| s.calls.len() >= 40));
        assert!(any(&|s| s
            .calls
            .iter()
            .any(|c| c.tool.starts_with("mcp__"))));
        assert!(any(&|s| s
            .calls
            .iter()
            .all(|c| !c.safe || c.tool == "Read")
            && s.calls.iter().filter(|c| !c.safe).count() >= 3));
        assert!(any(&|s| s.target_vs_batch.is_some()));
    }

    #[test]
    fn a_directory_without_scenarios_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = load_dir(dir.path()).unwrap_err().to_string();
        assert!(err.contains("no *.json scenario file"), "{err}");
        std::fs::write(dir.path().join("a.json"), "{").unwrap();
        let err = load_dir(dir.path()).unwrap_err().to_string();
        assert!(err.starts_with("scenario a.json: "), "{err}");
    }
}
