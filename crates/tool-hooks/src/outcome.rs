//! Typed aggregate outcomes of running all hooks of one event.

use std::fmt;
use std::time::Duration;

use serde_json::Value;
use tool_core::{Attachment, DecisionReason, Message, PermissionResult, PermissionUpdate};

use crate::output::{HookSpecificOutput, PermissionDecision};

/// A text produced by one hook, with the hook's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookMessage {
    /// The hook (its command line, URL or native name).
    pub hook: String,
    /// The text.
    pub text: String,
}

impl fmt::Display for HookMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "hook `{}`: {}", self.hook, self.text)
    }
}

/// A hook asked the agent to stop (`continue: false`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopRequest {
    /// The hook.
    pub hook: String,
    /// Its `stopReason`, if any.
    pub reason: Option<String>,
}

/// How one hook ran (for logs and telemetry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRunReport {
    /// The hook.
    pub hook: String,
    /// Its exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// Whether it hit its timeout (its process group was killed).
    pub timed_out: bool,
    /// Whether it was cancelled (its process group was killed).
    pub cancelled: bool,
    /// Wall time from spawn to end.
    pub duration: Duration,
}

/// What every event's outcome has. All lists are in configuration order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommonOutcome {
    /// `additionalContext` values (and, for UserPromptSubmit/UserPromptExpansion/
    /// SessionStart): context for the model.
    pub additional_contexts: Vec<HookMessage>,
    /// Plain stdout that becomes context (SessionStart, UserPromptSubmit): Claude Code's
    /// "hook success" output, for the model.
    pub stdout_contexts: Vec<HookMessage>,
    /// `systemMessage` values: warnings for the user.
    pub system_messages: Vec<HookMessage>,
    /// Blocking errors: exit code 2, top-level `decision: "block"` (with its `reason`), or a
    /// failure of an `onFailure: "block"` hook. What they mean depends on the event (on
    /// PreToolUse they are already folded into the deny decision).
    pub blocking_errors: Vec<HookMessage>,
    /// Non-blocking errors (bad output, other exit codes, timeouts, start failures); the
    /// action proceeds. Each names its hook.
    pub errors: Vec<HookMessage>,
    /// The first hook (in configuration order) that set `continue: false`.
    pub stop: Option<StopRequest>,
    /// Whether the run was cancelled by the context's token (hooks' process groups killed).
    pub cancelled: bool,
    /// One report per hook that ran (async hooks not included).
    pub runs: Vec<HookRunReport>,
    /// What `asyncRewake` hooks that exited with code 2 say to the model (their stderr,
    /// else stdout). Only the results of background hooks
    /// ([`HookRunner::take_async_results`](crate::HookRunner::take_async_results)) hold any.
    pub wake_messages: Vec<HookMessage>,
    /// What the event's matchers were matched against (the tool's name on a tool event,
    /// SessionStart's source), when the outcome says it itself: the result of a
    /// background hook ([`HookRunner::take_async_results`](crate::HookRunner::take_async_results)),
    /// which a host words without the call at hand. [`messages`](Self::messages) names the
    /// hook with it when given no `matched` (`PostToolUse:Bash hook additional context: …`,
    /// as a synchronous hook's context reads). `None` on the outcomes of a run, whose host
    /// passes it.
    pub matched: Option<String>,
}

impl CommonOutcome {
    /// Whether a hook set `continue: false`.
    pub fn prevent_continuation(&self) -> bool {
        self.stop.is_some()
    }

    /// Whether there is a blocking error.
    pub fn is_blocked(&self) -> bool {
        !self.blocking_errors.is_empty()
    }

    /// `continue: false` in the shape hosts use: `Some(reason)` when a hook asked to stop.
    pub fn stop_turn(&self) -> Option<Option<String>> {
        self.stop.as_ref().map(|s| s.reason.clone())
    }

    /// The outcome as conversation messages, in configuration order, worded as Claude Code
    /// words them. `event` is the event; `matched` what its matchers were matched against
    /// (the tool's name on a tool event, SessionStart's source), which names the hook
    /// (`PreToolUse:Bash`, `SessionStart:startup`; `None`: the outcome's own
    /// [`matched`](Self::matched), else the event alone). `systemMessage`s and non-blocking errors
    /// are system messages (for the user); for the model, each as a `<system-reminder>`:
    /// blocking errors as `hook_blocking_error` attachments (unless `include_blocking` is
    /// false, as on PreToolUse where they are already the deny message), `HOOK hook
    /// blocking error from command: "COMMAND": TEXT`; `additionalContext`s as
    /// `hook_additional_context` attachments, `HOOK hook additional context: TEXT` (a tool
    /// event's hook named with its tool, another by its event alone); plain stdout that is
    /// context as `hook_success` attachments, `HOOK hook success: TEXT`; then the
    /// [`wake_messages`](Self::wake_messages) of `asyncRewake` hooks as `queued_command`
    /// attachments, `EVENT hook blocking error from command "HOOK": TEXT`. The stop request
    /// and cancellation are left to the caller (see [`stop`](Self::stop) and
    /// [`cancelled`](Self::cancelled)), which words them for its own flow.
    pub fn messages(
        &self,
        event: &str,
        matched: Option<&str>,
        include_blocking: bool,
    ) -> Vec<Message> {
        let named = matched
            .or(self.matched.as_deref())
            .map_or_else(|| event.to_owned(), |m| format!("{event}:{m}"));
        let tool_event = matches!(
            event,
            "PreToolUse"
                | "PostToolUse"
                | "PostToolUseFailure"
                | "PermissionRequest"
                | "PermissionDenied"
        );
        let context_name = if tool_event { named.as_str() } else { event };
        let reminder = |text: String| format!("<system-reminder>\n{text}\n</system-reminder>");
        let mut out = Vec::new();
        for m in &self.system_messages {
            out.push(Message::System(m.text.clone()));
        }
        for e in &self.errors {
            out.push(Message::System(format!("{event} hook error: {e}")));
        }
        if include_blocking {
            for b in &self.blocking_errors {
                out.push(Message::Attachment(Attachment::new(
                    "hook_blocking_error",
                    reminder(format!(
                        "{named} hook blocking error from command: \"{}\": {}",
                        b.hook, b.text
                    )),
                )));
            }
        }
        for c in &self.additional_contexts {
            out.push(Message::Attachment(Attachment::new(
                "hook_additional_context",
                reminder(format!(
                    "{context_name} hook additional context: {}",
                    c.text
                )),
            )));
        }
        for c in &self.stdout_contexts {
            out.push(Message::Attachment(Attachment::new(
                "hook_success",
                reminder(format!("{named} hook success: {}", c.text)),
            )));
        }
        for w in &self.wake_messages {
            out.push(Message::Attachment(Attachment::new(
                "queued_command",
                reminder(format!(
                    "{event} hook blocking error from command \"{}\": {}",
                    w.hook, w.text
                )),
            )));
        }
        out
    }
}

/// The aggregated permission decision of PreToolUse hooks.
#[derive(Debug, Clone, PartialEq)]
pub struct PreToolDecision {
    /// allow / ask / deny / defer, by precedence deny > defer > ask > allow.
    pub behavior: PermissionDecision,
    /// The deciding hook (first in configuration order among those with the winning
    /// behaviour).
    pub hook: String,
    /// The hook's reason as given (`permissionDecisionReason`, else `reason`; an empty or
    /// blank one is none).
    pub reason: Option<String>,
    /// The text to show: for deny the model-facing message (the reason; without one
    /// `Hook PreToolUse:TOOL denied this tool` for a `permissionDecision`, `Blocked by hook`
    /// for a legacy `decision: "block"`; `PreToolUse:TOOL hook error: ...` for an exit-2
    /// block), for ask the prompt text (`Hook PreToolUse:TOOL asked for confirmation for
    /// this tool` when no reason).
    pub message: String,
    /// Whether the deny came from a blocking error (exit 2, `decision: "block"`,
    /// `onFailure: "block"`) rather than a `permissionDecision`.
    pub from_blocking_error: bool,
    /// With allow/ask: the input to run with, from the last hook in configuration order
    /// whose own decision was allow or ask and that returned `updatedInput`.
    pub updated_input: Option<Value>,
}

impl PreToolDecision {
    /// Why, for telemetry and permission results.
    pub fn decision_reason(&self) -> DecisionReason {
        DecisionReason::Hook {
            hook: self.hook.clone(),
            reason: self.reason.clone(),
        }
    }

    /// The decision as a [`PermissionResult`]; `None` for `defer` (the host decides what a
    /// deferral means).
    pub fn to_permission_result(&self) -> Option<PermissionResult> {
        Some(match self.behavior {
            PermissionDecision::Allow => PermissionResult::Allow {
                updated_input: self.updated_input.clone(),
                reason: Some(self.decision_reason()),
            },
            PermissionDecision::Ask => PermissionResult::Ask {
                message: self.message.clone(),
                updated_input: self.updated_input.clone(),
                suggestions: Vec::new(),
                reason: Some(self.decision_reason()),
            },
            PermissionDecision::Deny => PermissionResult::Deny {
                message: self.message.clone(),
                reason: self.decision_reason(),
            },
            PermissionDecision::Defer => return None,
        })
    }
}

/// What PreToolUse hooks decided for one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreToolUseOutcome {
    /// The aggregated decision, if any hook made one.
    pub decision: Option<PreToolDecision>,
    /// `updatedInput` from hooks that made no decision ("passthrough input update"): the
    /// last in configuration order. It replaces the working input; the normal permission
    /// flow continues.
    pub passthrough_input: Option<Value>,
    /// When the decision is `defer` and a hook also asked: that ask (the first in
    /// configuration order, with the decided `updatedInput`). A host that does not honour
    /// deferrals uses it, so that a deferral never swallows another hook's ask.
    pub ask_behind_defer: Option<PreToolDecision>,
    /// Contexts, messages, errors, stop request.
    pub common: CommonOutcome,
}

impl PreToolUseOutcome {
    /// The input the call should continue with: the decision's updated input (allow/ask),
    /// else the passthrough update, else `None` (unchanged).
    pub fn effective_input(&self) -> Option<&Value> {
        self.decision
            .as_ref()
            .and_then(|d| d.updated_input.as_ref())
            .or(self.passthrough_input.as_ref())
    }

    /// Whether the call is denied by a hook.
    pub fn is_denied(&self) -> bool {
        self.decision
            .as_ref()
            .is_some_and(|d| d.behavior == PermissionDecision::Deny)
    }
}

/// What PostToolUse hooks returned for one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostToolUseOutcome {
    /// `updatedToolOutput` (last in configuration order): replaces the output if it matches
    /// the tool's output shape (the host checks).
    pub updated_tool_output: Option<Value>,
    /// `updatedMCPToolOutput` (last in configuration order): replaces an MCP tool's output.
    pub updated_mcp_tool_output: Option<Value>,
    /// Contexts, blocking feedback (`common.blocking_errors`: shown to the model next to the
    /// result, which is not changed), messages, errors, stop request.
    pub common: CommonOutcome,
}

/// The outcome of an event without tool-specific aggregation (PostToolUseFailure,
/// PostToolBatch, SessionStart, Stop, UserPromptSubmit, ...).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventOutcome {
    /// Every valid `hookSpecificOutput`, with its hook, in configuration order (for
    /// event-specific fields such as `sessionTitle`, `initialUserMessage`, `watchPaths`).
    pub hook_specific: Vec<(String, HookSpecificOutput)>,
    /// Contexts, blocking errors (Stop: keep going with this reason; UserPromptSubmit:
    /// reject the prompt; PostToolBatch: stop the loop), messages, errors, stop request.
    pub common: CommonOutcome,
}

/// A PermissionRequest hook's verdict.
#[derive(Debug, Clone, PartialEq)]
pub enum PermissionRequestVerdict {
    /// Approve (deny and ask rules still apply; `updated_input` must be re-checked).
    Allow {
        /// The deciding hook.
        hook: String,
        /// The input to run with (last in configuration order among allowing hooks).
        updated_input: Option<Value>,
        /// Permission updates to apply, from all allowing hooks in configuration order.
        updated_permissions: Vec<PermissionUpdate>,
    },
    /// Refuse.
    Deny {
        /// The deciding hook (first denying hook in configuration order).
        hook: String,
        /// The message for the model.
        message: String,
        /// Also interrupt the agent.
        interrupt: bool,
    },
}

/// What PermissionRequest hooks decided.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PermissionRequestOutcome {
    /// The verdict (deny beats allow); `None` when no hook decided (show the prompt).
    pub verdict: Option<PermissionRequestVerdict>,
    /// Messages, errors, stop request (exit 2 is not blocking on this event).
    pub common: CommonOutcome,
}

/// What PermissionDenied hooks returned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PermissionDeniedOutcome {
    /// Whether any hook returned `retry: true` (tell the model it may retry).
    pub retry: bool,
    /// Messages, errors, stop request.
    pub common: CommonOutcome,
}

/// The delivered result of an `async: true` (or `asyncRewake: true`) hook, to hand to the
/// model on the next turn.
#[derive(Debug, Clone, PartialEq)]
pub struct AsyncHookResult {
    /// The event it ran for.
    pub event: String,
    /// An `async` hook's `additionalContext` / `systemMessage` / errors; an `asyncRewake`
    /// hook's wake message (exit code 2) or errors.
    pub common: CommonOutcome,
}
