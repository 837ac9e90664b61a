//! The regression tests found by the review sessions, one module per review (its file in
//! this directory), in one test binary so that the suite links once instead of once per
//! review. One review's tests: `cargo test -p tools-mcp --test review review35_idless::`.
//!
//! Their tests share one process: a test that needs process-wide state of its own (an
//! environment variable, the umask, a namespace) runs itself again in a child process
//! (`--exact <module>::<test>`) and changes that state there only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod review27;
mod review29;
mod review31;
mod review34_config;
mod review34_mcpsec;
mod review35_idless;
mod review38_mcp;
mod review40_mcp;
