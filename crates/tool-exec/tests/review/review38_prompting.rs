//! Review 38's findings on prompting, with tool-perms' engine, tool-hooks' runner and real
//! hook scripts: `denyInsteadOfPrompting` holds for a PreToolUse hook's ask where the host
//! turned prompts back on (`avoid_prompts` off: `serve`, `agent` on a terminal), and a
//! prompter that refuses without putting the question to anyone says so, so the refusal is
//! the configuration's (`config`), not a user's rejection (`user_reject`).

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_core::{
    MaxResultSize, PermissionSubject, ProgressSender, RuleSource, SourcedRule, Tool, ToolError,
    ToolPermissionContext, ToolResult, ToolUseContext, async_trait,
};
use tool_exec::{
    CallOutcome, Ending, PermissionRuleMatcher, Pipeline, PromptAnswer, PromptRequest, Prompter,
    ToolUse,
};
use tool_hooks::{HookRunner, HooksConfig};
use tool_perms::{PathRoots, PermissionEngine};

/// A `Bash` that runs its command with `sh -c` in the call's cwd; with `interactive`, a
/// tool that exists to ask the user (as AskUserQuestion), under another name.
struct Shell {
    interactive: bool,
    calls: Arc<Mutex<u32>>,
}

#[async_trait]
impl Tool for Shell {
    fn name(&self) -> &str {
        if self.interactive { "Question" } else { "Bash" }
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"command": {"type": "string"}},
            "required": ["command"]})
    }
    fn description(&self) -> Cow<'_, str> {
        "runs a shell command".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(30_000)
    }
    fn requires_user_interaction(&self) -> bool {
        self.interactive
    }
    fn permission_subject(&self, input: &Value) -> Option<PermissionSubject> {
        Some(PermissionSubject::Command(
            input["command"].as_str()?.to_owned(),
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

/// A person who allows every question, counting them.
#[derive(Default)]
struct SaysYes(Mutex<u32>);

#[async_trait]
impl Prompter for SaysYes {
    async fn prompt(&self, _request: &PromptRequest) -> PromptAnswer {
        *self.0.lock().unwrap() += 1;
        PromptAnswer::AllowOnce {
            updated_input: None,
        }
    }
}

/// A call of `tool` with `command`, in a session of `settings` (`permissions` and `hooks`
/// as a settings file has them) whose host asks a person (`avoid_prompts` off).
async fn call(
    cwd: &Path,
    settings: &Value,
    tool: Arc<dyn Tool>,
    prompter: Arc<dyn Prompter>,
    command: &str,
) -> CallOutcome {
    let rules = |key: &str| -> Vec<SourcedRule> {
        settings["permissions"][key]
            .as_array()
            .map(|list| {
                list.iter()
                    .map(|r| SourcedRule {
                        source: RuleSource::UserSettings,
                        rule: r.as_str().unwrap().to_owned(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let perm = ToolPermissionContext {
        allow: rules("allow"),
        deny_instead_of_prompting: settings["permissions"]["denyInsteadOfPrompting"] == true,
        avoid_prompts: false,
        ..Default::default()
    };
    let engine = PermissionEngine::new(&perm, PathRoots::for_cwd(cwd)).unwrap();
    let tools = vec![Arc::clone(&tool)];
    let (config, diags) =
        HooksConfig::from_hooks_value(&settings["hooks"], RuleSource::UserSettings);
    assert!(diags.is_empty(), "{diags:?}");
    let runner = HookRunner::new(config).with_rule_matcher(Arc::new(
        PermissionRuleMatcher::for_tools(tools.clone(), cwd.to_path_buf()),
    ));
    let pipeline = Pipeline::new(Arc::new(engine), prompter, Arc::new(runner));
    let ctx = ToolUseContext::new(cwd)
        .with_tools(tools)
        .with_permission(perm);
    pipeline
        .run_tool_use(
            &ToolUse::new("toolu_1", tool.name(), json!({"command": command})),
            ctx,
            ProgressSender::none(),
        )
        .await
}

/// Settings whose PreToolUse hook on `matcher` asks about every call.
fn asking_hook(matcher: &str, deny_instead: bool) -> Value {
    let ask = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "ask", "permissionDecisionReason": "hook wants a person"}});
    json!({
        "permissions": {"denyInsteadOfPrompting": deny_instead, "allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": matcher, "hooks": [
            {"type": "command", "command": format!("cat >/dev/null; echo '{ask}'")}]}]}
    })
}

/// The review's M1: with `denyInsteadOfPrompting` and prompts on (`serve`), a PreToolUse
/// hook's ask was put to the client, and the call ran when it was accepted. It is refused
/// without asking anyone, saying the settings deny instead of prompting; the command does
/// not run. Without the switch the hook's ask is still put to the person, and a tool that
/// exists to ask the user still asks with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_instead_of_prompting_holds_for_a_hooks_ask() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let calls = Arc::new(Mutex::new(0));
    let shell = |interactive| -> Arc<dyn Tool> {
        Arc::new(Shell {
            interactive,
            calls: calls.clone(),
        })
    };
    let person = Arc::new(SaysYes::default());

    let out = call(
        &cwd,
        &asking_hook("Bash", true),
        shell(false),
        person.clone(),
        "touch made",
    )
    .await;
    let said = out.result.content.joined_text();
    assert_eq!(out.ending, Ending::Denied, "{said}");
    assert_eq!(*person.0.lock().unwrap(), 0, "the person was asked: {said}");
    assert!(!cwd.join("made").exists(), "the command ran");
    assert!(
        said.contains(
            "Permission to use Bash has been denied. It needed approval: hook wants a person."
        ) && said.contains("`permissions.denyInsteadOfPrompting`"),
        "{said}"
    );
    assert_eq!(out.decision, Some(("reject", "config")));

    // Without the switch, the person is asked, and allows it.
    let out = call(
        &cwd,
        &asking_hook("Bash", false),
        shell(false),
        person.clone(),
        "touch made",
    )
    .await;
    assert_eq!(out.ending, Ending::Succeeded);
    assert_eq!(*person.0.lock().unwrap(), 1);
    assert!(cwd.join("made").exists());

    // A tool that exists to ask the user still asks, the switch on.
    let out = call(
        &cwd,
        &asking_hook("Question", true),
        shell(true),
        person.clone(),
        "true",
    )
    .await;
    assert_eq!(out.ending, Ending::Succeeded);
    assert_eq!(*person.0.lock().unwrap(), 2);
}

/// A prompter that refuses without a person's answer, saying so when `says_so`.
struct RefusesUnasked {
    says_so: bool,
}

#[async_trait]
impl Prompter for RefusesUnasked {
    async fn prompt(&self, _request: &PromptRequest) -> PromptAnswer {
        if self.says_so {
            PromptAnswer::Unanswered { message: None }
        } else {
            PromptAnswer::Deny { feedback: None }
        }
    }
}

/// The review's L1, in the pipeline: a prompter that refuses without putting the question
/// to anyone (`serve`'s, for an input too long to show) was counted as a person's "no"
/// (`user_reject`, and the turn stopped). Saying so ([`PromptAnswer::Unanswered`])
/// makes the refusal the configuration's, which does not stop the turn; a prompter that does
/// not say so is still a person's rejection.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompter_that_asked_nobody_refuses_as_the_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let shell = Arc::new(Shell {
        interactive: false,
        calls: Arc::default(),
    });
    let settings = json!({"permissions": {}, "hooks": {}});
    let out = call(
        &cwd,
        &settings,
        shell.clone(),
        Arc::new(RefusesUnasked { says_so: true }),
        "touch made",
    )
    .await;
    assert_eq!(out.ending, Ending::Denied);
    assert_eq!(out.decision, Some(("reject", "config")));
    assert!(
        !out.interrupt_turn,
        "a refusal nobody made stopped the turn"
    );

    let out = call(
        &cwd,
        &settings,
        shell.clone(),
        Arc::new(RefusesUnasked { says_so: false }),
        "touch made",
    )
    .await;
    assert_eq!(out.decision, Some(("reject", "user_reject")));
    assert!(out.interrupt_turn);

    // Review 39: `DenyAsks`, the prompter of a session with no one to ask, refused as a
    // person would: its "no one to ask" came to the model as the user's feedback ("the user
    // said: Permission to use Bash requires approval, and this session has no one to ask")
    // and counted as a user's rejection. It is no one's answer, said as it is.
    let out = call(
        &cwd,
        &settings,
        shell.clone(),
        Arc::new(tool_exec::DenyAsks),
        "touch made",
    )
    .await;
    assert_eq!(out.ending, Ending::Denied);
    assert_eq!(out.decision, Some(("reject", "config")));
    assert!(!out.interrupt_turn);
    let text = out.result.content.joined_text();
    assert!(
        text.starts_with(
            "Permission to use Bash requires approval, and this session has no one to ask."
        ),
        "{text}"
    );
    assert!(!text.contains("the user said"), "{text}");
    assert!(!cwd.join("made").exists());
    assert_eq!(*shell.calls.lock().unwrap(), 0);
}
