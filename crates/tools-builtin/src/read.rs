//! The `Read` tool: a file's lines, numbered as `cat -n` numbers them, streamed so that a
//! huge file read with `offset`/`limit` never sits in memory; images as image blocks;
//! notebooks cell by cell.

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    CancellationToken, ContentBlock, ContentHash, ContentHasher, FileAccess, FileState,
    MaxResultSize, PermissionSubject, ProgressSender, SearchOrRead, ToolError, ToolResult,
    ToolResultContent, ToolUseContext, TypedTool, ValidationError, mtime_ms,
};

use crate::fsutil;
use crate::notebook;

/// Lines shown when no `limit` is given.
pub const DEFAULT_LINE_LIMIT: usize = 2000;
/// Characters of a line shown; the rest is cut.
pub const MAX_LINE_CHARS: usize = 2000;
/// Default output cap in (estimated) tokens (`CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS`).
pub const DEFAULT_MAX_OUTPUT_TOKENS: usize = 25_000;
/// Largest notebook rendered, in bytes.
pub const MAX_NOTEBOOK_BYTES: u64 = 100 * 1024 * 1024;
/// A PDF with more pages than this needs `pages`.
pub const PDF_PAGES_WITHOUT_RANGE: usize = 10;
/// At most this many PDF pages per call.
pub const MAX_PDF_PAGES_PER_CALL: usize = 20;
/// Largest PDF parsed, in bytes.
pub const MAX_PDF_BYTES: u64 = 100 * 1024 * 1024;
/// What a PDF's compressed streams (images aside) may inflate to, all together, for it to be
/// parsed.
pub const MAX_PDF_INFLATED_BYTES: u64 = 256 * 1024 * 1024;
/// Largest UTF-16 file decoded (it cannot be streamed line by line).
const MAX_UTF16_BYTES: u64 = 64 * 1024 * 1024;

/// The stub returned when the same range of an unchanged file is read again.
pub const FILE_UNCHANGED_MESSAGE: &str = "File unchanged since last read. The content from the earlier Read tool_result in this conversation is still current — refer to that instead of re-reading.";
/// The notice for an empty file.
pub const EMPTY_FILE_NOTICE: &str =
    "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>";
/// The notice for a notebook whose `cells` array is empty (the file is not empty: an
/// overwrite would lose its metadata).
pub const NOTEBOOK_NO_CELLS_NOTICE: &str =
    "<system-reminder>Warning: the notebook exists but has no cells.</system-reminder>";
const TRUNCATED_LINE_SUFFIX: &str = "... [line truncated]";

/// Input of the `Read` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ReadInput {
    /// The absolute path to the file to read
    pub file_path: String,
    /// The line number to start reading from. Only provide if the file is too large to read at once
    #[serde(default)]
    pub offset: Option<u64>,
    /// The number of lines to read. Only provide if the file is too large to read at once.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub limit: Option<u64>,
    /// Page range for PDF files (e.g., "1-5", "3", "10-20"). Only applicable to PDF files.
    #[serde(default)]
    pub pages: Option<String>,
    /// Return the whole requested range even when it exceeds the output token limit (up to 4 MiB of numbered lines).
    #[serde(default)]
    pub allow_large: Option<bool>,
}

/// What `Read` returns; serialised in Claude Code's shape for hooks
/// (`{type: "text", file: {filePath, content, numLines, startLine, totalLines}}`, ...).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReadOutput {
    /// The structured result.
    #[serde(flatten)]
    pub data: ReadData,
    /// What the model sees; `None` for an output not made by a call (a hook's replacement),
    /// which is rendered from `data`.
    #[serde(skip)]
    pub model_content: Option<ToolResultContent>,
}

/// The kinds of `Read` result.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ReadData {
    /// Lines of a text file.
    Text {
        /// The lines.
        file: TextFile,
    },
    /// An image.
    Image {
        /// The image.
        file: ImageFile,
    },
    /// Text extracted from PDF pages.
    Pdf {
        /// The pages.
        file: PdfFile,
    },
    /// A Jupyter notebook.
    Notebook {
        /// The notebook.
        file: NotebookFile,
    },
    /// The same range was read before and the file has not changed.
    FileUnchanged {
        /// The file.
        file: UnchangedFile,
    },
}

/// The media type of the image whose base64 is `data`, read from its bytes, when the API
/// takes it ([`tool_core::check_image`]); else why not.
pub(crate) fn checked_base64_image(data: &str) -> Result<&'static str, String> {
    // Longer than the base64 of the largest image the API takes: refused undecoded.
    let bytes = decode_base64_image(data, tool_core::MAX_IMAGE_BYTES as u64)?;
    tool_core::check_image(&bytes).map_err(|e| e.to_string())
}

/// The bytes of an image given as base64 (`data`), or why not: longer than `max_bytes`
/// decoded (said before anything is decoded, so a huge value costs no memory), or not valid
/// base64. Whether the bytes are an image the API takes is the caller's check.
pub(crate) fn decode_base64_image(data: &str, max_bytes: u64) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    let size = data.len() / 4 * 3;
    if size as u64 > max_bytes {
        return Err(tool_core::ImageRejection::TooLarge { size }.to_string());
    }
    base64::engine::general_purpose::STANDARD
        .decode(data.as_bytes())
        .map_err(|_| "its data is not valid base64".to_owned())
}

impl ReadData {
    /// What the model sees for this data, as a call would show it (without the notices a
    /// call adds: a partial view, scanned PDF pages): used for a hook's replacement output.
    pub fn render(&self) -> ToolResultContent {
        match self {
            Self::Text { file } => ToolResultContent::Text(file.model_text()),
            // A hook's replacement may carry anything: shown only as the API takes it (one
            // image it refuses would fail every later request of the conversation).
            Self::Image { file } => match checked_base64_image(&file.base64) {
                Ok(media_type) => ToolResultContent::Blocks(vec![ContentBlock::image(
                    media_type,
                    file.base64.clone(),
                )]),
                Err(why) => ToolResultContent::Text(format!("[Image omitted: {why}]")),
            },
            Self::Pdf { file } => ToolResultContent::Text(file.model_text()),
            Self::Notebook { file } if file.cells.is_empty() => {
                ToolResultContent::Text(NOTEBOOK_NO_CELLS_NOTICE.to_owned())
            }
            Self::Notebook { file } => {
                ToolResultContent::Blocks(notebook::render_cells(&file.cells))
            }
            Self::FileUnchanged { .. } => {
                ToolResultContent::Text(FILE_UNCHANGED_MESSAGE.to_owned())
            }
        }
    }
}

/// Lines of a text file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextFile {
    /// The absolute path.
    pub file_path: PathBuf,
    /// The lines shown, joined with `\n` (long lines cut), without numbers.
    pub content: String,
    /// How many lines are shown.
    pub num_lines: usize,
    /// The number of the first line shown (1-based).
    pub start_line: usize,
    /// How many lines the file has.
    pub total_lines: usize,
}

impl TextFile {
    /// The numbered lines as the model sees them (or the empty-file / past-the-end notice),
    /// without the notices only a call knows (a partial view).
    fn model_text(&self) -> String {
        if self.total_lines == 0 {
            EMPTY_FILE_NOTICE.to_owned()
        } else if self.content.is_empty() && self.num_lines == 0 {
            format!(
                "<system-reminder>Warning: the file exists but is shorter than the provided offset ({}). The file has {} lines.</system-reminder>",
                self.start_line, self.total_lines
            )
        } else {
            let lines: Vec<&str> = self.content.split('\n').collect();
            format_numbered(&lines, self.start_line)
        }
    }
}

/// An image file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageFile {
    /// The bytes, base64-encoded.
    pub base64: String,
    /// The media type (`image/png`, ...).
    #[serde(rename = "type")]
    pub media_type: String,
    /// The file size in bytes.
    pub original_size: u64,
}

/// Text of some pages of a PDF.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PdfFile {
    /// The absolute path.
    pub file_path: PathBuf,
    /// How many pages the document has.
    pub total_pages: usize,
    /// The pages read.
    pub pages: Vec<PdfPage>,
}

impl PdfFile {
    /// The pages as the model sees them, each in a `<page number="N">` element.
    fn model_text(&self) -> String {
        self.pages
            .iter()
            .map(|p| format!("<page number=\"{}\">\n{}\n</page>", p.page, p.text))
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

/// The extracted text of one PDF page.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PdfPage {
    /// The page number (1-based).
    pub page: u32,
    /// The text (empty when the page has none, e.g. a scan).
    pub text: String,
}

/// A notebook.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NotebookFile {
    /// The absolute path.
    pub file_path: PathBuf,
    /// The cells as rendered.
    pub cells: Vec<serde_json::Value>,
}

/// A file read again without change.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnchangedFile {
    /// The absolute path.
    pub file_path: PathBuf,
}

/// The `Read` tool. See the [module docs](self).
#[derive(Debug, Clone, Copy, Default)]
pub struct Read;

const DESCRIPTION: &str = "Reads a file from the local filesystem. You can access any file directly by using this tool.
Assume this tool is able to read all files on the machine. If the User provides a path to a file assume that path is valid. It is okay to read a file that does not exist; an error will be returned.

Usage:
- The file_path parameter must be an absolute path, not a relative path
- By default, it reads up to 2000 lines starting from the beginning of the file
- You can optionally specify a line offset and limit (especially handy for long files), but it's recommended to read the whole file by not providing these parameters
- Any lines longer than 2000 characters will be truncated
- Results are returned using cat -n format, with line numbers starting at 1
- This tool allows Claude Code to read images (eg PNG, JPG, etc). When reading an image file the contents are presented visually as Claude Code is a multimodal LLM.
- This tool can read PDF files (.pdf) as extracted text. For large PDFs (more than 10 pages), you MUST provide the pages parameter to read specific page ranges (e.g., pages: \"1-5\"). Maximum 20 pages per request.
- This tool can read Jupyter notebooks (.ipynb files) and returns all cells with their outputs, combining code, text, and visualizations.
- This tool can only read files, not directories. To read a directory, use an ls command via the Bash tool.
- If you read a file that exists but has empty contents you will receive a system reminder warning in place of file contents.";

fn max_output_tokens() -> usize {
    std::env::var("CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS)
}

/// Claude Code's rough token estimate: a token per four bytes.
fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// Numbers lines as Claude Code's Read does: the number right-aligned in six columns, an
/// arrow, the line.
pub fn format_numbered<S: AsRef<str>>(lines: &[S], start_line: usize) -> String {
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("{:>6}\u{2192}{}", start_line + i, line.as_ref()));
    }
    out
}

fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

#[async_trait::async_trait]
impl TypedTool for Read {
    type Input = ReadInput;
    type Output = ReadOutput;
    const NAME: &'static str = "Read";

    fn description(&self) -> Cow<'_, str> {
        DESCRIPTION.into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Unbounded
    }
    fn search_hint(&self) -> Option<&str> {
        Some("read a file, image or notebook")
    }
    fn is_concurrency_safe(&self, _: &ReadInput) -> bool {
        true
    }
    fn is_read_only(&self, _: &ReadInput) -> bool {
        true
    }
    fn is_search_or_read(&self, _: &ReadInput) -> SearchOrRead {
        SearchOrRead {
            is_read: true,
            ..SearchOrRead::default()
        }
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
    fn permission_subject(&self, input: &ReadInput) -> Option<PermissionSubject> {
        fsutil::subject_path(&input.file_path).map(|path| PermissionSubject::Path {
            path,
            access: FileAccess::Read,
        })
    }

    async fn validate_input(
        &self,
        input: &ReadInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        let path = fsutil::absolute_path(&input.file_path, "file_path", ctx)?;
        if input.limit == Some(0) {
            return Err(ValidationError::new("limit must be at least 1."));
        }
        // Claude Code's order: a denied path, then a binary file by its extension, before
        // the file system is looked at.
        fsutil::refuse_denied_path(&path, FileAccess::Read, ctx)?;
        if let Some(ext) = fsutil::binary_extension(&path) {
            return Err(ValidationError::with_code(
                fsutil::binary_extension_message(&ext),
                4,
            ));
        }
        // Outside the working directories the permission step comes first: whether
        // something exists there (`~/.ssh/id_ed25519`) is not said before the call is
        // allowed. The call itself makes the same checks, with the same texts.
        if !fsutil::in_working_directories(&path, ctx) {
            return Ok(());
        }
        match fs::metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(ValidationError::with_code(
                fsutil::not_found_message(&path, ctx),
                2,
            )),
            Err(e) => Err(ValidationError::new(format!(
                "Cannot read {}: {e}",
                path.display()
            ))),
            Ok(meta) if meta.is_dir() => Err(ValidationError::new(directory_message(&path))),
            Ok(meta) if !meta.is_file() => Err(ValidationError::new(not_regular_message(&path))),
            Ok(_) => Ok(()),
        }
    }

    async fn call(
        &self,
        input: ReadInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<ReadOutput>, ToolError> {
        let path = fsutil::absolute_path(&input.file_path, "file_path", &ctx)
            .map_err(|e| ToolError::msg(e.message))?;
        let output = fsutil::blocking(move || read_blocking(&path, &input, &ctx)).await?;
        Ok(ToolResult::new(output))
    }

    fn to_content(&self, output: &ReadOutput) -> ToolResultContent {
        match &output.model_content {
            Some(content) => content.clone(),
            None => output.data.render(),
        }
    }
}

/// The extensions of the image formats Read returns as images (Claude Code's list).
const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp"];

fn directory_message(path: &Path) -> String {
    format!(
        "EISDIR: illegal operation on a directory, read '{}'. This path is a directory, not a file: use Glob, or ls through Bash, to list it.",
        path.display()
    )
}

fn not_regular_message(path: &Path) -> String {
    format!(
        "Cannot read {}: it is not a regular file (a device, FIFO or socket).",
        path.display()
    )
}

/// The error [`open_regular`] gives for a path that is not a regular file.
#[derive(Debug)]
struct NotRegular;

impl std::fmt::Display for NotRegular {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a regular file (a device, FIFO or socket)")
    }
}

impl std::error::Error for NotRegular {}

/// Opens `path` to read it, without blocking, and checks on the handle that it is a regular
/// file: every open of Read goes through here. The caller's earlier check of the path
/// (`fs::metadata`) can be outrun: a FIFO swapped in since would block a plain open until
/// a writer comes, a device may never end. (A regular file ignores `O_NONBLOCK`.)
fn open_regular(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other(NotRegular));
    }
    Ok(file)
}

/// Up to `n` bytes from the start of `path`, a regular file ([`open_regular`]).
fn read_regular(path: &Path, n: u64) -> io::Result<Vec<u8>> {
    let mut buf = Vec::new();
    open_regular(path)?.take(n).read_to_end(&mut buf)?;
    Ok(buf)
}

/// The model's text for an error of [`open_regular`] or a read through it.
fn open_error(path: &Path, e: io::Error) -> ToolError {
    if e.get_ref().is_some_and(|inner| inner.is::<NotRegular>()) {
        ToolError::msg(not_regular_message(path))
    } else {
        ToolError::io(path, e)
    }
}

fn read_blocking(
    path: &Path,
    input: &ReadInput,
    ctx: &ToolUseContext,
) -> Result<ReadOutput, ToolError> {
    let meta = fs::metadata(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => ToolError::msg(fsutil::not_found_message(path, ctx)),
        _ => ToolError::io(path, e),
    })?;
    if meta.is_dir() {
        return Err(ToolError::msg(directory_message(path)));
    }
    if !meta.is_file() {
        // A device or FIFO may never end (/dev/zero) or block forever (/dev/stdin).
        return Err(ToolError::msg(not_regular_message(path)));
    }
    let head = read_regular(path, 8192).map_err(|e| open_error(path, e))?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();

    // An image or PDF by its name, or by its bytes when they are not text: a text file
    // whose first bytes happen to spell a signature (`GIF89a was introduced ...` in notes
    // named `.md`) is read as the text it is.
    // (A name that says text decides, as Claude Code decides by name: only bytes no text
    // file has, a NUL, make its signature count. A file without an extension is judged by
    // its bytes alone.)
    let named_image = IMAGE_EXTENSIONS.contains(&ext.as_str());
    let text = if ext.is_empty() {
        fsutil::reads_as_text(&head)
    } else {
        memchr::memchr(0, &head).is_none()
    };
    // (Its bytes alone make it an image only when its header is one: a text file that
    // starts with PNG's signature is no image of the size its text spells.)
    if tool_core::image_media_type(&head).is_some()
        && (named_image || (!text && png_header_error(&head).is_none()))
    {
        return read_image(path, meta.len());
    }
    if ext == "pdf" || (fsutil::is_pdf(&head) && !text) {
        return read_pdf(path, meta.len(), input.pages.as_deref());
    }
    if input.pages.is_some() {
        return Err(ToolError::msg(
            "The pages parameter applies only to PDF files.",
        ));
    }
    if let Some(ext) = fsutil::binary_extension(path) {
        return Err(ToolError::msg(fsutil::binary_extension_message(&ext)));
    }
    if fsutil::looks_binary(&head) {
        return Err(ToolError::msg(
            "This tool cannot read binary files. The file appears to be a binary file (it contains NUL bytes). Please use appropriate tools for binary file analysis.",
        ));
    }

    let offset = to_usize(input.offset.unwrap_or(1)).max(1);
    let limit = input.limit.map(to_usize);
    let mtime = mtime_ms(&meta);
    let cache = ctx.file_state();
    // The stub points at an earlier result of this conversation: a host that cannot tell
    // conversations apart (an MCP server) turns it off, and every Read shows the file.
    if !ctx.options().reads_always_return_content
        && let Some(entry) = cache.get(path)
        && !entry.is_partial_view
        // A PARTIAL view (its limit is the lines it showed) asked for again as a range: read,
        // so that the range the model asked for counts (Edit anywhere), as it would have.
        && !(entry.truncated && !entry.ranged && (input.offset.is_some() || input.limit.is_some()))
        // Recorded by a Read whose result comes before this one (not by one started after
        // it that finished first: parallel Reads of one file each show it).
        && entry
            .read_order
            .zip(ctx.call_order())
            .is_none_or(|(theirs, mine)| theirs < mine)
        && entry.offset == Some(offset)
        && entry.limit == limit
        && entry.mtime_ms == mtime
        // The mtime alone can miss a change (same millisecond, or restored by `cp -p`): the
        // content must be the one the model saw.
        && entry
            .disk_hash
            .is_some_and(|seen| hash_file(path).is_ok_and(|now| now == seen))
    {
        return Ok(ReadOutput {
            data: ReadData::FileUnchanged {
                file: UnchangedFile {
                    file_path: path.to_path_buf(),
                },
            },
            model_content: Some(ToolResultContent::Text(FILE_UNCHANGED_MESSAGE.to_owned())),
        });
    }
    if ext == "ipynb" {
        return read_notebook(path, &meta, ctx, input.allow_large.unwrap_or(false));
    }

    let max_tokens = max_output_tokens();
    let allow_large = input.allow_large.unwrap_or(false);
    // Enough numbered lines for a partial view within `max_tokens` (a line costs at least
    // 2 tokens and at most its bytes plus 24), never more than MAX_RANGE_BYTES (a partial
    // view of a larger limit ends there): a huge range is measured, not kept.
    let budget = if allow_large {
        MAX_RANGE_BYTES
    } else {
        max_tokens
            .saturating_mul(16)
            .saturating_add(MAX_LINE_BYTES)
            .min(MAX_RANGE_BYTES)
    };
    let slice = stream_lines(
        path,
        &head,
        meta.len(),
        offset - 1,
        limit.unwrap_or(DEFAULT_LINE_LIMIT),
        budget,
        ctx.cancellation(),
    )?;
    let ranged = input.offset.is_some() || input.limit.is_some();
    let mut lines = slice.lines;
    let mut partial_notice = None;
    let rendered_tokens = slice.rendered_bytes.div_ceil(4);
    if slice.cut && allow_large {
        return Err(ToolError::msg(format!(
            "File content ({rendered_tokens} tokens) exceeds the {} MiB one Read returns, even \
             with allow_large. Please use offset and limit parameters to read specific portions \
             of the file, or use the Grep tool to search for specific content.",
            MAX_RANGE_BYTES / (1024 * 1024)
        )));
    }
    if (rendered_tokens > max_tokens || slice.cut) && !allow_large {
        if ranged {
            return Err(ToolError::msg(format!(
                "File content ({rendered_tokens} tokens) exceeds maximum allowed tokens ({max_tokens}). Please use offset and limit parameters to read specific portions of the file, or use the Grep tool to search for specific content."
            )));
        }
        let mut used = 0;
        let keep = lines
            .iter()
            .take_while(|l| {
                used += estimate_tokens(l) + 2;
                used <= max_tokens
            })
            .count()
            .max(1);
        lines.truncate(keep);
        partial_notice = Some(format!(
            "<system-reminder>This is a PARTIAL view of the file: lines {offset}-{} of {} are shown because the file exceeds the output limit of {max_tokens} tokens. Use offset and limit to read the rest.</system-reminder>",
            offset + keep - 1,
            slice.total_lines
        ));
    }
    // Without a limit, at most DEFAULT_LINE_LIMIT lines are shown: say so when the file goes
    // on, or the model takes the first 2,000 lines for the whole file (and a Write of them
    // back would drop the rest).
    let shown_to = offset - 1 + lines.len();
    if partial_notice.is_none()
        && limit.is_none()
        && !lines.is_empty()
        && shown_to < slice.total_lines
    {
        partial_notice = Some(format!(
            "<system-reminder>This is a PARTIAL view of the file: lines {offset}-{shown_to} of {} are shown ({DEFAULT_LINE_LIMIT} lines at most without a limit). Use offset and limit to read the rest.</system-reminder>",
            slice.total_lines
        ));
    }
    let file = TextFile {
        file_path: path.to_path_buf(),
        content: lines.join("\n"),
        num_lines: lines.len(),
        start_line: offset,
        total_lines: slice.total_lines,
    };
    let mut text = file.model_text();
    if let Some(notice) = &partial_notice {
        text.push('\n');
        text.push_str(notice);
    }
    let num_lines = file.num_lines;
    let recorded_limit = if partial_notice.is_some() {
        Some(num_lines)
    } else {
        limit
    };
    let mut state = FileState::read(
        file.content.clone(),
        mtime,
        slice.hash,
        offset,
        recorded_limit,
    );
    // Write replaces the whole file: it needs every line seen, by this Read or by earlier
    // Reads of the same content (a PARTIAL view, then the rest with offset and limit), and
    // seen as it is: a line cut at MAX_LINE_CHARS, or bytes shown as U+FFFD, would be lost.
    let shown = |first: Option<usize>| first.is_some_and(|i| i < num_lines);
    state.lines_cut = shown(slice.first_cut_line);
    state.not_utf8 = shown(slice.first_lossy_line);
    // A range the model asked for, shown whole: the file counts as read for Edit anywhere,
    // as in Claude Code (a PARTIAL view does not).
    state.ranged = partial_notice.is_none() && (input.offset.is_some() || input.limit.is_some());
    state.read_order = ctx.call_order();
    let previous = cache.get(path);
    state.merge_seen(offset, shown_to, slice.total_lines, previous.as_ref());
    // A Read given up on (its result is an interruption) must not count as seen: the next
    // Read would get the "unchanged" stub for content the model never received.
    if ctx.is_cancelled() {
        return Err(ToolError::Cancelled(None));
    }
    cache.insert(path, state);
    Ok(ReadOutput {
        data: ReadData::Text { file },
        model_content: Some(ToolResultContent::Text(text)),
    })
}

/// Images heavier than this (and within the API's limits) are re-encoded as JPEG when that
/// makes them lighter, as Claude Code re-encodes images over 500 KB.
const REENCODE_OVER_BYTES: usize = 500 * 1024;
/// Images larger than this on disk are not decoded to be scaled down: refused.
pub(crate) const MAX_SHRINK_INPUT_BYTES: u64 = 64 * 1024 * 1024;
/// The long side an image is scaled down to when it is longer, or over the API's limits
/// (Claude Code's IMAGE_MAX_WIDTH/HEIGHT: the API itself scales anything over 1568 pixels
/// down, so nothing the model sees is lost, and it refuses a request of many images when
/// one is over 2000 pixels on a side).
const SHRUNK_LONG_SIDE: u32 = 1568;
/// Memory a decoded image may take at most (an 8000x8000 RGBA image is 256 MB).
const MAX_DECODE_ALLOC: u64 = 512 * 1024 * 1024;

fn read_image(path: &Path, size: u64) -> Result<ReadOutput, ToolError> {
    let refused = |why: &dyn std::fmt::Display| {
        ToolError::msg(format!(
            "Image is too large to return ({why}). Resize or compress it first, e.g. with ImageMagick via Bash."
        ))
    };
    // What the API would refuse fails every later request of the conversation: refused or
    // scaled down here instead.
    let (bytes, media_type) = if size > tool_core::MAX_IMAGE_BYTES as u64 {
        // A header that is none is no image too large: one that cannot be decoded.
        let head = read_regular(path, 16).map_err(|e| open_error(path, e))?;
        if let Some(e) = png_header_error(&head) {
            return Err(ToolError::msg(format!(
                "Cannot return {} as an image: {}.",
                path.display(),
                Unfit::Corrupt(e.to_owned())
            )));
        }
        // Too large: scaled down from the file, as Claude Code does, where it can be
        // decoded (never loaded whole first).
        let why = tool_core::ImageRejection::TooLarge {
            size: usize::try_from(size).unwrap_or(usize::MAX),
        };
        let shrunk = shrink_image(path, size).map_err(|e| refused(&format!("{why}; {e}")))?;
        let media_type = tool_core::check_image(&shrunk).map_err(|e| refused(&e))?;
        (shrunk, media_type)
    } else {
        // One byte over the limit at most, should the file have grown since. The file may
        // have changed since its head was read: checked again.
        let bytes = read_regular(path, tool_core::MAX_IMAGE_BYTES as u64 + 1)
            .map_err(|e| open_error(path, e))?;
        match fit_image(bytes) {
            Ok(fitted) => (fitted.bytes, fitted.media_type),
            Err(Unfit::Rejected(tool_core::ImageRejection::UnknownFormat)) => {
                return Err(ToolError::msg(format!(
                    "{} changed while it was read and is no longer an image; read it again",
                    path.display()
                )));
            }
            Err(Unfit::Rejected(why)) => {
                return Err(ToolError::msg(format!(
                    "Cannot return {} as an image: {why}.",
                    path.display()
                )));
            }
            Err(Unfit::Refused(why)) => return Err(refused(&why)),
            Err(why @ Unfit::Corrupt(_)) => {
                return Err(ToolError::msg(format!(
                    "Cannot return {} as an image: {why}.",
                    path.display()
                )));
            }
        }
    };
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    Ok(ReadOutput {
        model_content: Some(ToolResultContent::Blocks(vec![ContentBlock::image(
            media_type,
            data.clone(),
        )])),
        data: ReadData::Image {
            file: ImageFile {
                base64: data,
                media_type: media_type.to_owned(),
                original_size: size,
            },
        },
    })
}

/// An image as the model is shown it (see [`fit_image`]).
pub(crate) struct Fitted {
    pub(crate) bytes: Vec<u8>,
    pub(crate) media_type: &'static str,
    /// Scaled down or re-encoded: not the bytes given.
    pub(crate) changed: bool,
}

/// Why an image cannot be shown (see [`fit_image`]).
pub(crate) enum Unfit {
    /// Not an image the API takes, or its header cannot be read: nothing to scale down.
    Rejected(tool_core::ImageRejection),
    /// Over the API's limits, and it could not be scaled down within them.
    Refused(String),
    /// A PNG or JPEG whose header reads but whose data does not decode (truncated,
    /// corrupt): the API would refuse it.
    Corrupt(String),
}

impl std::fmt::Display for Unfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Rejected(why) => why.fmt(f),
            Self::Refused(why) => f.write_str(why),
            Self::Corrupt(why) => write!(
                f,
                "the image cannot be decoded ({why}); it may be truncated or corrupt"
            ),
        }
    }
}

/// An image's bytes as the model is to be shown them, as Claude Code shows them: a PNG or
/// JPEG over [`SHRUNK_LONG_SIDE`] pixels on a side, or over the API's limits, is scaled
/// down and encoded as JPEG; one within them but over 500 KB is re-encoded as JPEG when
/// that makes it lighter (every later request of the conversation carries it). A GIF or
/// WebP within the API's limits goes as it is (never scaled down); an image whose data does
/// not decode is refused ([`Unfit::Corrupt`]): the API would refuse it, and with it every
/// later request of the conversation.
pub(crate) fn fit_image(bytes: Vec<u8>) -> Result<Fitted, Unfit> {
    let keep = |bytes, media_type| Fitted {
        bytes,
        media_type,
        changed: false,
    };
    let shrunk = |bytes| Fitted {
        bytes,
        media_type: "image/jpeg",
        changed: true,
    };
    // Kept as it is, once it is known to decode (where it can be decoded here).
    let checked = |bytes: Vec<u8>, media_type| match undecodable(&bytes) {
        Some(e) => Err(Unfit::Corrupt(e)),
        None => Ok(keep(bytes, media_type)),
    };
    match tool_core::check_image(&bytes) {
        Ok(media_type) if over_long_side(&bytes) => match shrink_bytes(&bytes) {
            Ok(small) if tool_core::check_image(&small).is_ok() => Ok(shrunk(small)),
            Ok(_) => Ok(keep(bytes, media_type)),
            Err(_) => checked(bytes, media_type),
        },
        Ok(media_type) if bytes.len() > REENCODE_OVER_BYTES => match shrink_bytes(&bytes) {
            Ok(small) if small.len() < bytes.len() && tool_core::check_image(&small).is_ok() => {
                Ok(shrunk(small))
            }
            Ok(_) => Ok(keep(bytes, media_type)),
            Err(_) => checked(bytes, media_type),
        },
        Ok(media_type) => checked(bytes, media_type),
        Err(
            why
            @ (tool_core::ImageRejection::UnknownFormat | tool_core::ImageRejection::Unreadable),
        ) => Err(Unfit::Rejected(why)),
        // Too large or too wide: scaled down where it can be decoded.
        Err(why) => {
            // Unless its header is none (the "width and height" of text after PNG's
            // signature): no image at all, not one too large.
            if let Some(e) = png_header_error(&bytes) {
                return Err(Unfit::Corrupt(e.to_owned()));
            }
            let small = shrink_bytes(&bytes).map_err(|e| Unfit::Refused(format!("{why}; {e}")))?;
            let media_type =
                tool_core::check_image(&small).map_err(|e| Unfit::Refused(e.to_string()))?;
            Ok(Fitted {
                bytes: small,
                media_type,
                changed: true,
            })
        }
    }
}

/// Why a PNG, JPEG, GIF or WebP does not decode, if it does not (a truncated file whose header is
/// whole, corrupt data). `None` for one that decodes, for other formats,
/// and when decoding would pass the memory limit or needs what the decoder lacks (nothing
/// known).
fn undecodable(bytes: &[u8]) -> Option<String> {
    let mut reader = image::ImageReader::new(io::Cursor::new(bytes))
        .with_guessed_format()
        .ok()?;
    if !matches!(
        reader.format(),
        Some(
            image::ImageFormat::Png
                | image::ImageFormat::Jpeg
                | image::ImageFormat::Gif
                | image::ImageFormat::WebP
        )
    ) {
        return None;
    }
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits);
    // One check at a time in the process: a small file can decode to hundreds of MB (a
    // solid 7900x7900 GIF of 25 KB to 325 MB), and ten Reads run at once.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Corrupt data, or data that ends early (an I/O error reading from memory is the end
    // of the bytes). A feature this decoder lacks (`Unsupported`: an arithmetic-coded JPEG)
    // or the memory limit says nothing about the image: it is sent as it is.
    match reader.decode() {
        Err(e @ (image::ImageError::Decoding(_) | image::ImageError::IoError(_))) => {
            Some(e.to_string())
        }
        _ => None,
    }
}

/// Why `head` (an image's first bytes) is no PNG header although it starts with PNG's
/// signature, if it is not: every PNG goes on with its `IHDR` chunk (13 bytes: width,
/// height, ...). `None` for anything else. Only the structure is checked (not the chunk's
/// CRC): the width and height read from such a header are the image's.
fn png_header_error(head: &[u8]) -> Option<&'static str> {
    const SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";
    const IHDR: &[u8] = b"\0\0\0\x0dIHDR";
    let rest = head.strip_prefix(SIGNATURE)?;
    (!rest.starts_with(IHDR))
        .then_some("after the PNG signature comes no IHDR header, with which every PNG begins")
}

/// Whether `bytes` is a PNG or JPEG wider or taller than [`SHRUNK_LONG_SIDE`] pixels (read
/// from its header).
fn over_long_side(bytes: &[u8]) -> bool {
    image::ImageReader::new(io::Cursor::new(bytes))
        .with_guessed_format()
        .ok()
        .filter(|r| {
            matches!(
                r.format(),
                Some(image::ImageFormat::Png | image::ImageFormat::Jpeg)
            )
        })
        .and_then(|r| r.into_dimensions().ok())
        .is_some_and(|(w, h)| w.max(h) > SHRUNK_LONG_SIDE)
}

/// `path` (PNG or JPEG) scaled down to [`SHRUNK_LONG_SIDE`] pixels on its long side and
/// encoded as JPEG, smaller in quality steps until it is within the API's byte limit.
fn shrink_image(path: &Path, size: u64) -> Result<Vec<u8>, String> {
    if size > MAX_SHRINK_INPUT_BYTES {
        return Err(too_large_to_shrink());
    }
    let file =
        open_regular(path).map_err(|e| format!("it could not be opened to be scaled down: {e}"))?;
    shrink_decoded(image::ImageReader::new(io::BufReader::new(file)))
}

/// [`shrink_image`] for an image in memory.
pub(crate) fn shrink_bytes(bytes: &[u8]) -> Result<Vec<u8>, String> {
    if bytes.len() as u64 > MAX_SHRINK_INPUT_BYTES {
        return Err(too_large_to_shrink());
    }
    shrink_decoded(image::ImageReader::new(io::Cursor::new(bytes)))
}

fn too_large_to_shrink() -> String {
    format!(
        "over {} MiB, too large to scale down here",
        MAX_SHRINK_INPUT_BYTES / (1024 * 1024)
    )
}

fn shrink_decoded<R: io::BufRead + io::Seek>(
    reader: image::ImageReader<R>,
) -> Result<Vec<u8>, String> {
    use image::ImageDecoder as _;
    let cannot = |e: image::ImageError| format!("it could not be scaled down: {e}");
    let mut reader = reader
        .with_guessed_format()
        .map_err(|e| format!("it could not be opened to be scaled down: {e}"))?;
    if !matches!(
        reader.format(),
        Some(image::ImageFormat::Png | image::ImageFormat::Jpeg)
    ) {
        return Err("only PNG and JPEG images are scaled down here".to_owned());
    }
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    reader.limits(limits.clone());
    let mut decoder = reader.into_decoder().map_err(cannot)?;
    // The decoded image must fit the limit before it is decoded: the decoder takes the whole
    // buffer its header asks for (a 5 MB PNG of 40000x40000 pixels asks for 4.8 GB), which
    // `ImageReader::decode` checks but `from_decoder` does not.
    let needed = decoder.total_bytes();
    limits.reserve(needed).map_err(|_| {
        format!(
            "its {}x{} pixels would take {} MiB decoded, over the {} MiB this tool decodes",
            decoder.dimensions().0,
            decoder.dimensions().1,
            needed / (1024 * 1024),
            MAX_DECODE_ALLOC / (1024 * 1024)
        )
    })?;
    let orientation = decoder.orientation().ok();
    let mut img = image::DynamicImage::from_decoder(decoder).map_err(cannot)?;
    if let Some(orientation) = orientation {
        img.apply_orientation(orientation);
    }
    let mut side = SHRUNK_LONG_SIDE;
    for quality in [85u8, 70, 50, 35] {
        let rgb = if img.width().max(img.height()) > side {
            on_white(&img.resize(side, side, image::imageops::FilterType::Triangle))
        } else {
            on_white(&img)
        };
        let mut out = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality)
            .encode_image(&rgb)
            .map_err(cannot)?;
        if out.len() <= tool_core::MAX_IMAGE_BYTES {
            return Ok(out);
        }
        side = side * 3 / 4;
    }
    Err("it stays over the byte limit even scaled down".to_owned())
}

/// The image without its transparency, as on a white page: JPEG has no alpha, and the
/// colour under a transparent pixel is usually black (a diagram's black text would vanish).
fn on_white(img: &image::DynamicImage) -> image::RgbImage {
    if !img.color().has_alpha() {
        return img.to_rgb8();
    }
    let rgba = img.to_rgba8();
    image::RgbImage::from_fn(rgba.width(), rgba.height(), |x, y| {
        let image::Rgba([r, g, b, a]) = *rgba.get_pixel(x, y);
        let blend = |c: u8| {
            let (c, a) = (u16::from(c), u16::from(a));
            u8::try_from((c * a + 255 * (255 - a)) / 255).unwrap_or(u8::MAX)
        };
        image::Rgb([blend(r), blend(g), blend(b)])
    })
}

/// Parses a `pages` value: `3`, `1-5`, or a comma-separated list of those (1-based,
/// inclusive), against a document of `total` pages.
pub fn parse_pages(spec: &str, total: usize) -> Result<Vec<u32>, String> {
    let bad = |why: &str| {
        format!(
            "Invalid pages parameter \"{spec}\": {why}. Use a page number or a range such as \"1-5\"."
        )
    };
    let mut pages: Vec<u32> = Vec::new();
    for part in spec.split(',').map(str::trim) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let a: u32 = a.parse().map_err(|_| bad("not a page number"))?;
        if a != 0 && to_usize(u64::from(a)) > total {
            return Err(format!(
                "Invalid pages parameter \"{spec}\": the PDF has {total} pages."
            ));
        }
        let b: u32 = if b.is_empty() {
            u32::try_from(total).unwrap_or(u32::MAX)
        } else {
            b.parse().map_err(|_| bad("not a page number"))?
        };
        if a == 0 || b < a {
            return Err(bad(
                "pages are numbered from 1 and a range must not go backwards",
            ));
        }
        if to_usize(u64::from(b - a)) >= MAX_PDF_PAGES_PER_CALL {
            return Err(format!(
                "Page range \"{spec}\" exceeds the maximum of {MAX_PDF_PAGES_PER_CALL} pages per request."
            ));
        }
        // A range that runs past the last page gives the pages it names that exist, as
        // Claude Code's `pdftoppm -f A -l B` gives them (found by review 38: "15-20" of a
        // 17-page PDF was refused); one that starts past it is refused above.
        let b = b.min(u32::try_from(total).unwrap_or(u32::MAX));
        for n in a..=b {
            if !pages.contains(&n) {
                pages.push(n);
            }
            // Checked as it grows: a list of 100,000 pages stops here, not after a
            // quadratic walk.
            if pages.len() > MAX_PDF_PAGES_PER_CALL {
                return Err(format!(
                    "Page range \"{spec}\" exceeds the maximum of {MAX_PDF_PAGES_PER_CALL} pages per request."
                ));
            }
        }
    }
    Ok(pages)
}

fn read_pdf(path: &Path, size: u64, pages: Option<&str>) -> Result<ReadOutput, ToolError> {
    if size > MAX_PDF_BYTES {
        return Err(ToolError::msg(format!(
            "PDF file is too large to read ({size} bytes; the maximum is {MAX_PDF_BYTES} bytes)."
        )));
    }
    let bytes = read_regular(path, MAX_PDF_BYTES + 1).map_err(|e| open_error(path, e))?;
    if bytes.len() as u64 > MAX_PDF_BYTES {
        return Err(ToolError::msg(format!(
            "PDF file is too large to read (over {MAX_PDF_BYTES} bytes)."
        )));
    }
    // lopdf inflates streams whole and unbounded: a crafted file of a few MB can inflate to
    // many GB. What it would inflate is measured first (`pdf_inflate`).
    let bomb = || {
        ToolError::msg(format!(
            "The PDF {} is not read: its compressed streams inflate to over {} MiB (images aside), which may be a decompression bomb. Extract its text with a tool made for it, e.g. pdftotext via Bash.",
            path.display(),
            MAX_PDF_INFLATED_BYTES >> 20
        ))
    };
    let doc = crate::pdf_inflate::load(&bytes, MAX_PDF_INFLATED_BYTES)
        .map_err(|_| bomb())?
        .map_err(|e| ToolError::msg(format!("Could not read the PDF {}: {e}", path.display())))?;
    drop(bytes);
    if doc.is_encrypted() {
        return Err(ToolError::msg(format!(
            "The PDF {} is password-protected; its text cannot be read.",
            path.display()
        )));
    }
    let total = doc.get_pages().len();
    let selected: Vec<u32> = match pages.map(str::trim).filter(|p| !p.is_empty()) {
        Some(spec) => parse_pages(spec, total).map_err(ToolError::msg)?,
        None if total > PDF_PAGES_WITHOUT_RANGE => {
            return Err(ToolError::msg(format!(
                "This PDF has {total} pages, which is too many to read at once. Use the pages parameter to read specific page ranges (e.g., pages: \"1-5\"). Maximum {MAX_PDF_PAGES_PER_CALL} pages per request."
            )));
        }
        None => (1..=u32::try_from(total).unwrap_or(u32::MAX)).collect(),
    };
    let page_ids = doc.get_pages();
    let read: Vec<lopdf::ObjectId> = selected
        .iter()
        .filter_map(|n| page_ids.get(n).copied())
        .collect();
    if crate::pdf_inflate::text_streams_size(&doc, &read, MAX_PDF_INFLATED_BYTES)
        > MAX_PDF_INFLATED_BYTES
    {
        return Err(bomb());
    }
    let pages = selected
        .into_iter()
        .map(|n| PdfPage {
            page: n,
            text: doc
                .extract_text(&[n])
                .map(|t| t.trim_end().to_owned())
                .unwrap_or_default(),
        })
        .collect();
    let file = PdfFile {
        file_path: path.to_path_buf(),
        total_pages: total,
        pages,
    };
    let mut text = file.model_text();
    // The text is capped as a text file's is: twenty dense pages can be far more than the
    // model should take in one result.
    let (tokens, max_tokens) = (estimate_tokens(&text), max_output_tokens());
    if tokens > max_tokens {
        let first = file.pages.first().map_or(1, |p| p.page);
        // One page over the cap: fewer pages cannot help, a command can.
        if file.pages.len() == 1 {
            return Err(ToolError::msg(format!(
                "The text of page {first} alone ({tokens} tokens) exceeds maximum allowed tokens ({max_tokens}), so Read cannot show it. Extract it with a command instead and read it in parts, e.g. with Bash: pdftotext -f {first} -l {first} '{path}' page.txt (poppler-utils), then Read page.txt with offset and limit.",
                path = path.display().to_string().replace('\'', "'\\''"),
            )));
        }
        return Err(ToolError::msg(format!(
            "The text of the {shown} pages read ({tokens} tokens) exceeds maximum allowed tokens ({max_tokens}). Use the pages parameter to read fewer pages at a time (e.g., pages: \"{first}\").",
            shown = file.pages.len(),
        )));
    }
    if file.pages.iter().all(|p| p.text.trim().is_empty()) {
        text.push_str("\n<system-reminder>No text could be extracted from these pages (they may be scanned images).</system-reminder>");
    }
    Ok(ReadOutput {
        data: ReadData::Pdf { file },
        model_content: Some(ToolResultContent::Text(text)),
    })
}

fn read_notebook(
    path: &Path,
    meta: &fs::Metadata,
    ctx: &ToolUseContext,
    allow_large: bool,
) -> Result<ReadOutput, ToolError> {
    if meta.len() > MAX_NOTEBOOK_BYTES {
        return Err(ToolError::msg(format!(
            "Notebook content ({} bytes) exceeds the maximum of {MAX_NOTEBOOK_BYTES} bytes. Use Bash with jq to read specific cells, e.g. cat \"{}\" | jq '.cells[:20]'",
            meta.len(),
            path.display()
        )));
    }
    let bytes = read_regular(path, MAX_NOTEBOOK_BYTES + 1).map_err(|e| open_error(path, e))?;
    if bytes.len() as u64 > MAX_NOTEBOOK_BYTES {
        return Err(ToolError::msg(format!(
            "Notebook content exceeds the maximum of {MAX_NOTEBOOK_BYTES} bytes. Use Bash with jq to read specific cells, e.g. cat \"{}\" | jq '.cells[:20]'",
            path.display()
        )));
    }
    // The hash is of the file's bytes (a byte order mark included), as NotebookEdit's
    // check of them computes it.
    let hash = ContentHash::of(&bytes);
    let text = notebook::decode_file(&bytes, "Notebook is not valid UTF-8 JSON.")
        .map_err(ToolError::msg)?
        .text;
    drop(bytes);
    let nb = notebook::parse(&text).map_err(|e| match e {
        notebook::ParseError::TooManyValues | notebook::ParseError::TooDeep { .. } => ToolError::msg(format!(
            "Notebook cannot be read: {e}. Use Bash with jq to read specific cells, e.g. cat \"{}\" | jq '.cells[:20]'",
            path.display()
        )),
        notebook::ParseError::Invalid { .. } => {
            ToolError::msg(format!("Notebook is not valid JSON: {e}"))
        }
    })?;
    // Without a `cells` array there is nothing to show, and calling it empty would invite an
    // overwrite of what it holds: refused (and not recorded as read).
    if !matches!(nb.get("cells"), Some(notebook::Json::Arr(_))) {
        let what = if nb.get("worksheets").is_some() {
            "it is an nbformat 3 notebook (its cells are under `worksheets`), which this tool does not show; convert it with `jupyter nbconvert --to notebook --nbformat 4`, or"
        } else {
            "it is not a Jupyter notebook of nbformat 4;"
        };
        return Err(ToolError::msg(format!(
            "Notebook has no `cells` array: {what} read it as JSON with Bash, e.g. cat \"{}\" | jq .",
            path.display()
        )));
    }
    let display = fsutil::display_path(path, ctx.cwd());
    let (blocks, cells) = notebook::render(&nb, &display);
    // The cells' text counts against the output limit as a text file's lines do (images
    // are bounded on their own): a notebook of long outputs must not flood the context.
    let text_bytes: usize = blocks
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.len(),
            _ => 0,
        })
        .sum();
    let tokens = text_bytes.div_ceil(4);
    let max_tokens = max_output_tokens();
    if (tokens > max_tokens && !allow_large) || text_bytes > MAX_RANGE_BYTES {
        let limit = if allow_large {
            format!(
                "the {} MiB one Read returns",
                MAX_RANGE_BYTES / (1024 * 1024)
            )
        } else {
            format!("maximum allowed tokens ({max_tokens})")
        };
        // The jq commands do not count as a read for NotebookEdit; `allow_large` does,
        // when the notebook fits in what one Read returns.
        let whole = if allow_large || text_bytes > MAX_RANGE_BYTES {
            ""
        } else {
            "\nTo read the whole notebook (NotebookEdit needs a Read of it; reading it with \
             Bash does not count), call Read again with allow_large: true."
        };
        return Err(ToolError::msg(format!(
            "Notebook content ({tokens} tokens) exceeds {limit}. Use Bash with jq to read \
             specific portions:\n  cat \"{p}\" | jq '.cells[:20]' # First 20 cells\n  \
             cat \"{p}\" | jq '.cells[100:120]' # Cells 100-120\n  cat \"{p}\" | jq '.cells | \
             length' # Count total cells\n  cat \"{p}\" | jq '.cells[] | \
             select(.cell_type==\"code\") | .source' # All code sources{whole}",
            p = path.display()
        )));
    }
    if ctx.is_cancelled() {
        return Err(ToolError::Cancelled(None));
    }
    let mut state = FileState::read(text, mtime_ms(meta), hash, 1, None);
    // As for a text file: a Read that started earlier and finishes later shows the notebook
    // too, never "unchanged" about this result, which comes after its own.
    state.read_order = ctx.call_order();
    ctx.file_state().insert(path, state);
    let content = if blocks.is_empty() {
        ToolResultContent::Text(NOTEBOOK_NO_CELLS_NOTICE.to_owned())
    } else {
        ToolResultContent::Blocks(blocks)
    };
    Ok(ReadOutput {
        data: ReadData::Notebook {
            file: NotebookFile {
                file_path: path.to_path_buf(),
                cells,
            },
        },
        model_content: Some(content),
    })
}

/// The lines of a requested range, plus what only a full pass knows.
struct Slice {
    lines: Vec<String>,
    total_lines: usize,
    hash: ContentHash,
    /// The length of the whole range as the model would see it (numbered lines).
    rendered_bytes: usize,
    /// Whether lines of the range were left out to stay within the byte budget.
    cut: bool,
    /// The index in `lines` of the first line shown cut at `MAX_LINE_CHARS`.
    first_cut_line: Option<usize>,
    /// The index in `lines` of the first line with bytes that are not UTF-8 (shown as
    /// U+FFFD).
    first_lossy_line: Option<usize>,
}

/// Most bytes of numbered lines one Read keeps, `allow_large` or not: about a million
/// tokens, the largest context window.
pub const MAX_RANGE_BYTES: usize = 4 * 1024 * 1024;

/// Collects lines `[start, start + count)` from bytes fed in pieces, keeping at most a
/// bounded prefix of each line, and of the range at most `budget` bytes as numbered lines
/// (the rest is measured, not kept).
struct LineCollector {
    start: usize,
    end: usize,
    index: usize,
    current: Vec<u8>,
    pending: bool,
    lines: Vec<String>,
    budget: usize,
    rendered: usize,
    cut: bool,
    first_cut_line: Option<usize>,
    first_lossy_line: Option<usize>,
}

/// The length of line `number` as `format_numbered` shows it, with its line break.
fn numbered_len(number: usize, line: &str, first: bool) -> usize {
    let digits = number.checked_ilog10().map_or(1, |d| d as usize + 1);
    digits.max(6) + '\u{2192}'.len_utf8() + line.len() + usize::from(!first)
}

/// Bytes kept per line: enough for `MAX_LINE_CHARS` characters of any width.
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4 + 4;

impl LineCollector {
    fn new(start: usize, count: usize, budget: usize) -> Self {
        Self {
            start,
            end: start.saturating_add(count),
            index: 0,
            current: Vec::new(),
            pending: false,
            lines: Vec::new(),
            budget,
            rendered: 0,
            cut: false,
            first_cut_line: None,
            first_lossy_line: None,
        }
    }

    fn in_range(&self) -> bool {
        self.index >= self.start && self.index < self.end
    }

    fn take_part(&mut self, part: &[u8]) {
        if self.in_range() && self.current.len() < MAX_LINE_BYTES {
            let room = MAX_LINE_BYTES - self.current.len();
            self.current
                .extend_from_slice(&part[..part.len().min(room)]);
        }
    }

    fn end_line(&mut self) {
        if self.in_range() {
            let bytes = std::mem::take(&mut self.current);
            let shown = finish_line(&bytes);
            let len = numbered_len(self.index + 1, &shown.text, self.index == self.start);
            self.rendered += len;
            // A prefix of the range: after the first line left out, none is kept. The
            // first line always is (a partial view shows at least one line).
            if !self.cut && (self.rendered <= self.budget || self.lines.is_empty()) {
                let at = Some(self.lines.len());
                if shown.cut && self.first_cut_line.is_none() {
                    self.first_cut_line = at;
                }
                if shown.lossy && self.first_lossy_line.is_none() {
                    self.first_lossy_line = at;
                }
                self.lines.push(shown.text);
            } else {
                self.cut = true;
            }
        }
        self.index += 1;
        self.pending = false;
    }

    fn feed(&mut self, chunk: &[u8]) {
        let mut from = 0;
        for nl in memchr::memchr_iter(b'\n', chunk) {
            self.take_part(&chunk[from..nl]);
            self.end_line();
            from = nl + 1;
        }
        if from < chunk.len() {
            self.take_part(&chunk[from..]);
            self.pending = true;
        }
    }

    fn finish(mut self) -> (Vec<String>, usize) {
        if self.pending {
            self.end_line();
        }
        (self.lines, self.index)
    }

    /// The numbered length of the whole range, and whether lines of it were left out.
    fn measure(&self) -> (usize, bool) {
        (self.rendered, self.cut)
    }
}

/// A line as Read shows it, and how it differs from the file.
struct ShownLine {
    text: String,
    /// Cut at `MAX_LINE_CHARS` characters.
    cut: bool,
    /// Bytes that are not UTF-8 shown as U+FFFD, within what is shown of the line.
    lossy: bool,
}

fn finish_line(bytes: &[u8]) -> ShownLine {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    // `Owned` only when something was replaced. Past the cut it is not shown (and the kept
    // bytes of a long line may end in the middle of a character).
    let lossy = matches!(text, Cow::Owned(_))
        && std::str::from_utf8(bytes).is_err_and(|e| {
            std::str::from_utf8(&bytes[..e.valid_up_to()]).map_or(0, |valid| valid.chars().count())
                < MAX_LINE_CHARS
        });
    if text.chars().count() > MAX_LINE_CHARS {
        let cut: String = text.chars().take(MAX_LINE_CHARS).collect();
        ShownLine {
            text: format!("{cut}{TRUNCATED_LINE_SUFFIX}"),
            cut: true,
            lossy,
        }
    } else {
        ShownLine {
            text: text.into_owned(),
            cut: false,
            lossy,
        }
    }
}

/// The hash of a file's bytes, read in pieces.
pub(crate) fn hash_file(path: &Path) -> io::Result<ContentHash> {
    let mut file = open_regular(path)?;
    let mut hasher = ContentHasher::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(hasher.finish());
        }
        hasher.update(&buf[..n]);
    }
}

/// Streams the file once: hashes every byte, counts lines and keeps only the requested
/// ones. Memory stays bounded by the range, whatever the file's size.
fn stream_lines(
    path: &Path,
    head: &[u8],
    size: u64,
    start: usize,
    count: usize,
    budget: usize,
    cancel: &CancellationToken,
) -> Result<Slice, ToolError> {
    let mut file = open_regular(path).map_err(|e| open_error(path, e))?;
    let mut hasher = ContentHasher::default();
    let mut collector = LineCollector::new(start, count, budget);
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        if size > MAX_UTF16_BYTES {
            return Err(ToolError::msg(format!(
                "UTF-16 file is too large to read ({size} bytes; the maximum is {MAX_UTF16_BYTES})."
            )));
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|e| ToolError::io(path, e))?;
        hasher.update(&bytes);
        // A stray byte or an unpaired surrogate is shown as U+FFFD, as bad UTF-8 is: the rest
        // of the file stays readable. What was shown so is not what the file holds, so Write
        // then refuses (as after bad UTF-8), and Edit refuses a file it cannot decode.
        match fsutil::decode(&bytes) {
            Some(decoded) => collector.feed(decoded.text.as_bytes()),
            None => {
                collector.feed(fsutil::decode_utf16_lossy(&bytes).as_bytes());
                collector.first_lossy_line.get_or_insert(0);
            }
        }
    } else {
        let mut buf = vec![0u8; 256 * 1024];
        let mut first = true;
        let mut chunks = 0u32;
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(ToolError::io(path, e)),
            };
            let chunk = &buf[..n];
            hasher.update(chunk);
            let body = if first {
                chunk.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(chunk)
            } else {
                chunk
            };
            first = false;
            collector.feed(body);
            chunks += 1;
            if chunks.is_multiple_of(64) && cancel.is_cancelled() {
                return Err(ToolError::Cancelled(None));
            }
        }
    }
    if collector.pending {
        collector.end_line();
    }
    let (rendered_bytes, cut) = collector.measure();
    let (first_cut_line, first_lossy_line) = (collector.first_cut_line, collector.first_lossy_line);
    let (lines, total_lines) = collector.finish();
    Ok(Slice {
        lines,
        total_lines,
        hash: hasher.finish(),
        rendered_bytes,
        cut,
        first_cut_line,
        first_lossy_line,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(chunks: &[&[u8]], start: usize, count: usize) -> (Vec<String>, usize) {
        let mut c = LineCollector::new(start, count, usize::MAX);
        for chunk in chunks {
            c.feed(chunk);
        }
        c.finish()
    }

    #[test]
    fn page_lists_say_what_is_wrong_and_stop_at_the_cap() {
        assert_eq!(parse_pages("1-3, 2, 5", 10).unwrap(), [1, 2, 3, 5]);
        // Past the end: the page count, not "a range must not go backwards".
        let err = parse_pages("5-", 3).unwrap_err();
        assert!(err.contains("the PDF has 3 pages"), "{err}");
        // A range that runs past the end gives the pages that exist; the cap is on the
        // range asked for.
        assert_eq!(parse_pages("15-20", 17).unwrap(), [15, 16, 17]);
        assert_eq!(parse_pages("2-5, 1", 3).unwrap(), [2, 3, 1]);
        assert!(
            parse_pages("1-100", 17)
                .unwrap_err()
                .contains("exceeds the maximum of 20 pages")
        );
        // A long list is refused as soon as it passes the cap.
        let long: Vec<String> = (1..=100_000).map(|n| n.to_string()).collect();
        let err = parse_pages(&long.join(","), 200_000).unwrap_err();
        assert!(err.contains("exceeds the maximum of 20 pages"), "{err}");
        assert!(parse_pages("0", 3).unwrap_err().contains("numbered from 1"));
    }

    #[test]
    fn a_huge_range_is_measured_exactly_but_kept_only_to_the_budget() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        // Line numbers past 999,999 are wider than six columns.
        let text: String = (0..1_100_000).map(|i| format!("line {i}\n")).collect();
        fs::write(&path, &text).unwrap();
        let head = fs::read(&path).unwrap()[..16].to_vec();
        let size = text.len() as u64;
        let never = CancellationToken::new();
        let whole = stream_lines(&path, &head, size, 0, usize::MAX, usize::MAX, &never).unwrap();
        assert!(!whole.cut);
        assert_eq!(whole.rendered_bytes, format_numbered(&whole.lines, 1).len());
        let budget = 100_000;
        let kept = stream_lines(&path, &head, size, 0, usize::MAX, budget, &never).unwrap();
        assert!(kept.cut);
        assert_eq!(kept.rendered_bytes, whole.rendered_bytes);
        assert_eq!(kept.total_lines, 1_100_000);
        assert_eq!(kept.hash, whole.hash);
        assert!(format_numbered(&kept.lines, 1).len() <= budget);
        assert_eq!(kept.lines[..], whole.lines[..kept.lines.len()]);
        // A budget smaller than the first line still keeps that line.
        let first = stream_lines(&path, &head, size, 0, usize::MAX, 1, &never).unwrap();
        assert_eq!((first.lines.len(), first.cut), (1, true));
        // From an offset: the numbering starts there.
        let tail = stream_lines(&path, &head, size, 999_990, 20, usize::MAX, &never).unwrap();
        assert_eq!(
            tail.rendered_bytes,
            format_numbered(&tail.lines, 999_991).len()
        );
    }

    #[test]
    fn collector_splits_across_chunks() {
        assert_eq!(
            collect(&[b"ab", b"c\nd", b"e\r\nf"], 0, 10),
            (vec!["abc".into(), "de".into(), "f".into()], 3)
        );
        assert_eq!(collect(&[b"a\nb\n"], 1, 10), (vec!["b".into()], 2));
        assert_eq!(collect(&[b""], 0, 10), (vec![], 0));
        assert_eq!(collect(&[b"\n"], 0, 10), (vec![String::new()], 1));
        assert_eq!(collect(&[b"a\nb\nc\n"], 5, 10), (vec![], 3));
    }

    #[test]
    fn a_shown_line_says_how_it_differs_from_the_file() {
        let flags = |bytes: &[u8]| {
            let shown = finish_line(bytes);
            (shown.cut, shown.lossy)
        };
        assert_eq!(flags(b"plain \xc3\xa9\r"), (false, false));
        assert_eq!(flags(b"caf\xe9"), (false, true));
        // A U+FFFD that is in the file is no loss.
        assert_eq!(flags("\u{FFFD}".as_bytes()), (false, false));
        let long = vec![b'x'; MAX_LINE_CHARS + 1];
        assert_eq!(flags(&long), (true, false));
        // A byte that is not UTF-8 past the cut is not shown; one before it is.
        let mut late = vec![b'x'; MAX_LINE_CHARS + 5];
        late.push(0xE9);
        assert_eq!(flags(&late), (true, false));
        let mut early = vec![b'x'; MAX_LINE_CHARS + 5];
        early[10] = 0xE9;
        assert_eq!(flags(&early), (true, true));
        // The kept bytes of a very long line end in the middle of a character.
        let wide = "\u{1F600}".repeat(MAX_LINE_BYTES / 4 + 10);
        assert_eq!(flags(&wide.as_bytes()[..MAX_LINE_BYTES]), (true, false));
    }

    /// A FIFO put where a regular file was checked: every way Read opens a file refuses
    /// it at once instead of blocking until a writer comes.
    #[test]
    fn a_fifo_swapped_in_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.ipynb");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let never = CancellationToken::new();
            let results = [
                hash_file(&path).is_err(),
                stream_lines(&path, b"", 0, 0, 10, usize::MAX, &never).is_err(),
                read_regular(&path, 1024).is_err(),
                shrink_image(&path, 10).is_err(),
            ];
            tx.send(results).unwrap();
        });
        let results = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("an open of the FIFO blocked");
        assert_eq!(results, [true; 4]);
    }

    #[test]
    fn numbering_format() {
        assert_eq!(
            format_numbered(&["a", "b"], 9),
            "     9\u{2192}a\n    10\u{2192}b"
        );
        assert_eq!(format_numbered(&["x"], 1_234_567), "1234567\u{2192}x");
    }
}
