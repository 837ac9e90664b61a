//! Session 34 on `toolwright serve --http`: ending a session (`DELETE`) answers `200 OK`,
//! as the TypeScript and Python SDKs' servers do (the Python SDK's client warns "Session
//! termination failed: 202" at every close when it gets rmcp's `202 Accepted`); a session
//! already ended, or never made, is `404 Not Found`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::time::Duration;

use crate::serve_support::UrlServer as Server;

/// A temporary project, canonicalised.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// One raw HTTP/1.1 request (`Connection: close`): the status code, the headers (names in
/// lower case) and the body as read to the end.
fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut text = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    stream.write_all(text.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let code = status
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {status:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let mut rest = String::new();
    let _ = reader.read_to_string(&mut rest);
    (code, headers, rest)
}

/// `initialize`, then `DELETE` of the session: `200 OK` (rmcp alone answers `202
/// Accepted`, which the Python SDK's client takes for a failure). The session is gone
/// after: a second `DELETE` of it is `404 Not Found`, as is a request in it.
#[test]
fn ending_a_session_answers_200_and_it_is_gone_after() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &[]);
    let path = server.path();
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"review34","version":"1"}}}"#;
    let json = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let (code, headers, body) = request(server.port(), "POST", &path, &json, initialize);
    assert_eq!(code, 200, "{body}");
    let id = headers
        .iter()
        .find(|(name, _)| name == "mcp-session-id")
        .map(|(_, value)| value.clone())
        .unwrap_or_else(|| panic!("no session id: {headers:?}"));
    let session = [
        ("Mcp-Session-Id", id.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];

    let (code, _, body) = request(server.port(), "DELETE", &path, &session, "");
    assert_eq!(code, 200, "the first DELETE: {body}");

    let (code, _, body) = request(server.port(), "DELETE", &path, &session, "");
    assert_eq!(code, 404, "the second DELETE: {body}");
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let in_session: Vec<(&str, &str)> = json.iter().chain(&session).copied().collect();
    let (code, _, body) = request(server.port(), "POST", &path, &in_session, list);
    assert_eq!(code, 404, "a request in the ended session: {body}");
}
