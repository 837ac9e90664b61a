//! A small, real agent loop on the Anthropic Messages API, and the Agent (sub-agent) tool.
//!
//! [`AgentLoop::run`] sends the conversation to a [`ModelClient`] (normally an
//! [`AnthropicClient`]) and streams the answer. Every tool_use block goes to a
//! [`StreamingToolExecutor`] the moment its `content_block_stop` is read, so tools run while
//! the model is still writing; the next request carries exactly one tool_result per tool_use,
//! in order. The loop ends when the model stops asking for tools, after `max_turns`
//! requests, when the spending limit (`maxBudgetUsd`, the context's
//! [`ToolOptions::max_budget_usd`](tool_core::ToolOptions)) is reached, on a user interrupt,
//! or on an error (an `error` event or a stream cut short ends the turn with a clear message,
//! and tools already started still get their results). An answer cut off by `max_tokens` is
//! followed by a request to go on ([`MAX_CUT_OFF_RECOVERIES`] times in a row at most), and a
//! paused one (`stop_reason: "pause_turn"`) is resumed: the next request carries the
//! conversation with the paused message last.
//!
//! Deferred tools are handled as ToolSearch expects ([`tool_search`]); the Agent tool
//! ([`AgentTool`]) runs sub-agents with this same loop; [`prompting`] has the prompters of
//! the `toolwright agent` command. See `docs/agent.md` for a guide and an embedding example.

pub mod client;
pub mod definitions;
pub mod prompting;
pub mod subagent;
pub mod tool_search;
pub mod transcript;
pub mod web_fetch;
pub mod web_search;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{Value, json};
use tool_core::{CancellationToken, INTERRUPT_MESSAGE_FOR_TOOL_USE, Message, ToolUseContext};
use tool_exec::{
    CallOutcome, Ending, ExecutorConfig, ExecutorEvent, LoopEvent, LoopEventOutcome, Pipeline,
    StreamEvent, StreamingToolExecutor, ToolUse,
};

pub use client::{
    ANTHROPIC_VERSION, AgentError, AnthropicClient, ClientConfig, EventStream, ModelClient,
    ModelRequest, TOOL_SEARCH_BETA,
};
pub use definitions::{AgentDefinition, AgentSource, GENERAL_PURPOSE, load_agent_definitions};
pub use subagent::AgentTool;
pub use tool_search::ToolSearchMode;
use tool_search::ToolsForRequest;

/// The guide `docs/agent.md`, whose Rust examples run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../docs/agent.md")]
pub struct AgentGuide;

/// The text the model sees when the user interrupts it before any tool ran.
pub const INTERRUPT_MESSAGE: &str = "[Request interrupted by user]";

/// What joins the text blocks of one answer in [`AgentOutcome::final_text`]: a blank line
/// (the model wrote them as separate blocks).
pub const TEXT_BLOCK_SEPARATOR: &str = "\n\n";

/// The `type` of the progress a sub-agent's Agent call sends for a notice of the sub-agent's
/// (`{"type": "agent_notice", "agentId", "text"}`): the caller's loop gives its text to its
/// host as an [`AgentEvent::Notice`].
pub(crate) const AGENT_NOTICE: &str = "agent_notice";

/// How the loop talks to the model.
#[derive(Debug, Clone)]
pub struct LoopConfig {
    /// The model name.
    pub model: String,
    /// `max_tokens` of each request.
    pub max_tokens: u32,
    /// How many requests at most.
    pub max_turns: usize,
    /// The system prompt, if any.
    pub system_prompt: Option<String>,
    /// Whether deferred tools are withheld until ToolSearch loads them.
    pub tool_search: ToolSearchMode,
    /// The executor's settings (concurrency cap, sibling policy).
    pub executor: ExecutorConfig,
    /// How many times in a row Stop (or SubagentStop) hooks may block the end of a run
    /// before the run ends anyway, with a notice; `None`: no limit.
    pub stop_hook_block_cap: Option<usize>,
    /// Where the main conversation is written as it goes (the `transcript_path` hooks are
    /// given; see [`transcript`]); `None`: nowhere. A sub-agent writes its own next to it
    /// ([`tool_hooks::agent_transcript_path`]).
    pub transcript: Option<std::path::PathBuf>,
}

/// How many Stop-hook blocks in a row a run allows: `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`, else 8
/// (Claude Code's cap).
fn stop_hook_block_cap_from_env() -> Option<usize> {
    stop_hook_block_cap(
        std::env::var("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")
            .ok()
            .as_deref(),
    )
}

/// The Stop-hook block cap a value of `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` gives, as Claude Code
/// reads it: a whole number above zero is the cap, zero or a negative number turns the cap
/// off (`None`); unset or not a number, 8.
fn stop_hook_block_cap(value: Option<&str>) -> Option<usize> {
    match value.map(|v| v.trim().parse::<i64>()) {
        Some(Ok(n)) if n <= 0 => None,
        Some(Ok(n)) => Some(usize::try_from(n).unwrap_or(usize::MAX)),
        None | Some(Err(_)) => Some(8),
    }
}

impl LoopConfig {
    /// Defaults for `model`: 8,192 output tokens per request, 20 requests, no system
    /// prompt, tool search off, the executor's settings and the Stop-hook block cap
    /// (`CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`, default 8) from the environment.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            max_tokens: 8192,
            max_turns: 20,
            system_prompt: None,
            tool_search: ToolSearchMode::Off,
            executor: ExecutorConfig::from_env(),
            stop_hook_block_cap: stop_hook_block_cap_from_env(),
            transcript: None,
        }
    }
}

/// How many times in a row an answer cut off by `max_tokens` is followed by a request to
/// go on (Claude Code's `MAX_OUTPUT_TOKENS_RECOVERY_LIMIT`).
pub const MAX_CUT_OFF_RECOVERIES: usize = 3;

/// What the model is told after an answer cut off by `max_tokens` (Claude Code's words).
pub const CUT_OFF_RECOVERY: &str = "Output token limit hit. Resume directly \u{2014} no apology, no recap of what you were doing. Pick up mid-thought if that is where the cut happened. Break remaining work into smaller pieces.";

/// List prices in US dollars per million input and output tokens, by model (an estimate for
/// the spending limit): Opus 4.5 and later $5/$25, earlier Opus (4, 4.1, 3) $15/$75, Haiku
/// 4.5 $1/$5, Haiku 3.5 $0.80/$4, Haiku 3 $0.25/$1.25, anything else Sonnet's $3/$15.
pub fn price_per_million(model: &str) -> (f64, f64) {
    let model = model.to_ascii_lowercase();
    // The character after `family-4`: none or `-` then a date or a minor version.
    let minor_after = |family: &str| {
        model.split_once(family).map(|(_, rest)| {
            rest.strip_prefix('-')
                .and_then(|r| r.chars().next())
                .filter(char::is_ascii_digit)
        })
    };
    if model.contains("opus") {
        let early = model.contains("3-opus")
            // opus-4, opus-4-0, opus-4-1 and dated opus-4-2025...: the first prices.
            || matches!(minor_after("opus-4"), Some(None | Some('0' | '1' | '2')));
        if early { (15.0, 75.0) } else { (5.0, 25.0) }
    } else if model.contains("haiku") {
        if model.contains("3-5-haiku") {
            (0.8, 4.0)
        } else if model.contains("3-haiku") {
            (0.25, 1.25)
        } else {
            (1.0, 5.0)
        }
    } else {
        (3.0, 15.0)
    }
}

/// What the API bills for one search of its `web_search` server tool, in US dollars (10
/// dollars per 1,000 searches, as Claude Code counts it), on top of the tokens.
pub const WEB_SEARCH_USD: f64 = 0.01;

/// Tokens of one or more responses, as the API counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenUsage {
    /// Input tokens neither read from nor written to the prompt cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens written to the prompt cache (1.25 times the input price).
    pub cache_creation_input_tokens: u64,
    /// Input tokens read from the prompt cache (a tenth of the input price).
    pub cache_read_input_tokens: u64,
}

impl TokenUsage {
    /// Every input token: uncached, written to the cache and read from it.
    pub fn all_input(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }

    /// A response's usage as a [`StreamEvent::Usage`] reports it: the response's so far (each
    /// such event replaces the one before; its fields are the final values once the stream
    /// ends), `None` for any other event.
    pub fn reported(event: &StreamEvent) -> Option<Self> {
        match *event {
            StreamEvent::Usage {
                input_tokens,
                output_tokens,
                cache_creation_input_tokens,
                cache_read_input_tokens,
            } => Some(Self {
                input_tokens,
                output_tokens,
                cache_creation_input_tokens,
                cache_read_input_tokens,
            }),
            _ => None,
        }
    }

    /// Adds `other`'s tokens.
    pub fn add(&mut self, other: &TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
    }

    /// Takes `other`'s tokens away (each count stops at zero).
    fn remove(&mut self, other: &TokenUsage) {
        self.input_tokens = self.input_tokens.saturating_sub(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_sub(other.output_tokens);
        self.cache_creation_input_tokens = self
            .cache_creation_input_tokens
            .saturating_sub(other.cache_creation_input_tokens);
        self.cache_read_input_tokens = self
            .cache_read_input_tokens
            .saturating_sub(other.cache_read_input_tokens);
    }

    /// The estimated cost in US dollars at `model`'s list prices ([`price_per_million`]),
    /// cache writes at 1.25 times and cache reads at a tenth of the input price.
    #[expect(clippy::cast_precision_loss, reason = "an estimate")]
    pub fn usd(&self, model: &str) -> f64 {
        let (input, output) = price_per_million(model);
        (self.input_tokens as f64 * input
            + self.cache_creation_input_tokens as f64 * input * 1.25
            + self.cache_read_input_tokens as f64 * input * 0.1
            + self.output_tokens as f64 * output)
            / 1e6
    }

    /// The API's `usage` object.
    pub fn to_json(&self) -> Value {
        json!({
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
        })
    }
}

#[derive(Debug, Default)]
struct SpendState {
    usage: TokenUsage,
    usd: f64,
    requests: RequestCounts,
    limit: Option<f64>,
}

/// Who sent a request to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestBy {
    /// The main loop.
    MainLoop,
    /// A sub-agent (the Agent tool), at any depth.
    SubAgent,
    /// WebFetch's small model ([`web_fetch::PageReader`]).
    WebFetch,
    /// WebSearch's searches ([`web_search::WebSearcher`]).
    WebSearch,
}

/// Requests sent to the model, by who sent them (each attempt of a retried request counts
/// once).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestCounts {
    /// The main loop's (its [`AgentOutcome::turns`]).
    pub main_loop: usize,
    /// The sub-agents'.
    pub sub_agents: usize,
    /// WebFetch's small model's.
    pub web_fetch: usize,
    /// WebSearch's searches.
    pub web_search: usize,
}

impl RequestCounts {
    /// Every request.
    pub fn total(&self) -> usize {
        self.main_loop + self.sub_agents + self.web_fetch + self.web_search
    }
}

/// Tokens and estimated dollars spent, shared by a loop and its sub-agents (cheap to clone),
/// and the run's spending limit, which whoever sends a request on it checks first.
#[derive(Debug, Clone, Default)]
pub struct Spend {
    state: Arc<Mutex<SpendState>>,
}

impl Spend {
    /// Records the usage of one response of `model`.
    pub fn add(&self, model: &str, usage: &TokenUsage) {
        self.update(model, &TokenUsage::default(), usage);
    }

    /// Records a response of `model` whose usage was `before` when last recorded (zero the
    /// first time) and is `now`: a response's tokens count as soon as the stream reports
    /// them, so that the requests its calls make (a sub-agent's, WebFetch's small model's)
    /// see them before they are sent.
    pub fn update(&self, model: &str, before: &TokenUsage, now: &TokenUsage) {
        let usd = now.usd(model) - before.usd(model);
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.usage.remove(before);
        s.usage.add(now);
        s.usd += usd;
    }

    /// Records `searches` searches of the API's `web_search` server tool (a response's
    /// `usage.server_tool_use.web_search_requests`), billed at [`WEB_SEARCH_USD`] each
    /// besides their response's tokens.
    #[expect(clippy::cast_precision_loss, reason = "a count of searches")]
    pub fn add_web_searches(&self, searches: u64) {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.usd += searches as f64 * WEB_SEARCH_USD;
    }

    /// Sets the spending limit in US dollars (`None`: no limit). [`AgentLoop::run`] sets
    /// the context's [`ToolOptions::max_budget_usd`](tool_core::ToolOptions) here, for the
    /// requests made without a context of their own (WebFetch's small model,
    /// [`web_fetch::PageReader`]).
    pub fn set_limit(&self, limit: Option<f64>) {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .limit = limit;
    }

    /// The spending limit, when the spend so far has reached it: no further request may be
    /// sent. `None` when there is no limit or it is not reached.
    pub fn limit_reached(&self) -> Option<f64> {
        let s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        s.limit.filter(|limit| s.usd >= *limit)
    }

    /// The check a request of this run makes before it is retried
    /// ([`ModelRequest::stop_retrying`]): a retry after the limit was reached (a sub-agent
    /// beside it spent it meanwhile) is not sent.
    pub fn retry_stop(&self) -> client::RetryStop {
        let spend = self.clone();
        client::RetryStop(Arc::new(move || {
            spend
                .limit_reached()
                .map(|limit| format!("the spending limit of ${limit} was reached"))
        }))
    }

    /// A meter for one request of `model`, counting here the tokens each of its attempts
    /// reports as they are reported ([`ModelRequest::usage`]).
    pub fn meter(&self, model: impl Into<String>) -> UsageMeter {
        UsageMeter {
            spend: self.clone(),
            model: model.into(),
            state: Arc::default(),
        }
    }

    /// Input tokens (cached or not) and output tokens so far.
    pub fn tokens(&self) -> (u64, u64) {
        let s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        (s.usage.all_input(), s.usage.output_tokens)
    }

    /// Counts a request sent to the model by `by` (its tokens come with [`add`](Self::add)).
    pub fn count_request(&self, by: RequestBy) {
        let mut s = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let count = match by {
            RequestBy::MainLoop => &mut s.requests.main_loop,
            RequestBy::SubAgent => &mut s.requests.sub_agents,
            RequestBy::WebFetch => &mut s.requests.web_fetch,
            RequestBy::WebSearch => &mut s.requests.web_search,
        };
        *count += 1;
    }

    /// The requests counted so far, by who sent them: the same requests whose tokens
    /// [`tokens`](Self::tokens) and [`usd`](Self::usd) add up.
    pub fn requests(&self) -> RequestCounts {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .requests
    }

    /// Estimated US dollars so far.
    pub fn usd(&self) -> f64 {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .usd
    }
}

/// One request's tokens, counted in a [`Spend`] as its stream reports them
/// ([`Spend::meter`]): those of every attempt, each the last figure its stream reported (an
/// attempt retried after an overload, or one that failed before its first content block,
/// cost what its `message_start` said). The client reports what it reads of an attempt
/// before it hands the stream on ([`ModelRequest::usage`]) and the reader of the stream what
/// it reads after: the same figure reported twice counts once. Cheap to clone.
#[derive(Debug, Clone)]
pub struct UsageMeter {
    spend: Spend,
    model: String,
    state: Arc<Mutex<MeterState>>,
}

#[derive(Debug, Default)]
struct MeterState {
    /// The tokens of the attempts before the current one.
    earlier: TokenUsage,
    /// The current attempt's, as last reported.
    current: TokenUsage,
}

impl UsageMeter {
    fn lock(&self) -> std::sync::MutexGuard<'_, MeterState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The current attempt's usage so far is `now` (a [`StreamEvent::Usage`]'s, which
    /// replaces the one before): counted in the spend at once.
    pub fn report(&self, now: &TokenUsage) {
        let mut state = self.lock();
        self.spend.update(&self.model, &state.current, now);
        state.current = *now;
    }

    /// The current attempt ended and another is sent: its tokens stay counted, and the
    /// next attempt's count from zero.
    pub fn next_attempt(&self) {
        let mut state = self.lock();
        let current = std::mem::take(&mut state.current);
        state.earlier.add(&current);
    }

    /// The tokens of every attempt so far.
    pub fn total(&self) -> TokenUsage {
        let state = self.lock();
        let mut total = state.earlier;
        total.add(&state.current);
        total
    }
}

impl PartialEq for UsageMeter {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.state, &other.state)
    }
}

/// Something that happened during a run, for live display.
#[derive(Debug)]
pub enum AgentEvent<'a> {
    /// A request is about to be sent (1-based).
    Request(usize),
    /// Text from the model, as it streams; between two of its text blocks, a blank line
    /// ([`TEXT_BLOCK_SEPARATOR`]), as [`AgentOutcome::final_text`] joins them.
    Text(&'a str),
    /// A call started; `running` calls run now, this one included.
    ToolStarted {
        /// The block.
        tool_use: &'a ToolUse,
        /// How many calls run now.
        running: usize,
    },
    /// Progress from a running call.
    ToolProgress(&'a ToolUse, &'a Value),
    /// A call's result, in order.
    ToolResult(&'a ToolUse, &'a CallOutcome),
    /// A message for the user (a hook's system message), a sub-agent's too (passed up by
    /// its Agent call).
    Notice(&'a str),
}

/// Why a run ended.
#[derive(Debug, Clone)]
pub enum Stop {
    /// The model answered without asking for tools.
    Finished,
    /// `max_turns` requests were made.
    MaxTurns(usize),
    /// The spending limit was reached.
    Budget(f64),
    /// The user interrupted (Ctrl-C): running tools were cancelled or allowed to finish per
    /// their interrupt behaviour, every tool_use got its result, and the run ended.
    Interrupted,
    /// The context's cancellation token fired: everything was cancelled.
    Cancelled,
    /// The user rejected a tool call without saying how to go on.
    Rejected,
    /// A hook stopped the turn (`continue: false`, or a blocking PostToolBatch hook), with
    /// its reason.
    HookStopped(Option<String>),
    /// A UserPromptSubmit hook rejected the prompt (its `[hook]: reason` lines); nothing was
    /// sent to the model.
    PromptBlocked(String),
    /// The model declined to answer (`stop_reason: "refusal"`).
    Refused,
    /// The answer ended before the model finished it: still cut off by the output token
    /// limit after the attempts to go on, or stopped for another reason the API gave (such
    /// as `model_context_window_exceeded`), named here.
    Incomplete(String),
    /// The request or the response failed.
    Failed(AgentError),
}

impl Stop {
    /// Whether the run ended the normal way (the model finished, or a hook said so).
    pub fn is_success(&self) -> bool {
        matches!(self, Self::Finished | Self::HookStopped(_))
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Finished => f.write_str("the model finished"),
            Self::MaxTurns(n) => write!(f, "stopped after {n} requests (max_turns)"),
            Self::Budget(limit) => {
                write!(f, "stopped: the spending limit of ${limit} was reached")
            }
            Self::Interrupted => f.write_str("interrupted by the user"),
            Self::Cancelled => f.write_str("cancelled"),
            Self::Rejected => f.write_str("stopped: a tool call was rejected"),
            Self::HookStopped(Some(reason)) => write!(f, "stopped by a hook: {reason}"),
            Self::HookStopped(None) => f.write_str("stopped by a hook"),
            Self::PromptBlocked(reason) => {
                write!(f, "UserPromptSubmit operation blocked by hook:\n{reason}")
            }
            Self::Refused => f.write_str("the model declined to answer (refusal)"),
            Self::Incomplete(reason) => write!(f, "the answer is incomplete: {reason}"),
            Self::Failed(e) => write!(f, "{e}"),
        }
    }
}

/// How long a tool_use waited between its block closing in the stream and its call
/// starting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolStart {
    /// The tool_use id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// From the parsed `content_block_stop` to the executor's start event.
    pub after_block_stop: Duration,
}

/// What one run produced.
#[derive(Debug, Clone)]
pub struct AgentOutcome {
    /// The conversation, in the API's message format (the deferred-tools announcement,
    /// which is added per request, is not part of it).
    pub messages: Vec<Value>,
    /// The text of the model's last message that had text, its text blocks joined by a blank
    /// line ([`TEXT_BLOCK_SEPARATOR`]).
    pub final_text: String,
    /// Requests this run made itself (not its sub-agents' nor WebFetch's: the shared
    /// [`Spend::requests`] counts those).
    pub turns: usize,
    /// The tokens of this run's own requests (not its sub-agents'): of every attempt, one
    /// that failed or was retried before its first content block included.
    pub usage: TokenUsage,
    /// Tool calls made.
    pub tool_uses: usize,
    /// Why the run ended.
    pub stop: Stop,
    /// The last stop reason the API gave (`end_turn`, `tool_use`, `max_tokens`).
    pub stop_reason: Option<String>,
    /// When each call started, relative to its block's end in the stream.
    pub tool_starts: Vec<ToolStart>,
}

/// The turns running now, by the ids of the calls they made, each with the token that stops
/// that turn's calls: how the user's rejection inside a foreground sub-agent reaches the
/// turn whose Agent call started it ([`AgentLoop::reject_turn_of`]). Shared by a loop's
/// clones, its sub-agents' among them.
///
/// Each entry has the number of its turn, so that a turn removes only its own entries. Ids
/// are the model's, and a sub-agent's call can have the id of its caller's: an id holds a
/// stack of entries, the innermost turn's last. A sub-agent's turns have ended (and left
/// the stack) by the time its caller is looked up.
#[derive(Debug, Clone, Default)]
struct TurnAborts(Arc<Mutex<TurnAbortMap>>);

#[derive(Debug, Default)]
struct TurnAbortMap {
    turns: u64,
    calls: HashMap<String, Vec<(u64, CancellationToken)>>,
}

impl TurnAborts {
    fn lock(&self) -> std::sync::MutexGuard<'_, TurnAbortMap> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens a turn: its number, and a guard that removes its entries when the turn ends,
    /// however it ends (a turn's future dropped mid-way included).
    fn open_turn(&self) -> TurnEntries {
        let mut map = self.lock();
        map.turns += 1;
        TurnEntries {
            aborts: self.clone(),
            turn: map.turns,
        }
    }
}

/// The entries of one turn in [`TurnAborts`], removed on drop.
struct TurnEntries {
    aborts: TurnAborts,
    turn: u64,
}

impl TurnEntries {
    fn add(&self, tool_use_id: &str, token: &CancellationToken) {
        self.aborts
            .lock()
            .calls
            .entry(tool_use_id.to_owned())
            .or_default()
            .push((self.turn, token.clone()));
    }
}

impl Drop for TurnEntries {
    fn drop(&mut self) {
        let mut map = self.aborts.lock();
        map.calls.retain(|_, entries| {
            entries.retain(|(turn, _)| *turn != self.turn);
            !entries.is_empty()
        });
    }
}

/// What the model is told after its response hit the output token limit (`max_tokens`, when
/// known) in the middle of the calls `names`, whose input was cut off, so that it does not
/// send the same oversized call again.
pub fn cut_off_call_text(max_tokens: Option<u64>, names: &[String]) -> String {
    let limit = max_tokens.map_or_else(String::new, |n| format!(" (max_tokens {n})"));
    format!(
        "Your response hit the output token limit{limit} in the middle of a {} call, so its \
         input was cut off and the call was not run. Send less in one call: write a large file \
         in parts.",
        names.join(", ")
    )
}

/// The result of a call that had not started when the response stream failed: it is not
/// run (the model's answer is incomplete, and the call may have depended on what was lost).
fn not_run_after_stream_error() -> String {
    tool_core::tool_use_error(
        "Not run: the response stream failed before this call started. Nothing was done.",
    )
}

/// The loop: a model client, the pipeline calls go through, and the settings. Cheap to
/// clone.
#[derive(Clone)]
pub struct AgentLoop {
    client: Arc<dyn ModelClient>,
    pipeline: Arc<Pipeline>,
    config: LoopConfig,
    spend: Spend,
    turn_aborts: TurnAborts,
    /// The permission rules of the last main run of this loop or a clone
    /// ([`permission_view`](Self::permission_view)).
    permission_view: Arc<Mutex<Option<ToolUseContext>>>,
}

impl fmt::Debug for AgentLoop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentLoop")
            .field("config", &self.config)
            .field("spend", &self.spend)
            .finish_non_exhaustive()
    }
}

/// What one streamed response produced.
#[derive(Default)]
struct TurnOutput {
    assistant: Vec<Value>,
    results: Vec<Value>,
    extra: Vec<Value>,
    tool_uses: usize,
    stop_reason: Option<String>,
    error: Option<AgentError>,
    interrupted: bool,
    cancelled: bool,
    rejected: bool,
    hook_stop: Option<Option<String>>,
    starts: Vec<ToolStart>,
    /// Each call with the tool_result content the model sees (for PostToolBatch).
    batch: Vec<(ToolUse, Value)>,
    context: Option<ToolUseContext>,
    /// The tools of the calls whose input did not parse (a response cut off mid-call).
    unparsed_calls: Vec<String>,
}

/// The model-facing text of messages a call added (hook context, blocking errors).
fn message_texts(messages: &[Message], out: &mut Vec<Value>, notice: &mut dyn FnMut(&str)) {
    for message in messages {
        match message {
            // Hooks cancelled by an interrupt are the user's news, not the model's (Claude
            // Code drops the note before the request).
            Message::Attachment(a) if a.kind == "hook_cancelled" => {}
            Message::Attachment(a) if !a.text.is_empty() => {
                out.push(json!({"type": "text", "text": a.text}));
            }
            Message::User(blocks) => {
                for block in blocks {
                    if let tool_core::ContentBlock::Text { text } = block {
                        out.push(json!({"type": "text", "text": text}));
                    }
                }
            }
            Message::System(text) => notice(text),
            _ => {}
        }
    }
}

/// Hook messages split into what the model reads (additional context, blocking texts) and
/// what the user sees (system messages, hook errors), each in order. For hosts that run
/// [`LoopEvent`]s of their own, such as SessionStart.
pub fn split_hook_messages(messages: &[Message]) -> (Vec<String>, Vec<String>) {
    let (mut blocks, mut notices) = (Vec::new(), Vec::new());
    message_texts(messages, &mut blocks, &mut |t: &str| {
        notices.push(t.to_owned())
    });
    let context = blocks
        .iter()
        .filter_map(|b| b["text"].as_str().map(str::to_owned))
        .collect();
    (context, notices)
}

/// What hooks said around one call ([`split_hook_messages`] of its messages): the texts the
/// model reads before the call's result and after it, and the user's notices, each in
/// order. For hosts that show a call's result themselves (`run`, `serve`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallHookTexts {
    /// For the model, before the result (PreToolUse additional context).
    pub before: Vec<String>,
    /// For the model, after the result (PostToolUse context, a blocking reason).
    pub after: Vec<String>,
    /// For the user (system messages, hook errors), before then after.
    pub notices: Vec<String>,
}

impl CallHookTexts {
    /// The hook texts of `outcome`.
    pub fn of(outcome: &CallOutcome) -> Self {
        let (before, mut notices) = split_hook_messages(&outcome.messages_before);
        let (after, more) = split_hook_messages(&outcome.messages_after);
        notices.extend(more);
        Self {
            before,
            after,
            notices,
        }
    }

    /// The model's texts, before then after.
    pub fn context(&self) -> impl Iterator<Item = &String> {
        self.before.iter().chain(&self.after)
    }
}

/// `text` without the `<system-reminder>` wrapping hook context comes in for the model, as
/// a person reads it.
pub fn without_reminder(text: &str) -> &str {
    text.strip_prefix("<system-reminder>\n")
        .and_then(|t| t.strip_suffix("\n</system-reminder>"))
        .unwrap_or(text)
}

/// Ends the text block being read (`text`, then emptied): it goes into `assistant` as a block
/// of its own, as the model sent it, when it has something in it (the API refuses a text
/// block that is only whitespace, often a "\n\n" before a call). Returns whether it did.
fn end_text_block(text: &mut String, assistant: &mut Vec<Value>) -> bool {
    let kept = !text.trim().is_empty();
    if kept {
        assistant.push(json!({"type": "text", "text": std::mem::take(text)}));
    }
    text.clear();
    kept
}

/// Adds `text` for the model as a user turn: to the last message when it is already the
/// user's (the API wants the roles to alternate), else as a new message.
fn push_user_text(messages: &mut Vec<Value>, text: String) {
    let block = json!({"type": "text", "text": text});
    if let Some(last) = messages.last_mut().filter(|m| m["role"] == "user") {
        match last["content"].take() {
            Value::String(s) => {
                last["content"] = json!([{"type": "text", "text": s}, block]);
            }
            Value::Array(mut blocks) => {
                blocks.push(block);
                last["content"] = Value::Array(blocks);
            }
            _ => last["content"] = json!([block]),
        }
    } else {
        messages.push(json!({"role": "user", "content": [block]}));
    }
}

/// Writes an interrupt that came between two requests (while hooks ran after the tools)
/// into the conversation: after tool results, as a stop for tool use, as Claude Code does
/// when its tools end with the turn aborted; otherwise as an interrupted request.
fn interrupted_between_turns(messages: &mut Vec<Value>) {
    let after_tools = messages.last().is_some_and(|m| {
        m["role"] == "user"
            && m["content"]
                .as_array()
                .is_some_and(|c| c.iter().any(|b| b["type"] == "tool_result"))
    });
    let text = if after_tools {
        INTERRUPT_MESSAGE_FOR_TOOL_USE
    } else {
        INTERRUPT_MESSAGE
    };
    push_user_text(messages, text.to_owned());
}

impl AgentLoop {
    /// A loop calling `client`, running tools through `pipeline`, with `config`.
    pub fn new(client: Arc<dyn ModelClient>, pipeline: Arc<Pipeline>, config: LoopConfig) -> Self {
        Self {
            client,
            pipeline,
            config,
            spend: Spend::default(),
            turn_aborts: TurnAborts::default(),
            permission_view: Arc::default(),
        }
    }

    /// A context holding the permission rules of the last main run of this loop (or of a
    /// clone of it: its sub-agents share them): its working directory, home, permission
    /// context and the session's permission engine, without its tools or state. What the
    /// Agent tool's description judges which agent types the rules refuse by, as the tool
    /// is given no context then. `None` before any run.
    pub(crate) fn permission_view(&self) -> Option<ToolUseContext> {
        self.permission_view
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Keeps `ctx`'s permission rules as [`permission_view`](Self::permission_view).
    fn keep_permission_view(&self, ctx: &ToolUseContext) {
        let view = ToolUseContext::new(ctx.cwd())
            .with_home(ctx.home().map(std::path::Path::to_path_buf))
            .with_permission(ctx.permission().clone());
        if let Some(engine) = ctx.app_state().get::<tool_perms::SessionEngine>() {
            view.app_state().set(engine);
        }
        *self
            .permission_view
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(view);
    }

    /// Ends the turn (of this loop or of a clone of it) that made call `tool_use_id` as the
    /// user's rejection of one of its own calls does: its other calls are cancelled or
    /// answered with the rejection text, and the run ends with [`Stop::Rejected`]. For a
    /// foreground sub-agent, which shares its caller's turn: the user rejecting one of the
    /// sub-agent's calls stops the caller too, as in Claude Code. Whether such a turn was
    /// running.
    pub(crate) fn reject_turn_of(&self, tool_use_id: &str) -> bool {
        let token = self
            .turn_aborts
            .lock()
            .calls
            .get(tool_use_id)
            .and_then(|entries| entries.last())
            .map(|(_, t)| t.clone());
        token.map(|t| t.cancel()).is_some()
    }

    /// With a spend tracker shared with other loops (a parent and its sub-agents).
    pub fn with_spend(mut self, spend: Spend) -> Self {
        self.spend = spend;
        self
    }

    /// With another configuration (same client, pipeline and spend tracker).
    pub fn with_config(mut self, config: LoopConfig) -> Self {
        self.config = config;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &LoopConfig {
        &self.config
    }

    /// The spend tracker.
    pub fn spend(&self) -> &Spend {
        &self.spend
    }

    /// The pipeline calls go through.
    pub fn pipeline(&self) -> &Arc<Pipeline> {
        &self.pipeline
    }

    /// Runs the loop for `prompt` in `ctx` (its tools, cwd, permission state, spending limit).
    ///
    /// `interrupt` is the user interrupt, Claude Code's Esc or Ctrl-C (its `user-cancel`
    /// abort): once cancelled, the response stops being read, every running call is
    /// cancelled whatever its interrupt behaviour (Bash's process group killed) and answered
    /// with the rejection text, as are the calls not started, and the run ends with
    /// [`Stop::Interrupted`]; hooks that run outside the turn (Stop) are let finish.
    /// Cancelling `ctx`'s own token cancels everything at once, those hooks too
    /// ([`Stop::Cancelled`]). A host that lets the user send a message while tools run (Claude
    /// Code's `interrupt` abort, which lets `block` tools such as Bash finish) drives a
    /// [`StreamingToolExecutor`] itself and calls its
    /// [`interrupt`](StreamingToolExecutor::interrupt). `on_event` sees text, calls and
    /// results as they happen.
    ///
    /// Hooks (the pipeline's [`Hooks`](tool_exec::Hooks)) see the run's events: before the
    /// first request UserPromptSubmit (or SubagentStart when `ctx` belongs to a sub-agent),
    /// whose context goes to the model with the prompt and whose block rejects the prompt
    /// ([`Stop::PromptBlocked`]); PostToolBatch after each response's calls, whose context
    /// goes with the results and whose block stops the run; and Stop (SubagentStop) when the
    /// model finishes, whose block makes the model go on with the hook's reason as a
    /// `Stop hook feedback:` message, at most [`LoopConfig::stop_hook_block_cap`] times in a
    /// row.
    pub async fn run(
        &self,
        ctx: ToolUseContext,
        prompt: &str,
        interrupt: &CancellationToken,
        on_event: &mut (dyn FnMut(AgentEvent<'_>) + Send),
    ) -> AgentOutcome {
        self.run_with_context(ctx, &[], prompt, interrupt, on_event)
            .await
    }

    /// [`run`](Self::run) with `context` (for example a SessionStart hook's additional
    /// context) sent to the model as text blocks ahead of the prompt.
    pub async fn run_with_context(
        &self,
        ctx: ToolUseContext,
        context: &[String],
        prompt: &str,
        interrupt: &CancellationToken,
        on_event: &mut (dyn FnMut(AgentEvent<'_>) + Send),
    ) -> AgentOutcome {
        let hooks = Arc::clone(self.pipeline.hooks());
        let subagent = ctx.agent().is_some();
        // The Agent tool's description leaves out the types these rules refuse.
        if !subagent {
            self.keep_permission_view(&ctx);
        }
        // Each user prompt has an id hooks are given (`prompt_id`); a sub-agent works on its
        // parent's prompt and keeps its id.
        let ctx = if subagent {
            ctx
        } else {
            ctx.with_prompt_id(uuid::Uuid::new_v4().to_string())
        };
        // The run's limit, for the requests sent without a context (WebFetch's small model);
        // a sub-agent spends from its caller's budget.
        if !subagent {
            self.spend.set_limit(ctx.options().max_budget_usd);
        }
        // A sub-agent's conversation goes to its own file, where SubagentStop hooks are told
        // it is (`agent_transcript_path`).
        let mut transcript = self
            .config
            .transcript
            .as_ref()
            .map(|path| match ctx.agent() {
                Some(agent) => transcript::Transcript::new(
                    tool_hooks::agent_transcript_path(path, &agent.id),
                    ctx.session_id(),
                    ctx.cwd(),
                )
                .sidechain(&agent.id),
                None => transcript::Transcript::new(path, ctx.session_id(), ctx.cwd()),
            });
        // The transcript brought up to `messages`; a write that failed stops it, and the user
        // is told once (hooks now see a stale transcript).
        let settle = |transcript: &mut Option<transcript::Transcript>,
                      messages: &[Value],
                      on_event: &mut (dyn FnMut(AgentEvent<'_>) + Send)| {
            if let Some(notice) = transcript.as_mut().and_then(|t| t.sync(messages)) {
                on_event(AgentEvent::Notice(&notice));
            }
        };
        let mut outcome = AgentOutcome {
            messages: Vec::new(),
            final_text: String::new(),
            turns: 0,
            usage: TokenUsage::default(),
            tool_uses: 0,
            stop: Stop::Finished,
            stop_reason: None,
            tool_starts: Vec::new(),
        };
        // The first message: context, the prompt, then what the start hooks added.
        let mut first: Vec<Value> = context
            .iter()
            .map(|text| json!({"type": "text", "text": text}))
            .collect();
        first.push(json!({"type": "text", "text": prompt}));
        let start = if subagent {
            LoopEvent::SubagentStart
        } else {
            LoopEvent::UserPromptSubmit { prompt }
        };
        let started = hooks.loop_event(start, &ctx).await;
        message_texts(&started.messages, &mut first, &mut |t: &str| {
            on_event(AgentEvent::Notice(t));
        });
        if ctx.is_cancelled() {
            outcome.stop = Stop::Cancelled;
            return outcome;
        }
        // `continue: false` overrides any decision.
        if let Some(reason) = started.stop {
            outcome.stop = Stop::HookStopped(reason);
            return outcome;
        }
        if !subagent && !started.blocking.is_empty() {
            // The prompt is rejected and erased, as in Claude Code.
            outcome.stop = Stop::PromptBlocked(started.blocking.join("\n"));
            return outcome;
        }
        outcome.messages.push(if first.len() == 1 {
            json!({"role": "user", "content": prompt})
        } else {
            json!({"role": "user", "content": first})
        });
        let mut ctx = ctx;
        let hard = ctx.cancellation().clone();
        let mut stop_blocks = 0usize;
        let mut cut_off_recoveries = 0usize;
        // The last turn was cut off (and the model was asked to go on) or paused: this one's
        // text goes on from its.
        let mut continuing = false;
        // The last response was paused (`pause_turn`): this request resumes it, its message
        // last, with no user message after it.
        let mut resuming = false;
        outcome.stop = loop {
            if hard.is_cancelled() {
                break Stop::Cancelled;
            }
            if interrupt.is_cancelled() {
                interrupted_between_turns(&mut outcome.messages);
                break Stop::Interrupted;
            }
            if outcome.turns >= self.config.max_turns {
                break Stop::MaxTurns(self.config.max_turns);
            }
            if let Some(limit) = ctx.options().max_budget_usd
                && self.spend.usd() >= limit
            {
                break Stop::Budget(limit);
            }
            // What background hooks delivered since the last request goes with this one (the
            // main loop's: a sub-agent shares the hooks and must not take the parent's). A
            // request that resumes a paused turn takes none: a user message after the paused
            // one would end it; they wait for the next request.
            let late = if subagent || resuming {
                Vec::new()
            } else {
                hooks.take_background_messages()
            };
            if !late.is_empty() {
                let (context, notices) = split_hook_messages(&late);
                for notice in &notices {
                    on_event(AgentEvent::Notice(notice));
                }
                for text in context {
                    push_user_text(&mut outcome.messages, text);
                }
            }
            settle(&mut transcript, &outcome.messages, &mut *on_event);
            // The tools as they are now (an MCP server's list changes, as in Claude Code's
            // query loop): each request offers them, and the calls it brings find them. A
            // sub-agent keeps the tools its definition gave it.
            if !subagent && let Some(refresh) = ctx.options().refresh_tools.clone() {
                let fresh = refresh();
                let same = fresh.len() == ctx.tools().len()
                    && fresh
                        .iter()
                        .zip(ctx.tools())
                        .all(|(a, b)| Arc::ptr_eq(a, b));
                if !same {
                    ctx = ctx.with_tools(fresh);
                }
            }
            let mut plan = tool_search::tools_for_request(
                self.config.tool_search,
                &self.config.model,
                ctx.tools(),
                &outcome.messages,
            );
            let messages = tool_search::with_announcement(
                &tool_search::without_stale_tool_references(&outcome.messages, &plan),
                plan.announcement.as_deref(),
            );
            // Every attempt's tokens count as they are reported, those of an attempt that
            // fails or is retried before its first content block too.
            let meter = self.spend.meter(&self.config.model);
            let request = ModelRequest {
                model: self.config.model.clone(),
                max_tokens: self.config.max_tokens,
                system: self.config.system_prompt.clone(),
                tools: std::mem::take(&mut plan.tools),
                messages,
                betas: std::mem::take(&mut plan.betas),
                prompt_caching: !client::prompt_caching_disabled(),
                stop_retrying: Some(self.spend.retry_stop()),
                usage: Some(meter.clone()),
            };
            outcome.turns += 1;
            self.spend.count_request(if subagent {
                RequestBy::SubAgent
            } else {
                RequestBy::MainLoop
            });
            on_event(AgentEvent::Request(outcome.turns));
            let stream = tokio::select! {
                biased;
                () = hard.cancelled() => {
                    outcome.usage.add(&meter.total());
                    break Stop::Cancelled;
                }
                () = interrupt.cancelled() => {
                    // Before any answer (a retry's wait, a slow first byte): the request
                    // was interrupted, and the conversation says so.
                    push_user_text(&mut outcome.messages, INTERRUPT_MESSAGE.to_owned());
                    outcome.usage.add(&meter.total());
                    break Stop::Interrupted;
                }
                stream = self.client.stream(&request) => stream,
            };
            let stream = match stream {
                // The response's usage so far, as each event passes: the last one reported
                // is what it cost. It counts in the shared spend at once, before this
                // response's calls end, so that a sub-agent one of them starts (or
                // WebFetch's small model) sees it before sending its own request.
                Ok(s) => {
                    let meter = meter.clone();
                    s.inspect(move |event| {
                        if let Some(now) = event.as_ref().ok().and_then(TokenUsage::reported) {
                            meter.report(&now);
                        }
                    })
                    .boxed()
                }
                Err(e) => {
                    outcome.usage.add(&meter.total());
                    break Stop::Failed(e);
                }
            };
            let turn = self
                .turn(
                    &ctx,
                    stream,
                    interrupt,
                    &plan,
                    transcript.as_mut(),
                    on_event,
                )
                .await;
            if let Some(next) = turn.context {
                ctx = next;
            }
            outcome.usage.add(&meter.total());
            outcome.tool_uses += turn.tool_uses;
            outcome.tool_starts.extend(turn.starts);
            let cut_off = turn.stop_reason.as_deref() == Some("max_tokens");
            let refused = turn.stop_reason.as_deref() == Some("refusal");
            let paused = turn.stop_reason.as_deref() == Some("pause_turn");
            // Why this response ended, when it was not the model ending its turn (or asking
            // for tools, or being cut off or paused, which are handled on their own).
            let other_reason = turn.stop_reason.clone().filter(|r| {
                !matches!(
                    r.as_str(),
                    "end_turn"
                        | "stop_sequence"
                        | "tool_use"
                        | "max_tokens"
                        | "refusal"
                        | "pause_turn"
                )
            });
            if turn.stop_reason.is_some() {
                outcome.stop_reason = turn.stop_reason;
            }
            let has_text = turn.assistant.iter().any(|b| b["type"] == "text");
            if has_text {
                let text = turn
                    .assistant
                    .iter()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>()
                    .join(TEXT_BLOCK_SEPARATOR);
                // Going on after a cut-off or a pause: the answer is what came before and
                // this.
                if continuing {
                    outcome.final_text.push_str(&text);
                } else {
                    outcome.final_text = text;
                }
            }
            continuing = false;
            resuming = false;
            let answered = !turn.assistant.is_empty();
            if answered {
                outcome
                    .messages
                    .push(json!({"role": "assistant", "content": turn.assistant}));
            }
            let mut batch_verdict = LoopEventOutcome::default();
            if turn.tool_uses > 0 {
                let mut content = turn.results;
                content.extend(turn.extra);
                if cut_off && !turn.unparsed_calls.is_empty() {
                    // Its result says the input was not valid; this says why, so the model
                    // does not send the same oversized call again.
                    content.push(json!({"type": "text", "text": cut_off_call_text(
                        Some(u64::from(self.config.max_tokens)),
                        &turn.unparsed_calls,
                    )}));
                }
                if turn.interrupted || turn.cancelled || turn.rejected {
                    content.push(json!({"type": "text", "text": INTERRUPT_MESSAGE_FOR_TOOL_USE}));
                } else if turn.error.is_none() && !turn.rejected && turn.hook_stop.is_none() {
                    // The batch is complete and the run goes on: PostToolBatch.
                    batch_verdict = hooks
                        .loop_event(LoopEvent::PostToolBatch { calls: &turn.batch }, &ctx)
                        .await;
                    message_texts(&batch_verdict.messages, &mut content, &mut |t: &str| {
                        on_event(AgentEvent::Notice(t));
                    });
                }
                outcome
                    .messages
                    .push(json!({"role": "user", "content": content}));
            } else if turn.interrupted || turn.cancelled {
                // Interrupted before the model said anything, there is no assistant message
                // to answer: the text joins the last user message (the roles alternate).
                push_user_text(&mut outcome.messages, INTERRUPT_MESSAGE.to_owned());
            }
            if turn.cancelled {
                break Stop::Cancelled;
            }
            if turn.interrupted {
                break Stop::Interrupted;
            }
            if let Some(e) = turn.error {
                break Stop::Failed(e);
            }
            if turn.rejected {
                break Stop::Rejected;
            }
            if let Some(reason) = turn.hook_stop.or(batch_verdict.stop) {
                break Stop::HookStopped(reason);
            }
            if !batch_verdict.blocking.is_empty() {
                break Stop::HookStopped(Some(batch_verdict.blocking.join("\n")));
            }
            if refused {
                break Stop::Refused;
            }
            // An answer cut off by the output limit is not the end: the model is asked to go
            // on, a few times in a row at most, as Claude Code does.
            if turn.tool_uses == 0 && cut_off && cut_off_recoveries < MAX_CUT_OFF_RECOVERIES {
                cut_off_recoveries += 1;
                continuing = true;
                push_user_text(&mut outcome.messages, CUT_OFF_RECOVERY.to_owned());
                continue;
            }
            if turn.tool_uses == 0 && cut_off {
                break Stop::Incomplete(format!(
                    "it was still cut off by the output token limit (max_tokens {}) after \
                     {MAX_CUT_OFF_RECOVERIES} attempts to go on",
                    self.config.max_tokens
                ));
            }
            if !cut_off {
                cut_off_recoveries = 0;
            }
            // A paused turn (`pause_turn`: the API paused a long-running turn) is resumed:
            // the next request sends the conversation as it is, the paused message last, and
            // the model goes on from there. Each resumption is a request, which `max_turns`
            // and the spending limit bound. (A paused response with calls is a turn of calls:
            // their results go back as usual.)
            if turn.tool_uses == 0 && paused {
                if !answered {
                    break Stop::Incomplete(
                        "the API paused it (pause_turn) before it said anything to go on from"
                            .to_owned(),
                    );
                }
                resuming = true;
                continuing = true;
                continue;
            }
            // A reason that is not the model ending its turn (or asking for tools): the
            // answer is incomplete, whatever text it has.
            if turn.tool_uses == 0
                && let Some(reason) = other_reason
            {
                break Stop::Incomplete(format!("the API stopped it ({reason})"));
            }
            if turn.tool_uses == 0 {
                let last_assistant_message = if has_text {
                    outcome.final_text.as_str()
                } else {
                    ""
                };
                let stop_hook_active = stop_blocks > 0;
                let event = if subagent {
                    LoopEvent::SubagentStop {
                        stop_hook_active,
                        last_assistant_message,
                    }
                } else {
                    LoopEvent::Stop {
                        stop_hook_active,
                        last_assistant_message,
                    }
                };
                settle(&mut transcript, &outcome.messages, &mut *on_event);
                let verdict = hooks.loop_event(event, &ctx).await;
                if hard.is_cancelled() {
                    break Stop::Cancelled;
                }
                // Additional context goes on the run as a block does; system messages are for
                // the user.
                let (context, notices) = split_hook_messages(&verdict.messages);
                for notice in &notices {
                    on_event(AgentEvent::Notice(notice));
                }
                // Interrupted while the hooks ran: the run ends so, whatever they said (the
                // model's answer is whole; the conversation says the user stopped it).
                if interrupt.is_cancelled() {
                    interrupted_between_turns(&mut outcome.messages);
                    break Stop::Interrupted;
                }
                if let Some(reason) = verdict.stop {
                    break Stop::HookStopped(reason);
                }
                if verdict.blocking.is_empty() && context.is_empty() {
                    break Stop::Finished;
                }
                if self
                    .config
                    .stop_hook_block_cap
                    .is_some_and(|cap| stop_blocks >= cap)
                {
                    // A sub-agent's is said too, naming it (its Agent call passes it up).
                    let what = match ctx.agent() {
                        Some(agent) => format!(
                            "A SubagentStop hook blocked the {} agent ({}) from ending {} \
                             consecutive times - overriding and ending its turn.",
                            agent.agent_type,
                            agent.id,
                            stop_blocks + 1
                        ),
                        None => format!(
                            "A hook blocked the turn from ending {} consecutive times - \
                             overriding and ending turn.",
                            stop_blocks + 1
                        ),
                    };
                    on_event(AgentEvent::Notice(&format!(
                        "{what} For Stop/SubagentStop hooks, check stop_hook_active in the \
                         input and return success while it's true. Set \
                         CLAUDE_CODE_STOP_HOOK_BLOCK_CAP to raise this limit."
                    )));
                    break Stop::Finished;
                }
                stop_blocks += 1;
                let name = event.name();
                if !verdict.blocking.is_empty() {
                    let feedback =
                        format!("{name} hook feedback:\n{}", verdict.blocking.join("\n"));
                    push_user_text(&mut outcome.messages, feedback);
                }
                // Context arrives labelled (`<event> hook additional context: ...`).
                for text in context {
                    push_user_text(&mut outcome.messages, text);
                }
            }
        };
        settle(&mut transcript, &outcome.messages, &mut *on_event);
        outcome
    }

    /// Reads one response, running its tool_use blocks as they close.
    async fn turn(
        &self,
        ctx: &ToolUseContext,
        mut stream: EventStream,
        interrupt: &CancellationToken,
        plan: &ToolsForRequest,
        mut transcript: Option<&mut transcript::Transcript>,
        on_event: &mut (dyn FnMut(AgentEvent<'_>) + Send),
    ) -> TurnOutput {
        let mut out = TurnOutput::default();
        let hard = ctx.cancellation().clone();
        // This turn's own token, under the run's: cancelling it stops the turn's calls (the
        // executor's hard interrupt) without cancelling the run. A sub-agent's rejection does
        // that ([`reject_turn_of`](Self::reject_turn_of)).
        let abort = hard.child_token();
        let entries = self.turn_aborts.open_turn();
        // ToolSearch is not offered when tool search is off: a call of it the model makes
        // anyway is refused as a call of a tool that does not exist, since its
        // `tool_reference` answer would make every later request one the API refuses (no
        // beta header). It stays in the list for the sub-agents this turn starts.
        let mut turn_ctx = ctx.clone().with_cancellation(abort.clone());
        if turn_ctx.options().tool_search_off == plan.tool_search {
            let mut options = turn_ctx.options().clone();
            options.tool_search_off = !plan.tool_search;
            turn_ctx = turn_ctx.with_options(options);
        }
        let mut executor =
            StreamingToolExecutor::new(Arc::clone(&self.pipeline), turn_ctx, self.config.executor);
        let mut by_id: HashMap<String, (ToolUse, Instant)> = HashMap::new();
        // The SSE parser refuses a call that repeats an id of the message; a client of
        // another kind is held to the same (both calls would run, and the next request,
        // with two results of one id, would be refused).
        let mut ids = tool_exec::stream::ToolUseIds::new();
        // The text block being read; how many blocks of `out.assistant` the transcript has;
        // whether a text block with text came since the last call, and whether the next
        // text starts another (shown after a blank line, as `final_text` joins them).
        let mut text = String::new();
        let mut written = 0;
        let (mut after_text, mut block_break) = (false, false);
        let (mut reading, mut finished) = (true, false);
        loop {
            if !reading && !finished {
                // Closes the connection at once when the reading stopped early.
                stream = futures::stream::empty().boxed();
                // Shown as it came, kept only with something in it.
                end_text_block(&mut text, &mut out.assistant);
                executor.finish();
                finished = true;
            }
            tokio::select! {
                biased;
                () = hard.cancelled(), if !out.cancelled => {
                    out.cancelled = true;
                    reading = false;
                }
                () = interrupt.cancelled(), if !out.interrupted && !out.cancelled => {
                    out.interrupted = true;
                    reading = false;
                    // Claude Code's Esc (`user-cancel`): every running call is cancelled,
                    // `block` ones such as Bash too, not only those whose interrupt
                    // behaviour is `cancel` (the executor's `interrupt`, for a message the
                    // user sends while tools run, which this loop has no way to take). The
                    // turn's token does that; the run's stays as it is.
                    abort.cancel();
                }
                // A sub-agent's rejection: the turn stops as for a rejection of its own
                // (the executor saw the token too and stopped the other calls).
                () = abort.cancelled(), if !out.rejected && !out.interrupted && !out.cancelled && !hard.is_cancelled() => {
                    out.rejected = true;
                    // As for a rejection of its own: the rest of the response is not read.
                    reading = false;
                }
                event = executor.next() => match event {
                    Some(ExecutorEvent::Started { tool_use_id, running }) => {
                        if let Some((tool_use, closed)) = by_id.get(&tool_use_id) {
                            out.starts.push(ToolStart {
                                id: tool_use_id.clone(),
                                name: tool_use.name.clone(),
                                after_block_stop: closed.elapsed(),
                            });
                            on_event(AgentEvent::ToolStarted { tool_use, running: running.len() });
                        }
                    }
                    Some(ExecutorEvent::Progress(p)) => {
                        // Only the Agent tool's calls speak for a sub-agent: another tool's
                        // progress of that shape is that tool's progress.
                        let from_agent = by_id.get(&p.tool_use_id).is_some_and(|(t, _)| {
                            matches!(t.name.as_str(), "Agent" | "Task")
                        });
                        if from_agent
                            && p.data["type"] == AGENT_NOTICE
                            && let Some(text) = p.data["text"].as_str()
                        {
                            // A sub-agent's notice: for the user, as this loop's own are.
                            on_event(AgentEvent::Notice(text));
                        } else if let Some((tool_use, _)) = by_id.get(&p.tool_use_id) {
                            on_event(AgentEvent::ToolProgress(tool_use, &p.data));
                        }
                    }
                    Some(ExecutorEvent::Result(r)) => {
                        on_event(AgentEvent::ToolResult(&r.tool_use, &r.outcome));
                        let mut result = r.outcome.result.to_api_json();
                        // The hint names the tool, not the alias the model called it by
                        // (`BashOutput` is TaskOutput's).
                        let called = tool_core::find_tool(ctx.tools(), &r.tool_use.name)
                            .map_or(r.tool_use.name.as_str(), |t| t.name());
                        if r.outcome.ending == Ending::InvalidInput
                            && plan.withheld.contains(called)
                        {
                            tool_search::add_schema_not_sent_hint(&mut result, called);
                        }
                        out.batch.push((r.tool_use.clone(), result["content"].clone()));
                        out.results.push(result);
                        let mut notice = |t: &str| on_event(AgentEvent::Notice(t));
                        message_texts(&r.outcome.messages_before, &mut out.extra, &mut notice);
                        message_texts(&r.outcome.messages_after, &mut out.extra, &mut notice);
                        if let Some(reason) = &r.outcome.stop_turn {
                            out.hook_stop = Some(reason.clone());
                        }
                        if r.outcome.interrupt_turn {
                            // The user said no: the rest of the response is neither read nor
                            // paid for (Claude Code aborts the request).
                            out.rejected = true;
                            reading = false;
                        }
                    }
                    None => break,
                },
                item = stream.next(), if reading => match item {
                    Some(Ok(StreamEvent::Text(t))) => {
                        if block_break && !t.trim().is_empty() {
                            block_break = false;
                            on_event(AgentEvent::Text(TEXT_BLOCK_SEPARATOR));
                        }
                        on_event(AgentEvent::Text(&t));
                        text.push_str(&t);
                    }
                    // Each of the model's text blocks goes back as it sent it: one block
                    // glued to the next would run their words together ("bug.It").
                    Some(Ok(StreamEvent::NextTextBlock)) => {
                        after_text |= end_text_block(&mut text, &mut out.assistant);
                        block_break = after_text;
                    }
                    Some(Ok(StreamEvent::ToolUse(tool_use))) => {
                        let closed = Instant::now();
                        end_text_block(&mut text, &mut out.assistant);
                        (after_text, block_break) = (false, false);
                        let block = u64::try_from(out.assistant.len()).unwrap_or(u64::MAX);
                        if let Err(e) = ids.add(block, &tool_use.id, &tool_use.name) {
                            // As a malformed stream: this call never runs, nor any queued.
                            out.error = Some(AgentError::Stream(e.to_string()));
                            reading = false;
                            executor.stop_queued(not_run_after_stream_error());
                            continue;
                        }
                        // The API takes nothing but an object as a call's input: one that did
                        // not parse (a response cut off mid-call) goes back as `{}`, or every
                        // later request would be refused. The call's result says what was wrong.
                        let input = if tool_use.input.is_object() {
                            tool_use.input.clone()
                        } else {
                            out.unparsed_calls.push(tool_use.name.clone());
                            json!({})
                        };
                        out.assistant.push(json!({
                            "type": "tool_use", "id": tool_use.id, "name": tool_use.name, "input": input,
                        }));
                        // In the transcript before the call's hooks run.
                        if let Some(t) = transcript.as_deref_mut()
                            && let Some(notice) = t.blocks(&out.assistant[written..])
                        {
                            on_event(AgentEvent::Notice(&notice));
                        }
                        written = out.assistant.len();
                        entries.add(&tool_use.id, &abort);
                        executor.add_tool(tool_use.clone());
                        out.tool_uses += 1;
                        by_id.insert(tool_use.id.clone(), (tool_use, closed));
                    }
                    // Counted on the request's meter as it passed (`run_with_context`); the
                    // transcript's lines carry them, with the response's id, model and
                    // request id, as Claude Code's do.
                    Some(Ok(event @ (StreamEvent::Usage { .. } | StreamEvent::MessageStart { .. }))) => {
                        if let Some(t) = transcript.as_deref_mut() {
                            t.observe(&event);
                        }
                    }
                    Some(Ok(StreamEvent::StopReason(reason))) => {
                        if let Some(t) = transcript.as_deref_mut() {
                            t.observe(&StreamEvent::StopReason(reason.clone()));
                        }
                        out.stop_reason = Some(reason);
                    }
                    // The message is complete; a connection a gateway keeps open is not waited on.
                    Some(Ok(StreamEvent::MessageStop)) => reading = false,
                    Some(Err(e)) => {
                        out.error = Some(e);
                        reading = false;
                        // The calls already started finish; those still queued are not run
                        // (each still gets a result saying so).
                        executor.stop_queued(not_run_after_stream_error());
                    }
                    None => reading = false,
                },
            }
        }
        drop(entries);
        // The context goes on with the run's token, not this turn's.
        out.context = executor
            .final_context()
            .cloned()
            .map(|c| c.with_cancellation(hard.clone()));
        out
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::time::Instant;

    use futures::StreamExt as _;
    use serde_json::{Value, json};
    use tool_core::{
        MaxResultSize, ProgressSender, Tool, ToolError, ToolResult, ToolUseContext, async_trait,
    };
    use tool_exec::{Pipeline, StreamEvent, ToolUse};

    use super::*;

    /// `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` as Claude Code reads it: zero or below turns the cap
    /// off, anything that is not a number keeps the default.
    #[test]
    fn the_stop_hook_block_cap_reads_as_claude_codes() {
        use super::stop_hook_block_cap as cap;
        assert_eq!(cap(None), Some(8));
        assert_eq!(cap(Some(" 3 ")), Some(3));
        assert_eq!(cap(Some("0")), None);
        assert_eq!(cap(Some("-1")), None);
        assert_eq!(cap(Some("many")), Some(8));
    }
    /// A request's meter counts each attempt's last figure once: the same figure reported
    /// again (by the client, then by the loop reading the events the client held back) adds
    /// nothing, and a retried attempt's tokens stay counted when the next one counts from
    /// zero; the spend sees each report at once.
    #[test]
    fn a_meter_counts_each_attempts_last_figure_once() {
        let spend = Spend::default();
        let meter = spend.meter("claude-sonnet-4-5");
        let usage = |input_tokens, output_tokens| TokenUsage {
            input_tokens,
            output_tokens,
            ..TokenUsage::default()
        };
        meter.report(&usage(1_000, 1));
        assert_eq!(spend.tokens(), (1_000, 1));
        meter.next_attempt();
        meter.report(&usage(2_000, 1));
        meter.report(&usage(2_000, 1));
        meter.report(&usage(2_000, 20));
        assert_eq!(meter.total(), usage(3_000, 21));
        assert_eq!(spend.tokens(), (3_000, 21));
        assert!((spend.usd() - 0.009_315).abs() < 1e-12, "{}", spend.usd());
    }

    #[test]
    fn prices_follow_the_model_version() {
        for (model, price) in [
            ("claude-opus-4-5", (5.0, 25.0)),
            ("claude-opus-4-6-20260101", (5.0, 25.0)),
            ("claude-opus-4-1-20250805", (15.0, 75.0)),
            ("claude-opus-4-20250514", (15.0, 75.0)),
            ("claude-opus-4-0", (15.0, 75.0)),
            ("claude-3-opus-20240229", (15.0, 75.0)),
            ("claude-haiku-4-5", (1.0, 5.0)),
            ("claude-3-5-haiku-20241022", (0.8, 4.0)),
            ("claude-3-haiku-20240307", (0.25, 1.25)),
            ("claude-sonnet-4-5", (3.0, 15.0)),
        ] {
            assert_eq!(price_per_million(model), price, "{model}");
        }
    }

    type Stamps = Arc<Mutex<HashMap<String, Instant>>>;

    /// A model whose first answer is `calls` Stamp calls and whose second is text; it notes
    /// when it hands each finished tool_use block over (its `content_block_stop`).
    struct Scripted {
        calls: usize,
        handed: Stamps,
    }

    #[async_trait]
    impl ModelClient for Scripted {
        async fn stream(&self, request: &ModelRequest) -> Result<EventStream, AgentError> {
            let events: Vec<StreamEvent> = if request.messages.len() == 1 {
                (0..self.calls)
                    .map(|i| {
                        StreamEvent::ToolUse(ToolUse::new(format!("t{i}"), "Stamp", json!({})))
                    })
                    .chain([StreamEvent::MessageStop])
                    .collect()
            } else {
                vec![StreamEvent::Text("done".into()), StreamEvent::MessageStop]
            };
            let handed = Arc::clone(&self.handed);
            Ok(futures::stream::iter(events)
                .inspect(move |event| {
                    if let StreamEvent::ToolUse(t) = event {
                        handed.lock().unwrap().insert(t.id.clone(), Instant::now());
                    }
                })
                .map(Ok)
                .boxed())
        }
    }

    /// A tool that notes when its call starts.
    struct Stamp(Stamps);

    #[async_trait]
    impl Tool for Stamp {
        fn name(&self) -> &str {
            "Stamp"
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn description(&self) -> Cow<'_, str> {
            "notes when it starts".into()
        }
        fn max_result_size(&self) -> MaxResultSize {
            MaxResultSize::Chars(100)
        }
        fn is_concurrency_safe(&self, _input: &Value) -> bool {
            true
        }
        async fn call(
            &self,
            _input: Value,
            ctx: ToolUseContext,
            _progress: ProgressSender,
        ) -> Result<ToolResult, ToolError> {
            let id = ctx.tool_use_id().unwrap_or_default().to_owned();
            self.0.lock().unwrap().insert(id, Instant::now());
            Ok(ToolResult::text("ok"))
        }
    }

    #[test]
    fn hook_text_for_the_model_keeps_the_roles_alternating() {
        // After an assistant message: a new user message.
        let mut messages =
            vec![json!({"role": "assistant", "content": [{"type": "text", "text": "Done."}]})];
        push_user_text(&mut messages, "feedback".into());
        assert_eq!(
            messages[1],
            json!({"role": "user", "content": [{"type": "text", "text": "feedback"}]})
        );
        // After a user message (an empty assistant turn was not recorded): merged into it,
        // whether its content is a string or blocks.
        push_user_text(&mut messages, "more".into());
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[1]["content"][1]["text"], "more");
        let mut messages = vec![json!({"role": "user", "content": "the prompt"})];
        push_user_text(&mut messages, "feedback".into());
        assert_eq!(
            messages,
            [json!({"role": "user", "content": [
                {"type": "text", "text": "the prompt"},
                {"type": "text", "text": "feedback"}
            ]})]
        );
    }

    /// Every streamed call runs and gets its result. It also measures the time from a block's
    /// end in the stream to its tool's `call`, through the whole pipeline (lookup, schema,
    /// permission, hooks): printed, not asserted (speed is for benchmarks); run with
    /// `--nocapture` to see it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_streamed_call_runs_and_its_start_latency_is_printed() {
        let handed: Stamps = Arc::default();
        let started: Stamps = Arc::default();
        let client = Scripted {
            calls: 8,
            handed: Arc::clone(&handed),
        };
        let agent = AgentLoop::new(
            Arc::new(client),
            Arc::new(Pipeline::allow_all()),
            LoopConfig::new("m"),
        );
        let ctx = ToolUseContext::new("/")
            .with_tools(vec![Arc::new(Stamp(Arc::clone(&started))) as Arc<dyn Tool>]);
        let outcome = agent
            .run(ctx, "go", &CancellationToken::new(), &mut |_| {})
            .await;
        assert!(matches!(outcome.stop, Stop::Finished), "{}", outcome.stop);
        assert_eq!(outcome.final_text, "done");
        let results = outcome.messages[2]["content"].as_array().unwrap();
        assert_eq!(results.len(), 8);
        let (handed, started) = (handed.lock().unwrap(), started.lock().unwrap());
        assert_eq!(started.len(), 8, "every call ran");
        let mut micros: Vec<u128> = started
            .iter()
            .map(|(id, at)| at.duration_since(handed[id]).as_micros())
            .collect();
        micros.sort_unstable();
        eprintln!(
            "content_block_stop -> Tool::call, 8 parallel calls, µs: min {} median {} max {}",
            micros[0], micros[4], micros[7]
        );
    }

    /// A model (not the SSE parser, which refuses it itself) whose answer repeats a tool_use
    /// id: the call runs once, the run fails with the parser's message, and no request goes
    /// out with two results of one id.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_client_that_repeats_a_tool_use_id_runs_the_call_once() {
        struct Repeating(Arc<std::sync::atomic::AtomicUsize>);
        #[async_trait]
        impl ModelClient for Repeating {
            async fn stream(&self, _request: &ModelRequest) -> Result<EventStream, AgentError> {
                self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let call = || StreamEvent::ToolUse(ToolUse::new("t0", "Stamp", json!({})));
                Ok(
                    futures::stream::iter([call(), call(), StreamEvent::MessageStop])
                        .map(Ok)
                        .boxed(),
                )
            }
        }
        /// Counts its calls.
        struct Counted(Arc<std::sync::atomic::AtomicUsize>);
        #[async_trait]
        impl Tool for Counted {
            fn name(&self) -> &str {
                "Stamp"
            }
            fn input_schema(&self) -> Value {
                json!({"type": "object"})
            }
            fn description(&self) -> Cow<'_, str> {
                "counts its calls".into()
            }
            fn max_result_size(&self) -> MaxResultSize {
                MaxResultSize::Chars(100)
            }
            async fn call(
                &self,
                _input: Value,
                _ctx: ToolUseContext,
                _progress: ProgressSender,
            ) -> Result<ToolResult, ToolError> {
                self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Ok(ToolResult::text("ok"))
            }
        }
        let requests = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let agent = AgentLoop::new(
            Arc::new(Repeating(Arc::clone(&requests))),
            Arc::new(Pipeline::allow_all()),
            LoopConfig::new("m"),
        );
        let ctx = ToolUseContext::new("/")
            .with_tools(vec![Arc::new(Counted(Arc::clone(&calls))) as Arc<dyn Tool>]);
        let outcome = agent
            .run(ctx, "go", &CancellationToken::new(), &mut |_| {})
            .await;
        let Stop::Failed(e) = &outcome.stop else {
            panic!("{}", outcome.stop);
        };
        assert_eq!(
            e.to_string(),
            "block 1's tool_use (Stamp) has the id \"t0\" of block 0: a tool_use id comes once in a message"
        );
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(outcome.messages[1]["content"].as_array().unwrap().len(), 1);
        let results = outcome.messages[2]["content"].as_array().unwrap();
        assert_eq!(results.len(), 1, "{results:?}");
        assert_eq!(results[0]["tool_use_id"], "t0");
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    /// A tool named as given that answers with its name, and sets its flag when called
    /// (the call that makes an MCP server add a tool).
    struct Named(&'static str, Arc<std::sync::atomic::AtomicBool>);

    #[async_trait]
    impl Tool for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn description(&self) -> Cow<'_, str> {
            "answers with its name".into()
        }
        fn max_result_size(&self) -> MaxResultSize {
            MaxResultSize::Chars(100)
        }
        async fn call(
            &self,
            _input: Value,
            _ctx: ToolUseContext,
            _progress: ProgressSender,
        ) -> Result<ToolResult, ToolError> {
            self.1.store(true, std::sync::atomic::Ordering::SeqCst);
            Ok(ToolResult::text(self.0))
        }
    }

    /// A model that calls `Added` in its second answer, and notes the tools each request
    /// offers.
    struct CallsAdded(Arc<Mutex<Vec<Vec<String>>>>);

    #[async_trait]
    impl ModelClient for CallsAdded {
        async fn stream(&self, request: &ModelRequest) -> Result<EventStream, AgentError> {
            let names = request
                .tools
                .iter()
                .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
                .collect();
            let turn = {
                let mut seen = self.0.lock().unwrap();
                seen.push(names);
                seen.len()
            };
            let events = match turn {
                1 => vec![StreamEvent::ToolUse(ToolUse::new("t1", "First", json!({})))],
                2 => vec![StreamEvent::ToolUse(ToolUse::new("t2", "Added", json!({})))],
                _ => vec![StreamEvent::Text("done".into())],
            };
            Ok(
                futures::stream::iter(events.into_iter().chain([StreamEvent::MessageStop]))
                    .map(Ok)
                    .boxed(),
            )
        }
    }

    /// The main loop offers the tools as they are at each request (`refresh_tools`, which
    /// an MCP server's `tools/list_changed` feeds): a tool that appears while the first
    /// turn's call runs is offered in the second request, and its call finds it.
    #[tokio::test]
    async fn each_request_offers_the_tools_as_they_are_now() {
        let grown = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let first: Arc<dyn Tool> = Arc::new(Named("First", Arc::clone(&grown)));
        let added: Arc<dyn Tool> = Arc::new(Named("Added", Arc::default()));
        let refresh: tool_core::RefreshTools = {
            let (first, added, grown) = (first.clone(), added.clone(), Arc::clone(&grown));
            Arc::new(move || {
                if grown.load(std::sync::atomic::Ordering::SeqCst) {
                    vec![first.clone(), added.clone()]
                } else {
                    vec![first.clone()]
                }
            })
        };
        let seen = Arc::new(Mutex::new(Vec::new()));
        let agent = AgentLoop::new(
            Arc::new(CallsAdded(Arc::clone(&seen))),
            Arc::new(Pipeline::allow_all()),
            LoopConfig::new("m"),
        );
        let mut options = tool_core::ToolOptions {
            refresh_tools: Some(refresh),
            ..Default::default()
        };
        options.tools = vec![first].into();
        let ctx = ToolUseContext::new("/").with_options(options);
        let outcome = agent
            .run(ctx, "go", &CancellationToken::new(), &mut |_| {})
            .await;
        assert!(matches!(outcome.stop, Stop::Finished), "{}", outcome.stop);
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0], ["First"]);
        assert_eq!(seen[1], ["First", "Added"]);
        let second_results = outcome.messages[4]["content"].as_array().unwrap();
        assert_eq!(second_results[0]["tool_use_id"], "t2");
        assert_eq!(
            second_results[0]["content"], "Added",
            "{}",
            second_results[0]
        );
    }

    /// Answers with text, a call of a tool no one has, then more text, every time.
    struct TextAroundACall;

    #[async_trait]
    impl ModelClient for TextAroundACall {
        async fn stream(&self, _request: &ModelRequest) -> Result<EventStream, AgentError> {
            let events = vec![
                StreamEvent::Text("See src/a.rs".into()),
                StreamEvent::ToolUse(ToolUse::new("t1", "Nope", json!({}))),
                StreamEvent::Text("Next step: fix it.".into()),
                StreamEvent::StopReason("tool_use".into()),
                StreamEvent::MessageStop,
            ];
            Ok(futures::stream::iter(events).map(Ok).boxed())
        }
    }

    /// Found by review: the text blocks of an answer reached the final text joined with no
    /// separator (`See src/a.rsNext step: fix it.`). They are joined with a blank line.
    #[tokio::test]
    async fn the_text_blocks_of_an_answer_are_joined_with_a_blank_line() {
        let mut config = LoopConfig::new("m");
        config.max_turns = 1;
        let agent = AgentLoop::new(
            Arc::new(TextAroundACall),
            Arc::new(Pipeline::allow_all()),
            config,
        );
        let outcome = agent
            .run(
                ToolUseContext::new("/"),
                "go",
                &CancellationToken::new(),
                &mut |_| {},
            )
            .await;
        assert!(
            matches!(outcome.stop, Stop::MaxTurns(1)),
            "{}",
            outcome.stop
        );
        assert_eq!(outcome.final_text, "See src/a.rs\n\nNext step: fix it.");
    }
}
