//! The three seams the pipeline is built around: who decides permissions, who asks the user,
//! and who runs hooks.
//!
//! Each is a small async trait, so the pipeline can be tested with plain implementations and
//! a host can put its own policy in place. `tool-perms` and `tool-hooks` provide the
//! Claude Code-compatible implementations; the ones here are the explicit trivial choices
//! ([`AllowAll`], [`DenyAsks`], [`NoHooks`]).

use async_trait::async_trait;
use serde_json::Value;
use tool_core::{
    DecisionReason, HookEventOutcome, HookEvents, Message, PermissionResult, PermissionUpdate,
    Tool, ToolUseContext,
};
pub use tool_hooks::PermissionRequestVerdict;

use crate::ToolUse;
pub use tool_perms::{
    PromptAnswer, PromptRequest, Prompter, REJECT_MESSAGE, REJECT_WITH_FEEDBACK_PREFIX,
};

/// Decides whether a call may run (Claude Code's `hasPermissionsToUseTool`).
#[async_trait]
pub trait Permissions: Send + Sync {
    /// The full decision for a call: deny, ask or allow (never passthrough: the
    /// implementation turns "no opinion" into ask). Ask means a person must be asked; the
    /// pipeline hands it to the [`Prompter`].
    async fn decide(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> PermissionResult;

    /// Only the rule-based objections (deny and ask rules, the tool's own deny, safety
    /// checks), used after a PreToolUse hook allowed the call: `None` means no objection.
    async fn check_rule_based(
        &self,
        tool: &dyn Tool,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> Option<PermissionResult>;

    /// Turns an `Ask` into allow or deny by asking `prompter` (results other than `Ask` are
    /// returned unchanged). The default asks once and remembers nothing; the permission
    /// engine also stores "don't ask again" answers as session rules.
    async fn resolve_ask(
        &self,
        prompter: &dyn Prompter,
        tool: &dyn Tool,
        input: &Value,
        _ctx: &ToolUseContext,
        ask: PermissionResult,
    ) -> PermissionResult {
        let PermissionResult::Ask {
            message,
            updated_input,
            suggestions,
            reason,
        } = ask
        else {
            return ask;
        };
        let request = PromptRequest {
            tool_name: tool.name().to_owned(),
            input: updated_input.clone().unwrap_or_else(|| input.clone()),
            message,
            reason: reason.clone(),
            suggestions,
            dont_ask_again: Vec::new(),
        };
        match prompter.prompt(&request).await {
            PromptAnswer::AllowOnce {
                updated_input: changed,
            } => PermissionResult::Allow {
                updated_input: changed.or(updated_input),
                reason: Some(DecisionReason::User { permanent: false }),
            },
            // Nothing is remembered here, but the user did answer "always".
            PromptAnswer::AllowAlways {
                updated_input: changed,
                ..
            } => PermissionResult::Allow {
                updated_input: changed.or(updated_input),
                reason: Some(DecisionReason::User { permanent: true }),
            },
            refusal @ (PromptAnswer::Deny { .. } | PromptAnswer::Unanswered { .. }) => {
                PermissionResult::Deny {
                    message: refusal.refusal_message(tool.name()).unwrap_or_default(),
                    reason: reason.unwrap_or(DecisionReason::Other {
                        reason: if matches!(refusal, PromptAnswer::Deny { .. }) {
                            "the user decided"
                        } else {
                            "no one answered the permission question"
                        }
                        .into(),
                    }),
                }
            }
        }
    }

    /// Applies permission updates a PermissionRequest hook returned with its allow
    /// (`updatedPermissions`) and returns what could not be applied (a malformed rule, rules
    /// refused under `allowManagedPermissionRulesOnly`), which the user is told. The default
    /// ignores them; the permission engine adds and removes its rules (saving to a settings
    /// file is the host's job).
    fn apply_updates(&self, _updates: &[PermissionUpdate]) -> Vec<String> {
        Vec::new()
    }
}

/// Allows every call. For hosts that decide elsewhere and for tests; never a default.
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

#[async_trait]
impl Permissions for AllowAll {
    async fn decide(
        &self,
        _tool: &dyn Tool,
        _input: &Value,
        _ctx: &ToolUseContext,
    ) -> PermissionResult {
        PermissionResult::Allow {
            updated_input: None,
            reason: Some(DecisionReason::Other {
                reason: "allow-all".into(),
            }),
        }
    }
    async fn check_rule_based(
        &self,
        _tool: &dyn Tool,
        _input: &Value,
        _ctx: &ToolUseContext,
    ) -> Option<PermissionResult> {
        None
    }
}

/// The prompter of a session with nobody to ask: every ask is refused with a message saying
/// so, and the turn goes on. (A session that cannot prompt should also set
/// `ToolPermissionContext::avoid_prompts`, so the engine refuses asks itself, once
/// PermissionRequest hooks gave no verdict.)
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAsks;

#[async_trait]
impl Prompter for DenyAsks {
    async fn prompt(&self, request: &PromptRequest) -> PromptAnswer {
        PromptAnswer::Unanswered {
            message: Some(format!(
                "Permission to use {} requires approval, and this session has no one to ask. Do not retry this call.",
                request.tool_name
            )),
        }
    }
}

/// The call as hooks see it.
#[derive(Debug, Clone, Copy)]
pub struct HookCall<'a> {
    /// The tool.
    pub tool: &'a dyn Tool,
    /// The call's id.
    pub tool_use_id: &'a str,
    /// The input (after earlier rewrites).
    pub input: &'a Value,
    /// How long the call ran: set for PostToolUse and PostToolUseFailure (`duration_ms`).
    pub duration: Option<std::time::Duration>,
}

/// A PreToolUse hook's permission decision, aggregated across hooks (deny > ask > allow).
#[derive(Debug, Clone, PartialEq)]
pub enum HookDecision {
    /// Allowed by the hook (deny and ask rules still apply).
    Allow {
        /// A rewritten input.
        updated_input: Option<Value>,
        /// Why.
        reason: Option<String>,
    },
    /// The user must be asked, with this reason.
    Ask {
        /// A rewritten input.
        updated_input: Option<Value>,
        /// Why.
        reason: Option<String>,
    },
    /// Blocked; `message` is what the model sees.
    Deny {
        /// The model-facing text.
        message: String,
    },
}

/// What the PreToolUse hooks of one call produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreToolUseOutcome {
    /// The aggregated permission decision, if any hook made one.
    pub decision: Option<HookDecision>,
    /// An input rewrite without a decision (the permission flow continues normally).
    pub updated_input: Option<Value>,
    /// Messages for the conversation (additional context, system messages, errors).
    pub messages: Vec<Message>,
    /// `continue: false`: the turn stops after this call, with this reason if given.
    pub stop: Option<Option<String>>,
    /// The hooks were cancelled: the call does not run.
    pub cancelled: bool,
}

/// What the PermissionRequest hooks of one call produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PermissionRequestOutcome {
    /// The hooks' answer in place of the user's, if any hook gave one.
    pub verdict: Option<PermissionRequestVerdict>,
    /// Messages for the conversation (system messages and hook errors).
    pub messages: Vec<Message>,
    /// `continue: false`, with its reason if given: overrides any verdict; the call does not
    /// run and the turn stops.
    pub stop: Option<Option<String>>,
}

/// What the PostToolUse (or PostToolUseFailure) hooks of one call produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostToolUseOutcome {
    /// Messages for the conversation after the result.
    pub messages: Vec<Message>,
    /// A replacement for the tool's structured output (`updatedToolOutput`, or for an MCP
    /// tool the legacy `updatedMCPToolOutput`), rendered by [`Tool::render_output`]; ignored
    /// when the tool does not take it.
    pub updated_output: Option<Value>,
    /// `continue: false`: the turn stops after this call.
    pub stop: Option<Option<String>>,
}

/// A conversation-level hook event. The pipeline never raises these: an agent loop (or any
/// host that owns the conversation) reports them through [`Hooks::loop_event`]. Inside a
/// sub-agent the context carries the agent's id and type ([`ToolUseContext::agent`]).
#[derive(Debug, Clone, Copy)]
pub enum LoopEvent<'a> {
    /// The user's prompt, before it goes to the model.
    UserPromptSubmit {
        /// The prompt.
        prompt: &'a str,
    },
    /// Every call of one response has its result (before the next request).
    PostToolBatch {
        /// Each call with the tool_result content the model will see.
        calls: &'a [(ToolUse, Value)],
    },
    /// The main agent is about to end its turn.
    Stop {
        /// Whether the agent is already going on because a Stop hook blocked.
        stop_hook_active: bool,
        /// The text of the agent's last message.
        last_assistant_message: &'a str,
    },
    /// A sub-agent starts.
    SubagentStart,
    /// A sub-agent is about to end.
    SubagentStop {
        /// Whether the sub-agent is already going on because a SubagentStop hook blocked.
        stop_hook_active: bool,
        /// The text of the sub-agent's last message.
        last_assistant_message: &'a str,
    },
    /// The session starts; `source` is `startup`, `resume`, `clear`, `compact` or `fork`.
    SessionStart {
        /// Why the session starts.
        source: &'a str,
        /// The model, when known.
        model: Option<&'a str>,
        /// The directory where each hook gets a file of its own to write `export` lines to
        /// (`CLAUDE_ENV_FILE` in its environment: `sessionstart-hook-<index>.sh`), all of
        /// which Bash then sources before each command, in the hooks' order
        /// ([`ToolOptions::session_env_dir`](tool_core::ToolOptions)); `None`: the hooks
        /// get no `CLAUDE_ENV_FILE`.
        env_dir: Option<&'a std::path::Path>,
    },
    /// The session ends; `reason` is `clear`, `resume`, `logout`, `prompt_input_exit` or
    /// `other`.
    SessionEnd {
        /// Why the session ends.
        reason: &'a str,
    },
    /// The user is told something needs them (`permission_prompt`: a permission question is
    /// waiting).
    Notification {
        /// The text (`Claude needs your permission to use Bash`).
        message: &'a str,
        /// The kind, which matchers test.
        notification_type: &'a str,
    },
}

impl LoopEvent<'_> {
    /// The event's name in settings files (`UserPromptSubmit`, `Stop`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Self::UserPromptSubmit { .. } => "UserPromptSubmit",
            Self::PostToolBatch { .. } => "PostToolBatch",
            Self::Stop { .. } => "Stop",
            Self::SubagentStart => "SubagentStart",
            Self::SubagentStop { .. } => "SubagentStop",
            Self::SessionStart { .. } => "SessionStart",
            Self::SessionEnd { .. } => "SessionEnd",
            Self::Notification { .. } => "Notification",
        }
    }
}

/// What the hooks of one [`LoopEvent`] produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoopEventOutcome {
    /// Blocking errors (exit code 2, `decision: "block"` with its reason), each as
    /// `[hook]: reason`. UserPromptSubmit: the prompt is rejected. Stop and SubagentStop: the
    /// agent goes on with these as its next instruction. PostToolBatch: the loop stops.
    /// Other events cannot block and never fill this.
    pub blocking: Vec<String>,
    /// Messages for the conversation: additional context for the model (and, on
    /// UserPromptSubmit and SessionStart, plain stdout), system messages and hook errors for
    /// the user.
    pub messages: Vec<Message>,
    /// `continue: false`: the agent stops, with this reason if given.
    pub stop: Option<Option<String>>,
}

/// Runs the tool-call hook events (and, for hosts that own a conversation, the loop events).
#[async_trait]
pub trait Hooks: Send + Sync {
    /// PreToolUse.
    async fn pre_tool_use(&self, call: HookCall<'_>, ctx: &ToolUseContext) -> PreToolUseOutcome;
    /// PostToolUse, with the tool's structured output.
    async fn post_tool_use(
        &self,
        call: HookCall<'_>,
        output: &Value,
        ctx: &ToolUseContext,
    ) -> PostToolUseOutcome;
    /// PostToolUseFailure, with the error text the model saw.
    async fn post_tool_use_failure(
        &self,
        call: HookCall<'_>,
        error: &str,
        is_interrupt: bool,
        ctx: &ToolUseContext,
    ) -> PostToolUseOutcome;
    /// PermissionRequest: the call is about to be put to the user (or refused because nobody
    /// can be asked); `suggestions` are what an "always" answer would add. A verdict answers
    /// in the user's place. The default runs nothing.
    async fn permission_request(
        &self,
        _call: HookCall<'_>,
        _suggestions: &[PermissionUpdate],
        _ctx: &ToolUseContext,
    ) -> PermissionRequestOutcome {
        PermissionRequestOutcome::default()
    }
    /// A conversation-level event ([`LoopEvent`]). The default runs nothing.
    async fn loop_event(&self, _event: LoopEvent<'_>, _ctx: &ToolUseContext) -> LoopEventOutcome {
        LoopEventOutcome::default()
    }
    /// An event a tool raises itself while it runs (TaskCreated, TaskCompleted), with the
    /// event's own input fields (`task_id`, `task_subject`, `task_description`): the tool
    /// reaches it through its context ([`ToolUseContext::run_hook_event`]), where the
    /// pipeline puts [`ToolHookEvents`] over these hooks. The default runs nothing.
    async fn tool_event(
        &self,
        _event: &'static str,
        _fields: serde_json::Map<String, Value>,
        _ctx: &ToolUseContext,
    ) -> HookEventOutcome {
        HookEventOutcome::default()
    }
    /// What background (`async: true`) hooks delivered since the last call: their context
    /// for the model and their notices, as messages. An agent loop takes them before each
    /// model request ("delivered on the next turn"). The default has none.
    fn take_background_messages(&self) -> Vec<Message> {
        Vec::new()
    }
    /// How many background hooks are still running. The default has none.
    fn background_pending(&self) -> usize {
        0
    }
    /// Waits for the background hooks still running to end (each bounded by its timeout),
    /// as a host does before it exits. The default has none to wait for.
    async fn wait_background(&self) {}
}

/// [`Hooks`] as the [`HookEvents`] seam of a call's context: the pipeline gives each call
/// one over its own hooks, so a tool's events (TaskCreated, TaskCompleted) run the same
/// hooks as the call's PreToolUse and PostToolUse, in every host.
#[derive(Clone)]
pub struct ToolHookEvents(pub std::sync::Arc<dyn Hooks>);

impl std::fmt::Debug for ToolHookEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToolHookEvents(..)")
    }
}

#[async_trait]
impl HookEvents for ToolHookEvents {
    async fn run(
        &self,
        event: &'static str,
        fields: serde_json::Map<String, Value>,
        ctx: &ToolUseContext,
    ) -> HookEventOutcome {
        self.0.tool_event(event, fields, ctx).await
    }
}

/// No hooks at all; costs nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

#[async_trait]
impl Hooks for NoHooks {
    async fn pre_tool_use(&self, _call: HookCall<'_>, _ctx: &ToolUseContext) -> PreToolUseOutcome {
        PreToolUseOutcome::default()
    }
    async fn post_tool_use(
        &self,
        _call: HookCall<'_>,
        _output: &Value,
        _ctx: &ToolUseContext,
    ) -> PostToolUseOutcome {
        PostToolUseOutcome::default()
    }
    async fn post_tool_use_failure(
        &self,
        _call: HookCall<'_>,
        _error: &str,
        _is_interrupt: bool,
        _ctx: &ToolUseContext,
    ) -> PostToolUseOutcome {
        PostToolUseOutcome::default()
    }
}
