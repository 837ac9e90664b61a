//! Processes seen from a test: whether one is still alive, and a bounded wait for a child.
#![allow(dead_code)]

use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// Whether a process whose command line contains `marker` is alive.
pub fn process_alive(marker: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|entry| {
        std::fs::read(entry.path().join("cmdline"))
            .is_ok_and(|cmd| String::from_utf8_lossy(&cmd).contains(marker))
    })
}

/// Waits (at most 30 s, looking every 10 ms) until `ready` holds; fails with `what` when it
/// never does.
pub fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Waits for `child` at most `limit`; kills it and fails with `what` when it is still
/// running.
pub fn wait_at_most(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
