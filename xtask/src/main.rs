//! Toolwright's development tasks, run as `cargo xtask <task>`.
//!
//! - `ci`: everything CI checks, in order: formatting, clippy with `-D warnings`, the crate
//!   layering, the docs' paths, and the test suite (the README's test command).
//! - `check-layers [--manifest-path PATH]`: fails when a workspace crate depends on another
//!   against the direction of `docs/architecture.md`.
//! - `check-docs`: fails when `docs/architecture.md` names a path that does not exist.
//! - `profiles`, `build --profile P`: the `external` and `internal` binaries, and the proof
//!   that gated tools are compiled out (`profiles.rs`).
//! - `bench [SECTION]`: speed against baselines (`bench/`).
//! - `load [--calls N] [--clients N]`: the load test of `serve --http` (`load.rs`).
//! - `fuzz [--time SECS] [TARGET...]`: the fuzz harnesses for a time budget (`fuzz.rs`).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

mod bench;
mod docs;
mod fuzz;
mod layers;
mod load;
mod profiles;

type Result<T = ()> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("check-layers") => check_layers(&args[1..]),
        Some("check-docs") => docs::check(&workspace_root()),
        Some("bench") => bench::run(&workspace_root(), &args[1..]),
        Some("profiles") => profiles::check(&workspace_root()),
        Some("fuzz") => fuzz::run(&workspace_root(), &args[1..]),
        Some("load") => load::run(&workspace_root(), &args[1..]),
        Some("build") => match args.get(1..) {
            Some([flag, profile]) if flag == "--profile" => {
                profiles::build(&workspace_root(), profile).map(|p| println!("{}", p.display()))
            }
            _ => Err("usage: cargo xtask build --profile external|internal".into()),
        },
        Some("help" | "--help" | "-h") | None => {
            print_help();
            Ok(())
        }
        Some(other) => Err(format!("unknown task `{other}`; run `cargo xtask help`").into()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn print_help() {
    println!(
        "cargo xtask <task>\n\n\
         tasks:\n  \
         ci                               fmt check, clippy -D warnings, check-layers, check-docs, profiles, tests\n  \
         check-layers [--manifest-path P] check the crate dependency direction\n  \
         check-docs                       check that docs/architecture.md names only existing paths\n  \
         bench [all|exec|files|shell|hooks|perms|search|memory|mcp]  benchmarks vs baselines; report in target/bench/report.md, .json\n  \
         build --profile external|internal  build the binary of one profile\n  \
         profiles                         build both profiles and prove gated tools are compiled out\n  \
         fuzz [--time SECS] [TARGET...]   run the fuzz targets (default all, 60 s each; --list names them)\n  \
         load [--calls N] [--clients N]   load test of `serve --http` (release; default 10000 calls, 16 clients)"
    );
}

fn workspace_root() -> PathBuf {
    // xtask lives in <root>/xtask.
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn check_layers(args: &[String]) -> Result {
    let manifest = match args {
        [] => workspace_root().join("Cargo.toml"),
        [flag, path] if flag == "--manifest-path" => PathBuf::from(path),
        _ => return Err("usage: cargo xtask check-layers [--manifest-path PATH]".into()),
    };
    let graph = layers::Graph::from_cargo_metadata(&manifest)?;
    let violations = layers::check(&graph);
    if violations.is_empty() {
        println!(
            "check-layers: {} workspace crates, dependencies point one way",
            graph.crates.len()
        );
        Ok(())
    } else {
        for v in &violations {
            eprintln!("check-layers: {v}");
        }
        Err(format!("{} layering violation(s)", violations.len()).into())
    }
}

pub(crate) fn run(step: &str, cmd: &mut Command) -> Result {
    println!("==> {step}");
    let started = std::time::Instant::now();
    let status = cmd
        .current_dir(workspace_root())
        .status()
        .map_err(|e| format!("{step}: could not start: {e}"))?;
    // Where CI's time goes, step by step (its budget is 30 minutes on 2 cores).
    println!("<== {step}: {:.0} s", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err(format!("{step} failed ({status})").into())
    }
}

pub(crate) fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// The test files of tools-builtin that name one of its features (`cfg(feature = ...)`):
/// what the `internal` profile's run of that crate adds to the default one's
/// (the test `the_gated_builtin_tests_are_those_naming_a_feature` keeps the list true). They
/// stay top-level files, each its own test binary, out of the `review` binary
/// (`tests/review/`), which the default profile runs.
const FEATURE_GATED_BUILTIN_TESTS: &[&str] = &[
    "cron",
    "fuzz_inputs",
    "repl",
    "review34_scrub",
    "review35_worktree",
    "schema_snapshot",
    "worktree",
];

/// The root package's tests that only its `internal` build has (they name `feature =
/// "internal"` or `"otlp"`): whole test targets, and the modules of the `review` binary
/// that hold such tests. `cargo xtask ci` runs exactly these in that build.
const ROOT_INTERNAL_TARGETS: &[&str] = &["otlp"];
/// ... and the `review` binary's modules ([`ROOT_INTERNAL_TARGETS`]).
const ROOT_INTERNAL_REVIEW_MODULES: &[&str] = &["internal_build", "review30_misc_cli"];

/// The test command README.md gives; CI runs exactly this.
pub const TEST_COMMAND: &[&str] = &["test", "--workspace", "--all-targets", "--no-fail-fast"];

fn ci() -> Result {
    let begun = std::time::Instant::now();
    run(
        "cargo fmt --check",
        cargo().args(["fmt", "--all", "--check"]),
    )?;
    run(
        "cargo clippy -D warnings",
        cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    // Gated code (tool families, the OTLP exporter) is linted too.
    run(
        "cargo clippy --all-features -D warnings",
        cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--all-features",
            "--",
            "-D",
            "warnings",
        ]),
    )?;
    println!("==> check-layers");
    check_layers(&[])?;
    println!("==> check-docs");
    docs::check(&workspace_root())?;
    println!("==> profiles");
    let started = std::time::Instant::now();
    profiles::check(&workspace_root())?;
    println!("<== profiles: {:.0} s", started.elapsed().as_secs_f64());
    // Tests start example binaries (the MCP test servers and conformance client); with
    // `--all-targets` cargo builds examples only as test harnesses, so build them first.
    run(
        "cargo build --workspace --examples",
        cargo().args(["build", "--workspace", "--examples"]),
    )?;
    run(
        &format!("cargo {}", TEST_COMMAND.join(" ")),
        cargo().args(TEST_COMMAND),
    )?;
    run(
        "cargo test --doc",
        cargo().args(["test", "--workspace", "--doc"]),
    )?;
    // The other profiles. `internal`: the crates whose code differs (every gated family's
    // tests, the registry's guard test against the checked-in list), and the OTLP exporter
    // end to end. The bare registry: `--no-default-features`. The crates below them are the
    // same code in every profile and ran above. Of tools-builtin, only what its features
    // change: its unit tests (the gated modules' own) and the test files that name a
    // feature (`cfg(feature = ...)`: the gated families, the schema snapshot, the input
    // fuzzer); its other tests run the same code in every profile and ran above.
    run(
        "cargo test --all-features (profile internal)",
        cargo().args([
            "test",
            "-p",
            "tool-registry",
            "-p",
            "tools-word-count",
            "--all-targets",
            "--all-features",
            "--no-fail-fast",
        ]),
    )?;
    let mut builtin = cargo();
    builtin.args([
        "test",
        "-p",
        "tools-builtin",
        "--all-features",
        "--no-fail-fast",
        "--lib",
    ]);
    for test in FEATURE_GATED_BUILTIN_TESTS {
        builtin.args(["--test", test]);
    }
    run(
        "cargo test -p tools-builtin --all-features (gated)",
        &mut builtin,
    )?;
    // The binary's `internal` build (which holds the OTLP exporter): the exporter end to
    // end, and the root tests that only that build has (`cfg(feature = "internal")`).
    // The library's and the binary's unit tests too, so that code the feature gates is
    // tested as that build compiles it (the binary's modules, `telemetry` with its OTLP
    // exporter among them, are not the library's: review 38 found `--lib` alone missed
    // them), and a unit test the feature gates runs somewhere.
    let mut root_internal = cargo();
    root_internal.args([
        "test",
        "-p",
        "toolwright",
        "--features",
        "internal",
        "--lib",
        "--bins",
    ]);
    for test in ROOT_INTERNAL_TARGETS {
        root_internal.args(["--test", test]);
    }
    run(
        "cargo test -p toolwright --features internal (unit tests and internal-only targets)",
        &mut root_internal,
    )?;
    let mut review = cargo();
    review.args([
        "test",
        "-p",
        "toolwright",
        "--features",
        "internal",
        "--test",
        "review",
        "--",
    ]);
    review.args(
        ROOT_INTERNAL_REVIEW_MODULES
            .iter()
            .map(|m| format!("{m}::")),
    );
    run(
        "cargo test -p toolwright --features internal --test review (internal-only modules)",
        &mut review,
    )?;
    run(
        "cargo test -p tool-registry --no-default-features",
        cargo().args(["test", "-p", "tool-registry", "--no-default-features"]),
    )?;
    println!(
        "==> ci: all green ({:.0} s in cargo xtask ci)",
        begun.elapsed().as_secs_f64()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `.rs` files directly in `dir` whose text names one of `features` in a `cfg`
    /// (`feature = "worktree"`, however the `cfg` around it is written: `cfg(all(unix,
    /// feature = "worktree"))` too); any feature for an empty list.
    fn naming_a_feature_of(dir: &std::path::Path, features: &[&str]) -> Vec<std::path::PathBuf> {
        let names = |text: &str| {
            if features.is_empty() {
                text.contains("feature = \"")
            } else {
                features
                    .iter()
                    .any(|f| text.contains(&format!("feature = \"{f}\"")))
            }
        };
        let mut named: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "rs"))
            .filter(|p| std::fs::read_to_string(p).is_ok_and(|text| names(&text)))
            .collect();
        named.sort();
        named
    }

    /// [`naming_a_feature_of`] any feature.
    fn naming_a_feature(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
        naming_a_feature_of(dir, &[])
    }

    fn stems(paths: &[std::path::PathBuf]) -> Vec<String> {
        let mut stems: Vec<String> = paths
            .iter()
            .filter_map(|p| Some(p.file_stem()?.to_str()?.to_owned()))
            .collect();
        stems.sort();
        stems
    }

    /// Every root test that names the `internal` or `otlp` feature runs in the `internal`
    /// build's steps: its test target is among [`ROOT_INTERNAL_TARGETS`], its module of the
    /// `review` binary among [`ROOT_INTERNAL_REVIEW_MODULES`]. (Unit tests in `src/` need no
    /// list: that build's step runs the library's and the binary's, `--lib --bins`.)
    #[test]
    fn the_root_tests_of_the_internal_build_are_the_ones_it_runs() {
        let root = workspace_root();
        let features = ["internal", "otlp"];
        let targets = stems(&naming_a_feature_of(&root.join("tests"), &features));
        assert_eq!(targets, ROOT_INTERNAL_TARGETS);
        let modules = stems(&naming_a_feature_of(&root.join("tests/review"), &features));
        assert_eq!(modules, ROOT_INTERNAL_REVIEW_MODULES);
    }

    /// Every tools-builtin test file that names a feature runs in the `internal` profile's
    /// run, and only those: a new gated test file is not left to the default profile alone.
    /// Nor is one merged into the `review` binary (`tests/review/`, the review sessions'
    /// regression tests), which that run does not name: it would run without its feature.
    #[test]
    fn the_gated_builtin_tests_are_those_naming_a_feature() {
        let dir = workspace_root().join("crates/tools-builtin/tests");
        let mut gated: Vec<String> = naming_a_feature(&dir)
            .iter()
            .filter_map(|p| Some(p.file_stem()?.to_str()?.to_owned()))
            .collect();
        gated.sort();
        assert_eq!(gated, FEATURE_GATED_BUILTIN_TESTS);
        let in_review = naming_a_feature(&dir.join("review"));
        assert!(
            in_review.is_empty(),
            "{in_review:?} name a feature (`cfg(feature`): gated tests must stay top-level files \
             of crates/tools-builtin/tests, listed in FEATURE_GATED_BUILTIN_TESTS, not modules \
             of its `review` binary"
        );
    }
}
