//! Toolwright's built-in tools, with Claude Code's names, input fields, refusal texts and
//! output shapes: the file and search tools [`Read`], [`Write`], [`Edit`], [`Glob`],
//! [`Grep`] and [`NotebookEdit`]; the shell tool [`Bash`] with its background tasks
//! ([`tasks`], read by [`TaskOutput`], ended by [`TaskStop`]); [`WebFetch`] and
//! [`WebSearch`] (which searches through a host's [`web_search::WebSearchBackend`]); the session
//! tools [`TodoWrite`], [`AskUserQuestion`], [`EnterPlanMode`], [`ExitPlanMode`] and
//! [`Skill`]; and [`ToolSearch`], which loads deferred tools
//! ([`tool_search::deferred_tools_announcement`] renders the `<available-deferred-tools>`
//! announcement).
//!
//! Each tool is a unit struct implementing [`tool_core::TypedTool`] in its own module;
//! [`file_tools`] returns them all, ready for a registry. Searching runs on ripgrep's own
//! crates (`ignore` and its globset-based overrides, `grep-regex`, `grep-searcher`,
//! `grep-printer`) in-process;
//! nothing shells out. Every write is atomic (temporary file in the same directory, fsync,
//! rename) and keeps the file's permissions, encoding (UTF-8 with or without BOM, UTF-16 LE)
//! and CRLF line endings. Edit and Write refuse a file the model has not read, or whose
//! content changed since, through tool-core's [`tool_core::FileStateCache`].
//!
//! This crate is **not** where permissions are decided: each tool only describes the path it
//! touches ([`tool_core::Tool::permission_subject`], read or write access) and leaves
//! `check_permissions` at its default, so the permission engine applies `Read(...)` and
//! `Edit(...)` rules generically; Bash describes its command the same way. It knows nothing
//! of the executor, hooks, the registry or other tool crates.
//!
//! # Choices where Claude Code is silent or quirky
//!
//! - `file_path`/`notebook_path` must be absolute (or start with `~`); a relative path is a
//!   clear refusal rather than being resolved against the working directory.
//! - Read numbers lines as Claude Code 2.0 did: the number right-aligned in six columns, then
//!   `→` (U+2192), then the line. A cut line ends with `... [line truncated]`. An oversize
//!   whole-file read returns the lines that fit the token cap with a `PARTIAL view` notice
//!   (after which Edit may change what was shown, but Write refuses to replace the whole
//!   file until the rest is read); an oversize explicit range is an error unless
//!   `allow_large` is set. Devices and FIFOs
//!   are refused. PDFs are read as extracted text per page (lopdf), capped at the
//!   same token limit as text; one whose compressed streams inflate to over 256 MiB
//!   (measured before lopdf inflates them, module `pdf_inflate`) is refused as a likely
//!   decompression bomb.
//! - Binary files are refused by extension and by a NUL byte in the first 8 KiB.
//! - Edit and Write refuse a file that is not UTF-8 or BOM-marked UTF-16 (LE or BE) text rather than
//!   risk mangling it; a file whose every newline is CRLF is edited in LF form and written
//!   back CRLF; mixed endings are left exactly as they are.
//! - Glob and Grep show paths relative to the working directory when inside it, absolute
//!   otherwise. Glob sorts newest first (ties by path) and never lists VCS directories;
//!   Grep's content and count modes list files in path order (`rg --sort path`).
//! - NotebookEdit re-serialises the notebook with its own indentation and key order, so a
//!   notebook in Jupyter's layout changes only in the edited cell.
//! - A permission subject is given only for paths that resolve without a context (absolute or
//!   `~`): Glob and Grep without `path` (the working directory) report none.
//!
//! ```
//! let tools = tools_builtin::file_tools();
//! let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
//! assert_eq!(names, ["Read", "Write", "Edit", "Glob", "Grep", "NotebookEdit"]);
//! ```
//!
//! # Crate features
//!
//! - `proactive` (off by default): `Sleep` (the `sleep` module), the one tool whose
//!   interrupt behaviour is `cancel`.
//! - `agent-triggers` (off by default): `CronCreate`, `CronList`, `CronDelete` (the `cron`
//!   module), prompts scheduled on 5-field cron expressions, polled by the host through
//!   `cron::CronStore::due_jobs`.
//! - Tasks v2 ([`TaskCreate`], [`TaskGet`], [`TaskUpdate`], [`TaskList`]; module
//!   [`task_list`]) is always compiled; the registry offers it only when
//!   `TOOLWRIGHT_ENABLE_TASKS` is set.
//! - `worktree` (off by default): `EnterWorktree` and `ExitWorktree` (the `worktree` module),
//!   git worktree sessions that switch the session's working directory.
//! - `repl` (off by default): `REPL` (the `repl` module), persistent Python and Node
//!   interpreters per session.
#![forbid(unsafe_code)]

use std::sync::Arc;

use tool_core::Tool;

pub mod ask_user_question;
pub mod bash;
#[cfg(feature = "agent-triggers")]
pub mod cron;
mod deadline;
pub mod edit;
pub mod enter_plan_mode;
pub mod exit_plan_mode;
pub mod frontmatter;
mod fsutil;
pub mod glob;
pub mod grep;
mod html_depth;
mod notebook;
pub mod notebook_edit;
mod patch;
mod pdf_inflate;
mod procs;
pub mod read;
#[cfg(feature = "repl")]
pub mod repl;
pub mod skill;
#[cfg(feature = "proactive")]
pub mod sleep;
pub mod task_list;
pub mod task_output;
pub mod task_stop;
pub mod tasks;
pub mod todo_write;
pub mod tool_search;
pub mod web_fetch;
pub mod web_search;
#[cfg(feature = "worktree")]
pub mod worktree;
pub mod write;

pub use ask_user_question::AskUserQuestion;
pub use bash::Bash;
#[cfg(feature = "agent-triggers")]
pub use cron::{CronCreate, CronDelete, CronList};
pub use edit::Edit;
pub use enter_plan_mode::EnterPlanMode;
pub use exit_plan_mode::ExitPlanMode;
pub use glob::Glob;
pub use grep::Grep;
pub use notebook_edit::NotebookEdit;
pub use patch::Hunk;
pub use read::Read;
#[cfg(feature = "repl")]
pub use repl::Repl;
pub use skill::Skill;
#[cfg(feature = "proactive")]
pub use sleep::Sleep;
pub use task_list::{TaskCreate, TaskGet, TaskList, TaskUpdate};
pub use task_output::TaskOutput;
pub use task_stop::TaskStop;
pub use todo_write::TodoWrite;
pub use tool_search::ToolSearch;
pub use web_fetch::WebFetch;
pub use web_search::WebSearch;
#[cfg(feature = "worktree")]
pub use worktree::{EnterWorktree, ExitWorktree};
pub use write::Write;

/// All file and search tools, in Claude Code's order.
pub fn file_tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(Read),
        Arc::new(Write),
        Arc::new(Edit),
        Arc::new(Glob),
        Arc::new(Grep),
        Arc::new(NotebookEdit),
    ]
}
