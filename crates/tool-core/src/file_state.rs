//! The read cache that Edit and Write check before touching a file.
//!
//! Read records what it showed the model; Edit, Write and NotebookEdit record what they wrote.
//! Before a write, a tool calls [`FileStateCache::check_fresh`], which refuses a file the model
//! has not read, and a file whose content changed since it was read or last written. Unlike
//! Claude Code, a changed mtime alone is not an error: when the mtime moved, the file's
//! content hash is compared with the one recorded, and identical content passes (decision 7
//! in `claude-code-compat.md`).
//!
//! The cache is an LRU bounded both by entry count and by total content bytes. Past the entry
//! bound the least recently used entries go; past the byte bound only their cached content
//! does (the mtime, hash and flags the read-before-write rule needs stay), so reading or
//! writing a few large files never makes an earlier Read of a small one count as unread.

use std::fs;
use std::hash::Hasher;
use std::io;
use std::num::NonZeroUsize;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use lru::LruCache;
use unicode_normalization::UnicodeNormalization;

/// Default maximum number of entries (Claude Code's `READ_FILE_STATE_CACHE_SIZE`).
pub const DEFAULT_MAX_ENTRIES: usize = 100;
/// Default maximum total content size: 25 MiB.
pub const DEFAULT_MAX_BYTES: usize = 25 * 1024 * 1024;

/// The model-facing refusal for a file that was not read first.
pub const NOT_READ_MESSAGE: &str =
    "File has not been read yet. Read it first before writing to it.";
/// The model-facing refusal for a file that changed since it was read.
pub const MODIFIED_MESSAGE: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

/// A 64-bit hash of a file's bytes plus their length, used to tell a real change from an mtime
/// bump. Not cryptographic: it guards against accidents (an editor touching a file), not
/// against an adversary who can already write the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ContentHash {
    hash: u64,
    len: u64,
}

impl ContentHash {
    /// The hash of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        let mut hasher = ContentHasher::default();
        hasher.update(bytes);
        hasher.finish()
    }
}

/// Computes a [`ContentHash`] over data that arrives in pieces (a streamed read).
#[derive(Debug, Default)]
pub struct ContentHasher {
    inner: std::hash::DefaultHasher,
    len: u64,
}

impl ContentHasher {
    /// Feeds the next piece.
    pub fn update(&mut self, bytes: &[u8]) {
        self.inner.write(bytes);
        self.len += bytes.len() as u64;
    }

    /// The hash of everything fed.
    pub fn finish(self) -> ContentHash {
        ContentHash {
            hash: self.inner.finish(),
            len: self.len,
        }
    }
}

/// What the cache knows about one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    /// The content as the model saw it (a Read) or as written (Edit/Write).
    pub content: String,
    /// The file's mtime at that moment, in whole milliseconds since the Unix epoch.
    pub mtime_ms: u64,
    /// The hash of the whole file on disk at that moment, if known.
    pub disk_hash: Option<ContentHash>,
    /// The first line shown (1-based) for a Read; `None` for a write.
    pub offset: Option<usize>,
    /// The number of lines asked for in a Read; `None` for a write or a whole-file read.
    pub limit: Option<usize>,
    /// The model saw something other than the disk content (an injected, transformed view):
    /// such an entry does not count as a read.
    pub is_partial_view: bool,
    /// The Reads of this content have not shown every line yet (a `PARTIAL view` notice, or
    /// a range such as `offset: 500, limit: 20`). Edit may still change what was seen;
    /// Write, which replaces the whole file, refuses until the rest is read.
    pub truncated: bool,
    /// While `truncated`: the line ranges (1-based, inclusive, merged) the Reads of this
    /// same content have shown. Empty otherwise.
    pub seen_lines: Vec<(usize, usize)>,
    /// A Read of this content cut a line it showed (longer than Read shows, `... [line
    /// truncated]`). Every line may have been shown, but not whole: Write, which would
    /// replace the file with what the model saw, refuses; Edit, which matches its text
    /// against the file itself, may still change it.
    pub lines_cut: bool,
    /// A Read of this content showed bytes that are not UTF-8 as U+FFFD: as
    /// [`lines_cut`](Self::lines_cut), Write refuses (it would replace the original bytes).
    pub not_utf8: bool,
    /// A Read of this content was given a range (`offset` or `limit`) and showed it whole:
    /// as in Claude Code, the file counts as read for Edit, wherever the edit is. Without
    /// one, a Read cut to a `PARTIAL view` lets Edit change only the lines it showed
    /// ([`seen_lines`](Self::seen_lines)).
    pub ranged: bool,
    /// The [`call_order`](crate::ToolUseContext::call_order) of the Read that recorded this
    /// entry, if it ran as a call: a Read that started before it (its result comes first)
    /// does not answer "unchanged since last read" from it.
    pub read_order: Option<u64>,
}

impl FileState {
    /// The entry a Read records.
    pub fn read(
        content: String,
        mtime_ms: u64,
        disk_hash: ContentHash,
        offset: usize,
        limit: Option<usize>,
    ) -> Self {
        Self {
            content,
            mtime_ms,
            disk_hash: Some(disk_hash),
            offset: Some(offset),
            limit,
            is_partial_view: false,
            truncated: false,
            seen_lines: Vec::new(),
            lines_cut: false,
            not_utf8: false,
            ranged: false,
            read_order: None,
        }
    }

    /// The entry a write records: the full new content.
    pub fn written(content: String, mtime_ms: u64) -> Self {
        let disk_hash = Some(ContentHash::of(content.as_bytes()));
        Self {
            content,
            mtime_ms,
            disk_hash,
            offset: None,
            limit: None,
            is_partial_view: false,
            truncated: false,
            seen_lines: Vec::new(),
            lines_cut: false,
            not_utf8: false,
            ranged: false,
            read_order: None,
        }
    }

    /// Records that a Read showed lines `first..=last` (nothing when `last < first`) of
    /// the `total` lines of this entry's content, on top of what `previous` (the entry this
    /// one replaces) had seen of the same content: [`truncated`](Self::truncated) stays set
    /// until the Reads together have shown every line. A previous entry of other content
    /// counts for nothing; one of the same content that saw it all (or wrote it) makes this
    /// one whole.
    ///
    /// What a Read showed altered ([`lines_cut`](Self::lines_cut),
    /// [`not_utf8`](Self::not_utf8), set on this entry by the caller) adds up the same way
    /// across Reads of the same content, and is cleared by a previous entry of that content
    /// that had it whole and unaltered (the model wrote it), or by this Read itself when it
    /// showed every line, none of them cut: its flags then say all there is to say about
    /// the content (a line cut by an earlier Read and shortened by an Edit since is whole).
    pub fn merge_seen(
        &mut self,
        first: usize,
        last: usize,
        total: usize,
        previous: Option<&FileState>,
    ) {
        let same = previous.filter(|p| {
            !p.is_partial_view && p.disk_hash.is_some() && p.disk_hash == self.disk_hash
        });
        self.ranged |= same.is_some_and(|p| p.ranged);
        // What this Read showed: every line, none of them cut (so any byte that is not
        // UTF-8 was shown, as U+FFFD, and flagged).
        let all_shown_whole = !self.lines_cut && (total == 0 || (first <= 1 && last >= total));
        if let Some(p) = same.filter(|_| !all_shown_whole) {
            if !p.truncated && !p.lines_cut && !p.not_utf8 {
                self.lines_cut = false;
                self.not_utf8 = false;
            } else {
                self.lines_cut |= p.lines_cut;
                self.not_utf8 |= p.not_utf8;
            }
        }
        let mut ranges = match same {
            Some(p) if !p.truncated => {
                self.truncated = false;
                self.seen_lines.clear();
                return;
            }
            Some(p) => p.seen_lines.clone(),
            None => Vec::new(),
        };
        if last >= first {
            ranges.push((first, last));
        }
        ranges.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
        for (a, b) in ranges {
            match merged.last_mut() {
                Some(prev) if a <= prev.1.saturating_add(1) => prev.1 = prev.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        let whole = total == 0 || matches!(merged.first(), Some(&(1, end)) if end >= total);
        self.truncated = !whole;
        self.seen_lines = if whole { Vec::new() } else { merged };
    }

    /// What the entry counts against the byte bound: its cached content (the rest is
    /// small and bounded by the entry count).
    fn cost(&self) -> usize {
        self.content.len()
    }
}

/// Why a write was refused by [`FileStateCache::check_fresh`].
#[derive(Debug, thiserror::Error)]
pub enum StaleFile {
    /// The file exists but was never read (or only a partial view was shown).
    #[error("{NOT_READ_MESSAGE}")]
    NotRead,
    /// The file's content changed since it was read or written.
    #[error("{MODIFIED_MESSAGE}")]
    Modified,
    /// The file could not be inspected.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// An LRU of [`FileState`]s keyed by normalised absolute path, bounded by entries and bytes.
/// Cheap to clone; clones share the same cache.
#[derive(Debug, Clone)]
pub struct FileStateCache {
    inner: Arc<Mutex<CacheInner>>,
}

#[derive(Debug)]
struct CacheInner {
    lru: LruCache<PathBuf, FileState>,
    bytes: usize,
    max_bytes: usize,
}

impl Default for FileStateCache {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_ENTRIES, DEFAULT_MAX_BYTES)
    }
}

impl FileStateCache {
    /// A cache holding at most `max_entries` entries (at least 1) and `max_bytes` bytes of
    /// content (at least 1). An entry whose content alone is larger than `max_bytes` is kept
    /// without its content (its mtime, hash and view still count as a read); past the byte
    /// bound, the least recently used entries lose their content the same way, and stay.
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        let max_bytes = max_bytes.max(1);
        let cap = NonZeroUsize::new(max_entries).unwrap_or(NonZeroUsize::MIN);
        Self {
            inner: Arc::new(Mutex::new(CacheInner {
                lru: LruCache::new(cap),
                bytes: 0,
                max_bytes,
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, CacheInner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The entry for `path`, marking it most recently used.
    pub fn get(&self, path: &Path) -> Option<FileState> {
        self.lock().lru.get(&normalize_key(path)).cloned()
    }

    /// Records `state` for `path`. Past the entry bound the least recently used entry is
    /// evicted; past the byte bound the least recently used entries lose their cached
    /// content but stay, since the read-before-write rule needs only their mtime, hash and
    /// flags (a large Read or Write must not make an earlier Read of another file count as
    /// unread). Content larger than the whole byte bound is not cached at all.
    pub fn insert(&self, path: &Path, mut state: FileState) {
        let mut inner = self.lock();
        let key = normalize_key(path);
        if state.content.len() > inner.max_bytes {
            state.content = String::new();
        }
        let cost = state.cost();
        // `push` returns the entry replaced under the same key, or the one evicted by the
        // entry bound: either way its bytes are gone.
        if let Some((_, old)) = inner.lru.push(key, state) {
            inner.bytes -= old.cost();
        }
        inner.bytes += cost;
        let max_bytes = inner.max_bytes;
        let mut bytes = inner.bytes;
        if bytes > max_bytes {
            // Least recently used first. The entry just inserted is the most recent and fits
            // on its own, so the others' content always makes enough room.
            for (_, entry) in inner.lru.iter_mut().rev() {
                if bytes <= max_bytes {
                    break;
                }
                bytes -= entry.cost();
                entry.content = String::new();
            }
            inner.bytes = bytes;
        }
    }

    /// Forgets `path`.
    pub fn remove(&self, path: &Path) -> Option<FileState> {
        let mut inner = self.lock();
        let removed = inner.lru.pop(&normalize_key(path));
        if let Some(old) = &removed {
            inner.bytes -= old.cost();
        }
        removed
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.lock().lru.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The total content bytes held.
    pub fn total_bytes(&self) -> usize {
        self.lock().bytes
    }

    /// A deep copy, for a sub-agent that must not share its parent's cache.
    pub fn deep_clone(&self) -> Self {
        let inner = self.lock();
        let mut lru = LruCache::new(inner.lru.cap());
        for (k, v) in inner.lru.iter().rev() {
            lru.push(k.clone(), v.clone());
        }
        Self {
            inner: Arc::new(Mutex::new(CacheInner {
                lru,
                bytes: inner.bytes,
                max_bytes: inner.max_bytes,
            })),
        }
    }

    /// The stale-edit rule, called by Edit and Write (and again right before the write).
    ///
    /// - a file that does not exist passes (writing creates it);
    /// - no entry, or a partial-view entry: [`StaleFile::NotRead`];
    /// - the recorded mtime and size: passes;
    /// - any other mtime (newer, or older: `cp -p` or `tar x` put an older file back) or
    ///   size: the file's bytes are hashed; the same hash as recorded passes (and the
    ///   entry's mtime is refreshed), anything else is [`StaleFile::Modified`].
    pub fn check_fresh(&self, path: &Path) -> Result<(), StaleFile> {
        let meta = match fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(source) => {
                return Err(StaleFile::Io {
                    path: path.to_owned(),
                    source,
                });
            }
        };
        let Some(entry) = self.get(path) else {
            return Err(StaleFile::NotRead);
        };
        if entry.is_partial_view {
            return Err(StaleFile::NotRead);
        }
        let mtime = mtime_ms(&meta);
        let same_size = entry.disk_hash.is_none_or(|h| h.len == meta.len());
        if mtime == entry.mtime_ms && same_size {
            return Ok(());
        }
        let bytes = fs::read(path).map_err(|source| StaleFile::Io {
            path: path.to_owned(),
            source,
        })?;
        if entry.disk_hash == Some(ContentHash::of(&bytes)) {
            let mut refreshed = entry;
            refreshed.mtime_ms = mtime;
            self.insert(path, refreshed);
            Ok(())
        } else {
            Err(StaleFile::Modified)
        }
    }
}

/// A file's mtime in whole milliseconds since the Unix epoch (0 when unknown).
pub fn mtime_ms(meta: &fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The current time in the same unit as [`mtime_ms`].
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The cache key of `path`: lexically normal. Not Unicode-normalised: tools resolve paths
/// to the form on disk ([`expand_path`]), and on Linux two forms are two files.
fn normalize_key(path: &Path) -> PathBuf {
    normalize_lexically(path)
}

/// Creates `dir` readable by this user only (0700 on Unix), in its parent, which must
/// exist: for the places tools write output other users must not read (persisted results,
/// MCP resources). An existing directory is left as it is.
///
/// The parent is never made: a results directory inside a session's directory is created on
/// first use, and a call still finishing while the session's directory is removed (an exit
/// on a second signal removes it while the runtime runs on) must not make it again, to be
/// left behind. A parent that does not exist is an error (`NotFound`).
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        created => created,
    }
}

/// This user's own directory in the temp directory (`toolwright-<uid>`), made owner-only:
/// where scratch files and output go when the session has no directory of its own. Refused
/// (`PermissionDenied`) when something else holds the name (another user's directory, a
/// link, one others may write to): the shared temp directory itself, or a name there anyone
/// may take first, would let another user read the output or plant links under it. An error
/// names the directory.
#[cfg(unix)]
pub fn private_temp_dir() -> io::Result<PathBuf> {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    let uid = nix::unistd::geteuid();
    let dir = std::env::temp_dir().join(format!("toolwright-{uid}"));
    // Errors name the directory (an `io::Error` alone does not).
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", dir.display()));
    create_private_dir(&dir).map_err(named)?;
    let meta = fs::symlink_metadata(&dir).map_err(named)?;
    if !meta.is_dir() || meta.uid() != uid.as_raw() || meta.permissions().mode() & 0o077 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is not a private directory of this user; remove it, or give the session a results directory",
                dir.display()
            ),
        ));
    }
    Ok(dir)
}

/// Resolves a path the way tools see it (Claude Code's `expandPath`): trims whitespace,
/// expands a leading `~` to `home`, makes it absolute against `cwd` and collapses `.` and
/// `..` lexically (symlinks are not resolved). Without a `home`, `~` is not expanded and
/// reads as a name under `cwd`: callers that write must refuse such a path first (the file
/// tools do, in `tools-builtin`'s `absolute_path`).
///
/// Unicode: the path is kept in the form given, because on Linux `café` in NFC and in NFD
/// are two different names (an archive made on macOS unpacks decomposed names). Component by
/// component, only when nothing exists under the given form and something does under its
/// NFC (or else NFD) form is that form used, so a name typed composed still finds a
/// decomposed file. Claude Code puts every path in NFC, which on Linux misses decomposed
/// files and makes Write create a second file beside them. Permission rules compare in NFC.
pub fn expand_path(raw: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    let raw = raw.trim();
    let path = match (raw.strip_prefix('~'), home) {
        (Some(""), Some(home)) => home.to_path_buf(),
        (Some(rest), Some(home)) if rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(raw),
    };
    let absolute = if path.is_absolute() {
        path
    } else {
        cwd.join(path)
    };
    existing_unicode_form(normalize_lexically(&absolute))
}

/// `path` with each component in the Unicode form that exists on disk (see
/// [`expand_path`]): component by component from the root, a name that does not exist as
/// given is replaced by its NFC (else NFD) form when that one exists; from the first
/// component that exists in no form, the rest is kept as given (a new file goes into the
/// directory that is there, not into a twin of it). Plain ASCII paths (the usual case) are
/// returned without touching the disk.
fn existing_unicode_form(path: PathBuf) -> PathBuf {
    if path.to_str().is_none_or(str::is_ascii) {
        return path;
    }
    let mut out = PathBuf::new();
    let mut components = path.components();
    for component in components.by_ref() {
        let Component::Normal(name) = component else {
            out.push(component.as_os_str());
            continue;
        };
        let given = out.join(name);
        if given.symlink_metadata().is_ok() {
            out = given;
            continue;
        }
        let other_form = name.to_str().and_then(|text| {
            [
                text.nfc().collect::<String>(),
                text.nfd().collect::<String>(),
            ]
            .into_iter()
            .filter(|form| form != text)
            .map(|form| out.join(form))
            .find(|candidate| candidate.symlink_metadata().is_ok())
        });
        match other_form {
            Some(found) => out = found,
            None => {
                out = given;
                break;
            }
        }
    }
    out.extend(components);
    out
}

/// Collapses `.` and `..` components and duplicate separators without touching the disk.
/// `..` at the root stays at the root; a relative path keeps the `..`s that climb above
/// its start (`../../x`, `a/../../b` is `../b`).
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_lexically_keeps_the_parents_a_relative_path_climbs() {
        for (given, expected) in [
            ("../../x", "../../x"),
            ("a/../../b", "../b"),
            ("a/b/../../..", ".."),
            ("./a/./b/", "a/b"),
            ("a/..", "."),
            ("/../x", "/x"),
            ("/a/../../b", "/b"),
            ("//a//b/../c", "/a/c"),
        ] {
            assert_eq!(
                normalize_lexically(Path::new(given)),
                Path::new(expected),
                "{given}"
            );
        }
    }

    fn state(content: &str) -> FileState {
        FileState::written(content.to_owned(), 1)
    }

    #[test]
    fn entry_bound_evicts_least_recently_used() {
        let cache = FileStateCache::new(2, usize::MAX);
        cache.insert(Path::new("/a"), state("a"));
        cache.insert(Path::new("/b"), state("b"));
        assert!(cache.get(Path::new("/a")).is_some()); // a is now most recent
        cache.insert(Path::new("/c"), state("c"));
        assert!(cache.get(Path::new("/b")).is_none());
        assert!(cache.get(Path::new("/a")).is_some());
        assert!(cache.get(Path::new("/c")).is_some());
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn byte_bound_counts_replacements_and_keeps_oversize_entries_without_content() {
        let cache = FileStateCache::new(100, 10);
        cache.insert(Path::new("/a"), state("aaaa"));
        cache.insert(Path::new("/b"), state("bbbb"));
        assert_eq!(cache.total_bytes(), 8);
        // Replacing an entry accounts for the old size.
        cache.insert(Path::new("/b"), state("bb"));
        assert_eq!(cache.total_bytes(), 6);
        // An entry over the whole byte bound keeps its metadata, not its content, and takes
        // nothing from the others.
        let mut big = state(&"x".repeat(11));
        big.mtime_ms = 7;
        cache.insert(Path::new("/big"), big);
        let kept = cache.get(Path::new("/big")).unwrap();
        assert_eq!((kept.content.as_str(), kept.mtime_ms), ("", 7));
        assert_eq!(cache.get(Path::new("/a")).unwrap().content, "aaaa");
        assert_eq!(cache.get(Path::new("/b")).unwrap().content, "bb");
        assert_eq!(cache.total_bytes(), 6);
        // Removing an entry gives its bytes back.
        cache.remove(Path::new("/a"));
        assert_eq!(cache.total_bytes(), 2);
    }

    /// Under byte pressure the least recently used entries lose their content, not their
    /// place: a file read before a few large ones still counts as read.
    #[test]
    fn byte_pressure_drops_content_not_entries() {
        let cache = FileStateCache::new(100, 10);
        let mut a = state("aaaa");
        a.mtime_ms = 5;
        cache.insert(Path::new("/a"), a);
        cache.insert(Path::new("/b"), state("bbbb"));
        cache.insert(Path::new("/c"), state("cccc"));
        let kept = cache.get(Path::new("/a")).expect("/a is still known");
        assert_eq!((kept.content.as_str(), kept.mtime_ms), ("", 5));
        assert_eq!(kept.disk_hash, Some(ContentHash::of(b"aaaa")));
        assert_eq!(cache.get(Path::new("/b")).unwrap().content, "bbbb");
        assert_eq!(cache.get(Path::new("/c")).unwrap().content, "cccc");
        assert_eq!(cache.len(), 3);
        assert!(cache.total_bytes() <= 10, "{}", cache.total_bytes());
        // /a was used last: it keeps its (empty) entry, the next least recent loses content.
        cache.insert(Path::new("/d"), state("dddddd"));
        assert_eq!(cache.len(), 4);
        assert!(cache.total_bytes() <= 10, "{}", cache.total_bytes());
        assert_eq!(cache.get(Path::new("/d")).unwrap().content, "dddddd");
        // The entry bound still evicts whole entries.
        let small = FileStateCache::new(2, 10);
        for p in ["/x", "/y", "/z"] {
            small.insert(Path::new(p), state("1"));
        }
        assert!(small.get(Path::new("/x")).is_none());
        assert_eq!(small.len(), 2);
    }

    #[test]
    fn a_zero_byte_bound_still_remembers_the_last_read() {
        let cache = FileStateCache::new(100, 0);
        cache.insert(Path::new("/a"), state("aaaa"));
        let kept = cache.get(Path::new("/a")).expect("the read is remembered");
        assert_eq!(kept.content, "");
    }

    #[test]
    fn keys_are_normalised() {
        let cache = FileStateCache::default();
        cache.insert(Path::new("/p/./q/../r//file"), state("x"));
        assert!(cache.get(Path::new("/p/r/file")).is_some());
        // NFD "é" and NFC "é" are two files on Linux, so two keys.
        cache.insert(Path::new("/caf\u{65}\u{301}"), state("y"));
        assert!(cache.get(Path::new("/caf\u{e9}")).is_none());
    }

    #[test]
    fn expand_path_keeps_the_unicode_form_that_exists() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let decomposed = "cafe\u{301}.txt";
        let composed = "caf\u{e9}.txt";
        std::fs::write(root.join(decomposed), "d").unwrap();
        // The decomposed file is found under both spellings.
        assert_eq!(expand_path(decomposed, &root, None), root.join(decomposed));
        assert_eq!(expand_path(composed, &root, None), root.join(decomposed));
        // With both on disk, each name is its own file.
        std::fs::write(root.join(composed), "c").unwrap();
        assert_eq!(expand_path(decomposed, &root, None), root.join(decomposed));
        assert_eq!(expand_path(composed, &root, None), root.join(composed));
        // A name that exists in no form stays as given.
        let new = "nai\u{308}ve.txt";
        assert_eq!(expand_path(new, &root, None), root.join(new));
        // Each component in its own form: a composed directory holding a decomposed file,
        // typed the other way round; and a new file goes into the directory that exists.
        std::fs::create_dir(root.join("d\u{e9}j\u{e0}")).unwrap();
        std::fs::write(
            root.join("d\u{e9}j\u{e0}").join("re\u{301}sume\u{301}"),
            "r",
        )
        .unwrap();
        assert_eq!(
            expand_path("de\u{301}ja\u{300}/r\u{e9}sum\u{e9}", &root, None),
            root.join("d\u{e9}j\u{e0}").join("re\u{301}sume\u{301}")
        );
        assert_eq!(
            expand_path("de\u{301}ja\u{300}/new.md", &root, None),
            root.join("d\u{e9}j\u{e0}").join("new.md")
        );
    }

    #[test]
    fn expand_path_handles_home_relative_and_dots() {
        let cwd = Path::new("/work/proj");
        let home = Path::new("/home/u");
        assert_eq!(
            expand_path("  src/../lib.rs ", cwd, Some(home)),
            PathBuf::from("/work/proj/lib.rs")
        );
        assert_eq!(
            expand_path("~/x", cwd, Some(home)),
            PathBuf::from("/home/u/x")
        );
        assert_eq!(expand_path("~", cwd, Some(home)), PathBuf::from("/home/u"));
        assert_eq!(
            expand_path("/../../etc", cwd, Some(home)),
            PathBuf::from("/etc")
        );
        assert_eq!(
            expand_path("~other/x", cwd, Some(home)),
            PathBuf::from("/work/proj/~other/x")
        );
    }

    #[test]
    fn stale_rule() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        let cache = FileStateCache::default();

        // A file that does not exist needs no read.
        cache.check_fresh(&path).unwrap();

        fs::write(&path, "one").unwrap();
        assert!(matches!(cache.check_fresh(&path), Err(StaleFile::NotRead)));

        let meta = fs::metadata(&path).unwrap();
        cache.insert(
            &path,
            FileState::read(
                "one".into(),
                mtime_ms(&meta),
                ContentHash::of(b"one"),
                1,
                None,
            ),
        );
        cache.check_fresh(&path).unwrap();

        // Same content, newer mtime: not stale, and the entry's mtime follows.
        let later = SystemTime::now() + std::time::Duration::from_secs(5);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(later)
            .unwrap();
        cache.check_fresh(&path).unwrap();
        assert_eq!(
            cache.get(&path).unwrap().mtime_ms,
            mtime_ms(&fs::metadata(&path).unwrap())
        );

        // Changed content with a newer mtime: stale.
        fs::write(&path, "two").unwrap();
        let later = SystemTime::now() + std::time::Duration::from_secs(10);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(later)
            .unwrap();
        let err = cache.check_fresh(&path).unwrap_err();
        assert!(matches!(err, StaleFile::Modified));
        assert_eq!(err.to_string(), MODIFIED_MESSAGE);

        // Other content put back with an older mtime (`cp -p backup f.txt`): stale too.
        fs::write(&path, "one").unwrap();
        let meta = fs::metadata(&path).unwrap();
        cache.insert(
            &path,
            FileState::read(
                "one".into(),
                mtime_ms(&meta),
                ContentHash::of(b"one"),
                1,
                None,
            ),
        );
        fs::write(&path, "older backup").unwrap();
        let earlier = SystemTime::now() - std::time::Duration::from_secs(3600);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(earlier)
            .unwrap();
        assert!(matches!(cache.check_fresh(&path), Err(StaleFile::Modified)));

        // A partial view does not count as a read.
        let mut partial = FileState::written("two".into(), u64::MAX);
        partial.is_partial_view = true;
        cache.insert(&path, partial);
        assert!(matches!(cache.check_fresh(&path), Err(StaleFile::NotRead)));
    }

    #[test]
    fn reads_of_the_same_content_add_up_to_the_whole_file() {
        let hash = ContentHash::of(b"ten lines");
        let read = |first, last, previous: Option<&FileState>| {
            let mut s = FileState::read(String::new(), 1, hash, first, None);
            s.merge_seen(first, last, 10, previous);
            s
        };
        let head = read(1, 4, None);
        assert!(head.truncated);
        assert_eq!(head.seen_lines, [(1, 4)]);
        // A far range does not cover the gap.
        let tail = read(9, 10, Some(&head));
        assert!(tail.truncated);
        assert_eq!(tail.seen_lines, [(1, 4), (9, 10)]);
        // The gap read: the whole file has been seen.
        let all = read(5, 8, Some(&tail));
        assert!(!all.truncated);
        assert!(all.seen_lines.is_empty());
        // After that, a small range of the same content is still whole.
        assert!(!read(3, 3, Some(&all)).truncated);
        // Other content: what was seen before counts for nothing.
        let mut other = FileState::read(String::new(), 2, ContentHash::of(b"x"), 5, None);
        other.merge_seen(5, 10, 10, Some(&tail));
        assert!(other.truncated);
        // A written entry saw everything.
        let mut after_write = FileState::read(String::new(), 3, ContentHash::of(b"w"), 2, None);
        after_write.merge_seen(2, 2, 10, Some(&FileState::written("w".into(), 3)));
        assert!(!after_write.truncated);
        // An empty file is whole.
        let mut empty = FileState::read(String::new(), 1, hash, 1, None);
        empty.merge_seen(1, 0, 0, None);
        assert!(!empty.truncated);
    }

    #[test]
    fn what_reads_showed_altered_adds_up_until_a_write() {
        let hash = ContentHash::of(b"ten lines");
        let read = |first, last, cut: bool, previous: Option<&FileState>| {
            let mut s = FileState::read(String::new(), 1, hash, first, None);
            s.lines_cut = cut;
            s.merge_seen(first, last, 10, previous);
            s
        };
        // The range with the long line, then the rest: every line seen, one of them cut.
        let head = read(1, 5, true, None);
        assert!(head.truncated && head.lines_cut);
        let all = read(6, 10, false, Some(&head));
        assert!(!all.truncated);
        assert!(all.lines_cut);
        // Read again without the long line: still cut (same content).
        assert!(read(6, 6, false, Some(&all)).lines_cut);
        // Other content: nothing carries over.
        let mut other = FileState::read(String::new(), 2, ContentHash::of(b"x"), 1, None);
        other.merge_seen(1, 10, 10, Some(&all));
        assert!(!other.lines_cut && !other.not_utf8);
        // The model wrote this content itself: it saw it whole.
        let mut written = FileState::written("w".into(), 3);
        let mut after_write = FileState::read(String::new(), 3, ContentHash::of(b"w"), 1, None);
        after_write.lines_cut = true;
        after_write.merge_seen(1, 10, 10, Some(&written));
        assert!(!after_write.lines_cut && !after_write.truncated);
        // Unless what it wrote was an edit of a file it saw altered, and this Read did not
        // show it all.
        written.not_utf8 = true;
        written.lines_cut = true;
        let mut after_edit = FileState::read(String::new(), 3, ContentHash::of(b"w"), 2, None);
        after_edit.merge_seen(2, 10, 10, Some(&written));
        assert!(after_edit.not_utf8 && after_edit.lines_cut);
        // A Read that showed every line, none cut and all UTF-8, says all there is: what
        // earlier Reads showed altered (a line since shortened by an Edit) no longer counts.
        let mut whole = FileState::read(String::new(), 3, ContentHash::of(b"w"), 1, None);
        whole.merge_seen(1, 10, 10, Some(&written));
        assert!(!whole.not_utf8 && !whole.lines_cut);
        // One that cut a line still adds up with what came before.
        let mut cut = FileState::read(String::new(), 3, ContentHash::of(b"w"), 1, None);
        cut.lines_cut = true;
        cut.merge_seen(1, 10, 10, Some(&written));
        assert!(cut.not_utf8 && cut.lines_cut);
    }

    #[test]
    fn streamed_hash_equals_whole_hash() {
        let mut hasher = ContentHasher::default();
        hasher.update(b"hello ");
        hasher.update(b"world");
        assert_eq!(hasher.finish(), ContentHash::of(b"hello world"));
        assert_ne!(ContentHash::of(b"a"), ContentHash::of(b"b"));
    }

    #[test]
    fn deep_clone_is_independent() {
        let cache = FileStateCache::default();
        cache.insert(Path::new("/a"), state("a"));
        let copy = cache.deep_clone();
        copy.insert(Path::new("/b"), state("b"));
        assert!(cache.get(Path::new("/b")).is_none());
        assert!(copy.get(Path::new("/a")).is_some());
    }
}
