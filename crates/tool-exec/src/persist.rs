//! Large results go to disk; the model gets a preview and the path.
//!
//! Above the threshold (min(tool limit, 50,000 chars) by default) the full result is written
//! to `<results dir>/<tool_use_id>.txt` (or `.json` for a list of text blocks), created
//! exclusively (an existing file for the same id is reused when it holds the same result,
//! never overwritten; another result of a repeated id goes to `<id>.2.txt`) and atomically
//! (a temporary file linked into place: the file is whole or absent, never torn), and the
//! content is replaced by Claude Code's `<persisted-output>` block. Unlike Claude Code, the
//! preview shows the tail as well as the head: a failing build prints its error last
//! (decision 8). Images are never persisted. If the file cannot be written, the content is
//! cut to head and tail in memory with a note, so a huge result never reaches the model whole.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use tool_core::{ContentBlock, ToolResultContent};

/// How many characters of head (and of tail) the preview shows.
pub const PREVIEW_CHARS: usize = 2000;

/// Claude Code's file-size text: `N bytes` below 1 KiB, else KB/MB/GB with one decimal and a
/// trailing `.0` dropped.
pub fn format_size(size: usize) -> String {
    const UNITS: [&str; 3] = ["KB", "MB", "GB"];
    if size < 1024 {
        return format!("{size} bytes");
    }
    #[expect(
        clippy::cast_precision_loss,
        reason = "a display figure with one decimal"
    )]
    let mut value = size as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    let text = format!("{value:.1}");
    format!(
        "{}{}",
        text.strip_suffix(".0").unwrap_or(&text),
        UNITS[unit]
    )
}

fn head_preview(text: &str, max: usize) -> (String, bool) {
    let total = text.chars().count();
    if total <= max {
        return (text.to_owned(), false);
    }
    let head: String = text.chars().take(max).collect();
    // Cut at the last newline when it is past the middle, so lines stay whole.
    match head.rfind('\n') {
        Some(pos) if head[..pos].chars().count() > max / 2 => (head[..pos].to_owned(), true),
        _ => (head, true),
    }
}

fn tail_preview(text: &str, max: usize) -> String {
    let total = text.chars().count();
    let tail: String = text.chars().skip(total.saturating_sub(max)).collect();
    match tail.find('\n') {
        Some(pos) if tail[..pos].chars().count() < max / 2 => tail[pos + 1..].to_owned(),
        _ => tail,
    }
}

/// The `<persisted-output>` block for a result of `size` characters saved at `path`.
pub fn persisted_block(text: &str, size: usize, path: &Path) -> String {
    let (head, truncated) = head_preview(text, PREVIEW_CHARS);
    let mut out = format!(
        "<persisted-output>\nOutput too large ({}). Full output saved to: {}\n\nPreview (first 2KB):\n{head}\n",
        format_size(size),
        path.display()
    );
    if truncated {
        out.push_str("...\n");
        if size > 2 * PREVIEW_CHARS {
            out.push_str(&format!(
                "\nPreview (last 2KB):\n{}\n",
                tail_preview(text, PREVIEW_CHARS)
            ));
        }
    }
    out.push_str("</persisted-output>");
    out
}

/// The file name stem of a result: the tool_use id itself when it is a plain name of at most
/// 64 characters (as the API's `toolu_…` ids are); else its first 64 characters, others
/// replaced, plus a hash of the id, so that two ids (`a/b`, `a.b`) never share a file.
fn safe_file_stem(tool_use_id: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    // Past 64 characters a name risks the file system's limit (255 bytes): shortened.
    if !tool_use_id.is_empty() && tool_use_id.len() <= 64 && tool_use_id.chars().all(plain) {
        return tool_use_id.to_owned();
    }
    let stem: String = tool_use_id
        .chars()
        .map(|c| if plain(c) { c } else { '_' })
        .take(64)
        .collect();
    let mut hasher = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(tool_use_id, &mut hasher);
    let hash = std::hash::Hasher::finish(&hasher);
    format!(
        "{}-{:08x}",
        if stem.is_empty() { "tool_use" } else { &stem },
        hash as u32
    )
}

/// How many files one tool_use id may have (`ID.txt`, `ID.2.txt`, ...): ids repeat only
/// when a host replays or duplicates a turn.
const MAX_FILES_PER_ID: u32 = 100;

/// Writes `bytes` at `path`, atomically, never over another file, and returns where they
/// are. A file already at `path` with the same bytes is reused (the same result saved
/// again); one with other bytes (a repeated id with another result) is kept, and the bytes
/// go to `NAME.2.EXT`, `NAME.3.EXT`, ...: a preview never points at another result.
///
/// The bytes go to a temporary file beside it (`.NAME.tw-tmp.PID.TAG.N`,
/// [`tool_core::temp_file`]), flushed to disk, which
/// is then hard-linked into place (linking never replaces an existing file) and removed. A
/// reader, or a crash at any moment, sees no file or the whole file, never a part of it.
/// Where hard links are not supported the temporary file is renamed into place instead.
fn write_exclusive(path: &Path, bytes: &[u8]) -> io::Result<PathBuf> {
    if holds(path, bytes) {
        return Ok(path.to_path_buf());
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default();
    tool_core::temp_file::remove_abandoned_temps(dir);
    // Owner-only, whatever the directory's mode: a result holds whatever a tool printed.
    let mut tmp = tool_core::temp_file::TempFile::create(dir, name, 0o600)?;
    // On every return `tmp` is dropped, which removes its name: after a link the file keeps
    // the target's name only; after a failure nothing half-written or temporary stays.
    tmp.write_synced(bytes)?;
    for n in 1..=MAX_FILES_PER_ID {
        let target = numbered(path, n);
        match tmp.link_to(&target) {
            Ok(()) => return Ok(target),
            // Taken (by an earlier result or a concurrent writer): kept; reused when it holds
            // these very bytes.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if holds(&target, bytes) {
                    return Ok(target);
                }
            }
            Err(_) if !target.exists() => return tmp.rename_to(&target).map(|()| target),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{MAX_FILES_PER_ID} results were already saved under this tool_use id"),
    ))
}

/// `path` for `n == 1`, else `NAME.n.EXT`.
fn numbered(path: &Path, n: u32) -> PathBuf {
    if n == 1 {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{n}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{n}"),
    };
    path.with_file_name(name)
}

/// Whether the file at `path` holds exactly `bytes`.
fn holds(path: &Path, bytes: &[u8]) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == bytes.len() as u64)
        && fs::read(path).is_ok_and(|on_disk| on_disk == bytes)
}

/// The outcome of [`persist_if_large`].
#[derive(Debug)]
pub struct Persisted {
    /// The content to hand to the model.
    pub content: ToolResultContent,
    /// Where the full result was saved, if it was.
    pub path: Option<PathBuf>,
    /// Why saving failed, if it did (the content is then cut in memory).
    pub error: Option<io::Error>,
}

/// Applies the persistence rule to `content`. `threshold` is in characters; `dir` is where
/// results go (`None`: never persist, only cut).
pub fn persist_if_large(
    content: ToolResultContent,
    tool_use_id: &str,
    threshold: usize,
    dir: Option<&Path>,
) -> Persisted {
    let size = content.text_len();
    // Only text is saved (Claude Code's rule): content with any other block (an image, a
    // tool reference) stays as it is.
    let only_text = match &content {
        ToolResultContent::Text(_) => true,
        ToolResultContent::Blocks(blocks) => blocks
            .iter()
            .all(|b| matches!(b, ContentBlock::Text { .. })),
    };
    if size <= threshold || !only_text {
        return Persisted {
            content,
            path: None,
            error: None,
        };
    }
    let text = content.joined_text();
    let (extension, bytes) = match &content {
        ToolResultContent::Text(s) => ("txt", s.clone().into_bytes()),
        ToolResultContent::Blocks(blocks) => {
            let texts: Vec<&ContentBlock> = blocks.iter().collect();
            (
                "json",
                serde_json::to_vec_pretty(&texts).unwrap_or_default(),
            )
        }
    };
    let result = match dir {
        Some(dir) => {
            let path = dir.join(format!("{}.{extension}", safe_file_stem(tool_use_id)));
            // Owner-only: results can hold whatever a tool printed (tokens, file contents).
            tool_core::create_private_dir(dir).and_then(|()| write_exclusive(&path, &bytes))
        }
        None => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no results directory is configured",
        )),
    };
    match result {
        Ok(path) => Persisted {
            content: ToolResultContent::Text(persisted_block(&text, size, &path)),
            path: Some(path),
            error: None,
        },
        Err(error) => {
            let cut = tool_core::truncate_middle(&text, threshold);
            let note = format!(
                "{cut}\n\n[Output too large ({}) and could not be saved to a file: {error}]",
                format_size(size)
            );
            Persisted {
                content: ToolResultContent::Text(note),
                path: None,
                error: Some(error),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_claude_code() {
        assert_eq!(format_size(10), "10 bytes");
        assert_eq!(format_size(1024), "1KB");
        assert_eq!(format_size(1536), "1.5KB");
        assert_eq!(format_size(50_001), "48.8KB");
        assert_eq!(format_size(3 * 1024 * 1024), "3MB");
    }

    #[test]
    fn different_ids_never_share_a_file() {
        assert_eq!(safe_file_stem("toolu_01AbC-x"), "toolu_01AbC-x");
        let stems: Vec<String> = ["a.b", "a/b", "a_b", "", "é"]
            .iter()
            .map(|id| safe_file_stem(id))
            .collect();
        for (i, a) in stems.iter().enumerate() {
            assert!(!a.is_empty());
            for b in &stems[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn tool_references_are_not_saved() {
        let dir = tempfile::tempdir().unwrap();
        let content = ToolResultContent::Blocks(vec![
            ContentBlock::text("x".repeat(100)),
            ContentBlock::ToolReference {
                tool_name: "Read".into(),
            },
        ]);
        let out = persist_if_large(content.clone(), "t3", 10, Some(dir.path()));
        assert!(out.path.is_none());
        assert_eq!(out.content, content);
    }

    #[test]
    fn small_results_and_images_stay() {
        let dir = tempfile::tempdir().unwrap();
        let small = persist_if_large(
            ToolResultContent::Text("abc".into()),
            "t1",
            10,
            Some(dir.path()),
        );
        assert!(small.path.is_none());
        let image = ToolResultContent::Blocks(vec![
            ContentBlock::text("x".repeat(100)),
            ContentBlock::image("image/png", "AA"),
        ]);
        assert!(
            persist_if_large(image, "t2", 10, Some(dir.path()))
                .path
                .is_none()
        );
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn large_results_are_saved_with_head_and_tail() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (0..3000).map(|i| format!("line {i}\n")).collect::<String>()
            + "ERROR: the real failure";
        let out = persist_if_large(
            ToolResultContent::Text(text.clone()),
            "toolu/../x",
            1000,
            Some(dir.path()),
        );
        let path = out.path.unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("toolu____x-")
                && name.ends_with(".txt")
                && path.parent() == Some(dir.path()),
            "{}",
            path.display()
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), text);
        // Owner-only, although the directory (a tempdir here) lets others list it.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let ToolResultContent::Text(preview) = out.content else {
            panic!()
        };
        assert!(
            preview.starts_with("<persisted-output>\nOutput too large ("),
            "{preview}"
        );
        assert!(preview.contains(&format!("Full output saved to: {}", path.display())));
        assert!(preview.contains("Preview (first 2KB):\nline 0\n"));
        assert!(preview.contains("Preview (last 2KB):\n"));
        assert!(
            preview
                .trim_end()
                .ends_with("ERROR: the real failure\n</persisted-output>")
        );
        // The head is cut at a line end.
        let head = preview
            .split("Preview (first 2KB):\n")
            .nth(1)
            .unwrap()
            .split("\n...\n")
            .next()
            .unwrap();
        assert!(head.ends_with(|c: char| c.is_ascii_digit()));
    }

    /// A file already saved for the id is never overwritten. The same result saved again
    /// reuses it; another result under the same id (a repeated id) goes beside it, so the
    /// preview never points at another result's file.
    #[test]
    fn an_existing_file_is_kept_and_reused_only_for_the_same_result() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("t.txt"), "first").unwrap();
        let save = |text: &str| {
            persist_if_large(
                ToolResultContent::Text(text.to_owned()),
                "t",
                10,
                Some(dir.path()),
            )
            .path
            .unwrap()
        };
        let y = "y".repeat(100);
        let second = save(&y);
        assert_eq!(second, dir.path().join("t.2.txt"));
        assert_eq!(fs::read_to_string(&second).unwrap(), y);
        assert_eq!(
            fs::read_to_string(dir.path().join("t.txt")).unwrap(),
            "first"
        );
        assert_eq!(save(&y), second, "the same result is saved once");
        let z = "z".repeat(100);
        let third = save(&z);
        assert_eq!(third, dir.path().join("t.3.txt"));
        assert_eq!(fs::read_to_string(&third).unwrap(), z);
    }

    /// A long plain id is shortened: the file system refuses names over 255 bytes.
    #[test]
    fn a_long_id_still_gets_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let id = "a".repeat(300);
        let out = persist_if_large(
            ToolResultContent::Text("y".repeat(100)),
            &id,
            10,
            Some(dir.path()),
        );
        assert!(out.error.is_none(), "{:?}", out.error);
        assert_eq!(
            fs::read_to_string(out.path.unwrap()).unwrap(),
            "y".repeat(100)
        );
    }

    #[test]
    fn unwritable_dir_cuts_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        fs::write(&blocker, "").unwrap();
        let out = persist_if_large(
            ToolResultContent::Text("z".repeat(30_000)),
            "t",
            1000,
            Some(&blocker.join("sub")),
        );
        assert!(out.path.is_none());
        assert!(out.error.is_some());
        assert!(out.content.text_len() < 2000);
        assert!(out.content.joined_text().contains("could not be saved"));
    }
}
