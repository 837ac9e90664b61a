//! The regression tests found by the review sessions, one module per review (its file in
//! this directory), in one test binary so that the suite links once instead of once per
//! review. One review's tests: `cargo test -p tools-builtin --test review review35_grep::`.
//!
//! Their tests share one process: a test that needs process-wide state of its own (an
//! environment variable, the umask, a namespace) runs itself again in a child process
//! (`--exact <module>::<test>`) and changes that state there only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;

mod glob_grep_review25;
mod review27_search;
mod review28_session;
mod review28_web_fetch;
mod review29_search;
mod review30_files;
mod review30_misc;
mod review30_plan;
mod review31_bash;
mod review31_globgrep;
mod review31_skills;
mod review32_bash_progress;
mod review32_builtin;
mod review32_session_dir;
mod review33_background;
mod review33_bash_full;
mod review33_fswrite;
mod review33_task_hooks;
mod review33_web_fetch;
mod review34_fsrace;
mod review34_notebook;
mod review34_shared_list;
mod review34_task_modes;
mod review35_bash;
mod review35_encodings;
mod review35_grep;
mod review38_prompting;
mod review39_bash;
mod review39_search;
mod review39_web_search;
mod review40_read;
