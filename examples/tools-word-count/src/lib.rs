//! WordCount: `wc` for the model, as a complete small tool crate.
//!
//! This crate is the worked example of adding a tool to Toolwright behind a Cargo feature
//! (docs/architecture.md, "Adding a tool crate"): it depends on `tool-core` only, implements
//! one [`TypedTool`], and `tool-registry` lists it behind its `word-count` feature (part of
//! the `internal` profile, so `cargo xtask profiles` proves it absent from `external`).
//!
//! It is **not** a general text-statistics library: it counts lines, words and bytes of one
//! file, streaming, in constant memory.
//!
//! Two things every tool that opens a path the model names must do, and that a new crate
//! should copy from here:
//! - `validate_input` runs before the permission step, so it checks the input's form only
//!   and never looks at the file system: whether a path exists, or is a directory, is said
//!   in `call`, once a `Read(./secrets/**)` deny rule has refused the path or the user has
//!   been asked about one outside the working directories. (Read, in tools-builtin, may look
//!   earlier inside the working directories, with the session's rules at hand; a crate of
//!   its own need not.)
//! - `call` opens the file without blocking and checks the type of what it opened, not of
//!   the path beforehand: a FIFO put there in between would make a plain `open` wait for a
//!   writer for ever, a device never end.
//!
//! ```
//! use tool_core::Tool;
//! let tool: &dyn Tool = &tools_word_count::WordCount;
//! assert_eq!(tool.name(), "WordCount");
//! assert!(tool.is_read_only(&serde_json::json!({"file_path": "/tmp/x"})));
//! ```

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    FileAccess, MaxResultSize, PermissionSubject, ProgressSender, SearchOrRead, ToolError,
    ToolResult, ToolUseContext, TypedTool, ValidationError,
};

/// The prompt; it carries the marker `cargo xtask profiles` looks for in a binary.
pub const PROMPT: &str = "WordCount: counts the lines, words and bytes of one file, like `wc` \
(toolwright-gated-tool:word-count). file_path must be absolute. Cheaper than reading a large \
file just to learn its size.";

/// Input of the WordCount tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct WordCountInput {
    /// The absolute path of the file to count
    pub file_path: String,
}

/// What WordCount found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Counts {
    /// Newline characters, as `wc -l` counts them.
    pub lines: u64,
    /// Runs of non-whitespace bytes, as `wc -w` counts them in the C locale.
    pub words: u64,
    /// Bytes.
    pub bytes: u64,
}

impl Counts {
    /// Counts a stream in 64 KiB chunks: constant memory whatever the size.
    pub fn of(mut reader: impl std::io::Read) -> std::io::Result<Self> {
        let mut counts = Self::default();
        let mut in_word = false;
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => return Ok(counts),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            counts.bytes += n as u64;
            for &b in &buf[..n] {
                if b == b'\n' {
                    counts.lines += 1;
                }
                let space = b.is_ascii_whitespace() || b == 0x0b;
                if !space && !in_word {
                    counts.words += 1;
                }
                in_word = !space;
            }
        }
    }
}

/// Output of the WordCount tool (the structured `tool_response` hooks see).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WordCountOutput {
    /// The file counted.
    pub file_path: PathBuf,
    /// Its counts.
    #[serde(flatten)]
    pub counts: Counts,
}

/// The WordCount tool: read-only, concurrency-safe, permitted as a read of `file_path`.
#[derive(Debug, Clone, Copy, Default)]
pub struct WordCount;

fn absolute(raw: &str) -> Option<PathBuf> {
    Path::new(raw.trim())
        .is_absolute()
        .then(|| PathBuf::from(raw.trim()))
}

/// Counts the regular file at `path`; the error is the model's text. The file is opened
/// without blocking and its type checked on the open handle: a FIFO swapped in since any
/// earlier look would make a plain `open` wait for a writer, a device may never end. (A
/// regular file ignores `O_NONBLOCK`.)
fn count_file(path: &Path) -> Result<Counts, String> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let cannot = |e: std::io::Error| format!("Cannot read {}: {e}.", path.display());
    let refused = |meta: &std::fs::Metadata| {
        if meta.is_dir() {
            Some(format!(
                "{} is a directory: WordCount counts one file.",
                path.display()
            ))
        } else if !meta.is_file() {
            Some(format!(
                "Cannot read {}: it is not a regular file (a device, FIFO or socket).",
                path.display()
            ))
        } else {
            None
        }
    };
    // Looked at before it is opened (opening some devices does something: a watchdog
    // arms), and again once open, without blocking, for one swapped in meanwhile.
    if let Some(why) = refused(&std::fs::metadata(path).map_err(cannot)?) {
        return Err(why);
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
        .map_err(cannot)?;
    if let Some(why) = refused(&file.metadata().map_err(cannot)?) {
        return Err(why);
    }
    Counts::of(file).map_err(cannot)
}

#[async_trait::async_trait]
impl TypedTool for WordCount {
    type Input = WordCountInput;
    type Output = WordCountOutput;
    const NAME: &'static str = "WordCount";

    fn description(&self) -> Cow<'_, str> {
        "Counts lines, words and bytes of a file".into()
    }
    fn prompt(&self) -> Cow<'_, str> {
        PROMPT.into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(1_000)
    }
    fn is_concurrency_safe(&self, _: &WordCountInput) -> bool {
        true
    }
    fn is_read_only(&self, _: &WordCountInput) -> bool {
        true
    }
    fn is_search_or_read(&self, _: &WordCountInput) -> SearchOrRead {
        SearchOrRead {
            is_read: true,
            ..SearchOrRead::default()
        }
    }
    // Read rules (`Read(./secrets/**)` denies) apply to it as to Read.
    fn permission_subject(&self, input: &WordCountInput) -> Option<PermissionSubject> {
        absolute(&input.file_path).map(|path| PermissionSubject::Path {
            path,
            access: FileAccess::Read,
        })
    }
    async fn validate_input(
        &self,
        input: &WordCountInput,
        _ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        // The form only: this runs before the permission step, and an answer about the file
        // here (missing, a directory) would tell what a deny rule hides, or what lies outside
        // the working directories before the user was asked. `call` says it.
        if absolute(&input.file_path).is_none() {
            return Err(ValidationError::new(format!(
                "file_path must be an absolute path, got `{}`.",
                input.file_path
            )));
        }
        Ok(())
    }
    async fn call(
        &self,
        input: WordCountInput,
        _ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<WordCountOutput>, ToolError> {
        let path = absolute(&input.file_path)
            .ok_or_else(|| ToolError::msg("file_path must be an absolute path"))?;
        let counted = path.clone();
        let counts = tokio::task::spawn_blocking(move || count_file(&counted))
            .await
            .map_err(|e| ToolError::msg(format!("the counting task failed: {e}")))?
            .map_err(ToolError::msg)?;
        Ok(ToolResult::new(WordCountOutput {
            file_path: path,
            counts,
        }))
    }
    fn to_content(&self, out: &WordCountOutput) -> tool_core::ToolResultContent {
        let c = out.counts;
        tool_core::ToolResultContent::Text(format!(
            "{} lines, {} words, {} bytes in {}",
            c.lines,
            c.words,
            c.bytes,
            out.file_path.display()
        ))
    }
}
