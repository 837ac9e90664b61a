//! A local stand-in for the Anthropic Messages API, shared by the agent tests: a loopback
//! HTTP server (std `TcpListener`, one thread per connection) that answers each request with
//! a scripted streaming response, byte for byte in the API's SSE format (chunked, as the API
//! sends it), and records every request it receives; and helpers to run `toolwright agent`
//! against it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Request {
    /// Headers, lower-case names.
    pub headers: Vec<(String, String)>,
    /// The JSON body, without its prompt-cache marks (so that tests compare the blocks as
    /// the conversation holds them).
    pub body: Value,
    /// Where the body's `cache_control` marks were: `(message, block)`.
    pub cache_breakpoints: Vec<(usize, usize)>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .map(|t| t["name"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn tool(&self, name: &str) -> Option<&Value> {
        self.body["tools"]
            .as_array()?
            .iter()
            .find(|t| t["name"] == name)
    }

    pub fn messages(&self) -> &Vec<Value> {
        self.body["messages"].as_array().unwrap()
    }

    /// The text of the first user message (the prompt), whatever its shape.
    pub fn prompt(&self) -> String {
        text_of(&self.messages()[0])
    }

    pub fn is_subagent(&self) -> bool {
        self.body["system"]
            .as_str()
            .is_some_and(|s| s.contains("Your agent id"))
    }
}

/// All text of a message's content (a string, or its text blocks joined by newlines).
pub fn text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Something that opens once.
#[derive(Clone, Default)]
pub struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    pub fn open(&self) {
        *self.0.0.lock().unwrap() = true;
        self.0.1.notify_all();
    }

    /// Waits until open, at most `limit`; whether it opened.
    pub fn wait(&self, limit: Duration) -> bool {
        let guard = self.0.0.lock().unwrap();
        let (guard, _) = self
            .0
            .1
            .wait_timeout_while(guard, limit, |open| !*open)
            .unwrap();
        *guard
    }
}

/// Waits until `n` parties arrived, at most `limit`; whether they all did.
#[derive(Clone)]
pub struct Rendezvous(Arc<(Mutex<usize>, Condvar)>, usize);

impl Rendezvous {
    pub fn new(n: usize) -> Self {
        Self(Arc::default(), n)
    }

    pub fn arrive(&self, limit: Duration) -> bool {
        let mut count = self.0.0.lock().unwrap();
        *count += 1;
        self.0.1.notify_all();
        let n = self.1;
        let (count, _) = self
            .0
            .1
            .wait_timeout_while(count, limit, |c| *c < n)
            .unwrap();
        *count >= n
    }
}

/// One piece of a streamed answer.
pub enum Part {
    /// Bytes of the body (one HTTP chunk).
    Data(String),
    /// Hold the stream open until the gate opens.
    Hold(Gate),
    /// Close the connection here, without ending the chunked body.
    Cut,
}

/// How the server answers a request.
pub enum Reply {
    /// A complete answer with this status and JSON body.
    Status(u16, String),
    /// A streamed 200 answer, part by part.
    Stream(Vec<Part>),
    /// Close the connection without answering.
    Drop,
    /// The whole HTTP answer as given (status line, headers, body), then the connection
    /// closed.
    Raw(String),
}

pub fn full(sse: String) -> Reply {
    Reply::Stream(vec![Part::Data(sse)])
}

pub type Seen = Arc<Mutex<Vec<Request>>>;

/// Starts the server; `handler` gets each request with its arrival number.
pub fn serve(handler: impl Fn(usize, &Request) -> Reply + Send + Sync + 'static) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let handler = Arc::new(handler);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let (log, handler) = (Arc::clone(&log), Arc::clone(&handler));
            std::thread::spawn(move || answer(stream, &log, handler.as_ref()));
        }
    });
    (url, seen)
}

pub fn answer(
    mut stream: TcpStream,
    log: &Seen,
    handler: &(dyn Fn(usize, &Request) -> Reply + Send + Sync),
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut headers = Vec::new();
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut buf = vec![0; len];
    reader.read_exact(&mut buf).unwrap();
    let mut body: Value = serde_json::from_slice(&buf).unwrap_or(Value::Null);
    let mut cache_breakpoints = Vec::new();
    if let Some(messages) = body["messages"].as_array_mut() {
        for (i, message) in messages.iter_mut().enumerate() {
            let Some(blocks) = message["content"].as_array_mut() else {
                continue;
            };
            for (j, block) in blocks.iter_mut().enumerate() {
                if let Some(block) = block.as_object_mut()
                    && block.remove("cache_control").is_some()
                {
                    cache_breakpoints.push((i, j));
                }
            }
        }
    }
    let request = Request {
        headers,
        body,
        cache_breakpoints,
    };
    let index = {
        let mut log = log.lock().unwrap();
        log.push(request.clone());
        log.len() - 1
    };
    match handler(index, &request) {
        Reply::Drop => {}
        Reply::Raw(answer) => {
            let _ = stream.write_all(answer.as_bytes());
        }
        Reply::Status(status, body) => {
            let _ = write!(
                stream,
                "HTTP/1.1 {status} Error\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
        Reply::Stream(parts) => {
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            );
            for part in parts {
                match part {
                    Part::Data(data) => {
                        if write!(stream, "{:x}\r\n{data}\r\n", data.len()).is_err() {
                            return;
                        }
                        let _ = stream.flush();
                    }
                    Part::Hold(gate) => {
                        gate.wait(Duration::from_secs(60));
                    }
                    Part::Cut => return,
                }
            }
            let _ = write!(stream, "0\r\n\r\n");
        }
    }
}

pub fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

pub fn start(input_tokens: u64) -> Value {
    json!({"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": input_tokens, "output_tokens": 1}}})
}

pub fn text_block(index: u64, text: &str) -> Vec<Value> {
    vec![
        json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}),
        json!({"type": "content_block_stop", "index": index}),
    ]
}

pub fn tool_block(index: u64, id: &str, name: &str, input: &Value) -> Vec<Value> {
    vec![
        json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        json!({"type": "content_block_stop", "index": index}),
    ]
}

pub fn end(stop_reason: &str, output_tokens: u64) -> Vec<Value> {
    vec![
        json!({"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": output_tokens}}),
        json!({"type": "message_stop"}),
    ]
}

/// A response: optional text, then tool calls `(id, name, input)`; `tool_use` stop when
/// there are calls, `end_turn` otherwise.
pub fn turn(text: Option<&str>, calls: &[(&str, &str, Value)]) -> String {
    let mut events = vec![start(100)];
    let mut index = 0;
    if let Some(t) = text {
        events.extend(text_block(index, t));
        index += 1;
    }
    for (id, name, input) in calls {
        events.extend(tool_block(index, id, name, input));
        index += 1;
    }
    events.extend(end(
        if calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        },
        20,
    ));
    sse(&events)
}

pub fn agent_command(url: &str, dir: &Path, extra: &[&str], prompt: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolwright"));
    command
        .arg("agent")
        .args(extra)
        .arg(prompt)
        .current_dir(dir)
        .env("ANTHROPIC_BASE_URL", url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("CLAUDE_CONFIG_DIR", dir.join(".no-user-config"))
        // Standard input joins the prompt when it is no terminal: none, unless the test
        // gives one (a spawned child would inherit the test's own).
        .stdin(std::process::Stdio::null())
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ENABLE_TOOL_SEARCH")
        .env_remove("ANTHROPIC_MODEL")
        .env_remove("DISABLE_PROMPT_CACHING")
        .env_remove("CLAUDE_CODE_MAX_RETRIES")
        .env_remove("CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS")
        .env_remove("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP")
        .env_remove("CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS");
    command
}

pub fn agent(url: &str, dir: &Path, extra: &[&str]) -> Output {
    agent_command(url, dir, extra, "run the check")
        .output()
        .unwrap()
}

pub fn json_out(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The tool_results of a user message, by tool_use id.
pub fn results(message: &Value) -> Vec<(String, Value)> {
    assert_eq!(message["role"], "user", "{message}");
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| (b["tool_use_id"].as_str().unwrap().to_owned(), b.clone()))
        .collect()
}

/// Records `dir` as a trusted folder in the user configuration `agent_command` points at
/// (`.no-user-config/.claude.json`), as accepting the trust dialog does.
pub fn trust(dir: &Path) {
    let config = dir.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    let key = std::fs::canonicalize(dir).unwrap().display().to_string();
    std::fs::write(
        config.join(".claude.json"),
        serde_json::json!({"projects": {key: {"hasTrustDialogAccepted": true}}}).to_string(),
    )
    .unwrap();
}

/// A SessionEnd hook (in the user settings `agent_command` points at) that copies the
/// session's transcript to `dest`.
pub fn copy_transcript_at_session_end(dir: &Path, dest: &Path) {
    let config = dir.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    let command = format!(
        r#"sed -n 's/.*"transcript_path":"\([^"]*\)".*/\1/p' | xargs -I{{}} cp {{}} '{}'"#,
        dest.display()
    );
    std::fs::write(
        config.join("settings.json"),
        json!({"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": command}]}]}})
            .to_string(),
    )
    .unwrap();
}

/// `agent -p hi` in `dir` against a server whose first answer is `first()` and every later
/// one a plain "ok": the run retries once and prints "ok". Returns its standard error.
pub fn assert_retried_once(
    dir: &Path,
    first: impl Fn() -> Reply + Send + Sync + 'static,
) -> String {
    let (url, seen) = serve(move |i, _| {
        if i == 0 {
            first()
        } else {
            full(turn(Some("ok"), &[]))
        }
    });
    let out = agent_command(&url, dir, &["-p"], "hi").output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
    assert_eq!(seen.lock().unwrap().len(), 2, "{err}");
    err
}

/// `agent -p hi` in `dir` without retries against a server whose every answer is
/// `answer()`: the run fails (exit 1) after one request. Returns its standard error.
pub fn assert_failed_without_retries(
    dir: &Path,
    answer: impl Fn() -> Reply + Send + Sync + 'static,
) -> String {
    let (url, seen) = serve(move |_, _| answer());
    let out = agent_command(&url, dir, &["-p"], "hi")
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 1, "{err}");
    err
}
