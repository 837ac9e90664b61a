//! Review 34's findings in tool-exec, with real hook scripts and real processes:
//! a PreToolUse hook's `continue: false` is the call's stop request even when a PostToolUse
//! (or PostToolUseFailure) hook stops too, and each hook that stopped has its own note; an
//! invalid `TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY` / `CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY`
//! is reported once, naming the variable, its value and what is used instead.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_core::{
    Attachment, MaxResultSize, Message, ProgressSender, RuleSource, Tool, ToolError, ToolResult,
    ToolUseContext, async_trait,
};
use tool_exec::{AllowAll, CallOutcome, DenyAsks, Ending, ExecutorConfig, Pipeline, ToolUse};
use tool_hooks::{HookRunner, HooksConfig};

/// A `Bash` that runs its command with `sh -c` in the call's cwd: a non-zero exit is a
/// failure. A successful call adds a message of its own (as the Skill tool does), to show
/// where the hooks' notes go beside it.
struct Shell;

fn shell_schema() -> Value {
    json!({"type": "object", "properties": {"command": {"type": "string"}},
        "required": ["command"]})
}

#[async_trait]
impl Tool for Shell {
    fn name(&self) -> &str {
        "Bash"
    }
    fn input_schema(&self) -> Value {
        shell_schema()
    }
    fn description(&self) -> Cow<'_, str> {
        "runs a shell command".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(30_000)
    }
    fn parse_input(&self, input: Value) -> Result<Value, tool_core::InputError> {
        tool_core::check_input("Bash", &shell_schema(), input, false)
    }
    async fn call(
        &self,
        input: Value,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(input["command"].as_str().unwrap_or_default())
            .current_dir(ctx.cwd())
            .output()
            .map_err(|e| ToolError::msg(e.to_string()))?;
        if !out.status.success() {
            return Err(ToolError::msg(format!(
                "Exit code {}",
                out.status.code().unwrap_or(-1)
            )));
        }
        Ok(
            ToolResult::text(String::from_utf8_lossy(&out.stdout)).with_message(
                Message::Attachment(Attachment::new("tool_message", "the tool's own message")),
            ),
        )
    }
}

fn temp_cwd() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    (dir, cwd)
}

/// A command hook that prints `output` (JSON).
fn printing(output: &Value) -> Value {
    json!({"type": "command", "command": format!("echo '{output}'")})
}

fn stopping(reason: &str) -> Value {
    printing(&json!({"continue": false, "stopReason": reason}))
}

/// A pipeline that allows everything, with `hooks` as settings give them, over [`Shell`].
fn session(cwd: &Path, hooks: &Value) -> (Pipeline, ToolUseContext) {
    let (config, diags) = HooksConfig::from_hooks_value(hooks, RuleSource::ProjectSettings);
    assert!(diags.is_empty(), "{diags:?}");
    let runner = HookRunner::new(config);
    let pipeline = Pipeline::new(Arc::new(AllowAll), Arc::new(DenyAsks), Arc::new(runner));
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Shell)];
    (pipeline, ToolUseContext::new(cwd).with_tools(tools))
}

async fn run(pipeline: &Pipeline, ctx: &ToolUseContext, command: &str) -> CallOutcome {
    pipeline
        .run_tool_use(
            &ToolUse::new("toolu_1", "Bash", json!({"command": command})),
            ctx.clone(),
            ProgressSender::none(),
        )
        .await
}

/// The kinds and texts of `messages`.
fn kinds(messages: &[Message]) -> Vec<(String, String)> {
    messages
        .iter()
        .map(|m| match m {
            Message::Attachment(a) => (a.kind.clone(), a.text.clone()),
            other => ("other".to_owned(), format!("{other:?}")),
        })
        .collect()
}

fn note(text: &str) -> (String, String) {
    (
        "hook_stopped_continuation".to_owned(),
        format!("<system-reminder>\n{text}\n</system-reminder>"),
    )
}

/// The review's case: a PreToolUse hook says `continue: false` with PRE-REASON, a
/// PostToolUse hook with POST-REASON. The turn's stop request is the first one, the
/// PreToolUse hook's (it was lost: the PostToolUse one replaced it), and both notes reach
/// the model, in Claude Code's order: the PostToolUse hook's among that event's messages,
/// before the tool's own; the PreToolUse hook's last.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_tool_use_stop_is_kept_when_a_post_tool_use_hook_stops_too() {
    let (_dir, cwd) = temp_cwd();
    let hooks = json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [stopping("PRE-REASON")]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [stopping("POST-REASON")]}],
    });
    let (pipeline, ctx) = session(&cwd, &hooks);
    let out = run(&pipeline, &ctx, "echo one > ran").await;
    assert_eq!(out.ending, Ending::Succeeded);
    assert!(cwd.join("ran").exists(), "the call did not run");
    assert_eq!(out.stop_turn, Some(Some("PRE-REASON".to_owned())));
    assert_eq!(
        kinds(&out.messages_after),
        vec![
            note("PostToolUse:Bash hook stopped continuation: POST-REASON"),
            (
                "tool_message".to_owned(),
                "the tool's own message".to_owned()
            ),
            note("PreToolUse:Bash hook stopped continuation: PRE-REASON"),
        ]
    );

    // Only the PostToolUse hook stops: its request, its note (before the tool's message).
    let hooks = json!({
        "PostToolUse": [{"matcher": "Bash", "hooks": [stopping("POST-REASON")]}],
    });
    let (pipeline, ctx) = session(&cwd, &hooks);
    let out = run(&pipeline, &ctx, "echo two").await;
    assert_eq!(out.stop_turn, Some(Some("POST-REASON".to_owned())));
    assert_eq!(
        kinds(&out.messages_after),
        vec![
            note("PostToolUse:Bash hook stopped continuation: POST-REASON"),
            (
                "tool_message".to_owned(),
                "the tool's own message".to_owned()
            ),
        ]
    );

    // Only the PreToolUse hook stops: its request, its note last.
    let hooks = json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [stopping("PRE-REASON")]}],
    });
    let (pipeline, ctx) = session(&cwd, &hooks);
    let out = run(&pipeline, &ctx, "echo three").await;
    assert_eq!(out.stop_turn, Some(Some("PRE-REASON".to_owned())));
    assert_eq!(
        kinds(&out.messages_after).last(),
        Some(&note(
            "PreToolUse:Bash hook stopped continuation: PRE-REASON"
        ))
    );
}

/// The same on the failure path: the call fails, a PostToolUseFailure hook stops with its
/// reason; the PreToolUse hook's request is the turn's, and both notes are there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_tool_use_stop_is_kept_when_a_post_tool_use_failure_hook_stops_too() {
    let (_dir, cwd) = temp_cwd();
    let hooks = json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [stopping("PRE-REASON")]}],
        "PostToolUseFailure": [{"matcher": "Bash", "hooks": [stopping("FAIL-REASON")]}],
    });
    let (pipeline, ctx) = session(&cwd, &hooks);
    let out = run(&pipeline, &ctx, "touch ran; exit 3").await;
    assert!(cwd.join("ran").exists(), "the call did not run");
    assert!(
        matches!(out.ending, Ending::Failed { .. }),
        "{:?}",
        out.ending
    );
    assert_eq!(out.stop_turn, Some(Some("PRE-REASON".to_owned())));
    assert_eq!(
        kinds(&out.messages_after),
        vec![
            note("PostToolUseFailure:Bash hook stopped continuation: FAIL-REASON"),
            note("PreToolUse:Bash hook stopped continuation: PRE-REASON"),
        ]
    );
}

/// The variable `review34_concurrency_child` is run with, in a child process of this
/// test binary (the environment is the process's: no test here sets it in its own).
const CHILD: &str = "REVIEW34_CONCURRENCY_CHILD";

/// Not a test on its own: the child process of
/// [`an_invalid_concurrency_cap_is_reported_once_and_the_default_used`]. It reads the
/// executor's configuration from its environment twice, recording the warnings traced,
/// and prints the cap and the warnings as one JSON line.
#[test]
#[ignore = "run by an_invalid_concurrency_cap_is_reported_once_and_the_default_used"]
fn review34_concurrency_child() {
    use tracing_subscriber::layer::SubscriberExt as _;
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let warnings = Arc::new(Mutex::new(Vec::new()));
    let subscriber = tracing_subscriber::registry().with(Warnings(Arc::clone(&warnings)));
    let _guard = tracing::subscriber::set_default(subscriber);
    let first = ExecutorConfig::from_env();
    let second = ExecutorConfig::from_env();
    assert_eq!(first, second);
    let warnings = warnings.lock().unwrap().clone();
    println!(
        "REVIEW34 {}",
        json!({"cap": first.max_concurrency, "warnings": warnings})
    );
}

/// Records the `message` of every WARN event.
struct Warnings(Arc<Mutex<Vec<String>>>);

struct MessageField<'a>(&'a mut Option<String>);

impl tracing::field::Visit for MessageField<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            *self.0 = Some(format!("{value:?}"));
        }
    }
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            *self.0 = Some(value.to_owned());
        }
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Warnings {
    fn on_event(
        &self,
        event: &tracing::Event<'_>,
        _ctx: tracing_subscriber::layer::Context<'_, S>,
    ) {
        if *event.metadata().level() == tracing::Level::WARN {
            let mut message = None;
            event.record(&mut MessageField(&mut message));
            self.0.lock().unwrap().push(message.unwrap_or_default());
        }
    }
}

/// `ExecutorConfig::from_env` in a child process with `toolwright` and `claude` as the two
/// variables' values (`None`: unset): the cap and the warnings.
fn cap_in_child(toolwright: Option<&str>, claude: Option<&str>) -> (u64, Vec<String>) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        // Its path in the `review` binary, this file being its module `review34_exec`.
        "review34_exec::review34_concurrency_child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(CHILD, "1")
    .env_remove("TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY")
    .env_remove("CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY");
    if let Some(v) = toolwright {
        cmd.env("TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY", v);
    }
    if let Some(v) = claude {
        cmd.env("CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY", v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        // After libtest's `test NAME ... ` on the same line.
        .find_map(|l| l.split_once("REVIEW34 ").map(|(_, report)| report))
        .unwrap_or_else(|| panic!("no report from the child: {stdout}"));
    let report: Value = serde_json::from_str(line).unwrap();
    let warnings = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .collect();
    (report["cap"].as_u64().unwrap(), warnings)
}

/// The review's case: `0`, `abc`, `-3` and `1.5` were ignored without a word. Each is now
/// reported once (the configuration is read twice), naming the variable and the value, and
/// the default, 10, is used (Claude Code's fallback for an empty, non-numeric or zero cap).
/// A valid value is used without a word; an empty one counts as unset; an invalid
/// `TOOLWRIGHT_…` falls back to a valid `CLAUDE_CODE_…`, and the warning says so; a
/// number too large to hold is the largest, said to be.
#[test]
fn an_invalid_concurrency_cap_is_reported_once_and_the_default_used() {
    const TW: &str = "TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY";
    const CC: &str = "CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY";
    for bad in ["0", "abc", "-3", "1.5", "10s"] {
        for (toolwright, claude, var) in [(Some(bad), None, TW), (None, Some(bad), CC)] {
            let (cap, warnings) = cap_in_child(toolwright, claude);
            assert_eq!(cap, 10, "{var}={bad:?}");
            assert_eq!(
                warnings,
                vec![format!(
                    "{var}={bad:?} is not a positive whole number of calls; the default, 10, is used"
                )],
                "{var}={bad:?}"
            );
        }
    }
    // Valid, unset, empty: no word.
    assert_eq!(cap_in_child(Some("4"), None), (4, vec![]));
    assert_eq!(cap_in_child(None, Some(" 3 ")), (3, vec![]));
    assert_eq!(cap_in_child(Some("5"), Some("3")), (5, vec![]));
    assert_eq!(cap_in_child(None, None), (10, vec![]));
    assert_eq!(cap_in_child(Some(""), Some("  ")), (10, vec![]));
    // An invalid TOOLWRIGHT_… value: the CLAUDE_CODE_… one is used, and said to be.
    assert_eq!(
        cap_in_child(Some("abc"), Some("3")),
        (
            3,
            vec![format!(
                "{TW}=\"abc\" is not a positive whole number of calls; {CC}=\"3\" is used"
            )]
        )
    );
    // Both invalid: each is named, and the default used.
    let (cap, warnings) = cap_in_child(Some("0"), Some("many"));
    assert_eq!(cap, 10);
    assert_eq!(
        warnings,
        vec![
            format!("{TW}=\"0\" is not a positive whole number of calls; the default, 10, is used"),
            format!(
                "{CC}=\"many\" is not a positive whole number of calls; the default, 10, is used"
            ),
        ]
    );
    // Too large to hold: the largest, said to be, then fitted to the open-file limit the
    // child inherits (said too).
    let (cap, warnings) = cap_in_child(Some("99999999999999999999999"), None);
    let largest = ExecutorConfig {
        max_concurrency: usize::MAX,
        ..ExecutorConfig::default()
    };
    let (fitted, said) = match tool_core::process::open_file_limit() {
        Some(limit) => largest.fit_to_open_files(limit),
        None => (largest, None),
    };
    assert_eq!(cap, u64::try_from(fitted.max_concurrency).unwrap());
    let mut expected = vec![format!(
        "{TW}=\"99999999999999999999999\" is too large: the largest is {} calls, which is used",
        usize::MAX
    )];
    expected.extend(said);
    assert_eq!(warnings, expected);
}
