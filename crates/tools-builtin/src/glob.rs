//! The `Glob` tool: file paths matching a glob pattern, newest first, on ripgrep's `ignore`
//! walker with its glob (override) semantics.

use std::borrow::Cow;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use ignore::overrides::OverrideBuilder;
use ignore::{ParallelVisitor, ParallelVisitorBuilder, WalkState};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    CancellationToken, FileAccess, MaxResultSize, PermissionSubject, ProgressSender, SearchOrRead,
    ToolError, ToolResult, ToolResultContent, ToolUseContext, TypedTool, ValidationError,
};

use crate::deadline;
use crate::fsutil::{self, reject_null_bytes};
use crate::grep::{NotSearched, not_read_note, walk_error_text};

/// At most this many paths are returned.
pub const MAX_RESULTS: usize = 100;
/// How long a search may run before it stops with what it found.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);
/// Directories of version-control systems, never listed.
pub(crate) const VCS_DIRS: &[&str] = &[".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];

/// Why a glob, matched against paths below the searched directory, matched no file, when
/// its text says so: a Glob pattern or a Grep `glob` that found nothing says why with it (a
/// Toolwright addition: ripgrep and Claude Code say nothing, and Grep's other note would send
/// the model looking for ignore rules).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "camelCase")]
pub enum UnmatchableGlob {
    /// One of its directories is a version-control directory (`.git/*`, `**/.hg/**`), which
    /// no walk enters.
    VcsDir {
        /// The glob.
        glob: String,
        /// The directory's name (`.git`).
        dir: String,
    },
    /// It starts with the searched directory's own path from the working directory
    /// (`src/sub/*.py` with `path` `src`), which that directory does not hold (no
    /// `src/src`): ripgrep run from the working directory, as Claude Code runs it, matches a
    /// glob against paths from there; here a glob is matched relative to `path`.
    RepeatsPath {
        /// The glob.
        glob: String,
        /// The searched directory, relative to the working directory (`src`).
        path: String,
        /// The glob relative to it (`sub/*.py`).
        relative: String,
    },
}

impl UnmatchableGlob {
    /// Why, in the words of a note, the glob called `noun` ("glob", "pattern"); it starts
    /// in lower case.
    pub fn why(&self, noun: &str) -> String {
        match self {
            Self::VcsDir { glob, dir } => format!(
                "the {noun} `{}` names a path in {}, a version-control directory, which is \
                 never searched; to search it, give it as `path`.",
                quoted(glob),
                tool_core::escape_line_breaks(dir)
            ),
            Self::RepeatsPath {
                glob,
                path,
                relative,
            } => format!(
                "a {noun} is matched against paths relative to `path` ({}), and the {noun} \
                 `{}` repeats it; give it relative to `path`: `{}`.",
                tool_core::escape_line_breaks(path),
                quoted(glob),
                quoted(relative)
            ),
        }
    }
}

/// Why `glob` (a pattern that picks files, matched against paths below `root`) can match
/// no file, when its text and what is below `root` say so ([`UnmatchableGlob`]); `None`
/// otherwise. It looks at the disk only for a glob that starts with `root`'s path from
/// `cwd`: whether `root` holds that path too (then the glob may match there).
pub(crate) fn unmatchable(root: &Path, cwd: &Path, glob: &str) -> Option<UnmatchableGlob> {
    let parts: Vec<&str> = glob.trim_start_matches('/').split('/').collect();
    // Only a directory part: a file named `.git` (a worktree's) may be listed.
    if let Some(dir) = parts[..parts.len() - 1]
        .iter()
        .find(|part| VCS_DIRS.contains(part))
    {
        return Some(UnmatchableGlob::VcsDir {
            glob: glob.to_owned(),
            dir: (*dir).to_owned(),
        });
    }
    if glob.starts_with('/') {
        return None;
    }
    let path = root.strip_prefix(cwd).ok()?.to_str()?;
    let relative = glob.strip_prefix(path)?.strip_prefix('/')?;
    if path.is_empty() || relative.is_empty() || std::fs::symlink_metadata(root.join(path)).is_ok()
    {
        return None;
    }
    Some(UnmatchableGlob::RepeatsPath {
        glob: glob.to_owned(),
        path: path.to_owned(),
        relative: relative.to_owned(),
    })
}

/// The note appended when more than [`MAX_RESULTS`] files matched.
pub const TRUNCATED_NOTE: &str =
    "(Results are truncated. Consider using a more specific path or pattern.)";

/// The note appended when the search stopped at its time limit ([`DEFAULT_TIMEOUT`]).
pub fn timed_out_note(limit_ms: u64) -> String {
    format!(
        "(Search timed out after {}: the results may be incomplete. Use a more specific path or pattern.)",
        limit_text(limit_ms)
    )
}

/// A time limit as the notes say it: whole seconds as `20 s`, else milliseconds.
pub(crate) fn limit_text(limit_ms: u64) -> String {
    if limit_ms > 0 && limit_ms.is_multiple_of(1000) {
        format!("{} s", limit_ms / 1000)
    } else {
        format!("{limit_ms} ms")
    }
}

/// A duration in whole milliseconds, saturating.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Input of the `Glob` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GlobInput {
    /// The glob pattern to match files against
    pub pattern: String,
    /// The directory to search in. If not specified, the current working directory will be used. IMPORTANT: Omit this field to use the default directory. DO NOT enter "undefined" or "null" - simply omit it for the default behavior. Must be a valid directory path if provided.
    #[serde(default)]
    pub path: Option<String>,
}

/// What `Glob` returns (Claude Code's shape).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GlobOutput {
    /// How long the search took.
    pub duration_ms: u64,
    /// How many paths are returned.
    pub num_files: usize,
    /// The paths, newest first; relative to the working directory when inside it.
    pub filenames: Vec<String>,
    /// Whether more files matched than are returned.
    pub truncated: bool,
    /// Set when the search stopped at its time limit, so that files may be missing: the
    /// limit, in milliseconds (a Toolwright addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_out_after_ms: Option<u64>,
    /// Directories the walk could not list, each with why (`priv (Permission denied (os
    /// error 13))`), where the pattern could match; sorted, at most
    /// [`MAX_NOT_SEARCHED_LISTED`](crate::grep::MAX_NOT_SEARCHED_LISTED) (a Toolwright
    /// addition, as Grep's: files may be missing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
    /// How many such directories there were in all.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreadable_count: usize,
    /// Set when no file matched and the pattern's text says why ([`UnmatchableGlob`]: it
    /// names a `.git` directory, or repeats `path`); the result says it (a Toolwright
    /// addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmatchable: Option<UnmatchableGlob>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The `Glob` tool. See the [module docs](self).
#[derive(Debug, Clone, Copy, Default)]
pub struct Glob;

const DESCRIPTION: &str = "- Fast file pattern matching tool that works with any codebase size
- Supports glob patterns like \"**/*.js\" or \"src/**/*.ts\"
- Returns matching file paths sorted by modification time
- Use this tool when you need to find files by name patterns
- When you are doing an open ended search that may require multiple rounds of globbing and grepping, use the Agent tool instead
- You can call multiple tools in a single response. It is always better to speculatively perform multiple searches in parallel if they are potentially useful.";

/// A boolean switch as Claude Code reads it (`isEnvTruthy(process.env.X || default)`):
/// unset or empty is the default; otherwise on only for `1`, `true`, `yes` or `on` (any
/// case), off for anything else.
fn flag(value: Option<String>, default: bool) -> bool {
    match value {
        Some(v) if !v.is_empty() => tool_core::env_truthy(&v),
        _ => default,
    }
}

/// What the walk lists, switchable as Claude Code's environment variables do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Switches {
    /// Honour `.gitignore`, `.ignore` and `.rgignore` (`CLAUDE_CODE_GLOB_NO_IGNORE=false`; off
    /// by default).
    honour_ignore: bool,
    /// List hidden files (`CLAUDE_CODE_GLOB_HIDDEN`; on by default).
    hidden: bool,
}

impl Switches {
    fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        Self {
            honour_ignore: !flag(get("CLAUDE_CODE_GLOB_NO_IGNORE"), true),
            hidden: flag(get("CLAUDE_CODE_GLOB_HIDDEN"), true),
        }
    }

    fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }
}

/// The most of a model's input a refusal quotes.
const QUOTED_CHARS: usize = 200;
/// The most of a library's explanation a refusal passes on.
pub(crate) const REASON_CHARS: usize = 300;

/// `text` cut to `max` characters, with `… (N characters)` saying how long it was.
pub(crate) fn cut_text(text: &str, max: usize) -> Cow<'_, str> {
    let count = text.chars().count();
    if count <= max {
        return Cow::Borrowed(text);
    }
    let head: String = text.chars().take(max).collect();
    Cow::Owned(format!("{head}… ({count} characters)"))
}

/// A model's input (a pattern, a file type) as a refusal quotes it: whole when short, else
/// its start and its length, so that a huge input gets a short refusal.
pub(crate) fn quoted(input: &str) -> Cow<'_, str> {
    cut_text(input, QUOTED_CHARS)
}

/// The refusal of a glob `pattern` that `ignore` would not take: the pattern quoted once
/// ([`quoted`]) and the reason, without the glob (or the regex it was compiled to: for a
/// pattern too large to compile, hundreds of thousands of characters) that the library's
/// message repeats. `compiled`: the error came from compiling the patterns, not from
/// reading this one.
pub(crate) fn glob_refusal(pattern: &str, e: &ignore::Error, compiled: bool) -> String {
    let text = match e {
        ignore::Error::Glob { err, .. } => err.clone(),
        other => other.to_string(),
    };
    // globset's words: `error parsing glob '<glob>': <why>`.
    let why = text
        .strip_prefix("error parsing glob '")
        .map_or(text.as_str(), |rest| {
            rest.rsplit_once("': ").map_or(rest, |(_, why)| why)
        });
    let why = cut_text(why, REASON_CHARS);
    let pattern = quoted(pattern);
    if compiled {
        format!(
            "Invalid glob pattern `{pattern}`: it could not be compiled ({why}). Use a shorter or \
             simpler pattern."
        )
    } else {
        format!("Invalid glob pattern `{pattern}`: {why}")
    }
}

/// Splits an absolute pattern into its literal directory prefix, with `.` and `..` collapsed
/// lexically (`/x/../proj/*.rs` walks `/proj`, as `/proj/*.rs` does), and the glob below it.
fn split_absolute(pattern: &str) -> (PathBuf, String) {
    let (dir, glob) = split_literal(pattern);
    (
        tool_core::normalize_lexically(&Path::new("/").join(dir)),
        glob,
    )
}

/// An absolute pattern below `cwd` when `cwd`'s own path holds glob characters (a project at
/// `/work/site[v2]` or `/src/{app}`, which models name in absolute patterns): `cwd` and the
/// glob below it. A careful user means the project there, not the names the brackets would
/// match (found by review: `/work/we[ir]d{x}/*.rs` found nothing, and asked to read `/work`).
/// Decided from the text alone: the working directory exists, and the permission step that
/// also reads the pattern touches no disk.
fn below_cwd_named_with_glob_chars(pattern: &str, cwd: &Path) -> Option<(PathBuf, String)> {
    let cwd_text = cwd.to_str()?;
    if !cwd_text.contains(GLOB_CHARS) {
        return None;
    }
    let rest = pattern.strip_prefix(cwd_text.trim_end_matches('/'))?;
    let rest = rest.strip_prefix('/')?;
    Some((cwd.to_path_buf(), format!("/{rest}")))
}

/// Splits a pattern below a directory (the part after an absolute pattern's `/`, or after
/// `~/`) into its literal directory parts, joined with `/` (empty parts dropped), and the
/// glob below them, with a leading `/`.
fn split_literal(pattern: &str) -> (String, String) {
    let parts: Vec<&str> = pattern.split('/').collect();
    let first_glob = parts
        .iter()
        .position(|p| p.contains(GLOB_CHARS))
        .unwrap_or(parts.len());
    let (dir_parts, glob_parts) = if first_glob == parts.len() {
        (&parts[..parts.len() - 1], &parts[parts.len() - 1..])
    } else {
        parts.split_at(first_glob)
    };
    let dir = dir_parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join("/");
    (dir, format!("/{}", glob_parts.join("/")))
}

/// The characters that make a pattern's part a glob rather than a literal name.
pub(crate) const GLOB_CHARS: [char; 4] = ['*', '?', '[', '{'];

/// The fixed directory parts of `glob` (those before its first part with a wildcard, or
/// before its last part), a glob matched below `root`, in the Unicode form that exists
/// below `root` ([`fsutil::existing_form_below`]: kept as written unless nothing exists
/// under that form), so that `café/*` typed composed finds a directory unpacked
/// decomposed, as a `path` does. A leading `/` (anchored) and `!` (a Grep glob that
/// excludes) stay; a part with a `\` escape is glob syntax and ends the fixed parts. It
/// looks at the disk only for a non-ASCII directory part.
pub(crate) fn dirs_in_existing_form<'a>(root: &Path, glob: &'a str) -> Cow<'a, str> {
    let (bang, body) = match glob.strip_prefix('!') {
        Some(body) => ("!", body),
        None => ("", glob),
    };
    let (lead, rest) = match body.strip_prefix('/') {
        Some(rest) => ("/", rest),
        None => ("", body),
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let fixed = fixed_part_count(&parts);
    let dir = parts[..fixed].join("/");
    match fsutil::existing_form_below(root, &dir) {
        Some(found) => Cow::Owned(format!("{bang}{lead}{found}/{}", parts[fixed..].join("/"))),
        None => Cow::Borrowed(glob),
    }
}

/// Whether a glob is anchored at the directory it is matched in (gitignore's rule, which
/// ripgrep's globs follow): it has a `/` before its last character. `*.rs` is not, and
/// matches at any depth; `src/*.rs` and `/*.rs` are.
fn is_anchored(pattern: &str) -> bool {
    pattern.trim_end_matches('/').contains('/')
}

/// `pattern` without its `.` parts (`./src/*.rs`, `src/./*.rs`) and its empty inner parts
/// (`src//*.rs`, one `/` as in a path), which no walked path has, so that the pattern
/// matched nothing; it names what it names in a shell. A leading `/` (anchored; `//src`
/// is `/src`) and a trailing one (directories only) stay. An anchored pattern stays
/// anchored (`./*` becomes `/*`, the files at the top, not `*`, every file), and a leading
/// `!` (a Grep `glob` that excludes) stays. A pattern of nothing but `.` parts and `/` is
/// left as it is.
pub(crate) fn without_dot_parts(pattern: &str) -> Cow<'_, str> {
    let (bang, body) = match pattern.strip_prefix('!') {
        Some(body) => ("!", body),
        None => ("", pattern),
    };
    let parts: Vec<&str> = body.split('/').collect();
    let last = parts.len() - 1;
    // The first and the last part may be empty: a leading `/`, a trailing `/`.
    let dropped = |i: usize, part: &str| part == "." || (part.is_empty() && i != 0 && i != last);
    if !parts.iter().enumerate().any(|(i, part)| dropped(i, part)) {
        return Cow::Borrowed(pattern);
    }
    let kept = parts
        .iter()
        .enumerate()
        .filter(|(i, part)| !dropped(*i, part))
        .map(|(_, part)| *part)
        .collect::<Vec<_>>()
        .join("/");
    if kept.trim_matches('/').is_empty() {
        return Cow::Borrowed(pattern);
    }
    let lead = if is_anchored(body) && !is_anchored(&kept) {
        "/"
    } else {
        ""
    };
    Cow::Owned(format!("{bang}{lead}{kept}"))
}

/// `pattern` with a leading `~/` replaced by the home directory, as hooks and the
/// permission rules are shown it; `None` for any other pattern, without a home directory,
/// and for a home directory that a pattern's text cannot name: one whose name is not valid
/// UTF-8 (a pattern is text), or holds a glob character (`[`), which would be read as
/// glob. Those stay `~/…`, searched (and judged) in the home directory all the same
/// ([`split_home`]).
fn home_pattern(pattern: &str, home: Option<&Path>) -> Option<String> {
    let rest = pattern.strip_prefix("~/")?;
    let home = home?.to_str()?.trim_end_matches('/');
    if home.contains(GLOB_CHARS) {
        return None;
    }
    Some(format!("{home}/{rest}"))
}

/// A `~/` pattern's root directory in `home` (its literal directories joined to it as
/// paths, then `.` and `..` collapsed) and its glob below that; `None` for another pattern.
fn split_home(pattern: &str, home: &Path) -> Option<(PathBuf, String)> {
    let (dir, glob) = split_literal(pattern.strip_prefix("~/")?);
    Some((tool_core::normalize_lexically(&home.join(dir)), glob))
}

/// How deep below the walk's root `pattern` (relative to it) can match: the number of its
/// parts when it is anchored and no part holds `**`, so that the walk need not go further
/// (`/*` under `/` lists the top, without walking the whole disk until the time limit).
/// `None`, no bound, for an unanchored pattern (`*.rs` matches at any depth), one with `**`,
/// and one with a `/` inside braces or a class (`{a/b,c}/*.rs`: the alternatives' depths
/// differ).
fn walk_depth(pattern: &str) -> Option<usize> {
    let body = pattern.trim_end_matches('/');
    if !is_anchored(body) || body.contains("**") {
        return None;
    }
    let (mut braces, mut in_class) = (0_usize, false);
    for c in body.chars() {
        match c {
            '[' => in_class = true,
            ']' => in_class = false,
            '{' if !in_class => braces += 1,
            '}' if !in_class => braces = braces.saturating_sub(1),
            '/' if braces > 0 || in_class => return None,
            _ => {}
        }
    }
    Some(body.split('/').filter(|part| !part.is_empty()).count())
}

fn resolve_root(
    input: &GlobInput,
    ctx: &ToolUseContext,
) -> Result<(PathBuf, String), ValidationError> {
    reject_null_bytes("pattern", Some(&input.pattern))?;
    reject_null_bytes("path", input.path.as_deref())?;
    if input.pattern.trim().is_empty() {
        return Err(ValidationError::new("The glob pattern must not be empty."));
    }
    // Without a home directory `~/x` would be `<cwd>/~/x`: refused, as Read refuses it.
    if let Some(path) = input.path.as_deref().map(str::trim)
        && fsutil::is_home_path(path)
    {
        fsutil::refuse_tilde_without_home("path", path, ctx)?;
    }
    if input.pattern.starts_with("~/") {
        fsutil::refuse_tilde_without_home("pattern", &input.pattern, ctx)?;
    }
    let base = match input
        .path
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        Some(p) => ctx.resolve_path(p),
        None => ctx.cwd().to_path_buf(),
    };
    let pattern = input.pattern.as_str();
    // A `~/` pattern is searched in the home directory, joined as a path (its name may be
    // no UTF-8, or hold a `[`).
    let home = ctx.home().and_then(|home| split_home(pattern, home));
    let (root, glob) = if let Some(found) = home {
        found
    } else if let Some(found) = below_cwd_named_with_glob_chars(pattern, ctx.cwd()) {
        found
    } else if pattern.starts_with('/') {
        split_absolute(pattern)
    } else if let Some(climbed) = climbing(&base, pattern) {
        climbed
    } else {
        (base, pattern.to_owned())
    };
    let glob = without_dot_parts(&glob).into_owned();
    Ok((root, glob))
}

/// A relative pattern whose literal leading directories hold `..` (`../lib/*.rs`,
/// `src/../src/*.ts`), which no walked path would match: the directory they name from
/// `base` (joined as a path, so a `[slug]` in `base` stays literal, then collapsed
/// lexically) and the glob below it, as [`split_absolute`] gives them. `None` for any other
/// pattern (a `..` after a wildcard still matches nothing).
fn climbing(base: &Path, pattern: &str) -> Option<(PathBuf, String)> {
    let (dir, glob) = climbed(base, pattern)?;
    Some((tool_core::normalize_lexically(&dir), glob))
}

/// [`climbing`]'s directory before it is collapsed: `base` with the pattern's literal
/// leading directories joined to it as they are written (`~/proj/../.ssh`).
fn climbed(base: &Path, pattern: &str) -> Option<(PathBuf, String)> {
    let parts: Vec<&str> = pattern.split('/').collect();
    let first_glob = parts
        .iter()
        .position(|p| p.contains(['*', '?', '[', '{']))
        .unwrap_or(parts.len());
    let (dirs, glob) = if first_glob == parts.len() {
        parts.split_at(parts.len() - 1)
    } else {
        parts.split_at(first_glob)
    };
    if !dirs.contains(&"..") {
        return None;
    }
    let mut dir = base.to_path_buf();
    dir.extend(dirs.iter().filter(|p| !p.is_empty()));
    Some((dir, format!("/{}", glob.join("/"))))
}

/// Validates a root directory as Claude Code's Glob and Grep do.
pub(crate) fn check_dir(root: &Path, ctx: &ToolUseContext) -> Result<(), ValidationError> {
    match std::fs::metadata(root) {
        // A directory that cannot be listed is an error, as ripgrep reports it ("Permission
        // denied"), not a search that found nothing.
        Ok(meta) if meta.is_dir() => std::fs::read_dir(root).map(drop).map_err(|e| {
            ValidationError::with_code(format!("Cannot search {}: {e}", root.display()), 1)
        }),
        Ok(_) => Err(ValidationError::with_code(
            format!("Path is not a directory: {}", root.display()),
            2,
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ValidationError::with_code(
            format!(
                "Directory does not exist: {}. Note: your current working directory is {}.{}",
                root.display(),
                ctx.cwd().display(),
                fsutil::missing_search_path_hint(root, ctx)
            ),
            1,
        )),
        Err(e) => Err(ValidationError::with_code(
            format!("Cannot search {}: {e}", root.display()),
            1,
        )),
    }
}

/// How a look at a search's root ([`look_at_root`]) failed.
#[derive(Debug)]
pub(crate) enum RootError {
    /// The root is refused, in these words (also when the look did not answer in time).
    Invalid(ValidationError),
    /// The call was cancelled while its root was looked at: nothing was searched.
    Cancelled(PathBuf),
    /// The look could not run: the tool is busy ([`deadline::run`]'s refusals: too many
    /// looks or searches stuck, or none of its slots free before the time limit), its
    /// thread could not start or panicked.
    Failed(ToolError),
}

impl From<ValidationError> for RootError {
    fn from(e: ValidationError) -> Self {
        Self::Invalid(e)
    }
}

impl RootError {
    /// The failure as `validate_input` answers it. A validation error cannot carry a
    /// cancellation (the pipeline, which also waits on the cancellation, answers a
    /// cancelled call as one when it sees it first), so a cancelled look is a refusal that
    /// says the call was cancelled.
    pub(crate) fn into_validation(self) -> ValidationError {
        match self {
            Self::Invalid(e) => e,
            Self::Cancelled(root) => ValidationError::new(format!(
                "The call was cancelled while the search root {} was being checked: nothing \
                 was searched.",
                root.display()
            )),
            Self::Failed(e) => ValidationError::new(e.to_string()),
        }
    }

    /// The failure as `call` answers it: a cancelled look is the tool's cancelled error.
    pub(crate) fn into_tool_error(self) -> ToolError {
        match self {
            Self::Invalid(e) => ToolError::msg(e.message),
            Self::Cancelled(_) => ToolError::Cancelled(None),
            Self::Failed(e) => e,
        }
    }
}

/// `look` at a search's root (`stat`, [`check_dir`]: what the file system says of it), on a
/// thread of its own ([`deadline::run`], counted in `job`'s runs as a walk is), waited on
/// until `limit` after `started`: on a hung network mount a `stat` or a directory listing
/// may never return, and the call must not wait past its time limit for it. When the look
/// has not answered by then, the root is refused with a message that says it could not be
/// read in time, and the look is left behind. When the look never started (the tool's
/// slots all in use until the limit, or too many stuck), the tool is busy
/// ([`RootError::Failed`], in its words); when the call is cancelled,
/// [`RootError::Cancelled`].
pub(crate) fn look_at_root<T, L>(
    job: deadline::Job,
    root: &Path,
    ctx: &ToolUseContext,
    started: Instant,
    limit: Duration,
    look: L,
) -> Result<T, RootError>
where
    T: Send + 'static,
    L: FnOnce(&Path, &ToolUseContext) -> Result<T, ValidationError> + Send + 'static,
{
    // A limit past what an `Instant` holds is the default one.
    let deadline = started
        .checked_add(limit)
        .unwrap_or(started + DEFAULT_TIMEOUT);
    let looked = {
        let (looked_at, look_ctx) = (root.to_path_buf(), ctx.clone());
        deadline::run(
            job,
            &Arc::new(()),
            deadline,
            ctx.cancellation(),
            move |_| Ok(look(&looked_at, &look_ctx)),
        )
        .map_err(|e| {
            if e.is_cancelled() {
                RootError::Cancelled(root.to_path_buf())
            } else {
                RootError::Failed(e)
            }
        })?
    };
    match looked {
        Some(answer) => Ok(answer?),
        None => Err(RootError::Invalid(ValidationError::with_code(
            format!(
                "Cannot search {}: it could not be read within {} (it may be on a hung network \
                 mount). Leave it out of the search, or try again later.",
                root.display(),
                limit_text(millis(limit))
            ),
            1,
        ))),
    }
}

#[async_trait::async_trait]
impl TypedTool for Glob {
    type Input = GlobInput;
    type Output = GlobOutput;
    const NAME: &'static str = "Glob";

    fn description(&self) -> Cow<'_, str> {
        DESCRIPTION.into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn search_hint(&self) -> Option<&str> {
        Some("find files by name pattern")
    }
    fn is_concurrency_safe(&self, _: &GlobInput) -> bool {
        true
    }
    fn is_read_only(&self, _: &GlobInput) -> bool {
        true
    }
    fn is_search_or_read(&self, _: &GlobInput) -> SearchOrRead {
        SearchOrRead {
            is_search: true,
            ..SearchOrRead::default()
        }
    }
    fn observable_input(
        &self,
        input: &serde_json::Value,
        ctx: &ToolUseContext,
    ) -> Option<serde_json::Value> {
        let observed = fsutil::observable_search_path(input, ctx);
        // An absolute pattern below a working directory named with glob characters is shown
        // as the search it is ([`below_cwd_named_with_glob_chars`]): that directory as `path`
        // and the rest of the pattern below it, so that the rules judge the directory walked,
        // not the parent its brackets would leave.
        let current = observed.as_ref().unwrap_or(input);
        if let Some(pattern) = current.get("pattern").and_then(serde_json::Value::as_str)
            && let Some((dir, glob)) = below_cwd_named_with_glob_chars(pattern, ctx.cwd())
            && let Some(dir) = dir.to_str()
        {
            let mut shown = current.clone();
            shown["pattern"] = serde_json::Value::String(glob.trim_start_matches('/').to_owned());
            shown["path"] = serde_json::Value::String(dir.to_owned());
            return Some(shown);
        }
        // A `~/` pattern is shown as the absolute one it is searched as, so that hooks and
        // the permission rules judge the home directory it walks.
        let Some(expanded) = current
            .get("pattern")
            .and_then(serde_json::Value::as_str)
            .and_then(|p| home_pattern(p, ctx.home()))
        else {
            return observed;
        };
        let mut shown = current.clone();
        shown["pattern"] = serde_json::Value::String(expanded);
        Some(shown)
    }
    /// The directory searched: an absolute pattern's own (a `~/` one's in the home
    /// directory), else `path`, or where a pattern climbing with `..` leads from it
    /// (`path: "."`, `../../etc/*`: that directory is what the rules must judge).
    ///
    /// A `~/` pattern not shown expanded (a home directory whose name is not UTF-8), a
    /// relative `path` and no `path` (the cwd, `.`) are left for the permission engine to
    /// resolve with the call's context, as the search resolves them: the subject is a path,
    /// so a directory whose name is not valid UTF-8 is judged too. A climb from a `~` path
    /// is left as written (`~/proj/../.ssh`): the engine expands `~` with the call's home
    /// before it collapses the `..`, as the search does.
    ///
    /// The subject is always named, so the tool has no permission check of its own: the
    /// engine's path rules decide.
    fn permission_subject(&self, input: &GlobInput) -> Option<PermissionSubject> {
        let pattern = input.pattern.as_str();
        let path = if let Some(rest) = pattern.strip_prefix("~/") {
            PathBuf::from("~").join(split_literal(rest).0)
        } else if pattern.starts_with('/') {
            split_absolute(pattern).0
        } else {
            let written = input.path.as_deref().map(str::trim);
            let base = match written {
                None | Some("") => PathBuf::from("."),
                Some(path) => fsutil::search_subject_path(path),
            };
            match climbed(&base, pattern) {
                None => base,
                // `~/proj` + `../.ssh`: kept as written, for the engine to expand `~` with
                // the call's home before it collapses the `..` (collapsed first, it would
                // be `~/.ssh`, or `..` past `~` a path below the working directory).
                Some((dir, _)) if written.is_some_and(fsutil::is_home_path) => dir,
                Some((dir, _)) => fsutil::cwd_relative(tool_core::normalize_lexically(&dir)),
            }
        };
        Some(PermissionSubject::Path {
            path,
            access: FileAccess::Read,
        })
    }

    async fn validate_input(
        &self,
        input: &GlobInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        let (input, ctx) = (input.clone(), ctx.clone());
        // The directory check touches the disk (a hung mount stalls it): off the async
        // workers, and waited on only until the time limit (see `validate_with`).
        fsutil::blocking_validation(move || {
            validate_with(&input, &ctx, DEFAULT_TIMEOUT, &LEFT_BEHIND, check_dir)
        })
        .await
    }

    async fn call(
        &self,
        input: GlobInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<GlobOutput>, ToolError> {
        let (root, pattern) = resolve_root(&input, &ctx).map_err(|e| ToolError::msg(e.message))?;
        // The directory check and the walk run on a thread of their own, which this call
        // leaves behind at the time limit (see `glob_with`).
        let out = fsutil::blocking(move || {
            glob_blocking(
                &root,
                &pattern,
                &input.pattern,
                &ctx,
                DEFAULT_TIMEOUT,
                Switches::from_env(),
            )
        })
        .await?;
        Ok(ToolResult::new(out))
    }

    fn to_content(&self, output: &GlobOutput) -> ToolResultContent {
        let mut text = if output.filenames.is_empty() {
            "No files found".to_owned()
        } else {
            output.filenames.join("\n")
        };
        if let Some(why) = output
            .unmatchable
            .as_ref()
            .filter(|_| output.filenames.is_empty())
        {
            let why = why.why("pattern");
            let mut chars = why.chars();
            let first = chars.next().map(|c| c.to_uppercase().to_string());
            text.push_str(&format!(
                "\n({}{})",
                first.unwrap_or_default(),
                chars.as_str()
            ));
        }
        if output.truncated && !output.filenames.is_empty() {
            text.push('\n');
            text.push_str(TRUNCATED_NOTE);
        }
        // A search that stopped at its limit says so, whatever it found: "No files found"
        // is not known then.
        if let Some(limit_ms) = output.timed_out_after_ms {
            text.push('\n');
            text.push_str(&timed_out_note(limit_ms));
        }
        // Nor is it when a directory could not be listed.
        if let Some(note) = not_read_note(&output.unreadable, output.unreadable_count) {
            text.push('\n');
            text.push_str(&note);
        }
        ToolResultContent::Text(text)
    }
}

/// `validate_input`'s checks, with the check of the root directory (`check`, which may
/// touch a disk that never answers) and its time limit given: the seam the tests use for a
/// `stat` or a listing that never returns.
fn validate_with<C>(
    input: &GlobInput,
    ctx: &ToolUseContext,
    limit: Duration,
    runs: &'static deadline::Runs,
    check: C,
) -> Result<(), ValidationError>
where
    C: FnOnce(&Path, &ToolUseContext) -> Result<(), ValidationError> + Send + 'static,
{
    let (root, pattern) = resolve_root(input, ctx)?;
    // The root in the Unicode form that exists, as the walk takes it (on the look's thread,
    // as it looks at the disk).
    let check = move |root: &Path, ctx: &ToolUseContext| check(&fsutil::existing_form(root), ctx);
    look_at_root(job(runs), &root, ctx, Instant::now(), limit, check)
        .map_err(RootError::into_validation)?;
    // Read and compiled, as the walk will: a pattern too large to compile is refused here.
    overrides(&root, &pattern, &input.pattern)
        .map(drop)
        .map_err(ValidationError::new)
}

/// The walk's matcher for `pattern` under `root`; the refusal ([`glob_refusal`], quoting
/// `raw_pattern`, the pattern as the call gave it) when it cannot be read or compiled.
fn overrides(
    root: &Path,
    pattern: &str,
    raw_pattern: &str,
) -> Result<ignore::overrides::Override, String> {
    let mut builder = OverrideBuilder::new(root);
    builder
        .add(pattern)
        .map_err(|e| glob_refusal(raw_pattern, &e, false))?;
    builder
        .build()
        .map_err(|e| glob_refusal(raw_pattern, &e, true))
}

/// Everything a Glob walk needs: where, for what, and how.
struct Walk {
    root: PathBuf,
    /// The glob, relative to `root`.
    pattern: String,
    /// The pattern as the call gave it, for errors.
    raw_pattern: String,
    switches: Switches,
}

/// Lists the files under `root` that `pattern` matches, for at most `timeout`: past it, the
/// result is what the walk found by then, and says the search timed out.
fn glob_blocking(
    root: &Path,
    pattern: &str,
    raw_pattern: &str,
    ctx: &ToolUseContext,
    timeout: Duration,
    switches: Switches,
) -> Result<GlobOutput, ToolError> {
    let plan = Walk {
        root: root.to_path_buf(),
        pattern: pattern.to_owned(),
        raw_pattern: raw_pattern.to_owned(),
        switches,
    };
    glob_with(plan, ctx, timeout, &LEFT_BEHIND, walk)
}

/// The Globs of this process running, and those left behind at their limit and still
/// running among them.
static LEFT_BEHIND: deadline::Runs = deadline::Runs::new();

/// [`glob_blocking`], with the walk itself (`work`, which fills a [`Found`]) given: the
/// seam the tests use for a directory listing that never returns.
///
/// `work` runs on a thread of its own ([`deadline::run`]), which this one waits on until
/// the deadline: a `readdir` or `stat` that blocks for ever (a directory on a hung network
/// mount) would otherwise keep the call waiting until a signal, and the runtime from
/// shutting down. At the deadline the call answers with what the walk found by then (each
/// match is in [`Found`] as soon as it is met) and the timed-out note, and the walk is
/// abandoned: its visitors stop it at their next look at the deadline, or, stuck in a
/// listing, when the listing returns, if ever. `runs` counts the walks running, at most
/// [`MAX_LEFT_BEHIND`](deadline::MAX_LEFT_BEHIND), and of them those abandoned and still
/// running (a cancelled call abandons its walk too); while that many are, a new Glob is
/// refused at once.
fn glob_with<W>(
    plan: Walk,
    ctx: &ToolUseContext,
    limit: Duration,
    runs: &'static deadline::Runs,
    work: W,
) -> Result<GlobOutput, ToolError>
where
    W: FnOnce(&Walk, &ToolUseContext, &Arc<Found>) -> Result<(), ToolError> + Send + 'static,
{
    let job = job(runs);
    let started = Instant::now();
    let found = Arc::new(Found::new(limit));
    let outcome = {
        let walk_ctx = ctx.clone();
        deadline::run(
            job,
            &found,
            found.deadline,
            ctx.cancellation(),
            move |found| work(&plan, &walk_ctx, found),
        )?
    };
    if outcome.is_none() {
        found.timed_out.store(true, Ordering::Relaxed);
    }
    if ctx.is_cancelled() {
        return Err(ToolError::Cancelled(None));
    }
    Ok(finish(&found, ctx, started))
}

/// Glob's work on a thread of its own ([`deadline::run`]), counted in `runs`.
fn job(runs: &'static deadline::Runs) -> deadline::Job {
    deadline::Job {
        tool: "Glob",
        thread: "tw-glob",
        runs,
        stuck_in: "a directory listing that never returns (a directory on a hung network \
                   mount)",
    }
}

/// The walk itself: `plan.root` checked and walked, the matches put in `found`.
fn walk(plan: &Walk, ctx: &ToolUseContext, found: &Arc<Found>) -> Result<(), ToolError> {
    let Walk {
        root,
        pattern,
        raw_pattern,
        switches,
    } = plan;
    // The root and the pattern's fixed directories in the Unicode form that exists: a
    // name written composed finds a directory named decomposed (and the other way round)
    // when nothing exists under the form given.
    let root = &fsutil::existing_form(root);
    let pattern = dirs_in_existing_form(root, pattern);
    let pattern = pattern.as_ref();
    check_dir(root, ctx).map_err(|e| ToolError::msg(e.message))?;
    let overrides = overrides(root, pattern, raw_pattern).map_err(ToolError::msg)?;
    let Switches {
        honour_ignore,
        hidden,
    } = *switches;
    let mut walker = ignore::WalkBuilder::new(root);
    walker
        .hidden(!hidden)
        .ignore(honour_ignore)
        .git_ignore(honour_ignore)
        .git_global(honour_ignore)
        .git_exclude(honour_ignore)
        .parents(honour_ignore)
        .max_depth(walk_depth(pattern))
        .overrides(overrides);
    if honour_ignore {
        // As ripgrep reads them (and `--no-ignore` skips them).
        walker.add_custom_ignore_filename(".rgignore");
    }
    // Paths the read deny rules forbid are not listed (Claude Code turns them into ignore
    // patterns).
    let denials = tool_perms::PermissionEngine::for_walking(ctx);
    walker.filter_entry(move |e| {
        if e.depth() == 0 {
            return true;
        }
        if e.file_type().is_some_and(|t| t.is_dir()) && is_vcs_dir(e.file_name()) {
            return false;
        }
        denials.as_ref().is_none_or(|engine| {
            engine
                .denied_by(e.path(), tool_core::FileAccess::Read)
                .is_none()
        })
    });
    let mut builder = CollectorBuilder {
        found,
        cancel: ctx.cancellation().clone(),
        root,
        cwd: ctx.cwd(),
        fixed: fixed_dirs(pattern),
    };
    walker.build_parallel().visit(&mut builder);
    // Nothing matched: why, when the pattern says (on this thread, as it may look at the
    // disk). A walk stopped by its time limit may have missed what matched.
    let matched = found
        .newest
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .matched;
    if matched == 0 && !found.past_deadline() && !ctx.is_cancelled() {
        *found
            .unmatchable
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = unmatchable(root, ctx.cwd(), &plan.pattern);
    }
    Ok(())
}

/// The directories below the walk's root that `pattern` (relative to it) names before its
/// first wildcard (`src/lib` for `src/lib/*.rs`; none for a pattern that is not anchored,
/// which matches at any depth): it can match only below them, so a directory the walk
/// cannot list elsewhere (beside `src`) hides nothing it could match.
fn fixed_dirs(pattern: &str) -> PathBuf {
    if !is_anchored(pattern) {
        return PathBuf::new();
    }
    let parts: Vec<&str> = pattern.trim_start_matches('/').split('/').collect();
    let fixed = fixed_part_count(&parts);
    parts[..fixed].iter().filter(|p| !p.is_empty()).collect()
}

/// How many of a pattern's `/`-separated `parts` are fixed directories: those before the
/// first with a glob character or an escape, never the last (a name, not a directory).
fn fixed_part_count(parts: &[&str]) -> usize {
    parts
        .iter()
        .position(|p| p.contains(GLOB_CHARS) || p.contains('\\'))
        .unwrap_or(parts.len())
        .min(parts.len().saturating_sub(1))
}

/// The result from what `found` holds (all of it, or what a walk stopped by its time limit
/// had found; taken out, so that a walk left behind adds to nothing shown).
fn finish(found: &Found, ctx: &ToolUseContext, started: Instant) -> GlobOutput {
    let newest = std::mem::take(&mut *found.newest.lock().unwrap_or_else(PoisonError::into_inner));
    let unreadable = std::mem::take(
        &mut *found
            .unreadable
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    );
    let truncated = newest.matched > MAX_RESULTS;
    let timed_out_after_ms = found
        .timed_out
        .load(Ordering::Relaxed)
        .then(|| millis(found.limit));
    let filenames: Vec<String> = newest
        .newest
        .into_sorted_vec()
        .iter()
        .map(|Ranked(_, p)| fsutil::listed_path(p, ctx.cwd()))
        .collect();
    let unmatchable = found
        .unmatchable
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
        .filter(|_| filenames.is_empty() && timed_out_after_ms.is_none());
    GlobOutput {
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        num_files: filenames.len(),
        filenames,
        truncated,
        timed_out_after_ms,
        unreadable_count: unreadable.count(),
        unreadable: unreadable.into_listed(),
        unmatchable,
    }
}

/// Whether `name` is a version-control directory.
pub(crate) fn is_vcs_dir(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|n| VCS_DIRS.contains(&n))
}

/// A match, ordered worst first: the older file, then (same time) the later path. The
/// top of a max-heap of these is the match to let go.
#[derive(Debug, PartialEq, Eq)]
struct Ranked(SystemTime, PathBuf);

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        other.0.cmp(&self.0).then_with(|| self.1.cmp(&other.1))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The [`MAX_RESULTS`] newest matches, and how many there were in all: a pattern that
/// matches a million files keeps a hundred.
#[derive(Debug, Default)]
struct Newest {
    newest: BinaryHeap<Ranked>,
    matched: usize,
}

impl Newest {
    fn add(&mut self, found: Ranked) {
        self.matched += 1;
        self.newest.push(found);
        if self.newest.len() > MAX_RESULTS {
            self.newest.pop();
        }
    }
}

/// What a walk has found so far: shared by the walker threads and the call that waits on
/// them, which takes what is there when the time limit passes.
struct Found {
    /// The newest matches, added as each is met (not when a walker thread ends: one stuck
    /// in a directory listing never ends).
    newest: Mutex<Newest>,
    /// When the walk stops, with what it found.
    deadline: Instant,
    /// The time limit, for the note.
    limit: Duration,
    /// Set when the limit stopped the walk.
    timed_out: AtomicBool,
    /// Directories the walk could not list, with why.
    unreadable: Mutex<NotSearched>,
    /// Why nothing matched, when the pattern says ([`unmatchable`]).
    unmatchable: Mutex<Option<UnmatchableGlob>>,
}

impl Found {
    fn new(limit: Duration) -> Self {
        let now = Instant::now();
        Self {
            newest: Mutex::default(),
            // A limit past what an `Instant` holds is the default one.
            deadline: now.checked_add(limit).unwrap_or(now + DEFAULT_TIMEOUT),
            limit,
            timed_out: AtomicBool::new(false),
            unreadable: Mutex::default(),
            unmatchable: Mutex::default(),
        }
    }

    /// Whether the time limit has passed (and the walk must stop); notes that it did.
    fn past_deadline(&self) -> bool {
        let past = Instant::now() >= self.deadline;
        if past {
            self.timed_out.store(true, Ordering::Relaxed);
        }
        past
    }
}

struct CollectorBuilder<'a> {
    found: &'a Found,
    cancel: CancellationToken,
    /// The walk's root.
    root: &'a Path,
    /// The working directory, which the paths of what could not be read are shown from.
    cwd: &'a Path,
    /// The pattern's fixed directories ([`fixed_dirs`]).
    fixed: PathBuf,
}

impl<'a> ParallelVisitorBuilder<'a> for CollectorBuilder<'a> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 'a> {
        Box::new(Collector {
            found: self.found,
            cancel: self.cancel.clone(),
            seen: 0,
            root: self.root,
            cwd: self.cwd,
            fixed: self.fixed.clone(),
        })
    }
}

/// One walker thread's visitor: adds each match to what the walk found, and each directory
/// it could not list where the pattern could match to what it could not read.
struct Collector<'a> {
    found: &'a Found,
    cancel: CancellationToken,
    seen: u32,
    root: &'a Path,
    cwd: &'a Path,
    fixed: PathBuf,
}

impl Collector<'_> {
    /// Notes a walk error: a directory that could not be listed (Grep's words for it), when
    /// the pattern could match below it. (An ignore file that does not parse is no
    /// directory left unlisted.)
    fn not_read(&self, error: &ignore::Error) {
        if error.io_error().is_none() {
            return;
        }
        let reachable = error_path(error)
            .and_then(|path| path.strip_prefix(self.root).ok())
            .is_none_or(|below| below.starts_with(&self.fixed) || self.fixed.starts_with(below));
        if reachable {
            self.found
                .unreadable
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .add(walk_error_text(error, self.cwd));
        }
    }
}

/// The path a walk error is about, if it names one.
fn error_path(error: &ignore::Error) -> Option<&Path> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        _ => None,
    }
}

impl ParallelVisitor for Collector<'_> {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> WalkState {
        self.seen = self.seen.wrapping_add(1);
        if self.seen.is_multiple_of(128)
            && (self.found.past_deadline() || self.cancel.is_cancelled())
        {
            return WalkState::Quit;
        }
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                self.not_read(&e);
                return WalkState::Continue;
            }
        };
        if entry.file_type().is_some_and(|t| t.is_file()) {
            let mtime = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            self.found
                .newest
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .add(Ranked(mtime, entry.into_path()));
        }
        WalkState::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadline::MAX_LEFT_BEHIND;

    /// Matches added by several walker threads at once keep the [`MAX_RESULTS`] newest, in
    /// order (ties in time broken by path), and count every match.
    #[test]
    fn the_newest_matches_are_kept_in_order_across_threads() {
        let at = |secs: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
        // 1,000 matches over four threads, with ties in time broken by path.
        let all: Vec<(u64, String)> = (0..1000_u64)
            .map(|i| ((i * 7919) % 300, format!("f{:04}", (i * 31) % 1000)))
            .collect();
        let found: Mutex<Newest> = Mutex::default();
        std::thread::scope(|s| {
            for part in all.chunks(250) {
                let found = &found;
                s.spawn(move || {
                    for (t, p) in part {
                        let mut newest = found.lock().unwrap();
                        newest.add(Ranked(at(*t), PathBuf::from(p)));
                        assert!(newest.newest.len() <= MAX_RESULTS);
                    }
                });
            }
        });
        let found = found.into_inner().unwrap();
        assert_eq!(found.matched, 1000);
        let mut expected = all.clone();
        expected.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let kept: Vec<(u64, String)> = found
            .newest
            .into_sorted_vec()
            .into_iter()
            .map(|Ranked(t, p)| {
                let secs = t.duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs();
                (secs, p.display().to_string())
            })
            .collect();
        assert_eq!(kept, expected[..MAX_RESULTS]);
    }

    #[test]
    fn switches_follow_claude_code_env_vars() {
        let none = Switches::from_lookup(|_| None);
        assert_eq!(
            none,
            Switches {
                honour_ignore: false,
                hidden: true
            }
        );
        let off = Switches::from_lookup(|_| Some("false".to_owned()));
        assert_eq!(
            off,
            Switches {
                honour_ignore: true,
                hidden: false
            }
        );
    }

    #[test]
    fn switches_are_on_only_for_truthy_values() {
        // Claude Code reads both with isEnvTruthy ("1", "true", "yes", "on", any case); an
        // empty value is the default.
        for on in ["1", "true", "YES", " On "] {
            assert_eq!(
                Switches::from_lookup(|_| Some(on.to_owned())),
                Switches {
                    honour_ignore: false,
                    hidden: true
                },
                "{on}"
            );
        }
        for off in ["0", "false", "banana", "2", "enabled"] {
            assert_eq!(
                Switches::from_lookup(|_| Some(off.to_owned())),
                Switches {
                    honour_ignore: true,
                    hidden: false
                },
                "{off}"
            );
        }
        assert_eq!(
            Switches::from_lookup(|_| Some(String::new())),
            Switches::from_lookup(|_| None)
        );
    }

    #[test]
    fn rgignore_is_honoured_with_the_ignore_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // Directories: a file the pattern matches is listed whatever the ignore files say,
        // as with `rg --files --glob`.
        std::fs::create_dir_all(root.join("gen")).unwrap();
        std::fs::create_dir_all(root.join("sub/deep")).unwrap();
        std::fs::write(root.join(".rgignore"), "gen/\n").unwrap();
        std::fs::write(root.join("sub/.rgignore"), "deep/\n").unwrap();
        std::fs::write(root.join("gen/out.txt"), "").unwrap();
        std::fs::write(root.join("sub/deep/x.txt"), "").unwrap();
        std::fs::write(root.join("sub/keep.txt"), "").unwrap();
        std::fs::write(root.join("a.txt"), "").unwrap();
        let ctx = ToolUseContext::new(root);
        let list = |honour_ignore| {
            let switches = Switches {
                honour_ignore,
                hidden: true,
            };
            let mut names = glob_blocking(root, "*.txt", "*.txt", &ctx, DEFAULT_TIMEOUT, switches)
                .unwrap()
                .filenames;
            names.sort();
            names
        };
        assert_eq!(list(true), ["a.txt", "sub/keep.txt"]);
        assert_eq!(
            list(false),
            ["a.txt", "gen/out.txt", "sub/deep/x.txt", "sub/keep.txt"]
        );
    }

    #[test]
    fn switches_change_what_is_listed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        std::fs::write(root.join("build/out.txt"), "").unwrap();
        std::fs::write(root.join(".env.txt"), "").unwrap();
        std::fs::create_dir_all(root.join(".cfg")).unwrap();
        std::fs::write(root.join(".cfg/in.txt"), "").unwrap();
        std::fs::write(root.join("a.txt"), "").unwrap();
        std::fs::write(root.join(".git/x.txt"), "").unwrap();
        let ctx = ToolUseContext::new(root);
        let list = |switches| {
            let mut names = glob_blocking(root, "*.txt", "*.txt", &ctx, DEFAULT_TIMEOUT, switches)
                .unwrap()
                .filenames;
            names.sort();
            names
        };
        assert_eq!(
            list(Switches {
                honour_ignore: false,
                hidden: true
            }),
            [".cfg/in.txt", ".env.txt", "a.txt", "build/out.txt"]
        );
        assert_eq!(
            list(Switches {
                honour_ignore: true,
                hidden: false
            }),
            [".env.txt", "a.txt"]
        );
        // As with `rg --glob`, a name the pattern matches is listed even when hidden; hidden
        // directories are skipped. VCS directories are never listed.
        // A walk under 128 entries finishes before it looks at the time (see
        // `a_timed_out_glob_says_it_timed_out` for one that does not).
        let out = walk_here(
            root,
            "*.txt",
            &ctx,
            Duration::ZERO,
            Switches::from_lookup(|_| None),
        );
        assert_eq!(out.timed_out_after_ms, None);
    }

    /// With the switches off, a hidden or ignored directory is not entered for a pattern
    /// that names only paths inside it (`**/*.txt`, `build/**`), and is entered for one that
    /// matches the directory itself (`**/*`, `**`, `*`), as `rg --files -g '**/*'` enters
    /// it: what docs/agent.md says of `CLAUDE_CODE_GLOB_HIDDEN` and
    /// `CLAUDE_CODE_GLOB_NO_IGNORE`. Found by review: the docs said such a directory was
    /// not searched, even one the pattern names.
    #[test]
    fn a_pattern_that_matches_a_directory_enters_it_whatever_the_switches() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        // A repository: its `.gitignore` is read.
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join(".hidden")).unwrap();
        std::fs::write(root.join(".hidden/c.txt"), "").unwrap();
        std::fs::create_dir_all(root.join("build")).unwrap();
        std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
        std::fs::write(root.join("build/b.txt"), "").unwrap();
        std::fs::write(root.join("a.txt"), "").unwrap();
        let ctx = ToolUseContext::new(root);
        let list = |pattern: &str| {
            let mut names = glob_blocking(
                root,
                pattern,
                pattern,
                &ctx,
                DEFAULT_TIMEOUT,
                Switches {
                    honour_ignore: true,
                    hidden: false,
                },
            )
            .unwrap()
            .filenames;
            names.sort();
            names
        };
        for pattern in ["**/*", "**", "*"] {
            assert_eq!(
                list(pattern),
                [".gitignore", ".hidden/c.txt", "a.txt", "build/b.txt"],
                "{pattern}"
            );
        }
        assert_eq!(list("**/*.txt"), ["a.txt"]);
        assert!(list("build/**").is_empty());
        assert!(list(".hidden/*").is_empty());
    }

    /// `src/a.rs`, `src/lib/b.rs` and `top.rs`, beside `deep/`: 40 directories holding an
    /// `f00.txt` each, and 2,000 empty directories in `deep/x/y/`. The walk hands a visitor
    /// only the files a pattern matches, and every directory: one that enters `deep/x/y/`
    /// meets 2,000 entries more, over 128 for at least one walker thread (at most 12).
    fn deep_tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/lib")).unwrap();
        std::fs::write(root.join("src/a.rs"), "").unwrap();
        std::fs::write(root.join("src/lib/b.rs"), "").unwrap();
        std::fs::write(root.join("top.rs"), "").unwrap();
        for d in 0..40 {
            let sub = root.join(format!("deep/d{d:02}"));
            std::fs::create_dir_all(&sub).unwrap();
            std::fs::write(sub.join("f00.txt"), "").unwrap();
        }
        for d in 0..2000 {
            std::fs::create_dir_all(root.join(format!("deep/x/y/d{d:04}"))).unwrap();
        }
        dir
    }

    /// The walk alone, on this thread and to its end (the call would answer at once at a
    /// limit of zero): with a limit of zero it stops at the 128th entry a walker thread
    /// meets.
    fn walk_here(
        root: &Path,
        pattern: &str,
        ctx: &ToolUseContext,
        limit: Duration,
        switches: Switches,
    ) -> GlobOutput {
        let plan = Walk {
            root: root.to_path_buf(),
            pattern: pattern.to_owned(),
            raw_pattern: pattern.to_owned(),
            switches,
        };
        let found = Arc::new(Found::new(limit));
        walk(&plan, ctx, &found).unwrap();
        finish(&found, ctx, Instant::now())
    }

    /// A pattern without `**` whose parts are anchored (`src/*.rs`, `/*`) walks no deeper
    /// than it can match. With a limit of zero the walk stops at the 128th entry a walker
    /// thread meets, which the bounded walk (under 60 entries) never reaches: it finishes,
    /// and finds what the pattern names.
    #[test]
    fn an_anchored_pattern_walks_no_deeper_than_it_can_match() {
        let dir = deep_tree();
        let root = dir.path();
        let ctx = ToolUseContext::new(root);
        let switches = Switches::from_lookup(|_| None);
        for (pattern, expected) in [
            ("src/*.rs", vec!["src/a.rs"]),
            ("/*.rs", vec!["top.rs"]),
            ("src/*/*.rs", vec!["src/lib/b.rs"]),
            ("src/{a,b}.rs", vec!["src/a.rs"]),
        ] {
            let out = walk_here(root, pattern, &ctx, Duration::ZERO, switches);
            assert_eq!(
                out.timed_out_after_ms, None,
                "{pattern}: the walk went deep"
            );
            assert_eq!(out.filenames, expected, "{pattern}");
        }
        // With time to finish, the bounded walk finds what the pattern names.
        let f00: Vec<String> = (0..40).map(|d| format!("deep/d{d:02}/f00.txt")).collect();
        for (pattern, expected) in [
            ("deep/*/f00.txt", f00),
            ("*/*", vec!["src/a.rs".to_owned()]),
            ("src/*/*", vec!["src/lib/b.rs".to_owned()]),
        ] {
            let out =
                glob_blocking(root, pattern, pattern, &ctx, DEFAULT_TIMEOUT, switches).unwrap();
            let mut found = out.filenames;
            found.sort();
            assert_eq!(found, expected, "{pattern}");
        }
        assert_eq!(walk_depth("*.rs"), None);
        assert_eq!(walk_depth("src/**/x.rs"), None);
        assert_eq!(walk_depth("{a/b,c}/*.rs"), None);
        assert_eq!(walk_depth("/*"), Some(1));
    }

    /// A search stopped by its time limit says so, in words of its own: not the note of a
    /// result cut at 100 files (it found fewer), not a bare "No files found".
    #[test]
    fn a_timed_out_glob_says_it_timed_out() {
        let dir = deep_tree();
        let root = dir.path();
        let ctx = ToolUseContext::new(root);
        let switches = Switches::from_lookup(|_| None);
        let out = glob_blocking(
            root,
            "**/*.none",
            "**/*.none",
            &ctx,
            Duration::ZERO,
            switches,
        )
        .unwrap();
        assert_eq!(out.timed_out_after_ms, Some(0));
        assert!(!out.truncated);
        let ToolResultContent::Text(text) = Glob.to_content(&out) else {
            panic!("text expected");
        };
        assert_eq!(
            text,
            "No files found\n(Search timed out after 0 ms: the results may be incomplete. \
             Use a more specific path or pattern.)"
        );
        let out = GlobOutput {
            duration_ms: 20_000,
            num_files: 1,
            filenames: vec!["a.rs".to_owned()],
            truncated: false,
            timed_out_after_ms: Some(millis(DEFAULT_TIMEOUT)),
            unreadable: Vec::new(),
            unreadable_count: 0,
            unmatchable: None,
        };
        let ToolResultContent::Text(text) = Glob.to_content(&out) else {
            panic!("text expected");
        };
        assert!(text.ends_with("(Search timed out after 20 s: the results may be incomplete. Use a more specific path or pattern.)"), "{text}");
        assert!(!text.contains(TRUNCATED_NOTE), "{text}");
    }

    /// `f0.txt`, `f1.txt` and `f2.txt`, with the walk plan of `*.txt` in it.
    fn three_files() -> (tempfile::TempDir, ToolUseContext) {
        let dir = tempfile::tempdir().unwrap();
        for f in 0..3 {
            std::fs::write(dir.path().join(format!("f{f}.txt")), "").unwrap();
        }
        let ctx = ToolUseContext::new(dir.path());
        (dir, ctx)
    }

    fn txt_plan(ctx: &ToolUseContext) -> Walk {
        Walk {
            root: ctx.cwd().to_path_buf(),
            pattern: "*.txt".to_owned(),
            raw_pattern: "*.txt".to_owned(),
            switches: Switches::from_lookup(|_| None),
        }
    }

    /// `call` on a thread of its own, waited for at most `wait`: a call that does not
    /// return in time fails the test instead of hanging it.
    fn within<T: Send + 'static>(wait: Duration, call: impl FnOnce() -> T + Send + 'static) -> T {
        let (done, result) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(call());
        });
        result
            .recv_timeout(wait)
            .unwrap_or_else(|_| panic!("the call did not return within {wait:?}"))
    }

    /// A walk whose directory listing never returns (a directory on a hung network mount:
    /// here the walk lists the tree, then blocks as such a `readdir` would, until the test
    /// ends or for 10 s) answers at its time limit, with the files it found and the
    /// timed-out note, instead of waiting for the listing; the thread stuck in it is left
    /// behind, counted as such until the listing returns.
    #[test]
    fn a_glob_stuck_in_a_listing_answers_at_the_limit_with_what_it_found() {
        static STUCK: deadline::Runs = deadline::Runs::new();
        let (_dir, ctx) = three_files();
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        let limit = Duration::from_millis(300);
        let started = Instant::now();
        let out = {
            let ctx = ctx.clone();
            within(Duration::from_secs(5), move || {
                glob_with(
                    txt_plan(&ctx),
                    &ctx,
                    limit,
                    &STUCK,
                    move |plan, ctx, found| {
                        walk(plan, ctx, found)?;
                        // The listing that does not return (until the test ends, or 10 s).
                        let _ = stuck.recv_timeout(Duration::from_secs(10));
                        Ok(())
                    },
                )
            })
        }
        .unwrap();
        let took = started.elapsed();
        assert!(took >= limit, "answered before the limit: {took:?}");
        let mut names = out.filenames.clone();
        names.sort();
        assert_eq!(names, ["f0.txt", "f1.txt", "f2.txt"]);
        assert_eq!(out.timed_out_after_ms, Some(300));
        let ToolResultContent::Text(text) = Glob.to_content(&out) else {
            panic!("text expected");
        };
        assert!(
            text.ends_with(
                "\n(Search timed out after 300 ms: the results may be incomplete. Use a more \
                 specific path or pattern.)"
            ),
            "{text}"
        );
        // The stuck walk is counted as left behind.
        assert_eq!(STUCK.left_behind(), 1);
        // A walk that ends in time says nothing of the kind, and is not left behind.
        let out = glob_with(txt_plan(&ctx), &ctx, DEFAULT_TIMEOUT, &STUCK, walk).unwrap();
        assert_eq!((out.num_files, out.timed_out_after_ms), (3, None));
        assert_eq!(STUCK.left_behind(), 1);
        // The listing returns: the walk ends, and no longer counts.
        drop(release);
        let waited = Instant::now();
        while STUCK.left_behind() > 0 {
            assert!(
                waited.elapsed() < Duration::from_secs(10),
                "the walk left behind never ended"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Globs left behind at their limit (stuck in a listing that never returns) are counted
    /// until they end: with [`MAX_LEFT_BEHIND`] of them still running, a new Glob is
    /// refused at once, saying why, instead of leaving more threads behind; once they end,
    /// the count is back to zero and Globs run again. A Glob that ends in time is not
    /// counted.
    #[test]
    fn globs_left_behind_are_capped_and_counted_until_they_end() {
        static STUCK: deadline::Runs = deadline::Runs::new();
        let (_dir, ctx) = three_files();
        let limit = Duration::from_millis(20);
        let out = glob_with(txt_plan(&ctx), &ctx, DEFAULT_TIMEOUT, &STUCK, walk).unwrap();
        assert_eq!(out.num_files, 3);
        assert_eq!(STUCK.left_behind(), 0);
        let mut releases = Vec::new();
        for n in 0..MAX_LEFT_BEHIND {
            let (release, stuck) = std::sync::mpsc::channel::<()>();
            releases.push(release);
            let ctx = ctx.clone();
            let out = within(Duration::from_secs(5), move || {
                glob_with(
                    txt_plan(&ctx),
                    &ctx,
                    limit,
                    &STUCK,
                    move |plan, ctx, found| {
                        walk(plan, ctx, found)?;
                        // The listing that does not return (until released, or 30 s).
                        let _ = stuck.recv_timeout(Duration::from_secs(30));
                        Ok(())
                    },
                )
            })
            .unwrap();
            assert_eq!((out.num_files, out.timed_out_after_ms), (3, Some(20)));
            assert_eq!(STUCK.left_behind(), n + 1);
        }
        // Refused without walking: its work never starts. (Timed generously: a loaded
        // machine may take long, but not as long as the walks stuck for 30 s.)
        let walked = Arc::new(AtomicBool::new(false));
        let started = Instant::now();
        let err = {
            let walked = Arc::clone(&walked);
            glob_with(
                txt_plan(&ctx),
                &ctx,
                limit,
                &STUCK,
                move |plan, ctx, found| {
                    walked.store(true, Ordering::SeqCst);
                    walk(plan, ctx, found)
                },
            )
        }
        .unwrap_err()
        .to_string();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert!(!walked.load(Ordering::SeqCst), "the refused Glob walked");
        assert!(
            err.contains(&format!(
                "Glob cannot search now: {MAX_LEFT_BEHIND} earlier searches are still stuck \
                 past their time limit"
            )) && err.contains("try again later"),
            "{err}"
        );
        drop(releases);
        let waited = Instant::now();
        while STUCK.left_behind() > 0 {
            assert!(
                waited.elapsed() < Duration::from_secs(10),
                "they never ended"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = glob_with(txt_plan(&ctx), &ctx, DEFAULT_TIMEOUT, &STUCK, walk).unwrap();
        assert_eq!(out.num_files, 3);
        assert_eq!(STUCK.left_behind(), 0);
    }

    /// A Glob whose root cannot be looked at in time (a `stat` or a listing that never
    /// returns, a directory on a hung network mount: here a check that blocks until the
    /// test ends, or 10 s) is refused by `validate_input` at its time limit, saying it
    /// could not be read within it, instead of waiting on the check; the thread
    /// stuck in it is counted as a walk left behind until the check returns. A check that
    /// answers in time is as before.
    #[test]
    fn a_root_whose_check_never_returns_is_refused_at_the_limit() {
        static STUCK: deadline::Runs = deadline::Runs::new();
        let (dir, ctx) = three_files();
        let input = GlobInput {
            pattern: "*.txt".to_owned(),
            path: Some(dir.path().display().to_string()),
        };
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        let limit = Duration::from_millis(300);
        let started = Instant::now();
        let err = {
            let (input, ctx) = (input.clone(), ctx.clone());
            within(Duration::from_secs(5), move || {
                validate_with(&input, &ctx, limit, &STUCK, move |root, ctx| {
                    // The `stat` or listing that does not return (until released, or 10 s).
                    let _ = stuck.recv_timeout(Duration::from_secs(10));
                    check_dir(root, ctx)
                })
            })
        }
        .unwrap_err();
        let took = started.elapsed();
        assert!(took >= limit, "answered before the limit: {took:?}");
        assert_eq!(
            err.message,
            format!(
                "Cannot search {}: it could not be read within 300 ms (it may be on a hung \
                 network mount). Leave it out of the search, or try again later.",
                dir.path().display()
            )
        );
        assert_eq!(STUCK.left_behind(), 1);
        // A check that answers in time: the input is valid, and nothing more is left behind.
        validate_with(&input, &ctx, DEFAULT_TIMEOUT, &STUCK, check_dir).unwrap();
        assert_eq!(STUCK.left_behind(), 1);
        // So is its own refusal, as it says it.
        let missing = GlobInput {
            pattern: "*.txt".to_owned(),
            path: Some(dir.path().join("gone").display().to_string()),
        };
        let err = validate_with(&missing, &ctx, DEFAULT_TIMEOUT, &STUCK, check_dir).unwrap_err();
        assert!(
            err.message.starts_with("Directory does not exist"),
            "{}",
            err.message
        );
        drop(release);
        let waited = Instant::now();
        while STUCK.left_behind() > 0 {
            assert!(
                waited.elapsed() < Duration::from_secs(10),
                "the check left behind never ended"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// A Glob cancelled while its root is looked at is answered by `validate_input` with a
    /// refusal that says the call was cancelled and nothing was searched (a validation
    /// error cannot carry a cancellation), not with the bare interrupt text as if the input
    /// were wrong; the same failure in `call` is the tool's cancelled error.
    #[test]
    fn a_cancelled_look_at_the_root_says_the_call_was_cancelled() {
        static RUNS: deadline::Runs = deadline::Runs::new();
        let (dir, ctx) = three_files();
        ctx.cancellation().cancel();
        let input = GlobInput {
            pattern: "*.txt".to_owned(),
            path: Some(dir.path().display().to_string()),
        };
        let err = validate_with(&input, &ctx, DEFAULT_TIMEOUT, &RUNS, check_dir).unwrap_err();
        assert!(
            err.message.contains("was cancelled") && err.message.contains("nothing was searched"),
            "{}",
            err.message
        );
        let failed = look_at_root(
            job(&RUNS),
            dir.path(),
            &ctx,
            Instant::now(),
            DEFAULT_TIMEOUT,
            check_dir,
        )
        .unwrap_err();
        assert!(failed.into_tool_error().is_cancelled());
    }

    /// A Glob whose time limit passes while all of its searches at a time are in use (held
    /// by walks still within their own limit) is refused as busy, in Glob's words, not
    /// told its root "could not be read" as if the root hung.
    #[test]
    fn a_root_look_that_never_gets_a_slot_is_refused_as_busy() {
        static FULL: deadline::Runs = deadline::Runs::with(MAX_LEFT_BEHIND, 0);
        let (dir, ctx) = three_files();
        let input = GlobInput {
            pattern: "*.txt".to_owned(),
            path: Some(dir.path().display().to_string()),
        };
        let err =
            validate_with(&input, &ctx, Duration::from_millis(100), &FULL, check_dir).unwrap_err();
        assert_eq!(err.message, job(&FULL).full(0));
        assert!(err.message.starts_with(&format!(
            "Glob cannot search now: its {MAX_LEFT_BEHIND} searches at a time are all in use"
        )));
    }

    #[test]
    fn absolute_patterns_split_at_the_first_glob() {
        assert_eq!(
            split_absolute("/a/b/**/*.rs"),
            (PathBuf::from("/a/b"), "/**/*.rs".to_owned())
        );
        assert_eq!(
            split_absolute("/a/b/c.txt"),
            (PathBuf::from("/a/b"), "/c.txt".to_owned())
        );
        assert_eq!(
            split_absolute("/*.md"),
            (PathBuf::from("/"), "/*.md".to_owned())
        );
    }
}
