//! Session 30's review of `toolwright agent`'s sub-agents and usage, against the local
//! stand-in for the Messages API (`support/model_api.rs`): a definition's `permissionMode`
//! (applied only when it is no looser than the caller's mode), the names a definition's
//! `tools` and `disallowedTools` give that are no tool's, and the tokens of a response that
//! fails before its first content block (counted in usage, cost and the budget).

use std::path::Path;

use serde_json::{Value, json};

use crate::model_api::*;

/// Writes the agent definition `text` to `dir/.claude/agents/<name>.md`.
fn write_agent(dir: &Path, name: &str, text: &str) {
    let agents = dir.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join(format!("{name}.md")), text).unwrap();
}

/// Runs `toolwright agent --json` with `extra` in `dir` (trusted, holding the definitions),
/// where the main agent starts one sub-agent of `subagent_type`, which writes `file` once
/// and then reports. Returns the output and the requests the API got.
fn sub_agent_writes(
    dir: &Path,
    subagent_type: &str,
    file: &Path,
    extra: &[&str],
) -> (std::process::Output, Vec<Request>) {
    let parent = turn(
        None,
        &[(
            "toolu_agent",
            "Agent",
            json!({"description": "plan it", "prompt": "make a plan", "subagent_type": subagent_type}),
        )],
    );
    let write = turn(
        None,
        &[(
            "toolu_write",
            "Write",
            json!({"file_path": file, "content": "written by the sub-agent\n"}),
        )],
    );
    let (url, seen) = serve(move |_, request| {
        if request.is_subagent() {
            if request.messages().len() == 1 {
                full(write.clone())
            } else {
                full(turn(Some("sub-agent report"), &[]))
            }
        } else if request.messages().len() == 1 {
            full(parent.clone())
        } else {
            full(turn(Some("Done."), &[]))
        }
    });
    trust(dir);
    let mut args = vec!["--json"];
    args.extend_from_slice(extra);
    let out = agent(&url, dir, &args);
    let seen = seen.lock().unwrap().clone();
    (out, seen)
}

/// The result the sub-agent got for its Write call.
fn sub_agents_write_result(seen: &[Request]) -> Value {
    let second = seen
        .iter()
        .filter(|r| r.is_subagent())
        .nth(1)
        .unwrap_or_else(|| panic!("the sub-agent made no second request: {seen:?}"));
    results(&second.messages()[2])[0].1.clone()
}

/// The result the main agent got for its Agent call.
fn agent_result(seen: &[Request]) -> Value {
    let last = seen.iter().rfind(|r| !r.is_subagent()).unwrap();
    results(&last.messages()[2])[0].1.clone()
}

/// A definition's `permissionMode` that is stricter than its caller's mode applies to the
/// sub-agent: `plan` keeps it from writing under an allow rule for Write and under a caller
/// in bypassPermissions (where plan mode would otherwise allow as bypass does), `default`
/// makes it ask (and, with nobody to ask, refuses) under a caller in acceptEdits, and
/// `dontAsk` refuses what no rule allows under a bypassing caller. The sub-agent wrote the
/// file in each case: the field was ignored.
#[test]
fn a_stricter_permission_mode_in_a_definition_restricts_the_sub_agent() {
    let allow_write = json!({"permissions": {"allow": ["Write"]}}).to_string();
    let cases: [(&str, Vec<&str>, Option<&str>); 4] = [
        (
            "plan",
            vec!["--settings", &allow_write],
            Some("Plan mode is active"),
        ),
        (
            "plan",
            vec!["--mode", "bypassPermissions"],
            Some("Plan mode is active"),
        ),
        ("default", vec!["--mode", "acceptEdits"], None),
        ("dontAsk", vec!["--mode", "bypassPermissions"], None),
    ];
    for (mode, extra, message) in cases {
        let dir = tempfile::tempdir().unwrap();
        write_agent(
            dir.path(),
            "planner",
            &format!(
                "---\nname: planner\ndescription: Plans\npermissionMode: {mode}\n---\nYou plan.\n"
            ),
        );
        let file = dir.path().join("out.txt");
        let (out, seen) = sub_agent_writes(dir.path(), "planner", &file, &extra);
        let case = format!("{mode} under {extra:?}");
        assert!(out.status.success(), "{case}: {}", stderr(&out));
        assert!(!file.exists(), "{case}: the sub-agent wrote the file");
        let refused = sub_agents_write_result(&seen);
        assert_eq!(refused["is_error"], true, "{case}: {refused}");
        if let Some(message) = message {
            assert!(
                refused["content"].as_str().unwrap().contains(message),
                "{case}: {refused}"
            );
        }
        assert!(
            !stderr(&out).contains("permissionMode"),
            "{case}: {}",
            stderr(&out)
        );
    }
}

/// A definition's `permissionMode` that would loosen its caller's mode is ignored and said
/// to be: `bypassPermissions` under a caller in default mode (nobody to ask here) leaves
/// the sub-agent's Write refused, and the Agent call's result says the mode was not taken.
/// An unknown mode is warned about when the definitions load.
#[test]
fn a_looser_or_unknown_permission_mode_in_a_definition_is_ignored_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    write_agent(
        dir.path(),
        "loose",
        "---\nname: loose\ndescription: Wants everything\npermissionMode: bypassPermissions\n---\nYou do as you like.\n",
    );
    write_agent(
        dir.path(),
        "odd",
        "---\nname: odd\ndescription: Odd\npermissionMode: yolo\n---\nYou are odd.\n",
    );
    let file = dir.path().join("out.txt");
    let (out, seen) = sub_agent_writes(dir.path(), "loose", &file, &[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!file.exists(), "the sub-agent bypassed its caller's mode");
    assert_eq!(sub_agents_write_result(&seen)["is_error"], true);
    let report = agent_result(&seen);
    let text = report["content"].as_str().unwrap();
    assert!(text.starts_with("sub-agent report"), "{report}");
    assert!(
        text.contains(
            "permissionMode `bypassPermissions` was not applied: it would loosen the caller's mode (`default`)"
        ),
        "{report}"
    );
    assert!(
        err.lines().any(|l| l.contains("odd.md")
            && l.contains("permissionMode `yolo` is no permission mode")
            && l.contains("ignored")),
        "{err}"
    );
}

/// A definition's `tools` or `disallowedTools` entry that names no tool is warned about
/// when the definitions load (a misspelt `disallowedTools: Wrte, Edti, Bsah` was ignored
/// without a word, and the "read only" sub-agent got Bash, Edit and Write); MCP tools'
/// names are not.
#[test]
fn a_definitions_tool_names_that_name_no_tool_are_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    write_agent(
        dir.path(),
        "reader",
        "---\nname: reader\ndescription: Reads\ntools: Read, Raed, mcp__docs__search\ndisallowedTools: Wrte, Edti, Bsah\n---\nYou only read.\n",
    );
    trust(dir.path());
    let (url, _seen) = serve(|_, _| full(turn(Some("Done."), &[])));
    let out = agent(&url, dir.path(), &["--json"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    for (field, name) in [
        ("tools", "Raed"),
        ("disallowedTools", "Wrte"),
        ("disallowedTools", "Edti"),
        ("disallowedTools", "Bsah"),
    ] {
        assert!(
            err.lines().any(|l| l.contains("reader.md")
                && l.contains(&format!("{field} names `{name}`, which is no tool"))),
            "{field} {name}: {err}"
        );
    }
    assert!(!err.contains("mcp__docs__search"), "{err}");
}

/// A response whose `message_start` reported its input tokens and then went silent (the
/// read timeout ends it) cost what it reported: `usage` and `cost_usd` count it (they
/// said 0: only a response that reached its first content block was counted).
#[test]
fn a_response_that_fails_before_its_first_block_still_counts_its_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let head = sse(&[start(1_000_000)]);
    let silence = Gate::default();
    let held = silence.clone();
    let (url, seen) =
        serve(move |_, _| Reply::Stream(vec![Part::Data(head.clone()), Part::Hold(held.clone())]));
    let out = agent_command(&url, dir.path(), &["--json"], "go")
        .env("API_TIMEOUT_MS", "500")
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .output()
        .unwrap();
    silence.open();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(seen.lock().unwrap().len(), 1);
    let result = json_out(&out);
    assert_eq!(
        result["usage"],
        json!({"input_tokens": 1_000_000, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}),
        "{result}"
    );
    // Sonnet's prices: 1,000,000 x $3 + 1 x $15, per million.
    let cost = result["cost_usd"].as_f64().unwrap();
    assert!((cost - 3.000_015).abs() < 1e-9, "{cost}");
}

/// An overload reported after `message_start` (before any content) is retried, but the
/// attempt's tokens count at once: once they reach the budget (1,000,000 input tokens,
/// $3, of $1) the retry is not sent, and the cost says what was spent. Four attempts were
/// sent and the cost said 0.
#[test]
fn a_retried_attempts_tokens_count_toward_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let overloaded = sse(&[
        start(1_000_000),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let (url, seen) = serve(move |_, _| full(overloaded.clone()));
    let out = agent(&url, dir.path(), &["--json", "--max-budget-usd", "1"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(seen.lock().unwrap().len(), 1, "retried over the budget");
    let result = json_out(&out);
    assert!(
        result["stop"]
            .as_str()
            .unwrap()
            .contains("the spending limit of $1 was reached"),
        "{result}"
    );
    let cost = result["cost_usd"].as_f64().unwrap();
    assert!((cost - 3.000_015).abs() < 1e-9, "{cost}");
}

/// The tokens of an attempt retried after an early overload and those of the attempt that
/// then answered are both counted, each once: 1,000 input tokens, then 2,000 (the
/// answering attempt's `message_start` is not counted a second time when its events
/// reach the loop).
#[test]
fn a_retried_attempt_and_the_answer_after_it_are_each_counted_once() {
    let dir = tempfile::tempdir().unwrap();
    let overloaded = sse(&[
        start(1_000),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ]);
    let mut events = vec![start(2_000)];
    events.extend(text_block(0, "Fine now."));
    events.extend(end("end_turn", 20));
    let answer = sse(&events);
    let (url, seen) = serve(move |i, _| {
        if i == 0 {
            full(overloaded.clone())
        } else {
            full(answer.clone())
        }
    });
    let out = agent(&url, dir.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(seen.lock().unwrap().len(), 2);
    let result = json_out(&out);
    assert_eq!(result["final_text"], "Fine now.");
    assert_eq!(
        result["usage"],
        json!({"input_tokens": 3_000, "output_tokens": 21, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}),
        "{result}"
    );
    // 3,000 x $3 + 21 x $15, per million.
    let cost = result["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.009_315).abs() < 1e-9, "{cost}");
}

/// A sub-agent limited to `Agent(rev)` that calls Agent without `subagent_type` asked for
/// the built-in type, and the refusal names it (it said "Agent type '' not found").
#[test]
fn an_agent_call_without_a_type_is_refused_naming_general_purpose() {
    let dir = tempfile::tempdir().unwrap();
    write_agent(
        dir.path(),
        "lead",
        "---\nname: lead\ndescription: Leads\ntools: Read, Agent(rev)\n---\nYou lead.\n",
    );
    write_agent(
        dir.path(),
        "rev",
        "---\nname: rev\ndescription: Reviews\ntools: Read\n---\nYou review.\n",
    );
    trust(dir.path());
    let parent = turn(
        None,
        &[(
            "toolu_lead",
            "Agent",
            json!({"description": "lead", "prompt": "lead the work", "subagent_type": "lead"}),
        )],
    );
    let untyped = turn(
        None,
        &[(
            "toolu_untyped",
            "Agent",
            json!({"description": "help", "prompt": "help me"}),
        )],
    );
    let (url, seen) = serve(move |_, request| {
        if request.is_subagent() {
            if request.messages().len() == 1 {
                full(untyped.clone())
            } else {
                full(turn(Some("lead report"), &[]))
            }
        } else if request.messages().len() == 1 {
            full(parent.clone())
        } else {
            full(turn(Some("Done."), &[]))
        }
    });
    let out = agent(&url, dir.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    let refused = sub_agents_write_result(&seen);
    assert_eq!(refused["is_error"], true, "{refused}");
    assert!(
        refused["content"]
            .as_str()
            .unwrap()
            .contains("Agent type 'general-purpose' not found. Available agents: rev"),
        "{refused}"
    );
}
