//! Toolwright's per-call pipeline and streaming executor.
//!
//! - [`Pipeline::run_tool_use`] takes one tool_use through Claude Code's order: lookup,
//!   schema, `validate_input`, PreToolUse hooks, permission (with the user asked through a
//!   [`Prompter`]), the call, the empty-result rule, persistence of large results, the
//!   context modifier, PostToolUse hooks, telemetry. Every path yields exactly one
//!   tool_result.
//! - [`StreamingToolExecutor`] schedules calls while the model's response streams: safe
//!   calls in parallel, unsafe calls alone, results in arrival order, sibling cancellation
//!   and interrupts (see [`executor`]). [`run_tools`] is the same for a complete list.
//! - [`AnthropicStream`] turns the Messages API's streaming events into tool_use blocks.
//!
//! The pipeline reaches permissions and hooks only through the [`Permissions`],
//! [`Prompter`] and [`Hooks`] traits. It is the only crate that spawns tasks for tool calls.
//! It never names a concrete tool (apart from the sibling policy's "Bash", and the opt-in
//! `tool_parameters` of Claude Code's `tool_result` event, which are Bash's and Skill's own)
//! and never parses settings.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use futures::StreamExt;
//! use tool_exec::{ExecutorConfig, ExecutorEvent, Pipeline, StreamingToolExecutor, ToolUse};
//! use tool_core::ToolUseContext;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let ctx = ToolUseContext::new("/tmp"); // with .with_tools(...) in a real host
//! let mut executor = StreamingToolExecutor::new(Arc::new(Pipeline::allow_all()), ctx, ExecutorConfig::default());
//! executor.add_tool(ToolUse::new("toolu_1", "NoSuchTool", serde_json::json!({})));
//! executor.finish();
//! while let Some(event) = executor.next().await {
//!     if let ExecutorEvent::Result(r) = event {
//!         assert!(r.outcome.result.is_error);
//!     }
//! }
//! # }
//! ```
//!
//! # Crate features
//!
//! None yet.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod claude_code;
pub mod executor;
pub mod persist;
pub mod pipeline;
pub mod seams;
pub mod stream;

pub use claude_code::PermissionRuleMatcher;
pub use executor::{
    DEFAULT_MAX_CONCURRENCY, ExecutorConfig, ExecutorEvent, ExecutorHandle, PlannedCall,
    STUCK_CALL_GRACE, SiblingPolicy, StreamingToolExecutor, ToolCallResult, run_tools,
    schedule_makespan,
};
pub use persist::{PREVIEW_CHARS, Persisted, format_size, persist_if_large, persisted_block};
pub use pipeline::{
    CANCEL_GRACE, CallOutcome, DEFAULT_MAX_RESULT_CHARS, Ending, Pipeline, TOOL_DETAILS_MAX_BYTES,
    ToolUse, off_the_workers, stopped_continuation_text,
};
pub use seams::{
    AllowAll, DenyAsks, HookCall, HookDecision, Hooks, LoopEvent, LoopEventOutcome, NoHooks,
    PermissionRequestOutcome, PermissionRequestVerdict, Permissions, PostToolUseOutcome,
    PreToolUseOutcome, PromptAnswer, PromptRequest, Prompter, REJECT_MESSAGE,
    REJECT_WITH_FEEDBACK_PREFIX, ToolHookEvents,
};
pub use stream::{AnthropicStream, LineEnds, StreamError, StreamEvent};
