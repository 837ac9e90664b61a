//! EnterPlanMode: switches the permission mode to `plan` through a context modifier
//! (Claude Code's `EnterPlanModeTool`), remembering the mode it leaves
//! ([`ToolPermissionContext::pre_plan_mode`](tool_core::ToolPermissionContext::pre_plan_mode))
//! for [`ExitPlanMode`](crate::ExitPlanMode) to restore.
//!
//! It is refused when ExitPlanMode cannot be used in the session (a deny rule on it, or a
//! tool set without it): plan mode entered could never be left, and every later write would
//! be refused for the rest of the session. `toolwright serve` refuses it likewise to a client
//! that cannot ask its user, and `toolwright agent` when nobody can approve ExitPlanMode.
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

/// Why ExitPlanMode cannot be used in `ctx`'s session, if it cannot: a tool-wide deny rule
/// names it (`ExitPlanMode`, `ExitPlanMode(*)`; the session's engine when the host installed
/// one, else the context's rules), or the session has a tool set and ExitPlanMode is not in
/// it (a session drops the tools such a rule names). A context without a tool set (a host
/// that never gave one) is not judged by it.
fn exit_plan_mode_unavailable(ctx: &ToolUseContext) -> Option<&'static str> {
    let exit = crate::ExitPlanMode;
    if tool_perms::PermissionEngine::for_walking(ctx)
        .is_some_and(|engine| engine.is_blanket_denied(&exit))
    {
        return Some("a deny rule refuses in this session");
    }
    let name = tool_core::Tool::name(&exit);
    let tools = ctx.tools();
    (!tools.is_empty() && !tools.iter().any(|t| t.name() == name))
        .then_some("is not among this session's tools")
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
        if let Some(why) = exit_plan_mode_unavailable(ctx) {
            return Err(ValidationError::new(format!(
                "EnterPlanMode is not available in this session: leaving plan mode needs ExitPlanMode, which {why}, so plan mode could never be left and every later write would be refused. Plan in your answer instead, without entering plan mode."
            )));
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use tool_core::{RuleSource, SourcedRule, Tool, ToolPermissionContext};

    use super::*;

    /// EnterPlanMode as the pipeline runs it: validated, then called and its context
    /// modifier applied. The context after it, or the refusal.
    async fn enter(ctx: ToolUseContext) -> Result<ToolUseContext, String> {
        Tool::validate_input(&EnterPlanMode, &json!({}), &ctx)
            .await
            .map_err(|e| e.message)?;
        let result = Tool::call(
            &EnterPlanMode,
            json!({}),
            ctx.clone(),
            ProgressSender::none(),
        )
        .await
        .map_err(|e| e.to_model_text())?;
        Ok(match result.context_modifier {
            Some(modifier) => modifier.apply(ctx),
            None => ctx,
        })
    }

    fn denying(rule: &str) -> ToolPermissionContext {
        ToolPermissionContext {
            deny: vec![SourcedRule {
                source: RuleSource::ProjectSettings,
                rule: rule.into(),
            }],
            ..ToolPermissionContext::default()
        }
    }

    /// With a deny rule on ExitPlanMode (`"deny": ["ExitPlanMode"]`), or a session whose tools
    /// lack ExitPlanMode (a session drops a tool a tool-wide deny rule names), EnterPlanMode
    /// is refused by its validation, so the call never runs and the mode stays: entered,
    /// plan mode could never be left, and every later write would be refused. Without the
    /// rule, and with a deny rule on another tool, it enters plan mode as before.
    #[tokio::test]
    async fn refused_when_exit_plan_mode_cannot_be_used() {
        let dir = tempfile::tempdir().unwrap();
        let both: Vec<Arc<dyn Tool>> = vec![
            Arc::new(EnterPlanMode),
            Arc::new(crate::ExitPlanMode),
            Arc::new(crate::Read),
        ];
        let only_enter: Vec<Arc<dyn Tool>> = vec![Arc::new(EnterPlanMode), Arc::new(crate::Read)];
        for (case, ctx) in [
            (
                "deny rule",
                ToolUseContext::new(dir.path()).with_permission(denying("ExitPlanMode")),
            ),
            (
                "deny rule with the tools",
                ToolUseContext::new(dir.path())
                    .with_tools(both.clone())
                    .with_permission(denying("ExitPlanMode(*)")),
            ),
            (
                "tools without ExitPlanMode",
                ToolUseContext::new(dir.path()).with_tools(only_enter),
            ),
        ] {
            let err = enter(ctx).await.unwrap_err();
            assert!(
                err.starts_with("EnterPlanMode is not available in this session:")
                    && err.contains("ExitPlanMode")
                    && err.contains("Plan in your answer instead"),
                "{case}: {err}"
            );
        }
        for (case, ctx) in [
            ("no tool set", ToolUseContext::new(dir.path())),
            (
                "both tools",
                ToolUseContext::new(dir.path()).with_tools(both.clone()),
            ),
            (
                "another deny rule",
                ToolUseContext::new(dir.path())
                    .with_tools(both.clone())
                    .with_permission(denying("Bash(rm:*)")),
            ),
        ] {
            let after = enter(ctx).await.unwrap();
            assert_eq!(after.permission().mode, PermissionMode::Plan, "{case}");
        }
    }
}
