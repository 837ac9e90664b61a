//! Process-group helpers shared by Bash and background tasks.

use std::time::{Duration, Instant};

/// Sends SIGTERM (or SIGKILL when `hard`) to process group `pgid`; a group that is already
/// gone is not an error.
pub(crate) fn kill_group(pgid: i32, hard: bool) {
    let signal = if hard {
        nix::sys::signal::Signal::SIGKILL
    } else {
        nix::sys::signal::Signal::SIGTERM
    };
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), signal);
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
/// still be running for a moment.
pub(crate) async fn wait_group_gone(pgid: i32, limit: Duration) -> bool {
    let start = Instant::now();
    loop {
        if !group_alive(pgid) {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
