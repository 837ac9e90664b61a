//! `toolwright agent` against a local stand-in for the Messages API (a loopback HTTP server
//! replaying scripted streaming responses): tool_use blocks run, the next request carries one
//! tool_result per tool_use in order, overloaded answers are retried, a mid-stream error is
//! reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{Value, json};

/// A scripted response: status and body.
type Scripted = (u16, String);

/// What the server saw: headers (lower-case names) and the JSON body.
type Seen = Arc<Mutex<Vec<(Vec<(String, String)>, Value)>>>;

fn serve(responses: Vec<Scripted>) -> (String, Seen, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen: Seen = Arc::default();
    let log = Arc::clone(&seen);
    let handle = std::thread::spawn(move || {
        for (status, body) in responses {
            let (mut stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut headers = Vec::new();
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
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
            log.lock()
                .unwrap()
                .push((headers, serde_json::from_slice(&buf).unwrap_or(Value::Null)));
            let kind = if status == 200 {
                "text/event-stream"
            } else {
                "application/json"
            };
            let reason = if status == 200 { "OK" } else { "Error" };
            write!(
                stream,
                "HTTP/1.1 {status} {reason}\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
        }
    });
    (url, seen, handle)
}

fn sse(events: &[Value]) -> String {
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

fn tool_turn() -> String {
    sse(&[
        json!({"type": "message_start", "message": {"id": "m1", "usage": {"input_tokens": 100, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Checking."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_a", "name": "Bash", "input": {}}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"echo agent-ran\"}"}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_b", "name": "Nope", "input": {}}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 40}}),
        json!({"type": "message_stop"}),
    ])
}

fn final_turn() -> String {
    sse(&[
        json!({"type": "message_start", "message": {"id": "m2", "usage": {"input_tokens": 150, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "All done."}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ])
}

fn agent(url: &str, dir: &std::path::Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .arg("agent")
        .args(extra)
        .arg("run the check")
        .current_dir(dir)
        .env("ANTHROPIC_BASE_URL", url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("CLAUDE_CONFIG_DIR", dir.join(".no-user-config"))
        .output()
        .unwrap()
}

#[test]
fn tool_results_go_back_in_order_and_the_loop_ends() {
    let dir = tempfile::tempdir().unwrap();
    // The first attempt is overloaded: the request is retried.
    let overloaded = (
        529,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
            .to_string(),
    );
    let (url, seen, server) = serve(vec![overloaded, (200, tool_turn()), (200, final_turn())]);
    let out = agent(&url, dir.path(), &["--json"]);
    server.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["turns"], 2);
    assert_eq!(result["stop"], "the model finished");

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    let (headers, first) = &seen[1];
    assert!(headers.contains(&("x-api-key".into(), "test-key".into())));
    assert!(headers.contains(&("anthropic-version".into(), "2023-06-01".into())));
    assert_eq!(first["stream"], true);
    assert!(
        first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "Bash" && t["input_schema"]["type"] == "object")
    );
    // The second request: the assistant turn echoed, then one tool_result per tool_use, in order.
    let second = &seen[2].1["messages"];
    assert_eq!(second[1]["role"], "assistant");
    assert_eq!(
        second[1]["content"][1],
        json!({"type": "tool_use", "id": "toolu_a", "name": "Bash", "input": {"command": "echo agent-ran"}})
    );
    assert_eq!(second[2]["role"], "user");
    let results = second[2]["content"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[0],
        json!({"type": "tool_result", "tool_use_id": "toolu_a", "content": "agent-ran"})
    );
    assert_eq!(results[1]["tool_use_id"], "toolu_b");
    assert_eq!(results[1]["is_error"], true);
}

#[test]
fn a_mid_stream_error_and_a_missing_key_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let broken = sse(&[
        json!({"type": "message_start", "message": {"id": "m"}}),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let (url, _seen, server) = serve(vec![(200, broken)]);
    let out = agent(&url, dir.path(), &[]);
    server.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("the API reported an error mid-stream (overloaded_error): Overloaded")
    );

    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["agent", "hi"])
        .current_dir(dir.path())
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ANTHROPIC_API_KEY is not set"));
}
