//! The `Edit` tool: exact string replacement in a file, atomically, keeping the file's
//! encoding, line endings and permissions.

use std::borrow::Cow;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    FileAccess, MaxResultSize, PermissionSubject, ProgressSender, ToolError, ToolResult,
    ToolResultContent, ToolUseContext, TypedTool, ValidationError,
};

use unicode_normalization::UnicodeNormalization as _;

use crate::fsutil::{self, Decoded, Encoding};
use crate::patch::{Hunk, structured_patch};

/// Largest file Edit changes (Claude Code's limit).
pub const MAX_EDIT_FILE_BYTES: u64 = 1024 * 1024 * 1024;

/// Input of the `Edit` tool.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct EditInput {
    /// The absolute path to the file to modify
    pub file_path: String,
    /// The text to replace
    pub old_string: String,
    /// The text to replace it with (must be different from old_string)
    pub new_string: String,
    /// Replace all occurrences of old_string (default false)
    #[serde(default)]
    pub replace_all: Option<bool>,
}

/// What `Edit` returns (Claude Code's shape).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EditOutput {
    /// The absolute path.
    pub file_path: PathBuf,
    /// The `old_string` given.
    pub old_string: String,
    /// The `new_string` given.
    pub new_string: String,
    /// The content before the edit (empty for a created file).
    pub original_file: String,
    /// The change, as hunks.
    pub structured_patch: Vec<Hunk>,
    /// Whether the user changed the proposed edit (never, here).
    pub user_modified: bool,
    /// Whether every occurrence was replaced.
    pub replace_all: bool,
}

/// The `Edit` tool. See the [module docs](self).
#[derive(Debug, Clone, Copy, Default)]
pub struct Edit;

const DESCRIPTION: &str = "Performs exact string replacements in files.

Usage:
- You must use your `Read` tool at least once in the conversation before editing. This tool will error if you attempt an edit without reading the file.
- When editing text from Read tool output, ensure you preserve the exact indentation (tabs/spaces) as it appears AFTER the line number prefix. The line number prefix format is: spaces + line number + arrow. Everything after that arrow is the actual file content to match. Never include any part of the line number prefix in the old_string or new_string.
- ALWAYS prefer editing existing files in the codebase. NEVER write new files unless explicitly required.
- The edit will FAIL if `old_string` is not unique in the file. Either provide a larger string with more surrounding context to make it unique or use `replace_all` to change every instance of `old_string`.
- Use `replace_all` for replacing and renaming strings across the file. This parameter is useful if you want to rename a variable for instance.";

/// A refusal with Claude Code's error code.
struct Refusal {
    message: String,
    code: Option<i32>,
}

impl Refusal {
    fn code(message: impl Into<String>, code: i32) -> Self {
        Self {
            message: message.into(),
            code: Some(code),
        }
    }
    fn plain(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: None,
        }
    }
}

/// The result of applying an edit in memory.
struct Planned {
    /// The bytes to write.
    bytes: Vec<u8>,
    /// The original text (decoded, LF form when the file is CRLF).
    original: String,
    /// The new text, same form.
    updated: String,
    /// The lines (1-based, inclusive) of the original text the edit replaces, for the check
    /// that a Read showed them.
    touched: Vec<(usize, usize)>,
}

/// The lines (1-based, inclusive) of each match of `needle` in `text` (the line of its
/// first character to the line of its last).
fn lines_of_matches(text: &str, needle: &str) -> Vec<(usize, usize)> {
    if needle.is_empty() {
        return Vec::new();
    }
    // A final line break belongs to the last line matched; any other starts a line.
    let breaks = needle
        .strip_suffix('\n')
        .unwrap_or(needle)
        .matches('\n')
        .count();
    let mut line = 1;
    let mut counted = 0;
    text.match_indices(needle)
        .map(|(at, _)| {
            line += text[counted..at].matches('\n').count();
            counted = at;
            (line, line + breaks)
        })
        .collect()
}

#[async_trait::async_trait]
impl TypedTool for Edit {
    type Input = EditInput;
    type Output = EditOutput;
    const NAME: &'static str = "Edit";

    fn description(&self) -> Cow<'_, str> {
        DESCRIPTION.into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn search_hint(&self) -> Option<&str> {
        Some("modify file contents in place")
    }
    /// It replaces or deletes existing text: not an additive change.
    fn is_destructive(&self, _: &EditInput) -> bool {
        true
    }
    /// Hooks and prompts see the absolute path the tool uses (Claude Code's
    /// `backfillObservableInput`).
    fn observable_input(
        &self,
        input: &serde_json::Value,
        ctx: &ToolUseContext,
    ) -> Option<serde_json::Value> {
        fsutil::observable_path(input, "file_path", ctx)
    }
    fn permission_subject(&self, input: &EditInput) -> Option<PermissionSubject> {
        fsutil::subject_path(&input.file_path).map(|path| PermissionSubject::Path {
            path,
            access: FileAccess::Write,
        })
    }

    async fn validate_input(
        &self,
        input: &EditInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        let path = fsutil::absolute_path(&input.file_path, "file_path", ctx).ok();
        // A denied path first, before the file system is looked at (Claude Code's order).
        if let Some(path) = &path {
            fsutil::refuse_denied_path(path, FileAccess::Write, ctx)?;
        }
        let (input, ctx) = (input.clone(), ctx.clone());
        fsutil::validation_locked(path.as_deref(), move || validate(&input, &ctx)).await
    }

    async fn call(
        &self,
        input: EditInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<EditOutput>, ToolError> {
        let path = fsutil::absolute_path(&input.file_path, "file_path", &ctx)
            .map_err(|e| ToolError::msg(e.message))?;
        let confine = fsutil::write_confinement(self, &ctx, &path, |real| {
            fsutil::input_with_path(&input, "file_path", real)
        })
        .await;
        let out = fsutil::blocking_locked(path, move |path, lock| {
            edit_blocking(path, &confine, input, &ctx, lock)
        })
        .await?;
        Ok(ToolResult::new(out))
    }

    fn to_content(&self, output: &EditOutput) -> ToolResultContent {
        let path = output.file_path.display();
        ToolResultContent::Text(if output.replace_all {
            format!(
                "The file {path} has been updated. All occurrences of '{}' were successfully replaced with '{}'.",
                output.old_string, output.new_string
            )
        } else {
            format!("The file {path} has been updated successfully.")
        })
    }
}

/// The edit, with the file's lock held from the read to the read-cache update.
fn edit_blocking(
    path: &Path,
    confine: &fsutil::Confinement,
    input: EditInput,
    ctx: &ToolUseContext,
    lock: &fsutil::FileLock,
) -> Result<EditOutput, ToolError> {
    if input.old_string == input.new_string {
        return Err(ToolError::msg(
            "No changes to make: old_string and new_string are exactly the same.",
        ));
    }
    let bytes = fsutil::read_optional(path)?;
    if bytes.is_none() && !input.old_string.is_empty() {
        return Err(ToolError::msg(fsutil::not_found_message(path, ctx)));
    }
    let planned = plan(bytes.as_deref(), &input).map_err(|r| ToolError::msg(r.message))?;
    unseen_lines_refused(ctx, path, &planned.touched).map_err(ToolError::msg)?;
    let verified = fsutil::recheck_before_write(ctx, path, bytes.as_deref(), lock)?;
    // What Read showed altered of the file (a cut line) the edit did not show the model
    // either: Write stays refused.
    // A file the edit creates is known whole (what a deleted file's Reads showed of it is
    // no part of it).
    let created = bytes.is_none();
    let seen_before = ctx
        .file_state()
        .get(path)
        .filter(|s| !created && s.truncated && !s.ranged)
        .map(|s| s.seen_lines);
    fsutil::write_and_record(
        ctx,
        path,
        confine,
        &planned.bytes,
        planned.updated.clone(),
        verified,
        if created {
            fsutil::Known::Whole
        } else {
            fsutil::Known::AsBefore
        },
        lock,
    )?;
    // The lines the Reads showed, renumbered for the edited text: the next edit of a file
    // seen in part is checked against them, as this one was.
    if let Some(seen) = seen_before
        && let Some(mut state) = ctx.file_state().get(path).filter(|s| s.truncated)
    {
        let delta = line_count(&planned.updated) as isize - line_count(&planned.original) as isize;
        state.seen_lines = renumbered(&seen, &planned.touched, delta);
        ctx.file_state().insert(path, state);
    }
    Ok(EditOutput {
        file_path: path.to_path_buf(),
        structured_patch: structured_patch(&planned.original, &planned.updated),
        original_file: planned.original,
        user_modified: false,
        replace_all: input.replace_all.unwrap_or(false),
        old_string: input.old_string,
        new_string: input.new_string,
    })
}

/// The number of lines of `text` as Read numbers them.
fn line_count(text: &str) -> usize {
    text.lines().count()
}

/// `seen` (line ranges, 1-based, inclusive) after an edit that replaced the lines `touched`
/// (in order) and changed the line count by `delta` in all: a range before the first
/// replacement stays, one after is moved, one holding a replacement grows or shrinks with it.
/// When the change cannot be shared out evenly among the replacements, only the ranges
/// before the first stay (what follows is read again).
fn renumbered(
    seen: &[(usize, usize)],
    touched: &[(usize, usize)],
    delta: isize,
) -> Vec<(usize, usize)> {
    let Some(&(first_touched, _)) = touched.first() else {
        return seen.to_vec();
    };
    let count = touched.len() as isize;
    if delta % count != 0 {
        return seen
            .iter()
            .filter(|&&(_, to)| to < first_touched)
            .copied()
            .collect();
    }
    let each = delta / count;
    // Where line `line` of the old text is in the new one: moved by the replacements before
    // it, and by its own when it is the last line of one (`end`).
    let map = |line: usize, end: bool| -> usize {
        let before = touched
            .iter()
            .filter(|&&(_, last)| last < line || (end && last == line))
            .count() as isize;
        (line as isize + each * before).max(1) as usize
    };
    seen.iter()
        .map(|&(from, to)| {
            let (from, to) = (map(from, false), map(to, true));
            (from, to.max(from))
        })
        .collect()
}

/// After Reads that showed only part of the file, cut to a `PARTIAL view` (no range asked
/// for), an edit may change only lines one of them showed (`touched`): text the model never
/// saw is not replaced on a guess of what it holds. Claude Code refuses every edit then ("a
/// PARTIAL view read does not count"); the lines shown are as good as a Read here. A Read of
/// a range the model asked for counts for the whole file, as in Claude Code.
fn unseen_lines_refused(
    ctx: &ToolUseContext,
    path: &Path,
    touched: &[(usize, usize)],
) -> Result<(), String> {
    let Some(seen) = ctx
        .file_state()
        .get(path)
        .filter(|s| s.truncated && !s.ranged)
    else {
        return Ok(());
    };
    let shown = |&(first, last): &(usize, usize)| {
        seen.seen_lines
            .iter()
            .any(|&(from, to)| from <= first && last <= to)
    };
    let Some(&(first, last)) = touched.iter().find(|span| !shown(span)) else {
        return Ok(());
    };
    let lines = |(from, to): (usize, usize)| {
        if from == to {
            format!("line {from}")
        } else {
            format!("lines {from}-{to}")
        }
    };
    // The lines of the span no Read showed, as ranges: only those are named unseen (the
    // text may start on the last line shown).
    let mut unseen: Vec<(usize, usize)> = Vec::new();
    for line in first..=last {
        if seen
            .seen_lines
            .iter()
            .any(|&(from, to)| (from..=to).contains(&line))
        {
            continue;
        }
        match unseen.last_mut() {
            Some((_, to)) if *to + 1 == line => *to = line,
            _ => unseen.push((line, line)),
        }
    }
    let at = if unseen == [(first, last)] {
        format!("{}, which no Read has shown", lines((first, last)))
    } else {
        let unseen: Vec<String> = unseen.iter().map(|&span| lines(span)).collect();
        format!(
            "{}, and no Read has shown {}",
            lines((first, last)),
            unseen.join(", ")
        )
    };
    let ranges: Vec<String> = seen
        .seen_lines
        .iter()
        .map(|&(from, to)| format!("{from}-{to}"))
        .collect();
    let shown = if ranges.is_empty() {
        "no lines were shown".to_owned()
    } else {
        format!("lines {} were shown", ranges.join(", "))
    };
    Err(format!(
        "The text to replace is on {at}: the file was only partly read ({shown}). Read \
         that part first (offset and limit), then edit."
    ))
}

/// Applies the edit to `bytes` (the file, `None` when missing) in memory. An edit that
/// would leave the file as it is (the new text differs from the old only in what the file's
/// own style overrides: straight quotes where it has curly ones, LF where it has CRLF) is
/// refused, as Claude Code refuses it, rather than reported done.
fn plan(bytes: Option<&[u8]>, input: &EditInput) -> Result<Planned, Refusal> {
    let planned = plan_any(bytes, input)?;
    if bytes.is_some_and(|b| b == planned.bytes.as_slice()) {
        return Err(Refusal::plain(
            "Original and edited file match exactly. Failed to apply edit. (Where the new string differs from the old only in quote style or line endings, the edit keeps them as the file has them.)",
        ));
    }
    Ok(planned)
}

fn plan_any(bytes: Option<&[u8]>, input: &EditInput) -> Result<Planned, Refusal> {
    let decoded = match bytes {
        None => None,
        Some(bytes) => Some(
            fsutil::decode(bytes)
                .or_else(|| fsutil::decode_keeping_stray_bytes(bytes))
                .ok_or_else(|| undecodable(bytes))?,
        ),
    };
    let Some(Decoded {
        encoding: Encoding::Utf8StrayBytes { .. },
        ..
    }) = &decoded
    else {
        return plan_decoded(decoded, input);
    };
    // A file with bytes that are not UTF-8, which Read showed as U+FFFD: the edit changes
    // the text around them and keeps them. The strings cannot name them, nor hold the
    // characters that stand for them.
    if input.new_string.chars().any(fsutil::is_stray_byte)
        || input.old_string.chars().any(fsutil::is_stray_byte)
    {
        return Err(Refusal::plain(
            "Cannot edit this file with these strings: they hold characters U+10FE00 to U+10FEFF, which stand for this file's bytes that are not UTF-8 while it is edited.",
        ));
    }
    let mut planned = plan_decoded(decoded, input).map_err(|mut refusal| {
        if refusal.code == Some(8) && input.old_string.contains('\u{FFFD}') {
            refusal.message.push_str(
                "\nThe file holds bytes that are not UTF-8, which Read shows as \u{FFFD}: an edit cannot match them. Choose a string beside them.",
            );
        }
        refusal
    })?;
    // U+FFFD in old_string, in a file where Read shows bytes that are not UTF-8 as U+FFFD too:
    // the edit matched one real U+FFFD, but the model sees more places alike and cannot
    // know which one is changed. Counted as the model sees the text, it is ambiguous.
    if input.old_string.contains('\u{FFFD}')
        && !input.replace_all.unwrap_or(false)
        && let Some(bytes) = bytes
    {
        let seen = shown_matches(bytes, &input.old_string);
        if seen > 1 {
            let mut refusal = too_many(seen, &input.old_string);
            refusal.message.push_str(
                "\nOnly one of them is text an edit can change: the others hold bytes that are not UTF-8, which Read shows as \u{FFFD} too. Add context to pick the one you mean.",
            );
            return Err(refusal);
        }
    }
    planned.original = fsutil::shown_stray_bytes(&planned.original);
    planned.updated = fsutil::shown_stray_bytes(&planned.updated);
    Ok(planned)
}

/// How many times `old` is in the file as Read shows it (bytes that are not UTF-8 as
/// U+FFFD, lines without their CR), `old` taken as given or with its CRLFs as LFs, whichever
/// is found more often.
fn shown_matches(bytes: &[u8], old: &str) -> usize {
    let shown = fsutil::crlf_to_lf(&String::from_utf8_lossy(bytes));
    [Cow::Borrowed(old), Cow::Owned(fsutil::crlf_to_lf(old))]
        .iter()
        .filter_map(|old| find_actual(&shown, old))
        .map(|actual| shown.matches(actual.as_str()).count())
        .max()
        .unwrap_or(0)
}

/// The refusal for a file Edit cannot decode, saying what is wrong with it. A file with a
/// UTF-16 byte order mark is one Read shows as UTF-16 text (U+FFFD for a stray last byte or
/// an unpaired surrogate): an edit would lose what U+FFFD stands for, so it is refused, and
/// told as a damaged UTF-16 file, not as a file that is no UTF-16 text.
fn undecodable(bytes: &[u8]) -> Refusal {
    let Some(what) = fsutil::damaged_utf16(bytes) else {
        return Refusal::plain(
            "Cannot edit this file: it is not UTF-8 or UTF-16 text (it looks binary or uses another encoding).",
        );
    };
    Refusal::plain(format!(
        "Cannot edit this file: it is {what}, which Read shows as \u{FFFD}; an edit would lose \
         what it stands for. Repair the file first, e.g. with Bash."
    ))
}

/// [`plan`] for the decoded file (`None`: it does not exist).
fn plan_decoded(decoded: Option<Decoded>, input: &EditInput) -> Result<Planned, Refusal> {
    let Some(decoded) = decoded else {
        // Creating a file with an empty old_string.
        return Ok(Planned {
            bytes: input.new_string.as_bytes().to_vec(),
            original: String::new(),
            updated: input.new_string.clone(),
            touched: Vec::new(),
        });
    };
    let encoding: Encoding = decoded.encoding;
    let crlf = fsutil::is_pure_crlf(&decoded.text);
    let original = if crlf {
        fsutil::crlf_to_lf(&decoded.text)
    } else {
        decoded.text
    };
    let mut touched = Vec::new();
    let updated = if input.old_string.is_empty() {
        // An existing empty file: the new string becomes its content.
        fsutil::crlf_to_lf_if(crlf, &input.new_string)
    } else {
        let (old, new) = if crlf {
            in_view(&original, &input.old_string, &input.new_string)
        } else {
            (input.old_string.clone(), input.new_string.clone())
        };
        // A file with both endings: Read showed it without `\r`, so text that spans lines
        // is matched line-ending-blind (and counted so) and each match keeps its endings;
        // line breaks the edit adds take the ending of the line they go in.
        let mixed = !crlf
            && original.contains("\r\n")
            && (old.contains(['\n', '\r']) || new.contains('\n'));
        let (actual, new) = match find_actual(&original, &old).filter(|_| !mixed) {
            Some(actual) => {
                let new = preserve_quote_style(&old, &actual, &new);
                (actual, new)
            }
            None if mixed => {
                let replace_all = input.replace_all.unwrap_or(false);
                let lf = original.replace("\r\n", "\n");
                let (old_lf, _) = in_view(&lf, &old, &new);
                let updated =
                    mixed_endings_edit(&original, &old, &new, replace_all).map_err(|count| {
                        match count {
                            0 => not_found_in(&lf, &old_lf, &input.old_string),
                            n => too_many(n, &input.old_string),
                        }
                    })?;
                let bytes = fsutil::encode(&updated, encoding);
                let touched = find_actual(&lf, &old_lf)
                    .map(|actual| lines_of_matches(&lf, &actual))
                    .unwrap_or_default();
                return Ok(Planned {
                    bytes,
                    original,
                    updated,
                    touched,
                });
            }
            None => return Err(not_found_in(&original, &old, &input.old_string)),
        };
        touched = lines_of_matches(&original, &actual);
        let matches = touched.len();
        let replace_all = input.replace_all.unwrap_or(false);
        if matches > 1 && !replace_all {
            return Err(too_many(matches, &input.old_string));
        }
        apply(&original, &actual, &new, replace_all)
    };
    let disk_text = if crlf {
        fsutil::lf_to_crlf(&updated)
    } else {
        updated.clone()
    };
    Ok(Planned {
        bytes: fsutil::encode(&disk_text, encoding),
        original,
        updated,
        touched,
    })
}

fn too_many(matches: usize, old_string: &str) -> Refusal {
    Refusal::code(
        format!(
            "Found {matches} matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: {old_string}"
        ),
        9,
    )
}

/// An edit of a file with both CRLF and LF line endings, which Read showed with LF only:
/// `old` is looked for in the text with every `\r\n` read as `\n` (curly quotes matching
/// straight ones, as [`find_actual`]), and each match is replaced in the file itself by
/// `new` with the match's own line ending (CRLF when it held one). Deleting a string that
/// ends a line also deletes that line's break. `Err(n)`: `n` matches where exactly one was
/// needed (0: not found).
fn mixed_endings_edit(
    original: &str,
    old: &str,
    new: &str,
    replace_all: bool,
) -> Result<String, usize> {
    // The LF view, and where in it each `\r\n` of the file became a `\n`: a byte of the view
    // lies in the file as many bytes further on as `\r`s were dropped up to it. Kept for
    // the line breaks only (not for every byte: a large file would take eight times its
    // size).
    let view = LfView::of(original);
    let (lf, at) = (view.text.as_str(), |i| view.in_file(i));
    let bytes = original.as_bytes();
    let (old_lf, new_lf) = in_view(lf, old, new);
    let actual = find_actual(lf, &old_lf).ok_or(0usize)?;
    let new_lf = preserve_quote_style(&old_lf, &actual, &new_lf);
    let spans: Vec<(usize, usize)> = lf
        .match_indices(actual.as_str())
        .map(|(s, m)| {
            let e = s + m.len();
            // The `\r` of a `\r\n` the match starts with belongs to it.
            let mut start = at(s);
            if bytes[start] == b'\n' && start > 0 && bytes[start - 1] == b'\r' {
                start -= 1;
            }
            (start, at(e - 1) + 1)
        })
        .collect();
    if spans.len() > 1 && !replace_all {
        return Err(spans.len());
    }
    let deletes_line = new_lf.is_empty() && !old_lf.ends_with('\n');
    let mut out = String::with_capacity(original.len() + new.len());
    let mut done = 0;
    for (start, end) in spans {
        // A line break taken with the match before may be where this one starts: that
        // match is gone with it (as the LF path's deletion loop reads it).
        if start < done {
            continue;
        }
        let (start, end) = if deletes_line {
            let (line, end) = deletion_span(original, start, end);
            (line.max(done), end)
        } else {
            (start, end)
        };
        out.push_str(&original[done..start]);
        if crlf_line(original, start, end) {
            out.push_str(&fsutil::lf_to_crlf(&new_lf));
        } else {
            out.push_str(&new_lf);
        }
        done = end;
    }
    out.push_str(&original[done..]);
    Ok(out)
}

/// Whether the text replacing `original[start..end]` (in a file with both endings) writes its
/// line breaks as CRLF: the match's own ending when it holds a line break, else the ending
/// of the line it is in (the next line break; for a last line without one, the previous).
fn crlf_line(original: &str, start: usize, end: usize) -> bool {
    let matched = &original[start..end];
    if matched.contains('\n') {
        return matched.contains("\r\n");
    }
    let bytes = original.as_bytes();
    let crlf_at = |n: usize| n > 0 && bytes[n - 1] == b'\r';
    match original[end..].find('\n') {
        Some(n) => crlf_at(end + n),
        None => original[..start].rfind('\n').is_some_and(crlf_at),
    }
}

/// A text with every `\r\n` read as `\n` (as Read shows it), and where in it the `\n`s are
/// that were `\r\n`.
struct LfView {
    text: String,
    /// The positions in `text` of the `\n`s that were `\r\n`, ascending.
    crlf_at: Vec<usize>,
}

impl LfView {
    fn of(original: &str) -> Self {
        let mut text = String::with_capacity(original.len());
        let mut crlf_at = Vec::new();
        let mut done = 0;
        for (i, _) in original.match_indices("\r\n") {
            text.push_str(&original[done..i]);
            crlf_at.push(text.len());
            text.push('\n');
            done = i + 2;
        }
        text.push_str(&original[done..]);
        Self { text, crlf_at }
    }

    /// Where byte `i` of the view is in the original: further on by the `\r`s dropped up to
    /// it (that of its own `\r\n` included, for a `\n` that was one).
    fn in_file(&self, i: usize) -> usize {
        i + self.crlf_at.partition_point(|&n| n <= i)
    }
}

/// The strings an edit looks for and puts in `view`, a file with CRLF line ends as Read
/// shows it (each `\r\n` read as `\n`). Where Read shows a CR at a line's end (a CR CR LF
/// line, `1,alice\r`), text copied from that view holds `\r\n` for that CR and the line
/// break: `old` is matched as given when it is found so (Claude Code normalises the file
/// only), and `new` is taken as given with it. Otherwise both have their CRLFs read as LFs
/// (a model sending CRLF for a CRLF file); the line breaks are written with the file's
/// endings either way.
fn in_view(view: &str, old: &str, new: &str) -> (String, String) {
    if view.contains("\r\n") && find_actual(view, old).is_some() {
        (old.to_owned(), new.to_owned())
    } else {
        (fsutil::crlf_to_lf(old), fsutil::crlf_to_lf(new))
    }
}

/// Claude Code's refusal of an `old_string` that is not in the file, with a hint on a line
/// of its own when it would be there but for Unicode normalization or invisible characters
/// ([`not_found_hint`]): `text` is the file as searched, `old` what was looked for in it.
fn not_found_in(text: &str, old: &str, old_string: &str) -> Refusal {
    let mut refusal = not_found(old_string);
    if let Some(hint) = not_found_hint(text, old) {
        refusal.message.push('\n');
        refusal.message.push_str(&hint);
    }
    refusal
}

fn not_found(old_string: &str) -> Refusal {
    Refusal::code(
        format!("String to replace not found in file.\nString: {old_string}"),
        8,
    )
}

/// Why `old` is not in `text` though it looks so: the same text in another Unicode
/// normalization form (composed `é` against `e` + U+0301), or invisible characters (a
/// zero-width space, a soft hyphen, a direction mark) inside it in the file, which Read
/// shows as nothing, or in `old` where the file has none. `None` when neither explains it.
fn not_found_hint(text: &str, old: &str) -> Option<String> {
    if old.is_empty() {
        return None;
    }
    if !(text.is_ascii() && old.is_ascii()) {
        let old_nfc: String = old.nfc().collect();
        let text_nfc: String = text.nfc().collect();
        if find_actual(&text_nfc, &old_nfc).is_some() {
            let (file_form, old_form) = if unicode_normalization::is_nfc(old) {
                (
                    "decomposed (Unicode NFD, e.g. e + U+0301)",
                    "composed (NFC)",
                )
            } else {
                ("composed (Unicode NFC)", "decomposed (NFD)")
            };
            return Some(format!(
                "Hint: the file has this text with some characters {file_form} where old_string has them {old_form}; it matches once both are normalized. Write those characters as the file has them, or edit with Bash."
            ));
        }
    }
    if !text.contains(is_invisible) && !old.contains(is_invisible) {
        return None;
    }
    let visible = |s: &str| -> String { s.chars().filter(|&c| !is_invisible(c)).collect() };
    let (text_visible, old_visible) = (visible(text), visible(old));
    if old_visible.is_empty() {
        return None;
    }
    let actual = find_actual(&text_visible, &old_visible)?;
    let at = text_visible.find(actual.as_str())?;
    // The invisible characters of the file between the first and the last visible
    // character of the match.
    let mut inside = Vec::new();
    let mut kept = 0;
    for c in text.chars() {
        if kept >= at + actual.len() {
            break;
        }
        if !is_invisible(c) {
            kept += c.len_utf8();
        } else if kept > at {
            inside.push(c);
        }
    }
    Some(if inside.is_empty() {
        format!(
            "Hint: old_string has invisible characters ({}) that the file does not have there; it matches without them.",
            code_points(old.chars().filter(|&c| is_invisible(c)))
        )
    } else {
        format!(
            "Hint: the file has invisible characters inside this text ({}), which Read shows as nothing; old_string matches the text around them. Put them in old_string where the file has them, or edit with Bash.",
            code_points(inside.into_iter())
        )
    })
}

/// `chars` as `U+200B, U+00AD`, each once, in order.
fn code_points(chars: impl Iterator<Item = char>) -> String {
    let mut seen: Vec<char> = Vec::new();
    for c in chars {
        if !seen.contains(&c) {
            seen.push(c);
        }
    }
    seen.iter()
        .map(|&c| format!("U+{:04X}", u32::from(c)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Characters that show as nothing: zero-width spaces and joiners, direction marks,
/// embeddings and isolates, the word joiner and invisible operators, the zero-width no-break
/// space (a byte order mark inside the text), the soft hyphen, the Mongolian vowel separator
/// and the combining grapheme joiner.
fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
            | '\u{00AD}'
            | '\u{180E}'
            | '\u{034F}'
    )
}

/// Replaces `old` with `new` (every occurrence with `replace_all`, else the first). Deleting
/// a string (`new` empty) that is all its line holds besides indentation deletes the whole
/// line, its line break included, as Claude Code does; one after other text on its line
/// leaves the line break (Claude Code deletes it whenever it follows, joining the line with
/// the next: `x = 1;  // TODO` + newline + `y = 2;` became `x = 1;y = 2;`).
fn apply(content: &str, old: &str, new: &str, replace_all: bool) -> String {
    if !(new.is_empty() && !old.is_empty() && !old.ends_with('\n')) {
        return if replace_all {
            content.replace(old, new)
        } else {
            content.replacen(old, new, 1)
        };
    }
    let mut out = String::with_capacity(content.len());
    let mut done = 0;
    for (at, _) in content.match_indices(old) {
        // A line break taken with the match before may be where this one starts: that
        // match is gone with it.
        if at < done {
            continue;
        }
        let (start, end) = deletion_span(content, at, at + old.len());
        out.push_str(&content[done..start.max(done)]);
        done = end;
        if !replace_all {
            break;
        }
    }
    out.push_str(&content[done..]);
    out
}

/// What deleting `content[start..end]` removes: the whole line, line break included, when
/// the match is all the line holds besides indentation and a line break follows it; else
/// the match alone.
fn deletion_span(content: &str, start: usize, end: usize) -> (usize, usize) {
    let line = content[..start].rfind('\n').map_or(0, |i| i + 1);
    let break_len = if content[end..].starts_with("\r\n") {
        2
    } else if content[end..].starts_with('\n') {
        1
    } else {
        0
    };
    let indented = content[line..start]
        .bytes()
        .all(|b| b == b' ' || b == b'\t');
    if break_len > 0 && indented {
        (line, end + break_len)
    } else {
        (start, end)
    }
}

fn normalize_quotes(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' => '\'',
            '\u{201C}' | '\u{201D}' => '"',
            c => c,
        })
        .collect()
}

/// The text in `content` that `search` stands for: itself, or the same text with curly
/// quotes where the model typed straight ones.
fn find_actual(content: &str, search: &str) -> Option<String> {
    if content.contains(search) {
        return Some(search.to_owned());
    }
    let normalized_search = normalize_quotes(search);
    let normalized = normalize_quotes(content);
    let at = normalized.find(&normalized_search)?;
    let char_at = normalized[..at].chars().count();
    Some(
        content
            .chars()
            .skip(char_at)
            .take(normalized_search.chars().count())
            .collect(),
    )
}

/// When the file had curly quotes where `old` had straight ones, types `new`'s straight
/// quotes curly too, so the file keeps its style.
fn preserve_quote_style(old: &str, actual: &str, new: &str) -> String {
    if old == actual {
        return new.to_owned();
    }
    let curly_double = actual.contains(['\u{201C}', '\u{201D}']);
    let curly_single = actual.contains(['\u{2018}', '\u{2019}']);
    let chars: Vec<char> = new.chars().collect();
    let opens = |prev: Option<char>| {
        prev.is_none_or(|p| p.is_whitespace() || "([{\u{2014}\u{2013}-".contains(p))
    };
    let mut out = String::with_capacity(new.len());
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        match c {
            '"' if curly_double => out.push(if opens(prev) { '\u{201C}' } else { '\u{201D}' }),
            '\'' if curly_single => {
                let apostrophe = prev.is_some_and(char::is_alphanumeric)
                    && next.is_some_and(char::is_alphanumeric);
                out.push(if !apostrophe && opens(prev) {
                    '\u{2018}'
                } else {
                    '\u{2019}'
                });
            }
            c => out.push(c),
        }
    }
    out
}

/// Edit's `validate_input`, on the blocking pool (it reads the file and plans the edit).
fn validate(input: &EditInput, ctx: &ToolUseContext) -> Result<(), ValidationError> {
    let path = fsutil::absolute_path(&input.file_path, "file_path", ctx)?;
    if input.old_string == input.new_string {
        return Err(ValidationError::with_code(
            "No changes to make: old_string and new_string are exactly the same.",
            1,
        ));
    }
    let meta = match fs::metadata(&path) {
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(ValidationError::new(format!(
                "Cannot access {}: {e}",
                path.display()
            )));
        }
    };
    if let Some(meta) = &meta {
        if meta.is_dir() {
            return Err(ValidationError::new(format!(
                "Path is a directory, not a file: {}",
                path.display()
            )));
        }
        if !meta.is_file() {
            return Err(ValidationError::new(fsutil::not_regular_message(&path)));
        }
        if meta.len() > MAX_EDIT_FILE_BYTES {
            return Err(ValidationError::with_code(
                format!(
                    "File is too large to edit ({} bytes). Maximum editable file size is 1 GiB.",
                    meta.len()
                ),
                10,
            ));
        }
    }
    let bytes =
        fsutil::read_optional(&path).map_err(|e| ValidationError::new(e.to_model_text()))?;
    // Checks that do not depend on the read cache come first, as in Claude Code.
    if bytes.is_none() && !input.old_string.is_empty() {
        return Err(ValidationError::with_code(
            fsutil::not_found_message(&path, ctx),
            4,
        ));
    }
    if let Some(bytes) = &bytes
        && input.old_string.is_empty()
        // A byte-order mark alone is an empty file.
        && !fsutil::decode(bytes).map_or_else(
            || String::from_utf8_lossy(bytes).trim().is_empty(),
            |d| d.text.trim().is_empty(),
        )
    {
        return Err(ValidationError::with_code(
            "Cannot create new file - file already exists.",
            3,
        ));
    }
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ipynb"))
    {
        return Err(ValidationError::with_code(
            "File is a Jupyter Notebook. Use the NotebookEdit to edit this file.",
            5,
        ));
    }
    fsutil::check_stale(ctx, &path, 6, 7)?;
    fsutil::check_unchanged(
        ctx,
        &path,
        bytes.as_deref().map(tool_core::ContentHash::of),
        7,
    )?;
    let planned = plan(bytes.as_deref(), input).map_err(|r| match r.code {
        Some(code) => ValidationError::with_code(r.message, code),
        None => ValidationError::new(r.message),
    })?;
    // Before anyone is asked to approve an edit that would then be refused.
    unseen_lines_refused(ctx, &path, &planned.touched)
        .map_err(|message| ValidationError::with_code(message, 6))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seen_lines_follow_the_edit() {
        let seen = [(1, 100), (200, 300)];
        // Two lines added at line 50: the first range grows, the second moves.
        assert_eq!(renumbered(&seen, &[(50, 50)], 2), [(1, 102), (202, 302)]);
        // Three lines (250-252) made one: the second range shrinks.
        assert_eq!(renumbered(&seen, &[(250, 252)], -2), [(1, 100), (200, 298)]);
        // Two replacements of one line each by three: each adds two.
        assert_eq!(
            renumbered(&seen, &[(10, 10), (210, 210)], 4),
            [(1, 102), (202, 304)]
        );
        // A change that cannot be shared out evenly: what follows the first is dropped.
        assert_eq!(renumbered(&seen, &[(10, 10), (210, 210)], 3), []);
        assert_eq!(renumbered(&seen, &[(150, 150), (250, 250)], 1), [(1, 100)]);
        // Lines found by the edit's text.
        assert_eq!(lines_of_matches("a\nb\na\n", "a"), [(1, 1), (3, 3)]);
        assert_eq!(lines_of_matches("x\na\nb\n", "a\nb\n"), [(2, 3)]);
        assert_eq!(lines_of_matches("x", ""), []);
        // Only the final line break belongs to the last line.
        assert_eq!(lines_of_matches("a\n\n\nb\n", "a\n\n\n"), [(1, 3)]);
    }

    #[test]
    fn curly_quotes_are_matched_and_kept() {
        let file = "say \u{201C}hello\u{201D} and don\u{2019}t\n";
        let actual = find_actual(file, "\"hello\" and don't").unwrap();
        assert_eq!(actual, "\u{201C}hello\u{201D} and don\u{2019}t");
        assert_eq!(
            preserve_quote_style("\"hello\" and don't", &actual, "\"bye\" and won't 'x'"),
            "\u{201C}bye\u{201D} and won\u{2019}t \u{2018}x\u{2019}"
        );
    }

    #[test]
    fn deleting_a_line_takes_its_newline() {
        assert_eq!(apply("a\nb\nc\n", "b", "", false), "a\nc\n");
        assert_eq!(apply("a\r\nb\r\nc\r\n", "b", "", false), "a\r\nc\r\n");
        // An indented line goes whole, indentation included.
        assert_eq!(
            apply("fn f() {\n    // TODO\n    g();\n}\n", "// TODO", "", false),
            "fn f() {\n    g();\n}\n"
        );
        assert_eq!(apply("a b a", "a", "x", true), "x b x");
        // Deleting every occurrence: a whole line goes with its line break; one after other
        // text on its line leaves the line break.
        assert_eq!(apply("x foo y foo\n", "foo", "", true), "x  y \n");
        assert_eq!(
            apply("foo();\nlog(x); foo();\nfoo();", "foo();", "", true),
            "log(x); \n"
        );
    }

    /// The LF view maps each of its bytes to the same place in the file as a map of every
    /// byte would (the map it replaced, which took eight times the file's size).
    #[test]
    fn the_lf_view_maps_every_byte_back_to_the_file() {
        let pieces = [
            "a",
            "\r\n",
            "\n",
            "\r",
            "\u{e9}",
            "\u{1F600}",
            "\r\r\n",
            "xy",
        ];
        let mut texts = vec![String::new(), "\r\n".to_owned(), "\r".to_owned()];
        // Every sequence of up to four pieces, and a long mixed one.
        let mut frontier = vec![String::new()];
        for _ in 0..4 {
            let next: Vec<String> = frontier
                .iter()
                .flat_map(|t| pieces.iter().map(move |p| format!("{t}{p}")))
                .collect();
            texts.extend(next.iter().cloned());
            frontier = next;
        }
        texts.push(
            (0..5000_u32)
                .map(|n| {
                    format!(
                        "line {n} \u{e9}{}",
                        if n.is_multiple_of(3) { "\n" } else { "\r\n" }
                    )
                })
                .collect(),
        );
        for text in &texts {
            let mut lf = String::new();
            let mut at = Vec::new();
            let bytes = text.as_bytes();
            for (i, c) in text.char_indices() {
                if c == '\r' && bytes.get(i + 1) == Some(&b'\n') {
                    continue;
                }
                at.extend(i..i + c.len_utf8());
                lf.push(c);
            }
            let view = LfView::of(text);
            assert_eq!(view.text, lf, "{text:?}");
            let mapped: Vec<usize> = (0..lf.len()).map(|i| view.in_file(i)).collect();
            assert_eq!(mapped, at, "{text:?}");
        }
    }

    #[test]
    fn a_mixed_ending_edit_far_into_a_long_file() {
        let ending = |n: usize| if n.is_multiple_of(2) { "\r\n" } else { "\n" };
        let text: String = (0..10_000).map(|n| format!("l{n}{}", ending(n))).collect();
        // l9000 ends in CRLF, l9001 in LF.
        let out = mixed_endings_edit(&text, "l9000\nl9001\nl9002", "A\nB\nl9002", false).unwrap();
        let want = text.replacen("l9000\r\nl9001\nl9002", "A\r\nB\r\nl9002", 1);
        assert_eq!(out, want);
        // Every `l1…9\nl…` across both endings, each keeping its own.
        let out = mixed_endings_edit(&text, "9\nl", "9!\nl", true).unwrap();
        let want = text.replace("9\r\nl", "9!\r\nl").replace("9\nl", "9!\nl");
        assert_eq!(out, want);
        assert_eq!(
            mixed_endings_edit(&text, "l5\nl6", "x", false),
            Ok(text.replacen("l5\nl6", "x", 1))
        );
        // Ambiguity is counted across both endings.
        assert_eq!(mixed_endings_edit(&text, "0\nl", "x", false), Err(1000));
    }

    /// Deleting the end of a line never joins it with the next (Claude Code's quirk: it
    /// deletes the line break whenever one follows).
    #[test]
    fn deleting_the_end_of_a_line_keeps_its_line_break() {
        assert_eq!(
            apply("x = 1;  // TODO\ny = 2;\n", "  // TODO", "", false),
            "x = 1;\ny = 2;\n"
        );
        assert_eq!(
            apply("a(); // x\r\nb(); // x\r\n", " // x", "", true),
            "a();\r\nb();\r\n"
        );
    }
}
