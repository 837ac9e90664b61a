//! The fuzz harnesses' runner, shared by every `fuzz_*.rs` test file of the workspace
//! (each includes it with `#[path]`): proptest on stable, with a time budget for
//! `cargo xtask fuzz` and a quick fixed number of cases in a normal test run.

use proptest::strategy::Strategy;
use proptest::test_runner::TestCaseError;

/// Runs `test` on inputs from `strategy`: `cases` of them (the quick pass of a normal test
/// run), or as many as fit in `TOOLWRIGHT_FUZZ_SECS` seconds when it is set (`cargo xtask
/// fuzz`). A failure is shrunk to a minimal input and its seed saved next to `source_file`
/// (the caller passes `file!()`) in a `*.proptest-regressions` file, which every later run
/// replays first.
pub fn fuzz<S>(
    source_file: &'static str,
    cases: u32,
    strategy: S,
    test: impl Fn(S::Value) -> Result<(), TestCaseError>,
) where
    S: Strategy,
    S::Value: std::fmt::Debug,
{
    use proptest::test_runner::{Config, FileFailurePersistence, TestError, TestRunner};
    let budget = std::env::var("TOOLWRIGHT_FUZZ_SECS")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map(std::time::Duration::from_secs);
    let deadline = budget.map(|b| std::time::Instant::now() + b);
    let mut total = 0u64;
    loop {
        let round = if deadline.is_some() { 512 } else { cases };
        let config = Config {
            cases: round,
            source_file: Some(source_file),
            failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
                "proptest-regressions",
            ))),
            ..Config::default()
        };
        match TestRunner::new(config).run(&strategy, &test) {
            Ok(()) => {}
            Err(TestError::Fail(reason, input)) => {
                panic!("{reason}\nminimal failing input: {input:#?}")
            }
            Err(TestError::Abort(reason)) => panic!("fuzzing aborted: {reason}"),
        }
        total += u64::from(round);
        if deadline.is_none_or(|d| std::time::Instant::now() >= d) {
            break;
        }
    }
    if budget.is_some() {
        eprintln!("fuzzed {total} inputs");
    }
}
