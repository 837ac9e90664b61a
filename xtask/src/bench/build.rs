//! Building the release binaries the benches run, in one `cargo build --release` of every
//! bench and example they use whatever sections are chosen: one feature resolution and one
//! profile, so that running one section and then another never rebuilds shared dependencies.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

/// The packages holding the benches and examples.
pub const PACKAGES: &[&str] = &[
    "tool-exec",
    "tool-perms",
    "tool-hooks",
    "tools-builtin",
    "tools-mcp",
];
/// The `[[bench]]` targets run (criterion and custom harnesses).
pub const BENCHES: &[&str] = &["pipeline", "scenario", "decide", "hooks", "spawn", "search"];
/// The example binaries run.
pub const EXAMPLES: &[&str] = &["tool_once", "bench"];

/// What kind of target an executable is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A `[[bench]]` target.
    Bench,
    /// An example.
    Example,
    /// A `[[bin]]` target.
    Bin,
}

/// The built executables, by kind and target name.
#[derive(Debug, Default)]
pub struct Exes(BTreeMap<(Kind, String), PathBuf>);

impl Exes {
    /// The executable of `name`, or an error saying it was not built.
    pub fn get(&self, kind: Kind, name: &str) -> crate::Result<&Path> {
        self.0
            .get(&(kind, name.to_owned()))
            .map(PathBuf::as_path)
            .ok_or_else(|| format!("no built executable for {kind:?} `{name}`").into())
    }
}

/// Builds every bench and example of [`BENCHES`] and [`EXAMPLES`] in release.
pub fn build_all() -> crate::Result<Exes> {
    let mut cmd = crate::cargo();
    cmd.args(["build", "--release"]);
    for p in PACKAGES {
        cmd.args(["-p", p]);
    }
    for b in BENCHES {
        cmd.args(["--bench", b]);
    }
    for e in EXAMPLES {
        cmd.args(["--example", e]);
    }
    println!(
        "==> cargo build --release (benches and examples of {})",
        PACKAGES.join(", ")
    );
    let found = build_reporting_executables(&mut cmd, "building the benches")?;
    for (kind, names) in [(Kind::Bench, BENCHES), (Kind::Example, EXAMPLES)] {
        for n in names {
            found.get(kind, n)?;
        }
    }
    Ok(found)
}

/// Runs the `cargo build` of `cmd` and returns the executables it reports (benches,
/// examples, binaries), wherever the target directory is (`CARGO_TARGET_DIR`,
/// `build.target-dir`, `--target`). `what` names the build in the error.
pub fn build_reporting_executables(
    cmd: &mut std::process::Command,
    what: &str,
) -> crate::Result<Exes> {
    cmd.arg("--message-format=json-render-diagnostics")
        .current_dir(crate::workspace_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cargo: could not start: {e}"))?;
    let mut found = Exes::default();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| format!("cargo output: {e}"))?;
            if let Some((kind, name, exe)) = artifact(&line) {
                found.0.insert((kind, name), exe);
            }
        }
    }
    let status = child.wait().map_err(|e| format!("cargo: {e}"))?;
    if !status.success() {
        return Err(format!("{what} failed ({status})").into());
    }
    Ok(found)
}

/// The kind, target name and executable of a `compiler-artifact` message for a bench, an
/// example or a binary.
fn artifact(line: &str) -> Option<(Kind, String, PathBuf)> {
    let v: Value = serde_json::from_str(line).ok()?;
    if v["reason"] != "compiler-artifact" {
        return None;
    }
    let kinds = v["target"]["kind"].as_array()?;
    let kind = if kinds.iter().any(|k| k == "bench") {
        Kind::Bench
    } else if kinds.iter().any(|k| k == "example") {
        Kind::Example
    } else if kinds.iter().any(|k| k == "bin") {
        Kind::Bin
    } else {
        return None;
    };
    let exe = v["executable"].as_str()?;
    Some((
        kind,
        v["target"]["name"].as_str()?.to_owned(),
        PathBuf::from(exe),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_executables_of_benches_examples_and_binaries() {
        let bench = r#"{"reason":"compiler-artifact","target":{"name":"pipeline","kind":["bench"]},"executable":"/t/release/deps/pipeline-1"}"#;
        let example = r#"{"reason":"compiler-artifact","target":{"name":"tool_once","kind":["example"]},"executable":"/t/release/examples/tool_once"}"#;
        let lib = r#"{"reason":"compiler-artifact","target":{"name":"tool_exec","kind":["lib"]},"executable":null}"#;
        assert_eq!(
            artifact(bench),
            Some((
                Kind::Bench,
                "pipeline".into(),
                PathBuf::from("/t/release/deps/pipeline-1")
            ))
        );
        assert_eq!(
            artifact(example).map(|a| (a.0, a.1)),
            Some((Kind::Example, "tool_once".into()))
        );
        assert_eq!(artifact(lib), None);
        let bin = r#"{"reason":"compiler-artifact","target":{"name":"toolwright","kind":["bin"]},"executable":"/elsewhere/debug/toolwright"}"#;
        assert_eq!(
            artifact(bin),
            Some((
                Kind::Bin,
                "toolwright".into(),
                PathBuf::from("/elsewhere/debug/toolwright")
            ))
        );
        assert_eq!(
            artifact(r#"{"reason":"build-finished","success":true}"#),
            None
        );
        assert_eq!(artifact("not json"), None);
        let mut exes = Exes::default();
        exes.0.insert(
            (Kind::Example, "bench".into()),
            PathBuf::from("/t/examples/bench"),
        );
        assert!(exes.get(Kind::Example, "bench").is_ok());
        let err = exes.get(Kind::Bench, "bench").unwrap_err().to_string();
        assert!(
            err.contains("no built executable for Bench `bench`"),
            "{err}"
        );
    }
}
