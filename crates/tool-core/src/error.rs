//! Errors of the tool contract, split by who sees them.
//!
//! A [`ToolError`] is a *tool failure*: the call did not work and the model is told why in a
//! `tool_result` with `is_error: true`. The turn goes on. The one exception is
//! [`ToolError::Harness`], a failure of the harness itself (for example a broken invariant in
//! the host), which ends the turn instead of being shown to the model.
//!
//! [`ValidationError`] is what a tool's `validate_input` returns to refuse a call before any
//! hook or permission check runs.

use std::borrow::Cow;
use std::fmt;
use std::io;
use std::path::PathBuf;

/// The model-facing text of a cancelled call (Claude Code's `CANCEL_MESSAGE`).
pub const CANCEL_MESSAGE: &str = "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you how to proceed.";

/// The model-facing text of a call interrupted by the user while it ran.
pub const INTERRUPT_MESSAGE_FOR_TOOL_USE: &str = "[Request interrupted by user for tool use]";

/// Above this many characters an error text shown to the model keeps only its head and tail.
pub const MAX_ERROR_CHARS: usize = 10_000;

/// How a failed call is reported: to the model (most variants) or to the host (`Harness`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// A plain failure with a message for the model.
    #[error("{0}")]
    Message(String),
    /// An I/O operation on a path failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path the operation was about.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A shell command ran and failed (non-zero exit, timeout, interrupted).
    #[error("{}", format_shell_error(*.exit_code, *.interrupted, stderr, stdout))]
    Shell {
        /// The exit code (a shell killed by signal N reports 128 + N, as bash does), or
        /// `None` when there is none to report: the caller killed the command (its timeout,
        /// its output past the cap).
        exit_code: Option<i32>,
        /// Everything the command wrote to standard error (possibly cut).
        stderr: String,
        /// Everything the command wrote to standard output (possibly cut).
        stdout: String,
        /// Whether the command was interrupted (cancelled or timed out).
        interrupted: bool,
    },
    /// `error`, with a change to the context that holds although the call failed: a Bash
    /// command that changed directory and then failed leaves the shell in the new directory
    /// (see [`with_context_change`](Self::with_context_change)).
    #[error("{error}")]
    WithContextChange {
        /// The failure.
        error: Box<ToolError>,
        /// The change, applied as a successful call's modifier is.
        modifier: crate::result::ContextModifier,
    },
    /// The call was cancelled (Claude Code's `AbortError`). `None` uses the standard
    /// interrupt text.
    #[error("{}", .0.as_deref().unwrap_or(INTERRUPT_MESSAGE_FOR_TOOL_USE))]
    Cancelled(Option<String>),
    /// A failure of the harness, not of the call: it ends the turn instead of being shown to
    /// the model.
    #[error("harness failure: {0}")]
    Harness(String),
}

fn format_shell_error(
    exit_code: Option<i32>,
    interrupted: bool,
    stderr: &str,
    stdout: &str,
) -> String {
    let mut parts: Vec<Cow<'_, str>> = Vec::with_capacity(4);
    match exit_code {
        Some(code) => parts.push(format!("Exit code {code}").into()),
        None => parts.push("Exit code unknown (killed by a signal)".into()),
    }
    if interrupted {
        parts.push("Command was aborted before completion".into());
    }
    for part in [stderr.trim_end(), stdout.trim_end()] {
        if !part.is_empty() {
            parts.push(part.into());
        }
    }
    parts.join("\n")
}

impl ToolError {
    /// A failure described by `message`.
    pub fn msg(message: impl Into<String>) -> Self {
        Self::Message(message.into())
    }

    /// An I/O failure on `path`.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }

    /// This failure, with a change to the context that holds although the call failed. The
    /// pipeline takes it off ([`take_context_change`](Self::take_context_change)) and
    /// applies it as a successful call's modifier.
    #[must_use]
    pub fn with_context_change(self, modifier: crate::result::ContextModifier) -> Self {
        Self::WithContextChange {
            error: Box::new(self.take_context_change().0),
            modifier,
        }
    }

    /// The failure without its context change, and the change if there is one.
    pub fn take_context_change(self) -> (Self, Option<crate::result::ContextModifier>) {
        match self {
            Self::WithContextChange { error, modifier } => (*error, Some(modifier)),
            other => (other, None),
        }
    }

    /// Whether this failure ends the turn instead of being shown to the model.
    pub fn is_harness(&self) -> bool {
        match self {
            Self::WithContextChange { error, .. } => error.is_harness(),
            other => matches!(other, Self::Harness(_)),
        }
    }

    /// Whether this failure is a cancellation.
    pub fn is_cancelled(&self) -> bool {
        match self {
            Self::WithContextChange { error, .. } => error.is_cancelled(),
            other => matches!(other, Self::Cancelled(_)),
        }
    }

    /// The text the model sees in the `is_error` tool_result (Claude Code's `formatError`):
    /// `Command failed with no output` when empty, head and tail when over
    /// [`MAX_ERROR_CHARS`].
    pub fn to_model_text(&self) -> String {
        let text = self.to_string();
        if text.trim().is_empty() {
            return "Command failed with no output".to_owned();
        }
        truncate_middle(&text, MAX_ERROR_CHARS)
    }

    /// A stable class name for telemetry (`error.type`): our variant name, plus the I/O error
    /// kind where there is one. Never a type name and never user data.
    pub fn class(&self) -> Cow<'static, str> {
        match self {
            Self::Message(_) => "ToolError".into(),
            Self::Io { source, .. } => format!("Io:{:?}", source.kind()).into(),
            Self::Shell { .. } => "ShellError".into(),
            Self::Cancelled(_) => "Cancelled".into(),
            Self::Harness(_) => "HarnessError".into(),
            Self::WithContextChange { error, .. } => error.class(),
        }
    }
}

/// Keeps the first and last `max / 2` characters of `text` when it is longer than `max`,
/// with Claude Code's `... [N characters truncated] ...` line in between.
pub fn truncate_middle(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_owned();
    }
    let half = max / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(total - half).collect();
    format!(
        "{head}\n\n... [{} characters truncated] ...\n\n{tail}",
        total - 2 * half
    )
}

/// A tool's refusal of an input in `validate_input`, before hooks and permissions run.
///
/// The model sees `<tool_use_error>MESSAGE</tool_use_error>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValidationError {
    /// What is wrong with the input, for the model.
    pub message: String,
    /// A tool-specific code for telemetry (Claude Code's `errorCode`).
    pub error_code: Option<i32>,
}

impl ValidationError {
    /// A refusal with `message` and no code.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            error_code: None,
        }
    }

    /// A refusal with `message` and a telemetry `code`.
    pub fn with_code(message: impl Into<String>, code: i32) -> Self {
        Self {
            message: message.into(),
            error_code: Some(code),
        }
    }
}

/// Wraps `text` in Claude Code's `<tool_use_error>` tags.
pub fn tool_use_error(text: impl fmt::Display) -> String {
    format!("<tool_use_error>{text}</tool_use_error>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_error_text_has_claude_code_layout() {
        let err = ToolError::Shell {
            exit_code: Some(2),
            stderr: "boom\n".into(),
            stdout: String::new(),
            interrupted: false,
        };
        assert_eq!(err.to_model_text(), "Exit code 2\nboom");
        assert_eq!(err.class(), "ShellError");
        // A context change rides along without changing what the failure says.
        let changed = err.with_context_change(crate::result::ContextModifier::new(|c| c));
        assert_eq!(changed.to_model_text(), "Exit code 2\nboom");
        assert_eq!(changed.class(), "ShellError");
        assert!(!changed.is_cancelled());
        let (inner, change) = changed.take_context_change();
        assert!(matches!(inner, ToolError::Shell { .. }) && change.is_some());
    }

    #[test]
    fn empty_error_has_a_text() {
        assert_eq!(
            ToolError::msg("  ").to_model_text(),
            "Command failed with no output"
        );
    }

    #[test]
    fn long_errors_keep_head_and_tail() {
        let text = format!("{}{}", "a".repeat(6000), "b".repeat(6000));
        let out = truncate_middle(&text, MAX_ERROR_CHARS);
        assert!(out.starts_with(&"a".repeat(5000)));
        assert!(out.ends_with(&"b".repeat(5000)));
        assert!(out.contains("... [2000 characters truncated] ..."));
    }

    #[test]
    fn io_class_uses_the_kind() {
        let err = ToolError::io("/x", io::Error::from(io::ErrorKind::NotFound));
        assert_eq!(err.class(), "Io:NotFound");
        assert_eq!(err.to_model_text(), "/x: entity not found");
    }
}
