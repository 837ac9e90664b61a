//! [`HookRunner`]: runs the matching hooks of an event in parallel and aggregates their
//! results into typed outcomes.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use tool_core::{PermissionUpdate, ToolUseContext};

use crate::config::{
    HandlerKind, HookHandler, HooksConfig, MatcherGroup, OnFailure, TOOL_EVENTS, default_timeout,
};
use crate::matcher::{BasicRuleMatcher, IfMatch, Matcher, RuleMatcher, if_names_in_other_case};
use crate::outcome::{
    AsyncHookResult, CommonOutcome, EventOutcome, HookMessage, HookRunReport,
    PermissionDeniedOutcome, PermissionRequestOutcome, PermissionRequestVerdict,
    PostToolUseOutcome, PreToolDecision, PreToolUseOutcome, StopRequest,
};
use crate::output::{
    HookOutput, OutputError, PermissionDecision, PermissionRequestDecision, TopLevelDecision,
    parse_output,
};
use crate::process::{
    Ending, Launch, MAX_CAPTURE_BYTES, MAX_STDOUT_BYTES, PIPE_GRACE, RawRun, run_command,
    starts_with_async_form,
};

/// Strings a hook returns longer than this (in chars) are saved to a file and replaced by
/// its path and a preview.
pub const MAX_HOOK_STRING_CHARS: usize = 10_000;

/// Chars of preview kept for a string saved to a file.
const PREVIEW_CHARS: usize = 2_000;

/// How many results of `async: true` hooks wait for [`HookRunner::take_async_results`].
const MAX_PENDING_ASYNC_RESULTS: usize = 256;

/// Events on which exit code 2 (or `decision: "block"`) is blocking.
const NON_BLOCKING_EVENTS: &[&str] = &[
    "PermissionRequest",
    "PermissionDenied",
    "Notification",
    "SessionStart",
    "SessionEnd",
    "StopFailure",
    "SubagentStart",
    "PostCompact",
    "PreModelSwitch",
    "PostModelSwitch",
    "Setup",
    "InstructionsLoaded",
    "CwdChanged",
    "FileChanged",
    "DirectoryAdded",
    "MessageDisplay",
];

/// Events whose hooks guard a call: one of their hooks that cannot be started for want of
/// a system resource ([`Ending::Unstartable`]) refuses the call, since it may have refused
/// it (PreToolUse: a blocking error; PermissionRequest: a deny).
const GUARD_EVENTS: &[&str] = &["PreToolUse", "PermissionRequest"];

/// Events whose plain (non-JSON) stdout on exit 0 is context for the model.
const STDOUT_IS_CONTEXT: &[&str] = &["UserPromptSubmit", "UserPromptExpansion", "SessionStart"];

/// One tool call as hooks see it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallInfo {
    /// The tool's name (`Bash`, `mcp__srv__tool`).
    pub tool_name: String,
    /// The input (after any earlier rewriting).
    pub tool_input: Value,
    /// The tool_use id.
    pub tool_use_id: String,
    /// For MCP tools: `{name, source}` of the server, sent as `mcp_server`.
    pub mcp_server: Option<Value>,
    /// For PostToolUse/PostToolUseFailure: how long the call took (sent as `duration_ms`).
    pub duration: Option<Duration>,
}

impl ToolCallInfo {
    /// A call of `tool_name` with `tool_input` and id `tool_use_id`.
    pub fn new(
        tool_name: impl Into<String>,
        tool_input: Value,
        tool_use_id: impl Into<String>,
    ) -> Self {
        Self {
            tool_name: tool_name.into(),
            tool_input,
            tool_use_id: tool_use_id.into(),
            mcp_server: None,
            duration: None,
        }
    }
}

/// One call of a batch, for PostToolBatch (`tool_response` is the serialized tool_result
/// content the model saw).
#[derive(Debug, Clone, PartialEq)]
pub struct BatchToolCall {
    /// The call.
    pub call: ToolCallInfo,
    /// What the model saw, if the call finished.
    pub tool_response: Option<Value>,
}

/// Fires (cancels its token) when the last copy of a runner goes: what its hooks left running
/// in the background (a job holding a hook's pipes, a backgrounded hook) is killed then.
#[derive(Default)]
struct Lifetime(CancellationToken);

impl Drop for Lifetime {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

struct Inner {
    config: HooksConfig,
    rule_matcher: Arc<dyn RuleMatcher>,
    project_dir: Option<PathBuf>,
    transcript_path: Option<PathBuf>,
    output_dir: Option<PathBuf>,
    async_results: Arc<Mutex<Vec<AsyncHookResult>>>,
    /// The `async: true` hooks still running ([`HookRunner::wait_for_async`]).
    async_tasks: tokio_util::task::TaskTracker,
    /// The http hooks' client, once one was built (a build that failed, for want of
    /// descriptors say, is tried again by the next http hook).
    http_client: Arc<OnceLock<reqwest::Client>>,
    lifetime: Arc<Lifetime>,
    /// The hooks (and the tools) of which it was said that their `if` names the tool in
    /// another case ([`if_names_in_other_case`]): said once per runner, not at every call.
    case_slips_said: Arc<Mutex<HashSet<String>>>,
}

/// Runs hooks. Cheap to clone (one `Arc`), `Send + Sync`. [`HookRunner::none`] runs nothing
/// and costs nothing.
#[derive(Clone, Default)]
pub struct HookRunner {
    inner: Option<Arc<Inner>>,
}

impl fmt::Debug for HookRunner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.inner {
            None => f.write_str("HookRunner(none)"),
            Some(i) => f
                .debug_struct("HookRunner")
                .field("config", &i.config)
                .field("project_dir", &i.project_dir)
                .field("transcript_path", &i.transcript_path)
                .finish_non_exhaustive(),
        }
    }
}

/// Where a sub-agent's transcript goes, given the main conversation's: Claude Code's
/// layout, `subagents/agent-<agent_id>.jsonl` next to the main transcript. Who writes the
/// transcripts and who tells hooks where they are both use this.
pub fn agent_transcript_path(transcript: &Path, agent_id: &str) -> PathBuf {
    transcript
        .parent()
        .unwrap_or_else(|| Path::new(""))
        .join("subagents")
        .join(format!("agent-{agent_id}.jsonl"))
}

/// What an event's group matchers are tested against (internal).
#[derive(Clone, Copy)]
struct Target<'a> {
    /// The matcher value: the tool's name on a tool event (as the model calls it),
    /// SessionStart's source, ...; `None` for events without a matcher (every group
    /// matches).
    value: Option<&'a str>,
    /// Another name of the same tool, tested too: the full name of an MCP tool that goes by
    /// a shortened one ([`full_tool_name`]).
    full: Option<&'a str>,
}

impl<'a> Target<'a> {
    /// `value` alone.
    fn value(value: Option<&'a str>) -> Self {
        Self { value, full: None }
    }

    /// The tool of `call`, also by its `full` name when it has one.
    fn tool(call: &'a ToolCallInfo, full: Option<&'a str>) -> Self {
        Self {
            value: Some(&call.tool_name),
            full,
        }
    }

    /// Whether `matcher` selects the target: any of its names.
    fn hits(&self, matcher: &Matcher) -> bool {
        self.value.is_none_or(|v| {
            matcher.is_match(v) || self.full.is_some_and(|full| matcher.is_match(full))
        })
    }
}

/// The full name (`mcp__SERVER__TOOL`, normalised) of `call`'s tool when it is an MCP tool
/// of the context whose name was shortened for the API's 64 characters (the model calls it
/// `mcp__srv__a_very_long…_f169a7c9`), so that a `matcher` naming it in full selects it, as
/// a permission rule or an `if` naming it so does. `None` for any other tool.
fn full_tool_name(call: &ToolCallInfo, ctx: &ToolUseContext) -> Option<String> {
    let info = tool_core::find_tool(ctx.tools(), &call.tool_name)?.mcp_info()?;
    let full = format!(
        "mcp__{}__{}",
        tool_core::normalize_mcp_name(&info.server_name),
        tool_core::normalize_mcp_name(&info.tool_name)
    );
    (full != call.tool_name).then_some(full)
}

/// The variables an event gives its command hooks besides the usual ones (internal).
#[derive(Clone, Copy, Default)]
struct HookEnv<'a> {
    /// Set for every hook.
    vars: &'a [(String, String)],
    /// Where each hook gets an environment file of its own, its `CLAUDE_ENV_FILE`
    /// ([`tool_core::hook_env_file_name`]).
    files_in: Option<&'a Path>,
}

impl HookEnv<'_> {
    /// The variables of the hook at `index` among the event's matching hooks.
    fn for_hook(&self, event: &str, index: usize) -> Vec<(String, String)> {
        let mut vars = self.vars.to_vec();
        if let Some(dir) = self.files_in {
            let file = dir.join(tool_core::hook_env_file_name(event, index));
            vars.push((
                "CLAUDE_ENV_FILE".to_owned(),
                file.to_string_lossy().into_owned(),
            ));
        }
        vars
    }
}

/// What one hook run needs (internal).
#[derive(Clone, Copy)]
struct Job<'a> {
    event: &'a str,
    input: &'a Value,
    bytes: &'a Arc<[u8]>,
    env: HookEnv<'a>,
    ctx: &'a ToolUseContext,
    project_dir: &'a Path,
    cancel: &'a CancellationToken,
}

/// Per-hook interpreted result (internal).
struct HookResult {
    hook: String,
    blocking: Option<String>,
    output: Option<HookOutput>,
    plain_stdout: Option<String>,
    errors: Vec<String>,
    cancelled: bool,
    report: Option<HookRunReport>,
    /// Exit code 2: the stderr, else the stdout (what an `asyncRewake` hook tells the model).
    exit2_output: Option<String>,
    /// A PermissionRequest hook whose decision never came (it could not be started for want
    /// of a system resource, or its output cannot be read): why, the call's deny message
    /// ([`GUARD_EVENTS`], [`refuse_as_guard`](HookRunner::refuse_as_guard)).
    guard_refusal: Option<String>,
    /// The hook's `if` matched only because the call could not be matched as written
    /// ([`IfMatch::FailOpen`]): an allow it returns, and its `updatedInput`, are not taken.
    fail_open: bool,
    /// The hook's `if` rule when it matched the call exactly: an allow the hook returns
    /// counts only when the rule covers the whole call ([`RuleMatcher::covers_call`]).
    if_rule: Option<String>,
}

impl HookResult {
    fn new(hook: String) -> Self {
        Self {
            hook,
            blocking: None,
            output: None,
            plain_stdout: None,
            errors: Vec::new(),
            cancelled: false,
            report: None,
            exit2_output: None,
            guard_refusal: None,
            fail_open: false,
            if_rule: None,
        }
    }
}

/// `error` middle-truncated past [`tool_core::MAX_ERROR_CHARS`], once: a text that already
/// is such a cut (the model's error text, which [`tool_core::ToolError::to_model_text`]
/// cut) is kept as it is, so that its `[N characters truncated]` still tells how much was
/// cut (cut again, it said `[40 characters truncated]`).
fn truncated_once(error: &str) -> String {
    if is_middle_truncated(error, tool_core::MAX_ERROR_CHARS) {
        error.to_owned()
    } else {
        tool_core::truncate_middle(error, tool_core::MAX_ERROR_CHARS)
    }
}

/// Whether `text` is what [`tool_core::truncate_middle`] makes of a longer text with `max`:
/// `max / 2` characters, the `... [N characters truncated] ...` line between blank lines,
/// and `max / 2` characters.
fn is_middle_truncated(text: &str, max: usize) -> bool {
    let half = max / 2;
    let Some((at, _)) = text.char_indices().nth(half) else {
        return false;
    };
    let Some(rest) = text[at..].strip_prefix("\n\n... [") else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    rest[digits..]
        .strip_prefix(" characters truncated] ...\n\n")
        .is_some_and(|tail| tail.chars().count() == half)
}

fn first_line(s: &str) -> &str {
    s.trim().lines().next().unwrap_or("")
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}s")
    } else {
        format!("{s:.1}s")
    }
}

fn human_size(n: usize) -> String {
    if n < 1024 {
        return format!("{n} bytes");
    }
    #[allow(clippy::cast_precision_loss)]
    let mut v = n as f64 / 1024.0;
    let mut unit = "KB";
    for u in ["MB", "GB"] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    let s = format!("{v:.1}");
    format!("{}{unit}", s.strip_suffix(".0").unwrap_or(&s))
}

impl HookRunner {
    /// A runner that runs nothing.
    pub fn none() -> Self {
        Self { inner: None }
    }

    /// A runner for `config`. An empty configuration gives the same zero-cost runner as
    /// [`none`](Self::none).
    pub fn new(config: HooksConfig) -> Self {
        if config.is_empty() {
            return Self::none();
        }
        Self {
            inner: Some(Arc::new(Inner {
                config,
                rule_matcher: Arc::new(BasicRuleMatcher),
                project_dir: None,
                transcript_path: None,
                output_dir: None,
                async_results: Arc::default(),
                async_tasks: tokio_util::task::TaskTracker::new(),
                http_client: Arc::default(),
                lifetime: Arc::default(),
                case_slips_said: Arc::default(),
            })),
        }
    }

    fn edit(mut self, f: impl FnOnce(&mut Inner)) -> Self {
        if let Some(inner) = self.inner.take() {
            let mut owned = match Arc::try_unwrap(inner) {
                Ok(i) => i,
                Err(shared) => Inner {
                    config: shared.config.clone(),
                    rule_matcher: shared.rule_matcher.clone(),
                    project_dir: shared.project_dir.clone(),
                    transcript_path: shared.transcript_path.clone(),
                    output_dir: shared.output_dir.clone(),
                    async_results: shared.async_results.clone(),
                    async_tasks: shared.async_tasks.clone(),
                    http_client: shared.http_client.clone(),
                    lifetime: shared.lifetime.clone(),
                    case_slips_said: shared.case_slips_said.clone(),
                },
            };
            f(&mut owned);
            self.inner = Some(Arc::new(owned));
        }
        self
    }

    /// Uses `matcher` for handlers' `if` conditions (tool-exec passes tool-perms' matcher).
    /// Without one, [`BasicRuleMatcher`] is used.
    pub fn with_rule_matcher(self, matcher: Arc<dyn RuleMatcher>) -> Self {
        self.edit(|i| i.rule_matcher = matcher)
    }

    /// Sets the project root exported as `CLAUDE_PROJECT_DIR` (default: the context's cwd).
    pub fn with_project_dir(self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        self.edit(|i| i.project_dir = Some(dir))
    }

    /// Sets the `transcript_path` sent to hooks (default: empty string).
    pub fn with_transcript_path(self, path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        self.edit(|i| i.transcript_path = Some(path))
    }

    /// Where the sub-agent `agent_id`'s own transcript is (SubagentStop's
    /// `agent_transcript_path`): [`agent_transcript_path`] of the `transcript_path`; `None`
    /// when no transcript path is set.
    pub fn agent_transcript_path(&self, agent_id: &str) -> Option<PathBuf> {
        let transcript = self.inner.as_ref()?.transcript_path.as_deref()?;
        Some(agent_transcript_path(transcript, agent_id))
    }

    /// Sets where over-long hook strings are saved (default: the context's results dir,
    /// else this user's private directory in the temp directory, `toolwright-<uid>`), in a
    /// `toolwright-hook-output` folder.
    pub fn with_output_dir(self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        self.edit(|i| i.output_dir = Some(dir))
    }

    /// The configuration (empty for [`none`](Self::none)).
    pub fn config(&self) -> &HooksConfig {
        static EMPTY: OnceLock<HooksConfig> = OnceLock::new();
        match &self.inner {
            Some(i) => &i.config,
            None => EMPTY.get_or_init(HooksConfig::default),
        }
    }

    /// The runner's state when some handler of `event` matches `target` (no allocation);
    /// `None` when there is nothing to run.
    fn active(&self, event: &str, target: Target<'_>) -> Option<&Arc<Inner>> {
        let inner = self.inner.as_ref()?;
        let hit = inner
            .config
            .groups(event)
            .iter()
            .any(|g| !g.hooks.is_empty() && target.hits(&g.matcher));
        hit.then_some(inner)
    }

    /// Whether any handler of `event` matches `matcher_value` (before `if` conditions).
    pub fn has_hooks(&self, event: &str, matcher_value: Option<&str>) -> bool {
        self.active(event, Target::value(matcher_value)).is_some()
    }

    /// Whether a handler of `event` is there for `tool` by name: its matcher matches `tool`
    /// and is no catch-all (`""`, `*`, a pattern every name matches). What a host asks
    /// before counting on a hook to answer for a tool: a catch-all PermissionRequest hook
    /// that approves `npm test` says nothing of ExitPlanMode's plans.
    pub fn has_hooks_naming(&self, event: &str, tool: &str) -> bool {
        // A name no tool has: only a catch-all matches it.
        const NO_TOOL: &str = "\u{1}";
        self.inner.as_ref().is_some_and(|inner| {
            inner.config.groups(event).iter().any(|g| {
                !g.hooks.is_empty() && g.matcher.is_match(tool) && !g.matcher.is_match(NO_TOOL)
            })
        })
    }

    /// How many `async: true` hooks are still running, with what hooks left running on
    /// their pipes (`(sleep 1; notify-send …) &`, the async form).
    pub fn pending_async(&self) -> usize {
        self.inner.as_ref().map_or(0, |i| i.async_tasks.len())
    }

    /// Waits until every `async: true` hook started so far has ended, and what hooks left
    /// running on their pipes has closed them, each within its own timeout: what a host that
    /// is about to exit does, so that an audit or notification hook started by the last
    /// call still runs (dropped with the runtime, it would be killed). Hooks started while
    /// this waits are waited for too.
    pub async fn wait_for_async(&self) {
        if let Some(inner) = &self.inner {
            inner.async_tasks.close();
            inner.async_tasks.wait().await;
            inner.async_tasks.reopen();
        }
    }

    /// Takes the results delivered by `async: true` hooks since the last call (at most the
    /// latest 256 are kept between calls).
    pub fn take_async_results(&self) -> Vec<AsyncHookResult> {
        match &self.inner {
            None => Vec::new(),
            Some(i) => std::mem::take(
                &mut *i
                    .async_results
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner),
            ),
        }
    }

    // ----- input -----

    fn base_input(&self, inner: &Inner, event: &str, ctx: &ToolUseContext) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("session_id".into(), json!(ctx.session_id()));
        let transcript = inner
            .transcript_path
            .as_ref()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        m.insert("transcript_path".into(), json!(transcript));
        // Where the hook runs (see `run_one`): once an earlier command removed the session's
        // cwd, where Bash now runs too, not the directory that is gone.
        m.insert("cwd".into(), json!(ctx.effective_cwd().to_string_lossy()));
        m.insert("hook_event_name".into(), json!(event));
        m.insert(
            "permission_mode".into(),
            json!(ctx.permission().mode.as_str()),
        );
        if let Some(prompt_id) = ctx.prompt_id() {
            m.insert("prompt_id".into(), json!(prompt_id));
        }
        if let Some(agent) = ctx.agent() {
            m.insert("agent_id".into(), json!(agent.id));
            m.insert("agent_type".into(), json!(agent.agent_type));
        }
        m
    }

    fn tool_input(
        &self,
        inner: &Inner,
        event: &str,
        call: &ToolCallInfo,
        ctx: &ToolUseContext,
    ) -> Map<String, Value> {
        let mut m = self.base_input(inner, event, ctx);
        m.insert("tool_name".into(), json!(call.tool_name));
        m.insert("tool_input".into(), call.tool_input.clone());
        if event != "PermissionRequest" {
            m.insert("tool_use_id".into(), json!(call.tool_use_id));
        }
        if let Some(server) = &call.mcp_server {
            m.insert("mcp_server".into(), server.clone());
        }
        if matches!(event, "PostToolUse" | "PostToolUseFailure")
            && let Some(d) = call.duration
        {
            m.insert(
                "duration_ms".into(),
                json!(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            );
        }
        m
    }

    // ----- running -----

    /// Runs the matching hooks of `event` and returns their results in configuration order.
    async fn run_raw(
        &self,
        event: &str,
        target: Target<'_>,
        call: Option<&ToolCallInfo>,
        input: Map<String, Value>,
        env: HookEnv<'_>,
        ctx: &ToolUseContext,
    ) -> (Vec<HookResult>, bool) {
        let Some(inner) = &self.inner else {
            return (Vec::new(), false);
        };
        if ctx.is_cancelled() {
            // Nothing is started for a call that is already cancelled.
            return (
                Vec::new(),
                !inner
                    .config
                    .matching_by(event, |m| target.hits(m))
                    .is_empty(),
            );
        }
        let is_tool_event = TOOL_EVENTS.contains(&event);
        // What is said of hooks that do not run because their `if` names the call's tool in
        // another case.
        let mut slips: Vec<HookResult> = Vec::new();
        // Each handler that runs, with its index among the matching ones (in configuration
        // order: what names its environment file, as Claude Code's `hookIndex`), and whether
        // its `if` matched only by failing open.
        let handlers: Vec<(usize, &HookHandler, bool)> = inner
            .config
            .matching_by(event, |m| target.hits(m))
            .into_iter()
            .enumerate()
            .filter_map(|(i, h)| match (&h.if_condition, call) {
                // An `if` that could not be read: on a tool event the hook runs as one whose
                // `if` matched by failing open (it guards, never approves); elsewhere, as
                // any hook with `if`, never.
                (None, Some(_)) if h.if_unreadable && is_tool_event => Some((i, h, true)),
                (None, _) if h.if_unreadable => None,
                (None, _) => Some((i, h, false)),
                (Some(rule), Some(call)) if is_tool_event => {
                    match inner
                        .rule_matcher
                        .match_rule(rule, &call.tool_name, &call.tool_input)
                    {
                        IfMatch::Exact => Some((i, h, false)),
                        IfMatch::FailOpen => Some((i, h, true)),
                        IfMatch::No => {
                            slips.extend(Self::case_slip(inner, h, rule, &call.tool_name));
                            None
                        }
                    }
                }
                // `if` on a non-tool event: the handler never runs.
                (Some(_), _) => None,
            })
            .collect();
        // A matcher whose search overran its deadline counted as a match: said once.
        for group in inner.config.groups(event) {
            for value in group.matcher.take_overrun() {
                slips.push(Self::overrun_note(group, &value));
            }
        }
        if handlers.is_empty() {
            return (slips, false);
        }
        let input = Value::Object(input);
        let bytes: Arc<[u8]> = serde_json::to_vec(&input).unwrap_or_default().into();
        let project_dir = inner
            .project_dir
            .clone()
            .unwrap_or_else(|| ctx.cwd().to_path_buf());
        let job = Job {
            event,
            input: &input,
            bytes: &bytes,
            env,
            ctx,
            project_dir: &project_dir,
            cancel: ctx.cancellation(),
        };
        let mut sync = Vec::new();
        for (i, h, fail_open) in handlers {
            if let HandlerKind::Command(c) = &h.kind
                && c.is_async
            {
                self.spawn_async(inner, &job, h, i, target.value);
                continue;
            }
            sync.push((i, h, fail_open));
        }
        let cancel = ctx.cancellation();
        let job = &job;
        let futs = sync.iter().map(|&(i, h, fail_open)| async move {
            let mut r = self.run_one(job, h, i).await;
            r.fail_open = fail_open;
            if !fail_open {
                r.if_rule.clone_from(&h.if_condition);
            }
            r
        });
        let mut results = futures::future::join_all(futs).await;
        let cancelled = cancel.is_cancelled() && results.iter().any(|r| r.cancelled);
        results.extend(slips);
        (results, cancelled)
    }

    /// What to say, once per runner, of hook `h` that does not run for a call of `tool`
    /// because its `if` (`rule`) names that tool in another case (`bash(touch *)` for
    /// Bash): a non-blocking error naming the hook, the rule and where it is configured.
    /// tool-hooks has no list of tool names to tell it by when the hooks are loaded, so it
    /// is told when such a call comes.
    fn case_slip(inner: &Inner, h: &HookHandler, rule: &str, tool: &str) -> Option<HookResult> {
        let named = if_names_in_other_case(rule, tool)?;
        let key = format!("{}\u{0}{tool}", h.dedupe_key);
        let first = inner
            .case_slips_said
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key);
        if !first {
            return None;
        }
        let place = h
            .if_place
            .as_deref()
            .map(|p| format!(" ({p})"))
            .unwrap_or_default();
        let mut r = HookResult::new(h.display_name());
        r.errors.push(format!(
            "the hook's `if` condition {rule:?}{place} names the tool `{}`, and this call's tool is `{}`: tool names are matched with their case, so the hook does not run for calls of `{}` (said once)",
            tool_core::escape_hidden(named),
            tool_core::escape_hidden(tool),
            tool_core::escape_hidden(tool),
        ));
        Some(r)
    }

    /// What to say, once, of `group` whose matcher's search on `value` overran
    /// [`MATCH_DEADLINE`](crate::matcher::MATCH_DEADLINE) and counted as a match: a
    /// non-blocking error naming the matcher and the value, under the group's first hook.
    fn overrun_note(group: &MatcherGroup, value: &str) -> HookResult {
        let pattern = group.pattern.as_deref().unwrap_or_default();
        let hook = group
            .hooks
            .first()
            .map_or_else(|| pattern.to_owned(), HookHandler::display_name);
        let mut r = HookResult::new(hook);
        r.errors.push(format!(
            "the matcher {pattern:?} did not finish its search of `{}` within {} s: counted as a match, so its group's hooks run (the search goes on, on a thread of its own, until it ends; said once)",
            tool_core::escape_hidden(value),
            crate::matcher::MATCH_DEADLINE.as_secs(),
        ));
        r
    }

    /// Runs `handler` detached (`async: true`); its result waits for
    /// [`take_async_results`](Self::take_async_results), naming its hook with `matched` (what
    /// the event's matchers were matched against: the tool's name on a tool event) as a
    /// synchronous hook's outcome is named.
    fn spawn_async(
        &self,
        inner: &Arc<Inner>,
        job: &Job<'_>,
        handler: &HookHandler,
        index: usize,
        matched: Option<&str>,
    ) {
        let matched = matched.map(str::to_owned);
        // Its own variables, made here: the job's borrows end with this call.
        let env = job.env.for_hook(job.event, index);
        let bytes = job.bytes.clone();
        let runner = self.clone();
        let handler = handler.clone();
        let event = job.event.to_owned();
        let ctx = job.ctx.clone();
        let project_dir = job.project_dir.to_path_buf();
        let sink = inner.async_results.clone();
        inner.async_tasks.spawn(async move {
            // Detached: not cancelled with the call, still bounded by its timeout.
            let token = CancellationToken::new();
            let input: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let job = Job {
                event: &event,
                input: &input,
                bytes: &bytes,
                env: HookEnv {
                    vars: &env,
                    files_in: None,
                },
                ctx: &ctx,
                project_dir: &project_dir,
                cancel: &token,
            };
            let result = runner.run_one(&job, &handler, index).await;
            let mut common = CommonOutcome {
                matched,
                ..CommonOutcome::default()
            };
            let rewake = matches!(&handler.kind, HandlerKind::Command(c) if c.async_rewake);
            if rewake {
                // Claude Code's asyncRewake: exit code 2 tells the model the hook's stderr
                // (else stdout), on any event; nothing else the hook printed is used (so
                // nothing is said about it on exit 0). Its failures (timeout, cannot
                // start, other exit codes) are notices for the user, as an `async` hook's
                // are.
                common.runs.extend(result.report.clone());
                let exited_0 = result.report.as_ref().and_then(|r| r.exit_code) == Some(0);
                match &result.exit2_output {
                    Some(text) => common.wake_messages.push(HookMessage {
                        hook: result.hook.clone(),
                        text: runner.bound(&ctx, text.clone()),
                    }),
                    None if exited_0 => {}
                    None => {
                        let failure = result.errors.iter().chain(&result.blocking);
                        for e in failure {
                            common.errors.push(HookMessage {
                                hook: result.hook.clone(),
                                text: runner.bound(&ctx, e.clone()),
                            });
                        }
                    }
                }
            } else {
                runner.absorb(&event, &ctx, &mut common, &result);
            }
            let mut results = sink.lock().unwrap_or_else(PoisonError::into_inner);
            // Nobody may be taking them (a host without an agent loop): keep the latest.
            if results.len() >= MAX_PENDING_ASYNC_RESULTS {
                results.remove(0);
            }
            results.push(AsyncHookResult { event, common });
        });
    }

    /// Runs `handler`, number `index` among the event's matching hooks.
    async fn run_one(&self, job: &Job<'_>, handler: &HookHandler, index: usize) -> HookResult {
        let Job {
            event,
            input,
            bytes,
            env,
            ctx,
            project_dir,
            cancel,
        } = *job;
        let name = handler.display_name();
        let timeout = handler.timeout.unwrap_or_else(|| default_timeout(event));
        let can_block = !NON_BLOCKING_EVENTS.contains(&event);
        let mut r = HookResult::new(name.clone());
        match &handler.kind {
            HandlerKind::Command(c) => {
                // Where commands run: the session's cwd, or, once an earlier command removed
                // it, where Bash now runs too (else every hook would fail to start and no
                // guard would block anything).
                let cwd = ctx.effective_cwd();
                let Some(inner) = &self.inner else {
                    return r;
                };
                let env = env.for_hook(event, index);
                let raw = run_command(Launch {
                    handler: c,
                    input: bytes.clone(),
                    cwd: &cwd,
                    project_dir,
                    extra_env: &env,
                    timeout,
                    cancel,
                    lifetime: &inner.lifetime.0,
                    tracker: Some(&inner.async_tasks),
                })
                .await;
                self.interpret(event, can_block, handler, &name, raw, timeout, &mut r);
            }
            HandlerKind::Native(hook) => {
                let start = tokio::time::Instant::now();
                let outcome = tokio::select! {
                    res = tokio::time::timeout(timeout, hook.run(input, ctx)) => Some(res),
                    () = cancel.cancelled() => None,
                };
                let mut report = HookRunReport {
                    hook: name.clone(),
                    exit_code: None,
                    timed_out: false,
                    cancelled: false,
                    duration: start.elapsed(),
                };
                match outcome {
                    None => {
                        r.cancelled = true;
                        report.cancelled = true;
                    }
                    Some(Err(_)) => {
                        report.timed_out = true;
                        self.failure(
                            handler,
                            &mut r,
                            format!("timed out after {}", secs(timeout)),
                            can_block,
                        );
                    }
                    Some(Ok(Ok(output))) => {
                        report.exit_code = Some(0);
                        r.output = Some(output);
                    }
                    Some(Ok(Err(crate::NativeHookError::Blocking(msg)))) => {
                        report.exit_code = Some(2);
                        if can_block {
                            r.blocking = Some(msg);
                        } else {
                            r.errors.push(msg);
                        }
                    }
                    Some(Ok(Err(crate::NativeHookError::Failed(msg)))) => {
                        report.exit_code = Some(1);
                        self.failure(handler, &mut r, msg, can_block);
                    }
                }
                r.report = Some(report);
            }
            HandlerKind::Http(h) => {
                let Some(inner) = &self.inner else {
                    return r;
                };
                let guard = GUARD_EVENTS.contains(&event);
                let raw =
                    crate::http::run_http(&inner.http_client, h, bytes, timeout, guard, cancel)
                        .await;
                self.interpret(event, can_block, handler, &name, raw, timeout, &mut r);
            }
        }
        if let Some(rep) = &r.report {
            // Claude Code's "debug log": what ran, how it ended, and its plain stdout.
            tracing::debug!(
                event,
                hook = %rep.hook,
                exit_code = ?rep.exit_code,
                timed_out = rep.timed_out,
                cancelled = rep.cancelled,
                duration_ms = u64::try_from(rep.duration.as_millis()).unwrap_or(u64::MAX),
                stdout = %r.plain_stdout.as_deref().unwrap_or("").chars().take(2000).collect::<String>(),
                "hook finished"
            );
        }
        // The event name in hookSpecificOutput must be this event.
        if let Some(out) = &mut r.output
            && let Some(hso) = &out.hook_specific_output
            && hso.hook_event_name != event
        {
            r.errors.push(format!(
                        "hookSpecificOutput.hookEventName is {:?} but the hook ran for {event}; hookSpecificOutput ignored",
                        hso.hook_event_name
                    ));
            out.hook_specific_output = None;
        }
        r
    }

    /// Whether `handler`, run for `event`, refuses the call when it cannot be started for
    /// want of a system resource ([`GUARD_EVENTS`]; not an `async` hook, which decides
    /// nothing).
    fn refuses_when_unstarted(event: &str, handler: &HookHandler) -> bool {
        let is_async = matches!(&handler.kind, HandlerKind::Command(c) if c.is_async);
        GUARD_EVENTS.contains(&event) && !is_async
    }

    /// A guard that could not run (`what`: "could not be started") refuses the call: a
    /// PreToolUse hook with a blocking error, a PermissionRequest hook with a deny.
    ///
    /// **Decision** (Claude Code lets the call go on: a hook that fails to start is a
    /// non-blocking error there): a guard that could not run may have refused the call, and
    /// a shortage of descriptors says nothing about the call, so the call is refused rather
    /// than let through.
    fn refuse_unstarted(event: &str, r: &mut HookResult, what: &str, why: &str) {
        let text = format!(
            "[{}]: {what}, so the call is refused (the hook may have refused it): {why}",
            r.hook
        );
        Self::refuse_as_guard(event, r, text);
    }

    /// A guard whose decision never came refuses the call, saying `text`: a PreToolUse hook
    /// with a blocking error, a PermissionRequest hook with a deny (where exit 2 blocks
    /// nothing).
    fn refuse_as_guard(event: &str, r: &mut HookResult, text: String) {
        if event == "PreToolUse" {
            r.blocking = Some(text);
        } else {
            r.guard_refusal = Some(text);
        }
    }

    /// A failure: non-blocking error, or blocking under `onFailure: "block"`.
    fn failure(&self, handler: &HookHandler, r: &mut HookResult, msg: String, can_block: bool) {
        if handler.on_failure == OnFailure::Block && can_block {
            r.blocking = Some(format!("[{}]: {msg}", r.hook));
        } else {
            r.errors.push(msg);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn interpret(
        &self,
        event: &str,
        can_block: bool,
        handler: &HookHandler,
        name: &str,
        raw: RawRun,
        timeout: Duration,
        r: &mut HookResult,
    ) {
        let mut report = HookRunReport {
            hook: name.to_owned(),
            exit_code: None,
            timed_out: false,
            cancelled: false,
            duration: raw.duration,
        };
        let mut stderr = String::from_utf8_lossy(&raw.stderr).into_owned();
        if raw.stderr_read > raw.stderr.len() {
            // Said at the end of the text, so that what shows it, or saves it as the full
            // output when it is long, does not present the part kept as all of it.
            stderr.push_str(&format!(
                "\n[stderr cut at the {} capture limit: the first {} of {} bytes were kept]",
                human_size(MAX_CAPTURE_BYTES),
                raw.stderr.len(),
                raw.stderr_read
            ));
        }
        let code = match &raw.ending {
            Ending::Cancelled => {
                report.cancelled = true;
                r.cancelled = true;
                r.report = Some(report);
                return;
            }
            Ending::TimedOut => {
                report.timed_out = true;
                r.report = Some(report);
                // Output of a timed-out hook is discarded.
                let msg = match handler.kind {
                    HandlerKind::Command(_) => {
                        format!(
                            "timed out after {}; its process group was killed",
                            secs(timeout)
                        )
                    }
                    _ => format!("timed out after {}", secs(timeout)),
                };
                // One that started late for want of a resource had less than its timeout:
                // as a guard, it counts as one that could not start.
                if let Some(delayed) = &raw.start_delayed
                    && Self::refuses_when_unstarted(event, handler)
                {
                    Self::refuse_unstarted(
                        event,
                        r,
                        "could not run in time",
                        &format!("{msg}; {delayed}"),
                    );
                    return;
                }
                self.failure(handler, r, msg, can_block);
                return;
            }
            Ending::Failed(msg) => {
                r.report = Some(report);
                self.failure(handler, r, msg.clone(), can_block);
                return;
            }
            Ending::Unstartable(msg) => {
                r.report = Some(report);
                if Self::refuses_when_unstarted(event, handler) {
                    Self::refuse_unstarted(event, r, "could not be started", msg);
                } else {
                    self.failure(handler, r, msg.clone(), can_block);
                }
                return;
            }
            // Claude Code's async form: a success that decides nothing; the hook goes on in
            // the background and nothing it prints is used.
            Ending::Backgrounded => {
                r.report = Some(report);
                return;
            }
            Ending::Signaled(_) => None,
            Ending::Exited(c) => Some(*c),
        };
        report.exit_code = code;
        r.report = Some(report);
        // The async form, read only once the hook had already exited: the same success
        // that decides nothing (not a deny from the JSON after it, not plain-text context).
        if matches!(handler.kind, HandlerKind::Command(_)) && starts_with_async_form(&raw.stdout) {
            return;
        }
        if raw.pipes_held_open {
            r.errors.push(format!(
                "the hook exited but a background process it started kept its stdout/stderr open; only output read within {}ms of its exit was used: its later output is not used, and it is killed at the hook's timeout ({}) if it still holds them then (a host about to exit waits for it until then)",
                PIPE_GRACE.as_millis(),
                secs(timeout)
            ));
        }

        // stdout: JSON when it starts with `{` and parses, else plain text. Invalid UTF-8 is
        // decoded with replacement characters (as Node decodes it), with a notice, so one
        // stray byte in a reason does not throw away the decision.
        let mut json_error: Option<String> = None;
        let text = match String::from_utf8(raw.stdout) {
            Ok(text) => text,
            Err(e) => {
                r.errors.push(format!(
                    "stdout is not valid UTF-8 ({} bytes); invalid bytes were replaced with U+FFFD",
                    e.as_bytes().len()
                ));
                String::from_utf8_lossy(e.as_bytes()).into_owned()
            }
        };
        // A byte order mark (PowerShell's `Out-File`) is whitespace too, as JavaScript's
        // `trim()` treats it.
        let trimmed = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        if trimmed.starts_with('{') {
            if raw.stdout_truncated {
                let cut = match handler.kind {
                    HandlerKind::Http(_) => {
                        format!("response body exceeds the {MAX_STDOUT_BYTES} byte limit")
                    }
                    _ => format!("stdout exceeds the {MAX_STDOUT_BYTES} byte capture limit"),
                };
                // A guard's decision cut short cannot be read: the call is refused, as for
                // one nested too deep below (found by review 38: the call ran on an allow
                // rule, its deny lost).
                if code == Some(0) && GUARD_EVENTS.contains(&event) {
                    let text = format!(
                        "[{}]: its {cut}: its decision cannot be read, so the call is refused",
                        r.hook
                    );
                    Self::refuse_as_guard(event, r, text);
                } else {
                    json_error = Some(format!("{cut}; JSON output ignored"));
                }
            } else {
                match parse_output(trimmed, event) {
                    Ok(out) => r.output = Some(out),
                    // Not JSON at all is plain text (Claude Code's rule), unless the handler
                    // asked for invalid output to count as a failure.
                    Err(OutputError::NotJson(e)) if handler.on_failure == OnFailure::Block => {
                        json_error = Some(e);
                    }
                    // Said, though, where plain text is no context: output that opens as
                    // JSON and is not read as JSON may be a decision (a deny) not taken.
                    Err(OutputError::NotJson(e)) => {
                        // (On another exit code the hook's failure is said already.)
                        if code == Some(0) && !STDOUT_IS_CONTEXT.contains(&event) {
                            r.errors.push(format!("{e}; read as plain text"));
                        }
                        r.plain_stdout = Some(text.clone());
                    }
                    Err(OutputError::Schema(e)) => json_error = Some(e),
                    // A guard's decision that cannot be read refuses the call, as a guard
                    // that cannot run does: a deny in it must not be lost (found by review
                    // 36: read as plain text, the call ran).
                    Err(OutputError::TooDeep(e))
                        if code == Some(0) && GUARD_EVENTS.contains(&event) =>
                    {
                        let text = format!(
                            "[{}]: {e}: its decision cannot be read, so the call is refused",
                            r.hook
                        );
                        Self::refuse_as_guard(event, r, text);
                    }
                    Err(OutputError::TooDeep(e)) => {
                        if code == Some(0) && !STDOUT_IS_CONTEXT.contains(&event) {
                            r.errors.push(format!("{e}; read as plain text"));
                        }
                        r.plain_stdout = Some(text.clone());
                    }
                }
            }
        } else if !trimmed.is_empty() {
            r.plain_stdout = Some(text.clone());
        }
        // Plain stdout is context only from a hook that succeeded.
        if code != Some(0) {
            r.plain_stdout = None;
        }

        match code {
            Some(0) => {
                if let Some(e) = json_error {
                    self.failure(handler, r, e, can_block);
                }
            }
            Some(2) => {
                let said = [stderr.trim(), text.trim()]
                    .into_iter()
                    .find(|s| !s.is_empty())
                    .unwrap_or("No stderr output");
                r.exit2_output = Some(said.to_owned());
                if let Some(e) = &json_error {
                    r.errors.push(e.clone());
                }
                // The JSON's blocking reason, if it gives one, else stderr.
                let json_reason = r.output.as_ref().and_then(|o| {
                    let hso = o.hook_specific_output.as_ref();
                    let block_reason = given(o.reason.as_deref());
                    if o.decision == Some(TopLevelDecision::Block) && block_reason.is_some() {
                        block_reason
                    } else if hso.and_then(|h| h.permission_decision)
                        == Some(PermissionDecision::Deny)
                    {
                        hso.and_then(|h| given(h.permission_decision_reason.as_deref()))
                    } else {
                        None
                    }
                });
                let msg = match json_reason {
                    Some(reason) => reason,
                    None => {
                        let s = stderr.trim();
                        format!(
                            "[{name}]: {}",
                            if s.is_empty() { "No stderr output" } else { s }
                        )
                    }
                };
                if can_block {
                    r.blocking = Some(msg);
                } else {
                    r.errors.push(format!(
                        "exit code 2 (not blocking on {event}): {}",
                        first_line(&stderr)
                    ));
                }
            }
            other => {
                // Non-zero (or killed by a signal): schema-valid JSON alone decides.
                if r.output.is_none() {
                    let what = match (other, &raw.ending) {
                        (Some(c), _) => format!("failed with exit code {c}"),
                        (None, Ending::Signaled(Some(n))) => {
                            match tool_core::process::signal_name(*n) {
                                Some(name) => format!("was killed by signal {n} ({name})"),
                                None => format!("was killed by signal {n}"),
                            }
                        }
                        (None, _) => "was killed by a signal".to_owned(),
                    };
                    let line = first_line(&stderr);
                    let mut msg = if line.is_empty() {
                        what
                    } else {
                        format!("{what}: {line}")
                    };
                    if let Some(e) = json_error {
                        msg = format!("{msg} ({e})");
                    }
                    self.failure(handler, r, msg, can_block);
                }
            }
        }
    }

    // ----- aggregation -----

    fn bound(&self, ctx: &ToolUseContext, text: String) -> String {
        let count = text.chars().count();
        if count <= MAX_HOOK_STRING_CHARS {
            return text;
        }
        // Without a session's directory, this user's own private one in the temp directory:
        // never a name in the shared temp directory another user could take first.
        let dir = self
            .inner
            .as_ref()
            .and_then(|i| i.output_dir.clone())
            .or_else(|| ctx.results_dir().map(Path::to_path_buf))
            .map_or_else(tool_core::private_temp_dir, Ok)
            .map(|d| d.join("toolwright-hook-output"));
        let preview: String = text.chars().take(PREVIEW_CHARS).collect();
        match dir.and_then(|dir| save_new_file(&dir, &text)) {
            Ok(path) => format!(
                "<persisted-output>\nOutput too large ({}). Full output saved to: {}\n\nPreview (first 2KB):\n{preview}\n...\n</persisted-output>",
                human_size(text.len()),
                path.display()
            ),
            Err(e) => {
                let head: String = text.chars().take(MAX_HOOK_STRING_CHARS).collect();
                format!(
                    "{head}\n... [{} characters truncated; could not save the rest: {e}]",
                    count - MAX_HOOK_STRING_CHARS
                )
            }
        }
    }

    /// Folds one hook's universal results into `common`.
    fn absorb(
        &self,
        event: &str,
        ctx: &ToolUseContext,
        common: &mut CommonOutcome,
        r: &HookResult,
    ) {
        let msg = |text: String| HookMessage {
            hook: r.hook.clone(),
            text,
        };
        if let Some(rep) = &r.report {
            common.runs.push(rep.clone());
        }
        if r.cancelled {
            common.cancelled = true;
        }
        for e in &r.errors {
            common.errors.push(msg(self.bound(ctx, e.clone())));
        }
        if let Some(text) = blocking_text(event, r) {
            common.blocking_errors.push(msg(self.bound(ctx, text)));
        }
        if let Some(out) = &r.output {
            if let Some(sm) = &out.system_message {
                common
                    .system_messages
                    .push(msg(self.bound(ctx, sm.clone())));
            }
            if let Some(ac) = out
                .hook_specific_output
                .as_ref()
                .and_then(|h| h.additional_context.as_ref())
            {
                common
                    .additional_contexts
                    .push(msg(self.bound(ctx, ac.clone())));
            }
            if out.continue_ == Some(false) && common.stop.is_none() {
                common.stop = Some(StopRequest {
                    hook: r.hook.clone(),
                    reason: out.stop_reason.clone().map(|s| self.bound(ctx, s)),
                });
            }
        }
        if let Some(text) = &r.plain_stdout
            && STDOUT_IS_CONTEXT.contains(&event)
            && r.blocking.is_none()
            && r.output.is_none()
        {
            common
                .stdout_contexts
                .push(msg(self.bound(ctx, text.trim_end().to_owned())));
        }
    }

    /// Whether hook result `r`, run for `call`, may guard it but not approve it: its `if`
    /// matched only by failing open ([`IfMatch::FailOpen`]), or matched and does not cover
    /// the whole call ([`RuleMatcher::covers_call`]: `Bash(npm test *)` for `npm test; rm
    /// -rf x`), so that an approver meant for one command approves nothing else. A hook
    /// without `if` is not limited (its matcher chose it, as in Claude Code).
    fn guards_only(&self, r: &HookResult, call: &ToolCallInfo) -> bool {
        if r.fail_open {
            return true;
        }
        match (&self.inner, &r.if_rule) {
            (Some(inner), Some(rule)) => {
                !inner
                    .rule_matcher
                    .covers_call(rule, &call.tool_name, &call.tool_input)
            }
            _ => false,
        }
    }

    /// Runs PreToolUse hooks for `call` and aggregates them: decision by precedence
    /// deny > defer > ask > allow (an exit-2 block is a deny no hook can override),
    /// `updatedInput`s in configuration order.
    pub async fn run_pre_tool_use(
        &self,
        call: &ToolCallInfo,
        ctx: &ToolUseContext,
    ) -> PreToolUseOutcome {
        let event = "PreToolUse";
        let full = full_tool_name(call, ctx);
        let target = Target::tool(call, full.as_deref());
        let Some(inner) = self.active(event, target) else {
            return PreToolUseOutcome::default();
        };
        let input = self.tool_input(inner, event, call, ctx);
        let (results, cancelled) = self
            .run_raw(event, target, Some(call), input, HookEnv::default(), ctx)
            .await;
        let mut out = PreToolUseOutcome::default();
        out.common.cancelled = cancelled;
        let tool = &call.tool_name;
        let mut best: Option<PreToolDecision> = None;
        let mut first_ask: Option<PreToolDecision> = None;
        let mut decided_input: Option<Value> = None;
        for r in &results {
            let blocked_before = out.common.blocking_errors.len();
            self.absorb(event, ctx, &mut out.common, r);
            // This hook's blocking error as given and as recorded (saved to a file when
            // long): a reason with the same text reuses it, so that a long message is saved
            // once (the blocking error is not shown on PreToolUse; the deny is).
            let recorded = blocking_text(event, r).zip(
                out.common
                    .blocking_errors
                    .get(blocked_before)
                    .map(|m| m.text.clone()),
            );
            let hso = r
                .output
                .as_ref()
                .and_then(|o| o.hook_specific_output.as_ref());
            // This hook's own decision.
            let mut from_block = false;
            let decision: Option<(PermissionDecision, Option<String>)> =
                if let Some(b) = &r.blocking {
                    from_block = true;
                    Some((PermissionDecision::Deny, Some(b.clone())))
                } else if let Some(d) = hso.and_then(|h| h.permission_decision) {
                    // An empty reason is none, as Claude Code's `||` reads it; a blank one
                    // too ([`given`]).
                    let reason = hso
                        .and_then(|h| given(h.permission_decision_reason.as_deref()))
                        .or_else(|| r.output.as_ref().and_then(|o| given(o.reason.as_deref())));
                    Some((d, reason))
                } else {
                    match r.output.as_ref().and_then(|o| o.decision) {
                        Some(TopLevelDecision::Approve) => Some((
                            PermissionDecision::Allow,
                            r.output.as_ref().and_then(|o| given(o.reason.as_deref())),
                        )),
                        Some(TopLevelDecision::Block) => {
                            from_block = true;
                            Some((
                                PermissionDecision::Deny,
                                r.output.as_ref().and_then(|o| given(o.reason.as_deref())),
                            ))
                        }
                        None => None,
                    }
                };
            // A hook whose `if` matched only by failing open, or does not cover the whole
            // call (one subcommand of several), guards, never approves: its allow is no
            // decision and its `updatedInput` is not taken. (Asked only of a hook that
            // approves or rewrites: covering is matched part by part.)
            let approves = matches!(decision, Some((PermissionDecision::Allow, _)));
            let rewrites = hso.is_some_and(|h| h.updated_input.is_some());
            let guard_only = (approves || rewrites) && self.guards_only(r, call);
            let decision = decision
                .filter(|(behavior, _)| !(guard_only && *behavior == PermissionDecision::Allow));
            let updated = hso
                .and_then(|h| h.updated_input.clone())
                .map(Value::Object)
                .filter(|_| !guard_only);
            match &decision {
                None => {
                    if let Some(u) = updated {
                        out.passthrough_input = Some(u);
                    }
                }
                Some((PermissionDecision::Allow | PermissionDecision::Ask, _)) => {
                    if let Some(u) = updated {
                        decided_input = Some(u);
                    }
                }
                Some(_) => {}
            }
            let Some((behavior, reason)) = decision else {
                continue;
            };
            let reason = reason.map(|s| match recorded {
                Some((given, bounded)) if given == s => bounded,
                _ => self.bound(ctx, s),
            });
            let message = match behavior {
                PermissionDecision::Deny if from_block && r.blocking.is_some() => {
                    format!(
                        "PreToolUse:{tool} hook error: {}",
                        reason.clone().unwrap_or_default()
                    )
                }
                // Legacy `decision: "block"` keeps Claude Code's blocking-error text; a
                // `permissionDecision: "deny"` without a reason reads as the pipeline words it.
                PermissionDecision::Deny if from_block => reason
                    .clone()
                    .unwrap_or_else(|| "Blocked by hook".to_owned()),
                PermissionDecision::Deny => reason
                    .clone()
                    .unwrap_or_else(|| format!("Hook PreToolUse:{tool} denied this tool")),
                PermissionDecision::Ask => reason.clone().unwrap_or_else(|| {
                    format!("Hook PreToolUse:{tool} asked for confirmation for this tool")
                }),
                PermissionDecision::Allow | PermissionDecision::Defer => {
                    reason.clone().unwrap_or_default()
                }
            };
            let this = PreToolDecision {
                behavior,
                hook: r.hook.clone(),
                reason,
                message,
                from_blocking_error: from_block,
                updated_input: None,
            };
            if behavior == PermissionDecision::Ask && first_ask.is_none() {
                first_ask = Some(this.clone());
            }
            let better = best
                .as_ref()
                .is_none_or(|b| behavior.precedence() > b.behavior.precedence());
            if better {
                best = Some(this);
            }
        }
        match &mut best {
            Some(b)
                if matches!(
                    b.behavior,
                    PermissionDecision::Allow | PermissionDecision::Ask
                ) =>
            {
                b.updated_input = decided_input;
            }
            Some(b) if b.behavior == PermissionDecision::Defer => {
                out.ask_behind_defer = first_ask.map(|ask| PreToolDecision {
                    updated_input: decided_input,
                    ..ask
                });
            }
            _ => {}
        }
        out.decision = best;
        out
    }

    /// Runs PostToolUse hooks after a successful call; `tool_response` is the tool's
    /// structured output.
    pub async fn run_post_tool_use(
        &self,
        call: &ToolCallInfo,
        tool_response: &Value,
        ctx: &ToolUseContext,
    ) -> PostToolUseOutcome {
        let event = "PostToolUse";
        let full = full_tool_name(call, ctx);
        let target = Target::tool(call, full.as_deref());
        let Some(inner) = self.active(event, target) else {
            return PostToolUseOutcome::default();
        };
        let mut input = self.tool_input(inner, event, call, ctx);
        input.insert("tool_response".into(), tool_response.clone());
        let (results, cancelled) = self
            .run_raw(event, target, Some(call), input, HookEnv::default(), ctx)
            .await;
        let mut out = PostToolUseOutcome::default();
        out.common.cancelled = cancelled;
        for r in &results {
            self.absorb(event, ctx, &mut out.common, r);
            if let Some(hso) = r
                .output
                .as_ref()
                .and_then(|o| o.hook_specific_output.as_ref())
            {
                if let Some(v) = &hso.updated_tool_output {
                    out.updated_tool_output = Some(v.clone());
                }
                if let Some(v) = &hso.updated_mcp_tool_output {
                    out.updated_mcp_tool_output = Some(v.clone());
                }
            }
        }
        out
    }

    /// Runs PostToolUseFailure hooks after a failed call; `error` is the model-visible error
    /// text (middle-truncated past [`tool_core::MAX_ERROR_CHARS`] here unless it already
    /// is), `is_interrupt` whether the user interrupted it.
    pub async fn run_post_tool_use_failure(
        &self,
        call: &ToolCallInfo,
        error: &str,
        is_interrupt: bool,
        ctx: &ToolUseContext,
    ) -> EventOutcome {
        let event = "PostToolUseFailure";
        let full = full_tool_name(call, ctx);
        let target = Target::tool(call, full.as_deref());
        let Some(inner) = self.active(event, target) else {
            return EventOutcome::default();
        };
        let mut input = self.tool_input(inner, event, call, ctx);
        input.insert("error".into(), json!(truncated_once(error)));
        input.insert("is_interrupt".into(), json!(is_interrupt));
        let (results, cancelled) = self
            .run_raw(event, target, Some(call), input, HookEnv::default(), ctx)
            .await;
        self.event_outcome(event, ctx, &results, cancelled)
    }

    /// Runs PostToolBatch hooks after a whole batch of calls.
    pub async fn run_post_tool_batch(
        &self,
        calls: &[BatchToolCall],
        ctx: &ToolUseContext,
    ) -> EventOutcome {
        let event = "PostToolBatch";
        let Some(inner) = self.active(event, Target::value(None)) else {
            return EventOutcome::default();
        };
        let mut input = self.base_input(inner, event, ctx);
        let list: Vec<Value> = calls
            .iter()
            .map(|c| {
                let mut m = Map::new();
                m.insert("tool_name".into(), json!(c.call.tool_name));
                m.insert("tool_input".into(), c.call.tool_input.clone());
                m.insert("tool_use_id".into(), json!(c.call.tool_use_id));
                if let Some(r) = &c.tool_response {
                    m.insert("tool_response".into(), r.clone());
                }
                Value::Object(m)
            })
            .collect();
        input.insert("tool_calls".into(), Value::Array(list));
        let (results, cancelled) = self
            .run_raw(
                event,
                Target::value(None),
                None,
                input,
                HookEnv::default(),
                ctx,
            )
            .await;
        self.event_outcome(event, ctx, &results, cancelled)
    }

    /// Runs PermissionRequest hooks when a permission prompt would be shown.
    /// `suggestions` are sent as `permission_suggestions`. Deny beats allow; exit 2 is not
    /// blocking here.
    pub async fn run_permission_request(
        &self,
        call: &ToolCallInfo,
        suggestions: &[PermissionUpdate],
        ctx: &ToolUseContext,
    ) -> PermissionRequestOutcome {
        let event = "PermissionRequest";
        let full = full_tool_name(call, ctx);
        let target = Target::tool(call, full.as_deref());
        let Some(inner) = self.active(event, target) else {
            return PermissionRequestOutcome::default();
        };
        let mut input = self.tool_input(inner, event, call, ctx);
        input.insert(
            "permission_suggestions".into(),
            serde_json::to_value(suggestions).unwrap_or_else(|_| json!([])),
        );
        let (results, cancelled) = self
            .run_raw(event, target, Some(call), input, HookEnv::default(), ctx)
            .await;
        let mut out = PermissionRequestOutcome::default();
        out.common.cancelled = cancelled;
        let mut deny: Option<PermissionRequestVerdict> = None;
        let mut allow_hook: Option<String> = None;
        let mut allow_input: Option<Value> = None;
        let mut allow_perms = Vec::new();
        for r in &results {
            self.absorb(event, ctx, &mut out.common, r);
            if let Some(text) = &r.guard_refusal {
                // A hook that could not start denies, in its place in the order.
                if deny.is_none() {
                    deny = Some(PermissionRequestVerdict::Deny {
                        hook: r.hook.clone(),
                        message: self.bound(
                            ctx,
                            format!("Permission to use {} denied: {text}", call.tool_name),
                        ),
                        interrupt: false,
                    });
                }
                continue;
            }
            let Some(d) = r
                .output
                .as_ref()
                .and_then(|o| o.hook_specific_output.as_ref())
                .and_then(|h| h.decision.clone())
            else {
                continue;
            };
            match d {
                PermissionRequestDecision::Deny { message, interrupt } => {
                    // The first deny's message; any denying hook's `interrupt` stops the
                    // turn, whatever its place in the order.
                    if interrupt == Some(true)
                        && let Some(PermissionRequestVerdict::Deny { interrupt, .. }) = &mut deny
                    {
                        *interrupt = true;
                    }
                    if deny.is_none() {
                        deny = Some(PermissionRequestVerdict::Deny {
                            hook: r.hook.clone(),
                            message: self.bound(
                                ctx,
                                given(message.as_deref()).unwrap_or_else(|| {
                                    format!("Permission to use {} denied by hook", call.tool_name)
                                }),
                            ),
                            interrupt: interrupt.unwrap_or(false),
                        });
                    }
                }
                // As on PreToolUse: an allow from a hook whose `if` matched only by
                // failing open, or does not cover the whole call, is no decision (its
                // `updatedInput` and `updatedPermissions` are not taken).
                PermissionRequestDecision::Allow { .. } if self.guards_only(r, call) => {}
                PermissionRequestDecision::Allow {
                    updated_input,
                    updated_permissions,
                } => {
                    if allow_hook.is_none() {
                        allow_hook = Some(r.hook.clone());
                    }
                    if let Some(u) = updated_input {
                        allow_input = Some(Value::Object(u));
                    }
                    allow_perms.extend(updated_permissions.unwrap_or_default());
                }
            }
        }
        out.verdict = deny.or_else(|| {
            allow_hook.map(|hook| PermissionRequestVerdict::Allow {
                hook,
                updated_input: allow_input,
                updated_permissions: allow_perms,
            })
        });
        out
    }

    /// Runs PermissionDenied hooks after the auto-mode classifier denied a call; `reason`
    /// is the classifier's reason.
    pub async fn run_permission_denied(
        &self,
        call: &ToolCallInfo,
        reason: &str,
        ctx: &ToolUseContext,
    ) -> PermissionDeniedOutcome {
        let event = "PermissionDenied";
        let full = full_tool_name(call, ctx);
        let target = Target::tool(call, full.as_deref());
        let Some(inner) = self.active(event, target) else {
            return PermissionDeniedOutcome::default();
        };
        let mut input = self.tool_input(inner, event, call, ctx);
        input.insert("reason".into(), json!(reason));
        let (results, cancelled) = self
            .run_raw(event, target, Some(call), input, HookEnv::default(), ctx)
            .await;
        let mut out = PermissionDeniedOutcome::default();
        out.common.cancelled = cancelled;
        for r in &results {
            self.absorb(event, ctx, &mut out.common, r);
            if r.output
                .as_ref()
                .and_then(|o| o.hook_specific_output.as_ref())
                .and_then(|h| h.retry)
                == Some(true)
            {
                out.retry = true;
            }
        }
        out
    }

    /// Runs the hooks of any event (SessionStart, Stop, UserPromptSubmit, Notification, ...).
    /// `extra` holds the event's own input fields (`source`, `prompt`, `stop_hook_active`,
    /// ...), added to the common ones; `matcher_value` is what matchers are tested against
    /// (`None` for events without a matcher: every group matches). Handlers with an `if`
    /// condition never run here.
    pub async fn run_event(
        &self,
        event: &str,
        extra: Map<String, Value>,
        matcher_value: Option<&str>,
        ctx: &ToolUseContext,
    ) -> EventOutcome {
        self.run_event_with_env(event, extra, matcher_value, &[], ctx)
            .await
    }

    /// [`run_event`](Self::run_event) with extra environment variables for command hooks,
    /// the same for every hook.
    pub async fn run_event_with_env(
        &self,
        event: &str,
        extra: Map<String, Value>,
        matcher_value: Option<&str>,
        env: &[(String, String)],
        ctx: &ToolUseContext,
    ) -> EventOutcome {
        let env = HookEnv {
            vars: env,
            files_in: None,
        };
        self.run_event_in(event, extra, matcher_value, env, ctx)
            .await
    }

    /// [`run_event`](Self::run_event) where each command hook gets an environment file of
    /// its own in `dir` as `CLAUDE_ENV_FILE` (SessionStart, Setup, CwdChanged,
    /// FileChanged): `<event>-hook-<index>.sh`, named by its place among the event's
    /// matching hooks in configuration order ([`tool_core::hook_env_file_name`]), as in
    /// Claude Code. A hook that writes its file with `>` erases nothing another hook
    /// exported; the files are sourced in that order ([`tool_core::hook_env_files`]). The
    /// files are not made here: a hook that writes nothing leaves none.
    pub async fn run_event_with_env_files(
        &self,
        event: &str,
        extra: Map<String, Value>,
        matcher_value: Option<&str>,
        dir: &Path,
        ctx: &ToolUseContext,
    ) -> EventOutcome {
        let env = HookEnv {
            vars: &[],
            files_in: Some(dir),
        };
        self.run_event_in(event, extra, matcher_value, env, ctx)
            .await
    }

    async fn run_event_in(
        &self,
        event: &str,
        extra: Map<String, Value>,
        matcher_value: Option<&str>,
        env: HookEnv<'_>,
        ctx: &ToolUseContext,
    ) -> EventOutcome {
        let target = Target::value(matcher_value);
        let Some(inner) = self.active(event, target) else {
            return EventOutcome::default();
        };
        let mut input = self.base_input(inner, event, ctx);
        for (k, v) in extra {
            input.insert(k, v);
        }
        if event != "SessionEnd" {
            let (results, cancelled) = self.run_raw(event, target, None, input, env, ctx).await;
            return self.event_outcome(event, ctx, &results, cancelled);
        }
        // SessionEnd hooks share one budget: whatever still runs then is killed, so ending
        // a session never hangs on a hook.
        let budget = session_end_budget(
            inner.config.matching(event, matcher_value),
            std::env::var("CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS").ok(),
        );
        let token = ctx.cancellation().child_token();
        let budgeted = ctx.clone().with_cancellation(token.clone());
        let run = self.run_raw(event, target, None, input, env, &budgeted);
        tokio::pin!(run);
        let mut over_budget = false;
        let (results, cancelled) = tokio::select! {
            done = &mut run => done,
            () = tokio::time::sleep(budget) => {
                over_budget = true;
                token.cancel();
                run.await
            }
        };
        let mut out = self.event_outcome(event, ctx, &results, cancelled);
        // Said once: only when the budget stopped a hook. One that reached its own timeout
        // at the same moment (the budget is the largest timeout) already says so.
        if over_budget && results.iter().any(|r| r.cancelled) {
            out.common.errors.push(HookMessage {
                hook: event.to_owned(),
                text: format!(
                    "SessionEnd hooks were stopped after their {} ms budget \
                     (CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS)",
                    budget.as_millis()
                ),
            });
        }
        out
    }

    fn event_outcome(
        &self,
        event: &str,
        ctx: &ToolUseContext,
        results: &[HookResult],
        cancelled: bool,
    ) -> EventOutcome {
        let mut out = EventOutcome::default();
        out.common.cancelled = cancelled;
        for r in results {
            self.absorb(event, ctx, &mut out.common, r);
            if let Some(hso) = r
                .output
                .as_ref()
                .and_then(|o| o.hook_specific_output.clone())
            {
                out.hook_specific.push((r.hook.clone(), hso));
            }
        }
        out
    }
}

/// The blocking error `r` gives on `event`, as given: its exit-2 (or `onFailure: "block"`)
/// message, else the reason of a top-level `decision: "block"` on an event where it blocks.
fn blocking_text(event: &str, r: &HookResult) -> Option<String> {
    if let Some(b) = &r.blocking {
        return Some(b.clone());
    }
    let out = r.output.as_ref()?;
    (out.decision == Some(TopLevelDecision::Block) && !NON_BLOCKING_EVENTS.contains(&event))
        .then(|| given(out.reason.as_deref()).unwrap_or_else(|| "Blocked by hook".to_owned()))
}

/// A reason or message a hook gave, `None` when it gave none, an empty one or a blank one.
/// Claude Code falls back with `||` (`permissionDecisionReason || reason || 'Blocked by
/// hook'`), which skips `""` but keeps a blank `" "` (a non-empty string is truthy in
/// JavaScript). **Decision**: a blank one falls back too, so that no reason ever becomes an
/// error result the model sees as empty.
fn given(text: Option<&str>) -> Option<String> {
    text.filter(|t| !t.trim().is_empty()).map(str::to_owned)
}

/// The shared budget of SessionEnd hooks, as Claude Code sets it: 1.5 s, raised to the
/// largest timeout a matching handler sets, at most 60 s; `CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS`
/// (`override_ms`) replaces it (still at most 60 s) when it is a number of milliseconds
/// above 0. Anything else (`0`, negative, not a number) is ignored, as Claude Code ignores
/// it: a 0 ms budget would kill every SessionEnd hook before it started.
fn session_end_budget(handlers: Vec<&HookHandler>, override_ms: Option<String>) -> Duration {
    const MAX: Duration = Duration::from_secs(60);
    if let Some(ms) = override_ms
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
    {
        return Duration::from_millis(ms).min(MAX);
    }
    handlers
        .iter()
        .filter_map(|h| h.timeout)
        .fold(Duration::from_millis(1500), Duration::max)
        .min(MAX)
}

/// Saves `text` as a new file in `dir` under an unpredictable name (created exclusively, so
/// nothing already there, such as a planted symlink in a shared temporary directory, is
/// followed or replaced) and returns its path. The name is only handed out once the whole
/// text is on disk.
fn save_new_file(dir: &Path, text: &str) -> std::io::Result<PathBuf> {
    use std::io::Write as _;
    // Made owner-only inside the directory above, which is made the same way inside its
    // own: never a removed session's directory again (`create_private_dir`).
    if let Some(parent) = dir.parent() {
        tool_core::create_private_dir(parent)?;
    }
    tool_core::create_private_dir(dir)?;
    let mut file = tempfile::Builder::new()
        .prefix(&format!("hook-{}-", std::process::id()))
        .suffix(".txt")
        .tempfile_in(dir)?;
    file.write_all(text.as_bytes())?;
    file.as_file().sync_all()?;
    let (_, path) = file.keep().map_err(|e| e.error)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use tool_core::RuleSource;

    fn session_end_hooks(timeouts: &[Option<u64>]) -> HooksConfig {
        let handlers: Vec<Value> = timeouts
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut h = json!({"type": "command", "command": format!("true {i}")});
                if let Some(t) = t {
                    h["timeout"] = json!(t);
                }
                h
            })
            .collect();
        let (config, diags) = HooksConfig::from_hooks_value(
            &json!({"SessionEnd": [{"hooks": handlers}]}),
            RuleSource::UserSettings,
        );
        assert!(diags.is_empty(), "{diags:?}");
        config
    }

    /// `CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS` replaces the budget only when it is a
    /// number above 0, as in Claude Code; `0` made a 0 ms budget that killed every
    /// SessionEnd hook at once.
    #[test]
    fn the_session_end_budget_ignores_an_env_value_that_is_not_positive() {
        let config = session_end_hooks(&[None]);
        let budget = |v: Option<&str>| {
            session_end_budget(
                config.matching("SessionEnd", Some("other")),
                v.map(str::to_owned),
            )
        };
        let default = Duration::from_millis(1500);
        for bad in ["0", " 0 ", "-5", "-0", "abc", "", "  "] {
            assert_eq!(budget(Some(bad)), default, "{bad:?}");
        }
        assert_eq!(budget(None), default);
        assert_eq!(budget(Some("3000")), Duration::from_millis(3000));
        assert_eq!(budget(Some("1")), Duration::from_millis(1));
        assert_eq!(budget(Some("999999")), Duration::from_secs(60));
        // A value that is not positive falls back to the computed budget, which the
        // hooks' own timeouts raise.
        let config = session_end_hooks(&[Some(5), None]);
        let budget = session_end_budget(
            config.matching("SessionEnd", Some("other")),
            Some("0".to_owned()),
        );
        assert_eq!(budget, Duration::from_secs(5));
    }
}
