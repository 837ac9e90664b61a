//! Tasks v2 (Claude Code's "todo v2"): [`TaskCreate`], [`TaskGet`], [`TaskUpdate`] and
//! [`TaskList`], a task list kept on disk so it outlives the process and can be shared by
//! every agent of a session.
//!
//! Always compiled; the registry offers these tools instead of TodoWrite when the
//! environment variable [`ENABLE_TASKS_ENV`] is set (Claude Code's `isTodoV2Enabled()`).
//! Not to be confused with [`crate::tasks`], Bash's background shell tasks.
//!
//! # Storage
//!
//! A [`TaskListStore`] is a `tasks` directory (default `$CLAUDE_CONFIG_DIR/tasks`, else
//! `~/.claude/tasks`, as Claude Code); the list of a session lives in its sub-directory named
//! after the session id (characters other than ASCII letters, digits, `-` and `_` become `-`;
//! an empty session id uses `default`). As in Claude Code each task is one file, `<id>.json`
//! (`{id, subject, description, activeForm?, owner?, status, blocks, blockedBy, metadata?}`),
//! ids are `"1"`, `"2"`, ... and never reused (`.highwatermark` remembers the largest one
//! handed out; a damaged one, no regular file or a link that leads nowhere included, is
//! rebuilt from the task files present, one that cannot be read for now is an error; it is
//! always replaced by a file of its own, never written through a link; a new task's id is
//! counted before its file is written, so a TaskCreate that fails, on a full disk say, leaves
//! no task behind, at most an id never used, and says so), and every change runs under an exclusive `flock` of `.lock` in the list's directory, so concurrent
//! calls (another session's, a sub-agent's, `toolwright serve`'s calls side by side) and
//! other processes sharing the list never lose an update. Every file is written atomically
//! (temporary file in the same directory, fsync, rename). A task file that is not valid JSON
//! is reported with its path and never overwritten. A change touching several tasks
//! (blockers, deletion) writes each file atomically, but not the set: a crash in between can
//! leave a one-sided `blocks` link.
//!
//! The host picks the directory by putting a store in the app state with
//! [`install_task_list_store`]; without one the tools use [`TaskListStore::from_env`].
//!
//! # Behaviour
//!
//! - `status: "deleted"` removes the task's file and every reference to it in other tasks'
//!   `blocks`/`blockedBy`.
//! - `addBlocks`/`addBlockedBy` keep both sides in step (`A.blocks` has `B` iff `B.blockedBy`
//!   has `A`); an unknown id or a task blocking itself is refused and nothing is written.
//! - `metadata` in TaskUpdate merges into the task's metadata; a key set to `null` is removed.
//! - `owner: ""` clears the owner.
//! - Unknown `taskId`: the call fails with `Task #<id> not found`.
//! - TaskList shows, per task, only the blockers that are not completed (as Claude Code), and
//!   skips tasks whose metadata has `_internal: true`.
//! - TaskCreate and TaskUpdate are not concurrency-safe (**Decision**: Claude Code marks all
//!   four safe): the executor runs each alone, in block order, so the ids of one response's
//!   TaskCreates follow their blocks and a later TaskUpdate, TaskGet or TaskList of the same
//!   response sees what they did. TaskGet and TaskList, which only read, run side by side.
//!
//! # Hooks
//!
//! As in Claude Code, TaskCreate raises [`TASK_CREATED`] and TaskUpdate [`TASK_COMPLETED`]
//! through the context's hook seam ([`ToolUseContext::run_hook_event`], which the pipeline
//! fills with the session's hooks; without one nothing runs), with `task_id`,
//! `task_subject` and `task_description`:
//!
//! - TaskCreated runs once the task is written (its file exists while the hooks run). A
//!   hook that blocks (exit code 2, `decision: "block"`, `continue: false`) has the task
//!   deleted again, its id not handed out again, and the call fails with each hook's text
//!   after `TaskCreated hook feedback:`. Hooks cancelled with the call delete it too.
//! - TaskCompleted runs for an update that would change a task's status to `completed`
//!   (not for one already completed), with the task as it is before the update, and before
//!   anything is written: a hook that blocks leaves the task as it was, every field the
//!   call would have changed included, and the call fails with `TaskCompleted hook
//!   feedback:` and the hook's text. The list is not locked while the hooks run.
//! - Another outcome (exit code 0, another exit code: a non-blocking error) lets the task
//!   go on; what the hooks said (`systemMessage`, `additionalContext`, non-blocking errors)
//!   comes after the call's result. When a hook blocks, only the blocking texts reach the
//!   model.
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};

use nix::fcntl::Flock;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tool_core::{
    AppState, MaxResultSize, ProgressSender, ToolError, ToolResult, ToolResultContent,
    ToolUseContext, TypedTool, ValidationError, async_trait,
};

use crate::fsutil;

/// The environment variable that turns Tasks v2 on (`1`, `true`, `yes` or `on`:
/// [`tool_core::env_truthy`], as the registry's gate reads it).
pub const ENABLE_TASKS_ENV: &str = "TOOLWRIGHT_ENABLE_TASKS";

/// Whether [`ENABLE_TASKS_ENV`] (or, when it is not set, Claude Code's
/// `CLAUDE_CODE_ENABLE_TASKS`) asks for Tasks v2 in this process's environment, as the
/// registry's gate reads them.
pub fn tasks_v2_enabled() -> bool {
    let set = |var: &str| std::env::var(var).ok().filter(|v| !v.trim().is_empty());
    match set(ENABLE_TASKS_ENV) {
        Some(value) => tool_core::env_truthy(&value),
        None => set("CLAUDE_CODE_ENABLE_TASKS").is_some_and(|v| tool_core::env_truthy(&v)),
    }
}

/// The state of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

impl TaskStatus {
    /// The name the model sees (`pending`, `in_progress`, `completed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
        }
    }
}

/// One task, as stored in `<id>.json` (Claude Code's file format).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// The id: `"1"`, `"2"`, ...
    pub id: String,
    /// A short title, in imperative form.
    pub subject: String,
    /// What needs to be done.
    pub description: String,
    /// The present-continuous form shown while the task runs.
    #[serde(
        rename = "activeForm",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub active_form: Option<String>,
    /// Who works on it (an agent name), if anyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The state.
    pub status: TaskStatus,
    /// Tasks that cannot start until this one is done.
    #[serde(default)]
    pub blocks: Vec<String>,
    /// Tasks that must be done before this one can start.
    #[serde(rename = "blockedBy", default)]
    pub blocked_by: Vec<String>,
    /// Free-form data attached by the model or the host.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub metadata: Map<String, Value>,
    /// Fields this version does not know (a newer Claude Code's, in a list both share),
    /// kept so that rewriting the task does not drop them.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl Task {
    fn is_internal(&self) -> bool {
        self.metadata.get("_internal") == Some(&Value::Bool(true))
    }
}

/// A task to create.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewTask {
    /// The title.
    pub subject: String,
    /// What needs to be done.
    pub description: String,
    /// The present-continuous form.
    pub active_form: Option<String>,
    /// Initial metadata (`null` values are dropped).
    pub metadata: Map<String, Value>,
}

/// The status a [`TaskPatch`] sets; `Deleted` removes the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskUpdateStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
    /// Remove the task.
    Deleted,
}

/// A change to one task; `None`/empty fields are left alone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskPatch {
    /// New title.
    pub subject: Option<String>,
    /// New description.
    pub description: Option<String>,
    /// New present-continuous form.
    pub active_form: Option<String>,
    /// New status, or deletion.
    pub status: Option<TaskUpdateStatus>,
    /// Ids of tasks this one now blocks.
    pub add_blocks: Vec<String>,
    /// Ids of tasks that now block this one.
    pub add_blocked_by: Vec<String>,
    /// New owner; an empty string clears it.
    pub owner: Option<String>,
    /// Keys to merge into the metadata; a `null` value removes the key.
    pub metadata: Option<Map<String, Value>>,
}

/// What [`TaskListStore::update`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskUpdateOutcome {
    /// The task after the change; `None` when it was deleted.
    pub task: Option<Task>,
    /// The fields that changed (input names: `subject`, `status`, `blocks`, ...).
    pub updated_fields: Vec<String>,
    /// The status before and after, when it changed.
    pub status_change: Option<(TaskStatus, TaskStatus)>,
}

/// Why a task-list operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// No task with this id in the list.
    #[error("Task #{id} not found")]
    NotFound {
        /// The id asked for.
        id: String,
    },
    /// `addBlocks` or `addBlockedBy` names a task that does not exist.
    #[error("{field} names task #{id}, which does not exist; nothing was changed")]
    UnknownBlocker {
        /// `addBlocks` or `addBlockedBy`.
        field: &'static str,
        /// The unknown id.
        id: String,
    },
    /// A task was asked to block itself.
    #[error("Task #{id} cannot block itself; nothing was changed")]
    SelfBlock {
        /// The task's id.
        id: String,
    },
    /// The new blocking links would close a loop (each task waiting on the next, the last
    /// on the first): none of them could ever start.
    #[error(
        "Task #{id} would end up waiting on itself ({}); nothing was changed",
        cycle.iter().map(|id| format!("#{id}")).collect::<Vec<_>>().join(" blocks ")
    )]
    BlockCycle {
        /// The updated task.
        id: String,
        /// The loop, as the ids in blocking order, starting and ending with `id`.
        cycle: Vec<String>,
    },
    /// A task file is not a valid task; it is left untouched.
    #[error(
        "task file {} is not a valid task ({reason}); fix or remove it, it was left untouched",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
    /// The list's id counter (`.highwatermark`, the largest id ever handed out) cannot be
    /// used: it could not be read (an I/O error), or was damaged and could not be rebuilt,
    /// or it is at the largest id.
    #[error("the task id counter {} {reason}", path.display())]
    Counter {
        /// The counter's file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The task changed between the look [`TaskListStore::preview_update`] took and the
    /// update that was to follow it ([`TaskListStore::update_if_unchanged`]): its
    /// TaskCompleted hooks judged a task that is no longer there.
    #[error(
        "Task #{id} changed while its TaskCompleted hooks ran; nothing was changed (try again)"
    )]
    ChangedMeanwhile {
        /// The task's id.
        id: String,
    },
    /// [`TaskListStore::create`] failed writing the id counter or the task's file, and left
    /// no task behind (a retry makes no duplicate).
    #[error("{0}; no task was created")]
    NotCreated(Box<TaskStoreError>),
    /// A file operation failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// Neither a store was installed nor `CLAUDE_CONFIG_DIR`/`HOME` set.
    #[error(
        "no task directory: set CLAUDE_CONFIG_DIR or HOME, or install a TaskListStore in the app state"
    )]
    NoDirectory,
}

impl From<TaskStoreError> for ToolError {
    fn from(e: TaskStoreError) -> Self {
        ToolError::msg(e.to_string())
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> TaskStoreError + '_ {
    move |source| TaskStoreError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The `tasks` directory holding one sub-directory per task list. Cheap to clone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskListStore {
    root: PathBuf,
}

/// The file name that holds the largest id ever handed out in a list.
const HIGH_WATER_MARK: &str = ".highwatermark";
/// The lock file of a list.
const LOCK_FILE: &str = ".lock";

/// The directory name of a list id: ASCII letters, digits, `-` and `_` kept, anything else
/// `-`; empty becomes `default`.
pub fn sanitize_list_id(list_id: &str) -> String {
    if list_id.is_empty() {
        return "default".to_owned();
    }
    list_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Whether `id` can name a task file (digits only, so no path tricks).
fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 18 && id.bytes().all(|b| b.is_ascii_digit())
}

/// An open, exclusively locked list directory.
struct LockedList {
    dir: PathBuf,
    _lock: Flock<File>,
}

impl LockedList {
    fn task_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    fn read_task(&self, id: &str) -> Result<Option<Task>, TaskStoreError> {
        if !valid_id(id) {
            return Ok(None);
        }
        let path = self.task_path(id);
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&path)(e)),
        };
        parse_task(&path, &bytes).map(Some)
    }

    fn require(&self, id: &str) -> Result<Task, TaskStoreError> {
        self.read_task(id)?
            .ok_or_else(|| TaskStoreError::NotFound { id: id.to_owned() })
    }

    /// The ids of the list's task files, from their names alone: an unreadable file still
    /// holds its id, so a new task never takes it.
    fn ids(&self) -> Result<Vec<u64>, TaskStoreError> {
        Ok(self
            .task_files()?
            .iter()
            .filter_map(|(id, _)| id.parse().ok())
            .collect())
    }

    /// `(id, path)` of every task file.
    fn task_files(&self) -> Result<Vec<(String, PathBuf)>, TaskStoreError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(&self.dir)(e)),
        };
        let mut files = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_err(&self.dir))?;
            let name = entry.file_name();
            let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".json")) else {
                continue;
            };
            if valid_id(id) {
                files.push((id.to_owned(), entry.path()));
            }
        }
        Ok(files)
    }

    /// Every task, by numeric id, and the task files that are not valid tasks (left
    /// untouched): one bad file does not hide the others.
    fn all(&self) -> Result<TaskListing, TaskStoreError> {
        let mut listing = TaskListing::default();
        for (_, path) in self.task_files()? {
            let bytes = match fs::read(&path) {
                Ok(b) => b,
                // Deleted by another process since the directory was read.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_err(&path)(e)),
            };
            match parse_task(&path, &bytes) {
                Ok(task) => listing.tasks.push(task),
                Err(e) => listing.unreadable.push(e),
            }
        }
        listing
            .tasks
            .sort_by_key(|t| t.id.parse::<u64>().unwrap_or(u64::MAX));
        listing.unreadable.sort_by_key(|e| e.to_string());
        Ok(listing)
    }

    fn write_task(&self, task: &Task) -> Result<(), TaskStoreError> {
        let path = self.task_path(&task.id);
        let mut bytes = serde_json::to_vec_pretty(task).map_err(|e| TaskStoreError::Io {
            path: path.clone(),
            source: io::Error::other(e),
        })?;
        bytes.push(b'\n');
        fsutil::atomic_write(&path, &bytes).map_err(io_err(&path))
    }

    /// The largest id ever handed out. A damaged counter (no number, not UTF-8; no regular
    /// file: a directory, FIFO, device or socket, a link that leads nowhere or in a loop,
    /// none of them opened) is rebuilt from the task files present, the highest id among
    /// them, and put in its place ([`replace_counter`]: a new file renamed over the name,
    /// never written through a link); only when that fails too is it an error, which names
    /// the file as the id counter. An id deleted since its file was the highest may then be
    /// handed out again: nothing else remembers it. A counter that is there but cannot be
    /// read (an I/O error: no read permission, a failing disk, no descriptor left) is not
    /// rebuilt, which could lower it for a failure that passes: it is an error naming the
    /// counter, and the file is left as it is.
    fn high_water_mark(&self) -> Result<u64, TaskStoreError> {
        let path = self.dir.join(HIGH_WATER_MARK);
        let damage = match read_counter(&path) {
            Ok(Ok(n)) => return Ok(n),
            Ok(Err(damage)) => damage,
            Err(e) => {
                return Err(TaskStoreError::Counter {
                    reason: format!(
                        "cannot be read ({e}); it is left as it is, since rebuilt from the task \
                         files it could hand out a deleted task's id again. Make it readable, \
                         or remove it to have the next id follow the highest task file"
                    ),
                    path,
                });
            }
        };
        let highest = self.ids()?.into_iter().max().unwrap_or(0);
        replace_counter(&path, highest).map_err(|e| TaskStoreError::Counter {
            path: path.clone(),
            reason: format!(
                "is damaged ({damage}) and could not be rebuilt from the task files ({e}); \
                 remove it, and the next id follows the highest task file"
            ),
        })?;
        tracing::warn!(
            file = %path.display(),
            "the task id counter was damaged ({damage}); rebuilt from the task files: {highest}"
        );
        Ok(highest)
    }

    /// Sets the counter to `n`, replacing whatever has its name ([`replace_counter`]).
    fn set_high_water_mark(&self, n: u64) -> Result<(), TaskStoreError> {
        let path = self.dir.join(HIGH_WATER_MARK);
        replace_counter(&path, n).map_err(io_err(&path))
    }
}

#[cfg(test)]
thread_local! {
    /// The directories [`sync_dir`] synced on this thread, in order: what the tests see of
    /// a sync that leaves no other trace.
    static SYNCED_DIRS: std::cell::RefCell<Vec<PathBuf>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Puts `n` in the id counter `path` as a regular file of its own: written to a new file
/// beside it (named as every atomic write's temporary file, so that one a killed writer
/// left is cleared by the next write in the directory), synced, then renamed over the
/// name, and the directory synced so that the rename survives a crash. Whatever had the
/// name is replaced, never opened nor written through: a link stays
/// where it led, its target untouched (a dangling link's target is not created), and a
/// FIFO is not waited on. A directory in its place is not replaced: the rename fails.
fn replace_counter(path: &Path, n: u64) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    // Created new: never opened through a link at that name.
    let mut temp = tool_core::temp_file::TempFile::create(dir, name, 0o666)?;
    temp.write_synced(format!("{n}\n").as_bytes())?;
    temp.rename_to(path)?;
    // The rename itself made durable: else, after a crash, the counter could go back and a
    // deleted task's id be given again.
    sync_dir(dir);
    Ok(())
}

/// Syncs the directory `dir`, making a rename in it durable, as every atomic write does.
/// Not every platform or file system can sync a directory: a failure is let go (the
/// rename stands; only its durability across a crash is not promised).
fn sync_dir(dir: &Path) {
    if tool_core::temp_file::sync_dir(dir).is_ok() {
        #[cfg(test)]
        SYNCED_DIRS.with(|d| d.borrow_mut().push(dir.to_path_buf()));
    }
}

/// The number in the id counter `path`, 0 when there is none; `Ok(Err(_))` with what is
/// wrong with it when it is damaged (no number, not UTF-8; no regular file, a link that
/// leads nowhere or in a loop), and `Err` when it could not be read (an I/O error, which
/// may pass: it says nothing of what the file holds). Only a regular file is read (through
/// a link, if one leads to it), opened without blocking, and only its first bytes: a FIFO
/// or a device is never opened, and a huge file in its place is damage, not a hang.
fn read_counter(path: &Path) -> io::Result<Result<u64, String>> {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    const NOT_REGULAR: &str = "it is not a regular file (a directory, FIFO, device or socket)";
    match fs::metadata(path) {
        Ok(meta) if !meta.is_file() => return Ok(Err(NOT_REGULAR.to_owned())),
        Ok(_) => {}
        // A link that leads nowhere is there, and damaged; no link, and there is none.
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(match fs::symlink_metadata(path) {
                Ok(_) => Err("it is a link to a file that does not exist".to_owned()),
                Err(_) => Ok(0),
            });
        }
        Err(e) if e.raw_os_error() == Some(nix::libc::ELOOP) => {
            return Ok(Err("it is a link that leads back to itself".to_owned()));
        }
        Err(e) => return Err(e),
    }
    let file = match fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK)
        .open(path)
    {
        Ok(file) => file,
        // Removed since it was looked at.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Ok(0)),
        Err(e) => return Err(e),
    };
    // Swapped for something else since it was looked at.
    if !file.metadata()?.is_file() {
        return Ok(Err(NOT_REGULAR.to_owned()));
    }
    let mut bytes = Vec::new();
    file.take(64).read_to_end(&mut bytes)?;
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Ok(Err("it is not text".to_owned()));
    };
    Ok(text.trim().parse::<u64>().map_err(|_| {
        let shown: String = text.trim().chars().take(20).collect();
        format!("it holds {shown:?}, not a number")
    }))
}

/// Why no task can be created when the counter holds `mark` and the highest task file is
/// `highest_file` (0: none), one of them at the largest id, and what to do about it.
fn out_of_ids(mark: u64, highest_file: u64) -> String {
    let over = "the next task id would be over 18 digits";
    match highest_file
        .checked_add(1)
        .filter(|n| valid_id(&n.to_string()))
    {
        // The counter alone is at the end: without it, ids go on from the task files.
        Some(next) if mark > highest_file => {
            let after = if highest_file == 0 {
                "there is none".to_owned()
            } else {
                format!("after {highest_file}.json")
            };
            format!(
                "holds {mark}, and {over}: no task can be created. Remove it, and the next id \
                 follows the highest task file: {next} ({after}; the ids of tasks deleted \
                 since may be handed out again)"
            )
        }
        _ => format!(
            "cannot go on: {over}, task file {highest_file}.json having the largest id there \
             is. Give that task a smaller id (rename its file), and remove the counter"
        ),
    }
}

/// The task in `path`, its id the file's name: a file copied or renamed by hand (`cp 3.json
/// 8.json`) is task 8, so that updating or deleting 8 never touches `3.json`.
fn parse_task(path: &Path, bytes: &[u8]) -> Result<Task, TaskStoreError> {
    let mut task = serde_json::from_slice::<Task>(bytes).map_err(|e| TaskStoreError::Corrupt {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    if let Some(stem) = path.file_stem().and_then(|s| s.to_str())
        && task.id != stem
    {
        stem.clone_into(&mut task.id);
    }
    Ok(task)
}

fn push_unique(list: &mut Vec<String>, id: &str) -> bool {
    if list.iter().any(|x| x == id) {
        false
    } else {
        list.push(id.to_owned());
        true
    }
}

/// What [`TaskListStore::list`] found.
#[derive(Debug, Default)]
pub struct TaskListing {
    /// The tasks, by numeric id.
    pub tasks: Vec<Task>,
    /// One [`TaskStoreError::Corrupt`] per task file that is not a valid task; those files are
    /// left untouched, and their ids are never reused.
    pub unreadable: Vec<TaskStoreError>,
}

impl TaskListStore {
    /// A store whose lists live under `root` (the `tasks` directory).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// Claude Code's location: `$CLAUDE_CONFIG_DIR/tasks`, else `$HOME/.claude/tasks`;
    /// `None` when neither variable is set.
    pub fn from_env() -> Option<Self> {
        let config = std::env::var_os("CLAUDE_CONFIG_DIR")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|h| !h.is_empty())
                    .map(|h| PathBuf::from(h).join(".claude"))
            })?;
        Some(Self::new(config.join("tasks")))
    }

    /// The `tasks` directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory of the list `list_id` (see [`sanitize_list_id`]).
    pub fn list_dir(&self, list_id: &str) -> PathBuf {
        self.root.join(sanitize_list_id(list_id))
    }

    /// Creates the list's directory if needed and takes its lock (blocking until free). A
    /// directory it creates (the list's, and `tasks` and above when missing) is the owner's
    /// alone (0700: a umask can only take bits away, never give others any): tasks' subjects and descriptions are the model's
    /// words and may hold anything. An existing directory keeps its mode.
    fn lock(&self, list_id: &str) -> Result<LockedList, TaskStoreError> {
        let dir = self.list_dir(list_id);
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir).map_err(io_err(&dir))?;
        let lock_path = dir.join(LOCK_FILE);
        let lock = crate::fsutil::lock_exclusive(&lock_path).map_err(io_err(&lock_path))?;
        Ok(LockedList { dir, _lock: lock })
    }

    /// Adds a task with the next id.
    pub fn create(&self, list_id: &str, new: NewTask) -> Result<Task, TaskStoreError> {
        let list = self.lock(list_id)?;
        let existing_max = list.ids()?.into_iter().max().unwrap_or(0);
        let mark = list.high_water_mark()?;
        let next = mark
            .max(existing_max)
            .checked_add(1)
            .filter(|n| valid_id(&n.to_string()))
            .ok_or_else(|| TaskStoreError::Counter {
                path: list.dir.join(HIGH_WATER_MARK),
                reason: out_of_ids(mark, existing_max),
            })?;
        let mut metadata = new.metadata;
        metadata.retain(|_, v| !v.is_null());
        let task = Task {
            id: next.to_string(),
            subject: new.subject,
            description: new.description,
            active_form: new.active_form.filter(|a| !a.is_empty()),
            owner: None,
            status: TaskStatus::Pending,
            blocks: Vec::new(),
            blocked_by: Vec::new(),
            metadata,
            other: Map::new(),
        };
        // The counter first: a task file is never left without its id counted (a failure
        // after it would leave a task the call reports as not created, and a retry would
        // make it twice). A task file that cannot be written then leaves only an id unused.
        let not_created = |e: TaskStoreError| TaskStoreError::NotCreated(Box::new(e));
        list.set_high_water_mark(next).map_err(not_created)?;
        list.write_task(&task).map_err(not_created)?;
        Ok(task)
    }

    /// The task `id`.
    pub fn get(&self, list_id: &str, id: &str) -> Result<Task, TaskStoreError> {
        self.lock(list_id)?.require(id)
    }

    /// Every task of the list, by id, and the files that are not valid tasks.
    pub fn list(&self, list_id: &str) -> Result<TaskListing, TaskStoreError> {
        self.lock(list_id)?.all()
    }

    /// Applies `patch` to task `id`, keeping blockers symmetric; see the module docs.
    pub fn update(
        &self,
        list_id: &str,
        id: &str,
        patch: TaskPatch,
    ) -> Result<TaskUpdateOutcome, TaskStoreError> {
        self.apply(list_id, id, patch, true, None)
            .map(|(_, outcome)| outcome)
    }

    /// [`update`](Self::update), only while task `id` is still `seen` (what a
    /// [`preview_update`](Self::preview_update) returned), checked under the same lock as
    /// the write: else [`TaskStoreError::ChangedMeanwhile`], nothing written. For an update
    /// decided on a look at the task (TaskUpdate's TaskCompleted hooks).
    pub fn update_if_unchanged(
        &self,
        list_id: &str,
        id: &str,
        patch: TaskPatch,
        seen: &Task,
    ) -> Result<TaskUpdateOutcome, TaskStoreError> {
        self.apply(list_id, id, patch, true, Some(seen))
            .map(|(_, outcome)| outcome)
    }

    /// What [`update`](Self::update) would do with `patch` now, writing nothing: task `id`
    /// as it is, and the outcome (the same checks, so an update that would fail fails
    /// here too). TaskUpdate looks first, so that its TaskCompleted hooks run only for an
    /// update that would complete the task, and before anything is written.
    pub fn preview_update(
        &self,
        list_id: &str,
        id: &str,
        patch: TaskPatch,
    ) -> Result<(Task, TaskUpdateOutcome), TaskStoreError> {
        self.apply(list_id, id, patch, false, None)
    }

    /// [`update`](Self::update) (`write`), or its preview: the task before, and the outcome.
    fn apply(
        &self,
        list_id: &str,
        id: &str,
        patch: TaskPatch,
        write: bool,
        seen: Option<&Task>,
    ) -> Result<(Task, TaskUpdateOutcome), TaskStoreError> {
        let list = self.lock(list_id)?;
        let mut task = list.require(id)?;
        if seen.is_some_and(|seen| *seen != task) {
            return Err(TaskStoreError::ChangedMeanwhile { id: task.id });
        }
        let before = task.clone();

        if patch.status == Some(TaskUpdateStatus::Deleted) {
            let deleted = TaskUpdateOutcome {
                task: None,
                updated_fields: vec!["deleted".to_owned()],
                status_change: None,
            };
            if !write {
                return Ok((before, deleted));
            }
            let mut changed = Vec::new();
            for mut other in list.all()?.tasks {
                if other.id == task.id {
                    continue;
                }
                let before = other.blocks.len() + other.blocked_by.len();
                other.blocks.retain(|x| *x != task.id);
                other.blocked_by.retain(|x| *x != task.id);
                if other.blocks.len() + other.blocked_by.len() != before {
                    changed.push(other);
                }
            }
            let n = task.id.parse::<u64>().unwrap_or(0);
            if list.high_water_mark()? < n {
                list.set_high_water_mark(n)?;
            }
            let path = list.task_path(&task.id);
            fs::remove_file(&path).map_err(io_err(&path))?;
            for other in &changed {
                list.write_task(other)?;
            }
            return Ok((before, deleted));
        }

        let mut fields: Vec<String> = Vec::new();
        let mut mark = |name: &str| {
            if !fields.iter().any(|f| f == name) {
                fields.push(name.to_owned());
            }
        };
        if let Some(subject) = patch.subject
            && subject != task.subject
        {
            task.subject = subject;
            mark("subject");
        }
        if let Some(description) = patch.description
            && description != task.description
        {
            task.description = description;
            mark("description");
        }
        if let Some(active) = patch.active_form {
            let active = Some(active).filter(|a| !a.is_empty());
            if active != task.active_form {
                task.active_form = active;
                mark("activeForm");
            }
        }
        if let Some(owner) = patch.owner {
            let owner = Some(owner).filter(|o| !o.is_empty());
            if owner != task.owner {
                task.owner = owner;
                mark("owner");
            }
        }
        let mut status_change = None;
        let new_status = match patch.status {
            Some(TaskUpdateStatus::Pending) => Some(TaskStatus::Pending),
            Some(TaskUpdateStatus::InProgress) => Some(TaskStatus::InProgress),
            Some(TaskUpdateStatus::Completed) => Some(TaskStatus::Completed),
            Some(TaskUpdateStatus::Deleted) | None => None,
        };
        if let Some(status) = new_status
            && status != task.status
        {
            status_change = Some((task.status, status));
            task.status = status;
            mark("status");
        }
        if let Some(meta) = patch.metadata {
            for (key, value) in meta {
                if value.is_null() {
                    if task.metadata.remove(&key).is_some() {
                        mark("metadata");
                    }
                } else if task.metadata.get(&key) != Some(&value) {
                    task.metadata.insert(key, value);
                    mark("metadata");
                }
            }
        }

        // Blockers: check every id first, so a bad one changes nothing.
        let mut others: BTreeMap<String, Task> = BTreeMap::new();
        for (field, ids) in [
            ("addBlocks", &patch.add_blocks),
            ("addBlockedBy", &patch.add_blocked_by),
        ] {
            for other_id in ids {
                if *other_id == task.id {
                    return Err(TaskStoreError::SelfBlock {
                        id: task.id.clone(),
                    });
                }
                if others.contains_key(other_id) {
                    continue;
                }
                let other =
                    list.read_task(other_id)?
                        .ok_or_else(|| TaskStoreError::UnknownBlocker {
                            field,
                            id: other_id.clone(),
                        })?;
                others.insert(other_id.clone(), other);
            }
        }
        let mut touched: Vec<String> = Vec::new();
        for other_id in &patch.add_blocks {
            if let Some(other) = others.get_mut(other_id) {
                let a = push_unique(&mut task.blocks, other_id);
                let b = push_unique(&mut other.blocked_by, &task.id);
                if a || b {
                    mark("blocks");
                    touched.push(other_id.clone());
                }
            }
        }
        for other_id in &patch.add_blocked_by {
            if let Some(other) = others.get_mut(other_id) {
                let a = push_unique(&mut task.blocked_by, other_id);
                let b = push_unique(&mut other.blocks, &task.id);
                if a || b {
                    mark("blockedBy");
                    touched.push(other_id.clone());
                }
            }
        }

        if !touched.is_empty()
            && let Some(cycle) = blocking_cycle(&list, &task, &others)?
        {
            return Err(TaskStoreError::BlockCycle {
                id: task.id.clone(),
                cycle,
            });
        }
        if write {
            if !fields.is_empty() {
                list.write_task(&task)?;
            }
            for other_id in touched {
                if let Some(other) = others.get(&other_id) {
                    list.write_task(other)?;
                }
            }
        }
        Ok((
            before,
            TaskUpdateOutcome {
                task: Some(task),
                updated_fields: fields,
                status_change,
            },
        ))
    }
}

/// A loop of blocking links through `task` once its new links are in (`task` and `others`
/// as they are about to be written; every other task as it is on disk): the ids from `task`
/// along `blocks` back to it, or `None`. Tasks that cannot be read are passed over.
fn blocking_cycle(
    list: &LockedList,
    task: &Task,
    others: &BTreeMap<String, Task>,
) -> Result<Option<Vec<String>>, TaskStoreError> {
    // Breadth-first from `task`, remembering where each id was reached from.
    let mut came_from: BTreeMap<String, String> = BTreeMap::new();
    let mut queue: std::collections::VecDeque<String> = task.blocks.iter().cloned().collect();
    for id in &task.blocks {
        came_from.insert(id.clone(), task.id.clone());
    }
    while let Some(id) = queue.pop_front() {
        if id == task.id {
            let mut cycle = vec![task.id.clone()];
            let mut at = came_from.get(&task.id).cloned();
            while let Some(prev) = at.filter(|p| *p != task.id) {
                cycle.push(prev.clone());
                at = came_from.get(&prev).cloned();
            }
            cycle.push(task.id.clone());
            cycle.reverse();
            return Ok(Some(cycle));
        }
        let blocks = match others.get(&id) {
            Some(other) => other.blocks.clone(),
            None => match list.read_task(&id) {
                Ok(Some(other)) => other.blocks,
                Ok(None) | Err(TaskStoreError::Corrupt { .. }) => continue,
                Err(e) => return Err(e),
            },
        };
        for next in blocks {
            if !came_from.contains_key(&next) {
                came_from.insert(next.clone(), id.clone());
                queue.push_back(next);
            }
        }
    }
    Ok(None)
}

/// The app-state slot holding the host's store.
#[derive(Debug, Default)]
struct TaskListSlot(Option<TaskListStore>);

/// Makes `store` the task-list store of every context sharing `app_state`.
pub fn install_task_list_store(app_state: &AppState, store: TaskListStore) {
    app_state.update::<TaskListSlot, _>(|slot| slot.0 = Some(store));
}

/// The context's store: the installed one, else [`TaskListStore::from_env`].
pub fn task_list_store(ctx: &ToolUseContext) -> Result<TaskListStore, TaskStoreError> {
    ctx.app_state()
        .update::<TaskListSlot, _>(|slot| slot.0.clone())
        .or_else(TaskListStore::from_env)
        .ok_or(TaskStoreError::NoDirectory)
}

/// The id of the context's task list: `CLAUDE_CODE_TASK_LIST_ID` when it is set (not
/// blank), as in Claude Code, so that several sessions (processes) share one list, else the
/// session id (shared by its sub-agents). The list's directory is the id made safe as a
/// file name ([`sanitize_list_id`]).
pub fn task_list_id(ctx: &ToolUseContext) -> String {
    shared_list_id(std::env::var("CLAUDE_CODE_TASK_LIST_ID").ok())
        .unwrap_or_else(|| ctx.session_id().to_owned())
}

/// The list id `CLAUDE_CODE_TASK_LIST_ID`'s value names: its trimmed text, none when blank.
fn shared_list_id(value: Option<String>) -> Option<String> {
    value.map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
}

/// Runs `f` on the context's store and list id off the async runtime.
async fn with_store<R, F>(ctx: &ToolUseContext, f: F) -> Result<R, ToolError>
where
    R: Send + 'static,
    F: FnOnce(&TaskListStore, &str) -> Result<R, TaskStoreError> + Send + 'static,
{
    let store = task_list_store(ctx)?;
    let list_id = task_list_id(ctx);
    fsutil::blocking(move || f(&store, &list_id).map_err(ToolError::from)).await
}

/// The hook event TaskCreate raises for the task it creates.
pub const TASK_CREATED: &str = "TaskCreated";
/// The hook event TaskUpdate raises for a task it is about to mark completed.
pub const TASK_COMPLETED: &str = "TaskCompleted";

/// The input fields of TaskCreated and TaskCompleted hooks for `task` (Claude Code's; its
/// `teammate_name` and `team_name` belong to agent teams, which Toolwright does not have).
fn task_hook_fields(task: &Task) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("task_id".into(), Value::String(task.id.clone()));
    fields.insert("task_subject".into(), Value::String(task.subject.clone()));
    fields.insert(
        "task_description".into(),
        Value::String(task.description.clone()),
    );
    fields
}

/// The error the model gets when `event`'s hooks block: each hook's text after
/// `EVENT hook feedback:`, as Claude Code words it.
fn hook_feedback(event: &str, blocking: &[String]) -> String {
    blocking
        .iter()
        .map(|text| format!("{event} hook feedback:\n{text}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn non_blank(field: &str, value: &str) -> Result<(), ValidationError> {
    if value.trim().is_empty() {
        Err(ValidationError::new(format!("{field} must not be empty")))
    } else {
        Ok(())
    }
}

// ----- TaskCreate -----

/// Input of TaskCreate.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskCreateInput {
    /// A brief title for the task, in imperative form (e.g. "Run the tests")
    pub subject: String,
    /// A detailed description of what needs to be done
    pub description: String,
    /// Present continuous form shown while the task is in progress (e.g. "Running the tests")
    #[serde(rename = "activeForm", default)]
    pub active_form: Option<String>,
    /// Arbitrary metadata to attach to the task
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// The id and subject of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRef {
    /// The id.
    pub id: String,
    /// The subject.
    pub subject: String,
}

/// Output of TaskCreate (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskCreateOutput {
    /// The new task.
    pub task: TaskRef,
}

/// The TaskCreate tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskCreate;

const CREATE_PROMPT: &str = "Use this tool to create a task in the session's task list. Tasks track progress on multi-step work (3 or more distinct steps), work the user gave as a list, and follow-ups discovered along the way; skip it for a single trivial step.

- subject: a brief imperative title (\"Fix the login redirect\")
- description: what needs to be done, with enough context for another agent to pick it up
- activeForm: the present continuous form shown while the task runs (\"Fixing the login redirect\")
- metadata: optional free-form data

A new task is `pending` with no owner. Use TaskUpdate to start it, complete it, assign it or set dependencies, and TaskList to see what is left.";

#[async_trait]
impl TypedTool for TaskCreate {
    type Input = TaskCreateInput;
    type Output = TaskCreateOutput;
    const NAME: &'static str = "TaskCreate";

    fn description(&self) -> Cow<'_, str> {
        "Create a new task in the task list".into()
    }
    fn prompt(&self) -> Cow<'_, str> {
        CREATE_PROMPT.into()
    }
    fn search_hint(&self) -> Option<&str> {
        Some("create a task in the task list")
    }
    fn should_defer(&self) -> bool {
        true
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    /// Not concurrency-safe (Claude Code says it is): the calls of one response must act
    /// in the order the model wrote them. Run side by side, `[TaskCreate, TaskUpdate "1",
    /// TaskList]` would update a task not created yet and list none, and the ids of several
    /// TaskCreates would not follow their blocks. Run alone, each finishes before the next
    /// call starts, and a TaskList or TaskGet after it sees what it did.
    fn is_concurrency_safe(&self, _input: &TaskCreateInput) -> bool {
        false
    }
    async fn validate_input(
        &self,
        input: &TaskCreateInput,
        _ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        non_blank("subject", &input.subject)
    }
    /// Touches only the session's own state: allowed, as Claude Code's default
    /// `checkPermissions` allows (deny and ask rules still apply first).
    async fn check_permissions(
        &self,
        _input: &TaskCreateInput,
        _ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        tool_core::PermissionResult::allow()
    }
    async fn call(
        &self,
        input: TaskCreateInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<TaskCreateOutput>, ToolError> {
        let new = NewTask {
            subject: input.subject,
            description: input.description,
            active_form: input.active_form,
            metadata: input.metadata.unwrap_or_default(),
        };
        let task = with_store(&ctx, move |store, list| store.create(list, new)).await?;
        // Claude Code's order: the task is created, its TaskCreated hooks run (they may
        // look at its file), and a hook that blocks has it deleted again; its id is not
        // handed out again.
        let hooks = ctx
            .run_hook_event(TASK_CREATED, task_hook_fields(&task))
            .await;
        if hooks.is_blocked() || hooks.cancelled {
            let id = task.id.clone();
            let removed = with_store(&ctx, move |store, list| {
                store.update(
                    list,
                    &id,
                    TaskPatch {
                        status: Some(TaskUpdateStatus::Deleted),
                        ..TaskPatch::default()
                    },
                )
            })
            .await;
            let not_removed = removed.err().map(|e| {
                format!(
                    "\nTask #{} was created before its hooks ran and could not be removed \
                     again ({e}); delete it with TaskUpdate status \"deleted\"",
                    task.id
                )
            });
            if !hooks.is_blocked() {
                return Err(ToolError::Cancelled(not_removed.map(|note| {
                    format!("{}{note}", tool_core::INTERRUPT_MESSAGE_FOR_TOOL_USE)
                })));
            }
            return Err(ToolError::msg(
                hook_feedback(TASK_CREATED, &hooks.blocking) + &not_removed.unwrap_or_default(),
            ));
        }
        let mut result = ToolResult::new(TaskCreateOutput {
            task: TaskRef {
                id: task.id,
                subject: task.subject,
            },
        });
        result.new_messages = hooks.messages;
        Ok(result)
    }
    fn to_content(&self, output: &TaskCreateOutput) -> ToolResultContent {
        ToolResultContent::Text(format!(
            "Task #{} created successfully: {}",
            output.task.id, output.task.subject
        ))
    }
}

// ----- TaskGet -----

/// Input of TaskGet.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskGetInput {
    /// The ID of the task to retrieve
    #[serde(rename = "taskId")]
    pub task_id: String,
}

/// Output of TaskGet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskGetOutput {
    /// The task.
    pub task: Task,
}

/// The TaskGet tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskGet;

const GET_PROMPT: &str = "Use this tool to read one task of the task list by its id: its subject, full description, status, owner, the tasks blocking it (blockedBy) and the tasks it blocks. Read a task before starting work on it, and check that its blockers are completed.";

fn ids(list: &[String]) -> String {
    list.iter()
        .map(|id| format!("#{id}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[async_trait]
impl TypedTool for TaskGet {
    type Input = TaskGetInput;
    type Output = TaskGetOutput;
    const NAME: &'static str = "TaskGet";

    fn description(&self) -> Cow<'_, str> {
        "Get a task by ID from the task list".into()
    }
    fn prompt(&self) -> Cow<'_, str> {
        GET_PROMPT.into()
    }
    fn search_hint(&self) -> Option<&str> {
        Some("read one task of the task list")
    }
    fn should_defer(&self) -> bool {
        true
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn is_concurrency_safe(&self, _input: &TaskGetInput) -> bool {
        true
    }
    fn is_read_only(&self, _input: &TaskGetInput) -> bool {
        true
    }
    /// Touches only the session's own state: allowed, as Claude Code's default
    /// `checkPermissions` allows (deny and ask rules still apply first).
    async fn check_permissions(
        &self,
        _input: &TaskGetInput,
        _ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        tool_core::PermissionResult::allow()
    }
    async fn call(
        &self,
        input: TaskGetInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<TaskGetOutput>, ToolError> {
        let id = input.task_id;
        let task = with_store(&ctx, move |store, list| store.get(list, &id)).await?;
        Ok(ToolResult::new(TaskGetOutput { task }))
    }
    fn to_content(&self, output: &TaskGetOutput) -> ToolResultContent {
        let t = &output.task;
        let mut text = format!(
            "Task #{}: {}\nStatus: {}\nDescription: {}",
            t.id,
            t.subject,
            t.status.as_str(),
            t.description
        );
        if let Some(owner) = &t.owner {
            text.push_str(&format!("\nOwner: {owner}"));
        }
        if !t.blocked_by.is_empty() {
            text.push_str(&format!("\nBlocked by: {}", ids(&t.blocked_by)));
        }
        if !t.blocks.is_empty() {
            text.push_str(&format!("\nBlocks: {}", ids(&t.blocks)));
        }
        if !t.metadata.is_empty() {
            text.push_str(&format!(
                "\nMetadata: {}",
                Value::Object(t.metadata.clone())
            ));
        }
        ToolResultContent::Text(text)
    }
}

// ----- TaskUpdate -----

/// Input of TaskUpdate.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskUpdateInput {
    /// The ID of the task to update
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// New subject for the task
    #[serde(default)]
    pub subject: Option<String>,
    /// New description for the task
    #[serde(default)]
    pub description: Option<String>,
    /// Present continuous form shown while the task is in progress (e.g. "Running the tests")
    #[serde(rename = "activeForm", default)]
    pub active_form: Option<String>,
    /// New status for the task: pending, in_progress, completed, or deleted to remove it
    #[serde(default)]
    pub status: Option<TaskUpdateStatus>,
    /// Task IDs that cannot start until this one is completed
    #[serde(rename = "addBlocks", default)]
    pub add_blocks: Option<Vec<String>>,
    /// Task IDs that must be completed before this one can start
    #[serde(rename = "addBlockedBy", default)]
    pub add_blocked_by: Option<Vec<String>>,
    /// New owner for the task (an agent name); an empty string clears it
    #[serde(default)]
    pub owner: Option<String>,
    /// Metadata keys to merge into the task; set a key to null to delete it
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// A status change, as `{from, to}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StatusChange {
    /// The status before.
    pub from: TaskStatus,
    /// The status after.
    pub to: TaskStatus,
}

/// Output of TaskUpdate (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskUpdateOutput {
    /// Always true for a result (failures are errors).
    pub success: bool,
    /// The task's id.
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// The fields that changed; `["deleted"]` after a deletion.
    #[serde(rename = "updatedFields")]
    pub updated_fields: Vec<String>,
    /// The status change, if any.
    #[serde(rename = "statusChange", skip_serializing_if = "Option::is_none")]
    pub status_change: Option<StatusChange>,
}

/// The TaskUpdate tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskUpdate;

const UPDATE_PROMPT: &str = "Use this tool to change a task in the task list.

- Mark a task in_progress when you start it and completed as soon as it is fully done (not when tests fail or work is partial); status `deleted` removes a task that is no longer relevant.
- Set owner to assign a task to an agent (an empty string clears it).
- addBlocks / addBlockedBy record dependencies by task id; both tasks are updated.
- metadata merges keys into the task's metadata; a key set to null is removed.
- Only the fields you give change. Read the task with TaskGet first if it may have changed.";

#[async_trait]
impl TypedTool for TaskUpdate {
    type Input = TaskUpdateInput;
    type Output = TaskUpdateOutput;
    const NAME: &'static str = "TaskUpdate";

    fn description(&self) -> Cow<'_, str> {
        "Update a task in the task list".into()
    }
    fn prompt(&self) -> Cow<'_, str> {
        UPDATE_PROMPT.into()
    }
    fn search_hint(&self) -> Option<&str> {
        Some("update, complete or delete a task")
    }
    fn should_defer(&self) -> bool {
        true
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    /// Not concurrency-safe (Claude Code says it is), as [`TaskCreate`]: a TaskUpdate acts
    /// after the calls written before it (a task created in the same response exists) and
    /// before those written after it (a TaskList or TaskGet sees the change).
    fn is_concurrency_safe(&self, _input: &TaskUpdateInput) -> bool {
        false
    }
    async fn validate_input(
        &self,
        input: &TaskUpdateInput,
        _ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        if let Some(subject) = &input.subject {
            non_blank("subject", subject)?;
        }
        Ok(())
    }
    /// Touches only the session's own state: allowed, as Claude Code's default
    /// `checkPermissions` allows (deny and ask rules still apply first).
    async fn check_permissions(
        &self,
        _input: &TaskUpdateInput,
        _ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        tool_core::PermissionResult::allow()
    }
    async fn call(
        &self,
        input: TaskUpdateInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<TaskUpdateOutput>, ToolError> {
        let id = input.task_id;
        let patch = TaskPatch {
            subject: input.subject,
            description: input.description,
            active_form: input.active_form,
            status: input.status,
            add_blocks: input.add_blocks.unwrap_or_default(),
            add_blocked_by: input.add_blocked_by.unwrap_or_default(),
            owner: input.owner,
            metadata: input.metadata,
        };
        let task_id = id.clone();
        // An update that completes the task runs the TaskCompleted hooks first, with the
        // task as it is (Claude Code's), and only after they let it through writes
        // anything: a hook that blocks leaves the task as it was, every field of it. The
        // list is not locked while they run (a hook may read it); the update then goes
        // ahead only while the task is still the one they judged (else the call fails,
        // nothing written), and an update that looked like no completion completes nothing.
        let mut hook_messages = Vec::new();
        let mut seen = None;
        if patch.status == Some(TaskUpdateStatus::Completed) && ctx.hook_events().is_some() {
            let (look_id, look_patch) = (id.clone(), patch.clone());
            let (before, preview) = with_store(&ctx, move |store, list| {
                store.preview_update(list, &look_id, look_patch)
            })
            .await?;
            seen = Some(before.clone());
            if matches!(preview.status_change, Some((_, TaskStatus::Completed))) {
                let hooks = ctx
                    .run_hook_event(TASK_COMPLETED, task_hook_fields(&before))
                    .await;
                if hooks.is_blocked() {
                    return Err(ToolError::msg(hook_feedback(
                        TASK_COMPLETED,
                        &hooks.blocking,
                    )));
                }
                if hooks.cancelled {
                    return Err(ToolError::Cancelled(None));
                }
                hook_messages = hooks.messages;
            }
        }
        let outcome = with_store(&ctx, move |store, list| match &seen {
            Some(seen) => store.update_if_unchanged(list, &id, patch, seen),
            None => store.update(list, &id, patch),
        })
        .await?;
        let mut result = ToolResult::new(TaskUpdateOutput {
            success: true,
            task_id,
            updated_fields: outcome.updated_fields,
            status_change: outcome
                .status_change
                .map(|(from, to)| StatusChange { from, to }),
        });
        result.new_messages = hook_messages;
        Ok(result)
    }
    fn to_content(&self, output: &TaskUpdateOutput) -> ToolResultContent {
        let id = &output.task_id;
        let text = if output.updated_fields.iter().any(|f| f == "deleted") {
            format!("Task #{id} deleted")
        } else if output.updated_fields.is_empty() {
            format!("Task #{id} unchanged (no field was given a new value)")
        } else {
            format!("Updated task #{id} {}", output.updated_fields.join(", "))
        };
        ToolResultContent::Text(text)
    }
}

// ----- TaskList -----

/// Input of TaskList (no fields).
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskListInput {}

/// One line of TaskList.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSummary {
    /// The id.
    pub id: String,
    /// The subject.
    pub subject: String,
    /// The state.
    pub status: TaskStatus,
    /// The owner, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Blockers that are not completed yet.
    #[serde(rename = "blockedBy")]
    pub blocked_by: Vec<String>,
}

/// Output of TaskList (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskListOutput {
    /// The tasks, by id.
    pub tasks: Vec<TaskSummary>,
    /// One line per task file that is not a valid task (left untouched), saying which and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<String>,
}

/// The TaskList tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskList;

const LIST_PROMPT: &str = "Use this tool to list every task of the task list with its id, status, owner and open blockers. Use it to find the next task to work on (pending, no owner, not blocked; lowest id first), to check overall progress, and after completing a task.";

#[async_trait]
impl TypedTool for TaskList {
    type Input = TaskListInput;
    type Output = TaskListOutput;
    const NAME: &'static str = "TaskList";

    fn description(&self) -> Cow<'_, str> {
        "List all tasks in the task list".into()
    }
    fn prompt(&self) -> Cow<'_, str> {
        LIST_PROMPT.into()
    }
    fn search_hint(&self) -> Option<&str> {
        Some("list all tasks")
    }
    fn should_defer(&self) -> bool {
        true
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }
    fn is_concurrency_safe(&self, _input: &TaskListInput) -> bool {
        true
    }
    fn is_read_only(&self, _input: &TaskListInput) -> bool {
        true
    }
    /// Touches only the session's own state: allowed, as Claude Code's default
    /// `checkPermissions` allows (deny and ask rules still apply first).
    async fn check_permissions(
        &self,
        _input: &TaskListInput,
        _ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        tool_core::PermissionResult::allow()
    }
    async fn call(
        &self,
        _input: TaskListInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<TaskListOutput>, ToolError> {
        let TaskListing { tasks, unreadable } =
            with_store(&ctx, |store, list| store.list(list)).await?;
        let unreadable = unreadable.iter().map(ToString::to_string).collect();
        let completed: Vec<String> = tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Completed)
            .map(|t| t.id.clone())
            .collect();
        let tasks = tasks
            .into_iter()
            .filter(|t| !t.is_internal())
            .map(|t| TaskSummary {
                blocked_by: t
                    .blocked_by
                    .into_iter()
                    .filter(|b| !completed.contains(b))
                    .collect(),
                id: t.id,
                subject: t.subject,
                status: t.status,
                owner: t.owner,
            })
            .collect();
        Ok(ToolResult::new(TaskListOutput { tasks, unreadable }))
    }
    fn to_content(&self, output: &TaskListOutput) -> ToolResultContent {
        let mut lines: Vec<String> = output
            .tasks
            .iter()
            .map(|t| {
                let mut line = format!("#{} [{}] {}", t.id, t.status.as_str(), t.subject);
                // Claude Code's line: `#<id> [<status>] <subject> (<owner>)<blocked>`.
                if let Some(owner) = t.owner.as_deref().filter(|o| !o.is_empty()) {
                    line.push_str(&format!(" ({owner})"));
                }
                if !t.blocked_by.is_empty() {
                    line.push_str(&format!(" [blocked by {}]", ids(&t.blocked_by)));
                }
                line
            })
            .collect();
        if lines.is_empty() {
            lines.push("No tasks found".to_owned());
        }
        lines.extend(output.unreadable.iter().cloned());
        ToolResultContent::Text(lines.join("\n"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id counter's rename is made durable: after the new file is renamed over the
    /// name, the directory holding it is synced (else, after a crash, the counter could go
    /// back and a deleted task's id be given again). The counter holds its new number.
    #[test]
    fn the_counter_s_directory_is_synced_after_its_rename() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HIGH_WATER_MARK);
        fs::write(&path, "3\n").unwrap();
        SYNCED_DIRS.with(|d| d.borrow_mut().clear());
        replace_counter(&path, 5).unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "5\n");
        let synced = SYNCED_DIRS.with(|d| d.borrow().clone());
        assert_eq!(
            synced,
            [dir.path().to_path_buf()],
            "the directory was not synced"
        );
    }

    #[test]
    fn list_ids_become_safe_directory_names() {
        assert_eq!(sanitize_list_id("abc-123_X"), "abc-123_X");
        assert_eq!(sanitize_list_id("../etc/x y"), "---etc-x-y");
        assert_eq!(sanitize_list_id(""), "default");
        assert!(valid_id("12"));
        assert!(!valid_id("../1"));
        assert!(!valid_id(""));
    }

    fn new_task(subject: &str) -> NewTask {
        NewTask {
            subject: subject.to_owned(),
            description: format!("Do: {subject}"),
            ..NewTask::default()
        }
    }

    /// A `.highwatermark` that cannot be read (text that is no number, bytes that are not
    /// UTF-8) does not stop TaskCreate: the counter is taken from the task files present
    /// (the highest id among them), written back whole, and the new task follows it.
    #[test]
    fn a_damaged_high_water_mark_is_rebuilt_from_the_task_files() {
        let dir = tempfile::tempdir().unwrap();
        let store = TaskListStore::new(dir.path().join("tasks"));
        let mark = store.list_dir("s").join(HIGH_WATER_MARK);
        for (i, damage) in [b"garbage".as_slice(), b"\xff\xfe7\n", b"", b"-3"]
            .into_iter()
            .enumerate()
        {
            store.create("s", new_task("One")).unwrap();
            let last = store.create("s", new_task("Two")).unwrap();
            fs::write(&mark, damage).unwrap();
            let made = store.create("s", new_task("Three")).unwrap();
            let expected = last.id.parse::<u64>().unwrap() + 1;
            assert_eq!(made.id, expected.to_string(), "damage #{i}");
            assert_eq!(
                fs::read_to_string(&mark).unwrap(),
                format!("{expected}\n"),
                "damage #{i}"
            );
            assert_eq!(store.list("s").unwrap().tasks.len(), 3 * (i + 1));
        }
        // No temporary file is left beside it.
        let names: Vec<String> = fs::read_dir(store.list_dir("s"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".json"))
            .collect();
        let mut names = names;
        names.sort();
        assert_eq!(names, [".highwatermark", ".lock"]);
    }

    /// A counter that is there but cannot be read for now (an I/O error: a file without
    /// read permission, though with write permission; and `/proc/self/mem`, whose first bytes fail with EIO, behind the
    /// counter's name) is no damage: TaskCreate fails naming the counter and what went
    /// wrong, and the counter is left as it is, instead of being rebuilt from the task
    /// files, which would lower it and hand out a deleted task's id again. Run as root,
    /// which reads any file, the test runs itself again without that power (`setpriv`),
    /// or says it is skipped when it cannot.
    #[test]
    fn a_counter_that_cannot_be_read_for_now_is_reported_and_left_alone() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let store = TaskListStore::new(dir.path().join("tasks"));
        for _ in 0..3 {
            store.create("s", new_task("One")).unwrap();
        }
        // Task 3 deleted: only the counter remembers its id.
        fs::remove_file(store.list_dir("s").join("3.json")).unwrap();
        let mark = store.list_dir("s").join(HIGH_WATER_MARK);
        assert_eq!(fs::read_to_string(&mark).unwrap(), "3\n");
        // Write-only: it could be replaced, not read.
        fs::set_permissions(&mark, fs::Permissions::from_mode(0o200)).unwrap();
        if fs::read(&mark).is_ok() {
            assert!(
                std::env::var_os("TW_COUNTER_WITHOUT_DAC").is_none(),
                "the counter without read permission was read without root's file access"
            );
            return run_without_root_file_access(
                "task_list::tests::a_counter_that_cannot_be_read_for_now_is_reported_and_left_alone",
            );
        }
        let err = store.create("s", new_task("Four")).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("the task id counter {} ", mark.display()))
                && err.contains("cannot be read"),
            "{err}"
        );
        fs::set_permissions(&mark, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(fs::read_to_string(&mark).unwrap(), "3\n");
        assert_eq!(store.list("s").unwrap().tasks.len(), 2);

        fs::rename(&mark, dir.path().join("kept")).unwrap();
        std::os::unix::fs::symlink("/proc/self/mem", &mark).unwrap();
        let err = store.create("s", new_task("Four")).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("the task id counter {} ", mark.display()))
                && err.contains("cannot be read"),
            "{err}"
        );
        assert_eq!(fs::read_link(&mark).unwrap(), Path::new("/proc/self/mem"));
        assert_eq!(store.list("s").unwrap().tasks.len(), 2);
        fs::remove_file(&mark).unwrap();
        fs::rename(dir.path().join("kept"), &mark).unwrap();

        // Readable again, the counter goes on from where it was: 3 is never handed out again.
        assert_eq!(store.create("s", new_task("Four")).unwrap().id, "4");
    }

    /// Runs the test `name` of this binary again in a process without root's power to read
    /// and search any file (`setpriv` dropping `CAP_DAC_OVERRIDE` and
    /// `CAP_DAC_READ_SEARCH`), and fails when it fails; says it is skipped when `setpriv`
    /// cannot do that here.
    fn run_without_root_file_access(name: &str) {
        const DROP: [&str; 2] = ["--bounding-set", "-dac_override,-dac_read_search"];
        let usable = std::process::Command::new("setpriv")
            .args(DROP)
            .arg("true")
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !usable {
            eprintln!("skipped: root reads any file, and setpriv cannot drop that here");
            return;
        }
        let out = std::process::Command::new("setpriv")
            .args(DROP)
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", name, "--test-threads=1", "--nocapture"])
            .env("TW_COUNTER_WITHOUT_DAC", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let ran = String::from_utf8_lossy(&out.stdout);
        assert!(ran.contains("1 passed"), "{ran}");
    }

    /// A counter that can be neither read nor rewritten (a directory in its place) fails
    /// TaskCreate with an error that names it as the id counter, not as a task file.
    #[test]
    fn a_counter_that_cannot_be_rebuilt_is_named_as_the_counter() {
        let dir = tempfile::tempdir().unwrap();
        let store = TaskListStore::new(dir.path().join("tasks"));
        store.create("s", new_task("One")).unwrap();
        let mark = store.list_dir("s").join(HIGH_WATER_MARK);
        fs::remove_file(&mark).unwrap();
        fs::create_dir(&mark).unwrap();
        fs::write(mark.join("inside"), "x").unwrap();
        let err = store.create("s", new_task("Two")).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("the task id counter {} ", mark.display())),
            "{err}"
        );
        assert!(!err.contains("not a valid task"), "{err}");
        // Nothing was created.
        assert_eq!(store.list("s").unwrap().tasks.len(), 1);
    }

    /// Runs `create` on a thread of its own and waits at most 10 s for it: a counter read
    /// that blocks (a FIFO opened for reading) fails the test instead of hanging it.
    fn create_within(store: &TaskListStore, subject: &str) -> Result<Task, TaskStoreError> {
        let (store, task) = (store.clone(), new_task(subject));
        let (done, outcome) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(store.create("s", task));
        });
        outcome
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("TaskCreate blocked on the counter")
    }

    /// A counter that is no regular file is damage, rebuilt from the task files: a FIFO
    /// (never opened, so never waited on), a link to `/dev/zero`, a link that leads nowhere
    /// and a link loop are each replaced by a regular file holding the new id, which
    /// follows the highest task file. The counter is replaced by a rename over its name,
    /// never written through a link: the dangling link's target is not created, and a link
    /// to a counter elsewhere, read through, is replaced while its target keeps its
    /// number.
    #[test]
    fn a_counter_that_is_no_regular_file_is_replaced_not_written_through() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let store = TaskListStore::new(dir.path().join("tasks"));
        let list = store.list_dir("s");
        let mark = list.join(HIGH_WATER_MARK);
        /// What puts the damage in the counter's place.
        type Damage = fn(&Path);
        let damages: [(&str, Damage); 4] = [
            ("a FIFO", |mark| {
                nix::unistd::mkfifo(mark, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
            }),
            ("a link to /dev/zero", |mark| {
                symlink("/dev/zero", mark).unwrap()
            }),
            ("a dangling link", |mark| symlink("nowhere", mark).unwrap()),
            ("a link loop", |mark| {
                symlink(HIGH_WATER_MARK, mark).unwrap()
            }),
        ];
        for (what, damage) in damages {
            create_within(&store, "One").unwrap();
            let last = create_within(&store, "Two").unwrap();
            fs::remove_file(&mark).unwrap();
            damage(&mark);
            let made = create_within(&store, "Three").unwrap_or_else(|e| panic!("{what}: {e}"));
            let expected = last.id.parse::<u64>().unwrap() + 1;
            assert_eq!(made.id, expected.to_string(), "{what}");
            let meta = fs::symlink_metadata(&mark).unwrap();
            assert!(meta.file_type().is_file(), "{what}: {meta:?}");
            assert_eq!(
                fs::read_to_string(&mark).unwrap(),
                format!("{expected}\n"),
                "{what}"
            );
            assert!(
                fs::symlink_metadata(list.join("nowhere")).is_err(),
                "{what}: written through the link"
            );
        }
        // A link to a counter elsewhere is read through, and replaced by the next write.
        let elsewhere = dir.path().join("elsewhere");
        fs::write(&elsewhere, "40\n").unwrap();
        fs::remove_file(&mark).unwrap();
        symlink(&elsewhere, &mark).unwrap();
        assert_eq!(create_within(&store, "Four").unwrap().id, "41");
        assert!(fs::symlink_metadata(&mark).unwrap().file_type().is_file());
        assert_eq!(fs::read_to_string(&mark).unwrap(), "41\n");
        assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "40\n");
        // No temporary file is left beside it.
        let mut names: Vec<String> = fs::read_dir(&list)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| !n.ends_with(".json"))
            .collect();
        names.sort();
        assert_eq!(names, [".highwatermark", ".lock"]);
    }

    /// A counter at the largest id (18 digits) stops TaskCreate with what to do: remove
    /// it, and the next id follows the highest task file. Removed, the next TaskCreate
    /// does exactly that.
    #[test]
    fn a_counter_at_the_largest_id_says_how_to_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let store = TaskListStore::new(dir.path().join("tasks"));
        store.create("s", new_task("One")).unwrap();
        store.create("s", new_task("Two")).unwrap();
        let mark = store.list_dir("s").join(HIGH_WATER_MARK);
        fs::write(&mark, "999999999999999999\n").unwrap();
        let err = store
            .create("s", new_task("Three"))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!("the task id counter {} ", mark.display()))
                && err.contains("over 18 digits")
                && err.contains(
                    "Remove it, and the next id follows the highest task file: 3 (after 2.json"
                ),
            "{err}"
        );
        assert_eq!(store.list("s").unwrap().tasks.len(), 2);
        fs::remove_file(&mark).unwrap();
        assert_eq!(store.create("s", new_task("Three")).unwrap().id, "3");
    }
}
