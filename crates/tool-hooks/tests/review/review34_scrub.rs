//! Review 34: Claude Code's `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` covers command hooks. With
//! it on, a hook (shell form and exec form) does not inherit this process's credentials
//! (every name of `SCRUBBED_CREDENTIALS` and its GitHub Actions `INPUT_` copy), while
//! `CLAUDE_PROJECT_DIR`, the event's own variables (`CLAUDE_ENV_FILE`), `GITHUB_TOKEN` and
//! the user's own variables still reach it; off, only the `OTEL_*` variables are removed, as
//! before. Each test runs itself again with the variables set in its environment (what a
//! hook inherits), and the hook prints its environment to a file.

use crate::common::{Env, cmd, one, runner};
use serde_json::{Map, json};
use tool_core::process::{SCRUBBED_CREDENTIALS, SUBPROCESS_ENV_SCRUB};
use tool_hooks::ToolCallInfo;

/// Set in the second run of a test: whether it expects the credentials gone.
const CHILD: &str = "TOOLWRIGHT_REVIEW34_HOOK_SCRUB_CHILD";

/// Variables the scrub leaves alone, with their values.
const KEPT: [(&str, &str); 3] = [
    ("GITHUB_TOKEN", "gh-job-token"),
    ("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE"),
    ("TW_REVIEW34_OWN", "the user's own"),
];

fn secret(name: &str) -> String {
    format!("secret-of-{name}")
}

/// Every scrubbed name, with its `INPUT_` copy.
fn scrubbed_names() -> Vec<String> {
    SCRUBBED_CREDENTIALS
        .iter()
        .flat_map(|n| [(*n).to_owned(), format!("INPUT_{n}")])
        .collect()
}

/// First run: runs test `name` again with the credentials and [`KEPT`] set and the scrub
/// variable set to `switch` (unset for `None`), asserts it passed, and returns `None`.
/// Second run: `Some(expect_scrubbed)`.
fn rerun_with(name: &str, switch: Option<&str>, expect_scrubbed: bool) -> Option<bool> {
    if let Some(mode) = std::env::var_os(CHILD) {
        return Some(mode == "scrubbed");
    }
    let mut c = std::process::Command::new(std::env::current_exe().unwrap());
    // The test's path in the `review` binary, this file being its module `review34_scrub`.
    let name = format!("review34_scrub::{name}");
    c.args(["--exact", &name, "--nocapture"])
        .env(CHILD, if expect_scrubbed { "scrubbed" } else { "kept" });
    match switch {
        Some(value) => c.env(SUBPROCESS_ENV_SCRUB, value),
        None => c.env_remove(SUBPROCESS_ENV_SCRUB),
    };
    for n in scrubbed_names() {
        c.env(&n, secret(&n));
    }
    for (n, v) in KEPT {
        c.env(n, v);
    }
    let out = c.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{SUBPROCESS_ENV_SCRUB}={switch:?}:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    None
}

/// The value of `name` in an environment a hook printed (`NAME=value` lines).
fn value(printed: &str, name: &str) -> Option<String> {
    printed
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
        .map(str::to_owned)
}

/// The credentials are gone (`scrubbed`) or there with their values (but `OTEL_*`, which
/// hooks never inherit), and [`KEPT`] and `CLAUDE_PROJECT_DIR` are there either way.
fn check_env(printed: &str, scrubbed: bool, who: &str, project: &std::path::Path) {
    assert!(!printed.is_empty(), "{who} did not run");
    let mut leaked = Vec::new();
    let mut missing = Vec::new();
    for n in scrubbed_names() {
        let otel = n.starts_with("OTEL_");
        match (value(printed, &n), scrubbed || otel) {
            (Some(_), true) => leaked.push(n),
            (None, false) => missing.push(n),
            (Some(v), false) => assert_eq!(v, secret(&n), "{who}: {n}"),
            (None, true) => {}
        }
    }
    assert!(
        leaked.is_empty(),
        "{who} inherited credentials with {SUBPROCESS_ENV_SCRUB} on: {leaked:?}"
    );
    assert!(
        missing.is_empty(),
        "{who} lost variables with the scrub off: {missing:?}"
    );
    for (n, v) in KEPT {
        assert_eq!(value(printed, n).as_deref(), Some(v), "{who}: {n}");
    }
    assert_eq!(
        value(printed, "CLAUDE_PROJECT_DIR").as_deref(),
        project.to_str(),
        "{who}: CLAUDE_PROJECT_DIR"
    );
}

/// The finding: with `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1` a hook still inherited
/// `ANTHROPIC_API_KEY` and the cloud credentials. Now neither a shell-form nor an exec-form
/// PreToolUse hook does.
#[tokio::test]
async fn hooks_do_not_inherit_credentials_with_the_scrub_on() {
    const NAME: &str = "hooks_do_not_inherit_credentials_with_the_scrub_on";
    let Some(scrubbed) = rerun_with(NAME, Some("1"), true) else {
        return;
    };
    check_pre_tool_use_hooks(scrubbed).await;
}

/// Off (unset, `0`, `false`), hooks inherit the credentials as before (only `OTEL_*` is
/// removed, as it always is).
#[tokio::test]
async fn with_the_scrub_off_hooks_inherit_the_credentials() {
    const NAME: &str = "with_the_scrub_off_hooks_inherit_the_credentials";
    if std::env::var_os(CHILD).is_none() {
        for value in [None, Some("0"), Some("false")] {
            rerun_with(NAME, value, false);
        }
        return;
    }
    check_pre_tool_use_hooks(false).await;
}

async fn check_pre_tool_use_hooks(scrubbed: bool) {
    let env = Env::new();
    let shell_out = env.path("shell.env");
    let exec_out = env.path("exec.env");
    let shell_hook = cmd(&format!("env > '{}'", shell_out.display()));
    let exec_hook = json!({"type": "command", "command": "sh",
        "args": ["-c", format!("env > '{}'", exec_out.display())]});
    let r = runner(one("PreToolUse", "Bash", vec![shell_hook, exec_hook]));
    let call = ToolCallInfo::new("Bash", json!({"command": "true"}), "toolu_01");
    r.run_pre_tool_use(&call, &env.ctx()).await;
    check_env(
        &env.read("shell.env"),
        scrubbed,
        "a shell-form hook",
        env.root(),
    );
    check_env(
        &env.read("exec.env"),
        scrubbed,
        "an exec-form hook",
        env.root(),
    );
}

/// The variables an event gives its hooks itself (`CLAUDE_ENV_FILE` on SessionStart) still
/// reach them with the scrub on.
#[tokio::test]
async fn an_events_own_variables_still_reach_its_hooks() {
    const NAME: &str = "an_events_own_variables_still_reach_its_hooks";
    let Some(scrubbed) = rerun_with(NAME, Some("1"), true) else {
        return;
    };
    let env = Env::new();
    let out = env.path("start.env");
    let r = runner(json!({"SessionStart": [{"hooks": [
        cmd(&format!("env > '{}'", out.display()))
    ]}]}));
    let env_file = env.path("session.env").display().to_string();
    r.run_event_with_env(
        "SessionStart",
        Map::from_iter([("source".to_owned(), json!("startup"))]),
        Some("startup"),
        &[("CLAUDE_ENV_FILE".to_owned(), env_file.clone())],
        &env.ctx(),
    )
    .await;
    let printed = env.read("start.env");
    check_env(&printed, scrubbed, "a SessionStart hook", env.root());
    assert_eq!(
        value(&printed, "CLAUDE_ENV_FILE"),
        Some(env_file),
        "{printed}"
    );
}
