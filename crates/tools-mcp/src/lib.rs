//! MCP servers' tools as ordinary Toolwright tools, on the official Rust SDK (`rmcp`).
//!
//! `tools-mcp` reads Claude Code's MCP configuration ([`ConfigLoader`]: `.mcp.json`, the
//! user and local scopes of `~/.claude.json`, `--mcp-config`, an administrator's
//! `managed-mcp.json` and `managedMcpServers`), keeps only what the settings' server policy
//! lets through ([`McpPolicy`]: `allowedMcpServers`, `deniedMcpServers`,
//! `disabledMcpjsonServers`), connects to every server at
//! once ([`McpManager::connect`]: stdio child processes and Streamable HTTP), and wraps each
//! remote tool as an `Arc<dyn Tool>` named `mcp__<server>__<tool>`, so the executor, hooks
//! and permissions treat it like any other tool. It also provides `ListMcpResourcesTool` and
//! `ReadMcpResourceTool`.
//!
//! It is **for** the client side of MCP tools and resources. It is **not** an MCP server,
//! not a permission layer (annotations such as `readOnlyHint` are scheduling hints, never an
//! automatic allow), not where tools are searched or deferred (it only says
//! [`should_defer`](tool_core::Tool::should_defer)), and it does not handle OAuth, MCP
//! prompts, the legacy SSE transport or WebSocket. It depends on `tool-core` only and is
//! the only crate of the workspace that knows MCP.
//!
//! # Failure behaviour
//!
//! - One slow or broken server never blocks the others: all connect concurrently, each within
//!   its startup timeout (`MCP_TIMEOUT`, default 30 s, or the server's `timeout`). Failures
//!   are returned as [`Diagnostic`]s naming the server, with the tail of its stderr. The
//!   values of the server's own `env` and `headers` that may be secrets are shown as
//!   `[redacted]` there, and wherever its log or error texts are shown.
//! - HTTP requests carry no `Referer`. A redirect to another origin is followed without the
//!   configured headers (or refused, naming its target, when it would turn the request into
//!   a GET); errors name the URL that answered.
//! - With `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` on, stdio servers do not inherit this process's
//!   credentials (`tool_core::process::scrub_credentials`); their own `env` still applies.
//! - A call in flight when a server dies (crash, EOF, session loss) fails with an error that
//!   names the server; it is **never replayed** (it may already have had side effects). The
//!   next use reconnects, with backoff after failed attempts.
//! - Cancelling a call (the context's cancellation token) or hitting its timeout
//!   (`MCP_TOOL_TIMEOUT`) sends `notifications/cancelled` to the server.
//! - A tool result with `isError: true` is an `Err` with the server's text; protocol errors
//!   are `Err`s naming the server. Nothing in this crate panics on server input.
//! - Every stdio child process ends with the manager: [`McpManager::shutdown`] closes them
//!   gracefully, and dropping the manager kills them.
//!
//! # Example
//!
//! ```no_run
//! use tools_mcp::{ConfigLoader, McpManager, McpOptions};
//! use tool_core::{ProgressSender, ToolUseContext};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let project = std::env::current_dir()?;
//! // Every scope, `${VAR}` expanded; problems come back as diagnostics, never as a failure.
//! let (configs, mut diagnostics) = ConfigLoader::new(&project).load();
//! let (manager, connect_diags) =
//!     McpManager::connect(configs, McpOptions::from_env(&project)).await;
//! diagnostics.extend(connect_diags);
//! for d in &diagnostics {
//!     eprintln!("{d}");
//! }
//! let tools = manager.tools(); // Vec<Arc<dyn Tool>>, e.g. mcp__everything__echo
//! if let Some(echo) = tools.iter().find(|t| t.name() == "mcp__everything__echo") {
//!     let result = echo
//!         .call(
//!             serde_json::json!({"message": "hi"}),
//!             ToolUseContext::new(&project),
//!             ProgressSender::none(),
//!         )
//!         .await?;
//!     println!("{}", result.data.content.joined_text());
//! }
//! manager.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # Crate features
//!
//! None.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

// Roots, sampling and logging are deprecated by SEP-2577 in the SDK but still used by the
// servers we talk to (server-everything uses all three).
#[allow(deprecated)]
mod client;
pub mod config;
mod http;
mod manager;
pub mod naming;
mod options;
pub mod policy;
mod resources;
pub mod schema;
mod tool;

pub use client::ServerState;
pub use config::{
    ConfigLoader, ConfigScope, Diagnostic, EnvLookup, MAX_MCP_DEPTH, MCP_DEPTH_VAR,
    RESERVED_SERVER_NAMES, ServerConfig, Severity, TransportConfig, default_claude_json,
    expand_env, mcp_depth, parse_mcp_json,
};
pub use manager::{McpManager, ServerStatus};
pub use naming::{MAX_TOOL_NAME_LEN, mcp_tool_name, normalize_name_for_mcp, parse_mcp_tool_name};
pub use options::{
    DEFAULT_HTTP_SILENCE_LIMIT, DEFAULT_LAST_WORDS_WAIT, DEFAULT_MAX_OUTPUT_TOKENS,
    DEFAULT_NETWORK_IDLE_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, DEFAULT_STDERR_CAPACITY,
    DEFAULT_STDIO_IDLE_TIMEOUT, DEFAULT_TOOL_TIMEOUT, ElicitationHandler, McpOptions,
    SamplingHandler, ToolsChangedHook,
};
pub use policy::{Blocked, McpPolicy, ServerMatcher};
pub use resources::{LIST_MCP_RESOURCES_TOOL, READ_MCP_RESOURCE_TOOL};
pub use tool::{
    DEFAULT_MAX_RESULT_CHARS, IMAGE_TOKEN_ESTIMATE, MAX_RESULT_CHARS_CEILING, McpTool,
    map_call_result, truncation_note,
};
