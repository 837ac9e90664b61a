//! The Agent tool (alias `Task`): runs a sub-agent with the same loop and returns its final
//! text.
//!
//! A sub-agent has its own context: its own read cache (`FileStateCache`), a cancellation
//! token that is a child of the call's (cancelling the call stops the sub-agent and its
//! tools), its agent id (TodoWrite keeps one list per agent), an empty conversation, and the
//! tools its definition allows out of the caller's ([`AgentDefinition::select_tools`]; never
//! the Agent tool unless the definition's `tools` names it), and its caller's permission
//! context, in the definition's `permissionMode` when that is no looser than the caller's
//! ([`AgentDefinition::permission_for`]; one that would loosen it is not applied, and the
//! result says so). A `tools` or `disallowedTools` entry that names none of the caller's
//! tools (an MCP tool no server has) is said in the result too, once per agent type and
//! session: in the first call of that type to return a result (a call that fails or is
//! cancelled leaves it to the next). It goes through the same
//! pipeline (permission rules, hooks, prompter) and spends from the same budget. It runs in
//! the foreground, within its caller's turn: the user rejecting one of its calls without
//! feedback ends the caller's turn too ([`Stop::Rejected`]), as a rejection of the caller's
//! own call does.
//!
//! Permission rules `Agent(type)` (or `Task(type)`) match the `subagent_type`
//! (`general-purpose` when absent); the tool itself asks for nothing else, since each of the
//! sub-agent's own calls is checked. A type a deny rule refuses, or whose definition's file a
//! Read deny rule covers, is left out of the tool's description (judged on the rules of the
//! loop's last run, as each request is made); a call of the latter is refused naming the
//! rule. A type whose definition has hooks that would guard its calls (PreToolUse,
//! PermissionRequest), which are not applied, is refused too
//! ([`AgentDefinition::unguarded_refusal`]). At most [`DEFAULT_MAX_CONCURRENT`] sub-agents
//! run at once per nesting level (`CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS`,
//! [`max_concurrent_from_env`]); the others wait.
//! `run_in_background: true` is refused: background tasks hold shell processes only.
//!
//! The result is the sub-agent's final answer, a text block per text block of it, as Claude
//! Code's; the sub-agent's notices for the user (a hook's system message, the SubagentStop
//! cap) go up to the caller's loop, which gives them to its host.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::Semaphore;
use tool_core::{
    AgentInfo, CancellationToken, ContentBlock, FileStateCache, InterruptBehavior, MaxResultSize,
    PermissionResult, PermissionSubject, ProgressSender, Tool, ToolError, ToolResult,
    ToolResultContent, ToolUseContext, TypedTool, ValidationError, async_trait,
};

use super::definitions::{AGENT_DISALLOWED_TOOLS, AgentDefinition, GENERAL_PURPOSE};
use super::{AgentEvent, AgentLoop, LoopConfig, Stop};

/// How many sub-agents may run at once per nesting level, unless
/// `CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS` says otherwise. Claude Code's default is 20; ours is
/// lower because it holds per nesting level (up to [`MAX_AGENT_DEPTH`] levels run at once),
/// and each sub-agent runs up to 10 tool calls of its own at once, each executor fitting its
/// own cap to the open-file limit: 20 per level would make hundreds of calls (and parallel
/// requests, which meet the API's rate limits) at once.
pub const DEFAULT_MAX_CONCURRENT: usize = 4;

/// The concurrency cap `CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS` gives ([`DEFAULT_MAX_CONCURRENT`]
/// when it is unset or empty), and a warning when its value is not used: one that is no
/// positive whole number (`0`, `abc`, `-3`) is said, as the tool-use concurrency variable's
/// is (`CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS="0" is not a positive whole number of
/// sub-agents; the default, 4, is used`). [`load_agent_definitions`](super::load_agent_definitions)
/// gives the warning among its problems.
pub fn max_concurrent_from_env() -> (usize, Option<String>) {
    max_concurrent_from(
        std::env::var("CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS")
            .ok()
            .as_deref(),
    )
}

/// [`max_concurrent_from_env`] for the variable's value `raw`.
fn max_concurrent_from(raw: Option<&str>) -> (usize, Option<String>) {
    const NAME: &str = "CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS";
    let Some(raw) = raw.filter(|v| !v.trim().is_empty()) else {
        return (DEFAULT_MAX_CONCURRENT, None);
    };
    match raw.trim().parse::<usize>() {
        Ok(n) if n > 0 => (n, None),
        // A whole number too large to hold asks for no cap in practice.
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => (usize::MAX, None),
        _ => (
            DEFAULT_MAX_CONCURRENT,
            Some(format!(
                "{NAME}={raw:?} is not a positive whole number of sub-agents; the default, {DEFAULT_MAX_CONCURRENT}, is used"
            )),
        ),
    }
}

/// A model the Agent tool's input may name. Its schema is Claude Code's plain string enum
/// (the [`AgentInput`] field's description says what the names are for): a derived one
/// would give each name its doc comment below, which is written for Rust readers, not for
/// the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentModel {
    /// The Sonnet model (`ANTHROPIC_DEFAULT_SONNET_MODEL`, else `claude-sonnet-4-5`).
    Sonnet,
    /// The Opus model (`ANTHROPIC_DEFAULT_OPUS_MODEL`, else `claude-opus-4-5`).
    Opus,
    /// The Haiku model (`ANTHROPIC_DEFAULT_HAIKU_MODEL`, else `claude-haiku-4-5`).
    Haiku,
    /// The Fable model: `ANTHROPIC_DEFAULT_FABLE_MODEL`. Claude Code's input offers it, but
    /// no model id for it is known here: without the variable a call naming it fails,
    /// saying so ([`resolve_fable`]).
    Fable,
}

impl AgentModel {
    /// Every model the input may name, in the order the schema lists them.
    pub const ALL: [Self; 4] = [Self::Sonnet, Self::Opus, Self::Haiku, Self::Fable];

    /// The name the input gives it (`sonnet`), as the schema lists it and serde reads it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sonnet => "sonnet",
            Self::Opus => "opus",
            Self::Haiku => "haiku",
            Self::Fable => "fable",
        }
    }
}

impl JsonSchema for AgentModel {
    fn schema_name() -> Cow<'static, str> {
        "AgentModel".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names = Self::ALL.map(Self::as_str);
        schemars::json_schema!({"type": "string", "enum": names})
    }
}

/// Input of the Agent tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AgentInput {
    /// A short (3-5 word) description of the task
    pub description: String,
    /// The task for the agent to perform
    pub prompt: String,
    /// The type of specialized agent to use for this task
    pub subagent_type: Option<String>,
    /// Optional model to use for this agent. If not specified, inherits from the agent definition or the parent. Prefer haiku for quick, straightforward tasks to minimize cost and latency. fable works only where it is set up; if it is not, the call is refused and says so.
    pub model: Option<AgentModel>,
    /// Not supported here: agents always run in the foreground (leave it out or false).
    pub run_in_background: Option<bool>,
}

/// Token usage of a sub-agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentUsage {
    /// Input tokens neither read from nor written to the prompt cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens written to the prompt cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// Input tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
}

/// One text block of the output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentText {
    /// Always `text`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The text.
    pub text: String,
}

/// Output of the Agent tool (Claude Code's foreground `tool_response`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentOutput {
    /// `completed`, or `stopped` when the sub-agent ran out of turns or budget.
    pub status: String,
    /// The sub-agent's id.
    pub agent_id: String,
    /// Its type.
    pub agent_type: String,
    /// Its final text.
    pub content: Vec<AgentText>,
    /// The model it ran on.
    pub resolved_model: String,
    /// Input plus output tokens.
    pub total_tokens: u64,
    /// How long it ran.
    pub total_duration_ms: u64,
    /// How many tool calls it made.
    pub total_tool_use_count: usize,
    /// Its token usage.
    pub usage: AgentUsage,
    /// Why it stopped early, when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// What of its definition was not applied, and why (a `permissionMode` that would have
    /// loosened the caller's mode; a `tools` or `disallowedTools` entry naming none of the
    /// caller's tools, said once per agent type and session: in the first result of that
    /// type that names it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
}

struct Shared {
    agent_loop: AgentLoop,
    definitions: Vec<AgentDefinition>,
    max_concurrent: usize,
    /// One semaphore per nesting level: a sub-agent waiting for its own sub-agents never
    /// holds a permit they need.
    levels: Mutex<Vec<Arc<Semaphore>>>,
    next_id: AtomicU64,
    /// The notices of a definition's tool choice already given, by agent type
    /// ([`Told`]): each is said once per session, not with every call of that type.
    told: Mutex<HashSet<(String, String)>>,
}

impl Shared {
    /// Of `notices` (the tool choice's, for an agent of type `agent_type`), those not given
    /// yet in this session, now taken as given: kept so only when the call that takes them
    /// returns its result ([`Told::keep`]); a call that fails or is cancelled gives them
    /// back, for the next call of that type to say.
    fn not_told(&self, agent_type: &str, notices: Vec<String>) -> Told<'_> {
        let mut told = self.told.lock().unwrap_or_else(PoisonError::into_inner);
        let fresh: Vec<String> = notices
            .into_iter()
            .filter(|n| told.insert((agent_type.to_owned(), n.clone())))
            .collect();
        Told {
            shared: self,
            agent_type: agent_type.to_owned(),
            notices: fresh,
            kept: false,
        }
    }

    fn level(&self, depth: usize) -> Arc<Semaphore> {
        let mut levels = self.levels.lock().unwrap_or_else(PoisonError::into_inner);
        while levels.len() <= depth {
            // A cap past what a semaphore holds (a huge variable's value) is no cap.
            let permits = self.max_concurrent.clamp(1, Semaphore::MAX_PERMITS);
            levels.push(Arc::new(Semaphore::new(permits)));
        }
        Arc::clone(&levels[depth])
    }
}

/// Notices one call took as its own to give ([`Shared::not_told`]): given back, so that a
/// later call of the type says them, unless the call kept them by returning its result.
struct Told<'a> {
    shared: &'a Shared,
    agent_type: String,
    notices: Vec<String>,
    kept: bool,
}

impl Told<'_> {
    /// The notices, now given for good (the call returns them in its result).
    fn keep(mut self) -> Vec<String> {
        self.kept = true;
        std::mem::take(&mut self.notices)
    }
}

impl Drop for Told<'_> {
    fn drop(&mut self) {
        if self.kept || self.notices.is_empty() {
            return;
        }
        let mut told = self
            .shared
            .told
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        for notice in self.notices.drain(..) {
            told.remove(&(self.agent_type.clone(), notice));
        }
    }
}

/// The Agent tool. See the [module docs](self).
#[derive(Clone)]
pub struct AgentTool {
    shared: Arc<Shared>,
    depth: usize,
    /// The agent types this tool may start (`None`: all): a sub-agent whose definition says
    /// `tools: Agent(worker)` starts workers only.
    allowed: Option<Arc<[String]>>,
    prompt: String,
    /// The lines of `prompt` that list the agent types, by type: what the description is
    /// made of again without the types the permission rules refuse.
    listing: Arc<[(String, String)]>,
}

/// The agent type a call's `subagent_type` asks for: `general-purpose` when it is absent or
/// blank.
fn requested_type(subagent_type: Option<&str>) -> &str {
    subagent_type
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .unwrap_or(GENERAL_PURPOSE)
}

/// How deep sub-agents nest: the main agent is level 0, and an agent at the last level
/// never gets the Agent tool, whatever its definition says (each level can start several,
/// so the cost of deeper trees has no useful bound).
pub const MAX_AGENT_DEPTH: usize = 3;

impl std::fmt::Debug for AgentTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentTool")
            .field("depth", &self.depth)
            .field(
                "types",
                &self
                    .shared
                    .definitions
                    .iter()
                    .map(|d| d.name.as_str())
                    .collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

/// What the Agent tool's description says an agent of `definition` gets, out of `pool` (its
/// caller's tools), at nesting level `depth` (the agent's own): the tools it resolves to, as
/// [`AgentTool::sub_tools`] gives them (a misspelt or miscased name gives nothing,
/// parentheses are not read, `disallowedTools` keeps out even misspelt, the tools no
/// sub-agent gets are left out, the Agent tool only above the last level); `All tools`
/// (`except` what `disallowedTools` keeps out) when `tools` is absent; `None` when nothing is
/// left. Names are shown with any control character escaped.
fn tools_text(definition: &AgentDefinition, pool: &[Arc<dyn Tool>], depth: usize) -> String {
    // In the order `tools` names them: what each entry gives, first entry first (each entry
    // matched once: a long list takes time in proportion to its length).
    let given: Vec<String> = definition
        .in_written_order(definition.select_tools(pool))
        .iter()
        .map(|t| t.name().to_owned())
        .filter(|name| name != "Agent" || depth + 1 < MAX_AGENT_DEPTH)
        .collect();
    let listed = |names: &[&str]| {
        names
            .iter()
            .map(|n| tools_builtin::skill::listing_text(n))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if definition.tools.is_none() {
        // What `disallowedTools` keeps out, not what no sub-agent ever gets.
        let kept_out: Vec<&str> = pool
            .iter()
            .map(|t| t.name())
            .filter(|n| {
                *n != "Agent"
                    && !AGENT_DISALLOWED_TOOLS.contains(n)
                    && !given.iter().any(|g| g == n)
            })
            .collect();
        if kept_out.is_empty() {
            "All tools".to_owned()
        } else {
            format!("All tools except {}", listed(&kept_out))
        }
    } else if given.is_empty() {
        "None".to_owned()
    } else {
        listed(&given.iter().map(String::as_str).collect::<Vec<_>>())
    }
}

/// The Agent tool's description, listing `definitions` with the tools each gets out of
/// `pool` at nesting level `depth` ([`tools_text`]).
#[cfg(test)]
fn build_prompt(definitions: &[AgentDefinition], pool: &[Arc<dyn Tool>], depth: usize) -> String {
    let lines = type_lines(definitions, pool, depth);
    compose_prompt(lines.iter().map(|(_, line)| line.as_str()))
}

/// The line of the Agent tool's description that lists each of `definitions` (with its name):
/// `- name: description (Tools: ...)`, `(no description)` for a definition without one.
fn type_lines(
    definitions: &[AgentDefinition],
    pool: &[Arc<dyn Tool>],
    depth: usize,
) -> Vec<(String, String)> {
    definitions
        .iter()
        .map(|d| {
            let line = format!(
                "- {}: {} (Tools: {})\n",
                d.name,
                if d.description.is_empty() {
                    Cow::Borrowed("(no description)")
                } else {
                    // Cut: the description goes with every request.
                    d.listed_description()
                },
                tools_text(d, pool, depth)
            );
            (d.name.clone(), line)
        })
        .collect()
}

/// The Agent tool's description around the `lines` of the agent types it lists.
fn compose_prompt<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let mut text = String::from(
        "Launch a new agent to handle complex, multi-step tasks autonomously.\n\nThe Agent tool launches a sub-agent that works on its own with its own tools and context, and returns one final report. Available agent types and the tools they have access to:\n",
    );
    text.extend(lines);
    text.push_str("\nWhen using the Agent tool, give subagent_type to pick an agent type (general-purpose when omitted).\n\nUsage notes:\n- Launch several agents at once when their tasks are independent: put several Agent calls in one message.\n- The agent's result is not shown to the user: relay what matters in your own answer.\n- Each agent starts fresh: write a prompt that contains everything it needs, and say exactly what it should report back.\n- Say whether the agent should change code or only research, since it cannot see the user's request.\n- Agents run in the foreground; run_in_background is not supported.");
    text
}

/// The model name of an alias (`sonnet`, `opus`, `haiku`, in any case; `opusplan` is
/// `opus`), `inherit` or `default` (`parent`), or a full model name as given. Claude Code's
/// 1M-context suffix (`sonnet[1m]`) is dropped: the request goes without that beta, in the
/// model's standard window.
pub fn resolve_model(name: &str, parent: &str) -> String {
    let env = |var: &str, default: &str| {
        std::env::var(var)
            .ok()
            .filter(|v| !v.trim().is_empty())
            .unwrap_or_else(|| default.to_owned())
    };
    let name = name.trim();
    let name = match name.len().checked_sub(4) {
        Some(at) if name.is_char_boundary(at) && name[at..].eq_ignore_ascii_case("[1m]") => {
            &name[..at]
        }
        _ => name,
    };
    match name.to_ascii_lowercase().as_str() {
        "" | "inherit" | "default" => parent.to_owned(),
        "sonnet" => env("ANTHROPIC_DEFAULT_SONNET_MODEL", "claude-sonnet-4-5"),
        "opus" | "opusplan" => env("ANTHROPIC_DEFAULT_OPUS_MODEL", "claude-opus-4-5"),
        "haiku" => env("ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-haiku-4-5"),
        "fable" => resolve_fable().unwrap_or_else(|_| name.to_owned()),
        _ => name.to_owned(),
    }
}

/// Whether `name` (a model as a call or a definition gives it) is the `fable` alias.
fn is_fable(name: &str) -> bool {
    name.trim().eq_ignore_ascii_case("fable")
}

/// The model the `fable` alias names: `ANTHROPIC_DEFAULT_FABLE_MODEL` (Claude Code's
/// variable for it). The specification Toolwright follows gives Claude Code's Agent input
/// the alias but no model id for it, so without the variable there is none: `Err` says so,
/// in the words a call that names it is refused with.
pub fn resolve_fable() -> Result<String, String> {
    std::env::var("ANTHROPIC_DEFAULT_FABLE_MODEL")
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            "The model `fable` has no model id here: Toolwright knows no model for Claude Code's `fable` alias unless ANTHROPIC_DEFAULT_FABLE_MODEL names one. No agent was started: call Agent again with model sonnet, opus or haiku, or without model (the agent's definition or your own model then applies).".to_owned()
        })
}

/// The variable that names the model of every sub-agent ([`subagent_model_from_env`]).
const SUBAGENT_MODEL_VAR: &str = "CLAUDE_CODE_SUBAGENT_MODEL";

/// The model every sub-agent runs on when `CLAUDE_CODE_SUBAGENT_MODEL` names one, as
/// written (an alias is resolved as a call's `model` is); `None` when it is unset, empty or
/// blank. Claude Code's `getAgentModel` reads it before the call's `model` and the
/// definition's. Read at each call: a settings `env` that sets it is in the process's
/// environment by then.
pub fn subagent_model_from_env() -> Option<String> {
    std::env::var(SUBAGENT_MODEL_VAR)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// What a call refused for `fable` is told when `CLAUDE_CODE_SUBAGENT_MODEL` named it.
const FORCED_FABLE_REFUSAL: &str = "The model `fable` has no model id here: CLAUDE_CODE_SUBAGENT_MODEL names it for every agent, and Toolwright knows no model for Claude Code's `fable` alias unless ANTHROPIC_DEFAULT_FABLE_MODEL names one. No agent was started, and none can be until one of the two variables is changed: do the task yourself, or tell the user.";

/// The model id of `fable` for a sub-agent ([`resolve_fable`]); `Err` is the refusal,
/// which, when `forced` (`CLAUDE_CODE_SUBAGENT_MODEL` named it, not the call), does not tell
/// the model to call again with another model: that would change nothing. Validation and
/// [`call`](Tool::call) both refuse with it, so a host that does not validate is told the
/// same.
fn fable_model(forced: bool) -> Result<String, String> {
    resolve_fable().map_err(|why| {
        if forced {
            FORCED_FABLE_REFUSAL.to_owned()
        } else {
            why
        }
    })
}

/// The model a sub-agent asks for, as written: `forced` (`CLAUDE_CODE_SUBAGENT_MODEL`), else
/// the call's `model`, else the definition's; `None` when its caller's applies.
fn wanted_model<'a>(
    forced: Option<&'a str>,
    model: Option<AgentModel>,
    definition: &'a AgentDefinition,
) -> Option<&'a str> {
    forced.or(match model {
        Some(model) => Some(model.as_str()),
        None => definition.model.as_deref(),
    })
}

/// The text blocks of a run's final answer: those of its last message with text, when they
/// make its [`final_text`](super::AgentOutcome::final_text) (joined by a blank line); else
/// (an answer pieced together from a cut-off response and its continuation) that text as one
/// block.
fn final_blocks(outcome: &super::AgentOutcome) -> Vec<String> {
    let last = outcome
        .messages
        .iter()
        .rev()
        .filter(|m| m["role"] == "assistant")
        .filter_map(|m| m["content"].as_array())
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .filter(|t| !t.is_empty())
                .collect::<Vec<_>>()
        })
        .find(|texts| !texts.is_empty());
    match last {
        Some(texts) if texts.join(super::TEXT_BLOCK_SEPARATOR) == outcome.final_text => {
            texts.into_iter().map(str::to_owned).collect()
        }
        _ => vec![outcome.final_text.clone()],
    }
}

impl AgentTool {
    /// The tool, running sub-agents with `agent_loop`'s client, pipeline, configuration and
    /// spend tracker, of the types in `definitions` (load them with
    /// [`load_agent_definitions`](super::load_agent_definitions); `general-purpose` is added
    /// when missing). The concurrency cap comes from `CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS`
    /// (default [`DEFAULT_MAX_CONCURRENT`]). Its description lists the tools each type gets
    /// out of the built-in tools; [`with_caller_tools`](Self::with_caller_tools) lists them
    /// out of the caller's own.
    pub fn new(agent_loop: AgentLoop, mut definitions: Vec<AgentDefinition>) -> Self {
        if !definitions.iter().any(|d| d.name == GENERAL_PURPOSE) {
            definitions.push(AgentDefinition::general_purpose());
            definitions.sort_by(|a, b| a.name.cmp(&b.name));
        }
        let (max_concurrent, _warning) = max_concurrent_from_env();
        Self {
            shared: Arc::new(Shared {
                agent_loop,
                definitions,
                max_concurrent,
                levels: Mutex::new(Vec::new()),
                next_id: AtomicU64::new(1),
                told: Mutex::default(),
            }),
            depth: 0,
            allowed: None,
            prompt: String::new(),
            listing: Arc::new([]),
        }
        .with_caller_tools(&tool_registry::all_base_tools())
    }

    /// With a description that lists the tools each agent type gets out of `tools`, the
    /// tools of the context that calls it (this tool counts among them whether or not they
    /// hold it). The agents get their tools out of the caller's context whatever this says:
    /// call it again when those tools change (an MCP server's come or go).
    #[must_use]
    pub fn with_caller_tools(mut self, tools: &[Arc<dyn Tool>]) -> Self {
        let mut pool = tools.to_vec();
        if !pool.iter().any(|t| t.name() == "Agent") {
            pool.push(Arc::new(self.clone()));
        }
        let startable: Vec<AgentDefinition> = self.startable().cloned().collect();
        let lines = type_lines(&startable, &pool, self.depth + 1);
        self.prompt = compose_prompt(lines.iter().map(|(_, line)| line.as_str()));
        self.listing = lines.into();
        self
    }

    /// With another concurrency cap (sub-agents at once per nesting level).
    pub fn with_max_concurrent(self, n: usize) -> Self {
        let shared = Arc::try_unwrap(self.shared).map_or_else(
            |shared| Shared {
                agent_loop: shared.agent_loop.clone(),
                definitions: shared.definitions.clone(),
                max_concurrent: n,
                levels: Mutex::new(Vec::new()),
                next_id: AtomicU64::new(1),
                told: Mutex::default(),
            },
            |mut shared| {
                shared.max_concurrent = n;
                shared
            },
        );
        Self {
            shared: Arc::new(shared),
            ..self
        }
    }

    /// The agent types this tool runs.
    pub fn definitions(&self) -> &[AgentDefinition] {
        &self.shared.definitions
    }

    fn definition(&self, subagent_type: Option<&str>) -> Option<&AgentDefinition> {
        let wanted = requested_type(subagent_type);
        self.startable().find(|d| d.name == wanted)
    }

    /// The definitions this tool may start.
    fn startable(&self) -> impl Iterator<Item = &AgentDefinition> {
        self.shared
            .definitions
            .iter()
            .filter(|d| self.allowed.as_ref().is_none_or(|a| a.contains(&d.name)))
    }

    /// Whether the permission rules of `ctx` refuse agents of `definition`
    /// ([`refused_types`](Self::refused_types)).
    fn refused(&self, definition: &AgentDefinition, ctx: &ToolUseContext) -> bool {
        self.refused_types([definition], ctx)
            .contains(&definition.name)
    }

    /// Those of `definitions` the permission rules of `ctx` refuse, by type: a deny rule that
    /// refuses the Agent call of the type (`Agent(reviewer)`, judged as the call would be,
    /// by the session's permission engine, else by the context's deny rules), or a Read deny
    /// rule that covers the definition's file ([`AgentDefinition::refused_file`]). The Agent
    /// tool's description leaves them out, as Claude Code's `filterDeniedAgents` does.
    fn refused_types<'a>(
        &self,
        definitions: impl IntoIterator<Item = &'a AgentDefinition>,
        ctx: &ToolUseContext,
    ) -> HashSet<String> {
        let Some(engine) = tool_perms::PermissionEngine::for_walking(ctx) else {
            return HashSet::new();
        };
        definitions
            .into_iter()
            .filter(|d| {
                let call = json!({"description": "", "prompt": "", "subagent_type": d.name});
                d.refused_file(ctx).is_some() || engine.rule_denial(self, &call, ctx).is_some()
            })
            .map(|d| d.name.clone())
            .collect()
    }

    /// The tools of a sub-agent of `definition` called from `ctx`: the definition's choice,
    /// with the Agent tool (when allowed, and not at the last level of
    /// [`MAX_AGENT_DEPTH`]) one nesting level deeper, starting only the types the
    /// definition names (`Agent(worker)`); and the notices of the choice
    /// ([`AgentDefinition::select_tools_noting`]).
    fn sub_tools(
        &self,
        definition: &AgentDefinition,
        ctx: &ToolUseContext,
    ) -> (Vec<Arc<dyn Tool>>, Vec<String>) {
        let depth = self.depth + 1;
        let (selected, notices) = definition.select_tools_noting(ctx.tools());
        let selected: Vec<Arc<dyn Tool>> = selected
            .into_iter()
            .filter(|t| t.name() != "Agent" || depth + 1 < MAX_AGENT_DEPTH)
            .collect();
        let tools = selected
            .iter()
            .map(|t| {
                if t.name() == "Agent" {
                    let allowed: Option<Arc<[String]>> =
                        definition.allowed_agent_types().map(Into::into);
                    // Its description lists what its agents get out of this agent's tools.
                    let nested = Self {
                        depth,
                        allowed,
                        ..self.clone()
                    }
                    .with_caller_tools(&selected);
                    Arc::new(nested) as Arc<dyn Tool>
                } else {
                    Arc::clone(t)
                }
            })
            .collect();
        (tools, notices)
    }
}

#[async_trait]
impl TypedTool for AgentTool {
    type Input = AgentInput;
    type Output = AgentOutput;
    const NAME: &'static str = "Agent";
    const ALIASES: &'static [&'static str] = &["Task"];
    // Claude Code's Agent input is a non-strict object: unknown keys are dropped.
    const DENY_UNKNOWN_FIELDS: bool = false;

    fn description(&self) -> Cow<'_, str> {
        "Launch a sub-agent that works on a task with its own tools and returns a report".into()
    }

    /// The description made by [`with_caller_tools`](AgentTool::with_caller_tools), without
    /// the types the permission rules of the loop's last run refuse (a deny rule on the
    /// type's Agent call, a Read deny rule on its definition's file): judged each time, as
    /// the rules may change during a session.
    fn prompt(&self) -> Cow<'_, str> {
        let Some(view) = self.shared.agent_loop.permission_view() else {
            return Cow::Borrowed(&self.prompt);
        };
        // The listing holds the types this tool may start.
        let refused = self.refused_types(self.startable(), &view);
        if refused.is_empty() {
            return Cow::Borrowed(&self.prompt);
        }
        Cow::Owned(compose_prompt(
            self.listing
                .iter()
                .filter(|(name, _)| !refused.contains(name))
                .map(|(_, line)| line.as_str()),
        ))
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    fn interrupt_behavior(&self) -> InterruptBehavior {
        // A user interrupt stops the sub-agent (and, through its token, its tools).
        InterruptBehavior::Cancel
    }

    fn is_concurrency_safe(&self, _input: &AgentInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &AgentInput) -> bool {
        true
    }

    fn permission_subject(&self, input: &AgentInput) -> Option<PermissionSubject> {
        Some(PermissionSubject::Name(
            requested_type(input.subagent_type.as_deref()).to_owned(),
        ))
    }

    async fn validate_input(
        &self,
        input: &AgentInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        if input.run_in_background == Some(true) {
            return Err(ValidationError::new(
                "run_in_background is not supported: Toolwright runs agents in the foreground only. Call Agent again without run_in_background.",
            ));
        }
        let Some(definition) = self.definition(input.subagent_type.as_deref()) else {
            let names: Vec<&str> = self
                .startable()
                .filter(|d| !self.refused(d, ctx))
                .map(|d| d.name.as_str())
                .collect();
            return Err(ValidationError::new(format!(
                "Agent type '{}' not found. Available agents: {}",
                requested_type(input.subagent_type.as_deref()),
                names.join(", ")
            )));
        };
        // Its body would go to the model without a Read permission: as the Skill tool
        // refuses a skill whose file a Read deny rule covers.
        if let Some(rule) = definition.refused_file(ctx) {
            return Err(ValidationError::new(format!(
                "Agent type '{}' cannot be started: its definition file {} is covered by the deny rule {}",
                definition.name,
                definition
                    .path
                    .as_deref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
                rule.rule
            )));
        }
        // Its hooks would guard its calls, and they are not applied: not run unguarded.
        if let Some(why) = definition.unguarded_refusal() {
            return Err(ValidationError::new(why));
        }
        let forced = subagent_model_from_env();
        if wanted_model(forced.as_deref(), input.model, definition).is_some_and(is_fable)
            && let Err(why) = fable_model(forced.is_some())
        {
            return Err(ValidationError::new(why));
        }
        if input.prompt.trim().is_empty() {
            return Err(ValidationError::new(
                "The prompt is empty: say what the agent should do.",
            ));
        }
        Ok(())
    }

    async fn check_permissions(
        &self,
        _input: &AgentInput,
        _ctx: &ToolUseContext,
    ) -> PermissionResult {
        // Deny and ask rules `Agent(type)` still apply (they are checked on the subject);
        // the sub-agent's own calls are checked one by one.
        PermissionResult::allow()
    }

    async fn call(
        &self,
        input: AgentInput,
        ctx: ToolUseContext,
        progress: ProgressSender,
    ) -> Result<ToolResult<AgentOutput>, ToolError> {
        let definition = self
            .definition(input.subagent_type.as_deref())
            .ok_or_else(|| ToolError::Message("unknown agent type".into()))?
            .clone();
        // As validation refuses it, for a host that calls the tool without validating.
        if let Some(why) = definition.unguarded_refusal() {
            return Err(ToolError::Message(why));
        }
        let permit = {
            let level = self.shared.level(self.depth);
            tokio::select! {
                biased;
                () = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled(None)),
                permit = level.acquire_owned() => permit
                    .map_err(|e| ToolError::Harness(format!("the sub-agent limit is gone: {e}")))?,
            }
        };
        let started = Instant::now();
        let parent = &self.shared.agent_loop;
        let parent_model = if ctx.options().model.is_empty() {
            parent.config().model.clone()
        } else {
            ctx.options().model.clone()
        };
        let forced = subagent_model_from_env();
        let model = match wanted_model(forced.as_deref(), input.model, &definition) {
            Some(m) if is_fable(m) => fable_model(forced.is_some()).map_err(ToolError::Message)?,
            Some(m) => resolve_model(m, &parent_model),
            None => parent_model,
        };
        let n = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let agent_id = format!("a{:x}{n:04x}", std::process::id());
        let mut options = ctx.options().clone();
        options.model.clone_from(&model);
        // What of its `tools` and `disallowedTools` names none of the caller's tools is said
        // in the result, as what of its permission mode is not applied: once per agent type
        // and session (the first call that returns a result), not with every call.
        let (tools, choice_notices) = self.sub_tools(&definition, &ctx);
        let told = self.shared.not_told(&definition.name, choice_notices);
        for notice in &told.notices {
            tracing::warn!(agent_type = %definition.name, "{notice}");
        }
        let mut notices = Vec::new();
        // The definition's permission mode, when it only restricts; the caller's otherwise.
        let permission = definition
            .permission_for(ctx.permission())
            .unwrap_or_else(|why| {
                tracing::warn!(agent_type = %definition.name, "{why}");
                notices.push(why);
                ctx.permission().clone()
            });
        let sub_ctx = ctx
            .child()
            .with_permission(permission)
            .with_options(options)
            .with_tools(tools)
            .with_file_state(FileStateCache::default())
            .with_messages(Vec::new())
            .with_agent(AgentInfo {
                id: agent_id.clone(),
                agent_type: definition.name.clone(),
            });
        let mut system = definition.prompt.clone();
        system.push_str(&format!(
            "\n\nWorking directory: {}\nYour agent id: {agent_id}",
            ctx.cwd().display()
        ));
        let config = LoopConfig {
            model: model.clone(),
            system_prompt: Some(system),
            max_turns: definition.max_turns.unwrap_or(parent.config().max_turns),
            ..parent.config().clone()
        };
        let sub_loop = parent.clone().with_config(config);
        let never = CancellationToken::new();
        let id_for_progress = agent_id.clone();
        // Each call's start, naming the agent and the call (a permission question about the
        // call waits for it); a nested agent's, passed on as it came. What the sub-agent has
        // for the user (a hook's system message, the SubagentStop cap) goes up as an
        // `agent_notice`, which the caller's loop gives its host as a notice.
        let mut on_event = move |event: AgentEvent<'_>| match event {
            AgentEvent::ToolStarted { tool_use, .. } => progress.send(json!({
                "type": "agent_progress",
                "agentId": id_for_progress,
                "toolUseId": tool_use.id,
                "tool": tool_use.describe(),
            })),
            AgentEvent::ToolProgress(_, data) if data["type"] == "agent_progress" => {
                progress.send(data.clone());
            }
            AgentEvent::Notice(text) => progress.send(json!({
                "type": super::AGENT_NOTICE,
                "agentId": id_for_progress,
                "text": text,
            })),
            _ => {}
        };
        let outcome = sub_loop
            .run(sub_ctx, &input.prompt, &never, &mut on_event)
            .await;
        drop(permit);
        let stopped = match &outcome.stop {
            Stop::Finished | Stop::HookStopped(_) => None,
            Stop::Rejected => {
                // A foreground sub-agent shares its caller's turn: the user's rejection
                // (without feedback) of one of its calls stops the caller's turn as well.
                if let Some(id) = ctx.tool_use_id() {
                    parent.reject_turn_of(id);
                }
                return Err(ToolError::Cancelled(None));
            }
            Stop::Cancelled | Stop::Interrupted => {
                return Err(ToolError::Cancelled(None));
            }
            Stop::Failed(e) => {
                return Err(ToolError::Message(format!(
                    "The {} agent failed: {e}",
                    definition.name
                )));
            }
            other @ (Stop::MaxTurns(_)
            | Stop::Budget(_)
            | Stop::PromptBlocked(_)
            | Stop::Refused
            | Stop::Incomplete(_)) => Some(other.to_string()),
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        // The tool choice's notices first, as they were computed first.
        let mut notices_given = told.keep();
        notices_given.append(&mut notices);
        let notices = notices_given;
        Ok(ToolResult::new(AgentOutput {
            status: if stopped.is_some() {
                "stopped"
            } else {
                "completed"
            }
            .to_owned(),
            agent_id,
            agent_type: definition.name,
            content: final_blocks(&outcome)
                .into_iter()
                .map(|text| AgentText {
                    kind: "text".to_owned(),
                    text,
                })
                .collect(),
            resolved_model: model,
            total_tokens: outcome.usage.all_input() + outcome.usage.output_tokens,
            total_duration_ms: duration_ms,
            total_tool_use_count: outcome.tool_uses,
            usage: AgentUsage {
                input_tokens: outcome.usage.input_tokens,
                output_tokens: outcome.usage.output_tokens,
                cache_creation_input_tokens: outcome.usage.cache_creation_input_tokens,
                cache_read_input_tokens: outcome.usage.cache_read_input_tokens,
            },
            stopped,
            notices,
        }))
    }

    /// The agent's final text: one text block per block of its answer, as Claude Code
    /// returns them (one block is plain text); what it did not finish or what of its
    /// definition was not applied follows the last one.
    fn to_content(&self, output: &AgentOutput) -> ToolResultContent {
        let mut blocks: Vec<String> = output
            .content
            .iter()
            .map(|c| c.text.clone())
            .filter(|t| !t.trim().is_empty())
            .collect();
        if blocks.is_empty() {
            blocks.push("(the agent finished without a final answer)".to_owned());
        }
        let mut notes = String::new();
        if let Some(why) = &output.stopped {
            notes.push_str(&format!("\n\n(the agent did not finish: {why})"));
        }
        for notice in &output.notices {
            notes.push_str(&format!("\n\n(the agent's definition: {notice})"));
        }
        if let Some(last) = blocks.last_mut() {
            last.push_str(&notes);
        }
        if blocks.len() == 1 {
            return ToolResultContent::Text(blocks.remove(0));
        }
        ToolResultContent::Blocks(
            blocks
                .into_iter()
                .map(|text| ContentBlock::Text { text })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    use futures::StreamExt as _;
    use tool_exec::{Pipeline, StreamEvent};

    use crate::agent::{AgentError, EventStream, ModelClient, ModelRequest};

    /// A model that answers at once, counting how many requests are in flight together.
    #[derive(Default)]
    struct Counting {
        active: AtomicUsize,
        most: AtomicUsize,
    }

    #[async_trait]
    impl ModelClient for Counting {
        async fn stream(&self, _request: &ModelRequest) -> Result<EventStream, AgentError> {
            let now = self.active.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            for _ in 0..20 {
                tokio::task::yield_now().await;
            }
            self.active.fetch_sub(1, Ordering::SeqCst);
            let events = vec![
                Ok(StreamEvent::Text("done".into())),
                Ok(StreamEvent::MessageStop),
            ];
            Ok(futures::stream::iter(events).boxed())
        }
    }

    async fn most_at_once(cap: usize) -> usize {
        let client = Arc::new(Counting::default());
        let agent_loop = AgentLoop::new(
            Arc::clone(&client) as Arc<dyn ModelClient>,
            Arc::new(Pipeline::allow_all()),
            LoopConfig::new("m"),
        );
        let tool = AgentTool::new(agent_loop, Vec::new()).with_max_concurrent(cap);
        let ctx = ToolUseContext::new("/");
        let call = |prompt: &str| {
            Tool::call(
                &tool,
                json!({"description": "d", "prompt": prompt}),
                ctx.clone(),
                ProgressSender::none(),
            )
        };
        let (a, b, c) = tokio::join!(call("a"), call("b"), call("c"));
        for result in [a, b, c] {
            let text = result.unwrap().data.content;
            assert_eq!(text, ToolResultContent::Text("done".into()));
        }
        client.most.load(Ordering::SeqCst)
    }

    #[tokio::test]
    async fn the_cap_limits_sub_agents_at_once() {
        assert_eq!(most_at_once(1).await, 1);
        assert_eq!(most_at_once(2).await, 2);
        assert_eq!(most_at_once(4).await, 3);
    }

    /// A definition naming `Agent(worker)` gives its agents an Agent tool that starts
    /// workers only; and past the last level no agent gets the Agent tool at all.
    #[tokio::test]
    async fn nested_agent_tools_start_only_the_named_types_and_stop_nesting() {
        let agent_loop = AgentLoop::new(
            Arc::new(Counting::default()) as Arc<dyn ModelClient>,
            Arc::new(Pipeline::allow_all()),
            LoopConfig::new("m"),
        );
        let named = |name: &str, tools: &[&str]| {
            let mut d = AgentDefinition::general_purpose();
            d.name = name.into();
            d.tools = Some(tools.iter().map(|t| (*t).to_owned()).collect());
            d
        };
        let lead = named("lead", &["Read", "Agent(worker)"]);
        let worker = named("worker", &["Read"]);
        let anyone = named("anyone", &["Read", "Agent"]);
        let tool = AgentTool::new(agent_loop, vec![lead.clone(), worker, anyone.clone()]);
        let mut top = tool_registry::all_base_tools();
        top.push(Arc::new(tool.clone()));
        let ctx = ToolUseContext::new("/").with_tools(top);
        let nested_agent =
            |tools: Vec<Arc<dyn Tool>>| tools.into_iter().find(|t| t.name() == "Agent");
        // The lead's agents start workers, nothing else.
        let nested = nested_agent(tool.sub_tools(&lead, &ctx).0).expect("lead gets Agent");
        let check = |t: &Arc<dyn Tool>, kind: &str| {
            let t = Arc::clone(t);
            let ctx = ctx.clone();
            let kind = kind.to_owned();
            async move {
                let input = t
                    .parse_input(json!({"description": "d", "prompt": "p", "subagent_type": kind}))
                    .unwrap();
                t.validate_input(&input, &ctx).await.map_err(|e| e.message)
            }
        };
        assert!(check(&nested, "worker").await.is_ok());
        let err = check(&nested, "general-purpose").await.unwrap_err();
        assert!(err.contains("Available agents: worker"), "{err}");
        assert!(!nested.prompt().contains("- general-purpose"));
        // Nesting ends at the last level.
        let level_one = AgentTool {
            depth: MAX_AGENT_DEPTH - 2,
            ..tool.clone()
        };
        assert!(nested_agent(level_one.sub_tools(&anyone, &ctx).0).is_none());
        let anyones = nested_agent(tool.sub_tools(&anyone, &ctx).0).expect("anyone gets Agent");
        // The descriptions say so: the main agent's sub-agents of type `anyone` get Agent,
        // theirs do not.
        let line = |t: &dyn Tool, kind: &str| {
            t.prompt()
                .lines()
                .find(|l| l.starts_with(&format!("- {kind}:")))
                .map(str::to_owned)
                .unwrap_or_default()
        };
        assert!(
            line(&tool, "anyone").ends_with("(Tools: Read, Agent)"),
            "{}",
            line(&tool, "anyone")
        );
        assert!(
            line(anyones.as_ref(), "anyone").ends_with("(Tools: Read)"),
            "{}",
            line(anyones.as_ref(), "anyone")
        );
    }

    /// A tool whose every call needs the user's permission.
    struct Touchy;

    #[async_trait]
    impl Tool for Touchy {
        fn name(&self) -> &str {
            "Touchy"
        }
        fn input_schema(&self) -> serde_json::Value {
            json!({"type": "object"})
        }
        fn description(&self) -> Cow<'_, str> {
            "needs permission".into()
        }
        fn max_result_size(&self) -> MaxResultSize {
            MaxResultSize::Chars(100)
        }
        async fn call(
            &self,
            _input: serde_json::Value,
            _ctx: ToolUseContext,
            _progress: ProgressSender,
        ) -> Result<ToolResult, ToolError> {
            Ok(ToolResult::text("touched"))
        }
    }

    /// Asks the user about Touchy, allows everything else.
    struct AskForTouchy;

    #[async_trait]
    impl tool_exec::Permissions for AskForTouchy {
        async fn decide(
            &self,
            tool: &dyn Tool,
            _input: &serde_json::Value,
            _ctx: &ToolUseContext,
        ) -> PermissionResult {
            if tool.name() == "Touchy" {
                PermissionResult::ask("Touch?")
            } else {
                PermissionResult::allow()
            }
        }
        async fn check_rule_based(
            &self,
            _tool: &dyn Tool,
            _input: &serde_json::Value,
            _ctx: &ToolUseContext,
        ) -> Option<PermissionResult> {
            None
        }
    }

    /// A user who says no, and nothing more.
    struct SaysNo;

    #[async_trait]
    impl tool_exec::Prompter for SaysNo {
        async fn prompt(&self, _request: &tool_exec::PromptRequest) -> tool_exec::PromptAnswer {
            tool_exec::PromptAnswer::Deny { feedback: None }
        }
    }

    /// The main agent starts a sub-agent, whose first answer calls Touchy; every later
    /// answer is text. Counts the main agent's requests.
    #[derive(Default)]
    struct Delegating {
        main_requests: AtomicUsize,
        /// The sub-agent's call has its caller's id (ids are the model's: a proxy or a
        /// mock may repeat them).
        same_ids: bool,
    }

    #[async_trait]
    impl ModelClient for Delegating {
        async fn stream(&self, request: &ModelRequest) -> Result<EventStream, AgentError> {
            let sub = request
                .system
                .as_deref()
                .is_some_and(|s| s.contains("Your agent id"));
            if !sub {
                self.main_requests.fetch_add(1, Ordering::SeqCst);
            }
            let call = match (sub, request.messages.len()) {
                (false, 1) => Some(tool_exec::ToolUse::new(
                    "toolu_agent",
                    "Agent",
                    json!({"description": "d", "prompt": "touch it"}),
                )),
                (true, 1) => Some(tool_exec::ToolUse::new(
                    if self.same_ids {
                        "toolu_agent"
                    } else {
                        "toolu_touchy"
                    },
                    "Touchy",
                    json!({}),
                )),
                _ => None,
            };
            let events = match call {
                Some(call) => vec![Ok(StreamEvent::ToolUse(call)), Ok(StreamEvent::MessageStop)],
                None => vec![
                    Ok(StreamEvent::Text("went on".into())),
                    Ok(StreamEvent::MessageStop),
                ],
            };
            Ok(futures::stream::iter(events).boxed())
        }
    }

    /// A foreground sub-agent shares its parent's turn: the user rejecting one of its calls
    /// (without saying how to go on) ends the parent's turn too, as a rejection of the
    /// parent's own call does.
    #[tokio::test]
    async fn a_rejection_in_a_sub_agent_ends_the_parents_turn() {
        for same_ids in [false, true] {
            a_rejection_in_a_sub_agent_ends_the_parents_turn_with(same_ids).await;
        }
    }

    async fn a_rejection_in_a_sub_agent_ends_the_parents_turn_with(same_ids: bool) {
        let client = Arc::new(Delegating {
            same_ids,
            ..Delegating::default()
        });
        let pipeline = Pipeline::new(
            Arc::new(AskForTouchy),
            Arc::new(SaysNo),
            Arc::new(tool_exec::NoHooks),
        );
        let agent_loop = AgentLoop::new(
            Arc::clone(&client) as Arc<dyn ModelClient>,
            Arc::new(pipeline),
            LoopConfig::new("m"),
        );
        let agent_tool = AgentTool::new(agent_loop.clone(), Vec::new());
        let ctx = ToolUseContext::new("/").with_tools(vec![
            Arc::new(agent_tool) as Arc<dyn Tool>,
            Arc::new(Touchy) as Arc<dyn Tool>,
        ]);
        let outcome = agent_loop
            .run(ctx, "go", &CancellationToken::new(), &mut |_| {})
            .await;
        assert!(matches!(outcome.stop, Stop::Rejected), "{}", outcome.stop);
        assert_eq!(client.main_requests.load(Ordering::SeqCst), 1);
        // The Agent call still has its result, the rejection text.
        assert_eq!(outcome.messages.len(), 3, "{:?}", outcome.messages);
        let result = &outcome.messages[2]["content"][0];
        assert_eq!(result["tool_use_id"], "toolu_agent");
        assert_eq!(result["is_error"], true);
        assert_eq!(result["content"], tool_exec::REJECT_MESSAGE);
    }

    /// A model that calls Touchy, then never ends its response.
    struct Stalling;

    #[async_trait]
    impl ModelClient for Stalling {
        async fn stream(&self, _request: &ModelRequest) -> Result<EventStream, AgentError> {
            let call = tool_exec::ToolUse::new("toolu_touchy", "Touchy", json!({}));
            Ok(futures::stream::iter([Ok(StreamEvent::ToolUse(call))])
                .chain(futures::stream::pending())
                .boxed())
        }
    }

    /// The user's "no" ends the turn at once: the rest of the response is not waited for
    /// (Claude Code aborts the request), and the results are followed by the interruption
    /// text.
    #[tokio::test]
    async fn a_rejection_stops_reading_the_response() {
        let pipeline = Pipeline::new(
            Arc::new(AskForTouchy),
            Arc::new(SaysNo),
            Arc::new(tool_exec::NoHooks),
        );
        let agent_loop = AgentLoop::new(
            Arc::new(Stalling) as Arc<dyn ModelClient>,
            Arc::new(pipeline),
            LoopConfig::new("m"),
        );
        let ctx = ToolUseContext::new("/").with_tools(vec![Arc::new(Touchy) as Arc<dyn Tool>]);
        let outcome = tokio::time::timeout(
            std::time::Duration::from_secs(30),
            agent_loop.run(ctx, "go", &CancellationToken::new(), &mut |_| {}),
        )
        .await
        .expect("the run ends without the rest of the response");
        assert!(matches!(outcome.stop, Stop::Rejected), "{}", outcome.stop);
        let content = outcome.messages[2]["content"].as_array().unwrap();
        assert_eq!(content[0]["content"], tool_exec::REJECT_MESSAGE);
        assert_eq!(
            content[1],
            json!({"type": "text", "text": tool_core::INTERRUPT_MESSAGE_FOR_TOOL_USE})
        );
    }

    /// The schema's names are the names the input is read with, every one of them.
    #[test]
    fn the_model_schema_names_every_model_the_input_takes() {
        let schema = schemars::SchemaGenerator::default().into_root_schema_for::<AgentModel>();
        let names = schema.as_value()["enum"].as_array().unwrap().clone();
        // `as_str` matches every variant (a new one does not compile without its name), and
        // serde reads each name as its variant: every model of `ALL` is in the schema, read
        // as what it names.
        assert_eq!(names.len(), AgentModel::ALL.len());
        for (model, name) in AgentModel::ALL.into_iter().zip(&names) {
            assert_eq!(name, model.as_str());
            let read: AgentModel = serde_json::from_value(json!(model.as_str())).unwrap();
            assert_eq!(read, model);
        }
        // And `ALL` holds every variant serde reads: its refusal of an unknown name lists
        // them all (`expected one of `sonnet`, ...`).
        let refusal = serde_json::from_value::<AgentModel>(json!("none-such"))
            .unwrap_err()
            .to_string();
        let expected = refusal.split_once("expected one of ").unwrap().1;
        let accepted: Vec<&str> = expected.split(", ").map(|n| n.trim_matches('`')).collect();
        assert_eq!(
            accepted,
            AgentModel::ALL.map(AgentModel::as_str),
            "{refusal}"
        );
    }

    #[test]
    fn aliases_resolve_and_inherit() {
        assert_eq!(resolve_model("inherit", "parent-model"), "parent-model");
        assert_eq!(resolve_model("", "parent-model"), "parent-model");
        assert_eq!(resolve_model("claude-x", "p"), "claude-x");
    }

    #[test]
    fn the_prompt_lists_the_types_and_their_tools() {
        let mut reviewer = AgentDefinition::general_purpose();
        reviewer.name = "reviewer".into();
        reviewer.description = "Reviews".into();
        reviewer.tools = Some(vec!["Read".into(), "Grep".into()]);
        reviewer.disallowed_tools = vec!["Bash".into()];
        let pool = tool_registry::all_base_tools();
        let text = build_prompt(&[AgentDefinition::general_purpose(), reviewer], &pool, 1);
        assert!(
            text.contains("- general-purpose: General-purpose agent"),
            "{text}"
        );
        assert!(text.contains("(Tools: All tools)\n"), "{text}");
        assert!(
            text.contains("- reviewer: Reviews (Tools: Read, Grep)"),
            "{text}"
        );
    }

    /// Answers with text, a call of a tool no one has, then more text, every time.
    struct TextAroundACall;

    #[async_trait]
    impl ModelClient for TextAroundACall {
        async fn stream(&self, _request: &ModelRequest) -> Result<EventStream, AgentError> {
            let events = vec![
                Ok(StreamEvent::Text("See src/a.rs".into())),
                Ok(StreamEvent::ToolUse(tool_exec::ToolUse::new(
                    "t1",
                    "Nope",
                    json!({}),
                ))),
                Ok(StreamEvent::Text("Next step: fix it.".into())),
                Ok(StreamEvent::MessageStop),
            ];
            Ok(futures::stream::iter(events).boxed())
        }
    }

    /// Found by review: a sub-agent's final answer of several text blocks reached its caller
    /// joined with no separator (`See src/a.rsNext step: fix it.`). The result keeps them
    /// apart, a text block each, as Claude Code's does; what the agent did not finish
    /// follows the last one.
    #[tokio::test]
    async fn a_final_answer_of_several_text_blocks_is_returned_as_several_blocks() {
        let agent_loop = AgentLoop::new(
            Arc::new(TextAroundACall) as Arc<dyn ModelClient>,
            Arc::new(Pipeline::allow_all()),
            LoopConfig::new("m"),
        );
        let mut short = AgentDefinition::general_purpose();
        short.name = "short".into();
        short.max_turns = Some(1);
        let tool = AgentTool::new(agent_loop, vec![short]);
        let result = Tool::call(
            &tool,
            json!({"description": "d", "prompt": "p", "subagent_type": "short"}),
            ToolUseContext::new("/"),
            ProgressSender::none(),
        )
        .await
        .unwrap();
        let ToolResultContent::Blocks(blocks) = &result.data.content else {
            panic!("{:?}", result.data.content);
        };
        let texts: Vec<&str> = blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text } => text.as_str(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert_eq!(texts[0], "See src/a.rs");
        assert!(
            texts[1].starts_with("Next step: fix it.\n\n(the agent did not finish: "),
            "{texts:?}"
        );
    }

    /// `CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS`: a positive whole number is the cap, unset or
    /// empty the default; anything else the default, said as the tool-use concurrency
    /// variable's is.
    #[test]
    fn the_concurrent_subagents_variable_is_read_and_bad_values_said() {
        assert_eq!(max_concurrent_from(None), (DEFAULT_MAX_CONCURRENT, None));
        assert_eq!(
            max_concurrent_from(Some(" ")),
            (DEFAULT_MAX_CONCURRENT, None)
        );
        assert_eq!(max_concurrent_from(Some(" 2 ")), (2, None));
        assert_eq!(
            max_concurrent_from(Some("99999999999999999999999")),
            (usize::MAX, None)
        );
        for bad in ["0", "abc", "-3", "1.5"] {
            assert_eq!(
                max_concurrent_from(Some(bad)),
                (
                    DEFAULT_MAX_CONCURRENT,
                    Some(format!(
                        "CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS={bad:?} is not a positive whole number of sub-agents; the default, 4, is used"
                    ))
                )
            );
        }
    }
}
