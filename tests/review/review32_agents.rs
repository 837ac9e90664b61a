//! Session 32's review of sub-agent definitions, against the local stand-in for the
//! Messages API (`support/model_api.rs`): the notice for a `tools` or `disallowedTools`
//! entry naming an MCP tool that none of the caller's tools is, given once per agent type
//! and session instead of with every call of that type.

use std::path::Path;

use serde_json::{Value, json};

use crate::model_api::*;

/// Writes the agent definition `text` to `dir/.claude/agents/<file>.md`.
fn write_agent(dir: &Path, file: &str, text: &str) {
    let agents = dir.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join(format!("{file}.md")), text).unwrap();
}

/// The notices a definition of [`stray_definition`] gets (no MCP server is connected).
const NOTICES: [&str; 2] = [
    "tools names `mcp__gone`, which is none of the caller's tools: it gives nothing",
    "disallowedTools names `mcp__nosuch__tool`, which is none of the caller's tools: it keeps nothing out",
];

/// A definition of `name` whose `tools` and `disallowedTools` name MCP tools no server has.
fn stray_definition(name: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: d\ntools: Read, mcp__gone\ndisallowedTools: mcp__nosuch__tool\n---\nAGENT={name}.\n"
    )
}

/// An Agent call of `kind` with the id `id`.
fn agent_call(id: &str, kind: &str) -> (String, Value) {
    (
        id.to_owned(),
        json!({"description": "check", "prompt": "report", "subagent_type": kind}),
    )
}

/// A turn of the main agent making `calls`.
fn calls_turn(calls: &[(String, Value)]) -> String {
    let borrowed: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|(id, input)| (id.as_str(), "Agent", input.clone()))
        .collect();
    turn(None, &borrowed)
}

/// Two calls of one agent type whose definition names MCP tools no server has (in two
/// turns, and a third beside another type's first call): the notices are in the first
/// call's result only, once each (they were in every call's result, and logged with
/// each); the other type's first call says its own, once. The first call keeps them.
#[test]
fn a_definitions_mcp_notice_is_given_once_per_agent_type() {
    let dir = tempfile::tempdir().unwrap();
    write_agent(dir.path(), "stray", &stray_definition("stray"));
    write_agent(dir.path(), "other", &stray_definition("other"));
    trust(dir.path());
    let first = calls_turn(&[agent_call("toolu_s1", "stray")]);
    let second = calls_turn(&[
        agent_call("toolu_s2", "stray"),
        agent_call("toolu_o1", "other"),
    ]);
    let third = calls_turn(&[agent_call("toolu_s3", "stray")]);
    let (url, seen) = serve(move |_, request| {
        if request.is_subagent() {
            return full(turn(Some("sub-agent report"), &[]));
        }
        match request.messages().len() {
            1 => full(first.clone()),
            3 => full(second.clone()),
            5 => full(third.clone()),
            _ => full(turn(Some("Done."), &[])),
        }
    });
    let out = agent(&url, dir.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap().clone();
    let last = seen.iter().rfind(|r| !r.is_subagent()).unwrap();
    // Each Agent call's result, by id, from the whole conversation.
    let mut by_id: Vec<(String, String)> = Vec::new();
    for message in last.messages().iter().filter(|m| m["role"] == "user") {
        if message["content"].is_array() {
            for (id, result) in results(message) {
                by_id.push((id, result["content"].to_string()));
            }
        }
    }
    let result = |id: &str| -> &str {
        &by_id
            .iter()
            .find(|(i, _)| i == id)
            .unwrap_or_else(|| panic!("no result of {id}: {by_id:?}"))
            .1
    };
    for id in ["toolu_s1", "toolu_s2", "toolu_s3", "toolu_o1"] {
        assert!(
            result(id).contains("sub-agent report"),
            "{id}: {}",
            result(id)
        );
    }
    let conversation = serde_json::to_string(last.messages()).unwrap();
    for notice in NOTICES {
        assert!(
            result("toolu_s1").contains(notice),
            "{}",
            result("toolu_s1")
        );
        assert!(
            result("toolu_o1").contains(notice),
            "{}",
            result("toolu_o1")
        );
        for id in ["toolu_s2", "toolu_s3"] {
            assert!(!result(id).contains(notice), "{id}: {}", result(id));
        }
        // Once for each type in all the model was sent.
        assert_eq!(conversation.matches(notice).count(), 2, "{notice}");
        // And at most once for each type on standard error.
        assert!(
            stderr(&out).matches(notice).count() <= 2,
            "{}",
            stderr(&out)
        );
    }
}

/// The first call of a type whose sub-agent fails (its request refused by the API) does not
/// use up the notices: the Agent call fails, and the next call of that type says them.
#[test]
fn a_failed_first_call_leaves_the_notice_to_the_next() {
    let dir = tempfile::tempdir().unwrap();
    write_agent(dir.path(), "flaky", &stray_definition("flaky"));
    trust(dir.path());
    let first = calls_turn(&[agent_call("toolu_f1", "flaky")]);
    let second = calls_turn(&[agent_call("toolu_f2", "flaky")]);
    let sub_requests = std::sync::atomic::AtomicUsize::new(0);
    let (url, seen) = serve(move |_, request| {
        if request.is_subagent() {
            if sub_requests.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                return Reply::Status(
                    400,
                    json!({"type": "error", "error": {"type": "invalid_request_error", "message": "refused"}})
                        .to_string(),
                );
            }
            return full(turn(Some("sub-agent report"), &[]));
        }
        match request.messages().len() {
            1 => full(first.clone()),
            3 => full(second.clone()),
            _ => full(turn(Some("Done."), &[])),
        }
    });
    let out = agent(&url, dir.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap().clone();
    let last = seen.iter().rfind(|r| !r.is_subagent()).unwrap();
    let failed = results(&last.messages()[2])
        .into_iter()
        .find(|(id, _)| id == "toolu_f1")
        .unwrap()
        .1;
    assert_eq!(failed["is_error"], true, "{failed}");
    let next = results(&last.messages()[4])
        .into_iter()
        .find(|(id, _)| id == "toolu_f2")
        .unwrap()
        .1
        .to_string();
    assert!(next.contains("sub-agent report"), "{next}");
    for notice in NOTICES {
        assert!(next.contains(notice), "{next}");
    }
}
