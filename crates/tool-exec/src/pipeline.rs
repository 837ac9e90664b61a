//! `run_tool_use`: one call through the whole pipeline, in Claude Code's order.
//!
//! lookup -> already cancelled? -> schema parse -> `validate_input` -> PreToolUse hooks ->
//! permission (hook decision combined with the rules; an ask goes to PermissionRequest hooks,
//! then to the prompter) -> `call` (panics caught, cancellation honoured) -> empty-result
//! rule -> persistence of large results -> context modifier (handed to the executor) ->
//! PostToolUse or PostToolUseFailure hooks -> telemetry.
//!
//! Every path ends in exactly one [`CallOutcome`] with one `tool_result`; nothing here
//! panics or returns early without one.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use serde_json::Value;
use tool_core::{
    Attachment, CANCEL_MESSAGE, ContextModifier, DecisionReason, MaxResultSize, Message,
    PermissionResult, ProgressSender, Tool, ToolError, ToolResultBlock, ToolUseContext, find_tool,
    tool_use_error,
};
use tracing::Instrument;

use crate::persist::persist_if_large;
use crate::seams::{
    AllowAll, DenyAsks, HookCall, HookDecision, Hooks, NoHooks, PermissionRequestVerdict,
    Permissions, PromptAnswer, PromptRequest, Prompter, REJECT_MESSAGE, ToolHookEvents,
};

pub use tool_core::DEFAULT_MAX_RESULT_CHARS;

/// How long a cancelled call may take to wind down (kill its processes, return its own
/// cancellation error) before the pipeline stops waiting for it.
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// The most bytes of `tool_parameters` and of `tool_input` a `tool_result` event carries when
/// tool details are on (see [`Pipeline::with_tool_details`]). Either stays valid JSON: the
/// strings in a longer one are cut shorter until it fits, and one that still does not is a
/// JSON string saying it was cut.
pub const TOOL_DETAILS_MAX_BYTES: usize = 4096;

/// The fewest characters the strings of `tool_parameters` and `tool_input` are cut to to fit
/// [`TOOL_DETAILS_MAX_BYTES`].
const TOOL_DETAILS_MIN_STRING_CHARS: usize = 16;

/// The most characters of one string in `tool_input` (Claude Code's cut); a longer one is cut,
/// ending in `…`.
const TOOL_INPUT_STRING_MAX_CHARS: usize = 512;

/// The most characters of one string in `tool_parameters` (a Bash command); cut shorter
/// when the parameters would not fit [`TOOL_DETAILS_MAX_BYTES`].
const TOOL_PARAMETER_STRING_MAX_CHARS: usize = 2048;

/// The most bytes of a panic's text in a telemetry event (it is unbounded and may carry
/// input data).
const PANIC_MESSAGE_MAX_BYTES: usize = 1024;

/// One tool_use block from the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    /// The block's id.
    pub id: String,
    /// The tool name the model used.
    pub name: String,
    /// The raw input.
    pub input: Value,
}

impl ToolUse {
    /// A tool_use block.
    pub fn new(id: impl Into<String>, name: impl Into<String>, input: Value) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            input,
        }
    }

    /// `NAME(summary)` for messages about this call: the input's `command`, `file_path` or
    /// `pattern`, cut to 40 characters.
    pub fn describe(&self) -> String {
        let summary = ["command", "file_path", "pattern"].iter().find_map(|k| {
            self.input
                .get(*k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        });
        match summary {
            Some(s) if s.chars().count() > 40 => {
                format!("{}({}…)", self.name, s.chars().take(40).collect::<String>())
            }
            Some(s) => format!("{}({s})", self.name),
            None => self.name.clone(),
        }
    }
}

/// Where a call's pipeline ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// No tool of that name.
    UnknownTool,
    /// Cancelled before or while running (the result says how).
    Cancelled,
    /// The input failed the schema step.
    InvalidInput,
    /// The tool's `validate_input` refused it.
    ValidationFailed,
    /// A PreToolUse hook blocked it, or the permission flow denied it.
    Denied,
    /// The call ran and succeeded.
    Succeeded,
    /// The call ran and failed; the class is the telemetry error type.
    Failed {
        /// Stable error class (`ShellError`, `Io:NotFound`, `Panic`, ...).
        class: String,
    },
}

impl Ending {
    /// The OpenTelemetry `error.type` of a call that did not succeed: the failure's class,
    /// else the ending's name (`UnknownTool`, `InputValidationError`, `ValidationError`,
    /// `PermissionDenied`, `Cancelled`). `None` for a success.
    pub fn error_type(&self) -> Option<&str> {
        Some(match self {
            Self::Succeeded => return None,
            Self::Failed { class } => class.as_str(),
            Self::UnknownTool => "UnknownTool",
            Self::InvalidInput => "InputValidationError",
            Self::ValidationFailed => "ValidationError",
            Self::Denied => "PermissionDenied",
            Self::Cancelled => "Cancelled",
        })
    }
}

/// Everything one call produced.
#[derive(Debug)]
pub struct CallOutcome {
    /// The tool_result for the model.
    pub result: ToolResultBlock,
    /// The tool's name as called.
    pub tool_name: String,
    /// Messages that go before the result (PreToolUse hook context).
    pub messages_before: Vec<Message>,
    /// Messages that go after it (PostToolUse hook context, the tool's own messages, stop
    /// notices).
    pub messages_after: Vec<Message>,
    /// The tool's context modifier, for the executor to apply in order.
    pub context_modifier: Option<ContextModifier>,
    /// Where the pipeline ended.
    pub ending: Ending,
    /// The permission decision, if the flow got that far (`accept`/`reject`), and its source
    /// (`config`, `hook`, `user_temporary`, `user_permanent`, `user_reject`, `user_abort`: the
    /// question was withdrawn unanswered). `user_reject` is a person's no: an ask refused
    /// without asking anyone (a session that cannot prompt, a prompter that answers
    /// [`PromptAnswer::Unanswered`]) is `config`.
    pub decision: Option<(&'static str, &'static str)>,
    /// Why the permission flow decided as it did (the rule and its file, the mode, the hook).
    pub decision_reason: Option<DecisionReason>,
    /// Where a large result was saved.
    pub persisted: Option<PathBuf>,
    /// A hook asked to stop the turn after this call (`continue: false`), with its reason:
    /// the first that did, a PreToolUse hook's before a PostToolUse (or PostToolUseFailure)
    /// one's. Each event's hook that stopped has its own `hook_stopped_continuation` note in
    /// [`messages_after`](Self::messages_after), as in Claude Code.
    pub stop_turn: Option<Option<String>>,
    /// The user rejected the call without feedback: the turn must stop.
    pub interrupt_turn: bool,
    /// A harness failure: the turn must end (the result still tells the model).
    pub harness_error: Option<String>,
    /// Time from the start of the pipeline to the end (hooks, the wait for the user and
    /// persistence included).
    pub duration: Duration,
    /// Time the tool's own call took (Claude Code's `duration_ms`); `None` when it never ran.
    pub call_duration: Option<Duration>,
    /// The size in bytes of the result's text as the tool (or a PostToolUse hook) gave it,
    /// before a large result was saved and cut to a preview; `None` when it never ran.
    pub result_size_bytes: Option<usize>,
    /// Whether the tool was concurrency-safe for this input (decides modifier handling).
    pub concurrency_safe: bool,
    /// The input the tool ran with, when a hook or the user changed the model's
    /// (`updatedInput`): what a log of the call shows, since the model's is not what ran.
    pub input_rewritten: Option<Value>,
}

/// The `hook_stopped_continuation` note for the model, as Claude Code words it: `HOOK hook
/// stopped continuation: REASON`, `HOOK` being the event and the tool (`PreToolUse:Bash`).
pub fn stopped_continuation_text(hook: &str, reason: Option<&str>) -> String {
    match reason {
        Some(r) => format!("{hook} hook stopped continuation: {r}"),
        None => format!("{hook} hook stopped continuation"),
    }
}

/// The `hook_stopped_continuation` note for the model of a `tool` call's `event` hook
/// (`PreToolUse`, `PostToolUse`, `PostToolUseFailure`) that said `continue: false` with
/// `reason`, in a system reminder, as Claude Code sends its hooks' notes.
fn stopped_note(event: &str, tool: &str, reason: Option<&str>) -> Message {
    let text = stopped_continuation_text(&format!("{event}:{tool}"), reason);
    Message::Attachment(Attachment::new(
        "hook_stopped_continuation",
        format!("<system-reminder>\n{text}\n</system-reminder>"),
    ))
}

/// After an accepted call (run or not) whose PreToolUse hook said `continue: false`: its
/// `hook_stopped_continuation` note for the model, last (Claude Code's place for it).
fn note_stopped(out: &mut CallOutcome) {
    if let Some(reason) = &out.stop_turn {
        let note = stopped_note("PreToolUse", &out.tool_name, reason.as_deref());
        out.messages_after.push(note);
    }
}

impl CallOutcome {
    fn new(tool_use: &ToolUse, result: ToolResultBlock, ending: Ending) -> Self {
        Self {
            result,
            tool_name: tool_use.name.clone(),
            messages_before: Vec::new(),
            messages_after: Vec::new(),
            context_modifier: None,
            ending,
            decision: None,
            decision_reason: None,
            persisted: None,
            stop_turn: None,
            interrupt_turn: false,
            harness_error: None,
            duration: Duration::ZERO,
            call_duration: None,
            result_size_bytes: None,
            concurrency_safe: false,
            input_rewritten: None,
        }
    }

    /// A synthetic error result for a call that never ran (cancelled, discarded).
    pub fn synthetic(tool_use: &ToolUse, text: impl Into<String>) -> Self {
        Self::new(
            tool_use,
            ToolResultBlock::error(&tool_use.id, text),
            Ending::Cancelled,
        )
    }

    /// The answer to a call of a tool that does not exist (semantics 3.1).
    pub fn unknown_tool(tool_use: &ToolUse) -> Self {
        let text = tool_use_error(format_args!(
            "Error: No such tool available: {}",
            tool_use.name
        ));
        Self::new(
            tool_use,
            ToolResultBlock::error(&tool_use.id, text),
            Ending::UnknownTool,
        )
    }

    /// Whether the tool ran and failed: its `call` was made ([`call_duration`] is set) and
    /// ended in an error. A panic in the steps around it (a hook, the prompter, the tool's
    /// validation) is a failure of the call too, but the tool never ran.
    ///
    /// [`call_duration`]: Self::call_duration
    pub fn call_failed(&self) -> bool {
        matches!(self.ending, Ending::Failed { .. }) && self.call_duration.is_some()
    }
}

/// The per-call pipeline with its permission policy, prompter and hooks. Cheap to share
/// (`Arc<Pipeline>`).
pub struct Pipeline {
    permissions: Arc<dyn Permissions>,
    prompter: Arc<dyn Prompter>,
    hooks: Arc<dyn Hooks>,
    /// `hooks` as the seam a tool raises its own hook events through, put in each call's
    /// context ([`ToolUseContext::with_hook_events`]).
    tool_hook_events: Arc<dyn tool_core::HookEvents>,
    max_result_chars: usize,
    /// Whether `tool_result` events carry the call's details (`OTEL_LOG_TOOL_DETAILS`).
    log_tool_details: bool,
}

impl std::fmt::Debug for Pipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pipeline")
            .field("max_result_chars", &self.max_result_chars)
            .field("log_tool_details", &self.log_tool_details)
            .finish_non_exhaustive()
    }
}

impl Pipeline {
    /// A pipeline deciding with `permissions`, asking through `prompter` and running `hooks`.
    /// Reads `OTEL_LOG_TOOL_DETAILS` (see [`with_tool_details`](Self::with_tool_details)).
    pub fn new(
        permissions: Arc<dyn Permissions>,
        prompter: Arc<dyn Prompter>,
        hooks: Arc<dyn Hooks>,
    ) -> Self {
        Self {
            permissions,
            prompter,
            tool_hook_events: Arc::new(ToolHookEvents(Arc::clone(&hooks))),
            hooks,
            max_result_chars: DEFAULT_MAX_RESULT_CHARS,
            log_tool_details: tool_details_from_env(),
        }
    }

    /// Allows everything, asks nobody, runs no hooks. For tests and trusted embedding.
    pub fn allow_all() -> Self {
        Self::new(Arc::new(AllowAll), Arc::new(DenyAsks), Arc::new(NoHooks))
    }

    /// Changes the global result-size limit (default 50,000 characters).
    pub fn with_max_result_chars(mut self, chars: usize) -> Self {
        self.max_result_chars = chars;
        self
    }

    /// Whether each call's `tool_result` event carries the call's details: Claude Code's
    /// `tool_parameters` (a Bash call's command, timeout, description and sandbox flag, an
    /// MCP tool's server and tool names, a skill's name), `tool_input` (the input as the
    /// model wrote it) and an MCP tool's `mcp_server_scope`, the first two as JSON strings of
    /// at most [`TOOL_DETAILS_MAX_BYTES`] bytes. Off unless `OTEL_LOG_TOOL_DETAILS` was
    /// `1`/`true`/`yes`/`on` (any case) when the pipeline was made: commands and inputs may
    /// carry secrets and personal data.
    pub fn with_tool_details(mut self, on: bool) -> Self {
        self.log_tool_details = on;
        self
    }

    /// The hooks calls go through; an agent loop reports its [`LoopEvent`](crate::LoopEvent)s
    /// to the same ones.
    pub fn hooks(&self) -> &Arc<dyn Hooks> {
        &self.hooks
    }

    /// Runs one call. `ctx` must carry the call's own cancellation token; `progress` receives
    /// the tool's progress reports.
    pub async fn run_tool_use(
        &self,
        tool_use: &ToolUse,
        ctx: ToolUseContext,
        progress: ProgressSender,
    ) -> CallOutcome {
        self.run_scheduled(tool_use, ctx, progress, None).await
    }

    /// [`run_tool_use`](Self::run_tool_use) for a call the executor scheduled (`None`:
    /// one that is not the executor's).
    pub(crate) async fn run_scheduled(
        &self,
        tool_use: &ToolUse,
        ctx: ToolUseContext,
        progress: ProgressSender,
        scheduled: Option<Scheduled>,
    ) -> CallOutcome {
        let telemetry = CallTelemetry::start(tool_use, ctx.tools(), self.log_tool_details);
        let span = telemetry.span.clone();
        // A panic anywhere in the steps (a tool's schema, validation or rendering, a hook
        // or prompter implementation) is this call's failure, never the caller's: the
        // executor and `toolwright serve` both rely on getting an outcome.
        let run = AssertUnwindSafe(
            self.run_inner(tool_use, ctx, progress, scheduled)
                .instrument(span.clone()),
        )
        .catch_unwind()
        .await;
        let mut outcome = run.unwrap_or_else(|panic| {
            let message = panic_message(panic.as_ref());
            tracing::error!(
                parent: &span,
                tool = %tool_use.name,
                panic.message = %bounded(&message, PANIC_MESSAGE_MAX_BYTES),
                "the pipeline panicked"
            );
            let mut out = CallOutcome::synthetic(
                tool_use,
                tool_use_error(format_args!(
                    "Error calling tool ({}): {message}",
                    tool_use.name
                )),
            );
            out.ending = Ending::Failed {
                class: "Panic".into(),
            };
            out
        });
        telemetry.finish(&mut outcome);
        outcome
    }

    /// The answer to a call of a tool that does not exist, with the telemetry of a call the
    /// pipeline ran (its span, `tool_result` event and histogram point), for the executor,
    /// which answers those at once without scheduling them.
    pub(crate) fn answer_unknown_tool(
        &self,
        tool_use: &ToolUse,
        tools: &[Arc<dyn Tool>],
    ) -> CallOutcome {
        let telemetry = CallTelemetry::start(tool_use, tools, self.log_tool_details);
        let mut outcome = CallOutcome::unknown_tool(tool_use);
        telemetry.finish(&mut outcome);
        outcome
    }

    async fn run_inner(
        &self,
        tool_use: &ToolUse,
        ctx: ToolUseContext,
        progress: ProgressSender,
        scheduled: Option<Scheduled>,
    ) -> CallOutcome {
        // 3.1 Lookup.
        let Some(tool) = find_tool(ctx.tools(), &tool_use.name).cloned() else {
            return CallOutcome::unknown_tool(tool_use);
        };
        tracing::Span::current().record(
            "gen_ai.tool.type",
            if tool.is_mcp() {
                "extension"
            } else {
                "function"
            },
        );
        let ctx = ctx.with_tool_use_id(tool_use.id.clone());
        // 3.2 Already cancelled.
        if ctx.is_cancelled() {
            return CallOutcome::synthetic(tool_use, CANCEL_MESSAGE);
        }
        // 3.4.1 Schema, on the model's input without the fields only the user fills
        // (AskUserQuestion's `answers` and `annotations`): those come from the prompt or a
        // hook, or not at all.
        let mut model_input = tool_use.input.clone();
        tool_core::strip_user_supplied_fields(tool.as_ref(), &mut model_input);
        let input = match tool.parse_input(model_input) {
            Ok(input) => input,
            Err(e) => {
                return CallOutcome::new(
                    tool_use,
                    ToolResultBlock::error(&tool_use.id, e.to_model_text()),
                    Ending::InvalidInput,
                );
            }
        };
        // A flag that panics reads as "not safe" (Claude Code's `isConcurrencySafe` that
        // throws): the call still runs, alone.
        let concurrency_safe =
            std::panic::catch_unwind(AssertUnwindSafe(|| tool.is_concurrency_safe(&input)))
                .unwrap_or(false);
        // 3.4.2 Tool-specific validation, abandoned when the call is cancelled (a
        // validation that never ends must not hold the turn); then 3.4.5 what hooks,
        // permission checks and the user see: derived fields filled in (a file tool's
        // absolute path); the call gets the model's input unless they change it. Both may
        // look at the file system (Read's `stat` of its file, the form of a name on disk),
        // so they run off the runtime's workers: one stuck on a hung mount holds only its
        // own call.
        let checked = off_the_workers(async {
            let validated = tokio::select! {
                biased;
                r = tool.validate_input(&input, &ctx) => Some(r),
                () = ctx.cancellation().cancelled() => None,
            };
            validated.map(|v| v.map(|()| tool.observable_input(&input, &ctx)))
        })
        .await;
        let Some(validated) = checked else {
            let mut out = CallOutcome::synthetic(tool_use, CANCEL_MESSAGE);
            out.concurrency_safe = concurrency_safe;
            return out;
        };
        let observed = match validated {
            Ok(observed) => observed,
            Err(e) => {
                let mut out = CallOutcome::new(
                    tool_use,
                    ToolResultBlock::error(&tool_use.id, tool_use_error(&e.message)),
                    Ending::ValidationFailed,
                );
                out.concurrency_safe = concurrency_safe;
                return out;
            }
        };
        let (gate, start) = scheduled.map_or((None, None), |s| (s.gate, Some(s.start)));
        let mut schedule = Schedule {
            gate,
            start,
            concurrency_safe,
        };
        let mut out = self
            .run_checked(
                tool_use,
                &tool,
                CheckedInput { input, observed },
                ctx,
                progress,
                &mut schedule,
            )
            .await;
        out.concurrency_safe = schedule.concurrency_safe;
        out
    }

    async fn run_checked(
        &self,
        tool_use: &ToolUse,
        tool: &Arc<dyn Tool>,
        checked: CheckedInput,
        ctx: ToolUseContext,
        progress: ProgressSender,
        schedule: &mut Schedule,
    ) -> CallOutcome {
        let CheckedInput { input, observed } = checked;
        // 3.5 PreToolUse hooks, shown `observed` (3.4.5), when the input has derived fields.
        let call = HookCall {
            tool: tool.as_ref(),
            tool_use_id: &tool_use.id,
            input: observed.as_ref().unwrap_or(&input),
            duration: None,
        };
        // They (and the PermissionRequest hooks) run with the call's token's child that a
        // user interrupt cancels for a call whose tool has not started (see [`ToolStart`]):
        // their processes are killed, whatever the tool's interrupt behaviour.
        let hook_ctx = match &schedule.start {
            Some(start) => ctx.clone().with_cancellation(start.stop.clone()),
            None => ctx.clone(),
        };
        let pre = self
            .hooks
            .pre_tool_use(call, &hook_ctx)
            .instrument(tracing::info_span!("hooks", event = "PreToolUse"))
            .await;
        let mut messages_before = pre.messages;
        let stopped = schedule.start.as_ref().is_some_and(ToolStart::is_stopped);
        if pre.cancelled || ctx.is_cancelled() || stopped {
            messages_before.push(Message::Attachment(Attachment::new(
                "hook_cancelled",
                "PreToolUse hooks were cancelled",
            )));
            let mut out = CallOutcome::synthetic(tool_use, CANCEL_MESSAGE);
            out.messages_before = messages_before;
            return out;
        }
        let stop = pre.stop;
        let seen = match pre.updated_input {
            Some(update) => match as_checked(tool.as_ref(), update.clone(), &ctx).await {
                Ok(seen) => seen,
                // A rewrite the tool cannot take could never run: refused here with the
                // reason, before anyone is asked about it (a hook's deny still decides).
                Err(message) if !matches!(pre.decision, Some(HookDecision::Deny { .. })) => {
                    return refused_change(tool_use, message, None, messages_before, stop);
                }
                Err(_) => update,
            },
            None => observed.clone().unwrap_or_else(|| input.clone()),
        };

        // 3.6 Permission.
        let decision = self
            .resolve_permission(
                tool.as_ref(),
                seen,
                pre.decision,
                &ctx,
                &hook_ctx,
                &mut messages_before,
            )
            .instrument(tracing::info_span!("permission"))
            .await;
        let model_input = input.clone();
        let (input, source, decision_reason) = match decision {
            Resolved::Allowed {
                input: decided,
                source,
                reason,
            } => {
                // The permission is decided here, whatever happens to the call next.
                tracing::info!(target: "toolwright::tool_decision", decision = "accept", source, tool_name = %tool_use.name, "tool_decision");
                let decided = model_fields_restored(decided, observed.as_ref(), input.clone());
                // An input a hook or the user changed goes through the schema and the
                // tool's validation again: a rewrite the tool cannot take is refused with
                // the reason, before anything runs.
                let decided = if decided == input {
                    decided
                } else {
                    match self
                        .recheck(tool.as_ref(), tool_use, decided, &ctx, &mut messages_before)
                        .await
                    {
                        Ok(checked) => checked,
                        Err(mut out) => {
                            out.decision = Some(("accept", source));
                            out.decision_reason = reason;
                            // A hook's `continue: false` still ends the turn.
                            out.stop_turn = stop;
                            note_stopped(&mut out);
                            return *out;
                        }
                    }
                };
                (decided, source, reason)
            }
            Resolved::Invalid { message, accepted } => {
                if let Some((source, _)) = &accepted {
                    tracing::info!(target: "toolwright::tool_decision", decision = "accept", source, tool_name = %tool_use.name, "tool_decision");
                }
                return refused_change(tool_use, message, accepted, messages_before, stop);
            }
            Resolved::Rejected {
                message,
                source,
                interrupt,
                reason,
                judged,
            } => {
                let text = match (&stop, message.is_empty()) {
                    (Some(reason), true) => match reason {
                        Some(r) => format!("Execution stopped by PreToolUse hook: {r}"),
                        None => "Execution stopped by PreToolUse hook".to_owned(),
                    },
                    _ => message,
                };
                tracing::info!(target: "toolwright::tool_decision", decision = "reject", source, tool_name = %tool_use.name, "tool_decision");
                // A question withdrawn unanswered is no denial: the call was cancelled.
                let ending = if source == WITHDRAWN {
                    Ending::Cancelled
                } else {
                    Ending::Denied
                };
                let mut out =
                    CallOutcome::new(tool_use, ToolResultBlock::error(&tool_use.id, text), ending);
                out.messages_before = messages_before;
                out.decision = Some(("reject", source));
                out.decision_reason = reason;
                out.stop_turn = stop;
                out.interrupt_turn = interrupt;
                // The judged input is the observed one (paths resolved) when nobody changed
                // it: mapped back as for an allowed call, only a real rewrite is named.
                out.input_rewritten = judged
                    .map(|judged| {
                        model_fields_restored(judged, observed.as_ref(), model_input.clone())
                    })
                    .filter(|judged| *judged != model_input);
                return out;
            }
        };
        // Cancelled while the permission was decided: the call must not start (its first
        // step may already act, such as sending an MCP request).
        let never_started = |messages_before, stop, decision_reason| {
            let mut out = CallOutcome::synthetic(tool_use, CANCEL_MESSAGE);
            out.messages_before = messages_before;
            out.stop_turn = stop;
            out.decision = Some(("accept", source));
            out.decision_reason = decision_reason;
            note_stopped(&mut out);
            out
        };
        if ctx.is_cancelled() {
            return never_started(messages_before, stop, decision_reason);
        }
        // The input that runs may not be the one the call was scheduled by: a hook's or the
        // user's rewrite can make a concurrency-safe call unsafe (`git status` becoming
        // `cd app && make`). Such a call waits here until it can run alone.
        schedule.concurrency_safe =
            std::panic::catch_unwind(AssertUnwindSafe(|| tool.is_concurrency_safe(&input)))
                .unwrap_or(false);
        if let Some(gate) = &schedule.gate
            && !schedule.concurrency_safe
        {
            let alone = tokio::select! {
                biased;
                () = ctx.cancellation().cancelled() => false,
                granted = gate.run_alone() => granted,
            };
            if !alone {
                return never_started(messages_before, stop, decision_reason);
            }
        }
        // The last moment a user interrupt can stop the call before its tool runs; from
        // here on, the tool's interrupt behaviour decides.
        if let Some(start) = &schedule.start
            && !start.start()
        {
            return never_started(messages_before, stop, decision_reason);
        }

        // 3.4.10 The call, with this pipeline's hooks for the events the tool raises itself
        // (TaskCreated, TaskCompleted), in place of any the context had.
        let started = std::time::Instant::now();
        let call_ctx = ctx
            .clone()
            .with_hook_events(Arc::clone(&self.tool_hook_events));
        let called = self
            .call_tool(tool, input.clone(), call_ctx, progress)
            .instrument(tracing::info_span!("execution"))
            .await;
        let call_duration = started.elapsed();
        let observed_call = tool.observable_input(&input, &ctx);
        let call = HookCall {
            tool: tool.as_ref(),
            tool_use_id: &tool_use.id,
            input: observed_call.as_ref().unwrap_or(&input),
            duration: Some(call_duration),
        };
        let mut out = match called {
            Ok(result) => {
                let threshold = match tool.max_result_size() {
                    MaxResultSize::Chars(n) => Some(n.min(self.max_result_chars)),
                    MaxResultSize::Unbounded => None,
                };
                let content = result.data.content.or_empty_notice(tool.name());
                let structured = &result.data.structured;
                let hook_ctx = moved(&ctx, result.context_modifier.as_ref(), schedule);
                let mut post = post_hooks(&hook_ctx, |hook_ctx| async move {
                    self.hooks
                        .post_tool_use(call, structured, &hook_ctx)
                        .instrument(tracing::info_span!("hooks", event = "PostToolUse"))
                        .await
                })
                .await;
                let content = match post.updated_output.take() {
                    None => content,
                    Some(replacement) => match tool.render_output(&replacement) {
                        Some(rendered) => rendered.or_empty_notice(tool.name()),
                        None => {
                            tracing::warn!(tool = %tool.name(), tool_use_id = %tool_use.id, "a PostToolUse hook's updatedToolOutput does not have the tool's output shape; ignored");
                            // Said to the user too: a redaction that did not apply is not
                            // silent.
                            post.messages.push(Message::System(format!(
                                "PostToolUse hook: its updatedToolOutput does not have {}'s output shape; the tool's own output was kept",
                                tool.name()
                            )));
                            content
                        }
                    },
                };
                let result_size_bytes = content.text_bytes();
                let persisted = match threshold {
                    // Writing (and syncing) a large result blocks: on a blocking thread, so
                    // the runtime's workers keep driving the other calls.
                    Some(limit) if content.text_len() > limit && !content.has_image() => {
                        let id = tool_use.id.clone();
                        let dir = ctx.results_dir().map(std::path::Path::to_path_buf);
                        tokio::task::spawn_blocking(move || {
                            persist_if_large(content, &id, limit, dir.as_deref())
                        })
                        .await
                        .unwrap_or_else(|e| crate::persist::Persisted {
                            content: tool_core::ToolResultContent::Text(format!(
                                "[Output too large and could not be saved to a file: {e}]"
                            )),
                            path: None,
                            error: Some(std::io::Error::other(e.to_string())),
                        })
                    }
                    _ => crate::persist::Persisted {
                        content,
                        path: None,
                        error: None,
                    },
                };
                if let Some(e) = &persisted.error {
                    tracing::warn!(error = %e, tool_use_id = %tool_use.id, "could not persist a large result");
                }
                let mut out = CallOutcome::new(
                    tool_use,
                    ToolResultBlock {
                        tool_use_id: tool_use.id.clone(),
                        content: persisted.content,
                        is_error: false,
                    },
                    Ending::Succeeded,
                );
                out.persisted = persisted.path;
                out.result_size_bytes = Some(result_size_bytes);
                out.context_modifier = result.context_modifier;
                out.messages_after = post.messages;
                // A PostToolUse hook's stop: its note among that event's messages, before the
                // tool's own (Claude Code's order); the PreToolUse hook's, if any, comes last
                // and stays the turn's stop request, being the first.
                if let Some(reason) = &post.stop {
                    let note = stopped_note("PostToolUse", &out.tool_name, reason.as_deref());
                    out.messages_after.push(note);
                }
                out.messages_after.extend(result.new_messages);
                out.stop_turn = stop.clone().or(post.stop);
                out
            }
            Err(failure) => {
                let (error, panicked) = match failure {
                    CallError::Tool(error) => (error, false),
                    CallError::Panic(text) => (ToolError::Message(text), true),
                };
                // A change that holds although the call failed (a Bash `cd` before a failing
                // command) applies as a successful call's does.
                let (error, context_modifier) = error.take_context_change();
                let text = error.to_model_text();
                let is_interrupt = error.is_cancelled();
                let hook_ctx = moved(&ctx, context_modifier.as_ref(), schedule);
                let post = post_hooks(&hook_ctx, |hook_ctx| {
                    let text = &text;
                    async move {
                        self.hooks
                            .post_tool_use_failure(call, text, is_interrupt, &hook_ctx)
                            .instrument(tracing::info_span!("hooks", event = "PostToolUseFailure"))
                            .await
                    }
                })
                .await;
                let ending = match (is_interrupt, panicked) {
                    (true, _) => Ending::Cancelled,
                    (false, true) => Ending::Failed {
                        class: "Panic".to_owned(),
                    },
                    (false, false) => Ending::Failed {
                        class: error.class().into_owned(),
                    },
                };
                let mut out =
                    CallOutcome::new(tool_use, ToolResultBlock::error(&tool_use.id, text), ending);
                out.result_size_bytes = Some(out.result.content.text_bytes());
                out.messages_after = post.messages;
                // As on success: this event's note here, the PreToolUse hook's last, which
                // stays the turn's stop request.
                if let Some(reason) = &post.stop {
                    let note =
                        stopped_note("PostToolUseFailure", &out.tool_name, reason.as_deref());
                    out.messages_after.push(note);
                }
                out.stop_turn = stop.clone().or(post.stop);
                out.context_modifier = context_modifier;
                if let ToolError::Harness(reason) = &error {
                    out.harness_error = Some(reason.clone());
                }
                out
            }
        };
        out.call_duration = Some(call_duration);
        let mut before = messages_before;
        before.append(&mut out.messages_before);
        out.messages_before = before;
        if let Some(reason) = &stop {
            let note = stopped_note("PreToolUse", &out.tool_name, reason.as_deref());
            out.messages_after.push(note);
        }
        out.decision = Some(("accept", source));
        out.decision_reason = decision_reason;
        out.input_rewritten = (input != model_input).then_some(input);
        out
    }

    /// The schema step and the tool's validation again, for an input a PreToolUse or
    /// PermissionRequest hook or the user changed; the outcome to return when it fails.
    async fn recheck(
        &self,
        tool: &dyn Tool,
        tool_use: &ToolUse,
        changed: Value,
        ctx: &ToolUseContext,
        messages_before: &mut Vec<Message>,
    ) -> Result<Value, Box<CallOutcome>> {
        let refused = |text: String, ending: Ending, messages: &mut Vec<Message>| {
            let mut out =
                CallOutcome::new(tool_use, ToolResultBlock::error(&tool_use.id, text), ending);
            out.messages_before = std::mem::take(messages);
            Box::new(out)
        };
        let input = tool.parse_input(changed).map_err(|e| {
            refused(
                invalid_change_text(&e),
                Ending::InvalidInput,
                messages_before,
            )
        })?;
        // Off the runtime's workers, as the first validation.
        let validated = off_the_workers(async {
            tokio::select! {
                biased;
                r = tool.validate_input(&input, ctx) => Some(r),
                () = ctx.cancellation().cancelled() => None,
            }
        })
        .await;
        match validated {
            None => {
                let mut out = CallOutcome::synthetic(tool_use, CANCEL_MESSAGE);
                out.messages_before = std::mem::take(messages_before);
                Err(Box::new(out))
            }
            Some(Err(e)) => Err(refused(
                tool_use_error(format_args!(
                    "The input as changed by a hook or the permission prompt was refused: {}",
                    e.message
                )),
                Ending::ValidationFailed,
                messages_before,
            )),
            Some(Ok(())) => Ok(input),
        }
    }

    /// Runs `tool.call`, turning a panic into a failure and honouring cancellation: once the
    /// token fires the tool gets [`CANCEL_GRACE`] to wind down, then its future is dropped.
    async fn call_tool(
        &self,
        tool: &Arc<dyn Tool>,
        input: Value,
        ctx: ToolUseContext,
        progress: ProgressSender,
    ) -> Result<tool_core::ToolResult, CallError> {
        let token = ctx.cancellation().clone();
        let call = AssertUnwindSafe(tool.call(input, ctx, progress)).catch_unwind();
        tokio::pin!(call);
        let joined = tokio::select! {
            biased;
            r = &mut call => r,
            () = token.cancelled() => match tokio::time::timeout(CANCEL_GRACE, &mut call).await {
                Ok(r) => r,
                Err(_) => return Err(CallError::Tool(ToolError::Cancelled(None))),
            },
        };
        match joined {
            // A result that raced the cancellation still counts.
            Ok(result) => result.map_err(CallError::Tool),
            Err(panic) => {
                let message = panic_message(panic.as_ref());
                tracing::error!(
                    tool = tool.name(),
                    panic.message = %bounded(&message, PANIC_MESSAGE_MAX_BYTES),
                    "tool panicked"
                );
                Err(CallError::Panic(tool_use_error(format_args!(
                    "Error calling tool ({}): the tool panicked: {message}",
                    tool.name()
                ))))
            }
        }
    }

    async fn resolve_permission(
        &self,
        tool: &dyn Tool,
        input: Value,
        hook: Option<HookDecision>,
        ctx: &ToolUseContext,
        hooks_ctx: &ToolUseContext,
        messages: &mut Vec<Message>,
    ) -> Resolved {
        let hook_reason = |reason: Option<String>| {
            Some(DecisionReason::Hook {
                hook: "PreToolUse".into(),
                reason,
            })
        };
        match hook {
            Some(HookDecision::Deny { message }) => Resolved::Rejected {
                judged: Some(input.clone()),
                reason: hook_reason(Some(message.clone())),
                message,
                source: "hook",
                interrupt: false,
            },
            Some(HookDecision::Allow {
                updated_input,
                reason,
            }) => {
                let has_update = updated_input.is_some();
                let input = match updated_input {
                    Some(update) => match as_checked(tool, update, ctx).await {
                        Ok(checked) => checked,
                        Err(message) => {
                            return Resolved::Invalid {
                                message,
                                accepted: Some(("hook", hook_reason(reason))),
                            };
                        }
                    },
                    None => input,
                };
                if tool.requires_user_interaction() && !has_update {
                    return self
                        .can_use_tool(tool, input, None, ctx, hooks_ctx, messages)
                        .await;
                }
                match off_the_workers(self.permissions.check_rule_based(tool, &input, ctx)).await {
                    None => Resolved::Allowed {
                        input,
                        source: "hook",
                        reason: hook_reason(reason),
                    },
                    Some(PermissionResult::Deny { message, reason }) => Resolved::Rejected {
                        judged: Some(input.clone()),
                        message,
                        source: "config",
                        interrupt: false,
                        reason: Some(reason),
                    },
                    // An ask rule (or a safety check) objects: the call goes through the
                    // permission decision as any other would (the semantics' "ask -> call
                    // canUseTool"), so a mode that refuses asks (don't-ask) refuses it.
                    Some(_) => {
                        self.can_use_tool(tool, input, None, ctx, hooks_ctx, messages)
                            .await
                    }
                }
            }
            Some(HookDecision::Ask {
                updated_input,
                reason,
            }) => {
                // An input the tool cannot take is never put to the user.
                let input = match updated_input {
                    Some(update) => match as_checked(tool, update, ctx).await {
                        Ok(checked) => checked,
                        Err(message) => {
                            return Resolved::Invalid {
                                message,
                                accepted: None,
                            };
                        }
                    },
                    None => input,
                };
                // Deny rules hold whatever a hook says: a hook asking must not put a denied
                // call to the user (Claude Code skips the rules there; we do not).
                if let Some(PermissionResult::Deny { message, reason }) =
                    off_the_workers(self.permissions.check_rule_based(tool, &input, ctx)).await
                {
                    return Resolved::Rejected {
                        judged: Some(input.clone()),
                        message,
                        source: "config",
                        interrupt: false,
                        reason: Some(reason),
                    };
                }
                let message = reason.clone().unwrap_or_else(|| {
                    format!(
                        "Hook PreToolUse:{} asked for confirmation for this tool",
                        tool.name()
                    )
                });
                let forced = PermissionResult::Ask {
                    message,
                    updated_input: None,
                    suggestions: Vec::new(),
                    reason: hook_reason(reason),
                };
                self.can_use_tool(tool, input, Some(forced), ctx, hooks_ctx, messages)
                    .await
            }
            None => {
                self.can_use_tool(tool, input, None, ctx, hooks_ctx, messages)
                    .await
            }
        }
    }

    /// PermissionRequest hooks for a call about to be put to the user: an allow runs it (after
    /// its updated input passes the deny and ask rules again; an ask rule still goes to the
    /// user) and applies its permission updates; a deny refuses it, stopping the turn when
    /// the hook says `interrupt`; no verdict leaves the ask to the user.
    async fn permission_request(
        &self,
        tool: &dyn Tool,
        input: Value,
        ask: PermissionResult,
        ctx: &ToolUseContext,
        messages: &mut Vec<Message>,
    ) -> AfterPermissionRequest {
        let suggestions = match &ask {
            PermissionResult::Ask { suggestions, .. } => suggestions.clone(),
            _ => Vec::new(),
        };
        let call = HookCall {
            tool,
            tool_use_id: ctx.tool_use_id().unwrap_or_default(),
            input: &input,
            duration: None,
        };
        let out = self
            .hooks
            .permission_request(call, &suggestions, ctx)
            .instrument(tracing::info_span!("hooks", event = "PermissionRequest"))
            .await;
        messages.extend(out.messages);
        if let Some(reason) = out.stop {
            // `continue: false` overrides any verdict: nothing runs and the turn stops.
            let message = match reason {
                Some(r) => format!("Execution stopped by PermissionRequest hook: {r}"),
                None => "Execution stopped by PermissionRequest hook".to_owned(),
            };
            return Err(Resolved::Rejected {
                judged: Some(input.clone()),
                reason: Some(DecisionReason::Hook {
                    hook: "PermissionRequest".into(),
                    reason: Some(message.clone()),
                }),
                message,
                source: "hook",
                interrupt: true,
            });
        }
        let hook_reason = |reason: Option<String>| {
            Some(DecisionReason::Hook {
                hook: "PermissionRequest".into(),
                reason,
            })
        };
        match out.verdict {
            None => Ok((input, ask)),
            Some(PermissionRequestVerdict::Deny {
                message, interrupt, ..
            }) => Err(Resolved::Rejected {
                judged: Some(input.clone()),
                reason: hook_reason(Some(message.clone())),
                message,
                source: "hook",
                interrupt,
            }),
            Some(PermissionRequestVerdict::Allow {
                updated_input,
                updated_permissions,
                ..
            }) => {
                // Refused or malformed rules are said, not dropped in silence. Applying
                // them may write a settings file: off the runtime's workers.
                let problems =
                    off_the_workers(async { self.permissions.apply_updates(&updated_permissions) })
                        .await;
                for problem in problems {
                    messages.push(Message::System(format!(
                        "PermissionRequest hook: its updatedPermissions were not all applied: {problem}"
                    )));
                }
                messages.extend(
                    hook_update_notes(&updated_permissions, ctx.permission().managed_rules_only)
                        .into_iter()
                        .map(Message::System),
                );
                // An input the tool cannot take could never run: refused here, never put to
                // the user by an ask rule.
                let input = match updated_input {
                    Some(update) => match as_checked(tool, update, ctx).await {
                        Ok(checked) => checked,
                        Err(message) => {
                            return Err(Resolved::Invalid {
                                message,
                                accepted: Some(("hook", hook_reason(None))),
                            });
                        }
                    },
                    None => input,
                };
                match off_the_workers(self.permissions.check_rule_based(tool, &input, ctx)).await {
                    None => Err(Resolved::Allowed {
                        input,
                        source: "hook",
                        reason: hook_reason(None),
                    }),
                    Some(PermissionResult::Deny { message, reason }) => Err(Resolved::Rejected {
                        judged: Some(input.clone()),
                        message,
                        source: "config",
                        interrupt: false,
                        reason: Some(reason),
                    }),
                    Some(mut ask) => {
                        // Said, so that a refusal does not read as if no hook had answered.
                        if let PermissionResult::Ask { message, .. } = &mut ask {
                            let trimmed = message.trim_end();
                            let stop = if trimmed.is_empty() || trimmed.ends_with(['.', '!', '?']) {
                                ""
                            } else {
                                "."
                            };
                            *message = format!(
                                "{trimmed}{stop} A PermissionRequest hook allowed the call, but an ask rule or a safety check still needs the user's approval."
                            )
                            .trim_start()
                            .to_owned();
                        }
                        Ok((input, ask))
                    }
                }
            }
        }
    }

    /// Claude Code's `canUseTool`: the full decision (or a forced ask), then PermissionRequest
    /// hooks, then the prompter.
    async fn can_use_tool(
        &self,
        tool: &dyn Tool,
        input: Value,
        forced: Option<PermissionResult>,
        ctx: &ToolUseContext,
        hooks_ctx: &ToolUseContext,
        messages: &mut Vec<Message>,
    ) -> Resolved {
        let decision = match forced {
            Some(ask) => ask,
            None => off_the_workers(self.permissions.decide(tool, &input, ctx)).await,
        };
        let (input, decision) = match decision {
            ask @ PermissionResult::Ask { .. } => {
                match self
                    .permission_request(tool, input, ask, hooks_ctx, messages)
                    .await
                {
                    Ok(next) => next,
                    Err(resolved) => return resolved,
                }
            }
            other => (input, other),
        };
        let resolved = match decision {
            // Stopped while its PermissionRequest hooks ran (a user interrupt before its tool
            // started): no question is put.
            PermissionResult::Ask { .. } if hooks_ctx.is_cancelled() => {
                return Resolved::withdrawn();
            }
            ask @ PermissionResult::Ask { .. } => {
                let asking = Asking {
                    prompter: self.prompter.as_ref(),
                    answered: std::sync::atomic::AtomicBool::new(false),
                };
                let prompt = self
                    .permissions
                    .resolve_ask(&asking, tool, &input, ctx, ask);
                let answered = tokio::select! {
                    biased;
                    () = ctx.cancellation().cancelled() => None,
                    answer = prompt => Some(answer),
                };
                match answered {
                    Some(PermissionResult::Allow {
                        updated_input,
                        reason,
                    }) => {
                        let source = match reason {
                            Some(DecisionReason::User { permanent: true }) => "user_permanent",
                            _ => "user_temporary",
                        };
                        return Resolved::Allowed {
                            input: updated_input.unwrap_or(input),
                            source,
                            reason,
                        };
                    }
                    Some(PermissionResult::Deny { message, reason }) => {
                        // Refused without a person's answer (a session that cannot prompt, a
                        // question that could not be put): the configuration's refusal, as
                        // Claude Code's permission wrapper makes it under `dontAsk` or for an
                        // agent that avoids prompts, no user's.
                        let by_a_person =
                            asking.answered.load(std::sync::atomic::Ordering::Acquire);
                        let source = if by_a_person { "user_reject" } else { "config" };
                        // A user's rejection without feedback stops the turn (Claude Code
                        // aborts it).
                        let interrupt = by_a_person && message == REJECT_MESSAGE;
                        return Resolved::Rejected {
                            judged: Some(input.clone()),
                            message,
                            source,
                            interrupt,
                            reason: Some(reason),
                        };
                    }
                    Some(other) => other,
                    // Cancelled while the user was being asked: the prompt is withdrawn, not
                    // answered. No user rejection, so this does not stop the turn by itself
                    // (whoever cancelled decides that); the executor shows why it ended.
                    None => return Resolved::withdrawn(),
                }
            }
            other => other,
        };
        match resolved {
            PermissionResult::Allow {
                updated_input,
                reason,
            } => Resolved::Allowed {
                input: updated_input.unwrap_or(input),
                source: "config",
                reason,
            },
            PermissionResult::Deny { message, reason } => Resolved::Rejected {
                judged: Some(input.clone()),
                message,
                source: "config",
                interrupt: false,
                reason: Some(reason),
            },
            // A policy that has no opinion at the end allows nothing.
            PermissionResult::Ask {
                message, reason, ..
            } => Resolved::Rejected {
                judged: Some(input.clone()),
                message,
                source: "config",
                interrupt: false,
                reason,
            },
            PermissionResult::Passthrough { message, .. } => Resolved::Rejected {
                judged: Some(input.clone()),
                message: message.unwrap_or_else(|| {
                    format!("Permission to use {} has not been granted.", tool.name())
                }),
                source: "config",
                interrupt: false,
                reason: None,
            },
        }
    }
}

/// How a call failed: the tool's own error, or a panic caught at the boundary.
enum CallError {
    Tool(ToolError),
    Panic(String),
}

/// Where an ask goes after the PermissionRequest hooks: on to the user (with the input to
/// show), or settled by a hook.
type AfterPermissionRequest = Result<(Value, PermissionResult), Resolved>;

/// The context a call's PostToolUse or PostToolUseFailure hooks run in: where the call
/// moved, when it moved (a Bash `cd`) and the move will hold (the call ran alone, so the
/// executor applies its change; a cancelled call's is dropped), as in Claude Code, whose
/// Bash moves the process itself before the hooks run.
fn moved(
    ctx: &ToolUseContext,
    change: Option<&ContextModifier>,
    schedule: &Schedule,
) -> ToolUseContext {
    match change.and_then(ContextModifier::new_cwd) {
        Some(dir) if !schedule.concurrency_safe && !ctx.is_cancelled() => ctx.clone().with_cwd(dir),
        _ => ctx.clone(),
    }
}

/// Runs a call's post hooks (`run` gets the context to run them in). Those hooks report on the
/// call that ended (PostToolUseFailure with `is_interrupt`), so for a cancelled call (an
/// interrupt, a sibling's failure) the cancellation that ended it must not stop them before
/// they start: they get a fresh token, which fires after [`CANCEL_GRACE`], so a hung hook
/// cannot hold a cancelled turn open for its whole timeout.
async fn post_hooks<F: std::future::Future>(
    ctx: &ToolUseContext,
    run: impl FnOnce(ToolUseContext) -> F,
) -> F::Output {
    if !ctx.is_cancelled() {
        return run(ctx.clone()).await;
    }
    let token = tool_core::CancellationToken::new();
    let hooks = run(ctx.clone().with_cancellation(token.clone()));
    tokio::pin!(hooks);
    tokio::select! {
        out = &mut hooks => out,
        () = tokio::time::sleep(CANCEL_GRACE) => {
            token.cancel();
            hooks.await
        }
    }
}

/// The executor's hold on a call it scheduled as concurrency-safe. Just before the tool
/// runs, a call whose input (changed by a hook or the user since it was scheduled) is no
/// longer concurrency-safe asks, through it, to run alone, and waits until it may: the
/// executor starts nothing new and lets the calls running beside it finish first. It runs
/// in the context it was scheduled with, where its permission was decided (a modifier
/// applied while it waited does not reach it); an interrupt while it waits answers it as a
/// queued call.
pub(crate) struct ExclusiveGate {
    /// The call's place in the executor's records.
    pub(crate) index: usize,
    /// Where the executor hears the request; the answer comes on the sender it carries.
    pub(crate) requests:
        tokio::sync::mpsc::UnboundedSender<(usize, tokio::sync::oneshot::Sender<()>)>,
}

impl ExclusiveGate {
    /// Resolves once the call may run alone (`true`), or once the executor has answered it
    /// otherwise or is gone (`false`: the call must not run).
    async fn run_alone(&self) -> bool {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.requests.send((self.index, tx)).is_ok() && rx.await.is_ok()
    }
}

/// A call's input once the schema step and the tool's validation took it, and the input
/// hooks, permission checks and the user see (3.4.5: derived fields filled in, such as a file
/// tool's absolute path; `None` when there are none to fill in).
struct CheckedInput {
    input: Value,
    observed: Option<Value>,
}

/// How a call was scheduled, and whether the input it runs with is concurrency-safe (the
/// input that runs decides: a hook or the user may have changed it).
struct Schedule {
    gate: Option<ExclusiveGate>,
    start: Option<ToolStart>,
    concurrency_safe: bool,
}

/// How the executor holds a call it scheduled.
pub(crate) struct Scheduled {
    /// Set when the call was scheduled as concurrency-safe.
    pub(crate) gate: Option<ExclusiveGate>,
    /// Whether its tool has started.
    pub(crate) start: ToolStart,
}

/// Whether a scheduled call's tool has started. A user interrupt lets a `Block` tool that
/// runs finish, but a call still in its PreToolUse hooks or waiting for its permission has
/// done nothing yet: it is answered as one that never started (Claude Code's aborted signal,
/// which every call sees, stops such a call at its next step). One compare-and-swap on each
/// side decides which came first, the tool's start or the interrupt.
#[derive(Clone)]
pub(crate) struct ToolStart {
    state: Arc<std::sync::atomic::AtomicU8>,
    /// A child of the call's token, cancelled by [`ToolStart::stop`] too: the hooks run
    /// with it.
    stop: tokio_util::sync::CancellationToken,
}

impl ToolStart {
    const BEFORE: u8 = 0;
    const STARTED: u8 = 1;
    const STOPPED: u8 = 2;

    /// For a call running with `token`.
    pub(crate) fn new(token: &tokio_util::sync::CancellationToken) -> Self {
        Self {
            state: Arc::default(),
            stop: token.child_token(),
        }
    }

    /// The pipeline, just before the tool runs: `false` when the call was stopped first
    /// (it must not run).
    fn start(&self) -> bool {
        use std::sync::atomic::Ordering;
        self.state
            .compare_exchange(
                Self::BEFORE,
                Self::STARTED,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
    }

    /// The executor's interrupt: `true` when the tool had not started (it now never will,
    /// and its hooks, PreToolUse or PermissionRequest, are stopped).
    pub(crate) fn stop(&self) -> bool {
        use std::sync::atomic::Ordering;
        let stopped = self
            .state
            .compare_exchange(
                Self::BEFORE,
                Self::STOPPED,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok();
        if stopped {
            self.stop.cancel();
        }
        stopped
    }

    fn is_stopped(&self) -> bool {
        self.state.load(std::sync::atomic::Ordering::Acquire) == Self::STOPPED
    }
}

/// The pipeline's prompter as one call's permission question reaches it: whether a person
/// answered tells a person's rejection (`user_reject`) from a refusal made without asking
/// anyone (`config`): the permission policy's own (a session that cannot prompt), or the
/// prompter's when it says so ([`PromptAnswer::Unanswered`]).
struct Asking<'a> {
    prompter: &'a dyn Prompter,
    answered: std::sync::atomic::AtomicBool,
}

#[async_trait::async_trait]
impl Prompter for Asking<'_> {
    async fn prompt(&self, request: &PromptRequest) -> PromptAnswer {
        let answer = self.prompter.prompt(request).await;
        let by_a_person = !matches!(answer, PromptAnswer::Unanswered { .. });
        self.answered
            .store(by_a_person, std::sync::atomic::Ordering::Release);
        answer
    }
}

/// The decision source of a permission question withdrawn unanswered (the call was
/// cancelled while the user was being asked).
const WITHDRAWN: &str = "user_abort";

/// The permission flow's verdict for one call.
enum Resolved {
    Allowed {
        input: Value,
        source: &'static str,
        reason: Option<DecisionReason>,
    },
    Rejected {
        message: String,
        source: &'static str,
        interrupt: bool,
        reason: Option<DecisionReason>,
        /// The input the refusal judged: a hook's or the user's rewrite of the model's,
        /// which a log of the call names. `None` for a question withdrawn unanswered.
        judged: Option<Value>,
    },
    /// A hook changed the input into one the tool's schema refuses: it could never run, so
    /// it is refused with the reason ([`Ending::InvalidInput`]) before anyone is asked.
    Invalid {
        /// The validation error for the model.
        message: String,
        /// The source and reason of the hook's allow that came with the change, if any
        /// (what the outcome reports as its decision).
        accepted: Option<(&'static str, Option<DecisionReason>)>,
    },
}

impl Resolved {
    /// A question withdrawn unanswered, or never put (the call was cancelled or stopped):
    /// no user rejection, so it does not stop the turn by itself.
    fn withdrawn() -> Self {
        Self::Rejected {
            message: REJECT_MESSAGE.to_owned(),
            source: WITHDRAWN,
            interrupt: false,
            reason: None,
            judged: None,
        }
    }
}

/// Runs a step before the tool (its validation, its observable input, a permission
/// decision, the application of a hook's permission updates) so that a file-system call in
/// it that never returns (Read's `stat` of its file, or the `realpath` of a path, on a hung
/// network mount: the path rules judge where links lead) holds only its own call, never one
/// of the runtime's workers. On a multi-threaded runtime the worker first hands its other
/// tasks to another thread (`block_in_place`), so that signals, other calls and the rest of
/// the process go on while this call waits; with every worker held (two such calls on two
/// cores) nothing else would run, not even the handler of the signal that should end the
/// process. Elsewhere (a current-thread runtime, as in tests) the step is awaited as it is.
/// The hand-over costs a thread wake (a fraction of a microsecond when a thread is idle; a
/// new thread the first time). While a step blocks, nothing else in the call's own task
/// runs: a `timeout` or `select!` an embedder puts around [`Pipeline::run_tool_use`] fires
/// only when it returns (the executor's grace after a hard interrupt,
/// [`STUCK_CALL_GRACE`](crate::STUCK_CALL_GRACE), answers such a call from outside its
/// task). Public for permission layers that decide outside the pipeline (a wrapper that asks
/// the user and decides again): their file-system calls need the same shelter.
pub async fn off_the_workers<F: std::future::Future>(step: F) -> F::Output {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| handle.block_on(step))
        }
        _ => step.await,
    }
}

/// A hook's updated input as the permission checks must see it: through the tool's schema
/// step (with the repairs the call itself will get: `"timeout": "60000"` becomes a number)
/// and with its derived fields filled in ([`Tool::observable_input`]), as the model's input
/// is. Raw, an input the tool's typed view cannot read has no permission subject, and no
/// content rule or safety check would see it. An update the schema refuses is an error, the
/// validation error for the model ([`invalid_change_text`]): it could never run, so the
/// call is refused with it at once, never put to the user or judged by the rules as a call
/// they cannot read. The derived fields may look at the file system, so this runs off the
/// runtime's workers ([`off_the_workers`]).
async fn as_checked(tool: &dyn Tool, update: Value, ctx: &ToolUseContext) -> Result<Value, String> {
    off_the_workers(async {
        let parsed = tool
            .parse_input(update)
            .map_err(|e| invalid_change_text(&e))?;
        Ok(tool.observable_input(&parsed, ctx).unwrap_or(parsed))
    })
    .await
}

/// What the model is told of an input a hook or the permission prompt changed into one the
/// tool's schema refuses.
fn invalid_change_text(e: &tool_core::InputError) -> String {
    tool_use_error(format_args!(
        "InputValidationError: the input as changed by a hook or the permission prompt is \
         not valid: {}",
        e.message()
    ))
}

/// The outcome of a call whose input a hook changed into one the tool's schema refuses
/// (`message`, [`invalid_change_text`]): [`Ending::InvalidInput`], with the hooks' messages,
/// the decision of the hook's allow that came with the change (`accepted`, if any) and a
/// hook's `continue: false`, which still ends the turn.
fn refused_change(
    tool_use: &ToolUse,
    message: String,
    accepted: Option<(&'static str, Option<DecisionReason>)>,
    messages_before: Vec<Message>,
    stop: Option<Option<String>>,
) -> CallOutcome {
    let mut out = CallOutcome::new(
        tool_use,
        ToolResultBlock::error(&tool_use.id, message),
        Ending::InvalidInput,
    );
    out.messages_before = messages_before;
    if let Some((source, reason)) = accepted {
        out.decision = Some(("accept", source));
        out.decision_reason = reason;
    }
    out.stop_turn = stop;
    note_stopped(&mut out);
    out
}

/// The input for the call (Claude Code's rule, step 3.4.9): hooks and permission checks saw
/// `observed` (derived fields filled in, see [`Tool::observable_input`]) and `decided` is
/// what they settled on. Unchanged, the call gets the model's `original` input; changed,
/// it gets the change, with every field still equal to its derived value put back as the
/// model wrote it (a hook that rewrote `content` leaves `file_path` the model's).
fn model_fields_restored(decided: Value, observed: Option<&Value>, original: Value) -> Value {
    let Some(observed) = observed else {
        return decided;
    };
    if &decided == observed {
        return original;
    }
    let Value::Object(mut fields) = decided else {
        return decided;
    };
    let (Some(derived), Some(model)) = (observed.as_object(), original.as_object()) else {
        return Value::Object(fields);
    };
    for (key, value) in derived {
        if model.get(key) != Some(value)
            && fields.get(key) == Some(value)
            && let Some(as_written) = model.get(key)
        {
            fields.insert(key.clone(), as_written.clone());
        }
    }
    Value::Object(fields)
}

/// The telemetry of one call: its `execute_tool` span, and the `tool_result` event and
/// duration histogram point it ends with. A guard: dropped before
/// [`finish`](Self::finish), because the call's future was dropped (an embedder's
/// `timeout` or `select!`, an aborted task, a runtime shutting down, `toolwright serve`
/// stopping), it ends the call as [`Ending::Cancelled`], so that the span still says why it
/// ended and the call still counts.
struct CallTelemetry<'a> {
    span: tracing::Span,
    tool_use: &'a ToolUse,
    started: Instant,
    /// Set when tool details are on.
    details: Option<ToolDetails>,
    finished: bool,
}

/// What `tool_result` adds when tool details are on.
struct ToolDetails {
    parameters: Option<String>,
    input: String,
    mcp_server_scope: Option<String>,
}

impl<'a> CallTelemetry<'a> {
    /// Opens the call's span (a child of the current span); `tools` are the tools the call
    /// is looked up in.
    fn start(tool_use: &'a ToolUse, tools: &[Arc<dyn Tool>], log_details: bool) -> Self {
        let span = tracing::info_span!(
            "execute_tool",
            otel.name = %format!("execute_tool {}", tool_use.name),
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = %tool_use.name,
            gen_ai.tool.call.id = %tool_use.id,
            gen_ai.tool.type = tracing::field::Empty,
            error.type = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
        );
        // A tool whose `name` or `mcp_info` panics costs its details, never the caller: a
        // panic in a call's steps is that call's failure.
        let details = log_details
            .then(|| {
                std::panic::catch_unwind(AssertUnwindSafe(|| {
                    ToolDetails::of(tool_use, find_tool(tools, &tool_use.name))
                }))
                .ok()
            })
            .flatten();
        Self {
            span,
            tool_use,
            started: Instant::now(),
            details,
            finished: false,
        }
    }

    /// Ends the call with `outcome` (its duration set here).
    fn finish(mut self, outcome: &mut CallOutcome) {
        self.finished = true;
        outcome.duration = self.started.elapsed();
        self.report(
            &outcome.ending,
            outcome.decision,
            // The tool's own time and output, as Claude Code reports them (not the time
            // spent on hooks or waiting for the user, not the saved result's preview).
            outcome.call_duration,
            outcome.duration,
            outcome
                .result_size_bytes
                .unwrap_or_else(|| outcome.result.content.text_bytes()),
        );
    }

    fn report(
        &self,
        ending: &Ending,
        decision: Option<(&str, &str)>,
        call_duration: Option<Duration>,
        duration: Duration,
        result_size_bytes: usize,
    ) {
        let span = &self.span;
        let tool_use = self.tool_use;
        let success = matches!(ending, Ending::Succeeded);
        let error_type = ending.error_type();
        if let Some(class) = error_type {
            span.record("error.type", class);
            span.record("otel.status_code", "ERROR");
        }
        let (decision, source) = decision.unwrap_or(("none", "none"));
        let details = self.details.as_ref();
        tracing::info!(
            target: "toolwright::tool_result",
            parent: span,
            tool_name = %tool_use.name,
            // Claude Code names the call on a failure only.
            use_id = (!success).then_some(tool_use.id.as_str()),
            success,
            error = error_type,
            duration_ms = millis(call_duration.unwrap_or_default()),
            pipeline_duration_ms = millis(duration),
            tool_result_size_bytes = result_size_bytes,
            decision_type = decision,
            decision_source = source,
            // Opt-in (`OTEL_LOG_TOOL_DETAILS`): absent unless tool details are on.
            tool_parameters = details.and_then(|d| d.parameters.as_deref()),
            tool_input = details.map(|d| d.input.as_str()),
            mcp_server_scope = details.and_then(|d| d.mcp_server_scope.as_deref()),
            "tool_result"
        );
        // The duration histogram: `tracing-opentelemetry`'s metrics layer turns a
        // `histogram.`-prefixed field into an OpenTelemetry histogram, the other fields into
        // its attributes (kept few and low-cardinality on purpose).
        // A name the model made up is not a tool: one series for all of them.
        let metric_name = if *ending == Ending::UnknownTool {
            "unknown"
        } else {
            tool_use.name.as_str()
        };
        tracing::info!(
            target: "toolwright::metrics",
            parent: span,
            success,
            histogram.toolwright.tool.duration = duration.as_secs_f64(),
            gen_ai.tool.name = metric_name,
            "tool_duration"
        );
    }
}

impl Drop for CallTelemetry<'_> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let report = || {
            self.report(&Ending::Cancelled, None, None, self.started.elapsed(), 0);
        };
        // The call may be dropped where its subscriber is not the default (a runtime
        // shutting down on another thread): report to the span's own.
        match self.span.with_subscriber(|(_, dispatch)| dispatch.clone()) {
            Some(dispatch) => tracing::dispatcher::with_default(&dispatch, report),
            None => report(),
        }
    }
}

impl ToolDetails {
    /// Claude Code's `tool_parameters` for the call (by the tool it names, when there is
    /// one), its input, and an MCP tool's scope.
    fn of(tool_use: &ToolUse, tool: Option<&Arc<dyn Tool>>) -> Self {
        let input = &tool_use.input;
        let name = tool.map_or(tool_use.name.as_str(), |t| t.name());
        let mut parameters = serde_json::Map::new();
        // (field in the input, name in `tool_parameters`)
        let copied: &[(&str, &str)] = match name {
            "Bash" => {
                if let Some(command) = input.get("command").and_then(Value::as_str) {
                    let first = command.split_whitespace().next().unwrap_or_default();
                    parameters.insert("bash_command".into(), first.into());
                    parameters.insert("full_command".into(), command.into());
                }
                &[
                    ("timeout", "timeout"),
                    ("description", "description"),
                    ("dangerouslyDisableSandbox", "dangerouslyDisableSandbox"),
                ]
            }
            "Skill" => &[("skill", "skill_name")],
            _ => &[],
        };
        for (from, to) in copied {
            if let Some(value) = input.get(from).filter(|v| !v.is_null()) {
                parameters.insert((*to).to_owned(), value.clone());
            }
        }
        let mcp = tool.and_then(|t| t.mcp_info());
        if let Some(info) = &mcp {
            parameters.insert("mcp_server_name".into(), info.server_name.clone().into());
            parameters.insert("mcp_tool_name".into(), info.tool_name.clone().into());
        }
        Self {
            parameters: (!parameters.is_empty())
                .then(|| capped_json(Value::Object(parameters), TOOL_PARAMETER_STRING_MAX_CHARS)),
            input: capped_json(input.clone(), TOOL_INPUT_STRING_MAX_CHARS),
            mcp_server_scope: mcp.and_then(|info| info.source),
        }
    }
}

/// `value` as JSON of at most [`TOOL_DETAILS_MAX_BYTES`] bytes, and valid JSON whatever its
/// size: every string in it cut to `max_chars` characters (cut ones end in `…`), then, while
/// the whole is too long, to half as many, down to [`TOOL_DETAILS_MIN_STRING_CHARS`]; a value
/// that is still too long (many numbers, many keys) is a JSON string saying it was cut and
/// how long it was. A consumer parses the field (Claude Code's is "JSON-serialized"), so it
/// is never cut mid-way.
fn capped_json(mut value: Value, max_chars: usize) -> String {
    fn cut_strings(value: &mut Value, max_chars: usize) {
        match value {
            Value::String(s) => {
                if let Some((at, _)) = s.char_indices().nth(max_chars) {
                    s.truncate(at);
                    s.push('…');
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| cut_strings(v, max_chars)),
            Value::Object(fields) => fields.values_mut().for_each(|v| cut_strings(v, max_chars)),
            _ => {}
        }
    }
    let mut chars = max_chars;
    loop {
        cut_strings(&mut value, chars);
        let json = value.to_string();
        if json.len() <= TOOL_DETAILS_MAX_BYTES {
            return json;
        }
        if chars <= TOOL_DETAILS_MIN_STRING_CHARS {
            return Value::String(format!(
                "(cut: {} bytes of JSON even with its strings cut to {chars} characters; \
                 at most {TOOL_DETAILS_MAX_BYTES} are kept)",
                json.len()
            ))
            .to_string();
        }
        chars = (chars / 2).max(TOOL_DETAILS_MIN_STRING_CHARS);
    }
}

/// `text` cut to at most `max_bytes` bytes (on a character boundary), ending in `…` when cut.
fn bounded(text: &str, max_bytes: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max_bytes {
        return text.into();
    }
    let mut at = max_bytes.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}…", &text[..at]).into()
}

/// `OTEL_LOG_TOOL_DETAILS` as Claude Code reads it ([`tool_core::env_truthy`]).
fn tool_details_from_env() -> bool {
    std::env::var("OTEL_LOG_TOOL_DETAILS").is_ok_and(|v| tool_core::env_truthy(&v))
}

/// Whole milliseconds, saturating.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The text of a caught panic's payload.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// What the user is told about a PermissionRequest hook's `updatedPermissions` beyond
/// applying its rule changes: rule changes it asked to save to a settings file hold for the
/// session only (Toolwright writes no settings file for a hook), and mode and directory
/// changes are not applied (docs/hooks.md). Empty when there is nothing to say. With
/// `managed_rules_only` no rule change is applied at all (each is reported as not added),
/// so none is said to hold for the session.
fn hook_update_notes(
    updates: &[tool_core::PermissionUpdate],
    managed_rules_only: bool,
) -> Vec<String> {
    use tool_core::{PermissionUpdate, UpdateDestination};
    // The destination's name as Claude Code spells it (`localSettings`).
    let name = |d: &UpdateDestination| {
        serde_json::to_value(d)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    };
    let mut files: Vec<String> = Vec::new();
    let mut not_applied: Vec<String> = Vec::new();
    let note = |list: &mut Vec<String>, item: String| {
        if !list.contains(&item) {
            list.push(item);
        }
    };
    for update in updates {
        match update {
            PermissionUpdate::AddRules { destination, .. }
            | PermissionUpdate::ReplaceRules { destination, .. }
            | PermissionUpdate::RemoveRules { destination, .. } => {
                if !managed_rules_only
                    && !matches!(
                        destination,
                        UpdateDestination::Session | UpdateDestination::CliArg
                    )
                {
                    note(&mut files, name(destination));
                }
            }
            PermissionUpdate::SetMode { mode, .. } => {
                note(&mut not_applied, format!("setMode ({})", mode.as_str()));
            }
            PermissionUpdate::AddDirectories { .. } => {
                note(&mut not_applied, "addDirectories".to_owned());
            }
            PermissionUpdate::RemoveDirectories { .. } => {
                note(&mut not_applied, "removeDirectories".to_owned());
            }
        }
    }
    let mut out = Vec::new();
    if !files.is_empty() {
        out.push(format!(
            "PermissionRequest hook: the rule changes it asked to save to {} hold for this \
             session only; Toolwright writes no settings file for a hook",
            files.join(", ")
        ));
    }
    if !not_applied.is_empty() {
        out.push(format!(
            "PermissionRequest hook: its {} were not applied; Toolwright applies only the rule \
             changes of a hook's updatedPermissions",
            not_applied.join(" and ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{hook_update_notes, model_fields_restored};

    /// What the user is told of a hook's `updatedPermissions`: a rule change meant for a
    /// settings file holds for the session, unless only managed settings may give rules (then
    /// it is not added at all, and said so elsewhere: "hold for this session" would be
    /// false); a mode change is never applied.
    #[test]
    fn a_hooks_updates_are_described_as_what_became_of_them() {
        let updates: Vec<tool_core::PermissionUpdate> = serde_json::from_value(json!([
            {"type": "addRules", "behavior": "allow", "destination": "localSettings",
             "rules": [{"toolName": "Bash", "ruleContent": "ls:*"}]},
            {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
        ]))
        .unwrap();
        let notes = hook_update_notes(&updates, false);
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(notes[0].contains("save to localSettings hold for this session only"));
        assert!(notes[1].contains("its setMode (acceptEdits) were not applied"));
        let notes = hook_update_notes(&updates, true);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("setMode"), "{notes:?}");
    }

    #[test]
    fn the_call_gets_the_models_fields_unless_a_hook_changed_them() {
        let model = json!({"file_path": "~/a.txt", "content": "x"});
        let observed = json!({"file_path": "/home/u/a.txt", "content": "x"});
        // Nobody changed anything: the model's input.
        assert_eq!(
            model_fields_restored(observed.clone(), Some(&observed), model.clone()),
            model
        );
        // A hook rewrote the content: the path goes back to the model's.
        let rewritten = json!({"file_path": "/home/u/a.txt", "content": "y"});
        assert_eq!(
            model_fields_restored(rewritten, Some(&observed), model.clone()),
            json!({"file_path": "~/a.txt", "content": "y"})
        );
        // A hook moved the file: its path stands.
        let moved = json!({"file_path": "/home/u/b.txt", "content": "x"});
        assert_eq!(
            model_fields_restored(moved.clone(), Some(&observed), model.clone()),
            moved
        );
        // A tool with nothing derived: the decision as it is.
        assert_eq!(
            model_fields_restored(json!({"a": 2}), None, json!({"a": 1})),
            json!({"a": 2})
        );
    }
}
