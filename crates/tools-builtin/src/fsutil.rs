//! Shared file plumbing: path checks, text encodings and line endings, binary and image
//! sniffing, and the atomic write every writer uses.

use std::ffi::OsString;
use std::fmt;
use std::fs::{self, File};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::stat::SFlag;

use tool_core::temp_file::write_target;
use tool_core::{
    ContentHash, FileState, MODIFIED_MESSAGE, NOT_READ_MESSAGE, StaleFile, Tool, ToolError,
    ToolUseContext, ValidationError, expand_path, mtime_ms,
};

/// Resolves a model-supplied file path that must be absolute (or start with `~`, when there
/// is a home directory to expand it to: without one, `~/x` would become `<cwd>/~/x`).
pub(crate) fn absolute_path(
    raw: &str,
    field: &str,
    ctx: &ToolUseContext,
) -> Result<PathBuf, ValidationError> {
    let trimmed = raw.trim();
    if trimmed.contains('\0') {
        return Err(ValidationError::new(format!(
            "The {field} parameter contains a null byte, which is not allowed."
        )));
    }
    if trimmed.is_empty() {
        return Err(ValidationError::new(format!(
            "The {field} parameter must not be empty."
        )));
    }
    let tilde = trimmed == "~" || trimmed.starts_with("~/");
    if !(Path::new(trimmed).is_absolute() || tilde) {
        return Err(ValidationError::new(format!(
            "The {field} parameter must be an absolute path, not a relative path: {trimmed}"
        )));
    }
    if tilde {
        refuse_tilde_without_home(field, trimmed, ctx)?;
    }
    // `a.txt/` (or `a.txt/.`, `a.txt/..`) names a directory (POSIX: ENOTDIR for a file):
    // normalised without it, a Write of `newdir/` would create a file `newdir`.
    let last = trimmed.rsplit('/').next().unwrap_or_default();
    if trimmed.len() > 1 && trimmed.contains('/') && matches!(last, "" | "." | "..") {
        return Err(ValidationError::new(format!(
            "The {field} parameter ends with /, /. or /.., so it names a directory, not a file: {trimmed}"
        )));
    }
    Ok(ctx.resolve_path(trimmed))
}

/// Refuses `written` (a `path`, or a Glob `pattern`, as the model wrote it, trimmed) that
/// starts with `~` when there is no home directory to expand it to: `~/x` would otherwise
/// be `<cwd>/~/x`, a directory of that name in the working directory. The caller decides
/// what starts with `~` in its field (`~` and `~/…` for a path, [`is_home_path`]; `~/…`
/// for a Glob pattern).
pub(crate) fn refuse_tilde_without_home(
    field: &str,
    written: &str,
    ctx: &ToolUseContext,
) -> Result<(), ValidationError> {
    if ctx.home().is_some() {
        return Ok(());
    }
    Err(ValidationError::new(format!(
        "The {field} parameter starts with ~, but there is no home directory to expand it to: {written}. Use an absolute path instead."
    )))
}

/// `dir`, an absolute path, with each component in the Unicode form that exists on disk,
/// as [`expand_path`] finds a path the model gave: a name is kept in the form given, and
/// only when nothing exists under that form and something does under its NFC (else NFD)
/// form is that form used (`café/` typed composed finds a directory unpacked decomposed);
/// from the first component that exists in no form, the rest is kept as given. A path
/// that is relative, not valid UTF-8 or plain ASCII is returned as it is, the last without
/// touching the disk. It `stat`s each component: call it where a hung mount may be waited
/// on (a search's thread, under its time limit).
pub(crate) fn existing_form(dir: &Path) -> PathBuf {
    let Some(text) = dir.to_str().filter(|t| !t.is_ascii()) else {
        return dir.to_path_buf();
    };
    if !dir.is_absolute() {
        return dir.to_path_buf();
    }
    // `expand_path` trims its input and collapses `.` and `..`: the path is absolute
    // (nothing to trim at its start) and ends with `/.` (nothing at its end), and the
    // callers' paths hold no `..`.
    expand_path(&format!("{text}/."), Path::new("/"), None)
}

/// `rel`, directories below `base` (an existing absolute directory) written with `/`, in
/// the Unicode form that exists on disk ([`existing_form`]); `None` when that is the form
/// given (or `rel` is plain ASCII, or the form found cannot be written as text).
pub(crate) fn existing_form_below(base: &Path, rel: &str) -> Option<String> {
    if rel.is_ascii() {
        return None;
    }
    let given = base.join(rel);
    let found = existing_form(&given);
    if found == given {
        return None;
    }
    found.strip_prefix(base).ok()?.to_str().map(str::to_owned)
}

/// The input with its path field `field` as hooks and permission prompts see it (Claude
/// Code's `backfillObservableInput`): the path the tool will use, trimmed, `~` expanded,
/// `.` and `..` collapsed. `None` when that is already how the model wrote it, or the field
/// is not a path this tool accepts (validation refused it before anyone looks).
pub(crate) fn observable_path(
    input: &serde_json::Value,
    field: &str,
    ctx: &ToolUseContext,
) -> Option<serde_json::Value> {
    let raw = input.get(field)?.as_str()?;
    with_resolved(input, field, &absolute_path(raw, field, ctx).ok()?)
}

/// `input` with `field` set to `resolved`; `None` when it already holds that, or when
/// `resolved` is not valid UTF-8 (a JSON string cannot hold it): hooks then see the path as
/// the model wrote it, and the permission rules judge it all the same, through the tool's
/// permission subject, a path the engine resolves with the call's context
/// ([`subject_path`], [`search_subject_path`]).
fn with_resolved(
    input: &serde_json::Value,
    field: &str,
    resolved: &Path,
) -> Option<serde_json::Value> {
    let resolved = resolved.to_str()?;
    if input.get(field).and_then(serde_json::Value::as_str) == Some(resolved) {
        return None;
    }
    let mut observed = input.clone();
    observed[field] = serde_json::Value::String(resolved.to_owned());
    Some(observed)
}

/// Glob's and Grep's input as hooks and permission checks see it: a `path` given relative
/// (or with `~`, `.`, `..`) resolved against the cwd, so the path rules (and their symlink
/// checks) judge the directory the search walks. `None` when `path` is absent or already
/// that.
pub(crate) fn observable_search_path(
    input: &serde_json::Value,
    ctx: &ToolUseContext,
) -> Option<serde_json::Value> {
    let raw = input.get("path")?.as_str()?;
    let trimmed = raw.trim();
    if trimmed.is_empty() || trimmed.contains('\0') {
        return None;
    }
    with_resolved(input, "path", &ctx.resolve_path(trimmed))
}

/// The path for a permission subject, computed without a context: an absolute path
/// resolved (`.` and `..` collapsed), a `~` path as written, which the permission engine
/// expands with the call's home directory (a relative subject is resolved with the call's
/// context, as the tool resolves it), so that a home directory whose name is not valid
/// UTF-8, which no JSON input can carry, is judged as the path the tool uses; `None` for
/// a relative path (file tools refuse those in `validate_input`, before permissions).
pub(crate) fn subject_path(raw: &str) -> Option<PathBuf> {
    let trimmed = raw.trim();
    if Path::new(trimmed).is_absolute() {
        Some(expand_path(trimmed, Path::new("/"), None))
    } else if is_home_path(trimmed) {
        Some(PathBuf::from(trimmed))
    } else {
        None
    }
}

/// Whether `trimmed` (a path with its whitespace trimmed) is in the home directory as
/// written: `~` or `~/…`, which the tools and the permission engine expand with the call's
/// home directory (`~x` is a name in the working directory).
pub(crate) fn is_home_path(trimmed: &str) -> bool {
    trimmed == "~" || trimmed.starts_with("~/")
}

/// The permission subject of a Glob or Grep `path` (the search root): as
/// [`subject_path`], and a relative path kept relative (`src`), which the permission
/// engine resolves against the call's working directory as the search does. The subject
/// is a path, not JSON text, so a root whose name is not valid UTF-8 (a project directory
/// named so), which the observable input cannot show resolved, is judged all the same.
pub(crate) fn search_subject_path(raw: &str) -> PathBuf {
    let trimmed = raw.trim();
    subject_path(trimmed).unwrap_or_else(|| cwd_relative(PathBuf::from(trimmed)))
}

/// A relative subject path as the permission engine must read it: below the working
/// directory. One that starts with a `~` part (`a/../~/x` collapsed to `~/x`) gets a `./`
/// first, so that it names the directory `~` in the working directory, which the search
/// walks, not the home directory.
pub(crate) fn cwd_relative(path: PathBuf) -> PathBuf {
    match path.components().next() {
        Some(std::path::Component::Normal(first)) if first == "~" => Path::new(".").join(path),
        _ => path,
    }
}

/// The "file does not exist" refusal of `path` (absolute), with the working directory as
/// Claude Code gives it, and its hint when one is found ([`missing_file_hint`]): ` Did you
/// mean <path or name>?`, escaped as Glob lists names ([`listed_path`]).
pub(crate) fn not_found_message(path: &Path, ctx: &ToolUseContext) -> String {
    let mut message = format!(
        "File does not exist. Note: your current working directory is {}.",
        ctx.cwd().display()
    );
    if let Some(hint) = missing_file_hint(path, ctx) {
        message.push_str(&did_you_mean(&hint));
    }
    message
}

/// ` Did you mean <hint>?`, the hint escaped as Glob lists names ([`listed_path`]): it stays
/// one line that cannot pass for more text.
fn did_you_mean(hint: &str) -> String {
    format!(" Did you mean {}?", tool_core::escape_line_breaks(hint))
}

/// The end of Grep's and Glob's refusal of a search path `path` (absolute) that does not
/// exist: ` Did you mean <path>?` naming the same path under the working directory when the
/// model left out the project folder ([`path_under_cwd`], with the checks of
/// [`missing_file_hint`]), else nothing. Claude Code's Grep and Glob look for nothing else
/// (`suggestPathUnderCwd` alone, no namesake).
pub(crate) fn missing_search_path_hint(path: &Path, ctx: &ToolUseContext) -> String {
    let may_name = hint_may_name(ctx);
    path_under_cwd(path, ctx.cwd())
        .filter(|p| may_name(p))
        .map_or_else(String::new, |p| did_you_mean(&p.display().to_string()))
}

/// Whether a "Did you mean" hint may name a path: only one inside the working directories
/// (Edit refuses a missing file before any permission check, so a hint there would list a
/// folder outside them that nobody allowed) and not covered by a Read deny rule (the hint
/// would tell what the rule hides).
fn hint_may_name(ctx: &ToolUseContext) -> impl Fn(&Path) -> bool + '_ {
    let engine = tool_perms::PermissionEngine::for_walking(ctx);
    move |p: &Path| {
        in_working_directories(p, ctx)
            && engine
                .as_ref()
                .is_none_or(|e| e.denied_by(p, tool_core::FileAccess::Read).is_none())
    }
}

/// The most entries of the missing file's directory [`similar_file`] looks at: a directory
/// of millions of files costs one bounded listing, not a stalled call.
const SIMILAR_FILE_SCAN: usize = 1000;

/// What the model may have meant by the missing `path`, as Claude Code's Read and Edit
/// find it: the same path under the working directory ([`path_under_cwd`]), else a file
/// beside it with the same name and another extension ([`similar_file`]). Only a path
/// [`hint_may_name`] allows is named.
fn missing_file_hint(path: &Path, ctx: &ToolUseContext) -> Option<String> {
    let readable = hint_may_name(ctx);
    if let Some(under) = path_under_cwd(path, ctx.cwd()).filter(|p| readable(p)) {
        return Some(under.display().to_string());
    }
    // A folder outside them is not even listed.
    if !path
        .parent()
        .is_some_and(|dir| in_working_directories(dir, ctx))
    {
        return None;
    }
    similar_file(path, readable)
}

/// Claude Code's `suggestPathUnderCwd`, for a model that dropped the project folder from an
/// absolute path: `path` lies under the parent of the working directory `cwd` but not under
/// `cwd`, and the same path relative to that parent exists under `cwd`
/// (`/home/u/src/lib.rs` asked for, `/home/u/proj/src/lib.rs` there with the cwd
/// `/home/u/proj`). Both are compared with links resolved (the path's nearest existing
/// ancestor: the folder the model left out usually makes its parent missing too); the
/// suggestion is under `cwd` as given.
fn path_under_cwd(path: &Path, cwd: &Path) -> Option<PathBuf> {
    let real_cwd = fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let cwd_parent = real_cwd.parent()?;
    let resolved = path.ancestors().skip(1).find_map(|a| {
        let real = fs::canonicalize(a).ok()?;
        Some(real.join(path.strip_prefix(a).ok()?))
    })?;
    if resolved.starts_with(&real_cwd) {
        return None;
    }
    let corrected = cwd.join(resolved.strip_prefix(cwd_parent).ok()?);
    fs::metadata(&corrected).ok().map(|_| corrected)
}

/// Claude Code's `findSimilarFile`: the name of an entry of `path`'s directory with the
/// same stem as `path` and another extension (`main.ts` for a missing `main.js`), of those
/// `readable` allows. Of several, the first by name (Claude Code takes the first the
/// directory lists, an order that differs between file systems); only the first
/// [`SIMILAR_FILE_SCAN`] entries are looked at. No directory, no suggestion.
fn similar_file(path: &Path, readable: impl Fn(&Path) -> bool) -> Option<String> {
    let dir = path.parent()?;
    let name = path.file_name()?;
    let stem = Path::new(name).file_stem()?;
    let mut best: Option<OsString> = None;
    for entry in fs::read_dir(dir).ok()?.take(SIMILAR_FILE_SCAN) {
        let Ok(entry) = entry else { continue };
        let other = entry.file_name();
        if other == name
            || Path::new(&other).file_stem() != Some(stem)
            || best.as_ref().is_some_and(|b| *b <= other)
        {
            continue;
        }
        if readable(&dir.join(&other)) {
            best = Some(other);
        }
    }
    best.map(|b| b.to_string_lossy().into_owned())
}

/// A path as shown to the model: relative to the working directory when inside it.
pub(crate) fn display_path(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// A path as a search result lists it ([`display_path`]), its control characters (and the
/// line and paragraph separators) written as escapes ([`tool_core::escape_line_breaks`]):
/// each path is one line of the result, and a name with a line break in it would read as
/// two paths (a repository can plant `notes<LF>src` to point at another file). Other
/// characters stay as they are, so that the name can be given back to Read.
pub(crate) fn listed_path(path: &Path, cwd: &Path) -> String {
    tool_core::escape_line_breaks(&display_path(path, cwd))
}

/// Runs blocking file work off the async runtime when there is one.
pub(crate) async fn blocking<R, F>(f: F) -> Result<R, ToolError>
where
    R: Send + 'static,
    F: FnOnce() -> Result<R, ToolError> + Send + 'static,
{
    on_blocking_pool(f, |e| {
        ToolError::msg(format!("file operation failed to complete: {e}"))
    })
    .await
}

/// [`blocking`] for `validate_input`: a check that reads (and may hash or plan on) a file
/// of up to a gigabyte runs on the blocking pool, not on an async worker it would stall.
pub(crate) async fn blocking_validation<F>(f: F) -> Result<(), ValidationError>
where
    F: FnOnce() -> Result<(), ValidationError> + Send + 'static,
{
    on_blocking_pool(f, |e| {
        ValidationError::new(format!("the file check failed to complete: {e}"))
    })
    .await
}

/// Runs `f` on the blocking pool when there is a runtime (else here); a task that did not
/// complete (it panicked) becomes `failed(its error)`.
async fn on_blocking_pool<R, E, F>(
    f: F,
    failed: impl FnOnce(tokio::task::JoinError) -> E,
) -> Result<R, E>
where
    R: Send + 'static,
    E: Send + 'static,
    F: FnOnce() -> Result<R, E> + Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle
            .spawn_blocking(f)
            .await
            .unwrap_or_else(|e| Err(failed(e))),
        Err(_) => f(),
    }
}

/// The text encodings the writers keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// UTF-8, with or without a byte-order mark.
    Utf8 {
        /// Whether the file starts with EF BB BF.
        bom: bool,
    },
    /// UTF-16 little-endian with its FF FE byte-order mark.
    Utf16Le,
    /// UTF-16 big-endian with its FE FF byte-order mark.
    Utf16Be,
    /// UTF-8 with bytes that are not UTF-8 among it (a stray Latin-1 `£`), each held in the
    /// text as the private-use character [`STRAY_BYTE_BASE`]` + byte` and written back as
    /// the byte it stands for ([`decode_keeping_stray_bytes`]).
    Utf8StrayBytes {
        /// Whether the file starts with EF BB BF.
        bom: bool,
    },
}

/// The first of the 256 private-use characters (U+10FE00 to U+10FEFF) that stand for a
/// file's bytes that are not UTF-8 while Edit changes the text around them.
pub(crate) const STRAY_BYTE_BASE: u32 = 0x10_FE00;

/// Whether `c` stands for a byte that is not UTF-8 ([`Encoding::Utf8StrayBytes`]).
pub(crate) fn is_stray_byte(c: char) -> bool {
    (STRAY_BYTE_BASE..STRAY_BYTE_BASE + 256).contains(&u32::from(c))
}

/// UTF-8 bytes with some that are not UTF-8, decoded without losing them: each such byte
/// becomes the private-use character [`STRAY_BYTE_BASE`]` + byte`, which [`encode`] writes
/// back as that byte, so an edit of the text around them keeps them as they are (Claude
/// Code writes them back as U+FFFD, losing them). `None` for valid UTF-8 or UTF-16 (use
/// [`decode`]), for a file that [looks binary](looks_binary) (Read refuses it too), and
/// for one whose text already holds one of those private-use characters, where the two
/// could not be told apart.
pub(crate) fn decode_keeping_stray_bytes(bytes: &[u8]) -> Option<Decoded> {
    if bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]) || looks_binary(bytes) {
        return None;
    }
    let (bom, body) = match bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        Some(rest) => (true, rest),
        None => (false, bytes),
    };
    let mut text = String::with_capacity(body.len());
    let mut stray = false;
    for chunk in body.utf8_chunks() {
        if chunk.valid().chars().any(is_stray_byte) {
            return None;
        }
        text.push_str(chunk.valid());
        for &byte in chunk.invalid() {
            stray = true;
            text.push(char::from_u32(STRAY_BYTE_BASE + u32::from(byte))?);
        }
    }
    stray.then_some(Decoded {
        text,
        encoding: Encoding::Utf8StrayBytes { bom },
    })
}

/// `text` as Read shows it: the bytes its private-use characters stand for decoded as Read
/// decodes them (a run that is no UTF-8 as one U+FFFD, bytes an edit brought together into
/// a whole character as that character).
pub(crate) fn shown_stray_bytes(text: &str) -> String {
    String::from_utf8_lossy(&encode(text, Encoding::Utf8StrayBytes { bom: false })).into_owned()
}

/// A decoded text file and how to encode it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decoded {
    /// The text without BOM.
    pub text: String,
    /// The encoding it came in.
    pub encoding: Encoding,
}

/// Decodes file bytes as UTF-8 (BOM optional) or BOM-marked UTF-16 (LE or BE). `None`
/// when the bytes are none of these.
pub(crate) fn decode(bytes: &[u8]) -> Option<Decoded> {
    let utf16 = |rest: &[u8], big_endian, encoding| {
        if !rest.len().is_multiple_of(2) {
            return None;
        }
        String::from_utf16(&utf16_units(rest, big_endian))
            .ok()
            .map(|text| Decoded { text, encoding })
    };
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, false, Encoding::Utf16Le);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, true, Encoding::Utf16Be);
    }
    let (bom, body) = match bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        Some(rest) => (true, rest),
        None => (false, bytes),
    };
    std::str::from_utf8(body).ok().map(|s| Decoded {
        text: s.to_owned(),
        encoding: Encoding::Utf8 { bom },
    })
}

/// The UTF-16 code units of `bytes` (UTF-16 text without its byte order mark), each two
/// bytes read big-endian when `big_endian`, else little-endian. An odd last byte is left
/// out: the caller says what that means. The one decoding of UTF-16 bytes that [`decode`],
/// [`decode_utf16_lossy`] and [`damaged_utf16`] (the refusals of a damaged UTF-16 file)
/// share.
pub(crate) fn utf16_units(bytes: &[u8], big_endian: bool) -> Vec<u16> {
    bytes
        .chunks_exact(2)
        .map(|c| {
            if big_endian {
                u16::from_be_bytes([c[0], c[1]])
            } else {
                u16::from_le_bytes([c[0], c[1]])
            }
        })
        .collect()
}

/// What is wrong with a file that starts with a UTF-16 byte order mark but that [`decode`]
/// refuses, in words for the model: `UTF-16 text (little-endian, by its byte order mark) with
/// an unpaired surrogate at byte 6` (or `with an odd number of bytes (a stray last byte)`).
/// `None` for a file without a UTF-16 byte order mark, or one that decodes. Edit, Write and
/// the notebook tools refuse such a file in these words.
pub(crate) fn damaged_utf16(bytes: &[u8]) -> Option<String> {
    let (rest, order, big_endian) = match bytes {
        [0xFF, 0xFE, rest @ ..] => (rest, "little-endian", false),
        [0xFE, 0xFF, rest @ ..] => (rest, "big-endian", true),
        _ => return None,
    };
    let what = if !rest.len().is_multiple_of(2) {
        "an odd number of bytes (a stray last byte)".to_owned()
    } else {
        // The byte offset in the file, past the 2 bytes of the byte order mark.
        format!(
            "an unpaired surrogate at byte {}",
            2 + unpaired_surrogate(&utf16_units(rest, big_endian))? * 2
        )
    };
    Some(format!(
        "UTF-16 text ({order}, by its byte order mark) with {what}"
    ))
}

/// The index of the first UTF-16 unit that is a surrogate outside a high-low pair.
fn unpaired_surrogate(units: &[u16]) -> Option<usize> {
    let mut i = 0;
    while let Some(&unit) = units.get(i) {
        let high = (0xD800..=0xDBFF).contains(&unit);
        if high
            && units
                .get(i + 1)
                .is_some_and(|u| (0xDC00..=0xDFFF).contains(u))
        {
            i += 2;
            continue;
        }
        if (0xD800..=0xDFFF).contains(&unit) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// A UTF-16 file (its byte order mark first) that [`decode`] refuses, decoded with U+FFFD
/// for each unpaired surrogate and for an odd last byte.
pub(crate) fn decode_utf16_lossy(bytes: &[u8]) -> String {
    let (rest, big_endian) = match bytes {
        [0xFE, 0xFF, rest @ ..] => (rest, true),
        [_, _, rest @ ..] => (rest, false),
        _ => (&[][..], false),
    };
    let mut text = String::from_utf16_lossy(&utf16_units(rest, big_endian));
    if rest.len() % 2 == 1 {
        text.push('\u{FFFD}');
    }
    text
}

/// Encodes `text` back in `encoding`.
pub(crate) fn encode(text: &str, encoding: Encoding) -> Vec<u8> {
    match encoding {
        Encoding::Utf8 { bom } => {
            let mut out = Vec::with_capacity(text.len() + 3);
            if bom {
                out.extend_from_slice(&[0xEF, 0xBB, 0xBF]);
            }
            out.extend_from_slice(text.as_bytes());
            out
        }
        Encoding::Utf8StrayBytes { bom } => {
            let mut out = Vec::with_capacity(text.len() + 3);
            if bom {
                out.extend_from_slice(&[0xEF, 0xBB, 0xBF]);
            }
            let mut buf = [0u8; 4];
            for c in text.chars() {
                match u32::from(c).checked_sub(STRAY_BYTE_BASE) {
                    Some(byte @ 0..=255) => out.push(byte as u8),
                    _ => out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes()),
                }
            }
            out
        }
        Encoding::Utf16Le => {
            let mut out = Vec::with_capacity(text.len() * 2 + 2);
            out.extend_from_slice(&[0xFF, 0xFE]);
            for unit in text.encode_utf16() {
                out.extend_from_slice(&unit.to_le_bytes());
            }
            out
        }
        Encoding::Utf16Be => {
            let mut out = Vec::with_capacity(text.len() * 2 + 2);
            out.extend_from_slice(&[0xFE, 0xFF]);
            for unit in text.encode_utf16() {
                out.extend_from_slice(&unit.to_be_bytes());
            }
            out
        }
    }
}

/// Whether every `\n` of `text` is part of a `\r\n` (and there is at least one): such a
/// file is edited in LF form and converted back losslessly.
pub(crate) fn is_pure_crlf(text: &str) -> bool {
    let lf = text.matches('\n').count();
    lf > 0 && lf == text.matches("\r\n").count()
}

/// Converts every `\r\n` to `\n`.
pub(crate) fn crlf_to_lf(text: &str) -> String {
    text.replace("\r\n", "\n")
}

/// Converts `\r\n` to `\n` when `yes`.
pub(crate) fn crlf_to_lf_if(yes: bool, text: &str) -> String {
    if yes {
        crlf_to_lf(text)
    } else {
        text.to_owned()
    }
}

/// Converts every `\n` to `\r\n` (the text must be in LF form).
pub(crate) fn lf_to_crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

/// How many bytes at the start of `buf` end a UTF-8 character begun before it (0 to 3).
pub(crate) fn partial_utf8_head(buf: &[u8]) -> usize {
    buf.iter()
        .take(3)
        .take_while(|b| (0x80..0xC0).contains(*b))
        .count()
}

/// How many bytes at the end of `buf` begin a UTF-8 character they do not finish (0 to 3).
pub(crate) fn incomplete_utf8_tail(buf: &[u8]) -> usize {
    for back in 1..=buf.len().min(3) {
        let b = buf[buf.len() - back];
        if b < 0x80 {
            return 0;
        }
        if b >= 0xC0 {
            let width = match b {
                0xC0..0xE0 => 2,
                0xE0..0xF0 => 3,
                _ => 4,
            };
            return if width > back { back } else { 0 };
        }
    }
    0
}

/// Whether the start of a file looks binary: a NUL byte in the first 8 KiB, as git and
/// ripgrep decide (UTF-16 with a BOM is text).
pub(crate) fn looks_binary(head: &[u8]) -> bool {
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        return false;
    }
    memchr::memchr(0, &head[..head.len().min(8192)]).is_some()
}

/// Whether `head`, the start of a file, reads as text: no NUL byte and valid UTF-8 (a
/// character cut at the end of `head` counts as valid). A file whose first bytes happen to
/// spell a format's signature (`%PDF-1.7 is ...`, `GIF89a was ...` in notes) is text by this
/// test, where a real image or PDF (binary from its first bytes or its second line) is not.
pub(crate) fn reads_as_text(head: &[u8]) -> bool {
    if memchr::memchr(0, head).is_some() {
        return false;
    }
    match std::str::from_utf8(head) {
        Ok(_) => true,
        // Only a character cut short by the end of `head`.
        Err(e) => e.error_len().is_none(),
    }
}

/// The refusal of Claude Code's file tools' `validateInput` for a path a deny rule forbids
/// (`Read(...)` rules for reading; `Edit(...)` and `Read(...)` rules for writing): given
/// before the file system is looked at, the same whether the path exists or not, so that
/// the model is neither sent to Read a file it may not edit nor told what a denied
/// directory holds.
pub(crate) const DENIED_PATH_MESSAGE: &str =
    "File is in a directory that is denied by your permission settings.";

/// [`DENIED_PATH_MESSAGE`] when a deny rule of the session forbids `access` to `path`.
pub(crate) fn refuse_denied_path(
    path: &Path,
    access: tool_core::FileAccess,
    ctx: &ToolUseContext,
) -> Result<(), ValidationError> {
    let denied = tool_perms::PermissionEngine::for_walking(ctx)
        .is_some_and(|engine| engine.denied_by(path, access).is_some());
    if denied {
        return Err(ValidationError::with_code(DENIED_PATH_MESSAGE, 1));
    }
    Ok(())
}

/// The refusal of a file whose extension names a binary format (Claude Code's, from its
/// Read `validateInput`).
pub(crate) fn binary_extension_message(ext: &str) -> String {
    format!(
        "This tool cannot read binary files. The file appears to be a binary .{ext} file. Please use appropriate tools for binary file analysis."
    )
}

/// Extensions of formats that are binary whatever their first bytes say (Claude Code's
/// binary-extension refusal; images and PDFs are handled before this check).
const BINARY_EXTENSIONS: &[&str] = &[
    "exe", "dll", "so", "dylib", "bin", "o", "a", "lib", "obj", "class", "jar", "war", "pyc",
    "pyo", "wasm", "zip", "tar", "gz", "tgz", "bz2", "xz", "7z", "rar", "zst", "lz4", "iso", "dmg",
    "img", "deb", "rpm", "apk", "msi", "mp3", "mp4", "m4a", "wav", "flac", "ogg", "avi", "mov",
    "mkv", "webm", "wmv", "flv", "bmp", "ico", "tif", "tiff", "psd", "heic", "doc", "docx", "xls",
    "xlsx", "ppt", "pptx", "odt", "ods", "odp", "ttf", "otf", "woff", "woff2", "eot", "sqlite",
    "db", "dat", "pack", "idx", "node",
];

/// The binary extension of `path`, lower-cased, if it has one from the list.
pub(crate) fn binary_extension(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    BINARY_EXTENSIONS.contains(&ext.as_str()).then_some(ext)
}

/// Whether `head` is a PDF.
pub(crate) fn is_pdf(head: &[u8]) -> bool {
    head.starts_with(b"%PDF-")
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The refusal for a path that is a device, FIFO or socket: reading one may never end, and
/// replacing one would swap a device node for a plain file.
pub(crate) fn not_regular_message(path: &Path) -> String {
    format!(
        "Cannot write {}: it is not a regular file (a device, FIFO or socket).",
        path.display()
    )
}

/// Refuses an existing path that is not a regular file (symlinks are followed; a missing
/// path or a directory is left to the caller's own checks).
pub(crate) fn check_regular_or_missing(path: &Path) -> Result<(), String> {
    match fs::metadata(path) {
        Ok(meta) if !meta.is_file() && !meta.is_dir() => Err(not_regular_message(path)),
        _ => Ok(()),
    }
}

/// Takes an exclusive `flock` on `lock_path` (created if missing, with its directory),
/// waiting while another holder (in this process or another) has it; a wait interrupted by
/// a signal waits again. The lock is held until the returned value is dropped. Blocking:
/// call off the async threads.
pub(crate) fn lock_exclusive(lock_path: &Path) -> io::Result<nix::fcntl::Flock<File>> {
    use nix::fcntl::{Flock, FlockArg};
    if let Some(dir) = lock_path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::create_dir_all(dir)?;
    }
    let mut file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(lock_path)?;
    loop {
        match Flock::lock(file, FlockArg::LockExclusive) {
            Ok(lock) => return Ok(lock),
            Err((f, nix::errno::Errno::EINTR)) => file = f,
            Err((_, errno)) => return Err(io::Error::from(errno)),
        }
    }
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory is written,
/// flushed to disk and renamed over `path`, then the directory is synced. Readers (and a
/// crash or kill at any moment) see either the old file or the new one, never a mix.
///
/// An existing file keeps its permissions and its owner and group, and on Linux its extended
/// attributes, its POSIX ACL among them (each copied to the new file before the rename, the
/// ACL after the mode; none the directory's default ACL gave the new file is kept); a
/// symlink is followed and its target replaced, so the link stays a link. A new file gets the
/// default mode (0666 minus the umask). Missing parent directories are created, and removed
/// again (those this call made, if empty) when the write fails. Devices, FIFOs and sockets
/// are refused, and so is a file this user may not write (as an in-place write would be). On
/// a full disk (or quota) the error says that the new content needs its size free beside the
/// file, even when it is smaller than the file.
///
/// Where a rename would change what the file is, the file is instead rewritten in place
/// (space reserved, then written over and cut to length: not atomic, but a full disk fails
/// before the file changes): a file with other hard links (they would keep the
/// old content), a file whose owner this user cannot give the new one, a file with an
/// extended attribute this user cannot read or give the new one (a `security.*` one only
/// root may set, a file this user cannot read), a file in a directory this user cannot
/// create files in (`EACCES`, `EROFS`, `EPERM`), a file in an append-only or immutable
/// directory (`chattr +a`, `+i`: a temporary file could be neither renamed nor removed
/// there; a new file in an append-only one is created directly, not atomically), and a file
/// the rename cannot replace (a single file bind-mounted into a container: `EBUSY`).
///
/// Writers in other processes (and of another name of the same file) are kept apart by the
/// file system: the file a write replaces is locked (an exclusive `flock` on it, taken by
/// every writer through here, in any process) from the writer's last look at it through
/// the rename or the in-place rewrite, so that of two writers that began with the same
/// version, the second looks only once the first is done, finds the file replaced and
/// gives way ([`ChangedDuringWrite`]); the lock is waited for up to [`WRITE_LOCK_WAIT`],
/// then the write goes on checked as before (a program that keeps the file locked must not
/// hang it). A new file is put in place only where still no file is (`renameat2` with
/// `RENAME_NOREPLACE`, else a hard link): one another writer created meanwhile is kept, and
/// this write gives way.
pub(crate) fn atomic_write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    atomic_write_confined(path, bytes, None)
}

/// [`atomic_write`], landing only where `confine` allows ([`Confinement`]) when given.
///
/// The directory is opened once and everything after happens relative to that handle
/// (`openat` with `O_NOFOLLOW | O_EXCL` for the temporary file, `renameat` over the name):
/// the directory's real path is checked at open time, so a symlink swapped in afterwards
/// (for the directory or the file) cannot redirect the write.
pub(crate) fn atomic_write_confined(
    path: &Path,
    bytes: &[u8],
    confine: Option<&Confinement>,
) -> io::Result<()> {
    write_between(path, bytes, confine, None, || {})
}

/// Another writer changed the file while [`atomic_write`] wrote its replacement: the
/// replacement was dropped, the other writer's file kept.
#[derive(Debug)]
pub(crate) struct ChangedDuringWrite;

impl fmt::Display for ChangedDuringWrite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the file changed while its new content was being written")
    }
}

impl std::error::Error for ChangedDuringWrite {}

/// The version of the file (or its absence) that the last check before a write verified:
/// [`recheck_before_write`] returns it, and the write goes ahead only while the file is still
/// that one (see [`write_and_record`]). Nothing that happens between the two is taken for
/// the file the new content was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "the write must be checked against the version verified"]
pub(crate) struct Verified(Option<[i64; 7]>);

/// What identifies a version of a file: a change to it (or its replacement) changes this.
fn version(st: &nix::sys::stat::FileStat) -> [i64; 7] {
    [
        st.st_dev as i64,
        st.st_ino as i64,
        st.st_size,
        st.st_mtime,
        st.st_mtime_nsec,
        st.st_ctime,
        st.st_ctime_nsec,
    ]
}

/// [`atomic_write_confined`], with `before_rename` run right before the temporary file
/// replaces the target (tests change the file there). The target is looked at again just
/// before the rename, with its lock held ([`lock_and_recheck`]): if it changed since the
/// write began (its writing and `fsync` can take a while), the write is abandoned with
/// [`ChangedDuringWrite`]. With `expected`, the
/// target must also be, when the write begins, the version a check verified before (else
/// [`ChangedDuringWrite`] too, before anything is written).
fn write_between(
    path: &Path,
    bytes: &[u8],
    confine: Option<&Confinement>,
    expected: Option<Verified>,
    before_rename: impl FnOnce(),
) -> io::Result<()> {
    let target = write_target(path)?;
    let Some(name) = target.file_name().map(OsString::from) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path does not name a file",
        ));
    };
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Some(confine) = confine {
        // Before creating any directory: where the existing part of the path leads.
        check_confined(&resolve_existing(dir).join(&name), confine)?;
    }
    let made = create_dirs(dir)?;
    let result = write_in_dir(dir, &name, bytes, confine, expected, before_rename);
    if result.is_err() {
        // A failed write leaves no directory of its own behind (deepest first; one another
        // writer put something in meanwhile is not empty, and stays with those above it).
        for made in made.iter().rev() {
            if fs::remove_dir(made).is_err() {
                break;
            }
        }
    }
    result
}

/// The part of [`write_between`] after the missing directories were made: the write of
/// `name` in `dir`.
fn write_in_dir(
    dir: &Path,
    name: &OsString,
    bytes: &[u8],
    confine: Option<&Confinement>,
    expected: Option<Verified>,
    before_rename: impl FnOnce(),
) -> io::Result<()> {
    use nix::fcntl::{OFlag, open, openat, renameat};
    use nix::sys::stat::Mode;

    let dir_fd = File::from(open(
        dir,
        OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
        Mode::empty(),
    )?);
    if let Some(confine) = confine {
        check_confined(&real_dir(&dir_fd, dir)?.join(name), confine)?;
    }
    let existing = nix::sys::stat::fstatat(
        &dir_fd,
        name.as_os_str(),
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    )
    .ok();
    // What the caller checked last is still what is here: a file renamed over the target (or
    // created, or swapped for a link) since is another writer's, and is kept.
    if expected.is_some_and(|Verified(seen)| existing.as_ref().map(version) != seen) {
        return Err(io::Error::other(ChangedDuringWrite));
    }
    if let Some(st) = &existing {
        let kind = file_kind(st);
        if kind == SFlag::S_IFDIR {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a directory, not a file",
            ));
        }
        if kind != SFlag::S_IFREG && kind != SFlag::S_IFLNK {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "it is not a regular file (a device, FIFO or socket)",
            ));
        }
    }
    let existing_file = existing.filter(|st| file_kind(st) == SFlag::S_IFREG);
    if let Some(st) = &existing_file {
        use nix::unistd::{AccessFlags, faccessat};
        if faccessat(
            &dir_fd,
            name.as_os_str(),
            AccessFlags::W_OK,
            nix::fcntl::AtFlags::empty(),
        ) == Err(nix::errno::Errno::EACCES)
        {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "the file is read-only for this user (no write permission)",
            ));
        }
        // Confined, another name of the file may lie outside the working directories: the
        // rename keeps the write inside (and breaks the link) instead.
        if st.st_nlink > 1 && !confine.is_some_and(Confinement::to_dirs) {
            return write_in_place(&dir_fd, name, bytes, st);
        }
    }
    // A directory whose entries can be neither renamed nor removed: a temporary file could
    // never replace the file, nor be taken away again.
    if let Some(fixed) = fixed_entries(&dir_fd) {
        return match &existing_file {
            Some(st) => in_place_fallback(&dir_fd, name, bytes, st, confine),
            None => create_directly(&dir_fd, name, bytes, existing.is_some(), fixed),
        };
    }
    // The attributes the new file must carry (its ACL among them); where they cannot all be
    // read, the file is rewritten in place, which keeps them.
    let old_xattrs = match &existing_file {
        Some(st) => match read_xattrs(&dir_fd, name, st)? {
            Some(attrs) => attrs,
            None => return in_place_fallback(&dir_fd, name, bytes, st, confine),
        },
        None => Vec::new(),
    };
    remove_stale_temps(&dir_fd, dir);
    let prefix = tool_core::temp_file::temp_prefix(&temp_stem(name));
    let (tmp_name, mut file) = loop {
        let mut candidate = prefix.clone();
        candidate.push(TEMP_COUNTER.fetch_add(1, Ordering::Relaxed).to_string());
        match openat(
            &dir_fd,
            candidate.as_os_str(),
            OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::from_bits_truncate(0o666),
        ) {
            Ok(fd) => break (candidate, File::from(fd)),
            Err(nix::errno::Errno::EEXIST) => continue,
            Err(
                e @ (nix::errno::Errno::EACCES
                | nix::errno::Errno::EROFS
                | nix::errno::Errno::EPERM),
            ) => {
                return match &existing_file {
                    // No new file can be made here; the file itself may still be writable.
                    Some(st) => in_place_fallback(&dir_fd, name, bytes, st, confine),
                    None => Err(no_room_beside(e.into(), bytes.len(), dir, false)),
                };
            }
            Err(e) => {
                let replacing = existing_file.is_some();
                return Err(no_room_beside(e.into(), bytes.len(), dir, replacing));
            }
        }
    };
    let result = (|| {
        if let Some(st) = &existing_file {
            use std::os::unix::fs::PermissionsExt as _;
            let meta = file.metadata()?;
            use std::os::unix::fs::MetadataExt as _;
            if (meta.uid(), meta.gid()) != (st.st_uid, st.st_gid)
                && std::os::unix::fs::fchown(&file, Some(st.st_uid), Some(st.st_gid)).is_err()
            {
                // The new file would change the owner: keep the file itself instead.
                return Ok(false);
            }
            // After the chown, which may clear set-id bits; the ACL after the mode.
            let mode = || file.set_permissions(fs::Permissions::from_mode(st.st_mode & 0o7777));
            if !carry_xattrs(&old_xattrs, &file, mode)? {
                // An attribute the new file cannot be given: keep the file itself instead.
                return Ok(false);
            }
        }
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| no_room_beside(e, bytes.len(), dir, existing_file.is_some()))?;
        drop(file);
        before_rename();
        // The file's lock, held through the rename: a writer of it in another process checks
        // it again only once this one is done, and finds it replaced.
        // Opened for writing where it can be: an NFS or CIFS client emulates `flock` with a
        // byte-range lock, which an exclusive one needs a file open for writing for (a file
        // this user may not write, or a program running, `ETXTBSY`: for reading).
        let to_lock = existing_file.as_ref().and_then(|_| {
            open_to_lock(&dir_fd, name, OFlag::O_WRONLY)
                .or_else(|_| open_to_lock(&dir_fd, name, OFlag::O_RDONLY))
                .ok()
                .map(File::from)
        });
        let _held = lock_and_recheck(&dir_fd, name, to_lock.as_ref(), existing.as_ref())?;
        if existing.is_none() {
            // No file was here: never put this one over a file another writer made since.
            place_new(&dir_fd, &tmp_name, name)?;
        } else {
            match renameat(&dir_fd, tmp_name.as_os_str(), &dir_fd, name.as_os_str()) {
                Ok(()) => {}
                // A bind-mounted single file cannot be replaced, only rewritten.
                Err(nix::errno::Errno::EBUSY) if existing_file.is_some() => return Ok(false),
                Err(e) => return Err(io::Error::from(e)),
            }
        }
        // Make the rename itself durable. Not every platform can sync a directory.
        let _ = dir_fd.sync_all();
        Ok(true)
    })();
    if !matches!(result, Ok(true)) {
        let _ = nix::unistd::unlinkat(
            &dir_fd,
            tmp_name.as_os_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        );
    }
    match (result, &existing_file) {
        (Ok(true), _) => Ok(()),
        (Ok(false), Some(st)) => in_place_fallback(&dir_fd, name, bytes, st, confine),
        // Only a file that is there can be rewritten in place (never asked for).
        (Ok(false), None) => Err(io::Error::new(
            io::ErrorKind::NotFound,
            "there is no file to rewrite in place",
        )),
        (Err(e), _) => Err(e),
    }
}

/// How long a writer waits for the lock of the file it replaces ([`lock_and_recheck`])
/// before it goes on without it. Writers hold it only from their last check of the file
/// through the rename (or an in-place rewrite), so a longer hold is a program of the user's
/// that locks the file for its own reasons, and must not hang the write.
pub(crate) const WRITE_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Opens the existing file `name` in `dir_fd` (`access`: `O_RDONLY` or `O_WRONLY`) to lock
/// it: never through a link (`O_NOFOLLOW`), and non-blocking, so that a FIFO put in its place
/// meanwhile neither hangs the open nor is taken for the file ([`lock_and_recheck`] refuses
/// it).
fn open_to_lock(
    dir_fd: &File,
    name: &OsString,
    access: nix::fcntl::OFlag,
) -> nix::Result<std::os::fd::OwnedFd> {
    use nix::fcntl::OFlag;
    nix::fcntl::openat(
        dir_fd,
        name.as_os_str(),
        access | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
}

/// The lock of the file a write replaces, while held: released when dropped (and, at the
/// latest, when its handle is closed).
struct WriteLock<'a>(Option<&'a File>);

impl Drop for WriteLock<'_> {
    fn drop(&mut self) {
        if let Some(file) = self.0 {
            let _ = rustix::fs::flock(file, rustix::fs::FlockOperation::Unlock);
        }
    }
}

/// The last check before a write replaces (or rewrites) `name` in `dir_fd`: the name must
/// still be the version the write began with (`existing`; `None`: no file), else
/// [`ChangedDuringWrite`]. Before it, `file` (the existing file, opened by
/// [`open_to_lock`]; `None` where it could not be opened, such as a file this user may not
/// read, or where there is no file) must be that very file (else [`ChangedDuringWrite`]),
/// and is locked: an exclusive `flock` on it, which every writer through [`atomic_write`]
/// takes, in any process, and holds through the rename or the rewrite (hold the returned
/// lock until then). A writer that checked the same version waits here for the one before
/// it, then finds the file replaced (or rewritten) and keeps it. The wait is bounded by
/// [`WRITE_LOCK_WAIT`]: a holder that keeps the lock longer (another program of the user's
/// that locks the file; not a writer of ours), or a file system without `flock`, leaves the
/// write to this check alone, as other programs' writes are.
fn lock_and_recheck<'a>(
    dir_fd: &File,
    name: &OsString,
    file: Option<&'a File>,
    existing: Option<&nix::sys::stat::FileStat>,
) -> io::Result<WriteLock<'a>> {
    let mut held = WriteLock(None);
    if let (Some(file), Some(st)) = (file, existing) {
        let now = nix::sys::stat::fstat(file)?;
        if file_kind(&now) != SFlag::S_IFREG || (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) {
            return Err(io::Error::other(ChangedDuringWrite));
        }
        if wait_for_lock(file, name) {
            held = WriteLock(Some(file));
        }
    }
    let now = nix::sys::stat::fstatat(
        dir_fd,
        name.as_os_str(),
        nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
    )
    .ok();
    if now.as_ref().map(version) != existing.map(version) {
        return Err(io::Error::other(ChangedDuringWrite));
    }
    Ok(held)
}

/// Takes an exclusive `flock` on `file`, trying again (a few milliseconds apart) while
/// another holds it, for up to [`WRITE_LOCK_WAIT`]. `false`: not taken (still held by
/// another after the wait, or a file system that has no such locks).
fn wait_for_lock(file: &File, name: &OsString) -> bool {
    use rustix::fs::{FlockOperation, flock};
    use rustix::io::Errno;
    let start = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        match flock(file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return true,
            Err(Errno::INTR) => continue,
            Err(Errno::WOULDBLOCK) if start.elapsed() < WRITE_LOCK_WAIT => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(20));
            }
            Err(Errno::WOULDBLOCK) => {
                tracing::warn!(
                    file = %Path::new(name).display(),
                    "another process has held a lock on the file for {}s: writing without it",
                    WRITE_LOCK_WAIT.as_secs()
                );
                return false;
            }
            // No `flock` here (some network and FUSE file systems).
            Err(e) => {
                tracing::debug!(
                    file = %Path::new(name).display(),
                    "no lock on the file ({e}): the write is guarded by its version check alone"
                );
                return false;
            }
        }
    }
}

/// Puts the temporary file `tmp` of `dir_fd` at `name`, where the write found no file, and
/// never over a file another writer made there since ([`ChangedDuringWrite`]: theirs is
/// kept): `renameat2` with `RENAME_NOREPLACE` (Linux), else, on a file system without it, a
/// hard link (`link` never replaces a name) and the temporary name removed, else, on one
/// without hard links either, a plain rename, which the check just before it guards.
fn place_new(dir_fd: &File, tmp: &OsString, name: &OsString) -> io::Result<()> {
    use nix::errno::Errno;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{RenameFlags, renameat_with};
        match renameat_with(
            dir_fd,
            tmp.as_os_str(),
            dir_fd,
            name.as_os_str(),
            RenameFlags::NOREPLACE,
        ) {
            Ok(()) => return Ok(()),
            Err(rustix::io::Errno::EXIST) => return Err(io::Error::other(ChangedDuringWrite)),
            // Not on this file system (or kernel).
            Err(
                rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS | rustix::io::Errno::OPNOTSUPP,
            ) => {}
            Err(e) => return Err(e.into()),
        }
    }
    match nix::unistd::linkat(
        dir_fd,
        tmp.as_os_str(),
        dir_fd,
        name.as_os_str(),
        nix::fcntl::AtFlags::empty(),
    ) {
        Ok(()) => {
            // Should this fail, the extra name is a temporary file's, removed as one.
            let _ = nix::unistd::unlinkat(
                dir_fd,
                tmp.as_os_str(),
                nix::unistd::UnlinkatFlags::NoRemoveDir,
            );
            return Ok(());
        }
        Err(Errno::EEXIST) => return Err(io::Error::other(ChangedDuringWrite)),
        // No hard links on this file system.
        Err(Errno::EPERM | Errno::EOPNOTSUPP | Errno::ENOSYS | Errno::EMLINK) => {}
        Err(e) => return Err(e.into()),
    }
    nix::fcntl::renameat(dir_fd, tmp.as_os_str(), dir_fd, name.as_os_str()).map_err(Into::into)
}

/// `e`, a failure to make or write the temporary file, with why a full disk (or quota)
/// refuses even a write that makes the file smaller: the new content is written beside the
/// file, in `dir`, before it replaces the file (`replacing`: there is a file to replace).
/// Other failures are returned as they are.
fn no_room_beside(e: io::Error, len: usize, dir: &Path, replacing: bool) -> io::Error {
    if !matches!(
        e.raw_os_error(),
        Some(nix::libc::ENOSPC | nix::libc::EDQUOT)
    ) {
        return e;
    }
    let why = if replacing {
        format!(
            "the new content ({len} bytes) is written to a temporary file beside the file \
             first and then renamed over it, so {len} bytes must be free in {} even when the \
             file gets smaller. The file was left as it was",
            dir.display()
        )
    } else {
        format!(
            "the new file ({len} bytes) did not fit in {}, and nothing of it was left behind",
            dir.display()
        )
    };
    io::Error::new(
        e.kind(),
        format!("{e}: {why}. Free some space there and try again"),
    )
}

/// Why the entries of a directory can be neither renamed nor removed ([`fixed_entries`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FixedEntries {
    /// `chattr +a`: files can be created, not renamed or removed.
    AppendOnly,
    /// `chattr +i`: nothing can be created, renamed or removed.
    Immutable,
}

/// Whether the directory open as `dir_fd` is append-only or immutable (its inode flags,
/// `FS_IOC_GETFLAGS`); `None` for any other directory, and where the flags cannot be read.
fn fixed_entries(dir_fd: &File) -> Option<FixedEntries> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::IFlags;
        let flags = rustix::fs::ioctl_getflags(dir_fd).ok()?;
        if flags.contains(IFlags::IMMUTABLE) {
            return Some(FixedEntries::Immutable);
        }
        if flags.contains(IFlags::APPEND) {
            return Some(FixedEntries::AppendOnly);
        }
        None
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = dir_fd;
        None
    }
}

/// Creates the new file `name` in `dir_fd` directly, with `bytes` written and synced: for a
/// directory whose entries cannot be renamed ([`fixed_entries`]), where a temporary file
/// could never take the name. Not atomic: a reader (or a crash) may see it half written.
/// `taken`: something not a regular file (a dangling link) has the name.
fn create_directly(
    dir_fd: &File,
    name: &OsString,
    bytes: &[u8],
    taken: bool,
    fixed: FixedEntries,
) -> io::Result<()> {
    use nix::errno::Errno;
    use nix::fcntl::{OFlag, openat};
    use nix::sys::stat::Mode;
    let what = match fixed {
        FixedEntries::AppendOnly => "append-only (chattr +a)",
        FixedEntries::Immutable => "immutable (chattr +i)",
    };
    let opened = openat(
        dir_fd,
        name.as_os_str(),
        OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o666),
    );
    let mut file = match opened {
        Ok(fd) => File::from(fd),
        // Created by another writer since the file was looked for: theirs is kept.
        Err(Errno::EEXIST) if !taken => return Err(io::Error::other(ChangedDuringWrite)),
        Err(e) => {
            let e = io::Error::from(e);
            return Err(io::Error::new(
                e.kind(),
                format!("{e}: the directory is {what}, so no file can be created in it"),
            ));
        }
    };
    let written = reserve(&file, bytes.len())
        .and_then(|()| file.write_all(bytes))
        .and_then(|()| file.sync_all());
    if let Err(e) = written {
        // An append-only directory keeps the name: then the file is left empty, and the
        // error says so (a retry finds it there).
        if nix::unistd::unlinkat(
            dir_fd,
            name.as_os_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        )
        .is_err()
        {
            let _ = file.set_len(0);
            return Err(io::Error::new(
                e.kind(),
                format!(
                    "{e}; an empty {} was left in its place (the directory is {what}: no name in it can be removed)",
                    Path::new(name).display()
                ),
            ));
        }
        return Err(e);
    }
    let _ = dir_fd.sync_all();
    Ok(())
}

/// An extended attribute: its name (without the closing NUL) and value.
type Xattr = (Vec<u8>, Vec<u8>);

/// The extended attributes of the existing file `name` in `dir_fd` (whose status is `st`),
/// its POSIX ACL (`system.posix_acl_access`) among them: `Some(empty)` on a file system
/// without them (and off Linux, where none are copied), `None` when they cannot all be read
/// (the file is not readable to this user, say). A file that is no longer the one `st`
/// describes is [`ChangedDuringWrite`].
fn read_xattrs(
    dir_fd: &File,
    name: &OsString,
    st: &nix::sys::stat::FileStat,
) -> io::Result<Option<Vec<Xattr>>> {
    #[cfg(target_os = "linux")]
    {
        use nix::fcntl::{OFlag, openat};
        use nix::sys::stat::Mode;
        use rustix::io::Errno;
        let Ok(fd) = openat(
            dir_fd,
            name.as_os_str(),
            OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC,
            Mode::empty(),
        ) else {
            return Ok(None);
        };
        let old = File::from(fd);
        let now = nix::sys::stat::fstat(&old)?;
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino) {
            return Err(io::Error::other(ChangedDuringWrite));
        }
        let names = match xattr_names(&old) {
            Ok(names) => names,
            Err(Errno::NOTSUP) => return Ok(Some(Vec::new())),
            Err(_) => return Ok(None),
        };
        let mut attrs = Vec::with_capacity(names.len());
        for attr in names {
            match xattr_value(&old, &attr) {
                Ok(Some(value)) => attrs.push((attr, value)),
                // Removed since the list was read.
                Ok(None) => {}
                Err(_) => return Ok(None),
            }
        }
        Ok(Some(attrs))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (dir_fd, name, st);
        Ok(Some(Vec::new()))
    }
}

/// The names of `file`'s extended attributes (those this user may see).
#[cfg(target_os = "linux")]
fn xattr_names(file: &File) -> rustix::io::Result<Vec<Vec<u8>>> {
    loop {
        let size = rustix::fs::flistxattr_query(file)?;
        let mut list = vec![0u8; size];
        match rustix::fs::flistxattr(file, &mut list[..]) {
            Ok(len) => {
                list.truncate(len);
                return Ok(list
                    .split(|&b| b == 0)
                    .filter(|n| !n.is_empty())
                    .map(<[u8]>::to_vec)
                    .collect());
            }
            // Grown since the size was asked.
            Err(rustix::io::Errno::RANGE) => {}
            Err(e) => return Err(e),
        }
    }
}

/// The value of `file`'s extended attribute `attr`; `None` when it has none.
#[cfg(target_os = "linux")]
fn xattr_value(file: &File, attr: &[u8]) -> rustix::io::Result<Option<Vec<u8>>> {
    use rustix::io::Errno;
    let attr = std::ffi::CString::new(attr).map_err(|_| Errno::INVAL)?;
    loop {
        let size = match rustix::fs::fgetxattr_query(file, attr.as_c_str()) {
            Ok(size) => size,
            Err(Errno::NODATA) => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut value = vec![0u8; size];
        match rustix::fs::fgetxattr(file, attr.as_c_str(), &mut value[..]) {
            Ok(len) => {
                value.truncate(len);
                return Ok(Some(value));
            }
            Err(Errno::NODATA) => return Ok(None),
            Err(Errno::RANGE) => {}
            Err(e) => return Err(e),
        }
    }
}

/// The name of the POSIX access ACL's extended attribute.
#[cfg(target_os = "linux")]
const ACL_ACCESS: &[u8] = b"system.posix_acl_access";

/// Gives the new file `new` exactly the extended attributes `old` (the file it replaces):
/// those it got on its own (a directory's default ACL inherited) and the old file lacks
/// are removed, the others set (one already holding the value is left alone), `set_mode`
/// run between them and the ACL, which must come after the mode (a mode change rewrites the
/// ACL's mask). `false` when one cannot be given or taken away (a `security.*` or
/// `trusted.*` attribute this user may not set, a file system without them): the caller
/// then rewrites the old file in place instead, which keeps them all.
fn carry_xattrs(
    old: &[Xattr],
    new: &File,
    set_mode: impl FnOnce() -> io::Result<()>,
) -> io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::XattrFlags;
        use rustix::io::Errno;
        let set = |attr: &[u8], value: &[u8]| -> bool {
            if xattr_value(new, attr).ok().flatten().as_deref() == Some(value) {
                return true;
            }
            let Ok(attr) = std::ffi::CString::new(attr) else {
                return false;
            };
            rustix::fs::fsetxattr(new, attr.as_c_str(), value, XattrFlags::empty()).is_ok()
        };
        let own = match xattr_names(new) {
            Ok(names) => names,
            Err(Errno::NOTSUP) if old.is_empty() => Vec::new(),
            Err(_) => return Ok(false),
        };
        for attr in own.iter().filter(|a| !old.iter().any(|(o, _)| o == *a)) {
            let Ok(attr) = std::ffi::CString::new(attr.as_slice()) else {
                return Ok(false);
            };
            match rustix::fs::fremovexattr(new, attr.as_c_str()) {
                Ok(()) | Err(Errno::NODATA) => {}
                Err(_) => return Ok(false),
            }
        }
        for (attr, value) in old.iter().filter(|(a, _)| a != ACL_ACCESS) {
            if !set(attr, value) {
                return Ok(false);
            }
        }
        set_mode()?;
        for (attr, value) in old.iter().filter(|(a, _)| a == ACL_ACCESS) {
            if !set(attr, value) {
                return Ok(false);
            }
        }
        Ok(true)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (old, new);
        set_mode().map(|()| true)
    }
}

/// The in-place rewrite where a rename cannot work, except for a hard-linked file of a
/// confined write: its other names may lie outside the working directories.
fn in_place_fallback(
    dir_fd: &File,
    name: &OsString,
    bytes: &[u8],
    existing: &nix::sys::stat::FileStat,
    confine: Option<&Confinement>,
) -> io::Result<()> {
    if confine.is_some_and(Confinement::to_dirs) && existing.st_nlink > 1 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            "refusing to rewrite a hard-linked file in place: another name of it may lie outside the working directories",
        ));
    }
    write_in_place(dir_fd, name, bytes, existing)
}

/// Rewrites the existing file `name` in `dir_fd` (the version `existing` describes) in
/// place: for the files [`atomic_write`] must not replace by a rename. Not atomic, but a full
/// disk or a file size limit refuses the write before any byte of the file changes: the
/// space is reserved first, then the bytes are written over the old ones, then the file is
/// cut to their length (it is never truncated first). The file's lock is held throughout
/// ([`lock_and_recheck`]), and a file that is no longer that version is
/// [`ChangedDuringWrite`], left as it is.
fn write_in_place(
    dir_fd: &File,
    name: &OsString,
    bytes: &[u8],
    existing: &nix::sys::stat::FileStat,
) -> io::Result<()> {
    use nix::fcntl::OFlag;
    let file = match open_to_lock(dir_fd, name, OFlag::O_WRONLY) {
        Ok(fd) => File::from(fd),
        Err(e) => {
            // A name taken since by something that cannot be opened so (a FIFO without a
            // reader, a link) is another writer's change; anything else is this write's
            // failure.
            lock_and_recheck(dir_fd, name, None, Some(existing))?;
            return Err(e.into());
        }
    };
    let _held = lock_and_recheck(dir_fd, name, Some(&file), Some(existing))?;
    reserve(&file, bytes.len())?;
    // Through a shared reference: the lock borrows the handle.
    (&file).write_all(bytes)?;
    file.set_len(bytes.len() as u64)?;
    file.sync_all()
}

/// Reserves `len` bytes for `file` where the file system can (Linux `fallocate`); one that
/// cannot is written without. Not glibc's `posix_fallocate`: on a file system without
/// `fallocate` it emulates by reading and writing each block, which fails on this
/// write-only descriptor.
fn reserve(file: &File, len: usize) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use nix::errno::Errno;
        use nix::fcntl::{FallocateFlags, fallocate};
        let Ok(len) = nix::libc::off_t::try_from(len) else {
            return Err(io::Error::from(Errno::EFBIG));
        };
        if len == 0 {
            return Ok(());
        }
        match fallocate(file, FallocateFlags::empty(), 0, len) {
            Ok(()) | Err(Errno::EOPNOTSUPP | Errno::ENOSYS | Errno::EINVAL) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, len);
        Ok(())
    }
}

/// The file-type bits of a `stat` mode.
fn file_kind(st: &nix::sys::stat::FileStat) -> SFlag {
    SFlag::from_bits_truncate(st.st_mode & SFlag::S_IFMT.bits())
}

/// The real path of an open directory: what the kernel resolved when it was opened.
fn real_dir(dir_fd: &File, dir: &Path) -> io::Result<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd as _;
        if let Ok(p) = fs::read_link(format!("/proc/self/fd/{}", dir_fd.as_raw_fd())) {
            return Ok(p);
        }
    }
    let _ = dir_fd;
    fs::canonicalize(dir)
}

/// `dir` with its longest existing ancestor canonicalised and the rest appended.
fn resolve_existing(dir: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut cur = dir;
    loop {
        if let Ok(real) = fs::canonicalize(cur) {
            let mut out = real;
            out.extend(rest.iter().rev());
            return out;
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                cur = parent;
            }
            _ => return dir.to_path_buf(),
        }
    }
}

/// Creates `dir` and the missing directories above it. A directory on the way that is a
/// symlink to nothing (which `mkdir` cannot create through: "File exists") is named as such,
/// with, for a chain of links, the links it leads through and the first directory on the
/// way that does not exist ([`dangling_chain`]). Returns the directories this call made,
/// the topmost first (a failure removes those it made before it).
fn create_dirs(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut made = Vec::new();
    let result = make_dirs(dir, &mut made);
    if result.is_err() {
        for made in made.iter().rev() {
            if fs::remove_dir(made).is_err() {
                break;
            }
        }
    }
    result.map(|()| made).map_err(|e| {
        let dangling = dir.ancestors().find(|at| {
            fs::symlink_metadata(at).is_ok_and(|m| m.file_type().is_symlink())
                && fs::metadata(at).is_err()
        });
        let Some(link) = dangling else {
            return e;
        };
        let message = match (dangling_chain(link), fs::read_link(link)) {
            (Dangling::Missing { through, missing }, Ok(target))
                if through.is_empty()
                    && link.parent().is_some_and(|p| {
                        tool_core::normalize_lexically(&p.join(&target)) == missing
                    }) =>
            {
                format!(
                    "{} is a symbolic link to a missing directory ({}), so nothing can be \
                     created in it. Create the directory it leads to first, or write to a path \
                     without the link",
                    link.display(),
                    target.display()
                )
            }
            (Dangling::Missing { through, missing }, _) => format!(
                "{} is a symbolic link to a missing directory: it leads{} to {}, which does not \
                 exist, so nothing can be created in it. Create the directory it leads to first, \
                 or write to a path without the link",
                link.display(),
                via(&through),
                missing.display()
            ),
            (Dangling::NotDirectory { through, file }, _) => format!(
                "{} is a symbolic link that leads{} to {}, which is not a directory, so nothing \
                 can be created in it. Write to a path without the link",
                link.display(),
                via(&through),
                file.display()
            ),
            (Dangling::Loop, _) => format!(
                "{} is a symbolic link that never resolves (its links lead in a loop, or through \
                 more than {MAX_LINKS} links), so nothing can be created in it. Write to a path \
                 without the link",
                link.display()
            ),
            (Dangling::Other, Ok(target)) => format!(
                "{} is a symbolic link to a directory that cannot be reached ({}), so nothing \
                 can be created in it. Write to a path without the link",
                link.display(),
                target.display()
            ),
            (Dangling::Other, Err(_)) => return e,
        };
        io::Error::new(io::ErrorKind::NotFound, message)
    })
}

/// `fs::create_dir_all` that notes each directory it made in `made` (an existing one, or
/// one another writer makes meanwhile, is not noted).
fn make_dirs(dir: &Path, made: &mut Vec<PathBuf>) -> io::Result<()> {
    if dir.as_os_str().is_empty() {
        return Ok(());
    }
    match fs::create_dir(dir) {
        Ok(()) => {
            made.push(dir.to_path_buf());
            return Ok(());
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(_) if dir.is_dir() => return Ok(()),
        Err(e) => return Err(e),
    }
    match dir.parent() {
        Some(parent) => make_dirs(parent, made)?,
        None => return Err(io::Error::other("failed to create the whole tree")),
    }
    match fs::create_dir(dir) {
        Ok(()) => {
            made.push(dir.to_path_buf());
            Ok(())
        }
        Err(_) if dir.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

/// " through b" (and more links), as a refusal of [`create_dirs`] names the links a chain
/// leads through; empty for none.
fn via(through: &[PathBuf]) -> String {
    match through {
        [] => String::new(),
        [a] => format!(" through {}", a.display()),
        [a, b] => format!(" through {} and {}", a.display(), b.display()),
        [a, b, rest @ ..] => format!(
            " through {}, {} and {} more links",
            a.display(),
            b.display(),
            rest.len()
        ),
    }
}

/// Links followed at most in [`dangling_chain`] (Linux's own limit for a path).
const MAX_LINKS: usize = 40;

/// Where a dangling symlink leads ([`dangling_chain`]).
#[derive(Debug, PartialEq, Eq)]
enum Dangling {
    /// To `missing`, the first path on the way that does not exist, through the links
    /// `through` (after the link itself).
    Missing {
        through: Vec<PathBuf>,
        missing: PathBuf,
    },
    /// To `file`, which is on the way but no directory, through the links `through`.
    NotDirectory {
        through: Vec<PathBuf>,
        file: PathBuf,
    },
    /// Through more than [`MAX_LINKS`] links: a loop.
    Loop,
    /// Nowhere that can be named (a path on the way that cannot be looked at).
    Other,
}

/// Follows the symlink `link`, component by component and link by link, to the first path
/// that does not exist.
fn dangling_chain(link: &Path) -> Dangling {
    use std::collections::VecDeque;
    use std::path::Component;
    let Ok(target) = fs::read_link(link) else {
        return Dangling::Other;
    };
    let mut at = link.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut rest: VecDeque<PathBuf> = VecDeque::new();
    let push_front = |rest: &mut VecDeque<PathBuf>, target: &Path| {
        for c in target.components().rev() {
            rest.push_front(PathBuf::from(c.as_os_str()));
        }
    };
    push_front(&mut rest, &target);
    let (mut through, mut followed) = (Vec::new(), 1);
    while let Some(part) = rest.pop_front() {
        match part.components().next() {
            Some(Component::RootDir | Component::Prefix(_)) => at = part,
            Some(Component::ParentDir) => {
                // `..` of where the kernel is: the directory's real path (what leads to it
                // may be a link), which exists (only existing directories are entered).
                at = fs::canonicalize(&at).unwrap_or(at);
                at.pop();
            }
            Some(Component::Normal(name)) => {
                let next = at.join(name);
                match fs::symlink_metadata(&next) {
                    Ok(m) if m.file_type().is_symlink() => {
                        followed += 1;
                        if followed > MAX_LINKS {
                            return Dangling::Loop;
                        }
                        let Ok(target) = fs::read_link(&next) else {
                            return Dangling::Other;
                        };
                        through.push(next);
                        push_front(&mut rest, &target);
                    }
                    Ok(m) if m.is_dir() => at = next,
                    Ok(_) => {
                        return Dangling::NotDirectory {
                            through,
                            file: next,
                        };
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {
                        return Dangling::Missing {
                            through,
                            missing: next,
                        };
                    }
                    Err(_) => return Dangling::Other,
                }
            }
            Some(Component::CurDir) | None => {}
        }
    }
    Dangling::Other
}

/// Refuses a write whose real path `real` (where it will land, symlinks resolved) is not
/// one `confine` allows: outside the working directories (for a path inside them), or, at a
/// link swapped in after the permission check or one leading where the check never looked,
/// a protected path in another protected place than the path the call named (another
/// protected directory, even one of the same name, another sensitive file) or one a deny
/// rule forbids ([`Confinement`]).
fn check_confined(real: &Path, confine: &Confinement) -> io::Result<()> {
    let refuse = |what: String| {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "refusing to write: the path resolves to {}, {what} (a symlink on the way leads \
                 there, or was swapped in after the permission check). Write to the real path \
                 instead, so that its permission is checked",
                real.display()
            ),
        ))
    };
    if !confine.allows(real) {
        return refuse("outside the working directories".to_owned());
    }
    let engine = confine.engine.as_deref();
    if let Some(protected) = protection(real, engine)
        && !confine
            .named
            .iter()
            .any(|named| same_place(&named.place, &protected.place))
    {
        // What the permission step asked about is the protected place of the named path; a
        // real path in another protected place was never asked about.
        let named_what = match confine.named.first() {
            Some(other) => format!(
                "while the path the call named {} at {}",
                other.what,
                other.place.display()
            ),
            None => "while the path the call named is not protected".to_owned(),
        };
        return refuse(format!(
            "which {} at {}, {named_what}",
            protected.what,
            protected.place.display()
        ));
    }
    if let Some(rule) = engine.and_then(|e| e.denied_by(real, tool_core::FileAccess::Write)) {
        return refuse(format!("which the deny rule {} forbids editing", rule.rule));
    }
    Ok(())
}

/// What makes writing a path a safety check of the permission engine ([`protection`]).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Protection {
    /// The protected place itself: the path up to and including the protected directory
    /// (`/p/.git` for `/p/.git/hooks/x`), or the sensitive or settings file's own path. Two
    /// paths are protected by the same thing only when their places are the same path: the
    /// engine's words alone would take any `.vscode` for any other.
    place: PathBuf,
    /// The engine's words after "which ", for the refusal: `is in a protected directory
    /// (.git)`, `is a sensitive file (.bashrc)`, `is a settings file of this session…`.
    what: String,
}

/// What makes writing `path` a safety check of the permission engine (it asks even in
/// bypass mode), if it is: a protected directory on it or a sensitive file
/// ([`tool_perms::path::protected_kind`]), and with the session's engine, a settings file
/// of this session or an entry of the user's configuration directory; with the place
/// protected and the engine's words ([`Protection`]). `path` is taken as it is (resolved
/// or not, as the caller needs).
fn protection(path: &Path, engine: Option<&tool_perms::PermissionEngine>) -> Option<Protection> {
    // A settings file is its own place, before the protected directory it may be in: an
    // approved write of `.claude/commands/x.md` must not land in `.claude/settings.json`
    // (hooks) through a link. The session's settings files, and the project's by name (one
    // that does not exist yet is read by the next session).
    let is_project_settings = path
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|d| d.to_string_lossy().eq_ignore_ascii_case(".claude"))
        && path.file_name().is_some_and(|f| {
            let f = f.to_string_lossy().to_lowercase();
            f == "settings.json" || f == "settings.local.json"
        });
    let settings = engine.and_then(|e| e.roots().settings_file_reason(path, path));
    if is_project_settings || settings.is_some() {
        return Some(Protection {
            place: path.to_path_buf(),
            what: "is a settings file".to_owned(),
        });
    }
    if let Some(kind) = tool_perms::path::protected_kind(path) {
        if kind.starts_with("is a sensitive file") {
            let name = path.file_name()?.to_string_lossy().to_lowercase();
            return Some(Protection {
                place: path.to_path_buf(),
                what: format!("{kind} ({name})"),
            });
        }
        return Some(Protection {
            place: protected_dir(path, &kind).unwrap_or_else(|| path.to_path_buf()),
            what: kind,
        });
    }
    let roots = engine?.roots();
    let why = roots
        .settings_file_reason(path, path)
        .or_else(|| roots.config_dir_reason(path, path))?;
    // The engine's words without its opening ("Claude requested permissions to write to
    // PATH, which ") and the closing full stop.
    let opening = format!(
        "Claude requested permissions to write to {}, which ",
        path.display()
    );
    let what = why.strip_prefix(&opening).unwrap_or(&why);
    Some(Protection {
        place: path.to_path_buf(),
        what: what.trim_end_matches('.').to_owned(),
    })
}

/// The protected directory on `path` that `kind` (`is in a protected directory (.git)`,
/// [`tool_perms::path::protected_kind`]'s words for it) names: `path` up to and including
/// the first component of that name (case aside), passing over a `.claude` that is only
/// the way to `.claude/worktrees/…`, as that function does. `None` when `kind` names none.
fn protected_dir(path: &Path, kind: &str) -> Option<PathBuf> {
    let dir = kind
        .strip_prefix("is in a protected directory (")?
        .strip_suffix(')')?;
    use std::path::Component;
    let comps: Vec<Component<'_>> = path.components().collect();
    let normal: Vec<(usize, String)> = comps
        .iter()
        .enumerate()
        .filter_map(|(at, c)| match c {
            Component::Normal(s) => Some((at, s.to_string_lossy().to_lowercase())),
            _ => None,
        })
        .collect();
    let at = normal.iter().enumerate().find_map(|(i, (at, name))| {
        let worktrees = name == ".claude"
            && normal.get(i + 1).is_some_and(|(_, n)| n == "worktrees")
            && i + 2 < normal.len();
        (name == dir && !worktrees).then_some(*at)
    })?;
    Some(comps[..=at].iter().collect())
}

/// Whether two protected places are the same path (case aside where the file system
/// ignores it, as the permission engine compares them there).
fn same_place(a: &Path, b: &Path) -> bool {
    if cfg!(any(target_os = "macos", windows)) {
        a.to_string_lossy().to_lowercase() == b.to_string_lossy().to_lowercase()
    } else {
        a == b
    }
}

/// Removes the temporary files of writers that are gone (killed mid-write) from the
/// directory of a write ([`tool_core::temp_file::is_abandoned_temp`]). Best effort: anything
/// unexpected is left alone.
fn remove_stale_temps(dir_fd: &File, dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let entry_name = entry.file_name();
        let Some(name) = entry_name.to_str() else {
            continue;
        };
        let age = || entry.metadata().ok()?.modified().ok()?.elapsed().ok();
        if !tool_core::temp_file::is_abandoned_temp(name, age) {
            continue;
        }
        let _ = nix::unistd::unlinkat(
            dir_fd,
            entry_name.as_os_str(),
            nix::unistd::UnlinkatFlags::NoRemoveDir,
        );
    }
}

/// The file's name as the temporary file's name starts with it: cut (at a character) so
/// that `.NAME.tw-tmp.PID.TAG.N` stays within the 255-byte limit of a file name.
fn temp_stem(name: &std::ffi::OsStr) -> OsString {
    use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
    const MAX: usize = 255 - tool_core::temp_file::TEMP_NAME_OVERHEAD;
    let bytes = name.as_bytes();
    if bytes.len() <= MAX {
        return name.to_owned();
    }
    match name.to_str() {
        Some(text) => {
            let end = (0..=MAX)
                .rev()
                .find(|i| text.is_char_boundary(*i))
                .unwrap_or(0);
            OsString::from(&text[..end])
        }
        None => OsString::from_vec(bytes[..MAX].to_vec()),
    }
}

/// Where a write of Write, Edit or NotebookEdit may land, checked against its real path
/// (symlinks resolved) when the directory is opened, so that a link swapped in after the
/// permission check (or one leading where the check never looked) cannot take it elsewhere:
///
/// - for a path inside the working directories, under one of `dirs` (the working
///   directories), or exactly at `file` (the one file outside them a link on the way leads
///   to, when the permission engine allowed writing it: [`write_confinement`]);
/// - wherever the path is, not at a protected path (`.git`, `.claude`, shell rc files, the
///   session's settings files: what the permission engine asks about even in bypass mode),
///   unless it is in the protected place of the path the call named (the same protected
///   directory, `/p/.vscode`, not another of that name; the same sensitive or settings
///   file: what the permission step then asked about), so that approving
///   `.vscode/settings.json` never writes `.git/config`, nor another directory's `.vscode`,
///   through a link; and not at a path a deny rule of the session forbids editing.
///
/// Only the named path and where it leads are judged: a hard-linked file outside the
/// working directories is rewritten in place (its names keep sharing the content), and its
/// other names, protected or not, are not looked at.
#[derive(Debug, Clone)]
pub(crate) struct Confinement {
    /// The working directories, resolved, for a path inside them; `None` for a path
    /// outside them (the permission check named it, and it is written where it leads).
    dirs: Option<Vec<PathBuf>>,
    file: Option<PathBuf>,
    /// The protected places of the path as the call named it ([`protection`]; what the
    /// permission step asked about): lexically, or with the working directory's own links
    /// resolved (a session working in a folder that is a link to `~/.claude`), each also
    /// with the links above the place resolved, as the real path is. A protected real path
    /// is allowed only when its place is one of these. Empty: every protected real path is
    /// refused.
    named: Vec<Protection>,
    /// The session's permission engine (or one of the context's deny rules), for its deny
    /// rules and settings files; `None` when there is neither.
    engine: Option<std::sync::Arc<tool_perms::PermissionEngine>>,
}

impl Confinement {
    /// Under `dirs` only, with no other check.
    #[cfg(test)]
    pub(crate) fn dirs(dirs: Vec<PathBuf>) -> Self {
        Self {
            dirs: Some(dirs),
            file: None,
            named: Vec::new(),
            engine: None,
        }
    }

    /// Whether the write is kept under the working directories (and a hard-linked file is
    /// therefore replaced by a rename, not rewritten in place where its other names are).
    fn to_dirs(&self) -> bool {
        self.dirs.is_some()
    }

    /// Whether the working directories (or the one file) allow the write to land at `real`
    /// (a resolved path).
    fn allows(&self, real: &Path) -> bool {
        let Some(dirs) = &self.dirs else {
            return true;
        };
        dirs.iter().any(|dir| real.starts_with(dir)) || self.file.as_deref() == Some(real)
    }
}

/// Whether `path` (absolute) lies in one of `ctx`'s working directories where it really
/// leads (its nearest existing ancestor resolved, links included, as the directories are):
/// where a tool may say what exists before the permission step, which asks for anything
/// outside them (a link inside leading out included).
pub(crate) fn in_working_directories(path: &Path, ctx: &ToolUseContext) -> bool {
    let lexical = tool_core::normalize_lexically(path);
    // The path with its nearest existing ancestor resolved (the path itself may not exist).
    let resolved = lexical.ancestors().find_map(|a| {
        let real = fs::canonicalize(a).ok()?;
        Some(real.join(lexical.strip_prefix(a).ok()?))
    });
    ctx.working_directories().iter().any(|dir| {
        let named = tool_core::normalize_lexically(dir);
        let real = fs::canonicalize(dir).unwrap_or_else(|_| named.clone());
        match &resolved {
            Some(r) => r.starts_with(&real),
            None => lexical.starts_with(&named),
        }
    })
}

/// Where a write of `path` may land ([`Confinement`]): under the working directories,
/// resolved, when the path lies inside them; never at a protected path outside the
/// protected place of the path the call named, nor at a denied one.
pub(crate) fn confinement(ctx: &ToolUseContext, path: &Path) -> Confinement {
    let dirs = ctx.working_directories();
    let lexical = tool_core::normalize_lexically(path);
    let resolved: Vec<(PathBuf, PathBuf)> = dirs
        .iter()
        .map(|d| {
            let named = tool_core::normalize_lexically(d);
            (fs::canonicalize(d).unwrap_or_else(|_| named.clone()), named)
        })
        .collect();
    let engine = tool_perms::PermissionEngine::for_walking(ctx);
    // The path as named, and through each working directory it is in as that resolves.
    let mut named = Vec::new();
    for protected in std::iter::once(lexical.clone())
        .chain(
            resolved
                .iter()
                .filter_map(|(real, named)| Some(real.join(lexical.strip_prefix(named).ok()?))),
        )
        .filter_map(|p| protection(&p, engine.as_deref()))
    {
        // The place with the links above it resolved, as the real path's is: the place
        // itself (a `.vscode` that is a link elsewhere) is not followed.
        let resolved_place = match (protected.place.parent(), protected.place.file_name()) {
            (Some(parent), Some(name)) => Some(Protection {
                place: resolve_existing(parent).join(name),
                what: protected.what.clone(),
            }),
            _ => None,
        };
        for protected in std::iter::once(protected).chain(resolved_place) {
            if !named.contains(&protected) {
                named.push(protected);
            }
        }
    }
    let inside = resolved.iter().any(|(_, named)| lexical.starts_with(named));
    Confinement {
        dirs: inside.then(|| resolved.into_iter().map(|(real, _)| real).collect()),
        file: None,
        named,
        engine,
    }
}

/// [`confinement`] for a write `tool` is about to make of `path`, widened by one file: when
/// a symlink on the way (the last component's too, dangling or not, as the writer follows
/// it) leads out of the working directories to a file, not a directory, that the session's
/// permission engine ([`tool_perms::SessionEngine`]) allows `tool` to write by its real
/// path, with `input_at` giving the call's input for that path (what the refusal would ask
/// the model to do, checked here instead), exactly that file. The write lands there or
/// inside the working directories only: a link swapped after this check to another file,
/// or to a directory above it, is refused. Without a session engine (a library host that
/// checks permissions its own way), or for a real path that is not UTF-8 (the rules could
/// not name it as it is), nothing is widened.
pub(crate) async fn write_confinement(
    tool: &dyn Tool,
    ctx: &ToolUseContext,
    path: &Path,
    input_at: impl FnOnce(&str) -> Option<serde_json::Value>,
) -> Confinement {
    let mut confine = confinement(ctx, path);
    if !confine.to_dirs() {
        return confine;
    }
    let Ok(followed) = write_target(path) else {
        return confine;
    };
    let real = resolve_existing(&followed);
    if confine.allows(&real) || real.is_dir() {
        return confine;
    }
    let (Some(tool_perms::SessionEngine(engine)), Some(input)) = (
        ctx.app_state().get::<tool_perms::SessionEngine>(),
        real.to_str().and_then(input_at),
    ) else {
        return confine;
    };
    let decision = engine.explain_inner(tool, &input, ctx).await;
    if matches!(decision.result, tool_core::PermissionResult::Allow { .. }) {
        confine.file = Some(real);
    }
    confine
}

/// `input` (a file tool's) as JSON with its `field` set to `path`: the call as it would
/// be with the path named otherwise. `None` when the input is no JSON object.
pub(crate) fn input_with_path(
    input: &impl serde::Serialize,
    field: &str,
    path: &str,
) -> Option<serde_json::Value> {
    let mut value = serde_json::to_value(input).ok()?;
    value.as_object_mut()?.insert(field.to_owned(), path.into());
    Some(value)
}

/// One lock per file for the calls of this process that read a file, check it against a read
/// cache, write it and record the write there (Edit, Write, NotebookEdit): held from the
/// staleness check through the atomic write and the read-cache update, so that those steps
/// are one for the other calls. Without it two calls running at once (each MCP `tools/call`
/// of `toolwright serve`, two sessions) could both check the same version, and the second
/// write would replace the first while both report success.
///
/// Keyed by the file's real path (symlinks followed, `fs::canonicalize`), so that a link and
/// its target, or two spellings of one directory, take the same lock; a file that does not
/// exist yet by the real path of its longest existing ancestor plus the rest, which is the
/// path it gets once created. Hard links (two real paths of one inode) are two keys: the
/// version check of [`write_and_record`] still refuses a write over the other's change,
/// except in the instant between its last look and its rename. Other processes are not
/// covered either (the same version check is what guards against them).
///
/// The map holds weak references: a lock lives while a call holds or waits for it, its
/// entry is removed when the last holder lets go, and entries left by a cancelled wait are
/// swept when the map has doubled since the last sweep, so it stays as large as the number
/// of files in use.
#[must_use = "the file is locked only while this is held"]
pub(crate) struct FileLock {
    /// The held lock; `None` only while being dropped.
    guard: Option<tokio::sync::OwnedMutexGuard<()>>,
    /// The key in [`FILE_LOCKS`].
    key: PathBuf,
}

impl fmt::Debug for FileLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileLock").field("key", &self.key).finish()
    }
}

/// The locks of [`FileLock`], by key, and the size at which dead entries are swept next.
struct LockMap {
    locks: std::collections::HashMap<PathBuf, std::sync::Weak<tokio::sync::Mutex<()>>>,
    sweep_at: usize,
}

/// The fewest entries the lock map sweeps at.
const LOCK_SWEEP_MIN: usize = 64;

static FILE_LOCKS: std::sync::LazyLock<std::sync::Mutex<LockMap>> =
    std::sync::LazyLock::new(|| {
        std::sync::Mutex::new(LockMap {
            locks: std::collections::HashMap::new(),
            sweep_at: LOCK_SWEEP_MIN,
        })
    });

/// The lock map, also after a panic elsewhere while it was held (it holds no invariant a
/// panic could break: at worst a dead entry, which is swept).
fn file_locks() -> std::sync::MutexGuard<'static, LockMap> {
    FILE_LOCKS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The lock of `key`: the live one, or a new one.
fn lock_of(key: &Path) -> std::sync::Arc<tokio::sync::Mutex<()>> {
    let mut map = file_locks();
    if let Some(live) = map.locks.get(key).and_then(std::sync::Weak::upgrade) {
        return live;
    }
    if map.locks.len() >= map.sweep_at {
        map.locks.retain(|_, lock| lock.strong_count() > 0);
        map.sweep_at = (map.locks.len() * 2).max(LOCK_SWEEP_MIN);
    }
    let lock = std::sync::Arc::new(tokio::sync::Mutex::new(()));
    map.locks
        .insert(key.to_owned(), std::sync::Arc::downgrade(&lock));
    lock
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Unlocked (and this holder's reference gone) first: a waiter still holds one.
        drop(self.guard.take());
        let mut map = file_locks();
        if map
            .locks
            .get(&self.key)
            .is_some_and(|lock| lock.strong_count() == 0)
        {
            map.locks.remove(&self.key);
        }
    }
}

/// The key of `path`'s [`FileLock`]: its real path (see there). Blocking (it looks at the
/// file system).
fn lock_key(path: &Path) -> PathBuf {
    if let Ok(real) = fs::canonicalize(path) {
        return real;
    }
    // Missing, or a dangling link: where a write would create the file.
    let target = write_target(path).unwrap_or_else(|_| path.to_path_buf());
    tool_core::normalize_lexically(&resolve_existing(&target))
}

/// Waits for, and takes, the lock of the file at `path` ([`FileLock`]). Hold it across the
/// whole read, check, write and record; to keep it while blocking work runs on after the
/// caller stops waiting (a cancelled call), move it into that work.
pub(crate) async fn lock_file(path: &Path) -> FileLock {
    let owned = path.to_path_buf();
    let fallback = tool_core::normalize_lexically(path);
    let key = match on_blocking_pool(move || Ok(lock_key(&owned)), |_| fallback).await {
        Ok(key) | Err(key) => key,
    };
    let guard = lock_of(&key).lock_owned().await;
    FileLock {
        guard: Some(guard),
        key,
    }
}

/// [`lock_file`] for a thread that may block (not an async worker).
#[cfg(test)]
pub(crate) fn lock_file_blocking(path: &Path) -> FileLock {
    let key = lock_key(path);
    let guard = lock_of(&key).blocking_lock_owned();
    FileLock {
        guard: Some(guard),
        key,
    }
}

/// [`blocking`] `f(path, lock)` with the lock of the file at `path` held (taken without
/// holding a blocking thread, then moved into the work: held until `f` returns, even if
/// this call is dropped).
pub(crate) async fn blocking_locked<R, F>(path: PathBuf, f: F) -> Result<R, ToolError>
where
    R: Send + 'static,
    F: FnOnce(&Path, &FileLock) -> Result<R, ToolError> + Send + 'static,
{
    let lock = lock_file(&path).await;
    blocking(move || f(&path, &lock)).await
}

/// [`blocking_validation`] with the lock of the file at `path` held, when there is a path (a
/// path the tool refuses is not locked: the check refuses it): a staleness check never sees
/// a write of another call half done (its file renamed in, its read-cache entry not yet
/// updated) and takes it for a change by someone else.
pub(crate) async fn validation_locked<F>(path: Option<&Path>, f: F) -> Result<(), ValidationError>
where
    F: FnOnce() -> Result<(), ValidationError> + Send + 'static,
{
    let lock = match path {
        Some(path) => Some(lock_file(path).await),
        None => None,
    };
    blocking_validation(move || {
        let _held = lock;
        f()
    })
    .await
}

/// The model-facing text when a file changed between the checks and the write.
pub(crate) const UNEXPECTEDLY_MODIFIED_MESSAGE: &str =
    "File has been unexpectedly modified. Read it again before attempting to write it.";

/// The read-before-write rule for `validate_input`, with the tool's error codes.
pub(crate) fn check_stale(
    ctx: &ToolUseContext,
    path: &Path,
    not_read_code: i32,
    modified_code: i32,
) -> Result<(), ValidationError> {
    match ctx.file_state().check_fresh(path) {
        Ok(()) => Ok(()),
        Err(StaleFile::NotRead) => Err(ValidationError::with_code(NOT_READ_MESSAGE, not_read_code)),
        Err(StaleFile::Modified) => {
            Err(ValidationError::with_code(MODIFIED_MESSAGE, modified_code))
        }
        Err(other) => Err(ValidationError::new(other.to_string())),
    }
}

/// The content side of the read-before-write rule for `validate_input`, after
/// [`check_stale`]: the file's bytes (`hash`, of the file as it is now; `None`: there is no
/// file) must be the ones the Reads saw. A change that kept the mtime and the size (`touch
/// -r`, `cp -p` of a same-sized version) passes [`check_stale`]; it is refused here in the
/// same words and with the same code, before the call, rather than at the write.
pub(crate) fn check_unchanged(
    ctx: &ToolUseContext,
    path: &Path,
    hash: Option<ContentHash>,
    modified_code: i32,
) -> Result<(), ValidationError> {
    let seen = ctx.file_state().get(path).and_then(|s| s.disk_hash);
    if let (Some(now), Some(seen)) = (hash, seen)
        && now != seen
    {
        return Err(ValidationError::with_code(MODIFIED_MESSAGE, modified_code));
    }
    Ok(())
}

/// The last check before a write: the stale rule again, and the bytes on disk must still
/// be the ones the new content was computed from (`None`: the file did not exist). Returns
/// the version of the file it verified, which [`write_and_record`] checks the file against
/// when it begins to write, so that a change in between is not overwritten.
///
/// `_held`: the file's [`FileLock`], held from before the bytes `based_on` were read until
/// [`write_and_record`] has recorded the write.
pub(crate) fn recheck_before_write(
    ctx: &ToolUseContext,
    path: &Path,
    based_on: Option<&[u8]>,
    _held: &FileLock,
) -> Result<Verified, ToolError> {
    if ctx.file_state().check_fresh(path).is_err() {
        return Err(ToolError::msg(UNEXPECTEDLY_MODIFIED_MESSAGE));
    }
    // The mtime can miss a change (a write within the same millisecond as the read, or a
    // tool that restores the mtime, as `cp -p` and rsync do): the content decides.
    if let (Some(bytes), Some(seen)) = (
        based_on,
        ctx.file_state().get(path).and_then(|s| s.disk_hash),
    ) && ContentHash::of(bytes) != seen
    {
        // What the model read is not what is on disk: changed after the checks before the
        // call (which compare the content too, [`check_unchanged`]) in a way the mtime
        // missed. Refused as every change found at the write is (Claude Code's text there).
        return Err(ToolError::msg(UNEXPECTEDLY_MODIFIED_MESSAGE));
    }
    let (now, verified) = read_versioned(path)?;
    if now.as_deref() != based_on {
        return Err(ToolError::msg(UNEXPECTEDLY_MODIFIED_MESSAGE));
    }
    Ok(verified)
}

/// The file's bytes (`None`: it does not exist) and the version they are, from one handle:
/// its status before and after the read must agree (a file written meanwhile is refused as
/// modified). A device, FIFO or socket is refused without reading it.
fn read_versioned(path: &Path) -> Result<(Option<Vec<u8>>, Verified), ToolError> {
    use std::io::Read as _;
    let Some(mut file) = open_existing(path)? else {
        return Ok((None, Verified(None)));
    };
    let status = |file: &File| {
        nix::sys::stat::fstat(file)
            .map(|st| (file_kind(&st), version(&st)))
            .map_err(|e| ToolError::io(path, e.into()))
    };
    let (kind, before) = status(&file)?;
    if kind != SFlag::S_IFREG {
        return Err(ToolError::msg(not_regular_message(path)));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| ToolError::io(path, e))?;
    if status(&file)?.1 != before {
        return Err(ToolError::msg(UNEXPECTEDLY_MODIFIED_MESSAGE));
    }
    Ok((Some(bytes), Verified(Some(before))))
}

/// What the model knows of the content a write leaves, for the read cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Known {
    /// All of it: the model wrote the whole content (Write, NotebookEdit).
    Whole,
    /// What it knew of the file before, changed where it matched: what the Reads of that
    /// file showed altered (a cut line, bytes that are not UTF-8) or did not show (a
    /// PARTIAL view, a range of lines) stays unknown (Edit).
    AsBefore,
}

/// Writes atomically, if the file is still the version `verified` (else
/// [`UNEXPECTEDLY_MODIFIED_MESSAGE`]), and records the write in the read cache: the model's
/// view of the new content, the new mtime and the hash of the bytes on disk. `confine`: the
/// directories (or files) the write must land in ([`write_confinement`]); `_held`: the
/// file's [`FileLock`], the one [`recheck_before_write`] was given.
#[expect(clippy::too_many_arguments, reason = "the parts of one checked write")]
pub(crate) fn write_and_record(
    ctx: &ToolUseContext,
    path: &Path,
    confine: &Confinement,
    bytes: &[u8],
    content: String,
    verified: Verified,
    known: Known,
    _held: &FileLock,
) -> Result<(), ToolError> {
    let altered = match known {
        Known::Whole => None,
        Known::AsBefore => ctx
            .file_state()
            .get(path)
            .map(|seen| (seen.lines_cut, seen.not_utf8, seen.truncated, seen.ranged)),
    };
    write_between(path, bytes, Some(confine), Some(verified), || {}).map_err(|e| {
        if e.get_ref()
            .is_some_and(|inner| inner.is::<ChangedDuringWrite>())
        {
            ToolError::msg(UNEXPECTEDLY_MODIFIED_MESSAGE)
        } else {
            ToolError::io(path, e)
        }
    })?;
    let mtime = fs::metadata(path).map(|m| mtime_ms(&m)).unwrap_or(0);
    let mut state = FileState::written(content, mtime);
    state.disk_hash = Some(ContentHash::of(bytes));
    if let Some((lines_cut, not_utf8, partly_seen, ranged)) = altered {
        (state.lines_cut, state.not_utf8, state.ranged) = (lines_cut, not_utf8, ranged);
        // An Edit of a file seen in part leaves the rest unseen: Write, which replaces the
        // whole file, still needs it read (a new Read of all of it clears this).
        state.truncated = partly_seen;
    }
    ctx.file_state().insert(path, state);
    Ok(())
}

/// Opens `path` for reading, `None` when it does not exist. A device, FIFO or socket is
/// refused: by its status before the open when it is one already, and by the handle's after
/// it (opened non-blocking, so a FIFO swapped in meanwhile does not hang the open).
pub(crate) fn open_existing(path: &Path) -> Result<Option<File>, ToolError> {
    check_regular_or_missing(path).map_err(ToolError::msg)?;
    open_checked(path)
}

/// [`open_existing`] after its first check: opens non-blocking and refuses what the handle
/// says is no regular file (nor a directory, which the read then refuses as such).
pub(crate) fn open_checked(path: &Path) -> Result<Option<File>, ToolError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ToolError::io(path, e)),
    };
    let meta = file.metadata().map_err(|e| ToolError::io(path, e))?;
    if !meta.is_file() && !meta.is_dir() {
        return Err(ToolError::msg(not_regular_message(path)));
    }
    Ok(Some(file))
}

/// Reads a file that may not exist. A device, FIFO or socket is refused without reading it
/// (opening a FIFO blocks until a writer comes, reading `/dev/zero` never ends), also one
/// swapped in after the check ([`open_existing`]).
pub(crate) fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, ToolError> {
    use std::io::Read as _;
    let Some(mut file) = open_existing(path)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| ToolError::io(path, e))?;
    Ok(Some(bytes))
}

/// Refuses a NUL byte in the input field `field` (Claude Code: "null byte in input -> error").
pub(crate) fn reject_null_bytes(field: &str, value: Option<&str>) -> Result<(), ValidationError> {
    if value.is_some_and(|v| v.contains('\0')) {
        return Err(ValidationError::new(format!(
            "The {field} parameter contains a null byte, which is not allowed."
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::Strategy as _;

    proptest::proptest! {
        /// Bytes that are text with some bytes that are not UTF-8 come back byte for byte
        /// from [`decode_keeping_stray_bytes`] and [`encode`], and the text is shown as a
        /// lossy decoding (Read's) shows them.
        #[test]
        fn stray_bytes_survive_decoding_and_encoding(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    3 => proptest::char::any().prop_map(|c| c.to_string().into_bytes()),
                    1 => (0x80u8..=0xFF).prop_map(|b| vec![b]),
                ],
                0..40,
            ).prop_map(|parts: Vec<Vec<u8>>| parts.concat())
        ) {
            match decode_keeping_stray_bytes(&bytes) {
                Some(decoded) => {
                    proptest::prop_assert_eq!(encode(&decoded.text, decoded.encoding), bytes.clone());
                    let body = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(&bytes);
                    proptest::prop_assert_eq!(
                        shown_stray_bytes(&decoded.text),
                        String::from_utf8_lossy(body).into_owned()
                    );
                }
                // Valid UTF-8, a NUL, a UTF-16 mark, or a character that would be taken
                // for a stray byte.
                None => proptest::prop_assert!(
                    std::str::from_utf8(&bytes).is_ok()
                        || bytes.contains(&0)
                        || bytes.starts_with(&[0xFF, 0xFE])
                        || bytes.starts_with(&[0xFE, 0xFF])
                        || String::from_utf8_lossy(&bytes).chars().any(is_stray_byte)
                ),
            }
        }
    }

    /// A FIFO put where a regular file was checked is refused by the handle at once, not
    /// waited on until a writer comes.
    #[test]
    fn a_fifo_swapped_in_after_the_check_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("notebook.ipynb");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let refused = open_checked(&path).map_err(|e| e.to_model_text());
            tx.send(refused.err()).unwrap();
        });
        let refused = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the open of the FIFO blocked");
        assert!(
            refused.is_some_and(|e| e.contains("not a regular file")),
            "the FIFO was opened as a file"
        );
        assert!(matches!(
            open_checked(&dir.path().join("missing")),
            Ok(None)
        ));
    }

    #[test]
    fn decode_encode_round_trip() {
        for bytes in [
            b"plain\n".to_vec(),
            b"\xEF\xBB\xBFbom\r\n".to_vec(),
            encode("utf16 \u{e9}\r\n", Encoding::Utf16Le),
            encode("utf16 be \u{e9}\u{1F600}\n", Encoding::Utf16Be),
        ] {
            let d = decode(&bytes).unwrap();
            assert_eq!(encode(&d.text, d.encoding), bytes);
        }
        assert!(decode(b"\xFF\x00\x01").is_none());
        assert!(decode(b"\xC3\x28").is_none());
    }

    /// The shared UTF-16 unit reader gives the units `encode` wrote, in either byte order,
    /// leaves an odd last byte out, and keeps an unpaired surrogate for the caller to judge;
    /// the lossy decoding built on it shows U+FFFD for both faults.
    #[test]
    fn utf16_units_read_either_byte_order() {
        let text = "a\u{e9}\u{1F600}";
        let expected: Vec<u16> = text.encode_utf16().collect();
        for (encoding, big_endian) in [(Encoding::Utf16Le, false), (Encoding::Utf16Be, true)] {
            let bytes = encode(text, encoding);
            assert_eq!(utf16_units(&bytes[2..], big_endian), expected);
            let mut odd = bytes[2..].to_vec();
            odd.push(0x41);
            assert_eq!(utf16_units(&odd, big_endian), expected);
        }
        assert_eq!(utf16_units(&[0x00, 0xD8], false), [0xD800]);
        assert_eq!(
            decode_utf16_lossy(b"\xFF\xFEa\x00\x00\xD8x"),
            "a\u{FFFD}\u{FFFD}"
        );
    }

    #[test]
    fn crlf_detection() {
        assert!(is_pure_crlf("a\r\nb\r\n"));
        assert!(!is_pure_crlf("a\r\nb\n"));
        assert!(!is_pure_crlf("ab"));
        let mixed = "x\r\r\ny\r\n";
        assert_eq!(lf_to_crlf(&crlf_to_lf(mixed)), mixed);
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_keeps_mode_and_symlink() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.sh");
        fs::write(&file, "old").unwrap();
        fs::set_permissions(&file, fs::Permissions::from_mode(0o751)).unwrap();
        atomic_write(&file, b"new").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"new");
        assert_eq!(
            fs::metadata(&file).unwrap().permissions().mode() & 0o777,
            0o751
        );
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        atomic_write(&link, b"via link").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(fs::read(&file).unwrap(), b"via link");
        // A dangling link: its target is created, and the link stays.
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink("made/by-link.txt", &dangling).unwrap();
        atomic_write(&dangling, b"through").unwrap();
        assert_eq!(
            fs::read(dir.path().join("made/by-link.txt")).unwrap(),
            b"through"
        );
        assert!(
            fs::symlink_metadata(&dangling)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // A loop of links is refused, not followed forever.
        std::os::unix::fs::symlink("loop-b", dir.path().join("loop-a")).unwrap();
        std::os::unix::fs::symlink("loop-a", dir.path().join("loop-b")).unwrap();
        assert!(atomic_write(&dir.path().join("loop-a"), b"x").is_err());
        // No temporary files are left behind.
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 6, "{names:?}");
        // Parents are created.
        atomic_write(&dir.path().join("a/b/c.txt"), b"deep").unwrap();
        assert_eq!(fs::read(dir.path().join("a/b/c.txt")).unwrap(), b"deep");
    }

    /// The one file outside the working directories a confinement may allow is allowed
    /// exactly: not what lies under it, nor its directory.
    #[test]
    fn a_widened_confinement_allows_one_file_exactly() {
        let confine = Confinement {
            file: Some(PathBuf::from("/outside/dir/o.txt")),
            ..Confinement::dirs(vec![PathBuf::from("/work")])
        };
        assert!(confine.allows(Path::new("/work/a/b")));
        assert!(confine.allows(Path::new("/outside/dir/o.txt")));
        assert!(!confine.allows(Path::new("/outside/dir/o.txt/x")));
        assert!(!confine.allows(Path::new("/outside/dir/.env")));
        assert!(!confine.allows(Path::new("/outside/dir")));
    }

    #[test]
    fn a_confined_write_never_reaches_a_hard_link_outside() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let (inside, outside) = (root.join("inside"), root.join("outside"));
        fs::create_dir_all(&inside).unwrap();
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("secret"), "outside").unwrap();
        fs::hard_link(outside.join("secret"), inside.join("notes")).unwrap();
        atomic_write_confined(
            &inside.join("notes"),
            b"new",
            Some(&Confinement::dirs(vec![inside.clone()])),
        )
        .unwrap();
        assert_eq!(fs::read(inside.join("notes")).unwrap(), b"new");
        assert_eq!(fs::read(outside.join("secret")).unwrap(), b"outside");
    }

    /// A directory on the path that is a loop of links (`loop1 -> loop2 -> loop1`) is named
    /// as a loop, and one that leads through a file (`tofile -> f.txt/x`) names the file, not
    /// a missing directory, nor in the system's words.
    #[test]
    fn a_loop_of_links_or_a_file_on_their_way_is_named_as_such() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("loop2", dir.path().join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", dir.path().join("loop2")).unwrap();
        let err = atomic_write(&dir.path().join("loop1/sub/f"), b"x")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!(
                "{} is a symbolic link that never resolves (its links lead in a loop",
                dir.path().join("loop1").display()
            )),
            "{err}"
        );
        fs::write(dir.path().join("f.txt"), "file").unwrap();
        std::os::unix::fs::symlink("f.txt/x", dir.path().join("tofile")).unwrap();
        let err = atomic_write(&dir.path().join("tofile/sub/f"), b"x")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!(
                "{} is a symbolic link that leads to {}, which is not a directory",
                dir.path().join("tofile").display(),
                dir.path().join("f.txt").display()
            )),
            "{err}"
        );
    }

    #[test]
    fn a_file_whose_name_is_near_the_length_limit_is_written() {
        let dir = tempfile::tempdir().unwrap();
        // 80 three-byte characters and `.md`: 243 bytes, a legal name.
        let file = dir.path().join(format!("{}.md", "文".repeat(80)));
        atomic_write(&file, b"first").unwrap();
        atomic_write(&file, b"second").unwrap();
        assert_eq!(fs::read(&file).unwrap(), b"second");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 1, "a temporary file was left behind");
        // The cut stem still names a temporary file that can be cleaned up.
        let stem = temp_stem(file.file_name().unwrap());
        let temp = format!(
            ".{}{}4294967295.{}.{}",
            stem.to_str().unwrap(),
            tool_core::temp_file::TEMP_MARKER,
            tool_core::temp_file::writer_tag(),
            u64::MAX
        );
        assert!(temp.len() <= 255, "{}", temp.len());
        // A dead writer's (no process has the largest pid).
        assert!(tool_core::temp_file::is_abandoned_temp(&temp, || None));
    }

    #[test]
    fn a_change_while_the_replacement_is_written_keeps_the_other_writers_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        fs::write(&file, "ours to replace").unwrap();
        let err = write_between(&file, b"our new content", None, None, || {
            fs::write(&file, "a formatter's save").unwrap();
        })
        .unwrap_err();
        assert!(err.get_ref().unwrap().is::<ChangedDuringWrite>(), "{err}");
        assert_eq!(fs::read_to_string(&file).unwrap(), "a formatter's save");
        // A file created meanwhile where there was none is kept too.
        let new = dir.path().join("new.txt");
        let err = write_between(&new, b"ours", None, None, || {
            fs::write(&new, "theirs").unwrap()
        })
        .unwrap_err();
        assert!(err.get_ref().unwrap().is::<ChangedDuringWrite>(), "{err}");
        assert_eq!(fs::read_to_string(&new).unwrap(), "theirs");
        // No temporary file is left behind.
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(names.len(), 2, "{names:?}");
        // Untouched, the write goes through.
        write_between(&file, b"ours at last", None, None, || {}).unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "ours at last");
    }

    /// The last check and the write have nothing in between: a file renamed over the target
    /// after the check passed (an editor's atomic save) is not taken for the one the new
    /// content was computed from.
    #[test]
    fn a_file_renamed_over_the_target_after_the_recheck_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        fs::write(&file, "v1\n").unwrap();
        let ctx = ToolUseContext::new(dir.path());
        let meta = fs::metadata(&file).unwrap();
        ctx.file_state().insert(
            &file,
            FileState::read(
                "v1\n".into(),
                mtime_ms(&meta),
                ContentHash::of(b"v1\n"),
                1,
                None,
            ),
        );
        let lock = lock_file_blocking(&file);
        let verified = recheck_before_write(&ctx, &file, Some(b"v1\n"), &lock).unwrap();
        let other = dir.path().join("other.tmp");
        fs::write(&other, "v2\n").unwrap();
        fs::rename(&other, &file).unwrap();
        let err = write_and_record(
            &ctx,
            &file,
            &confinement(&ctx, &file),
            b"v1 edited\n",
            "v1 edited\n".into(),
            verified,
            Known::Whole,
            &lock,
        )
        .unwrap_err();
        assert_eq!(err.to_model_text(), UNEXPECTEDLY_MODIFIED_MESSAGE);
        assert_eq!(fs::read_to_string(&file).unwrap(), "v2\n");
        // A file created where the check found none is kept too.
        let new = dir.path().join("new.txt");
        let new_lock = lock_file_blocking(&new);
        let verified = recheck_before_write(&ctx, &new, None, &new_lock).unwrap();
        fs::write(&new, "theirs").unwrap();
        let err = write_and_record(
            &ctx,
            &new,
            &confinement(&ctx, &new),
            b"ours",
            "ours".into(),
            verified,
            Known::Whole,
            &new_lock,
        )
        .unwrap_err();
        assert_eq!(err.to_model_text(), UNEXPECTEDLY_MODIFIED_MESSAGE);
        assert_eq!(fs::read_to_string(&new).unwrap(), "theirs");
        // Nothing changed in between: the write goes through.
        let verified = recheck_before_write(&ctx, &file, Some(b"v2\n"), &lock);
        assert!(verified.is_err(), "v2 was never read");
        let meta = fs::metadata(&file).unwrap();
        ctx.file_state().insert(
            &file,
            FileState::read(
                "v2\n".into(),
                mtime_ms(&meta),
                ContentHash::of(b"v2\n"),
                1,
                None,
            ),
        );
        let verified = recheck_before_write(&ctx, &file, Some(b"v2\n"), &lock).unwrap();
        write_and_record(
            &ctx,
            &file,
            &confinement(&ctx, &file),
            b"v3\n",
            "v3\n".into(),
            verified,
            Known::Whole,
            &lock,
        )
        .unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "v3\n");
    }

    /// An in-place rewrite (a hard-linked file) takes the file's lock too: it waits while
    /// another writer holds it, and a change that writer made under it is kept.
    #[test]
    fn an_in_place_rewrite_waits_for_the_files_lock_and_keeps_a_change_made_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        let twin = dir.path().join("twin.txt");
        fs::write(&file, "old").unwrap();
        fs::hard_link(&file, &twin).unwrap();
        let held = File::open(&file).unwrap();
        rustix::fs::flock(&held, rustix::fs::FlockOperation::LockExclusive).unwrap();
        let writer = std::thread::spawn({
            let file = file.clone();
            move || atomic_write(&file, b"ours")
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        let waited = !writer.is_finished();
        // The holder rewrites the file in place, as such a writer does, and lets go.
        fs::write(&twin, "theirs, longer").unwrap();
        drop(held);
        let result = writer.join().unwrap();
        assert!(
            waited,
            "the in-place rewrite did not wait for the lock: {result:?}"
        );
        let err = result.unwrap_err();
        assert!(err.get_ref().unwrap().is::<ChangedDuringWrite>(), "{err}");
        assert_eq!(fs::read_to_string(&file).unwrap(), "theirs, longer");
        // Free, the rewrite goes through, in place.
        atomic_write(&file, b"ours").unwrap();
        assert_eq!(fs::read_to_string(&twin).unwrap(), "ours");
    }

    #[test]
    fn an_in_place_rewrite_grows_and_shrinks_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        let twin = dir.path().join("twin.txt");
        fs::write(&file, "a medium line\n").unwrap();
        fs::hard_link(&file, &twin).unwrap();
        let long = "x".repeat(100_000);
        atomic_write(&file, long.as_bytes()).unwrap();
        assert_eq!(fs::read_to_string(&twin).unwrap(), long);
        atomic_write(&file, b"short").unwrap();
        assert_eq!(fs::read(&twin).unwrap(), b"short");
        atomic_write(&file, b"").unwrap();
        assert_eq!(fs::read(&twin).unwrap(), b"");
    }

    /// Rewrites a hard-linked file in place: run by
    /// `an_in_place_rewrite_that_cannot_fit_leaves_the_file_as_it_was` in a process of its
    /// own, under a 64 KiB file size limit (which holds for the whole process).
    #[test]
    #[ignore = "a helper process of another test"]
    fn in_place_rewrite_under_a_file_size_limit() {
        let Some(path) = std::env::var_os("TW_IN_PLACE_FILE") else {
            return;
        };
        let result = atomic_write(Path::new(&path), &vec![b'n'; 256 * 1024]);
        std::process::exit(if result.is_err() { 0 } else { 3 });
    }

    #[test]
    fn an_in_place_rewrite_that_cannot_fit_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        fs::hard_link(
            {
                fs::write(&file, "o".repeat(16 * 1024)).unwrap();
                &file
            },
            dir.path().join("twin.txt"),
        )
        .unwrap();
        // The shell sets the limit and ignores SIGXFSZ; both hold across the exec.
        let status = std::process::Command::new("bash")
            .args(["-c", "trap '' XFSZ; ulimit -f 64; exec \"$0\" \"$@\""])
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "fsutil::tests::in_place_rewrite_under_a_file_size_limit",
                "--ignored",
                "--quiet",
            ])
            .env("TW_IN_PLACE_FILE", &file)
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "the write did not fail: {status:?}");
        assert_eq!(fs::read_to_string(&file).unwrap(), "o".repeat(16 * 1024));
    }

    #[test]
    fn atomic_write_keeps_hard_links_and_owner() {
        use std::os::unix::fs::MetadataExt as _;
        let dir = tempfile::tempdir().unwrap();
        // A hard-linked file is rewritten in place: every name sees the new content.
        let file = dir.path().join("f.txt");
        let twin = dir.path().join("twin.txt");
        fs::write(&file, "old").unwrap();
        fs::hard_link(&file, &twin).unwrap();
        let inode = fs::metadata(&file).unwrap().ino();
        atomic_write(&file, b"new").unwrap();
        assert_eq!(fs::read(&twin).unwrap(), b"new");
        assert_eq!(fs::metadata(&file).unwrap().ino(), inode);
        // A file owned by someone else keeps its owner and group (root can give them; a
        // user who cannot gets the in-place rewrite, which keeps them too).
        let owned = dir.path().join("owned.txt");
        fs::write(&owned, "old").unwrap();
        let me = fs::metadata(&owned).unwrap();
        let other = (me.uid() + 4321, me.gid() + 4321);
        if std::os::unix::fs::chown(&owned, Some(other.0), Some(other.1)).is_ok() {
            atomic_write(&owned, b"new").unwrap();
            let after = fs::metadata(&owned).unwrap();
            assert_eq!((after.uid(), after.gid()), other);
            assert_eq!(fs::read(&owned).unwrap(), b"new");
        }
        // Nothing but the three files is left.
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    /// The child side of the kill test: writes two large contents alternately forever.
    #[test]
    fn kill_child_writer() {
        let Some(path) = std::env::var_os("TW_KILL_TEST_FILE") else {
            return;
        };
        let path = PathBuf::from(path);
        let a = vec![b'a'; 4 << 20];
        let b = vec![b'b'; 3 << 20];
        loop {
            atomic_write(&path, &a).unwrap();
            atomic_write(&path, &b).unwrap();
        }
    }

    #[cfg(unix)]
    #[test]
    fn kill_nine_never_leaves_a_half_written_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        fs::write(&path, b"old").unwrap();
        let mut changed = false;
        let exe = std::env::current_exe().unwrap();
        for round in 0..8u64 {
            let mut child = std::process::Command::new(&exe)
                .args([
                    "--exact",
                    "fsutil::tests::kill_child_writer",
                    "--test-threads=1",
                    "--nocapture",
                ])
                .env("TW_KILL_TEST_FILE", &path)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::thread::sleep(std::time::Duration::from_millis(40 + round * 23));
            child.kill().unwrap(); // SIGKILL on Unix
            child.wait().unwrap();
            let bytes = fs::read(&path).unwrap();
            if bytes == b"old" {
                continue;
            }
            changed = true;
            let all_a = bytes.len() == 4 << 20 && bytes.iter().all(|&c| c == b'a');
            let all_b = bytes.len() == 3 << 20 && bytes.iter().all(|&c| c == b'b');
            assert!(
                all_a || all_b,
                "round {round}: torn file of {} bytes",
                bytes.len()
            );
        }
        assert!(changed, "the child writer never wrote");
    }

    /// A link, its target and a path through a linked directory share one lock; a missing
    /// file's key is where it will be; the map forgets locks no one holds.
    #[test]
    fn file_locks_are_keyed_by_the_real_path_and_forgotten_when_free() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().canonicalize().unwrap();
        let file = real.join("f.txt");
        fs::write(&file, "x").unwrap();
        let link = real.join("link.txt");
        std::os::unix::fs::symlink("f.txt", &link).unwrap();
        let dir_link = real.join("dl");
        std::os::unix::fs::symlink(&real, &dir_link).unwrap();
        assert_eq!(lock_key(&link), file);
        assert_eq!(lock_key(&dir_link.join("f.txt")), file);
        // Missing: the file (and a directory) not there yet, through the linked directory
        // and through a dangling link.
        assert_eq!(
            lock_key(&dir_link.join("new/dir/g.txt")),
            real.join("new/dir/g.txt")
        );
        let dangling = real.join("dangling");
        std::os::unix::fs::symlink("sub/../later.txt", &dangling).unwrap();
        assert_eq!(lock_key(&dangling), real.join("later.txt"));

        let held = lock_file_blocking(&link);
        assert!(
            lock_of(&file).try_lock().is_err(),
            "the target is not locked by a lock through its link"
        );
        assert!(file_locks().locks.contains_key(&file));
        drop(held);
        assert!(
            !file_locks().locks.contains_key(&file),
            "a free lock is kept"
        );
        // A lock taken and dropped leaves no entry; one dropped while another waits is kept
        // for that one.
        let first = lock_file_blocking(&file);
        let waiter = std::thread::spawn({
            let file = file.clone();
            move || drop(lock_file_blocking(&file))
        });
        while std::sync::Arc::strong_count(&lock_of(&file)) < 3 {
            std::thread::yield_now();
        }
        drop(first);
        waiter.join().unwrap();
        assert!(!file_locks().locks.contains_key(&file));
    }

    /// Entries whose lock died without a holder's drop (a cancelled wait) are swept.
    #[test]
    fn dead_lock_entries_are_swept() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..LOCK_SWEEP_MIN * 4 {
            // A lock made and dropped without FileLock: its entry stays until swept.
            drop(lock_of(&dir.path().join(format!("gone-{i}"))));
        }
        let dead = file_locks()
            .locks
            .keys()
            .filter(|k| k.starts_with(dir.path()))
            .count();
        assert!(dead < LOCK_SWEEP_MIN * 2, "{dead} dead entries kept");
    }
}
