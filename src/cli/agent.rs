//! `toolwright agent "<prompt>"`: runs the agent loop on the Anthropic Messages API in the
//! current directory, with the directory's settings (permission rules, hooks, `.mcp.json`),
//! its agent definitions (`.claude/agents`) and the Agent tool. Standard input that is no
//! terminal joins the prompt, as with Claude Code's `-p` (`git diff | toolwright agent -p
//! "review this"`).
//!
//! On a terminal, permission asks are put to the user (`y` / `n` / `always`), text streams
//! to standard output and the calls are listed on standard error as they start and finish.
//! With `--print` (or without a terminal) nobody is asked: asks become denials that say why.
//! `--print` writes only the final text (also that of an incomplete answer: the exit code
//! and the line on standard error say why it is incomplete). Ctrl-C interrupts the turn as
//! Claude Code's Esc does (every running tool is cancelled, Bash's command killed; every
//! tool_use still gets its result); a second Ctrl-C exits at once.

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tool_core::{CancellationToken, Tool, ToolUseContext};
use tool_exec::{DenyAsks, Hooks, LoopEvent, Pipeline};
use tools_builtin::tasks::TaskRegistry;
use toolwright::agent::prompting::{
    CallKey, NamedAsks, Stream, TerminalPrompter, Timeline, escape_controls, input_summary,
};
use toolwright::agent::{
    AgentEvent, AgentLoop, AgentOutcome, AgentTool, AnthropicClient, ClientConfig, LoopConfig,
    Stop, ToolSearchMode, load_agent_definitions, split_hook_messages,
};

use super::{escape_terminal_codes, hook_allow_reason};
use crate::session::{Session, SessionArgs};

/// Arguments of `toolwright agent`.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// What to ask the model. When standard input is not a terminal, what it carries is
    /// joined to the prompt (the prompt, a newline, the input), as Claude Code's `-p` joins
    /// it (`git diff | toolwright agent -p "review this"`); without a prompt, or with `-`,
    /// standard input is the prompt.
    #[arg(value_parser = parse_prompt)]
    pub prompt: Option<String>,
    #[command(flatten)]
    pub session: SessionArgs,
    /// The model: a name, or one of the aliases `sonnet`, `opus` and `haiku` (resolved as
    /// the Agent tool resolves them, `ANTHROPIC_DEFAULT_*_MODEL` first). Default:
    /// `ANTHROPIC_MODEL`, else the settings' `model`, else `claude-sonnet-4-5`.
    #[arg(long)]
    pub model: Option<String>,
    /// At most this many model requests (at least 1).
    #[arg(long, default_value_t = 20, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_turns: usize,
    /// Stop when the estimated spend reaches this many US dollars (a positive number).
    #[arg(long, value_parser = parse_dollars)]
    pub max_budget_usd: Option<f64>,
    /// `max_tokens` of each request (at least 1). Default: `CLAUDE_CODE_MAX_OUTPUT_TOKENS`,
    /// else 8192.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: Option<u32>,
    /// A system prompt.
    #[arg(long)]
    pub system_prompt: Option<String>,
    /// Non-interactive: nobody is asked (asks become denials) and only the final text is
    /// printed.
    #[arg(short = 'p', long)]
    pub print: bool,
    /// Print the whole conversation as JSON at the end (nobody is asked, as with --print).
    #[arg(long)]
    pub json: bool,
}

/// The model when nothing names one.
const DEFAULT_MODEL: &str = "claude-sonnet-4-5";

/// The model `agent` talks to, as Claude Code chooses it: `--model` (`flag`), else
/// `ANTHROPIC_MODEL` (the settings' `env` applied), else the settings' `model`
/// (`settings`), else [`DEFAULT_MODEL`]; what comes after the flag is also what
/// `--model default` names. An alias (`opus`) is the model it stands for: the API knows no
/// `opus`, and the cost estimate needs the real name.
fn agent_model(flag: Option<&str>, settings: Option<&str>) -> String {
    let configured = std::env::var("ANTHROPIC_MODEL")
        .ok()
        .filter(|m| !m.trim().is_empty())
        .or_else(|| settings.map(str::to_owned));
    let default_model = configured.map_or_else(
        || DEFAULT_MODEL.to_owned(),
        |m| toolwright::agent::subagent::resolve_model(&m, DEFAULT_MODEL),
    );
    match flag {
        Some(requested) => toolwright::agent::subagent::resolve_model(requested, &default_model),
        None => default_model,
    }
}

/// A prompt with something in it: the API refuses an empty message.
fn parse_prompt(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        Err("the prompt is empty: say what to ask the model".into())
    } else {
        Ok(text.to_owned())
    }
}

/// `max_tokens` when neither `--max-tokens` nor `CLAUDE_CODE_MAX_OUTPUT_TOKENS` says.
const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The `max_tokens` `CLAUDE_CODE_MAX_OUTPUT_TOKENS`' `value` asks for (Claude Code's
/// variable for the main loop's output limit): a positive whole number (white space around it allowed; one too large to hold is
/// the largest). Unset or blank, [`DEFAULT_MAX_TOKENS`]; any other value (`abc`, `0`,
/// `-1`) is not used: the default is, and a sentence naming the variable, its value and
/// what is used says so, as for `CLAUDE_CODE_MAX_RETRIES`.
fn max_output_tokens(value: Option<&str>) -> (u32, Option<String>) {
    let Some(raw) = value else {
        return (DEFAULT_MAX_TOKENS, None);
    };
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return (DEFAULT_MAX_TOKENS, None);
    }
    if trimmed.bytes().all(|b| b.is_ascii_digit()) && trimmed.bytes().any(|b| b != b'0') {
        return (trimmed.parse::<u32>().unwrap_or(u32::MAX), None);
    }
    (
        DEFAULT_MAX_TOKENS,
        Some(format!(
            "CLAUDE_CODE_MAX_OUTPUT_TOKENS={raw:?} is not a positive whole number of tokens; the default, {DEFAULT_MAX_TOKENS}, is used"
        )),
    )
}

/// The most of standard input the prompt takes (Claude Code's cap on piped input).
const MAX_STDIN_PROMPT: usize = 10 * 1024 * 1024;

/// How long standard input may send nothing before the run goes on without it, as Claude
/// Code does: a script's inherited pipe that nobody writes to must not hold the run.
const STDIN_FIRST_BYTE: std::time::Duration = std::time::Duration::from_secs(3);

/// The prompt of a run whose argument is `arg` (`-`: standard input alone), with what
/// standard input carries when it is not a terminal: the argument, a newline, then the
/// input (an empty or blank input adds nothing). Standard input is read whole, up to
/// [`MAX_STDIN_PROMPT`], once its first byte has come; when none has come within
/// [`STDIN_FIRST_BYTE`], the argument goes alone (said on standard error). The error, a
/// sentence, is why there is no prompt to send.
async fn prompt_text(arg: Option<&str>) -> Result<String, String> {
    let arg = arg.filter(|a| *a != "-");
    let no_prompt = "no prompt: give it as an argument, or on standard input";
    if std::io::stdin().is_terminal() {
        return arg.map(str::to_owned).ok_or_else(|| {
            format!("{no_prompt} (standard input is a terminal, which is not read)")
        });
    }
    let input = match read_stdin_prompt().await {
        Ok(Some(input)) => input,
        Ok(None) => {
            return match arg {
                Some(arg) => {
                    eoutln!(
                        "toolwright agent: nothing came on standard input within {} s; going on without it (redirect it from /dev/null to skip the wait)",
                        STDIN_FIRST_BYTE.as_secs()
                    );
                    Ok(arg.to_owned())
                }
                None => Err(format!(
                    "{no_prompt} (nothing came on standard input within {} s)",
                    STDIN_FIRST_BYTE.as_secs()
                )),
            };
        }
        Err(e) => return Err(e),
    };
    match (arg, input.trim().is_empty()) {
        (Some(arg), true) => Ok(arg.to_owned()),
        (Some(arg), false) => Ok(format!("{arg}\n{input}")),
        (None, true) => Err(format!("{no_prompt} (standard input was empty)")),
        (None, false) => Ok(input),
    }
}

/// Standard input, read whole on a thread of its own (a read cannot be cancelled: one
/// still blocked when the run ends is left behind). `None`: no byte came within
/// [`STDIN_FIRST_BYTE`]; an end of input is a byte here (the input is then empty).
async fn read_stdin_prompt() -> Result<Option<String>, String> {
    let (first_tx, first_rx) = tokio::sync::oneshot::channel::<()>();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        let mut input = Vec::new();
        let mut first = Some(first_tx);
        let failure = super::read_stdin_chunks(|chunk| {
            if let Some(first) = first.take() {
                let _ = first.send(());
            }
            input.extend_from_slice(chunk);
            input.len() <= MAX_STDIN_PROMPT
        });
        // The end of the input is a byte too (the input is then empty); a read that failed
        // before any byte is not.
        if failure.is_none()
            && let Some(first) = first.take()
        {
            let _ = first.send(());
        }
        let result = match failure {
            Some(e) => Err(format!("cannot read standard input: {e}")),
            None if input.len() > MAX_STDIN_PROMPT => Err(format!(
                "standard input holds more than {} MiB, the most a prompt takes from it: write it to a file and name the file in the prompt",
                MAX_STDIN_PROMPT / (1024 * 1024)
            )),
            None => Ok(input),
        };
        let _ = done_tx.send(result);
    });
    if tokio::time::timeout(STDIN_FIRST_BYTE, first_rx)
        .await
        .is_err()
    {
        return Ok(None);
    }
    let input = done_rx
        .await
        .map_err(|_| "cannot read standard input".to_owned())??;
    String::from_utf8(input).map(Some).map_err(|e| {
        format!(
            "standard input is not valid UTF-8 (at byte {}): the prompt must be text",
            e.utf8_error().valid_up_to()
        )
    })
}

/// A positive, finite number of US dollars (`nan`, `inf`, zero and negative numbers are
/// refused: the limit could never be reached, or would stop the run before it began).
fn parse_dollars(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(usd) if usd.is_finite() && usd > 0.0 => Ok(usd),
        _ => Err(format!("`{text}` is not a positive number of US dollars")),
    }
}

/// Asks whether to trust the folder `toolwright agent` runs in, when the run is interactive
/// (no `--print`/`--json`, standard input and error are terminals) and the folder is not
/// trusted yet. Called before anything else starts, so a "yes" brings in the folder's own
/// settings `env` too. `None`: nothing was asked.
pub fn ask_trust_if_interactive(args: &AgentArgs) -> Option<bool> {
    if !is_interactive(args) {
        return None;
    }
    ask_trust(&args.session.options(false).cwd)
}

/// Whether a person answers this run's questions: no `--print`/`--json`, and standard input
/// and error are terminals.
fn is_interactive(args: &AgentArgs) -> bool {
    !(args.print || args.json) && std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Asks whether to trust the folder when the folder is not trusted yet; a yes is recorded.
/// `None` when nothing needs asking.
fn ask_trust(cwd: &std::path::Path) -> Option<bool> {
    let dir = std::fs::canonicalize(cwd).ok()?;
    if crate::trust::is_trusted(&dir) {
        return None;
    }
    toolwright::agent::prompting::discard_typed_ahead(None);
    eout!(
        "Do you trust the files in {}?\nIts own settings can allow commands, run hooks and start MCP servers. \
         Trust it [y/N]? ",
        dir.display()
    );
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).ok()?;
    let yes = matches!(line.trim(), "y" | "Y" | "yes" | "Yes");
    if yes && let Err(e) = crate::trust::set_trusted(&dir, true) {
        eoutln!("toolwright agent: {e}");
    }
    Some(yes)
}

/// Ctrl-C: the first press interrupts the turn (`soft`: the agent loop cancels every running
/// call, as Claude Code's Esc does; the run ends interrupted); the second, as SIGTERM and
/// SIGHUP (the terminal closed) do first or after a Ctrl-C, kills the background tasks, which
/// run in sessions of their own out of the terminal's reach, and cancels everything (`hard`:
/// the run ends in order, its MCP servers' short grace and SessionEnd hooks included); after
/// that, any further signal exits at once ([`exit_on_the_spot`](super::exit_on_the_spot):
/// the commands' process groups killed, the session's directory removed when nothing is
/// saved in it). The
/// same signal again within [`SAME_SIGNAL_WINDOW`](super::SAME_SIGNAL_WINDOW) is the same
/// press delivered twice (`timeout`, `make` or a wrapper signals the process and then its
/// group), as for `run` ([`Signals::next`](super::Signals::next)). `signals` were installed
/// when the run began.
/// The exit code of the last signal received is kept in `signalled` (0: none).
fn watch_interrupts(
    mut signals: super::Signals,
    soft: CancellationToken,
    hard: CancellationToken,
    tasks: TaskRegistry,
    signalled: Arc<std::sync::atomic::AtomicU8>,
) {
    tokio::spawn(async move {
        // 0: running; 1: interrupted; 2: everything cancelled; then exit.
        let mut level = 0u8;
        loop {
            let exit_code = signals.next().await;
            signalled.store(exit_code, std::sync::atomic::Ordering::SeqCst);
            let interrupt_key = exit_code == 130;
            level = match (level, interrupt_key) {
                // A third Ctrl-C, or a signal after everything was cancelled: the
                // cancellation is not waited for (a command that ignores SIGTERM, a hook
                // that hangs).
                (2.., _) => {
                    tasks.kill_all();
                    // The process groups killed and the session's directory removed too.
                    super::exit_on_the_spot(exit_code)
                }
                // Each signal acts before anything is printed: printing can fail (standard
                // error closed), and must never keep a signal from acting.
                (0, true) => {
                    soft.cancel();
                    eoutln!(
                        "\n(interrupted: cancelling the running tools; Ctrl-C again stops waiting for them)"
                    );
                    1
                }
                // SIGTERM or SIGHUP, or a second Ctrl-C: everything is cancelled and the run
                // ends in order (the MCP servers' short grace, SessionEnd hooks), without
                // waiting for what the first one cancelled.
                (_, _) => {
                    // Whoever sent it may follow with SIGKILL, which the background tasks,
                    // in sessions of their own, would outlive.
                    tasks.kill_all();
                    hard.cancel();
                    if interrupt_key {
                        eoutln!("\n(cancelling everything; Ctrl-C again exits at once)");
                    } else {
                        eoutln!("\n(cancelling everything)");
                    }
                    2
                }
            };
        }
    });
}

/// Whether the Agent tool is offered, as the built-in tools are: not in simple mode
/// (`CLAUDE_CODE_SIMPLE`), not under a tool-wide deny rule (`Agent`, `Task`, `Agent(*)`,
/// `*`).
fn agent_offered(ctx: &tool_core::ToolUseContext, agent_tool: &dyn Tool) -> bool {
    let denied = ctx
        .app_state()
        .get::<tool_perms::SessionEngine>()
        .is_some_and(|engine| engine.0.is_blanket_denied(agent_tool));
    tool_registry::ToolFilter::from_env().admits(agent_tool.name()) && !denied
}

/// The live display of a run (standard error; text goes to standard output), through the
/// [`Timeline`] the terminal's questions share: what comes while a question waits is shown
/// after its answer.
struct Display {
    started: Instant,
    timeline: Arc<Timeline>,
    /// Standard output is a terminal: the model's text is shown with its control
    /// sequences escaped (written to a file or pipe, it is kept as it is).
    terminal_output: bool,
}

/// The timeline of `toolwright agent`: the model's text to standard output (a closed one
/// dropped, as [`out!`] does), the lines and questions to standard error with their control
/// characters escaped.
fn agent_timeline(terminal_output: bool) -> Timeline {
    let sink = Box::new(|stream: Stream, text: &str| match stream {
        Stream::Out => {
            out!("{text}");
            let _ = std::io::stdout().flush();
        }
        Stream::Err => eout!("{}", escape_terminal_codes(text)),
    });
    Timeline::new(sink, terminal_output).showing_starts()
}

impl Display {
    fn event(&mut self, event: &AgentEvent<'_>) {
        match event {
            AgentEvent::Text(t) => {
                if self.terminal_output {
                    self.timeline.text(&escape_terminal_codes(t));
                } else {
                    self.timeline.text(t);
                }
            }
            AgentEvent::ToolStarted { tool_use, .. } => {
                let summary = input_summary(&tool_use.input, 60);
                let line = format!(
                    "[{:>6.1}s] ⏺ {}{}",
                    self.started.elapsed().as_secs_f64(),
                    escape_controls(&tool_use.name),
                    if summary.is_empty() {
                        String::new()
                    } else {
                        format!("({summary})")
                    }
                );
                let call = CallKey {
                    agent_id: None,
                    tool_use_id: tool_use.id.clone(),
                };
                self.timeline.start_line(call, &line);
            }
            AgentEvent::ToolProgress(tool_use, data) => {
                if let Some(tool) = data["tool"].as_str() {
                    let line = format!(
                        "           ↳ {} · {}",
                        escape_controls(&tool_use.name),
                        escape_controls(tool)
                    );
                    // A sub-agent's call starting: a question about it waits for this line.
                    match (data["agentId"].as_str(), data["toolUseId"].as_str()) {
                        (Some(agent), Some(id)) => self.timeline.start_line(
                            CallKey {
                                agent_id: Some(agent.to_owned()),
                                tool_use_id: id.to_owned(),
                            },
                            &line,
                        ),
                        _ => self.timeline.line(&line),
                    }
                }
            }
            AgentEvent::ToolResult(tool_use, outcome) => {
                let mark = if outcome.result.is_error {
                    "✗"
                } else {
                    "✓"
                };
                let mut line = format!(
                    "[{:>6.1}s]   {mark} {} · {} ms",
                    self.started.elapsed().as_secs_f64(),
                    escape_controls(&tool_use.describe()),
                    outcome.duration.as_millis()
                );
                if let Some(reason) = hook_allow_reason(outcome) {
                    line.push_str(&format!(
                        " · allowed by a PreToolUse hook: {}",
                        escape_controls(&reason)
                    ));
                }
                if outcome.result.is_error {
                    let text = outcome.result.content.joined_text();
                    let first = text.lines().next().unwrap_or_default();
                    line.push_str(&format!(
                        " · {}",
                        escape_controls(&first.chars().take(100).collect::<String>())
                    ));
                }
                self.timeline.line(&line);
            }
            AgentEvent::Notice(text) => {
                self.timeline
                    .line(&format!("toolwright: {}", escape_controls(text)));
            }
            // Each response's text starts on a line of its own.
            AgentEvent::Request(_) => self.timeline.break_line(),
        }
    }
}

/// The requests of the end-of-run line: all of them, as its tokens and cost count them, with
/// those the sub-agents and WebFetch's small model sent: `3 request(s) (1 by sub-agents)`.
fn requests_text(requests: toolwright::agent::RequestCounts) -> String {
    let mut by = Vec::new();
    if requests.sub_agents > 0 {
        by.push(format!("{} by sub-agents", requests.sub_agents));
    }
    if requests.web_fetch > 0 {
        by.push(format!("{} by WebFetch's model", requests.web_fetch));
    }
    let by = if by.is_empty() {
        String::new()
    } else {
        format!(" ({})", by.join(", "))
    };
    format!("{} request(s){by}", requests.total())
}

/// The exit code for `stop`; an interrupted or cancelled run exits as the signal that
/// stopped it says (`signalled`: 130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP; 0 when
/// none was received).
fn exit_code(stop: &Stop, signalled: u8) -> ExitCode {
    match stop {
        Stop::Finished | Stop::HookStopped(_) => ExitCode::SUCCESS,
        Stop::Interrupted | Stop::Cancelled if signalled != 0 => ExitCode::from(signalled),
        Stop::Interrupted | Stop::Cancelled => ExitCode::from(130),
        Stop::MaxTurns(_)
        | Stop::Budget(_)
        | Stop::Rejected
        | Stop::PromptBlocked(_)
        | Stop::Refused
        | Stop::Incomplete(_)
        | Stop::Failed(_) => ExitCode::from(1),
    }
}

/// Runs the SessionEnd hooks (`reason: "other"`: the one-shot run is over). They share a
/// budget (the runner's: 1.5 s, raised to the largest configured timeout, at most 60 s),
/// so exiting never hangs on one.
async fn session_end(hooks: &dyn Hooks, ctx: &ToolUseContext) {
    let ended = hooks
        .loop_event(LoopEvent::SessionEnd { reason: "other" }, ctx)
        .await;
    for notice in split_hook_messages(&ended.messages).1 {
        eoutln!("toolwright: {notice}");
    }
}

/// Creates the directory (empty, owner-only) beside the session's results directory where
/// each SessionStart hook gets its own `CLAUDE_ENV_FILE` (`sessionstart-hook-<i>.sh`, as in
/// Claude Code), all sourced before each Bash command; `None` (with a notice) when it cannot
/// be created.
fn session_env_dir(ctx: &ToolUseContext) -> Option<PathBuf> {
    let dir = ctx.results_dir()?.parent()?.to_path_buf();
    let path = dir.join(crate::session::SESSION_ENV_DIR);
    let created = std::fs::create_dir_all(&dir).and_then(|()| {
        let mut builder = std::fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&path)
    });
    match created {
        Ok(()) => Some(path),
        Err(e) => {
            eoutln!(
                "toolwright: cannot create {} for SessionStart hooks: {e}",
                path.display()
            );
            None
        }
    }
}

/// The Agent tool as last made, with the names of the tools its description was made from.
type DescribedAgentTool = (Vec<String>, Arc<dyn Tool>);

/// Runs `toolwright agent`. `trusted`: the answer to the trust question, asked before the
/// runtime started (see [`ask_trust_if_interactive`]).
pub async fn run(args: &AgentArgs, trusted: Option<bool>) -> ExitCode {
    // Installed first: from here a signal is this run's to act on, and the default action
    // (ending the process) no longer does. Until the session is open nothing has started,
    // and a signal ends the run there.
    let mut signals = super::Signals::install();
    // After a signal, output nobody reads does not hold the run.
    super::exit_when_output_stalls_after_a_signal();
    // Before anything starts: without a prompt there is nothing to run. Standard input may
    // take its time (a writer that keeps the pipe open), or never end.
    let read = tokio::select! {
        read = prompt_text(args.prompt.as_deref()) => read,
        code = signals.next() => {
            eoutln!("toolwright agent: cancelled by a signal while reading the prompt from standard input");
            return ExitCode::from(code);
        }
    };
    let prompt = match read {
        Ok(prompt) => prompt,
        Err(e) => {
            eoutln!("toolwright agent: {e}");
            return ExitCode::from(2);
        }
    };
    let mut options = args.session.options(false);
    if trusted.is_some() {
        options.trusted = trusted;
    }
    // Before the key is looked for: an `apiKeyHelper` the settings name is not run here.
    let settings = crate::session::agent_settings(&options);
    for notice in &settings.notices {
        eoutln!("toolwright agent: {notice}");
    }
    let client_config = match ClientConfig::from_env_with_warnings() {
        Ok((c, warnings)) => {
            for warning in warnings {
                eoutln!("toolwright agent: {warning}");
            }
            c
        }
        Err(e) => {
            eoutln!("toolwright agent: {e} (try `toolwright demo` for a run without a model)");
            return ExitCode::from(2);
        }
    };
    let base_url = client_config.base_url.clone();
    let client = match AnthropicClient::new(client_config) {
        Ok(c) => c,
        Err(e) => {
            eoutln!("toolwright agent: {e}");
            return ExitCode::from(2);
        }
    };
    // `--max-tokens` wins over the variable, which a settings `env` may set.
    let max_tokens = args.max_tokens.unwrap_or_else(|| {
        // Bytes that are not UTF-8 make a value that is no number, which is said.
        let value = std::env::var_os("CLAUDE_CODE_MAX_OUTPUT_TOKENS")
            .map(|v| v.to_string_lossy().into_owned());
        let (tokens, warning) = max_output_tokens(value.as_deref());
        if let Some(warning) = warning {
            eoutln!("toolwright agent: {warning}");
        }
        tokens
    });
    let quiet = args.print || args.json;
    let interactive = is_interactive(args);
    let model = agent_model(args.model.as_deref(), settings.model.as_deref());
    // A signal while the session opens (MCP servers can take their startup timeout) ends
    // the run there: the servers being started go with the dropped future.
    let opened = tokio::select! {
        opened = Session::open(&options) => opened,
        code = signals.next() => {
            eoutln!("toolwright agent: cancelled by a signal while the session opened");
            return ExitCode::from(code);
        }
    };
    let session = match opened {
        Ok(s) => s,
        Err(e) => {
            eoutln!("toolwright agent: {e}");
            return ExitCode::from(2);
        }
    };
    for notice in &session.notices {
        eoutln!("toolwright: {notice}");
    }

    let soft = CancellationToken::new();
    let signalled = Arc::new(std::sync::atomic::AtomicU8::new(0));
    watch_interrupts(
        signals,
        soft.clone(),
        session.ctx.cancellation().clone(),
        tools_builtin::tasks::task_registry(&session.ctx),
        Arc::clone(&signalled),
    );

    let terminal_output = std::io::stdout().is_terminal();
    let timeline = Arc::new(agent_timeline(terminal_output));
    let terminal = interactive.then(|| {
        Arc::new(
            TerminalPrompter::new(soft.clone())
                .with_timeline(Arc::clone(&timeline))
                .with_notifications(Arc::clone(&session.hooks), session.ctx.clone()),
        )
    });
    let pipeline = if let Some(terminal) = &terminal {
        // The prompter learns which call asks: its question follows the call's start line
        // and names the sub-agent that asks.
        Pipeline::new(
            Arc::new(NamedAsks::new(Arc::clone(&session.permissions))),
            Arc::clone(terminal) as Arc<dyn tool_exec::Prompter>,
            Arc::clone(&session.hooks),
        )
    } else {
        let why = if quiet {
            "a non-interactive run: --print or --json"
        } else {
            "standard input or standard error is not a terminal"
        };
        // A PermissionRequest hook there for ExitPlanMode may approve it in the user's place
        // (a catch-all one says nothing of plans); without one, plan mode would never be
        // left, and EnterPlanMode is refused.
        Pipeline::new(
            Arc::new(crate::session::no_prompts(
                Arc::clone(&session.permissions),
                &session.hook_runner,
                why,
            )),
            Arc::new(DenyAsks),
            Arc::clone(&session.hooks),
        )
    };
    let config = LoopConfig {
        max_tokens,
        max_turns: args.max_turns,
        system_prompt: args.system_prompt.clone(),
        tool_search: ToolSearchMode::from_env(&base_url),
        transcript: Some(session.transcript_path.clone()),
        ..LoopConfig::new(model.clone())
    };
    // Each retry is said on stderr (in every mode: stdout carries the answer), in the
    // timeline's order: a wait of up to a minute is not silence.
    let retry_timeline = Arc::clone(&timeline);
    let client = client.with_retry_notices(move |text| {
        retry_timeline.line(&format!("toolwright agent: {}", escape_controls(text)));
    });
    // WebSearch asks the same API, not streamed (its results are whole blocks).
    let search_config = client.config().clone();
    let client: Arc<dyn toolwright::agent::client::ModelClient> = Arc::new(client);
    let agent_loop = AgentLoop::new(Arc::clone(&client), Arc::new(pipeline), config);
    // WebFetch's prompt is applied by a small model, as in Claude Code, its tokens counted
    // with the run's.
    session
        .ctx
        .app_state()
        .set(tools_builtin::web_fetch::WebFetchModelHook(Arc::new(
            toolwright::agent::web_fetch::PageReader::new(
                client,
                toolwright::agent::subagent::resolve_model("haiku", &model),
                agent_loop.spend().clone(),
            ),
        )));
    // WebSearch searches with the main model and the API's web_search server tool, as in
    // Claude Code, its tokens counted with the run's.
    match toolwright::agent::web_search::WebSearcher::new(
        search_config,
        model.clone(),
        agent_loop.spend().clone(),
    ) {
        Ok(searcher) => {
            session
                .ctx
                .app_state()
                .set(tools_builtin::web_search::WebSearchBackendHook(Arc::new(
                    searcher,
                )));
        }
        Err(e) => eoutln!("toolwright: WebSearch has no model to search with: {e}"),
    }

    let ctx = session.ctx.clone();
    let mut permission = ctx.permission().clone();
    // Asks reach the prompter (which refuses them with a reason when nobody can answer).
    permission.avoid_prompts = false;
    let mut tool_options = ctx.options().clone();
    tool_options.model.clone_from(&model);
    tool_options.max_budget_usd = args.max_budget_usd;
    tool_options.non_interactive = !interactive;
    tool_options.session_env_dir = session_env_dir(&ctx);
    let tools: Vec<Arc<dyn Tool>> = ctx.tools().to_vec();
    // An untrusted folder's definitions are not loaded: they could replace
    // general-purpose's system prompt, as its settings are not read either.
    let trusted = options
        .trusted
        .unwrap_or_else(|| crate::trust::is_trusted(ctx.cwd()));
    let (definitions, problems) = load_agent_definitions(ctx.cwd(), trusted);
    let agent_tool = AgentTool::new(agent_loop.clone(), definitions);
    // The Agent tool goes among the built-ins, by name, ahead of the MCP tools.
    let agent_tool = agent_offered(&ctx, &agent_tool).then_some(agent_tool);
    let agent_tool_offered = agent_tool.is_some();
    // Its description lists what each agent type gets out of the tools offered: made again
    // when they change (an MCP server's tools come or go), else the same tool is offered.
    let described: std::sync::Mutex<Option<DescribedAgentTool>> = Default::default();
    let with_agent_tool = move |mut tools: Vec<Arc<dyn Tool>>| {
        if let Some(agent_tool) = &agent_tool {
            let names: Vec<String> = tools.iter().map(|t| t.name().to_owned()).collect();
            let mut described = described
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let tool = match &*described {
                Some((seen, tool)) if *seen == names => Arc::clone(tool),
                _ => {
                    let tool: Arc<dyn Tool> =
                        Arc::new(agent_tool.clone().with_caller_tools(&tools));
                    *described = Some((names, Arc::clone(&tool)));
                    tool
                }
            };
            let at = tools
                .iter()
                .position(|t| t.is_mcp() || t.name() > "Agent")
                .unwrap_or(tools.len());
            tools.insert(at, tool);
        }
        tools
    };
    if agent_tool_offered {
        for problem in problems {
            eoutln!("toolwright: {problem}");
        }
    }
    let tools = with_agent_tool(tools);
    // The hooks' `if` conditions must know the Agent tool's rules (`Agent(reviewer)`).
    session.rule_matcher.set_tools(tools.clone());
    // An MCP server's new tools reach the next request (the loop calls `refresh_tools`) and
    // the hooks' `if` conditions.
    let _follow = session.mcp.is_some().then(|| {
        let current = Arc::clone(&session.current_tools);
        let refresh: tool_core::RefreshTools = Arc::new(move || with_agent_tool(current()));
        tool_options.refresh_tools = Some(Arc::clone(&refresh));
        session.follow_tool_changes(refresh, |_| {})
    });
    let ctx = ctx
        .with_permission(permission)
        .with_options(tool_options)
        .with_tools(tools);

    let mut display = Display {
        started: Instant::now(),
        timeline: Arc::clone(&timeline),
        terminal_output,
    };
    // SessionStart hooks: their context goes to the model ahead of the prompt.
    let hooks = Arc::clone(agent_loop.pipeline().hooks());
    let end_ctx = ctx.clone();
    let started = hooks
        .loop_event(
            LoopEvent::SessionStart {
                source: "startup",
                model: Some(&model),
                env_dir: ctx.options().session_env_dir.as_deref(),
            },
            &ctx,
        )
        .await;
    let (mut context, notices) = split_hook_messages(&started.messages);
    for notice in notices {
        eoutln!("toolwright: {notice}");
    }
    // The skills the Skill tool can load, ahead of everything else: the model cannot call a
    // skill it has never heard of.
    if let Some(listing) = skills_listing(&ctx) {
        context.insert(0, listing);
    }
    // A session that starts in plan mode is told so, and where its plan goes, as one that
    // enters it is by EnterPlanMode's result.
    if let Some(reminder) = tools_builtin::enter_plan_mode::plan_mode_reminder(&ctx) {
        context.insert(0, reminder);
    }
    let outcome = if let Some(reason) = started.stop {
        // `continue: false` on SessionStart: nothing is sent.
        AgentOutcome {
            messages: Vec::new(),
            final_text: String::new(),
            turns: 0,
            usage: toolwright::agent::TokenUsage::default(),
            tool_uses: 0,
            stop: Stop::HookStopped(reason),
            stop_reason: None,
            tool_starts: Vec::new(),
        }
    } else {
        // With --print or --json, standard output holds the final text (the JSON) alone,
        // but the user's notices (a hook's error or system message) still go to standard
        // error, as SessionStart's do.
        let mut on_event = |event: AgentEvent<'_>| {
            if !quiet || matches!(event, AgentEvent::Notice(_)) {
                display.event(&event);
            }
        };
        agent_loop
            .run_with_context(ctx, &context, &prompt, &soft, &mut on_event)
            .await
    };

    if args.json {
        let starts: Vec<_> = outcome
            .tool_starts
            .iter()
            .map(|s| {
                json!({"id": s.id, "name": s.name, "after_block_stop_us": u64::try_from(s.after_block_stop.as_micros()).unwrap_or(u64::MAX)})
            })
            .collect();
        outln!(
            "{}",
            json!({
                "messages": outcome.messages,
                "final_text": outcome.final_text,
                "stop": outcome.stop.to_string(),
                "success": outcome.stop.is_success(),
                "turns": outcome.turns,
                "usage": outcome.usage.to_json(),
                "cost_usd": agent_loop.spend().usd(),
                "tool_starts": starts,
            })
        );
    } else if args.print {
        // The answer, also when the run did not end the normal way (still cut off, stopped
        // by the API, out of turns): the text was paid for, and the exit code and the line
        // on stderr say it is incomplete. A run that failed without any text writes nothing.
        if outcome.stop.is_success() || !outcome.final_text.is_empty() {
            // Exactly the model's text into a pipe; on a terminal, its escape sequences
            // shown, not run (they could clear the screen or retitle the window).
            if std::io::stdout().is_terminal() {
                out!("{}", escape_terminal_codes(&outcome.final_text));
            } else {
                out!("{}", outcome.final_text);
            }
            if !outcome.final_text.ends_with('\n') {
                outln!();
            }
        }
    } else {
        let (input, output) = agent_loop.spend().tokens();
        timeline.line(&format!(
            "[{}; {}, {input} input / {output} output tokens, ~${:.4}]",
            escape_terminal_codes(&outcome.stop.to_string()),
            requests_text(agent_loop.spend().requests()),
            agent_loop.spend().usd()
        ));
    }
    // Why the run ended, when that is no plain finish: an error, or a hook's `stopReason`
    // (shown to the user, as Claude Code shows it). Its text may come from a server or a
    // hook: escape sequences are shown, not run.
    let hook_stop = matches!(outcome.stop, toolwright::agent::Stop::HookStopped(Some(_)));
    if (!outcome.stop.is_success() || hook_stop) && quiet {
        eoutln!(
            "toolwright agent: {}",
            escape_terminal_codes(&outcome.stop.to_string())
        );
    }
    // Background commands end with the run (the session's end kills them): said, since
    // their results told the model they run.
    super::name_background_commands_stopped("agent", &session.ctx);
    // The run's output is complete before SessionEnd hooks run.
    let _ = std::io::stdout().flush();
    if let Some(terminal) = &terminal {
        terminal
            .finish_notifications(std::time::Duration::from_secs(2))
            .await;
    }
    // The session's token is cancelled after a SIGTERM or SIGHUP; the SessionEnd
    // hooks still run (within their own budget).
    let end_ctx = end_ctx.with_cancellation(CancellationToken::new());
    session_end(hooks.as_ref(), &end_ctx).await;
    // Background (`async`) hooks the run started end before it does (exiting would kill
    // them), each within its timeout; Ctrl-C stops the wait.
    let hard = session.ctx.cancellation().clone();
    let pending = hooks.background_pending();
    if pending > 0 && !soft.is_cancelled() && !hard.is_cancelled() {
        eoutln!("{}", super::waiting_for_hooks_line("agent", pending));
        tokio::select! {
            () = hooks.wait_background() => {}
            () = soft.cancelled() => {}
            () = hard.cancelled() => {}
        }
    }
    if hard.is_cancelled() {
        // After SIGTERM or SIGHUP: the servers get a short grace to stop what
        // their cancelled calls run (a kill on the spot leaves a served command running).
        let _ = super::end_mcp_servers_after_signal(&session, &mut super::Signals::install()).await;
    } else {
        session.close_mcp().await;
    }
    drop(session);
    exit_code(
        &outcome.stop,
        signalled.load(std::sync::atomic::Ordering::SeqCst),
    )
}

/// The skills `ctx` can load, as Claude Code tells the model of them: a reminder listing
/// each name and description, when the Skill tool is offered and any skill exists.
fn skills_listing(ctx: &ToolUseContext) -> Option<String> {
    tools_builtin::skill::skills_listing(ctx)
        .map(|listing| format!("<system-reminder>\n{listing}\n</system-reminder>"))
}
