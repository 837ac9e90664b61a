//! `toolwright serve` (review 32): an upstream MCP tool's progress reaches the client whole
//! (the last report too, before the result, in order), over stdio and HTTP; and over stdio a
//! last line without its newline is served as any line at the end of the input. Each drives
//! the real binary (real pipes, real sockets) and, for progress, the real third-party
//! server-everything of `../shared/mcp-peers`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use serde_json::{Value, json};

use crate::serve_support::{UrlServer as Server, peer};

/// A temporary project, canonicalised.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// How long an answer may take before a test fails.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

/// How many times each transport runs the long operation, once over a second and once at
/// once: the reports lost were those sent just before the result, a race, so one call may
/// pass by luck.
const ROUNDS: usize = 3;

/// The steps of server-everything's `trigger-long-running-operation` (one report each).
const STEPS: u64 = 4;

/// Writes an `--mcp-config` file naming server-everything (`everything`, over stdio) as
/// server `ev`, and returns its path.
fn everything_config(root: &Path, everything: &str) -> PathBuf {
    let path = root.join("ev.json");
    let config = json!({"mcpServers": {"ev": {"command": everything, "args": ["stdio"]}}});
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// The arguments that serve server-everything's tools, allowed.
fn everything_args(config: &Path) -> Vec<String> {
    vec![
        "--mcp-config".into(),
        config.display().to_string(),
        "--settings".into(),
        r#"{"permissions":{"allow":["mcp__ev"]}}"#.into(),
    ]
}

/// The long operation's call, with progress token `token`, lasting `duration` seconds (0:
/// its reports come all at once, with the result).
fn long_call(id: u64, token: &str, duration: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "mcp__ev__trigger-long-running-operation",
        "arguments": {"duration": duration, "steps": STEPS},
        "_meta": {"progressToken": token}}})
}

/// Checks that `messages` (what the client got for call `id`, in order) are the progress
/// reports 1 to [`STEPS`] of `token`, each of [`STEPS`] in total, and then the result.
fn assert_every_report_before_the_result(messages: &[Value], id: u64, token: &str) {
    let (last, reports) = messages.split_last().expect("no messages");
    assert_eq!(last["id"], id, "the result comes last: {messages:#?}");
    assert!(
        last["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("completed")),
        "{last}"
    );
    let progress: Vec<Value> = reports
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| {
            assert_eq!(m["params"]["progressToken"], token, "{m}");
            assert_eq!(m["params"]["total"], json!(STEPS as f64), "{m}");
            m["params"]["progress"].clone()
        })
        .collect();
    let expected: Vec<Value> = (1..=STEPS).map(|n| json!(n as f64)).collect();
    assert_eq!(
        progress, expected,
        "every report server-everything sent, in order, before the result: {messages:#?}"
    );
}

/// `serve` over stdio, its stderr to `stderr`, initialized: the process, its input and its
/// messages (read by a thread).
fn stdio_server(
    root: &Path,
    extra: &[String],
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
    let messages = read_messages(child.stdout.take().unwrap());
    send(&mut stdin, &initialize_request());
    let init = messages.recv_timeout(ANSWER_TIMEOUT).unwrap();
    assert!(init.get("result").is_some(), "{init}");
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    (child, stdin, messages)
}

/// The messages of `stdout`, one per line, read by a thread.
fn read_messages(stdout: impl Read + Send + 'static) -> Receiver<Value> {
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
    messages
}

/// `initialize` (id 1) on protocol 2025-06-18.
fn initialize_request() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
}

/// Writes `message` as one line.
fn send(stdin: &mut ChildStdin, message: &Value) {
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
}

/// Over stdio, every `notifications/progress` server-everything sends for the long
/// operation reaches the client before the result, the last one (`4/4`, sent just before
/// the result) too: it was lost to a race between the report and the result.
#[test]
fn an_upstream_tools_every_progress_report_precedes_its_result_over_stdio() {
    let Some(everything) = peer("MCP_SERVER_EVERYTHING") else {
        return;
    };
    let (_dir, root) = project();
    let config = everything_config(&root, &everything);
    let (mut child, mut stdin, messages) =
        stdio_server(&root, &everything_args(&config), Stdio::inherit());
    for (round, duration) in (0..ROUNDS * 2).map(|r| (r, r as u64 % 2)) {
        let id = 10 + round as u64;
        let token = format!("p{round}");
        send(&mut stdin, &long_call(id, &token, duration));
        let mut got = Vec::new();
        loop {
            let message = messages.recv_timeout(ANSWER_TIMEOUT).unwrap();
            let done = message["id"] == id;
            got.push(message);
            if done {
                break;
            }
        }
        assert_every_report_before_the_result(&got, id, &token);
    }
    drop(stdin);
    let _ = child.wait();
}

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
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        unchunked(body)
    } else {
        body.to_owned()
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

/// The JSON messages of an event stream's `data:` lines, in order.
fn events(stream: &str) -> Vec<Value> {
    stream
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str(data.trim()).ok())
        .collect()
}

/// Over Streamable HTTP too, the call's event stream holds every progress report of
/// server-everything's long operation, the last one included, before the result.
#[test]
fn an_upstream_tools_every_progress_report_precedes_its_result_over_http() {
    let Some(everything) = peer("MCP_SERVER_EVERYTHING") else {
        return;
    };
    let (_dir, root) = project();
    let config = everything_config(&root, &everything);
    let args = everything_args(&config);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::toolwright_http(&root, &args);
    let (port, path) = (server.port(), server.path());
    let head = |extra: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream{extra}"
        )
    };
    let (code, headers, stream) = exchange(port, &head(""), &initialize_request().to_string());
    assert_eq!(code, 200, "{stream}");
    let session = headers
        .iter()
        .find(|(name, _)| name == "mcp-session-id")
        .map(|(_, value)| value.clone())
        .unwrap();
    let head = head(&format!(
        "\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-06-18"
    ));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (code, _, body) = exchange(port, &head, &initialized.to_string());
    assert!(code == 202 || code == 200, "{code}: {body}");
    for (round, duration) in (0..ROUNDS * 2).map(|r| (r, r as u64 % 2)) {
        let id = 10 + round as u64;
        let token = format!("h{round}");
        let call = long_call(id, &token, duration).to_string();
        let (code, _, stream) = exchange(port, &head, &call);
        assert_eq!(code, 200, "{stream}");
        assert_every_report_before_the_result(&events(&stream), id, &token);
    }
}

/// Runs `serve --cwd <project>` with `input` as its whole standard input, written in two
/// parts half a second apart (so the last part is read on its own, as a client's last write
/// is); its exit status, stdout (one message a line) and stderr.
fn serve_input(first: &str, last: &str) -> (std::process::ExitStatus, Vec<Value>, String) {
    let (_dir, root) = project();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--cwd"])
        .arg(&root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(first.as_bytes()).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    stdin.write_all(last.as_bytes()).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let messages = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect();
    (
        out.status,
        messages,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A last line without its newline is served at the end of the input, as any line (its
/// answer is the one the same line with its newline gets): a whole `ping` is answered, a
/// whole `tools/list` too; broken JSON gets `-32700` (with its id when it can be read before
/// the cut, `null` when not) and its line on stderr. The server then exits 0, as at the end
/// of any input.
#[test]
fn a_last_line_without_a_newline_is_served_at_the_end_of_the_input() {
    let first = format!("{}\n", initialize_request());
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            json!(2),
            None,
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#,
            json!(4),
            None,
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"pi"#,
            json!(3),
            Some("3"),
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"meth"#,
            Value::Null,
            Some("null"),
        ),
    ];
    for (last, id, parse_error) in cases {
        let (status, messages, stderr) = serve_input(&first, last);
        assert!(status.success(), "{last}: {status}: {stderr}");
        assert_eq!(messages.len(), 2, "{last}: {messages:#?}\n{stderr}");
        assert_eq!(messages[0]["id"], 1, "{messages:#?}");
        let answer = &messages[1];
        assert_eq!(answer["id"], id, "{last}: {answer}");
        match parse_error {
            None => assert!(answer.get("result").is_some(), "{last}: {answer}\n{stderr}"),
            Some(shown) => {
                assert_eq!(answer["error"]["code"], -32700, "{answer}");
                let line = format!(
                    "toolwright serve: message 2 answered with error -32700 (id {shown}): Parse error"
                );
                assert!(
                    stderr.lines().any(|l| l.starts_with(&line)),
                    "no line for the broken message on stderr: {stderr}"
                );
            }
        }
        // As the same line with its newline is answered (`tools/list` names the project,
        // another temporary directory: its answer is compared by id and kind).
        let (_, with_newline, _) = serve_input(&first, &format!("{last}\n"));
        assert_eq!(with_newline.len(), 2, "{last}: {with_newline:#?}");
        assert_eq!(with_newline[1]["id"], answer["id"], "{last}");
        assert_eq!(with_newline[1]["error"], answer["error"], "{last}");
        assert_eq!(
            with_newline[1].get("result").is_some(),
            answer.get("result").is_some(),
            "{last}"
        );
    }
    // A last line of blanks only is nothing to answer, as a blank line is.
    let (status, messages, stderr) = serve_input(&first, "  ");
    assert!(status.success(), "{status}: {stderr}");
    assert_eq!(messages.len(), 1, "{messages:#?}\n{stderr}");
}

/// A last `tools/call` without its newline runs, as a whole line's does at the end of the
/// input: it is answered (as interrupted, since the input ended, as any call still running
/// then), rather than dropped without a word.
#[test]
fn a_last_tools_call_without_a_newline_is_answered() {
    let first = format!("{}\n", initialize_request());
    let call = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"Glob","arguments":{"pattern":"*"}}}"#;
    let (status, messages, stderr) = serve_input(&first, call);
    assert!(status.success(), "{status}: {stderr}");
    assert_eq!(messages.len(), 2, "{messages:#?}\n{stderr}");
    assert_eq!(messages[1]["id"], 5, "{}", messages[1]);
    assert!(messages[1].get("result").is_some(), "{}", messages[1]);
    // The same call with its newline gets the same kind of answer.
    let (_, with_newline, _) = serve_input(&first, &format!("{call}\n"));
    assert_eq!(with_newline.len(), 2, "{with_newline:#?}");
    assert_eq!(
        with_newline[1]["result"]["isError"], messages[1]["result"]["isError"],
        "{with_newline:#?} vs {messages:#?}"
    );
}
