//! Review 30: `toolwright serve` never answers a Read with "File unchanged since last
//! read": an MCP server cannot see conversations (a client keeps it across chats, and
//! sessionless clients share its state), so the earlier result the stub points to may never
//! have reached the model asking. The read still counts for a later Edit.

use std::io::{BufRead, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve_support::UrlServer;

/// How long an answer may take before the test fails.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// The stub's first words.
const STUB: &str = "File unchanged since last read";

/// `toolwright serve` over stdio in `project` (acceptEdits, no user configuration),
/// initialized; its stdin and a channel of its output lines.
fn stdio_server(
    project: &Path,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    mpsc::Receiver<String>,
) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--mode", "acceptEdits", "--cwd"])
        .arg(project)
        .env("CLAUDE_CONFIG_DIR", project.join(".no-user-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let output = BufReader::new(child.stdout.take().unwrap());
    let (lines, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in output.lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    (child, stdin, rx)
}

/// Sends request `id` and returns its response (skipping notifications).
fn request(
    stdin: &mut std::process::ChildStdin,
    out: &mpsc::Receiver<String>,
    id: u64,
    method: &str,
    params: Value,
) -> Value {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
    loop {
        let line = out
            .recv_timeout(ANSWER_TIMEOUT)
            .expect("no answer from the server");
        let value: Value = serde_json::from_str(&line).unwrap();
        if value["id"] == id {
            return value;
        }
    }
}

/// The text of a `tools/call` response's content.
fn result_text(response: &Value) -> String {
    response["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content: {response}"))
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Over stdio, the same Read twice returns the content both times (the client may have
/// started a new chat in between), and the Read still lets a later Edit through.
#[test]
fn a_read_over_stdio_always_returns_the_content() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let file = root.join("notes.txt");
    std::fs::write(&file, "served line\n").unwrap();
    let (mut child, mut stdin, out) = stdio_server(&root);
    let init = request(
        &mut stdin,
        &out,
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "review30", "version": "1"}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    let read = json!({"name": "Read", "arguments": {"file_path": file}});
    for id in [2, 3] {
        let response = request(&mut stdin, &out, id, "tools/call", read.clone());
        let text = result_text(&response);
        assert!(
            text.contains("served line") && !text.contains(STUB),
            "Read #{id}: {text}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let edit = json!({"name": "Edit", "arguments": {"file_path": file,
        "old_string": "served", "new_string": "edited"}});
    let response = request(&mut stdin, &out, 4, "tools/call", edit);
    assert_eq!(response["result"]["isError"], false, "{response}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "edited line\n");
    drop(stdin);
    let _ = child.wait();
}

/// One POST on a connection of its own (a client of its own) to the HTTP endpoint, as a
/// 2026-07-28 client sends it (no session); the whole response body.
fn post_sessionless(server: &UrlServer, body: &Value) -> String {
    let method = body["method"].as_str().unwrap();
    let name = body["params"]["name"].as_str().unwrap();
    let port = server.port();
    let path = server.path();
    let body = body.to_string();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(ANSWER_TIMEOUT)).unwrap();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\nMcp-Name: {name}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

/// Over Streamable HTTP on protocol 2026-07-28 (no sessions: every client shares one
/// state), client A's Read does not make client B's Read of the same file a stub pointing
/// at a result B never received.
#[test]
fn a_sessionless_clients_read_is_not_another_ones_stub() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let file = root.join("shared.txt");
    std::fs::write(&file, "shared line\n").unwrap();
    let server = UrlServer::toolwright_http(&root, &[]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "review30", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    for (id, client) in [(1, "A"), (2, "B")] {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "Read", "arguments": {"file_path": file}, "_meta": meta}});
        let response = post_sessionless(&server, &call);
        assert!(
            response.contains("shared line") && !response.contains(STUB),
            "client {client}: {response}"
        );
    }
}
