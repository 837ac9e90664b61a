//! The `Glob` tool: file paths matching a glob pattern, newest first, on ripgrep's `ignore`
//! walker with its glob (override) semantics.

use std::borrow::Cow;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use ignore::overrides::OverrideBuilder;
use ignore::{ParallelVisitor, ParallelVisitorBuilder, WalkState};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    CancellationToken, FileAccess, MaxResultSize, PermissionSubject, ProgressSender, SearchOrRead,
    ToolError, ToolResult, ToolResultContent, ToolUseContext, TypedTool, ValidationError,
};

use crate::fsutil::{self, reject_null_bytes};

/// At most this many paths are returned.
pub const MAX_RESULTS: usize = 100;
/// How long a search may run before it stops with what it found.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);
/// Directories of version-control systems, never listed.
pub(crate) const VCS_DIRS: &[&str] = &[".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];

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

/// Splits an absolute pattern into its literal directory prefix, with `.` and `..` collapsed
/// lexically (`/x/../proj/*.rs` walks `/proj`, as `/proj/*.rs` does), and the glob below it.
fn split_absolute(pattern: &str) -> (PathBuf, String) {
    let parts: Vec<&str> = pattern.split('/').collect();
    let first_glob = parts
        .iter()
        .position(|p| p.contains(['*', '?', '[', '{']))
        .unwrap_or(parts.len());
    let (dir_parts, glob_parts) = if first_glob == parts.len() {
        (&parts[..parts.len() - 1], &parts[parts.len() - 1..])
    } else {
        parts.split_at(first_glob)
    };
    let dir = format!(
        "/{}",
        dir_parts
            .iter()
            .filter(|p| !p.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("/")
    );
    (
        tool_core::normalize_lexically(Path::new(&dir)),
        format!("/{}", glob_parts.join("/")),
    )
}

/// Whether a glob is anchored at the directory it is matched in (gitignore's rule, which
/// ripgrep's globs follow): it has a `/` before its last character. `*.rs` is not, and
/// matches at any depth; `src/*.rs` and `/*.rs` are.
fn is_anchored(pattern: &str) -> bool {
    pattern.trim_end_matches('/').contains('/')
}

/// `pattern` without its `.` parts (`./src/*.rs`, `src/./*.rs`), which no walked path has,
/// so that the pattern matched nothing; it names what it names in a shell. An anchored
/// pattern stays anchored (`./*` becomes `/*`, the files at the top, not `*`, every file),
/// and a leading `!` (a Grep `glob` that excludes) stays. A pattern of nothing but `.`
/// parts is left as it is.
pub(crate) fn without_dot_parts(pattern: &str) -> Cow<'_, str> {
    let (bang, body) = match pattern.strip_prefix('!') {
        Some(body) => ("!", body),
        None => ("", pattern),
    };
    if !body.split('/').any(|part| part == ".") {
        return Cow::Borrowed(pattern);
    }
    let kept = body
        .split('/')
        .filter(|part| *part != ".")
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

/// `pattern` with a leading `~/` replaced by the home directory (as a `path` of `~` is
/// expanded); `None` for any other pattern, or without a home directory (whose name is not
/// UTF-8: a pattern is text).
fn home_pattern(pattern: &str, home: Option<&Path>) -> Option<String> {
    let rest = pattern.strip_prefix("~/")?;
    let home = home?.to_str()?.trim_end_matches('/');
    Some(format!("{home}/{rest}"))
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
    let base = match input
        .path
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        Some(p) => ctx.resolve_path(p),
        None => ctx.cwd().to_path_buf(),
    };
    let pattern = home_pattern(&input.pattern, ctx.home());
    let pattern = pattern.as_deref().unwrap_or(&input.pattern);
    let (root, glob) = if pattern.starts_with('/') {
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
    Some((
        tool_core::normalize_lexically(&dir),
        format!("/{}", glob.join("/")),
    ))
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
                "Directory does not exist: {}. Note: your current working directory is {}.",
                root.display(),
                ctx.cwd().display()
            ),
            1,
        )),
        Err(e) => Err(ValidationError::with_code(
            format!("Cannot search {}: {e}", root.display()),
            1,
        )),
    }
}

/// The permission of a Glob or Grep call whose search root has no permission subject (no
/// `path`, or a relative one): a read of that root. Inside a working directory it is allowed,
/// as Claude Code allows reads of the working directories; anything else (a root outside, a
/// pattern whose `..` climbs out) stays with the rules, which ask.
pub(crate) fn relative_search_permission(
    path: Option<&str>,
    pattern: &str,
    ctx: &ToolUseContext,
) -> tool_core::PermissionResult {
    let mut root = ctx.resolve_path(path.unwrap_or("."));
    if let Some((dir, _)) = climbing(&root, pattern) {
        root = dir;
    }
    // Where the walk goes: a link on the way (`src/../out_link/*`) leads where it leads.
    let walked = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
    if ctx.working_directories().iter().any(|d| {
        root.starts_with(d)
            && (walked.starts_with(d)
                || std::fs::canonicalize(d).is_ok_and(|d| walked.starts_with(d)))
    }) {
        tool_core::PermissionResult::allow()
    } else {
        tool_core::PermissionResult::passthrough()
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
        // A `~/` pattern is shown as the absolute one it is searched as, so that hooks and
        // the permission rules judge the home directory it walks.
        let current = observed.as_ref().unwrap_or(input);
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
    fn permission_subject(&self, input: &GlobInput) -> Option<PermissionSubject> {
        let home = input
            .pattern
            .starts_with("~/")
            .then(|| fsutil::subject_path("~"))
            .flatten();
        let expanded = home_pattern(&input.pattern, home.as_deref());
        let pattern = expanded.as_deref().unwrap_or(&input.pattern);
        let path = if pattern.starts_with('/') {
            fsutil::subject_path(&split_absolute(pattern).0.display().to_string())?
        } else {
            // No `path`: the cwd, which the permission engine resolves (`.`).
            let base = match input.path.as_deref().map(str::trim) {
                None | Some("") => PathBuf::from("."),
                Some(path) => fsutil::subject_path(path)?,
            };
            climbing(&base, &input.pattern).map_or(base, |(dir, _)| dir)
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
        let (root, pattern) = resolve_root(input, ctx)?;
        let raw = input.pattern.clone();
        let ctx = ctx.clone();
        // The directory check touches the disk (a hung mount stalls it): off the async
        // workers.
        fsutil::blocking_validation(move || {
            check_dir(&root, &ctx)?;
            OverrideBuilder::new(&root)
                .add(&pattern)
                .map(|_| ())
                .map_err(|e| ValidationError::new(format!("Invalid glob pattern `{raw}`: {e}")))
        })
        .await
    }

    async fn check_permissions(
        &self,
        input: &GlobInput,
        ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        if self.permission_subject(input).is_some() {
            // An absolute root: the engine's path rules decide.
            return tool_core::PermissionResult::passthrough();
        }
        relative_search_permission(input.path.as_deref(), &input.pattern, ctx)
    }
    async fn call(
        &self,
        input: GlobInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<GlobOutput>, ToolError> {
        let (root, pattern) = resolve_root(&input, &ctx).map_err(|e| ToolError::msg(e.message))?;
        let out = fsutil::blocking(move || {
            check_dir(&root, &ctx).map_err(|e| ToolError::msg(e.message))?;
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
        ToolResultContent::Text(text)
    }
}

fn glob_blocking(
    root: &Path,
    pattern: &str,
    raw_pattern: &str,
    ctx: &ToolUseContext,
    timeout: Duration,
    switches: Switches,
) -> Result<GlobOutput, ToolError> {
    let started = Instant::now();
    let mut overrides = OverrideBuilder::new(root);
    overrides
        .add(pattern)
        .map_err(|e| ToolError::msg(format!("Invalid glob pattern `{raw_pattern}`: {e}")))?;
    let overrides = overrides
        .build()
        .map_err(|e| ToolError::msg(format!("Invalid glob pattern `{raw_pattern}`: {e}")))?;
    let Switches {
        honour_ignore,
        hidden,
    } = switches;
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
    let found: Found = Mutex::default();
    let timed_out = AtomicBool::new(false);
    let mut builder = CollectorBuilder {
        found: &found,
        timed_out: &timed_out,
        started,
        timeout,
        cancel: ctx.cancellation().clone(),
    };
    walker.build_parallel().visit(&mut builder);
    if ctx.is_cancelled() {
        return Err(ToolError::Cancelled(None));
    }
    let found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    let truncated = found.matched > MAX_RESULTS;
    let timed_out_after_ms = timed_out.into_inner().then(|| millis(timeout));
    let filenames: Vec<String> = found
        .newest
        .into_sorted_vec()
        .iter()
        .map(|Ranked(_, p)| fsutil::display_path(p, ctx.cwd()))
        .collect();
    Ok(GlobOutput {
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        num_files: filenames.len(),
        filenames,
        truncated,
        timed_out_after_ms,
    })
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

    /// Takes in what another walker thread found.
    fn merge(&mut self, other: Newest) {
        self.matched += other.matched - other.newest.len();
        for ranked in other.newest {
            self.add(ranked);
        }
    }
}

type Found = Mutex<Newest>;

struct CollectorBuilder<'a> {
    found: &'a Found,
    timed_out: &'a AtomicBool,
    started: Instant,
    timeout: Duration,
    cancel: CancellationToken,
}

impl<'a> ParallelVisitorBuilder<'a> for CollectorBuilder<'a> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 'a> {
        Box::new(Collector {
            found: self.found,
            timed_out: self.timed_out,
            started: self.started,
            timeout: self.timeout,
            cancel: self.cancel.clone(),
            local: Newest::default(),
            seen: 0,
        })
    }
}

/// One walker thread's visitor: keeps its newest matches, hands them over when dropped.
struct Collector<'a> {
    found: &'a Found,
    timed_out: &'a AtomicBool,
    started: Instant,
    timeout: Duration,
    cancel: CancellationToken,
    local: Newest,
    seen: u32,
}

impl ParallelVisitor for Collector<'_> {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> WalkState {
        self.seen = self.seen.wrapping_add(1);
        if self.seen.is_multiple_of(128)
            && (self.started.elapsed() > self.timeout || self.cancel.is_cancelled())
        {
            self.timed_out.store(true, Ordering::Relaxed);
            return WalkState::Quit;
        }
        if let Ok(entry) = entry
            && entry.file_type().is_some_and(|t| t.is_file())
        {
            let mtime = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            self.local.add(Ranked(mtime, entry.into_path()));
        }
        WalkState::Continue
    }
}

impl Drop for Collector<'_> {
    fn drop(&mut self) {
        let local = std::mem::take(&mut self.local);
        self.found
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .merge(local);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_matches_are_kept_in_order_across_threads() {
        let at = |secs: u64| SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
        // 1,000 matches over four "threads", with ties in time broken by path.
        let all: Vec<(u64, String)> = (0..1000_u64)
            .map(|i| ((i * 7919) % 300, format!("f{:04}", (i * 31) % 1000)))
            .collect();
        let found: Found = Mutex::default();
        for part in all.chunks(250) {
            let mut local = Newest::default();
            for (t, p) in part {
                local.add(Ranked(at(*t), PathBuf::from(p)));
            }
            assert!(local.newest.len() <= MAX_RESULTS);
            found.lock().unwrap().merge(local);
        }
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
        let out = glob_blocking(
            root,
            "*.txt",
            "*.txt",
            &ctx,
            Duration::ZERO,
            Switches::from_lookup(|_| None),
        );
        assert!(out.is_ok());
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
            let out =
                glob_blocking(root, pattern, pattern, &ctx, Duration::ZERO, switches).unwrap();
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
        };
        let ToolResultContent::Text(text) = Glob.to_content(&out) else {
            panic!("text expected");
        };
        assert!(text.ends_with("(Search timed out after 20 s: the results may be incomplete. Use a more specific path or pattern.)"), "{text}");
        assert!(!text.contains(TRUNCATED_NOTE), "{text}");
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
