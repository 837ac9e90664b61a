//! The three seams the pipeline is built around: who decides permissions, who asks the user,
//! and who runs hooks.
//!
//! Each is a small async trait, so the pipeline can be tested with plain implementations and
//! a host can put its own policy in place. `tool-perms` and `tool-hooks` provide the
//! Claude Code-compatible implementations; the ones here are the explicit trivial choices
//! ([`AllowAll`], [`DenyAsks`], [`NoHooks`]).

use async_trait::async_trait;
use serde_json::Value;
use tool_core::{DecisionReason, Message, PermissionResult, Tool, ToolUseContext};

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

/// What the user is asked.
#[derive(Debug)]
pub struct PermissionPrompt<'a> {
    /// The tool.
    pub tool: &'a dyn Tool,
    /// The call's id.
    pub tool_use_id: &'a str,
    /// The input that would run.
    pub input: &'a Value,
    /// The ask result: message, suggestions, reason.
    pub ask: &'a PermissionResult,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptAnswer {
    /// Run it (possibly with an edited input).
    Allow {
        /// The input to run instead, if the user changed it.
        updated_input: Option<Value>,
    },
    /// Do not run it. Without feedback the whole turn stops (Claude Code aborts the turn);
    /// with feedback the model is told what the user said and goes on.
    Reject {
        /// What the user said.
        feedback: Option<String>,
    },
}

/// Asks a person (a terminal dialog, an IDE, a web UI).
#[async_trait]
pub trait Prompter: Send + Sync {
    /// Asks about one call.
    async fn ask(&self, prompt: PermissionPrompt<'_>) -> PromptAnswer;
}

/// The prompter of a session with nobody to ask: every ask is refused with a message saying
/// so, and the turn goes on.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAsks;

#[async_trait]
impl Prompter for DenyAsks {
    async fn ask(&self, prompt: PermissionPrompt<'_>) -> PromptAnswer {
        let name = prompt.tool.name();
        PromptAnswer::Reject {
            feedback: Some(format!(
                "Permission to use {name} requires approval, and this session has no one to ask. Do not retry this call."
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

/// What the PostToolUse (or PostToolUseFailure) hooks of one call produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostToolUseOutcome {
    /// Messages for the conversation after the result.
    pub messages: Vec<Message>,
    /// A replacement for an MCP tool's output (`updatedMCPToolOutput`).
    pub updated_output: Option<Value>,
    /// `continue: false`: the turn stops after this call.
    pub stop: Option<Option<String>>,
}

/// Runs the tool-call hook events.
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
