//! The streaming executor: tool calls start while the model's response is still streaming.
//!
//! ```text
//! stream:  [Glob]──[Grep]──[Read a]──[Read b]────[Edit]───────[Bash]──|end
//! run:      Glob ████                                                     (safe, starts at once)
//!                 Grep ██████                                             (safe: joins Glob)
//!                        Read a ███   Read b ██                           (safe)
//!                                              Edit ███                   (unsafe: waits for all
//!                                                                          earlier, runs alone)
//!                                                      Bash ████████     (unsafe: waits for Edit)
//! results:  Glob, Grep, Read a, Read b, Edit, Bash    (always in arrival order)
//! ```
//!
//! Rules (design invariants 1-3, 5):
//! - a block starts when nothing runs, or when it and everything running are
//!   concurrency-safe, and fewer than the cap (default 10) are running; the queue is FIFO
//!   and an unsafe block is a barrier for everything after it;
//! - progress is forwarded the moment it arrives; results are handed out strictly in arrival
//!   order, exactly one per tool_use id, whatever fails, panics or is cancelled;
//! - context modifiers of unsafe tools apply when they finish, before the next tool starts;
//!   those of concurrency-safe tools are dropped with a warning;
//! - safety is judged on the input as the model wrote it, when the block arrives; a call
//!   started as safe whose input a hook or the user then makes unsafe waits, just before the
//!   tool runs, until it can run alone (nothing new starts meanwhile), and counts as unsafe;
//! - a Bash call that fails to run successfully cancels its running and queued siblings
//!   (the [`SiblingPolicy`]); [`interrupt`](StreamingToolExecutor::interrupt) cancels tools
//!   whose interrupt behaviour is `Cancel` and lets `Block` tools that have started finish
//!   (one still in its hooks or permission is stopped there);
//!   [`discard`](StreamingToolExecutor::discard) cancels everything and yields nothing more.
//!
//! A background task owns the queue and wakes only on events (a new block, a finished call, a
//! command); there is no polling.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::stream::FuturesUnordered;
use futures::{Stream, StreamExt};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinError;
use tokio_util::sync::CancellationToken;
use tool_core::{
    InterruptBehavior, ProgressSender, ToolProgress, ToolUseContext, find_tool, tool_use_error,
};
use tracing::Instrument;

use crate::pipeline::{
    CallOutcome, Ending, ExclusiveGate, Pipeline, Scheduled, ToolStart, ToolUse,
};
use crate::seams::REJECT_MESSAGE;

/// The default number of calls that may run at once.
pub const DEFAULT_MAX_CONCURRENCY: usize = 10;

/// Open files one running call may need ([`ExecutorConfig::fit_to_open_files`]): a command's
/// pipes, its scratch files, a hook's three pipes, with room to spare.
pub const FILES_PER_CALL: u64 = 8;

/// Open files kept back for the process itself ([`ExecutorConfig::fit_to_open_files`]): its
/// runtime, standard streams, MCP connections, logs.
pub const FILES_KEPT_BACK: u64 = 64;

/// How long the calls still running get to end after a hard interrupt (the host's
/// cancellation) before the executor answers them itself: three times the pipeline's
/// [`CANCEL_GRACE`](crate::CANCEL_GRACE), which a cancelled tool gets to wind down and its
/// post hooks get again, so that only a call that cannot end is answered so — one stuck in
/// a system call that never returns (the `realpath` or read of a path on a hung network
/// mount), which no cancellation reaches. Its task is left behind.
pub const STUCK_CALL_GRACE: std::time::Duration =
    std::time::Duration::from_secs(crate::pipeline::CANCEL_GRACE.as_secs() * 3);

/// Which failures cancel the other calls of the turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SiblingPolicy {
    /// A Bash call that ran and failed (non-zero exit outside the exemptions, timeout, spawn
    /// failure) cancels its siblings; refusals by validation or permission do not, nor does
    /// a read-only command that failed (`ls docs`, `cat x`: Claude Code since 2.1.128).
    #[default]
    BashFailure,
    /// Nothing cancels siblings (Claude Code since 2.1.161).
    Never,
    /// Any error result cancels siblings (Claude Code 2.0.77, all tools).
    AnyError,
}

/// Executor settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecutorConfig {
    /// How many calls may run at once (at least 1).
    pub max_concurrency: usize,
    /// Which failures cancel siblings.
    pub sibling_policy: SiblingPolicy,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        Self {
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            sibling_policy: SiblingPolicy::default(),
        }
    }
}

/// The variables that set the concurrency cap, the first that gives one winning.
const CONCURRENCY_VARIABLES: [&str; 2] = [
    "TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY",
    "CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY",
];

impl ExecutorConfig {
    /// The defaults, with the cap from `TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY` or else
    /// `CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY`, fitted to the open-file limit
    /// ([`from_env_with_warnings`](Self::from_env_with_warnings)). What is wrong with the
    /// variables' values, and a cap lowered to the limit, is traced as a warning (target
    /// `tool_exec::executor`), each sentence once per process however often the configuration
    /// is read (for each run, each agent loop and sub-agent); a host that shows it to its user
    /// takes it from [`from_env_with_warnings`](Self::from_env_with_warnings).
    pub fn from_env() -> Self {
        static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        let (config, warnings) = Self::from_env_with_warnings();
        if !warnings.is_empty() {
            let mut said = SAID
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            for warning in warnings {
                if !said.contains(&warning) {
                    tracing::warn!("{warning}");
                    said.push(warning);
                }
            }
        }
        config
    }

    /// [`from_lookup`](Self::from_lookup) of this process's environment, the cap then
    /// fitted to its open-file limit ([`fit_to_open_files`](Self::fit_to_open_files)), with
    /// what a user should be told about either.
    pub fn from_env_with_warnings() -> (Self, Vec<String>) {
        let (config, mut warnings) = Self::from_lookup(&|name| std::env::var(name).ok());
        let (config, fitted) = match tool_core::process::open_file_limit() {
            Some(limit) => config.fit_to_open_files(limit),
            None => (config, None),
        };
        warnings.extend(fitted);
        (config, warnings)
    }

    /// The configuration with its cap lowered, when it is higher, to as many calls as
    /// `open_files` descriptors (the soft `RLIMIT_NOFILE`) can hold at once in one executor
    /// (the limit is the process's: executors running side by side, sub-agents' beside their
    /// parent's, each fit their own cap and may together still run past it)
    /// ([`FILES_PER_CALL`] each, past [`FILES_KEPT_BACK`] for the process), with a sentence
    /// saying so: a cap raised past it would have the calls past it fail with "Too many open
    /// files" (a command that cannot start, a scratch file that cannot be made) instead of
    /// waiting their turn. Found by review: with `ulimit -n 256` and a cap of 150, 71 of 150
    /// commands failed.
    #[must_use]
    pub fn fit_to_open_files(mut self, open_files: u64) -> (Self, Option<String>) {
        let fits = usize::try_from(open_files.saturating_sub(FILES_KEPT_BACK) / FILES_PER_CALL)
            .unwrap_or(usize::MAX)
            .max(1);
        if self.max_concurrency <= fits {
            return (self, None);
        }
        self.max_concurrency = fits;
        (
            self,
            Some(format!(
                "the open-file limit ({open_files}, `ulimit -n`) holds about {fits} calls at \
                 once: at most {fits} run at a time (raise the limit to run more)"
            )),
        )
    }

    /// The defaults, with the cap from the variables `env` gives:
    /// `TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY`, or else `CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY`,
    /// a positive base-10 whole number (white space around it allowed). An empty value
    /// counts as unset. Any other value (`0`, `abc`, `-3`, `1.5`, `10s`) is not used: the
    /// next variable's value is, else the default ([`DEFAULT_MAX_CONCURRENCY`], Claude
    /// Code's fallback too), and a sentence naming the variable, its value and what is used
    /// instead is returned beside the configuration (`TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY="0"
    /// is not a positive whole number of calls; the default, 10, is used`). A whole number
    /// too large to hold is the largest, with a sentence saying so.
    ///
    /// **Decision:** Claude Code reads the variable with `parseInt`, which takes `1.5` as 1,
    /// `10s` as 10 and `-3` as -3; such values are refused here and said to be, as the MCP
    /// limits' are.
    pub fn from_lookup(env: &dyn Fn(&str) -> Option<String>) -> (Self, Vec<String>) {
        // The values refused before the one used, told what is used instead; then a value
        // too large to hold, said to be taken as the largest.
        let mut refused = Vec::new();
        let mut too_large = None;
        let mut chosen = None;
        for name in CONCURRENCY_VARIABLES {
            let Some(raw) = env(name) else { continue };
            let value = raw.trim();
            if value.is_empty() {
                continue;
            }
            match value.parse::<usize>() {
                Ok(n) if n > 0 => {
                    chosen = Some((n, format!("{name}={raw:?} is used")));
                    break;
                }
                // A whole number too large to hold asks for no cap in practice: the largest
                // is used, and said to be (it is no mistake of form).
                Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => {
                    too_large = Some(format!(
                        "{name}={raw:?} is too large: the largest is {} calls, which is used",
                        usize::MAX
                    ));
                    chosen = Some((
                        usize::MAX,
                        format!("{name}={raw:?}, taken as the largest, is used"),
                    ));
                    break;
                }
                _ => refused.push(format!(
                    "{name}={raw:?} is not a positive whole number of calls"
                )),
            }
        }
        let (max_concurrency, instead) = chosen.unwrap_or_else(|| {
            (
                DEFAULT_MAX_CONCURRENCY,
                format!("the default, {DEFAULT_MAX_CONCURRENCY}, is used"),
            )
        });
        let mut warnings: Vec<String> = refused
            .into_iter()
            .map(|problem| format!("{problem}; {instead}"))
            .collect();
        warnings.extend(too_large);
        (
            Self {
                max_concurrency,
                ..Self::default()
            },
            warnings,
        )
    }
}

/// The finished call of one tool_use, handed out in arrival order.
#[derive(Debug)]
pub struct ToolCallResult {
    /// The block.
    pub tool_use: ToolUse,
    /// What the pipeline produced (the tool_result and messages).
    pub outcome: CallOutcome,
    /// The executor's context at the time of yielding (with modifiers applied so far).
    pub context: ToolUseContext,
}

/// What the executor's stream yields.
#[derive(Debug)]
pub enum ExecutorEvent {
    /// A call started running (its pipeline began); `running` lists every call running now,
    /// this one included.
    Started {
        /// The call's id.
        tool_use_id: String,
        /// The ids of all calls running at this moment.
        running: Vec<String>,
    },
    /// Progress from a running call, forwarded at once.
    Progress(ToolProgress),
    /// A finished call, in arrival order.
    Result(Box<ToolCallResult>),
}

#[derive(Debug)]
enum Command {
    /// A block, and the span current where it was added (its call's parent).
    Add(ToolUse, tracing::Span),
    Finish,
    Interrupt,
    Discard,
    StopQueued(String),
}

enum Message {
    Event(ExecutorEvent),
    End(ToolUseContext),
}

/// Runs tool_use blocks as they arrive. See the [module docs](self).
///
/// Create it inside a tokio runtime; it spawns one driver task and one task per call.
/// Dropping it before the end cancels every running call.
///
/// Each call's `execute_tool` span is a child of the span current where its block was added
/// ([`add_tool`](Self::add_tool), [`ExecutorHandle::add_tool`]), or, when none is, of the
/// span current where the executor was created: the calls belong to the caller's trace
/// (an `invoke_agent` or `chat` span), although they run in tasks of their own.
#[derive(Debug)]
pub struct StreamingToolExecutor {
    commands: mpsc::UnboundedSender<Command>,
    messages: mpsc::UnboundedReceiver<Message>,
    turn: CancellationToken,
    final_context: Option<ToolUseContext>,
    discarded: bool,
    ended: bool,
}

impl StreamingToolExecutor {
    /// An executor running calls through `pipeline` in `ctx` (its tools, cwd, permission
    /// state). Cancelling `ctx`'s token cancels everything, like a hard interrupt.
    pub fn new(pipeline: Arc<Pipeline>, ctx: ToolUseContext, config: ExecutorConfig) -> Self {
        let (commands, command_rx) = mpsc::unbounded_channel();
        let (message_tx, messages) = mpsc::unbounded_channel();
        let host = ctx.cancellation().clone();
        let turn = host.child_token();
        let sibling = turn.child_token();
        let (upgrades, upgrade_rx) = mpsc::unbounded_channel();
        let span = tracing::Span::current();
        let driver = Driver {
            span: span.clone(),
            upgrades,
            waiting_alone: std::collections::BTreeMap::new(),
            queued_text: None,
            host,
            pipeline,
            ctx,
            config: ExecutorConfig {
                max_concurrency: config.max_concurrency.max(1),
                ..config
            },
            turn: turn.clone(),
            sibling,
            records: Vec::new(),
            next_yield: 0,
            running: 0,
            running_unsafe: 0,
            interrupted: None,
            sibling_error: None,
            discarded: false,
            adding_done: false,
            abandon_at: None,
            tasks: FuturesUnordered::new(),
            out: message_tx,
        };
        tokio::spawn(driver.run(command_rx, upgrade_rx).instrument(span));
        Self {
            commands,
            messages,
            turn,
            final_context: None,
            discarded: false,
            ended: false,
        }
    }

    /// Adds a tool_use block (call it the moment the block closes in the stream).
    pub fn add_tool(&self, tool_use: ToolUse) {
        self.handle().add_tool(tool_use);
    }

    /// Says no more blocks will come: the stream ends after the last result.
    pub fn finish(&self) {
        self.handle().finish();
    }

    /// A user interrupt: running calls whose interrupt behaviour is `Cancel` are cancelled
    /// and answered with the rejection text; `Block` calls whose tool has started finish
    /// normally, and those still in their hooks or permission are stopped there (their
    /// hooks killed) unless they ended otherwise first; calls not yet started (and any added
    /// later) are answered with the rejection text.
    ///
    /// This is Claude Code's `interrupt` abort, for a host that takes a message the user
    /// sends while tools run. Its Esc or Ctrl-C (`user-cancel`) cancels every call, `Block`
    /// ones too: for that, cancel the token of the context the executor was made with (the
    /// agent loop cancels its turn's).
    pub fn interrupt(&self) {
        self.handle().interrupt();
    }

    /// Starts nothing more: calls not yet started (and any added later) are answered with
    /// `text` as an error; running calls finish normally, whatever their interrupt
    /// behaviour. For a response that broke off: what had started goes on, the rest of the
    /// model's plan is not carried out. An interrupt or a sibling's failure still takes
    /// precedence with its own text.
    pub fn stop_queued(&self, text: impl Into<String>) {
        self.handle().stop_queued(text);
    }

    /// A handle that adds blocks from another task (the one reading the model's stream)
    /// while this one consumes results.
    pub fn handle(&self) -> ExecutorHandle {
        ExecutorHandle {
            commands: self.commands.clone(),
        }
    }

    /// A streaming fallback: everything is cancelled and nothing more is yielded.
    pub fn discard(&mut self) {
        self.discarded = true;
        let _ = self.commands.send(Command::Discard);
    }

    /// The context after the last call, with every modifier applied; `Some` once the stream
    /// has ended.
    pub fn final_context(&self) -> Option<&ToolUseContext> {
        self.final_context.as_ref()
    }
}

/// Adds blocks to a [`StreamingToolExecutor`] from another task. Cheap to clone. Commands
/// sent after the executor is gone are ignored.
#[derive(Debug, Clone)]
pub struct ExecutorHandle {
    commands: mpsc::UnboundedSender<Command>,
}

impl ExecutorHandle {
    /// See [`StreamingToolExecutor::add_tool`].
    pub fn add_tool(&self, tool_use: ToolUse) {
        let _ = self
            .commands
            .send(Command::Add(tool_use, tracing::Span::current()));
    }

    /// See [`StreamingToolExecutor::finish`].
    pub fn finish(&self) {
        let _ = self.commands.send(Command::Finish);
    }

    /// See [`StreamingToolExecutor::interrupt`].
    pub fn interrupt(&self) {
        let _ = self.commands.send(Command::Interrupt);
    }

    /// See [`StreamingToolExecutor::stop_queued`].
    pub fn stop_queued(&self, text: impl Into<String>) {
        let _ = self.commands.send(Command::StopQueued(text.into()));
    }
}

impl Drop for StreamingToolExecutor {
    fn drop(&mut self) {
        if !self.ended {
            self.turn.cancel();
            let _ = self.commands.send(Command::Discard);
        }
    }
}

impl Stream for StreamingToolExecutor {
    type Item = ExecutorEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ExecutorEvent>> {
        if self.discarded || self.ended {
            return Poll::Ready(None);
        }
        match self.messages.poll_recv(cx) {
            Poll::Ready(Some(Message::Event(event))) => Poll::Ready(Some(event)),
            Poll::Ready(Some(Message::End(ctx))) => {
                self.final_context = Some(ctx);
                self.ended = true;
                Poll::Ready(None)
            }
            Poll::Ready(None) => {
                self.ended = true;
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Runs a complete list of blocks (non-streaming mode) and returns one result per block in
/// order, plus the final context. Same scheduling as the streaming executor with every block
/// known up front: runs of consecutive concurrency-safe calls run together (up to the cap),
/// each unsafe call runs alone.
pub async fn run_tools(
    pipeline: Arc<Pipeline>,
    ctx: ToolUseContext,
    tool_uses: Vec<ToolUse>,
    config: ExecutorConfig,
) -> (Vec<ToolCallResult>, ToolUseContext) {
    let fallback = ctx.clone();
    let mut executor = StreamingToolExecutor::new(pipeline, ctx, config);
    for tool_use in tool_uses {
        executor.add_tool(tool_use);
    }
    executor.finish();
    let mut results = Vec::new();
    while let Some(event) = executor.next().await {
        if let ExecutorEvent::Result(result) = event {
            results.push(*result);
        }
    }
    let ctx = executor.final_context().cloned().unwrap_or(fallback);
    (results, ctx)
}

#[derive(Debug, PartialEq, Eq)]
enum State {
    Queued,
    Running,
    Done,
    Yielded,
}

struct Record {
    tool_use: ToolUse,
    safe: bool,
    interrupt: InterruptBehavior,
    state: State,
    /// Running, but held before its tool started (waiting to run alone): an interrupt or
    /// `stop_queued` answers it as a queued call.
    held: bool,
    /// A `Block` call a user interrupt stopped before its tool started (in its PreToolUse
    /// hooks or its permission): answered as a call that never started.
    stopped: bool,
    /// Whether its tool has started (set once it runs).
    start: Option<ToolStart>,
    token: Option<CancellationToken>,
    /// When it started running: the duration of a call answered without its task
    /// ([`Driver::abandon_stuck`]) counts from here.
    started_at: Option<std::time::Instant>,
    outcome: Option<CallOutcome>,
    /// The parent of the call's span.
    span: tracing::Span,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Interrupted {
    /// User interrupt: `Cancel` tools are cancelled, `Block` tools finish.
    Soft,
    /// Everything is cancelled (the user rejected a call, the host dropped the executor).
    Hard,
}

type Task = Pin<Box<dyn Future<Output = (usize, Result<CallOutcome, JoinError>)> + Send>>;

struct Driver {
    /// The span current where the executor was created: the parent of the spans of calls
    /// added where none is current.
    span: tracing::Span,
    pipeline: Arc<Pipeline>,
    ctx: ToolUseContext,
    config: ExecutorConfig,
    /// The host's token (the context's): its cancellation is a hard interrupt.
    host: CancellationToken,
    turn: CancellationToken,
    sibling: CancellationToken,
    records: Vec<Record>,
    next_yield: usize,
    running: usize,
    running_unsafe: usize,
    interrupted: Option<Interrupted>,
    sibling_error: Option<String>,
    discarded: bool,
    adding_done: bool,
    /// Set by a hard interrupt: when the calls still running are answered without their
    /// tasks ([`STUCK_CALL_GRACE`]).
    abandon_at: Option<tokio::time::Instant>,
    tasks: FuturesUnordered<Task>,
    out: mpsc::UnboundedSender<Message>,
    /// Set by [`StreamingToolExecutor::stop_queued`]: the answer of every call not started.
    queued_text: Option<String>,
    /// Where calls scheduled as concurrency-safe ask to run alone (their input changed).
    upgrades: mpsc::UnboundedSender<(usize, oneshot::Sender<()>)>,
    /// Those waiting to run alone, by record index; granted lowest first.
    waiting_alone: std::collections::BTreeMap<usize, oneshot::Sender<()>>,
}

fn sibling_text(desc: &str) -> String {
    tool_use_error(format_args!("Cancelled: parallel tool call {desc} errored"))
}

impl Driver {
    async fn run(
        mut self,
        mut commands: mpsc::UnboundedReceiver<Command>,
        mut upgrades: mpsc::UnboundedReceiver<(usize, oneshot::Sender<()>)>,
    ) {
        let mut commands_open = true;
        loop {
            if self.discarded && self.tasks.is_empty() {
                break;
            }
            if self.adding_done && self.next_yield == self.records.len() && self.tasks.is_empty() {
                let _ = self.out.send(Message::End(self.ctx.clone()));
                break;
            }
            tokio::select! {
                // In this order: the host's cancel before a command sent after it (a block
                // added after the cancel is rejected, never started), commands before
                // finished calls (a new block starts as soon as it may), then upgrades. Each
                // arm's condition turns off once handled, so none starves the others.
                biased;
                // The host cancelled everything: every call is answered as after a hard
                // interrupt (the rejection text), not each with whatever step it was at.
                () = self.host.cancelled(), if self.interrupted != Some(Interrupted::Hard) && !self.discarded => {
                    self.interrupt(Interrupted::Hard);
                }
                command = commands.recv(), if commands_open => match command {
                    Some(Command::Add(tool_use, span)) => self.add(tool_use, span),
                    Some(Command::Finish) => self.adding_done = true,
                    Some(Command::Interrupt) => self.interrupt(Interrupted::Soft),
                    Some(Command::Discard) => self.discard(),
                    Some(Command::StopQueued(text)) => {
                        self.queued_text.get_or_insert(text);
                        self.cancel_held();
                        self.process_queue();
                    }
                    None => {
                        // The handle is gone: nobody will read results; stop everything.
                        commands_open = false;
                        self.discard();
                    }
                },
                Some((index, joined)) = self.tasks.next(), if !self.tasks.is_empty() => self.complete(index, joined),
                // Calls that did not end within the grace after a hard interrupt.
                () = tokio::time::sleep_until(self.abandon_at.unwrap_or_else(tokio::time::Instant::now)), if self.abandon_at.is_some() && !self.tasks.is_empty() => {
                    self.abandon_stuck();
                }
                // Never `None`: the driver holds a sender.
                Some((index, granted)) = upgrades.recv() => self.wait_alone(index, granted),
                else => {
                    // No command source and no task: nothing can happen any more.
                    if !self.adding_done {
                        self.adding_done = true;
                    }
                    if self.tasks.is_empty() && self.next_yield == self.records.len() {
                        let _ = self.out.send(Message::End(self.ctx.clone()));
                        break;
                    }
                }
            }
            self.flush();
        }
    }

    fn add(&mut self, tool_use: ToolUse, span: tracing::Span) {
        if self.discarded {
            return;
        }
        let span = if span.is_disabled() {
            self.span.clone()
        } else {
            span
        };
        let index = self.records.len();
        let tool = find_tool(self.ctx.tools(), &tool_use.name).cloned();
        let (safe, interrupt) = match &tool {
            // A tool that panics here is taken as not concurrency-safe and blocking (the safe
            // defaults); its call still runs through the pipeline, which reports the panic.
            Some(tool) => {
                let safe = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    tool.parse_input(tool_use.input.clone())
                        .is_ok_and(|input| tool.is_concurrency_safe(&input))
                }))
                .unwrap_or(false);
                let interrupt =
                    std::panic::catch_unwind(AssertUnwindSafe(|| tool.interrupt_behavior()))
                        .unwrap_or(InterruptBehavior::Block);
                (safe, interrupt)
            }
            None => (true, InterruptBehavior::Cancel),
        };
        self.records.push(Record {
            tool_use,
            safe,
            interrupt,
            state: State::Queued,
            held: false,
            stopped: false,
            start: None,
            token: None,
            started_at: None,
            outcome: None,
            span,
        });
        if tool.is_none() {
            // Unknown tools are answered at once and never wait in the queue; their calls
            // are traced and counted as those the pipeline runs are.
            let record = &self.records[index];
            let outcome = record.span.in_scope(|| {
                self.pipeline
                    .answer_unknown_tool(&record.tool_use, self.ctx.tools())
            });
            self.finish_record(index, outcome);
            return;
        }
        self.process_queue();
    }

    /// A call scheduled as concurrency-safe whose input no longer is asks to run alone: it
    /// counts as unsafe from now on (nothing new starts beside it, its context modifier
    /// applies) and is let go once nothing else runs.
    fn wait_alone(&mut self, index: usize, granted: oneshot::Sender<()>) {
        let record = &mut self.records[index];
        if record.state != State::Running {
            return;
        }
        if record.safe {
            record.safe = false;
            self.running_unsafe += 1;
        }
        // Its tool has not started: an interrupt (or `stop_queued`) that came first answers
        // it as a queued call.
        if self.interrupted.is_some() || self.queued_text.is_some() {
            record.held = true;
            if let Some(token) = &record.token {
                token.cancel();
            }
            return;
        }
        record.held = true;
        self.waiting_alone.insert(index, granted);
        self.let_alone_calls_go();
    }

    /// Lets the first call waiting to run alone go once every other running call has
    /// finished, calls waiting behind it aside (they run nothing while they wait, and the
    /// first must not wait for them: two such calls would wait for each other).
    fn let_alone_calls_go(&mut self) {
        // One cancelled while it waited (an interrupt, `stop_queued`) is not let go: it ends
        // as a call that never started.
        self.waiting_alone.retain(|&index, _| {
            self.records[index]
                .token
                .as_ref()
                .is_none_or(|t| !t.is_cancelled())
        });
        let Some(&first) = self.waiting_alone.keys().next() else {
            return;
        };
        let others_running = self.records[self.next_yield..]
            .iter()
            .enumerate()
            .map(|(offset, r)| (self.next_yield + offset, r))
            .any(|(i, r)| {
                r.state == State::Running && i != first && !self.waiting_alone.contains_key(&i)
            });
        if !others_running && let Some(granted) = self.waiting_alone.remove(&first) {
            self.records[first].held = false;
            let _ = granted.send(());
        }
    }

    /// Whether `tool_use` ran as a read-only call: judged on the input it ran with (a hook's
    /// or the user's rewrite, else the model's after the schema step's repairs, such as a
    /// `"timeout": "60000"` read as a number), as its permission and scheduling were. A
    /// panicking flag reads as "not read-only".
    fn ran_read_only(&self, tool_use: &ToolUse, outcome: &CallOutcome) -> bool {
        find_tool(self.ctx.tools(), &tool_use.name).is_some_and(|tool| {
            std::panic::catch_unwind(AssertUnwindSafe(|| match &outcome.input_rewritten {
                Some(input) => tool.is_read_only(input),
                None => tool
                    .parse_input(tool_use.input.clone())
                    .is_ok_and(|input| tool.is_read_only(&input)),
            }))
            .unwrap_or(false)
        })
    }

    fn can_start(&self, record: &Record) -> bool {
        self.running < self.config.max_concurrency
            && (self.running == 0 || (record.safe && self.running_unsafe == 0))
    }

    fn process_queue(&mut self) {
        for index in self.next_yield..self.records.len() {
            if self.records[index].state != State::Queued {
                continue;
            }
            // A discarded executor starts nothing more: its results are thrown away, and a
            // call started now would only trace a cancelled run that never was.
            let text = self
                .abort_text(index)
                .or_else(|| self.discarded.then(|| REJECT_MESSAGE.to_owned()));
            if let Some(text) = text {
                let outcome = CallOutcome::synthetic(&self.records[index].tool_use, text);
                self.finish_record(index, outcome);
                continue;
            }
            if !self.can_start(&self.records[index]) {
                break;
            }
            self.start(index);
        }
    }

    /// The synthetic text for a call that must not run (or whose result must be replaced),
    /// by Claude Code's priority: sibling error, then interrupt.
    fn abort_text(&self, index: usize) -> Option<String> {
        if let Some(desc) = &self.sibling_error {
            return Some(sibling_text(desc));
        }
        match self.interrupted {
            Some(Interrupted::Hard) => Some(REJECT_MESSAGE.to_owned()),
            Some(Interrupted::Soft)
                if self.records[index].state == State::Queued
                    || self.records[index].held
                    || self.records[index].stopped =>
            {
                Some(REJECT_MESSAGE.to_owned())
            }
            Some(Interrupted::Soft)
                if self.records[index].interrupt == InterruptBehavior::Cancel =>
            {
                Some(REJECT_MESSAGE.to_owned())
            }
            _ if self.records[index].state == State::Queued || self.records[index].held => {
                self.queued_text.clone()
            }
            _ => None,
        }
    }

    fn start(&mut self, index: usize) {
        let token = self.sibling.child_token();
        let start = ToolStart::new(&token);
        let record = &mut self.records[index];
        record.state = State::Running;
        record.token = Some(token.clone());
        record.start = Some(start.clone());
        record.started_at = Some(std::time::Instant::now());
        self.running += 1;
        if !record.safe {
            self.running_unsafe += 1;
        }
        let tool_use = record.tool_use.clone();
        // Starts are first-in first-out, so nothing after the first queued record runs:
        // stopping there keeps a long queue linear.
        let running = self.records[self.next_yield..]
            .iter()
            .take_while(|r| r.state != State::Queued)
            .filter(|r| r.state == State::Running)
            .map(|r| r.tool_use.id.clone())
            .collect();
        if !self.discarded {
            let _ = self.out.send(Message::Event(ExecutorEvent::Started {
                tool_use_id: tool_use.id.clone(),
                running,
            }));
        }
        // The call's order is its start's, taken here, before its task is spawned: spawned
        // tasks may begin in any order (a Read answers "unchanged" only from an earlier one).
        let ctx = self
            .ctx
            .clone()
            .with_cancellation(token)
            .with_next_call_order();
        let out = self.out.clone();
        let progress = ProgressSender::new(
            tool_use.id.clone(),
            Arc::new(move |p: ToolProgress| {
                let _ = out.send(Message::Event(ExecutorEvent::Progress(p)));
            }),
        );
        let pipeline = Arc::clone(&self.pipeline);
        let gate = self.records[index].safe.then(|| ExclusiveGate {
            index,
            requests: self.upgrades.clone(),
        });
        let scheduled = Scheduled { gate, start };
        // The call's task holds its parent from now on (a record lives as long as the turn).
        let span = std::mem::replace(&mut self.records[index].span, tracing::Span::none());
        let handle = tokio::spawn(
            async move {
                pipeline
                    .run_scheduled(&tool_use, ctx, progress, Some(scheduled))
                    .await
            }
            .instrument(span),
        );
        self.tasks
            .push(Box::pin(async move { (index, handle.await) }));
    }

    fn complete(&mut self, index: usize, joined: Result<CallOutcome, JoinError>) {
        // A call the host's cancellation ended may be back before the driver saw the token.
        if self.host.is_cancelled()
            && self.interrupted != Some(Interrupted::Hard)
            && !self.discarded
        {
            self.interrupt(Interrupted::Hard);
        }
        self.running -= 1;
        if !self.records[index].safe {
            self.running_unsafe -= 1;
        }
        // Cancelled while it waited to run alone.
        self.waiting_alone.remove(&index);
        let mut outcome = joined.unwrap_or_else(|e| {
            // The pipeline catches panics in tools; this is a panic in the pipeline itself.
            let tool_use = &self.records[index].tool_use;
            let mut out = CallOutcome::synthetic(
                tool_use,
                tool_use_error(format_args!("Error calling tool ({}): {e}", tool_use.name)),
            );
            out.ending = Ending::Failed {
                class: "Panic".into(),
            };
            out
        });
        self.records[index].state = State::Done;
        let mut replaced = false;
        // A call stopped before its tool that ended otherwise first (a rule's or a hook's
        // deny, the user's refusal: the prompter withdraws its question on an interrupt with
        // a note saying so) keeps that answer; only the stop's own ending is replaced.
        let ended_otherwise = self.records[index].stopped && outcome.ending != Ending::Cancelled;
        if outcome.ending != Ending::Succeeded
            && !ended_otherwise
            && let Some(text) = self.abort_text(index)
        {
            replaced = true;
            // Cancelled by a sibling's failure or an interrupt: the synthetic text replaces
            // what the call returned. Not a call that ran to success first: it did what it
            // did, and "rejected, NOT written" would have the model do it again (Claude Code
            // replaces those too).
            outcome.result = tool_core::ToolResultBlock::error(&outcome.result.tool_use_id, text);
            outcome.context_modifier = None;
        }
        if let Some(modifier) = outcome.context_modifier.take() {
            if self.records[index].safe {
                tracing::warn!(tool = %self.records[index].tool_use.name, "context modifier from a concurrency-safe tool dropped");
            } else {
                let before = self.ctx.clone();
                match std::panic::catch_unwind(AssertUnwindSafe(|| modifier.apply(before))) {
                    Ok(ctx) => self.ctx = ctx,
                    Err(_) => {
                        tracing::error!(tool = %self.records[index].tool_use.name, "context modifier panicked; context unchanged")
                    }
                }
            }
        }
        // A result the executor itself replaced (the call was cancelled by an interrupt or a
        // sibling) is no failure of the call's own: it cancels nobody, as in Claude Code.
        let cancels_siblings = self.sibling_error.is_none()
            && !replaced
            && match self.config.sibling_policy {
                SiblingPolicy::BashFailure => {
                    let tool_use = &self.records[index].tool_use;
                    outcome.call_failed()
                        && tool_use.name == "Bash"
                        && !self.ran_read_only(tool_use, &outcome)
                }
                SiblingPolicy::AnyError => outcome.result.is_error,
                SiblingPolicy::Never => false,
            };
        let hard_stop = outcome.interrupt_turn || outcome.harness_error.is_some();
        self.records[index].outcome = Some(outcome);
        if cancels_siblings {
            self.sibling_error = Some(self.records[index].tool_use.describe());
            self.sibling.cancel();
        }
        if hard_stop {
            self.interrupt(Interrupted::Hard);
        }
        // A call waiting to run alone may go now: only after the cancellations this result
        // makes, so that a call this failure or rejection cancels is never let go first.
        self.let_alone_calls_go();
        // Hand out what is ready before starting the next call, so that a consumer sees a
        // result before the start it made possible.
        self.flush();
        self.process_queue();
    }

    fn finish_record(&mut self, index: usize, outcome: CallOutcome) {
        let record = &mut self.records[index];
        record.state = State::Done;
        record.outcome = Some(outcome);
        record.span = tracing::Span::none();
    }

    fn interrupt(&mut self, kind: Interrupted) {
        if self.interrupted != Some(Interrupted::Hard) {
            self.interrupted = Some(kind);
        }
        if kind == Interrupted::Hard && self.abandon_at.is_none() {
            self.abandon_at = Some(tokio::time::Instant::now() + STUCK_CALL_GRACE);
        }
        for index in self.next_yield..self.records.len() {
            let record = &mut self.records[index];
            match record.state {
                State::Running
                    if kind == Interrupted::Hard
                        || record.interrupt == InterruptBehavior::Cancel
                        || record.held =>
                {
                    if let Some(token) = &record.token {
                        token.cancel();
                    }
                }
                // A `Block` call whose tool has not started yet is stopped where it is.
                State::Running => {
                    record.stopped |= record.start.as_ref().is_some_and(ToolStart::stop);
                }
                State::Queued => {
                    let outcome = CallOutcome::synthetic(&record.tool_use, REJECT_MESSAGE);
                    self.finish_record(index, outcome);
                }
                _ => {}
            }
        }
    }

    /// Answers the calls still running [`STUCK_CALL_GRACE`] after a hard interrupt as the
    /// interrupt answers any call, and stops waiting for their tasks (dropped handles
    /// detach them: a task stuck in a system call ends when the call returns, if ever, and
    /// its outcome goes nowhere). Every tool_use still gets exactly one result, with the
    /// time the call ran until then.
    fn abandon_stuck(&mut self) {
        self.tasks = FuturesUnordered::new();
        for index in 0..self.records.len() {
            if self.records[index].state != State::Running {
                continue;
            }
            let tool_use = &self.records[index].tool_use;
            tracing::warn!(
                tool = %tool_use.name,
                id = %tool_use.id,
                "call did not end within {} s of a hard interrupt; answered without it",
                STUCK_CALL_GRACE.as_secs()
            );
            let mut outcome = CallOutcome::synthetic(tool_use, tool_core::CANCEL_MESSAGE);
            outcome.ending = Ending::Cancelled;
            outcome.duration = self.records[index]
                .started_at
                .map_or(std::time::Duration::ZERO, |at| at.elapsed());
            self.complete(index, Ok(outcome));
        }
    }

    /// Cancels the calls held before their tool started (see [`Record::held`]).
    fn cancel_held(&mut self) {
        for index in self.next_yield..self.records.len() {
            let record = &self.records[index];
            if record.state == State::Running
                && record.held
                && let Some(token) = &record.token
            {
                token.cancel();
            }
        }
    }

    fn discard(&mut self) {
        self.discarded = true;
        self.turn.cancel();
    }

    fn flush(&mut self) {
        while let Some(record) = self.records.get_mut(self.next_yield) {
            if record.state != State::Done {
                break;
            }
            record.state = State::Yielded;
            self.next_yield += 1;
            let Some(outcome) = record.outcome.take() else {
                continue;
            };
            if self.discarded {
                continue;
            }
            let result = ToolCallResult {
                tool_use: record.tool_use.clone(),
                outcome,
                context: self.ctx.clone(),
            };
            let _ = self
                .out
                .send(Message::Event(ExecutorEvent::Result(Box::new(result))));
        }
    }
}

/// A call for [`schedule_makespan`]: when its block arrives and how long it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedCall {
    /// Whether it may run beside other concurrency-safe calls.
    pub concurrency_safe: bool,
    /// When its block arrives (from the start of the turn).
    pub arrival: std::time::Duration,
    /// How long it runs.
    pub duration: std::time::Duration,
}

/// When the last of `calls` would finish under the executor's rules (FIFO start, unsafe calls
/// alone and as barriers, at most `max_concurrency` at once) with zero overhead: the lower
/// bound a real run is measured against, and the way to estimate what a schedule would cost
/// (for example all blocks arriving at the end of the stream, i.e. batch mode).
pub fn schedule_makespan(calls: &[PlannedCall], max_concurrency: usize) -> std::time::Duration {
    use std::time::Duration;
    let cap = max_concurrency.max(1);
    let mut finish: Vec<Option<Duration>> = vec![None; calls.len()];
    let mut next = 0; // first call not started (starts are FIFO)
    let mut now = Duration::ZERO;
    while next < calls.len() {
        let running: Vec<usize> = (0..next)
            .filter(|&i| finish[i].is_some_and(|f| f > now))
            .collect();
        let call = calls[next];
        let running_unsafe = running.iter().any(|&i| !calls[i].concurrency_safe);
        let can_start = call.arrival <= now
            && running.len() < cap
            && (running.is_empty() || (call.concurrency_safe && !running_unsafe));
        if can_start {
            finish[next] = Some(now + call.duration);
            next += 1;
            continue;
        }
        // Wait for the next event: this call's arrival or a running call's end.
        let wake = running
            .iter()
            .filter_map(|&i| finish[i])
            .chain([call.arrival])
            .filter(|t| *t > now)
            .min();
        match wake {
            Some(t) => now = t,
            None => break,
        }
    }
    finish
        .iter()
        .flatten()
        .copied()
        .max()
        .unwrap_or(Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cap past what the open-file limit holds is lowered to it, said once; one within it,
    /// the default with the usual limits among them, is kept without a word.
    #[test]
    fn a_cap_is_fitted_to_the_open_file_limit() {
        let config = |cap: usize| ExecutorConfig {
            max_concurrency: cap,
            ..ExecutorConfig::default()
        };
        let (fitted, said) = config(150).fit_to_open_files(256);
        assert_eq!(fitted.max_concurrency, 24);
        assert!(said.unwrap().contains("holds about 24 calls at once"));
        assert_eq!(config(10).fit_to_open_files(1024).0.max_concurrency, 10);
        assert_eq!(config(10).fit_to_open_files(1024).1, None);
        assert_eq!(config(10).fit_to_open_files(20).0.max_concurrency, 1);
        assert_eq!(
            config(usize::MAX)
                .fit_to_open_files(65_536)
                .0
                .max_concurrency,
            8184
        );
    }
    use std::time::Duration;

    fn call(safe: bool, at: u64, ms: u64) -> PlannedCall {
        PlannedCall {
            concurrency_safe: safe,
            arrival: Duration::from_millis(at),
            duration: Duration::from_millis(ms),
        }
    }

    #[test]
    fn makespan_follows_the_rules() {
        // Two safe calls overlap; the unsafe one waits for both; the last safe waits for it.
        let calls = [
            call(true, 0, 100),
            call(true, 10, 50),
            call(false, 20, 30),
            call(true, 30, 10),
        ];
        assert_eq!(schedule_makespan(&calls, 10), Duration::from_millis(140));
        // A cap of one serialises everything.
        assert_eq!(schedule_makespan(&calls, 1), Duration::from_millis(190));
        // Late arrivals wait for their arrival.
        assert_eq!(
            schedule_makespan(&[call(true, 500, 10)], 10),
            Duration::from_millis(510)
        );
        assert_eq!(schedule_makespan(&[], 10), Duration::ZERO);
    }
}
