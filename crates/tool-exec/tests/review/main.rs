//! The regression tests found by the review sessions, one module per review (its file in
//! this directory), in one test binary so that the suite links once instead of once per
//! review. One review's tests: `cargo test -p tool-exec --test review review34_exec::`.
//!
//! Their tests share one process: a test that needs process-wide state of its own (an
//! environment variable, the umask, a namespace) runs itself again in a child process
//! (`--exact <module>::<test>`) and changes that state there only.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

#[cfg(target_os = "linux")]
mod review30_stuck;
mod review31_pipeline;
mod review34_exec;
mod review37_telemetry;
mod review38_prompting;
mod review38_textblocks;
