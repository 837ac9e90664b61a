//! The Tool contract of Toolwright.
//!
//! `tool-core` defines what a tool *is*, for every other crate of the workspace: the dyn-safe
//! [`Tool`] trait and its typed layer [`TypedTool`], the input schema step with Claude Code's
//! model-facing error texts, the result and content model, the [`ToolUseContext`] a call runs
//! in, the [`FileStateCache`] that guards edits, and the permission vocabulary that tools,
//! hooks and the permission engine share.
//!
//! It is **not** where tools run, are permitted or are hooked: it knows nothing of processes,
//! MCP, settings files, hooks or the executor (the events a tool raises for hooks itself,
//! TaskCreated and TaskCompleted, go through [`HookEvents`], a seam in the context that the
//! pipeline fills). It spawns no tasks. Everything else in the workspace depends on it; it
//! depends on no crate of ours.
//!
//! # Writing a tool
//!
//! ```
//! use std::borrow::Cow;
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use tool_core::{
//!     MaxResultSize, ProgressSender, Tool, ToolError, ToolResult, ToolUseContext, TypedTool,
//! };
//!
//! /// Input of the `Shout` tool.
//! #[derive(Deserialize, JsonSchema)]
//! struct ShoutInput {
//!     /// The text to shout.
//!     text: String,
//!     /// How many exclamation marks (default 1).
//!     #[serde(default)]
//!     marks: Option<u8>,
//! }
//!
//! struct Shout;
//!
//! #[async_trait::async_trait]
//! impl TypedTool for Shout {
//!     type Input = ShoutInput;
//!     type Output = String;
//!     const NAME: &'static str = "Shout";
//!
//!     fn description(&self) -> Cow<'_, str> {
//!         "Upper-cases a text".into()
//!     }
//!     fn max_result_size(&self) -> MaxResultSize {
//!         MaxResultSize::Chars(10_000)
//!     }
//!     fn is_concurrency_safe(&self, _: &ShoutInput) -> bool {
//!         true
//!     }
//!     async fn call(
//!         &self,
//!         input: ShoutInput,
//!         _ctx: ToolUseContext,
//!         _progress: ProgressSender,
//!     ) -> Result<ToolResult<String>, ToolError> {
//!         let marks = "!".repeat(usize::from(input.marks.unwrap_or(1)));
//!         Ok(ToolResult::new(format!("{}{marks}", input.text.to_uppercase())))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tool: std::sync::Arc<dyn Tool> = std::sync::Arc::new(Shout);
//! // The schema the model sees, generated from the doc-commented struct.
//! assert_eq!(tool.input_schema()["properties"]["text"]["description"], "The text to shout.");
//! // The schema step: a bad input gets the text models act on.
//! let err = tool.parse_input(serde_json::json!({"txt": "hi"})).unwrap_err();
//! assert!(err.to_model_text().contains("The required parameter `text` is missing"));
//! // A good input runs.
//! let input = tool.parse_input(serde_json::json!({"text": "hi", "marks": 2}))?;
//! let result = tool.call(input, ToolUseContext::new("/tmp"), ProgressSender::none()).await?;
//! assert_eq!(result.data.content, tool_core::ToolResultContent::Text("HI!!".into()));
//! # Ok(())
//! # }
//! ```
//!
//! # Crate features
//!
//! None: the contract is the same for every build.

#![deny(missing_docs)]
// Two audited `unsafe` blocks, both `pre_exec` steps in `process`: `new_session` (setsid in
// the child) and `pass_fd` (dup2 in the child).
#![deny(unsafe_code)]

pub mod content;
pub mod context;
pub mod error;
pub mod file_state;
pub mod hook_events;
pub mod input;
pub mod permission;
#[cfg(unix)]
pub mod process;
pub mod result;
pub mod schema;
pub mod temp_file;
pub mod tool;
pub mod typed;

pub use content::{
    ContentBlock, ImageRejection, ImageSource, MAX_IMAGE_BYTES, MAX_IMAGE_SIDE, ToolResultBlock,
    ToolResultContent, check_image, empty_result_notice, escape_controls, escape_hidden,
    escape_line_breaks, image_media_type, is_hidden_char,
};
pub use context::{
    AgentInfo, AppState, ContentReplacementState, DenialTracking, McpClientInfo, McpClientState,
    NOT_UTF8_NOTE, Notification, NotificationSink, RefreshTools, TORN_REREAD_PAUSES,
    TORN_SETTLED_AFTER, ToolOptions, ToolUseContext, canonical_git_root, config_text_looks_torn,
    env_truthy, git_root, hook_env_file_name, hook_env_files, is_inline_json, local_settings_path,
    managed_drop_ins, managed_settings_dir, parse_config_json, project_dirs, read_config_text,
    read_config_text_settled, read_regular_file, reread_while_torn, without_bom,
};
pub use error::{
    CANCEL_MESSAGE, INTERRUPT_MESSAGE_FOR_TOOL_USE, MAX_ERROR_CHARS, ToolError, ValidationError,
    tool_use_error, truncate_middle,
};
#[cfg(unix)]
pub use file_state::private_temp_dir;
pub use file_state::{
    ContentHash, ContentHasher, DEFAULT_MAX_BYTES, DEFAULT_MAX_ENTRIES, FileState, FileStateCache,
    MODIFIED_MESSAGE, NOT_READ_MESSAGE, StaleFile, create_private_dir, expand_path, mtime_ms,
    normalize_lexically, now_ms,
};
pub use hook_events::{HookEventOutcome, HookEvents};
pub use input::{InputError, InputIssue, check_input, json_type, redact_url, shown_setting};
pub use permission::{
    DecisionReason, PermissionMode, PermissionResult, PermissionUpdate, RuleBehavior, RuleSource,
    RuleValue, SourcedRule, ToolPermissionContext, UpdateDestination, rule_char_is_escaped,
    rule_syntax_problem,
};
pub use result::{Attachment, ContextModifier, McpMeta, Message, ToolOutput, ToolResult};
pub use schema::normalize_schema;
pub use tool::{
    DEFAULT_MAX_RESULT_CHARS, FileAccess, InterruptBehavior, MaxResultSize, McpToolInfo,
    PermissionSubject, ProgressSender, SearchOrRead, Tool, ToolProgress, find_tool,
    legacy_tool_names, normalize_mcp_name, normalize_tool_name, strip_user_supplied_fields,
};
pub use typed::{TypedTool, schema_for};

/// Re-exported so tool authors use the same versions as the contract.
pub use async_trait::async_trait;
pub use tokio_util::sync::CancellationToken;
