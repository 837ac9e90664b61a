//! The `Write` tool: creates or overwrites a file, atomically.

use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    FileAccess, FileState, MaxResultSize, PermissionSubject, ProgressSender, ToolError, ToolResult,
    ToolResultContent, ToolUseContext, TypedTool, ValidationError,
};

use crate::fsutil::{self, Encoding};
use crate::patch::{Hunk, structured_patch};

/// Input of the `Write` tool.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WriteInput {
    /// The absolute path to the file to write (must be absolute, not relative)
    pub file_path: String,
    /// The content to write to the file
    pub content: String,
}

/// Whether `Write` created a file or replaced one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteKind {
    /// The file did not exist.
    Create,
    /// The file existed and was replaced.
    Update,
}

/// What `Write` returns (Claude Code's shape).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WriteOutput {
    /// Created or updated.
    #[serde(rename = "type")]
    pub kind: WriteKind,
    /// The absolute path.
    pub file_path: PathBuf,
    /// The content written.
    pub content: String,
    /// The change, as hunks (empty for a new file).
    pub structured_patch: Vec<Hunk>,
    /// The previous content, for an update.
    pub original_file: Option<String>,
}

/// The `Write` tool. See the [module docs](self).
#[derive(Debug, Clone, Copy, Default)]
pub struct Write;

const DESCRIPTION: &str = "Writes a file to the local filesystem.

Usage:
- This tool will overwrite the existing file if there is one at the provided path.
- If this is an existing file, you MUST use the Read tool first to read the file's contents. This tool will fail if you did not read the file first.
- ALWAYS prefer editing existing files in the codebase. NEVER write new files unless explicitly required.
- NEVER proactively create documentation files (*.md) or README files. Only create documentation files if explicitly requested by the User.";

#[async_trait::async_trait]
impl TypedTool for Write {
    type Input = WriteInput;
    type Output = WriteOutput;
    const NAME: &'static str = "Write";

    fn description(&self) -> Cow<'_, str> {
        DESCRIPTION.into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn search_hint(&self) -> Option<&str> {
        Some("create or overwrite a file")
    }
    fn is_destructive(&self, _: &WriteInput) -> bool {
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
    fn permission_subject(&self, input: &WriteInput) -> Option<PermissionSubject> {
        fsutil::subject_path(&input.file_path).map(|path| PermissionSubject::Path {
            path,
            access: FileAccess::Write,
        })
    }

    async fn validate_input(
        &self,
        input: &WriteInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        // Only the path: the content can be large and is not looked at here.
        let path = fsutil::absolute_path(&input.file_path, "file_path", ctx).ok();
        // A denied path first, before the file system is looked at (Claude Code's order).
        if let Some(path) = &path {
            fsutil::refuse_denied_path(path, FileAccess::Write, ctx)?;
        }
        let (file_path, ctx) = (input.file_path.clone(), ctx.clone());
        fsutil::validation_locked(path.as_deref(), move || validate(&file_path, &ctx)).await
    }

    async fn call(
        &self,
        input: WriteInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<WriteOutput>, ToolError> {
        let path = fsutil::absolute_path(&input.file_path, "file_path", &ctx)
            .map_err(|e| ToolError::msg(e.message))?;
        let confine = fsutil::write_confinement(self, &ctx, &path, |real| {
            fsutil::input_with_path(&input, "file_path", real)
        })
        .await;
        let out = fsutil::blocking_locked(path, move |path, lock| {
            write_blocking(path, &confine, input.content, &ctx, lock)
        })
        .await?;
        Ok(ToolResult::new(out))
    }

    fn to_content(&self, output: &WriteOutput) -> ToolResultContent {
        ToolResultContent::Text(match output.kind {
            WriteKind::Create => format!(
                "File created successfully at: {}",
                output.file_path.display()
            ),
            WriteKind::Update => format!(
                "The file {} has been updated successfully.",
                output.file_path.display()
            ),
        })
    }
}

/// The write, with the file's lock held from the read to the read-cache update.
fn write_blocking(
    path: &Path,
    confine: &fsutil::Confinement,
    content: String,
    ctx: &ToolUseContext,
    lock: &fsutil::FileLock,
) -> Result<WriteOutput, ToolError> {
    if fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(ToolError::msg(format!(
            "Path is a directory, not a file: {}",
            path.display()
        )));
    }
    let old_bytes = fsutil::read_optional(path)?;
    let old = old_bytes.as_deref().and_then(fsutil::decode);
    let encoding = old
        .as_ref()
        .map_or(Encoding::Utf8 { bom: false }, |d| d.encoding);
    // Keep a CRLF file CRLF when the model writes plain LF text.
    let keep_crlf =
        old.as_ref().is_some_and(|d| fsutil::is_pure_crlf(&d.text)) && !content.contains("\r\n");
    let disk_text = if keep_crlf {
        fsutil::lf_to_crlf(&content)
    } else {
        content.clone()
    };
    let bytes = fsutil::encode(&disk_text, encoding);
    let verified = fsutil::recheck_before_write(ctx, path, old_bytes.as_deref(), lock)?;
    fsutil::write_and_record(
        ctx,
        path,
        confine,
        &bytes,
        content.clone(),
        verified,
        fsutil::Known::Whole,
        lock,
    )?;
    let original_file = match (&old_bytes, old) {
        (_, Some(d)) => Some(d.text),
        (Some(raw), None) => Some(String::from_utf8_lossy(raw).into_owned()),
        (None, None) => None,
    };
    let structured_patch = original_file
        .as_deref()
        .map(|o| structured_patch(o, &disk_text))
        .unwrap_or_default();
    Ok(WriteOutput {
        kind: if old_bytes.is_some() {
            WriteKind::Update
        } else {
            WriteKind::Create
        },
        file_path: path.to_path_buf(),
        content,
        structured_patch,
        original_file,
    })
}

/// Write's `validate_input`, on the blocking pool (the stale check hashes the file).
fn validate(file_path: &str, ctx: &ToolUseContext) -> Result<(), ValidationError> {
    let path = fsutil::absolute_path(file_path, "file_path", ctx)?;
    if path.is_dir() {
        return Err(ValidationError::new(format!(
            "Path is a directory, not a file: {}",
            path.display()
        )));
    }
    fsutil::check_regular_or_missing(&path).map_err(ValidationError::new)?;
    // The old content is read (to check it is what the model saw, and for the diff): a
    // file too large for that is refused here, clearly, instead of exhausting memory.
    if let Ok(meta) = std::fs::metadata(&path)
        && meta.len() > crate::edit::MAX_EDIT_FILE_BYTES
    {
        return Err(ValidationError::new(format!(
            "File is too large to overwrite with Write ({} bytes; the maximum is 1 GiB). \
             Remove or truncate it with Bash first if replacing it is intended.",
            meta.len()
        )));
    }
    fsutil::check_stale(ctx, &path, 2, 3)?;
    // The content too (a change that kept the mtime and size), read in pieces: hashed
    // only when there is a Read to compare it with.
    if ctx
        .file_state()
        .get(&path)
        .is_some_and(|seen| seen.disk_hash.is_some())
        && let Ok(hash) = crate::read::hash_file(&path)
    {
        fsutil::check_unchanged(ctx, &path, Some(hash), 3)?;
    }
    // Replacing the whole file needs the whole file seen, by one Read or by several of the
    // same content (Claude Code: a PARTIAL view read does not count), and seen as it is:
    // Read cuts long lines and shows bytes that are not UTF-8 as U+FFFD, and writing back
    // what it showed would destroy the rest. Edit can still change what it can match.
    let Some(seen) = ctx.file_state().get(&path).filter(|_| path.exists()) else {
        // Nothing read, or nothing left to lose: a file that is gone is created.
        return Ok(());
    };
    if seen.lines_cut || seen.not_utf8 {
        // A UTF-16 file Read showed with U+FFFD is damaged UTF-16 (an unpaired surrogate, a
        // stray last byte), not a file that is not UTF-8: said as Edit says it.
        // The whole file is read only when it opens with a UTF-16 byte order mark (a large
        // Latin-1 log costs two bytes here, not its size).
        let opens_as_utf16 = || {
            let mut mark = [0u8; 2];
            std::fs::File::open(&path)
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut mark))
                .is_ok_and(|()| matches!(mark, [0xFF, 0xFE] | [0xFE, 0xFF]))
        };
        let utf16 = (seen.not_utf8 && opens_as_utf16())
            .then(|| fsutil::read_optional(&path).ok().flatten())
            .flatten()
            .and_then(|bytes| fsutil::damaged_utf16(&bytes));
        return Err(ValidationError::with_code(
            altered_view_message(&seen, utf16.as_deref()),
            2,
        ));
    }
    if seen.truncated {
        return Err(ValidationError::with_code(
            "The file was only partly shown (a PARTIAL view, a range of its lines, or a command such as head that showed part of it). Read the rest with offset and limit before replacing the whole file with Write, or change the part you saw with Edit.",
            2,
        ));
    }
    Ok(())
}

/// Why Write refuses a file whose Reads showed it altered (a cut line, undecodable bytes),
/// and what to do instead. Reading again would show it the same way. `utf16`: what is
/// wrong with the file when its undecodable bytes are damaged UTF-16 text
/// ([`fsutil::damaged_utf16`]), which Edit refuses too.
fn altered_view_message(seen: &FileState, utf16: Option<&str>) -> String {
    let mut why = Vec::new();
    if seen.lines_cut {
        why.push(format!(
            "lines longer than {} characters were cut (\"... [line truncated]\")",
            crate::read::MAX_LINE_CHARS
        ));
    }
    if let Some(what) = utf16 {
        why.push(format!(
            "it is {what}, which Read showed as \u{FFFD} (U+FFFD)"
        ));
    } else if seen.not_utf8 {
        why.push(
            "the file is not valid UTF-8 (bytes that could not be decoded were shown as \u{FFFD})"
                .to_owned(),
        );
    }
    let instead = if utf16.is_some() {
        "Edit refuses it too: repair the file first with Bash (for example, a script that replaces or removes the broken character), then Read it again."
    } else if seen.not_utf8 {
        "Change it with Edit instead (it keeps the bytes that are not UTF-8 as they are), or with Bash (for example, convert it to UTF-8 with iconv first)."
    } else {
        "Change it with Edit instead (its old_string is matched against the file itself), or with Bash."
    };
    let partly = if seen.truncated {
        " It was also only partly shown (a PARTIAL view or a range of its lines)."
    } else {
        ""
    };
    format!(
        "The file was not shown as it is: {}. Replacing the whole file with Write would lose what was not shown.{partly} {instead}",
        why.join(", and ")
    )
}
