//! What a repository's own files make git run for the commands the engine takes for reads
//! (`git status`, `git diff`, `git log`, `git show`, `git blame`, branch listing, `git
//! help`): programs its configuration names (`core.fsmonitor`, `diff.external`, a diff or
//! filter driver, `gpg.program`, a merge driver, …), a hook git runs when it writes the
//! index, and the same in every submodule git goes into. Such a repository arrives with an
//! archive, a shared folder or a copied tree (`git clone` does not carry `.git/config`).
//! Read without running git (which would obey that configuration), bounded, once per
//! permission check; what cannot be read or understood counts as naming a program.
//!
//! Most programs run for any of these commands. Two kinds run only for some, and ask only
//! for those: a signing program (`gpg.program`, `gpg.<format>.program`) runs when git
//! verifies a signature (`git log --show-signature`, `log.showSignature`, a `%G?` format,
//! `git branch --sort=signature`), never for `git status`, `git diff`, `git blame`, `git
//! help`, nor for `git branch` unless an argument or `branch.sort` names the signature; a
//! merge driver (`merge.<driver>.driver`) runs when git re-merges a merge to show it (`git
//! show --remerge-diff`, `git log -p --diff-merges=remerge`, `-m` with `log.diffMerges`
//! `remerge`), never for `git status`, `git diff`, `git blame`, `git help` or `git branch`.
//! Every other command counts as running both (the user's own configuration, not read
//! here, may set `log.showSignature`).
//!
//! Which repository git uses is found as git's discovery finds it, with git's own test of a
//! git directory; a `.git` git may or may not take asks.
//!
//! The same reading tells what git reads besides the directory holding the `.git` (a git
//! directory a gitfile or link leads to, `commondir`, object
//! stores elsewhere (followed as git follows `alternates`), the targets of links in the git
//! directory, a work tree `core.worktree` moves, the files the configuration includes,
//! the files its keys name that git reads: `blame.ignoreRevsFile`, `mailmap.file`,
//! `core.attributesFile`, `core.excludesFile`, `diff.orderFile`,
//! `gpg.ssh.allowedSignersFile`, `gpg.ssh.revocationFile`), which the engine judges as
//! path reads.
//!
//! Public: the reading of git's configuration syntax ([`parse_config`], [`ConfigEntry`])
//! and of an include's path ([`include_path`]), for the worktree tools, which look for
//! filter drivers in a repository's configuration before they let git check files out.
//! Nothing here runs git.
//!
//! Only the repository's own files: the user's (`~/.gitconfig`, `GIT_CONFIG_GLOBAL`,
//! `/etc/gitconfig`, `GIT_CONFIG_SYSTEM`) are theirs to trust.
//!
//! Keys left out on purpose: `core.pager` and `pager.<cmd>` (git starts a pager only when
//! its standard output is a terminal, and the Bash tool gives it a pipe, in a session of its
//! own where `/dev/tty` cannot be opened); `alias.<cmd>` (git ignores an alias that hides
//! one of its commands, and every command taken for a read is one); `trace2.*` (git reads it
//! from the system and global files only); `core.editor`, `sequence.editor`,
//! `difftool.*`, `mergetool.*`, `gpg.ssh.defaultKeyCommand` (commands that write or sign,
//! never a read); `uploadpack.packObjectsHook` (protected configuration only).

use std::cell::RefCell;
use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::{Arc, Mutex, PoisonError};

/// A configuration file (or gitfile, `commondir`) larger than this is not read: it asks.
const MAX_CONFIG_BYTES: u64 = 64 << 10;
/// git's own limit on nested includes (`MAX_INCLUDE_DEPTH` in git's `config.c`).
pub const MAX_INCLUDE_DEPTH: usize = 10;
/// An index larger than this is not read (its submodules cannot be known): it asks.
const MAX_INDEX_BYTES: u64 = 256 << 20;
/// Submodules inside submodules deeper than this ask.
const MAX_SUBMODULE_DEPTH: usize = 8;
/// Repositories (the one found and its submodules) checked at most, per directory.
const MAX_REPOSITORIES: usize = 64;
/// Configuration files read at most in one check (each repository's and what they
/// include, every time they include it): a config that includes a file a thousand times,
/// which includes another a thousand times, would otherwise be read a million times.
const MAX_CONFIG_FILES: usize = 256;

/// Why git, started in `dir` with the arguments `args` (the words after `git`; `None` when
/// they are not known, which counts as any command), may run a program its repository's
/// own files name: `Err` with the reason in words (naming the file and the key), or `Ok`
/// with the names of the files that decided it (configuration files, included files, the
/// hooks directory, the submodules' directories), which a command earlier on the same line
/// must not write for the check to hold. `home` expands `~/` in an include's path and
/// `core.hooksPath`.
///
/// The repository is the one git's discovery finds walking up from `dir`: the first `.git`
/// that is a gitfile (`gitdir: …`, followed, with its `commondir`) or a git directory, or a
/// directory that is itself a git directory (a bare repository). None found: nothing to
/// check. The files are read once per permission check ([`ScanCache`]).
pub(crate) fn repository_programs(
    dir: &Path,
    home: Option<&Path>,
    args: Option<&[&str]>,
) -> Result<Vec<String>, String> {
    let scan = ScanCache::scan(dir, home);
    let scan = scan.as_ref().as_ref().map_err(Clone::clone)?;
    if let Some((_, why)) = scan
        .conditional
        .iter()
        .find(|(when, _)| scan.runs(*when, args))
    {
        return Err(why.clone());
    }
    Ok(scan.names.clone())
}

/// A path git reads for the repository it finds outside the directory holding that
/// repository's `.git` ([`repository_reads`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct OutsideRead {
    /// The path, with its links resolved where it exists.
    pub(crate) path: PathBuf,
    /// Why git reads it, in words (naming the file and the key that make it).
    pub(crate) why: String,
    /// The path is the git directory or the common directory of a linked work tree or a
    /// submodule whose git directory points back at its `.git` (`gitdir`, `core.worktree`)
    /// and lies inside its common directory: the user's own layout, which only the Read
    /// rules judge, not the working directories. Never an object store `alternates`
    /// names, nor `objects`, `refs` or a link that leads elsewhere.
    pub(crate) linked: bool,
    /// What git reads there cannot be known (an `alternates` file that cannot be read,
    /// a git directory too large to look through for links): `path` names the file or
    /// directory, `why` says why; it asks whatever the rules say.
    pub(crate) unknown: bool,
}

/// What git, started in `dir`, reads besides the directory holding the `.git` its
/// discovery finds ([`repository_programs`]), and each submodule's: a git directory
/// reached through a gitfile or a `.git` link, a common directory (`commondir`), `objects`
/// and `refs` that lead elsewhere, the object stores `objects/info/alternates` names, a
/// work tree the configuration moves (`core.worktree`, in `config`, `config.worktree` or a
/// file they include) anywhere but inside that directory. With them, the files the found
/// repository's configuration includes (`include.path`, `includeIf.*.path`, whatever the
/// condition, as git opens them), whose values `git config --list` prints, and the files
/// the configuration names that git reads ([`Entry::file_read`]: `git blame` prints the
/// first line of `blame.ignoreRevsFile`, `git log` the names `mailmap.file` maps). The object
/// stores are followed as git follows them (each one's own `info/alternates`, five levels
/// down), and the git and common directories are looked through for symbolic links (git
/// makes none there): each link's target outside that directory is a read. `Err` (in
/// words) when the repository's files cannot be read: what git reads is not known. A
/// repository whose files name a program (which [`repository_programs`] asks about, a
/// Git LFS filter) is read again for this, its programs and hooks left aside.
pub(crate) fn repository_reads(
    dir: &Path,
    home: Option<&Path>,
) -> Result<(Vec<OutsideRead>, Vec<PathBuf>), String> {
    let scan = ScanCache::scan(dir, home);
    if let Ok(scan) = scan.as_ref() {
        return Ok((scan.outside.clone(), scan.included.clone()));
    }
    let scan = scan_with(dir, home, true)?;
    Ok((scan.outside, scan.included))
}

/// git's limit on alternates of alternates (`link_alt_odb_entries`: deeper than 5 is
/// ignored).
const MAX_ALTERNATE_DEPTH: usize = 5;
/// `alternates` files read at most for one repository; past it: asks.
const MAX_ALTERNATES_FILES: usize = 64;
/// Entries of a git directory looked at, at most, for symbolic links; past it: asks. A
/// repository holds up to some 6,700 loose objects before git packs them itself.
const MAX_GIT_DIR_ENTRIES: usize = 20_000;
/// Directories deep the look for symbolic links goes in a git directory; deeper: asks.
const MAX_GIT_DIR_DEPTH: usize = 16;

/// git's `unquote_c_style`: `quoted` starts with `"`; the bytes it stands for and the
/// length taken (up to and with the closing quote), or `None` where git's unquoting fails
/// (no closing quote, an unknown escape, a bad octal one).
fn unquote_c_style(quoted: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut out = Vec::new();
    let mut i = 1;
    if quoted.first() != Some(&b'"') {
        return None;
    }
    loop {
        match *quoted.get(i)? {
            b'"' => return Some((out, i + 1)),
            b'\\' => {}
            0 => return None,
            c => {
                out.push(c);
                i += 1;
                continue;
            }
        }
        i += 1;
        let c = *quoted.get(i)?;
        i += 1;
        let b = match c {
            b'a' => 0x07,
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'v' => 0x0b,
            b'\\' | b'"' => c,
            b'0'..=b'3' => {
                let d1 = *quoted.get(i)?;
                let d2 = *quoted.get(i + 1)?;
                if !(b'0'..=b'7').contains(&d1) || !(b'0'..=b'7').contains(&d2) {
                    return None;
                }
                i += 2;
                ((c - b'0') << 6) | ((d1 - b'0') << 3) | (d2 - b'0')
            }
            _ => return None,
        };
        out.push(b);
    }
}

/// The object stores an `alternates` file names, as git's `link_alt_odb_entries` reads
/// them: up to the first NUL, one per line; a line starting with `#` is a comment; one
/// starting with `"` is C-unquoted (`unquote_c_style`), and the character after its
/// closing quote is skipped, the rest of the line being another entry; a quoted one that
/// fails to unquote is taken as written. Empty entries are none; an entry stops at a NUL
/// its unquoting makes.
fn alternate_entries(bytes: &[u8]) -> Vec<Vec<u8>> {
    let s = bytes.split(|&b| b == 0).next().unwrap_or_default();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        let line = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let (entry, end) = if rest[0] == b'#' {
            (Vec::new(), line)
        } else if let Some((e, n)) = (rest[0] == b'"').then(|| unquote_c_style(rest)).flatten() {
            (e, n)
        } else {
            (rest[..line].to_vec(), line)
        };
        i += end;
        if i < s.len() {
            i += 1;
        }
        let entry = entry.split(|&b| b == 0).next().unwrap_or_default();
        if !entry.is_empty() {
            out.push(entry.to_vec());
        }
    }
    out
}

/// What reading a repository found, for any command: the programs only some commands run,
/// and the names of the files that decided it. A program every command runs, or what
/// cannot be read, is the scan's `Err`.
struct Scan {
    /// Programs that only some commands run, with the reason in words, in the order found.
    conditional: Vec<(When, String)>,
    /// `branch.sort` names the signature: `git branch` verifies signatures.
    sorts_by_signature: bool,
    /// The names of the files that decided it ([`repository_programs`]).
    names: Vec<String>,
    /// What git reads outside the directories holding the `.git`s ([`repository_reads`]).
    outside: Vec<OutsideRead>,
    /// The files the found repository's configuration includes ([`repository_reads`]).
    included: Vec<PathBuf>,
}

/// The commands a program a repository's files name runs for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum When {
    /// Every command (`core.fsmonitor`, a diff or filter driver, …).
    Always,
    /// Commands that verify a signature (a signing program).
    Verifying,
    /// Commands that re-merge a merge to show it (a merge driver).
    Remerging,
}

impl Scan {
    /// Whether git with the arguments `args` (`None`: not known) may run a program that
    /// runs `when`. The subcommand is the first word that is no option (the global options
    /// the engine lets through take no value; any other word counts as an unknown
    /// command).
    fn runs(&self, when: When, args: Option<&[&str]>) -> bool {
        let Some(args) = args else {
            return true;
        };
        let sub = args.iter().copied().find(|a| !a.starts_with('-'));
        match (when, sub) {
            (When::Always, _) => true,
            // They never verify a signature or merge.
            (_, Some("status" | "diff" | "blame" | "help")) => false,
            (When::Remerging, Some("branch")) => false,
            // `%(signature)` in `--format`, `--sort=signature`, `branch.sort`.
            (When::Verifying, Some("branch")) => {
                self.sorts_by_signature
                    || args
                        .iter()
                        .any(|a| a.to_ascii_lowercase().contains("signature"))
            }
            _ => true,
        }
    }
}

thread_local! {
    /// The repositories read during one permission check, by the directory git starts in
    /// and the home directory ([`ScanCache`]); `None` outside one.
    static SCANS: RefCell<Option<Scans>> = const { RefCell::new(None) };
}

/// What reading each repository found, by the directory git starts in and the home
/// directory.
type Scans = HashMap<(PathBuf, Option<PathBuf>), Rc<Result<Scan, String>>>;

/// The repositories of one permission check: each is read once however many git commands
/// the line holds (`git log -1; git log -1; …`), for the decision and for the read-only
/// pass alike. Held while the check runs; forgotten after it, so that the next check reads
/// the files as they are then.
pub(crate) struct ScanCache {
    /// This guard started the cache (an inner check leaves it to the outer one).
    owner: bool,
}

impl ScanCache {
    /// Starts remembering what is read, until the guard is dropped.
    pub(crate) fn enter() -> Self {
        let owner = SCANS.with(|s| {
            let mut s = s.borrow_mut();
            let starts = s.is_none();
            if starts {
                *s = Some(HashMap::new());
            }
            starts
        });
        ScanCache { owner }
    }

    /// What reading the repository git finds from `dir` found, from the cache when a check
    /// runs.
    fn scan(dir: &Path, home: Option<&Path>) -> Rc<Result<Scan, String>> {
        let key = (dir.to_path_buf(), home.map(Path::to_path_buf));
        if let Some(scan) = SCANS.with(|s| s.borrow().as_ref().and_then(|m| m.get(&key).cloned())) {
            return scan;
        }
        let scan = Rc::new(scan(dir, home));
        SCANS.with(|s| {
            if let Some(m) = s.borrow_mut().as_mut() {
                m.insert(key, Rc::clone(&scan));
            }
        });
        scan
    }
}

impl Drop for ScanCache {
    fn drop(&mut self) {
        if self.owner {
            SCANS.with(|s| *s.borrow_mut() = None);
        }
    }
}

/// Reads the repository git finds from `dir` (see [`repository_programs`]).
fn scan(dir: &Path, home: Option<&Path>) -> Result<Scan, String> {
    scan_with(dir, home, false)
}

/// [`scan`]; `reads_only`: for [`repository_reads`] alone, a program the configuration
/// names and the hooks are left aside (only what cannot be read is an `Err`).
fn scan_with(dir: &Path, home: Option<&Path>, reads_only: bool) -> Result<Scan, String> {
    let mut check = Check {
        reads_only,
        home,
        repositories: 0,
        config_files: 0,
        names: Vec::new(),
        conditional: Vec::new(),
        sorts_by_signature: false,
        parsed: HashMap::new(),
        outside: Vec::new(),
        included: Vec::new(),
    };
    for at in dir.ancestors() {
        if let Some(repo) = repository_at(at)? {
            check.repository(&repo, 0)?;
            break;
        }
    }
    Ok(Scan {
        conditional: check.conditional,
        sorts_by_signature: check.sorts_by_signature,
        names: check.names,
        outside: check.outside,
        included: check.included,
    })
}

/// A repository git found: its git directory, the common directory (the main
/// repository's for a linked work tree) and its work tree (`None` for a bare repository).
struct Repository {
    /// The directory git's discovery stopped at: the one holding the `.git` (or the bare
    /// repository itself).
    at: PathBuf,
    git_dir: PathBuf,
    common_dir: PathBuf,
    work_tree: Option<PathBuf>,
}

/// Why git may or may not take `dir` for a git directory, in words.
fn unsure(dir: &Path, why: &str) -> String {
    format!(
        "git may or may not take {} for its repository ({why})",
        dir.display()
    )
}

/// The repository git's discovery takes at `at` (see [`repository_programs`]); `None` when
/// git goes on up. A `.git` that is neither a file nor a git directory by git's own test
/// ([`is_git_directory`]: an empty `.git/`, a `HEAD` that is no ref) does not stop it; one
/// that git may or may not take is an error.
fn repository_at(at: &Path) -> Result<Option<Repository>, String> {
    let dot_git = at.join(".git");
    match std::fs::metadata(&dot_git) {
        Ok(m) if m.is_file() => {
            let git_dir = read_gitfile(&dot_git)?;
            return Ok(Some(Repository {
                at: at.to_path_buf(),
                common_dir: common_dir(&git_dir)?,
                git_dir,
                work_tree: Some(at.to_path_buf()),
            }));
        }
        Ok(_) => match is_git_directory(&dot_git) {
            Ok(true) => {
                return Ok(Some(Repository {
                    at: at.to_path_buf(),
                    common_dir: common_dir(&dot_git)?,
                    git_dir: dot_git,
                    work_tree: Some(at.to_path_buf()),
                }));
            }
            Ok(false) => {}
            Err(why) => return Err(unsure(&dot_git, &why)),
        },
        Err(_) => {}
    }
    match is_git_directory(at) {
        Ok(true) => Ok(Some(Repository {
            at: at.to_path_buf(),
            common_dir: common_dir(at)?,
            git_dir: at.to_path_buf(),
            work_tree: None,
        })),
        Ok(false) => Ok(None),
        Err(why) => Err(unsure(at, &why)),
    }
}

/// git's test of a git directory (`is_git_directory` in git's `setup.c`), which its
/// discovery applies to each `.git` and each directory on its way up: `HEAD` is a symbolic
/// link whose text starts with `refs/` (it need not exist), or a file whose first 255 bytes
/// start with `ref:`, spaces and `refs/`, or with an object id (40 hex digits)
/// (`validate_headref`); then `objects` (or `GIT_OBJECT_DIRECTORY`) and `refs`, looked for
/// in the common directory (where a `commondir` file, or `GIT_COMMON_DIR`, points), pass
/// `access(X_OK)`: a directory that can be searched, a file with the execute bit for the
/// user. `Ok(false)`: git goes on. `Err` (in words) where it cannot be told here: git would
/// stop with an error (a `commondir` it cannot read or resolve), a `HEAD` that is no
/// regular file (a FIFO git would wait on), an environment variable relative to a directory
/// not known here, a file's execute permission for another owner.
pub(crate) fn is_git_directory(dir: &Path) -> Result<bool, String> {
    if !valid_head(&dir.join("HEAD"))? {
        return Ok(false);
    }
    let common = git_common_dir(dir)?;
    let objects = match env_path("GIT_OBJECT_DIRECTORY")? {
        Some(objects) => objects,
        None => common.join("objects"),
    };
    if !searchable(&objects)? {
        return Ok(false);
    }
    searchable(&common.join("refs"))
}

/// git's `validate_headref`: whether `head` is a `HEAD` git accepts (see
/// [`is_git_directory`]).
fn valid_head(head: &Path) -> Result<bool, String> {
    use std::io::ErrorKind;
    let shown = head.display();
    let meta = match std::fs::symlink_metadata(head) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return Ok(false);
        }
        Err(e) => return Err(format!("{shown} cannot be looked at ({e})")),
    };
    if meta.file_type().is_symlink() {
        return std::fs::read_link(head)
            .map(|t| t.as_os_str().as_bytes().starts_with(b"refs/"))
            .map_err(|e| format!("{shown} cannot be read ({e})"));
    }
    // git opens a directory, and reading it fails.
    if meta.is_dir() {
        return Ok(false);
    }
    if !meta.is_file() {
        return Err(format!(
            "{shown} is no regular file, which git would wait on or read as it comes"
        ));
    }
    use std::io::Read as _;
    let mut bytes = Vec::with_capacity(255);
    std::fs::File::open(head)
        .and_then(|f| f.take(255).read_to_end(&mut bytes))
        .map_err(|e| format!("{shown} cannot be read ({e})"))?;
    // git reads it as a C string.
    let text = bytes.split(|&b| b == 0).next().unwrap_or_default();
    if let Some(rest) = text.strip_prefix(b"ref:") {
        let start = rest
            .iter()
            .position(|&c| !is_config_space(c))
            .unwrap_or(rest.len());
        if rest[start..].starts_with(b"refs/") {
            return Ok(true);
        }
    }
    Ok(text.len() >= 40 && text[..40].iter().all(u8::is_ascii_hexdigit))
}

/// The common directory of the git directory `git_dir` as git's `get_common_dir` finds it:
/// `GIT_COMMON_DIR`, else what its `commondir` file names (relative to it; the text up to
/// a NUL, its line ends dropped) with links resolved, else itself. `Err` where git stops
/// with an error (a `commondir` it cannot read, or whose path it cannot resolve) or a
/// relative `GIT_COMMON_DIR`.
fn git_common_dir(git_dir: &Path) -> Result<PathBuf, String> {
    if let Some(common) = env_path("GIT_COMMON_DIR")? {
        return Ok(common);
    }
    let file = git_dir.join("commondir");
    // git's `file_exists`: anything `stat` finds.
    if std::fs::metadata(&file).is_err() {
        return Ok(git_dir.to_path_buf());
    }
    let shown = file.display();
    let bytes = read_small(&file, MAX_CONFIG_BYTES)?
        .ok_or_else(|| format!("{shown} cannot be read (it is gone)"))?;
    if bytes.is_empty() {
        return Err(format!(
            "{shown} is empty, and git stops with an error there"
        ));
    }
    let mut text = bytes.split(|&b| b == 0).next().unwrap_or_default();
    while let [rest @ .., b'\n' | b'\r'] = text {
        text = rest;
    }
    let target = git_dir.join(std::ffi::OsStr::from_bytes(text));
    real_path(&target).ok_or_else(|| {
        format!(
            "{shown} names {}, which git cannot resolve (it stops with an error)",
            target.display()
        )
    })
}

/// `path` with its links and `..` resolved, as git's `strbuf_realpath` does, which accepts
/// a missing last component; `None` where git would stop with an error (a missing
/// directory on the way, a dangling link) or it cannot be told.
fn real_path(path: &Path) -> Option<PathBuf> {
    if let Ok(real) = std::fs::canonicalize(path) {
        return Some(real);
    }
    let bytes = path.as_os_str().as_bytes();
    if bytes.ends_with(b"/") || bytes.ends_with(b"/.") || bytes.ends_with(b"/..") {
        return None;
    }
    // It exists (a dangling link, a loop): not resolved.
    if std::fs::symlink_metadata(path).is_ok() {
        return None;
    }
    let name = path.file_name()?;
    let parent = path.parent()?;
    Some(std::fs::canonicalize(parent).ok()?.join(name))
}

/// The path an environment variable of git's sets (`None` when unset); `Err` when it is
/// relative, to a directory not known here. An empty one names nothing.
fn env_path(name: &str) -> Result<Option<PathBuf>, String> {
    match std::env::var_os(name) {
        None => Ok(None),
        Some(v) if v.is_empty() || Path::new(&v).is_absolute() => Ok(Some(PathBuf::from(v))),
        Some(_) => Err(format!(
            "{name} is set to a relative path, found from a directory not known here"
        )),
    }
}

/// Whether `access(path, X_OK)` succeeds, as git asks of `objects` and `refs`: a directory
/// that can be searched (a path through it resolves), or a file with an execute bit git's
/// user has (any, for root). `Err` where it cannot be told here (a file of another owner
/// with an execute bit, which groups and access lists decide).
fn searchable(path: &Path) -> Result<bool, String> {
    use std::io::ErrorKind;
    let shown = path.display();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {
            return Ok(false);
        }
        Err(e) => return Err(format!("{shown} cannot be looked at ({e})")),
    };
    if meta.is_dir() {
        return match std::fs::metadata(path.join(".")) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == ErrorKind::PermissionDenied => Ok(false),
            Err(e) => Err(format!("{shown} cannot be looked at ({e})")),
        };
    }
    let mode = meta.mode();
    if mode & 0o111 == 0 {
        return Ok(false);
    }
    // The process's effective user owns its `/proc/self`.
    match std::fs::metadata("/proc/self").map(|m| m.uid()) {
        Ok(0) => Ok(true),
        Ok(uid) if uid == meta.uid() => Ok(mode & 0o100 != 0),
        _ => Err(format!(
            "{shown} is a file with an execute bit, which git's user may or may not have"
        )),
    }
}

/// A small file's bytes: `None` when it does not exist; an error (in words) when it is no
/// regular file (a directory, a FIFO, which would block), is larger than `max` or cannot be
/// read.
fn read_small(path: &Path, max: u64) -> Result<Option<Vec<u8>>, String> {
    read_small_shown(path, path, max)
}

/// [`read_small`] of `path`, the errors naming it as `shown`.
fn read_small_shown(path: &Path, shown: &Path, max: u64) -> Result<Option<Vec<u8>>, String> {
    let shown = shown.display();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{shown} cannot be read ({e})")),
    };
    if !meta.is_file() {
        return Err(format!("{shown} cannot be read (it is no regular file)"));
    }
    if meta.len() > max {
        return Err(format!(
            "{shown} is larger than {} KiB, more than is read here",
            max >> 10
        ));
    }
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(max + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("{shown} cannot be read ({e})"))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "{shown} is larger than {} KiB, more than is read here",
            max >> 10
        ));
    }
    Ok(Some(bytes))
}

/// The git directory a gitfile names (`gitdir: PATH`, relative to the gitfile's
/// directory), which must be a git directory.
fn read_gitfile(file: &Path) -> Result<PathBuf, String> {
    let shown = file.display();
    let bytes = read_small(file, MAX_CONFIG_BYTES)?
        .ok_or_else(|| format!("{shown} cannot be read (it is gone)"))?;
    let text = String::from_utf8_lossy(&bytes);
    let Some(target) = text
        .trim_end_matches(['\n', '\r'])
        .strip_prefix("gitdir: ")
        .filter(|t| !t.is_empty())
    else {
        return Err(format!(
            "{shown} cannot be read as a gitfile (`gitdir: PATH`)"
        ));
    };
    let dir = shown_path(file.parent().unwrap_or(Path::new("/")).join(target));
    match is_git_directory(&dir) {
        Ok(true) => Ok(dir),
        Ok(false) => Err(format!(
            "{shown} names no git directory ({})",
            dir.display()
        )),
        Err(why) => Err(format!(
            "{shown} names {}, which git may or may not take for a git directory ({why})",
            dir.display()
        )),
    }
}

/// The symbolic links found in git directories ([`Check::outside_reads`]), bounded.
struct LinkWalk {
    /// Entries looked at so far ([`MAX_GIT_DIR_ENTRIES`]).
    entries: usize,
    /// Directories walked (a link to a directory is walked once).
    seen: Vec<PathBuf>,
    /// Each link found, with its target resolved (itself when it dangles).
    links: Vec<(PathBuf, PathBuf)>,
}

impl LinkWalk {
    /// Looks through `dir`, `depth` directories down, for symbolic links, not following
    /// them (a link to a directory is followed as a directory of its own when its target
    /// is a directory); `hooks` is left out (git runs what is there, and the check of
    /// hooks judges it). `Err` (in words) past the bounds, or when a directory cannot be
    /// listed.
    fn dir(&mut self, dir: &Path, depth: usize) -> Result<(), String> {
        if self.seen.iter().any(|s| s == dir) {
            return Ok(());
        }
        self.seen.push(dir.to_path_buf());
        if depth > MAX_GIT_DIR_DEPTH {
            return Err(format!(
                "it is more than {MAX_GIT_DIR_DEPTH} directories deep, too deep to look through for links"
            ));
        }
        let list = match std::fs::read_dir(dir) {
            Ok(l) => l,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(format!(
                    "{} cannot be looked through for links ({e})",
                    dir.display()
                ));
            }
        };
        for entry in list {
            let entry = entry.map_err(|e| {
                format!("{} cannot be looked through for links ({e})", dir.display())
            })?;
            self.entries += 1;
            if self.entries > MAX_GIT_DIR_ENTRIES {
                return Err(format!(
                    "it holds more than {MAX_GIT_DIR_ENTRIES} entries, too many to look through for links"
                ));
            }
            let path = entry.path();
            if depth == 0 && entry.file_name() == "hooks" {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                let target = shown_path(path.clone());
                if target.is_dir() {
                    self.dir(&target, depth + 1)?;
                }
                self.links.push((path, target));
            } else if kind.is_dir() {
                self.dir(&path, depth + 1)?;
            }
        }
        Ok(())
    }
}

/// The common directory of `git_dir` ([`git_common_dir`]).
fn common_dir(git_dir: &Path) -> Result<PathBuf, String> {
    git_common_dir(git_dir)
}

/// `path` with its links and `..` resolved as the system resolves them when it opens it:
/// its longest part that exists resolved, the rest (which does not exist yet) appended
/// with its `.` and `..` taken away by name.
fn physical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut rest = Vec::new();
    let mut at = path;
    let real = loop {
        if let Ok(real) = std::fs::canonicalize(at) {
            break real;
        }
        match (at.parent(), at.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                at = parent;
            }
            _ => break PathBuf::from("/"),
        }
    };
    let mut out = real;
    for c in rest.into_iter().rev() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// `path` with its `..` and links resolved when it exists (`.git/worktrees/wt/../..` is
/// `.git`), for the messages; else as it is.
fn shown_path(path: PathBuf) -> PathBuf {
    std::fs::canonicalize(&path).unwrap_or(path)
}

/// What one configuration file holds that the check consults (see
/// [`Entry::consulted`]), and its includes, in order.
type Consulted = Rc<Vec<ConfigEntry>>;

struct Check<'a> {
    /// [`scan_with`]'s `reads_only`.
    reads_only: bool,
    home: Option<&'a Path>,
    repositories: usize,
    /// Configuration files read so far ([`MAX_CONFIG_FILES`]).
    config_files: usize,
    names: Vec<String>,
    /// Programs only some commands run ([`Scan::conditional`]).
    conditional: Vec<(When, String)>,
    /// [`Scan::sorts_by_signature`].
    sorts_by_signature: bool,
    /// Each configuration file read, by the path git opens, parsed: a file included many
    /// times is read once.
    parsed: HashMap<PathBuf, Consulted>,
    /// [`Scan::outside`].
    outside: Vec<OutsideRead>,
    /// [`Scan::included`].
    included: Vec<PathBuf>,
}

#[cfg(test)]
thread_local! {
    /// Configuration files read from the disk (the tests count them).
    static CONFIG_READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl Check<'_> {
    fn name(&mut self, path: &Path) {
        if let Some(n) = path.file_name().and_then(|n| n.to_str())
            && !self.names.iter().any(|m| m == n)
        {
            self.names.push(n.to_owned());
        }
    }

    /// Checks one repository (its configuration, its hooks, its submodules), `depth`
    /// submodules down.
    fn repository(&mut self, repo: &Repository, depth: usize) -> Result<(), String> {
        self.repositories += 1;
        if self.repositories > MAX_REPOSITORIES {
            return Err(format!(
                "it has more than {MAX_REPOSITORIES} submodules, which cannot all be checked for programs git runs"
            ));
        }
        // git reads `config.worktree` only with `extensions.worktreeConfig`; read it
        // whatever that says.
        let mut entries = Vec::new();
        for file in [
            repo.common_dir.join("config"),
            repo.git_dir.join("config.worktree"),
        ] {
            self.config_file(&file, 0, &mut entries)?;
        }
        let promisor = entries.iter().any(Entry::makes_a_promisor);
        for e in &entries {
            match e.runs_a_program(promisor) {
                None => {}
                Some((When::Always, _)) if self.reads_only => {}
                Some((When::Always, what)) => {
                    return Err(format!("{} sets {}, {what}", e.file.display(), e.name()));
                }
                Some((when, what)) => self.conditional.push((
                    when,
                    format!("{} sets {}, {what}", e.file.display(), e.name()),
                )),
            }
            if e.is("branch", None, "sort")
                && e.value
                    .as_deref()
                    .is_none_or(|v| v.to_ascii_lowercase().contains("signature"))
            {
                self.sorts_by_signature = true;
            }
        }
        let work_tree = match entries
            .iter()
            .rev()
            .find(|e| e.is("core", None, "worktree"))
        {
            Some(e) => e.path_value().map(|v| repo.git_dir.join(v)),
            None => repo.work_tree.clone(),
        };
        // git runs in the top of the work tree (a bare repository's git directory): a
        // relative path it reads is found from there.
        let base = work_tree.clone().unwrap_or_else(|| repo.git_dir.clone());
        self.outside_reads(repo, &entries, &base);
        if !self.reads_only {
            self.hooks(repo, &entries, work_tree.as_deref())?;
        }
        if let Some(work_tree) = work_tree {
            self.submodules(repo, &entries, &work_tree, depth)?;
        }
        Ok(())
    }

    /// Records what git reads for `repo` outside the directory holding its `.git`
    /// ([`repository_reads`]); `entries` is its configuration, `base` the directory git
    /// runs in (the top of the work tree), from which a relative path it reads is found.
    fn outside_reads(&mut self, repo: &Repository, entries: &[Entry], base: &Path) {
        let at = shown_path(repo.at.clone());
        let git_dir = shown_path(repo.git_dir.clone());
        let common = shown_path(repo.common_dir.clone());
        let mut points_back = false;
        let mut reads: Vec<(PathBuf, String, bool)> = Vec::new();
        // Every value, not only the last: `config.worktree` is read here whether or not git
        // reads it (`extensions.worktreeConfig`), so a last value there must not hide one in
        // `config` that git uses. Only the last one points back.
        let work_trees: Vec<&Entry> = entries
            .iter()
            .filter(|e| e.is("core", None, "worktree"))
            .collect();
        for (n, e) in work_trees.iter().enumerate() {
            let (Some(v), Some(path)) = (e.value.as_deref(), e.path_value()) else {
                continue;
            };
            // Relative to the git directory (an absolute one replaces it).
            let work_tree = shown_path(repo.git_dir.join(path));
            if work_tree == at {
                points_back |= n + 1 == work_trees.len();
            } else if !work_tree.starts_with(&at) {
                reads.push((
                    work_tree,
                    format!(
                        "{} sets core.worktree to {v}, which makes it git's work tree",
                        e.file.display()
                    ),
                    false,
                ));
            }
        }
        self.files_read(entries, base, &mut reads);
        // A linked work tree's git directory names its gitfile (`gitdir`, relative to it).
        if let Ok(Some(bytes)) = read_small(&repo.git_dir.join("gitdir"), MAX_CONFIG_BYTES) {
            let text = String::from_utf8_lossy(&bytes);
            let text = text.trim_end_matches(['\n', '\r']);
            if !text.is_empty()
                && shown_path(repo.git_dir.join(text)) == shown_path(repo.at.join(".git"))
            {
                points_back = true;
            }
        }
        // Only the user's own layout points back from inside the common directory: a git
        // directory a planted tree holds may point back at it, and its `commondir` lead
        // anywhere. The exemption covers the git and common directories themselves, never
        // what leads on from them.
        let linked = points_back && git_dir.starts_with(&common);
        let dot_git = repo.at.join(".git");
        let shown = dot_git.display();
        reads.push((
            git_dir.clone(),
            format!("{shown} leads to its git directory"),
            linked,
        ));
        reads.push((
            common.clone(),
            format!("{shown} leads to its common directory (commondir)"),
            linked,
        ));
        let own = |p: &Path| p.starts_with(&git_dir) || p.starts_with(&common);
        for sub in ["objects", "refs"] {
            let p = shown_path(repo.common_dir.join(sub));
            if !own(&p) {
                reads.push((p, format!("{shown} leads to its {sub}"), false));
            }
        }
        self.alternates(&repo.common_dir.join("objects"), &mut reads);
        // Links git never makes in its directories: `config`, `packed-refs`,
        // `objects/pack`, `refs/heads`, `logs`, `info/exclude` leading elsewhere.
        let mut walk = LinkWalk {
            entries: 0,
            seen: Vec::new(),
            links: Vec::new(),
        };
        let mut too_many = None;
        for dir in [&git_dir, &common] {
            if let Err(why) = walk.dir(dir, 0) {
                too_many = Some((dir.clone(), why));
                break;
            }
        }
        for (link, target) in walk.links {
            if !own(&target) {
                reads.push((target, format!("{} is a link to it", link.display()), false));
            }
        }
        if let Some((dir, why)) = too_many {
            self.outside.push(OutsideRead {
                path: dir,
                why,
                linked: false,
                unknown: true,
            });
        }
        for (path, why, linked) in reads {
            if !path.starts_with(&at) && !self.outside.iter().any(|o| o.path == path) {
                self.outside.push(OutsideRead {
                    path,
                    why,
                    linked,
                    unknown: false,
                });
            }
        }
    }

    /// The files the configuration names that git reads ([`Entry::file_read`]), every
    /// value of each key (`config.worktree` counts whether git reads it or not, so a later
    /// value does not hide an earlier one), located as git locates them (`~` interpolated,
    /// a relative path from `base`), into `reads`: the path with its links resolved, and
    /// with only those on the way to it resolved where the file is a link (a rule on the
    /// link's name judges it too). A value that cannot be located is an unknown read; an
    /// empty one, or none (git stops with an error), names no file.
    fn files_read(
        &mut self,
        entries: &[Entry],
        base: &Path,
        reads: &mut Vec<(PathBuf, String, bool)>,
    ) {
        for e in entries {
            let (Some((key, what)), Some(raw)) = (e.file_read(), e.raw.as_deref()) else {
                continue;
            };
            if raw.is_empty() {
                continue;
            }
            let shown = String::from_utf8_lossy(raw);
            // Newer git's `:(optional)` prefix (a missing file is no error); an older git
            // takes it for a relative path's first name: both are read.
            let mut values = vec![raw];
            if let Some(rest) = raw.strip_prefix(b":(optional)")
                && !rest.is_empty()
            {
                values.push(rest);
            }
            for value in values {
                let path = match located(value, base, self.home) {
                    Ok(path) => path,
                    Err(why) => {
                        self.outside.push(OutsideRead {
                            path: e.file.clone(),
                            why: format!(
                                "it sets {key} to {shown}, a file {what}, which cannot be located here ({why})"
                            ),
                            linked: false,
                            unknown: true,
                        });
                        continue;
                    }
                };
                let why = format!("{} sets {key} to {shown}, a file {what}", e.file.display());
                let resolved = physical(&path);
                let named = match (path.parent(), path.file_name()) {
                    (Some(parent), Some(name)) => physical(parent).join(name),
                    _ => resolved.clone(),
                };
                if named != resolved {
                    reads.push((named, why.clone(), false));
                }
                reads.push((resolved, why, false));
            }
        }
    }

    /// The object stores `objects/info/alternates` names, and theirs, as git follows them
    /// (five levels down, relative entries from the store that names them), into `reads`;
    /// a file that cannot be read (no regular file, too large) is an unknown read.
    fn alternates(&mut self, objects: &Path, reads: &mut Vec<(PathBuf, String, bool)>) {
        let mut files = 0;
        let mut todo = vec![(objects.to_path_buf(), 0)];
        let mut seen: Vec<PathBuf> = Vec::new();
        while let Some((store, depth)) = todo.pop() {
            let file = store.join("info/alternates");
            files += 1;
            if files > MAX_ALTERNATES_FILES {
                self.outside.push(OutsideRead {
                    path: file,
                    why: format!(
                        "object stores name more than {MAX_ALTERNATES_FILES} others, more than is followed here"
                    ),
                    linked: false,
                    unknown: true,
                });
                return;
            }
            // A store that is no directory holds no `alternates` git could read.
            if std::fs::metadata(&file)
                .is_err_and(|e| e.kind() == std::io::ErrorKind::NotADirectory)
            {
                continue;
            }
            let bytes = match read_small(&file, MAX_CONFIG_BYTES) {
                Ok(None) => continue,
                Ok(Some(bytes)) => bytes,
                Err(why) => {
                    self.outside.push(OutsideRead {
                        path: file,
                        why: format!("the object stores it names cannot be known: {why}"),
                        linked: false,
                        unknown: true,
                    });
                    continue;
                }
            };
            let base = shown_path(store.clone());
            for entry in alternate_entries(&bytes) {
                let path = shown_path(base.join(std::ffi::OsStr::from_bytes(&entry)));
                reads.push((
                    path.clone(),
                    format!("{} names it as an object store", file.display()),
                    false,
                ));
                if depth < MAX_ALTERNATE_DEPTH && !seen.contains(&path) && path.is_dir() {
                    seen.push(path.clone());
                    todo.push((path, depth + 1));
                }
            }
        }
    }

    /// Reads one configuration file and those it includes into `entries` (only what the
    /// check consults, [`Entry::consulted`]); a missing top-level file is none (git skips
    /// it). `file` is the path as git opens it: a relative include inside it is found from
    /// its directory, wherever a link on the way leads (git does not resolve links there);
    /// the messages name it with links resolved.
    fn config_file(
        &mut self,
        file: &Path,
        depth: usize,
        entries: &mut Vec<Entry>,
    ) -> Result<(), String> {
        let shown = shown_path(file.to_path_buf());
        self.name(file);
        self.name(&shown);
        self.config_files += 1;
        if self.config_files > MAX_CONFIG_FILES {
            return Err(format!(
                "{} takes more than {MAX_CONFIG_FILES} configuration files to read with what they include, which cannot all be checked for programs git runs",
                shown.display()
            ));
        }
        let parsed = match self.parsed.get(file) {
            Some(parsed) => Rc::clone(parsed),
            None => {
                #[cfg(test)]
                CONFIG_READS.with(|n| n.set(n.get() + 1));
                let Some(bytes) = read_small_shown(file, &shown, MAX_CONFIG_BYTES)? else {
                    if depth == 0 {
                        return Ok(());
                    }
                    return Err(format!(
                        "{} cannot be read (it does not exist)",
                        shown.display()
                    ));
                };
                let parsed = parse_config(&bytes).map_err(|line| {
                    format!(
                        "{} cannot be parsed as git configuration (line {line})",
                        shown.display()
                    )
                })?;
                let consulted: Consulted = Rc::new(
                    parsed
                        .into_iter()
                        .filter(|p| p.is_include() || Entry::from_parsed(p, &shown).consulted())
                        .collect(),
                );
                self.parsed
                    .insert(file.to_path_buf(), Rc::clone(&consulted));
                consulted
            }
        };
        for p in parsed.iter() {
            if !p.is_include() {
                entries.push(Entry::from_parsed(p, &shown));
                continue;
            }
            // What it includes, whatever its condition (`includeIf.gitdir:…`), as git
            // would if the condition held.
            let Some(path) = p.value.as_deref() else {
                return Err(format!(
                    "{} sets {} without a value",
                    shown.display(),
                    Entry::from_parsed(p, &shown).name()
                ));
            };
            if depth + 1 > MAX_INCLUDE_DEPTH {
                return Err(format!(
                    "{} includes files nested deeper than git's {MAX_INCLUDE_DEPTH} levels",
                    shown.display()
                ));
            }
            let included = include_path(path, file, self.home).map_err(|why| {
                format!(
                    "{} includes {}, which cannot be located here ({why})",
                    shown.display(),
                    String::from_utf8_lossy(path)
                )
            })?;
            // The found repository's own (the first one checked), not a submodule's.
            if self.repositories == 1 && !self.included.contains(&included) {
                self.included.push(included.clone());
            }
            self.config_file(&included, depth + 1, entries)?;
        }
        Ok(())
    }

    /// The hook git runs when it writes the index (`post-index-change`: `git status`
    /// refreshes and writes it), in the hooks directory (`core.hooksPath`, relative to the
    /// work tree, else the common directory's `hooks`).
    fn hooks(
        &mut self,
        repo: &Repository,
        entries: &[Entry],
        work_tree: Option<&Path>,
    ) -> Result<(), String> {
        let dir = match entries
            .iter()
            .rev()
            .find(|e| e.is("core", None, "hookspath"))
        {
            None => repo.common_dir.join("hooks"),
            Some(e) => {
                let Some(v) = e.raw.as_deref() else {
                    return Err(format!(
                        "{} sets core.hooksPath without a value",
                        e.file.display()
                    ));
                };
                // Relative to the work tree git runs hooks in.
                let base = work_tree.unwrap_or(&repo.git_dir);
                located(v, base, self.home).map_err(|why| {
                    format!(
                        "{} sets core.hooksPath to {}, which cannot be located here ({why})",
                        e.file.display(),
                        String::from_utf8_lossy(v)
                    )
                })?
            }
        };
        self.name(&dir);
        self.name(Path::new(INDEX_HOOK));
        let hook = dir.join(INDEX_HOOK);
        if std::fs::symlink_metadata(&hook).is_ok() {
            return Err(format!(
                "{} is a hook git runs when it writes the index ({INDEX_HOOK}), as `git status` does",
                hook.display()
            ));
        }
        Ok(())
    }

    /// Each submodule git goes into: a gitlink of the index whose directory in the work tree
    /// holds a repository (`.git`), `.gitmodules` or not. Its repository is checked as
    /// this one is.
    fn submodules(
        &mut self,
        repo: &Repository,
        entries: &[Entry],
        work_tree: &Path,
        depth: usize,
    ) -> Result<(), String> {
        let index = repo.git_dir.join("index");
        let unreadable = |why: &str| {
            format!(
                "{} {why}, so the submodules git goes into cannot be checked for programs git runs",
                index.display()
            )
        };
        // The index reader knows SHA-1 repositories only.
        if entries.iter().any(|e| {
            e.is("extensions", None, "objectformat")
                && !e
                    .value
                    .as_deref()
                    .is_some_and(|v| v.eq_ignore_ascii_case("sha1"))
        }) {
            return Err(unreadable("is of an object format not read here"));
        }
        let links = match std::fs::metadata(&index) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(unreadable(&format!("cannot be read ({e})"))),
            Ok(m) if !m.is_file() => return Err(unreadable("is no regular file")),
            Ok(m) if m.len() > MAX_INDEX_BYTES => return Err(unreadable("is too large")),
            Ok(m) => gitlinks(&index, &m).map_err(|why| unreadable(&why))?,
        };
        for path in links.iter() {
            let dir = work_tree.join(path);
            self.name(&dir);
            // Populated (a gitfile, or a git directory by git's own test) or not (git does
            // not go in).
            let dot_git = dir.join(".git");
            let found = match std::fs::metadata(&dot_git) {
                Ok(m) if m.is_file() => repository_at(&dir)?,
                Ok(_) => match is_git_directory(&dot_git) {
                    Ok(true) => repository_at(&dir)?,
                    Ok(false) => None,
                    Err(why) => return Err(unsure(&dot_git, &why)),
                },
                Err(_) => None,
            };
            if let Some(sub) = found {
                if depth + 1 > MAX_SUBMODULE_DEPTH {
                    return Err(format!(
                        "{} is a submodule nested deeper than {MAX_SUBMODULE_DEPTH} levels, which cannot be checked for programs git runs",
                        dir.display()
                    ));
                }
                self.repository(&sub, depth + 1)?;
            }
        }
        Ok(())
    }
}

/// What identifies one version of an index file: git replaces the file (a new inode) when
/// it writes it, and any write changes its `ctime`, which no program can set.
type IndexVersion = (u64, u64, u64, i64, i64, i64, i64);

/// An index read: its path, its version, its gitlinks.
type Remembered = (PathBuf, IndexVersion, Arc<Vec<String>>);

/// The paths of the gitlinks (and a sparse index's directories) the index `file` lists,
/// without their `/`. The last few indexes read are remembered by version
/// ([`IndexVersion`]), so that checking git's commands one after another (and the two
/// checks of one command) reads a large index once. `Err` in words when it cannot be read.
fn gitlinks(file: &Path, meta: &std::fs::Metadata) -> Result<Arc<Vec<String>>, String> {
    use std::os::unix::fs::MetadataExt as _;
    /// Indexes remembered.
    const REMEMBERED: usize = 8;
    static READ: Mutex<Vec<Remembered>> = Mutex::new(Vec::new());
    let version = (
        meta.dev(),
        meta.ino(),
        meta.len(),
        meta.mtime(),
        meta.mtime_nsec(),
        meta.ctime(),
        meta.ctime_nsec(),
    );
    let remembered = |read: &Vec<Remembered>| {
        read.iter()
            .find(|(p, v, _)| p == file && *v == version)
            .map(|(_, _, links)| Arc::clone(links))
    };
    if let Some(links) = remembered(&READ.lock().unwrap_or_else(PoisonError::into_inner)) {
        return Ok(links);
    }
    let bytes = std::fs::read(file).map_err(|e| format!("cannot be read ({e})"))?;
    let paths = crate::git_index::index_paths(&bytes)
        .ok_or("cannot be read here (a split index, or a format not known)")?;
    let links: Arc<Vec<String>> = Arc::new(
        paths
            .into_iter()
            .filter_map(|p| p.strip_suffix('/').map(str::to_owned))
            .collect(),
    );
    // Read again: a file that changed while it was read is not remembered.
    let same = std::fs::metadata(file).is_ok_and(|m| {
        (
            m.dev(),
            m.ino(),
            m.len(),
            m.mtime(),
            m.mtime_nsec(),
            m.ctime(),
            m.ctime_nsec(),
        ) == version
    });
    if same {
        let mut read = READ.lock().unwrap_or_else(PoisonError::into_inner);
        read.retain(|(p, _, _)| p != file);
        if read.len() >= REMEMBERED {
            read.remove(0);
        }
        read.push((file.to_path_buf(), version, Arc::clone(&links)));
    }
    Ok(links)
}

/// The hook git runs whenever it writes the index.
const INDEX_HOOK: &str = "post-index-change";

/// One `section.subsection.key = value` of a configuration file.
struct Entry {
    /// The file that sets it (an included one where it is).
    file: PathBuf,
    /// Lower-case.
    section: String,
    /// As written (case kept), or lower-case in the old `[section.sub]` form.
    subsection: Option<String>,
    /// Lower-case.
    key: String,
    /// `None` for a key without `=` (a boolean true); read as UTF-8, lossily, for the
    /// values compared with text (program names, booleans, `branch.sort`).
    value: Option<String>,
    /// The value's bytes as written: what a path value (`core.worktree`,
    /// `core.hooksPath`) names, a byte that is not UTF-8 kept.
    raw: Option<Vec<u8>>,
}

/// The values git-lfs writes for its filter (`git lfs install`, with `--skip-smudge`),
/// which run the user's own git-lfs.
const GIT_LFS_FILTERS: &[(&str, &str)] = &[
    ("clean", "git-lfs clean -- %f"),
    ("smudge", "git-lfs smudge -- %f"),
    ("smudge", "git-lfs smudge --skip -- %f"),
    ("process", "git-lfs filter-process"),
    ("process", "git-lfs filter-process --skip"),
];

impl Entry {
    /// The entry `p` of the configuration file `file`.
    fn from_parsed(p: &ConfigEntry, file: &Path) -> Self {
        let text = |b: &Option<Vec<u8>>| {
            b.as_deref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
        };
        Entry {
            file: file.to_path_buf(),
            section: p.section.clone(),
            subsection: text(&p.subsection),
            key: p.key.clone(),
            value: text(&p.value),
            raw: p.value.clone(),
        }
    }

    /// The value as the path it names (its bytes as written).
    fn path_value(&self) -> Option<&Path> {
        self.raw
            .as_deref()
            .map(|b| Path::new(std::ffi::OsStr::from_bytes(b)))
    }

    /// Whether the check looks at it: a program it names ([`Self::runs_a_program`], in a
    /// partial clone too), what makes a partial clone ([`Self::makes_a_promisor`]), or a
    /// key whose last value is looked up (`core.worktree`, `core.hooksPath`,
    /// `extensions.objectFormat`, `branch.sort`), or a file git reads
    /// ([`Self::file_read`]). The others are dropped when a file is read.
    fn consulted(&self) -> bool {
        self.runs_a_program(true).is_some()
            || self.makes_a_promisor()
            || self.is("core", None, "worktree")
            || self.is("core", None, "hookspath")
            || self.is("extensions", None, "objectformat")
            || self.is("branch", None, "sort")
            || self.file_read().is_some()
    }

    /// Whether the value names a file git reads for one of the commands taken for reads:
    /// the key as git's documentation spells it and, in words, when git reads the file.
    /// git locates it with `git_config_pathname` (`interpolate_path`, a relative path from
    /// the top of the work tree, where git runs). `commit.template` (read by `git commit`
    /// only) and `mailmap.blob` (an object of the repository) are none; `include.path`,
    /// `core.worktree` and `core.hooksPath` are looked at on their own.
    fn file_read(&self) -> Option<(&'static str, &'static str)> {
        let sub = self.subsection.as_deref();
        Some(match (self.section.as_str(), sub, self.key.as_str()) {
            // Every value (an empty one empties the list), for `git blame`, which prints
            // the first line that is no object name.
            ("blame", None, "ignorerevsfile") => (
                "blame.ignoreRevsFile",
                "`git blame` reads for the revisions to skip",
            ),
            ("mailmap", None, "file") => (
                "mailmap.file",
                "`git log`, `git show`, `git shortlog` and `git blame` read for the names they show",
            ),
            ("core", None, "attributesfile") => (
                "core.attributesFile",
                "git reads for the attributes of paths",
            ),
            ("core", None, "excludesfile") => (
                "core.excludesFile",
                "`git status` reads for the files it ignores",
            ),
            ("diff", None, "orderfile") => (
                "diff.orderFile",
                "`git diff` and `git log -p` read for the order of the files they show",
            ),
            ("gpg", Some("ssh"), "allowedsignersfile") => (
                "gpg.ssh.allowedSignersFile",
                "git reads when it verifies an SSH signature",
            ),
            ("gpg", Some("ssh"), "revocationfile") => (
                "gpg.ssh.revocationFile",
                "git reads when it verifies an SSH signature",
            ),
            _ => return None,
        })
    }

    fn is(&self, section: &str, subsection: Option<&str>, key: &str) -> bool {
        self.section == section && self.subsection.as_deref() == subsection && self.key == key
    }

    /// The name git shows: `section.subsection.key`.
    fn name(&self) -> String {
        match &self.subsection {
            Some(s) => format!("{}.{s}.{}", self.section, self.key),
            None => format!("{}.{}", self.section, self.key),
        }
    }

    /// Whether it makes the repository a partial clone, which fetches the objects it lacks
    /// from its promisor remote when `git show` or `git log -p` needs them.
    fn makes_a_promisor(&self) -> bool {
        self.is("extensions", None, "partialclone")
            || (self.section == "remote"
                && self.subsection.is_some()
                && matches!(self.key.as_str(), "promisor" | "partialclonefilter"))
    }

    /// What program git runs for it during a read, and for which commands (`None`: none).
    /// `promisor`: the repository is a partial clone, whose reads may fetch.
    fn runs_a_program(&self, promisor: bool) -> Option<(When, &'static str)> {
        let sub = self.subsection.is_some();
        let value = self.value.as_deref();
        let program = "a program git runs";
        let always = |what| Some((When::Always, what));
        match (self.section.as_str(), self.key.as_str()) {
            // A boolean is git's own daemon (or none); anything else a hook command.
            ("core", "fsmonitor") if !sub => {
                (!value.is_none_or(is_boolean)).then_some((When::Always, program))
            }
            ("diff", "external") if !sub => always(program),
            ("diff", "textconv" | "command") if sub => always(program),
            ("filter", key @ ("clean" | "smudge" | "process")) if sub => {
                let normal = value.map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "));
                let lfs = normal
                    .as_deref()
                    .is_some_and(|v| GIT_LFS_FILTERS.contains(&(key, v)));
                (!lfs).then_some((When::Always, program))
            }
            // Verifying a signature (`git log --show-signature`, `log.showSignature`, a
            // `%G?` format, `git branch --sort=signature`) runs it.
            ("gpg", "program") => Some((
                When::Verifying,
                "a program git runs when it verifies a signature",
            )),
            // Re-merging a merge to show it (`--remerge-diff`, `log.diffMerges=remerge`)
            // runs the driver `.gitattributes` names for a file both sides changed.
            ("merge", "driver") if sub => Some((
                When::Remerging,
                "a program git runs when it re-merges a merge to show it (`--remerge-diff`)",
            )),
            // `git help` runs the viewer or browser configured.
            ("man" | "browser", "cmd" | "path") if sub => always("a program `git help` runs"),
            // Hooks defined in the configuration (newer git).
            ("hook", "command") if sub => always("a hook git runs"),
            // A partial clone's fetch of what it lacks.
            ("core", "sshcommand" | "gitproxy" | "askpass" | "alternaterefscommand")
                if promisor && !sub =>
            {
                always(PROMISOR)
            }
            ("credential", "helper") if promisor => always(PROMISOR),
            ("remote", "uploadpack" | "vcs") if promisor && sub => always(PROMISOR),
            ("protocol", "allow") if promisor => always(PROMISOR),
            _ => None,
        }
    }
}

const PROMISOR: &str = "a program git runs when it fetches the objects a partial clone lacks (`git show`, `git log -p`)";

/// git's booleans (`git_parse_maybe_bool_text`, and 1 and 0), in any case; an empty value
/// is false.
fn is_boolean(v: &str) -> bool {
    ["true", "false", "yes", "no", "on", "off", "1", "0", ""]
        .iter()
        .any(|b| v.eq_ignore_ascii_case(b))
}

/// Where an include path (`value`) in the configuration file `file` leads, as git locates
/// it (`interpolate_path`, then relative to the including file): `~` and `~/…` from `home`,
/// `~user/…` from that user's home (looked up in the password database, which may ask a
/// directory service), the rest of the path after the `~…` appended as written (`~//x` is
/// `$HOME//x`), an absolute path as it is, a relative one from the directory of `file` as
/// git opened it (links on the way not resolved, as git does not). `Err` says why it cannot
/// be located (`the home directory is not known`, `no such user`, `an empty path`, a path
/// under git's installation `%(prefix)/`, a path that names the process reading it such as
/// `/proc/self/…` or `/dev/fd/…`, which git and this check would read differently), for the
/// caller to name the file.
pub fn include_path(value: &[u8], file: &Path, home: Option<&Path>) -> Result<PathBuf, String> {
    located(value, file.parent().unwrap_or(Path::new("/")), home)
}

/// A path value of git's configuration (`value`) located as git's `interpolate_path` does,
/// a relative one from `base` ([`include_path`]).
fn located(value: &[u8], base: &Path, home: Option<&Path>) -> Result<PathBuf, String> {
    use std::ffi::{OsStr, OsString};
    use std::os::unix::ffi::OsStringExt as _;
    if value.is_empty() {
        return Err("an empty path".to_owned());
    }
    let path = if let Some(rest) = value.strip_prefix(b"~") {
        // The user's name runs to the first `/`; what follows, that `/` included, is
        // appended as it is.
        let (user, tail) =
            rest.split_at(rest.iter().position(|&b| b == b'/').unwrap_or(rest.len()));
        let home_dir = if user.is_empty() {
            home.map(Path::to_path_buf)
                .ok_or("the home directory is not known")?
        } else {
            let name = std::str::from_utf8(user).map_err(|_| {
                format!(
                    "the user name {} is not UTF-8",
                    String::from_utf8_lossy(user)
                )
            })?;
            nix::unistd::User::from_name(name)
                .map_err(|e| format!("the user cannot be looked up: {e}"))?
                .ok_or("no such user")?
                .dir
        };
        let mut bytes = home_dir.into_os_string().into_vec();
        bytes.extend_from_slice(tail);
        PathBuf::from(OsString::from_vec(bytes))
    } else if value.starts_with(b"%(prefix)/") {
        return Err("a path relative to git's installation".to_owned());
    } else {
        base.join(OsStr::from_bytes(value))
    };
    if names_the_reader(&path) {
        return Err("a path that names the process reading it".to_owned());
    }
    Ok(path)
}

/// Whether `path` passes through a name that means the process reading it
/// (`/proc/self`, `/proc/thread-self`, `/dev/fd`, `/dev/stdin`, …): git reading it and this
/// check reading it would find different files. Written out, or behind a link: a magic link
/// of a process ([`crate::path::through_proc`]), or any file of `/proc` the links lead to
/// (`lnk/environ` with `lnk -> /proc/self`).
fn names_the_reader(path: &Path) -> bool {
    if crate::path::through_proc(path) || crate::path::resolve_symlinks(path).starts_with("/proc") {
        return true;
    }
    // Written out, any file there (`/proc/self/environ`), not only the magic links.
    let names: Vec<&std::ffi::OsStr> = path.iter().collect();
    names.windows(2).any(|w| {
        (w[0] == "proc" && (w[1] == "self" || w[1] == "thread-self"))
            || (w[0] == "dev"
                && ["fd", "stdin", "stdout", "stderr"]
                    .iter()
                    .any(|n| w[1] == *n))
    })
}

/// One variable of a git configuration file, as [`parse_config`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConfigEntry {
    /// The section, lower-case (`core` of `[Core]`).
    pub section: String,
    /// The subsection as written, case kept (`X.y` of `[diff "X.y"]`); lower-case in the
    /// old `[section.sub]` form.
    pub subsection: Option<Vec<u8>>,
    /// The key, lower-case.
    pub key: String,
    /// The value with quotes and escapes undone; `None` for a key without `=` (a boolean
    /// true).
    pub value: Option<Vec<u8>>,
}

impl ConfigEntry {
    /// The name git shows: `section.subsection.key`.
    pub fn name(&self) -> String {
        match &self.subsection {
            Some(sub) => format!(
                "{}.{}.{}",
                self.section,
                String::from_utf8_lossy(sub),
                self.key
            ),
            None => format!("{}.{}", self.section, self.key),
        }
    }

    /// Whether it includes a file: `include.path`, or `includeIf.<condition>.path`.
    pub fn is_include(&self) -> bool {
        self.key == "path"
            && ((self.section == "include" && self.subsection.is_none())
                || (self.section == "includeif" && self.subsection.is_some()))
    }
}

/// Parses a configuration file as git does (`git_parse_source` in git's `config.c`):
/// `[section]`, `[section "subsection"]` (a backslash escapes the next character) and the
/// old `[section.subsection]` (lower-cased), a key on the header's line, `key = value` or a
/// lone `key`, values with quotes, the escapes `\n \t \b \\ \"`, a backslash before the line
/// end continuing it, `#` and `;` comments outside quotes, CRLF line ends and a UTF-8
/// byte-order mark. `Err` with the line where git's reading would fail.
pub fn parse_config(bytes: &[u8]) -> Result<Vec<ConfigEntry>, usize> {
    let mut p = ConfigParser {
        bytes,
        at: 0,
        line: 1,
        eof: false,
    };
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        p.at = 3;
    }
    let mut out = Vec::new();
    let mut section: Option<(String, Option<Vec<u8>>)> = None;
    let mut comment = false;
    loop {
        let c = p.next();
        if c == b'\n' {
            if p.eof {
                return Ok(out);
            }
            comment = false;
            continue;
        }
        if comment || is_config_space(c) {
            continue;
        }
        if c == b'#' || c == b';' {
            comment = true;
            continue;
        }
        if c == b'[' {
            section = Some(p.header().ok_or(p.line)?);
            continue;
        }
        if !c.is_ascii_alphabetic() {
            return Err(p.line);
        }
        let line = p.line;
        let (key, value) = p.key_value(c).ok_or(p.line)?;
        // A key before any section is no variable git accepts.
        let Some((name, sub)) = &section else {
            return Err(line);
        };
        out.push(ConfigEntry {
            section: name.clone(),
            subsection: sub.clone(),
            key,
            value,
        });
    }
}

/// git's `isspace`: space, tab, line feed, carriage return.
fn is_config_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// git's `iskeychar`.
fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

struct ConfigParser<'a> {
    bytes: &'a [u8],
    at: usize,
    line: usize,
    eof: bool,
}

impl ConfigParser<'_> {
    /// The next character, a CRLF read as `\n`, the end as `\n` (with `eof` set).
    fn next(&mut self) -> u8 {
        let Some(&c) = self.bytes.get(self.at) else {
            self.eof = true;
            return b'\n';
        };
        self.at += 1;
        if c == b'\r' && self.bytes.get(self.at) == Some(&b'\n') {
            self.at += 1;
            self.line += 1;
            return b'\n';
        }
        if c == b'\n' {
            self.line += 1;
        }
        c
    }

    /// A section header after its `[`: the section (lower-case) and subsection.
    fn header(&mut self) -> Option<(String, Option<Vec<u8>>)> {
        let mut name = Vec::new();
        loop {
            let c = self.next();
            if self.eof {
                return None;
            }
            if c == b']' {
                break;
            }
            if is_config_space(c) {
                // `[section "subsection"]`.
                let mut c = c;
                while is_config_space(c) {
                    if c == b'\n' {
                        return None;
                    }
                    c = self.next();
                }
                if c != b'"' {
                    return None;
                }
                let mut sub = Vec::new();
                loop {
                    let mut c = self.next();
                    if c == b'\n' {
                        return None;
                    }
                    if c == b'"' {
                        break;
                    }
                    if c == b'\\' {
                        c = self.next();
                        if c == b'\n' {
                            return None;
                        }
                    }
                    sub.push(c);
                }
                if self.next() != b']' {
                    return None;
                }
                // git names it `section.subsection`, the section itself possibly dotted
                // (`[a.b "c"]`); lookups split at the first dot.
                let mut full = name;
                full.push(b'.');
                full.extend_from_slice(&sub);
                return Some(split_section(&full));
            }
            if !is_key_char(c) && c != b'.' {
                return None;
            }
            name.push(c.to_ascii_lowercase());
        }
        if name.is_empty() {
            return None;
        }
        Some(split_section(&name))
    }

    /// A variable from its first character on: its key (lower-case) and value (`None`
    /// without `=`).
    fn key_value(&mut self, first: u8) -> Option<(String, Option<Vec<u8>>)> {
        let mut key = String::from(char::from(first.to_ascii_lowercase()));
        let mut c;
        loop {
            c = self.next();
            if self.eof || !is_key_char(c) {
                break;
            }
            key.push(char::from(c.to_ascii_lowercase()));
        }
        while c == b' ' || c == b'\t' {
            c = self.next();
        }
        if c == b'\n' {
            return Some((key, None));
        }
        if c != b'=' {
            return None;
        }
        Some((key, Some(self.value()?)))
    }

    /// A value after its `=`, to the end of its (last continued) line (`parse_value`).
    fn value(&mut self) -> Option<Vec<u8>> {
        let mut value = Vec::new();
        let mut quote = false;
        let mut comment = false;
        // Where trailing whitespace outside quotes started (`None`: none pending).
        let mut trim_at: Option<usize> = None;
        loop {
            let c = self.next();
            if c == b'\n' {
                if quote {
                    return None;
                }
                if let Some(at) = trim_at {
                    value.truncate(at);
                }
                return Some(value);
            }
            if comment {
                continue;
            }
            if is_config_space(c) && !quote {
                if !value.is_empty() {
                    trim_at.get_or_insert(value.len());
                    value.push(c);
                }
                continue;
            }
            if !quote && (c == b';' || c == b'#') {
                comment = true;
                continue;
            }
            trim_at = None;
            if c == b'\\' {
                let escaped = match self.next() {
                    // A continued line (also at the end of the file).
                    b'\n' => continue,
                    b't' => b'\t',
                    b'b' => 0x08,
                    b'n' => b'\n',
                    c @ (b'\\' | b'"') => c,
                    _ => return None,
                };
                value.push(escaped);
                continue;
            }
            if c == b'"' {
                quote = !quote;
                continue;
            }
            value.push(c);
        }
    }
}

/// `section.sub`'s section (before the first dot, lower-case) and subsection (the rest).
fn split_section(full: &[u8]) -> (String, Option<Vec<u8>>) {
    match full.iter().position(|&b| b == b'.') {
        Some(at) => (
            String::from_utf8_lossy(&full[..at]).into_owned(),
            Some(full[at + 1..].to_vec()),
        ),
        None => (String::from_utf8_lossy(full).into_owned(), None),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// One parsed entry as text: section, subsection, key, value.
    type Parsed = (String, Option<String>, String, Option<String>);

    fn one(text: &str) -> Vec<Parsed> {
        let text_of = |b: Option<Vec<u8>>| b.map(|b| String::from_utf8(b).unwrap());
        parse_config(text.as_bytes())
            .unwrap()
            .into_iter()
            .map(|e| (e.section, text_of(e.subsection), e.key, text_of(e.value)))
            .collect()
    }

    /// A repository made by hand in `dir` (`HEAD`, `objects/`, `refs/`), whose
    /// configuration includes `big.cfg` 250 times.
    fn including_repository(dir: &Path) {
        let git = dir.join(".git");
        for d in ["objects", "refs"] {
            std::fs::create_dir_all(git.join(d)).unwrap();
        }
        std::fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        let mut big = String::from("[x]\n");
        for i in 0..1000 {
            big.push_str(&format!("\ty{i} = {}\n", "v".repeat(48)));
        }
        std::fs::write(git.join("big.cfg"), big).unwrap();
        std::fs::write(
            git.join("config"),
            "[include]\n\tpath = big.cfg\n".repeat(250),
        )
        .unwrap();
    }

    fn reads() -> usize {
        CONFIG_READS.with(std::cell::Cell::get)
    }

    /// Within one permission check ([`ScanCache`]), the repository git finds from a
    /// directory is read once, however many git commands ask about it, and a file it
    /// includes 250 times is read once (found by review 31: each command read all 250
    /// copies, twice); outside one, each question reads the files again (as they are
    /// then), still each once.
    #[test]
    fn a_repository_is_read_once_per_check() {
        let tmp = tempfile::tempdir().unwrap();
        including_repository(tmp.path());
        let before = reads();
        {
            let _cache = ScanCache::enter();
            for args in [["log", "-1"], ["status", "-s"], ["log", "-1"]] {
                assert!(repository_programs(tmp.path(), None, Some(&args)).is_ok());
            }
            assert!(repository_programs(tmp.path(), None, None).is_ok());
        }
        assert_eq!(
            reads() - before,
            3,
            "config, config.worktree (there is none) and big.cfg, once each"
        );
        let before = reads();
        for _ in 0..3 {
            assert!(repository_programs(tmp.path(), None, None).is_ok());
        }
        assert_eq!(reads() - before, 9);
        // What the next check reads is the disk as it is then.
        let config = tmp.path().join(".git/config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str("[core]\n\tfsmonitor = touch x\n");
        std::fs::write(&config, text).unwrap();
        let _cache = ScanCache::enter();
        let why = repository_programs(tmp.path(), None, None).unwrap_err();
        assert!(why.contains("core.fsmonitor"), "{why}");
    }

    /// An include's path is located as git's `interpolate_path` locates it: `~` and `~/` from
    /// the home given, `~user/` from that user's home, relative from the including file's
    /// directory (its bytes kept), absolute as it is; what cannot be located says why.
    #[test]
    fn include_paths_are_located_as_git_locates_them() {
        use std::os::unix::ffi::OsStrExt as _;
        let file = Path::new("/repo/.git/config");
        let home = Some(Path::new("/home/me"));
        let at = |v: &[u8]| include_path(v, file, home);
        assert_eq!(at(b"~/x.cfg").unwrap(), Path::new("/home/me/x.cfg"));
        assert_eq!(at(b"~").unwrap(), Path::new("/home/me"));
        assert_eq!(at(b"sub/x.cfg").unwrap(), Path::new("/repo/.git/sub/x.cfg"));
        assert_eq!(at(b"/etc/x.cfg").unwrap(), Path::new("/etc/x.cfg"));
        let odd = at(b"caf\xe9.cfg").unwrap();
        assert_eq!(odd.as_os_str().as_bytes(), b"/repo/.git/caf\xe9.cfg");
        assert_eq!(at(b"~root/x.cfg").unwrap().file_name().unwrap(), "x.cfg");
        assert!(at(b"~root/x.cfg").unwrap().starts_with("/"));
        assert_eq!(at(b"~no-such-user-here/x").unwrap_err(), "no such user");
        assert_eq!(at(b"").unwrap_err(), "an empty path");
        assert!(at(b"%(prefix)/etc/x").unwrap_err().contains("installation"));
        // The rest after `~` appended as written (found by code review 36: `~//x` was `/x`).
        let doubled = at(b"~//proj/x.cfg").unwrap();
        assert_eq!(doubled.as_os_str().as_bytes(), b"/home/me//proj/x.cfg");
        assert!(doubled.starts_with("/home/me"));
        // Only `%(prefix)/` is git's installation; another `%(` is a name.
        assert_eq!(at(b"%(x)/y").unwrap(), Path::new("/repo/.git/%(x)/y"));
        // A path that names the process reading it is not what git would read.
        for reader in [
            &b"/proc/self/cwd/x"[..],
            b"/proc/thread-self/x",
            b"/dev/fd/3",
            b"../../../proc/self/root/x",
            b"/dev/stdin",
        ] {
            let why = at(reader).unwrap_err();
            assert!(why.contains("names the process"), "{why}");
        }
        let no_home = include_path(b"~/x", file, None).unwrap_err();
        assert_eq!(no_home, "the home directory is not known");
    }

    /// The parser's reading of git's syntax, piece by piece (the integration tests compare
    /// it with git's own).
    #[test]
    fn parses_git_s_syntax() {
        assert_eq!(
            one("[Core]\n\tFSMonitor = \"a b\" ; c\n"),
            vec![("core".into(), None, "fsmonitor".into(), Some("a b".into()))]
        );
        assert_eq!(
            one("[diff \"X.y\"] textconv=cat\n"),
            vec![(
                "diff".into(),
                Some("X.y".into()),
                "textconv".into(),
                Some("cat".into())
            )]
        );
        assert_eq!(
            one("[diff.X]\nkey\n"),
            vec![("diff".into(), Some("x".into()), "key".into(), None)]
        );
        assert_eq!(
            one("[a]\nk = x\\\n y  \\t\n"),
            vec![("a".into(), None, "k".into(), Some("x y  \t".into()))]
        );
        assert_eq!(one("[a]\nk = x   \n")[0].3.as_deref(), Some("x"));
        assert_eq!(one("[a]\nk = \"x  \"\n")[0].3.as_deref(), Some("x  "));
        assert_eq!(one("[a]\r\nk = v\r\n")[0].3.as_deref(), Some("v"));
        assert_eq!(one("[a]\nk = v\\")[0].3.as_deref(), Some("v"));
        assert!(one("# only\n; comments\n\n").is_empty());
        for bad in [
            "k = v\n",
            "[a\n",
            "[]\n",
            "[a \"b\n",
            "[a \"b\"x]\n",
            "[a]\nk = \"v\n",
            "[a]\nk = \\q\n",
            "[a]\nk v\n",
            "[a]\n_k = v\n",
        ] {
            assert!(parse_config(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }
}
