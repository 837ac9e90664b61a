//! The Claude Code-compatible implementations of the pipeline's seams: `tool-perms`' engine
//! as [`Permissions`], `tool-hooks`' runner as [`Hooks`], and `tool-perms`' rule matcher for
//! hooks' `if` conditions.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use tool_core::{
    HookEventOutcome, Message, PermissionResult, PermissionSubject, PermissionUpdate, Tool,
    ToolUseContext, find_tool,
};
use tool_hooks::{
    BatchToolCall, HookRunner, IfMatch, PermissionDecision, RuleMatcher, ToolCallInfo,
};
use tool_perms::bash::parse::Analysis;
use tool_perms::{PermissionEngine, Prompter};

use crate::seams::{
    HookCall, HookDecision, Hooks, LoopEvent, LoopEventOutcome, PermissionRequestOutcome,
    Permissions, PostToolUseOutcome, PreToolUseOutcome,
};

#[async_trait]
impl Permissions for PermissionEngine {
    async fn decide(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> PermissionResult {
        // In a session that cannot prompt, an ask still leaves here as an ask: the pipeline
        // runs PermissionRequest hooks first, and `resolve_ask` refuses when none decided
        // (Claude Code's order for background agents).
        PermissionEngine::decide_keeping_asks(self, tool, input, ctx).await
    }

    async fn check_rule_based(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> Option<PermissionResult> {
        PermissionEngine::check_rule_based(self, tool, input, ctx).await
    }

    async fn resolve_ask(
        &self,
        prompter: &dyn Prompter,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
        ask: PermissionResult,
    ) -> PermissionResult {
        // The settings' `denyInsteadOfPrompting` holds where a host turned prompts back on
        // (`agent` on a terminal, `serve`) too: the engine refuses the asks it decides, but
        // an ask it did not decide (a PreToolUse hook's, an ask rule's after a
        // PermissionRequest hook's allow) only comes here. A tool that exists to ask the user
        // (AskUserQuestion, ExitPlanMode) still asks.
        let perm = ctx.permission();
        let refused = perm.avoid_prompts
            || (perm.deny_instead_of_prompting && !tool.requires_user_interaction());
        if refused && matches!(ask, PermissionResult::Ask { .. }) {
            return PermissionEngine::refuse_prompt(tool, ctx, &ask);
        }
        let (result, problems) =
            PermissionEngine::resolve_ask(self, prompter, tool, input, ctx, ask).await;
        for problem in problems {
            tracing::warn!(%problem, "a rule chosen at the prompt was not added");
        }
        result
    }

    fn apply_updates(&self, updates: &[PermissionUpdate]) -> Vec<String> {
        let mut problems = Vec::new();
        for update in updates {
            for problem in self.apply_update(update) {
                tracing::warn!(%problem, "a rule from a PermissionRequest hook was not added");
                problems.push(problem.to_string());
            }
        }
        problems
    }
}

fn call_info(call: HookCall<'_>) -> ToolCallInfo {
    let mut info = ToolCallInfo::new(call.tool.name(), call.input.clone(), call.tool_use_id);
    info.duration = call.duration;
    if let Some(mcp) = call.tool.mcp_info() {
        let mut server = serde_json::json!({"name": mcp.server_name});
        if let Some(source) = mcp.source {
            server["source"] = source.into();
        }
        info.mcp_server = Some(server);
    }
    info
}

#[async_trait]
impl Hooks for HookRunner {
    async fn pre_tool_use(&self, call: HookCall<'_>, ctx: &ToolUseContext) -> PreToolUseOutcome {
        let out = self.run_pre_tool_use(&call_info(call), ctx).await;
        let ask = |d: &tool_hooks::PreToolDecision| HookDecision::Ask {
            updated_input: d.updated_input.clone(),
            reason: Some(d.message.clone()),
        };
        let decision = out.decision.as_ref().and_then(|d| match d.behavior {
            PermissionDecision::Allow => Some(HookDecision::Allow {
                updated_input: d.updated_input.clone(),
                reason: d.reason.clone(),
            }),
            PermissionDecision::Ask => Some(ask(d)),
            PermissionDecision::Deny => Some(HookDecision::Deny {
                message: d.message.clone(),
            }),
            // Deferrals are not honoured here: the normal flow decides, but another hook's
            // ask still stands.
            PermissionDecision::Defer => out.ask_behind_defer.as_ref().map(ask),
        });
        PreToolUseOutcome {
            decision,
            updated_input: out.passthrough_input.clone(),
            // Exit-2 blocks are already the deny decision.
            messages: out
                .common
                .messages("PreToolUse", Some(call.tool.name()), false),
            stop: out.common.stop.as_ref().map(|s| s.reason.clone()),
            cancelled: out.common.cancelled,
        }
    }

    async fn post_tool_use(
        &self,
        call: HookCall<'_>,
        output: &Value,
        ctx: &ToolUseContext,
    ) -> PostToolUseOutcome {
        let out = self.run_post_tool_use(&call_info(call), output, ctx).await;
        let mcp = call.tool.is_mcp();
        PostToolUseOutcome {
            messages: out
                .common
                .messages("PostToolUse", Some(call.tool.name()), true),
            updated_output: out
                .updated_tool_output
                .clone()
                .or_else(|| out.updated_mcp_tool_output.clone().filter(|_| mcp)),
            stop: out.common.stop.as_ref().map(|s| s.reason.clone()),
        }
    }

    async fn post_tool_use_failure(
        &self,
        call: HookCall<'_>,
        error: &str,
        is_interrupt: bool,
        ctx: &ToolUseContext,
    ) -> PostToolUseOutcome {
        let out = self
            .run_post_tool_use_failure(&call_info(call), error, is_interrupt, ctx)
            .await;
        PostToolUseOutcome {
            messages: out
                .common
                .messages("PostToolUseFailure", Some(call.tool.name()), true),
            updated_output: None,
            stop: out.common.stop.as_ref().map(|s| s.reason.clone()),
        }
    }

    async fn permission_request(
        &self,
        call: HookCall<'_>,
        suggestions: &[PermissionUpdate],
        ctx: &ToolUseContext,
    ) -> PermissionRequestOutcome {
        let out = self
            .run_permission_request(&call_info(call), suggestions, ctx)
            .await;
        PermissionRequestOutcome {
            verdict: out.verdict,
            messages: out
                .common
                .messages("PermissionRequest", Some(call.tool.name()), false),
            stop: out.common.stop_turn(),
        }
    }

    async fn loop_event(&self, event: LoopEvent<'_>, ctx: &ToolUseContext) -> LoopEventOutcome {
        run_loop_event(self, event, ctx).await
    }

    /// TaskCreated and TaskCompleted (no matcher: every group's hooks run). Exit code 2 and
    /// `decision: "block"` block, as on the other blocking events; so does `continue:
    /// false`, whose `stopReason` is the text (Claude Code stops the teammate there, and
    /// there are no teammates here). What else the hooks said comes back as messages,
    /// named by the event.
    async fn tool_event(
        &self,
        event: &'static str,
        fields: serde_json::Map<String, Value>,
        ctx: &ToolUseContext,
    ) -> HookEventOutcome {
        // Without the seam itself: an `async` hook keeps its context until it ends, and
        // through the seam it would keep this runner alive past its host.
        let ctx = ctx.clone().without_hook_events();
        let out = self.run_event(event, fields, None, &ctx).await;
        let mut blocking = blocking_lines(&out.common);
        if let Some(stop) = &out.common.stop {
            blocking.push(
                match stop.reason.as_deref().filter(|r| !r.trim().is_empty()) {
                    Some(reason) => reason.to_owned(),
                    None => format!(
                        "[{}]: the hook said `continue: false` (no stopReason given)",
                        stop.hook
                    ),
                },
            );
        }
        HookEventOutcome {
            blocking,
            messages: out.common.messages(event, None, false),
            cancelled: out.common.cancelled,
        }
    }

    fn take_background_messages(&self) -> Vec<Message> {
        self.take_async_results()
            .iter()
            .flat_map(|r| r.common.messages(&r.event, None, false))
            .collect()
    }

    fn background_pending(&self) -> usize {
        self.pending_async()
    }

    async fn wait_background(&self) {
        self.wait_for_async().await;
    }
}

/// Blocking errors as Claude Code shows them: an exit-2 block as `[hook]: stderr` (its text
/// already reads so), a JSON `decision: "block"` as its reason alone.
fn blocking_lines(common: &tool_hooks::CommonOutcome) -> Vec<String> {
    common
        .blocking_errors
        .iter()
        .map(|b| b.text.clone())
        .collect()
}

/// Runs `event`'s hooks with `runner`: its own input fields, its matcher value (the agent
/// type on Subagent*, `source` on SessionStart, `reason` on SessionEnd).
async fn run_loop_event(
    runner: &HookRunner,
    event: LoopEvent<'_>,
    ctx: &ToolUseContext,
) -> LoopEventOutcome {
    let name = event.name();
    let mut extra = serde_json::Map::new();
    let agent_type = ctx.agent().map(|a| a.agent_type.clone());
    // What names SessionStart's hooks in what they say (`SessionStart:startup`).
    let matched = match &event {
        LoopEvent::SessionStart { source, .. } => Some((*source).to_owned()),
        _ => None,
    };
    let outcome = match event {
        LoopEvent::PostToolBatch { calls } => {
            let batch: Vec<BatchToolCall> = calls
                .iter()
                .map(|(tool_use, content)| {
                    // As PreToolUse and PostToolUse see it: the tool's own name (not an
                    // alias) and its observable input (`~` expanded, `..` collapsed in a
                    // file path), so one guard catches every spelling.
                    let tool = tool_core::find_tool(ctx.tools(), &tool_use.name);
                    // Through the schema step first, as the pipeline gives it to PreToolUse
                    // (`"limit": "10"` read as a number).
                    let input = tool
                        .and_then(|t| {
                            // Without the fields only the user fills, as the pipeline
                            // drops them.
                            let mut input = tool_use.input.clone();
                            tool_core::strip_user_supplied_fields(t.as_ref(), &mut input);
                            let parsed = t.parse_input(input).ok()?;
                            Some(t.observable_input(&parsed, ctx).unwrap_or(parsed))
                        })
                        .unwrap_or_else(|| tool_use.input.clone());
                    let name = tool.map_or(tool_use.name.as_str(), |t| t.name());
                    BatchToolCall {
                        call: ToolCallInfo::new(name, input, &tool_use.id),
                        tool_response: Some(content.clone()),
                    }
                })
                .collect();
            runner.run_post_tool_batch(&batch, ctx).await
        }
        LoopEvent::UserPromptSubmit { prompt } => {
            extra.insert("prompt".into(), json!(prompt));
            runner.run_event(name, extra, None, ctx).await
        }
        LoopEvent::Stop {
            stop_hook_active,
            last_assistant_message,
        }
        | LoopEvent::SubagentStop {
            stop_hook_active,
            last_assistant_message,
        } => {
            extra.insert("stop_hook_active".into(), json!(stop_hook_active));
            extra.insert(
                "last_assistant_message".into(),
                json!(last_assistant_message),
            );
            let matcher = if name == "SubagentStop" {
                // Empty, as `transcript_path` is, when no transcript is kept.
                let path = ctx
                    .agent()
                    .and_then(|a| runner.agent_transcript_path(&a.id))
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default();
                extra.insert("agent_transcript_path".into(), json!(path));
                agent_type.as_deref()
            } else {
                None
            };
            runner.run_event(name, extra, matcher, ctx).await
        }
        LoopEvent::SubagentStart => {
            runner
                .run_event(name, extra, agent_type.as_deref(), ctx)
                .await
        }
        LoopEvent::SessionStart {
            source,
            model,
            env_dir,
        } => {
            extra.insert("source".into(), json!(source));
            if let Some(model) = model {
                extra.insert("model".into(), json!(model));
            }
            // Each hook its own `CLAUDE_ENV_FILE`, as in Claude Code: one that writes it
            // with `>` erases nothing another exported.
            match env_dir {
                Some(dir) => {
                    runner
                        .run_event_with_env_files(name, extra, Some(source), dir, ctx)
                        .await
                }
                None => runner.run_event(name, extra, Some(source), ctx).await,
            }
        }
        LoopEvent::SessionEnd { reason } => {
            extra.insert("reason".into(), json!(reason));
            runner.run_event(name, extra, Some(reason), ctx).await
        }
        LoopEvent::Notification {
            message,
            notification_type,
        } => {
            extra.insert("message".into(), json!(message));
            extra.insert("notification_type".into(), json!(notification_type));
            runner
                .run_event(name, extra, Some(notification_type), ctx)
                .await
        }
    };
    LoopEventOutcome {
        blocking: blocking_lines(&outcome.common),
        messages: outcome.common.messages(name, matched.as_deref(), false),
        stop: outcome.common.stop_turn(),
    }
}

/// Evaluates hooks' `if` conditions with `tool-perms`' matcher (each Bash subcommand, path
/// rules with Claude Code's anchoring), for the session's tools.
pub struct PermissionRuleMatcher {
    tools: std::sync::RwLock<Vec<Arc<dyn Tool>>>,
    ctx: ToolUseContext,
    /// The last command analysed and its analysis: a call's `if` hooks are matched one
    /// after the other, so its command is analysed once, not once per hook.
    last_analysis: std::sync::Mutex<Option<(String, Arc<Analysis>)>>,
}

impl std::fmt::Debug for PermissionRuleMatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PermissionRuleMatcher")
            .field("cwd", &self.ctx.cwd())
            .finish_non_exhaustive()
    }
}

impl PermissionRuleMatcher {
    /// A matcher for the tools of `ctx`, with paths anchored at `ctx`'s cwd.
    pub fn new(ctx: &ToolUseContext) -> Self {
        Self {
            tools: std::sync::RwLock::new(ctx.tools().to_vec()),
            ctx: ctx.clone(),
            last_analysis: std::sync::Mutex::default(),
        }
    }

    /// A matcher for `tools` in `cwd`.
    pub fn for_tools(tools: Vec<Arc<dyn Tool>>, cwd: PathBuf) -> Self {
        Self {
            tools: std::sync::RwLock::new(tools),
            ctx: ToolUseContext::new(cwd),
            last_analysis: std::sync::Mutex::default(),
        }
    }

    /// Replaces the tools it knows: a host that adds a tool after the hooks were built (the
    /// Agent tool, which needs the pipeline those hooks are part of) tells the matcher, or
    /// every `if` condition would match that tool's calls.
    pub fn set_tools(&self, tools: Vec<Arc<dyn Tool>>) {
        *self
            .tools
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = tools;
    }

    /// tool-perms' analysis of `command`, made once for the calls of one command in a row.
    fn analysis(&self, command: &str) -> Arc<Analysis> {
        let mut last = self
            .last_analysis
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((seen, analysis)) = last.as_ref()
            && seen == command
        {
            return analysis.clone();
        }
        let analysis = Arc::new(tool_perms::bash::parse::analyze(command));
        *last = Some((command.to_owned(), analysis.clone()));
        analysis
    }
}

impl RuleMatcher for PermissionRuleMatcher {
    /// Claude Code's `if`: the rule must name the call's tool (legacy names normalised on
    /// both sides: `Task` is Agent, `KillShell` is TaskStop); only then is its content
    /// matched, with tool-perms' matcher. The deny-rule reading alone is wider: there a
    /// `Read(**/.env)` rule also covers Write and Edit calls (and an Edit rule covers
    /// Write), so a hook meant for reads of `.env` ran for writes too.
    fn matches(&self, rule: &str, tool_name: &str, tool_input: &Value) -> bool {
        self.match_rule(rule, tool_name, tool_input) != IfMatch::No
    }

    /// As [`matches`](Self::matches), saying how: a command whose text does not say what
    /// it runs, and a tool this matcher cannot see, match by failing open
    /// ([`IfMatch::FailOpen`]: the hook runs, its allow is not honoured).
    fn match_rule(&self, rule: &str, tool_name: &str, tool_input: &Value) -> IfMatch {
        // A malformed rule matches nothing (and was reported when the hooks were loaded),
        // also for a tool this matcher cannot see.
        if tool_hooks::if_rule_problem(rule).is_some() {
            return IfMatch::No;
        }
        let tools = self
            .tools
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let found = find_tool(&tools, tool_name);
        let rule_tool = tool_perms::rule::parse_rule_lenient(rule).tool_name;
        // An MCP tool whose full name is too long for the API goes by a shortened one: a
        // rule may name it either way, as permission rules do.
        let full_mcp_name = found.and_then(|tool| tool.mcp_info()).map(|info| {
            format!(
                "mcp__{}__{}",
                tool_core::normalize_mcp_name(&info.server_name),
                tool_core::normalize_mcp_name(&info.tool_name)
            )
        });
        let names_the_call = rule_tool == tool_core::normalize_tool_name(tool_name)
            || full_mcp_name.as_deref() == Some(rule_tool.as_str())
            || found.is_some_and(|tool| {
                std::iter::once(tool.name())
                    .chain(tool.aliases().iter().copied())
                    .any(|n| tool_core::normalize_tool_name(n) == rule_tool)
            });
        if !names_the_call {
            return IfMatch::No;
        }
        match found {
            Some(tool) => {
                // A command whose own text does not say what it runs: the hook runs (Claude
                // Code's `if` fails open on what its parser cannot follow).
                if let Some(PermissionSubject::Command(command)) =
                    tool.permission_subject(tool_input)
                    && let Some(content) = tool_perms::rule::parse_rule_lenient(rule).content
                    && hides_what_it_runs(&self.analysis(&command), &content)
                {
                    return IfMatch::FailOpen;
                }
                if tool_perms::matches_rule(rule, tool.as_ref(), tool_input, &self.ctx) {
                    IfMatch::Exact
                } else {
                    IfMatch::No
                }
            }
            // A tool we cannot see: fail open (run the hook), as Claude Code does.
            None => IfMatch::FailOpen,
        }
    }

    /// tool-perms' own allow-rule reading ([`tool_perms::covers_as_allow_rule`]): every
    /// subcommand of a shell command must be allowed by the rule (or need none, a read-only
    /// one), its redirections and paths included (`Bash(npm test *)` does not cover `npm
    /// test > ~/x`), where the parts of the default are cut by text.
    fn covers_call(&self, rule: &str, tool_name: &str, tool_input: &Value) -> bool {
        if self.match_rule(rule, tool_name, tool_input) != IfMatch::Exact {
            return false;
        }
        let tools = self
            .tools
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        find_tool(&tools, tool_name).is_some_and(|tool| {
            tool_perms::covers_as_allow_rule(rule, tool.as_ref(), tool_input, &self.ctx)
        })
    }
}

/// How many wrappers deep (`sudo nice timeout 5 …`) a command's name is looked for.
const MAX_WRAPPERS: usize = 8;

/// How many readings of a command's wrappers (each possible start of what a wrapper whose
/// options were not all understood runs) are looked at, in all.
const MAX_READINGS: usize = 64;

/// Whether a shell rule with content `content` (`rm *`) cannot be matched against what the
/// command of `analysis` (tool-perms') runs: part of it was not parsed, or is nested too
/// deeply to be seen whole; a command is computed (`$X -rf x`, `$(echo rm) x`, `eval
/// "$y"`, `bash -c "$y"`, a shell reading its script from stdin, git configured to run a
/// program: `git -c alias…`, `GIT_CONFIG_*=… git`, `env GIT_CONFIG_PARAMETERS=… git`); the
/// command may give a shell a startup file (`BASH_ENV`, `ENV`: however it is set, a prefix,
/// `env` or `export`); what a name runs is rebound out of sight (an alias, `hash -p`); a
/// command's name is a glob or brace list bash expands (`/bin/r[m]`), under any reading of
/// its wrappers; or find/xargs take a program's subcommand from their input and the rule
/// may name that program. The exact match is kept for everything else, so `git status`
/// does not match `rm *`.
///
/// (tool-perms' `commands::effective_name` gives the name a command runs through its
/// wrappers, but neither whether that name is computed or a glob nor the other readings of
/// an uncertain wrapper, so the walk is here.)
fn hides_what_it_runs(analysis: &Analysis, content: &str) -> bool {
    if !analysis.is_parsed()
        || analysis.truncated
        || analysis.computed_command
        || !analysis.computed_why.is_empty()
        || analysis.startup_env
        || !analysis.incomplete.is_empty()
    {
        return true;
    }
    let rule_program = tool_perms::bash::pattern::ShellPattern::parse(content)
        .first_word()
        .map(|w| w.rsplit('/').next().unwrap_or(w).to_owned());
    if analysis
        .subcommand_from_input
        .iter()
        .any(|program| rule_program.as_ref().is_none_or(|p| p == program))
    {
        return true;
    }
    analysis.commands.iter().any(|c| {
        // The name as written, and the name each wrapper runs (`sudo /bin/r[m] x`), with
        // the variables a wrapper sets for it (`env GIT_CONFIG_COUNT=1 … git`).
        let mut readings = vec![(&c.words[..], 0, false)];
        let mut seen = 0;
        while let Some((words, depth, git_env)) = readings.pop() {
            seen += 1;
            if seen > MAX_READINGS {
                return true;
            }
            let Some(name) = words.first() else {
                continue;
            };
            let Some(value) = name.value.as_deref().filter(|_| !name.glob) else {
                return true;
            };
            if git_env && value.rsplit('/').next() == Some("git") {
                return true;
            }
            let Some((starts, _)) = tool_perms::bash::commands::wrapped_command_starts(words)
            else {
                continue;
            };
            if depth >= MAX_WRAPPERS {
                return true;
            }
            for start in starts {
                let Some(run) = words.get(start..) else {
                    continue;
                };
                let sets_git = words.get(1..start).unwrap_or_default().iter().any(|w| {
                    w.value
                        .as_deref()
                        .and_then(|v| v.split_once('='))
                        .is_some_and(|(name, _)| configures_git(name))
                });
                readings.push((run, depth + 1, git_env || sets_git));
            }
        }
        false
    })
}

/// Whether an environment variable named `name` may make git run a program of its own
/// choosing (its configuration, a pager, an editor, an ssh or a directory with hooks):
/// every `GIT_` variable, and those git reads for a pager or an editor.
fn configures_git(name: &str) -> bool {
    name.starts_with("GIT_") || matches!(name, "PAGER" | "EDITOR" | "VISUAL")
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use serde_json::json;
    use tool_core::{MaxResultSize, McpToolInfo, ProgressSender, ToolError, ToolResult};

    use super::*;

    struct Remote(Option<&'static str>);

    #[async_trait]
    impl Tool for Remote {
        fn name(&self) -> &str {
            "mcp__github__search"
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn description(&self) -> Cow<'_, str> {
            "search".into()
        }
        fn max_result_size(&self) -> MaxResultSize {
            MaxResultSize::Chars(1000)
        }
        fn mcp_info(&self) -> Option<McpToolInfo> {
            Some(McpToolInfo {
                server_name: "github".into(),
                tool_name: "search".into(),
                source: self.0.map(str::to_owned),
            })
        }
        async fn call(
            &self,
            _input: Value,
            _ctx: ToolUseContext,
            _progress: ProgressSender,
        ) -> Result<ToolResult, ToolError> {
            Err(ToolError::msg("not called"))
        }
    }

    #[test]
    fn hooks_see_the_mcp_server_name_and_its_scope() {
        let input = json!({"q": "x"});
        let info = |tool: &Remote| {
            call_info(HookCall {
                tool,
                tool_use_id: "toolu_1",
                input: &input,
                duration: None,
            })
            .mcp_server
        };
        assert_eq!(
            info(&Remote(Some("project"))),
            Some(json!({"name": "github", "source": "project"}))
        );
        assert_eq!(info(&Remote(None)), Some(json!({"name": "github"})));
    }

    /// The settings of the finding: Bash allowed, and a guard hook `if: "Bash(rm *)"` that
    /// blocks (exit 2) and notes each command it saw in `log`.
    fn rm_guard(cwd: &std::path::Path, log: &std::path::Path) -> HookRunner {
        let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "command",
            "if": "Bash(rm *)",
            "command": format!(
                "cat >> '{}'; echo >> '{}'; echo 'rm is blocked' >&2; exit 2",
                log.display(),
                log.display()
            ),
        }]}]});
        let (config, diags) =
            tool_hooks::HooksConfig::from_hooks_value(&hooks, tool_core::RuleSource::FlagSettings);
        assert!(diags.is_empty(), "{diags:?}");
        let bash: Arc<dyn Tool> = Arc::new(tool_perms::probe::ProbeTool::new("Bash", cwd, None));
        HookRunner::new(config).with_rule_matcher(Arc::new(PermissionRuleMatcher::for_tools(
            vec![bash],
            cwd.to_path_buf(),
        )))
    }

    /// A guard hook's `if: "Bash(rm *)"` runs (and blocks) when what the command runs is
    /// computed, so the rule cannot be matched against it: a variable or substitution as the
    /// command name, `eval`/`bash -c` of a computed string, a shell reading its script from
    /// stdin, a glob as the command name. Claude Code's `if` fails open there; matching the
    /// rule literally let `X=rm; $X -f victim` run without the hook. A command fully
    /// understood still matches exactly: `git status` does not start the hook.
    #[tokio::test]
    async fn an_if_guard_runs_when_the_command_it_runs_is_computed() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        let log = cwd.join("seen.log");
        let runner = rm_guard(&cwd, &log);
        let ctx = ToolUseContext::new(&cwd);
        let run = |command: &str| {
            let call = ToolCallInfo::new("Bash", json!({"command": command}), "toolu_1");
            let runner = &runner;
            let ctx = &ctx;
            async move { runner.run_pre_tool_use(&call, ctx).await }
        };
        for command in [
            "rm -f proj/victim1",
            "X=rm; $X -f proj/victim2",
            "$X -rf x",
            "$(echo rm) -rf x",
            "`echo rm` x",
            "eval \"$y\"",
            "bash -c \"$y\"",
            "echo rm x | sh",
            "sudo $X x",
            "${X:-rm} x",
            "/bin/r[m] x",
            "bash <<< \"rm x\"",
            "alias r=rm; r x",
            "ls | xargs -I{} sh -c {}",
        ] {
            std::fs::write(&log, "").unwrap();
            let out = run(command).await;
            let decision = out
                .decision
                .as_ref()
                .map(|d| (d.behavior, d.message.clone()));
            assert!(
                matches!(&decision, Some((PermissionDecision::Deny, m)) if m.contains("rm is blocked")),
                "{command}: the guard did not block: {decision:?}"
            );
            let seen = std::fs::read_to_string(&log).unwrap();
            assert!(seen.contains("\"tool_name\":\"Bash\""), "{command}: {seen}");
        }
        for command in ["git status", "echo rm", "ls -la; cat notes.txt"] {
            std::fs::write(&log, "").unwrap();
            let out = run(command).await;
            assert!(out.decision.is_none(), "{command}: {:?}", out.decision);
            assert_eq!(std::fs::read_to_string(&log).unwrap(), "", "{command}");
        }
    }

    /// How a command sets the environment that makes git or a shell run something else does
    /// not decide whether a guard's `if: "Bash(rm *)"` runs: git configuration or a shell's
    /// startup file given through `env`, as a prefix assignment or as a statement of its own,
    /// all make the command computed, so the hook runs (and blocks). Before, `env
    /// GIT_CONFIG_PARAMETERS=… git ww` and a prefix `BASH_ENV=<(echo rm a) bash -c true`
    /// ran past the guard while their other spellings did not.
    #[tokio::test]
    async fn an_if_guard_runs_whatever_the_spelling_of_an_environment_that_runs_code() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        let log = cwd.join("seen.log");
        let runner = rm_guard(&cwd, &log);
        let ctx = ToolUseContext::new(&cwd);
        for command in [
            "GIT_CONFIG_PARAMETERS=\"'alias.ww=!rm a'\" git ww",
            "env GIT_CONFIG_PARAMETERS=\"'alias.ww=!rm a'\" git ww",
            "export GIT_CONFIG_PARAMETERS=\"'alias.ww=!rm a'\"; git ww",
            "env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.vv GIT_CONFIG_VALUE_0='!rm a' git vv",
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.vv GIT_CONFIG_VALUE_0='!rm a' git vv",
            "env BASH_ENV=<(echo rm a) bash -c true",
            "BASH_ENV=<(echo rm a) bash -c true",
            "env ENV=/tmp/x sh -c true",
            "ENV=/tmp/x sh -c true",
            "sudo env BASH_ENV=/tmp/x bash -c true",
        ] {
            std::fs::write(&log, "").unwrap();
            let call = ToolCallInfo::new("Bash", json!({"command": command}), "toolu_1");
            let out = runner.run_pre_tool_use(&call, &ctx).await;
            assert!(
                matches!(&out.decision, Some(d) if d.behavior == PermissionDecision::Deny),
                "{command}: the guard did not run: {:?}",
                out.decision
            );
        }
        // An environment that runs nothing leaves the command understood.
        for command in ["env LANG=C git status", "LANG=C bash -c true"] {
            std::fs::write(&log, "").unwrap();
            let call = ToolCallInfo::new("Bash", json!({"command": command}), "toolu_1");
            let out = runner.run_pre_tool_use(&call, &ctx).await;
            assert!(out.decision.is_none(), "{command}: {:?}", out.decision);
        }
    }

    /// An approving hook whose `if` (`Bash(npm test *)`) matched only because the command
    /// does not say what it runs still runs, but its allow is no decision, so the user is
    /// still asked (before, `X=rm; $X -rf ~` was auto-approved by an approver meant for `npm
    /// test`); the command it was written for is approved as before.
    #[tokio::test]
    async fn an_approver_never_approves_a_command_its_if_matched_only_by_failing_open() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        let log = cwd.join("seen.log");
        let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "command",
            "if": "Bash(npm test *)",
            "command": format!(
                "cat >> '{}'; echo '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}}}'",
                log.display()
            ),
        }]}]});
        let (config, diags) =
            tool_hooks::HooksConfig::from_hooks_value(&hooks, tool_core::RuleSource::FlagSettings);
        assert!(diags.is_empty(), "{diags:?}");
        let bash: Arc<dyn Tool> = Arc::new(tool_perms::probe::ProbeTool::new("Bash", &cwd, None));
        let runner = HookRunner::new(config).with_rule_matcher(Arc::new(
            PermissionRuleMatcher::for_tools(vec![bash], cwd.clone()),
        ));
        let ctx = ToolUseContext::new(&cwd);
        for command in ["X=rm; $X -rf ~", "eval \"$y\""] {
            std::fs::write(&log, "").unwrap();
            let call = ToolCallInfo::new("Bash", json!({"command": command}), "toolu_1");
            let out = runner.run_pre_tool_use(&call, &ctx).await;
            assert!(out.decision.is_none(), "{command}: {:?}", out.decision);
            assert!(
                std::fs::read_to_string(&log).unwrap().contains("tool_name"),
                "{command}: the hook did not run"
            );
        }
        let call = ToolCallInfo::new("Bash", json!({"command": "npm test foo"}), "toolu_1");
        let out = runner.run_pre_tool_use(&call, &ctx).await;
        assert_eq!(
            out.decision.map(|d| d.behavior),
            Some(PermissionDecision::Allow)
        );
    }
}
