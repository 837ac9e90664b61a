//! Review 31's findings on the pipeline with Claude Code's seams (tool-perms' engine,
//! tool-hooks' runner with tool-exec's `if` matcher) and real hook scripts and processes:
//! an approver chosen by an `if` that covers only part of a compound command does not
//! approve it (nothing runs unasked), an updated input the tool's schema refuses is refused
//! at once with the validation error (nobody is asked about it), a matcher naming a
//! shortened MCP tool in full selects its calls, and an `async` hook's context names its
//! tool.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_core::{
    MaxResultSize, McpToolInfo, Message, PermissionSubject, ProgressSender, RuleSource,
    SourcedRule, Tool, ToolError, ToolPermissionContext, ToolResult, ToolUseContext, async_trait,
};
use tool_exec::{
    CallOutcome, Ending, Hooks as _, PermissionRuleMatcher, Pipeline, PromptAnswer, PromptRequest,
    Prompter, ToolUse,
};
use tool_hooks::{HookRunner, HooksConfig};
use tool_perms::{PathRoots, PermissionEngine};

/// A `Bash` that runs its command with `sh -c` in the call's cwd, with Claude Code's
/// `command` and `run_in_background` (a boolean) fields; it counts its calls.
struct Shell {
    calls: Arc<Mutex<u32>>,
}

fn shell_schema() -> Value {
    json!({"type": "object", "properties": {
        "command": {"type": "string"},
        "run_in_background": {"type": "boolean"}
    }, "required": ["command"]})
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
    /// As a typed tool's: an input its type cannot read has no subject.
    fn permission_subject(&self, input: &Value) -> Option<PermissionSubject> {
        let parsed = self.parse_input(input.clone()).ok()?;
        Some(PermissionSubject::Command(
            parsed["command"].as_str()?.to_owned(),
        ))
    }
    async fn call(
        &self,
        input: Value,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        *self.calls.lock().unwrap() += 1;
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(input["command"].as_str().unwrap_or_default())
            .current_dir(ctx.cwd())
            .output()
            .map_err(|e| ToolError::msg(e.to_string()))?;
        Ok(ToolResult::text(String::from_utf8_lossy(&out.stdout)))
    }
}

/// A prompter that counts the questions it is put and refuses them.
#[derive(Default)]
struct Refuses(Mutex<Vec<Value>>);

#[async_trait]
impl Prompter for Refuses {
    async fn prompt(&self, request: &PromptRequest) -> PromptAnswer {
        self.0.lock().unwrap().push(request.input.clone());
        PromptAnswer::Deny {
            feedback: Some("refused by the test's user".into()),
        }
    }
}

/// A session in `cwd`: `tools`, the permission rules (`allow`, `ask`) and `hooks` as
/// settings give them, with tool-exec's `if` matcher; the prompter records questions.
struct Session {
    pipeline: Pipeline,
    runner: HookRunner,
    prompter: Arc<Refuses>,
    ctx: ToolUseContext,
}

fn session(
    cwd: &Path,
    tools: Vec<Arc<dyn Tool>>,
    allow: &[&str],
    ask: &[&str],
    hooks: Value,
) -> Session {
    let rules = |list: &[&str]| {
        list.iter()
            .map(|r| SourcedRule {
                source: RuleSource::ProjectSettings,
                rule: (*r).to_owned(),
            })
            .collect()
    };
    let perm = ToolPermissionContext {
        allow: rules(allow),
        ask: rules(ask),
        ..Default::default()
    };
    let engine = PermissionEngine::new(&perm, PathRoots::for_cwd(cwd)).unwrap();
    let (config, diags) = HooksConfig::from_hooks_value(&hooks, RuleSource::ProjectSettings);
    assert!(diags.is_empty(), "{diags:?}");
    let runner = HookRunner::new(config).with_rule_matcher(Arc::new(
        PermissionRuleMatcher::for_tools(tools.clone(), cwd.to_path_buf()),
    ));
    let prompter = Arc::new(Refuses::default());
    let pipeline = Pipeline::new(Arc::new(engine), prompter.clone(), Arc::new(runner.clone()));
    let ctx = ToolUseContext::new(cwd).with_tools(tools);
    Session {
        pipeline,
        runner,
        prompter,
        ctx,
    }
}

impl Session {
    async fn run(&self, name: &str, input: Value) -> CallOutcome {
        let call = ToolUse::new("toolu_1", name, input);
        self.pipeline
            .run_tool_use(&call, self.ctx.clone(), ProgressSender::none())
            .await
    }
}

fn text(out: &CallOutcome) -> String {
    out.result.content.joined_text()
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

/// The review's PermissionRequest case, end to end: an approver for `git status *` (its
/// `if`) approved `git status; rm -rf zz`, and `zz` was deleted. Its allow no longer
/// counts for a command its `if` covers only in part: the user is asked (and refuses here),
/// `zz` stays. An approver whose `if` covers every subcommand (`Bash(touch *)` for `touch a
/// && touch b`) still approves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_request_approver_does_not_approve_a_command_its_if_covers_in_part() {
    let (_dir, cwd) = temp_cwd();
    let calls = Arc::new(Mutex::new(0));
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Shell {
        calls: calls.clone(),
    })];
    let approver = |rule: &str| {
        let mut hook = printing(&json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}));
        hook["if"] = json!(rule);
        hook
    };
    let hooks = json!({"PermissionRequest": [{"matcher": "Bash", "hooks": [
        approver("Bash(git status *)"), approver("Bash(touch *)")]}]});
    let s = session(&cwd, tools, &[], &[], hooks);
    for command in [
        "git status; rm -rf zz",
        "git status & rm -rf zz; wait",
        "git status $(rm -rf zz)",
        "touch a; rm -rf zz",
    ] {
        std::fs::create_dir_all(cwd.join("zz")).unwrap();
        let out = s.run("Bash", json!({"command": command})).await;
        assert_eq!(out.ending, Ending::Denied, "{command:?}: {}", text(&out));
        assert!(cwd.join("zz").exists(), "{command:?}: zz was deleted");
    }
    assert_eq!(*calls.lock().unwrap(), 0);
    assert_eq!(
        s.prompter.0.lock().unwrap().len(),
        4,
        "the user was not asked"
    );
    // What the `if` covers is approved without asking.
    let out = s
        .run("Bash", json!({"command": "touch a && touch b"}))
        .await;
    assert_eq!(out.decision, Some(("accept", "hook")), "{}", text(&out));
    assert!(cwd.join("a").exists() && cwd.join("b").exists());
    assert_eq!(*calls.lock().unwrap(), 1);
    assert_eq!(s.prompter.0.lock().unwrap().len(), 4);
}

/// The review's PreToolUse case, end to end: an allow hook with `if: "Bash(npm test *)"`
/// approved `npm test; rm -rf zz` (and its other spellings: `&`, `$(…)`, backquotes,
/// `<(…)`, two lines), and `zz` was deleted. Now the call goes to the permission flow,
/// which asks (refused here); `zz` stays. `npm test` alone, and `npm test && npm test`,
/// are still approved by the hook.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_tool_use_approver_does_not_approve_a_command_its_if_covers_in_part() {
    let (_dir, cwd) = temp_cwd();
    let calls = Arc::new(Mutex::new(0));
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Shell {
        calls: calls.clone(),
    })];
    let mut approver = printing(&json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "allow"}}));
    approver["if"] = json!("Bash(npm test *)");
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [approver]}]});
    let s = session(&cwd, tools, &[], &[], hooks);
    let commands = [
        "npm test; rm -rf zz",
        "npm test & rm -rf zz; wait",
        "npm test $(rm -rf zz)",
        "npm test `rm -rf zz`",
        "npm test <(rm -rf zz)",
        "npm test\nrm -rf zz",
    ];
    for command in commands {
        std::fs::create_dir_all(cwd.join("zz")).unwrap();
        let out = s.run("Bash", json!({"command": command})).await;
        assert_eq!(out.ending, Ending::Denied, "{command:?}: {}", text(&out));
        assert!(cwd.join("zz").exists(), "{command:?}: zz was deleted");
    }
    assert_eq!(*calls.lock().unwrap(), 0);
    assert_eq!(s.prompter.0.lock().unwrap().len(), commands.len());
    for command in ["npm test", "npm test && npm test --watch=false"] {
        let out = s.run("Bash", json!({"command": command})).await;
        assert_eq!(out.decision, Some(("accept", "hook")), "{command:?}");
    }
    assert_eq!(s.prompter.0.lock().unwrap().len(), commands.len());
}

/// The `updatedInput` of the review, with `run_in_background` a string: Bash's schema
/// refuses it.
fn bad_update() -> Value {
    json!({"command": "echo hi", "run_in_background": "yes"})
}

/// The review's case: a PreToolUse hook's `updatedInput` with a wrongly typed field and no
/// decision was refused as a permission question nobody could answer (or put to the user),
/// while the same update with an allow got the validation error. It is refused at once with
/// that validation error, whatever the hook decided (no decision, allow, ask): the tool
/// never runs and nobody is asked about an input that could never run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_updated_input_the_schema_refuses_gets_the_validation_error_at_once() {
    let (_dir, cwd) = temp_cwd();
    let calls = Arc::new(Mutex::new(0));
    for decision in [None, Some("allow"), Some("ask")] {
        let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Shell {
            calls: calls.clone(),
        })];
        let mut hso = json!({"hookEventName": "PreToolUse", "updatedInput": bad_update()});
        if let Some(d) = decision {
            hso["permissionDecision"] = json!(d);
        }
        let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            printing(&json!({"hookSpecificOutput": hso}))]}]});
        let s = session(&cwd, tools, &["Bash(echo *)"], &[], hooks);
        let out = s.run("Bash", json!({"command": "echo hi"})).await;
        let said = text(&out);
        assert_eq!(out.ending, Ending::InvalidInput, "{decision:?}: {said}");
        assert!(
            said.contains("InputValidationError: the input as changed by a hook")
                && said.contains("run_in_background"),
            "{decision:?}: {said}"
        );
        assert!(
            s.prompter.0.lock().unwrap().is_empty(),
            "{decision:?}: the user was asked"
        );
    }
    assert_eq!(*calls.lock().unwrap(), 0);
}

/// A PermissionRequest hook's allow with an `updatedInput` the schema refuses, for a call an
/// ask rule (`Bash`, every call) puts to the user: it went back to the user, asked about an
/// input that could never run. It is refused at once with the validation error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_permission_request_update_the_schema_refuses_gets_the_validation_error_at_once() {
    let (_dir, cwd) = temp_cwd();
    let calls = Arc::new(Mutex::new(0));
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Shell {
        calls: calls.clone(),
    })];
    let hooks = json!({"PermissionRequest": [{"matcher": "Bash", "hooks": [printing(&json!({
        "hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedInput": bad_update()}}}))]}]});
    let s = session(&cwd, tools, &[], &["Bash"], hooks);
    let out = s.run("Bash", json!({"command": "echo hi"})).await;
    let said = text(&out);
    assert_eq!(out.ending, Ending::InvalidInput, "{said}");
    assert!(
        said.contains("InputValidationError: the input as changed by a hook")
            && said.contains("run_in_background"),
        "{said}"
    );
    assert!(
        s.prompter.0.lock().unwrap().is_empty(),
        "the user was asked"
    );
    assert_eq!(*calls.lock().unwrap(), 0);
}

/// An MCP tool offered under a shortened name (its full one is past the API's 64
/// characters), as tools-mcp names it.
struct LongMcpTool;

const SHORT_NAME: &str = "mcp__srv__a_very_long_tool_name_that_goes_on_and_on_and_f169a7c9";
const FULL_NAME: &str =
    "mcp__srv__a_very_long_tool_name_that_goes_on_and_on_and_on_for_ever_and_ever";

#[async_trait]
impl Tool for LongMcpTool {
    fn name(&self) -> &str {
        SHORT_NAME
    }
    fn mcp_info(&self) -> Option<McpToolInfo> {
        Some(McpToolInfo {
            server_name: "srv".into(),
            tool_name: "a_very_long_tool_name_that_goes_on_and_on_and_on_for_ever_and_ever".into(),
            source: None,
        })
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn description(&self) -> Cow<'_, str> {
        "long".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(1000)
    }
    async fn call(
        &self,
        _input: Value,
        _ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text("ran"))
    }
}

/// The review's case, end to end: a blocking guard whose `matcher` is the MCP tool's full
/// name never ran for its calls (the tool goes by its shortened name), so an allowed call
/// ran past it. The guard runs and refuses the call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guard_matching_a_shortened_mcp_tool_by_its_full_name_refuses_its_calls() {
    let (_dir, cwd) = temp_cwd();
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(LongMcpTool)];
    let hooks = json!({"PreToolUse": [{"matcher": FULL_NAME, "hooks": [{"type": "command",
        "command": "echo 'blocked by the full-name guard' >&2; exit 2"}]}]});
    let s = session(&cwd, tools, &[SHORT_NAME], &[], hooks);
    let out = s.run(SHORT_NAME, json!({})).await;
    assert_eq!(out.ending, Ending::Denied, "{}", text(&out));
    assert!(
        text(&out).contains("blocked by the full-name guard"),
        "{}",
        text(&out)
    );
}

/// The review's case, through the host's `take_background_messages`: an `async: true`
/// PostToolUse hook's context read `PostToolUse hook additional context: async-ctx`; it
/// names its tool as a synchronous hook's does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_hooks_context_names_its_tool_for_the_model() {
    let (_dir, cwd) = temp_cwd();
    let calls = Arc::new(Mutex::new(0));
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Shell { calls })];
    let mut hook = printing(
        &json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
        "additionalContext": "async-ctx"}}),
    );
    hook["async"] = json!(true);
    let hooks = json!({"PostToolUse": [{"matcher": "Bash", "hooks": [hook]}]});
    let s = session(&cwd, tools, &["Bash(echo *)"], &[], hooks);
    let out = s.run("Bash", json!({"command": "echo hi"})).await;
    assert_eq!(out.ending, Ending::Succeeded, "{}", text(&out));
    s.runner.wait_for_async().await;
    let messages = s.runner.take_background_messages();
    let texts: Vec<&str> = messages
        .iter()
        .filter_map(|m| match m {
            Message::Attachment(a) => Some(a.text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        texts,
        [
            "<system-reminder>\nPostToolUse:Bash hook additional context: async-ctx\n</system-reminder>"
        ]
    );
}

/// The host's matcher reads an approver's `if` as tool-perms reads an allow rule: its
/// redirections and paths count (`echo hi > OUTSIDE/x` is no call `Bash(echo *)` covers,
/// as an allow rule `Bash(echo *)` would not let it write outside the working directory),
/// and a separator inside quotes does not cut (`echo 'a; b'` is covered). Cut by text, the
/// first was approved and wrote outside; the second was refused.
#[tokio::test]
async fn an_approver_s_if_is_read_as_an_allow_rule_with_its_redirections() {
    let (_dir, cwd) = temp_cwd();
    let outside = tempfile::tempdir().unwrap();
    let calls = Arc::new(Mutex::new(0));
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Shell {
        calls: calls.clone(),
    })];
    let mut approver = printing(&json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "allow"}}));
    approver["if"] = json!("Bash(echo *)");
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [approver]}]});
    let s = session(&cwd, tools, &[], &[], hooks);
    let target = outside.path().join("x");
    let command = format!("echo hi > {}", target.display());
    let out = s.run("Bash", json!({"command": command})).await;
    assert_eq!(out.ending, Ending::Denied, "{command:?}: {}", text(&out));
    assert!(!target.exists(), "written outside");
    assert_eq!(*calls.lock().unwrap(), 0);
    let out = s.run("Bash", json!({"command": "echo 'a; b'"})).await;
    assert_eq!(out.decision, Some(("accept", "hook")), "{}", text(&out));
}
