//! Background tasks: shell commands started by Bash's `run_in_background`, owned by a
//! [`TaskRegistry`] kept in the context's app state, read by
//! [`TaskOutput`](crate::TaskOutput) and ended by [`TaskStop`](crate::TaskStop).
//!
//! A task runs `bash -c` (or `sh -c`) in its own process group with stdout and stderr both
//! appended to one output file (opened `O_APPEND`; the session's results directory, else
//! the temp directory, under `tasks/<id>.output`), so a task's output never sits in memory.
//! An output file deleted or replaced while the task runs is said to be gone by TaskOutput
//! (the task's later output cannot be read), never read as the task's. Its whole process
//! group is killed (SIGTERM, then SIGKILL to what is left of the group after [`KILL_GRACE`])
//! when it is stopped, when its lifetime ends (default [`BACKGROUND_DEFAULT_MS`], at most
//! [`BACKGROUND_MAX_MS`]), when its output passes [`KILL_CAP`], and (SIGKILL at once, the
//! task then reported `killed`) by [`TaskRegistry::kill_all`], when the last handle of its
//! registry is dropped and when the runtime drops its watcher. Each of these also ends the
//! groups job control made for the command (`set -m; cmd &`, found by the mark its processes
//! inherit, `TOOLWRIGHT_COMMAND`). When the command itself exits, what it left in its group
//! and in such groups is killed too. A command moved to the background at its timeout ends only once its output is all
//! in its file. A task whose output file's file system is full when it ends (or whose
//! adopted output could not all be copied) is marked [`TaskSnapshot::output_incomplete`]:
//! TaskOutput says its output may be missing.
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, watch};
use tool_core::{ToolError, ToolUseContext};

use crate::bash::{KILL_CAP, KILL_GRACE, shell, shell_command};

/// Default lifetime of a background task, in milliseconds.
pub const BACKGROUND_DEFAULT_MS: u64 = 1_800_000;
/// Longest lifetime of a background task, in milliseconds; larger values are reduced to it.
pub const BACKGROUND_MAX_MS: u64 = 7_200_000;

/// How long [`TaskRegistry::stop`] waits for a task to end. The watcher's worst case: the
/// grace after SIGTERM, as long again for the group to go after SIGKILL, as long again for an
/// adopted command's output copy to finish; a little more for its own bookkeeping.
pub(crate) const STOP_WAIT: Duration = Duration::from_secs(KILL_GRACE.as_secs() * 4);

/// The state of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Still running.
    Running,
    /// Exited with code 0.
    Completed,
    /// Exited with another code, or could not be waited for.
    Failed,
    /// Killed: stopped, out of lifetime, past the output cap, or ended with every other
    /// task ([`TaskRegistry::kill_all`], the registry dropped).
    Killed,
}

impl TaskStatus {
    /// The name shown to the model (`running`, `completed`, `failed`, `killed`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Killed => "killed",
        }
    }
}

/// A copy of a task's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSnapshot {
    /// The task id (`b` and eight characters).
    pub id: String,
    /// The command.
    pub command: String,
    /// The description given with the command, if any.
    pub description: Option<String>,
    /// Where the output is written.
    pub output_file: PathBuf,
    /// The process group (the shell's pid).
    pub pgid: i32,
    /// The state.
    pub status: TaskStatus,
    /// The exit code, once exited normally.
    pub exit_code: Option<i32>,
    /// Why it was killed, when it was.
    pub kill_reason: Option<String>,
    /// Its command ended leaving processes running (`cmd &`), which were stopped with it.
    pub leftovers_stopped: bool,
    /// Its output may be missing from its file: the file's file system was full when the
    /// task ended (the command's writes, and the error it printed about them, may have been
    /// lost), or the copy of an adopted command's output to the file failed.
    pub output_incomplete: bool,
}

#[derive(Debug)]
struct TaskState {
    id: String,
    command: String,
    description: Option<String>,
    output_file: PathBuf,
    /// The output file's device and inode, as created: a path that no longer names it was
    /// deleted or replaced ([`TaskRegistry::output_file_lost`]).
    output_identity: FileIdentity,
    pgid: i32,
    /// The command's [`GROUP_MARK`](crate::procs::GROUP_MARK) and when it started: how the
    /// groups job control made (`set -m; cmd &`) are found when the task is killed.
    mark: String,
    started: std::time::Instant,
    inner: Mutex<Progress>,
    /// Held by a read of the output from its start to its end, so two reads never return
    /// the same output (a filtered read can take long: `inner` is held only briefly).
    reading: Mutex<()>,
    stop: Notify,
    done: watch::Sender<bool>,
}

#[derive(Debug, Default)]
struct Progress {
    /// Set once the task has ended and its output is all in its file.
    status: Option<TaskStatus>,
    exit_code: Option<i32>,
    kill_reason: Option<String>,
    /// The command was reaped (its output may still be being copied): its group is no
    /// longer this task's to signal.
    reaped: bool,
    /// Why [`TaskRegistry::kill_all`] (or the registry's drop) killed it, for the watcher to
    /// report once the command is reaped.
    killed_by: Option<String>,
    /// Bytes of the output file already returned by TaskOutput.
    read_offset: u64,
    /// See [`TaskSnapshot::leftovers_stopped`].
    leftovers_stopped: bool,
    /// See [`TaskSnapshot::output_incomplete`].
    output_incomplete: bool,
}

impl TaskState {
    /// The output file opened for reading, with its length: `None` when its path no longer
    /// names the file the task writes (deleted, or replaced: another file's content is not
    /// the task's output).
    fn open_output(&self) -> Option<(std::fs::File, u64)> {
        let file = std::fs::File::open(&self.output_file).ok()?;
        let meta = file.metadata().ok()?;
        (identity(&meta) == self.output_identity).then_some((file, meta.len()))
    }

    fn snapshot(&self) -> TaskSnapshot {
        let p = lock(&self.inner);
        TaskSnapshot {
            id: self.id.clone(),
            command: self.command.clone(),
            description: self.description.clone(),
            output_file: self.output_file.clone(),
            pgid: self.pgid,
            status: p.status.unwrap_or(TaskStatus::Running),
            exit_code: p.exit_code,
            kill_reason: p.kill_reason.clone(),
            leftovers_stopped: p.leftovers_stopped,
            output_incomplete: p.output_incomplete,
        }
    }
}

/// How the watch of a running task ended.
enum Ended {
    /// The command exited on its own (or by `kill_all`'s signal), with this status (`None`:
    /// it could not be waited for).
    Exited(Option<std::process::ExitStatus>),
    /// It is to be killed, for this reason.
    Kill(String),
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[derive(Debug, Default)]
struct RegistryInner {
    tasks: Mutex<HashMap<String, Arc<TaskState>>>,
}

impl RegistryInner {
    /// SIGKILL to every task whose command is still running; each is then reported `killed`
    /// for `reason`.
    fn kill_running(&self, reason: &str) {
        for task in lock(&self.tasks).values() {
            // Under the task's lock: the watcher marks it reaped under the same lock, so a
            // task is either killed here (and reported killed) or already reaped.
            let mut p = lock(&task.inner);
            if p.status.is_none() && !p.reaped {
                p.killed_by.get_or_insert_with(|| reason.to_owned());
                crate::procs::kill_command(task.pgid, &task.mark, task.started.elapsed());
            }
        }
    }
}

impl Drop for RegistryInner {
    fn drop(&mut self) {
        self.kill_running("its session ended");
    }
}

/// How far into a read that skipped ahead the end of its first, cut line is looked for: a
/// longer line is shown from the cut (better a partial line than none).
const CUT_LINE_LOOKAHEAD: usize = 1024;

/// How much of one line [`TaskRegistry::read_new_lines`] hands over at most: a longer line is
/// handed over in pieces of about this size (at whole characters), so a line that never
/// ends is never held whole.
pub const LINE_PIECE_BYTES: usize = 64 * 1024;

/// The [`TaskSnapshot::kill_reason`] of a task [`TaskRegistry::kill_all`] ended.
pub const KILLED_WITH_ALL: &str = "every task was killed";

/// What TaskOutput adds when a task's output may be missing from its file
/// ([`TaskSnapshot::output_incomplete`]).
pub(crate) const OUTPUT_INCOMPLETE: &str = "[The output file's file system was full when the task ended; output may be missing (what the command wrote then was lost, its own error about it too)]";

/// What TaskOutput adds when a task's command ended leaving processes running.
pub(crate) const LEFTOVERS_STOPPED: &str = "Stopped the processes this command left running (`&`, `nohup`) when it ended: a background command's processes end with it, and their later output will not come. Keep them in the foreground of the command (`wait`) to keep them.";

/// A task's shell as its watcher holds it. Dropped while the task runs (the runtime shutting
/// down as the process ends, before the registry is), it kills the groups the command's
/// descendants escaped to (`setsid cmd`) and then its own, while the shell still lives to
/// lead the way to them (the child's own `kill_on_drop` ends only the shell, after which
/// what escaped belongs to init and is out of reach), and the groups job control made,
/// found by the command's mark.
struct WatchedChild {
    child: tokio::process::Child,
    pgid: i32,
    /// The command's mark and when it started ([`TaskState::mark`]).
    mark: String,
    started: std::time::Instant,
    /// Not yet reaped: the group may still have processes (once reaped, its id may be
    /// another group's).
    running: bool,
}

impl WatchedChild {
    /// The shell was reaped and its group ended: nothing is left to kill.
    fn reaped(&mut self) {
        self.running = false;
    }
}

impl Drop for WatchedChild {
    fn drop(&mut self) {
        if self.running {
            crate::procs::kill_command(self.pgid, &self.mark, self.started.elapsed());
        }
    }
}

/// The background tasks of a session. Cheap to clone (all clones share the tasks); when the
/// last clone is dropped every task still running is killed with its process group.
#[derive(Debug, Clone, Default)]
pub struct TaskRegistry {
    inner: Arc<RegistryInner>,
}

/// The registry of the context's session, created on first use in its app state.
pub fn task_registry(ctx: &ToolUseContext) -> TaskRegistry {
    ctx.app_state().update::<TaskRegistry, _>(|r| r.clone())
}

static TASK_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh task id: `b` and eight lower-case base-36 characters (Claude Code's shape).
fn new_task_id() -> String {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(TASK_COUNTER.fetch_add(1, Ordering::Relaxed));
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    let mut n = hasher.finish();
    let mut id = String::from("b");
    for _ in 0..8 {
        let digit = u32::try_from(n % 36).unwrap_or(0);
        id.push(char::from_digit(digit, 36).unwrap_or('0'));
        n /= 36;
    }
    id
}

/// Whether the file system holding `file` has no block left that this process may write
/// (root may use the blocks reserved for it): a write to it fails, so a task whose command
/// wrote there has lost output. An error asking is taken for room.
fn file_system_full(file: &std::fs::File) -> bool {
    nix::sys::statvfs::fstatvfs(file).is_ok_and(|fs| {
        let free = if nix::unistd::geteuid().is_root() {
            fs.blocks_free()
        } else {
            fs.blocks_available()
        };
        free == 0
    })
}

/// A file's device and inode numbers: which file a path names.
type FileIdentity = (u64, u64);

fn identity(meta: &std::fs::Metadata) -> FileIdentity {
    use std::os::unix::fs::MetadataExt as _;
    (meta.dev(), meta.ino())
}

/// A new task id and its output file under `output_dir/tasks/`, created exclusively and
/// owner-only (a task's output can hold whatever the command printed), opened for
/// appending: a command that empties the file (`: > FILE`) makes the task's next output
/// start it again, not follow a hole of NUL bytes where the writer's offset was.
fn new_output_file(
    output_dir: &Path,
) -> Result<(String, PathBuf, std::fs::File, FileIdentity), ToolError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let id = new_task_id();
    // Each level made only inside the one above (never the session's directory again,
    // should it have been removed: `create_private_dir`).
    let dir = output_dir.join("tasks");
    // Said as what could not be made where (a full disk names only a directory otherwise):
    // the command does not run in the background.
    let cannot = |e: std::io::Error| {
        ToolError::msg(format!(
            "Could not create the background task's output file in {}: {e}",
            dir.display()
        ))
    };
    tool_core::create_private_dir(output_dir)
        .and_then(|()| tool_core::create_private_dir(&dir))
        .map_err(cannot)?;
    let output_file = dir.join(format!("{id}.output"));
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create_new(true)
        .mode(0o600)
        .open(&output_file)
        .map_err(cannot)?;
    let meta = file
        .metadata()
        .map_err(|e| ToolError::io(&output_file, e))?;
    Ok((id, output_file, file, identity(&meta)))
}

impl TaskRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts `command` in the background in `cwd`, running `script` (the command, after
    /// whatever sets up its environment), its output going to a file under
    /// `output_dir/tasks/`; it is killed after `lifetime`. Must run inside a Tokio runtime.
    pub fn spawn(
        &self,
        command: &str,
        script: &str,
        description: Option<String>,
        cwd: &Path,
        output_dir: &Path,
        lifetime: Duration,
    ) -> Result<TaskSnapshot, ToolError> {
        let (id, output_file, out, file_identity) = new_output_file(output_dir)?;
        let (err, watched) = match (out.try_clone(), out.try_clone()) {
            (Ok(err), Ok(watched)) => (err, watched),
            (Err(e), _) | (_, Err(e)) => {
                let _ = std::fs::remove_file(&output_file);
                return Err(ToolError::io(&output_file, e));
            }
        };
        let mark = crate::procs::new_mark();
        let mut cmd = shell_command(script, &mark);
        cmd.current_dir(cwd)
            .stdout(Stdio::from(out))
            .stderr(Stdio::from(err));
        let started = std::time::Instant::now();
        let child = cmd.spawn().map_err(|e| {
            // Nothing ran: no output file is left behind for it.
            let _ = std::fs::remove_file(&output_file);
            ToolError::msg(format!(
                "Could not start {} in {}: {e}",
                shell().display(),
                cwd.display()
            ))
        })?;
        let Some(pgid) = child.id().and_then(|id| i32::try_from(id).ok()) else {
            return Err(ToolError::msg("The background command exited at once"));
        };
        Ok(self.watch(
            id,
            command,
            description,
            (output_file, file_identity, watched),
            (pgid, mark, started),
            child,
            lifetime,
            None,
        ))
    }

    /// Takes over `child` (a foreground command whose timeout passed, running in its own
    /// process group, started at `started` with `mark` in its environment) as a background
    /// task: its output so far (`so_far`) starts the task's output file, and what it still
    /// writes to its standard output and error (the pipes the foreground call read) is added
    /// as it comes.
    /// `keep` lives until the command's output ends (a scratch file its shell still writes).
    #[expect(
        clippy::too_many_arguments,
        reason = "one call site, each argument distinct"
    )]
    pub(crate) fn adopt(
        &self,
        command: &str,
        description: Option<String>,
        child: tokio::process::Child,
        (mut out, mut err): (tokio::process::ChildStdout, tokio::process::ChildStderr),
        (pgid, mark, started): (i32, String, std::time::Instant),
        so_far: &[u8],
        output_dir: &Path,
        lifetime: Duration,
        keep: impl Send + 'static,
    ) -> Result<TaskSnapshot, ToolError> {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let (id, output_file, mut file, file_identity) = new_output_file(output_dir)?;
        std::io::Write::write_all(&mut file, so_far).map_err(|e| ToolError::io(&output_file, e))?;
        let watched = file
            .try_clone()
            .map_err(|e| ToolError::io(&output_file, e))?;
        // Whether a write to the file failed (a full disk): the task's output is then
        // incomplete.
        let copy = tokio::spawn(async move {
            let _keep = keep;
            let mut file = tokio::fs::File::from_std(file);
            let (mut out_buf, mut err_buf) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
            let (mut out_open, mut err_open) = (true, true);
            while out_open || err_open {
                let bytes = tokio::select! {
                    n = out.read(&mut out_buf), if out_open => match n {
                        Ok(n) if n > 0 => &out_buf[..n],
                        _ => { out_open = false; continue; }
                    },
                    n = err.read(&mut err_buf), if err_open => match n {
                        Ok(n) if n > 0 => &err_buf[..n],
                        _ => { err_open = false; continue; }
                    },
                };
                // A full disk ends the copy; the command goes on.
                if file.write_all(bytes).await.is_err() {
                    return true;
                }
            }
            file.flush().await.is_err()
        });
        Ok(self.watch(
            id,
            command,
            description,
            (output_file, file_identity, watched),
            (pgid, mark, started),
            child,
            lifetime,
            Some(copy),
        ))
    }

    /// Registers a running task and watches it: its exit, its lifetime, TaskStop, and the
    /// size of its output (through `output`'s handle: the file the command writes, even when
    /// its path was deleted). `copy` (an adopted command's output being copied to its file)
    /// is awaited (at most [`KILL_GRACE`], then aborted) before the task gets its final
    /// status, so its output is complete by the time anyone sees it ended.
    #[expect(clippy::too_many_arguments, reason = "the parts of one task")]
    fn watch(
        &self,
        id: String,
        command: &str,
        description: Option<String>,
        (output_file, output_identity, output): (PathBuf, FileIdentity, std::fs::File),
        (pgid, mark, started): (i32, String, std::time::Instant),
        child: tokio::process::Child,
        lifetime: Duration,
        copy: Option<tokio::task::JoinHandle<bool>>,
    ) -> TaskSnapshot {
        let (done, _) = watch::channel(false);
        let task = Arc::new(TaskState {
            id: id.clone(),
            command: command.to_owned(),
            description,
            output_file,
            output_identity,
            pgid,
            mark: mark.clone(),
            started,
            inner: Mutex::new(Progress::default()),
            reading: Mutex::new(()),
            stop: Notify::new(),
            done,
        });
        lock(&self.inner.tasks).insert(id, Arc::clone(&task));
        let watched = Arc::clone(&task);
        let mut child = WatchedChild {
            child,
            pgid,
            mark: mark.clone(),
            started,
            running: true,
        };
        tokio::spawn(async move {
            let task = watched;
            let deadline = tokio::time::sleep(lifetime);
            tokio::pin!(deadline);
            let mut size_check = tokio::time::interval(Duration::from_secs(1));
            let ended = loop {
                tokio::select! {
                    status = child.child.wait() => {
                        // Reaped: from here its group id is the leftovers' only while they
                        // live, so the guard no longer kills it on a drop.
                        child.reaped();
                        // Whatever the command left in its group goes with it, and the
                        // model is told (their later output will never come).
                        if crate::procs::stop_left_running(
                            task.pgid,
                            &mark,
                            started.elapsed(),
                            KILL_GRACE,
                        )
                        .await
                        {
                            lock(&task.inner).leftovers_stopped = true;
                        }
                        break Ended::Exited(status.ok());
                    }
                    () = &mut deadline => break Ended::Kill(format!("its lifetime of {} ms ended", lifetime.as_millis())),
                    () = task.stop.notified() => break Ended::Kill("stopped".to_owned()),
                    _ = size_check.tick() => {
                        let size = output.metadata().map_or(0, |m| m.len());
                        if size > KILL_CAP {
                            break Ended::Kill(format!("its output passed {KILL_CAP} bytes"));
                        }
                    }
                }
            };
            let (status, exit_code, kill_reason) = match ended {
                Ended::Kill(reason) => {
                    // With the groups job control made: they are the command's too.
                    crate::procs::terminate_command(
                        &mut child.child,
                        task.pgid,
                        Some((&mark, started)),
                        KILL_GRACE,
                    )
                    .await;
                    child.reaped();
                    lock(&task.inner).reaped = true;
                    (TaskStatus::Killed, None, Some(reason))
                }
                Ended::Exited(status) => {
                    use std::os::unix::process::ExitStatusExt as _;
                    let signalled = status.is_some_and(|s| s.signal().is_some());
                    let code = status.and_then(crate::procs::shell_exit_code);
                    let mut p = lock(&task.inner);
                    p.reaped = true;
                    match (signalled, p.killed_by.take()) {
                        // Ended by a signal after `kill_all` sent one.
                        (true, Some(reason)) => (TaskStatus::Killed, None, Some(reason)),
                        _ if code == Some(0) => (TaskStatus::Completed, code, None),
                        _ => (TaskStatus::Failed, code, None),
                    }
                }
            };
            let mut copy_failed = false;
            if let Some(mut copy) = copy {
                // The group is gone, so its pipes are at their end: the copy finishes now
                // (bounded all the same: a descendant that left the group holds them; the
                // copy is then abandoned, not left running).
                match tokio::time::timeout(KILL_GRACE, &mut copy).await {
                    Ok(result) => copy_failed = result.unwrap_or(false),
                    Err(_) => copy.abort(),
                }
            }
            // A command writing to a full disk loses that output and its own error about it
            // (which went to the same file): said by TaskOutput.
            let incomplete = copy_failed || file_system_full(&output);
            // Only now, with its output all in its file, does the task count as ended: a
            // reader that sees it ended has read everything.
            {
                let mut p = lock(&task.inner);
                p.status = Some(status);
                p.exit_code = exit_code;
                p.kill_reason = kill_reason;
                p.output_incomplete = incomplete;
            }
            task.done.send_replace(true);
        });
        task.snapshot()
    }

    /// Whether task `id`'s output file was deleted or replaced (its path names no file, or
    /// another one): what the task wrote after that cannot be read. `None` when there is no
    /// such task.
    pub fn output_file_lost(&self, id: &str) -> Option<bool> {
        let task = self.task(id)?;
        Some(
            std::fs::metadata(&task.output_file)
                .ok()
                .is_none_or(|meta| identity(&meta) != task.output_identity),
        )
    }

    fn task(&self, id: &str) -> Option<Arc<TaskState>> {
        lock(&self.inner.tasks).get(id).cloned()
    }

    /// Kills every running task with its process group, now: for a host about to exit
    /// without unwinding (`std::process::exit` runs no destructor, so dropping the registry
    /// would never happen).
    pub fn kill_all(&self) {
        self.inner.kill_running(KILLED_WITH_ALL);
    }

    /// A copy of task `id`'s state.
    pub fn get(&self, id: &str) -> Option<TaskSnapshot> {
        self.task(id).map(|t| t.snapshot())
    }

    /// Every task, in no particular order.
    pub fn list(&self) -> Vec<TaskSnapshot> {
        lock(&self.inner.tasks)
            .values()
            .map(|t| t.snapshot())
            .collect()
    }

    /// Waits until task `id` has ended or `timeout` passes; returns its state then.
    pub async fn wait(&self, id: &str, timeout: Duration) -> Option<TaskSnapshot> {
        let task = self.task(id)?;
        let mut done = task.done.subscribe();
        let _ = tokio::time::timeout(timeout, done.wait_for(|d| *d)).await;
        Some(task.snapshot())
    }

    /// Stops task `id` and waits until its process group is gone. Errors when there is no
    /// such task or it is not running.
    pub async fn stop(&self, id: &str) -> Result<TaskSnapshot, ToolError> {
        let task = self
            .task(id)
            .ok_or_else(|| ToolError::msg(format!("No task found with ID: {id}")))?;
        let snapshot = task.snapshot();
        if snapshot.status != TaskStatus::Running {
            return Err(ToolError::msg(format!(
                "Task {id} is not running (status: {})",
                snapshot.status.as_str()
            )));
        }
        let mut done = task.done.subscribe();
        task.stop.notify_one();
        let _ = tokio::time::timeout(STOP_WAIT, done.wait_for(|d| *d)).await;
        Ok(task.snapshot())
    }

    /// The output of task `id` written since the last call (at most `max_bytes`; the end is
    /// kept when there is more), and whether anything was skipped.
    pub fn read_new_output(&self, id: &str, max_bytes: u64) -> Option<(String, bool)> {
        use std::io::{Read, Seek, SeekFrom};
        let task = self.task(id)?;
        let _reading = lock(&task.reading);
        let running = task.snapshot().status == TaskStatus::Running;
        let mut p = lock(&task.inner);
        let Some((mut file, len)) = task.open_output() else {
            return Some((String::new(), false));
        };
        if len < p.read_offset {
            // The file was truncated (`: > file`): read it again from its start.
            p.read_offset = 0;
        }
        let start = p.read_offset.max(len.saturating_sub(max_bytes));
        let skipped = start > p.read_offset;
        // A read that skips ahead also reads the byte before its start: whether a line
        // starts there.
        let lead = u64::from(skipped && start > 0);
        let mut buf = Vec::new();
        if file.seek(SeekFrom::Start(start - lead)).is_ok() {
            let _ = file
                .take(len.saturating_sub(start - lead))
                .read_to_end(&mut buf);
        }
        let line_starts = lead == 0 || buf.first() == Some(&b'\n');
        if lead == 1 && !buf.is_empty() {
            buf.remove(0);
        }
        // A character the command has only half written yet is left for the next read, and a
        // read that skipped ahead starts at the next whole character: neither shows as �.
        let held = if running {
            crate::fsutil::incomplete_utf8_tail(&buf)
        } else {
            0
        };
        buf.truncate(buf.len() - held);
        p.read_offset = start + buf.len() as u64;
        let text = if skipped {
            // At the next whole character, and at the next line when the cut fell inside
            // one that ends soon: the tail of a cut line (`8` of `195718`) would read as
            // output of its own.
            let mut from = crate::fsutil::partial_utf8_head(&buf);
            if !line_starts
                && let Some(i) = buf[from..]
                    .iter()
                    .take(CUT_LINE_LOOKAHEAD)
                    .position(|&b| b == b'\n')
            {
                from += i + 1;
            }
            String::from_utf8_lossy(&buf[from..]).into_owned()
        } else {
            String::from_utf8_lossy(&buf).into_owned()
        };
        Some((text, skipped))
    }

    /// The output of task `id` written since the last read, handed to `line` one line at a
    /// time (with its line break), all of it: it is read in bounded chunks, never held
    /// whole, and a line longer than [`LINE_PIECE_BYTES`] is handed over in pieces. While
    /// the task runs, a last line it has not ended yet is left unread, for a later read to
    /// see whole; once the task has ended, it is handed over as it is. `line` answering
    /// [`ControlFlow::Break`] stops the read and leaves all of it unread (the answer is
    /// then `Break`).
    pub fn read_new_lines(
        &self,
        id: &str,
        mut line: impl FnMut(&str) -> ControlFlow<()>,
    ) -> Option<ControlFlow<()>> {
        use std::io::{BufReader, Read as _, Seek as _, SeekFrom};
        let task = self.task(id)?;
        let _reading = lock(&task.reading);
        let running = task.snapshot().status == TaskStatus::Running;
        let Some((mut file, len)) = task.open_output() else {
            return Some(ControlFlow::Continue(()));
        };
        let start = {
            let mut p = lock(&task.inner);
            if len < p.read_offset {
                // The file was truncated (`: > file`): read it again from its start.
                p.read_offset = 0;
            }
            p.read_offset
        };
        if file.seek(SeekFrom::Start(start)).is_err() {
            return Some(ControlFlow::Continue(()));
        }
        let reader = BufReader::with_capacity(LINE_PIECE_BYTES, file.take(len - start));
        let mut end = start;
        if scan_lines(reader, !running, &mut end, &mut line).is_break() {
            return Some(ControlFlow::Break(()));
        }
        lock(&task.inner).read_offset = end;
        Some(ControlFlow::Continue(()))
    }
}

/// Hands what `reader` holds to `line` one line at a time (see
/// [`TaskRegistry::read_new_lines`]), adding to `end` the bytes of each line handed over. A
/// last line without its line break is handed over only when `ended`.
fn scan_lines(
    mut reader: impl std::io::BufRead,
    ended: bool,
    end: &mut u64,
    line: &mut impl FnMut(&str) -> ControlFlow<()>,
) -> ControlFlow<()> {
    let mut hand_over = |bytes: &[u8]| {
        *end += bytes.len() as u64;
        line(&String::from_utf8_lossy(bytes))
    };
    // The line being gathered.
    let mut pending: Vec<u8> = Vec::new();
    loop {
        let chunk = match reader.fill_buf() {
            Ok([]) => break,
            Ok(chunk) => chunk,
            // What could not be read is left for a later read: no line is cut short here.
            Err(_) => return ControlFlow::Continue(()),
        };
        let taken = match memchr::memchr(b'\n', chunk) {
            Some(i) => i + 1,
            None => chunk.len(),
        };
        pending.extend_from_slice(&chunk[..taken]);
        reader.consume(taken);
        if pending.last() == Some(&b'\n') {
            hand_over(&pending)?;
            pending.clear();
        }
        while pending.len() >= LINE_PIECE_BYTES {
            let whole = LINE_PIECE_BYTES
                - crate::fsutil::incomplete_utf8_tail(&pending[..LINE_PIECE_BYTES]);
            hand_over(&pending[..whole])?;
            pending.drain(..whole);
        }
    }
    if ended && !pending.is_empty() {
        hand_over(&pending)?;
    }
    ControlFlow::Continue(())
}

/// Starts a background task for Bash: the lifetime is `timeout_ms` (default
/// [`BACKGROUND_DEFAULT_MS`], reduced to [`BACKGROUND_MAX_MS`]).
pub(crate) fn start_background(
    ctx: &ToolUseContext,
    command: &str,
    description: Option<String>,
    timeout_ms: Option<f64>,
) -> Result<TaskSnapshot, ToolError> {
    let ms = match timeout_ms {
        Some(t) if t.is_finite() && t > 0.0 => {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "clamped to 1..=MAX first"
            )]
            let ms = t.clamp(1.0, BACKGROUND_MAX_MS as f64) as u64;
            ms
        }
        _ => BACKGROUND_DEFAULT_MS,
    };
    let dir = match ctx.results_dir() {
        Some(dir) => dir.to_path_buf(),
        None => crate::bash::private_temp_dir()?,
    };
    // Through `eval`, as a foreground command: parsed only once the environment file has
    // run, so what it turns on (`shopt -s extglob`) holds for the command's first line too.
    let script =
        crate::bash::with_session_env(ctx, &format!("eval {}", crate::bash::shell_quote(command)));
    task_registry(ctx).spawn(
        command,
        &script,
        description,
        ctx.cwd(),
        &dir,
        Duration::from_millis(ms),
    )
}
