//! `cargo xtask fuzz [--time SECS] [TARGET...]`: runs the fuzz harnesses for a time budget.
//!
//! Each target is a proptest-driven integration test of the crate whose code it fuzzes
//! (stable Rust: no cargo-fuzz, no nightly). A normal `cargo test` runs each one for a quick
//! fixed number of cases; here every test of the target runs for `SECS` seconds instead
//! (`TOOLWRIGHT_FUZZ_SECS`), all of a target's tests at once. A failure is shrunk to a
//! minimal input and its seed saved in `<test>.proptest-regressions` next to the test,
//! which every later run (`cargo test` included) replays first: commit it, and add an
//! explicit regression test named after the bug once it is fixed.

use std::path::Path;
use std::time::Instant;

use crate::Result;

/// A fuzz target: its name here, the package and the test file that hold it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    /// The name given on the command line.
    pub name: &'static str,
    /// The package.
    pub package: &'static str,
    /// The integration test (`tests/<test>.rs`).
    pub test: &'static str,
    /// What it fuzzes.
    pub what: &'static str,
}

/// Every fuzz target.
pub(crate) const TARGETS: &[Target] = &[
    Target {
        name: "rules",
        package: "tool-perms",
        test: "fuzz_rules",
        what: "the permission rule parser",
    },
    Target {
        name: "bash",
        package: "tool-perms",
        test: "fuzz_bash",
        what: "the bash analysis and the decisions on Bash commands",
    },
    Target {
        name: "hook-output",
        package: "tool-hooks",
        test: "fuzz_hook_output",
        what: "hook JSON output, stderr and exit codes",
    },
    Target {
        name: "inputs",
        package: "tools-builtin",
        test: "fuzz_inputs",
        what: "every built-in tool's schema parse and validate_input",
    },
    Target {
        name: "sse",
        package: "tool-exec",
        test: "fuzz_sse",
        what: "the Anthropic SSE adapter",
    },
    Target {
        name: "mcp-json",
        package: "tools-mcp",
        test: "fuzz_mcp_json",
        what: ".mcp.json parsing",
    },
];

const USAGE: &str = "usage: cargo xtask fuzz [--time SECS] [--list] [TARGET...]";

/// Runs the fuzz targets named in `args` (all by default) for `--time` seconds each.
pub(crate) fn run(root: &Path, args: &[String]) -> Result {
    let mut secs: u64 = 60;
    let mut names: Vec<&str> = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--time" => {
                let value = it.next().ok_or(USAGE)?;
                secs = value
                    .parse()
                    .map_err(|_| format!("--time wants whole seconds, got `{value}`"))?;
            }
            "--list" => {
                for t in TARGETS {
                    println!(
                        "{:<12} {} ({}, tests/{}.rs)",
                        t.name, t.what, t.package, t.test
                    );
                }
                return Ok(());
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                return Ok(());
            }
            name if !name.starts_with('-') => names.push(name),
            other => return Err(format!("unknown option `{other}`; {USAGE}").into()),
        }
    }
    let targets: Vec<Target> = if names.is_empty() {
        TARGETS.to_vec()
    } else {
        names
            .iter()
            .map(|n| {
                TARGETS
                    .iter()
                    .copied()
                    .find(|t| t.name == *n)
                    .ok_or_else(|| {
                        let known: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
                        format!("unknown fuzz target `{n}`; known: {}", known.join(", "))
                    })
            })
            .collect::<std::result::Result<_, _>>()?
    };

    // Build first, so the budget is spent fuzzing.
    let mut build = crate::cargo();
    build.args(["test", "--no-run"]);
    for t in &targets {
        build.args(["-p", t.package, "--test", t.test]);
    }
    crate::run("build the fuzz targets", &mut build)?;

    let mut failed = Vec::new();
    for t in &targets {
        println!("==> fuzz {} ({}) for {secs} s", t.name, t.what);
        let started = Instant::now();
        let status = crate::cargo()
            .current_dir(root)
            .args(["test", "-p", t.package, "--test", t.test, "--"])
            .args(["--nocapture", "--test-threads=8"])
            .env("TOOLWRIGHT_FUZZ_SECS", secs.to_string())
            .status()
            .map_err(|e| format!("could not start cargo: {e}"))?;
        println!(
            "    {} in {:.0} s",
            if status.success() { "ok" } else { "FAILED" },
            started.elapsed().as_secs_f64()
        );
        if !status.success() {
            failed.push(*t);
        }
    }
    if failed.is_empty() {
        println!("==> fuzz: {} target(s) clean", targets.len());
        return Ok(());
    }
    for t in &failed {
        eprintln!(
            "fuzz: {} failed; the minimal input is printed above, its seed saved in \
             crates/{}/tests/{}.proptest-regressions (replayed by every later run)",
            t.name, t.package, t.test
        );
    }
    let names: Vec<&str> = failed.iter().map(|t| t.name).collect();
    Err(format!("fuzz target(s) failed: {}", names.join(", ")).into())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_target_file_exists_and_names_are_unique() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap_or(Path::new("."));
        let mut names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TARGETS.len());
        for t in TARGETS {
            let file = root
                .join("crates")
                .join(t.package)
                .join("tests")
                .join(format!("{}.rs", t.test));
            assert!(file.exists(), "{} is missing", file.display());
        }
    }

    #[test]
    fn bad_arguments_are_refused_with_the_usage() {
        let root = Path::new(".");
        for args in [&["--time"][..], &["--time", "x"], &["--bogus"], &["nope"]] {
            let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
            let err = run(root, &args).unwrap_err().to_string();
            assert!(
                err.contains("usage") || err.contains("--time") || err.contains("unknown"),
                "{err}"
            );
        }
    }
}
