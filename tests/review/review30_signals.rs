//! `toolwright run` held by a hung network mount when a signal comes, found by review 30:
//! Reads whose input check hangs, calls that hold every runtime worker, a session that
//! cannot open, and what an exit on the spot leaves in the temporary directory.
//!
//! A hung mount is emulated for real with an `LD_PRELOAD` library (as `tests/hung_path.rs`
//! does): `statx`, `open`, `open64` and `mkdir` of a path holding the text in `HANG_PATH`
//! write a line to the file named by `HANG_MARK` and block until the file named by
//! `HANG_RELEASE` exists, then fail with `ENOTCONN`, as a FUSE mount that went away does.
//! They block as a hung FUSE request does, in a wait that only a fatal signal ends (the
//! thread waits for a `vfork` child that polls for the release file, and ends with the
//! process), so that a signal the kernel hands to that thread is never taken. Other paths
//! go to the real functions.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::processes::{wait_at_most, wait_until};
use serde_json::{Value, json};

/// The library (see the module docs).
const SHIM: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int hangs(const char *path) {
    const char *marker = getenv("HANG_PATH");
    return path && marker && *marker && strstr(path, marker);
}

/* Blocks until HANG_RELEASE exists, then fails as a mount that went away. The wait is
   vfork's (the parent waits for the child to exit, killable only), as a FUSE request's. */
static int hang(void) {
    const char *mark = getenv("HANG_MARK");
    const char *release = getenv("HANG_RELEASE");
    if (mark) {
        int fd = syscall(SYS_openat, AT_FDCWD, mark, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) { syscall(SYS_write, fd, "x\n", 2); syscall(SYS_close, fd); }
    }
    long parent = syscall(SYS_getpid);
    pid_t child = vfork();
    if (child == 0) {
        /* Raw system calls only: the child runs on the parent's memory. Its copies of the
           descriptors go, so that it holds no pipe of the parent's open. */
        struct timespec pause = {0, 20000000};
        for (int fd = 0; fd < 1024; fd++) syscall(SYS_close, fd);
        for (;;) {
            if (release && syscall(SYS_faccessat, AT_FDCWD, release, F_OK, 0) == 0) break;
            /* The process it held is gone. */
            if (syscall(SYS_getppid) != parent) break;
            syscall(SYS_nanosleep, &pause, 0);
        }
        syscall(SYS_exit_group, 0);
    }
    if (child > 0) syscall(SYS_wait4, child, 0, 0, 0);
    errno = ENOTCONN;
    return -1;
}

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf) {
    static int (*real)(int, const char *, int, unsigned int, struct statx *) = 0;
    if (hangs(path)) return hang();
    if (!real) real = dlsym(RTLD_NEXT, "statx");
    return real(dirfd, path, flags, mask, buf);
}

static mode_t mode_of(int flags, va_list args) {
    return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? va_arg(args, mode_t) : 0;
}

int open64(const char *path, int flags, ...) {
    static int (*real)(const char *, int, ...) = 0;
    va_list args;
    va_start(args, flags);
    mode_t mode = mode_of(flags, args);
    va_end(args);
    if (hangs(path)) return hang();
    if (!real) real = dlsym(RTLD_NEXT, "open64");
    return real(path, flags, mode);
}

int open(const char *path, int flags, ...) {
    static int (*real)(const char *, int, ...) = 0;
    va_list args;
    va_start(args, flags);
    mode_t mode = mode_of(flags, args);
    va_end(args);
    if (hangs(path)) return hang();
    if (!real) real = dlsym(RTLD_NEXT, "open");
    return real(path, flags, mode);
}

int mkdir(const char *path, mode_t mode) {
    static int (*real)(const char *, mode_t) = 0;
    if (hangs(path)) return hang();
    if (!real) real = dlsym(RTLD_NEXT, "mkdir");
    return real(path, mode);
}
"#;

/// How long after the signal the run exits whatever holds it (docs/cli.md: 25 s).
const LAST_RESORT: Duration = Duration::from_secs(25);

/// A test's directory: the shim built, a project, a home, a temporary directory of its own
/// (`TMPDIR`), and where the shim says it blocked and is told to let go.
struct Hung {
    _dir: tempfile::TempDir,
    root: PathBuf,
    shim: PathBuf,
    project: PathBuf,
    tmp: PathBuf,
    mark: PathBuf,
    release: PathBuf,
}

impl Hung {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let shim_c = root.join("shim.c");
        let shim = root.join("shim.so");
        std::fs::write(&shim_c, SHIM).unwrap();
        let built = Command::new("cc")
            .args(["-shared", "-fPIC", "-o"])
            .arg(&shim)
            .arg(&shim_c)
            .arg("-ldl")
            .status()
            .expect("cc runs");
        assert!(built.success(), "the shim did not build");
        let project = root.join("project");
        std::fs::create_dir_all(project.join("hung-mount")).unwrap();
        std::fs::write(project.join("hung-mount/a.txt"), "on the mount\n").unwrap();
        std::fs::write(project.join("a.txt"), "alpha\n").unwrap();
        // Longer than a failed command's error shows: its output is saved to a file.
        std::fs::write(project.join("big.txt"), "0123456789\n".repeat(2000)).unwrap();
        std::fs::create_dir_all(root.join("home")).unwrap();
        let tmp = root.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        Self {
            mark: root.join("stuck"),
            release: root.join("release"),
            _dir: dir,
            root,
            shim,
            project,
            tmp,
        }
    }

    /// `toolwright run --json --mode bypassPermissions` of `calls` (JSONL), with the paths
    /// holding `hang_path` hung, `TMPDIR` set to `tmpdir` and two runtime workers (as on a
    /// two-core machine).
    fn run(&self, calls: &[Value], hang_path: &str, tmpdir: &Path) -> Running {
        self.run_on_workers(2, calls, hang_path, tmpdir)
    }

    /// [`Hung::run`] on `workers` runtime workers. One worker is how a test holds every
    /// worker for sure: with two, a call that blocks its worker may hold the other call's
    /// task in that worker's own slot for the next task (tokio's LIFO slot, which the other
    /// worker cannot steal), so that the other call never reaches the hung path.
    fn run_on_workers(
        &self,
        workers: usize,
        calls: &[Value],
        hang_path: &str,
        tmpdir: &Path,
    ) -> Running {
        let input = self.root.join("turn.jsonl");
        std::fs::write(
            &input,
            calls.iter().map(|c| format!("{c}\n")).collect::<String>(),
        )
        .unwrap();
        Command::new(env!("CARGO_BIN_EXE_toolwright"))
            .args(["run", "--json", "--mode", "bypassPermissions", "--cwd"])
            .arg(&self.project)
            .arg(&input)
            .env("HOME", self.root.join("home"))
            .env("CLAUDE_CONFIG_DIR", self.root.join("home/.claude"))
            .env("TMPDIR", tmpdir)
            .env("TOKIO_WORKER_THREADS", workers.to_string())
            .env("LD_PRELOAD", &self.shim)
            .env("HANG_PATH", hang_path)
            .env("HANG_MARK", &self.mark)
            .env("HANG_RELEASE", &self.release)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map(|child| Running(Some(child)))
            .unwrap()
    }

    /// Waits until `n` calls are blocked in the shim.
    fn wait_stuck(&self, n: usize) {
        wait_until("the calls never reached the hung mount", || {
            std::fs::read_to_string(&self.mark).is_ok_and(|m| m.lines().count() >= n)
        });
        std::thread::sleep(Duration::from_millis(300));
    }

    /// What the test's temporary directory holds of toolwright's (a session's directory),
    /// each with what it holds (a `find` listing), for the failure message.
    fn left_in_tmp(&self) -> Vec<String> {
        std::fs::read_dir(&self.tmp)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("toolwright-"))
            .map(|name| {
                let out = Command::new("find")
                    .arg(self.tmp.join(&name))
                    .output()
                    .unwrap();
                format!("{name}: {}", String::from_utf8_lossy(&out.stdout))
            })
            .collect()
    }
}

impl Drop for Hung {
    fn drop(&mut self) {
        // Whatever is still blocked in the shim lets go.
        let _ = std::fs::write(&self.release, "");
    }
}

/// A run in progress, killed if the test fails before it ends.
struct Running(Option<Child>);

impl Running {
    fn child(&mut self) -> &mut Child {
        self.0.as_mut().expect("the run is still there")
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Sends `signal` (`-INT`, `-TERM`) to the run, with kill(2) itself: spawning `kill` could
/// take long enough under load to let a second signal come after the run's grace (seen once
/// in CI, session 37).
fn kill(run: &mut Running, signal: &str) {
    use nix::sys::signal::Signal;
    let signal = match signal {
        "-INT" => Signal::SIGINT,
        "-TERM" => Signal::SIGTERM,
        other => panic!("no such signal here: {other}"),
    };
    let pid = i32::try_from(run.child().id()).expect("a pid");
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal);
}

/// The run's standard output and standard error, once it has ended (what is still blocked
/// in the shim is let go first).
fn outputs(hung: &Hung, mut run: Running) -> (String, String) {
    std::fs::write(&hung.release, "").unwrap();
    let child = run.0.take().expect("the run is still there");
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Review 30, finding 1: two Reads of files on a hung mount (stuck in Read's own input
/// check, its `stat`) beside a Bash call, on two runtime workers: Ctrl-C used to be ignored
/// for good (both workers held, nothing left to handle the signal). Now the executor
/// answers the stuck Reads as interrupted 15 s after the signal, before the last resort,
/// and the run exits 130 with every block reported in order.
#[test]
fn a_signal_ends_a_run_whose_reads_hang_in_their_input_check() {
    let hung = Hung::new();
    let on_mount = hung.project.join("hung-mount/a.txt");
    let mut run = hung.run(
        &[
            json!({"type": "tool_use", "id": "toolu_0", "name": "Bash",
                   "input": {"command": "echo first"}}),
            json!({"type": "tool_use", "id": "toolu_1", "name": "Read",
                   "input": {"file_path": on_mount}}),
            json!({"type": "tool_use", "id": "toolu_2", "name": "Read",
                   "input": {"file_path": on_mount, "offset": 1}}),
        ],
        "hung-mount",
        &hung.tmp,
    );
    hung.wait_stuck(2);
    kill(&mut run, "-INT");
    let signalled = Instant::now();
    let status = wait_at_most(
        run.child(),
        LAST_RESORT + Duration::from_secs(15),
        "the run did not end on Ctrl-C while two Reads hung in their input check",
    );
    let took = signalled.elapsed();
    let (stdout, stderr) = outputs(&hung, run);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        took < LAST_RESORT && !stderr.contains("did not end within"),
        "the run ended only by its last resort, {took:?} after the signal: {stderr}"
    );
    let message: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    let results: Vec<&Value> = message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .collect();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_0", "toolu_1", "toolu_2"], "{message}");
    assert_eq!(results[0]["content"], "first", "{message}");
    for stuck in &results[1..] {
        assert_eq!(stuck["is_error"], true, "{message}");
    }
}

/// Review 30, finding 1 (the last resort): a Bash call stuck in the tool itself (the
/// `open` of the file that keeps a failed command's long output, on a hung mount, once the
/// command has ended) holds the runtime's only worker, as two such calls hold both workers
/// of a two-core machine, so that the run's own runtime sees neither the signal nor a
/// timer. The last resort does not depend on a worker: 25 s after Ctrl-C the run exits 130,
/// saying so, and (finding 3) leaves no session directory behind in the temporary
/// directory.
#[test]
fn the_last_resort_exit_needs_no_runtime_worker() {
    let hung = Hung::new();
    let mut run = hung.run_on_workers(
        1,
        &[
            json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
                   "input": {"command": "cat big.txt missing.txt"}}),
            json!({"type": "tool_use", "id": "toolu_2", "name": "Bash",
                   "input": {"command": "cat big.txt missing.txt"}}),
        ],
        "-output.txt",
        &hung.tmp,
    );
    hung.wait_stuck(1);
    kill(&mut run, "-INT");
    let signalled = Instant::now();
    let status = wait_at_most(
        run.child(),
        LAST_RESORT + Duration::from_secs(15),
        "the run did not end on Ctrl-C while every runtime worker was held",
    );
    let took = signalled.elapsed();
    let (_, stderr) = outputs(&hung, run);
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(took >= LAST_RESORT, "{took:?}: {stderr}");
    assert!(
        stderr.contains("did not end within 25 s of the signal"),
        "{stderr}"
    );
    assert_eq!(hung.left_in_tmp(), Vec::<String>::new(), "{stderr}");
}

/// The same, a second signal: it exits at once (with its own status) however the runtime
/// is held.
#[test]
fn a_second_signal_exits_at_once_with_every_worker_held() {
    let hung = Hung::new();
    let mut run = hung.run_on_workers(
        1,
        &[
            json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
                   "input": {"command": "cat big.txt missing.txt"}}),
            json!({"type": "tool_use", "id": "toolu_2", "name": "Bash",
                   "input": {"command": "cat big.txt missing.txt"}}),
        ],
        "-output.txt",
        &hung.tmp,
    );
    hung.wait_stuck(1);
    kill(&mut run, "-INT");
    std::thread::sleep(Duration::from_millis(500));
    kill(&mut run, "-TERM");
    let status = wait_at_most(
        run.child(),
        Duration::from_secs(10),
        "the run did not end on a second signal while every runtime worker was held",
    );
    let (_, stderr) = outputs(&hung, run);
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert_eq!(hung.left_in_tmp(), Vec::<String>::new(), "{stderr}");
}

/// Review 30, finding 2: a session that cannot open (its temporary directory on a hung
/// mount) held the run past SIGTERM for good, the last resort not yet armed. It is armed
/// with the handlers now: 25 s after the signal the run exits 143.
#[test]
fn the_last_resort_ends_a_run_whose_session_cannot_open() {
    let hung = Hung::new();
    let tmpdir = hung.root.join("hung-mount-tmp");
    std::fs::create_dir_all(&tmpdir).unwrap();
    let mut run = hung.run(
        &[json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
                 "input": {"command": "echo never"}})],
        "hung-mount",
        &tmpdir,
    );
    hung.wait_stuck(1);
    kill(&mut run, "-TERM");
    let signalled = Instant::now();
    let status = wait_at_most(
        run.child(),
        LAST_RESORT + Duration::from_secs(15),
        "the run did not end on SIGTERM while its session could not open",
    );
    let took = signalled.elapsed();
    let (_, stderr) = outputs(&hung, run);
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(took >= LAST_RESORT, "{took:?}: {stderr}");
    assert!(
        stderr.contains("did not end within 25 s of the signal"),
        "{stderr}"
    );
}

/// Review 30, finding 2: when the hung mount then fails (the session's temporary directory
/// cannot be made), the run exits with the signal's status (143), not the 2 of bad
/// settings, saying what failed.
#[test]
fn a_session_that_fails_after_a_signal_exits_with_the_signals_status() {
    let hung = Hung::new();
    let tmpdir = hung.root.join("hung-mount-tmp");
    std::fs::create_dir_all(&tmpdir).unwrap();
    let mut run = hung.run(
        &[json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
                 "input": {"command": "echo never"}})],
        "hung-mount",
        &tmpdir,
    );
    hung.wait_stuck(1);
    kill(&mut run, "-TERM");
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(&hung.release, "").unwrap();
    let status = wait_at_most(
        run.child(),
        Duration::from_secs(20),
        "the run did not end once its session failed",
    );
    let (_, stderr) = outputs(&hung, run);
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert!(
        stderr.contains("cannot create the session's temporary directory"),
        "{stderr}"
    );
}

/// Review 30, finding 3: an exit on a second signal left the session's directory in the
/// temporary directory (its empty transcript, the scratch file of a shell command still in
/// its grace period after the first signal's SIGTERM); a single signal's orderly end
/// removes it. It is removed before an exit on the spot too.
#[test]
fn an_exit_on_a_second_signal_leaves_no_session_directory() {
    let hung = Hung::new();
    // Nothing hangs: the command ignores SIGTERM, so it is in its grace period (2 s before
    // SIGKILL) when the second signal comes.
    let mut run = hung.run(
        &[json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
                 "input": {"command": "trap '' TERM; touch started; sleep 30"}})],
        "nothing-hangs-here",
        &hung.tmp,
    );
    wait_until("the command never started", || {
        hung.project.join("started").exists()
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        !hung.left_in_tmp().is_empty(),
        "the session's directory is not in TMPDIR"
    );
    kill(&mut run, "-INT");
    // Well inside the command's grace period (2 s from the first signal), however loaded
    // the machine: past it the command is killed and the run ends on the first signal.
    std::thread::sleep(Duration::from_millis(100));
    kill(&mut run, "-TERM");
    let status = wait_at_most(
        run.child(),
        Duration::from_secs(10),
        "the run did not end on a second signal",
    );
    let (_, stderr) = outputs(&hung, run);
    assert_eq!(status.code(), Some(143), "{stderr}");
    assert_eq!(hung.left_in_tmp(), Vec::<String>::new(), "{stderr}");
}
