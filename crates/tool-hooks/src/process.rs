//! Running one command hook: its own process group, stdin written concurrently, bounded
//! capture, a hard timeout counted from spawn, and the whole group killed at the limit, on
//! cancellation, and when the hook exits (nothing it forked outlives it).

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
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
/// child that inherited them.
pub const PIPE_GRACE: Duration = Duration::from_millis(200);

/// How a command hook ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Exited with a code.
    Exited(i32),
    /// Killed by a signal (not by us).
    Signaled,
    /// Hit the timeout; its process group was killed.
    TimedOut,
    /// Cancelled; its process group was killed.
    Cancelled,
    /// Could not be started, or (http) the request failed.
    Failed(String),
}

/// What a command hook produced.
#[derive(Debug)]
pub(crate) struct RawRun {
    pub ending: Ending,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub stdout_truncated: bool,
    /// The hook exited but a process it started kept stdout/stderr open past the grace.
    pub pipes_held_open: bool,
    pub duration: Duration,
}

struct Capture {
    buf: Vec<u8>,
    truncated: bool,
    limit: usize,
}

impl Capture {
    fn new(limit: usize) -> Self {
        Self {
            buf: Vec::new(),
            truncated: false,
            limit,
        }
    }

    fn push(&mut self, data: &[u8]) {
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
    pub input: &'a [u8],
    pub cwd: &'a Path,
    pub project_dir: &'a Path,
    pub extra_env: &'a [(String, String)],
    pub timeout: Duration,
    pub cancel: &'a CancellationToken,
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

/// Runs one command hook to its end, the timeout, or cancellation.
pub(crate) async fn run_command(l: Launch<'_>) -> RawRun {
    let start = Instant::now();
    // A timeout too large to add (a host's `Duration::MAX`) is as good as none.
    let deadline = start
        .checked_add(l.timeout)
        .unwrap_or_else(|| start + Duration::from_secs(100 * 365 * 24 * 3600));
    let mut command = build_command(&l);
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
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
            return RawRun {
                ending: Ending::Failed(format!("cannot start {what} in {}: {e}", l.cwd.display())),
                stdout: Vec::new(),
                stderr: Vec::new(),
                stdout_truncated: false,
                pipes_held_open: false,
                duration: start.elapsed(),
            };
        }
    };
    let pid = child.id();
    let mut guard = GroupGuard { pid, armed: true };
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let stdin = child.stdin.take();
    let input = l.input;
    // Stdin is written concurrently with reading and waiting: a hook that never reads it
    // cannot block us, and EPIPE (hook exited or closed stdin) is ignored.
    // The JSON ends with a line break, as Claude Code writes it: without one, a script's
    // `read -r line` fails (status 1) even though it read the line.
    let writer = async move {
        if let Some(mut s) = stdin {
            let _ = s.write_all(input).await;
            if !input.ends_with(b"\n") {
                let _ = s.write_all(b"\n").await;
            }
            let _ = s.shutdown().await;
        }
    };
    tokio::pin!(writer);
    let mut writer_done = false;
    let mut out = Capture::new(MAX_STDOUT_BYTES);
    let mut err = Capture::new(MAX_CAPTURE_BYTES);
    let mut obuf = vec![0u8; 16 * 1024];
    let mut ebuf = vec![0u8; 16 * 1024];
    let mut status: Option<std::io::Result<ExitStatus>> = None;
    let mut pipes_held_open = false;
    // Timers and the cancellation future are created once, not per loop turn.
    let deadline_sleep = sleep_until(deadline);
    tokio::pin!(deadline_sleep);
    let grace_sleep = sleep_until(deadline);
    tokio::pin!(grace_sleep);
    let cancelled = l.cancel.cancelled();
    tokio::pin!(cancelled);

    let ending = loop {
        if status.is_some() && stdout.is_none() && stderr.is_none() {
            break None;
        }
        tokio::select! {
            r = read_chunk(&mut stdout, &mut obuf) => match r {
                Ok(0) | Err(_) => stdout = None,
                Ok(n) => out.push(&obuf[..n]),
            },
            r = read_chunk(&mut stderr, &mut ebuf) => match r {
                Ok(0) | Err(_) => stderr = None,
                Ok(n) => err.push(&ebuf[..n]),
            },
            () = &mut writer, if !writer_done => writer_done = true,
            s = child.wait(), if status.is_none() => {
                status = Some(s);
                grace_sleep.as_mut().reset((Instant::now() + PIPE_GRACE).min(deadline));
            }
            () = &mut grace_sleep, if status.is_some() => {
                pipes_held_open = true;
                break None;
            }
            () = &mut deadline_sleep => {
                if status.is_some() {
                    // The hook exited in time; the deadline only cut its grace short (both
                    // timers can fire in one tick). What it printed counts.
                    pipes_held_open = true;
                    break None;
                }
                break Some(Ending::TimedOut);
            }
            () = &mut cancelled => break Some(Ending::Cancelled),
        }
    };
    // From here on the run is settled: the guard's job is done either way.
    guard.armed = false;
    let ending = match ending {
        Some(e) => {
            kill_group(pid);
            // Reap promptly; SIGKILL cannot be ignored.
            let _ = tokio::time::timeout(Duration::from_secs(2), child.wait()).await;
            e
        }
        None => {
            // The hook itself has exited. A process it started in the background with its
            // output redirected (`nohup npm run watch >/dev/null 2>&1 &`, a sound played
            // from a Notification hook) goes on, as it does under Claude Code: that is what
            // the hook asked for. One still holding our pipes past the grace was most
            // likely started by mistake (`cmd &`): the group is killed and it is reported.
            if pipes_held_open {
                kill_group(pid);
            }
            exit_ending(status, l.handler)
        }
    };
    RawRun {
        ending,
        stdout: out.buf,
        stderr: err.buf,
        stdout_truncated: out.truncated,
        pipes_held_open,
        duration: start.elapsed(),
    }
}

/// How a hook that exited on its own ended.
fn exit_ending(status: Option<std::io::Result<ExitStatus>>, handler: &CommandHandler) -> Ending {
    match status {
        Some(Ok(s)) => match s.code() {
            Some(code) => Ending::Exited(code),
            None => Ending::Signaled,
        },
        Some(Err(e)) => Ending::Failed(format!("waiting for `{}` failed: {e}", handler.command)),
        None => Ending::Signaled,
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
            input: b"{}",
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
            input: b"",
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
                input: b"",
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
            input: b"",
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
            input: b"{}",
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
        assert!(
            msg.starts_with(&format!(
                "cannot start `sh` to run `echo hi` in {}: ",
                gone.display()
            )),
            "{msg}"
        );
    }
}
