//! The regression tests found by the review sessions, one module per review (its file in
//! this directory), in one test binary so that the suite links once instead of once per
//! review. One review's tests: `cargo test -p toolwright --test review review35_subagents::`.
//! `internal_build` holds the root tests only the `internal` build has.
//!
//! Their tests share one process: a test that needs process-wide state of its own (an
//! environment variable, the umask, a namespace) runs itself again in a child process
//! (`--exact <module>::<test>`) and changes that state there only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../support/binary.rs"]
mod binary;
#[path = "../support/model_api.rs"]
mod model_api;
#[path = "../support/processes.rs"]
mod processes;
#[path = "../support/serve.rs"]
mod serve_support;
#[path = "../support/terminal.rs"]
mod terminal;

mod internal_build;
mod review28_run;
mod review28_web_fetch_cli;
mod review29_hooks;
mod review29_settings;
mod review30_agent;
mod review30_misc_cli;
mod review30_plan_serve;
mod review30_prompting;
mod review30_serve;
mod review30_serve_read;
#[cfg(target_os = "linux")]
mod review30_signals;
mod review31_agents;
mod review32_agents;
mod review32_read_cli;
mod review32_serve;
mod review33_agent;
mod review33_session;
mod review33_task_hooks;
mod review34_cli;
mod review34_env;
mod review34_serve;
mod review34_torn_trust;
mod review35_cli;
mod review35_subagents;
mod review36_agent;
mod review37_serve;
mod review38_apiloop;
mod review38_executor;
mod review38_hooksenv;
mod review38_prompting;
mod review38_subagents;
mod review38_textblocks;
mod review39_agent;
mod review39_bash;
mod review39_demo;
mod review39_plan;
mod review39_serve;
mod review39_websearch;
mod review40_agent;
mod review40_hooks;
