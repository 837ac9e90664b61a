//! EnterPlanMode: switches the permission mode to `plan` through a context modifier
//! (Claude Code's `EnterPlanModeTool`), remembering the mode it leaves
//! ([`ToolPermissionContext::pre_plan_mode`](tool_core::ToolPermissionContext::pre_plan_mode))
//! for [`ExitPlanMode`](crate::ExitPlanMode) to restore.
use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    MaxResultSize, PermissionMode, ProgressSender, ToolError, ToolResult, ToolResultContent,
    ToolUseContext, TypedTool, ValidationError, async_trait,
};

/// The context modifier's effect: `ctx` switched to permission mode `mode`
/// ([`set_mode`](tool_core::ToolPermissionContext::set_mode)).
pub(crate) fn with_mode(ctx: ToolUseContext, mode: PermissionMode) -> ToolUseContext {
    let mut permission = ctx.permission().clone();
    permission.set_mode(mode);
    ctx.with_permission(permission)
}

/// Input of EnterPlanMode (no fields).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EnterPlanModeInput {}

/// Output of EnterPlanMode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnterPlanModeOutput {
    /// A confirmation.
    pub message: String,
    /// The session's plan file, the one file plan mode lets the model write.
    #[serde(skip)]
    pub plan_file: Option<std::path::PathBuf>,
}

/// The text the model sees after entering plan mode.
pub const ENTERED_PLAN_MODE: &str = "Entered plan mode. You should now focus on exploring the codebase and designing an implementation approach.

In plan mode, you should:
1. Thoroughly explore the codebase to understand existing patterns
2. Identify similar features and architectural approaches
3. Consider multiple approaches and their trade-offs
4. Use AskUserQuestion if you need to clarify the approach
5. Design a concrete implementation strategy
6. When ready, use ExitPlanMode to present your plan for approval

Remember: DO NOT write or edit any files yet, other than your plan file. This is a read-only exploration and planning phase.";

/// What the model is told when its session starts in plan mode (`--mode plan`,
/// `defaultMode: "plan"`), ahead of the first prompt, as a `<system-reminder>`: without it
/// the model would learn that it may not act only from refusals, and would never hear of
/// the plan file (the one file it may write), which EnterPlanMode's result names. `None`
/// outside plan mode, and for a sub-agent (it works under its parent's plan).
pub fn plan_mode_reminder(ctx: &ToolUseContext) -> Option<String> {
    if ctx.permission().mode != PermissionMode::Plan || ctx.agent().is_some() {
        return None;
    }
    let mut text = String::from(
        "<system-reminder>\nPlan mode is active: the user does not want you to act yet. Explore the codebase and design an implementation approach; do not write or edit any files (other than your plan file), run commands that change anything, or make commits. When your plan is ready, use ExitPlanMode to present it for approval.",
    );
    if let Some(path) = ctx.plan_file() {
        let state = if path.is_file() {
            "It exists already: read it, and change it with Edit."
        } else {
            "Create it with Write, change it with Edit."
        };
        text.push_str(&format!(
            "\n\nWrite your plan to {}: it is the only file you may write in plan mode, and ExitPlanMode shows the user what it holds. {state}",
            path.display()
        ));
    }
    text.push_str("\n</system-reminder>");
    Some(text)
}

/// The EnterPlanMode tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnterPlanMode;

#[async_trait]
impl TypedTool for EnterPlanMode {
    type Input = EnterPlanModeInput;
    type Output = EnterPlanModeOutput;
    const NAME: &'static str = "EnterPlanMode";

    fn description(&self) -> Cow<'_, str> {
        "Requests permission to enter plan mode for complex tasks requiring exploration and design"
            .into()
    }

    fn prompt(&self) -> Cow<'_, str> {
        "Use this tool when you are about to start a non-trivial implementation task and want to explore the codebase and design an approach before writing code. In plan mode you can only read and search; use ExitPlanMode to present the plan for the user's approval.".into()
    }

    fn search_hint(&self) -> Option<&str> {
        Some("switch to read-only planning mode")
    }

    fn should_defer(&self) -> bool {
        true
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    /// Not concurrency-safe (Claude Code says it is): the mode switch is a context modifier,
    /// and the executor applies modifiers only from tools that run alone (design
    /// invariant 3), so that no call runs under a half-switched mode.
    fn is_concurrency_safe(&self, _input: &EnterPlanModeInput) -> bool {
        false
    }

    fn is_read_only(&self, _input: &EnterPlanModeInput) -> bool {
        true
    }

    async fn validate_input(
        &self,
        _input: &EnterPlanModeInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        if ctx.agent().is_some() {
            return Err(ValidationError::new(
                "EnterPlanMode tool cannot be used in agent contexts",
            ));
        }
        Ok(())
    }

    /// Touches only the session's own state: allowed, as Claude Code's default
    /// `checkPermissions` allows (deny and ask rules still apply first).
    async fn check_permissions(
        &self,
        _input: &EnterPlanModeInput,
        _ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        tool_core::PermissionResult::allow()
    }
    async fn call(
        &self,
        _input: EnterPlanModeInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<EnterPlanModeOutput>, ToolError> {
        Ok(ToolResult::new(EnterPlanModeOutput {
            message: "Entered plan mode".to_owned(),
            plan_file: ctx.plan_file(),
        })
        .with_context_modifier(|ctx| with_mode(ctx, PermissionMode::Plan)))
    }

    fn to_content(&self, output: &EnterPlanModeOutput) -> ToolResultContent {
        let mut text = ENTERED_PLAN_MODE.to_owned();
        if let Some(path) = &output.plan_file {
            text.push_str(&format!(
                "\n\nWrite your plan to {} (create it with Write, change it with Edit): it is the only file you may write in plan mode, and ExitPlanMode shows the user what it holds.",
                path.display()
            ));
        }
        ToolResultContent::Text(text)
    }
}
