//! The `Grep` tool: ripgrep's search, in-process, on ripgrep's own crates (`grep-regex`,
//! `grep-searcher`, `grep-printer`, `ignore`), with ripgrep's output format.
//!
//! The search runs as Claude Code runs `rg`: hidden files included, `.gitignore` honoured,
//! version-control directories skipped, lines over 500 columns elided
//! (`--hidden --glob '!.git' ... --max-columns 500`).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use grep_matcher::Matcher as _;
use grep_printer::{Standard, StandardBuilder};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::overrides::OverrideBuilder;
use ignore::types::TypesBuilder;
use ignore::{ParallelVisitor, ParallelVisitorBuilder, WalkState};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termcolor::NoColor;
use tool_core::{
    CancellationToken, FileAccess, MaxResultSize, PermissionSubject, ProgressSender, SearchOrRead,
    ToolError, ToolResult, ToolResultContent, ToolUseContext, TypedTool, ValidationError,
};

use crate::deadline;
use crate::fsutil;
use crate::fsutil::reject_null_bytes;
use crate::glob::{
    GLOB_CHARS, RootError, UnmatchableGlob, VCS_DIRS, check_dir, dirs_in_existing_form, limit_text,
    millis, unmatchable, without_dot_parts,
};

/// Entries returned when `head_limit` is not given (0 means unlimited).
pub const DEFAULT_HEAD_LIMIT: usize = 250;
/// Lines longer than this many bytes are replaced by an "omitted long line" note.
pub const MAX_COLUMNS: u64 = 500;
/// How long a search may run before it stops with what it found: Glob's limit, and Claude
/// Code's for `rg`.
pub const DEFAULT_TIMEOUT: Duration = crate::glob::DEFAULT_TIMEOUT;

/// What Grep reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// Matching lines (`rg` output).
    Content,
    /// Paths of files with a match (the default).
    #[default]
    FilesWithMatches,
    /// Match counts per file.
    Count,
}

/// Input of the `Grep` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct GrepInput {
    /// The regular expression pattern to search for in file contents
    pub pattern: String,
    /// File or directory to search in (rg PATH). Defaults to current working directory.
    #[serde(default)]
    pub path: Option<String>,
    /// Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}") - maps to rg --glob
    #[serde(default)]
    pub glob: Option<String>,
    /// Output mode: "content" shows matching lines (supports -A/-B/-C context, -n line numbers, head_limit), "files_with_matches" shows file paths (supports head_limit), "count" shows match counts (supports head_limit). Defaults to "files_with_matches".
    #[serde(default)]
    pub output_mode: Option<OutputMode>,
    /// Number of lines to show before each match (rg -B). Requires output_mode: "content", ignored otherwise.
    #[serde(default, rename = "-B")]
    pub before: Option<u64>,
    /// Number of lines to show after each match (rg -A). Requires output_mode: "content", ignored otherwise.
    #[serde(default, rename = "-A")]
    pub after: Option<u64>,
    /// Alias for context.
    #[serde(default, rename = "-C")]
    pub context_c: Option<u64>,
    /// Number of lines to show before and after each match (rg -C). Requires output_mode: "content", ignored otherwise.
    #[serde(default)]
    pub context: Option<u64>,
    /// Show line numbers in output (rg -n). Requires output_mode: "content", ignored otherwise. Defaults to true.
    #[serde(default, rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Case insensitive search (rg -i)
    #[serde(default, rename = "-i")]
    pub case_insensitive: Option<bool>,
    /// Print only the matched parts of matching lines (rg -o). Requires output_mode: "content".
    #[serde(default, rename = "-o")]
    pub only_matching: Option<bool>,
    /// File type to search (rg --type). Common types: js, py, rust, go, java, etc. More efficient than include for standard file types.
    #[serde(default, rename = "type")]
    pub file_type: Option<String>,
    /// Limit output to first N lines/entries, equivalent to "| head -N". Works across all output modes: content (limits output lines), files_with_matches (limits file paths), count (limits count entries). Defaults to 250 when unspecified. Pass 0 for unlimited (use sparingly — large result sets waste context).
    #[serde(default)]
    pub head_limit: Option<u64>,
    /// Skip first N lines/entries before applying head_limit, equivalent to "| tail -n +N | head -N". Works across all output modes. Defaults to 0.
    #[serde(default)]
    pub offset: Option<u64>,
    /// Enable multiline mode where . matches newlines and patterns can span lines (rg -U --multiline-dotall). Default: false.
    #[serde(default)]
    pub multiline: Option<bool>,
}

/// What `Grep` returns (Claude Code's shape).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrepOutput {
    /// The output mode used.
    pub mode: OutputMode,
    /// Files in the result: the files shown (files_with_matches), the files with matches
    /// (count, as its summary line says), 0 (content).
    pub num_files: usize,
    /// The files shown (files_with_matches); empty in content and count modes, as in Claude
    /// Code (the paths are in `content`).
    pub filenames: Vec<String>,
    /// The text shown (content and count modes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Lines of content shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_lines: Option<usize>,
    /// Total matches (count mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub num_matches: Option<u64>,
    /// The limit, when it cut the result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied_limit: Option<usize>,
    /// The offset, when not zero.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub applied_offset: Option<usize>,
    /// Set when the offset is past the last entry (`offsetPastEnd`, present only then).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub offset_past_end: bool,
    /// Set when content mode's output reached [`MAX_CONTENT_BYTES`] before the page's end:
    /// the bound (a Toolwright addition; Claude Code's `rg` has no such bound).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_cut_at_bytes: Option<usize>,
    /// Files and directories an ask rule covers, left out of the search rather than read
    /// unasked (a Read of one asks, where the user can be asked); sorted, at most [`MAX_NOT_SEARCHED_LISTED`] (a Toolwright
    /// addition).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_searched: Vec<String>,
    /// How many such paths there were in all.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_searched_count: usize,
    /// Files and directories the search could not read, each with why (ripgrep's
    /// `Permission denied (os error 13)`); sorted, at most [`MAX_NOT_SEARCHED_LISTED`] (a
    /// Toolwright addition: ripgrep reports them on stderr, Claude Code surfaces them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
    /// How many such paths there were in all.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unreadable_count: usize,
    /// Set when no file was searched and a `glob` starts with `/` naming a directory that
    /// is not below the search root (an absolute path, `/tmp/p/src/*.rs`): that glob, which
    /// the result explains (a Toolwright addition; ripgrep warns that no files were
    /// searched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchored_glob: Option<String>,
    /// Set when no file was searched and a `glob` that picks files says why, for another
    /// reason than an [`anchored_glob`](Self::anchored_glob) ([`UnmatchableGlob`]: it names a
    /// `.git` directory, never searched, or repeats `path`, which globs are matched relative
    /// to), which the result says in place of the [`unsearched_glob`](Self::unsearched_glob)
    /// note (a Toolwright addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmatchable_glob: Option<UnmatchableGlob>,
    /// Set when a `glob` that picks files (not only `!` ones) was given and no file was
    /// searched, for another reason than an [`anchored_glob`](Self::anchored_glob) (most
    /// often, the files it names are all in an ignored directory): the `glob` as given, which the result names with what to do (a
    /// Toolwright addition; ripgrep warns that no files were searched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsearched_glob: Option<String>,
    /// Set when a `type` was given and no file was searched, for another reason than an
    /// [`anchored_glob`](Self::anchored_glob) (no file of that type under the path, or none
    /// that a `glob` given too lets through, or all in ignored directories): the type, which
    /// the result names with its globs (a Toolwright addition; ripgrep warns that no files
    /// were searched). With a `glob` that picks files, [`unsearched_glob`](Self::unsearched_glob)
    /// is set too, and the one note names both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsearched_type: Option<String>,
    /// Set when the search stopped at its time limit ([`DEFAULT_TIMEOUT`]), so that matches
    /// may be missing: the limit, in milliseconds (a Toolwright addition; Claude Code says
    /// "Ripgrep search timed out").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_out_after_ms: Option<u64>,
}

/// The `Grep` tool. See the [module docs](self).
#[derive(Debug, Clone, Copy, Default)]
pub struct Grep;

const DESCRIPTION: &str = "A powerful search tool built on ripgrep

  Usage:
  - ALWAYS use Grep for search tasks. NEVER invoke `grep` or `rg` as a Bash command. The Grep tool has been optimized for correct permissions and access.
  - Supports full regex syntax (e.g., \"log.*Error\", \"function\\s+\\w+\")
  - Filter files with glob parameter (e.g., \"*.js\", \"**/*.tsx\") or type parameter (e.g., \"js\", \"py\", \"rust\")
  - Output modes: \"content\" shows matching lines, \"files_with_matches\" shows only file paths (default), \"count\" shows match counts
  - Use Agent tool for open-ended searches requiring multiple rounds
  - Pattern syntax: Uses ripgrep (not grep) - literal braces need escaping (use `interface\\{\\}` to find `interface{}` in Go code)
  - Multiline matching: By default patterns match within single lines only. For cross-line patterns like `struct \\{[\\s\\S]*?field`, use `multiline: true`
";

/// Everything a search needs, checked.
struct Plan {
    root: PathBuf,
    root_is_file: bool,
    /// When the plan was begun: the search stops its time limit after this, the look at
    /// the root included.
    started: Instant,
    matcher: RegexMatcher,
    mode: OutputMode,
    before: usize,
    after: usize,
    line_numbers: bool,
    only_matching: bool,
    multiline: bool,
    globs: Vec<String>,
    /// The `glob` as the call gave it (trimmed), for the result to name.
    glob_text: Option<String>,
    file_type: Option<String>,
    head_limit: usize,
    offset: usize,
    /// [`MAX_CONTENT_BYTES`] (lowered by tests).
    max_content_bytes: usize,
}

fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// Splits the `glob` parameter as Claude Code does: on whitespace, then on commas outside
/// braces.
fn split_globs(raw: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in raw.split_whitespace() {
        if part.contains('{') {
            out.push(part.to_owned());
        } else {
            out.extend(part.split(',').filter(|p| !p.is_empty()).map(str::to_owned));
        }
    }
    out
}

/// Whether the search root `root` is a directory (else a regular file), as a search needs
/// it: a directory that can be listed ([`check_dir`]) or a regular file; anything else is
/// refused in words. It touches the disk: [`plan`] runs it on a thread of its own.
fn look_at_root(root: &Path, ctx: &ToolUseContext) -> Result<bool, ValidationError> {
    let meta = std::fs::metadata(root).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ValidationError::with_code(
            format!(
                "Path does not exist: {}. Note: your current working directory is {}.{}",
                root.display(),
                ctx.cwd().display(),
                fsutil::missing_search_path_hint(root, ctx)
            ),
            1,
        ),
        _ => ValidationError::with_code(format!("Cannot search {}: {e}", root.display()), 1),
    })?;
    if meta.is_dir() {
        check_dir(root, ctx)?;
    } else if !meta.is_file() {
        // Reading a FIFO or a device could block or never end.
        return Err(ValidationError::with_code(
            format!(
                "Cannot search {}: it is not a regular file or a directory (a device, FIFO or socket).",
                root.display()
            ),
            1,
        ));
    }
    Ok(meta.is_dir())
}

/// The search `input` asks for, checked: the plan `validate_input` checks and `call`
/// searches by. The look at the root ([`look_at_root`]) is waited on only until the time
/// limit, [`DEFAULT_TIMEOUT`]; the search that follows stops at the same limit after the
/// plan was begun ([`Plan::started`]).
fn plan(input: &GrepInput, ctx: &ToolUseContext) -> Result<Plan, RootError> {
    plan_with(input, ctx, DEFAULT_TIMEOUT, &LEFT_BEHIND, look_at_root)
}

/// [`plan`], with the look at the root (`look`: whether it is a directory, else a regular
/// file) and its time limit given: the seam the tests use for a `stat` or a listing that
/// never returns.
fn plan_with<L>(
    input: &GrepInput,
    ctx: &ToolUseContext,
    limit: Duration,
    runs: &'static deadline::Runs,
    look: L,
) -> Result<Plan, RootError>
where
    L: FnOnce(&Path, &ToolUseContext) -> Result<bool, ValidationError> + Send + 'static,
{
    let started = Instant::now();
    reject_null_bytes("pattern", Some(&input.pattern))?;
    reject_null_bytes("path", input.path.as_deref())?;
    reject_null_bytes("glob", input.glob.as_deref())?;
    reject_null_bytes("type", input.file_type.as_deref())?;
    // Without a home directory `~/x` would be `<cwd>/~/x`: refused, as Read refuses it.
    if let Some(path) = input.path.as_deref().map(str::trim)
        && fsutil::is_home_path(path)
    {
        fsutil::refuse_tilde_without_home("path", path, ctx)?;
    }
    let root = match input
        .path
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        Some(p) => ctx.resolve_path(p),
        None => ctx.cwd().to_path_buf(),
    };
    // A file named as the root is refused as Read refuses it when a deny rule forbids it
    // (the walk leaves such files out; the root it does not judge). Checked in the look, on
    // its thread and within its time: the check resolves the file's links.
    let look = move |root: &Path, ctx: &ToolUseContext| {
        let is_dir = look(root, ctx)?;
        if !is_dir {
            fsutil::refuse_denied_path(root, FileAccess::Read, ctx)?;
        }
        Ok(is_dir)
    };
    let root_is_dir = crate::glob::look_at_root(job(runs), &root, ctx, started, limit, look)?;
    let multiline = input.multiline.unwrap_or(false);
    let mut builder = RegexMatcherBuilder::new();
    builder
        .case_insensitive(input.case_insensitive.unwrap_or(false))
        .multi_line(true);
    if multiline {
        builder.dot_matches_new_line(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    let matcher = builder
        .build(&input.pattern)
        .map_err(|e| ValidationError::new(regex_error(&input.pattern, &e.to_string())))?;
    let mode = input.output_mode.unwrap_or_default();
    let content = mode == OutputMode::Content;
    let around = input.context.or(input.context_c);
    let (before, after) = match around {
        Some(c) => (to_usize(c), to_usize(c)),
        None => (
            to_usize(input.before.unwrap_or(0)),
            to_usize(input.after.unwrap_or(0)),
        ),
    };
    // A `.` part (`./src/**`) is dropped, as Glob drops it: no walked path has one.
    let globs: Vec<String> = input
        .glob
        .as_deref()
        .map(split_globs)
        .unwrap_or_default()
        .iter()
        .map(|g| without_dot_parts(g).into_owned())
        .collect();
    // An empty (or blank) `type` is no type, as an empty `glob` or `path` is none.
    let file_type = input
        .file_type
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_owned);
    // Check the globs and the type now, for a clear refusal.
    glob_overrides(&root, &globs, false).map_err(ValidationError::new)?;
    if let Some(t) = &file_type {
        file_types(t).map_err(ValidationError::new)?;
    }
    Ok(Plan {
        // An empty `path` names nothing (no permission subject: nobody was asked).
        root_is_file: !root_is_dir,
        started,
        root,
        matcher,
        mode,
        before: if content { before } else { 0 },
        after: if content { after } else { 0 },
        line_numbers: content && input.line_numbers.unwrap_or(true),
        only_matching: content && input.only_matching.unwrap_or(false),
        multiline,
        globs,
        glob_text: input.glob.as_deref().map(|g| g.trim().to_owned()),
        file_type,
        head_limit: input.head_limit.map_or(DEFAULT_HEAD_LIMIT, to_usize),
        offset: input.offset.map_or(0, to_usize),
        max_content_bytes: MAX_CONTENT_BYTES,
    })
}

#[async_trait::async_trait]
impl TypedTool for Grep {
    type Input = GrepInput;
    type Output = GrepOutput;
    const NAME: &'static str = "Grep";

    fn description(&self) -> Cow<'_, str> {
        DESCRIPTION.into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(20_000)
    }
    fn search_hint(&self) -> Option<&str> {
        Some("search file contents with regex (ripgrep)")
    }
    fn is_concurrency_safe(&self, _: &GrepInput) -> bool {
        true
    }
    fn is_read_only(&self, _: &GrepInput) -> bool {
        true
    }
    fn is_search_or_read(&self, _: &GrepInput) -> SearchOrRead {
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
        fsutil::observable_search_path(input, ctx)
    }
    /// The search root: `path`, or without one the cwd (`.`). A relative or `~` path is
    /// left for the permission engine to resolve with the call's context, as the search
    /// resolves it (it is a path, so one whose name is not valid UTF-8 is judged too). The
    /// subject is always named, so the tool has no permission check of its own: the
    /// engine's path rules decide.
    fn permission_subject(&self, input: &GrepInput) -> Option<PermissionSubject> {
        let path = match input.path.as_deref().map(str::trim) {
            None | Some("") => std::path::PathBuf::from("."),
            Some(path) => fsutil::search_subject_path(path),
        };
        Some(PermissionSubject::Path {
            path,
            access: FileAccess::Read,
        })
    }

    async fn validate_input(
        &self,
        input: &GrepInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        // `plan` touches the disk (metadata, the directory check) and compiles the regex:
        // off the async workers.
        let (input, ctx) = (input.clone(), ctx.clone());
        fsutil::blocking_validation(move || {
            plan(&input, &ctx)
                .map(drop)
                .map_err(RootError::into_validation)
        })
        .await
    }

    async fn call(
        &self,
        input: GrepInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<GrepOutput>, ToolError> {
        let out = fsutil::blocking(move || {
            let plan = plan(&input, &ctx).map_err(RootError::into_tool_error)?;
            search(plan, &ctx, DEFAULT_TIMEOUT)
        })
        .await?;
        Ok(ToolResult::new(out))
    }

    fn to_content(&self, output: &GrepOutput) -> ToolResultContent {
        ToolResultContent::Text(render(output))
    }
}

/// Most paths left out by ask rules a result lists.
pub const MAX_NOT_SEARCHED_LISTED: usize = 20;

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn limit_info(output: &GrepOutput) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(limit) = output.applied_limit {
        parts.push(format!("limit: {limit}"));
    }
    if let Some(offset) = output.applied_offset {
        parts.push(format!("offset: {offset}"));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The text the model sees, in Claude Code's layout, then what ask rules kept out.
fn render(output: &GrepOutput) -> String {
    let mut text = render_found(output);
    if let Some(glob) = &output.anchored_glob {
        let glob = crate::glob::quoted(glob);
        text.push_str(&format!(
            "\n\n[No file was searched: a glob is matched against paths relative to the \
             searched directory, and `{glob}` starts with /, which anchors it there. Give the \
             directory as `path` and a glob relative to it.]"
        ));
    }
    if let Some(why) = &output.unmatchable_glob {
        text.push_str(&format!("\n\n[No file was searched: {}]", why.why("glob")));
    }
    if let Some(file_type) = &output.unsearched_type {
        let what = type_with_globs(file_type);
        let what = match &output.unsearched_glob {
            Some(glob) => format!(
                "no file of type {what} matched the glob `{}`",
                crate::glob::quoted(glob)
            ),
            None => format!("no file of type {what} was found"),
        };
        text.push_str(&format!(
            "\n\n[No file was searched: {what}. Files that .gitignore, .ignore or .rgignore \
             rules ignore are skipped; to search an ignored directory or file, give it as \
             `path`.]"
        ));
    } else if let Some(glob) = &output.unsearched_glob {
        let glob = crate::glob::quoted(glob);
        text.push_str(&format!(
            "\n\n[No file was searched: no file matched the glob `{glob}`. Files that \
             .gitignore, .ignore or .rgignore rules ignore are skipped; to search an ignored \
             directory or file, give it as `path` (with a glob relative to it, if any).]"
        ));
    }
    if let Some(limit_ms) = output.timed_out_after_ms {
        text.push_str(&format!(
            "\n\n[Search timed out after {}: the results may be incomplete. Search a more \
             specific path or pattern.]",
            limit_text(limit_ms)
        ));
    }
    if output.not_searched_count > 0 {
        let more = output.not_searched_count - output.not_searched.len();
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        text.push_str(&format!(
            "\n\n[Not searched, as an ask rule covers them: {}{more}]",
            output.not_searched.join(", ")
        ));
    }
    if let Some(note) = not_read_note(&output.unreadable, output.unreadable_count) {
        text.push_str("\n\n");
        text.push_str(&note);
    }
    text
}

/// The note that names what a search could not read (`listed`, each with why, of `count`
/// in all): `[Not searched, as they could not be read: priv (Permission denied (os error
/// 13))]`, Grep's and Glob's alike; `None` when there was none.
pub(crate) fn not_read_note(listed: &[String], count: usize) -> Option<String> {
    if count == 0 {
        return None;
    }
    let more = count.saturating_sub(listed.len());
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    Some(format!(
        "[Not searched, as they could not be read: {}{more}]",
        listed.join(", ")
    ))
}

fn render_found(output: &GrepOutput) -> String {
    if output.offset_past_end && output.mode != OutputMode::Count {
        return "No entries at this offset".to_owned();
    }
    let info = limit_info(output);
    match output.mode {
        OutputMode::Content => {
            let body = output
                .content
                .as_deref()
                .filter(|c| !c.is_empty())
                .unwrap_or("No matches found");
            let mut text = match info {
                Some(info) => format!("{body}\n\n[Showing results with pagination = {info}]"),
                None => body.to_owned(),
            };
            if let Some(bytes) = output.content_cut_at_bytes {
                text.push_str(&format!(
                    "\n\n[Output cut at {} MiB: the matches after these lines are not shown. \
                     Narrow the search (path, glob, type or a more specific pattern).]",
                    bytes.div_ceil(1024 * 1024)
                ));
            }
            text
        }
        OutputMode::Count => {
            // Past the end the total over all files still follows.
            let body = if output.offset_past_end {
                "No entries at this offset"
            } else {
                output
                    .content
                    .as_deref()
                    .filter(|c| !c.is_empty())
                    .unwrap_or("No matches found")
            };
            let matches = output.num_matches.unwrap_or(0);
            let files = output.num_files as u64;
            let pagination = info
                .map(|i| format!(" with pagination = {i}"))
                .unwrap_or_default();
            format!(
                "{body}\n\nFound {} across {}.{pagination}",
                plural(matches, "total occurrence", "total occurrences"),
                plural(files, "file", "files")
            )
        }
        OutputMode::FilesWithMatches => {
            if output.filenames.is_empty() {
                return "No files found".to_owned();
            }
            // Claude Code's header: `Found 250 files limit: 250` (`, offset: N` after it).
            let pagination = info.map(|i| format!(" {i}")).unwrap_or_default();
            format!(
                "Found {}{pagination}\n{}",
                plural(output.num_files as u64, "file", "files"),
                output.filenames.join("\n")
            )
        }
    }
}

/// Most bytes of `content` output a search keeps (and most one file may print): past it, the
/// output stops at the last whole line that fits, and the page says how far it got.
pub const MAX_CONTENT_BYTES: usize = 32 * 1024 * 1024;

/// One searched file's result.
struct FileHit {
    path: PathBuf,
    display: String,
    mtime: SystemTime,
    count: u64,
    /// Lines printed (content mode; bounded by the searcher's `max_matches`).
    lines: usize,
}

/// Every file with a match, and in content mode the printed output of the first files in
/// path order: only what the page (`offset + head_limit` lines) can show, and at most
/// [`MAX_CONTENT_BYTES`], is kept, so a search that matches everywhere does not hold the
/// whole tree's output in memory.
struct Hits {
    files: Vec<FileHit>,
    /// Lines the page needs (`offset + head_limit`); `None` when unlimited.
    need: Option<usize>,
    /// Whether a `--` line separates files (context lines asked for).
    separate: bool,
    /// The printed output kept, by path.
    kept: BTreeMap<PathBuf, Vec<u8>>,
    kept_lines: usize,
    kept_bytes: usize,
    /// Files sorting after this one keep no output: the page ends before them.
    cutoff: Option<PathBuf>,
    /// Whether the byte bound (not the page) ended the kept output.
    cut_by_bytes: bool,
    /// [`MAX_CONTENT_BYTES`], from the plan.
    max_bytes: usize,
}

impl Hits {
    fn new(plan: &Plan) -> Self {
        let need = (plan.head_limit > 0).then(|| plan.offset.saturating_add(plan.head_limit));
        Self {
            files: Vec::new(),
            need,
            separate: plan.before > 0 || plan.after > 0,
            kept: BTreeMap::new(),
            kept_lines: 0,
            kept_bytes: 0,
            cutoff: None,
            cut_by_bytes: false,
            max_bytes: plan.max_content_bytes,
        }
    }

    fn add(&mut self, hit: FileHit, printed: Vec<u8>, printed_whole: bool) {
        let past_cutoff = self.cutoff.as_ref().is_some_and(|c| hit.path > *c);
        if !printed.is_empty() && !past_cutoff {
            self.kept_lines += line_count(&printed);
            self.kept_bytes += printed.len();
            self.kept.insert(hit.path.clone(), printed);
            if !printed_whole {
                // The bound cut this file's output: nothing after it may be shown.
                self.cut_by_bytes = true;
                self.keep_through(&hit.path);
            }
            let over_lines = self
                .need
                .is_some_and(|n| self.kept_lines > n.saturating_mul(2).max(64));
            if over_lines || self.kept_bytes > self.max_bytes.saturating_mul(2) {
                self.prune();
            }
        }
        self.files.push(hit);
    }

    /// Drops the output of every file after `last`, and of any such file found later.
    fn keep_through(&mut self, last: &Path) {
        let later: Vec<PathBuf> = self
            .kept
            .range::<Path, _>((Bound::Excluded(last), Bound::Unbounded))
            .map(|(path, _)| path.clone())
            .collect();
        for path in later {
            self.kept.remove(&path);
        }
        self.kept.retain(|_, printed| !printed.is_empty());
        if self.cutoff.as_deref().is_none_or(|c| last < c) {
            self.cutoff = Some(last.to_path_buf());
        }
        self.kept_lines = self.kept.values().map(|p| line_count(p)).sum();
        self.kept_bytes = self.kept.values().map(Vec::len).sum();
    }

    /// Drops the output the page cannot show: the files that start past the lines needed,
    /// and everything past [`MAX_CONTENT_BYTES`] (cut at a line end).
    fn prune(&mut self) {
        let (mut lines, mut bytes) = (0_usize, 0_usize);
        // The last file whose output stays, when some must go.
        let mut last = None;
        for (i, printed) in self.kept.values_mut().enumerate() {
            if self.need.is_some_and(|n| lines >= n) {
                // Starts past the page (its `--` line too): this file and the ones after it
                // are not shown.
                last = Some(i.saturating_sub(1));
                break;
            }
            if i > 0 && self.separate {
                lines += 1;
                bytes += 3;
            }
            let room = self.max_bytes.saturating_sub(bytes);
            if printed.len() > room {
                let end = printed[..room]
                    .iter()
                    .rposition(|b| *b == b'\n')
                    .map_or(0, |i| i + 1);
                printed.truncate(end);
                self.cut_by_bytes = true;
                last = Some(i);
                break;
            }
            lines += line_count(printed);
            bytes += printed.len();
        }
        if let Some(last) = last.and_then(|i| self.kept.keys().nth(i).cloned()) {
            self.keep_through(&last);
        }
    }
}

/// Lines in printed output (each ends with `\n`; a last unterminated one counts too).
fn line_count(printed: &[u8]) -> usize {
    let newlines = printed.iter().filter(|b| **b == b'\n').count();
    newlines + usize::from(printed.last().is_some_and(|b| *b != b'\n'))
}

/// The content printer's buffer: it refuses bytes past [`MAX_CONTENT_BYTES`], which ends
/// the file's search.
struct BoundedBuf {
    bytes: Vec<u8>,
    cap: usize,
    full: bool,
}

impl BoundedBuf {
    fn new(cap: usize) -> Self {
        Self {
            bytes: Vec::new(),
            cap,
            full: false,
        }
    }
}

impl io::Write for BoundedBuf {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = self.cap.saturating_sub(self.bytes.len());
        if buf.len() > room {
            self.bytes.extend_from_slice(&buf[..room]);
            self.full = true;
            return Err(io::Error::other("the Grep output bound was reached"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The refusal of a pattern the matcher would not build: the syntax error as the pattern is
/// written (grep-regex reports it inside the group it wraps the pattern in, `(?:…)`, with
/// the caret off by three), and for a new line outside multiline mode, ripgrep's hint. A
/// long pattern is quoted once, cut ([`crate::glob::quoted`]), and the error keeps only its
/// `error:` line: the library's picture of where it is repeats the whole pattern.
fn regex_error(pattern: &str, built: &str) -> String {
    let detail = match regex::Regex::new(pattern) {
        Err(regex::Error::Syntax(syntax)) => syntax,
        _ => built.to_owned(),
    };
    let quoted = crate::glob::quoted(pattern);
    let hint = detail.contains("is not allowed in a regex");
    let detail = if matches!(quoted, Cow::Borrowed(_)) {
        detail
    } else {
        let errors: Vec<&str> = detail.lines().filter(|l| l.starts_with("error:")).collect();
        let short = if errors.is_empty() {
            detail.lines().last().unwrap_or_default().to_owned()
        } else {
            errors.join("\n")
        };
        crate::glob::cut_text(&short, crate::glob::REASON_CHARS).into_owned()
    };
    // A short pattern's picture is at most a few times its length; anything else is cut.
    let detail = crate::glob::cut_text(&detail, 4 * crate::glob::REASON_CHARS);
    let mut text = format!("Invalid regex pattern `{quoted}`: {detail}");
    if hint {
        text.push_str(
            "\n\nConsider enabling multiline mode with `multiline: true`: new line characters can be matched then.",
        );
    }
    text
}

/// The matcher of Grep's `glob` filters (and, for the walk, `vcs`: the version-control
/// directories left out) under `root`; the refusal ([`crate::glob::glob_refusal`]) of the
/// glob that spoils it: one that cannot be read, else one that does not compile on its own,
/// else all of them (too large together).
fn glob_overrides(
    root: &Path,
    globs: &[String],
    vcs: bool,
) -> Result<ignore::overrides::Override, String> {
    let mut builder = OverrideBuilder::new(root);
    for g in globs {
        builder
            .add(g)
            .map_err(|e| crate::glob::glob_refusal(g, &e, false))?;
    }
    if vcs {
        for vcs in VCS_DIRS {
            builder.add(&format!("!{vcs}")).map_err(|e| e.to_string())?;
        }
    }
    builder.build().map_err(|e| {
        let alone = |g: &&String| {
            let mut one = OverrideBuilder::new(root);
            one.add(g).is_ok() && one.build().is_err()
        };
        let culprit = globs
            .iter()
            .find(alone)
            .cloned()
            .unwrap_or_else(|| globs.join(" "));
        crate::glob::glob_refusal(&culprit, &e, true)
    })
}

/// The file type matcher for `type`; the refusal, which quotes it ([`crate::glob::quoted`]),
/// when ripgrep has no such type: ripgrep's `unrecognized file type`, the types meant when
/// some are close ([`types_meant`]), and what the known types look like.
fn file_types(name: &str) -> Result<ignore::types::Types, String> {
    let mut builder = TypesBuilder::new();
    builder.add_defaults().select(name);
    builder.build().map_err(|e| {
        let quoted = crate::glob::quoted(name);
        match e {
            ignore::Error::UnrecognizedFileType(_) => {
                let meant = types_meant(name);
                let meant = if meant.is_empty() {
                    String::new()
                } else {
                    format!(
                        " Did you mean {}?",
                        meant
                            .iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(" or ")
                    )
                };
                format!(
                    "Invalid file type `{quoted}`: unrecognized file type.{meant} `type` takes \
                     one of ripgrep's type names (as `rg --type-list` lists them), such as js, \
                     ts, py, rust, go, java, c, cpp, md, json or yaml; for other files, give a \
                     `glob` such as \"*.ext\"."
                )
            }
            other => format!(
                "Invalid file type `{quoted}`: {}",
                crate::glob::cut_text(&other.to_string(), crate::glob::REASON_CHARS)
            ),
        }
    })
}

/// Longest `type` [`types_meant`] looks for a type meant by: longer ones are no misspelt
/// type name, and comparing them costs for nothing.
const MEANT_TYPE_CHARS: usize = 40;

/// The known types an unknown `type` most likely meant, at most three: the one spelt the
/// same but for case (`Rust`), those with a glob `*.<name>` (`rs` is `rust`'s extension),
/// else the names one or two edits away (`rustt`, `pyy`).
fn types_meant(name: &str) -> Vec<String> {
    if name.chars().count() > MEANT_TYPE_CHARS {
        return Vec::new();
    }
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    let defs = builder.definitions();
    let lower = name.to_lowercase();
    let mut meant: Vec<String> = Vec::new();
    let add = |n: &str, meant: &mut Vec<String>| {
        if meant.len() < 3 && !meant.iter().any(|m| m == n) {
            meant.push(n.to_owned());
        }
    };
    for def in &defs {
        if def.name().to_lowercase() == lower {
            add(def.name(), &mut meant);
        }
    }
    let extension = format!("*.{lower}");
    for def in &defs {
        if def.globs().iter().any(|g| g.to_lowercase() == extension) {
            add(def.name(), &mut meant);
        }
    }
    if meant.is_empty() {
        let most = if lower.chars().count() > 4 { 2 } else { 1 };
        let mut close: Vec<(usize, &str)> = defs
            .iter()
            .filter_map(|def| {
                let known = def.name().to_lowercase();
                let d = (1..=most)
                    .find(|&d| tool_perms::settings::edit_distance_within(&lower, &known, d))?;
                Some((d, def.name()))
            })
            .collect();
        close.sort();
        for (_, n) in close {
            add(n, &mut meant);
        }
    }
    meant
}

/// What the note of a search that found no file of the type `name` calls it: the type and
/// its globs, cut after a few (`` `rust` (*.rs) ``).
fn type_with_globs(name: &str) -> String {
    const LISTED_GLOBS: usize = 6;
    if name == "all" {
        return "`all` (any type ripgrep knows)".to_owned();
    }
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    let quoted = crate::glob::quoted(name);
    match builder.definitions().iter().find(|d| d.name() == name) {
        Some(def) => {
            let globs = def.globs();
            let mut listed = globs
                .iter()
                .take(LISTED_GLOBS)
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ");
            if globs.len() > LISTED_GLOBS {
                listed.push_str(&format!(" and {} more", globs.len() - LISTED_GLOBS));
            }
            format!("`{quoted}` ({listed})")
        }
        None => format!("`{quoted}`"),
    }
}

/// Counts what `rg -c` counts: matching lines, and in multiline mode each match (the
/// searcher hands over neighbouring matches as one block there); stops at the first when
/// only presence matters.
struct CountSink<'a> {
    count: u64,
    stop_at_first: bool,
    /// The matcher, to count the matches of a block (multiline mode only).
    multiline: Option<&'a RegexMatcher>,
}

/// How far past a block the text stays in view when its matches are counted (ripgrep's
/// look-ahead allowance, `grep-printer`'s `MAX_LOOK_AHEAD`).
const MAX_LOOK_AHEAD: usize = 128;

impl Sink for CountSink<'_> {
    type Error = io::Error;
    /// What `rg -c` counts: a matching line, or in multiline mode, where the pattern can
    /// match a line end (`o\nb`, `(?s).`) and neighbouring matches come as one block, each
    /// match that starts in the block, found with the text around it in view (a `^$` is not
    /// found again past the block's own line end). A pattern that cannot match a line end
    /// is searched line by line even in multiline mode, and counts lines.
    fn matched(&mut self, searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let mut n = 0u64;
        if let Some(matcher) = self.multiline.filter(|_| !self.stop_at_first)
            && searcher.multi_line_with_matcher(matcher)
        {
            let range = mat.bytes_range_in_buffer();
            let buffer = mat.buffer();
            let seen = &buffer[..buffer.len().min(range.end.saturating_add(MAX_LOOK_AHEAD))];
            matcher
                .find_iter_at(seen, range.start, |m| {
                    if m.start() >= range.end {
                        return false;
                    }
                    n += 1;
                    true
                })
                .map_err(io::Error::other)?;
        }
        self.count += n.max(1);
        Ok(!self.stop_at_first)
    }

    /// As `rg -c`: a file found to be binary after its first matches (a NUL further on, in
    /// a file met by walking a directory) is not counted. `rg -l` lists it, having stopped
    /// at its first match; so does files_with_matches.
    fn finish(
        &mut self,
        searcher: &Searcher,
        finish: &grep_searcher::SinkFinish,
    ) -> Result<(), io::Error> {
        if !self.stop_at_first
            && finish.binary_byte_offset().is_some()
            && searcher.binary_detection().quit_byte().is_some()
        {
            self.count = 0;
        }
        Ok(())
    }
}

fn searcher_for(plan: &Plan, explicit: bool) -> Searcher {
    let mut b = SearcherBuilder::new();
    if plan.mode == OutputMode::Content && plan.head_limit > 0 {
        // One more match than the page can show: enough to tell that the page was cut.
        let need = plan
            .offset
            .saturating_add(plan.head_limit)
            .saturating_add(1);
        b.max_matches(Some(u64::try_from(need).unwrap_or(u64::MAX)));
    }
    b.line_number(plan.line_numbers)
        .multi_line(plan.multiline)
        .before_context(plan.before)
        .after_context(plan.after)
        .binary_detection(if explicit {
            BinaryDetection::convert(b'\x00')
        } else {
            BinaryDetection::quit(b'\x00')
        });
    b.build()
}

/// The printer content mode uses, configured as Claude Code runs `rg`.
type Printer = Standard<NoColor<BoundedBuf>>;

fn printer_for(plan: &Plan) -> Printer {
    StandardBuilder::new()
        .heading(false)
        .path(!plan.root_is_file)
        .only_matching(plan.only_matching)
        .max_columns(Some(MAX_COLUMNS))
        .separator_search(None)
        .build_no_color(BoundedBuf::new(plan.max_content_bytes))
}

/// What stops the read of a file once the search's deadline has passed.
#[derive(Debug)]
struct PastDeadline;

impl std::fmt::Display for PastDeadline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the search's time limit passed")
    }
}

impl std::error::Error for PastDeadline {}

/// Whether `e` is the end [`UntilDeadline`] puts to a read (no file left unread).
fn past_deadline(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<PastDeadline>())
}

/// A file read up to its search's deadline: a read past it fails with [`PastDeadline`], so
/// that a search left behind at its limit stops within the file it is in (a huge one, one
/// on a slow mount) at its next read, instead of reading on to the end of it.
struct UntilDeadline<'a, R> {
    inner: R,
    found: &'a Found,
}

impl<R: io::Read> io::Read for UntilDeadline<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.found.past_deadline() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, PastDeadline));
        }
        self.inner.read(buf)
    }
}

/// One file's hit, with its printed output (content mode) and whether that output is whole.
type Searched = Option<(FileHit, Vec<u8>, bool)>;

/// Searches one file as ripgrep would print it. The printer is reused across files; its
/// buffer is taken after each one.
/// Largest file a search names that is read whole (see [`search_one`]).
const WHOLE_READ_BYTES: u64 = 64 * 1024 * 1024;

/// Searches `path`: a file the call names (not one a walk found), up to
/// [`WHOLE_READ_BYTES`], is read whole and searched as one slice, as ripgrep searches it
/// (through a memory map): a NUL byte past the first buffer then still lets every line
/// before it be shown, as `rg` shows them, where a buffered search drops the matches of the
/// buffer the NUL is in.
///
/// Either way the file is read through [`UntilDeadline`], so that the read stops at the
/// deadline (another file is read as `Searcher::search_path` reads it without a memory
/// map, in buffers).
fn search_one<S>(
    plan: &Plan,
    searcher: &mut Searcher,
    path: &Path,
    found: &Found,
    sink: S,
) -> io::Result<()>
where
    S: grep_searcher::Sink<Error = io::Error>,
{
    use std::io::Read as _;
    let file = std::fs::File::open(path)?;
    let whole = file
        .metadata()
        .ok()
        .filter(|m| plan.root_is_file && m.is_file() && m.len() <= WHOLE_READ_BYTES);
    let mut file = UntilDeadline { inner: file, found };
    if let Some(meta) = whole {
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.read_to_end(&mut bytes)?;
        return searcher.search_slice(&plan.matcher, &bytes, sink);
    }
    searcher.search_reader(&plan.matcher, file, sink)
}

fn search_file(
    plan: &Plan,
    searcher: &mut Searcher,
    printer: &mut Printer,
    path: &Path,
    display: &str,
    found: &Found,
) -> io::Result<Searched> {
    match plan.mode {
        OutputMode::Content => {
            let matched = {
                let mut sink = printer.sink_with_path(&plan.matcher, display);
                let result = search_one(plan, searcher, path, found, &mut sink);
                let count = sink.match_count();
                result.map(|()| count)
            };
            let buf = printer.get_mut().get_mut();
            let (mut printed, whole) = (std::mem::take(&mut buf.bytes), !buf.full);
            buf.full = false;
            if whole {
                matched?;
            } else {
                // The bound ended the search: keep the whole lines printed before it.
                let end = printed
                    .iter()
                    .rposition(|b| *b == b'\n')
                    .map_or(0, |i| i + 1);
                printed.truncate(end);
            }
            if printed.is_empty() && whole {
                return Ok(None);
            }
            Ok(Some((
                FileHit {
                    path: path.to_path_buf(),
                    display: display.to_owned(),
                    mtime: SystemTime::UNIX_EPOCH,
                    count: 0,
                    // A file the bound cut had at least one line more than it kept.
                    lines: line_count(&printed) + usize::from(!whole),
                },
                printed,
                whole,
            )))
        }
        OutputMode::Count | OutputMode::FilesWithMatches => {
            let mut sink = CountSink {
                count: 0,
                stop_at_first: plan.mode == OutputMode::FilesWithMatches,
                multiline: plan.multiline.then_some(&plan.matcher),
            };
            search_one(plan, searcher, path, found, &mut sink)?;
            if sink.count == 0 {
                return Ok(None);
            }
            let mtime = if plan.mode == OutputMode::FilesWithMatches {
                std::fs::metadata(path)
                    .and_then(|m| m.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH)
            } else {
                SystemTime::UNIX_EPOCH
            };
            Ok(Some((
                FileHit {
                    path: path.to_path_buf(),
                    display: display.to_owned(),
                    mtime,
                    count: sink.count,
                    lines: 0,
                },
                Vec::new(),
                true,
            )))
        }
    }
}

/// The paths an ask rule kept out of a search (or that a search could not read): how
/// many, and the first [`MAX_NOT_SEARCHED_LISTED`] in order (only those are kept, however
/// many there are).
#[derive(Default)]
pub(crate) struct NotSearched {
    count: usize,
    smallest: Vec<String>,
}

impl NotSearched {
    /// Counts `path`, and keeps it while it is among the first in order.
    pub(crate) fn add(&mut self, path: String) {
        self.count += 1;
        self.smallest.push(path);
        if self.smallest.len() >= 2 * MAX_NOT_SEARCHED_LISTED {
            self.smallest.sort_unstable();
            self.smallest.truncate(MAX_NOT_SEARCHED_LISTED);
        }
    }

    /// How many there were in all.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// The first [`MAX_NOT_SEARCHED_LISTED`], in order.
    pub(crate) fn into_listed(mut self) -> Vec<String> {
        self.smallest.sort_unstable();
        self.smallest.truncate(MAX_NOT_SEARCHED_LISTED);
        self.smallest
    }
}

/// What a search has found so far: shared by the thread that searches and the call that
/// waits on it, which takes what is there when the time limit passes.
struct Found {
    hits: Mutex<Hits>,
    /// Paths an ask rule kept out.
    asked: Mutex<NotSearched>,
    /// Paths that could not be read, with why.
    unreadable: Mutex<NotSearched>,
    /// Set when the walk handed a file to be searched (whatever came of it).
    searched_any: AtomicBool,
    /// Set when a read deny rule kept an entry out of the walk: a search that found no file
    /// then does not say no file matched its glob or type (what was kept out may have), as
    /// Claude Code, which makes deny rules ignore patterns, says only "No files found"; a
    /// glob anchored elsewhere is still said.
    denied_any: AtomicBool,
    /// A `glob` starting with `/` whose directory is not below the root, when the walk
    /// searched no file ([`GrepOutput::anchored_glob`]).
    anchored_glob: Mutex<Option<String>>,
    /// Why a `glob` let no file through, when the walk searched no file and its text says
    /// ([`GrepOutput::unmatchable_glob`]).
    unmatchable_glob: Mutex<Option<UnmatchableGlob>>,
    /// Set when the walk searched no file though a `glob` that picks files was given, and no
    /// [`anchored_glob`](Self::anchored_glob) explains it ([`GrepOutput::unsearched_glob`]).
    glob_let_nothing_through: AtomicBool,
    /// Set when the walk searched no file though a `type` was given, and no
    /// [`anchored_glob`](Self::anchored_glob) explains it ([`GrepOutput::unsearched_type`]).
    type_let_nothing_through: AtomicBool,
    /// When the search stops, with what it found.
    deadline: Instant,
    /// The time limit, for the note.
    limit: Duration,
    /// Set when the limit stopped the search.
    timed_out: AtomicBool,
}

impl Found {
    /// What a search by `plan` has found, nothing yet; it stops `limit` after the plan was
    /// begun ([`Plan::started`]: the look at the root counts).
    fn new(plan: &Plan, limit: Duration) -> Self {
        let started = plan.started;
        Self {
            hits: Mutex::new(Hits::new(plan)),
            asked: Mutex::default(),
            unreadable: Mutex::default(),
            searched_any: AtomicBool::new(false),
            denied_any: AtomicBool::new(false),
            anchored_glob: Mutex::default(),
            unmatchable_glob: Mutex::default(),
            glob_let_nothing_through: AtomicBool::new(false),
            type_let_nothing_through: AtomicBool::new(false),
            // A limit past what an `Instant` holds is the default one.
            deadline: started
                .checked_add(limit)
                .unwrap_or(started + DEFAULT_TIMEOUT),
            limit,
            timed_out: AtomicBool::new(false),
        }
    }

    /// Whether the time limit has passed (and the search must stop); notes that it did.
    fn past_deadline(&self) -> bool {
        let past = Instant::now() >= self.deadline;
        if past {
            self.timed_out.store(true, Ordering::Relaxed);
        }
        past
    }
}

/// Searches as `plan` says, for at most `limit` (Claude Code stops `rg` at 20 s): past it,
/// the result is what was found by then, and says the search timed out.
fn search(plan: Plan, ctx: &ToolUseContext, limit: Duration) -> Result<GrepOutput, ToolError> {
    search_with(plan, ctx, limit, &LEFT_BEHIND, walk)
}

/// The searches of this process running, and those left behind at their limit and still
/// running among them.
static LEFT_BEHIND: deadline::Runs = deadline::Runs::new();

/// [`search`], with the search itself (`work`, which fills a [`Found`]) given: the seam the
/// tests use for a read that never returns.
///
/// `work` runs on a thread of its own ([`deadline::run`]), which this one waits on until
/// the deadline: a read that blocks for ever (`/proc/kmsg`, a regular file of size 0; a
/// file on a hung network mount) would otherwise keep the call, and the runtime thread it
/// runs on, waiting until a signal. At the deadline the call answers with what was found,
/// and the search thread is abandoned: it stops at its next read (the files it searches are
/// read through [`UntilDeadline`]) or its next file (its visitors check the deadline), or,
/// stuck in `read(2)`, when the read returns, if ever; it holds only the shared [`Found`]
/// and the plan. `runs` counts the searches running, at most
/// [`MAX_LEFT_BEHIND`](deadline::MAX_LEFT_BEHIND), and of them those abandoned and still
/// running (a cancelled call abandons its search too); while that many are, a new search is
/// refused at once, so that a search repeated on a path that hangs does not pile up threads
/// without end.
fn search_with<W>(
    plan: Plan,
    ctx: &ToolUseContext,
    limit: Duration,
    runs: &'static deadline::Runs,
    work: W,
) -> Result<GrepOutput, ToolError>
where
    W: FnOnce(&Plan, &ToolUseContext, &Arc<Found>) -> Result<(), ToolError> + Send + 'static,
{
    let job = job(runs);
    let plan = Arc::new(plan);
    let found = Arc::new(Found::new(&plan, limit));
    let outcome = {
        let (plan, search_ctx) = (Arc::clone(&plan), ctx.clone());
        deadline::run(
            job,
            &found,
            found.deadline,
            ctx.cancellation(),
            move |found| work(&plan, &search_ctx, found),
        )?
    };
    if outcome.is_none() {
        found.timed_out.store(true, Ordering::Relaxed);
    }
    if ctx.is_cancelled() {
        return Err(ToolError::Cancelled(None));
    }
    finish(&plan, &found)
}

/// Grep's work on a thread of its own ([`deadline::run`]), counted in `runs`.
fn job(runs: &'static deadline::Runs) -> deadline::Job {
    deadline::Job {
        tool: "Grep",
        thread: "tw-grep",
        runs,
        stuck_in: "a read that never returns (a file on a hung network mount, a device \
                   such as /proc/kmsg)",
    }
}

/// The search itself: `plan.root` walked (or, a file, searched), what it finds put in
/// `found`.
fn walk(plan: &Plan, ctx: &ToolUseContext, found: &Arc<Found>) -> Result<(), ToolError> {
    let cwd = ctx.cwd().to_path_buf();
    let hits = &found.hits;
    if plan.root_is_file {
        let mut searcher = searcher_for(plan, true);
        let mut printer = printer_for(plan);
        let display = fsutil::listed_path(&plan.root, &cwd);
        match search_file(
            plan,
            &mut searcher,
            &mut printer,
            &plan.root,
            &display,
            found,
        ) {
            Ok(Some((hit, printed, whole))) => hits
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .add(hit, printed, whole),
            Ok(None) => {}
            // Stopped at the deadline: the call answers with the time-out note.
            Err(e) if past_deadline(&e) => {}
            Err(e) => return Err(ToolError::io(&plan.root, e)),
        }
    } else {
        // A glob's fixed directories in the Unicode form that exists below the root, as a
        // path's are (`café/*` finds a directory unpacked decomposed); on this thread, under
        // the time limit, as it looks at the disk.
        let globs: Vec<String> = plan
            .globs
            .iter()
            .map(|g| dirs_in_existing_form(&plan.root, g).into_owned())
            .collect();
        let overrides = glob_overrides(&plan.root, &globs, true).map_err(ToolError::msg)?;
        let mut walker = ignore::WalkBuilder::new(&plan.root);
        // `.rgignore` is read as ripgrep reads it, with `.ignore` and `.gitignore`.
        walker
            .hidden(false)
            .add_custom_ignore_filename(".rgignore")
            .overrides(overrides);
        // Files the read deny rules forbid are not searched (Claude Code turns them into
        // ignore patterns): a deny on `./secrets/**` holds for a search of the whole tree.
        // Nor are those an ask rule covers: they are not read unasked, and the result lists
        // them. A rule that covers a root the call named was asked about this search, and
        // the user said yes: what it covers below is searched. (Without a `path` nobody was
        // asked about the working directory: every rule holds.)
        if let Some(engine) = tool_perms::PermissionEngine::for_walking(ctx) {
            let found = Arc::clone(found);
            let cwd = cwd.clone();
            // (Without a `path` the root is the cwd, the call's subject, which an ask rule
            // covering it asked about.)
            let approved = engine.asked_by(&plan.root);
            walker.filter_entry(move |e| {
                if e.depth() == 0 {
                    return true;
                }
                if engine
                    .denied_by(e.path(), tool_core::FileAccess::Read)
                    .is_some()
                {
                    found.denied_any.store(true, Ordering::Relaxed);
                    return false;
                }
                // A link the walk does not follow is not searched whatever the rules say:
                // no rule kept it out.
                if e.path_is_symlink() {
                    return true;
                }
                if let Some(rule) = engine.asked_by(e.path())
                    && approved.as_ref() != Some(&rule)
                {
                    found
                        .asked
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .add(fsutil::listed_path(e.path(), &cwd));
                    return false;
                }
                true
            });
        }
        if let Some(t) = &plan.file_type {
            walker.types(file_types(t).map_err(ToolError::msg)?);
        }
        let mut builder = SearchBuilder {
            plan,
            found,
            cwd: &cwd,
            cancel: ctx.cancellation().clone(),
        };
        walker.build_parallel().visit(&mut builder);
        let stopped = found.timed_out.load(Ordering::Relaxed) || Instant::now() >= found.deadline;
        // Nothing searched (ripgrep warns then): said, with what may be why, when a glob
        // that picks files was given (one that only excludes, `!*.rs`, says what it left
        // out itself), or a type.
        if !found.searched_any.load(Ordering::Relaxed) && !stopped {
            // A glob anchored elsewhere is said whatever a deny rule kept out (it names no
            // file); that no file matched the glob or type is not, when a deny rule kept
            // files out (they may have matched).
            let anchored = anchored_elsewhere(&plan.root, &globs);
            // A glob whose text says why it let nothing through (it names `.git`, or
            // repeats `path`) is said the same way, and in place of what may be why.
            let unmatchable = if anchored.is_none() {
                plan.globs
                    .iter()
                    .filter(|g| !g.starts_with('!'))
                    .find_map(|g| unmatchable(&plan.root, &cwd, g))
            } else {
                None
            };
            let explained = anchored.is_some() || unmatchable.is_some();
            let denied = found.denied_any.load(Ordering::Relaxed);
            if !explained && !denied && globs.iter().any(|g| !g.starts_with('!')) {
                found
                    .glob_let_nothing_through
                    .store(true, Ordering::Relaxed);
            }
            if !explained && !denied && plan.file_type.is_some() {
                found
                    .type_let_nothing_through
                    .store(true, Ordering::Relaxed);
            }
            *found
                .anchored_glob
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = anchored;
            *found
                .unmatchable_glob
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = unmatchable;
        }
    }
    Ok(())
}

/// The first of `globs` that starts with `/` (anchored at `root`) and whose fixed
/// directories do not exist below `root`: most likely an absolute path
/// (`/tmp/p/src/*.rs`), which a glob matched against paths relative to `root` never
/// matches. Only a search that searched no file asks (ripgrep warns then).
fn anchored_elsewhere(root: &Path, globs: &[String]) -> Option<String> {
    globs
        .iter()
        .find(|g| {
            let Some(rest) = g.strip_prefix('/') else {
                return false;
            };
            let parts: Vec<&str> = rest.split('/').collect();
            let fixed = parts
                .iter()
                .position(|p| p.contains(GLOB_CHARS))
                .unwrap_or(parts.len() - 1);
            let dir = parts[..fixed].join("/");
            !dir.is_empty() && std::fs::symlink_metadata(root.join(dir)).is_err()
        })
        .cloned()
}

/// The result from what `found` holds (all of it, or what a search stopped by its time
/// limit had found; taken out, so that a search thread left behind adds to nothing shown).
fn finish(plan: &Plan, found: &Found) -> Result<GrepOutput, ToolError> {
    let take = |m: &Mutex<NotSearched>| {
        std::mem::take(&mut *m.lock().unwrap_or_else(PoisonError::into_inner))
    };
    let (unreadable, asked) = (take(&found.unreadable), take(&found.asked));
    let anchored_glob = found
        .anchored_glob
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let unmatchable_glob = found
        .unmatchable_glob
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take();
    let timed_out = found
        .timed_out
        .load(Ordering::Relaxed)
        .then(|| millis(found.limit));
    let unsearched_glob = found
        .glob_let_nothing_through
        .load(Ordering::Relaxed)
        .then(|| plan.glob_text.clone().unwrap_or_default());
    let unsearched_type = if found.type_let_nothing_through.load(Ordering::Relaxed) {
        plan.file_type.clone()
    } else {
        None
    };
    let mut found = std::mem::replace(
        &mut *found.hits.lock().unwrap_or_else(PoisonError::into_inner),
        Hits::new(plan),
    );
    found.prune();
    let offset = plan.offset;
    let limit = plan.head_limit;
    let mut out = GrepOutput {
        mode: plan.mode,
        num_files: 0,
        filenames: Vec::new(),
        content: None,
        num_lines: None,
        num_matches: None,
        applied_limit: None,
        applied_offset: (offset > 0).then_some(offset),
        offset_past_end: false,
        content_cut_at_bytes: None,
        not_searched: Vec::new(),
        not_searched_count: 0,
        unreadable: Vec::new(),
        unreadable_count: 0,
        anchored_glob,
        unmatchable_glob,
        unsearched_glob,
        unsearched_type,
        timed_out_after_ms: timed_out,
    };
    out.unreadable_count = unreadable.count;
    out.unreadable = unreadable.into_listed();
    out.not_searched_count = asked.count;
    out.not_searched = asked.into_listed();
    // Pages a list: returns the kept entries and whether the limit cut it.
    let page = |len: usize| -> (std::ops::Range<usize>, bool) {
        let start = offset.min(len);
        let end = if limit == 0 {
            len
        } else {
            start.saturating_add(limit).min(len)
        };
        (start..end, end < len)
    };
    match plan.mode {
        OutputMode::FilesWithMatches => {
            let mut hits = found.files;
            hits.sort_by(|a, b| b.mtime.cmp(&a.mtime).then_with(|| a.path.cmp(&b.path)));
            let (range, cut) = page(hits.len());
            out.offset_past_end = offset > 0 && !hits.is_empty() && offset >= hits.len();
            out.filenames = hits[range].iter().map(|h| h.display.clone()).collect();
            out.num_files = out.filenames.len();
            out.applied_limit = cut.then_some(limit);
        }
        OutputMode::Content => {
            let hits = std::mem::take(&mut found.files);
            let mut text = String::new();
            for (i, printed) in found.kept.values().enumerate() {
                if i > 0 && found.separate {
                    text.push_str("--\n");
                }
                text.push_str(&String::from_utf8_lossy(printed));
            }
            let lines: Vec<&str> = text.lines().collect();
            // Every file's lines (as far as the searcher counted), kept or not.
            let total = hits.iter().map(|h| h.lines).sum::<usize>()
                + if found.separate {
                    hits.len().saturating_sub(1)
                } else {
                    0
                };
            // Past the end only when the end is known: output the bound cut has no end here.
            out.offset_past_end = !found.cut_by_bytes && offset > 0 && total > 0 && offset >= total;
            let (range, _) = page(lines.len());
            if found.cut_by_bytes && range.is_empty() && !out.offset_past_end {
                return Err(ToolError::msg(format!(
                    "Grep: the output before offset {offset} is over {} bytes; narrow the search \
                     (path, glob, type or a more specific pattern)",
                    plan.max_content_bytes
                )));
            }
            let shown = &lines[range.clone()];
            let cut = range.end < total;
            out.num_lines = Some(shown.len());
            out.content = Some(shown.join("\n"));
            // Claude Code's content mode names no files (`numFiles: 0, filenames: []`).
            out.applied_limit = (cut && limit > 0).then_some(limit);
            // Only a page the byte bound shortened says so.
            let short = limit == 0 || shown.len() < limit;
            out.content_cut_at_bytes =
                (found.cut_by_bytes && cut && short).then_some(plan.max_content_bytes);
        }
        OutputMode::Count => {
            let mut hits = found.files;
            hits.sort_by(|a, b| a.path.cmp(&b.path));
            let entries: Vec<String> = hits
                .iter()
                .map(|h| {
                    if plan.root_is_file {
                        h.count.to_string()
                    } else {
                        format!("{}:{}", h.display, h.count)
                    }
                })
                .collect();
            let (range, cut) = page(entries.len());
            out.offset_past_end = offset > 0 && !entries.is_empty() && offset >= entries.len();
            out.content = Some(entries[range.clone()].join("\n"));
            // The total is the page's, as Claude Code sums the lines it shows ("Found 178
            // total occurrences across 5 files. with pagination = limit: 5"); the names are
            // in `content` only: Claude Code's count mode has `filenames: []`.
            out.num_files = range.len();
            out.num_matches = Some(hits[range].iter().map(|h| h.count).sum());
            out.applied_limit = cut.then_some(limit);
        }
    }
    Ok(out)
}

struct SearchBuilder<'a> {
    plan: &'a Plan,
    found: &'a Found,
    cwd: &'a Path,
    cancel: CancellationToken,
}

impl<'a> ParallelVisitorBuilder<'a> for SearchBuilder<'a> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 'a> {
        Box::new(SearchVisitor {
            plan: self.plan,
            found: self.found,
            cwd: self.cwd,
            cancel: self.cancel.clone(),
            searcher: searcher_for(self.plan, false),
            printer: printer_for(self.plan),
        })
    }
}

/// One walker thread: searches each file it is handed.
struct SearchVisitor<'a> {
    plan: &'a Plan,
    /// What was found, and what could not be read (a directory not listed, a file not
    /// opened), with why.
    found: &'a Found,
    cwd: &'a Path,
    cancel: CancellationToken,
    searcher: Searcher,
    printer: Printer,
}

impl ParallelVisitor for SearchVisitor<'_> {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> WalkState {
        if self.cancel.is_cancelled() || self.found.past_deadline() {
            return WalkState::Quit;
        }
        let entry = match entry {
            Ok(entry) => entry,
            // A directory that cannot be listed (ripgrep warns, and goes on).
            // (An ignore file that does not parse is no path left unsearched.)
            Err(e) => {
                if e.io_error().is_some() {
                    self.not_read(walk_error_text(&e, self.cwd));
                }
                return WalkState::Continue;
            }
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return WalkState::Continue;
        }
        self.found.searched_any.store(true, Ordering::Relaxed);
        let path = entry.path();
        let display = fsutil::listed_path(path, self.cwd);
        // An unreadable file is skipped, as ripgrep skips it, and the result says so.
        match search_file(
            self.plan,
            &mut self.searcher,
            &mut self.printer,
            path,
            &display,
            self.found,
        ) {
            Ok(Some((hit, printed, whole))) => self
                .found
                .hits
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .add(hit, printed, whole),
            Ok(None) => {}
            // Stopped at the deadline: no file left unread, and no more to search.
            Err(e) if past_deadline(&e) => return WalkState::Quit,
            Err(e) => self.not_read(format!("{display} ({e})")),
        }
        WalkState::Continue
    }
}

impl SearchVisitor<'_> {
    fn not_read(&self, what: String) {
        self.found
            .unreadable
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .add(what);
    }
}

/// A walk error as the result names it: the path relative to `cwd` when inside, then why.
pub(crate) fn walk_error_text(error: &ignore::Error, cwd: &Path) -> String {
    fn inner(error: &ignore::Error, cwd: &Path) -> Option<String> {
        match error {
            ignore::Error::WithPath { path, err } => Some(format!(
                "{} ({})",
                fsutil::listed_path(path, cwd),
                inner(err, cwd).unwrap_or_else(|| err.to_string())
            )),
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                inner(err, cwd)
            }
            _ => None,
        }
    }
    inner(error, cwd).unwrap_or_else(|| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deadline::MAX_LEFT_BEHIND;

    /// A tree of `files` files with `lines` matching lines each.
    fn tree(files: usize, lines: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in 0..files {
            let text: String = (0..lines)
                .map(|l| format!("needle {l} of file {f}\n"))
                .collect();
            std::fs::write(dir.path().join(format!("f{f:03}.txt")), text).unwrap();
        }
        dir
    }

    fn grep(
        dir: &Path,
        input: serde_json::Value,
        max_bytes: usize,
    ) -> Result<GrepOutput, ToolError> {
        let ctx = ToolUseContext::new(dir.to_path_buf());
        let mut input = input;
        input["pattern"] = "needle".into();
        input["output_mode"] = "content".into();
        let input: GrepInput = serde_json::from_value(input).unwrap();
        let mut plan = plan(&input, &ctx).unwrap();
        plan.max_content_bytes = max_bytes;
        search(plan, &ctx, DEFAULT_TIMEOUT)
    }

    fn lines_of(out: &GrepOutput) -> Vec<String> {
        out.content
            .as_deref()
            .unwrap_or("")
            .lines()
            .map(str::to_owned)
            .collect()
    }

    #[test]
    fn content_pages_keep_only_what_they_show_and_match_the_whole_output() {
        let dir = tree(120, 9);
        for extra in [serde_json::json!({}), serde_json::json!({"-C": 1})] {
            let mut all = extra.clone();
            all["head_limit"] = 0.into();
            let full = lines_of(&grep(dir.path(), all, usize::MAX).unwrap());
            assert!(full.len() >= 120 * 9, "{}", full.len());
            for (offset, limit) in [(0, 7), (50, 7), (500, 200), (1070, 100)] {
                let mut page = extra.clone();
                page["offset"] = offset.into();
                page["head_limit"] = limit.into();
                let out = grep(dir.path(), page, usize::MAX).unwrap();
                let end = (offset + limit).min(full.len());
                assert_eq!(
                    lines_of(&out),
                    full[offset..end],
                    "offset {offset} limit {limit} {extra}"
                );
                assert_eq!(out.applied_limit, (end < full.len()).then_some(limit));
                assert_eq!((out.num_files, out.filenames.len()), (0, 0));
            }
        }
    }

    #[test]
    fn content_past_the_byte_bound_stops_at_a_line_and_says_so() {
        let dir = tree(40, 20);
        let full =
            lines_of(&grep(dir.path(), serde_json::json!({"head_limit": 0}), usize::MAX).unwrap());
        let bound = 4000;
        let first = grep(dir.path(), serde_json::json!({"head_limit": 0}), bound).unwrap();
        let shown = lines_of(&first);
        let shown_first = shown.len();
        assert!(first.content.as_deref().unwrap().len() <= bound);
        assert!(
            !shown.is_empty() && shown.len() < full.len(),
            "{}",
            shown.len()
        );
        assert_eq!(shown, full[..shown.len()]);
        // The page says it was cut, and how to get the rest.
        assert_eq!(first.content_cut_at_bytes, Some(bound));
        assert_eq!(first.applied_limit, None);
        assert!(render(&first).ends_with(
            "[Output cut at 1 MiB: the matches after these lines are not shown. Narrow the \
             search (path, glob, type or a more specific pattern).]"
        ));
        // A page that fits says nothing.
        let fits = grep(dir.path(), serde_json::json!({"head_limit": 20}), bound).unwrap();
        assert_eq!(lines_of(&fits), full[..20]);
        assert_eq!(
            (fits.content_cut_at_bytes, fits.applied_limit),
            (None, Some(20))
        );
        // One file bigger than the bound: its first whole lines.
        let big = tree(1, 2000);
        let full =
            lines_of(&grep(big.path(), serde_json::json!({"head_limit": 0}), usize::MAX).unwrap());
        let out = grep(big.path(), serde_json::json!({"head_limit": 0}), bound).unwrap();
        let shown = lines_of(&out);
        assert!(out.content.as_deref().unwrap().len() <= bound);
        assert_eq!(shown, full[..shown.len()]);
        assert_eq!(
            out.content_cut_at_bytes,
            Some(bound),
            "the cut must be reported"
        );
        // Past what the bound kept of it: no "No entries at this offset", a way out.
        let err = grep(
            big.path(),
            serde_json::json!({"head_limit": 5, "offset": 1900}),
            bound,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("narrow the search"), "{err}");
        // An offset the bound cannot reach is refused with a way out.
        let err = grep(
            dir.path(),
            serde_json::json!({"head_limit": 10, "offset": shown_first}),
            bound,
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("narrow the search"), "{err}");
    }

    /// The plan of a files_with_matches search for `needle` in the context's directory.
    fn files_plan(ctx: &ToolUseContext) -> Plan {
        let input: GrepInput =
            serde_json::from_value(serde_json::json!({"pattern": "needle"})).unwrap();
        plan(&input, ctx).unwrap()
    }

    /// A search whose read never returns (`/proc/kmsg`, a file on a hung mount: here the
    /// search walks the tree, then blocks as such a read would, for 10 s) answers at its
    /// time limit, with the files it found and a note that it timed out, instead of
    /// waiting for the read; the thread stuck in it is left behind.
    #[test]
    fn a_search_stuck_in_a_read_answers_at_the_limit_with_what_it_found() {
        let dir = tree(3, 1);
        let ctx = ToolUseContext::new(dir.path());
        let (_release, stuck) = std::sync::mpsc::channel::<()>();
        let limit = Duration::from_millis(300);
        let started = Instant::now();
        static STUCK: deadline::Runs = deadline::Runs::new();
        let out = search_with(
            files_plan(&ctx),
            &ctx,
            limit,
            &STUCK,
            move |plan, ctx, found| {
                walk(plan, ctx, found)?;
                // The read that does not return (until the test ends, or 10 s).
                let _ = stuck.recv_timeout(Duration::from_secs(10));
                Ok(())
            },
        )
        .unwrap();
        let took = started.elapsed();
        assert!(took < Duration::from_secs(5), "the call waited {took:?}");
        assert!(took >= limit, "answered before the limit: {took:?}");
        let mut names = out.filenames.clone();
        names.sort();
        assert_eq!(names, ["f000.txt", "f001.txt", "f002.txt"]);
        assert_eq!(out.timed_out_after_ms, Some(300));
        let text = render(&out);
        assert!(
            text.ends_with(
                "\n\n[Search timed out after 300 ms: the results may be incomplete. Search a \
                 more specific path or pattern.]"
            ),
            "{text}"
        );
        // A search that ends in time says nothing of the kind.
        let out = search(files_plan(&ctx), &ctx, DEFAULT_TIMEOUT).unwrap();
        assert_eq!(out.timed_out_after_ms, None);
        assert!(!render(&out).contains("timed out"));
    }

    /// A walk past its limit stops at the next file and says so (a tree too big to search
    /// in time; here a limit of zero).
    #[test]
    fn a_walk_past_its_limit_stops_and_says_so() {
        let dir = tree(50, 1);
        let ctx = ToolUseContext::new(dir.path());
        let out = search(files_plan(&ctx), &ctx, Duration::ZERO).unwrap();
        assert_eq!(out.timed_out_after_ms, Some(0));
        assert!(out.filenames.len() < 50, "{}", out.filenames.len());
        assert!(render(&out).contains("[Search timed out after 0 ms"));
    }

    /// Searches left behind at their limit (stuck in a read that never returns) are
    /// counted until they end: with [`MAX_LEFT_BEHIND`] of them still running, a new search
    /// is refused at once, saying why, instead of leaving more threads behind; once they
    /// end, the count is back to zero and searches run again. A search that ends in time
    /// is not counted.
    #[test]
    fn searches_left_behind_are_capped_and_counted_until_they_end() {
        static STUCK: deadline::Runs = deadline::Runs::new();
        let dir = tree(1, 1);
        let ctx = ToolUseContext::new(dir.path());
        let limit = Duration::from_millis(20);
        let out = search_with(files_plan(&ctx), &ctx, DEFAULT_TIMEOUT, &STUCK, walk).unwrap();
        assert_eq!(out.filenames, ["f000.txt"]);
        assert_eq!(STUCK.left_behind(), 0);
        let mut releases = Vec::new();
        for n in 0..MAX_LEFT_BEHIND {
            let (release, stuck) = std::sync::mpsc::channel::<()>();
            releases.push(release);
            let out = search_with(
                files_plan(&ctx),
                &ctx,
                limit,
                &STUCK,
                move |plan, ctx, found| {
                    walk(plan, ctx, found)?;
                    // The read that does not return (until released, or 30 s).
                    let _ = stuck.recv_timeout(Duration::from_secs(30));
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(out.timed_out_after_ms, Some(20));
            assert_eq!(STUCK.left_behind(), n + 1);
        }
        let started = Instant::now();
        let err = search_with(files_plan(&ctx), &ctx, limit, &STUCK, walk)
            .unwrap_err()
            .to_string();
        // Refused at once, not after waiting out the stuck searches (30 s): a bound far
        // from both, for a loaded machine.
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert!(
            err.contains(&format!(
                "{MAX_LEFT_BEHIND} earlier searches are still stuck past their time limit"
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
        let out = search_with(files_plan(&ctx), &ctx, DEFAULT_TIMEOUT, &STUCK, walk).unwrap();
        assert_eq!(out.filenames, ["f000.txt"]);
        assert_eq!(STUCK.left_behind(), 0);
    }

    /// A search left behind at its limit stops within the file it is reading (a huge file,
    /// read slowly: here a FIFO, standing in for a file on a slow mount, fed for as long
    /// as it is read, for at most 10 s), instead of reading it to its end: the reader goes
    /// away soon after the call answered, and the writer's next write fails.
    #[test]
    fn a_search_past_its_limit_stops_reading_the_file_it_is_in() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("slow"), "hay\n").unwrap();
        let fifo = dir.path().join("endless");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                let mut pipe = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
                let chunk = b"hay\n".repeat(16 * 1024);
                let started = Instant::now();
                while started.elapsed() < Duration::from_secs(10) {
                    if pipe.write_all(&chunk).is_err() {
                        // The reader went away.
                        return Some(Instant::now());
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                None
            })
        };
        let ctx = ToolUseContext::new(dir.path());
        let input: GrepInput =
            serde_json::from_value(serde_json::json!({"pattern": "needle", "path": "slow"}))
                .unwrap();
        let mut plan = plan(&input, &ctx).unwrap();
        assert!(plan.root_is_file);
        plan.root = fifo;
        let out = search(plan, &ctx, Duration::from_millis(300)).unwrap();
        let answered = Instant::now();
        assert_eq!(out.timed_out_after_ms, Some(300));
        let stopped = writer
            .join()
            .unwrap()
            .expect("the search went on reading for 10 s past its limit");
        let after = stopped.saturating_duration_since(answered);
        assert!(after < Duration::from_secs(3), "read on for {after:?}");
    }

    /// A Grep cancelled while its root is looked at: `call` answers with the tool's
    /// cancelled error (not a message), `validate_input` with a refusal that says the call
    /// was cancelled. One whose time limit passes while all its searches at a time are in
    /// use is refused as busy, in Grep's words, not told its root could not be read.
    #[test]
    fn a_cancelled_or_busy_look_at_the_root_says_so() {
        static RUNS: deadline::Runs = deadline::Runs::new();
        static FULL: deadline::Runs = deadline::Runs::with(MAX_LEFT_BEHIND, 0);
        let dir = tree(1, 1);
        let input: GrepInput =
            serde_json::from_value(serde_json::json!({"pattern": "needle", "path": "."})).unwrap();
        let cancelled = ToolUseContext::new(dir.path());
        cancelled.cancellation().cancel();
        let plan = || {
            plan_with(&input, &cancelled, DEFAULT_TIMEOUT, &RUNS, look_at_root)
                .err()
                .expect("a cancelled look planned the search")
        };
        assert!(plan().into_tool_error().is_cancelled());
        let refused = plan().into_validation();
        assert!(
            refused.message.contains("was cancelled"),
            "{}",
            refused.message
        );
        let ctx = ToolUseContext::new(dir.path());
        let busy = plan_with(
            &input,
            &ctx,
            Duration::from_millis(100),
            &FULL,
            look_at_root,
        )
        .err()
        .expect("a look that never got a slot planned the search")
        .into_tool_error();
        assert_eq!(
            busy.to_string(),
            ToolError::msg(job(&FULL).full(0)).to_string()
        );
        assert!(busy.to_string().starts_with(&format!(
            "Grep cannot search now: its {MAX_LEFT_BEHIND} searches at a time are all in use"
        )));
    }

    /// A Grep whose root cannot be looked at in time (a `stat` or a listing that never
    /// returns, a directory on a hung network mount: here a look that blocks until
    /// released, or 10 s) is refused at its time limit, in `validate_input` and in `call`
    /// (both plan the search), saying the root could not be read within it, instead of
    /// waiting on the look; the thread stuck in it is counted as a search left behind
    /// until the look returns.
    #[test]
    fn a_root_whose_look_never_returns_is_refused_at_the_limit() {
        static STUCK: deadline::Runs = deadline::Runs::new();
        let dir = tree(1, 1);
        let ctx = ToolUseContext::new(dir.path());
        let input: GrepInput =
            serde_json::from_value(serde_json::json!({"pattern": "needle", "path": "."})).unwrap();
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        let limit = Duration::from_millis(300);
        let started = Instant::now();
        let (done, outcome) = std::sync::mpsc::channel();
        {
            let (input, ctx) = (input.clone(), ctx.clone());
            std::thread::spawn(move || {
                let planned = plan_with(&input, &ctx, limit, &STUCK, move |root, ctx| {
                    // The `stat` or listing that does not return (until released, or 10 s).
                    let _ = stuck.recv_timeout(Duration::from_secs(10));
                    look_at_root(root, ctx)
                });
                let _ = done.send(planned.map(drop));
            });
        }
        let err = outcome
            .recv_timeout(Duration::from_secs(5))
            .expect("the plan waited on the look past its limit")
            .unwrap_err();
        let took = started.elapsed();
        assert!(took >= limit, "answered before the limit: {took:?}");
        let expected = format!(
            "Cannot search {}: it could not be read within 300 ms (it may be on a hung network \
             mount). Leave it out of the search, or try again later.",
            dir.path().display()
        );
        match err {
            RootError::Invalid(e) => assert_eq!(e.message, expected),
            other => panic!("not a refusal: {other:?}"),
        }
        assert_eq!(STUCK.left_behind(), 1);
        // A look that answers in time plans the search.
        let planned = plan_with(&input, &ctx, DEFAULT_TIMEOUT, &STUCK, look_at_root).unwrap();
        assert!(!planned.root_is_file);
        assert_eq!(STUCK.left_behind(), 1);
        drop(release);
        let waited = Instant::now();
        while STUCK.left_behind() > 0 {
            assert!(
                waited.elapsed() < Duration::from_secs(10),
                "the look left behind never ended"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The time limit of a Grep call counts from the start of its plan: a look at the root
    /// that took most of it (here 300 ms of 600) leaves the search only the rest, so that
    /// a call whose search then sticks (a read that never returns) answers at the limit,
    /// not a whole limit after the look.
    #[test]
    fn the_look_at_the_root_counts_in_the_calls_time_limit() {
        static STUCK: deadline::Runs = deadline::Runs::new();
        let dir = tree(1, 1);
        let ctx = ToolUseContext::new(dir.path());
        let input: GrepInput =
            serde_json::from_value(serde_json::json!({"pattern": "needle"})).unwrap();
        let limit = Duration::from_millis(600);
        let plan = plan_with(&input, &ctx, limit, &STUCK, |root, ctx| {
            std::thread::sleep(Duration::from_millis(300));
            look_at_root(root, ctx)
        })
        .unwrap();
        let (_release, stuck) = std::sync::mpsc::channel::<()>();
        let searching = Instant::now();
        let out = search_with(plan, &ctx, limit, &STUCK, move |plan, ctx, found| {
            walk(plan, ctx, found)?;
            // The read that does not return (until the test ends, or 10 s).
            let _ = stuck.recv_timeout(Duration::from_secs(10));
            Ok(())
        })
        .unwrap();
        let searched = searching.elapsed();
        assert_eq!(out.timed_out_after_ms, Some(600));
        assert_eq!(out.filenames, ["f000.txt"]);
        assert!(
            searched < Duration::from_millis(550),
            "the search had a whole limit of its own: {searched:?}"
        );
    }

    #[test]
    fn glob_parameter_splits_like_claude_code() {
        assert_eq!(split_globs("*.rs, *.toml"), ["*.rs", "*.toml"]);
        assert_eq!(split_globs("*.{ts,tsx} *.js"), ["*.{ts,tsx}", "*.js"]);
        assert_eq!(split_globs("a,b"), ["a", "b"]);
    }
}
