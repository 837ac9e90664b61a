//! Test tools whose behaviour is set per call through their input.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tool_core::{
    InterruptBehavior, MaxResultSize, ProgressSender, Tool, ToolError, ToolResult, ToolUseContext,
    async_trait,
};

/// What the overlap detector saw.
#[derive(Debug, Default)]
pub struct Log {
    pub running: Vec<(String, bool)>,
    pub violations: Vec<String>,
    pub started: Vec<String>,
    /// When each call of `started` started (same order).
    pub started_at: Vec<tokio::time::Instant>,
    pub finished: Vec<String>,
    pub cwd_seen: Vec<(String, PathBuf)>,
    pub max_parallel: usize,
    /// Calls whose wait ran to its end (the token did not stop it), in the order they got
    /// there.
    pub slept: Vec<String>,
    /// Calls that returned `Ok` with a context modifier, in the order they returned, with
    /// whether the call was concurrency-safe for the input it ran with.
    pub modified: Vec<(String, bool)>,
    /// When a prompter answered a permission question with a rejection that stops the turn.
    pub rejected_at: Vec<tokio::time::Instant>,
}

/// A tool named `name`; per call, the input says how long to take (`ms`), how to end
/// (`end`: ok | fail | shell | panic | empty | big), and whether to return a modifier (`modify`).
pub struct TestTool {
    pub name: &'static str,
    pub safe: bool,
    pub interrupt: InterruptBehavior,
    pub log: Arc<Mutex<Log>>,
}

impl TestTool {
    pub fn new(name: &'static str, safe: bool, log: &Arc<Mutex<Log>>) -> Self {
        Self {
            name,
            safe,
            interrupt: InterruptBehavior::Block,
            log: Arc::clone(log),
        }
    }
    pub fn cancellable(mut self) -> Self {
        self.interrupt = InterruptBehavior::Cancel;
        self
    }
}

struct Running<'a> {
    log: &'a Mutex<Log>,
    id: String,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let mut log = self.log.lock().unwrap();
        log.running.retain(|(id, _)| id != &self.id);
        log.finished.push(self.id.clone());
    }
}

#[async_trait]
impl Tool for TestTool {
    fn name(&self) -> &str {
        self.name
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"ms": {"type": "integer"}, "end": {"type": "string"}, "stubborn": {"type": "boolean"}, "unsafe": {"type": "boolean"}, "modify": {"type": "boolean"}, "rewrite": {"type": "boolean"}}})
    }
    fn description(&self) -> Cow<'_, str> {
        "test tool".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    /// The tool's safety, unless the input says `"unsafe": true`.
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        self.safe && input["unsafe"].as_bool() != Some(true)
    }
    fn parse_input(&self, input: Value) -> Result<Value, tool_core::InputError> {
        tool_core::check_input(self.name, &self.input_schema(), input, false)
    }
    fn interrupt_behavior(&self) -> InterruptBehavior {
        self.interrupt
    }
    /// The output shape is a string.
    fn render_output(&self, output: &Value) -> Option<tool_core::ToolResultContent> {
        output
            .as_str()
            .map(|s| tool_core::ToolResultContent::Text(format!("rendered: {s}")))
    }
    async fn call(
        &self,
        input: Value,
        ctx: ToolUseContext,
        progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        let id = ctx.tool_use_id().unwrap_or_default().to_owned();
        let safe = self.is_concurrency_safe(&input);
        {
            let mut log = self.log.lock().unwrap();
            let others_unsafe = log.running.iter().any(|(_, safe)| !safe);
            if !log.running.is_empty() && (!safe || others_unsafe) {
                let msg = format!(
                    "{id} ({}) overlapped {:?}",
                    if safe { "safe" } else { "unsafe" },
                    log.running
                );
                log.violations.push(msg);
            }
            log.running.push((id.clone(), safe));
            log.max_parallel = log.max_parallel.max(log.running.len());
            log.started.push(id.clone());
            log.started_at.push(tokio::time::Instant::now());
            log.cwd_seen.push((id.clone(), ctx.cwd().to_path_buf()));
        }
        let _running = Running {
            log: &self.log,
            id: id.clone(),
        };
        progress.send(json!({"started": id}));
        let ms = input["ms"].as_u64().unwrap_or(0);
        // A stubborn call finishes its work whatever the token says.
        let stubborn = input["stubborn"].as_bool() == Some(true);
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(ms)) => {}
            () = ctx.cancellation().cancelled(), if !stubborn => return Err(ToolError::Cancelled(None)),
        }
        self.log.lock().unwrap().slept.push(id.clone());
        let result = match input["end"].as_str().unwrap_or("ok") {
            "fail" => return Err(ToolError::msg(format!("{id} failed"))),
            "shell" => {
                return Err(ToolError::Shell {
                    exit_code: Some(2),
                    stderr: "boom".into(),
                    stdout: String::new(),
                    interrupted: false,
                });
            }
            "panic" => panic!("tool {id} panicked on purpose"),
            "empty" => ToolResult::text(""),
            "big" => ToolResult::text("x".repeat(60_000)),
            _ => ToolResult::text(format!("{id} done")),
        };
        if input["modify"].as_bool() == Some(true) {
            self.log.lock().unwrap().modified.push((id.clone(), safe));
            let id2 = id.clone();
            return Ok(result.with_context_modifier(move |ctx| {
                let next = ctx.cwd().join(&id2);
                ctx.with_cwd(next)
            }));
        }
        Ok(result)
    }
}

/// The standard set: `Read` (safe), `Grep` (safe), `Edit` (unsafe), `Bash` (unsafe),
/// `Sleep` (unsafe, cancellable).
pub fn tools(log: &Arc<Mutex<Log>>) -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(TestTool::new("Read", true, log)),
        Arc::new(TestTool::new("Grep", true, log)),
        Arc::new(TestTool::new("Edit", false, log)),
        Arc::new(TestTool::new("Bash", false, log)),
        Arc::new(TestTool::new("Sleep", false, log).cancellable()),
        Arc::new(TestTool::new("Peek", true, log).cancellable()),
    ]
}

pub fn ctx(log: &Arc<Mutex<Log>>) -> ToolUseContext {
    ToolUseContext::new("/w").with_tools(tools(log))
}

/// PreToolUse hooks that allow every call and make those whose input says `"rewrite": true`
/// unsafe (`"unsafe": true`), as a hook rewriting `git status` into `cd app && make` does,
/// each call after `hook_ms` milliseconds (default 0).
pub struct RewritesUnsafe;

#[async_trait]
impl tool_exec::Hooks for RewritesUnsafe {
    async fn pre_tool_use(
        &self,
        call: tool_exec::HookCall<'_>,
        ctx: &ToolUseContext,
    ) -> tool_exec::PreToolUseOutcome {
        // A slow hook, killed (answering "cancelled") when the call is cancelled, as a
        // command hook's process is.
        if let Some(ms) = call.input["hook_ms"].as_u64().filter(|&ms| ms > 0) {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(ms)) => {}
                () = ctx.cancellation().cancelled() => {
                    return tool_exec::PreToolUseOutcome {
                        cancelled: true,
                        ..Default::default()
                    };
                }
            }
        }
        if call.input["rewrite"].as_bool() != Some(true) {
            return tool_exec::PreToolUseOutcome::default();
        }
        let mut input = call.input.clone();
        input["unsafe"] = json!(true);
        tool_exec::PreToolUseOutcome {
            decision: Some(tool_exec::HookDecision::Allow {
                updated_input: Some(input),
                reason: None,
            }),
            ..Default::default()
        }
    }
    async fn post_tool_use(
        &self,
        _call: tool_exec::HookCall<'_>,
        _output: &Value,
        _ctx: &ToolUseContext,
    ) -> tool_exec::PostToolUseOutcome {
        tool_exec::PostToolUseOutcome::default()
    }
    async fn post_tool_use_failure(
        &self,
        _call: tool_exec::HookCall<'_>,
        _error: &str,
        _is_interrupt: bool,
        _ctx: &ToolUseContext,
    ) -> tool_exec::PostToolUseOutcome {
        tool_exec::PostToolUseOutcome::default()
    }
}

/// Permissions that ask for the calls whose input carries `"ask"` and allow the others.
pub struct AsksWhenTold;

#[async_trait]
impl tool_exec::Permissions for AsksWhenTold {
    async fn decide(
        &self,
        _tool: &dyn Tool,
        input: &Value,
        _ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        if input["ask"].is_string() {
            tool_core::PermissionResult::ask("?")
        } else {
            tool_core::PermissionResult::allow()
        }
    }
    async fn check_rule_based(
        &self,
        _tool: &dyn Tool,
        _input: &Value,
        _ctx: &ToolUseContext,
    ) -> Option<tool_core::PermissionResult> {
        None
    }
}

/// The feedback a user who says no (but not "stop") gives.
pub const FEEDBACK: &str = "not this one";

/// A user who answers after `ask_ms` milliseconds as the input's `ask` says: `allow`,
/// `reject` (no feedback: the turn stops; logged in [`Log::rejected_at`]) or `feedback`
/// (refused with [`FEEDBACK`]; the turn goes on).
pub struct Answers(pub Arc<Mutex<Log>>);

#[async_trait]
impl tool_exec::Prompter for Answers {
    async fn prompt(&self, request: &tool_exec::PromptRequest) -> tool_exec::PromptAnswer {
        let ms = request.input["ask_ms"].as_u64().unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        match request.input["ask"].as_str() {
            Some("reject") => {
                self.0
                    .lock()
                    .unwrap()
                    .rejected_at
                    .push(tokio::time::Instant::now());
                tool_exec::PromptAnswer::Deny { feedback: None }
            }
            Some("feedback") => tool_exec::PromptAnswer::Deny {
                feedback: Some(FEEDBACK.into()),
            },
            _ => tool_exec::PromptAnswer::AllowOnce {
                updated_input: None,
            },
        }
    }
}
