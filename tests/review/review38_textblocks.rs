//! Session 38's review of the text blocks of one response, against the local stand-in for
//! the Messages API (`support/model_api.rs`). Found by review: the text blocks of one
//! response were glued into one ("Found the bug.It is in a.rs."): in the assistant message
//! sent back to the API, in `final_text`, in a sub-agent's result, and in what `run` shows.

use std::io::Write as _;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::model_api::*;

/// A response of the text blocks `texts`, then the calls `(id, name, input)`.
fn blocks_turn(texts: &[&str], calls: &[(&str, &str, Value)]) -> String {
    let mut events = vec![start(100)];
    let mut index = 0;
    for t in texts {
        events.extend(text_block(index, t));
        index += 1;
    }
    for (id, name, input) in calls {
        events.extend(tool_block(index, id, name, input));
        index += 1;
    }
    let stop = if calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    events.extend(end(stop, 20));
    sse(&events)
}

/// The text blocks of `content`, in order.
fn texts(content: &Value) -> Vec<&str> {
    content
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .map(|b| b["text"].as_str().unwrap())
        .collect()
}

/// Found by review: two text blocks before a call went back to the API as one block
/// ("Looking.Then a call."), and the two of the last answer became one `final_text`
/// without a separator. Each block now goes back as the model sent it, in order with the
/// call, and in the transcript a line each; `final_text` (in `--json` and as `--print`
/// prints it) joins them with a blank line, and the streamed text shows the blank line too.
#[test]
fn the_text_blocks_of_one_response_stay_apart() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("transcript-copy.jsonl");
    copy_transcript_at_session_end(dir.path(), &copy);
    std::fs::write(dir.path().join("a.rs"), "fn main() {}\n").unwrap();
    let handler = |_: usize, request: &Request| {
        full(if request.messages().len() == 1 {
            blocks_turn(
                &["Looking.", "Then a call."],
                &[("g1", "Glob", json!({"pattern": "*.rs"}))],
            )
        } else {
            blocks_turn(&["Main part one.", "Main part two."], &[])
        })
    };
    let (url, seen) = serve(handler);
    let out = agent(&url, dir.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json = json_out(&out);
    assert_eq!(json["final_text"], "Main part one.\n\nMain part two.");
    {
        let seen = seen.lock().unwrap();
        let sent = &seen[1].messages()[1];
        assert_eq!(sent["role"], "assistant");
        assert_eq!(
            sent["content"],
            json!([
                {"type": "text", "text": "Looking."},
                {"type": "text", "text": "Then a call."},
                {"type": "tool_use", "id": "g1", "name": "Glob", "input": {"pattern": "*.rs"}},
            ])
        );
    }
    let last = json["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(
        texts(&last["content"]),
        ["Main part one.", "Main part two."]
    );
    let written: Vec<Value> = std::fs::read_to_string(&copy)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["message"].clone())
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["content"].clone())
        .collect();
    assert_eq!(
        written,
        [
            json!([{"type": "text", "text": "Looking."}]),
            json!([{"type": "text", "text": "Then a call."}]),
            json!([{"type": "tool_use", "id": "g1", "name": "Glob", "input": {"pattern": "*.rs"}}]),
            json!([{"type": "text", "text": "Main part one."}]),
            json!([{"type": "text", "text": "Main part two."}]),
        ]
    );

    let (url, _) = serve(handler);
    let out = agent(&url, dir.path(), &["--print"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Main part one.\n\nMain part two.\n"
    );

    // Streamed as it comes, into a pipe: the blocks apart there too.
    let (url, _) = serve(handler);
    let out = agent(&url, dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Looking.\n\nThen a call."), "{stdout:?}");
    assert!(
        stdout.contains("Main part one.\n\nMain part two."),
        "{stdout:?}"
    );
}

/// Found by review: a sub-agent whose answer was two text blocks ("Found the bug.", "It is
/// in a.rs.") reported "Found the bug.It is in a.rs." to its caller. Its result is now a
/// text block each, as Claude Code returns them.
#[test]
fn a_sub_agents_result_is_a_text_block_each() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = serve(|_, request| {
        full(if request.is_subagent() {
            blocks_turn(&["Found the bug.", "It is in a.rs."], &[])
        } else if request.messages().len() == 1 {
            blocks_turn(
                &[],
                &[(
                    "a1",
                    "Agent",
                    json!({"description": "find it", "prompt": "find the bug"}),
                )],
            )
        } else {
            blocks_turn(&["Done."], &[])
        })
    });
    let out = agent(&url, dir.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    let second = seen
        .iter()
        .filter(|r| !r.is_subagent())
        .nth(1)
        .expect("a second request of the main agent");
    let (_, result) = results(&second.messages()[2]).remove(0);
    assert_eq!(
        result["content"],
        json!([
            {"type": "text", "text": "Found the bug."},
            {"type": "text", "text": "It is in a.rs."},
        ])
    );
}

/// Found by review, in `toolwright run` too: a recorded turn's two text blocks (streamed, or
/// a saved non-streaming response) were shown as one line, glued. Each is its own line now.
#[test]
fn run_shows_each_text_block_of_a_turn() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let streamed = blocks_turn(&["Part one.", "Part two."], &[]);
    let saved = json!({"type": "message", "role": "assistant", "content": [
        {"type": "text", "text": "Part one."},
        {"type": "text", "text": "Part two."},
    ], "stop_reason": "end_turn"})
    .to_string();
    for input in [streamed, saved] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
            .arg("run")
            .current_dir(&root)
            .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("· Part one.\n· Part two.\n"),
            "{stdout:?}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
