//! Process-group helpers shared by Bash and background tasks.

use std::time::{Duration, Instant};

/// Sends SIGTERM (or SIGKILL when `hard`) to process group `pgid`, and to the groups its
/// members' descendants escaped to ([`escaped_groups`]: `setsid cmd`); a group that is
/// already gone is not an error.
pub(crate) fn kill_group(pgid: i32, hard: bool) {
    for group in escaped_groups(pgid).into_iter().chain([pgid]) {
        signal_group(group, hard);
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

/// The process groups, other than `pgid`, of the descendants of `pgid`'s members that left
/// it (`setsid cmd`, a shell's job control): a signal to the group does not reach them.
/// Found through the parent links in `/proc`, so only while their ancestors live: when the
/// group's leader is gone (the command ended), what it left behind belongs to init and is
/// not followed (nor is it scanned for: the common end of a command costs nothing). Never
/// this process's own group. Empty off Linux.
pub(crate) fn escaped_groups(pgid: i32) -> Vec<i32> {
    #[cfg(target_os = "linux")]
    {
        /// `(pid, parent, group, zombie)` from `/proc/PID/stat`.
        fn stat(pid: &str) -> Option<(i32, i32, i32, bool)> {
            let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let after = &text[text.rfind(')')? + 1..];
            let mut fields = after.split_whitespace();
            let zombie = fields.next()? == "Z";
            let parent = fields.next()?.parse().ok()?;
            let group = fields.next()?.parse().ok()?;
            Some((pid.parse().ok()?, parent, group, zombie))
        }
        // The leader alive: the tree below it is still linked.
        if stat(&pgid.to_string()).is_none_or(|(_, _, _, zombie)| zombie) {
            return Vec::new();
        }
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let procs: Vec<(i32, i32, i32, bool)> = entries
            .flatten()
            .filter_map(|e| stat(e.file_name().to_str()?))
            .collect();
        let own = nix::unistd::getpgrp().as_raw();
        let mut inside: Vec<i32> = procs.iter().filter(|p| p.2 == pgid).map(|p| p.0).collect();
        let mut escaped = Vec::new();
        let mut next = 0;
        while next < inside.len() {
            let parent = inside[next];
            next += 1;
            for &(pid, _, group, zombie) in procs.iter().filter(|p| p.1 == parent) {
                if inside.contains(&pid) {
                    continue;
                }
                inside.push(pid);
                if group != pgid
                    && group > 1
                    && group != own
                    && !zombie
                    && !escaped.contains(&group)
                {
                    escaped.push(group);
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

/// Whether any live (not zombie) process is in group `pgid`: signal 0 says whether the group
/// has any process; on Linux `/proc` then tells zombies (already dead) from the living.
pub(crate) fn group_alive(pgid: i32) -> bool {
    // The cheap answer first: no process at all in the group (the usual case).
    if nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None).is_err() {
        return false;
    }
    #[cfg(target_os = "linux")]
    {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return false;
        };
        entries.flatten().any(|entry| {
            if entry.file_name().to_string_lossy().parse::<u32>().is_err() {
                return false;
            }
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                return false;
            };
            let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
                return false;
            };
            let mut fields = after.split_whitespace();
            let state = fields.next();
            let group = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
            state != Some("Z") && group == Some(pgid)
        })
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
async fn group_alive_off_runtime(pgid: i32) -> bool {
    if nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), None).is_err() {
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
pub(crate) async fn terminate_group(child: &mut tokio::process::Child, pgid: i32, grace: Duration) {
    let deadline = tokio::time::Instant::now() + grace;
    // Found now, while the tree is whole: once the group's members die, what escaped it is
    // handed to init and out of sight.
    let escaped = escaped_groups(pgid);
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
    // The escaped groups within what is left of the grace, then SIGKILL.
    for group in escaped {
        let left = deadline.saturating_duration_since(tokio::time::Instant::now());
        if !wait_group_gone(group, left).await {
            signal_group(group, true);
            wait_group_gone(group, grace).await;
        }
    }
}
