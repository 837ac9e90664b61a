//! Process-group helpers shared by Bash and background tasks.

use std::time::{Duration, Instant};

/// A command's exit code as its shell would give it: a process killed by a signal is 128 +
/// its number (137 for SIGKILL, 139 for a segmentation fault), which tells an out-of-memory
/// kill from a crash.
pub(crate) fn shell_exit_code(status: std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt as _;
    status.code().or_else(|| status.signal().map(|n| 128 + n))
}

/// Sends SIGTERM (or SIGKILL when `hard`) to process group `pgid`, and to the groups its
/// members' descendants escaped to ([`escaped_groups`]: `setsid cmd`); a group that is
/// already gone is not an error.
pub(crate) fn kill_group(pgid: i32, hard: bool) {
    for group in escaped_groups(pgid)
        .into_iter()
        .chain(session_groups(pgid))
        .chain([pgid])
    {
        signal_group(group, hard);
    }
}

/// The process groups, other than `sid`, of live processes in session `sid`, when commands
/// run in sessions of their own (this process has a terminal, so each command's shell leads
/// a new session whose id is its group's): what the command left there in groups of their
/// own (job control, `set -m; cmd &`), which outlives its leader and its parent links but
/// keeps the session. Empty otherwise (a command then shares this process's session), and
/// off Linux.
pub(crate) fn session_groups(sid: i32) -> Vec<i32> {
    #[cfg(target_os = "linux")]
    {
        if !tool_core::process::has_controlling_terminal()
            || sid == nix::unistd::getsid(None).map_or(0, nix::unistd::Pid::as_raw)
        {
            return Vec::new();
        }
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut groups: Vec<i32> = entries
            .flatten()
            .filter_map(|e| proc_stat(e.file_name().to_str()?.parse().ok()?))
            .filter(|p| p.session == sid && p.group != sid && !p.zombie)
            .map(|p| p.group)
            .collect();
        groups.sort_unstable();
        groups.dedup();
        groups
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = sid;
        Vec::new()
    }
}

/// The variable each command's shell starts with, set to a mark of its own
/// ([`new_mark`]), which every process it starts inherits (a forked subshell as much as a
/// program it runs): how [`left_groups`] tells the groups a command's descendants made (job
/// control: `set -m; cmd &`) from others in this process's session, where they stay without
/// a terminal, once the shell is gone and with it their parent links. A process that clears
/// its environment (`env -i`) is not found.
pub(crate) const GROUP_MARK: &str = "TOOLWRIGHT_COMMAND";

/// A new mark for a command ([`GROUP_MARK`]): this process's id and a count, which no other
/// command of any process has.
pub(crate) fn new_mark() -> String {
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{}.{n}", std::process::id())
}

/// How long a command may have run for [`left_groups`] to read only the ids given out since
/// it started: the pid counter (32,768 ids on many systems) cannot come round in less.
const PID_WRAP_GUARD: Duration = Duration::from_secs(1);

/// At most this many ids are read one by one (each a `/proc/PID/stat` that is usually
/// missing); past it, `/proc` is listed.
const MAX_PROBED_IDS: i32 = 64;

/// The process groups, other than `pgid`, that the command whose shell led group `pgid`
/// (with `mark` as its [`GROUP_MARK`]) left alive when its shell exited: those in the
/// session the shell led (under a terminal) and those in this process's session whose
/// processes carry the command's mark. Only processes made since the command started can be either, and
/// while the pid counter cannot have come round since (it ran less than
/// [`PID_WRAP_GUARD`]), those have the ids after `pgid` up to the last one given out
/// (`/proc/sys/kernel/ns_last_pid`; past the counter's end, from its start): only those are
/// read, so the usual end of a command reads a few missing entries at most. Never this
/// process's own group. Empty off Linux.
pub(crate) fn left_groups(pgid: i32, mark: &str, ran: Duration) -> Vec<i32> {
    scan_left_groups(pgid, mark, ran, true).unwrap_or_default()
}

/// [`left_groups`]; `None` when that needs a listing of `/proc` (many ids given out since
/// the command started, or it ran long) and `may_list` is false.
fn scan_left_groups(pgid: i32, mark: &str, ran: Duration, may_list: bool) -> Option<Vec<i32>> {
    #[cfg(target_os = "linux")]
    {
        let last = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
            .ok()
            .and_then(|s| s.trim().parse::<i32>().ok())
            .filter(|_| ran < PID_WRAP_GUARD);
        let own_session = nix::unistd::getsid(None).map_or(0, nix::unistd::Pid::as_raw);
        let own_group = nix::unistd::getpgrp().as_raw();
        let mark = format!("{GROUP_MARK}={mark}\0");
        // Whether the command left `p` (`None`: its environment reads empty, as in the
        // middle of an `exec`, and the answer has to wait).
        let left_by_it = |p: &ProcStat, patient: bool| -> Option<bool> {
            if p.zombie || p.group == pgid || p.group == own_group {
                return Some(false);
            }
            if p.session == pgid {
                return Some(true);
            }
            if p.session != own_session {
                return Some(false);
            }
            let mut tries = 0;
            loop {
                match environ_holds(p.pid, mark.as_bytes()) {
                    Some(holds) => return Some(holds),
                    None if !patient => return None,
                    None if tries >= EXEC_RETRIES => return Some(false),
                    None => {
                        tries += 1;
                        std::thread::sleep(Duration::from_millis(2));
                    }
                }
            }
        };
        let mut groups: Vec<i32> = match last {
            // Each id given out since, read directly; an answer that has to wait is waited
            // for off the runtime.
            Some(last) if last >= pgid && last - pgid <= MAX_PROBED_IDS => {
                let mut groups = Vec::new();
                for p in (pgid + 1..=last).filter_map(proc_stat) {
                    match left_by_it(&p, may_list) {
                        Some(true) => groups.push(p.group),
                        Some(false) => {}
                        None => return None,
                    }
                }
                groups
            }
            _ if !may_list => return None,
            _ => {
                let Ok(entries) = std::fs::read_dir("/proc") else {
                    return Some(Vec::new());
                };
                let since = |pid: i32| match last {
                    Some(last) if last >= pgid => pid > pgid && pid <= last,
                    Some(last) => pid > pgid || pid <= last,
                    None => true,
                };
                entries
                    .flatten()
                    .filter_map(|e| e.file_name().to_str()?.parse().ok())
                    .filter(|&pid| since(pid))
                    .filter_map(proc_stat)
                    .filter(|p| left_by_it(p, true) == Some(true))
                    .map(|p| p.group)
                    .collect()
            }
        };
        groups.sort_unstable();
        groups.dedup();
        Some(groups)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (pgid, mark, ran, may_list);
        Some(Vec::new())
    }
}

/// How many times [`left_groups`] reads again, 2 ms apart, an environment that read empty.
const EXEC_RETRIES: u32 = 10;

/// Whether process `pid`'s environment holds `entry` (`NAME=value` and its NUL): no when the
/// process is gone or not this user's to read; `None` when it reads empty or fails
/// otherwise, as it does while the process runs `exec` (its old memory gone, its new
/// environment not yet in place).
#[cfg(target_os = "linux")]
fn environ_holds(pid: i32, entry: &[u8]) -> Option<bool> {
    match std::fs::read(format!("/proc/{pid}/environ")) {
        Ok(env) if env.is_empty() => None,
        Ok(env) => {
            Some(memchr::memmem::find_iter(&env, entry).any(|at| at == 0 || env[at - 1] == 0))
        }
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied
            ) || e.raw_os_error() == Some(nix::errno::Errno::ESRCH as i32) =>
        {
            Some(false)
        }
        Err(_) => None,
    }
}

/// Ends what the command whose shell led group `pgid` (with `mark`) left running when its
/// shell exited (reaped after running for `ran`): the rest of its group (`server &`, `nohup`), the
/// groups job control made ([`left_groups`]), and the groups those escaped to; all get
/// SIGKILL, and are waited for (at most `grace` each). Whether there was anything. The usual
/// end, with nothing left, costs a few reads of `/proc` and no wait; a wider read runs on
/// Tokio's blocking pool.
pub(crate) async fn stop_left_running(
    pgid: i32,
    mark: &str,
    ran: Duration,
    grace: Duration,
) -> bool {
    let left = match scan_left_groups(pgid, mark, ran, false) {
        Some(left) => left,
        None => {
            let mark = mark.to_owned();
            tokio::task::spawn_blocking(move || left_groups(pgid, &mark, ran))
                .await
                .unwrap_or_default()
        }
    };
    // The group itself: signal 0 says whether it has any process, `/proc` (off the
    // runtime) whether one is alive, not a zombie. Its session was read above.
    let group_left = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None).is_ok()
        && tokio::task::spawn_blocking(move || {
            u32::try_from(pgid).is_ok_and(tool_core::process::group_running)
        })
        .await
        // A runtime shutting down cannot say: taken as alive.
        .unwrap_or(true);
    if left.is_empty() && !group_left {
        return false;
    }
    for &group in &left {
        kill_group(group, true);
    }
    kill_group(pgid, true);
    wait_group_gone(pgid, grace).await;
    for group in left {
        wait_group_gone(group, grace).await;
    }
    true
}

/// SIGKILL, at once and without waiting, to what the command whose shell leads group `pgid`
/// (with `mark` as its [`GROUP_MARK`], started `ran` ago) has running: its group with the
/// groups that escaped it ([`kill_group`]), then the groups job control made
/// ([`left_groups`]: `set -m; cmd &`, out of the group and, once their subshell exited, out
/// of its parent links). For an end that cannot wait: every task killed at once, the
/// process on its way out.
pub(crate) fn kill_command(pgid: i32, mark: &str, ran: Duration) {
    // The group first, so that it makes no more while the others are looked for.
    kill_group(pgid, true);
    for group in left_groups(pgid, mark, ran) {
        kill_group(group, true);
    }
}

fn signal_group(pgid: i32, hard: bool) {
    let signal = if hard {
        nix::sys::signal::Signal::SIGKILL
    } else {
        nix::sys::signal::Signal::SIGTERM
    };
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal);
}

/// The process groups, other than `pgid`, that descendants of `pgid`'s members lead after
/// leaving it (`setsid cmd`, a shell's job control): a signal to the group does not reach
/// them. Found through the parent links in `/proc`, so only while their ancestors live: when
/// the group's leader is gone (the command ended), what it left behind belongs to init and
/// is not followed (nor is it scanned for: the common end of a command costs nothing). Only
/// groups whose leader is such a descendant (never a group it joined, another command's),
/// never this process's own. Empty off Linux.
pub(crate) fn escaped_groups(pgid: i32) -> Vec<i32> {
    #[cfg(target_os = "linux")]
    {
        // The leader alive: the tree below it is still linked.
        if proc_stat(pgid).is_none_or(|s| s.zombie) {
            return Vec::new();
        }
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let procs: Vec<ProcStat> = entries
            .flatten()
            .filter_map(|e| proc_stat(e.file_name().to_str()?.parse().ok()?))
            .collect();
        let mut children: std::collections::HashMap<i32, Vec<&ProcStat>> =
            std::collections::HashMap::new();
        for p in &procs {
            children.entry(p.parent).or_default().push(p);
        }
        let own = nix::unistd::getpgrp().as_raw();
        let mut seen: std::collections::HashSet<i32> = procs
            .iter()
            .filter(|p| p.group == pgid)
            .map(|p| p.pid)
            .collect();
        let mut queue: Vec<i32> = seen.iter().copied().collect();
        let mut escaped = Vec::new();
        while let Some(parent) = queue.pop() {
            for child in children.get(&parent).into_iter().flatten() {
                if !seen.insert(child.pid) {
                    continue;
                }
                queue.push(child.pid);
                // A group it leads: made by a descendant of ours.
                if child.group == child.pid && child.group != own && !child.zombie {
                    escaped.push(child.group);
                }
            }
        }
        escaped
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pgid;
        Vec::new()
    }
}

/// What `/proc/PID/stat` says of a process.
#[cfg(target_os = "linux")]
struct ProcStat {
    pid: i32,
    parent: i32,
    group: i32,
    session: i32,
    zombie: bool,
}

#[cfg(target_os = "linux")]
fn proc_stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 1..];
    let mut fields = after.split_whitespace();
    let zombie = fields.next()? == "Z";
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some(ProcStat {
        pid,
        parent,
        group,
        session,
        zombie,
    })
}

/// Whether any live (not zombie) process is in group `pgid`, or in the session a command
/// leads ([`session_groups`]): signal 0 says whether the group has any process; on Linux
/// `/proc` then tells zombies (already dead) from the living.
pub(crate) fn group_alive(pgid: i32) -> bool {
    // What the command left in its session, in groups of its own, counts too.
    if !session_groups(pgid).is_empty() {
        return true;
    }
    // The cheap answer first: no process at all in the group (the usual case).
    if nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None).is_err() {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        u32::try_from(pgid).is_ok_and(tool_core::process::group_running)
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

/// Waits (at most `limit`) until nothing in group `pgid` is alive, so that a caller told
/// "stopped" can rely on it. Signals are delivered asynchronously: a process sent SIGKILL may
/// still be running for a moment. The scan of `/proc` runs on Tokio's blocking pool, never on
/// the async worker threads.
pub(crate) async fn wait_group_gone(pgid: i32, limit: Duration) -> bool {
    let start = Instant::now();
    loop {
        if !group_alive_off_runtime(pgid).await {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// [`group_alive`] without blocking an async worker: the cheap signal-0 probe here, the scan
/// of `/proc` (only when the group still has a process, maybe a zombie) on the blocking pool.
pub(crate) async fn group_alive_off_runtime(pgid: i32) -> bool {
    // The cheap answer, unless what the command left in its own session counts too.
    if !tool_core::process::has_controlling_terminal()
        && nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None).is_err()
    {
        return false;
    }
    // A runtime shutting down cannot run it: the group is taken as still there.
    tokio::task::spawn_blocking(move || group_alive(pgid))
        .await
        .unwrap_or(true)
}

/// Ends process group `pgid`, led by `child`: SIGTERM to the group, then SIGKILL once `grace`
/// has passed since, unless the whole group is gone by then; `child` is reaped, and nothing
/// of the group is left alive when this returns (bounded by another `grace` after SIGKILL).
///
/// The grace is the group's, not only the leader's: a `bash -c` wrapper dies at once on
/// SIGTERM, while what it started (a server, a shell whose TERM trap cleans up) is still
/// finishing. Waiting for the leader alone sent them SIGKILL at once.
///
/// With `marked` (the command's [`GROUP_MARK`] and when it started), the groups job control
/// made ([`left_groups`]: `set -m; cmd &`, which neither the group's signal nor its parent
/// links reach once their subshell exited) go too: they get SIGTERM with the group and
/// SIGKILL when they outlive the grace, and those made meanwhile (found again once the group
/// is gone) SIGKILL.
pub(crate) async fn terminate_command(
    child: &mut tokio::process::Child,
    pgid: i32,
    marked: Option<(&str, Instant)>,
    grace: Duration,
) {
    let deadline = tokio::time::Instant::now() + grace;
    let marked = marked.map(|(mark, started)| (mark.to_owned(), started));
    // Found now, while the tree is whole: once the group's members die, what escaped it is
    // handed to init and out of sight. (The scan of `/proc` on the blocking pool.)
    let escaped = tokio::task::spawn_blocking({
        let marked = marked.clone();
        move || {
            let mut groups = escaped_groups(pgid);
            if let Some((mark, started)) = marked {
                groups.extend(left_groups(pgid, &mark, started.elapsed()));
            }
            groups.sort_unstable();
            groups.dedup();
            groups
        }
    })
    .await
    .unwrap_or_default();
    // Out of sight once their ancestors are gone: tracked while this waits on them, so that
    // an exit at once meanwhile (a second Ctrl-C) still kills them.
    let _tracked: Vec<tool_core::process::TrackedGroup> = escaped
        .iter()
        .filter_map(|&group| u32::try_from(group).ok())
        .map(tool_core::process::track_process_group)
        .collect();
    for &group in &escaped {
        signal_group(group, false);
    }
    signal_group(pgid, false);
    let reaped = tokio::time::timeout_at(deadline, child.wait())
        .await
        .is_ok();
    // The rest of the grace for the rest of the group, once the leader is gone.
    let gone = reaped
        && wait_group_gone(
            pgid,
            deadline.saturating_duration_since(tokio::time::Instant::now()),
        )
        .await;
    if !gone {
        // Whatever ignored SIGTERM, or outlived the grace.
        kill_group(pgid, true);
        if !reaped {
            let _ = child.wait().await;
        }
        wait_group_gone(pgid, grace).await;
    }
    // The escaped groups within what is left of the grace, then SIGKILL to those left, all
    // waited for together.
    let mut left = Vec::new();
    for group in escaped {
        let rest = deadline.saturating_duration_since(tokio::time::Instant::now());
        if !wait_group_gone(group, rest).await {
            left.push(group);
        }
    }
    // What job control made while the command was being stopped (a TERM trap's `set -m;
    // cmd &`), found by the mark now that the command is gone.
    if let Some((mark, started)) = marked {
        let later =
            tokio::task::spawn_blocking(move || left_groups(pgid, &mark, started.elapsed()))
                .await
                .unwrap_or_default();
        for group in later {
            if !left.contains(&group) {
                left.push(group);
            }
        }
    }
    let killed = tokio::time::Instant::now() + grace;
    for &group in &left {
        signal_group(group, true);
    }
    for group in left {
        let rest = killed.saturating_duration_since(tokio::time::Instant::now());
        wait_group_gone(group, rest).await;
    }
}
