//! Review 35, the Bash tool: a `Bash(run_in_background:true)` deny or ask rule and
//! `CLAUDE_CODE_DISABLE_BACKGROUND_TASKS` keep a command from moving to the background at
//! its timeout (it is killed); `CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR` brings the session
//! back to the project directory after each command; the prompt names the commands killed
//! at their timeout.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use tool_core::{
    ProgressSender, RuleSource, SourcedRule, Tool, ToolError, ToolPermissionContext, ToolResult,
    ToolUseContext,
};
use tools_builtin::Bash;
use tools_builtin::tasks::task_registry;

/// A call through the executor's steps (schema, validation, call), the result whole (with
/// its context change); the model's text of a failure.
async fn call(ctx: &ToolUseContext, input: Value) -> Result<ToolResult, String> {
    let tool = Bash::default();
    let input = tool.parse_input(input).map_err(|e| e.to_model_text())?;
    tool.validate_input(&input, ctx)
        .await
        .map_err(|e| e.message)?;
    tool.call(input, ctx.clone(), ProgressSender::none())
        .await
        .map_err(|e: ToolError| e.to_model_text())
}

/// The context after `result`'s change, as the executor applies it.
fn after(ctx: &ToolUseContext, result: ToolResult) -> ToolUseContext {
    match result.context_modifier {
        Some(change) => change.apply(ctx.clone()),
        None => ctx.clone(),
    }
}

/// The variable that tells a rerun of a test which case it runs.
const CASE: &str = "REVIEW35_BASH_CASE";

/// Runs the test `name` of this binary again with `env` set (and [`CASE`] to `case`): the
/// variables a session reads are this process's, which a test must not change while others
/// run beside it.
fn rerun_with(name: &str, case: &str, env: &[(&str, &str)]) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    // The test's path in the `review` binary, this file being its module `review35_bash`.
    let name = format!("review35_bash::{name}");
    command
        .args(["--exact", &name, "--test-threads=1"])
        .env(CASE, case)
        .env_remove("CLAUDE_CODE_DISABLE_BACKGROUND_TASKS")
        .env_remove("CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR");
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().unwrap();
    common::assert_rerun_passed(&out);
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The command of the review: still running at its 200 ms timeout, it writes `late.txt`
/// a second and a half later unless it is killed.
const LATE_WRITER: &str = "echo start; sleep 1.5; echo late > late.txt";

/// Runs [`LATE_WRITER`] with a 200 ms timeout in `ctx` and returns its result, once the
/// command (or what it became) has had the time to write `late.txt`.
async fn late_writer(ctx: &ToolUseContext) -> Result<ToolResult, String> {
    let result = call(ctx, json!({"command": LATE_WRITER, "timeout": 200})).await;
    tokio::time::sleep(Duration::from_millis(2500)).await;
    result
}

/// Asserts that [`late_writer`] was killed at its timeout: Claude Code's timeout text, no
/// background task, and `late.txt` never written.
fn assert_killed_at_timeout(dir: &Path, result: &Result<ToolResult, String>) {
    let text = match result {
        Ok(r) => panic!("not killed: {}", r.data.content.joined_text()),
        Err(text) => text,
    };
    assert!(text.contains("Command timed out after 200 ms"), "{text}");
    assert!(!text.contains("moved to the background"), "{text}");
    assert!(!dir.join("late.txt").exists(), "{text}");
}

// ----- 1. A deny or ask rule on `run_in_background` -----

fn with_rule(ctx: ToolUseContext, deny: &[&str], ask: &[&str]) -> ToolUseContext {
    let rules = |list: &[&str]| {
        list.iter()
            .map(|rule| SourcedRule {
                source: RuleSource::ProjectSettings,
                rule: (*rule).to_owned(),
            })
            .collect()
    };
    ctx.with_permission(ToolPermissionContext {
        deny: rules(deny),
        ask: rules(ask),
        ..ToolPermissionContext::default()
    })
}

/// A `Bash(run_in_background:true)` deny rule (permissions.md: it "denies a Bash call run in
/// the background") cannot be passed by asking for a tiny timeout: the command is killed at
/// it, as one that starts with `sleep` is, not moved to the background where it goes on
/// writing files. An ask rule likewise (nobody was asked), and a wildcard value that
/// matches `true`; a rule on another value, or on another field, leaves the move as it was.
#[tokio::test(flavor = "multi_thread")]
async fn a_background_rule_keeps_a_command_from_moving_to_the_background_at_its_timeout() {
    for (deny, ask) in [
        (&["Bash(run_in_background:true)"][..], &[][..]),
        (&[], &["Bash(run_in_background:true)"]),
        (&["Bash(run_in_background:t*)"], &[]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let ctx = with_rule(common::ctx(dir.path()), deny, ask)
            .with_results_dir(dir.path().join("results"));
        let result = late_writer(&ctx).await;
        assert_killed_at_timeout(dir.path(), &result);
        assert!(task_registry(&ctx).list().is_empty(), "{deny:?} {ask:?}");
    }
    // Rules that do not match `run_in_background: true`: the command moves on, as before.
    let dir = tempfile::tempdir().unwrap();
    let ctx = with_rule(
        common::ctx(dir.path()),
        &["Bash(run_in_background:false)", "Bash(timeout:200)"],
        &["Bash(description:*)"],
    )
    .with_results_dir(dir.path().join("results"));
    let text = late_writer(&ctx).await.unwrap().data.content.joined_text();
    assert!(
        text.contains("Command was still running after its timeout of 200 ms, so it was moved to the background"),
        "{text}"
    );
    assert!(dir.path().join("late.txt").exists(), "{text}");
}

// ----- 2. CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR -----

/// With `CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR` on (as Claude Code reads its flags: `1`,
/// `true`, `yes`, `on`, any case), each command starts in the project directory: `cd sub`
/// then `pwd` prints the project (a failed command's `cd` too), and the prompt no longer
/// says the working directory persists. Off (`0`), a `cd` holds, as before.
#[test]
fn maintain_project_working_dir_returns_to_the_project_after_each_command() {
    const NAME: &str = "maintain_project_working_dir_returns_to_the_project_after_each_command";
    const VAR: &str = "CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR";
    match std::env::var(CASE).ok().as_deref() {
        None => {
            for value in ["1", "TRUE", " yes "] {
                rerun_with(NAME, "on", &[(VAR, value)]);
            }
            rerun_with(NAME, "off", &[(VAR, "0")]);
        }
        Some(case) => runtime().block_on(maintain_case(case == "on")),
    }
}

async fn maintain_case(on: bool) {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(project.join("sub")).unwrap();
    let ctx = common::ctx(&project);
    let moved = call(&ctx, json!({"command": "cd sub"})).await.unwrap();
    let ctx = after(&ctx, moved);
    let pwd = call(&ctx, json!({"command": "pwd"})).await.unwrap();
    let printed = pwd.data.content.joined_text();
    let prompt = Bash::default().prompt().into_owned();
    if !on {
        assert_eq!(printed, project.join("sub").display().to_string());
        assert!(prompt.contains("The working directory persists between commands"));
        return;
    }
    assert_eq!(printed, project.display().to_string());
    assert!(!printed.contains("reset"), "{printed}");
    // A command that fails after its `cd` comes back too.
    let failed = call(&ctx, json!({"command": "cd sub && false"})).await;
    assert!(failed.is_err());
    let pwd = call(&ctx, json!({"command": "pwd"})).await.unwrap();
    assert_eq!(
        pwd.data.content.joined_text(),
        project.display().to_string()
    );
    // Within one command the `cd` holds.
    let within = call(&ctx, json!({"command": "cd sub && pwd"}))
        .await
        .unwrap();
    assert_eq!(
        within.data.content.joined_text(),
        project.join("sub").display().to_string()
    );
    assert!(
        !prompt.contains("The working directory persists between commands"),
        "{prompt}"
    );
    assert!(
        prompt.contains("Each command starts in the project directory"),
        "{prompt}"
    );
}

// ----- 3. CLAUDE_CODE_DISABLE_BACKGROUND_TASKS -----

/// With `CLAUDE_CODE_DISABLE_BACKGROUND_TASKS` on, `run_in_background: true` is refused with
/// a clear error (nothing runs), a command still running at its timeout is killed instead
/// of moved to the background, and the prompt says so. Off (`false`), both go on as before.
#[test]
fn disable_background_tasks_refuses_run_in_background_and_kills_at_the_timeout() {
    const NAME: &str =
        "disable_background_tasks_refuses_run_in_background_and_kills_at_the_timeout";
    const VAR: &str = "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS";
    match std::env::var(CASE).ok().as_deref() {
        None => {
            for value in ["1", "On"] {
                rerun_with(NAME, "on", &[(VAR, value)]);
            }
            rerun_with(NAME, "off", &[(VAR, "false")]);
        }
        Some(case) => runtime().block_on(disabled_case(case == "on")),
    }
}

async fn disabled_case(on: bool) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path()).with_results_dir(dir.path().join("results"));
    let started = call(
        &ctx,
        json!({"command": "touch ran.txt", "run_in_background": true}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let prompt = Bash::default().prompt().into_owned();
    if !on {
        let text = started.unwrap().data.content.joined_text();
        assert!(text.contains("Command running in background"), "{text}");
        assert!(prompt.contains("goes on in the background"), "{prompt}");
        let text = late_writer(&ctx).await.unwrap().data.content.joined_text();
        assert!(text.contains("moved to the background"), "{text}");
        return;
    }
    let refused = started.map(|r| r.data.content.joined_text()).unwrap_err();
    assert!(
        refused.contains("run_in_background")
            && refused.contains("CLAUDE_CODE_DISABLE_BACKGROUND_TASKS"),
        "{refused}"
    );
    assert!(!dir.path().join("ran.txt").exists(), "{refused}");
    assert!(task_registry(&ctx).list().is_empty());
    let result = late_writer(&ctx).await;
    assert_killed_at_timeout(dir.path(), &result);
    assert!(task_registry(&ctx).list().is_empty());
    assert!(!prompt.contains("goes on in the background"), "{prompt}");
    assert!(!prompt.contains("Set run_in_background"), "{prompt}");
}

// ----- 5. The prompt names the commands killed at their timeout -----

/// The prompt says a command still running at its timeout goes on in the background, and
/// names Claude Code's exceptions, killed instead: one that starts with `sleep`, one that
/// runs `git`.
#[test]
fn the_prompt_names_the_commands_killed_at_their_timeout() {
    let prompt = Bash::default().prompt().into_owned();
    let line = prompt
        .lines()
        .find(|l| l.contains("goes on in the background"))
        .expect("the timeout line");
    assert!(
        line.contains("`sleep`") && line.contains("`git`") && line.contains("killed"),
        "{line}"
    );
}

// ----- Review of review 35: the session engine's rules keep a command from the background -----

/// A `Bash(run_in_background:true)` rule that reached only the session engine (a
/// PermissionRequest hook's `updatedPermissions`, applied with `add_rules`/`apply_update`
/// while the context's permission settings are the ones the session started with) keeps a
/// command from moving to the background at its timeout, deny and ask alike, and the
/// timeout text names the rule. A tool-wide ask rule on Bash (every call was asked about,
/// this one too) leaves the move as it was.
#[tokio::test(flavor = "multi_thread")]
async fn a_rule_added_to_the_session_engine_keeps_a_command_from_the_background() {
    use tool_core::{PermissionUpdate, RuleBehavior, RuleValue, UpdateDestination};
    let background = || RuleValue {
        tool_name: "Bash".to_owned(),
        rule_content: Some("run_in_background:true".to_owned()),
    };
    for behavior in [RuleBehavior::Deny, RuleBehavior::Ask] {
        let dir = tempfile::tempdir().unwrap();
        let engine = std::sync::Arc::new(
            tool_perms::PermissionEngine::new(
                &ToolPermissionContext::default(),
                tool_perms::PathRoots::for_cwd(dir.path()),
            )
            .unwrap(),
        );
        let ctx = common::ctx(dir.path()).with_results_dir(dir.path().join("results"));
        ctx.app_state()
            .set(tool_perms::SessionEngine(engine.clone()));
        assert!(ctx.permission().deny.is_empty() && ctx.permission().ask.is_empty());
        let diagnostics = engine.apply_update(&PermissionUpdate::AddRules {
            rules: vec![background()],
            behavior,
            destination: UpdateDestination::Session,
        });
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
        let result = late_writer(&ctx).await;
        assert_killed_at_timeout(dir.path(), &result);
        let text = result.unwrap_err();
        assert!(text.contains("Bash(run_in_background:true)"), "{text}");
        assert!(task_registry(&ctx).list().is_empty(), "{behavior:?}");
    }
    // A tool-wide ask rule added the same way: the command still moves on.
    let dir = tempfile::tempdir().unwrap();
    let engine = std::sync::Arc::new(
        tool_perms::PermissionEngine::new(
            &ToolPermissionContext::default(),
            tool_perms::PathRoots::for_cwd(dir.path()),
        )
        .unwrap(),
    );
    engine.add_rules(
        RuleBehavior::Ask,
        RuleSource::Session,
        &[RuleValue {
            tool_name: "Bash".to_owned(),
            rule_content: None,
        }],
    );
    let ctx = common::ctx(dir.path()).with_results_dir(dir.path().join("results"));
    ctx.app_state().set(tool_perms::SessionEngine(engine));
    let text = late_writer(&ctx).await.unwrap().data.content.joined_text();
    assert!(text.contains("moved to the background"), "{text}");
}

/// The timeout text names the rule of the context's own settings that kept the command from
/// the background too, a field rule behind a tool-wide ask rule included.
#[tokio::test(flavor = "multi_thread")]
async fn the_timeout_text_names_the_rule_that_kept_the_command_from_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = with_rule(
        common::ctx(dir.path()),
        &[],
        &["Bash(run_in_background:t*)"],
    )
    .with_results_dir(dir.path().join("results"));
    let result = late_writer(&ctx).await;
    assert_killed_at_timeout(dir.path(), &result);
    let text = result.unwrap_err();
    assert!(
        text.contains("ask rule Bash(run_in_background:t*)"),
        "{text}"
    );
    // Behind a tool-wide ask rule (which the engine names first) the field rule still holds.
    let dir = tempfile::tempdir().unwrap();
    let ctx = with_rule(
        common::ctx(dir.path()),
        &[],
        &["Bash", "Bash(run_in_background:true)"],
    )
    .with_results_dir(dir.path().join("results"));
    let result = late_writer(&ctx).await;
    assert_killed_at_timeout(dir.path(), &result);
    let text = result.unwrap_err();
    assert!(
        text.contains("ask rule Bash(run_in_background:true)"),
        "{text}"
    );
}
