//! Review 39 of `toolwright serve`: a client that never reads serve's standard error (a
//! pipe it left full) is still answered, as a log must never stall the protocol (serve froze,
//! not even answering `ping`, once 64 KiB of notices filled the pipe).

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::processes::wait_at_most;

/// A temporary project, canonicalised.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// How long the test waits for an answer before it calls the server stuck: far longer than
/// any answer takes (a few milliseconds), so that only a server that stopped answering
/// reaches it.
const STUCK: Duration = Duration::from_secs(60);

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
}

/// `serve` over stdio whose standard error is a pipe nothing reads: 2,000 requests for an
/// unknown method (each answered with an error, and a notice of ~300 bytes on stderr: 600
/// KB, far past the pipe's 64 KiB) are all answered, then a `ping`, and the server still
/// ends on SIGTERM. Found by review: after about 200 of them the server answered nothing
/// more, not even `ping`, for good.
#[test]
fn a_client_that_never_reads_stderr_is_still_answered() {
    const BAD: u64 = 2_000;
    let (_dir, root) = project();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--cwd"])
        .arg(&root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .env("HOME", &root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        // Kept open and never read.
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _stderr = child.stderr.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The answers, read by a thread, so that a server that stops answering fails the test
    // instead of hanging it.
    let (answers, answered) = mpsc::channel::<Value>();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in stdout.lines() {
            let Ok(line) = line else { break };
            if answers.send(serde_json::from_str(&line).unwrap()).is_err() {
                break;
            }
        }
    });
    // Written by a thread too: a stuck server stops reading its input.
    let (go_on, ping_now) = mpsc::channel::<()>();
    let writer = std::thread::spawn(move || {
        let mut send = |m: Value| writeln!(stdin, "{m}").and_then(|()| stdin.flush());
        send(initialize()).unwrap();
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        for id in 1..=BAD {
            let method = format!("no/such/method/{}", "x".repeat(200));
            if send(json!({"jsonrpc": "2.0", "id": id, "method": method})).is_err() {
                return stdin;
            }
        }
        let _ = ping_now.recv();
        let _ = send(json!({"jsonrpc": "2.0", "id": "ping", "method": "ping"}));
        stdin
    });
    let init = answered
        .recv_timeout(STUCK)
        .expect("no answer to initialize");
    assert!(init.get("result").is_some(), "{init}");
    // Answered in any order (requests are served side by side).
    let mut ids = std::collections::BTreeSet::new();
    for n in 1..=BAD {
        let Ok(answer) = answered.recv_timeout(STUCK) else {
            let _ = child.kill();
            panic!(
                "{} of {BAD} requests answered: the server stopped answering",
                n - 1
            );
        };
        assert_eq!(answer["error"]["code"], -32601, "{answer}");
        assert!(ids.insert(answer["id"].as_u64().unwrap()), "{answer}");
    }
    assert_eq!(ids, (1..=BAD).collect());
    go_on.send(()).unwrap();
    let Ok(pong) = answered.recv_timeout(STUCK) else {
        let _ = child.kill();
        panic!("no answer to ping");
    };
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": "ping", "result": {}}));
    // A signal still ends it, its standard error still full.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let status = wait_at_most(&mut child, STUCK, "serve did not end on SIGTERM");
    assert_eq!(status.code(), Some(143), "{status:?}");
    drop(writer.join().unwrap());
}
