//! How tools and hooks start child processes: out of reach of our terminal
//! ([`detach_from_terminal`]), and without this process's credentials when
//! `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` asks ([`scrub_credentials`]).

use std::process::Command;
use std::sync::OnceLock;

/// Where the shell `name` (`bash`) is: looked up in `PATH` first (Homebrew's bash 5 on
/// macOS, a NixOS profile's), else at `fallbacks` (`/bin/bash`): a `PATH` without `/bin`,
/// which a settings `env` may set, must not keep a command or a blocking hook from running.
/// `None` when none exists.
pub fn find_shell(name: &str, fallbacks: &[&str]) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let executable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let in_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .filter(|dir| dir.is_absolute())
            .map(|dir| dir.join(name))
            .find(|p| executable(p))
    });
    in_path.or_else(|| {
        fallbacks
            .iter()
            .map(std::path::PathBuf::from)
            .find(|p| executable(p))
    })
}

/// The variable that turns the credential scrub on: `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB`, read
/// as Claude Code reads its switches ([`env_truthy`](crate::env_truthy): `1`, `true`, `yes`,
/// `on`). See [`scrub_credentials`].
pub const SUBPROCESS_ENV_SCRUB: &str = "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB";

/// The credentials [`scrub_credentials`] takes out of a child's environment, each with its
/// GitHub Actions copy `INPUT_NAME` too (an action's `with:` inputs become `INPUT_*`
/// variables, `INPUT_ANTHROPIC_API_KEY`).
///
/// Claude Code's list (`GHA_SUBPROCESS_SCRUB` in its `utils/subprocessEnv.ts`, 2.1.83 and
/// later): Anthropic credentials (this process reads them itself, children never need them);
/// the OTLP exporters' header variables (they carry `Authorization=Bearer ...` for a
/// monitoring backend); the cloud SDKs' secrets (AWS secret key, session token and Bedrock
/// bearer token, Google's credentials file, Azure's client secret and certificate); GitHub
/// Actions' OIDC request token and URL (enough to mint an installation token) and runtime
/// token and URL (the artifact and cache API); and claude-code-action's copies of its inputs
/// (`ALL_INPUTS` holds the API key as JSON). Later Claude Code versions add Anthropic's
/// other credentials (`ANTHROPIC_AWS_API_KEY`, `ANTHROPIC_BEDROCK_MANTLE_API_KEY`,
/// `ANTHROPIC_FOUNDRY_AUTH_TOKEN`, `CLAUDE_CODE_ARTIFACTS_API_TOKEN`,
/// `CLAUDE_CODE_MEMORY_API_TOKEN`), which are here too.
///
/// Kept, as in Claude Code: `GITHUB_TOKEN` and `GH_TOKEN` (a workflow's `gh` calls need them;
/// the token is the job's own), `AWS_ACCESS_KEY_ID` (an identifier, useless without the
/// secret), and the CA bundle variables (`SSL_CERT_FILE`, `NODE_EXTRA_CA_CERTS`, ...): they
/// are no secrets, and without them `curl` or `git` behind a company's TLS proxy would fail.
pub const SCRUBBED_CREDENTIALS: &[&str] = &[
    // Anthropic.
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_FOUNDRY_API_KEY",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_AWS_API_KEY",
    "ANTHROPIC_BEDROCK_MANTLE_API_KEY",
    "ANTHROPIC_FOUNDRY_AUTH_TOKEN",
    "CLAUDE_CODE_ARTIFACTS_API_TOKEN",
    "CLAUDE_CODE_MEMORY_API_TOKEN",
    // OTLP exporter headers.
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_LOGS_HEADERS",
    "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    // Cloud providers.
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_SECRET",
    "AZURE_CLIENT_CERTIFICATE_PATH",
    // GitHub Actions: OIDC, then the artifact and cache API.
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_RUNTIME_URL",
    // claude-code-action's own copies of its inputs.
    "ALL_INPUTS",
    "OVERRIDE_GITHUB_TOKEN",
    "DEFAULT_WORKFLOW_TOKEN",
    "SSH_SIGNING_KEY",
];

/// Whether [`SUBPROCESS_ENV_SCRUB`] is on in this process's environment now (where the
/// settings' `env` puts it too). A value that is not UTF-8 leaves it off.
pub fn subprocess_env_scrub_on() -> bool {
    std::env::var_os(SUBPROCESS_ENV_SCRUB)
        .and_then(|v| v.into_string().ok())
        .is_some_and(|v| crate::env_truthy(&v))
}

/// The variables [`scrub_credentials`] removes: with [`SUBPROCESS_ENV_SCRUB`] on, every name
/// of [`SCRUBBED_CREDENTIALS`] and its `INPUT_` copy; with it off, none. Read from this
/// process's environment at each call. For a caller that builds a child's environment
/// itself rather than through a [`Command`].
pub fn credentials_to_scrub() -> Vec<std::ffi::OsString> {
    if !subprocess_env_scrub_on() {
        return Vec::new();
    }
    SCRUBBED_CREDENTIALS
        .iter()
        .flat_map(|name| [(*name).into(), format!("INPUT_{name}").into()])
        .collect()
}

/// Claude Code's `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB`: when [`SUBPROCESS_ENV_SCRUB`] is on in
/// this process's environment, `cmd`'s child does not inherit the credentials of
/// [`SCRUBBED_CREDENTIALS`] (nor their `INPUT_` copies), so a command a prompt injection
/// talks the model into (`curl -d "$ANTHROPIC_API_KEY" ...`) has none to send. This process
/// keeps them. Off (unset, `0`, `false`, anything not truthy), nothing changes. Read when
/// called, so call it for each child, as it is configured.
///
/// Every child that runs what the model or the configuration chose goes through it: Bash
/// commands (foreground and background), the REPL's interpreters, command hooks and MCP
/// stdio servers. Call it before setting the child's own variables (`cmd.env`): a variable
/// the configuration gives that child explicitly (an MCP server's `env`) is then still set,
/// as in Claude Code. A tokio command passes `cmd.as_std_mut()`.
pub fn scrub_credentials(cmd: &mut Command) -> &mut Command {
    for name in credentials_to_scrub() {
        cmd.env_remove(name);
    }
    cmd
}

/// Makes `cmd`'s child unable to reach this process's terminal, as Claude Code's detached
/// spawns do, so that a command that tries to read it (`sudo`, `ssh` or git asking for a
/// password) fails at once ("No such device or address") instead of being stopped by
/// `SIGTTIN` until its timeout, and the terminal's signals (Ctrl-C, Ctrl-Z) never reach it.
/// The child leads its own process group (its id is the group id), so the whole group can
/// be killed at once.
///
/// When this process has a controlling terminal the child starts a session of its own
/// ([`new_session`]); when it has none (a pipeline, CI, a server started by an MCP host)
/// there is no terminal to escape and a process group of its own is enough, which is
/// cheaper: the standard library can then start the child with `posix_spawn` instead of
/// `fork`. The groups the child's descendants make there (job control: `set -m; cmd &`)
/// are then in this process's session, beside everything else in it: a caller that must
/// find them once the child has exited marks the child's environment, which they inherit
/// (the Bash tool's commands and background tasks carry `TOOLWRIGHT_COMMAND`).
///
/// Do not also call `process_group` on `cmd`. A tokio command passes `cmd.as_std_mut()`.
pub fn detach_from_terminal(cmd: &mut Command) -> &mut Command {
    if has_controlling_terminal() {
        new_session(cmd)
    } else {
        use std::os::unix::process::CommandExt as _;
        cmd.process_group(0)
    }
}

/// Whether this process has a controlling terminal (`/dev/tty` opens), checked once.
pub fn has_controlling_terminal() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    // Opening /dev/tty never acquires a terminal: without one it fails with ENXIO.
    *HAS.get_or_init(|| std::fs::File::open("/dev/tty").is_ok())
}

/// Makes `cmd` start its child in a new session (`setsid` in the child before `exec`): no
/// controlling terminal, its own process group. Needs `fork` (a `pre_exec` step). Do not
/// also call `process_group` on `cmd`: a group leader cannot start a session.
#[allow(unsafe_code)]
pub fn new_session(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: the closure runs in the forked child before `exec`; it only calls setsid(2),
    // which is async-signal-safe, and converts an errno without allocating.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid()
                .map(drop)
                .map_err(|e| std::io::Error::from_raw_os_error(e as i32))
        })
    }
}

/// Makes `fd` the child's descriptor `target` (a protocol channel beside the standard
/// streams, say on 3), open across `exec`. The parent's copy is closed when `cmd` is dropped,
/// so drop `cmd` after spawning.
#[allow(unsafe_code)]
pub fn pass_fd(
    cmd: &mut Command,
    fd: std::os::fd::OwnedFd,
    target: std::os::fd::RawFd,
) -> &mut Command {
    use std::os::fd::AsRawFd as _;
    use std::os::unix::process::CommandExt as _;
    // SAFETY: the closure runs in the forked child before `exec`; it only calls fcntl(2) and
    // dup2(2), which are async-signal-safe, and converts an errno without allocating. The
    // descriptors it makes are left to `exec` (forgotten, never closed twice).
    unsafe {
        cmd.pre_exec(move || {
            let to_io = |e: nix::Error| std::io::Error::from_raw_os_error(e as i32);
            if fd.as_raw_fd() == target {
                // Already there (dup2 onto itself would keep close-on-exec): clear the flag.
                nix::fcntl::fcntl(
                    &fd,
                    nix::fcntl::FcntlArg::F_SETFD(nix::fcntl::FdFlag::empty()),
                )
                .map_err(to_io)?;
                return Ok(());
            }
            let made = nix::unistd::dup2_raw(&fd, target).map_err(to_io)?;
            std::mem::forget(made);
            Ok(())
        })
    }
}

/// This process's soft limit on open files (`RLIMIT_NOFILE`), `None` when it cannot be read
/// or there is none.
pub fn open_file_limit() -> Option<u64> {
    use nix::sys::resource::{Resource, getrlimit};
    let (soft, _) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    let soft = u64::from(soft);
    #[allow(clippy::unnecessary_cast)]
    (soft != nix::sys::resource::RLIM_INFINITY as u64).then_some(soft)
}

/// Raises this process's soft limit on open files (`RLIMIT_NOFILE`) towards its hard limit,
/// at most 65,536, as Node does at startup (Claude Code runs under that): macOS gives a
/// process 256 descriptors, and parallel tool calls with several hooks each (three pipes a
/// hook) ran out of them. Where the system refuses the hard limit (macOS past
/// `kern.maxfilesperproc` or `OPEN_MAX`), the highest soft limit it takes is found by
/// halving. Never lowers the limit. Children inherit it. Call it once, early in `main`.
/// Returns the soft limit now in effect.
pub fn raise_open_file_limit() -> std::io::Result<u64> {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    const CAP: u64 = 65_536;
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).map_err(std::io::Error::from)?;
    // `rlim_t` is 64 bits on every Unix we build for but 32-bit Linux; `RLIM_INFINITY` is
    // above the cap either way.
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    let (soft_now, target) = (u64::from(soft), u64::from(hard).min(CAP));
    #[allow(clippy::unnecessary_cast)]
    let set = |wanted: u64| setrlimit(Resource::RLIMIT_NOFILE, wanted as _, hard).is_ok();
    if soft_now >= target || set(target) {
        return Ok(soft_now.max(target));
    }
    // The system takes `low`, refused `high`: halve the gap until they meet.
    let (mut low, mut high) = (soft_now, target);
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if set(mid) {
            low = mid;
        } else {
            high = mid;
        }
    }
    // A refused setrlimit changes nothing: the last one taken, `low`, is in effect.
    Ok(low)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{detach_from_terminal, new_session, pass_fd};

    /// The child reads the pipe on the descriptor it was given, also when that is the very
    /// number the parent's copy has (where dup2 alone would leave it closed on exec).
    #[test]
    fn a_passed_descriptor_is_open_in_the_child() {
        use std::io::Write as _;
        use std::os::fd::AsRawFd as _;
        for same_number in [false, true] {
            let (reader, mut writer) = std::io::pipe().unwrap();
            let target = if same_number { reader.as_raw_fd() } else { 7 };
            let mut cmd = std::process::Command::new("sh");
            cmd.arg("-c")
                .arg(format!("cat <&{target}"))
                .stdout(std::process::Stdio::piped());
            pass_fd(&mut cmd, reader.into(), target);
            let child = cmd.spawn().unwrap();
            drop(cmd);
            writer.write_all(b"through the pipe").unwrap();
            drop(writer);
            let out = child.wait_with_output().unwrap();
            assert_eq!(
                out.stdout, b"through the pipe",
                "same number: {same_number}"
            );
        }
    }

    /// pid, session id and process group id of a child started with `prepare`, and what
    /// reading /dev/tty said.
    fn ids(prepare: fn(&mut std::process::Command) -> &mut std::process::Command) -> String {
        let mut cmd = std::process::Command::new("sh");
        // pid, then session and process group from /proc (stat fields 6 and 5).
        cmd.arg("-c")
            .arg("set -- $(cut -d')' -f2 /proc/$$/stat); echo $$ $4 $3; cat /dev/tty 2>&1; true");
        match prepare(&mut cmd).output() {
            Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
            Err(e) => panic!("spawn failed: {e}"),
        }
    }

    #[test]
    fn a_new_session_is_led_by_the_child_with_no_terminal() {
        let text = ids(new_session);
        let mut first = text.lines().next().unwrap_or_default().split_whitespace();
        let (pid, sid, pgid) = (first.next(), first.next(), first.next());
        assert!(pid.is_some() && pid == sid && pid == pgid, "{text}");
        assert!(text.contains("No such device or address"), "{text}");
    }

    #[test]
    fn a_detached_child_leads_its_own_group() {
        let text = ids(detach_from_terminal);
        let mut first = text.lines().next().unwrap_or_default().split_whitespace();
        let (pid, sid, pgid) = (first.next(), first.next(), first.next());
        assert!(pid.is_some() && pid == pgid, "{text}");
        if super::has_controlling_terminal() {
            assert_eq!(pid, sid, "{text}");
        }
    }
}

/// The user id this process acts as (its effective uid): the owner of what it creates, for
/// checks that a directory is its own.
#[cfg(unix)]
pub fn effective_uid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Kills (SIGKILL) every process of group `pgid`, the group of a child started with
/// [`detach_from_terminal`] (its id). A group that is gone is no error. Ids 0 and 1 are
/// refused: `killpg(0)` would be this process's own group.
pub fn kill_process_group(pgid: u32) {
    signal_process_group(pgid, nix::sys::signal::Signal::SIGKILL);
}

/// Asks (SIGTERM) every process of group `pgid` to end, as [`kill_process_group`] does
/// with SIGKILL: a process that cleans up on SIGTERM gets to.
pub fn terminate_process_group(pgid: u32) {
    signal_process_group(pgid, nix::sys::signal::Signal::SIGTERM);
}

/// Process groups this process left running on purpose, which are no longer its children
/// (their leader was reaped): a hook's background job that still held its pipes, ended by
/// a timer of its owner. [`kill_child_process_groups`] kills them too, since the exit that
/// calls it runs no destructors and no timers.
static TRACKED_GROUPS: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Keeps group `pgid` in the set [`kill_child_process_groups`] kills, until dropped.
#[derive(Debug)]
#[must_use = "the group is tracked only while the value lives"]
pub struct TrackedGroup(u32);

/// Tracks group `pgid` (see [`TrackedGroup`]): a process group left running after its
/// leader was reaped, which the last-resort kill at exit cannot find among this process's
/// children.
pub fn track_process_group(pgid: u32) -> TrackedGroup {
    TRACKED_GROUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(pgid);
    TrackedGroup(pgid)
}

impl Drop for TrackedGroup {
    fn drop(&mut self) {
        let mut groups = TRACKED_GROUPS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(at) = groups.iter().position(|&g| g == self.0) {
            groups.swap_remove(at);
        }
    }
}

/// Kills (SIGKILL) every descendant of this process and the group each is in (this
/// process's own excepted), and the groups tracked with [`track_process_group`]: the last
/// resort of a process about to exit at once (a second Ctrl-C), whose destructors would
/// have ended them. Its children run detached from the terminal ([`detach_from_terminal`]),
/// so nothing else reaches them: a command ignoring SIGTERM in its grace period, or a
/// process a command's `setsid` put in a group of its own, would outlive it.
/// Linux only (children are found in `/proc`); elsewhere it does nothing.
pub fn kill_child_process_groups() {
    let tracked: Vec<u32> = TRACKED_GROUPS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clone();
    for pgid in tracked {
        kill_process_group(pgid);
    }
    if !cfg!(target_os = "linux") {
        return;
    }
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    // Every process with its parent and group, read once: the descendants of this process
    // are found from it, those a `setsid` took out of their command's group too (while
    // their ancestors live), whose group no signal to the command's group reaches.
    let table: Vec<(u32, u32, u32)> = entries
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<u32>().ok()?;
            let fields = proc_stat(pid)?;
            let ppid = fields.get(1)?.parse().ok()?;
            let pgrp = fields.get(2)?.parse().ok()?;
            Some((pid, ppid, pgrp))
        })
        .collect();
    let own_group = table
        .iter()
        .find(|&&(pid, ..)| pid == me)
        .map(|&(.., pgrp)| pgrp);
    let mut descendants = std::collections::HashSet::from([me]);
    let mut parents = vec![me];
    while let Some(parent) = parents.pop() {
        for &(pid, ppid, _) in &table {
            if ppid == parent && descendants.insert(pid) {
                parents.push(pid);
            }
        }
    }
    for &(pid, _, pgrp) in &table {
        if pid == me || !descendants.contains(&pid) {
            continue;
        }
        if Some(pgrp) != own_group {
            kill_process_group(pgrp);
        }
        if let Ok(pid) = i32::try_from(pid) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// The fields of `/proc/PID/stat` after the command name: `state`, `ppid`, `pgrp`,
/// `session`, `tty_nr`, `tpgid`, `flags`, ... `None` when it cannot be read (no such process,
/// or no `/proc`).
pub fn proc_stat(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ...`; comm may hold spaces and parens.
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// Whether a process of group `pgid` still runs (a zombie has ended). Read from `/proc`;
/// without it, `false`.
pub fn group_running(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        entry
            .file_name()
            .to_str()
            .and_then(|pid| pid.parse::<u32>().ok())
            .and_then(proc_stat)
            .is_some_and(|fields| {
                fields
                    .first()
                    .is_some_and(|state| !matches!(state.as_str(), "Z" | "X" | "x"))
                    && fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid)
            })
    })
}

/// The name of signal `number` (`SIGKILL` for 9), when it is one.
pub fn signal_name(number: i32) -> Option<&'static str> {
    nix::sys::signal::Signal::try_from(number)
        .ok()
        .map(nix::sys::signal::Signal::as_str)
}

fn signal_process_group(pgid: u32, signal: nix::sys::signal::Signal) {
    if let Ok(pgid) = i32::try_from(pgid)
        && pgid > 1
    {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal);
    }
}
