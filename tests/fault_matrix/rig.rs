//! The rig every fault runs in: a temporary project with settings files, a session built the
//! way the binary builds one (`src/session.rs`), the streaming executor, and the checks each
//! fault must pass (one result per call, clear error text, the executor survives, no process
//! left, no temporary file left).

use std::borrow::Cow;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::Notify;
use tool_core::{
    InterruptBehavior, MaxResultSize, Message, ProgressSender, Tool, ToolError, ToolResult,
    ToolUseContext, ValidationError, async_trait,
};
use tool_exec::{
    DenyAsks, ExecutorConfig, ExecutorEvent, Hooks, Permissions, Pipeline, PromptAnswer,
    PromptRequest, Prompter, StreamingToolExecutor, ToolCallResult, ToolUse,
};
use tool_hooks::{HookRunner, SettingsPaths, load_hooks};
use tool_perms::PermissionEngine;
use tool_perms::settings::{SettingsSources, load_permissions};

/// How long any one fault may take before the test calls it a hang (a guard, not a timing
/// assertion: every fault here ends by an event well before it).
pub const HANG_GUARD: Duration = Duration::from_secs(120);

/// A unique number per use, for markers that tell this test's processes from any other's.
pub fn nonce() -> u64 {
    static N: AtomicU64 = AtomicU64::new(1);
    u64::from(std::process::id()) * 1000 + N.fetch_add(1, Ordering::Relaxed)
}

/// A tool_use block.
pub fn call(id: &str, name: &str, input: Value) -> ToolUse {
    ToolUse::new(id, name, input)
}

/// A wrapper put around one of the session's seams.
type Wrap<T> = Box<dyn FnOnce(Arc<T>) -> Arc<T>>;

/// How a rig is built.
pub struct RigBuilder {
    settings: Value,
    mcp_json: Option<Value>,
    tools: Vec<Arc<dyn Tool>>,
    prompter: Arc<dyn Prompter>,
    asks: bool,
    wrap_hooks: Option<Wrap<dyn Hooks>>,
    wrap_permissions: Option<Wrap<dyn Permissions>>,
    mcp_options: Box<dyn FnOnce(&mut tools_mcp::McpOptions)>,
    results_dir: Option<PathBuf>,
}

impl RigBuilder {
    /// `.claude/settings.json` of the project.
    pub fn settings(mut self, settings: Value) -> Self {
        self.settings = settings;
        self
    }
    /// `.mcp.json` of the project.
    pub fn mcp_json(mut self, mcp: Value) -> Self {
        self.mcp_json = Some(mcp);
        self
    }
    /// A host tool besides the built-ins.
    pub fn tool(mut self, tool: impl Tool + 'static) -> Self {
        self.tools.push(Arc::new(tool));
        self
    }
    /// Who answers permission asks (default: nobody; asks are denied before asking).
    pub fn prompter(mut self, prompter: impl Prompter + 'static) -> Self {
        self.prompter = Arc::new(prompter);
        self.asks = true;
        self
    }
    /// Wraps the session's hooks (to inject a fault between stages).
    pub fn wrap_hooks(
        mut self,
        f: impl FnOnce(Arc<dyn Hooks>) -> Arc<dyn Hooks> + 'static,
    ) -> Self {
        self.wrap_hooks = Some(Box::new(f));
        self
    }
    /// Wraps the session's permission engine (to inject a fault after the check).
    pub fn wrap_permissions(
        mut self,
        f: impl FnOnce(Arc<dyn Permissions>) -> Arc<dyn Permissions> + 'static,
    ) -> Self {
        self.wrap_permissions = Some(Box::new(f));
        self
    }
    /// Changes the MCP options (timeouts).
    pub fn mcp_options(mut self, f: impl FnOnce(&mut tools_mcp::McpOptions) + 'static) -> Self {
        self.mcp_options = Box::new(f);
        self
    }
    /// Where large results go (default: a fresh temporary directory).
    pub fn results_dir(mut self, dir: PathBuf) -> Self {
        self.results_dir = Some(dir);
        self
    }

    /// Opens the session, as `Session::open` does for a trusted project without user or
    /// managed settings.
    pub async fn build(self) -> Rig {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        std::fs::write(
            root.join(".claude/settings.json"),
            serde_json::to_string_pretty(&self.settings).unwrap(),
        )
        .unwrap();
        if let Some(mcp) = &self.mcp_json {
            std::fs::write(root.join(".mcp.json"), mcp.to_string()).unwrap();
        }
        std::fs::write(root.join("hello.txt"), "hello from the project\n").unwrap();
        let results_holder = tempfile::tempdir().unwrap();
        let results = self
            .results_dir
            .clone()
            .unwrap_or_else(|| results_holder.path().join("tool-results"));

        let mut sources = SettingsSources::standard(&root);
        sources.user_config_dir = None;
        sources.managed_dir = None;
        sources.project_trusted = true;
        sources.host_tools = self.tools.iter().map(|t| t.name().to_owned()).collect();
        let loaded = load_permissions(&sources);
        assert!(
            loaded.diagnostics.is_empty(),
            "settings problems: {:?}",
            loaded.diagnostics
        );
        let mut permission = loaded.context.clone();
        permission.avoid_prompts = !self.asks;
        let (engine, problems) = PermissionEngine::new_lenient(&permission, loaded.roots.clone());
        assert!(problems.is_empty(), "rule problems: {problems:?}");

        let mut loader = tools_mcp::ConfigLoader::new(&root);
        loader.claude_json = None;
        let (servers, mcp_problems) = loader.load();
        assert!(mcp_problems.is_empty(), "{mcp_problems:?}");
        let mut notices = Vec::new();
        let mcp = if servers.is_empty() {
            None
        } else {
            let mut opts = tools_mcp::McpOptions::new(&root);
            (self.mcp_options)(&mut opts);
            let (manager, problems) = tools_mcp::McpManager::connect(servers, opts).await;
            notices.extend(problems.iter().map(ToString::to_string));
            Some(manager)
        };
        let mut builtins = tool_registry::tools(tool_registry::ToolFilter::default(), |t| {
            engine.is_blanket_denied(t)
        });
        builtins.extend(self.tools);
        let mcp_tools = mcp.as_ref().map(|m| m.tools()).unwrap_or_default();
        let tools = tool_registry::assemble_tool_pool(builtins, mcp_tools);

        let mut hook_paths = SettingsPaths::discover(&root);
        hook_paths.user_config_dir = None;
        hook_paths.managed_dir = None;
        hook_paths.project_trusted = true;
        let hooks = load_hooks(&hook_paths);
        assert!(
            hooks.diagnostics.is_empty(),
            "hook problems: {:?}",
            hooks.diagnostics
        );
        let runner: Arc<dyn Hooks> = Arc::new(
            HookRunner::new(hooks.config)
                .with_project_dir(&root)
                .with_rule_matcher(Arc::new(tool_exec::PermissionRuleMatcher::for_tools(
                    tools.clone(),
                    root.clone(),
                ))),
        );
        let hooks = match self.wrap_hooks {
            Some(wrap) => wrap(runner),
            None => runner,
        };
        let ctx = ToolUseContext::new(&root)
            .with_tools(tools)
            .with_permission(permission)
            .with_results_dir(results.clone())
            .with_session_id(format!("fault-{}", nonce()));
        let engine: Arc<dyn Permissions> = Arc::new(engine);
        let permissions = match self.wrap_permissions {
            Some(wrap) => wrap(engine),
            None => engine,
        };
        let pipeline = Pipeline::new(permissions, self.prompter, hooks);
        Rig {
            _dir: dir,
            _results_holder: results_holder,
            root,
            results,
            ctx,
            pipeline: Arc::new(pipeline),
            mcp,
            notices,
        }
    }
}

/// An open session in a temporary project.
pub struct Rig {
    _dir: tempfile::TempDir,
    _results_holder: tempfile::TempDir,
    /// The project directory (canonical).
    pub root: PathBuf,
    /// Where large results are persisted.
    pub results: PathBuf,
    /// The session's context (its token is the turn's parent: cancelling it is a hard
    /// interrupt).
    pub ctx: ToolUseContext,
    /// The session's pipeline.
    pub pipeline: Arc<Pipeline>,
    /// The MCP servers, if any.
    pub mcp: Option<tools_mcp::McpManager>,
    /// Problems reported while opening (MCP connection failures).
    pub notices: Vec<String>,
}

/// A rig with no settings, no hooks, no servers.
pub fn rig() -> RigBuilder {
    RigBuilder {
        settings: json!({}),
        mcp_json: None,
        tools: Vec::new(),
        prompter: Arc::new(DenyAsks),
        asks: false,
        wrap_hooks: None,
        wrap_permissions: None,
        mcp_options: Box::new(|_| {}),
        results_dir: None,
    }
}

impl Rig {
    /// A path in the project.
    pub fn path(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    /// Writes an executable script into the project and returns its path.
    pub fn script(&self, name: &str, body: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    }

    /// Starts a turn: the blocks are added at once and the stream is closed.
    pub fn start(&self, calls: &[ToolUse]) -> Turn {
        self.start_in(self.ctx.clone(), calls)
    }

    /// Starts a turn in `ctx` (a context with its own cancellation token).
    pub fn start_in(&self, ctx: ToolUseContext, calls: &[ToolUse]) -> Turn {
        let executor =
            StreamingToolExecutor::new(self.pipeline.clone(), ctx, ExecutorConfig::default());
        for c in calls {
            executor.add_tool(c.clone());
        }
        executor.finish();
        Turn {
            executor,
            calls: calls.to_vec(),
        }
    }

    /// Runs a whole turn and checks the invariants.
    pub async fn run(&self, calls: &[ToolUse]) -> Vec<ToolCallResult> {
        self.start(calls).results().await
    }

    /// Runs one call.
    pub async fn run_one(&self, c: ToolUse) -> ToolCallResult {
        self.run(&[c]).await.remove(0)
    }

    /// The executor survived the fault: a fresh turn still reads a file.
    pub async fn assert_survives(&self) {
        let n = nonce();
        let file = self.path(&format!("after-{n}.txt"));
        std::fs::write(&file, format!("still here {n}\n")).unwrap();
        let r = self
            .run_one(call("toolu_after", "Read", json!({"file_path": file})))
            .await;
        assert!(
            !r.outcome.result.is_error,
            "a call after the fault failed: {}",
            text(&r)
        );
        assert!(
            text(&r).contains(&format!("still here {n}")),
            "{}",
            text(&r)
        );
        std::fs::remove_file(&file).unwrap();
    }

    /// No temporary file anywhere in the project or the results directory.
    pub fn assert_no_temp_files(&self) {
        for dir in [&self.root, &self.results] {
            let stray = temp_files(dir);
            assert!(stray.is_empty(), "temporary files left behind: {stray:?}");
        }
    }
}

/// A running turn.
pub struct Turn {
    /// The executor.
    pub executor: StreamingToolExecutor,
    calls: Vec<ToolUse>,
}

impl Turn {
    /// Collects every result (with a hang guard) and checks invariant 1: exactly one result
    /// per tool_use, in arrival order, each error with a clear (non-blank) text.
    pub async fn results(mut self) -> Vec<ToolCallResult> {
        let results = tokio::time::timeout(HANG_GUARD, async {
            let mut results = Vec::new();
            while let Some(event) = self.executor.next().await {
                if let ExecutorEvent::Result(r) = event {
                    results.push(*r);
                }
            }
            results
        })
        .await
        .expect("the turn hung: a tool_use never got its result");
        let ids: Vec<&str> = results.iter().map(|r| r.tool_use.id.as_str()).collect();
        let expected: Vec<&str> = self.calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, expected, "one result per tool_use, in order");
        for r in &results {
            assert_eq!(r.outcome.result.tool_use_id, r.tool_use.id);
            if r.outcome.result.is_error {
                let t = text(r);
                assert!(
                    t.trim().len() > 10,
                    "an error result without a clear text: {t:?}"
                );
            }
        }
        results
    }
}

/// The text of a result.
pub fn text(r: &ToolCallResult) -> String {
    r.outcome.result.content.joined_text()
}

/// Every message around a result, as text (what the user and the model see besides it).
pub fn messages(r: &ToolCallResult) -> Vec<String> {
    r.outcome
        .messages_before
        .iter()
        .chain(&r.outcome.messages_after)
        .map(|m| match m {
            Message::System(s) => s.clone(),
            Message::Attachment(a) => a.text.clone(),
            other => format!("{other:?}"),
        })
        .collect()
}

/// Files whose name marks them as temporary, below `dir`.
pub fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(temp_files(&path));
        } else if name.contains(".tw-tmp.") || name.ends_with(".tmp") || name.starts_with(".tmp") {
            out.push(path);
        }
    }
    out
}

/// Fields of `/proc/PID/stat` after the command name: state, ppid, pgrp, session.
fn stat(pid: u32) -> Option<(char, i32, i32, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    let mut f = after.split_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgrp = f.next()?.parse().ok()?;
    let session = f.next()?.parse().ok()?;
    Some((state, ppid, pgrp, session))
}

fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .collect()
}

fn alive(pid: u32) -> bool {
    stat(pid).is_some_and(|(state, ..)| state != 'Z' && state != 'X')
}

/// Live processes whose command line contains `needle`.
pub fn processes_with(needle: &str) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|&pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
                && alive(pid)
        })
        .collect()
}

/// Live processes in process group `pgid` or session `pgid`.
pub fn group_members(pgid: i32) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|&pid| {
            stat(pid).is_some_and(|(state, _, pgrp, session)| {
                state != 'Z' && state != 'X' && (pgrp == pgid || session == pgid)
            })
        })
        .collect()
}

/// Polls `probe` until it finds nothing (signals are delivered asynchronously) and returns
/// what it still finds after a bound.
pub async fn settle(probe: impl Fn() -> Vec<u32>) -> Vec<u32> {
    for _ in 0..200 {
        if probe().is_empty() {
            return Vec::new();
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    probe()
}

/// Asserts that nothing with `marker` in its command line and nothing in the process group
/// (or session) named in `pid_file` (if it was written) is alive.
pub async fn assert_no_process(marker: &str, pid_file: Option<&Path>) {
    let left = settle(|| processes_with(marker)).await;
    assert!(
        left.is_empty(),
        "processes with `{marker}` still running: {left:?}"
    );
    if let Some(file) = pid_file
        && let Ok(text) = std::fs::read_to_string(file)
    {
        let pgid: i32 = text.trim().parse().unwrap();
        let left = settle(|| group_members(pgid)).await;
        assert!(left.is_empty(), "process group {pgid} still has {left:?}");
    }
}

/// Waits until `path` exists (a stage was reached), with the hang guard.
pub async fn wait_for_file(path: &Path) {
    tokio::time::timeout(HANG_GUARD, async {
        while !path.exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} never appeared", path.display()));
}

/// A host tool with a fault chosen by its input (`fault`): `panic`, `panic-modifier`,
/// `hang-validation` (signals `entered`, then never returns from `validate_input`), `wait`
/// (signals `entered`, then waits for its token), `big` (200,000 characters), `ok`.
pub struct Faulty {
    /// Notified when the tool reaches the stage under test.
    pub entered: Arc<Notify>,
    name: &'static str,
    interrupt: InterruptBehavior,
}

impl Faulty {
    /// A fresh tool (`Faulty`, interrupt behaviour `block`) and its stage signal.
    pub fn new() -> (Self, Arc<Notify>) {
        let entered = Arc::new(Notify::new());
        (
            Self {
                entered: entered.clone(),
                name: "Faulty",
                interrupt: InterruptBehavior::Block,
            },
            entered,
        )
    }

    /// The same tool named `Interruptible`, which a user interrupt cancels.
    pub fn interruptible() -> (Self, Arc<Notify>) {
        let (mut tool, entered) = Self::new();
        tool.name = "Interruptible";
        tool.interrupt = InterruptBehavior::Cancel;
        (tool, entered)
    }
}

#[async_trait]
impl Tool for Faulty {
    fn name(&self) -> &str {
        self.name
    }
    fn interrupt_behavior(&self) -> InterruptBehavior {
        self.interrupt
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object", "properties": {"fault": {"type": "string"}}, "required": ["fault"]})
    }
    fn description(&self) -> Cow<'_, str> {
        "a tool that fails on purpose".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn parse_input(&self, input: Value) -> Result<Value, tool_core::InputError> {
        tool_core::check_input(self.name, &self.input_schema(), input, false)
    }
    async fn validate_input(
        &self,
        input: &Value,
        _ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        if input["fault"] == "hang-validation" {
            self.entered.notify_one();
            std::future::pending::<()>().await;
        }
        Ok(())
    }
    async fn call(
        &self,
        input: Value,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        match input["fault"].as_str().unwrap_or_default() {
            "panic" => panic!("the tool broke on purpose"),
            "panic-modifier" => Ok(ToolResult::text("the call itself worked")
                .with_context_modifier(|_ctx| panic!("the context modifier broke on purpose"))),
            "modifier" => Ok(ToolResult::text("moved").with_context_modifier(|ctx| {
                let next = ctx.cwd().join("moved");
                ctx.with_cwd(next)
            })),
            "wait" => {
                self.entered.notify_one();
                ctx.cancellation().cancelled().await;
                Err(ToolError::Cancelled(None))
            }
            "big" => Ok(ToolResult::text("y".repeat(200_000))),
            "cwd" => Ok(ToolResult::text(ctx.cwd().display().to_string())),
            _ => Ok(ToolResult::text("ok")),
        }
    }
}

/// A prompter that signals when it is asked and never answers.
pub struct NeverAnswers {
    /// Notified when a request arrives.
    pub asked: Arc<Notify>,
}

#[async_trait]
impl Prompter for NeverAnswers {
    async fn prompt(&self, _request: &PromptRequest) -> PromptAnswer {
        self.asked.notify_one();
        std::future::pending().await
    }
}
