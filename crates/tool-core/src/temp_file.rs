//! The temporary files of atomic writes: how they are named, and which ones a writer that is
//! gone left behind.
//!
//! A writer puts its bytes in `.NAME.tw-tmp.PID.TAG.N` beside the file, then renames (or
//! links) it into place. One killed mid-write leaves that file; the next write in the
//! directory removes it ([`is_abandoned_temp`]). A PID means something only in its PID
//! namespace and on its host: the `TAG` says where the writer ran ([`writer_tag`]), so that
//! a live writer in another container sharing the directory, or on another host over NFS, is
//! never taken for a dead one. Such a file (and one named before tags, `.NAME.tw-tmp.PID.N`)
//! is removed only once it is [`STALE_TEMP_AGE`] old.
//!
//! A write through a symlink replaces the file the link leads to, never the link itself
//! ([`write_target`]).
//!
//! [`TempFile`] is that temporary file for the writers that need no more than create,
//! write, sync and rename (the trust record, the task id counter, saved large results);
//! the file tools' writer (tools-builtin's `fsutil`) works relative to a directory handle
//! and keeps what a file is (owner, ACL, extended attributes), with the same names.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// The marker in the name of a writer's temporary file (see the [module docs](self)).
pub const TEMP_MARKER: &str = ".tw-tmp.";

/// How old a temporary file written from another PID namespace or host (or named without a
/// tag) must be before it counts as a dead writer's: no write takes this long.
pub const STALE_TEMP_AGE: Duration = Duration::from_secs(15 * 60);

/// The most bytes a temporary file's name adds to the file's stem: the leading dot, the
/// marker, a PID (10 digits), a dot, the tag (8), a dot and a counter (20 digits). A name
/// stays within 255 bytes when its stem is at most `255 - TEMP_NAME_OVERHEAD`.
pub const TEMP_NAME_OVERHEAD: usize = 1 + TEMP_MARKER.len() + 10 + 1 + 8 + 1 + 20;

/// Where this process writes from, as 8 hex digits: a hash of its PID namespace (where
/// `/proc` shows it) and its host name (the same for every process of the namespace and
/// host, whatever its build).
pub fn writer_tag() -> &'static str {
    static TAG: OnceLock<String> = OnceLock::new();
    TAG.get_or_init(|| {
        let namespace = std::fs::read_link("/proc/self/ns/pid")
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        #[cfg(unix)]
        let host = nix::unistd::gethostname()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default();
        #[cfg(not(unix))]
        let host = String::new();
        // FNV-1a: stable across builds and Rust versions (std's hasher is not).
        let mut hash: u32 = 0x811c_9dc5;
        for byte in namespace.bytes().chain([0]).chain(host.trim().bytes()) {
            hash ^= u32::from(byte);
            hash = hash.wrapping_mul(0x0100_0193);
        }
        format!("{hash:08x}")
    })
}

/// The start of this process's temporary file names for a file whose name starts with
/// `stem`: `.STEM.tw-tmp.PID.TAG.` (a counter follows).
pub fn temp_prefix(stem: &OsStr) -> OsString {
    let mut prefix = OsString::from(".");
    prefix.push(stem);
    prefix.push(format!(
        "{TEMP_MARKER}{}.{}.",
        std::process::id(),
        writer_tag()
    ));
    prefix
}

/// Whether the directory entry `name` is a temporary file that a writer which is gone left
/// behind, and may be removed: one of this namespace and host ([`writer_tag`]) whose PID is
/// not alive (never this process's own); any other only once `modified_age` (asked only
/// then) is at least [`STALE_TEMP_AGE`]. A name that is not a temporary file's is not.
pub fn is_abandoned_temp(name: &str, modified_age: impl FnOnce() -> Option<Duration>) -> bool {
    if !name.starts_with('.') {
        return false;
    }
    let Some((_, rest)) = name.rsplit_once(TEMP_MARKER) else {
        return false;
    };
    let parts: Vec<&str> = rest.split('.').collect();
    let (pid, tag, counter) = match parts.as_slice() {
        [pid, tag, n] => (*pid, Some(*tag), *n),
        [pid, n] => (*pid, None, *n),
        _ => return false,
    };
    let (Ok(pid), Ok(_)) = (pid.parse::<u32>(), counter.parse::<u64>()) else {
        return false;
    };
    // A tag is 8 hex digits ([`writer_tag`]); a name with anything else there is no
    // writer's temporary file (some other program's hidden file).
    if tag.is_some_and(|t| t.len() != 8 || !t.bytes().all(|b| b.is_ascii_hexdigit())) {
        return false;
    }
    if tag == Some(writer_tag()) {
        return pid != std::process::id() && !process_alive(pid);
    }
    modified_age().is_some_and(|age| age >= STALE_TEMP_AGE)
}

/// The file an atomic write to `path` replaces: `path` when it is no symlink, else where
/// its chain of links finally leads, so that the link stays a link. The last target need
/// not exist: writing through a dangling link creates it, as an in-place write would. At
/// most 40 links are followed, as the kernel does; past that the error is `ELOOP`'s.
pub fn write_target(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let next = std::fs::read_link(&current)?;
                // A relative target is relative to the link's directory (an absolute one
                // replaces the whole path when joined).
                current = match current.parent() {
                    Some(parent) => parent.join(next),
                    None => next,
                };
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        "too many levels of symbolic links",
    ))
}

/// A writer's temporary file, `.STEM.tw-tmp.PID.TAG.N` in the directory of the file it will
/// become: created new (never through a link or over a file at that name), written, synced,
/// then renamed (or linked) into place. Dropped before [`TempFile::rename_to`] placed it, it
/// is removed: a failed write leaves nothing behind.
#[derive(Debug)]
pub struct TempFile {
    path: PathBuf,
    file: File,
    placed: bool,
}

/// Tells this process's temporary files apart (with its PID and tag, [`temp_prefix`]).
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl TempFile {
    /// Creates a temporary file for a file named `STEM...` in `dir`, with permission bits
    /// `mode` (on Unix; cut by the umask: [`TempFile::file`]'s `set_permissions` sets them
    /// exactly). Fails as creating a file in `dir` fails (a missing or read-only directory,
    /// no permission, no space); a name taken by another file is skipped, never opened.
    pub fn create(dir: &Path, stem: &OsStr, mode: u32) -> io::Result<TempFile> {
        let prefix = temp_prefix(stem);
        loop {
            let mut name = prefix.clone();
            name.push(TEMP_COUNTER.fetch_add(1, Ordering::Relaxed).to_string());
            let path = dir.join(name);
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
            #[cfg(not(unix))]
            let _ = mode;
            match options.open(&path) {
                Ok(file) => {
                    return Ok(TempFile {
                        path,
                        file,
                        placed: false,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Where the temporary file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The open file, to set its owner or mode before it is written.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Writes `bytes` and flushes them to the disk.
    pub fn write_synced(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)?;
        self.file.sync_all()
    }

    /// Hard-links the file at `target`, which must not exist: linking never replaces a file
    /// (`AlreadyExists` when one is there). The temporary name stays until the value is
    /// dropped, which removes it, so the file then has `target` as its only name. Like a
    /// rename, the link survives a crash only once the directory is synced ([`sync_dir`]).
    pub fn link_to(&self, target: &Path) -> io::Result<()> {
        std::fs::hard_link(&self.path, target)
    }

    /// Renames the file over `target` (replacing whatever file had that name). The rename
    /// survives a crash only once the directory is synced ([`sync_dir`]), which this leaves to
    /// the caller. On failure the temporary file is removed.
    pub fn rename_to(mut self, target: &Path) -> io::Result<()> {
        std::fs::rename(&self.path, target)?;
        self.placed = true;
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.placed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Removes from `dir` the temporary files that writers which are gone left there
/// ([`is_abandoned_temp`]; a writer killed mid-write leaves one). Best effort: what cannot
/// be read or removed is left alone, and only regular files are removed.
pub fn remove_abandoned_temps(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(name) = file_name.to_str() else {
            continue;
        };
        let age = || entry.metadata().ok()?.modified().ok()?.elapsed().ok();
        if is_abandoned_temp(name, age) && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Syncs the directory `dir`, making a rename in it durable across a crash. Not every
/// platform or file system can sync a directory: callers let a failure go (the rename
/// stands; only its durability is not promised).
pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Whether process `pid` exists here (signal 0; a process of another user counts too).
fn process_alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        // No process has a PID past `i32::MAX`.
        let Ok(raw) = i32::try_from(pid) else {
            return false;
        };
        !matches!(
            nix::sys::signal::kill(nix::unistd::Pid::from_raw(raw), None),
            Err(nix::errno::Errno::ESRCH)
        )
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_lands_where_a_chain_of_links_leads() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("sub")).unwrap();
        // first -> sub/second (relative), second -> ../target (relative to sub/), target
        // missing: the write creates it.
        symlink("sub/second", d.join("first")).unwrap();
        symlink("../target", d.join("sub/second")).unwrap();
        assert_eq!(
            write_target(&d.join("first")).unwrap(),
            d.join("sub/../target")
        );
        // No link: the path itself; an absolute target replaces the path.
        assert_eq!(write_target(&d.join("plain")).unwrap(), d.join("plain"));
        symlink(d.join("abs"), d.join("to-abs")).unwrap();
        assert_eq!(write_target(&d.join("to-abs")).unwrap(), d.join("abs"));
        // A loop is the kernel's error, not a hang.
        symlink("loop-b", d.join("loop-a")).unwrap();
        symlink("loop-a", d.join("loop-b")).unwrap();
        let err = write_target(&d.join("loop-a")).unwrap_err();
        assert!(err.to_string().contains("too many levels"), "{err}");
    }

    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    }

    #[test]
    fn only_a_dead_writer_of_this_namespace_is_abandoned_at_once() {
        let (tag, dead, own) = (writer_tag(), dead_pid(), std::process::id());
        let fresh = || Some(Duration::from_secs(1));
        let old = || Some(STALE_TEMP_AGE);
        assert_eq!(tag.len(), 8);
        // This namespace: the PID decides.
        assert!(is_abandoned_temp(
            &format!(".f.tw-tmp.{dead}.{tag}.0"),
            fresh
        ));
        assert!(!is_abandoned_temp(&format!(".f.tw-tmp.1.{tag}.0"), old));
        assert!(!is_abandoned_temp(&format!(".f.tw-tmp.{own}.{tag}.3"), old));
        // Another namespace or host, or no tag: the age decides.
        for name in [
            format!(".f.tw-tmp.{dead}.0badc0de.0"),
            ".f.tw-tmp.1.0badc0de.0".to_owned(),
            format!(".f.tw-tmp.{dead}.0"),
        ] {
            assert!(!is_abandoned_temp(&name, fresh), "{name}");
            assert!(is_abandoned_temp(&name, old), "{name}");
            assert!(!is_abandoned_temp(&name, || None), "{name}");
        }
        // Not a temporary file's name.
        for name in [
            format!("f.tw-tmp.{dead}.{tag}.0"),
            format!(".f.tw-tmp.x.{tag}.0"),
            format!(".f.tw-tmp.{dead}.{tag}.x"),
            format!(".f.tw-tmp.{dead}.backup.0"),
            format!(".f.tw-tmp.{dead}.0badc0de1.0"),
            ".f.txt".to_owned(),
        ] {
            assert!(!is_abandoned_temp(&name, old), "{name}");
        }
        assert!(
            temp_prefix(OsStr::new("f.txt"))
                .to_string_lossy()
                .starts_with(".f.txt.tw-tmp.")
        );
    }

    #[test]
    fn a_temp_file_is_removed_unless_placed() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let entries = || {
            let mut names: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        };
        // Dropped unplaced (a failed write): nothing stays.
        let mut temp = TempFile::create(d, OsStr::new("rec.json"), 0o600).unwrap();
        let name = temp
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with(".rec.json.tw-tmp."), "{name}");
        // Its name is one the sweep knows, and never its own writer's to sweep.
        assert!(!is_abandoned_temp(&name, || Some(STALE_TEMP_AGE)));
        let mode = temp.file().metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & 0o077, 0, "owner-only at creation: {mode:o}");
        temp.write_synced(b"half").unwrap();
        drop(temp);
        assert!(entries().is_empty(), "{:?}", entries());
        // Placed: the target holds the bytes, no temporary file is left.
        std::fs::write(d.join("rec.json"), b"old").unwrap();
        let mut temp = TempFile::create(d, OsStr::new("rec.json"), 0o644).unwrap();
        temp.write_synced(b"new").unwrap();
        temp.rename_to(&d.join("rec.json")).unwrap();
        sync_dir(d).unwrap();
        assert_eq!(std::fs::read(d.join("rec.json")).unwrap(), b"new");
        assert_eq!(entries(), ["rec.json"]);
        // A rename that fails (a directory in the way) leaves the target and no temporary.
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/x"), b"x").unwrap();
        let mut temp = TempFile::create(d, OsStr::new("sub"), 0o600).unwrap();
        temp.write_synced(b"file").unwrap();
        assert!(temp.rename_to(&d.join("sub")).is_err());
        assert_eq!(entries(), ["rec.json", "sub"]);
        // A missing directory is the creation's error.
        let err = TempFile::create(&d.join("missing"), OsStr::new("f"), 0o600).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn the_sweep_removes_only_files_of_writers_that_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let (tag, dead) = (writer_tag(), dead_pid());
        let gone = format!(".f.tw-tmp.{dead}.{tag}.0");
        let alive = format!(".f.tw-tmp.1.{tag}.0");
        let foreign_fresh = format!(".f.tw-tmp.{dead}.0badc0de.0");
        let a_dir = format!(".g.tw-tmp.{dead}.{tag}.0");
        for name in [&gone, &alive, &foreign_fresh, &"f".to_owned()] {
            std::fs::write(d.join(name), b"x").unwrap();
        }
        std::fs::create_dir(d.join(&a_dir)).unwrap();
        remove_abandoned_temps(d);
        assert!(!d.join(&gone).exists());
        for kept in [&alive, &foreign_fresh, &"f".to_owned(), &a_dir] {
            assert!(d.join(kept).exists(), "{kept} was removed");
        }
        // A directory that cannot be read: nothing happens, no panic.
        remove_abandoned_temps(&d.join("missing"));
    }
}
