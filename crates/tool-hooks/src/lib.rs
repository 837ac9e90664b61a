//! Claude Code's hooks protocol for Toolwright, so existing hook scripts run unchanged.
//!
//! **For**: reading the `hooks` section of Claude Code settings files (merged across
//! managed, `--settings`, local, project and user levels, with `disableAllHooks` and
//! `allowManagedHooksOnly`), selecting handlers by matcher and `if` condition, running them
//! (command hooks in shell or exec form, in-process [`NativeHook`]s) in parallel with
//! Claude Code's stdin JSON, exit codes and JSON output, and folding their results into
//! typed outcomes ([`PreToolUseOutcome`], [`PostToolUseOutcome`], ...) that the executor
//! acts on.
//!
//! **Not for**: deciding permissions (the `if` condition goes through the [`RuleMatcher`]
//! trait the host implements with tool-perms; a hook's allow is only an input to the
//! permission flow), running tools, or persisting permission updates. Of the workspace's
//! crates it depends on `tool-core` only.
//!
//! Execution guarantees: every handler has a hard timeout counted from spawn (stdin write
//! included), runs in its own process group which is killed (`SIGKILL` to the group) at the
//! limit, when the context's cancellation token fires, or when the caller drops the run.
//! What a hook leaves running on its pipes after it exits (a background job), or the hook
//! itself once its first stdout line is the `{"async": true}` form, goes on without holding
//! up the outcome, its output drained and unused, until that limit (or `asyncTimeout`), a
//! cancel, or the [`HookRunner`] being dropped; stdout and stderr capture is
//! bounded ([`MAX_STDOUT_BYTES`], [`MAX_CAPTURE_BYTES`]); strings over [`MAX_HOOK_STRING_CHARS`] go to a file with
//! a preview. Bad output never panics and never hangs past the timeout: it becomes a
//! non-blocking error naming the hook. `http` handlers POST the same JSON (reqwest on
//! rustls); `prompt`, `agent` and `mcp_tool` handlers are reported and skipped.
//!
//! # Example
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use serde_json::json;
//! use tool_core::{RuleSource, ToolUseContext};
//! use tool_hooks::{HookRunner, HooksConfig, PermissionDecision, ToolCallInfo};
//!
//! let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [{
//!     "type": "command",
//!     "command": "grep -q 'rm -rf' && { echo 'no rm -rf' >&2; exit 2; } || exit 0"
//! }]}]});
//! let (config, diagnostics) = HooksConfig::from_hooks_value(&hooks, RuleSource::UserSettings);
//! assert!(diagnostics.is_empty());
//! let runner = HookRunner::new(config);
//! let ctx = ToolUseContext::new(std::env::temp_dir());
//! let call = ToolCallInfo::new("Bash", json!({"command": "rm -rf /tmp/x"}), "toolu_1");
//! let outcome = runner.run_pre_tool_use(&call, &ctx).await;
//! let decision = outcome.decision.unwrap();
//! assert_eq!(decision.behavior, PermissionDecision::Deny);
//! assert!(decision.message.starts_with("PreToolUse:Bash hook error: ["));
//! assert!(decision.message.ends_with("]: no rm -rf"));
//! # }
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod config;
mod http;
mod matcher;
mod native;
mod outcome;
mod output;
mod process;
mod runner;
mod settings;

pub use config::{
    CommandHandler, DEFAULT_TIMEOUT, Diagnostic, DiagnosticKind, HOOK_EVENTS, HandlerKind,
    HookHandler, HooksConfig, HttpHandler, MatcherGroup, NO_MATCHER_EVENTS, OnFailure,
    SettingsFile, TOOL_EVENTS, default_timeout,
};
pub use matcher::{
    BasicRuleMatcher, IfMatch, JsRegex, Matcher, MatcherError, RuleMatcher, if_rule_problem,
};
pub use native::{NativeHook, NativeHookError};
pub use outcome::{
    AsyncHookResult, CommonOutcome, EventOutcome, HookMessage, HookRunReport,
    PermissionDeniedOutcome, PermissionRequestOutcome, PermissionRequestVerdict,
    PostToolUseOutcome, PreToolDecision, PreToolUseOutcome, StopRequest,
};
pub use output::{
    HookOutput, HookSpecificOutput, PermissionDecision, PermissionRequestDecision, TopLevelDecision,
};
pub use process::{MAX_CAPTURE_BYTES, MAX_STDOUT_BYTES, PIPE_GRACE};
pub use runner::{
    BatchToolCall, HookRunner, MAX_HOOK_STRING_CHARS, ToolCallInfo, agent_transcript_path,
};
pub use settings::{LoadedHooks, SettingsPaths, load_hooks};

/// A JSON value's type name for messages.
pub(crate) fn config_type_name(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}
