//! EnterWorktree and ExitWorktree (Cargo feature `worktree`): move the session into an
//! isolated git worktree and back, on real `git worktree` commands.
//!
//! - [`EnterWorktree`] with a `name` (or neither field: a generated name) makes the worktree
//!   `<main root>/.claude/worktrees/<name>` on a new branch `worktree-<name>` at the current
//!   HEAD, the layout Claude Code uses (a `/` in the name becomes `+` in the directory and
//!   branch names). It claims what it makes first: the branch with `git branch` (which
//!   refuses one that exists, so of two sessions creating the same name at once only one
//!   goes on), then the directory, made here and never one that exists; then `git worktree
//!   add <dir> worktree-<name>` checks it out. It refuses when `.claude` or
//!   `.claude/worktrees` is a symbolic link (or resolves outside the root). A failed `git
//!   worktree add` removes only what this call made, and says what it removed: the branch
//!   while it still points at the commit it was made at and no worktree has it checked
//!   out, the directory when empty (git removes its own half-made checkout; a directory
//!   still holding files is left, and named). With a `path` it enters an existing linked
//!   worktree of the same repository: listed by `git worktree list --porcelain`, not
//!   prunable, and live (its `.git` gitfile names the repository's `worktrees/<id>`, whose
//!   `gitdir` names that `.git` back; a planted `.git/worktrees/*/gitdir` naming any
//!   directory does not count; both files are read without waiting or following a link, so
//!   a FIFO swapped in is refused). Either way it switches the session's working directory
//!   through a context modifier. File system work runs off the runtime's workers.
//! - Git runs with `-c core.hooksPath=/dev/null -c core.fsmonitor=false`: the repository's
//!   own hooks (`post-checkout`) and file system monitor never run (Claude Code runs
//!   `post-checkout` once the folder is trusted). Filter drivers cannot be turned off that
//!   way: a repository whose own configuration names a filter driver's program
//!   (`filter.<driver>.smudge`, `.clean`, `.process`) is refused, naming the key and the
//!   file. That configuration is read here, as git parses it, not by running `git config`
//!   (which would judge `includeIf` conditions for this check's repository, not the new
//!   worktree's): `config`, the common `config.worktree` and that of the git directory
//!   where git runs (the worktree's own for `remove`), and every file they include,
//!   `include.path` and `includeIf.<condition>.path` whatever the condition, at most 10
//!   deep. What cannot be read so (a file that is no regular file, too large or unreadable,
//!   a line git cannot parse, an include path that cannot be located) is a refusal too.
//! - The session remembers where it came from in an [`ActiveWorktree`] kept in the context's
//!   app state (shared by every clone of the session's context; see [`active_worktree`]),
//!   so [`ExitWorktree`] can go back. One worktree session at a time: entering a second one
//!   is refused until the first is exited.
//! - [`ExitWorktree`] with `keep` only switches back (saying so when the worktree's directory
//!   was removed meanwhile: its branch is what is kept). With `remove` it refuses while the
//!   worktree has uncommitted changes (`git status --porcelain` is not empty) or commits that
//!   are not on the branch the session came from, unless `discard_changes` is true; then it
//!   runs `git worktree remove --force` and deletes the branch. Files git ignores are no
//!   changes to `git status` and go with the directory, as with Claude Code and a plain
//!   `git worktree remove`; the prompt says so. It removes only a worktree
//!   that EnterWorktree created in this session: one entered by `path` can only be kept.
//!   A filter driver in the configuration refuses `remove` (without `discard_changes`, as
//!   `git status` would run it): the message says to leave with `keep` and remove the
//!   worktree with git.
//!
//! # Permissions
//!
//! Both tools describe no permission subject, like the other built-in tools whose effect is
//! not a write to one user file: what they write is git's own metadata (a branch,
//! `.git/worktrees/`, the line `/.claude/worktrees/` in `info/exclude` so the checkout stays
//! out of the main one's `git status`) and a checkout under `.claude/worktrees/`, which path
//! rules are not meant to match (Claude Code exempts `.claude/worktrees/` from its protected
//! paths for that reason). The permission engine therefore decides by tool-wide rules and
//! the mode: the default mode asks. Plan mode refuses creating a worktree (EnterWorktree's
//! own check, as the engine cannot see the change) and ExitWorktree with `remove`, which
//! reports itself destructive. EnterWorktree with a `path` outside the repository's
//! `.claude/worktrees/` always asks (its own check answers a safety-check ask, which no allow
//! rule or "don't ask again" settles; only `bypassPermissions` skips it), as Claude Code
//! does: the session's reads, writes and commands would move somewhere no rule was written
//! for. The call resolves the path again and refuses when it now leads elsewhere than the
//! permission check found, or to the other side of `.claude/worktrees/` (a link swapped
//! in between).
//!
//! The `/.claude/worktrees/` line is added to `info/exclude` before the checkout is made,
//! and never through a link: when `info` or `info/exclude` is a symbolic link, or the file
//! is no regular file with one link, it is left as it is. The whole file (up to 16 MiB) is
//! searched for the line, and a line break is added first when the file's last byte is
//! none.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::process::Command;
use tool_core::{
    MaxResultSize, ToolError, ToolResult, ToolUseContext, TypedTool, ValidationError, async_trait,
};
use tool_perms::git_config::{ConfigEntry, MAX_INCLUDE_DEPTH, include_path, parse_config};

/// The longest worktree name, in characters.
pub const MAX_NAME_LEN: usize = 64;
/// Where new worktrees go, relative to the main worktree's root.
pub const WORKTREES_DIR: &str = ".claude/worktrees";
/// The prefix of a created worktree's branch.
pub const BRANCH_PREFIX: &str = "worktree-";

/// The worktree session of a context: where the session works now and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveWorktree {
    /// The worktree's root directory (canonical).
    pub worktree_path: PathBuf,
    /// The branch checked out in the worktree when it was entered (`None`: detached HEAD).
    pub branch: Option<String>,
    /// The working directory before EnterWorktree.
    pub original_cwd: PathBuf,
    /// The branch checked out in `original_cwd` at the time (`None`: detached HEAD).
    pub original_branch: Option<String>,
    /// The commit `original_cwd` had checked out at the time.
    pub original_head: String,
    /// The root of the repository's main worktree, where git commands about the worktree run.
    pub main_root: PathBuf,
    /// Whether EnterWorktree created the worktree (only those may be removed).
    pub created: bool,
}

/// The app-state slot holding the session's worktree.
#[derive(Debug, Default)]
struct WorktreeSession {
    active: Option<ActiveWorktree>,
}

/// The worktree the context's session is in, if it entered one with EnterWorktree.
pub fn active_worktree(ctx: &ToolUseContext) -> Option<ActiveWorktree> {
    ctx.app_state()
        .update::<WorktreeSession, _>(|s| s.active.clone())
}

fn set_active(ctx: &ToolUseContext, active: Option<ActiveWorktree>) {
    ctx.app_state()
        .update::<WorktreeSession, _>(|s| s.active = active);
}

/// The prompt of EnterWorktree; it carries the marker `cargo xtask profiles` looks for.
pub const ENTER_PROMPT: &str = "Creates an isolated git worktree and switches the session into it \
(toolwright-gated-tool:worktree).\n\n\
- With `name` (or no field at all, for a generated name) a new worktree is created at \
`.claude/worktrees/<name>` in the repository's root, on a new branch `worktree-<name>` \
starting at the current HEAD. A name may use letters, digits, `.`, `_`, `-` and `/` \
(at most 64 characters).\n\
- With `path`, the session switches into an existing worktree of the current repository \
instead of creating one.\n\
- Give `name` or `path`, not both. Only one worktree session at a time: call ExitWorktree \
before entering another.\n\
- Use it only when the user asks to work in a worktree.";

/// The prompt of ExitWorktree.
pub const EXIT_PROMPT: &str = "Leaves the worktree session started by EnterWorktree and returns \
the session to the directory it came from (toolwright-gated-tool:worktree).\n\n\
- `action: \"keep\"` leaves the worktree and its branch on disk.\n\
- `action: \"remove\"` deletes the worktree directory and its branch. It refuses when the \
worktree has uncommitted changes or commits not on the original branch, unless \
`discard_changes` is true; confirm with the user before discarding work. Files git ignores \
(`.env`, build output, a repository cloned under an ignored directory) do not count as \
changes and are deleted too, without a refusal: copy out any that are needed first.\n\
- It only acts on a worktree entered with EnterWorktree in this session, and removes only one \
that EnterWorktree created.";

/// Input of the EnterWorktree tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EnterWorktreeInput {
    /// A name for the new worktree: letters, digits, dots, underscores, dashes and slashes,
    /// at most 64 characters. A name is generated when neither name nor path is given.
    pub name: Option<String>,
    /// The path of an existing worktree of the current repository to switch into, instead of
    /// creating a new one.
    pub path: Option<String>,
}

/// What EnterWorktree returns.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct EnterWorktreeOutput {
    /// The worktree's root directory, now the session's working directory.
    pub worktree_path: String,
    /// The branch checked out there (`None`: detached HEAD).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree_branch: Option<String>,
    /// Whether the worktree was created by this call.
    pub created: bool,
    /// The message for the model.
    pub message: String,
}

/// The EnterWorktree tool. See the [module docs](self).
#[derive(Debug, Clone, Copy, Default)]
pub struct EnterWorktree;

/// What ExitWorktree does with the worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExitAction {
    /// Leave the worktree and its branch on disk.
    Keep,
    /// Delete the worktree and its branch.
    Remove,
}

/// Input of the ExitWorktree tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExitWorktreeInput {
    /// "keep" leaves the worktree and branch on disk; "remove" deletes both.
    pub action: ExitAction,
    /// Required true for "remove" when the worktree has uncommitted files or unmerged commits
    pub discard_changes: Option<bool>,
}

/// What ExitWorktree returns.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ExitWorktreeOutput {
    /// `keep` or `remove`.
    pub action: ExitAction,
    /// The worktree that was left.
    pub worktree_path: String,
    /// Its branch (`None`: detached HEAD).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worktree_branch: Option<String>,
    /// The working directory the session is back in.
    pub original_cwd: String,
    /// The message for the model.
    pub message: String,
}

/// The ExitWorktree tool. See the [module docs](self).
#[derive(Debug, Clone, Copy, Default)]
pub struct ExitWorktree;

// ----- git -----

/// What every git command of these tools runs with: no hooks, no file system monitor.
const SAFE_CONFIG: [&str; 4] = [
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
];

/// How one git command ended.
#[derive(Debug)]
struct GitRun {
    success: bool,
    /// Standard output as git wrote it (paths in it may be any bytes).
    stdout: Vec<u8>,
    stderr: String,
}

/// `args` as the messages show them.
fn shown_args<S: AsRef<OsStr>>(args: &[S]) -> String {
    args.iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `git args...` in `dir`. Errors only when git cannot be started. The arguments are
/// passed as they are (a path need not be UTF-8).
async fn run_git<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Result<GitRun, ToolError> {
    let mut command = Command::new("git");
    // The repository's own hooks (`post-checkout`) and `core.fsmonitor` never run: they
    // are the repository's code, which no one approved. Filter drivers cannot be turned off
    // this way; [`refuse_filter_drivers`] refuses a repository that names one. No
    // credentials with the scrub on, as for Bash, for what the user's own configuration runs.
    tool_core::process::scrub_credentials(command.as_std_mut());
    let out = command
        .args(SAFE_CONFIG)
        .args(args)
        .current_dir(dir)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output()
        .await;
    let out = match out {
        Ok(out) => out,
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                && tokio::fs::metadata(dir).await.is_ok_and(|m| m.is_dir()) =>
        {
            return Err(ToolError::msg(
                "git was not found on PATH; worktrees need git",
            ));
        }
        Err(e) => {
            return Err(ToolError::msg(format!(
                "Could not run git in {}: {e}",
                dir.display()
            )));
        }
    };
    Ok(GitRun {
        success: out.status.success(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Runs `git args...` in `dir`; returns its standard output, or an error that names the
/// command and quotes git's message.
async fn git<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Result<String, ToolError> {
    git_bytes(dir, args)
        .await
        .map(|out| String::from_utf8_lossy(&out).into_owned())
}

/// [`git`], the output as git wrote it.
async fn git_bytes<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Result<Vec<u8>, ToolError> {
    let run = run_git(dir, args).await?;
    if run.success {
        Ok(run.stdout)
    } else {
        Err(ToolError::msg(format!(
            "`git {}` failed in {}: {}",
            shown_args(args),
            dir.display(),
            run.stderr.trim()
        )))
    }
}

/// Like [`git`], but `None` when git exits non-zero (a question answered "no").
async fn git_maybe<S: AsRef<OsStr>>(dir: &Path, args: &[S]) -> Result<Option<String>, ToolError> {
    let run = run_git(dir, args).await?;
    Ok(run
        .success
        .then(|| String::from_utf8_lossy(&run.stdout).into_owned()))
}

/// Runs blocking file system work (which may wait on a hung mount) off the runtime's
/// workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::msg(format!("A file system check did not finish: {e}")))
}

/// [`canonical`] off the runtime's workers.
async fn canonical_off(path: &Path) -> Result<PathBuf, ToolError> {
    let path = path.to_path_buf();
    blocking(move || canonical(&path)).await
}

/// The bytes of the small regular file at `path`: `None` when it does not exist (or a
/// component of its directory is no directory). Opened without waiting (`O_NONBLOCK`: a
/// FIFO swapped in is refused, never read), without following a link at its last
/// component when `follow` is false; an error (in words) when it is no regular file, is
/// larger than `max` bytes or cannot be read.
fn read_small_file(path: &Path, max: u64, follow: bool) -> Result<Option<Vec<u8>>, String> {
    use nix::fcntl::OFlag;
    use std::io::Read as _;
    let mut flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC | OFlag::O_NOCTTY;
    if !follow {
        flags |= OFlag::O_NOFOLLOW;
    }
    let fd = match nix::fcntl::open(path, flags, nix::sys::stat::Mode::empty()) {
        Ok(fd) => fd,
        Err(nix::errno::Errno::ENOENT | nix::errno::Errno::ENOTDIR) => return Ok(None),
        Err(nix::errno::Errno::ELOOP) if !follow => {
            return Err(format!("{} is a symbolic link", path.display()));
        }
        Err(e) => return Err(format!("{} cannot be read ({e})", path.display())),
    };
    let file = std::fs::File::from(fd);
    let meta = file
        .metadata()
        .map_err(|e| format!("{} cannot be read ({e})", path.display()))?;
    if !meta.is_file() {
        return Err(format!(
            "{} cannot be read (it is no regular file)",
            path.display()
        ));
    }
    if meta.len() > max {
        return Err(format!(
            "{} is larger than {max} bytes, more than is read here",
            path.display()
        ));
    }
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{} cannot be read ({e})", path.display()))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "{} is larger than {max} bytes, more than is read here",
            path.display()
        ));
    }
    Ok(Some(bytes))
}

/// The path git printed on one line of its output, relative to `dir` unless absolute.
fn printed_path(dir: &Path, line: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt as _;
    dir.join(OsStr::from_bytes(line))
}

/// The line that keeps new worktrees out of the main checkout's `git status` and `git add
/// -A` (which would stage a checkout as an embedded repository).
const EXCLUDE_LINE: &str = "/.claude/worktrees/";

/// The repository's common git directory (shared by all its worktrees), canonical.
async fn common_dir(cwd: &Path) -> Result<PathBuf, ToolError> {
    let out = git_bytes(cwd, &["rev-parse", "--git-common-dir"]).await?;
    // Relative to `cwd` when git prints it so (older gits have no `--path-format`); the
    // bytes as git wrote them (a path need not be UTF-8).
    let line = out.strip_suffix(b"\n").unwrap_or(&out);
    canonical_off(&printed_path(cwd, line)).await
}

/// Adds [`EXCLUDE_LINE`] to the repository's `info/exclude` (shared by its worktrees, never
/// committed) when it is not there yet. Best effort: a repository whose exclude file
/// cannot be written still gets its worktree. Never through a link: when `info` or
/// `info/exclude` is a symbolic link, or the file is no regular file or has other hard
/// links, nothing is written (a planted `exclude` linked to the user's settings would
/// otherwise get the line appended).
async fn exclude_worktrees_dir(common: &Path) {
    let info = common.join("info");
    let result = tokio::task::spawn_blocking(move || append_exclude_line(&info)).await;
    if let Ok(Err(e)) = result {
        tracing::warn!("did not add {EXCLUDE_LINE} to the repository's info/exclude: {e}");
    }
}

fn append_exclude_line(info: &Path) -> std::io::Result<()> {
    use nix::fcntl::OFlag;
    use nix::sys::stat::Mode;
    use std::io::{Read as _, Write as _};
    let open_dir = || {
        nix::fcntl::open(
            info,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
    };
    let dir = match open_dir() {
        Err(nix::errno::Errno::ENOENT) => {
            std::fs::create_dir(info)?;
            open_dir()
        }
        other => other,
    }
    .map_err(|e| std::io::Error::other(format!("{} is no plain directory: {e}", info.display())))?;
    let fd = nix::fcntl::openat(
        &dir,
        "exclude",
        OFlag::O_RDWR
            | OFlag::O_APPEND
            | OFlag::O_CREAT
            | OFlag::O_NOFOLLOW
            | OFlag::O_NONBLOCK
            | OFlag::O_CLOEXEC,
        Mode::from_bits_truncate(0o644),
    )
    .map_err(|e| {
        std::io::Error::other(format!(
            "{}/exclude could not be opened without following a link: {e}",
            info.display()
        ))
    })?;
    let mut file = std::fs::File::from(fd);
    let meta = file.metadata()?;
    {
        use std::os::unix::fs::MetadataExt as _;
        if !meta.is_file() || meta.nlink() != 1 {
            return Err(std::io::Error::other(format!(
                "{}/exclude is not a regular file with one link",
                info.display()
            )));
        }
    }
    // The whole file is searched for the line (up to [`MAX_EXCLUDE_SCAN`] bytes: past that a
    // second line does no harm), and the line break is decided by the file's last byte.
    let size = meta.len();
    let mut existing = Vec::new();
    (&file).take(MAX_EXCLUDE_SCAN).read_to_end(&mut existing)?;
    let text = String::from_utf8_lossy(&existing);
    if text.lines().any(|l| {
        let l = l.trim();
        l == EXCLUDE_LINE || l == ".claude/worktrees/" || l == "/.claude/worktrees"
    }) {
        return Ok(());
    }
    let mut line = Vec::new();
    if size > 0 {
        use std::os::unix::fs::FileExt as _;
        let mut last = [0u8; 1];
        file.read_exact_at(&mut last, size - 1)?;
        if last[0] != b'\n' {
            line.push(b'\n');
        }
    }
    line.extend_from_slice(EXCLUDE_LINE.as_bytes());
    line.push(b'\n');
    file.write_all(&line)
}

/// How much of `info/exclude` is searched for [`EXCLUDE_LINE`].
const MAX_EXCLUDE_SCAN: u64 = 16 << 20;

/// What a filter-driver refusal is about: creating a worktree (`git worktree add` checks
/// files out) or removing one (`git status` looks at its files first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FilterCheck {
    /// EnterWorktree creating a worktree.
    Create,
    /// ExitWorktree's `remove` of the worktree.
    Remove,
}

/// Refuses when the repository's own configuration, as git run in `dir` would read it,
/// names a filter driver's program (`filter.<driver>.smudge`, `.clean` or `.process`): git
/// would run it on checkout and status, and unlike hooks it cannot be turned off for one
/// command. Not the user's own files: the repository's `config`, `config.worktree` (the
/// common one, and the one of `dir`'s own git directory, which git reads with
/// `extensions.worktreeConfig`; read whatever that says), and every file they include
/// (`include.path`, and `includeIf.<condition>.path` whatever the condition: a condition is
/// judged by where git runs, `gitdir:` and `onbranch:` of the new worktree, not of this
/// check), at most [`MAX_INCLUDE_DEPTH`] deep, [`MAX_CONFIG_FILES`] files in all, each of
/// at most [`MAX_CONFIG_BYTES`]. Whatever cannot be read as git reads it (a file that is no
/// regular file, too large or unreadable, a line git cannot parse, an include path that
/// cannot be located) is a refusal too; a missing file is none, as for git.
async fn refuse_filter_drivers(dir: &Path, check: FilterCheck) -> Result<(), ToolError> {
    let out = git_bytes(dir, &["rev-parse", "--git-dir", "--git-common-dir"]).await?;
    let lines: Vec<&[u8]> = out
        .strip_suffix(b"\n")
        .unwrap_or(&out)
        .split(|&b| b == b'\n')
        .collect();
    let [git_dir, common] = lines[..] else {
        return Err(filter_check_failed(
            check,
            &format!(
                "`git rev-parse --git-dir --git-common-dir` printed {} lines in {}, not 2",
                lines.len(),
                dir.display()
            ),
        ));
    };
    let (git_dir, common) = (printed_path(dir, git_dir), printed_path(dir, common));
    let mut files = vec![common.join("config"), common.join("config.worktree")];
    let own = git_dir.join("config.worktree");
    if !files.contains(&own) {
        files.push(own);
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let found = blocking(move || filter_driver_in(&files, home.as_deref()))
        .await?
        .map_err(|why| filter_check_failed(check, &why))?;
    let Some(found) = found else {
        return Ok(());
    };
    let file = match &found.included_from {
        Some(top) => format!(
            "{}, which the repository's {} includes",
            found.file.display(),
            top.display()
        ),
        None => found.file.display().to_string(),
    };
    Err(ToolError::msg(match check {
        FilterCheck::Create => format!(
            "The repository's own configuration ({file}) names a filter driver's program \
             (`{key}`), which git would run on checkout. Worktree tools do not run \
             programs a repository configures; remove the setting, or create the \
             worktree yourself with git.",
            key = found.key
        ),
        FilterCheck::Remove => format!(
            "Not removed: the repository's own configuration ({file}) names a filter \
             driver's program (`{key}`), which `git status` would run on the worktree's \
             files to see whether they changed. ExitWorktree does not run programs a \
             repository configures: leave with action \"keep\" and remove the worktree \
             with git yourself (`git worktree remove {}`).",
            dir.display(),
            key = found.key
        ),
    }))
}

/// The refusal when the configuration could not be checked for filter drivers (`why`).
fn filter_check_failed(check: FilterCheck, why: &str) -> ToolError {
    ToolError::msg(match check {
        FilterCheck::Create => format!(
            "The repository's configuration could not be checked for filter drivers \
             (programs git would run on checkout): {why}. No worktree was created; fix \
             that, or create the worktree yourself with git."
        ),
        FilterCheck::Remove => format!(
            "Not removed: the repository's configuration could not be checked for filter \
             drivers (programs `git status` would run): {why}. Leave with action \"keep\" \
             and remove the worktree with git yourself."
        ),
    })
}

/// The most configuration files one check reads, includes counted.
const MAX_CONFIG_FILES: usize = 256;
/// The largest configuration file read.
const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// A filter driver's program found in the configuration.
#[derive(Debug, PartialEq, Eq)]
struct FoundFilter {
    /// The key as git names it (`filter.x.smudge`).
    key: String,
    /// The file that sets it.
    file: PathBuf,
    /// The repository's own file that (through others, maybe) includes it, if it is not
    /// that file itself.
    included_from: Option<PathBuf>,
}

/// The first filter driver's program the configuration files `files` (each missing one is
/// none) and what they include set (see [`refuse_filter_drivers`]); an error in words when
/// they cannot be read as git reads them. `home` locates `~/` in an include path.
fn filter_driver_in(files: &[PathBuf], home: Option<&Path>) -> Result<Option<FoundFilter>, String> {
    let mut read = 0;
    for top in files {
        if let Some(mut found) = filter_in_file(top, 0, home, &mut read)? {
            if found.file != *top {
                found.included_from = Some(top.clone());
            }
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// [`filter_driver_in`] for one file, `depth` includes down; `read` counts the files read.
fn filter_in_file(
    file: &Path,
    depth: usize,
    home: Option<&Path>,
    read: &mut usize,
) -> Result<Option<FoundFilter>, String> {
    *read += 1;
    if *read > MAX_CONFIG_FILES {
        return Err(format!(
            "it takes more than {MAX_CONFIG_FILES} files to read with what they include"
        ));
    }
    let Some(bytes) = read_small_file(file, MAX_CONFIG_BYTES, true)? else {
        // As git: a configuration file or an included one that does not exist is none.
        return Ok(None);
    };
    let entries = parse_config(&bytes).map_err(|line| {
        format!(
            "{} cannot be parsed as git configuration (line {line})",
            file.display()
        )
    })?;
    for entry in entries {
        if is_filter_program(&entry) {
            return Ok(Some(FoundFilter {
                key: entry.name(),
                file: file.to_path_buf(),
                included_from: None,
            }));
        }
        if !entry.is_include() {
            continue;
        }
        let Some(value) = entry.value.as_deref() else {
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
        let included = include_path(value, file, home).map_err(|why| {
            format!(
                "{} includes {}, which cannot be located here ({why})",
                file.display(),
                String::from_utf8_lossy(value)
            )
        })?;
        if let Some(found) = filter_in_file(&included, depth + 1, home, read)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// Whether `entry` names a filter driver's program: `filter.<driver>.smudge`, `.clean` or
/// `.process`.
fn is_filter_program(entry: &ConfigEntry) -> bool {
    entry.section == "filter"
        && entry.subsection.is_some()
        && matches!(entry.key.as_str(), "smudge" | "clean" | "process")
}

/// Refuses when `<main_root>/.claude` or `<main_root>/.claude/worktrees` is a symbolic link,
/// no directory, or resolves outside `main_root`: a committed link would put the checkout
/// wherever it points.
fn check_worktrees_dir(main_root: &Path) -> Result<(), ToolError> {
    let claude = main_root.join(".claude");
    for dir in [claude.clone(), main_root.join(WORKTREES_DIR)] {
        match dir.symlink_metadata() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(ToolError::msg(format!(
                    "Cannot check {}: {e}",
                    dir.display()
                )));
            }
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(ToolError::msg(format!(
                    "{} is a symbolic link (to {}); worktrees are only made in a real \
                     directory inside the repository",
                    dir.display(),
                    std::fs::read_link(&dir)
                        .map(|t| t.display().to_string())
                        .unwrap_or_else(|_| "somewhere unknown".to_owned())
                )));
            }
            Ok(meta) if !meta.is_dir() => {
                return Err(ToolError::msg(format!(
                    "{} is not a directory, so no worktree can be made under it",
                    dir.display()
                )));
            }
            Ok(_) if !canonical(&dir).starts_with(main_root) => {
                return Err(ToolError::msg(format!(
                    "{} resolves outside the repository at {}",
                    dir.display(),
                    main_root.display()
                )));
            }
            Ok(_) => {}
        }
    }
    Ok(())
}

/// Checks that `wanted` (canonical) is a live linked worktree of the repository whose
/// common git directory is `common` (canonical): its `.git` is a gitfile naming
/// `<common>/worktrees/<id>`, and that entry's `gitdir` names this `.git` back. A
/// `.git/worktrees/*/gitdir` entry naming a directory that is no such worktree (git calls
/// it prunable) does not count. Both files are read without waiting and without following
/// a link ([`read_small_file`]): a FIFO or a link swapped in is refused. Blocking: call it
/// off the runtime's workers.
fn check_registered(wanted: &Path, common: &Path) -> Result<(), String> {
    let gitfile = wanted.join(".git");
    let not = |why: String| {
        format!(
            "{} is not a live worktree of the repository at {}: {why}",
            wanted.display(),
            common.display()
        )
    };
    let not_gitfile = |why: String| not(format!("{} is not a gitfile ({why})", gitfile.display()));
    let text = match read_small_file(&gitfile, 4096, false) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err(not(format!("{} does not exist", gitfile.display()))),
        Err(why) => return Err(not_gitfile(why)),
    };
    // git strips only line ends from a gitfile (`read_gitfile_gently`): a trailing space
    // or tab is part of the path it names.
    let mut target = &text[..];
    while let [rest @ .., b'\n' | b'\r'] = target {
        target = rest;
    }
    let Some(target) = target.strip_prefix(b"gitdir: ") else {
        return Err(not_gitfile("it does not start with `gitdir: `".to_owned()));
    };
    let admin = canonical(&printed_path(wanted, target));
    if admin.parent() != Some(common.join("worktrees").as_path()) {
        return Err(not(format!(
            "its .git points at {}, not at an entry of {}",
            admin.display(),
            common.join("worktrees").display()
        )));
    }
    let back_file = admin.join("gitdir");
    let back = match read_small_file(&back_file, 4096, false) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err(not(format!("{} does not exist", back_file.display()))),
        Err(why) => return Err(not(why)),
    };
    if canonical(&printed_path(&admin, back.trim_ascii_end())) != gitfile {
        return Err(not(format!(
            "{} does not point back at {}",
            back_file.display(),
            gitfile.display()
        )));
    }
    Ok(())
}

/// One entry of `git worktree list --porcelain`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct ListedWorktree {
    path: PathBuf,
    head: Option<String>,
    branch: Option<String>,
    bare: bool,
    prunable: bool,
}

/// Reads `git worktree list --porcelain` as git wrote it: a path need not be UTF-8.
fn parse_worktree_list(text: &[u8]) -> Vec<ListedWorktree> {
    use std::os::unix::ffi::OsStrExt as _;
    let mut list = Vec::new();
    let mut current: Option<ListedWorktree> = None;
    for line in text.split(|&b| b == b'\n') {
        if let Some(path) = line.strip_prefix(b"worktree ") {
            if let Some(done) = current.take() {
                list.push(done);
            }
            current = Some(ListedWorktree {
                path: PathBuf::from(OsStr::from_bytes(path)),
                ..ListedWorktree::default()
            });
        } else if let Some(entry) = current.as_mut() {
            let line = String::from_utf8_lossy(line);
            if let Some(head) = line.strip_prefix("HEAD ") {
                entry.head = Some(head.to_owned());
            } else if let Some(branch) = line.strip_prefix("branch ") {
                entry.branch = Some(
                    branch
                        .strip_prefix("refs/heads/")
                        .unwrap_or(branch)
                        .to_owned(),
                );
            } else if line == "bare" {
                entry.bare = true;
            } else if line == "prunable" || line.starts_with("prunable ") {
                entry.prunable = true;
            }
        }
    }
    list.extend(current);
    list
}

/// `path` with its links resolved, or as it is when that fails. Blocking: in async code,
/// [`canonical_off`].
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The repository around `cwd`: its worktrees (the main one first).
async fn repository(cwd: &Path) -> Result<Vec<ListedWorktree>, ToolError> {
    if git_maybe(cwd, &["rev-parse", "--show-toplevel"])
        .await?
        .is_none()
    {
        return Err(ToolError::msg(format!(
            "Not in a git repository: {} is not inside a git working tree, so there is no \
             worktree to create or enter",
            cwd.display()
        )));
    }
    let list = parse_worktree_list(&git_bytes(cwd, &["worktree", "list", "--porcelain"]).await?);
    match list.first() {
        None => Err(ToolError::msg(format!(
            "`git worktree list` printed no worktree for {}",
            cwd.display()
        ))),
        Some(main) if main.bare => Err(ToolError::msg(format!(
            "The repository at {} is bare; EnterWorktree needs a repository with a main \
             working tree",
            main.path.display()
        ))),
        Some(_) => Ok(list),
    }
}

// ----- names -----

/// Checks a worktree name: `/`-separated segments of letters, digits, `.`, `_` and `-`, none
/// empty, none starting with `.` or `-`, none ending with `.lock`, at most [`MAX_NAME_LEN`]
/// characters in all.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("The worktree name is empty".to_owned());
    }
    if name.chars().count() > MAX_NAME_LEN {
        return Err(format!(
            "The worktree name is {} characters long; the limit is {MAX_NAME_LEN}",
            name.chars().count()
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/')))
    {
        return Err(format!(
            "The worktree name {name:?} contains {c:?}; use only letters, digits, '.', '_', '-' \
             and '/'"
        ));
    }
    for segment in name.split('/') {
        if segment.is_empty() {
            return Err(format!(
                "The worktree name {name:?} has an empty '/'-separated part"
            ));
        }
        if segment.starts_with('.') || segment.starts_with('-') {
            return Err(format!(
                "The worktree name {name:?} has a part starting with '{}'",
                &segment[..1]
            ));
        }
        if segment.ends_with(".lock") {
            return Err(format!(
                "The worktree name {name:?} has a part ending with \".lock\""
            ));
        }
    }
    if name.contains("..") {
        return Err(format!("The worktree name {name:?} contains \"..\""));
    }
    Ok(())
}

/// The directory name of a worktree called `name` (`/` becomes `+`).
fn dir_name(name: &str) -> String {
    name.replace('/', "+")
}

static NAME_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A generated name: `wt-` and eight lower-case base-36 characters.
fn generated_name() -> String {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(NAME_COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u32(std::process::id());
    let mut n = hasher.finish();
    let mut name = String::from("wt-");
    for _ in 0..8 {
        let digit = u32::try_from(n % 36).unwrap_or(0);
        name.push(char::from_digit(digit, 36).unwrap_or('0'));
        n /= 36;
    }
    name
}

fn already_active(active: &ActiveWorktree) -> ToolError {
    ToolError::msg(format!(
        "Already in a worktree session at {} (entered from {}). Call ExitWorktree before \
         entering another worktree.",
        active.worktree_path.display(),
        active.original_cwd.display()
    ))
}

/// Where `raw` (EnterWorktree's `path`) leads, canonical, and whether that is inside the
/// repository's `.claude/worktrees/` (which must be a real directory of the repository):
/// what EnterWorktree's permission check decides by, and its call checks again. Outside
/// when the repository or the path cannot be read.
async fn judge_path(ctx: &ToolUseContext, raw: &str) -> (PathBuf, bool) {
    let resolved = ctx.resolve_path(raw);
    let wanted = canonical_off(&resolved).await.unwrap_or(resolved);
    let inside = match repository(ctx.cwd()).await {
        Ok(list) => {
            let (root, target) = (list[0].path.clone(), wanted.clone());
            blocking(move || {
                let root = canonical(&root);
                let dir = root.join(WORKTREES_DIR);
                check_worktrees_dir(&root).is_ok() && target.starts_with(&dir) && target != dir
            })
            .await
            .unwrap_or(false)
        }
        Err(_) => false,
    };
    (wanted, inside)
}

/// What EnterWorktree's permission check decided a `path` by ([`judge_path`]), kept in
/// the context's app state until the call: the call refuses when the path now leads
/// elsewhere, or to the other side of `.claude/worktrees/` (a link on the way swapped in
/// between). Keyed by the call's tool-use id, working directory and `path` as given.
#[derive(Debug, Default)]
struct EnterJudgements {
    seen: Vec<(JudgementKey, PathBuf, bool)>,
}

/// The key of one [`EnterJudgements`] entry.
type JudgementKey = (Option<String>, PathBuf, String);

/// The most judgements kept: the oldest go first (a permission check whose call never came).
const MAX_JUDGEMENTS: usize = 32;

fn judgement_key(ctx: &ToolUseContext, raw: &str) -> JudgementKey {
    (
        ctx.tool_use_id().map(str::to_owned),
        ctx.cwd().to_path_buf(),
        raw.to_owned(),
    )
}

fn remember_judgement(ctx: &ToolUseContext, raw: &str, wanted: &Path, inside: bool) {
    let key = judgement_key(ctx, raw);
    ctx.app_state().update::<EnterJudgements, _>(|j| {
        j.seen.retain(|(k, _, _)| *k != key);
        if j.seen.len() >= MAX_JUDGEMENTS {
            j.seen.remove(0);
        }
        j.seen.push((key, wanted.to_path_buf(), inside));
    });
}

/// The judgement the permission check made for this call's `raw`, taken out.
fn take_judgement(ctx: &ToolUseContext, raw: &str) -> Option<(PathBuf, bool)> {
    let key = judgement_key(ctx, raw);
    ctx.app_state().update::<EnterJudgements, _>(|j| {
        let at = j.seen.iter().position(|(k, _, _)| *k == key)?;
        let (_, wanted, inside) = j.seen.remove(at);
        Some((wanted, inside))
    })
}

// ----- EnterWorktree -----

#[async_trait]
impl TypedTool for EnterWorktree {
    type Input = EnterWorktreeInput;
    type Output = EnterWorktreeOutput;
    const NAME: &'static str = "EnterWorktree";

    fn description(&self) -> Cow<'_, str> {
        "Creates or enters a git worktree and switches the session into it".into()
    }
    fn prompt(&self) -> Cow<'_, str> {
        ENTER_PROMPT.into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn should_defer(&self) -> bool {
        true
    }
    fn search_hint(&self) -> Option<&str> {
        Some("git worktree isolated branch checkout switch directory")
    }

    async fn validate_input(
        &self,
        input: &EnterWorktreeInput,
        _ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        match (&input.name, &input.path) {
            (Some(_), Some(_)) => Err(ValidationError::new(
                "Give either name (to create a worktree) or path (to enter an existing one), \
                 not both",
            )),
            (Some(name), None) => check_name(name).map_err(ValidationError::new),
            (None, Some(path)) if path.trim().is_empty() => {
                Err(ValidationError::new("path is empty"))
            }
            _ => Ok(()),
        }
    }

    /// Creating a worktree (a branch and a checkout) is a change: plan mode refuses it, as
    /// the permission engine refuses any change it can see. Entering an existing one
    /// (`path`) only moves the session, but a path outside the repository's
    /// `.claude/worktrees/` moves it somewhere no rule was written for: that always asks
    /// (a safety check, which no allow rule or "don't ask again" settles), unless the mode
    /// bypasses permissions, as Claude Code does.
    async fn check_permissions(
        &self,
        input: &EnterWorktreeInput,
        ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        let perm = ctx.permission();
        let Some(raw) = &input.path else {
            if perm.plan_mode_refuses_changes() {
                return tool_core::ToolPermissionContext::plan_mode_refusal(Self::NAME);
            }
            return tool_core::PermissionResult::passthrough();
        };
        if perm.mode == tool_core::PermissionMode::BypassPermissions
            || (perm.mode == tool_core::PermissionMode::Plan && perm.bypass_available)
        {
            return tool_core::PermissionResult::passthrough();
        }
        let (wanted, inside) = judge_path(ctx, raw).await;
        remember_judgement(ctx, raw, &wanted, inside);
        if inside {
            return tool_core::PermissionResult::passthrough();
        }
        let reason = format!(
            "{} is outside the repository's {WORKTREES_DIR}/: entering it moves the session's \
             reads, writes and commands there",
            wanted.display()
        );
        tool_core::PermissionResult::Ask {
            message: format!(
                "EnterWorktree wants to switch the session into {}, outside the \
                 repository's {WORKTREES_DIR}/. Allow?",
                wanted.display()
            ),
            updated_input: None,
            suggestions: Vec::new(),
            reason: Some(tool_core::DecisionReason::SafetyCheck { reason }),
        }
    }

    async fn call(
        &self,
        input: EnterWorktreeInput,
        ctx: ToolUseContext,
        _progress: tool_core::ProgressSender,
    ) -> Result<ToolResult<EnterWorktreeOutput>, ToolError> {
        if let Some(active) = active_worktree(&ctx) {
            return Err(already_active(&active));
        }
        let cwd = ctx.cwd().to_path_buf();
        let list = repository(&cwd).await?;
        let main_root = canonical_off(&list[0].path).await?;
        let original_head = git(&cwd, &["rev-parse", "HEAD"])
            .await
            .map_err(|e| {
                ToolError::msg(format!(
                    "The repository at {} has no commit to start a worktree from ({e})",
                    main_root.display()
                ))
            })?
            .trim()
            .to_owned();
        let original_branch = git_maybe(&cwd, &["symbolic-ref", "--quiet", "--short", "HEAD"])
            .await?
            .map(|b| b.trim().to_owned());
        let (active, message) = match &input.path {
            Some(raw) => {
                enter_existing(&ctx, raw, &list, main_root, original_head, original_branch).await?
            }
            None => create(&ctx, input.name, main_root, original_head, original_branch).await?,
        };
        let output = EnterWorktreeOutput {
            worktree_path: active.worktree_path.display().to_string(),
            worktree_branch: active.branch.clone(),
            created: active.created,
            message,
        };
        let dir = active.worktree_path.clone();
        set_active(&ctx, Some(active));
        Ok(ToolResult::new(output).with_context_change(tool_core::ContextModifier::cwd(dir)))
    }

    fn to_content(&self, output: &EnterWorktreeOutput) -> tool_core::ToolResultContent {
        tool_core::ToolResultContent::Text(output.message.clone())
    }
}

/// Creates the worktree `name` (or a generated one) from the HEAD of the context's cwd.
/// What it makes it claims first, so that a failure removes only what this call made: the
/// branch (`git branch`, which refuses one that exists, atomically: of two sessions
/// creating the same name at once, one goes on), then the directory (made here, never one
/// that exists), then `git worktree add <dir> <branch>` checks the branch out there.
async fn create(
    ctx: &ToolUseContext,
    name: Option<String>,
    main_root: PathBuf,
    original_head: String,
    original_branch: Option<String>,
) -> Result<(ActiveWorktree, String), ToolError> {
    let cwd = ctx.cwd();
    let root = main_root.clone();
    blocking(move || check_worktrees_dir(&root)).await??;
    let common = common_dir(cwd).await?;
    refuse_filter_drivers(cwd, FilterCheck::Create).await?;
    let given = name.is_some();
    let mut attempts = 0;
    let (dir, branch) = loop {
        attempts += 1;
        // A generated name taken by now is replaced by another; a given one is refused.
        let retry = !given && attempts < 5;
        let name = name.clone().unwrap_or_else(generated_name);
        check_name(&name).map_err(ToolError::msg)?;
        let leaf = dir_name(&name);
        let dir = main_root.join(WORKTREES_DIR).join(&leaf);
        // Flattened as the directory is (Claude Code's `worktreeBranchName`): `team/fix`
        // and `team` would otherwise clash as refs (`worktree-team/fix` needs
        // `worktree-team` to be a directory of refs).
        let branch = format!("{BRANCH_PREFIX}{leaf}");
        if git_maybe(cwd, &["check-ref-format", "--branch", &branch])
            .await?
            .is_none()
        {
            return Err(ToolError::msg(format!(
                "The worktree name {name:?} does not make a valid branch name ({branch:?})"
            )));
        }
        let made = run_git(cwd, &["branch", &branch, &original_head]).await?;
        if !made.success {
            let branch_ref = format!("refs/heads/{branch}");
            let taken = git_maybe(cwd, &["show-ref", "--verify", "--quiet", &branch_ref])
                .await?
                .is_some();
            if taken && retry {
                continue;
            }
            let probe = dir.clone();
            let dir_taken = blocking(move || probe.symlink_metadata().is_ok()).await?;
            return Err(ToolError::msg(if taken && dir_taken {
                format!(
                    "A worktree named {name:?} already exists at {}. Choose another name, or \
                     enter it with path. Nothing was created.",
                    dir.display()
                )
            } else if taken {
                format!(
                    "The branch {branch:?} already exists, so a worktree named {name:?} cannot \
                     be created. Choose another name. Nothing was created."
                )
            } else {
                format!(
                    "`git branch {branch} {original_head}` failed in {}: {}. Nothing was \
                     created.",
                    cwd.display(),
                    made.stderr.trim()
                )
            }));
        }
        let (root, leaf) = (main_root.clone(), leaf.clone());
        let Err(e) = blocking(move || make_worktree_dir(&root, &leaf)).await? else {
            break (dir, branch);
        };
        let taken = e.kind() == std::io::ErrorKind::AlreadyExists;
        let released = release_branch(cwd, &branch, &original_head).await;
        if taken && retry {
            continue;
        }
        let what = if taken {
            format!(
                "A worktree named {name:?} already exists at {}. Choose another name, or \
                 enter it with path.",
                dir.display()
            )
        } else {
            format!("Could not make the directory {}: {e}.", dir.display())
        };
        return Err(ToolError::msg(match released {
            Ok(()) => format!("{what} The branch {branch} this call had made was deleted again."),
            Err(why) => format!("{what} Left behind: the branch {branch} this call made ({why})."),
        }));
    };
    // Before the checkout exists, so that it never shows in the main one's status.
    exclude_worktrees_dir(&common).await;
    let add = [
        OsStr::new("worktree"),
        OsStr::new("add"),
        dir.as_os_str(),
        OsStr::new(&branch),
    ];
    if let Err(e) = git(cwd, &add).await {
        return Err(ToolError::msg(format!(
            "{e}{}",
            clean_up_failed_add(cwd, &dir, &branch, &original_head).await
        )));
    }
    let worktree_path = canonical_off(&dir).await?;
    let from = original_branch.clone().unwrap_or_else(|| {
        format!(
            "detached HEAD {}",
            original_head.chars().take(12).collect::<String>()
        )
    });
    let message = format!(
        "Created worktree at {} on branch {branch} (from {from}). The session now works in \
         the worktree; ExitWorktree returns to {}.",
        worktree_path.display(),
        cwd.display()
    );
    Ok((
        ActiveWorktree {
            worktree_path,
            branch: Some(branch),
            original_cwd: cwd.to_path_buf(),
            original_branch,
            original_head,
            main_root,
            created: true,
        },
        message,
    ))
}

/// Makes the directory `<main_root>/.claude/worktrees/<leaf>` (and `.claude/worktrees` when
/// missing), each step relative to the directory handle of the one above and never through
/// a link: an `AlreadyExists` error when it exists (whoever made it). The path git is then
/// given must lead to the directory made here (a link swapped in on the way: refused, the
/// directory removed again). Blocking.
fn make_worktree_dir(main_root: &Path, leaf: &str) -> std::io::Result<()> {
    use nix::errno::Errno;
    use nix::fcntl::OFlag;
    use nix::sys::stat::Mode;
    use std::os::unix::fs::MetadataExt as _;
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let mode = Mode::from_bits_truncate(0o777);
    let mut dir = nix::fcntl::open(main_root, flags, Mode::empty()).map_err(|e| {
        std::io::Error::other(format!("{} cannot be opened ({e})", main_root.display()))
    })?;
    let mut at = main_root.to_path_buf();
    for part in [".claude", "worktrees"] {
        at.push(part);
        let next = match nix::fcntl::openat(&dir, part, flags, Mode::empty()) {
            Err(Errno::ENOENT) => match nix::sys::stat::mkdirat(&dir, part, mode) {
                Ok(()) | Err(Errno::EEXIST) => nix::fcntl::openat(&dir, part, flags, Mode::empty()),
                Err(e) => Err(e),
            },
            other => other,
        };
        dir = next.map_err(|e| {
            std::io::Error::other(format!(
                "{} is no plain directory inside the repository ({e})",
                at.display()
            ))
        })?;
    }
    nix::sys::stat::mkdirat(&dir, leaf, mode).map_err(std::io::Error::from)?;
    let made = nix::fcntl::openat(&dir, leaf, flags, Mode::empty())
        .map(std::fs::File::from)
        .and_then(|f| f.metadata().map_err(|_| Errno::EIO));
    let path = at.join(leaf);
    let seen = std::fs::symlink_metadata(&path);
    let same = match (&made, &seen) {
        (Ok(made), Ok(seen)) => made.dev() == seen.dev() && made.ino() == seen.ino(),
        _ => false,
    };
    if !same {
        let _ = nix::unistd::unlinkat(&dir, leaf, nix::unistd::UnlinkatFlags::RemoveDir);
        return Err(std::io::Error::other(format!(
            "{} does not lead to the directory made for it (a link on the way changed)",
            path.display()
        )));
    }
    Ok(())
}

/// Deletes the branch `branch` this call made at `head`, when no worktree has it checked
/// out and it still points at `head` (`git update-ref -d` with the old value: another
/// session's commits on it are never dropped). `Err` says why it was kept.
async fn release_branch(cwd: &Path, branch: &str, head: &str) -> Result<(), String> {
    let list = git_bytes(cwd, &["worktree", "list", "--porcelain"])
        .await
        .map_err(|e| format!("the worktrees could not be listed: {}", e.to_model_text()))?;
    if let Some(w) = parse_worktree_list(&list)
        .iter()
        .find(|w| w.branch.as_deref() == Some(branch))
    {
        return Err(format!("it is checked out in {}", w.path.display()));
    }
    git(
        cwd,
        &["update-ref", "-d", &format!("refs/heads/{branch}"), head],
    )
    .await
    .map(drop)
    .map_err(|e| format!("it was not deleted: {}", e.to_model_text()))
}

/// After a failed `git worktree add <dir> <branch>`, where this call made `dir` (empty) and
/// `branch` (at `head`): removes what is left of them and returns what the error should add
/// about it. git removes its own half-made checkout; a directory that still holds files is
/// left for the user to look at, never removed with what is in it, and the branch is
/// deleted only as [`release_branch`] does.
async fn clean_up_failed_add(cwd: &Path, dir: &Path, branch: &str, head: &str) -> String {
    let mut removed = Vec::new();
    let mut left = Vec::new();
    let target = dir.to_path_buf();
    match blocking(move || std::fs::remove_dir(&target)).await {
        Ok(Ok(())) => removed.push(format!("the empty directory {}", dir.display())),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::DirectoryNotEmpty => left.push(format!(
            "the directory {}, which holds files (look at them before removing it)",
            dir.display()
        )),
        Ok(Err(e)) => left.push(format!("the directory {} ({e})", dir.display())),
        Err(e) => left.push(format!(
            "the directory {} ({})",
            dir.display(),
            e.to_model_text()
        )),
    }
    match release_branch(cwd, branch, head).await {
        Ok(()) => removed.push(format!("the branch {branch}")),
        Err(why) => left.push(format!("the branch {branch} ({why})")),
    }
    let mut text = String::new();
    if !removed.is_empty() {
        text.push_str(&format!(
            " Removed what this call had made: {}.",
            removed.join(" and ")
        ));
    }
    if !left.is_empty() {
        text.push_str(&format!(" Left behind: {}.", left.join("; ")));
    }
    text
}

/// Enters the existing linked worktree at `raw`, which must be listed by git for this
/// repository.
async fn enter_existing(
    ctx: &ToolUseContext,
    raw: &str,
    list: &[ListedWorktree],
    main_root: PathBuf,
    original_head: String,
    original_branch: Option<String>,
) -> Result<(ActiveWorktree, String), ToolError> {
    let resolved = ctx.resolve_path(raw);
    let cwd = ctx.cwd();
    let (listed, root, here) = (
        list.iter().map(|w| w.path.clone()).collect::<Vec<_>>(),
        main_root.clone(),
        cwd.to_path_buf(),
    );
    let (wanted, listed, inside, here) = blocking(move || {
        let wanted = std::fs::canonicalize(&resolved).map_err(|e| {
            ToolError::msg(format!("Cannot enter worktree {}: {e}", resolved.display()))
        })?;
        let listed: Vec<PathBuf> = listed.iter().map(|p| canonical(p)).collect();
        let dir = root.join(WORKTREES_DIR);
        let inside =
            check_worktrees_dir(&root).is_ok() && wanted.starts_with(&dir) && wanted != dir;
        Ok::<_, ToolError>((wanted, listed, inside, canonical(&here)))
    })
    .await??;
    // The permission check decided by where the path led then; a link swapped in since
    // must not take the session elsewhere.
    if let Some((judged, judged_inside)) = take_judgement(ctx, raw)
        && (judged != wanted || judged_inside != inside)
    {
        let side = |inside: bool| if inside { "inside" } else { "outside" };
        return Err(ToolError::msg(format!(
            "{raw} led to {} ({} the repository's {WORKTREES_DIR}/) when the permission to \
             enter it was decided, and leads to {} ({}) now: a link on the way changed in \
             between. Not entered; call EnterWorktree again to have it decided anew.",
            judged.display(),
            side(judged_inside),
            wanted.display(),
            side(inside)
        )));
    }
    let Some(index) = listed.iter().position(|p| *p == wanted) else {
        let known: Vec<String> = list
            .iter()
            .skip(1)
            .map(|w| format!("  {}", w.path.display()))
            .collect();
        return Err(ToolError::msg(format!(
            "{} is not a worktree of the repository at {}. {}",
            wanted.display(),
            main_root.display(),
            if known.is_empty() {
                "The repository has no linked worktrees.".to_owned()
            } else {
                format!("Its linked worktrees are:\n{}", known.join("\n"))
            }
        )));
    };
    if index == 0 {
        return Err(ToolError::msg(format!(
            "{} is the repository's main working tree, not a linked worktree",
            wanted.display()
        )));
    }
    if here.starts_with(&wanted) {
        return Err(ToolError::msg(format!(
            "The session is already working in {}",
            wanted.display()
        )));
    }
    let entry = &list[index];
    let common = common_dir(&main_root).await?;
    let (target, shared) = (wanted.clone(), common.clone());
    blocking(move || check_registered(&target, &shared))
        .await?
        .map_err(ToolError::msg)?;
    if entry.prunable {
        return Err(ToolError::msg(format!(
            "{} is registered as a worktree but git marks it prunable (its files are gone \
             or no longer point back at the repository); it cannot be entered",
            wanted.display()
        )));
    }
    let message = format!(
        "Entered the existing worktree at {}{}. The session now works in the worktree; \
         ExitWorktree returns to {}.",
        wanted.display(),
        entry
            .branch
            .as_ref()
            .map(|b| format!(" on branch {b}"))
            .or_else(|| entry.head.as_ref().map(|h| format!(" at {h}")))
            .unwrap_or_default(),
        cwd.display()
    );
    Ok((
        ActiveWorktree {
            worktree_path: wanted,
            branch: entry.branch.clone(),
            original_cwd: cwd.to_path_buf(),
            original_branch,
            original_head,
            main_root,
            created: false,
        },
        message,
    ))
}

// ----- ExitWorktree -----

#[async_trait]
impl TypedTool for ExitWorktree {
    type Input = ExitWorktreeInput;
    type Output = ExitWorktreeOutput;
    const NAME: &'static str = "ExitWorktree";

    fn description(&self) -> Cow<'_, str> {
        "Leaves the worktree session and returns to the original directory".into()
    }
    fn prompt(&self) -> Cow<'_, str> {
        EXIT_PROMPT.into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn should_defer(&self) -> bool {
        true
    }
    fn search_hint(&self) -> Option<&str> {
        Some("leave exit remove git worktree return original directory")
    }
    fn is_destructive(&self, input: &ExitWorktreeInput) -> bool {
        input.action == ExitAction::Remove
    }

    async fn call(
        &self,
        input: ExitWorktreeInput,
        ctx: ToolUseContext,
        _progress: tool_core::ProgressSender,
    ) -> Result<ToolResult<ExitWorktreeOutput>, ToolError> {
        let Some(active) = active_worktree(&ctx) else {
            return Err(ToolError::msg(
                "No worktree session is active: ExitWorktree only leaves a worktree entered \
                 with EnterWorktree in this session. Nothing was changed.",
            ));
        };
        let path = active.worktree_path.display().to_string();
        let back = active.original_cwd.display().to_string();
        let branch_text = active
            .branch
            .as_ref()
            .map(|b| format!(" (branch {b})"))
            .unwrap_or_default();
        let message = match input.action {
            // Said as it is: a directory removed by hand (`rm -rf`) is not "kept on disk",
            // though its branch, and git's record of it, are.
            ExitAction::Keep => {
                let target = active.worktree_path.clone();
                if blocking(move || target.is_dir()).await? {
                    format!(
                        "Left the worktree at {path}{branch_text}; it is kept on disk. The \
                         session is back in {back}."
                    )
                } else {
                    let kept = match &active.branch {
                        Some(b) => format!("its branch {b} is kept, with its commits"),
                        None => "nothing of it is left but git's record".to_owned(),
                    };
                    format!(
                        "Left the worktree at {path}, whose directory no longer exists (it was \
                         removed outside ExitWorktree); {kept}. `git worktree prune` drops \
                         git's record of it. The session is back in {back}."
                    )
                }
            }
            ExitAction::Remove => {
                remove(&active, input.discard_changes == Some(true)).await?
                    + &format!(" The session is back in {back}.")
            }
        };
        set_active(&ctx, None);
        let output = ExitWorktreeOutput {
            action: input.action,
            worktree_path: path,
            worktree_branch: active.branch.clone(),
            original_cwd: back,
            message,
        };
        let dir = active.original_cwd;
        Ok(ToolResult::new(output).with_context_change(tool_core::ContextModifier::cwd(dir)))
    }

    fn to_content(&self, output: &ExitWorktreeOutput) -> tool_core::ToolResultContent {
        tool_core::ToolResultContent::Text(output.message.clone())
    }
}

/// How many lines of `git status` a refusal quotes.
const STATUS_LINES_SHOWN: usize = 20;

/// Removes the session's worktree and its branch (see the module docs); returns what was done.
async fn remove(active: &ActiveWorktree, discard: bool) -> Result<String, ToolError> {
    let path = &active.worktree_path;
    if !active.created {
        return Err(ToolError::msg(format!(
            "The worktree at {} was entered with path, not created by EnterWorktree in this \
             session, so ExitWorktree will not remove it. Use action \"keep\" to leave it.",
            path.display()
        )));
    }
    let target = path.clone();
    let exists = blocking(move || target.is_dir()).await?;
    if !discard {
        // Everything that would be lost, said together: a model told of one file only
        // agrees to discard commits it never heard of.
        let mut at_stake: Vec<String> = Vec::new();
        if exists {
            // `git status` runs the clean filter of a racily clean file; in the
            // worktree, whose own `config.worktree` counts too.
            refuse_filter_drivers(path, FilterCheck::Remove).await?;
            // Every untracked file and submodule change, whatever the user's config hides
            // (`status.showUntrackedFiles=no` would let a new file be deleted unseen).
            let status = git(
                path,
                &[
                    "status",
                    "--porcelain",
                    "--untracked-files=all",
                    "--ignore-submodules=none",
                ],
            )
            .await?;
            let lines: Vec<&str> = status.lines().filter(|l| !l.trim().is_empty()).collect();
            if !lines.is_empty() {
                let mut shown: Vec<String> = lines
                    .iter()
                    .take(STATUS_LINES_SHOWN)
                    .map(|l| format!("  {l}"))
                    .collect();
                if lines.len() > STATUS_LINES_SHOWN {
                    shown.push(format!(
                        "  ... and {} more",
                        lines.len() - STATUS_LINES_SHOWN
                    ));
                }
                at_stake.push(format!(
                    "uncommitted changes ({} file{}):\n{}",
                    lines.len(),
                    if lines.len() == 1 { "" } else { "s" },
                    shown.join("\n")
                ));
            }
        }
        // Commits on the worktree's HEAD or on its branch (the one deleted below; HEAD may
        // have left it) that the original branch does not have (the commit it started from
        // when that branch is gone or was detached). Checked even when the directory is
        // already gone: the branch still holds them.
        let (base, base_name) = match &active.original_branch {
            Some(b)
                if git_maybe(
                    &active.main_root,
                    &[
                        "show-ref",
                        "--verify",
                        "--quiet",
                        &format!("refs/heads/{b}"),
                    ],
                )
                .await?
                .is_some() =>
            {
                (format!("refs/heads/{b}"), format!("branch {b}"))
            }
            _ => (
                active.original_head.clone(),
                format!("commit {}", active.original_head),
            ),
        };
        let mut count: u64 = 0;
        if exists {
            let ahead = git(path, &["rev-list", "--count", "HEAD", "--not", &base]).await?;
            count = ahead.trim().parse().unwrap_or(0);
        }
        if let Some(branch) = &active.branch {
            let branch_ref = format!("refs/heads/{branch}");
            let ahead = git_maybe(
                &active.main_root,
                &["rev-list", "--count", &branch_ref, "--not", &base],
            )
            .await?;
            count = count.max(ahead.and_then(|a| a.trim().parse().ok()).unwrap_or(0));
        }
        if count > 0 {
            at_stake.insert(
                0,
                format!(
                    "{count} commit{} that {} not on the original {base_name}",
                    if count == 1 { "" } else { "s" },
                    if count == 1 { "is" } else { "are" },
                ),
            );
        }
        if !at_stake.is_empty() {
            return Err(ToolError::msg(format!(
                "Not removed: the worktree at {} has {}\n\
                 Commit, merge or push them first, or call ExitWorktree with discard_changes: \
                 true to delete them with the worktree.",
                path.display(),
                at_stake.join("\nand ")
            )));
        }
    }
    // Also when the directory is already gone: git drops its record of this worktree only
    // (`worktree prune` would drop every worktree whose directory is missing, such as one
    // on a drive not mounted now).
    git(
        &active.main_root,
        &[
            OsStr::new("worktree"),
            OsStr::new("remove"),
            OsStr::new("--force"),
            path.as_os_str(),
        ],
    )
    .await?;
    let mut message = format!("Removed the worktree at {}", path.display());
    if let Some(branch) = &active.branch {
        match git(&active.main_root, &["branch", "-D", branch]).await {
            Ok(_) => message.push_str(&format!(" and deleted its branch {branch}.")),
            Err(e) => {
                message.push_str(&format!("; its branch {branch} could not be deleted: {e}."))
            }
        }
    } else {
        message.push('.');
    }
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_name("feature-1").is_ok());
        assert!(check_name("team/fix_2.x").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("a b").is_err());
        assert!(check_name("../up").is_err());
        assert!(check_name("a//b").is_err());
        assert!(check_name(".hidden").is_err());
        assert!(check_name("-flag").is_err());
        assert!(check_name("x.lock").is_err());
        assert!(check_name("a..b").is_err());
        assert!(check_name(&"n".repeat(65)).is_err());
        assert!(check_name(&"n".repeat(64)).is_ok());
        let generated = generated_name();
        assert!(check_name(&generated).is_ok(), "{generated}");
        assert_eq!(dir_name("team/fix"), "team+fix");
    }

    /// Review finding 7: a FIFO where a worktree's files should be (its admin entry's
    /// `gitdir`, its `.git`) is refused at once, never opened for a read that waits for a
    /// writer.
    #[test]
    fn a_fifo_in_a_worktree_entry_is_not_waited_on() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let common = base.join("repo.git");
        let admin = common.join("worktrees/w");
        std::fs::create_dir_all(&admin).unwrap();
        let wt = base.join("wt");
        std::fs::create_dir(&wt).unwrap();
        std::fs::write(wt.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
        nix::unistd::mkfifo(&admin.join("gitdir"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let (send, receive) = std::sync::mpsc::channel();
        let (w, c) = (wt.clone(), common.clone());
        std::thread::spawn(move || {
            let _ = send.send(check_registered(&w, &c));
        });
        let answer = receive
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("check_registered waited on a FIFO");
        let err = answer.unwrap_err();
        assert!(err.contains("regular file"), "{err}");

        // The `.git` itself a FIFO.
        std::fs::remove_file(wt.join(".git")).unwrap();
        nix::unistd::mkfifo(&wt.join(".git"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let err = check_registered(&wt, &common).unwrap_err();
        assert!(err.contains("gitfile"), "{err}");
    }

    /// Review 35b, finding 6: a gitfile whose path ends in a space names another
    /// directory for git (it strips only line ends), which does not take the work tree for
    /// a repository; it was trimmed of spaces and tabs too and taken for a live worktree.
    #[test]
    fn a_gitfile_is_trimmed_of_line_ends_only() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let repo = base.join("repo");
        std::fs::create_dir(&repo).unwrap();
        let git = |dir: &Path, args: &[&str]| {
            std::process::Command::new("git")
                .args(args)
                .current_dir(dir)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_AUTHOR_NAME", "t")
                .env("GIT_AUTHOR_EMAIL", "t@example.com")
                .env("GIT_COMMITTER_NAME", "t")
                .env("GIT_COMMITTER_EMAIL", "t@example.com")
                .output()
                .unwrap()
        };
        assert!(git(&repo, &["init", "-q"]).status.success());
        assert!(
            git(&repo, &["commit", "-q", "--allow-empty", "-m", "one"])
                .status
                .success()
        );
        let wt = base.join("wt");
        let wt_arg = wt.display().to_string();
        assert!(
            git(&repo, &["worktree", "add", "-q", &wt_arg])
                .status
                .success()
        );
        let common = repo.join(".git");
        check_registered(&wt, &common).unwrap();
        for end in [" \n", "\t\n"] {
            let text = std::fs::read_to_string(wt.join(".git")).unwrap();
            let text = format!("{}{end}", text.trim_end());
            std::fs::write(wt.join(".git"), text).unwrap();
            assert!(
                !git(&wt, &["rev-parse", "--git-dir"]).status.success(),
                "git takes the gitfile ending in {end:?}"
            );
            let err = check_registered(&wt, &common).unwrap_err();
            assert!(err.contains("not a live worktree"), "{err}");
        }
    }

    /// Review finding 1: the configuration is read as git reads it, includes whatever
    /// their condition, and whatever cannot be read so is an error (a refusal), never "no
    /// filter".
    #[test]
    fn filter_drivers_are_found_as_git_reads_the_configuration() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let home = base.join("home");
        std::fs::create_dir(&home).unwrap();
        let config = base.join("config");
        let check = |text: &str| {
            std::fs::write(&config, text).unwrap();
            filter_driver_in(std::slice::from_ref(&config), Some(&home))
        };
        let key = |text: &str| check(text).unwrap().map(|f| f.key);
        assert_eq!(key("[core]\n\tbare = false\n"), None);
        assert_eq!(
            key("[filter \"X\"]\n\tsmudge = cat\n").as_deref(),
            Some("filter.X.smudge")
        );
        // The old form (lower-cased), a key on the header's line, any case, a lone key.
        assert_eq!(
            key("[filter.Lfs]\n\tclean = x\n").as_deref(),
            Some("filter.lfs.clean")
        );
        assert_eq!(
            key("[FILTER \"y\"] PROCESS = x\n").as_deref(),
            Some("filter.y.process")
        );
        assert_eq!(
            key("[filter \"z\"]\n\tsmudge\n").as_deref(),
            Some("filter.z.smudge")
        );
        // Not a filter: no subsection, another key, a value continued onto a header-like line.
        assert_eq!(
            key("[filter]\n\tsmudge = x\n[filter \"a\"]\n\trequired = true\n"),
            None
        );
        assert_eq!(
            key("[core]\n\tx = a \\\n[filter \"q\"] smudge = cat\n"),
            None
        );
        // A comment is no section.
        assert_eq!(key("# [filter \"c\"]\n; smudge = x\n"), None);

        // Includes: relative to the including file, `~/` from the home directory, nested,
        // whatever the condition; a missing one is none, as for git.
        std::fs::create_dir(base.join("sub")).unwrap();
        std::fs::write(base.join("sub/inner.cfg"), "[filter \"in\"]\n\tclean = x\n").unwrap();
        std::fs::write(
            base.join("sub/outer.cfg"),
            "[includeIf \"onbranch:nope\"]\n\tpath = inner.cfg\n",
        )
        .unwrap();
        let found = check("[include]\n\tpath = sub/outer.cfg\n")
            .unwrap()
            .unwrap();
        assert_eq!(found.key, "filter.in.clean");
        assert_eq!(found.file, base.join("sub/inner.cfg"));
        assert_eq!(found.included_from.as_deref(), Some(config.as_path()));
        std::fs::write(home.join("h.cfg"), "[filter \"h\"]\n\tsmudge = x\n").unwrap();
        assert_eq!(
            key("[includeIf \"gitdir:/x/\"]\n\tpath = \"~/h.cfg\" ; comment\n").as_deref(),
            Some("filter.h.smudge")
        );
        assert_eq!(key("[include]\n\tpath = missing.cfg\n"), None);

        // What cannot be read as git reads it.
        let error = |text: &str| check(text).unwrap_err();
        assert!(error("[filter \"x\"\n\tsmudge = cat\n").contains("cannot be parsed"));
        assert!(error("[core]\n\tx = \"open\n").contains("cannot be parsed"));
        assert!(error("[include]\n\tpath = /\n").contains("no regular file"));
        assert!(error("[include]\n\tpath\n").contains("without a value"));
        assert!(error("[include]\n\tpath = %(prefix)/etc/x\n").contains("cannot be located"));
        nix::unistd::mkfifo(&base.join("fifo.cfg"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(error("[include]\n\tpath = fifo.cfg\n").contains("no regular file"));
        // A file that includes itself: deeper than git's limit.
        std::fs::write(base.join("loop.cfg"), "[include]\n\tpath = loop.cfg\n").unwrap();
        assert!(error("[include]\n\tpath = loop.cfg\n").contains("deeper than"));
        std::fs::write(&config, vec![b'#'; (MAX_CONFIG_BYTES + 1) as usize]).unwrap();
        let too_big = filter_driver_in(std::slice::from_ref(&config), Some(&home)).unwrap_err();
        assert!(too_big.contains("larger than"), "{too_big}");
    }

    #[test]
    fn parses_porcelain_list() {
        let text = "worktree /r\nHEAD abc\nbranch refs/heads/main\n\n\
                    worktree /r/.claude/worktrees/x\nHEAD def\ndetached\n\n";
        let list = parse_worktree_list(text.as_bytes());
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].branch.as_deref(), Some("main"));
        assert_eq!(list[1].path, PathBuf::from("/r/.claude/worktrees/x"));
        assert_eq!(list[1].branch, None);
        assert_eq!(list[1].head.as_deref(), Some("def"));
    }
}
