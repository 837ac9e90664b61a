//! EnterWorktree and ExitWorktree (Cargo feature `worktree`): move the session into an
//! isolated git worktree and back, on real `git worktree` commands.
//!
//! - [`EnterWorktree`] with a `name` (or neither field: a generated name) runs
//!   `git worktree add -b worktree-<name> <main root>/.claude/worktrees/<name> HEAD`, the
//!   layout Claude Code uses (a `/` in the name becomes `+` in the directory and branch
//!   names). It refuses when `.claude` or `.claude/worktrees` is a symbolic link (or
//!   resolves outside the root), and a failed `git worktree add` has its branch and checkout
//!   removed. With a `path` it enters an existing linked worktree of the same repository:
//!   listed by `git worktree list --porcelain`, not prunable, and live (its `.git` gitfile
//!   names the repository's `worktrees/<id>`, whose `gitdir` names that `.git` back; a
//!   planted `.git/worktrees/*/gitdir` naming any directory does not count). Either way it
//!   switches the session's working directory through a context modifier.
//! - Git runs with `-c core.hooksPath=/dev/null -c core.fsmonitor=false`: the repository's
//!   own hooks (`post-checkout`) and file system monitor never run (Claude Code runs
//!   `post-checkout` once the folder is trusted). Filter drivers cannot be turned off that
//!   way: a repository whose own configuration names a filter driver's program
//!   (`filter.<driver>.smudge`, `.clean`, `.process`) is refused, naming the key.
//! - The session remembers where it came from in an [`ActiveWorktree`] kept in the context's
//!   app state (shared by every clone of the session's context; see [`active_worktree`]),
//!   so [`ExitWorktree`] can go back. One worktree session at a time: entering a second one
//!   is refused until the first is exited.
//! - [`ExitWorktree`] with `keep` only switches back. With `remove` it refuses while the
//!   worktree has uncommitted changes (`git status --porcelain` is not empty) or commits that
//!   are not on the branch the session came from, unless `discard_changes` is true; then it
//!   runs `git worktree remove --force` and deletes the branch. It removes only a worktree
//!   that EnterWorktree created in this session: one entered by `path` can only be kept.
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
//! for.
//!
//! The `/.claude/worktrees/` line is added to `info/exclude` before the checkout is made,
//! and never through a link: when `info` or `info/exclude` is a symbolic link, or the file
//! is no regular file with one link, it is left as it is.

use std::borrow::Cow;
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
`discard_changes` is true; confirm with the user before discarding work.\n\
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
    stdout: String,
    stderr: String,
}

/// Runs `git args...` in `dir`. Errors only when git cannot be started.
async fn run_git(dir: &Path, args: &[&str]) -> Result<GitRun, ToolError> {
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
        .await
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound && dir.is_dir() {
                ToolError::msg("git was not found on PATH; worktrees need git")
            } else {
                ToolError::msg(format!("Could not run git in {}: {e}", dir.display()))
            }
        })?;
    Ok(GitRun {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Runs `git args...` in `dir`; returns its standard output, or an error that names the
/// command and quotes git's message.
async fn git(dir: &Path, args: &[&str]) -> Result<String, ToolError> {
    let run = run_git(dir, args).await?;
    if run.success {
        Ok(run.stdout)
    } else {
        Err(ToolError::msg(format!(
            "`git {}` failed in {}: {}",
            args.join(" "),
            dir.display(),
            run.stderr.trim()
        )))
    }
}

/// Like [`git`], but `None` when git exits non-zero (a question answered "no").
async fn git_maybe(dir: &Path, args: &[&str]) -> Result<Option<String>, ToolError> {
    let run = run_git(dir, args).await?;
    Ok(run.success.then_some(run.stdout))
}

/// The line that keeps new worktrees out of the main checkout's `git status` and `git add
/// -A` (which would stage a checkout as an embedded repository).
const EXCLUDE_LINE: &str = "/.claude/worktrees/";

/// The repository's common git directory (shared by all its worktrees), canonical.
async fn common_dir(cwd: &Path) -> Result<PathBuf, ToolError> {
    let common = git(cwd, &["rev-parse", "--git-common-dir"]).await?;
    // Relative to `cwd` when git prints it so (older gits have no `--path-format`).
    Ok(canonical(&cwd.join(common.trim())))
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
    let mut existing = Vec::new();
    (&file).take(1 << 20).read_to_end(&mut existing)?;
    let text = String::from_utf8_lossy(&existing);
    if text.lines().any(|l| {
        let l = l.trim();
        l == EXCLUDE_LINE || l == ".claude/worktrees/" || l == "/.claude/worktrees"
    }) {
        return Ok(());
    }
    let mut line = Vec::new();
    if !existing.is_empty() && !existing.ends_with(b"\n") {
        line.push(b'\n');
    }
    line.extend_from_slice(EXCLUDE_LINE.as_bytes());
    line.push(b'\n');
    file.write_all(&line)
}

/// Refuses when the repository's own configuration (its `config`, what that includes, and
/// `config.worktree`; not the user's) names a filter driver's program
/// (`filter.<driver>.smudge`, `.clean` or `.process`): git would run it on checkout and
/// status, and unlike hooks it cannot be turned off for one command.
async fn refuse_filter_drivers(common: &Path) -> Result<(), ToolError> {
    for file in ["config", "config.worktree"] {
        let path = common.join(file);
        if path.symlink_metadata().is_err() {
            continue;
        }
        let path_arg = path.display().to_string();
        let Some(found) = git_maybe(
            common,
            &[
                "config",
                "--file",
                &path_arg,
                "--includes",
                "--name-only",
                "--get-regexp",
                r"^filter\..*\.(smudge|clean|process)$",
            ],
        )
        .await?
        else {
            continue;
        };
        if let Some(key) = found.lines().map(str::trim).find(|l| !l.is_empty()) {
            return Err(ToolError::msg(format!(
                "The repository's own configuration ({}) names a filter driver's program \
                 (`{key}`), which git would run on checkout. Worktree tools do not run \
                 programs a repository configures; remove the setting, or create the \
                 worktree yourself with git.",
                path.display()
            )));
        }
    }
    Ok(())
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
/// it prunable) does not count.
fn check_registered(wanted: &Path, common: &Path) -> Result<(), String> {
    let gitfile = wanted.join(".git");
    let not = |why: String| {
        format!(
            "{} is not a live worktree of the repository at {}: {why}",
            wanted.display(),
            common.display()
        )
    };
    match gitfile.symlink_metadata() {
        Ok(meta) if meta.is_file() && meta.len() <= 4096 => {}
        Ok(_) => return Err(not(format!("{} is not a gitfile", gitfile.display()))),
        Err(e) => return Err(not(format!("{}: {e}", gitfile.display()))),
    }
    let text = std::fs::read_to_string(&gitfile)
        .map_err(|e| not(format!("{}: {e}", gitfile.display())))?;
    let Some(target) = text.trim_end().strip_prefix("gitdir: ") else {
        return Err(not(format!("{} is not a gitfile", gitfile.display())));
    };
    let admin = canonical(&wanted.join(target));
    if admin.parent() != Some(common.join("worktrees").as_path()) {
        return Err(not(format!(
            "its .git points at {}, not at an entry of {}",
            admin.display(),
            common.join("worktrees").display()
        )));
    }
    let back_file = admin.join("gitdir");
    let back = std::fs::read_to_string(&back_file)
        .map_err(|e| not(format!("{}: {e}", back_file.display())))?;
    if canonical(&admin.join(back.trim_end())) != gitfile {
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

fn parse_worktree_list(text: &str) -> Vec<ListedWorktree> {
    let mut list = Vec::new();
    let mut current: Option<ListedWorktree> = None;
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("worktree ") {
            if let Some(done) = current.take() {
                list.push(done);
            }
            current = Some(ListedWorktree {
                path: PathBuf::from(path),
                ..ListedWorktree::default()
            });
        } else if let Some(entry) = current.as_mut() {
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
    let list = parse_worktree_list(&git(cwd, &["worktree", "list", "--porcelain"]).await?);
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
        let wanted = canonical(&ctx.resolve_path(raw));
        let inside = match repository(ctx.cwd()).await {
            Ok(list) => {
                let root = canonical(&list[0].path);
                check_worktrees_dir(&root).is_ok()
                    && wanted.starts_with(root.join(WORKTREES_DIR))
                    && wanted != root.join(WORKTREES_DIR)
            }
            Err(_) => false,
        };
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
        let main_root = canonical(&list[0].path);
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
async fn create(
    ctx: &ToolUseContext,
    name: Option<String>,
    main_root: PathBuf,
    original_head: String,
    original_branch: Option<String>,
) -> Result<(ActiveWorktree, String), ToolError> {
    let cwd = ctx.cwd();
    check_worktrees_dir(&main_root)?;
    let common = common_dir(cwd).await?;
    refuse_filter_drivers(&common).await?;
    let given = name.is_some();
    let mut attempts = 0;
    let (name, dir, branch) = loop {
        let name = name.clone().unwrap_or_else(generated_name);
        check_name(&name).map_err(ToolError::msg)?;
        let dir = main_root.join(WORKTREES_DIR).join(dir_name(&name));
        // Flattened as the directory is (Claude Code's `worktreeBranchName`): `team/fix`
        // and `team` would otherwise clash as refs (`worktree-team/fix` needs
        // `worktree-team` to be a directory of refs).
        let branch = format!("{BRANCH_PREFIX}{}", dir_name(&name));
        let dir_taken = dir.symlink_metadata().is_ok();
        let branch_ref = format!("refs/heads/{branch}");
        let branch_taken = git_maybe(cwd, &["show-ref", "--verify", "--quiet", &branch_ref])
            .await?
            .is_some();
        if !dir_taken && !branch_taken {
            break (name, dir, branch);
        }
        attempts += 1;
        if given || attempts >= 5 {
            return Err(ToolError::msg(if dir_taken {
                format!(
                    "A worktree named {name:?} already exists at {}. Choose another name, or \
                     enter it with path.",
                    dir.display()
                )
            } else {
                format!(
                    "The branch {branch:?} already exists, so a worktree named {name:?} cannot \
                     be created. Choose another name."
                )
            }));
        }
    };
    if git_maybe(cwd, &["check-ref-format", "--branch", &branch])
        .await?
        .is_none()
    {
        return Err(ToolError::msg(format!(
            "The worktree name {name:?} does not make a valid branch name ({branch:?})"
        )));
    }
    // Before the checkout exists, so that it never shows in the main one's status.
    exclude_worktrees_dir(&common).await;
    let dir_arg = dir.display().to_string();
    if let Err(e) = git(cwd, &["worktree", "add", "-b", &branch, &dir_arg, "HEAD"]).await {
        return Err(ToolError::msg(format!(
            "{e}{}",
            clean_up_failed_add(&main_root, &dir, &branch).await
        )));
    }
    let worktree_path = canonical(&dir);
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

/// After a failed `git worktree add -b <branch> <dir>`: removes what it left (the checkout,
/// git's record of it, the new branch); returns what the error should add about it.
async fn clean_up_failed_add(main_root: &Path, dir: &Path, branch: &str) -> String {
    let mut left = Vec::new();
    if dir.symlink_metadata().is_ok() {
        let dir_arg = dir.display().to_string();
        if let Err(e) = git(main_root, &["worktree", "remove", "--force", &dir_arg]).await {
            left.push(format!(
                "the worktree at {} could not be removed ({e}); enter it with path or remove \
                 it with `git worktree remove --force`",
                dir.display()
            ));
        }
    }
    let branch_ref = format!("refs/heads/{branch}");
    if let Ok(Some(_)) =
        git_maybe(main_root, &["show-ref", "--verify", "--quiet", &branch_ref]).await
        && let Err(e) = git(main_root, &["branch", "-D", branch]).await
    {
        left.push(format!("the branch {branch} could not be deleted ({e})"));
    }
    if left.is_empty() {
        " Nothing was left behind: the partial worktree and its branch were removed.".to_owned()
    } else {
        format!(" Left behind: {}.", left.join("; "))
    }
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
    let wanted = ctx.resolve_path(raw);
    let wanted = std::fs::canonicalize(&wanted)
        .map_err(|e| ToolError::msg(format!("Cannot enter worktree {}: {e}", wanted.display())))?;
    let Some(index) = list.iter().position(|w| canonical(&w.path) == wanted) else {
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
    let cwd = ctx.cwd();
    if canonical(cwd).starts_with(&wanted) {
        return Err(ToolError::msg(format!(
            "The session is already working in {}",
            wanted.display()
        )));
    }
    let entry = &list[index];
    let common = common_dir(&main_root).await?;
    check_registered(&wanted, &common).map_err(ToolError::msg)?;
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
            ExitAction::Keep => format!(
                "Left the worktree at {path}{branch_text}; it is kept on disk. The session is \
                 back in {back}."
            ),
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
    let exists = path.is_dir();
    if !discard {
        // Everything that would be lost, said together: a model told of one file only
        // agrees to discard commits it never heard of.
        let mut at_stake: Vec<String> = Vec::new();
        if exists {
            // `git status` runs the clean filter of a racily clean file.
            refuse_filter_drivers(&common_dir(&active.main_root).await?).await?;
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
    let path_arg = path.display().to_string();
    git(
        &active.main_root,
        &["worktree", "remove", "--force", &path_arg],
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

    #[test]
    fn parses_porcelain_list() {
        let text = "worktree /r\nHEAD abc\nbranch refs/heads/main\n\n\
                    worktree /r/.claude/worktrees/x\nHEAD def\ndetached\n\n";
        let list = parse_worktree_list(text);
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].branch.as_deref(), Some("main"));
        assert_eq!(list[1].path, PathBuf::from("/r/.claude/worktrees/x"));
        assert_eq!(list[1].branch, None);
        assert_eq!(list[1].head.as_deref(), Some("def"));
    }
}
