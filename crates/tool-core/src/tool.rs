//! The dyn-safe [`Tool`] trait: the one seam every executor, hook and permission check works
//! through.

use std::borrow::Cow;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::content::ToolResultContent;
use crate::context::ToolUseContext;
use crate::error::{ToolError, ValidationError};
use crate::input::InputError;
use crate::permission::PermissionResult;
use crate::result::ToolResult;

/// What happens to a running call when the user interrupts the turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum InterruptBehavior {
    /// The call is cancelled.
    Cancel,
    /// The call is allowed to finish; the interrupt waits for it (the safe default).
    #[default]
    Block,
}

/// The largest result (in characters) the pipeline hands to the model inline by default,
/// whatever a tool's own [`MaxResultSize`]; larger ones are persisted. Here, not in
/// tool-exec, because a tool that shapes its own long output (Bash's head and tail) must
/// keep it under this too.
pub const DEFAULT_MAX_RESULT_CHARS: usize = 50_000;

/// Above how many characters a result is written to disk and replaced by a preview.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MaxResultSize {
    /// Results longer than this many characters are persisted (the executor also caps this at
    /// its global limit, [`DEFAULT_MAX_RESULT_CHARS`] by default).
    Chars(usize),
    /// Never persisted (Read: persisting would make the model read the file it just read).
    Unbounded,
}

/// What a call does in search/read terms, for collapsing its display (Claude Code's
/// `isSearchOrReadCommand`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct SearchOrRead {
    /// Searches (grep, find).
    pub is_search: bool,
    /// Reads (cat, Read).
    pub is_read: bool,
    /// Lists (ls).
    pub is_list: bool,
}

/// How a file is accessed, for path permission rules (`Read(...)` vs `Edit(...)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileAccess {
    /// Read rules apply.
    Read,
    /// Edit rules apply.
    Write,
}

/// What a call's permission rules are matched against: the content of `Tool(content)` rules
/// and of hook `if` conditions. Tools describe their input this way so that the permission
/// layer never needs to know a concrete tool.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PermissionSubject {
    /// A shell command (Bash, PowerShell): matched by command rules.
    Command(String),
    /// A file path (absolute, resolved): matched by path rules.
    Path {
        /// The path.
        path: PathBuf,
        /// Read or write.
        access: FileAccess,
    },
    /// A URL: matched by `domain:` rules.
    Url(String),
    /// A name (a skill, an agent type): matched literally or by prefix.
    Name(String),
}

/// Identity of a tool that comes from an MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct McpToolInfo {
    /// The server's configured name.
    pub server_name: String,
    /// The tool's name on that server.
    pub tool_name: String,
    /// Where the server's configuration came from, as Claude Code names the scopes
    /// (`user`, `project`, `local`, `dynamic`, `enterprise`, `managed`); hooks receive it
    /// as `mcp_server.source`. `None` when unknown.
    pub source: Option<String>,
}

/// Claude Code's MCP name normaliser, the one every crate uses for server and tool names in
/// `mcp__<server>__<tool>` and in permission rules.
///
/// Every character outside `[A-Za-z0-9_-]` becomes `_`, one per UTF-16 code unit as
/// JavaScript's regex (without the `u` flag) replaces them, so a character outside the Basic
/// Multilingual Plane (an emoji) becomes `__`. For servers named `claude.ai …`, runs of `_`
/// are also collapsed and leading/trailing `_` trimmed.
pub fn normalize_mcp_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('_', c.len_utf16()));
        }
    }
    if name.starts_with("claude.ai ") {
        let mut collapsed = String::with_capacity(out.len());
        for c in out.chars() {
            if !(c == '_' && collapsed.ends_with('_')) {
                collapsed.push(c);
            }
        }
        out = collapsed.trim_matches('_').to_owned();
    }
    out
}

/// One progress report from a running call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolProgress {
    /// The call that reports.
    pub tool_use_id: String,
    /// Tool-specific progress data (lines of output, percentages, ...).
    pub data: Value,
}

/// Where a running call sends progress. Cheap to clone; a no-op when nobody listens.
#[derive(Clone, Default)]
pub struct ProgressSender {
    tool_use_id: String,
    sink: Option<Arc<dyn Fn(ToolProgress) + Send + Sync>>,
}

impl fmt::Debug for ProgressSender {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProgressSender")
            .field("tool_use_id", &self.tool_use_id)
            .field("listening", &self.sink.is_some())
            .finish()
    }
}

impl ProgressSender {
    /// A sender for `tool_use_id` that hands each report to `sink`.
    pub fn new(
        tool_use_id: impl Into<String>,
        sink: Arc<dyn Fn(ToolProgress) + Send + Sync>,
    ) -> Self {
        Self {
            tool_use_id: tool_use_id.into(),
            sink: Some(sink),
        }
    }

    /// A sender that drops everything.
    pub fn none() -> Self {
        Self::default()
    }

    /// Reports `data`.
    pub fn send(&self, data: Value) {
        if let Some(sink) = &self.sink {
            sink(ToolProgress {
                tool_use_id: self.tool_use_id.clone(),
                data,
            });
        }
    }
}

/// A tool the model can call. Dyn-safe; held as `Arc<dyn Tool>`.
///
/// Most tools implement [`TypedTool`](crate::TypedTool) instead and get this trait from its
/// blanket implementation. Implement `Tool` directly only when the input has no Rust type
/// (MCP tools, whose schema arrives at run time).
///
/// Every input-taking method receives the input *after* [`parse_input`](Tool::parse_input).
/// Defaults are fail-closed: not concurrency-safe, not read-only, interrupt = block, and a
/// permission check with no opinion (the rules and the mode decide; nothing is allowed by
/// default).
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    // ----- identity -----

    /// The exact name the model calls (`Read`, `mcp__github__create_issue`).
    fn name(&self) -> &str;

    /// Other names the tool answers to (legacy names such as `Task` for `Agent`).
    fn aliases(&self) -> &[&str] {
        &[]
    }

    /// Whether the tool comes from an MCP server.
    fn is_mcp(&self) -> bool {
        self.mcp_info().is_some()
    }

    /// The server and remote name of an MCP tool.
    fn mcp_info(&self) -> Option<McpToolInfo> {
        None
    }

    // ----- schema and text -----

    /// The input JSON Schema sent to the model API: normalised (see
    /// [`normalize_schema`](crate::normalize_schema)), top-level `type: object`, no `$ref`.
    fn input_schema(&self) -> Value;

    /// A one-line description for people (logs, `toolwright tools`).
    fn description(&self) -> Cow<'_, str>;

    /// The description the model reads. Defaults to [`description`](Tool::description).
    fn prompt(&self) -> Cow<'_, str> {
        self.description()
    }

    /// A short capability phrase that helps ToolSearch find a deferred tool.
    fn search_hint(&self) -> Option<&str> {
        None
    }

    /// The name shown to people for this call (defaults to the tool name).
    fn user_facing_name(&self, _input: &Value) -> String {
        self.name().to_owned()
    }

    // ----- lifecycle -----

    /// Whether the tool is offered at all.
    fn is_enabled(&self) -> bool {
        true
    }

    /// Whether the schema is withheld until ToolSearch loads it.
    fn should_defer(&self) -> bool {
        false
    }

    /// Whether the tool is never deferred, whatever else says so.
    fn always_load(&self) -> bool {
        false
    }

    /// Above how many characters a result is persisted to disk. Required: a tool must think
    /// about how large its output can get.
    fn max_result_size(&self) -> MaxResultSize;

    /// Renders a structured output given in place of the tool's own (a PostToolUse hook's
    /// `updatedToolOutput`) as the model would see the tool's own output. `None` when
    /// `output` does not have the tool's output shape; the replacement is then ignored.
    /// Default: `None` (a tool that cannot check the shape takes no replacement).
    fn render_output(&self, _output: &Value) -> Option<ToolResultContent> {
        None
    }

    /// What a user interrupt does to a running call.
    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Block
    }

    /// Whether the tool always needs a person (questions, plan approval): never auto-allowed.
    fn requires_user_interaction(&self) -> bool {
        false
    }

    /// Top-level input fields that only the user fills (through the permission prompt, or a
    /// hook's `updatedInput` standing in for it), never the model: AskUserQuestion's
    /// `answers` and `annotations`. The pipeline drops the model's values for them before
    /// anything reads the input ([`strip_user_supplied_fields`]), so that nothing the model
    /// writes there reaches the tool as the user's.
    fn user_supplied_fields(&self) -> &'static [&'static str] {
        &[]
    }

    // ----- safety flags (fail-closed defaults) -----

    /// Whether this call may run at the same time as other concurrency-safe calls.
    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        false
    }

    /// Whether this call changes nothing.
    fn is_read_only(&self, _input: &Value) -> bool {
        false
    }

    /// Whether this call destroys data (deletes, overwrites).
    fn is_destructive(&self, _input: &Value) -> bool {
        false
    }

    /// Whether this call reaches outside the machine.
    fn is_open_world(&self, _input: &Value) -> bool {
        false
    }

    /// Whether the tool says that calling it again with the same input has no further
    /// effect (an MCP server's `idempotentHint: true`); `false` when nothing says so. Only
    /// passed on (`serve` re-serves an MCP tool with it), never used to schedule or allow a
    /// call.
    fn is_idempotent(&self, _input: &Value) -> bool {
        false
    }

    /// What this call does in search/read terms.
    fn is_search_or_read(&self, _input: &Value) -> SearchOrRead {
        SearchOrRead::default()
    }

    /// What permission rules about this call are matched against.
    fn permission_subject(&self, _input: &Value) -> Option<PermissionSubject> {
        None
    }

    /// The input as hooks, permission checks and the user see it, when it differs from the
    /// model's (Claude Code's `backfillObservableInput`): derived fields filled in, such as
    /// a file tool's `file_path` made absolute with `~` expanded, so that a hook script
    /// guarding `$HOME/.ssh/*` sees `~/.ssh/x` as the path it is. `None` (the default): they
    /// see the input as it is. The call itself gets the model's input (see the pipeline).
    fn observable_input(&self, _input: &Value, _ctx: &ToolUseContext) -> Option<Value> {
        None
    }

    // ----- the call -----

    /// The schema step: checks the model's raw input and returns the input every later step
    /// sees (JSON-string fields decoded, nulls for optional fields dropped). The default
    /// accepts any JSON object, as MCP tools do (their server validates).
    fn parse_input(&self, input: Value) -> Result<Value, InputError> {
        match input {
            Value::Object(_) => Ok(input),
            other => Err(InputError::not_an_object(self.name(), &other)),
        }
    }

    /// Tool-specific checks after parsing, before hooks and permissions.
    async fn validate_input(
        &self,
        _input: &Value,
        _ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        Ok(())
    }

    /// The tool's own permission check (runs after the deny and ask rules).
    async fn check_permissions(&self, _input: &Value, _ctx: &ToolUseContext) -> PermissionResult {
        PermissionResult::passthrough()
    }

    /// Runs the call. `ctx.cancellation()` fires when the call is cancelled; a tool that
    /// starts processes must stop them then.
    async fn call(
        &self,
        input: Value,
        ctx: ToolUseContext,
        progress: ProgressSender,
    ) -> Result<ToolResult, ToolError>;
}

impl fmt::Debug for dyn Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}

/// Finds a tool by name or alias.
pub fn find_tool<'a>(tools: &'a [Arc<dyn Tool>], name: &str) -> Option<&'a Arc<dyn Tool>> {
    tools
        .iter()
        .find(|t| t.name() == name)
        .or_else(|| tools.iter().find(|t| t.aliases().contains(&name)))
}

/// Legacy tool names and the current names they stand for, as Claude Code normalises them
/// for permission rules and hook matchers.
const LEGACY_TOOL_NAMES: &[(&str, &str)] = &[
    ("Task", "Agent"),
    ("KillShell", "TaskStop"),
    ("AgentOutputTool", "TaskOutput"),
    ("BashOutputTool", "TaskOutput"),
    ("BashOutput", "TaskOutput"),
];

/// Removes from `input` (a model's) the fields only the user fills
/// ([`Tool::user_supplied_fields`]: AskUserQuestion's `answers` and `annotations`), so that
/// nothing the model writes there is taken for the user's.
pub fn strip_user_supplied_fields(tool: &dyn Tool, input: &mut Value) {
    if let Value::Object(fields) = input {
        for field in tool.user_supplied_fields() {
            fields.remove(*field);
        }
    }
}

/// Maps a legacy tool name to its current name (`Task` -> `Agent`, `KillShell` -> `TaskStop`,
/// `AgentOutputTool`/`BashOutputTool`/`BashOutput` -> `TaskOutput`); other names are
/// returned unchanged.
pub fn normalize_tool_name(name: &str) -> &str {
    LEGACY_TOOL_NAMES
        .iter()
        .find(|(legacy, _)| *legacy == name)
        .map_or(name, |(_, current)| current)
}

/// The legacy names of the tool now called `name` (the inverse of [`normalize_tool_name`]).
pub fn legacy_tool_names(name: &str) -> impl Iterator<Item = &'static str> + '_ {
    LEGACY_TOOL_NAMES
        .iter()
        .filter(move |(_, current)| *current == name)
        .map(|(legacy, _)| *legacy)
}
