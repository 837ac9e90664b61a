//! Review 39 of `toolwright serve`: a client that never reads serve's standard error (a
//! pipe it left full) is still answered, as a log must never stall the protocol (serve froze,
//! not even answering `ping`, once 64 KiB of notices filled the pipe); and a re-served
//! upstream tool's `idempotentHint: true` reaches the client with the other hints its
//! server stated (it was dropped).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
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

/// An upstream MCP server, in Python: one tool that states `readOnlyHint`,
/// `idempotentHint` and `openWorldHint` true, and one that states `idempotentHint: false`.
const UPSTREAM: &str = r#"
import sys, json
def out(o):
    sys.stdout.write(json.dumps(o) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line); i = m.get("id")
    if m.get("method") == "initialize":
        out({"jsonrpc": "2.0", "id": i, "result": {"protocolVersion": m["params"]["protocolVersion"],
             "capabilities": {"tools": {}}, "serverInfo": {"name": "up", "version": "1"}}})
    elif m.get("method") == "tools/list":
        out({"jsonrpc": "2.0", "id": i, "result": {"tools": [
            {"name": "again", "inputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": True}},
            {"name": "once", "inputSchema": {"type": "object"},
             "annotations": {"idempotentHint": False, "destructiveHint": True}}]}})
    elif i is not None:
        out({"jsonrpc": "2.0", "id": i, "result": {}})
"#;

/// The tools `serve` lists (as `tools/list` answers) with the Python upstream [`UPSTREAM`]
/// configured in `root`.
fn tools_served_with_upstream(root: &Path) -> Vec<Value> {
    let script = root.join("up.py");
    std::fs::write(&script, UPSTREAM).unwrap();
    let config = json!({"mcpServers": {"up": {"command": "python3", "args": [script]}}});
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--strict-mcp-config", "--mcp-config"])
        .arg(config.to_string())
        .arg("--cwd")
        .arg(root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .env("HOME", root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for m in [
        initialize(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    ] {
        writeln!(stdin, "{m}").unwrap();
    }
    stdin.flush().unwrap();
    let mut line = String::new();
    let mut list = Value::Null;
    while stdout.read_line(&mut line).unwrap() > 0 {
        let m: Value = serde_json::from_str(&line).unwrap();
        line.clear();
        if m["id"] == 1 {
            list = m;
            break;
        }
    }
    drop(stdin);
    wait_at_most(&mut child, STUCK, "serve did not end with its input");
    list["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// A re-served upstream tool gets every hint its server stated as true, `idempotentHint`
/// among them, and none it did not (its `idempotentHint: false` stays absent, as its
/// unstated `readOnlyHint` does); the built-in tools get no `idempotentHint`. Found by
/// review: `idempotentHint: true` was dropped, where docs/cli.md says the stated hints are
/// passed on.
#[test]
fn an_upstream_tools_idempotent_hint_is_passed_on() {
    let (_dir, root) = project();
    let tools = tools_served_with_upstream(&root);
    let annotations = |name: &str| {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} not served: {tools:?}"))["annotations"]
            .clone()
    };
    assert_eq!(
        annotations("mcp__up__again"),
        json!({"title": "mcp__up__again", "readOnlyHint": true, "idempotentHint": true,
               "openWorldHint": true})
    );
    assert_eq!(
        annotations("mcp__up__once"),
        json!({"title": "mcp__up__once", "destructiveHint": true})
    );
    for tool in &tools {
        if !tool["name"].as_str().unwrap().starts_with("mcp__") {
            assert!(
                tool["annotations"].get("idempotentHint").is_none(),
                "{tool}"
            );
        }
    }
}
