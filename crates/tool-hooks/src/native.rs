//! In-process Rust hooks: the same input JSON and output types as command hooks, without a
//! process.

use serde_json::Value;
use tool_core::ToolUseContext;

use crate::output::HookOutput;

/// How an in-process hook fails; mirrors a command hook's exit codes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NativeHookError {
    /// Like exit code 2: a blocking error with this message (PreToolUse denies the call,
    /// PostToolUse feeds it to the model, ...).
    #[error("blocking error: {0}")]
    Blocking(String),
    /// Like any other non-zero exit: a non-blocking error; the action proceeds.
    #[error("{0}")]
    Failed(String),
}

/// An in-process hook. It receives exactly the JSON a command hook would read on stdin and
/// returns the [`HookOutput`] a command hook would print (`HookOutput::default()` = exit 0
/// with no output). It runs under the same timeout and cancellation as command hooks.
///
/// ```
/// use std::sync::Arc;
/// use serde_json::{Map, Value, json};
/// use tool_core::ToolUseContext;
/// use tool_hooks::{
///     HookOutput, HookRunner, HookSpecificOutput, HooksConfig, Matcher, NativeHook, NativeHookError,
///     PermissionDecision, ToolCallInfo,
/// };
///
/// struct NoSudo;
///
/// #[async_trait::async_trait]
/// impl NativeHook for NoSudo {
///     fn name(&self) -> &str {
///         "no-sudo"
///     }
///     async fn run(&self, input: &Value, _ctx: &ToolUseContext) -> Result<HookOutput, NativeHookError> {
///         let command = input["tool_input"]["command"].as_str().unwrap_or_default();
///         if command.contains("sudo") {
///             return Err(NativeHookError::Blocking("sudo is not allowed".into()));
///         }
///         let mut hso = HookSpecificOutput::for_event("PreToolUse");
///         hso.permission_decision = Some(PermissionDecision::Allow);
///         let mut new_input = Map::new();
///         new_input.insert("command".into(), json!(format!("{command} --dry-run")));
///         hso.updated_input = Some(new_input);
///         Ok(HookOutput { hook_specific_output: Some(hso), ..HookOutput::default() })
///     }
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let mut config = HooksConfig::new();
/// config.add_native("PreToolUse", Matcher::parse(Some("Bash")).unwrap(), Arc::new(NoSudo));
/// let runner = HookRunner::new(config);
/// let ctx = ToolUseContext::new(std::env::temp_dir());
/// let call = ToolCallInfo::new("Bash", json!({"command": "make"}), "toolu_1");
/// let out = runner.run_pre_tool_use(&call, &ctx).await;
/// assert_eq!(out.effective_input(), Some(&json!({"command": "make --dry-run"})));
/// let call = ToolCallInfo::new("Bash", json!({"command": "sudo make"}), "toolu_2");
/// let out = runner.run_pre_tool_use(&call, &ctx).await;
/// assert_eq!(out.decision.unwrap().message, "PreToolUse:Bash hook error: sudo is not allowed");
/// # }
/// ```
#[async_trait::async_trait]
pub trait NativeHook: Send + Sync {
    /// The name used in messages about this hook.
    fn name(&self) -> &str;

    /// Runs the hook for one event.
    async fn run(&self, input: &Value, ctx: &ToolUseContext)
    -> Result<HookOutput, NativeHookError>;
}
