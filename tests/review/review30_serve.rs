//! `toolwright serve` (review 30): unauthenticated connections cannot stall token holders,
//! priming events only for clients that can read them, elicitation forms in the shapes of
//! the negotiated protocol, a stderr line for every error answer, strict Host and Origin
//! checks, exit 1 when the client stops reading, and the untrusted-folder notice when trust
//! cannot be recorded. Each drives the real binary (real sockets, real pipes).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::serve_support as support;
use crate::serve_support::UrlServer as Server;

/// A temporary project, canonicalised.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// How long an answer may take before a test fails.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// Sends `head` (start line and headers, without the blank line) and `body` on a new
/// connection, with `Connection: close`, and reads the whole response: the status code, the
/// headers (names in lower case) and the body as it came (an event stream too: it ends with
/// the connection).
fn exchange(port: u16, head: &str, body: &str) -> (u16, Vec<(String, String)>, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let request = format!(
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let code = lines
        .next()
        .and_then(|status| status.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status line: {text:?}"));
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let body = match header(&headers, "transfer-encoding") {
        Some(coding) if coding.eq_ignore_ascii_case("chunked") => unchunked(body),
        _ => body.to_owned(),
    };
    (code, headers, body)
}

/// A chunked body's content.
fn unchunked(body: &str) -> String {
    let mut rest = body.as_bytes();
    let mut content = Vec::new();
    while let Some(at) = rest.windows(2).position(|w| w == b"\r\n") {
        let Some(size) = std::str::from_utf8(&rest[..at])
            .ok()
            .and_then(|size| usize::from_str_radix(size.trim(), 16).ok())
        else {
            break;
        };
        let data = &rest[at + 2..];
        if size == 0 || data.len() < size {
            break;
        }
        content.extend_from_slice(&data[..size]);
        rest = data[size..].strip_prefix(b"\r\n").unwrap_or(&data[size..]);
    }
    String::from_utf8_lossy(&content).into_owned()
}

/// The head of a POST to the server's endpoint (`path` carries the token), with `extra`
/// header lines.
fn post_head(port: u16, path: &str, extra: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream{extra}"
    )
}

/// An `initialize` request on protocol `protocol`.
fn initialize(protocol: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": protocol, "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    .to_string()
}

/// The value of header `name` among `headers`.
fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// Whether an event stream holds a priming event (SEP-1699: empty data, a `retry:` field).
fn has_priming_event(stream: &str) -> bool {
    stream.split("\n\n").any(|event| {
        let lines: Vec<&str> = event.lines().map(str::trim_end).collect();
        lines.iter().any(|l| l.starts_with("retry:"))
            && lines
                .iter()
                .filter(|l| l.starts_with("data:"))
                .all(|l| l.trim_start_matches("data:").trim().is_empty())
    })
}

/// Any local user can open sockets to the port without the token: hundreds of them that
/// send nothing neither hold up a token holder's request (it waited about 30 s, until the
/// header read timeout closed them) nor stay open beyond a few seconds.
#[test]
fn silent_connections_without_the_token_do_not_stall_token_holders() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &[]);
    let (port, path) = (server.port(), server.path());
    let silent: Vec<TcpStream> = (0..260)
        .map(|_| TcpStream::connect(("127.0.0.1", port)).unwrap())
        .collect();
    // Let the server take them in.
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    let (code, headers, body) =
        exchange(port, &post_head(port, &path, ""), &initialize("2025-11-25"));
    let took = started.elapsed();
    assert_eq!(code, 200, "{body}");
    assert!(header(&headers, "mcp-session-id").is_some(), "{headers:?}");
    assert!(
        took < Duration::from_secs(10),
        "the token holder's request took {took:?} behind silent connections"
    );
    // A silent connection is closed within seconds, not after the 30 s header timeout.
    let mut last = silent.into_iter().last().unwrap();
    last.set_read_timeout(Some(Duration::from_secs(25)))
        .unwrap();
    let waited = Instant::now();
    let mut buf = [0u8; 16];
    let read = last.read(&mut buf);
    let closed = match &read {
        Ok(0) => true,
        Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        Ok(_) => false,
    };
    assert!(
        closed && waited.elapsed() < Duration::from_secs(15),
        "a silent connection without the token was still open after {:?}: {read:?}",
        waited.elapsed()
    );
}

/// A connection that keeps sending requests without the token (each answered `401`) is
/// closed within seconds all the same: only a request with the token lets it stay.
#[test]
fn a_connection_that_never_authenticates_is_closed() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &[]);
    let port = server.port();
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let started = Instant::now();
    let request =
        format!("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n");
    let mut buf = [0u8; 4096];
    let closed = loop {
        if stream.write_all(request.as_bytes()).is_err() {
            break true;
        }
        match stream.read(&mut buf) {
            Ok(0) => break true,
            Err(e)
                if e.kind() != std::io::ErrorKind::WouldBlock
                    && e.kind() != std::io::ErrorKind::TimedOut =>
            {
                break true;
            }
            _ => {}
        }
        if started.elapsed() > Duration::from_secs(20) {
            break false;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert!(
        closed && started.elapsed() < Duration::from_secs(15),
        "a connection sending only requests without the token stayed open {:?}",
        started.elapsed()
    );
}

/// Priming events (an empty `data:` with `retry:`) go only to clients on protocol 2025-11-25
/// or later: older clients cannot handle empty data (the TypeScript SDK sends them the same
/// way). The initialize answer and a later request's stream both follow the version.
#[test]
fn priming_events_go_only_to_clients_that_can_read_them() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &[]);
    let (port, path) = (server.port(), server.path());
    for (protocol, primed) in [
        ("2024-11-05", false),
        ("2025-03-26", false),
        ("2025-06-18", false),
        ("2025-11-25", true),
    ] {
        let (code, headers, stream) =
            exchange(port, &post_head(port, &path, ""), &initialize(protocol));
        assert_eq!(code, 200, "{protocol}: {stream}");
        assert!(stream.contains(r#""id":1"#), "{protocol}: {stream}");
        assert_eq!(has_priming_event(&stream), primed, "{protocol}: {stream:?}");
        let session = header(&headers, "mcp-session-id").unwrap().to_owned();
        // 2025-03-26 clients send no version header; later ones must.
        let version = match protocol {
            "2024-11-05" | "2025-03-26" => String::new(),
            _ => format!("\r\nMCP-Protocol-Version: {protocol}"),
        };
        let head = post_head(
            port,
            &path,
            &format!("\r\nMcp-Session-Id: {session}{version}"),
        );
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        let (code, _, stream) = exchange(port, &head, list);
        assert_eq!(code, 200, "{protocol}: {stream}");
        assert!(stream.contains(r#""id":2"#), "{protocol}: {stream}");
        assert_eq!(has_priming_event(&stream), primed, "{protocol}: {stream:?}");
    }
}

/// `serve` over stdio, its stderr to `stderr`, initialized on `protocol` with
/// `capabilities`: the process, its input and its messages (read by a thread).
fn stdio_server(
    root: &Path,
    extra: &[&str],
    protocol: &str,
    capabilities: Value,
    stderr: Stdio,
) -> (Child, ChildStdin, Receiver<Value>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--cwd"])
        .arg(root)
        .args(extra)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, messages) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let Ok(value) = serde_json::from_str::<Value>(&line) else {
                break;
            };
            if lines.send(value).is_err() {
                break;
            }
        }
    });
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": protocol, "capabilities": capabilities,
            "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    let init = messages.recv_timeout(ANSWER_TIMEOUT).unwrap();
    assert!(init.get("result").is_some(), "{init}");
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    (child, stdin, messages)
}

/// Writes `message` as one line.
fn send(stdin: &mut ChildStdin, message: &Value) {
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
}

/// The next message that answers request `id`, or that is a request from the server.
fn next_for(messages: &Receiver<Value>, id: u64) -> Value {
    loop {
        let message = messages.recv_timeout(ANSWER_TIMEOUT).unwrap();
        if message["id"] == id || message.get("method").is_some() && message.get("id").is_some() {
            return message;
        }
    }
}

/// AskUserQuestion's input: one single-choice and one multiple-choice question.
fn questions() -> Value {
    json!({"questions": [
        {"question": "Which database?", "header": "DB", "multiSelect": false, "options": [
            {"label": "Postgres", "description": "relational"},
            {"label": "SQLite", "description": "embedded"}]},
        {"question": "Which extras?", "header": "Extras", "multiSelect": true, "options": [
            {"label": "Docs", "description": "write them"},
            {"label": "Tests", "description": "write more"},
            {"label": "Bench", "description": "measure"}]}
    ]})
}

/// Whether `schema` (a form's property) uses only what protocol 2025-06-18 allows: a flat
/// string (with `enum` and `enumNames`), number, integer or boolean, no `oneOf`, `anyOf`,
/// arrays or `const`.
fn is_2025_06_18_primitive(schema: &Value) -> bool {
    let text = schema.to_string();
    matches!(
        schema["type"].as_str(),
        Some("string" | "number" | "integer" | "boolean")
    ) && !text.contains("oneOf")
        && !text.contains("anyOf")
        && !text.contains("\"const\"")
        && !text.contains("\"items\"")
}

/// On protocol 2025-06-18, AskUserQuestion's form uses that version's shapes (a choice is
/// `enum` with `enumNames`, a multiple choice one boolean per option), and the answers
/// given in them become the call's answers; on 2025-11-25 the form keeps its titled
/// `oneOf` and array of `anyOf`.
#[test]
fn ask_user_question_forms_follow_the_negotiated_protocol() {
    let (_dir, root) = project();
    let (mut child, mut stdin, messages) = stdio_server(
        &root,
        &[],
        "2025-06-18",
        json!({"elicitation": {}}),
        Stdio::null(),
    );
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "AskUserQuestion", "arguments": questions()}}),
    );
    let asked = next_for(&messages, 2);
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    let properties = asked["params"]["requestedSchema"]["properties"]
        .as_object()
        .unwrap()
        .clone();
    for (name, schema) in &properties {
        assert!(is_2025_06_18_primitive(schema), "{name}: {schema}");
    }
    assert_eq!(properties["q1"]["enum"], json!(["Postgres", "SQLite"]));
    assert_eq!(
        properties["q1"]["enumNames"].as_array().map(Vec::len),
        Some(2)
    );
    let multi: Vec<&String> = properties
        .keys()
        .filter(|k| k.starts_with("q2_") && *k != "q2_other")
        .collect();
    assert_eq!(multi.len(), 3, "{properties:?}");
    for key in &multi {
        assert_eq!(properties[*key]["type"], "boolean", "{key}");
    }
    let content =
        json!({"q1": "SQLite", "q2_1": true, "q2_2": false, "q2_3": true, "q2_other": "CI"});
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": asked["id"], "result": {"action": "accept", "content": content}}),
    );
    let answer = next_for(&messages, 2);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "User has answered your questions: \"Which database?\"=\"SQLite\", \"Which extras?\"=\"Docs, Bench, CI\". You can now continue with the user's answers in mind."
    );
    drop(stdin);
    let _ = child.wait();

    let (mut child, mut stdin, messages) = stdio_server(
        &root,
        &[],
        "2025-11-25",
        json!({"elicitation": {}}),
        Stdio::null(),
    );
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "AskUserQuestion", "arguments": questions()}}),
    );
    let asked = next_for(&messages, 2);
    let properties = &asked["params"]["requestedSchema"]["properties"];
    assert_eq!(properties["q1"]["oneOf"][1]["const"], "SQLite", "{asked}");
    assert_eq!(
        properties["q2"]["items"]["anyOf"][2]["const"], "Bench",
        "{asked}"
    );
    drop(stdin);
    let _ = child.wait();
}

/// Every error answer to a bad message gets its line on stderr, as `-32700` did: `-32602`
/// (a `tools/call` without params, `arguments: []`, a `tools/list` cursor, a progress token
/// `1.5`), `-32601` (an unknown method) and a second `initialize`'s `-32600`.
#[test]
fn every_error_answer_is_told_on_stderr() {
    let (_dir, root) = project();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("stderr.txt");
    let (mut child, mut stdin, messages) = stdio_server(
        &root,
        &["--mode", "bypassPermissions"],
        "2025-06-18",
        json!({}),
        std::fs::File::create(&log).unwrap().into(),
    );
    let cases = [
        (
            2,
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call"}),
            -32602,
        ),
        (
            3,
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "Bash", "arguments": []}}),
            -32602,
        ),
        (
            4,
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"cursor": "x"}}),
            -32602,
        ),
        (
            5,
            json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": {"name": "Bash", "arguments": {"command": "echo hi"},
                    "_meta": {"progressToken": 1.5}}}),
            -32602,
        ),
        (
            6,
            json!({"jsonrpc": "2.0", "id": 6, "method": "resources/list"}),
            -32601,
        ),
        (
            7,
            json!({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "again", "version": "1"}}}),
            -32600,
        ),
    ];
    for (id, message, code) in &cases {
        send(&mut stdin, message);
        let answer = next_for(&messages, *id);
        assert_eq!(answer["error"]["code"], *code, "{message}: {answer}");
    }
    drop(stdin);
    let _ = child.wait();
    let stderr = std::fs::read_to_string(&log).unwrap();
    for (id, message, code) in &cases {
        let line = format!("answered with error {code} (id {id}): ");
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with("toolwright serve: message ") && l.contains(&line)),
            "no line for {message} in stderr: {stderr}"
        );
    }
}

/// A request with two `Host` headers gets `400` (RFC 9112), not the first one's check.
/// An `Origin` is read as a URL: `http://localhost:PORT.evil.com` and `http://[::1].evil.com`
/// are not this machine's pages. `--allowed-host '*'` is refused with an error saying so
/// (it matched only a literal `*`).
#[test]
fn host_and_origin_headers_are_read_strictly() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &[]);
    let (port, path) = (server.port(), server.path());
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nHost: evil.example:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
    );
    let (code, _, body) = exchange(port, &head, &initialize("2025-11-25"));
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("Host"), "{body}");
    for origin in [
        format!("http://localhost:{port}.evil.com"),
        "http://[::1].evil.com".to_owned(),
        "http://127.0.0.1.evil.com".to_owned(),
        "http://localhost@evil.com".to_owned(),
        "http://localhost:99999".to_owned(),
    ] {
        let head = post_head(port, &path, &format!("\r\nOrigin: {origin}"));
        let (code, _, body) = exchange(port, &head, &initialize("2025-11-25"));
        assert_eq!(code, 403, "{origin}: {body}");
        assert!(body.contains("Origin"), "{origin}: {body}");
    }
    for origin in [
        format!("http://localhost:{port}"),
        "http://[::1]:3000".to_owned(),
        "https://127.0.0.1".to_owned(),
    ] {
        let head = post_head(port, &path, &format!("\r\nOrigin: {origin}"));
        let (code, _, body) = exchange(port, &head, &initialize("2025-11-25"));
        assert_eq!(code, 200, "{origin}: {body}");
    }
    // The same tricks in a Host header.
    for host in [
        format!("localhost:{port}.evil.com"),
        format!("[::1].evil.com:{port}"),
    ] {
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream"
        );
        let (code, _, body) = exchange(port, &head, &initialize("2025-11-25"));
        assert!(code == 403 || code == 400, "{host}: {code} {body}");
    }

    let out = support::toolwright_http_command(&root, &["--allowed-host", "*"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`*`") && stderr.contains("wildcard"),
        "{stderr}"
    );
    assert!(
        out.stdout.is_empty(),
        "it served: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A client that closes serve's standard output loses the answers in flight: the session
/// failed, and the exit status says so (1), besides the stderr line.
#[test]
fn a_client_that_closes_the_output_ends_the_session_with_status_1() {
    let (_dir, root) = project();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--mode", "bypassPermissions", "--cwd"])
        .arg(&root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("result"), "{line}");
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    drop(stdout);
    for id in 2..5 {
        let _ = writeln!(
            stdin,
            "{}",
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "Bash", "arguments": {"command": "echo lost"}}})
        );
        let _ = stdin.flush();
        std::thread::sleep(Duration::from_millis(300));
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot write to the client"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
}

/// With neither HOME nor CLAUDE_CONFIG_DIR set, the untrusted-folder notice does not send
/// the user to `toolwright trust` (which fails: nowhere to record trust); it says trust
/// cannot be recorded and how to give a configuration directory.
#[test]
fn the_untrusted_notice_says_when_trust_cannot_be_recorded() {
    let (_dir, root) = project();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        r#"{"permissions": {"allow": ["Bash"]}}"#,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--cwd"])
        .arg(&root)
        .env_remove("HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not trusted"), "{stderr}");
    assert!(!stderr.contains("run `toolwright trust"), "{stderr}");
    assert!(
        stderr.contains("cannot be recorded") && stderr.contains("CLAUDE_CONFIG_DIR"),
        "{stderr}"
    );
}
