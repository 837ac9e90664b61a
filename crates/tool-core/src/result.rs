//! What a tool call returns: [`ToolResult`] with its output, extra messages and an optional
//! context modifier.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::content::{ContentBlock, ToolResultContent};
use crate::context::ToolUseContext;

/// A change to the context that applies after the call, before the next tool starts
/// (for example Bash's working directory). Honoured only for tools that are not
/// concurrency-safe; the executor drops (and traces) one from a concurrency-safe tool.
pub struct ContextModifier {
    change: Box<dyn FnOnce(ToolUseContext) -> ToolUseContext + Send + Sync>,
    /// The working directory the change moves to, when it is a move ([`Self::cwd`]).
    cwd: Option<PathBuf>,
}

impl ContextModifier {
    /// Wraps a function from the old context to the new one.
    pub fn new(f: impl FnOnce(ToolUseContext) -> ToolUseContext + Send + Sync + 'static) -> Self {
        Self {
            change: Box::new(f),
            cwd: None,
        }
    }

    /// A move to another working directory (a Bash `cd`, a worktree). Unlike a change made
    /// with [`new`](Self::new), its effect is known before it applies: the call's own
    /// PostToolUse (or PostToolUseFailure) hooks already run there and see it as their
    /// `cwd`, as in Claude Code, where the call moved the process itself.
    pub fn cwd(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        let to = dir.clone();
        Self {
            change: Box::new(move |ctx| ctx.with_cwd(to)),
            cwd: Some(dir),
        }
    }

    /// The working directory this change moves to, if it is a move made with
    /// [`cwd`](Self::cwd).
    pub fn new_cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// Applies the modifier.
    pub fn apply(self, ctx: ToolUseContext) -> ToolUseContext {
        (self.change)(ctx)
    }
}

impl fmt::Debug for ContextModifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ContextModifier(..)")
    }
}

/// A message appended to the conversation after a tool's result.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Message {
    /// A user-role message.
    User(Vec<ContentBlock>),
    /// An assistant-role message.
    Assistant(Vec<ContentBlock>),
    /// A system message shown to the user (not to the model).
    System(String),
    /// An attachment: context for the model that is not a tool_result (hook context,
    /// reminders).
    Attachment(Attachment),
}

/// Context attached to the conversation by a hook or a tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Attachment {
    /// What kind of attachment (`hook_additional_context`, `hook_blocking_error`, ...).
    pub kind: String,
    /// The text the model sees.
    pub text: String,
}

impl Attachment {
    /// An attachment of `kind` with `text`.
    pub fn new(kind: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            text: text.into(),
        }
    }
}

/// MCP-specific parts of a result (`_meta`, `structuredContent`), passed through untouched.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpMeta {
    /// The result's `_meta`.
    pub meta: Option<Value>,
    /// The result's `structuredContent`.
    pub structured_content: Option<Value>,
}

/// A tool's output: the content the model sees, plus the structured value hooks see as
/// `tool_response`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// The tool_result content.
    pub content: ToolResultContent,
    /// The structured output (the typed `Output` serialised), for PostToolUse hooks.
    pub structured: Value,
}

impl ToolOutput {
    /// Text output; the structured value is the same string.
    pub fn text(text: impl Into<String>) -> Self {
        let text = text.into();
        Self {
            structured: Value::String(text.clone()),
            content: ToolResultContent::Text(text),
        }
    }
}

/// The result of a successful call (Claude Code's `ToolResult<T>`). Typed tools return
/// `ToolResult<Output>`; the dyn [`Tool`](crate::Tool) layer sees `ToolResult<ToolOutput>`.
#[derive(Debug)]
pub struct ToolResult<T = ToolOutput> {
    /// The output.
    pub data: T,
    /// Messages appended after the tool_result.
    pub new_messages: Vec<Message>,
    /// A change to the context, applied in arrival order by the executor.
    pub context_modifier: Option<ContextModifier>,
    /// MCP-specific result parts.
    pub mcp_meta: Option<McpMeta>,
}

impl ToolResult<ToolOutput> {
    /// A text result.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(ToolOutput::text(text))
    }
}

impl<T> ToolResult<T> {
    /// A result with `data` and nothing else.
    pub fn new(data: T) -> Self {
        Self {
            data,
            new_messages: Vec::new(),
            context_modifier: None,
            mcp_meta: None,
        }
    }

    /// The same result with its data mapped.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> ToolResult<U> {
        ToolResult {
            data: f(self.data),
            new_messages: self.new_messages,
            context_modifier: self.context_modifier,
            mcp_meta: self.mcp_meta,
        }
    }

    /// Adds a context modifier.
    pub fn with_context_modifier(
        mut self,
        f: impl FnOnce(ToolUseContext) -> ToolUseContext + Send + Sync + 'static,
    ) -> Self {
        self.context_modifier = Some(ContextModifier::new(f));
        self
    }

    /// Adds a context change made beforehand, such as a move ([`ContextModifier::cwd`]).
    pub fn with_context_change(mut self, modifier: ContextModifier) -> Self {
        self.context_modifier = Some(modifier);
        self
    }

    /// Adds a message after the result.
    pub fn with_message(mut self, message: Message) -> Self {
        self.new_messages.push(message);
        self
    }
}
