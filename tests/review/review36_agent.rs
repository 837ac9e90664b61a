//! Session 36's review of `toolwright agent` against a misbehaving Messages API (the local
//! stand-in, `support/model_api.rs`): a tool input given whole in `content_block_start`,
//! `ANTHROPIC_CUSTOM_HEADERS` and the `User-Agent`, retries said on stderr, and a tool_use
//! id repeated in one response.

use serde_json::{Value, json};

use crate::model_api::*;

/// Bash allowed, so that the calls run without a question.
fn allow_bash() -> String {
    json!({"permissions": {"allow": ["Bash"]}}).to_string()
}

/// A response whose only block is a Bash call given its whole input in
/// `content_block_start`, with no `input_json_delta` (a gateway's stream), runs the call
/// with that input, and the conversation records it; before, it ran with `{}` and the
/// model was told `command` was missing.
#[test]
fn a_tool_input_given_whole_at_block_start_is_run() {
    let dir = tempfile::tempdir().unwrap();
    let input = json!({"command": "echo hello > marker.txt"});
    let call = sse(&[
        start(10),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": input}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ]);
    let (url, seen) = serve(move |i, _| {
        full(if i == 0 {
            call.clone()
        } else {
            turn(Some("done"), &[])
        })
    });
    let out = agent(&url, dir.path(), &["--json", "--settings", &allow_bash()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("marker.txt")).unwrap(),
        "hello\n"
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let messages = seen[1].messages();
    assert_eq!(messages[1]["content"][0]["input"], input, "{messages:?}");
    let result = &results(&messages[2])[0].1;
    assert_ne!(result["is_error"], Value::Bool(true), "{result}");
}

/// Two Bash calls with the same id in one response: the first runs and has its result, the
/// second is refused as a malformed stream and never runs, and the run ends there with
/// the reason (exit code 1), sending no request with two results of one id (which the API
/// refuses). Before, both ran and the next request carried both.
#[test]
fn a_tool_use_id_repeated_in_a_response_is_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut events = vec![start(10)];
    events.extend(tool_block(
        0,
        "toolu_1",
        "Bash",
        &json!({"command": "echo one >> log.txt"}),
    ));
    events.extend(tool_block(
        1,
        "toolu_1",
        "Bash",
        &json!({"command": "echo two >> log.txt"}),
    ));
    events.extend(end("tool_use", 5));
    let call = sse(&events);
    let (url, seen) = serve(move |i, _| {
        full(if i == 0 {
            call.clone()
        } else {
            turn(Some("done"), &[])
        })
    });
    let out = agent(&url, dir.path(), &["--json", "--settings", &allow_bash()]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("log.txt")).unwrap(),
        "one\n"
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
    let json = json_out(&out);
    assert!(
        json["stop"]
            .as_str()
            .unwrap()
            .contains("has the id \"toolu_1\" of block 0"),
        "{json}"
    );
    // The conversation: one call, one result.
    let messages = json["messages"].as_array().unwrap();
    let calls: Vec<&Value> = messages
        .iter()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["content"].as_array().unwrap())
        .filter(|b| b["type"] == "tool_use")
        .collect();
    assert_eq!(calls.len(), 1, "{messages:?}");
    assert_eq!(results(&messages[2]).len(), 1, "{messages:?}");
}

/// `ANTHROPIC_CUSTOM_HEADERS` (Claude Code's `Name: Value` lines), from the environment or
/// a settings `env`, is sent on the request; a line that is no header is said on stderr by
/// its number, never its text; every request says `User-Agent: toolwright/<version>`
/// unless the custom headers give their own. Before, they were ignored without a word, and
/// no `User-Agent` was sent.
#[test]
fn custom_headers_and_the_user_agent_are_sent() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = serve(|_, _| full(turn(Some("done"), &[])));
    let out = agent_command(&url, dir.path(), &["--print"], "hi")
        .env(
            "ANTHROPIC_CUSTOM_HEADERS",
            "X-Gateway-Key: gw-secret\r\nnot a header gw-secret2\n\nX-Team: infra",
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("toolwright agent: ANTHROPIC_CUSTOM_HEADERS line 2 is not a header"),
        "{err}"
    );
    assert!(!err.contains("secret"), "{err}");
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0].header("x-gateway-key"), Some("gw-secret"));
        assert_eq!(seen[0].header("x-team"), Some("infra"));
        assert_eq!(
            seen[0].header("user-agent"),
            Some(concat!("toolwright/", env!("CARGO_PKG_VERSION")))
        );
        assert_eq!(seen[0].header("x-api-key"), Some("test-key"));
    }
    // From the settings' `env`, with a `User-Agent` of its own.
    let settings = json!({"env": {"ANTHROPIC_CUSTOM_HEADERS": "X-Gateway-Key: from-settings\nUser-Agent: my-gateway/1"}});
    let out = agent_command(
        &url,
        dir.path(),
        &["--print", "--settings", &settings.to_string()],
        "hi",
    )
    .env_remove("ANTHROPIC_CUSTOM_HEADERS")
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    assert_eq!(seen[1].header("x-gateway-key"), Some("from-settings"));
    assert_eq!(seen[1].header("user-agent"), Some("my-gateway/1"));
    assert_eq!(
        seen[1]
            .headers
            .iter()
            .filter(|(k, _)| k == "user-agent")
            .count(),
        1
    );
}

/// The API's overload answer, as a 529's body.
const OVERLOADED: &str =
    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

/// Each retry is said on stderr, with what failed, the wait and the attempt coming, in
/// `--print` mode too (stdout holds the answer alone); an overload reported by an `error`
/// event before any content is said the same way. Before, retries were only traced, and a
/// terminal stayed silent through them.
#[test]
fn each_retry_is_said_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let overload_event = sse(&[
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let (url, seen) = serve(move |i, _| match i {
        0 | 1 => Reply::Status(529, OVERLOADED.to_owned()),
        2 => full(overload_event.clone()),
        _ => full(turn(Some("done"), &[])),
    });
    let out = agent_command(&url, dir.path(), &["--print"], "hi")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "done\n");
    assert_eq!(seen.lock().unwrap().len(), 4);
    let err = stderr(&out);
    let retries: Vec<&str> = err.lines().filter(|l| l.contains("retrying in")).collect();
    assert_eq!(retries.len(), 3, "{err}");
    for (line, next) in retries.iter().take(2).zip([2, 3]) {
        assert!(
            line.starts_with(
                "toolwright agent: the API answered 529 (overloaded_error: Overloaded); retrying in "
            ) && line.ends_with(&format!(" s (attempt {next} of 4)")),
            "{line}"
        );
    }
    assert!(
        retries[2].starts_with(
            "toolwright agent: the API reported an error before the response began (overloaded_error): Overloaded; retrying in "
        ) && retries[2].ends_with(" s (attempt 4 of 4)"),
        "{}",
        retries[2]
    );
}

/// When every attempt fails, the error says how many were made; an invalid
/// `CLAUDE_CODE_MAX_RETRIES` (`abc`, `-1`) is said on stderr and the default (3 retries,
/// 4 attempts) is used. Before, the error did not say retries were made, and an invalid
/// value was dropped without a word.
#[test]
fn the_final_error_says_the_attempts_and_a_bad_retry_count_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = serve(|_, _| Reply::Status(529, OVERLOADED.to_owned()));
    let out = agent_command(&url, dir.path(), &["--print"], "hi")
        .env("CLAUDE_CODE_MAX_RETRIES", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("the API answered 529 (2 attempts made): {"),
        "{err}"
    );
    assert_eq!(seen.lock().unwrap().len(), 2);

    let (url, seen) = serve(|_, _| Reply::Status(529, OVERLOADED.to_owned()));
    let out = agent_command(&url, dir.path(), &["--print"], "hi")
        .env("CLAUDE_CODE_MAX_RETRIES", "abc")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("toolwright agent: CLAUDE_CODE_MAX_RETRIES=\"abc\" is not a whole number of retries (0 or more); the default, 3, is used"),
        "{err}"
    );
    assert!(err.contains("(4 attempts made)"), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 4);

    let (url, _) = serve(|_, _| full(turn(Some("done"), &[])));
    let out = agent_command(&url, dir.path(), &["--print"], "hi")
        .env("CLAUDE_CODE_MAX_RETRIES", "-1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("CLAUDE_CODE_MAX_RETRIES=\"-1\" is not a whole number of retries"),
        "{}",
        stderr(&out)
    );
}
