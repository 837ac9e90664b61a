//! Sleep (Cargo feature `proactive`): waits, and is the one tool a user interrupt cancels.

use std::borrow::Cow;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use tool_core::{
    InterruptBehavior, MaxResultSize, ProgressSender, ToolError, ToolResult, ToolUseContext,
    TypedTool, async_trait,
};

/// The longest sleep, in milliseconds (one hour).
pub const MAX_SLEEP_MS: u64 = 3_600_000;

/// Input of the Sleep tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SleepInput {
    /// How long to wait, in milliseconds (at most 3600000)
    // The limit in the schema, so that the schema step names it for any larger number
    // (past u64's range too, where it would otherwise name u64's maximum).
    #[schemars(range(max = 3_600_000))]
    pub duration_ms: u64,
}

/// The Sleep tool: waits for a while (proactive agents pacing themselves). Interrupt
/// behaviour `Cancel`: a user interrupt ends the wait at once.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sleep;

/// The prompt; it doubles as the marker `cargo xtask profiles` looks for in a binary.
pub const PROMPT: &str = "Sleep: wait for duration_ms milliseconds before continuing (toolwright-gated-tool:proactive). \
A user interrupt cancels the wait.";

#[async_trait]
impl TypedTool for Sleep {
    type Input = SleepInput;
    type Output = String;
    const NAME: &'static str = "Sleep";

    fn description(&self) -> Cow<'_, str> {
        "Waits for a while".into()
    }
    fn prompt(&self) -> Cow<'_, str> {
        PROMPT.into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(1_000)
    }
    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }
    fn is_concurrency_safe(&self, _input: &SleepInput) -> bool {
        true
    }
    fn is_read_only(&self, _input: &SleepInput) -> bool {
        true
    }
    async fn validate_input(
        &self,
        input: &SleepInput,
        _ctx: &ToolUseContext,
    ) -> Result<(), tool_core::ValidationError> {
        if input.duration_ms > MAX_SLEEP_MS {
            return Err(tool_core::ValidationError::new(format!(
                "duration_ms is {}; the longest sleep is {MAX_SLEEP_MS} ms",
                input.duration_ms
            )));
        }
        Ok(())
    }
    /// Touches only the session's own state: allowed, as Claude Code's default
    /// `checkPermissions` allows (deny and ask rules still apply first).
    async fn check_permissions(
        &self,
        _input: &SleepInput,
        _ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        tool_core::PermissionResult::allow()
    }
    async fn call(
        &self,
        input: SleepInput,
        ctx: ToolUseContext,
        _p: ProgressSender,
    ) -> Result<ToolResult<String>, ToolError> {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(input.duration_ms)) => {
                Ok(ToolResult::new(format!("Slept for {} ms", input.duration_ms)))
            }
            () = ctx.cancellation().cancelled() => Err(ToolError::Cancelled(None)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use tool_core::Tool;

    #[tokio::test(start_paused = true)]
    async fn sleeps_and_is_cancelled_by_an_interrupt() {
        let tool: Arc<dyn Tool> = Arc::new(Sleep);
        assert_eq!(tool.interrupt_behavior(), InterruptBehavior::Cancel);
        let ctx = ToolUseContext::new("/");
        let input = tool
            .parse_input(serde_json::json!({"duration_ms": 5000}))
            .unwrap();
        let done = tool
            .call(input.clone(), ctx.clone(), ProgressSender::none())
            .await
            .unwrap();
        assert_eq!(done.data.content.joined_text(), "Slept for 5000 ms");
        let child = ctx.child();
        let token = child.cancellation().clone();
        let call = tokio::spawn({
            let tool = Arc::clone(&tool);
            async move { tool.call(input, child, ProgressSender::none()).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        token.cancel();
        assert!(call.await.unwrap().unwrap_err().is_cancelled());
        // The schema step refuses a longer sleep, naming the limit.
        let too_long = tool
            .parse_input(serde_json::json!({"duration_ms": MAX_SLEEP_MS + 1}))
            .unwrap_err();
        assert!(
            too_long.to_model_text().contains("must be at most 3600000"),
            "{too_long:?}"
        );
    }
}
