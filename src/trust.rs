//! Workspace trust, read from and written to the record Claude Code keeps
//! (`~/.claude.json`, or `$CLAUDE_CONFIG_DIR/.claude.json`:
//! `projects["<abs path>"].hasTrustDialogAccepted`), so a folder trusted in one tool is
//! trusted in the other.
//!
//! A directory is trusted when its own entry, or its git root's, says so. Parents do not
//! trust children: Claude Code walks up the parents only for projects with no allow rules,
//! hooks or MCP servers of their own, which have nothing to trust anyway.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// `CLAUDE_CONFIG_DIR` and `HOME` as they were before the settings' `env` was applied
/// (see `main.rs`): a settings file cannot move the record that decides whether its own
/// folder is trusted.
static LOCATION: std::sync::OnceLock<[Option<OsString>; 2]> = std::sync::OnceLock::new();

/// Records where the trust record is, from the environment as it is now. Only the first
/// call counts; without one, the record follows the environment of the moment.
pub fn remember_location() {
    let _ = LOCATION.set([
        std::env::var_os("CLAUDE_CONFIG_DIR"),
        std::env::var_os("HOME"),
    ]);
}

/// `CLAUDE_CONFIG_DIR` or `HOME` as [`remember_location`] recorded it, else as it is now.
fn location_var(name: &str) -> Option<OsString> {
    match LOCATION.get() {
        Some([config, home]) => if name == "HOME" { home } else { config }.clone(),
        None => std::env::var_os(name),
    }
}

/// Where the trust record is.
pub fn record_path() -> Option<PathBuf> {
    if let Some(dir) = location_var("CLAUDE_CONFIG_DIR").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir).join(".claude.json"));
    }
    location_var("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".claude.json"))
}

/// The home folder (`HOME`, as the record's location was read), by its real path.
fn home_dir() -> Option<PathBuf> {
    let home = location_var("HOME").filter(|h| !h.is_empty())?;
    std::fs::canonicalize(home).ok()
}

/// Why trust is not recorded for `dir` (absolute, canonical) when it is the home folder:
/// Claude Code trusts the home folder for the session only and never writes it down, and
/// neither does Toolwright. A record would trust every folder under it without a
/// repository of its own (Claude Code, which reads the record too, takes a parent's trust
/// for a folder; Toolwright a git root's, and home can be one: a dotfiles `~/.git`).
pub fn home_refusal(dir: &Path) -> Option<String> {
    (home_dir().as_deref() == Some(dir)).then(|| {
        format!(
            "{} is the home folder, whose trust is not recorded: it is trusted for one session at a time, as in Claude Code (`toolwright agent` started there asks), since a record would trust every folder under it without a repository of its own",
            shell_word(dir)
        )
    })
}

/// The record at `path`: a missing or empty file (0 bytes, or only white space: nothing is
/// in it to lose) is an empty record; one that is not JSON is an error, never overwritten.
/// So is one that is no regular file once symlinks are followed (a directory, a FIFO, a
/// device): see [`read_regular_file`]. A record that reads as empty or as no valid JSON
/// (one that ends early, or an in-place writer's new text over the old one's tail) is read
/// again for a moment first ([`tool_core::reread_while_torn`]): Claude Code,
/// or another program, saving it in place (truncate, then write) leaves it so for a moment,
/// and a folder trusted there would be taken as untrusted for the whole session.
fn read_record(path: &Path) -> Result<Value, String> {
    /// A read: the text, parsed (`None` when blank).
    type Read = std::io::Result<(String, Option<serde_json::Result<Value>>)>;
    let torn = |read: &Read| {
        read.as_ref().is_ok_and(|(_, parsed)| match parsed {
            None => true,
            Some(parsed) => parsed.is_err(),
        })
    };
    let same = |a: &Read, b: &Read| match (a, b) {
        (Ok((a, _)), Ok((b, _))) => a == b,
        _ => false,
    };
    // Each read parsed once (the record grows past 100 MB).
    let read = || {
        let read = read_regular_file(path).map(|text| {
            let blank = text.trim_start_matches('\u{feff}').trim().is_empty();
            // Read as the settings and MCP loaders read theirs: a byte order mark (Windows
            // editors write one) skipped, half a surrogate pair (which Claude Code's
            // JSON.stringify writes for a cut emoji) read as U+FFFD.
            let parsed = (!blank).then(|| tool_core::parse_config_json(&text));
            (text, parsed)
        });
        let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok();
        (read, modified)
    };
    match tool_core::reread_while_torn(read, torn, same) {
        Ok((_, None)) => Ok(Value::Object(Map::new())),
        Ok((_, Some(Ok(record)))) if record.is_object() => Ok(record),
        // `null`, `[]`: no record trust can be read from or written into.
        Ok((_, Some(Ok(_)))) => Err(format!("{} does not hold a JSON object", shell_word(path))),
        Ok((_, Some(Err(e)))) => Err(format!("{} is not valid JSON: {e}", shell_word(path))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Value::Object(Map::new())),
        Err(e) => Err(format!("cannot read {}: {e}", shell_word(path))),
    }
}

/// The text of the regular file at `path` (symlinks followed), however large (the record
/// grows past 100 MB): anything else (a directory, a FIFO, which is never waited on) is an
/// error saying what it is ([`tool_core::read_regular_file`]).
fn read_regular_file(path: &Path) -> std::io::Result<String> {
    tool_core::read_regular_file(path, None)
}

/// Whether `dir` (absolute, canonical) is trusted by the record. An unreadable record
/// trusts nothing. A record of the home folder (no longer written, see [`home_refusal`],
/// but an older toolwright did, and a user may by hand) trusts the home folder itself, and
/// is not read as the git root of the folders under it (a dotfiles `~/.git` would make it
/// trust every folder there without a repository of its own).
pub fn is_trusted(dir: &Path) -> bool {
    let Some(path) = record_path() else {
        return false;
    };
    let Ok(record) = read_record(&path) else {
        return false;
    };
    let entry = |d: &Path| d.to_str().map(|key| &record["projects"][key]);
    let accepted = |d: &Path| entry(d).is_some_and(|e| e[ACCEPTED] == Value::Bool(true));
    // The folder's own `true` first: `toolwright trust --revoke` set it to `false`, so a
    // `true` now was written since (Claude Code's trust dialog keeps our marker).
    if accepted(dir) {
        return true;
    }
    // A folder revoked with `toolwright trust --revoke` stays untrusted inside a trusted
    // repository. Claude Code's own `false` (a default it writes for folders it ran in) does
    // not block the repository's trust, as in Claude Code.
    let revoked = |d: &Path| entry(d).is_some_and(|e| e[REVOKED] == Value::Bool(true));
    if revoked(dir) {
        return false;
    }
    // The repository's root, and for a linked worktree its main checkout's, where Claude
    // Code keys a project (`findCanonicalGitRoot`): a worktree of a trusted repository is
    // trusted, as there. A worktree revoked at its root stays so in its subfolders: the
    // nearer key's revocation wins over its main checkout's trust.
    let home = home_dir();
    let root_accepted = |root: &Path| Some(root) != home.as_deref() && accepted(root);
    let Some(root) = tool_core::git_root(dir) else {
        return false;
    };
    if root_accepted(root) {
        return true;
    }
    if revoked(root) {
        return false;
    }
    tool_core::canonical_git_root(dir).is_some_and(|root| root_accepted(&root))
}

/// Why the trust record cannot be read (it is not JSON, not readable, or its `projects`
/// is not an object), naming it; `None` when it can (a missing or empty record can). Such
/// a record trusts nothing, and `toolwright trust` fails on it.
pub fn record_problem() -> Option<String> {
    let path = record_path()?;
    match read_record(&path) {
        Ok(record) => projects_problem(&record, &path),
        Err(problem) => Some(problem),
    }
}

/// Why trust cannot be recorded for `dir` in a record that can be read: its entry there is
/// not an object (`toolwright trust` would fail on it, and never overwrites it).
fn entry_problem(dir: &Path) -> Option<String> {
    let path = record_path()?;
    let record = read_record(&path).ok()?;
    let entry = record.get("projects")?.get(dir.to_str()?)?;
    (!entry.is_object()).then(|| not_an_entry(dir, &path))
}

/// Why a record's `projects` cannot hold trust: it is there and not an object.
fn projects_problem(record: &Value, path: &Path) -> Option<String> {
    record
        .get("projects")
        .filter(|projects| !projects.is_object())
        .map(|_| projects_not_an_object(path))
}

/// Why the record at `path` cannot hold trust when its `projects` is not an object.
fn projects_not_an_object(path: &Path) -> String {
    format!("`projects` in {} is not an object", shell_word(path))
}

/// Why `dir`'s entry in the record at `path` cannot hold trust.
fn not_an_entry(dir: &Path, path: &Path) -> String {
    format!(
        "the entry for {} in {} is not an object",
        shell_word(dir),
        shell_word(path)
    )
}

/// Claude Code's trust field of a project entry.
const ACCEPTED: &str = "hasTrustDialogAccepted";
/// Ours: set by `toolwright trust --revoke`, so that a revoked folder inside a trusted
/// repository stays untrusted (Claude Code's `false` cannot say that).
const REVOKED: &str = "toolwrightTrustRevoked";

/// Records `dir` as trusted (or not), keeping everything else in the record. The file is
/// replaced atomically (written beside it, synced, then renamed), so a crash leaves the old
/// record; the new file keeps the record's mode, owner and group (a record whose owner
/// this user cannot give a file is not replaced: an error says so); a new record is
/// created owner-only. Trust for the home folder is refused, saying why ([`home_refusal`]);
/// revoking it is recorded.
pub fn set_trusted(dir: &Path, trusted: bool) -> Result<PathBuf, String> {
    if trusted && let Some(refusal) = home_refusal(dir) {
        return Err(refusal);
    }
    let path = record_path()
        .ok_or("neither CLAUDE_CONFIG_DIR nor HOME is set: nowhere to record trust")?;
    // Its directory, and that of the file a symlinked record leads to (which may not be
    // there yet: a dotfiles link made before the first run).
    for dir in [path.clone(), record_target(&path)]
        .iter()
        .filter_map(|p| p.parent())
    {
        std::fs::create_dir_all(dir).map_err(|e| {
            if dir.exists() && !dir.is_dir() {
                format!(
                    "the record's directory {} is not a directory (HOME or CLAUDE_CONFIG_DIR names a file?)",
                    shell_word(dir)
                )
            } else {
                format!("cannot create {}: {e}", shell_word(dir))
            }
        })?;
    }
    // Read, change and write under the record's lock: two `trust` commands at once (or
    // Claude Code saving its config) would otherwise each write back the record as it was
    // before the other's change, losing it (a revoke too).
    let _lock = RecordLock::take(&path)?;
    let mut record = read_record(&path)?;
    let key = dir
        .to_str()
        .ok_or_else(|| format!("{} is not valid UTF-8", shell_word(dir)))?;
    let Some(root) = record.as_object_mut() else {
        return Err(format!("{} does not hold a JSON object", shell_word(&path)));
    };
    let projects = root
        .entry("projects")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(projects) = projects.as_object_mut() else {
        return Err(projects_not_an_object(&path));
    };
    let entry = projects
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(entry) = entry.as_object_mut() else {
        return Err(not_an_entry(dir, &path));
    };
    entry.insert(ACCEPTED.into(), Value::Bool(trusted));
    if trusted {
        entry.remove(REVOKED);
    } else {
        entry.insert(REVOKED.into(), Value::Bool(true));
    }
    let text = serde_json::to_string_pretty(&record).map_err(|e| e.to_string())?;
    write_record(&path, text.as_bytes())?;
    Ok(path)
}

/// The record's lock, as Claude Code takes it (the `proper-lockfile` convention): a
/// directory `<record>.lock` beside the record's real file, made atomically with `mkdir`,
/// and taken over when older than [`STALE_LOCK`] (its holder died; ours holds it for
/// milliseconds). Two toolwright processes first take an `flock` on the record's
/// directory, so that two of them never both take over one stale lock directory (each
/// removing the other's new one). Removed on drop.
struct RecordLock {
    dir: PathBuf,
    _among_us: Option<nix::fcntl::Flock<std::fs::File>>,
}

/// How old a lock directory may be before it counts as left behind.
const STALE_LOCK: std::time::Duration = std::time::Duration::from_secs(10);
/// How long to wait for the lock before giving up.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

impl RecordLock {
    fn take(record: &Path) -> Result<Self, String> {
        let target = record_target(record);
        let with_suffix = |suffix: &str| {
            let mut name = target.clone().into_os_string();
            name.push(suffix);
            PathBuf::from(name)
        };
        // On the record's directory (the record itself is replaced by a rename, so a lock on
        // it would be on a file the next reader does not open). Best effort: a file system
        // without flock still has the lock directory.
        let among_us = target
            .parent()
            .and_then(|dir| std::fs::File::open(dir).ok())
            .and_then(|mut dir| {
                loop {
                    match nix::fcntl::Flock::lock(dir, nix::fcntl::FlockArg::LockExclusive) {
                        Ok(locked) => break Some(locked),
                        // A signal during the wait: wait again.
                        Err((again, nix::errno::Errno::EINTR)) => dir = again,
                        Err(_) => break None,
                    }
                }
            });
        let lock = with_suffix(".lock");
        let started = std::time::Instant::now();
        loop {
            match std::fs::create_dir(&lock) {
                Ok(()) => {
                    return Ok(Self {
                        dir: lock,
                        _among_us: among_us,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let stale = std::fs::metadata(&lock)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.elapsed().ok())
                        .is_some_and(|age| age > STALE_LOCK);
                    // Left behind by a holder that died (no other toolwright is here: the
                    // flock): taken over. One that cannot be removed as an empty directory
                    // (a file, a directory with something in it) is waited on like a live
                    // one, and reported when the wait is over.
                    if stale && std::fs::remove_dir(&lock).is_ok() {
                        continue;
                    }
                    if started.elapsed() > LOCK_WAIT {
                        return Err(format!(
                            "{} is locked by another program ({} exists); try again, or remove it if no Claude Code or toolwright is running",
                            shell_word(record),
                            shell_word(&lock)
                        ));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(25));
                }
                Err(e) => {
                    return Err(format!("cannot lock {}: {e}", shell_word(record)));
                }
            }
        }
    }
}

impl Drop for RecordLock {
    fn drop(&mut self) {
        // The directory first, then (dropping the field) the flock.
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Replaces the record atomically: a temporary file beside the real one (a symlinked
/// record's target: the link stays a link), named as every atomic write's
/// ([`tool_core::temp_file`]: `..claude.json.tw-tmp.PID.TAG.N`), with the record's mode,
/// owner and group (`fchown`: a root-run `toolwright trust` keeps a user's record theirs),
/// or owner-only for a new record (it holds account data), synced, then renamed over it.
/// When the new file cannot be given the record's owner and group, the record is left as
/// it is and the error says so. The temporary files a writer killed mid-write left in that
/// directory are removed first ([`tool_core::temp_file::remove_abandoned_temps`]), and so
/// are those of toolwright versions before it ([`remove_legacy_temps`]).
fn write_record(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    use tool_core::temp_file::TempFile;
    let target = record_target(path);
    let parent = target
        .parent()
        .ok_or("the record has no parent directory")?;
    let name = target
        .file_name()
        .ok_or("the record has no file name")?
        .to_owned();
    let existing = std::fs::metadata(&target).ok();
    let mode = existing
        .as_ref()
        .map_or(0o600, |m| m.permissions().mode() & 0o7777);
    tool_core::temp_file::remove_abandoned_temps(parent);
    remove_legacy_temps(parent);
    let cannot = |e: &dyn std::fmt::Display| format!("cannot write {}: {e}", shell_word(path));
    // Owner-only until it holds the record's mode, owner and group.
    let mut temp = TempFile::create(parent, &name, 0o600).map_err(|e| cannot(&e))?;
    if let Some(old) = &existing {
        let new = temp.file().metadata().map_err(|e| cannot(&e))?;
        if (new.uid(), new.gid()) != (old.uid(), old.gid()) {
            std::os::unix::fs::fchown(temp.file(), Some(old.uid()), Some(old.gid())).map_err(
                |e| {
                    cannot(&format!(
                        "it belongs to user {} and group {}, which this user cannot give the new copy ({e}); it was left as it is",
                        old.uid(),
                        old.gid()
                    ))
                },
            )?;
        }
    }
    // After the chown, which may clear set-id bits; the mode asked for at creation is cut
    // by the umask too: set it exactly.
    temp.file()
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .and_then(|()| temp.write_synced(bytes))
        .and_then(|()| temp.rename_to(&target))
        .map_err(|e| cannot(&e))?;
    let _ = tool_core::temp_file::sync_dir(parent);
    Ok(())
}

/// Removes from `dir` the record's temporary files of toolwright versions before
/// [`tool_core::temp_file`] named them (`.claude.json.toolwright-PID`, whatever the record's
/// file is called), once they are [`tool_core::temp_file::STALE_TEMP_AGE`] old: no writer
/// tag says whether their writer is alive. Best effort.
fn remove_legacy_temps(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let legacy = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(".claude.json.toolwright-"))
            .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()));
        let stale = || {
            entry
                .metadata()
                .ok()
                .filter(std::fs::Metadata::is_file)
                .and_then(|m| m.modified().ok()?.elapsed().ok())
                .is_some_and(|age| age >= tool_core::temp_file::STALE_TEMP_AGE)
        };
        if legacy && stale() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The file the record at `path` is: `path` with its symlinks followed, the last one too
/// when it leads nowhere yet (a dangling `~/.claude.json -> dotfiles/claude.json` is written
/// at its target, the link kept); `path` itself when it is no link.
fn record_target(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .or_else(|_| tool_core::temp_file::write_target(path))
        .unwrap_or_else(|_| path.to_path_buf())
}

/// `a`, `a and b`, `a, b and c`.
pub fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// `path` as one shell word that pastes back to the same path: quoted as shlex quotes, or,
/// when the name holds what a terminal would act on or hide (control characters, bidi and
/// zero-width marks: [`tool_core::is_hidden_char`]), as bash's `$'…'` with every byte but
/// printable ASCII written as `\xHH` (a character's bytes join back into it; bytes that
/// are not UTF-8 too).
pub fn shell_word(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt as _;
    let bytes = path.as_os_str().as_bytes();
    if let Ok(text) = std::str::from_utf8(bytes)
        && !text.chars().any(tool_core::is_hidden_char)
        && let Ok(quoted) = shlex::try_quote(text)
    {
        return quoted.into_owned();
    }
    let mut word = String::from("$'");
    for &b in bytes {
        match b {
            b'\\' | b'\'' => {
                word.push('\\');
                word.push(char::from(b));
            }
            0x20..=0x7e => word.push(char::from(b)),
            _ => word.push_str(&format!("\\x{b:02x}")),
        }
    }
    word.push('\'');
    word
}

/// The notice an untrusted session prints once, naming what it ignored, and how to trust
/// the folder: `toolwright trust DIR`, or, when the trust record cannot be read (which
/// trusts nothing, and which that command would not overwrite), what is wrong with it; with
/// neither HOME nor CLAUDE_CONFIG_DIR set, that there is nowhere to record trust and how to
/// give it a place; in the home folder, whose trust is not recorded, that `agent` asks.
pub fn untrusted_notice(dir: &Path, ignored: &[String]) -> String {
    let how = match record_problem() {
        // No record at all: `toolwright trust` would fail too.
        None if record_path().is_none() => format!(
            "Its trust cannot be recorded: neither HOME nor CLAUDE_CONFIG_DIR is set, so there is no trust record (`.claude.json`, shared with Claude Code) to keep it in. To trust it, give the record a directory: run `CLAUDE_CONFIG_DIR=DIR toolwright trust {}` (DIR: your Claude configuration directory), and start this command with the same CLAUDE_CONFIG_DIR.",
            shell_word(dir)
        ),
        Some(problem) => format!(
            "No folder is trusted: the trust record cannot be read ({problem}). Repair it (Claude Code keeps its settings there too; it is not replaced), then trust the folder."
        ),
        // The record is JSON, keyed by the path as text.
        None if dir.to_str().is_none() => "Its path is not valid UTF-8, which the trust record (JSON, shared with Claude Code) cannot hold: to trust it, rename the folder.".to_owned(),
        // `toolwright trust ~` would refuse.
        None if home_refusal(dir).is_some() => "It is the home folder, whose trust is not recorded (a record would trust every folder under it without a repository of its own): `toolwright agent` started here asks whether to trust it for that session, as Claude Code does.".to_owned(),
        None => match entry_problem(dir) {
            // An entry of the wrong shape, which `toolwright trust` would fail on.
            Some(problem) => format!(
                "Its trust cannot be recorded: {problem}. Repair it (Claude Code keeps its settings there too; it is not replaced), then trust the folder."
            ),
            // Quoted for a shell: the folder's name is anyone's (an archive's), and the
            // command is meant to be pasted (`evil$(touch x)` must stay a name).
            None => format!(
                "If you trust it, run `toolwright trust {}`.",
                shell_word(dir)
            ),
        },
    };
    format!(
        "this folder is not trusted, so its own settings were only allowed to restrict. Not \
         applied: {} (its deny and ask rules still apply). {how}",
        ignored.join(", "),
    )
}
