//! A hand-written Streamable HTTP MCP server, for the tests of `tools-mcp`: it misbehaves in
//! ways a server built on an SDK cannot be made to (rmcp and server-everything always answer
//! a ping).
//!
//! Usage: `raw_http_server --mode <stall-pings|drop-after-init|refuse-calls|fail-calls> [--log <file>]`.
//! It listens on a free port of 127.0.0.1 and prints the port as the first line of its
//! stdout. It offers one tool, `hang`, and every `notifications/cancelled` it receives is
//! appended to the log file as `cancelled <requestId> <reason>`.
//!
//! - `stall-pings`: `hang` opens an SSE stream and never sends anything on it, and no `ping`
//!   is ever answered (as a server whose process is stopped, or behind a proxy that holds
//!   requests, would behave).
//! - `drop-after-init`: `initialize` is answered, and every later request closes the
//!   connection without an answer (as a server that crashes on each request would).
//! - `refuse-calls`: every `tools/call` is answered `404 Not Found`, the answer for a
//!   session the server does not know (as a server that lost its sessions for good would),
//!   and logged as `call refused`.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    StallPings,
    DropAfterInit,
    RefuseCalls,
    /// Answers every call with `500 Internal Server Error` and a page.
    FailCalls,
}

#[derive(Clone)]
struct Server {
    mode: Mode,
    log: Option<String>,
}

impl Server {
    fn log(&self, line: &str) {
        if let Some(path) = &self.log {
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .unwrap();
            writeln!(f, "{line}").unwrap();
        }
    }
}

/// One request: its method and body (headers other than `Content-Length` are ignored).
struct Request {
    method: String,
    body: Vec<u8>,
}

/// Reads one HTTP/1.1 request from `stream`, keeping what follows it in `buf`. `None` when
/// the connection ends.
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Request> {
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let method = head
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned();
    let length: usize = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    let body_start = head_end + 4;
    while buf.len() < body_start + length {
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = buf[body_start..body_start + length].to_vec();
    buf.drain(..body_start + length);
    Some(Request { method, body })
}

async fn respond(stream: &mut TcpStream, status: &str, headers: &str, body: &str) -> bool {
    let text = format!(
        "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(text.as_bytes()).await.is_ok()
}

async fn json_answer(stream: &mut TcpStream, id: &Value, result: Value) -> bool {
    let body = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    respond(
        stream,
        "200 OK",
        "Content-Type: application/json\r\nMcp-Session-Id: raw-session\r\n",
        &body,
    )
    .await
}

async fn serve_connection(server: Server, mut stream: TcpStream) {
    let mut buf = Vec::new();
    while let Some(request) = read_request(&mut stream, &mut buf).await {
        match request.method.as_str() {
            "POST" => {}
            // No standalone SSE stream, and nothing to delete.
            "GET" => {
                if !respond(&mut stream, "405 Method Not Allowed", "", "").await {
                    return;
                }
                continue;
            }
            _ => {
                if !respond(&mut stream, "200 OK", "", "").await {
                    return;
                }
                continue;
            }
        }
        let Ok(message) = serde_json::from_slice::<Value>(&request.body) else {
            respond(&mut stream, "400 Bad Request", "", "").await;
            return;
        };
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        let id = message.get("id").cloned();
        let Some(id) = id else {
            // A notification.
            if method == "notifications/cancelled" {
                let params = &message["params"];
                server.log(&format!(
                    "cancelled {} {}",
                    params["requestId"],
                    params["reason"].as_str().unwrap_or_default()
                ));
            }
            if !respond(&mut stream, "202 Accepted", "", "").await {
                return;
            }
            continue;
        };
        if method != "initialize" && server.mode == Mode::DropAfterInit {
            // Read, then gone without a word.
            return;
        }
        let answered = match method.as_str() {
            "initialize" => {
                let version = message["params"]["protocolVersion"].clone();
                json_answer(
                    &mut stream,
                    &id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "raw_http_server", "version": "0"}
                    }),
                )
                .await
            }
            "tools/list" => {
                json_answer(
                    &mut stream,
                    &id,
                    json!({"tools": [{"name": "hang", "description": "Never answers",
                                      "inputSchema": {"type": "object"}}]}),
                )
                .await
            }
            "tools/call" if server.mode == Mode::FailCalls => {
                server.log("call failed");
                respond(
                    &mut stream,
                    "500 Internal Server Error",
                    "Content-Type: text/html\r\n",
                    "<html><body>database down</body></html>",
                )
                .await
            }
            "tools/call" if server.mode == Mode::RefuseCalls => {
                server.log("call refused");
                respond(&mut stream, "404 Not Found", "", "").await
            }
            "tools/call" => {
                server.log("call started");
                // An SSE stream that stays open and silent.
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                            Cache-Control: no-cache\r\nMcp-Session-Id: raw-session\r\n\r\n";
                let _ = stream.write_all(head.as_bytes()).await;
                let _ = stream.flush().await;
                std::future::pending::<()>().await;
                false
            }
            "ping" => {
                server.log("ping held");
                std::future::pending::<()>().await;
                false
            }
            _ => {
                let body = json!({"jsonrpc": "2.0", "id": id,
                                  "error": {"code": -32601, "message": "Method not found"}})
                .to_string();
                respond(
                    &mut stream,
                    "200 OK",
                    "Content-Type: application/json\r\n",
                    &body,
                )
                .await
            }
        };
        if !answered {
            return;
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let mode = match value("--mode").as_deref() {
        Some("stall-pings") => Mode::StallPings,
        Some("drop-after-init") => Mode::DropAfterInit,
        Some("refuse-calls") => Mode::RefuseCalls,
        Some("fail-calls") => Mode::FailCalls,
        other => panic!("unknown --mode {other:?}"),
    };
    let server = Server {
        mode,
        log: value("--log"),
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    println!("{}", listener.local_addr().unwrap().port());
    std::io::stdout().flush().unwrap();
    loop {
        let (stream, _) = listener.accept().await.unwrap();
        tokio::spawn(serve_connection(server.clone(), stream));
    }
}
