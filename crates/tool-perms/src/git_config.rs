//! What a repository's own files make git run for the commands the engine takes for reads
//! (`git status`, `git diff`, `git log`, `git show`, `git blame`, branch listing, `git
//! help`): programs its configuration names (`core.fsmonitor`, `diff.external`, a diff or
//! filter driver, `gpg.program`, …), a hook git runs when it writes the index, and the same
//! in every submodule git goes into. Such a repository arrives with an archive, a shared
//! folder or a copied tree (`git clone` does not carry `.git/config`). Read without running
//! git (which would obey that configuration), bounded, once per check; what cannot be read
//! or understood counts as naming a program.
//!
//! Only the repository's own files: the user's (`~/.gitconfig`, `GIT_CONFIG_GLOBAL`,
//! `/etc/gitconfig`, `GIT_CONFIG_SYSTEM`) are theirs to trust.
//!
//! Keys left out on purpose: `core.pager` and `pager.<cmd>` (git starts a pager only when
//! its standard output is a terminal, and the Bash tool gives it a pipe, in a session of its
//! own where `/dev/tty` cannot be opened); `alias.<cmd>` (git ignores an alias that hides
//! one of its commands, and every command taken for a read is one); `trace2.*` (git reads it
//! from the system and global files only); `core.editor`, `sequence.editor`, `merge.*`,
//! `difftool.*`, `mergetool.*`, `gpg.ssh.defaultKeyCommand` (commands that write or sign,
//! never a read); `uploadpack.packObjectsHook` (protected configuration only).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use crate::engine::is_git_directory;

/// A configuration file (or gitfile, `commondir`) larger than this is not read: it asks.
const MAX_CONFIG_BYTES: u64 = 64 << 10;
/// git's own limit on nested includes (`MAX_INCLUDE_DEPTH`).
const MAX_INCLUDE_DEPTH: usize = 10;
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

/// Why git, started in `dir`, may run a program its repository's own files name: `Err`
/// with the reason in words (naming the file and the key), or `Ok` with the names of the
/// files that decided it (configuration files, included files, the hooks directory, the
/// submodules' directories), which a command earlier on the same line must not write for
/// the check to hold. `home` expands `~/` in an include's path and `core.hooksPath`.
///
/// The repository is the one git's discovery finds walking up from `dir`: the first `.git`
/// that is a gitfile (`gitdir: …`, followed, with its `commondir`) or a git directory, or a
/// directory that is itself a git directory (a bare repository). None found: nothing to
/// check.
pub(crate) fn repository_programs(dir: &Path, home: Option<&Path>) -> Result<Vec<String>, String> {
    let mut check = Check {
        home,
        repositories: 0,
        config_files: 0,
        names: Vec::new(),
    };
    for at in dir.ancestors() {
        if let Some(repo) = repository_at(at)? {
            check.repository(&repo, 0)?;
            break;
        }
    }
    Ok(check.names)
}

/// A repository git found: its git directory, the common directory (the main
/// repository's for a linked work tree) and its work tree (`None` for a bare repository).
struct Repository {
    git_dir: PathBuf,
    common_dir: PathBuf,
    work_tree: Option<PathBuf>,
}

/// The repository git's discovery takes at `at` (see [`repository_programs`]); `None` when
/// git goes on up. A `.git` that is neither a file nor a git directory (an empty `.git/`)
/// does not stop it.
fn repository_at(at: &Path) -> Result<Option<Repository>, String> {
    let dot_git = at.join(".git");
    match std::fs::metadata(&dot_git) {
        Ok(m) if m.is_file() => {
            let git_dir = read_gitfile(&dot_git)?;
            return Ok(Some(Repository {
                common_dir: common_dir(&git_dir)?,
                git_dir,
                work_tree: Some(at.to_path_buf()),
            }));
        }
        Ok(m) if m.is_dir() && is_git_directory(&dot_git) => {
            return Ok(Some(Repository {
                common_dir: common_dir(&dot_git)?,
                git_dir: dot_git,
                work_tree: Some(at.to_path_buf()),
            }));
        }
        _ => {}
    }
    if is_git_directory(at) {
        return Ok(Some(Repository {
            common_dir: common_dir(at)?,
            git_dir: at.to_path_buf(),
            work_tree: None,
        }));
    }
    Ok(None)
}

/// A small file's bytes: `None` when it does not exist; an error (in words) when it is no
/// regular file (a directory, a FIFO, which would block), is larger than `max` or cannot be
/// read.
fn read_small(path: &Path, max: u64) -> Result<Option<Vec<u8>>, String> {
    let shown = path.display();
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
    if !is_git_directory(&dir) {
        return Err(format!(
            "{shown} names no git directory ({})",
            dir.display()
        ));
    }
    Ok(dir)
}

/// The common directory of `git_dir`: the one its `commondir` file names (relative to it),
/// else itself.
fn common_dir(git_dir: &Path) -> Result<PathBuf, String> {
    let file = git_dir.join("commondir");
    match read_small(&file, MAX_CONFIG_BYTES)? {
        None => Ok(git_dir.to_path_buf()),
        Some(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let target = text.trim_end_matches(['\n', '\r']);
            if target.is_empty() {
                return Err(format!("{} cannot be read (it is empty)", file.display()));
            }
            Ok(shown_path(git_dir.join(target)))
        }
    }
}

/// `path` with its `..` and links resolved when it exists (`.git/worktrees/wt/../..` is
/// `.git`), for the messages; else as it is.
fn shown_path(path: PathBuf) -> PathBuf {
    std::fs::canonicalize(&path).unwrap_or(path)
}

struct Check<'a> {
    home: Option<&'a Path>,
    repositories: usize,
    /// Configuration files read so far ([`MAX_CONFIG_FILES`]).
    config_files: usize,
    names: Vec<String>,
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
            if let Some(what) = e.runs_a_program(promisor) {
                return Err(format!("{} sets {}, {what}", e.file.display(), e.name()));
            }
        }
        let work_tree = match entries
            .iter()
            .rev()
            .find(|e| e.is("core", None, "worktree"))
        {
            Some(e) => e.value.as_deref().map(|v| repo.git_dir.join(v)),
            None => repo.work_tree.clone(),
        };
        self.hooks(repo, &entries, work_tree.as_deref())?;
        if let Some(work_tree) = work_tree {
            self.submodules(repo, &entries, &work_tree, depth)?;
        }
        Ok(())
    }

    /// Reads one configuration file and those it includes into `entries`; a missing
    /// top-level file is none (git skips it).
    fn config_file(
        &mut self,
        file: &Path,
        depth: usize,
        entries: &mut Vec<Entry>,
    ) -> Result<(), String> {
        self.name(file);
        self.config_files += 1;
        if self.config_files > MAX_CONFIG_FILES {
            return Err(format!(
                "{} takes more than {MAX_CONFIG_FILES} configuration files to read with what they include, which cannot all be checked for programs git runs",
                file.display()
            ));
        }
        let Some(bytes) = read_small(file, MAX_CONFIG_BYTES)? else {
            if depth == 0 {
                return Ok(());
            }
            return Err(format!(
                "{} cannot be read (it does not exist)",
                file.display()
            ));
        };
        let parsed = parse(&bytes).map_err(|line| {
            format!(
                "{} cannot be parsed as git configuration (line {line})",
                file.display()
            )
        })?;
        for (section, subsection, key, value) in parsed {
            let entry = Entry {
                file: file.to_path_buf(),
                section,
                subsection,
                key,
                value,
            };
            let include = entry.key == "path"
                && (entry.is("include", None, "path")
                    || (entry.section == "includeif" && entry.subsection.is_some()));
            if !include {
                entries.push(entry);
                continue;
            }
            // What it includes, whatever its condition (`includeIf.gitdir:…`), as git
            // would if the condition held.
            let Some(path) = entry.value.as_deref() else {
                return Err(format!(
                    "{} sets {} without a value",
                    file.display(),
                    entry.name()
                ));
            };
            if depth + 1 > MAX_INCLUDE_DEPTH {
                return Err(format!(
                    "{} includes files nested deeper than git's {MAX_INCLUDE_DEPTH} levels",
                    file.display()
                ));
            }
            let included = if let Some(rest) = path.strip_prefix("~/") {
                match self.home {
                    Some(h) => h.join(rest),
                    None => {
                        return Err(format!(
                            "{} includes {path}, and the home directory is not known",
                            file.display()
                        ));
                    }
                }
            } else if path.starts_with('~') || path.starts_with("%(") {
                return Err(format!(
                    "{} includes {path}, which cannot be located here",
                    file.display()
                ));
            } else {
                file.parent().unwrap_or(Path::new("/")).join(path)
            };
            self.config_file(&shown_path(included), depth + 1, entries)?;
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
                let Some(v) = e.value.as_deref() else {
                    return Err(format!(
                        "{} sets core.hooksPath without a value",
                        e.file.display()
                    ));
                };
                if let Some(rest) = v.strip_prefix("~/") {
                    let Some(h) = self.home else {
                        return Err(format!(
                            "{} sets core.hooksPath to {v}, and the home directory is not known",
                            e.file.display()
                        ));
                    };
                    h.join(rest)
                } else if v.starts_with('/') {
                    PathBuf::from(v)
                } else if v.starts_with('~') || v.starts_with("%(") {
                    return Err(format!(
                        "{} sets core.hooksPath to {v}, which cannot be located here",
                        e.file.display()
                    ));
                } else {
                    work_tree.unwrap_or(&repo.git_dir).join(v)
                }
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
            let found = match std::fs::metadata(dir.join(".git")) {
                Ok(m) if m.is_file() => repository_at(&dir)?,
                Ok(m) if m.is_dir() && is_git_directory(&dir.join(".git")) => repository_at(&dir)?,
                // Not populated: git does not go in.
                _ => None,
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
    /// `None` for a key without `=` (a boolean true).
    value: Option<String>,
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

    /// What program git runs for it during a read (`None`: none). `promisor`: the
    /// repository is a partial clone, whose reads may fetch.
    fn runs_a_program(&self, promisor: bool) -> Option<&'static str> {
        let sub = self.subsection.is_some();
        let value = self.value.as_deref();
        let program = "a program git runs";
        match (self.section.as_str(), self.key.as_str()) {
            // A boolean is git's own daemon (or none); anything else a hook command.
            ("core", "fsmonitor") if !sub => (!value.is_none_or(is_boolean)).then_some(program),
            ("diff", "external") if !sub => Some(program),
            ("diff", "textconv" | "command") if sub => Some(program),
            ("filter", key @ ("clean" | "smudge" | "process")) if sub => {
                let normal = value.map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "));
                let lfs = normal
                    .as_deref()
                    .is_some_and(|v| GIT_LFS_FILTERS.contains(&(key, v)));
                (!lfs).then_some(program)
            }
            // Verifying a signature (`git log --show-signature`, `log.showSignature`, a
            // `%G?` format) runs it.
            ("gpg", "program") => Some(program),
            // `git help` runs the viewer or browser configured.
            ("man" | "browser", "cmd" | "path") if sub => Some("a program `git help` runs"),
            // Hooks defined in the configuration (newer git).
            ("hook", "command") if sub => Some("a hook git runs"),
            // A partial clone's fetch of what it lacks.
            ("core", "sshcommand" | "gitproxy" | "askpass" | "alternaterefscommand")
                if promisor && !sub =>
            {
                Some(PROMISOR)
            }
            ("credential", "helper") if promisor => Some(PROMISOR),
            ("remote", "uploadpack" | "vcs") if promisor && sub => Some(PROMISOR),
            ("protocol", "allow") if promisor => Some(PROMISOR),
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

/// One parsed entry: section (lower-case), subsection, key (lower-case), value.
type Parsed = (String, Option<String>, String, Option<String>);

/// Parses a configuration file as git does (`git_parse_source` in git's `config.c`):
/// `[section]`, `[section "subsection"]` (`\"` and `\\` escaped) and the old
/// `[section.subsection]` (lower-cased), a key on the header's line, `key = value` or a
/// lone `key`, values with quotes, the escapes `\n \t \b \\ \"`, a backslash before the line
/// end continuing it, `#` and `;` comments outside quotes, CRLF line ends and a UTF-8
/// byte-order mark. `Err` with the line where git's reading would fail.
fn parse(bytes: &[u8]) -> Result<Vec<Parsed>, usize> {
    let mut p = Parser {
        bytes,
        at: 0,
        line: 1,
        eof: false,
    };
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        p.at = 3;
    }
    let mut out = Vec::new();
    let mut section: Option<(String, Option<String>)> = None;
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
        if comment || is_space(c) {
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
        out.push((name.clone(), sub.clone(), key, value));
    }
}

/// git's `isspace`: space, tab, line feed, carriage return.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

/// git's `iskeychar`.
fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
    line: usize,
    eof: bool,
}

impl Parser<'_> {
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
    fn header(&mut self) -> Option<(String, Option<String>)> {
        let mut name = Vec::new();
        loop {
            let c = self.next();
            if self.eof {
                return None;
            }
            if c == b']' {
                break;
            }
            if is_space(c) {
                // `[section "subsection"]`.
                let mut c = c;
                while is_space(c) {
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
                let full = format!(
                    "{}.{}",
                    String::from_utf8_lossy(&name),
                    String::from_utf8_lossy(&sub)
                );
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
        Some(split_section(&String::from_utf8_lossy(&name)))
    }

    /// A variable from its first character on: its key (lower-case) and value (`None`
    /// without `=`).
    fn key_value(&mut self, first: u8) -> Option<(String, Option<String>)> {
        let mut key = vec![first.to_ascii_lowercase()];
        let mut c;
        loop {
            c = self.next();
            if self.eof || !is_key_char(c) {
                break;
            }
            key.push(c.to_ascii_lowercase());
        }
        while c == b' ' || c == b'\t' {
            c = self.next();
        }
        let key = String::from_utf8_lossy(&key).into_owned();
        if c == b'\n' {
            return Some((key, None));
        }
        if c != b'=' {
            return None;
        }
        let value = self.value()?;
        Some((key, Some(String::from_utf8_lossy(&value).into_owned())))
    }

    /// A value after its `=`, to the end of its (last continued) line (`parse_value`).
    fn value(&mut self) -> Option<Vec<u8>> {
        let mut value = Vec::new();
        let mut quote = false;
        let mut comment = false;
        // Where trailing whitespace outside quotes started (0: none pending).
        let mut trim_len = 0;
        loop {
            let c = self.next();
            if c == b'\n' {
                if quote {
                    return None;
                }
                if trim_len > 0 {
                    value.truncate(trim_len);
                }
                return Some(value);
            }
            if comment {
                continue;
            }
            if is_space(c) && !quote {
                if trim_len == 0 {
                    trim_len = value.len();
                }
                if !value.is_empty() {
                    value.push(c);
                }
                continue;
            }
            if !quote && (c == b';' || c == b'#') {
                comment = true;
                continue;
            }
            trim_len = 0;
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

/// `section.sub.key`'s section (before the first dot) and subsection (the rest).
fn split_section(full: &str) -> (String, Option<String>) {
    match full.split_once('.') {
        Some((section, sub)) => (section.to_owned(), Some(sub.to_owned())),
        None => (full.to_owned(), None),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn one(text: &str) -> Vec<Parsed> {
        parse(text.as_bytes()).unwrap()
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
            assert!(parse(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }
}
