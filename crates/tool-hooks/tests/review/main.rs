//! The regression tests found by the review sessions, one module per review (its file in
//! this directory), in one test binary so that the suite links once instead of once per
//! review. One review's tests: `cargo test -p tool-hooks --test review review34_scrub::`.
//!
//! Their tests share one process: a test that needs process-wide state of its own (an
//! environment variable, the umask, a namespace) runs itself again in a child process
//! (`--exact <module>::<test>`) and changes that state there only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod review29_hooks;
mod review31_hooks;
mod review34_scrub;
mod review38_hooks;
mod review38_hooksenv;
mod review40_hooks;
mod review_fixes;
