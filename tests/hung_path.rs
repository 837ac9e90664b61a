//! A path whose `realpath` never returns (a directory on a hung network mount), emulated for
//! real with an `LD_PRELOAD` library that makes `realpath(3)` of such a path block for ever:
//! the permission checks of Glob and Grep resolve where a path's links lead, and two such
//! calls once held both of the runtime's workers, so that not even the handler of SIGTERM
//! ran. The signal must end the run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/processes.rs"]
mod processes;

use std::process::{Command, Stdio};
use std::time::Duration;

use processes::{wait_at_most, wait_until};
use serde_json::json;

/// The library: `realpath` of a path holding `hung-mount` writes a line to the file named by
/// `HANG_MARK` and blocks for ever; other paths go to the real `realpath`.
const SHIM: &str = r#"
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *realpath(const char *path, char *resolved) {
    static char *(*real)(const char *, char *) = 0;
    if (!real) real = (char *(*)(const char *, char *))dlsym(RTLD_NEXT, "realpath");
    if (path && strstr(path, "hung-mount")) {
        const char *mark = getenv("HANG_MARK");
        if (mark) {
            int fd = open(mark, O_WRONLY | O_CREAT | O_APPEND, 0600);
            if (fd >= 0) { write(fd, "x\n", 2); close(fd); }
        }
        for (;;) pause();
    }
    return real(path, resolved);
}
"#;

/// A Bash call, then two Greps and a Glob of a directory whose `realpath` hangs, in one
/// response (they run in parallel, one more than the runtime's two workers): SIGTERM still
/// ends the run, with 143, instead of waiting for ever, and every block is answered in
/// order: the Bash call with its output, the stuck calls (answered by the executor after
/// its grace, their tasks left behind) as interrupted.
#[test]
fn a_signal_ends_a_run_whose_permission_checks_hang_in_realpath() {
    let dir = tempfile::tempdir().unwrap();
    let shim_c = dir.path().join("shim.c");
    let shim = dir.path().join("shim.so");
    std::fs::write(&shim_c, SHIM).unwrap();
    let built = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&shim)
        .arg(&shim_c)
        .arg("-ldl")
        .status()
        .expect("cc runs");
    assert!(built.success(), "the shim did not build");
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join("hung-mount")).unwrap();
    std::fs::write(project.join("hung-mount/a.txt"), "needle\n").unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let calls = [
        json!({"type": "tool_use", "id": "toolu_0", "name": "Bash",
               "input": {"command": "echo first"}}),
        json!({"type": "tool_use", "id": "toolu_1", "name": "Grep",
               "input": {"pattern": "needle", "path": "hung-mount"}}),
        json!({"type": "tool_use", "id": "toolu_2", "name": "Grep",
               "input": {"pattern": "other", "path": "hung-mount"}}),
        json!({"type": "tool_use", "id": "toolu_3", "name": "Glob",
               "input": {"pattern": "*.txt", "path": "hung-mount"}}),
    ];
    let input = dir.path().join("turn.jsonl");
    std::fs::write(
        &input,
        calls.iter().map(|c| format!("{c}\n")).collect::<String>(),
    )
    .unwrap();
    let mark = dir.path().join("stuck");
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["run", "--json", "--cwd"])
        .arg(&project)
        .arg(&input)
        .env("HOME", &home)
        .env("LD_PRELOAD", &shim)
        .env("HANG_MARK", &mark)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Two calls stuck: both workers would be, without the fix.
    wait_until("the calls never reached realpath", || {
        std::fs::read_to_string(&mark).is_ok_and(|m| m.lines().count() >= 2)
    });
    std::thread::sleep(Duration::from_millis(300));
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = wait_at_most(
        &mut child,
        tool_exec::STUCK_CALL_GRACE + Duration::from_secs(20),
        "the run did not end on SIGTERM while its permission checks hung",
    );
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(143), "{stderr}");
    let message: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{stderr}", String::from_utf8_lossy(&out.stdout)));
    let results: Vec<&serde_json::Value> = message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .collect();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["toolu_0", "toolu_1", "toolu_2", "toolu_3"],
        "{message}"
    );
    assert_eq!(results[0]["content"], "first", "{message}");
    for stuck in &results[1..] {
        assert_eq!(stuck["is_error"], true, "{message}");
    }
}
