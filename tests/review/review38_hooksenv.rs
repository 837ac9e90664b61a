//! Session 38's review of the hooks as `toolwright agent` runs them. Found by review: every
//! SessionStart hook was given one shared `CLAUDE_ENV_FILE`, so a hook that wrote it with
//! `>` (the pattern Claude Code's own examples use, safe there because each hook has a
//! file of its own) erased what the others exported; and the transcript's assistant lines
//! held only `role` and `content`, where Claude Code's carry the response's id, model,
//! usage and `requestId`. Real `toolwright agent` processes in temporary directories,
//! against a loopback stand-in for the Messages API.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;

use serde_json::{Value, json};

use crate::model_api::{agent_command, json_out, results, serve, stderr, text_of, turn};

/// A shell word for `path`.
fn quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

/// Waits (up to 20 s) until `mark` exists: the hook that runs it goes on only after the
/// other hook said it is done, whatever order they were started in.
fn wait_for(mark: &Path) -> String {
    format!(
        "i=0; while [ ! -e {m} ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done",
        m = quoted(mark)
    )
}

/// Runs `agent` in `dir` with the SessionStart hooks `hooks` (commands, in configuration
/// order); the model calls Bash once with `command`, then ends. Returns what Bash printed.
fn bash_after_session_start(dir: &Path, hooks: &[String], command: &str) -> String {
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"SessionStart": hooks.iter().map(|c| json!({"hooks": [{"type": "command", "command": c}]})).collect::<Vec<_>>()},
    });
    let call = turn(None, &[("toolu_1", "Bash", json!({"command": command}))]);
    let (url, seen) = serve(move |i, _| {
        crate::model_api::full(if i == 0 {
            call.clone()
        } else {
            turn(Some("done"), &[])
        })
    });
    let out = agent_command(
        &url,
        dir,
        &["--json", "--settings", &settings.to_string()],
        "go",
    )
    .env_remove("CLAUDE_ENV_FILE")
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    json_out(&out);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "{}", stderr(&out));
    let messages = seen[1].messages();
    let (_, result) = results(&messages[2]).remove(0);
    text_of(&result)
}

/// Two SessionStart hooks that each write `$CLAUDE_ENV_FILE` with `>` (the second only
/// once the first has written) both reach Bash: each hook has a file of its own, as in
/// Claude Code. Before, they shared one, and the second erased the first's export.
#[test]
fn each_session_start_hook_has_its_own_env_file() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("first-wrote");
    let first = format!(
        "echo 'export PROJECT_ENV=development' > \"$CLAUDE_ENV_FILE\"; touch {}",
        quoted(&mark)
    );
    let second = format!(
        "{}; echo 'export NODE_ENV=production' > \"$CLAUDE_ENV_FILE\"",
        wait_for(&mark)
    );
    let printed = bash_after_session_start(
        dir.path(),
        &[first, second],
        "echo PROJECT_ENV=$PROJECT_ENV NODE_ENV=$NODE_ENV",
    );
    assert_eq!(
        printed.trim(),
        "PROJECT_ENV=development NODE_ENV=production"
    );
}

/// The hooks' files are sourced in the hooks' configuration order, not the order they
/// finished in: the second hook's export of a variable both set wins, though the first
/// wrote last. Each file is named by its hook's index (`sessionstart-hook-<i>.sh`, Claude
/// Code's names).
#[test]
fn session_start_env_files_are_sourced_in_configuration_order() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("second-wrote");
    let names = dir.path().join("names");
    let first = format!(
        "{}; echo 'export ORDER=first' >> \"$CLAUDE_ENV_FILE\"; basename \"$CLAUDE_ENV_FILE\" >> {}",
        wait_for(&mark),
        quoted(&names)
    );
    let second = format!(
        "echo 'export ORDER=second' >> \"$CLAUDE_ENV_FILE\"; basename \"$CLAUDE_ENV_FILE\" >> {n}; touch {m}",
        n = quoted(&names),
        m = quoted(&mark)
    );
    let printed = bash_after_session_start(dir.path(), &[first, second], "echo ORDER=$ORDER");
    assert_eq!(printed.trim(), "ORDER=second");
    let names = std::fs::read_to_string(&names).unwrap();
    assert_eq!(
        names.lines().collect::<Vec<_>>(),
        ["sessionstart-hook-1.sh", "sessionstart-hook-0.sh"],
        "the hooks' CLAUDE_ENV_FILE names, in the order they wrote"
    );
}

/// A Messages API stand-in that answers the requests, in turn, with `bodies` (SSE), each
/// response with the header `request-id: req_<n>` (from 1), as the API sends one.
fn serve_with_request_ids(bodies: Vec<String>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line.trim_end() != "" {
                if let Some((k, v)) = line.split_once(':')
                    && k.eq_ignore_ascii_case("content-length")
                {
                    length = v.trim().parse().unwrap();
                }
                line.clear();
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let sse = bodies.get(n).cloned().unwrap_or_default();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nrequest-id: req_{}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{sse}",
                n + 1,
                sse.len()
            );
        }
    });
    url
}

/// A response: `message_start` with the message's id, model and usage, then `blocks`' events,
/// then the end with `stop_reason` and the final output tokens.
fn response(id: &str, blocks: Vec<Vec<Value>>, stop_reason: &str) -> String {
    let mut events = vec![json!({"type": "message_start", "message": {
        "id": id, "type": "message", "role": "assistant", "model": "claude-test-1",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 7, "output_tokens": 1}}})];
    events.extend(blocks.into_iter().flatten());
    events.extend(crate::model_api::end(stop_reason, 25));
    crate::model_api::sse(&events)
}

/// The transcript's assistant lines are in Claude Code's shape: `message` has the response's
/// `id`, `type: "message"`, `role`, `model`, one block in `content`, `stop_reason`,
/// `stop_sequence` and `usage` as known when the line was written (a block written while
/// the response streams: `message_start`'s usage and no stop reason yet, as Claude Code
/// writes them; one written after the response ended: its stop reason and final usage), and
/// the line has the response's `requestId`. Before, `message` held only `role` and
/// `content`, so scripts that sum usage or group blocks by `message.id` found nothing.
#[test]
fn assistant_transcript_lines_carry_the_responses_fields() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let stop_input = dir.path().join("stop-input.json");
    let first = response(
        "msg_a",
        vec![
            crate::model_api::text_block(0, "Looking."),
            crate::model_api::tool_block(1, "toolu_1", "Bash", &json!({"command": "echo hi"})),
        ],
        "tool_use",
    );
    let second = response(
        "msg_b",
        vec![crate::model_api::text_block(0, "done")],
        "end_turn",
    );
    let url = serve_with_request_ids(vec![first, second]);
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"Stop": [{"hooks": [{"type": "command",
            "command": format!("cat > {}", quoted(&stop_input))}]}]},
    });
    let out = agent_command(
        &url,
        dir.path(),
        &["--json", "--settings", &settings.to_string()],
        "go",
    )
    .env("TMPDIR", &tmp)
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let input: Value = serde_json::from_slice(&std::fs::read(&stop_input).unwrap()).unwrap();
    let transcript = std::fs::read_to_string(input["transcript_path"].as_str().unwrap()).unwrap();
    let assistant: Vec<Value> = transcript
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "assistant")
        .collect();
    assert_eq!(assistant.len(), 3, "{transcript}");
    let streamed_usage = json!({"input_tokens": 10, "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 7, "output_tokens": 1});
    let final_usage = json!({"input_tokens": 10, "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 7, "output_tokens": 25});
    let expected = [
        (
            "msg_a",
            json!({"type": "text", "text": "Looking."}),
            Value::Null,
            &streamed_usage,
            "req_1",
        ),
        (
            "msg_a",
            json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "echo hi"}}),
            Value::Null,
            &streamed_usage,
            "req_1",
        ),
        (
            "msg_b",
            json!({"type": "text", "text": "done"}),
            json!("end_turn"),
            &final_usage,
            "req_2",
        ),
    ];
    for (line, (id, block, stop_reason, usage, request_id)) in assistant.iter().zip(expected) {
        assert_eq!(
            line["message"],
            json!({"id": id, "type": "message", "role": "assistant", "model": "claude-test-1",
                "content": [block], "stop_reason": stop_reason, "stop_sequence": null,
                "usage": usage}),
            "{line}"
        );
        assert_eq!(line["requestId"], request_id, "{line}");
    }
}
