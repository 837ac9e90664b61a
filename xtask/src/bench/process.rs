//! Running and timing child processes.

use std::io::Read as _;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` to the end with its output captured and returns the wall time from spawn to
/// exit (output read included) and the output. A non-zero exit is an error.
pub fn timed(cmd: &mut Command) -> crate::Result<(Duration, Output)> {
    cmd.stdin(Stdio::null());
    let start = Instant::now();
    let out = cmd
        .output()
        .map_err(|e| format!("{}: could not start: {e}", describe(cmd)))?;
    let took = start.elapsed();
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            describe(cmd),
            out.status,
            tail(&out.stderr)
        )
        .into());
    }
    Ok((took, out))
}

/// Runs `cmd` with its output captured, killing it after `limit`. A non-zero exit is an error.
pub fn with_timeout(cmd: &mut Command, limit: Duration) -> crate::Result<Output> {
    let what = describe(cmd);
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{what}: could not start: {e}"))?;
    // Drain both pipes on threads so a chatty child never blocks on a full pipe.
    let drain = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = drain(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    );
    let err = drain(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    );
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("{what}: {e}"))? {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{what}: no result after {} s, killed", limit.as_secs()).into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = Output {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    };
    if !status.success() {
        return Err(format!("{what} failed ({status}): {}", tail(&output.stderr)).into());
    }
    Ok(output)
}

/// A child process that is killed when dropped (a server started for a bench).
#[derive(Debug)]
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The program and arguments of `cmd`, for messages.
pub fn describe(cmd: &Command) -> String {
    let program = Path::new(cmd.get_program())
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| {
            let a = a.to_string_lossy();
            if a.len() > 60 {
                format!("{}…", a.chars().take(60).collect::<String>())
            } else {
                a.into_owned()
            }
        })
        .collect();
    format!("{program} {}", args.join(" "))
}

/// The last few lines of a child's standard error.
pub fn tail(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.lines().rev().take(5).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join(" / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timed_returns_output_and_rejects_failure() {
        let (took, out) = timed(Command::new("sh").args(["-c", "echo hi"])).unwrap();
        assert_eq!(out.stdout, b"hi\n");
        assert!(took > Duration::ZERO);
        let err = timed(Command::new("sh").args(["-c", "echo boom >&2; exit 3"]))
            .unwrap_err()
            .to_string();
        assert!(err.contains("failed") && err.contains("boom"), "{err}");
    }

    #[test]
    fn with_timeout_kills_a_hanging_child() {
        let out = with_timeout(
            Command::new("sh").args(["-c", "echo ok"]),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(out.stdout, b"ok\n");
        let err = with_timeout(Command::new("sleep").arg("30"), Duration::from_millis(200))
            .unwrap_err()
            .to_string();
        assert!(err.contains("killed"), "{err}");
    }
}
