//! The regression tests found by the review sessions, one module per review (its file in
//! this directory), in one test binary so that the suite links once instead of once per
//! review. One review's tests: `cargo test -p tool-perms --test review review35_paths::`.
//!
//! Their tests share one process: a test that needs process-wide state of its own (an
//! environment variable, the umask, a namespace) runs itself again in a child process
//! (`--exact <module>::<test>`) and changes that state there only.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../common/mod.rs"]
mod common;
#[path = "../common/git.rs"]
mod git_fixture;

// What `review33_modes`'s in-process `permissions` module (the root package's
// `src/cli/permissions.rs`) names at its crate's root: `crate::trust`, `crate::session`.
#[path = "../../../../src/trust.rs"]
#[allow(dead_code, unreachable_pub)]
mod trust;

mod session {
    pub fn var_before_settings(name: &str) -> Option<std::ffi::OsString> {
        std::env::var_os(name)
    }
}

mod bash_review25;
mod bash_review25b;
mod path_review;
mod review27_bash;
mod review27_parse;
mod review27_paths;
mod review27_settings;
mod review28_paths;
mod review29_bash;
mod review29_paths;
mod review29_settings;
mod review30_bash;
mod review30_bash2;
mod review30_git_config;
mod review30_rules;
mod review31_git_config;
mod review31_paths;
mod review31_settings;
mod review32_bash;
mod review32_hook_if;
mod review32_rules;
mod review33_modes;
mod review33_sed;
mod review34_loop;
mod review34_results;
mod review34_sed;
mod review34_torn;
mod review35_git;
mod review35_paths;
mod review36_git;
mod review36_gitfiles;
mod review36_readonly;
mod review37_settings;
mod review38_block;
mod review39_bash;
mod review40_bash;
mod settings_review25;
