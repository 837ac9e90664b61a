//! Review 34: Claude Code's `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB`. With it on, the commands
//! Bash runs (foreground and background) and the REPL's interpreters do not inherit this
//! process's credentials (every name of `SCRUBBED_CREDENTIALS` and its GitHub Actions
//! `INPUT_` copy), while everything else (`GITHUB_TOKEN`, `AWS_ACCESS_KEY_ID`, the user's own
//! variables) still reaches them; with it off, or set to a value that is not truthy, nothing
//! changes. Each test runs itself again with the variables set in its environment (this
//! process's environment is what children inherit), and the command prints its environment.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use tool_core::ToolUseContext;
use tool_core::process::{SCRUBBED_CREDENTIALS, SUBPROCESS_ENV_SCRUB};
use tools_builtin::Bash;
use tools_builtin::tasks::task_registry;

/// Set in the second run of a test: what it is checking.
const CHILD: &str = "TOOLWRIGHT_REVIEW34_SCRUB_CHILD";

/// Variables the scrub leaves alone, with their values.
const KEPT: [(&str, &str); 4] = [
    ("GITHUB_TOKEN", "gh-job-token"),
    ("GH_TOKEN", "gh-job-token-2"),
    ("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE"),
    ("TW_REVIEW34_OWN", "the user's own"),
];

/// The value each credential is given: named after it, so a leak names itself.
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

/// In the first run: runs test `name` again with every credential and [`KEPT`] variable set,
/// and [`SUBPROCESS_ENV_SCRUB`] set to `switch` (unset for `None`), asserts it passed, and
/// returns `None`. In the second run: `Some(expect_scrubbed)`, whether the test is to find
/// the credentials gone.
fn rerun_with(name: &str, switch: Option<&str>, expect_scrubbed: bool) -> Option<bool> {
    if let Some(mode) = std::env::var_os(CHILD) {
        return Some(mode == "scrubbed");
    }
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", name, "--nocapture"])
        .env(CHILD, if expect_scrubbed { "scrubbed" } else { "kept" })
        // Nothing sourced before a command may set or unset anything.
        .env_remove("CLAUDE_ENV_FILE");
    match switch {
        Some(value) => cmd.env(SUBPROCESS_ENV_SCRUB, value),
        None => cmd.env_remove(SUBPROCESS_ENV_SCRUB),
    };
    for n in scrubbed_names() {
        cmd.env(&n, secret(&n));
    }
    for (n, v) in KEPT {
        cmd.env(n, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{SUBPROCESS_ENV_SCRUB}={switch:?}:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    None
}

/// Checks an environment a child printed (`NAME=value` lines): the credentials are gone
/// (`scrubbed`) or all there with their values, and the [`KEPT`] variables are there either way.
fn check_env(printed: &str, scrubbed: bool, who: &str) {
    let lines: Vec<&str> = printed.lines().collect();
    let value = |name: &str| {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
            .map(str::to_owned)
    };
    let mut leaked = Vec::new();
    let mut missing = Vec::new();
    for n in scrubbed_names() {
        match (value(&n), scrubbed) {
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
        assert_eq!(value(n).as_deref(), Some(v), "{who}: {n} must be kept");
    }
}

fn ctx(dir: &Path) -> ToolUseContext {
    common::ctx(dir).with_results_dir(dir.join("results"))
}

/// What a foreground Bash `env` prints.
async fn bash_env(ctx: &ToolUseContext) -> String {
    let out = common::run(&Bash::default(), ctx, json!({"command": "env"}))
        .await
        .unwrap();
    out.structured["stdout"].as_str().unwrap().to_owned()
}

/// What a background Bash `env` wrote to a file, once it finished.
async fn background_env(ctx: &ToolUseContext, dir: &Path) -> String {
    let file = dir.join("env.txt");
    let done = dir.join("env.done");
    let command = format!("env > '{}'; echo > '{}'", file.display(), done.display());
    common::run(
        &Bash::default(),
        ctx,
        json!({"command": command, "run_in_background": true}),
    )
    .await
    .unwrap();
    let start = Instant::now();
    while !done.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the background command never finished"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    task_registry(ctx).kill_all();
    std::fs::read_to_string(file).unwrap()
}

/// The finding: with `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB=1`, `echo $ANTHROPIC_API_KEY` in a
/// Bash command printed the key. Now neither a foreground nor a background command sees any
/// of the credentials; the variables the scrub keeps still reach them.
#[tokio::test]
async fn bash_commands_do_not_inherit_credentials_with_the_scrub_on() {
    const NAME: &str = "bash_commands_do_not_inherit_credentials_with_the_scrub_on";
    let Some(scrubbed) = rerun_with(NAME, Some("1"), true) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    check_env(&bash_env(&ctx).await, scrubbed, "a Bash command");
    check_env(
        &background_env(&ctx, dir.path()).await,
        scrubbed,
        "a background command",
    );
}

/// Claude Code's truthy values (`true`, `yes`, `on`, any case, space around) turn it on too.
#[tokio::test]
async fn any_truthy_value_turns_the_scrub_on() {
    const NAME: &str = "any_truthy_value_turns_the_scrub_on";
    if std::env::var_os(CHILD).is_none() {
        for value in ["TRUE", " yes ", "On"] {
            rerun_with(NAME, Some(value), true);
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    check_env(&bash_env(&ctx(dir.path())).await, true, "a Bash command");
}

/// Off (unset, `0`, `false`, a typo), the commands inherit every variable, as before.
#[tokio::test]
async fn with_the_scrub_off_commands_inherit_everything() {
    const NAME: &str = "with_the_scrub_off_commands_inherit_everything";
    if std::env::var_os(CHILD).is_none() {
        for value in [None, Some("0"), Some("false"), Some("2")] {
            rerun_with(NAME, value, false);
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    check_env(&bash_env(&ctx).await, false, "a Bash command");
    check_env(
        &background_env(&ctx, dir.path()).await,
        false,
        "a background command",
    );
}

/// The REPL runs the model's code in a real interpreter, which reads its environment as a
/// Bash command does (`os.environ`, `process.env`): the scrub covers it too.
#[cfg(feature = "repl")]
#[tokio::test]
async fn repl_interpreters_do_not_inherit_credentials_with_the_scrub_on() {
    const NAME: &str = "repl_interpreters_do_not_inherit_credentials_with_the_scrub_on";
    let Some(scrubbed) = rerun_with(NAME, Some("1"), true) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(std::fs::canonicalize(dir.path()).unwrap());
    for (language, code) in [
        (
            "python",
            "import os\nprint('\\n'.join(f'{k}={v}' for k, v in os.environ.items()))",
        ),
        (
            "node",
            "console.log(Object.entries(process.env).map(([k, v]) => `${k}=${v}`).join('\\n'))",
        ),
    ] {
        let program = if language == "python" {
            "python3"
        } else {
            "node"
        };
        if tool_core::process::find_shell(program, &[]).is_none() {
            eprintln!("notice: no {program} on PATH; skipping it");
            continue;
        }
        let out = common::run(
            &tools_builtin::Repl::default(),
            &ctx,
            json!({"code": code, "language": language}),
        )
        .await
        .unwrap();
        check_env(
            &out.content.joined_text(),
            scrubbed,
            &format!("the {language} REPL"),
        );
    }
}
