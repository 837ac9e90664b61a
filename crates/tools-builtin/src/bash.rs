//! Bash: runs a shell command in its own process group, with a timeout, bounded output
//! capture, and a working directory that persists between calls.
//!
//! - The command runs under `bash -c` (or `sh -c` where there is no bash), in the context's
//!   cwd, with no stdin, in a new process group. On cancellation the whole group gets
//!   SIGTERM, then what is left of it SIGKILL after a grace period (the group's grace, not
//!   only the shell's: a process cleaning up on SIGTERM gets to finish): nothing is left
//!   running. A command still running at its timeout goes on as a background task, as in
//!   Claude Code (its output so far starts the task's file; the result gives the task's id),
//!   except one that starts with `sleep`, runs `git`, or does not parse: that one is ended
//!   like a cancelled one. So is every command when background tasks are turned off
//!   (`CLAUDE_CODE_DISABLE_BACKGROUND_TASKS` on, which also refuses `run_in_background:
//!   true` as a bad input: the schema is the type's, made once, so the field stays in it) or
//!   when a deny or ask rule of the session would match the call run in the background
//!   (`Bash(run_in_background:true)`; the session engine is asked, so rules added during
//!   the session count): a tiny `timeout` does not get a command past such a rule, and the
//!   timeout text names it.
//!   When the command itself exits, anything it left in its group, or in groups job control
//!   made (`set -m; cmd &`, found by the mark its processes inherit, `TOOLWRIGHT_COMMAND`),
//!   is killed too (`server &`, `nohup`: unlike Claude Code, which leaves them running),
//!   and the result says so, naming
//!   `run_in_background` for servers. The command is `eval`ed on the script's first line,
//!   so bash's error lines count from the command's own (`bash: line 1: ...`).
//! - Nobody can type into a command: `GIT_EDITOR` is `true` (`shell_command`), so `git
//!   commit` without `-m` stops at once, and `git commit --amend`, `git merge` and `git
//!   rebase -i` go ahead with the message or plan git wrote instead of waiting for an
//!   editor until the timeout.
//! - A shell killed by a signal reports 128 + its number as its exit code (137 for SIGKILL,
//!   139 for a segmentation fault), as bash does for its commands; so does one the tool
//!   ends (143 for the SIGTERM at a timeout, 137 for the SIGKILL after the grace), and a
//!   command ended at its timeout says `Command timed out after N ms`.
//! - Output is captured with bounded memory: up to [`MEMORY_CAP`] bytes per stream stay in
//!   memory; past that the stream spills to a file (kept up to [`SPILL_FILE_CAP`]: the
//!   result then says the file holds the first 64 MiB) and only the head and tail stay in
//!   memory. A failing command's error shows a head and tail of its output: whatever it cut
//!   is in a file the error names first (the spill file, or one written then). Past [`KILL_CAP`] bytes the command is killed with a
//!   note. A spill file that cannot be written (a full disk) is removed, and the result says
//!   the bytes it would have held could not be saved, and why.
//! - The working directory persists through a context modifier while it stays inside the
//!   working directories (the project directory included, so `cd ..` back to it holds);
//!   otherwise the session goes back to the project directory (Claude Code's original cwd,
//!   not where the previous command left it) and the output says
//!   `Shell cwd was reset to <project dir>`. The cwd itself never counts as a working
//!   directory. With `CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR` on (`1`, `true`, `yes`,
//!   `on`; read at each call from this process's environment, which the settings' `env`
//!   sets too), the session goes back to the project directory (a worktree session's
//!   worktree) after every command, failed ones too, without a note, as in Claude Code: a
//!   `cd` lasts for its own command, and the prompt says so. When the session's directory
//!   has been removed, or leads outside the working directories by its real path (it was
//!   replaced by a link since the session moved in: [`ToolUseContext::cwd_outside`]), the
//!   command runs in the first working directory that still exists, and the output says so.
//!   A command that removes it (`rmdir "$PWD"`) moves the session there itself: the
//!   executor takes no context change from a concurrency-safe call, so a read-only command
//!   after it could not (it says only where it ran).
//! - The directory a command ended in comes back through a scratch file in the session's
//!   directory, made (and its room reserved) before the command runs: a command cannot start
//!   when it cannot be made ("Could not start the command: cannot create its scratch file in
//!   DIR: ..."), a command that fills the disk keeps its `cd`, and when the file still could
//!   not be written the result says that the working directory could not be tracked, why,
//!   and where the next command runs. A removed directory is written as such (a line break
//!   alone), so the two are never taken for each other.
//! - With `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` on (`1`, `true`, `yes`, `on`), a command,
//!   foreground or background, inherits none of this process's credentials (API keys and
//!   tokens, cloud secrets, OTLP headers: `tool_core::process::scrub_credentials`), as in
//!   Claude Code; what an environment file sources still reaches it.
//! - The user's own `CLAUDE_ENV_FILE` (the variable in this process's environment, which
//!   the settings' `env` sets too) is sourced before each command, foreground and
//!   background, before the session's (the SessionStart hooks' files, one per hook, in the
//!   hooks' order); one that cannot be read leaves the command to run without it, with a
//!   note (`with_session_env`).
//! - Unlike Claude Code, a `cd` holds even when the command then fails (`cd build && make`
//!   failing leaves the next command in `build`, as in an interactive shell); Claude Code
//!   records the new directory only after a command that succeeded.
//! - Exit code 1 is not an error for `grep`, `rg`, `egrep`, `fgrep`, `find`, `diff`, `test`,
//!   `[`, `git diff` and `git grep` (no match / a difference is an answer, not a failure).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tool_core::{
    MaxResultSize, PermissionSubject, ProgressSender, SearchOrRead, ToolError, ToolResult,
    ToolResultContent, ToolUseContext, TypedTool, async_trait,
};

/// Default timeout, in milliseconds, unless `BASH_DEFAULT_TIMEOUT_MS` says otherwise
/// ([`default_timeout_ms`]).
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Largest timeout, in milliseconds, unless `BASH_MAX_TIMEOUT_MS` says otherwise
/// ([`max_timeout_ms`]); larger values are reduced to it.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

/// A positive whole number of milliseconds from the environment variable `name`.
fn env_ms(name: &str) -> Option<u64> {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&ms| ms > 0)
}

/// The timeout of a command that gives none: `BASH_DEFAULT_TIMEOUT_MS` when it is a positive
/// whole number (the settings' `env` sets it too), else [`DEFAULT_TIMEOUT_MS`], as in Claude
/// Code.
pub fn default_timeout_ms() -> u64 {
    env_ms("BASH_DEFAULT_TIMEOUT_MS").unwrap_or(DEFAULT_TIMEOUT_MS)
}

/// The largest timeout a command may ask for: `BASH_MAX_TIMEOUT_MS` when it is a positive
/// whole number, else [`MAX_TIMEOUT_MS`], and never below [`default_timeout_ms`], as in
/// Claude Code.
pub fn max_timeout_ms() -> u64 {
    env_ms("BASH_MAX_TIMEOUT_MS")
        .unwrap_or(MAX_TIMEOUT_MS)
        .max(default_timeout_ms())
}
/// Bytes of one stream kept in memory before it spills to a file.
pub const MEMORY_CAP: usize = 1024 * 1024;
/// Bytes of head and of tail kept in memory once a stream has spilled.
pub const KEEP_HEAD_TAIL: usize = 32 * 1024;
/// Bytes of one stream written to its spill file; the rest is counted, not kept.
pub const SPILL_FILE_CAP: u64 = 64 * 1024 * 1024;
/// Total output after which the command is killed.
pub const KILL_CAP: u64 = 5 * 1024 * 1024 * 1024;
/// Time between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(2);

/// How often a running command reports its output so far, at most (and how soon after
/// output comes, at the latest).
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// Input of the Bash tool (Claude Code's fields).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct BashInput {
    /// The command to execute
    pub command: String,
    /// Optional timeout in milliseconds (max 600000)
    pub timeout: Option<f64>,
    /// Clear, concise description of what this command does in 5-10 words
    pub description: Option<String>,
    /// Set to true to run this command in the background.
    pub run_in_background: Option<bool>,
    /// Accepted for compatibility; Toolwright has no sandbox to disable.
    #[serde(rename = "dangerouslyDisableSandbox")]
    pub dangerously_disable_sandbox: Option<bool>,
}

/// What Bash returns (Claude Code's `tool_response` shape for PostToolUse hooks).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct BashOutput {
    /// Standard output (head and tail when it spilled).
    pub stdout: String,
    /// Standard error (head and tail when it spilled).
    pub stderr: String,
    /// Whether the command was interrupted.
    pub interrupted: bool,
    /// How a non-zero exit code was read (`No matches found`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_code_interpretation: Option<String>,
    /// Where the full output went when it was too large for memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_output_path: Option<String>,
    /// The file at `raw_output_path` holds only the first [`SPILL_FILE_CAP`] bytes.
    #[serde(skip)]
    pub raw_output_cut: bool,
    /// Where each stream that was too large for memory is saved, one line each (output,
    /// then error output), as the result shows them first; empty when none spilled (a
    /// hook's replacement shows `raw_output_path` alone).
    #[serde(skip)]
    pub saved_notes: Vec<String>,
    /// Whether the command printed nothing (optional in a hook's replacement).
    #[serde(default)]
    pub no_output_expected: bool,
    /// The id of the background task, when `run_in_background` started one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub background_task_id: Option<String>,
}

/// Decides whether a command only reads.
pub type ReadOnlyCheck = fn(&str) -> bool;

/// The Bash tool.
#[derive(Debug, Clone, Copy)]
pub struct Bash {
    read_only: ReadOnlyCheck,
}

impl Default for Bash {
    /// Bash with `tool-perms`' read-only analysis ([`is_read_only_command`]).
    fn default() -> Self {
        Self {
            read_only: is_read_only_command,
        }
    }
}

pub use tool_perms::bash::is_read_only_command;

impl Bash {
    /// Bash whose `is_read_only` (and so `is_concurrency_safe`, which also requires that the
    /// command does not change directory) asks `check` instead of [`is_read_only_command`].
    pub fn with_read_only_check(check: ReadOnlyCheck) -> Self {
        Self { read_only: check }
    }
}

/// What a result says when the command left processes running (`server &`, `nohup`): they
/// were stopped with it.
const LEFTOVERS_STOPPED: &str = "Stopped the processes this command left running (`&`, `nohup`): a command's processes end with it. Use run_in_background for servers and watchers.";

/// [`LEFTOVERS_STOPPED`] when background tasks are turned off
/// ([`background_tasks_disabled`]): it names no `run_in_background`.
const LEFTOVERS_STOPPED_NO_BACKGROUND: &str = "Stopped the processes this command left running (`&`, `nohup`): a command's processes end with it.";

/// Why `run_in_background: true` is refused when background tasks are turned off.
const NO_BACKGROUND_TASKS: &str = "run_in_background is not available: background tasks are turned off (CLAUDE_CODE_DISABLE_BACKGROUND_TASKS is set). Run the command without run_in_background; it is killed if still running at its timeout.";

/// The environment variable that turns background tasks off, as in Claude Code
/// ([`background_tasks_disabled`]).
pub const DISABLE_BACKGROUND_TASKS_ENV: &str = "CLAUDE_CODE_DISABLE_BACKGROUND_TASKS";

/// The environment variable that brings the session back to the project directory after
/// each command, as in Claude Code ([`maintains_project_working_dir`]).
pub const MAINTAIN_PROJECT_WORKING_DIR_ENV: &str = "CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR";

/// Whether the environment variable `name` is set to a value that turns a switch on, as
/// Claude Code reads its flags ([`tool_core::env_truthy`]: `1`, `true`, `yes`, `on`).
fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| tool_core::env_truthy(&v))
}

/// Whether background tasks are turned off: `CLAUDE_CODE_DISABLE_BACKGROUND_TASKS` is on in
/// this process's environment (which the settings' `env` sets too), read at each call as
/// `BASH_MAX_TIMEOUT_MS` is. Then `run_in_background: true` is refused and a command still
/// running at its timeout is killed, never moved to the background, as in Claude Code.
pub fn background_tasks_disabled() -> bool {
    env_flag(DISABLE_BACKGROUND_TASKS_ENV)
}

/// Whether each command starts in the project directory:
/// `CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR` is on in this process's environment (which
/// the settings' `env` sets too). Then the session goes back to the project directory (a
/// worktree session's worktree) after every command, as Claude Code's "return to the
/// original working directory after each Bash command": a `cd` lasts for its own command.
pub fn maintains_project_working_dir() -> bool {
    env_flag(MAINTAIN_PROJECT_WORKING_DIR_ENV)
}

/// The deny or ask rule of `ctx`'s session that a Bash call with `run_in_background: true`
/// would match (`Bash(run_in_background:true)`, `Bash(run_in_background:t*)`), if any, as
/// the words a timeout text names it with (`the deny rule Bash(run_in_background:true)`).
///
/// The session engine decides when the host put one in the context's app state
/// ([`tool_perms::SessionEngine`]): it holds the rules added during the session (a
/// PermissionRequest hook's `updatedPermissions`), which the context's permission settings,
/// a snapshot, do not. Else an engine made of the context's deny and ask rules
/// ([`PermissionEngine::for_walking`](tool_perms::PermissionEngine::for_walking)). The
/// engine is asked about the call `{"run_in_background": true}` alone
/// ([`check_rule_based`](tool_perms::PermissionEngine::check_rule_based)): no command, so
/// only a rule on the call as a whole or on that field can object. Any deny holds (a
/// tool-wide one added since the command started too); an ask holds when it comes from a
/// rule with content (a field rule): a tool-wide ask rule on Bash asked about this command
/// already. The engine names the first ask rule only, so behind a tool-wide ask rule the
/// field rules of the context's settings are read here ([`settings_background_rule`]).
async fn background_rule(ctx: &ToolUseContext) -> Option<String> {
    let engine = tool_perms::PermissionEngine::for_walking(ctx)?;
    let probe = serde_json::json!({ "run_in_background": true });
    let (behaviour, rule) = match engine
        .check_rule_based(&Bash::default(), &probe, ctx)
        .await?
    {
        tool_core::PermissionResult::Deny { reason, .. } => ("deny", rule_of(&reason)),
        tool_core::PermissionResult::Ask {
            reason: Some(reason),
            ..
        } => match rule_of(&reason) {
            Some(rule) if rule_has_content(&rule) => ("ask", Some(rule)),
            // A tool-wide ask rule; a field rule behind it is seen in the settings only.
            Some(_) => return settings_background_rule(ctx),
            None => ("ask", None),
        },
        tool_core::PermissionResult::Ask { reason: None, .. } => ("ask", None),
        _ => return None,
    };
    Some(match rule {
        Some(rule) => format!("the {behaviour} rule {rule}"),
        None => format!("the permission rules ({behaviour})"),
    })
}

/// The rule a decision came from, as written.
fn rule_of(reason: &tool_core::DecisionReason) -> Option<String> {
    match reason {
        tool_core::DecisionReason::Rule { rule, .. } => Some(rule.clone()),
        _ => None,
    }
}

/// Whether `rule` has content (`Bash(run_in_background:true)`), not a tool-wide rule (`Bash`,
/// `Bash(*)`).
fn rule_has_content(rule: &str) -> bool {
    tool_perms::rule::parse_rule(rule)
        .is_ok_and(|parsed| parsed.content.as_deref().is_some_and(|c| c != "*"))
}

/// The deny or ask field rule of the context's permission settings that a Bash call with
/// `run_in_background: true` would match, read with `tool-perms`' own parsing and matching
/// ([`parse_rule`](tool_perms::rule::parse_rule), [`field_rule`](tool_perms::rule::field_rule),
/// [`FieldRule::matches`](tool_perms::rule::FieldRule::matches)); for [`background_rule`]
/// when a tool-wide ask rule hides the field rules from the engine's answer.
fn settings_background_rule(ctx: &ToolUseContext) -> Option<String> {
    let background = serde_json::json!({ "run_in_background": true });
    let permission = ctx.permission();
    let deny = permission.deny.iter().map(|r| ("deny", r));
    let ask = permission.ask.iter().map(|r| ("ask", r));
    deny.chain(ask).find_map(|(behaviour, sourced)| {
        let parsed = tool_perms::rule::parse_rule(&sourced.rule).ok()?;
        let field = tool_perms::rule::field_rule(&parsed.tool_name, parsed.content.as_deref()?)?;
        (parsed.tool_name == <Bash as TypedTool>::NAME
            && field.field == "run_in_background"
            && !field.primary
            && field.matches(&background).is_some())
        .then(|| format!("the {behaviour} rule {}", sourced.rule))
    })
}

/// Why a foreground command still running at its timeout may not go on in the background,
/// if it may not: background tasks are turned off ([`background_tasks_disabled`]; `Some`
/// of `None`), or a deny or ask rule of the session would match the call run in the
/// background ([`background_rule`]; `Some` of the rule's words): the command would go on
/// where that rule forbids it (nobody was asked). Such a command is killed at its timeout
/// instead.
async fn kept_from_background(ctx: &ToolUseContext) -> Option<Option<String>> {
    if background_tasks_disabled() {
        return Some(None);
    }
    background_rule(ctx).await.map(Some)
}

/// The prompt, with the timeouts in effect, and what `CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR`
/// and `CLAUDE_CODE_DISABLE_BACKGROUND_TASKS` change.
fn prompt() -> String {
    let cwd = if maintains_project_working_dir() {
        "Each command starts in the project directory: a `cd` lasts only for the command that makes it, and shell state does not persist either."
    } else {
        "The working directory persists between commands, but shell state does not."
    };
    let background = if background_tasks_disabled() {
        "a command still running then is killed (background tasks are turned off).\n\
- What a command leaves running (`&`, `nohup`) is stopped when it ends."
    } else {
        "a command still running then goes on in the background (read it with TaskOutput), except one that starts with `sleep` or runs `git`, which is killed.\n\
- Set run_in_background for long-running processes such as servers: what a command leaves running (`&`, `nohup`) is stopped when it ends."
    };
    format!(
        "Executes a given bash command and returns its output.\n\n\
{cwd} \
Commands run in a non-interactive bash: the user's shell profile and aliases are not loaded, and nothing can be typed in (give `git commit` its message with -m).\n\n\
- Always quote file paths that contain spaces.\n\
- Prefer the dedicated tools (Read, Glob, Grep, Edit, Write) over cat, find, grep, sed.\n\
- The timeout is in milliseconds (default {}, at most {}); {background}",
        default_timeout_ms(),
        max_timeout_ms()
    )
}

#[async_trait]
impl TypedTool for Bash {
    type Input = BashInput;
    type Output = BashOutput;
    const NAME: &'static str = "Bash";

    fn description(&self) -> Cow<'_, str> {
        "Runs a shell command".into()
    }
    fn prompt(&self) -> Cow<'_, str> {
        prompt().into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(max_result_chars())
    }
    fn user_facing_name(&self, input: &BashInput) -> String {
        format!(
            "Bash({})",
            input.command.chars().take(60).collect::<String>()
        )
    }
    fn is_read_only(&self, input: &BashInput) -> bool {
        (self.read_only)(&input.command)
    }
    fn is_concurrency_safe(&self, input: &BashInput) -> bool {
        // A `cd` reaches the next command through the context modifier, which the executor
        // takes only from calls that run alone.
        (self.read_only)(&input.command) && !tool_perms::bash::may_change_directory(&input.command)
    }
    fn is_destructive(&self, input: &BashInput) -> bool {
        !(self.read_only)(&input.command)
    }
    /// A command can reach the network (`curl`, `git push`), whatever it looks like.
    fn is_open_world(&self, _input: &BashInput) -> bool {
        true
    }
    fn is_search_or_read(&self, input: &BashInput) -> SearchOrRead {
        let first = input.command.split_whitespace().next().unwrap_or_default();
        SearchOrRead {
            is_search: matches!(first, "grep" | "rg" | "find" | "fd" | "ag"),
            is_read: matches!(first, "cat" | "head" | "tail" | "less" | "wc" | "nl"),
            is_list: matches!(first, "ls" | "tree" | "du"),
        }
    }
    fn permission_subject(&self, input: &BashInput) -> Option<PermissionSubject> {
        Some(PermissionSubject::Command(input.command.clone()))
    }

    async fn validate_input(
        &self,
        input: &BashInput,
        _ctx: &ToolUseContext,
    ) -> Result<(), tool_core::ValidationError> {
        // No process takes a NUL byte in its arguments: refused here, before any hook or
        // question, as a bad input (not as a command that ran and failed, which would cancel
        // the calls beside it).
        crate::fsutil::reject_null_bytes("command", Some(&input.command))?;
        // Claude Code takes the field out of the schema; the schema here is the type's, made
        // once, so the call is refused instead, before any hook or question: nothing runs.
        if input.run_in_background == Some(true) && background_tasks_disabled() {
            return Err(tool_core::ValidationError::new(NO_BACKGROUND_TASKS));
        }
        Ok(())
    }

    async fn call(
        &self,
        input: BashInput,
        ctx: ToolUseContext,
        progress: ProgressSender,
    ) -> Result<ToolResult<BashOutput>, ToolError> {
        // The executor takes no context change from a concurrency-safe call.
        let safe = TypedTool::is_concurrency_safe(self, &input);
        let timeout_ms = match input.timeout {
            Some(t) if t.is_finite() && t > 0.0 => {
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    clippy::cast_precision_loss,
                    reason = "clamped to 1..=max first; the max is far below 2^52"
                )]
                let ms = t.clamp(1.0, max_timeout_ms() as f64) as u64;
                ms
            }
            _ => default_timeout_ms(),
        };
        // The session's directory is gone (an earlier command removed it), or leads outside
        // the working directories by its real path (it was replaced by a link to elsewhere
        // since the session moved in): this command runs in the first working directory that
        // still exists (where the permission checks resolved its relative paths too), and the
        // session moves there, only inside its working directories: with the project itself
        // gone, the fallback is an ancestor, which must not become one.
        let session_ctx = ctx.clone();
        // The user's `CLAUDE_ENV_FILE` that cannot be sourced: the command runs without it,
        // and its result says so.
        let env_note = user_env_file().err();
        let moved = {
            let gone = !ctx.cwd().is_dir();
            let why = if gone {
                Some(CwdLost::Gone)
            } else {
                ctx.cwd_outside().map(CwdLost::LeadsOutside)
            };
            why.map(|why| {
                let to = ctx.effective_cwd().into_owned();
                let inside = within_working_directories(&ctx, &to);
                (ctx.cwd().to_path_buf(), why, to, inside)
            })
        };
        let ctx = match &moved {
            Some((_, _, to, _)) => ctx.with_cwd(to.clone()),
            None => ctx,
        };
        let mut result = if input.run_in_background == Some(true) {
            // Refused by `validate_input` already; here for a host that calls the tool
            // without it.
            if background_tasks_disabled() {
                return Err(ToolError::msg(NO_BACKGROUND_TASKS));
            }
            let task = crate::tasks::start_background(
                &ctx,
                &input.command,
                input.description.clone(),
                input.timeout,
            )?;
            Ok(ToolResult::new(BashOutput {
                stdout: format!(
                    "Command running in background with ID: {}. Output is being written to: {}",
                    task.id,
                    task.output_file.display()
                ),
                stderr: String::new(),
                interrupted: false,
                return_code_interpretation: None,
                raw_output_path: None,
                raw_output_cut: false,
                saved_notes: Vec::new(),
                no_output_expected: false,
                background_task_id: Some(task.id),
            }))
        } else {
            // A file the command reads and shows, as it is before the command runs.
            let shown_file = match tool_perms::bash::single_file_read(&input.command) {
                Some(read) => {
                    let ctx = ctx.clone();
                    tokio::task::spawn_blocking(move || ShownFile::before(&ctx, read))
                        .await
                        .ok()
                        .flatten()
                }
                None => None,
            };
            let run = run_command(
                &input.command,
                input.description.as_deref(),
                &ctx,
                Duration::from_millis(timeout_ms),
                &progress,
            )
            .await?;
            let result = finish(&input.command, run, &ctx);
            if let (Some(file), Ok(done)) = (shown_file, &result) {
                let shown_whole = done.data.raw_output_path.is_none()
                    && done.data.stdout.chars().count() + done.data.stderr.chars().count()
                        < inline_result_chars();
                let (ctx, shown) = (ctx.clone(), done.data.stdout.clone());
                let _ = tokio::task::spawn_blocking(move || file.record(&ctx, &shown, shown_whole))
                    .await;
            }
            result
        };
        match moved {
            Some((lost, why, to, inside)) => {
                if !inside {
                    // It ran where the session's working directories do not reach: a `cd`
                    // it made is judged against them, not against where it ran.
                    drop_move_outside(&mut result, &session_ctx);
                }
                note_lost_cwd(&mut result, &lost, &why, to, !safe && inside);
            }
            // This command removed the session's directory (`rmdir "$PWD"`) and went nowhere
            // else: the session moves now, through this call, whose context change the
            // executor takes. Left to the next command, which may be a read-only one, the
            // move would be dropped (and said again) at every call until one that is not.
            // (Not to a fallback outside the working directories: the session stays, and the
            // next command says where it runs.)
            None if !safe && !ctx.cwd().is_dir() && !changes_context(&result) => {
                let to = ctx.effective_cwd().into_owned();
                if within_working_directories(&ctx, &to) {
                    note_lost_cwd(&mut result, ctx.cwd(), &CwdLost::Gone, to, true);
                }
            }
            None => {}
        }
        if let Some(note) = env_note {
            push_note(&mut result, &note);
        }
        result
    }

    fn to_content(&self, output: &BashOutput) -> ToolResultContent {
        let mut parts = Vec::new();
        // First, where a preview of the result (and the executor's own cut, past 30,000
        // characters) still shows it.
        if !output.saved_notes.is_empty() {
            parts.extend(output.saved_notes.iter().cloned());
        } else if let Some(path) = &output.raw_output_path {
            parts.push(saved_line(path, output.raw_output_cut, "output"));
        }
        if !output.stdout.trim_end().is_empty() {
            parts.push(output.stdout.trim_end().to_owned());
        }
        if !output.stderr.trim_end().is_empty() {
            parts.push(output.stderr.trim_end().to_owned());
        }
        if let Some(interp) = &output.return_code_interpretation {
            parts.push(interp.clone());
        }
        ToolResultContent::Text(parts.join("\n"))
    }
}

/// Whether `result` moves the session (a `cd`, a reset to the project directory).
fn changes_context(result: &Result<ToolResult<BashOutput>, ToolError>) -> bool {
    match result {
        Ok(r) => r.context_modifier.is_some(),
        Err(error) => matches!(error, ToolError::WithContextChange { .. }),
    }
}

/// Why the session's directory cannot be where a command runs.
enum CwdLost {
    /// It no longer exists.
    Gone,
    /// It leads (its links followed) to this directory, outside the working directories.
    LeadsOutside(PathBuf),
}

/// Says in `result` that the session's directory `lost` cannot be used (`why`) and that the
/// command ran in `to`; when `moves`, that the session is reset there, and moves it unless
/// the command moved it elsewhere. Not otherwise: a concurrency-safe call's context change
/// is dropped by the executor, and a fallback outside the working directories (an ancestor
/// of a removed project) must not become the session's directory.
fn note_lost_cwd(
    result: &mut Result<ToolResult<BashOutput>, ToolError>,
    lost: &Path,
    why: &CwdLost,
    to: PathBuf,
    moves: bool,
) {
    let lost = lost.display();
    let note = match (why, moves) {
        (CwdLost::Gone, true) => format!(
            "Shell cwd was reset to {} ({lost} no longer exists)",
            to.display()
        ),
        (CwdLost::Gone, false) => format!(
            "Shell cwd {lost} no longer exists; this command ran in {}",
            to.display()
        ),
        (CwdLost::LeadsOutside(real), true) => format!(
            "Shell cwd was reset to {} ({lost} leads to {}, outside the working directories)",
            to.display(),
            real.display()
        ),
        (CwdLost::LeadsOutside(real), false) => format!(
            "Shell cwd {lost} leads to {}, outside the working directories; this command ran in {}",
            real.display(),
            to.display()
        ),
    };
    let push = |stderr: &mut String| {
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        stderr.push_str(&note);
    };
    match result {
        Ok(r) => {
            push(&mut r.data.stderr);
            if moves && r.context_modifier.is_none() {
                r.context_modifier = Some(tool_core::ContextModifier::cwd(to));
            }
        }
        Err(error) => {
            let (mut inner, change) =
                std::mem::replace(error, ToolError::Cancelled(None)).take_context_change();
            if let ToolError::Shell { stderr, .. } = &mut inner {
                push(stderr);
            }
            // The session moves to where this command ran, unless it moved on.
            let change = change.or_else(|| moves.then(|| tool_core::ContextModifier::cwd(to)));
            *error = match change {
                Some(change) => inner.with_context_change(change),
                None => inner,
            };
        }
    }
}

/// Adds `note` to the end of `result`'s error output (a failed command's too), keeping
/// any context change.
fn push_note(result: &mut Result<ToolResult<BashOutput>, ToolError>, note: &str) {
    let push = |stderr: &mut String| {
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        stderr.push_str(note);
    };
    match result {
        Ok(r) => push(&mut r.data.stderr),
        Err(error) => {
            let (mut inner, change) =
                std::mem::replace(error, ToolError::Cancelled(None)).take_context_change();
            if let ToolError::Shell { stderr, .. } = &mut inner {
                push(stderr);
            }
            *error = match change {
                Some(change) => inner.with_context_change(change),
                None => inner,
            };
        }
    }
}

/// Takes out of `result` a move of the session to a directory outside `ctx`'s working
/// directories, and says so.
fn drop_move_outside(result: &mut Result<ToolResult<BashOutput>, ToolError>, ctx: &ToolUseContext) {
    let outside = |m: &tool_core::ContextModifier| {
        m.new_cwd()
            .filter(|dir| !within_working_directories(ctx, dir))
            .map(Path::to_path_buf)
    };
    let note = |dir: &Path| {
        format!(
            "Shell cwd stays {}: {} is outside the working directories",
            ctx.cwd().display(),
            dir.display()
        )
    };
    let push = |stderr: &mut String, text: &str| {
        if !stderr.is_empty() && !stderr.ends_with('\n') {
            stderr.push('\n');
        }
        stderr.push_str(text);
    };
    match result {
        Ok(r) => {
            if let Some(dir) = r.context_modifier.as_ref().and_then(outside) {
                r.context_modifier = None;
                push(&mut r.data.stderr, &note(&dir));
            }
        }
        Err(error) => {
            let (mut inner, change) =
                std::mem::replace(error, ToolError::Cancelled(None)).take_context_change();
            let dropped = change.as_ref().and_then(outside);
            if let (Some(dir), ToolError::Shell { stderr, .. }) = (&dropped, &mut inner) {
                push(stderr, &note(dir));
            }
            *error = match change.filter(|_| dropped.is_none()) {
                Some(change) => inner.with_context_change(change),
                None => inner,
            };
        }
    }
}

/// Whether `dir` is inside one of the session's working directories (both as their real
/// paths: a working directory given through a link is the same place).
fn within_working_directories(ctx: &ToolUseContext, dir: &Path) -> bool {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    ctx.working_directories().iter().any(|w| {
        let w = std::fs::canonicalize(w).unwrap_or_else(|_| w.clone());
        dir.starts_with(&w)
    })
}

/// How a command ended.
#[derive(Debug)]
enum End {
    Exited(Option<i32>),
    /// Still running at its timeout (`after`); `held_by` names the rule that kept it from
    /// moving to the background, if one did.
    TimedOut {
        /// The timeout that passed.
        after: Duration,
        /// The rule's words ([`background_rule`]).
        held_by: Option<String>,
    },
    /// The timeout passed and the command went on as a background task.
    MovedToBackground {
        /// The task's id.
        id: String,
        /// Its output file.
        output_file: PathBuf,
        /// The timeout that passed.
        after: Duration,
    },
    Cancelled,
    OutputCap,
}

#[derive(Debug)]
struct Run {
    end: End,
    stdout: Captured,
    stderr: Captured,
    final_cwd: Option<PathBuf>,
    /// The directory the command ended in could not be learned: why (its scratch file could
    /// not be written).
    cwd_untracked: Option<String>,
    /// The command exited leaving processes in its group (`server &`), which were stopped.
    stopped_leftovers: bool,
    /// The exit code of a shell the tool ended (at its timeout, or past the output cap), as
    /// the shell would give it: 128 + the signal that ended it.
    killed_code: Option<i32>,
}

#[derive(Debug)]
struct Captured {
    text: String,
    spill: Option<PathBuf>,
    /// The spill file holds only the first [`SPILL_FILE_CAP`] bytes.
    cut: bool,
}

impl Captured {
    /// The line naming the spill file (first in a result: the executor's own cut may hide
    /// the rest), if there is one: the full output, or its first [`SPILL_FILE_CAP`] bytes.
    fn saved_line(&self, what: &str) -> Option<String> {
        Some(saved_line(self.spill.as_ref()?.display(), self.cut, what))
    }
}

/// The line that says where `what` (the output, the error output) is saved: all of it, or
/// (`cut`) its first [`SPILL_FILE_CAP`] bytes.
fn saved_line(path: impl std::fmt::Display, cut: bool, what: &str) -> String {
    if cut {
        format!(
            "[The first {} MiB of the {what} are saved in {path}]",
            SPILL_FILE_CAP / (1024 * 1024)
        )
    } else {
        format!("[The full {what} is saved in {path}]")
    }
}

/// The shell that runs commands: bash when there is one, else sh ([`find_shell`]: in `PATH`,
/// else at its usual path, so that a settings `env` whose `PATH` lacks `/bin` cannot keep
/// commands from starting). Found once.
///
/// [`find_shell`]: tool_core::process::find_shell
pub(crate) fn shell() -> &'static Path {
    static SHELL: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    SHELL.get_or_init(|| {
        tool_core::process::find_shell("bash", &["/bin/bash", "/usr/bin/bash"])
            .or_else(|| tool_core::process::find_shell("sh", &["/bin/sh", "/usr/bin/sh"]))
            .unwrap_or_else(|| PathBuf::from("/bin/sh"))
    })
}

/// The shell's name, its `$0`: bash's error lines start with it (`bash: line 1: ...`).
pub(crate) fn shell_name() -> &'static str {
    shell().file_name().and_then(|n| n.to_str()).unwrap_or("sh")
}

/// `shell -c script`, as every command runs, in the foreground or the background: stdin
/// empty, out of the terminal's reach (a password prompt fails at once instead of stopping
/// the command until its timeout), its own process group to kill, and killed when dropped.
/// `GIT_EDITOR` is `true`: there is nobody to type in an editor, so `git commit` without
/// `-m` stops at once ("Aborting commit due to empty commit message") and `git merge` or
/// `git rebase --continue` keep the message git wrote, where an editor would wait for the
/// timeout. (The session's environment file may still set another.) `mark` (a
/// [`procs::new_mark`](crate::procs::new_mark)) goes in its environment as
/// [`procs::GROUP_MARK`](crate::procs::GROUP_MARK), where every process it starts inherits
/// it: how the groups job control makes (`set -m; cmd &`) are found once the shell is gone.
/// With `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` on, the command inherits none of this process's
/// credentials ([`scrub_credentials`](tool_core::process::scrub_credentials)).
pub(crate) fn shell_command(script: &str, mark: &str) -> Command {
    let mut cmd = Command::new(shell());
    tool_core::process::scrub_credentials(cmd.as_std_mut());
    cmd.arg("-c")
        .arg(script)
        .env("GIT_EDITOR", "true")
        .env(crate::procs::GROUP_MARK, mark)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    tool_core::process::detach_from_terminal(cmd.as_std_mut());
    cmd
}

static RUN_ID: AtomicU64 = AtomicU64::new(0);

fn scratch_name(what: &str) -> String {
    let n = RUN_ID.fetch_add(1, Ordering::Relaxed);
    format!("toolwright-bash-{}-{n}-{what}", std::process::id())
}

/// Writes a failed command's output (stderr, then stdout, as the error shows them) to a new file in the session's
/// results directory (else the [private temp directory](private_temp_dir)), for the model
/// to Read: the error shows only its head and tail. `None` when it cannot be saved (the
/// error is shown cut all the same).
fn save_failed_output(ctx: &ToolUseContext, stderr: &str, stdout: &str) -> Option<PathBuf> {
    use std::io::Write as _;
    let dir = match ctx.results_dir() {
        Some(dir) => {
            tool_core::create_private_dir(dir).ok()?;
            dir.to_path_buf()
        }
        None => private_temp_dir().ok()?,
    };
    let path = create_scratch_file(&dir, "output.txt").ok()?;
    let written = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .and_then(|mut file| {
            file.write_all(stderr.as_bytes())?;
            if !stderr.is_empty() && !stdout.is_empty() && !stderr.ends_with('\n') {
                file.write_all(b"\n")?;
            }
            file.write_all(stdout.as_bytes())
        });
    match written {
        Ok(()) => Some(path),
        Err(_) => {
            let _ = std::fs::remove_file(&path);
            None
        }
    }
}

/// A scratch file, removed when dropped (whether the command ran, failed to start or was
/// cancelled).
struct ScratchFile(PathBuf);

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A new empty file named by [`scratch_name`] in `dir`, created exclusively (never an
/// existing file or a link), readable by the owner only; another name is tried when one is
/// taken.
fn create_scratch_file(dir: &Path, what: &str) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::OpenOptionsExt as _;
    loop {
        let path = dir.join(scratch_name(what));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(_) => return Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
}

/// Where a stream spills: the session's results directory when there is one (the model may
/// Read it later), else `fallback` (the [private temp directory](private_temp_dir)).
fn spill_path(ctx: &ToolUseContext, fallback: &Path, what: &str) -> PathBuf {
    ctx.results_dir()
        .unwrap_or(fallback)
        .join(scratch_name(what))
}

/// `command` after the sourcing of the environment files, foreground and background
/// commands alike: first the user's own `CLAUDE_ENV_FILE` (the variable in this process's
/// environment, where the settings' `env` puts it too: [`user_env_file`]), then the session's
/// (each SessionStart hook's own `CLAUDE_ENV_FILE` in the session's
/// [`session_env_dir`](tool_core::ToolOptions::session_env_dir), in the hooks' configuration
/// order: [`tool_core::hook_env_files`]), so what the hooks exported wins, and a later hook's
/// over an earlier one's, as in Claude Code; each only when it has anything. They are looked
/// for before every command: a hook may write its file after the first one ran. `CDPATH` is
/// then unset: with it, `cd name` may go somewhere other than `./name`, where the permission
/// check looked.
pub(crate) fn with_session_env(ctx: &ToolUseContext, command: &str) -> String {
    let session = ctx
        .options()
        .session_env_dir
        .as_deref()
        .map(tool_core::hook_env_files)
        .unwrap_or_default();
    let user = user_env_file().ok().flatten();
    let mut files: Vec<&Path> = user.as_deref().into_iter().collect();
    for file in &session {
        if std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.len() > 0)
            && !files.contains(&file.as_path())
        {
            files.push(file);
        }
    }
    let sourced: String = files
        .iter()
        .map(|file| format!(". {}; ", shell_quote(&file.to_string_lossy())))
        .collect();
    // One line: bash numbers the lines of what follows from here (`bash: line 1: ...` for
    // the command's first line, as under Claude Code).
    format!("{sourced}unset CDPATH; {command}")
}

/// The file the user named in `CLAUDE_ENV_FILE` (this process's environment, which the
/// settings' `env` sets too), made absolute: `Ok(None)` when the variable is unset or empty,
/// or the file is empty; an error saying why when it cannot be sourced (missing, not a
/// regular file, unreadable): the command then runs without it, and its result says so.
pub(crate) fn user_env_file() -> Result<Option<PathBuf>, String> {
    let Some(named) = std::env::var_os("CLAUDE_ENV_FILE").filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let path = std::path::absolute(&named).unwrap_or_else(|_| PathBuf::from(&named));
    let not_sourced = |why: &dyn std::fmt::Display| {
        format!("CLAUDE_ENV_FILE {} was not sourced: {why}", path.display())
    };
    let file = std::fs::File::open(&path).map_err(|e| not_sourced(&e))?;
    let meta = file.metadata().map_err(|e| not_sourced(&e))?;
    if !meta.is_file() {
        return Err(not_sourced(&"it is not a regular file"));
    }
    Ok((meta.len() > 0).then_some(path))
}

/// Where shell scratch files and background task output go when the session has no results
/// directory: this user's own private directory in the temp directory
/// ([`tool_core::private_temp_dir`]).
pub(crate) fn private_temp_dir() -> Result<PathBuf, ToolError> {
    tool_core::private_temp_dir().map_err(|e| ToolError::msg(e.to_string()))
}

/// `s` as one single-quoted shell word.
pub(crate) fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Runs `command` in the foreground; `description` (the model's) names the background task it
/// becomes if it moves to the background at its timeout.
async fn run_command(
    command: &str,
    description: Option<&str>,
    ctx: &ToolUseContext,
    timeout: Duration,
    progress: &ProgressSender,
) -> Result<Run, ToolError> {
    // In the session's own (private) directory when it has one, else this user's private
    // temp directory: never the shared temp directory, where another user could plant a
    // link under a predictable name, which `>|` follows.
    let scratch_dir = match ctx
        .results_dir()
        .and_then(Path::parent)
        .filter(|dir| dir.is_dir())
    {
        Some(dir) => dir.to_path_buf(),
        None => private_temp_dir().map_err(|e| {
            ToolError::msg(format!(
                "Could not start the command: no directory for its scratch file: {}",
                e.to_model_text()
            ))
        })?,
    };
    // Made here, exclusively and owner-only, so the shell writes to this file (and never
    // through a link, should one appear anyway). Nothing has run yet: a failure here says the
    // command never started, and what could not be made where.
    let cwd_file = ScratchFile(create_scratch_file(&scratch_dir, "cwd").map_err(|e| {
        ToolError::msg(format!(
            "Could not start the command: cannot create its scratch file in {}: {e}",
            scratch_dir.display()
        ))
    })?);
    // Its room reserved now, while the disk may have some: the shell writes the directory
    // over these bytes, so a command that fills the disk does not lose its `cd`
    // ([`read_cwd_file`]). When even this fails, the command runs all the same.
    let reserve_error = reserve_cwd_file(&cwd_file.0).err();
    // The command (after the session's environment), then its status, then the directory
    // it ended in, written over the reserved bytes (`1<>`: no truncation), or a line break
    // alone when `pwd -P` fails (the directory was removed), each ended by a `.` written
    // only once all before it was: a file without it was never written in full (a full
    // disk, a write cut short, or the shell ended by the command itself). The command is
    // an argument, run through `eval` as Claude Code runs it: whatever it leaves open (a
    // here-document without its end line, a trailing `\`) ends where it ends, so the
    // epilogue is never read as part of it.
    // The command is taken from `$1` before the environment file is sourced: a `shift` or
    // `set --` in that file must not change what runs.
    let script = format!(
        "__toolwright_command=$1; set --; {}",
        with_session_env(
            ctx,
            &format!(
                "eval \"$__toolwright_command\"\n__toolwright_status=$?\nif pwd -P >/dev/null 2>&1; then {{ pwd -P && printf .; }} 2>/dev/null 1<> {0}; else printf '\\n.' 2>/dev/null 1<> {0}; fi\nexit $__toolwright_status",
                shell_quote(&cwd_file.0.to_string_lossy())
            ),
        )
    );
    let mark = crate::procs::new_mark();
    let mut cmd = shell_command(&script, &mark);
    cmd.arg(shell_name())
        .arg(command)
        .current_dir(ctx.cwd())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| ToolError::msg(format!("Could not start {}: {e}", shell().display())))?;
    let group = child.id().and_then(|id| i32::try_from(id).ok());
    // Declared after `child`, so dropped before it. Until the leader is reaped its id cannot
    // be reused; after (a drop during the drain below) the group still has the members that
    // hold it, and it is disarmed once the group is gone.
    let mut guard = GroupGuard {
        group,
        mark: mark.clone(),
        started,
    };
    let mut stdout = Capture::new(spill_path(ctx, &scratch_dir, "stdout.txt"));
    let mut stderr = Capture::new(spill_path(ctx, &scratch_dir, "stderr.txt"));
    let (Some(mut out_pipe), Some(mut err_pipe)) = (child.stdout.take(), child.stderr.take())
    else {
        kill_group(group, true);
        return Err(ToolError::msg("Could not capture the command's output"));
    };
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let cancelled = ctx.cancellation().clone();
    let mut out_open = true;
    let mut err_open = true;
    let mut exit: Option<Option<i32>> = None;
    let mut stopped_leftovers = false;
    // Progress: the output so far, at most every `PROGRESS_EVERY`, and at the latest that
    // long after output came (a quiet stretch after it does not hold it back); only when
    // there is more than was last reported (an MCP client's progress must increase).
    let progress_due = tokio::time::sleep(PROGRESS_EVERY);
    tokio::pin!(progress_due);
    let mut reported = 0u64;
    let mut out_buf = vec![0u8; 64 * 1024];
    let mut err_buf = vec![0u8; 64 * 1024];
    let mut arrivals = Arrivals::default();
    let mut end = loop {
        if exit.is_some() && !out_open && !err_open {
            break End::Exited(exit.flatten());
        }
        let unreported = stdout.total + stderr.total > reported;
        tokio::select! {
            n = read_some(&mut out_pipe, &mut out_buf), if out_open => match n {
                Some(n) => {
                    arrivals.push(Stream::Out, n);
                    stdout.push(&out_buf[..n]).await;
                }
                None => out_open = false,
            },
            n = read_some(&mut err_pipe, &mut err_buf), if err_open => match n {
                Some(n) => {
                    arrivals.push(Stream::Err, n);
                    stderr.push(&err_buf[..n]).await;
                }
                None => err_open = false,
            },
            status = child.wait(), if exit.is_none() => {
                exit = Some(status.ok().and_then(crate::procs::shell_exit_code));
                // Whatever the command left in its group still holding the pipes: give it a
                // moment to flush, then end it.
                let drain = tokio::time::sleep(Duration::from_millis(200));
                tokio::pin!(drain);
                // Until both pipes reach end-of-file (the usual case, at once) or the grace
                // period ends (something in the group still holds them).
                while out_open || err_open {
                    tokio::select! {
                        n = read_some(&mut out_pipe, &mut out_buf), if out_open => match n {
                            Some(n) => stdout.push(&out_buf[..n]).await,
                            None => out_open = false,
                        },
                        n = read_some(&mut err_pipe, &mut err_buf), if err_open => match n {
                            Some(n) => stderr.push(&err_buf[..n]).await,
                            None => err_open = false,
                        },
                        () = &mut drain => break,
                    }
                }
                // Anything it left, in its group or in groups job control made: ended, and
                // the result says so.
                if let Some(pgid) = group {
                    stopped_leftovers = crate::procs::stop_left_running(
                        pgid,
                        &mark,
                        started.elapsed(),
                        KILL_GRACE,
                    )
                    .await;
                }
                out_open = false;
                err_open = false;
            },
            () = &mut deadline => break End::TimedOut { after: timeout, held_by: None },
            () = cancelled.cancelled() => break End::Cancelled,
            () = &mut progress_due, if unreported => {}
        }
        let total = stdout.total + stderr.total;
        if total > KILL_CAP {
            break End::OutputCap;
        }
        if total > reported && progress_due.is_elapsed() {
            reported = total;
            progress_due
                .as_mut()
                .reset(tokio::time::Instant::now() + PROGRESS_EVERY);
            progress
                .send(serde_json::json!({"output": stdout.tail_text(2000), "totalBytes": total}));
        }
    };
    // A command still going at its timeout goes on in the background, as in Claude Code
    // (not `sleep`, `git`, or what the parser cannot follow): its output so far starts the
    // task's file, and the rest is added as it comes. Not when background tasks are turned
    // off, nor when a rule forbids this call in the background
    // (`Bash(run_in_background:true)`): that one is killed, as a `sleep` is, and the
    // timeout text names the rule.
    let mut moves =
        matches!(end, End::TimedOut { .. }) && group.is_some() && moves_to_background(command);
    if moves && let Some(why) = kept_from_background(ctx).await {
        moves = false;
        if let End::TimedOut { held_by, .. } = &mut end {
            *held_by = why;
        }
    }
    if moves && let Some(pgid) = group {
        // The bytes as they were read, not text: a character the timeout split is finished
        // by the rest the task's copy appends.
        let whole = !stdout.spilled() && !stderr.spilled();
        let (out, err) = (
            stdout.finish_bytes(inline_result_chars()).await.0,
            stderr.finish_bytes(inline_result_chars()).await.0,
        );
        let so_far = arrivals.interleave(&out, &err, whole);
        let dir = match ctx.results_dir() {
            Some(dir) => dir.to_path_buf(),
            None => scratch_dir.clone(),
        };
        let task = crate::tasks::task_registry(ctx).adopt(
            command,
            description.map(str::to_owned),
            child,
            (out_pipe, err_pipe),
            (pgid, mark, started),
            &so_far,
            &dir,
            Duration::from_millis(crate::tasks::BACKGROUND_DEFAULT_MS),
            cwd_file,
        )?;
        // The task owns the group now.
        guard.group = None;
        let none = || Captured {
            text: String::new(),
            spill: None,
            cut: false,
        };
        return Ok(Run {
            end: End::MovedToBackground {
                id: task.id,
                output_file: task.output_file,
                after: timeout,
            },
            stdout: none(),
            stderr: none(),
            final_cwd: None,
            cwd_untracked: None,
            stopped_leftovers: false,
            killed_code: None,
        });
    }
    let mut killed_code = None;
    if !matches!(end, End::Exited(_)) {
        terminate(&mut child, group, &mark, started).await;
        // Reaped by now: the status it ended with (SIGTERM's, or SIGKILL's after the grace).
        killed_code = child
            .try_wait()
            .ok()
            .flatten()
            .and_then(crate::procs::shell_exit_code);
    }
    // The group is gone (ended above); nothing for the guard to do.
    guard.group = None;
    let report = read_cwd_file(&cwd_file.0).await;
    // Nothing written by a shell that ran to its end: the write failed (a full disk: a
    // second write says why), else the command ended the shell itself (`exit`), which is no
    // failure to report, unless the disk was already too full to reserve the file's room.
    let cwd_untracked = match (&report, &end) {
        (CwdReport::Unwritten, End::Exited(_)) => probe_write(&cwd_file.0)
            .await
            .err()
            .or(reserve_error)
            .map(|e| e.to_string()),
        _ => None,
    };
    drop(cwd_file);
    let printed = match report {
        CwdReport::Printed(path) => Some(path),
        CwdReport::Removed | CwdReport::Unwritten => None,
    };
    // What was printed is the command's to decide (it may redefine `pwd`): only where it
    // really leads counts (`proj/../elsewhere` is not inside `proj`). A path that is not
    // absolute, leads nowhere or to something else than a directory (a file), is no
    // directory to stay in.
    let final_cwd = match printed.filter(|p| p.is_absolute()) {
        Some(p) => match tokio::fs::canonicalize(&p).await {
            Ok(dir) if tokio::fs::metadata(&dir).await.is_ok_and(|m| m.is_dir()) => Some(dir),
            _ => None,
        },
        None => None,
    };
    // What a spilled stream shows shares the inline limit with the other stream: what the
    // other holds whole comes off it, and two spilled streams split the rest.
    let spilled = usize::from(stdout.spilled()) + usize::from(stderr.spilled());
    let budget =
        inline_result_chars().saturating_sub(stdout.held() + stderr.held()) / spilled.max(1);
    Ok(Run {
        end,
        stdout: stdout.finish(budget).await,
        stderr: stderr.finish(budget).await,
        final_cwd,
        cwd_untracked,
        stopped_leftovers,
        killed_code,
    })
}

/// Bytes reserved in the scratch file that learns where a command ended, before it runs:
/// more than `pwd -P` prints (a path is at most `PATH_MAX`, 4096 bytes with its NUL).
const CWD_FILE_RESERVE: usize = 4096;

/// Fills the new (empty) scratch file `path` with [`CWD_FILE_RESERVE`] NUL bytes: the room
/// the shell's `pwd -P` is later written over, so that the write needs no new space should
/// the command fill the disk.
fn reserve_cwd_file(path: &Path) -> std::io::Result<()> {
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)?
        .write_all(&[0; CWD_FILE_RESERVE])
}

/// What the scratch file says of the directory a command ended in.
#[derive(Debug)]
enum CwdReport {
    /// `pwd -P` printed this.
    Printed(PathBuf),
    /// `pwd -P` failed (the directory was removed): the line break alone was written.
    Removed,
    /// Nothing was written: the write failed (a full disk), or the shell never got there.
    Unwritten,
}

/// Reads the scratch file the script wrote the directory to: what was written ends at the
/// first NUL byte (the room reserved beyond it), or at the end of the file, and counts only
/// with the `.` the script writes after it.
async fn read_cwd_file(path: &Path) -> CwdReport {
    let Ok(bytes) = tokio::fs::read(path).await else {
        return CwdReport::Unwritten;
    };
    let written = bytes.split(|&b| b == 0).next().unwrap_or_default();
    // Written in full only with its closing `.`: a path cut short is no directory to go to.
    let Some(written) = written.strip_suffix(b".") else {
        return CwdReport::Unwritten;
    };
    // Only `pwd`'s own line break: a directory's name may end in spaces.
    let line = written.strip_suffix(b"\n").unwrap_or(written);
    if line.is_empty() {
        return CwdReport::Removed;
    }
    use std::os::unix::ffi::OsStrExt as _;
    CwdReport::Printed(PathBuf::from(std::ffi::OsStr::from_bytes(line)))
}

/// Whether one more byte can be written at the end of `path` now (a full disk says why
/// not: the file ends at its reserved room, so the byte needs new space); the file is
/// removed right after, so the byte does no harm.
async fn probe_write(path: &Path) -> std::io::Result<()> {
    let mut file = tokio::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .await?;
    file.write_all(&[0]).await?;
    // A write handed to the file reports its failure here.
    file.flush().await
}

/// Which of a command's two output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stream {
    Out,
    Err,
}

/// Runs of reads kept in [`Arrivals`] at most: past them, what follows goes by stream.
const MAX_ARRIVAL_RUNS: usize = 4096;

/// The order in which a command's output and error output were read, as runs of bytes from
/// one stream, for a command that moves to the background at its timeout: its task's file
/// starts with what it wrote so far in that order, as the task's copy goes on, not all of
/// its output before all of its errors. (The two streams come through two pipes: what the
/// command wrote to both between two reads has no known order, and the reads give it one.)
#[derive(Debug, Default)]
struct Arrivals {
    runs: Vec<(Stream, usize)>,
    /// Reads past [`MAX_ARRIVAL_RUNS`] runs were not recorded.
    full: bool,
}

impl Arrivals {
    /// Records a read of `n` bytes from `stream`.
    fn push(&mut self, stream: Stream, n: usize) {
        if self.full {
            return;
        }
        if let Some((last, len)) = self.runs.last_mut()
            && *last == stream
        {
            *len += n;
        } else if self.runs.len() < MAX_ARRIVAL_RUNS {
            self.runs.push((stream, n));
        } else {
            self.full = true;
        }
    }

    /// `out` and `err`, everything each stream captured, in the order they were read when
    /// `whole` (neither spilled: the runs count the bytes they hold); else, or past the
    /// runs recorded, the output and then the error output. The last bytes of a stream that
    /// begin a character they do not finish go last, where the task's copy appends the rest
    /// of the character.
    fn interleave(&self, out: &[u8], err: &[u8], whole: bool) -> Vec<u8> {
        let out_end = out.len() - crate::fsutil::incomplete_utf8_tail(out);
        let err_end = err.len() - crate::fsutil::incomplete_utf8_tail(err);
        let (mut at_out, mut at_err) = (0, 0);
        let mut bytes = Vec::with_capacity(out.len() + err.len());
        let runs: &[(Stream, usize)] = if whole { &self.runs } else { &[] };
        for &(stream, n) in runs {
            let (from, at, end) = match stream {
                Stream::Out => (out, &mut at_out, out_end),
                Stream::Err => (err, &mut at_err, err_end),
            };
            let next = (*at + n).min(end);
            bytes.extend_from_slice(&from[*at..next]);
            *at = next;
        }
        bytes.extend_from_slice(&out[at_out..out_end]);
        bytes.extend_from_slice(&err[at_err..err_end]);
        bytes.extend_from_slice(&err[err_end..]);
        bytes.extend_from_slice(&out[out_end..]);
        bytes
    }
}

async fn read_some(pipe: &mut (impl AsyncRead + Unpin), buf: &mut [u8]) -> Option<usize> {
    match pipe.read(buf).await {
        Ok(0) | Err(_) => None,
        Ok(n) => Some(n),
    }
}

/// Whether a foreground command that reached its timeout goes on in the background (as
/// Claude Code decides): not one that starts with `sleep` (waiting is all it does), not
/// one that runs `git` (it may hold the repository's lock), and not one the parser cannot
/// follow in full.
fn moves_to_background(command: &str) -> bool {
    let analysis = tool_perms::bash::parse::analyze(command);
    // What runs, behind wrappers: `timeout 900 git fetch` runs git.
    let mut names = analysis
        .commands
        .iter()
        .filter_map(tool_perms::bash::commands::effective_name);
    analysis.is_parsed()
        && names
            .next()
            .is_some_and(|first| first != "sleep" && first != "git")
        && names.all(|name| name != "git")
}

/// Kills the command's whole process group when the call is abandoned midway (its future
/// dropped: a discarded stream, a server shutting down), with the groups job control made
/// (found by the command's `mark`: [`kill_command`](crate::procs::kill_command)), so nothing
/// it started lives on. `kill_on_drop` alone would end only the shell.
struct GroupGuard {
    group: Option<i32>,
    mark: String,
    started: Instant,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.group {
            crate::procs::kill_command(pgid, &self.mark, self.started.elapsed());
        }
    }
}

fn kill_group(group: Option<i32>, hard: bool) {
    if let Some(pgid) = group {
        crate::procs::kill_group(pgid, hard);
    }
}

/// SIGTERM to the group, SIGKILL after [`KILL_GRACE`] unless the whole group is gone by then
/// (not only the shell leading it), and reap the child; the groups job control made (found by
/// the command's `mark`) go the same way
/// ([`terminate_command`](crate::procs::terminate_command)).
async fn terminate(
    child: &mut tokio::process::Child,
    group: Option<i32>,
    mark: &str,
    started: Instant,
) {
    match group {
        Some(pgid) => {
            crate::procs::terminate_command(child, pgid, Some((mark, started)), KILL_GRACE).await
        }
        // No id: the child was already reaped.
        None => {
            let _ = child.wait().await;
        }
    }
}

/// Bounded capture of one stream. See the module docs.
struct Capture {
    memory: Vec<u8>,
    tail: Vec<u8>,
    total: u64,
    spill_path: PathBuf,
    spill: Option<tokio::fs::File>,
    spilled_bytes: u64,
    spill_error: Option<String>,
}

impl Capture {
    fn new(spill_path: PathBuf) -> Self {
        Self {
            memory: Vec::new(),
            tail: Vec::new(),
            total: 0,
            spill_path,
            spill: None,
            spilled_bytes: 0,
            spill_error: None,
        }
    }

    fn spilled(&self) -> bool {
        self.spill.is_some() || self.spill_error.is_some()
    }

    /// The bytes shown whole (none once spilled: a head and tail are shown instead).
    fn held(&self) -> usize {
        if self.spilled() { 0 } else { self.memory.len() }
    }

    async fn open_spill(&self) -> std::io::Result<tokio::fs::File> {
        tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&self.spill_path)
            .await
    }

    async fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if !self.spilled() && self.memory.len() + bytes.len() <= MEMORY_CAP {
            self.memory.extend_from_slice(bytes);
            return;
        }
        if !self.spilled() {
            // Owner-only, inside its parent only: never a removed session's directory again
            // (`create_private_dir`).
            if let Some(dir) = self.spill_path.parent() {
                let dir = dir.to_path_buf();
                let _ =
                    tokio::task::spawn_blocking(move || tool_core::create_private_dir(&dir)).await;
            }
            // Exclusively and owner-only: never through a link planted under the name. A name
            // already taken (a file an earlier process of the same pid left) gives way to the
            // next one.
            let mut opened = self.open_spill().await;
            for _ in 0..16 {
                if !matches!(&opened, Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists) {
                    break;
                }
                let suffix = self
                    .spill_path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.rsplit_once('-'))
                    .map_or("output.txt", |(_, s)| s)
                    .to_owned();
                self.spill_path = self.spill_path.with_file_name(scratch_name(&suffix));
                opened = self.open_spill().await;
            }
            match opened {
                Ok(mut file) => {
                    self.spilled_bytes = self.memory.len() as u64;
                    match file.write_all(&self.memory).await {
                        Ok(()) => self.spill = Some(file),
                        Err(e) => self.spill_failed(file, &e).await,
                    }
                }
                Err(e) => self.spill_error = Some(e.to_string()),
            }
            // Keep the head; the tail restarts from the last bytes held so far.
            self.tail = self.memory[self.memory.len().saturating_sub(KEEP_HEAD_TAIL)..].to_vec();
            self.memory.truncate(KEEP_HEAD_TAIL);
        }
        if let Some(file) = &mut self.spill
            && self.spilled_bytes < SPILL_FILE_CAP
        {
            let room = usize::try_from(SPILL_FILE_CAP - self.spilled_bytes).unwrap_or(usize::MAX);
            let part = &bytes[..bytes.len().min(room)];
            self.spilled_bytes += part.len() as u64;
            if let Err(e) = file.write_all(part).await
                && let Some(file) = self.spill.take()
            {
                self.spill_failed(file, &e).await;
            }
        }
        self.tail.extend_from_slice(bytes);
        if self.tail.len() > 2 * KEEP_HEAD_TAIL {
            self.tail.drain(..self.tail.len() - KEEP_HEAD_TAIL);
        }
    }

    /// The spill file could not be written (`e`: a full disk): it is closed and removed, as
    /// it holds only part of the output and is named nowhere; what it would have held is
    /// counted, and the result says it could not be saved, and why.
    async fn spill_failed(&mut self, file: tokio::fs::File, e: &std::io::Error) {
        drop(file);
        self.spill_error = Some(e.to_string());
        let _ = tokio::fs::remove_file(&self.spill_path).await;
    }

    fn tail_text(&self, max: usize) -> String {
        let src = if self.spilled() {
            &self.tail
        } else {
            &self.memory
        };
        let start = src.len().saturating_sub(max);
        let from = &src[start..];
        let from = if start > 0 {
            &from[crate::fsutil::partial_utf8_head(from)..]
        } else {
            from
        };
        String::from_utf8_lossy(from).into_owned()
    }

    /// The captured output as text; `budget`: the characters a spilled output's head, tail
    /// and note may take together (its share of the inline limit).
    async fn finish(self, budget: usize) -> Captured {
        let (bytes, spill, cut) = self.finish_bytes(budget).await;
        Captured {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            spill,
            cut,
        }
    }

    /// What [`finish`](Self::finish) shows, as the bytes read (the text converts them), with
    /// the spill file and whether it was cut. A character the head and tail split is left
    /// out; one the last read split (the command goes on) is kept as it came.
    async fn finish_bytes(mut self, budget: usize) -> (Vec<u8>, Option<PathBuf>, bool) {
        if !self.spilled() {
            return (self.memory, None, false);
        }
        if let Some(mut file) = self.spill.take() {
            // A write handed to the file earlier may fail only now (a full disk).
            if let Err(e) = file.flush().await {
                self.spill_failed(file, &e).await;
            }
        }
        // What is shown stays under the inline limit (a quarter of the budget each for the
        // head and the tail, leaving room for the notes), so that the result is not saved to
        // a file a second time: the saved file named in the note is the whole output.
        let shown = KEEP_HEAD_TAIL.min(budget / 4);
        let tail_start = self.tail.len().saturating_sub(shown);
        // The head and tail were cut at byte counts: a character they split is left out
        // (it is in the saved file), not shown as �.
        let head = &self.memory[..self.memory.len().min(shown)];
        let head = &head[..head.len() - crate::fsutil::incomplete_utf8_tail(head)];
        let tail = &self.tail[tail_start..];
        let tail = &tail[crate::fsutil::partial_utf8_head(tail)..];
        let shown_bytes = (head.len() + tail.len()) as u64;
        let omitted = self.total.saturating_sub(shown_bytes);
        let note = match &self.spill_error {
            Some(e) => format!("[{omitted} bytes of output omitted; they could not be saved: {e}]"),
            None if self.total > SPILL_FILE_CAP => format!(
                "[{omitted} bytes of output omitted; the first {} MiB are saved in {}]",
                SPILL_FILE_CAP / (1024 * 1024),
                self.spill_path.display()
            ),
            None => format!(
                "[{omitted} bytes of output omitted; the full output is saved in {}]",
                self.spill_path.display()
            ),
        };
        let spill = self.spill_error.is_none().then(|| self.spill_path.clone());
        let bytes = [head, format!("\n\n... {note} ...\n\n").as_bytes(), tail].concat();
        (bytes, spill, self.total > SPILL_FILE_CAP)
    }
}

/// Whether exit code 1 of `command` means "no match / different", not failure: decided by the
/// command that sets the exit status (the last of a list or pipeline), as the shell parses
/// it (`grep -E 'a|b' f 2>&1` is grep's).
pub fn exit_one_is_an_answer(command: &str) -> Option<&'static str> {
    let words = tool_perms::bash::parse::exit_status_command(command)?;
    let value = |i: usize| words.get(i).and_then(|w| w.value.as_deref());
    let program = value(0).map(tool_perms::bash::parse::basename);
    match (program, value(1)) {
        (Some("grep" | "rg" | "egrep" | "fgrep"), _) => Some("No matches found"),
        (Some("find"), _) => Some("Some directories were inaccessible"),
        (Some("diff"), _) => Some("Files differ"),
        (Some("test" | "["), _) => Some("Condition is false"),
        (Some("git"), Some("diff")) => Some("Files differ"),
        (Some("git"), Some("grep")) => Some("No matches found"),
        _ => None,
    }
}

fn finish(
    command: &str,
    run: Run,
    ctx: &ToolUseContext,
) -> Result<ToolResult<BashOutput>, ToolError> {
    let Run {
        end,
        stdout,
        stderr,
        final_cwd,
        cwd_untracked,
        stopped_leftovers,
        killed_code,
    } = run;
    // A command the tool ended has the code its shell ended with, a number as for any
    // other (hook scripts read `^Exit code (\d+)`); 143, SIGTERM's (the signal sent first),
    // when the shell left otherwise (a trap that exits 0).
    let killed_code = Some(killed_code.filter(|&c| c != 0).unwrap_or(128 + 15));
    let spilled = if stdout.spill.is_some() {
        &stdout
    } else {
        &stderr
    };
    let raw_output_path = spilled.spill.as_ref().map(|p| p.display().to_string());
    let raw_output_cut = spilled.cut;
    // Where each spilled stream is, for a failure's error (which keeps only head and tail).
    let saved_lines: Vec<String> = [
        stdout.saved_line("output"),
        stderr.saved_line("error output"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let mut stderr_text = stderr.text;
    let mut note = |text: &str| {
        if !stderr_text.is_empty() && !stderr_text.ends_with('\n') {
            stderr_text.push('\n');
        }
        stderr_text.push_str(text);
    };
    if stopped_leftovers {
        note(if background_tasks_disabled() {
            LEFTOVERS_STOPPED_NO_BACKGROUND
        } else {
            LEFTOVERS_STOPPED
        });
    }
    // The working directory: kept while inside the working directories, else reset to the
    // project directory (Claude Code's original cwd; the worktree in a worktree session),
    // wherever the session was before. With `CLAUDE_BASH_MAINTAIN_PROJECT_WORKING_DIR`, back
    // to the project directory after every command, without a note (as in Claude Code);
    // not to one that no longer exists (the next command says where it runs).
    let maintain = maintains_project_working_dir();
    let mut new_cwd = None;
    if maintain {
        let project = original_cwd(ctx);
        new_cwd = (project != ctx.cwd() && project.is_dir()).then_some(project);
    } else if let Some(dir) = final_cwd.filter(|d| d.as_path() != ctx.cwd()) {
        if within_working_directories(ctx, &dir) {
            new_cwd = Some(dir);
        } else {
            let project = original_cwd(ctx);
            note(&format!("Shell cwd was reset to {}", project.display()));
            new_cwd = (project != ctx.cwd()).then_some(project);
        }
    }
    // Where the command ended does not matter when every command starts in the project.
    if let Some(why) = cwd_untracked.as_ref().filter(|_| !maintain) {
        note(&format!(
            "The working directory could not be tracked (its scratch file could not be \
             written: {why}); the next command runs in {}.",
            ctx.cwd().display()
        ));
    }
    let (code, interrupted) = match end {
        End::Exited(Some(0)) => (Some(0), false),
        End::Exited(code) => (code, false),
        End::TimedOut { after, held_by } => {
            let mut note = format!("Command timed out after {} ms", after.as_millis());
            if let Some(rule) = held_by {
                note.push_str(&format!(" (kept from the background by {rule})"));
            }
            stderr_text = if stderr_text.trim_end().is_empty() {
                note
            } else {
                format!("{}\n{note}", stderr_text.trim_end())
            };
            (killed_code, true)
        }
        End::Cancelled => return Err(ToolError::Cancelled(None)),
        End::MovedToBackground {
            id,
            output_file,
            after,
        } => {
            return Ok(ToolResult::new(BashOutput {
                stdout: format!(
                    "Command was still running after its timeout of {} ms, so it was moved to \
                     the background with ID: {id}. Output is being written to: {}",
                    after.as_millis(),
                    output_file.display()
                ),
                stderr: String::new(),
                interrupted: false,
                return_code_interpretation: None,
                raw_output_path: None,
                raw_output_cut: false,
                saved_notes: Vec::new(),
                no_output_expected: false,
                background_task_id: Some(id),
            }));
        }
        End::OutputCap => {
            let note = format!(
                "Command killed: its output exceeded {} GiB",
                KILL_CAP / (1024 * 1024 * 1024)
            );
            stderr_text = if stderr_text.is_empty() {
                note
            } else {
                format!("{stderr_text}\n{note}")
            };
            (killed_code, true)
        }
    };
    let interpretation = match code {
        Some(1) => exit_one_is_an_answer(command),
        _ => None,
    };
    if code != Some(0) && interpretation.is_none() {
        // The error text keeps only its head and tail: where the full output is goes first.
        if !saved_lines.is_empty() {
            stderr_text = format!("{}\n{stderr_text}", saved_lines.join("\n"));
        }
        let mut error = ToolError::Shell {
            exit_code: code,
            stderr: stderr_text,
            stdout: stdout.text,
            interrupted,
        };
        // Output held in memory but longer than the error shows (its text, with the exit
        // code and notes, is what gets cut): saved now, so that its middle is not lost.
        if saved_lines.is_empty()
            && error.to_string().chars().count() > tool_core::MAX_ERROR_CHARS
            && let ToolError::Shell { stderr, stdout, .. } = &mut error
            && let Some(path) = save_failed_output(ctx, stderr, stdout)
        {
            *stderr = format!("{}\n{stderr}", saved_line(path.display(), false, "output"));
        }
        // A `cd` before the failure holds, as in the shell (`cd build && make` failing
        // leaves the next command in build).
        return Err(match new_cwd {
            Some(dir) => error.with_context_change(tool_core::ContextModifier::cwd(dir)),
            None => error,
        });
    }
    let output = BashOutput {
        no_output_expected: stdout.text.is_empty() && stderr_text.is_empty(),
        stdout: stdout.text,
        stderr: stderr_text,
        interrupted,
        return_code_interpretation: interpretation.map(str::to_owned),
        raw_output_path,
        raw_output_cut,
        saved_notes: saved_lines,
        background_task_id: None,
    };
    let result = ToolResult::new(output);
    Ok(match new_cwd {
        Some(dir) => result.with_context_change(tool_core::ContextModifier::cwd(dir)),
        None => result,
    })
}

/// Claude Code's original working directory: the project directory, or a worktree
/// session's worktree (the session must not land in the repository it left).
fn original_cwd(ctx: &ToolUseContext) -> PathBuf {
    #[cfg(feature = "worktree")]
    if let Some(worktree) = crate::worktree::active_worktree(ctx) {
        return worktree.worktree_path;
    }
    ctx.project_dir().to_path_buf()
}

/// The longest result the model sees whole by default (a longer one is saved to a file, with
/// a preview): see [`max_result_chars`].
const MAX_RESULT_CHARS: usize = 30_000;
/// The most `BASH_MAX_OUTPUT_LENGTH` may raise it to, as in Claude Code.
const MAX_RESULT_CHARS_LIMIT: usize = 150_000;

/// The longest result the model sees whole: `BASH_MAX_OUTPUT_LENGTH` when it is a positive
/// whole number (the settings' `env` sets it too), at most 150,000, else 30,000, as in Claude
/// Code.
pub fn max_result_chars() -> usize {
    std::env::var("BASH_MAX_OUTPUT_LENGTH")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .map_or(MAX_RESULT_CHARS, |n| n.min(MAX_RESULT_CHARS_LIMIT))
}

/// The longest result the model really sees whole: [`max_result_chars`], but never more than
/// the pipeline's default limit ([`tool_core::DEFAULT_MAX_RESULT_CHARS`]), which it applies
/// too, whatever `BASH_MAX_OUTPUT_LENGTH` says. (A pipeline given a lower limit may still
/// save a spilled output's head and tail.)
fn inline_result_chars() -> usize {
    max_result_chars().min(tool_core::DEFAULT_MAX_RESULT_CHARS)
}

/// Files larger than this are not read to count a command's read of them.
const MAX_COUNTED_READ_BYTES: u64 = 16 * 1024 * 1024;

/// A file a command reads and shows (`cat f`, `head -n 20 f`, `sed -n '5,9p' f`, `grep x
/// f`: [`tool_perms::bash::single_file_read`]), as it was before the command ran. The
/// command counts as a Read of it for the read-before-edit rule, as in Claude Code (Edit may
/// change the file next), when it showed something, the model saw all of it (no preview
/// of a longer output), and the file is the same after it: a `cat` whose output is the
/// whole file as a whole Read (Write may replace it), the others as a range, shown whole
/// (Edit anywhere; Write after a Read of every line).
struct ShownFile {
    /// The file, absolute, with no link or `..` on the way (the path Edit is given).
    path: PathBuf,
    whole: bool,
    bytes: Vec<u8>,
}

impl ShownFile {
    /// The file `read` names, where the command reads it: `None` unless the path resolves,
    /// without following a link or a `..`, to a regular text file (a name with spaces as
    /// written; `~` only unquoted; nothing under `/proc`, whose `self` is another process
    /// there).
    fn before(ctx: &ToolUseContext, read: tool_perms::bash::SingleFileRead) -> Option<Self> {
        let written = Path::new(&read.path);
        let path = match read.path.strip_prefix("~/") {
            Some(rest) => ctx.home()?.join(rest),
            None if read.path == "~" => return None,
            None if written.is_absolute() => written.to_path_buf(),
            None => ctx.effective_cwd().join(written),
        };
        let plain = tool_core::normalize_lexically(&path);
        if plain.starts_with("/proc")
            || plain
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("ipynb"))
            || std::fs::canonicalize(&path).ok()? != plain
        {
            return None;
        }
        let meta = std::fs::metadata(&plain).ok()?;
        if !meta.is_file() || meta.len() > MAX_COUNTED_READ_BYTES {
            return None;
        }
        let bytes = std::fs::read(&plain).ok()?;
        (!crate::fsutil::looks_binary(&bytes)).then_some(Self {
            path: plain,
            whole: read.whole,
            bytes,
        })
    }

    /// Records the read in the read cache, when the command showed something and the file
    /// is still what it was before the command. An entry for the same content already
    /// recorded is only ever widened, never narrowed; a Read after this one shows the file
    /// (no "unchanged" stub: the model saw it in a Bash result).
    fn record(self, ctx: &ToolUseContext, shown: &str, shown_whole: bool) {
        // What the model saw must be what the command showed: not a preview of it.
        if !shown_whole || shown.trim().is_empty() {
            return;
        }
        let Ok(meta) = std::fs::metadata(&self.path) else {
            return;
        };
        if std::fs::read(&self.path).ok().as_deref() != Some(self.bytes.as_slice()) {
            return;
        }
        let (text, not_utf8) = match crate::fsutil::decode(&self.bytes) {
            Some(decoded) => (decoded.text, false),
            None => (String::from_utf8_lossy(&self.bytes).into_owned(), true),
        };
        // A `cat` whose output is the file; or any of the others (`head`, `tail`, `sed -n`,
        // …) whose output is every line of it as it is, line breaks and all (`head -n 5` of
        // a 3-line file). For those the file must end with one line break at most: a blank
        // line at its end and none look the same in an output whose end is trimmed.
        let whole = if self.whole {
            shown.trim_end_matches('\n') == text.trim_end_matches('\n')
        } else {
            let body = text
                .strip_suffix("\r\n")
                .or_else(|| text.strip_suffix('\n'))
                .unwrap_or(&text);
            !body.is_empty() && body.trim_end() == body && shown.trim_end() == body
        };
        let hash = tool_core::ContentHash::of(&self.bytes);
        let cache = ctx.file_state();
        if let Some(mut known) = cache.get(&self.path).filter(|k| k.disk_hash == Some(hash)) {
            if !known.truncated {
                return;
            }
            if !whole {
                known.ranged = true;
                cache.insert(&self.path, known);
                return;
            }
        }
        let mut state = tool_core::FileState::read(text, tool_core::mtime_ms(&meta), hash, 1, None);
        state.offset = None;
        state.not_utf8 = not_utf8;
        state.truncated = !whole;
        state.ranged = !whole;
        state.read_order = ctx.call_order();
        cache.insert(&self.path, state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scratch file's directory counts only when written in full (its closing `.`): a
    /// path cut short by a full disk (the reserved room smaller than the path) is not taken
    /// for a directory to go to.
    #[tokio::test]
    async fn a_cwd_file_counts_only_when_written_in_full() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("cwd");
        let read = |bytes: &[u8]| {
            std::fs::write(&file, bytes).unwrap();
            read_cwd_file(&file)
        };
        let mut reserved = b"/home/u/proj/sub\n.".to_vec();
        reserved.extend([0; 16]);
        assert!(
            matches!(read(&reserved).await, CwdReport::Printed(p) if p == Path::new("/home/u/proj/sub"))
        );
        assert!(
            matches!(read(b"/a b \n.").await, CwdReport::Printed(p) if p == Path::new("/a b "))
        );
        assert!(matches!(read(b"\n.\0\0").await, CwdReport::Removed));
        // Cut short: by the reserved room's end, then a failed write.
        assert!(matches!(
            read(b"/home/u/pro\0\0").await,
            CwdReport::Unwritten
        ));
        assert!(matches!(
            read(b"/home/u/proj\n").await,
            CwdReport::Unwritten
        ));
        assert!(matches!(read(b"").await, CwdReport::Unwritten));
        assert!(matches!(read(&[0; 64]).await, CwdReport::Unwritten));
    }

    #[test]
    fn which_commands_move_to_the_background_at_their_timeout() {
        for command in [
            "cargo build",
            "make -j2 && ./run-tests",
            "npm test | tee log",
        ] {
            assert!(moves_to_background(command), "{command}");
        }
        for command in [
            "sleep 100",
            "git clone https://example.com/x",
            "echo start && git push",
            "timeout 900 git fetch",
            "nice -n 5 git gc",
            "timeout 5 sleep 3",
            "echo $(",
        ] {
            assert!(!moves_to_background(command), "{command}");
        }
    }

    /// The bytes a command moved to the background wrote so far: in the order read while the
    /// runs say it, by stream past them or once a stream spilled; an unfinished character
    /// last either way.
    #[test]
    fn arrivals_order_the_streams_and_keep_an_unfinished_character_last() {
        let mut arrivals = Arrivals::default();
        for (stream, n) in [(Stream::Out, 2), (Stream::Err, 2), (Stream::Out, 4)] {
            arrivals.push(stream, n);
        }
        let (out, err) = (b"o1o2\xe2\x82".as_slice(), b"e1".as_slice());
        assert_eq!(arrivals.interleave(out, err, true), b"o1e1o2\xe2\x82");
        assert_eq!(arrivals.interleave(out, err, false), b"o1o2e1\xe2\x82");
        // Both streams end in a run of their own: the error output's goes before the
        // unfinished character the output ends with.
        arrivals.push(Stream::Err, 2);
        let err = b"e1e2".as_slice();
        assert_eq!(arrivals.interleave(out, err, true), b"o1e1o2e2\xe2\x82");
        // Past the runs recorded, what follows goes by stream.
        let mut full = Arrivals::default();
        for i in 0..=MAX_ARRIVAL_RUNS {
            full.push(if i % 2 == 0 { Stream::Out } else { Stream::Err }, 1);
        }
        full.push(Stream::Out, 1);
        assert!(full.full && full.runs.len() == MAX_ARRIVAL_RUNS);
        let out = vec![b'o'; MAX_ARRIVAL_RUNS / 2 + 2];
        let err = vec![b'e'; MAX_ARRIVAL_RUNS / 2];
        let bytes = full.interleave(&out, &err, true);
        assert!(bytes.starts_with(b"oeoe"));
        assert!(bytes.ends_with(b"eoo"), "{:?}", &bytes[bytes.len() - 3..]);
        assert_eq!(bytes.len(), out.len() + err.len());
    }

    #[test]
    fn exit_one_exemptions() {
        assert_eq!(
            exit_one_is_an_answer("grep -r foo ."),
            Some("No matches found")
        );
        // `[ … ]` is its own node in the syntax tree; `[[ … ]]` is no exemption (Claude
        // Code's list names `test` and `[`).
        for command in ["[ -f nope ]", "touch a && [ -f b ]", "test -f nope"] {
            assert_eq!(
                exit_one_is_an_answer(command),
                Some("Condition is false"),
                "{command}"
            );
        }
        assert_eq!(exit_one_is_an_answer("[[ -f nope ]]"), None);
        assert_eq!(
            exit_one_is_an_answer("cat x | LC_ALL=C grep foo"),
            Some("No matches found")
        );
        assert_eq!(
            exit_one_is_an_answer("cd src && git diff --stat"),
            Some("Files differ")
        );
        assert_eq!(
            exit_one_is_an_answer("/usr/bin/diff a b"),
            Some("Files differ")
        );
        // Quotes, redirections and background lists as the shell reads them.
        for command in [
            "grep -E 'TODO|FIXME' src/x.rs",
            "grep \"a;b\" f",
            "grep foo f 2>&1",
            "grep foo f &>/dev/null",
            "rg x | grep -v 'y&z'",
            "grep foo f # a | comment",
        ] {
            assert_eq!(
                exit_one_is_an_answer(command),
                Some("No matches found"),
                "{command}"
            );
        }
        assert_eq!(exit_one_is_an_answer("grep foo x; false"), None);
        assert_eq!(exit_one_is_an_answer("echo 'x | grep'"), None);
        assert_eq!(exit_one_is_an_answer("! grep foo f"), None);
        assert_eq!(
            exit_one_is_an_answer("for f in *; do grep x $f; done"),
            None
        );
        assert_eq!(exit_one_is_an_answer("git status"), None);
        assert_eq!(exit_one_is_an_answer("make"), None);
    }
}
