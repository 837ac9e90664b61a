//! How tools and hooks start child processes: each in a session of its own.

use std::process::Command;

/// Makes `cmd` start its child in a new session (`setsid`), as Claude Code's detached
/// spawns do. The child then has no controlling terminal: a command that tries to read one
/// (`sudo`, `ssh` or git asking for a password) fails at once ("No such device or address")
/// instead of being stopped by `SIGTTIN` until its timeout, and the terminal's signals
/// (Ctrl-C, Ctrl-Z) never reach it. The child leads its own process group (its id is the
/// group id), so the whole group can be killed at once.
///
/// Do not also call `process_group` on `cmd`: a group leader cannot start a session, and
/// the spawn would fail. A tokio command passes `cmd.as_std_mut()`.
#[cfg(unix)]
#[allow(unsafe_code)]
pub fn spawn_in_new_session(cmd: &mut Command) -> &mut Command {
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

/// Elsewhere there is no session to leave: `cmd` is returned unchanged.
#[cfg(not(unix))]
pub fn spawn_in_new_session(cmd: &mut Command) -> &mut Command {
    cmd
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::spawn_in_new_session;

    /// The child is a session leader (session id = its pid), with no controlling terminal.
    #[test]
    fn child_leads_its_own_session() {
        let mut cmd = std::process::Command::new("sh");
        cmd.arg("-c")
            // pid, then session and process group from /proc (fields 6 and 5 of stat).
            .arg("set -- $(cut -d')' -f2 /proc/$$/stat); echo $$ $4 $3; cat /dev/tty 2>&1; true");
        let out = spawn_in_new_session(&mut cmd).output();
        let out = match out {
            Ok(out) => out,
            Err(e) => panic!("spawn failed: {e}"),
        };
        let text = String::from_utf8_lossy(&out.stdout);
        let mut first = text.lines().next().unwrap_or_default().split_whitespace();
        let (pid, sid, pgid) = (first.next(), first.next(), first.next());
        assert!(pid.is_some() && pid == sid && pid == pgid, "{text}");
        assert!(text.contains("No such device or address"), "{text}");
    }
}
