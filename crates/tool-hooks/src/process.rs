//! Running one command hook: its own process group, stdin written concurrently, bounded
//! capture, a hard timeout counted from spawn, and the whole group killed at the limit and
//! on cancellation. What the hook leaves running on its pipes (a background job, or the
//! hook itself once it printed the `{"async": true}` form) is drained by a detached task and
//! killed with the group at its deadline, on cancellation, or when the runner goes: never
//! later than the hook's timeout.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use crate::config::CommandHandler;

/// Bytes kept from a hook's stderr; the rest is read and discarded.
pub const MAX_CAPTURE_BYTES: usize = 1024 * 1024;

/// Bytes kept from a hook's stdout (and an http hook's response body): enough for JSON
/// output that replaces a large tool result (`updatedToolOutput`, as a redaction hook
/// returns it), where the 1 MiB of [`MAX_CAPTURE_BYTES`] would drop the replacement and let
/// the original through. Claude Code reads stdout without a limit.
pub const MAX_STDOUT_BYTES: usize = 16 * 1024 * 1024;

/// How long to keep reading stdout/stderr after the hook process exited, for a background
/// child that inherited them. What arrives later is drained and not used; the child goes
/// on until the hook's timeout.
pub const PIPE_GRACE: Duration = Duration::from_millis(200);

/// The longest a hook that cannot start for want of a system resource (descriptors,
/// processes: [`shortage_name`]) is retried before it counts as not started
/// ([`Ending::Unstartable`]); never more than half its timeout ([`StartRetry`]).
pub(crate) const START_RETRY_LIMIT: Duration = Duration::from_secs(10);

/// The retries of a start (a command hook's process, an http hook's connection) that
/// failed for want of a system resource ([`shortage_name`]): tried again as other hooks
/// end, for half the hook's timeout, at most [`START_RETRY_LIMIT`]. The other half is left
/// for the hook to run in: a start that succeeds at last just before the timeout would only
/// be killed by it.
pub(crate) struct StartRetry {
    /// Until when a failed start is tried again.
    until: Instant,
    /// The latest wait between attempts.
    delay: Duration,
    /// The last shortage a failed attempt met.
    short_of: Option<&'static str>,
}

impl StartRetry {
    /// The retries of a hook started at `start` with this timeout.
    pub(crate) fn new(start: Instant, timeout: Duration) -> Self {
        Self {
            until: start + (timeout / 2).min(START_RETRY_LIMIT),
            delay: Duration::ZERO,
            short_of: None,
        }
    }

    /// After an attempt that failed, short of `shortage` (`None`: for another reason):
    /// waits before the next attempt and says `true`, or says `false` at once when the
    /// failure is final (no shortage, or no time left to retry).
    pub(crate) async fn wait_after(&mut self, shortage: Option<&'static str>) -> bool {
        self.short_of = shortage.or(self.short_of);
        let now = Instant::now();
        if shortage.is_none() || now >= self.until {
            return false;
        }
        self.delay = next_retry_delay(self.delay);
        tokio::time::sleep(self.delay.min(self.until - now)).await;
        true
    }

    /// The last shortage a failed attempt met: the start, if it came, came late.
    pub(crate) fn short_of(&self) -> Option<&'static str> {
        self.short_of
    }
}

/// Whether `e` says that this process or the system is short, for now, of a resource that
/// starting a process (or opening a connection) needs, and which: file descriptors
/// (`EMFILE`, `ENFILE`: 24 and 23 on Linux, macOS and the BSDs alike), memory (`ENOMEM`, 12
/// there: a fork under memory pressure) or processes and local ports (`EAGAIN`, std's
/// `WouldBlock`); the errno and what it means, for messages. `None` for any other error.
/// Such a start is worth retrying once other hooks have ended.
pub(crate) fn shortage_name(e: &std::io::Error) -> Option<&'static str> {
    match e.raw_os_error() {
        Some(24) => Some("EMFILE, too many open files in this process"),
        Some(23) => Some("ENFILE, too many open files in the system"),
        Some(12) => Some("ENOMEM, out of memory"),
        _ if e.kind() == std::io::ErrorKind::WouldBlock => {
            Some("EAGAIN, a resource is temporarily unavailable, such as processes or local ports")
        }
        _ => None,
    }
}

/// The wait before the next attempt at a start that failed for want of a resource, after
/// waiting `previous`: doubling from 5 ms to at most 200 ms, and up to half as much again at
/// random, so that the hooks waiting for descriptors do not all try again at once.
fn next_retry_delay(previous: Duration) -> Duration {
    use std::hash::BuildHasher as _;
    let base = (previous * 2).clamp(Duration::from_millis(5), Duration::from_millis(200));
    let random = std::collections::hash_map::RandomState::new().hash_one(());
    let extra_micros = u64::try_from(base.as_micros() / 2).unwrap_or(1).max(1);
    base + Duration::from_micros(random % extra_micros)
}

/// The longest first line read as the `{"async": true}` form (a few dozen bytes); a longer
/// one is output.
const MAX_ASYNC_LINE: usize = 4 * 1024;

/// How a command hook ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Exited with a code.
    Exited(i32),
    /// Killed by a signal (not by us): its number, when the status names one.
    Signaled(Option<i32>),
    /// Hit the timeout; its process group was killed.
    TimedOut,
    /// Cancelled; its process group was killed.
    Cancelled,
    /// Could not be started, or (http) the request failed.
    Failed(String),
    /// Could not be started for want of a system resource (too many open files, no more
    /// processes), still after retrying for as long as [`StartRetry`] allowed: a failure
    /// that says nothing about the hook, which may have refused the call.
    Unstartable(String),
    /// Its first stdout line was the async form (`{"async": true, "asyncTimeout"?: ms}`)
    /// while it still ran: it goes on in the background until `asyncTimeout` (else its
    /// timeout), and nothing it prints is used.
    Backgrounded,
}

/// What a command hook produced.
#[derive(Debug)]
pub(crate) struct RawRun {
    pub ending: Ending,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Bytes of stderr read: more than `stderr` holds when it was cut at
    /// [`MAX_CAPTURE_BYTES`].
    pub stderr_read: usize,
    pub stdout_truncated: bool,
    /// The hook exited but a process it started kept stdout/stderr open past the grace:
    /// what it writes later is drained and not used, and it is killed with the hook's
    /// group at the hook's timeout (or on cancellation) if it still holds them then.
    pub pipes_held_open: bool,
    pub duration: Duration,
    /// The hook started (an http hook: its request was sent) only after a start failed for
    /// want of a system resource, so it had less than its timeout to run: how late and why
    /// (`its start was delayed 150 ms for want of system resources (EMFILE: ...)`). A guard
    /// that then times out counts as one that could not start.
    pub start_delayed: Option<String>,
}

/// [`RawRun::start_delayed`]'s text: the start delayed by at least `delay` for want of
/// `shortage`.
pub(crate) fn delayed_text(delay: Duration, shortage: &str) -> String {
    format!(
        "its start was delayed {} ms for want of system resources ({shortage})",
        delay.as_millis()
    )
}

struct Capture {
    buf: Vec<u8>,
    truncated: bool,
    /// Every byte pushed, kept or not.
    read: usize,
    limit: usize,
}

impl Capture {
    fn new(limit: usize) -> Self {
        Self {
            buf: Vec::new(),
            truncated: false,
            read: 0,
            limit,
        }
    }

    fn push(&mut self, data: &[u8]) {
        self.read = self.read.saturating_add(data.len());
        let room = self.limit.saturating_sub(self.buf.len());
        if data.len() > room {
            self.truncated = true;
        }
        self.buf.extend_from_slice(&data[..data.len().min(room)]);
    }
}

/// Everything needed to start one command hook.
pub(crate) struct Launch<'a> {
    pub handler: &'a CommandHandler,
    /// The stdin JSON; owned, since a hook that goes on in the background may still be
    /// reading it.
    pub input: Arc<[u8]>,
    pub cwd: &'a Path,
    pub project_dir: &'a Path,
    pub extra_env: &'a [(String, String)],
    pub timeout: Duration,
    pub cancel: &'a CancellationToken,
    /// Fires when the runner goes: what a hook left running in the background is killed.
    pub lifetime: &'a CancellationToken,
    /// Where what a hook leaves running is tracked, so that a host about to exit can wait
    /// for it (`None`: a detached task nobody waits for).
    pub tracker: Option<&'a tokio_util::task::TaskTracker>,
}

/// What the first stdout line says about the async form.
#[derive(Debug, Clone, Copy, PartialEq)]
enum LineForm {
    /// Not (yet) a JSON value.
    NotJson,
    /// JSON, but not the async form.
    Sync,
    /// `{"async": true}`, with its `asyncTimeout` when it gives a positive one (ms).
    Async(Option<Duration>),
}

fn line_form(line: &[u8]) -> LineForm {
    let Ok(text) = std::str::from_utf8(line) else {
        return LineForm::NotJson;
    };
    // Whitespace and a byte order mark around it do not count (JavaScript's `trim()`).
    let text = text.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if !text.starts_with('{') {
        return LineForm::NotJson;
    }
    match tool_core::parse_config_json(text) {
        Ok(Value::Object(m)) if m.get("async") == Some(&Value::Bool(true)) => {
            let timeout = m
                .get("asyncTimeout")
                .and_then(Value::as_f64)
                .filter(|ms| ms.is_finite() && *ms > 0.0)
                .map(|ms| Duration::from_secs_f64((ms / 1000.0).min(1.0e9)));
            LineForm::Async(timeout)
        }
        Ok(_) => LineForm::Sync,
        Err(_) => LineForm::NotJson,
    }
}

/// Whether a hook's (whole) stdout opens with the async form on its first line, as Claude
/// Code reads it (`{"async": true}` and more output after it is still the async form).
pub(crate) fn starts_with_async_form(stdout: &[u8]) -> bool {
    // Only the head is looked at: the async line is short, stdout may be 16 MiB.
    let head = &stdout[..stdout.len().min(MAX_ASYNC_LINE + 1)];
    let end = head
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(stdout.len());
    end <= MAX_ASYNC_LINE && matches!(line_form(&stdout[..end]), LineForm::Async(_))
}

/// Watches stdout, as it arrives, for the async form on its first line.
#[derive(Default)]
struct AsyncLineWatch {
    decided: bool,
}

impl AsyncLineWatch {
    /// After `chunk` was added to `captured` (all stdout so far): `Some(asyncTimeout)` when
    /// the first line is the async form. Decided once: on the first line break, on a first
    /// line that is already a whole JSON value, or past [`MAX_ASYNC_LINE`].
    fn feed(&mut self, chunk: &[u8], captured: &[u8]) -> Option<Option<Duration>> {
        if self.decided {
            return None;
        }
        let form = if chunk.contains(&b'\n') {
            self.decided = true;
            let end = captured.iter().position(|&b| b == b'\n')?;
            if end > MAX_ASYNC_LINE {
                return None;
            }
            line_form(&captured[..end])
        } else if captured.len() > MAX_ASYNC_LINE {
            self.decided = true;
            return None;
        } else if !captured.trim_ascii_end().ends_with(b"}") {
            // Not a whole object yet.
            return None;
        } else {
            match line_form(captured) {
                LineForm::NotJson => return None,
                form => {
                    self.decided = true;
                    form
                }
            }
        };
        match form {
            LineForm::Async(timeout) => Some(timeout),
            LineForm::NotJson | LineForm::Sync => None,
        }
    }
}

/// The text PowerShell runs for a shell-form `command`: each `${NAME}` placeholder is
/// rewritten as `${env:NAME}`, PowerShell's reference to the environment variable of the
/// same name, so it names the project as it does in exec form and in `sh` (where the shell
/// reads the environment itself). Still a variable reference, never the value: a project
/// path holding `$(...)` or quotes stays data. Nothing is put before the command, which
/// may have to start with `param(...)`, `using namespace` or `#requires`.
fn powershell_command(placeholders: &[(&str, &str)], command: &str) -> String {
    placeholders
        .iter()
        .fold(command.to_owned(), |text, (name, _)| {
            text.replace(&format!("${{{name}}}"), &format!("${{env:{name}}}"))
        })
}

fn build_command(l: &Launch<'_>) -> Command {
    let project = l.project_dir.to_string_lossy();
    // The `${NAME}` placeholders of `command`/`args` and their values; each is also an
    // environment variable of the hook.
    let placeholders: [(&str, &str); 1] = [("CLAUDE_PROJECT_DIR", &project)];
    let mut cmd = match l.handler.shell_invocation() {
        None => {
            // Exec form: no shell, placeholders substituted.
            let subst = |s: &str| {
                placeholders
                    .iter()
                    .fold(s.to_owned(), |text, (name, value)| {
                        text.replace(&format!("${{{name}}}"), value)
                    })
            };
            let mut c = Command::new(subst(&l.handler.command));
            c.args(l.handler.args.iter().flatten().map(|a| subst(a)));
            c
        }
        Some((shell, flags)) => {
            let mut c = Command::new(shell);
            c.args(flags);
            if l.handler.shell.as_deref() == Some("powershell") {
                c.arg(powershell_command(&placeholders, &l.handler.command));
            } else {
                // sh and bash expand $CLAUDE_PROJECT_DIR / ${CLAUDE_PROJECT_DIR} from the
                // environment, which keeps paths with spaces or quotes intact.
                c.arg(&l.handler.command);
            }
            c
        }
    };
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("OTEL_") {
            cmd.env_remove(&k);
        }
    }
    // CLAUDE_CODE_SUBPROCESS_ENV_SCRUB: no API keys or cloud credentials, before the hook's
    // own variables are set (those stay).
    tool_core::process::scrub_credentials(cmd.as_std_mut());
    cmd.env("CLAUDE_PROJECT_DIR", l.project_dir);
    for (k, v) in l.extra_env {
        cmd.env(k, v);
    }
    cmd.current_dir(l.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // Out of the terminal's reach (Claude Code's "no controlling terminal"), so no
    // terminal signal reaches it and reading the terminal fails at once rather than stopping
    // the hook until its timeout; and its process group (grandchildren included) can be
    // killed at once.
    tool_core::process::detach_from_terminal(cmd.as_std_mut());
    cmd
}

/// Kills the hook's process group if the run is abandoned midway (its future dropped),
/// so no hook outlives the caller that stopped waiting for it.
struct GroupGuard {
    pid: Option<u32>,
    armed: bool,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if self.armed {
            kill_group(self.pid);
        }
    }
}

fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid {
        tool_core::process::kill_process_group(pid);
    }
}

async fn read_chunk<R: AsyncRead + Unpin>(
    r: &mut Option<R>,
    buf: &mut [u8],
) -> std::io::Result<usize> {
    match r {
        Some(r) => r.read(buf).await,
        None => std::future::pending().await,
    }
}

/// A future that writes the hook's stdin; it may outlive the call (a backgrounded hook).
type StdinWriter = Pin<Box<dyn Future<Output = ()> + Send>>;

async fn write_stdin(writer: &mut Option<StdinWriter>) {
    match writer {
        Some(w) => w.await,
        None => std::future::pending().await,
    }
}

async fn wait_child(child: &mut Option<Child>) {
    match child {
        Some(c) => {
            let _ = c.wait().await;
        }
        None => std::future::pending().await,
    }
}

/// How the read loop of [`run_command`] ended.
enum Stop {
    /// The hook exited; `held`: a process it started still holds its pipes after the grace.
    Exited {
        held: bool,
    },
    TimedOut,
    Cancelled,
    /// Its first stdout line was the async form; its `asyncTimeout`, if any.
    Backgrounded(Option<Duration>),
}

/// What a hook leaves running on its pipes once its outcome is decided.
struct Leftover {
    pid: Option<u32>,
    /// The hook itself, when it still runs (backgrounded).
    child: Option<Child>,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    writer: Option<StdinWriter>,
    /// When the group is killed if it still holds the pipes (or the hook still runs).
    until: Instant,
    /// The call's cancellation (`None`: not cancelled with the call).
    cancel: Option<CancellationToken>,
    /// The runner's lifetime.
    lifetime: CancellationToken,
    /// See [`Launch::tracker`].
    tracker: Option<tokio_util::task::TaskTracker>,
}

/// Drains (and discards) what `left` still writes, in a detached task, and kills its
/// process group at `until`, on cancellation, when the runner goes, or when the task is
/// dropped (the runtime shuts down). Once the hook has exited and the pipes are closed,
/// nothing is killed: a daemon started with its output redirected goes on, as it does when
/// the hook's pipes close in time.
fn leave_running(left: Leftover) {
    let Leftover {
        pid,
        mut child,
        mut stdout,
        mut stderr,
        mut writer,
        until,
        cancel,
        lifetime,
        tracker,
    } = left;
    // Armed before the task first runs: a task dropped unpolled (the runtime shutting
    // down) still kills the group.
    let guard = GroupGuard { pid, armed: true };
    // Its leader is (or will be) reaped: the last-resort kill of an immediate exit must
    // still find the group.
    let tracked = pid.map(tool_core::process::track_process_group);
    let drain = async move {
        // The whole guard moves in (not just the field the task sets); the group stays
        // tracked until the task is done with it.
        let _tracked = tracked;
        let mut guard = guard;
        let mut obuf = vec![0u8; 4096];
        let mut ebuf = vec![0u8; 4096];
        let deadline = sleep_until(until);
        tokio::pin!(deadline);
        let cancelled = async {
            match &cancel {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(cancelled);
        let gone = lifetime.cancelled();
        tokio::pin!(gone);
        loop {
            if child.is_none() && stdout.is_none() && stderr.is_none() {
                // Ended on its own: nothing to kill.
                guard.armed = false;
                return;
            }
            tokio::select! {
                r = read_chunk(&mut stdout, &mut obuf) => if matches!(r, Ok(0) | Err(_)) {
                    stdout = None;
                },
                r = read_chunk(&mut stderr, &mut ebuf) => if matches!(r, Ok(0) | Err(_)) {
                    stderr = None;
                },
                () = write_stdin(&mut writer) => writer = None,
                () = wait_child(&mut child) => child = None,
                () = &mut deadline => break,
                () = &mut cancelled => break,
                () = &mut gone => break,
            }
        }
        guard.armed = false;
        kill_group(pid);
        if let Some(mut child) = child {
            // Reap promptly; SIGKILL cannot be ignored.
            let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
        }
    };
    match tracker {
        Some(tracker) => drop(tracker.spawn(drain)),
        None => drop(tokio::spawn(drain)),
    }
}

/// Runs one command hook to its end, the timeout, cancellation, or the async form on its
/// first stdout line.
pub(crate) async fn run_command(l: Launch<'_>) -> RawRun {
    let start = Instant::now();
    // A timeout too large to add (a host's `Duration::MAX`) is as good as none.
    let deadline = start
        .checked_add(l.timeout)
        .unwrap_or_else(|| start + Duration::from_secs(100 * 365 * 24 * 3600));
    let mut command = build_command(&l);
    // A start that fails for want of descriptors or processes (parallel calls with many
    // hooks each, under macOS's 256 descriptors) is tried again as other hooks end, for half
    // the hook's timeout.
    let mut retry = StartRetry::new(start, l.timeout);
    let mut child = loop {
        let e = match command.spawn() {
            Ok(c) => break c,
            Err(e) => e,
        };
        let shortage = shortage_name(&e);
        // Biased: a failure that is final (no shortage) is said as it is, even when the
        // call is being cancelled meanwhile.
        tokio::select! {
            biased;
            again = retry.wait_after(shortage) => if again {
                continue;
            },
            () = l.cancel.cancelled() => return not_run(Ending::Cancelled, start),
        }
        // Name what could not be started: the hook's program, or the shell that runs it.
        let program = command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        let what = if program == l.handler.command {
            format!("`{program}`")
        } else {
            format!("`{program}` to run `{}`", l.handler.command)
        };
        let msg = format!("cannot start {what} in {}: {e}", l.cwd.display());
        let ending = if let Some(shortage) = shortage {
            Ending::Unstartable(format!(
                "{msg} (short of system resources: {shortage}; tried again for {} ms)",
                start.elapsed().as_millis()
            ))
        } else {
            Ending::Failed(msg)
        };
        return not_run(ending, start);
    };
    let start_delayed = retry
        .short_of()
        .map(|shortage| delayed_text(start.elapsed(), shortage));
    let pid = child.id();
    let mut guard = GroupGuard { pid, armed: true };
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let stdin = child.stdin.take();
    let input = l.input.clone();
    // Stdin is written concurrently with reading and waiting: a hook that never reads it
    // cannot block us, and EPIPE (hook exited or closed stdin) is ignored.
    // The JSON ends with a line break, as Claude Code writes it: without one, a script's
    // `read -r line` fails (status 1) even though it read the line.
    let mut writer: Option<StdinWriter> = Some(Box::pin(async move {
        if let Some(mut s) = stdin {
            let _ = s.write_all(&input).await;
            if !input.ends_with(b"\n") {
                let _ = s.write_all(b"\n").await;
            }
            let _ = s.shutdown().await;
        }
    }));
    let mut out = Capture::new(MAX_STDOUT_BYTES);
    let mut err = Capture::new(MAX_CAPTURE_BYTES);
    let mut obuf = vec![0u8; 16 * 1024];
    let mut ebuf = vec![0u8; 16 * 1024];
    let mut status: Option<std::io::Result<ExitStatus>> = None;
    // Exec form and every shell alike: Claude Code watches any command hook's stdout.
    let mut async_line = AsyncLineWatch::default();
    // Timers and the cancellation future are created once, not per loop turn.
    let deadline_sleep = sleep_until(deadline);
    tokio::pin!(deadline_sleep);
    let grace_sleep = sleep_until(deadline);
    tokio::pin!(grace_sleep);
    let cancelled = l.cancel.cancelled();
    tokio::pin!(cancelled);

    let stop = loop {
        if status.is_some() && stdout.is_none() && stderr.is_none() {
            break Stop::Exited { held: false };
        }
        tokio::select! {
            r = read_chunk(&mut stdout, &mut obuf) => match r {
                Ok(0) | Err(_) => stdout = None,
                Ok(n) => {
                    out.push(&obuf[..n]);
                    // Only a hook still running is backgrounded; one that has exited is
                    // read as it is (the async form then decides nothing either).
                    if let Some(timeout) = async_line.feed(&obuf[..n], &out.buf)
                        && status.is_none()
                    {
                        break Stop::Backgrounded(timeout);
                    }
                }
            },
            r = read_chunk(&mut stderr, &mut ebuf) => match r {
                Ok(0) | Err(_) => stderr = None,
                Ok(n) => err.push(&ebuf[..n]),
            },
            () = write_stdin(&mut writer) => writer = None,
            s = child.wait(), if status.is_none() => {
                status = Some(s);
                grace_sleep.as_mut().reset((Instant::now() + PIPE_GRACE).min(deadline));
            }
            () = &mut grace_sleep, if status.is_some() => break Stop::Exited { held: true },
            () = &mut deadline_sleep => {
                if status.is_some() {
                    // The hook exited in time; the deadline only cut its grace short (both
                    // timers can fire in one tick). What it printed counts.
                    break Stop::Exited { held: true };
                }
                break Stop::TimedOut;
            }
            () = &mut cancelled => break Stop::Cancelled,
        }
    };
    // From here on the run is settled: the guard's job is done, or handed on.
    guard.armed = false;
    let mut pipes_held_open = false;
    let ending = match stop {
        Stop::TimedOut | Stop::Cancelled => {
            kill_group(pid);
            // Reap promptly; SIGKILL cannot be ignored.
            let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
            if matches!(stop, Stop::TimedOut) {
                Ending::TimedOut
            } else {
                Ending::Cancelled
            }
        }
        // The hook itself has exited. A process it started in the background with its
        // output redirected (`nohup npm run watch >/dev/null 2>&1 &`) goes on, as it does
        // under Claude Code: that is what the hook asked for.
        Stop::Exited { held: false } => exit_ending(status, l.handler),
        Stop::Exited { held: true } => {
            // One still holding our pipes (`afplay done.aiff &`, `(sleep 1; notify-send …)
            // &`) goes on too, as under Claude Code, which waits for the pipes to close: the
            // outcome is decided from what arrived within the grace and returned now; what
            // it writes later is drained and not used, and at the hook's timeout (or on
            // cancellation, or when the runner goes) its group is killed if it still holds
            // them.
            pipes_held_open = true;
            leave_running(Leftover {
                pid,
                child: None,
                stdout,
                stderr,
                writer,
                until: deadline,
                cancel: Some(l.cancel.clone()),
                lifetime: l.lifetime.clone(),
                tracker: l.tracker.cloned(),
            });
            exit_ending(status, l.handler)
        }
        Stop::Backgrounded(async_timeout) => {
            // Claude Code's async form: the hook goes on in the background, not cancelled
            // with the call (as an `async: true` hook), until its `asyncTimeout` or else its
            // own timeout; nothing it prints is used.
            let until = async_timeout
                .and_then(|t| Instant::now().checked_add(t))
                .unwrap_or(deadline);
            leave_running(Leftover {
                pid,
                child: Some(child),
                stdout,
                stderr,
                writer,
                until,
                cancel: None,
                lifetime: l.lifetime.clone(),
                tracker: l.tracker.cloned(),
            });
            Ending::Backgrounded
        }
    };
    RawRun {
        ending,
        stdout: out.buf,
        stderr: err.buf,
        stderr_read: err.read,
        stdout_truncated: out.truncated,
        pipes_held_open,
        duration: start.elapsed(),
        start_delayed,
    }
}

/// A run that ended before the hook started (`ending` says how).
pub(crate) fn not_run(ending: Ending, start: Instant) -> RawRun {
    RawRun {
        ending,
        stdout: Vec::new(),
        stderr: Vec::new(),
        stderr_read: 0,
        stdout_truncated: false,
        pipes_held_open: false,
        duration: start.elapsed(),
        start_delayed: None,
    }
}

/// How a hook that exited on its own ended.
fn exit_ending(status: Option<std::io::Result<ExitStatus>>, handler: &CommandHandler) -> Ending {
    match status {
        Some(Ok(s)) => match s.code() {
            Some(code) => Ending::Exited(code),
            None => {
                use std::os::unix::process::ExitStatusExt as _;
                Ending::Signaled(s.signal())
            }
        },
        Some(Err(e)) => Ending::Failed(format!("waiting for `{}` failed: {e}", handler.command)),
        None => Ending::Signaled(None),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn handler(command: &str, shell: Option<&str>) -> CommandHandler {
        CommandHandler {
            command: command.to_owned(),
            args: None,
            shell: shell.map(str::to_owned),
            is_async: false,
            async_rewake: false,
        }
    }

    async fn run(h: &CommandHandler, timeout: Duration) -> RawRun {
        let dir = std::env::temp_dir();
        let cancel = CancellationToken::new();
        run_command(Launch {
            handler: h,
            input: Arc::from(&b"{}"[..]),
            lifetime: &CancellationToken::new(),
            tracker: None,
            cwd: &dir,
            project_dir: &dir,
            extra_env: &[],
            timeout,
            cancel: &cancel,
        })
        .await
    }

    #[test]
    fn powershell_starts_without_the_profile_and_never_waits_for_input() {
        let h = handler("Write-Output hi", Some("powershell"));
        let dir = std::env::temp_dir();
        let cancel = CancellationToken::new();
        let cmd = build_command(&Launch {
            handler: &h,
            input: Arc::from(&b""[..]),
            lifetime: &CancellationToken::new(),
            tracker: None,
            cwd: &dir,
            project_dir: &dir,
            extra_env: &[],
            timeout: Duration::from_secs(1),
            cancel: &cancel,
        });
        let std = cmd.as_std();
        assert_eq!(std.get_program(), "pwsh");
        let args: Vec<_> = std.get_args().collect();
        assert_eq!(
            args,
            [
                "-NoProfile",
                "-NonInteractive",
                "-Command",
                "Write-Output hi"
            ]
        );
    }

    /// `${CLAUDE_PROJECT_DIR}` in a PowerShell shell-form hook is a PowerShell variable,
    /// empty unless set: it is rewritten as `${env:CLAUDE_PROJECT_DIR}` (the script
    /// path resolved to `/.claude/hooks/...` and the hook failed to start). The project path
    /// is never written into the text PowerShell parses, so a path holding `$(...)` or
    /// quotes cannot run anything. `sh` and `bash` get the command as written: they expand
    /// the environment variable themselves.
    #[test]
    fn powershell_gets_the_placeholders_from_the_environment() {
        let project = std::path::PathBuf::from("/tmp/it's $(touch pwned) \"p\"");
        let command = r#"& "${CLAUDE_PROJECT_DIR}/.claude/hooks/check.ps1""#;
        let launch = |h: &CommandHandler| {
            build_command(&Launch {
                handler: h,
                input: Arc::from(&b""[..]),
                lifetime: &CancellationToken::new(),
                tracker: None,
                cwd: &std::env::temp_dir(),
                project_dir: &project,
                extra_env: &[],
                timeout: Duration::from_secs(1),
                cancel: &CancellationToken::new(),
            })
        };
        let ps = handler(command, Some("powershell"));
        let cmd = launch(&ps);
        let std = cmd.as_std();
        let text = std.get_args().last().unwrap().to_str().unwrap();
        assert_eq!(
            text,
            r#"& "${env:CLAUDE_PROJECT_DIR}/.claude/hooks/check.ps1""#
        );
        assert!(!text.contains("pwned"), "{text}");
        let env: Vec<_> = std.get_envs().collect();
        assert!(
            env.contains(&(
                std::ffi::OsStr::new("CLAUDE_PROJECT_DIR"),
                Some(project.as_os_str())
            )),
            "{env:?}"
        );
        for shell in [None, Some("bash")] {
            let h = handler(command, shell);
            let cmd = launch(&h);
            let args: Vec<_> = cmd.as_std().get_args().collect();
            assert_eq!(args, ["-c", command], "{shell:?}");
        }
    }

    /// Exec form starts `command` itself, placeholders substituted, whatever `shell` says.
    #[test]
    fn exec_form_runs_without_a_shell() {
        let mut h = handler("${CLAUDE_PROJECT_DIR}/hook", Some("bash"));
        h.args = Some(vec!["${CLAUDE_PROJECT_DIR}".into()]);
        let dir = std::path::PathBuf::from("/p q");
        let cancel = CancellationToken::new();
        let cmd = build_command(&Launch {
            handler: &h,
            input: Arc::from(&b""[..]),
            lifetime: &CancellationToken::new(),
            tracker: None,
            cwd: &dir,
            project_dir: &dir,
            extra_env: &[],
            timeout: Duration::from_secs(1),
            cancel: &cancel,
        });
        assert_eq!(cmd.as_std().get_program(), "/p q/hook");
        let args: Vec<_> = cmd.as_std().get_args().collect();
        assert_eq!(args, ["/p q"]);
        assert_eq!(h.shell_invocation(), None);
    }

    /// The async form is found on the first line however stdout is cut into reads, and
    /// only there.
    #[test]
    fn the_async_form_is_read_from_the_first_line_only() {
        let watch = |chunks: &[&str]| {
            let mut w = AsyncLineWatch::default();
            let mut captured = Vec::new();
            chunks.iter().find_map(|c| {
                captured.extend_from_slice(c.as_bytes());
                w.feed(c.as_bytes(), &captured)
            })
        };
        assert_eq!(watch(&["{\"async\":true}\n"]), Some(None));
        assert_eq!(watch(&["{\"asy", "nc\": true", "}\n{\"x\":1}"]), Some(None));
        // A whole object is enough, before its line break (Claude Code reads it so).
        assert_eq!(watch(&[" {\"async\":true} "]), Some(None));
        assert_eq!(
            watch(&["{\"async\":true,\"asyncTimeout\":1500}\r\n"]),
            Some(Some(Duration::from_millis(1500)))
        );
        assert_eq!(
            watch(&["{\"async\":true,\"asyncTimeout\":0}\n"]),
            Some(None)
        );
        for sync in [
            &["{\"async\":false}\n"][..],
            &["{\"async\":\"true\"}\n"],
            &["hello\n", "{\"async\":true}\n"],
            &["{\"decision\":\"block\"}", "\n{\"async\":true}\n"],
            &["{\n\"async\": true}\n"],
            &["[1]\n"],
        ] {
            assert_eq!(watch(sync), None, "{sync:?}");
        }
        assert!(starts_with_async_form(
            b"{\"async\": true}\n{\"decision\":\"block\"}"
        ));
        assert!(starts_with_async_form(b"\xef\xbb\xbf{\"async\": true}"));
        assert!(!starts_with_async_form(
            b"{\"decision\":\"block\"}\n{\"async\":true}"
        ));
        let mut long = vec![b' '; MAX_ASYNC_LINE];
        long.extend_from_slice(b"{\"async\": true}");
        assert!(!starts_with_async_form(&long));
    }

    #[tokio::test]
    async fn a_timeout_too_large_to_add_is_no_timeout() {
        let out = run(&handler("echo ok", None), Duration::MAX).await;
        assert_eq!(out.ending, Ending::Exited(0));
        assert_eq!(out.stdout, b"ok\n");
    }

    /// A hook that exits at once leaving a background child on its pipes, with a timeout
    /// shorter than the grace: the grace is cut to the deadline, and both timers fire in one
    /// tick. The hook exited in time, so what it printed counts (a random pick reported a
    /// timeout, throwing the output away, half the time).
    #[tokio::test]
    async fn a_hook_that_exits_in_time_is_not_timed_out() {
        let h = handler("sleep 5 & echo done", None);
        for _ in 0..10 {
            let out = run(&h, Duration::from_millis(150)).await;
            assert_eq!(out.ending, Ending::Exited(0), "{out:?}");
            assert_eq!(out.stdout, b"done\n");
            assert!(out.pipes_held_open);
        }
    }

    #[tokio::test]
    async fn a_shell_that_cannot_start_is_named() {
        let out = run(&handler("echo hi", Some("bash")), Duration::from_secs(5)).await;
        assert_eq!(out.ending, Ending::Exited(0));
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        let cancel = CancellationToken::new();
        let h = handler("echo hi", None);
        let out = run_command(Launch {
            handler: &h,
            input: Arc::from(&b"{}"[..]),
            lifetime: &CancellationToken::new(),
            tracker: None,
            cwd: &gone,
            project_dir: dir.path(),
            extra_env: &[],
            timeout: Duration::from_secs(5),
            cancel: &cancel,
        })
        .await;
        let Ending::Failed(msg) = out.ending else {
            panic!("{out:?}")
        };
        // The shell by its path (`/bin/sh`).
        let shell = h.shell_invocation().unwrap().0;
        assert!(shell.ends_with("sh"), "{shell}");
        assert!(
            msg.starts_with(&format!(
                "cannot start `{shell}` to run `echo hi` in {}: ",
                gone.display()
            )),
            "{msg}"
        );
    }

    /// Each shortage a start is retried for is named by its errno, and not running out of
    /// memory (`ENOMEM`, 12 on Linux and macOS: a fork under memory pressure) is one too: a
    /// guard that cannot be started then refuses the call (it was a plain failure, a
    /// non-blocking error that let the call go on). Other errors are no shortage.
    #[test]
    fn resource_shortages_are_told_apart_and_named() {
        use std::io::{Error, ErrorKind};
        for (errno, name) in [(24, "EMFILE"), (23, "ENFILE"), (12, "ENOMEM")] {
            let e = Error::from_raw_os_error(errno);
            assert!(
                shortage_name(&e).is_some_and(|n| n.starts_with(name)),
                "{errno}"
            );
        }
        let again = Error::from(ErrorKind::WouldBlock);
        assert!(shortage_name(&again).is_some_and(|n| n.starts_with("EAGAIN")));
        for errno in [2, 13, 20] {
            let e = Error::from_raw_os_error(errno);
            assert_eq!(shortage_name(&e), None, "{errno}");
        }
    }
}
