//! Session 33's review of `toolwright agent`, against the local stand-in for the Messages
//! API (`support/model_api.rs`): `--print` writes the text of an incomplete answer,
//! `ANTHROPIC_AUTH_TOKEN` is sent as a bearer token, a `pause_turn` response is resumed, and
//! the Agent tool's description lists the tools a definition really gives.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::model_api::*;
use crate::serve_support;

/// A response of `text` alone that ends with `stop_reason`.
fn text_turn(text: &str, stop_reason: &str) -> String {
    let mut events = vec![start(10)];
    events.extend(text_block(0, text));
    events.extend(end(stop_reason, 5));
    sse(&events)
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Writes the agent definition `text` to `dir/.claude/agents/<file>.md`.
fn write_agent(dir: &Path, file: &str, text: &str) {
    let agents = dir.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join(format!("{file}.md")), text).unwrap();
}

/// `--print` writes the text an incomplete answer has (the parts joined, as `--json`'s
/// `final_text`), still exiting 1 with the reason on stderr: an answer still cut off by
/// `max_tokens` after the attempts to go on, and one stopped for another reason the API
/// gave. A run that failed without any text writes nothing.
#[test]
fn print_writes_the_text_of_an_incomplete_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = serve(|_, _| full(text_turn("part1 ", "max_tokens")));
    let out = agent(&url, dir.path(), &["--print"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "toolwright agent: the answer is incomplete: it was still cut off by the output token limit (max_tokens 8192) after 3 attempts to go on"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "part1 part1 part1 part1 \n");
    assert_eq!(seen.lock().unwrap().len(), 4);

    let (url, _) = serve(|_, _| full(text_turn("so far", "model_context_window_exceeded")));
    let out = agent(&url, dir.path(), &["--print"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the API stopped it (model_context_window_exceeded)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "so far\n");

    // Failed before any text: nothing on stdout.
    let (url, _) = serve(|_, _| {
        Reply::Status(
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}})
                .to_string(),
        )
    });
    let out = agent(&url, dir.path(), &["--print"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the API answered 400"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "");
}

/// `ANTHROPIC_AUTH_TOKEN` is accepted as the Anthropic SDKs accept it: sent as
/// `Authorization: Bearer <token>` (no `x-api-key`) when it is the only credential, both
/// headers when both are set; a settings `env` may set it; without either, the error names
/// both. The token is never printed.
#[test]
fn an_auth_token_is_sent_as_a_bearer_token() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = serve(|_, _| full(turn(Some("Done."), &[])));
    let run = |key: Option<&str>, token: Option<&str>| {
        let mut command = agent_command(&url, dir.path(), &["--json"], "hi");
        command
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("ANTHROPIC_AUTH_TOKEN");
        if let Some(key) = key {
            command.env("ANTHROPIC_API_KEY", key);
        }
        if let Some(token) = token {
            command.env("ANTHROPIC_AUTH_TOKEN", token);
        }
        command.output().unwrap()
    };
    let out = run(None, Some("tok-SECRET-1"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stdout(&out).contains("tok-SECRET-1") && !stderr(&out).contains("tok-SECRET-1"));
    {
        let seen = seen.lock().unwrap();
        let last = seen.last().unwrap();
        assert_eq!(last.header("authorization"), Some("Bearer tok-SECRET-1"));
        assert_eq!(last.header("x-api-key"), None);
    }
    let out = run(Some("key-1"), Some("tok-2"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    {
        let seen = seen.lock().unwrap();
        let last = seen.last().unwrap();
        assert_eq!(last.header("authorization"), Some("Bearer tok-2"));
        assert_eq!(last.header("x-api-key"), Some("key-1"));
    }
    let out = run(Some("key-1"), None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        seen.lock().unwrap().last().unwrap().header("authorization"),
        None
    );

    // Neither: exit 2, both named, no request.
    let before = seen.lock().unwrap().len();
    let out = run(None, Some("  "));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("ANTHROPIC_API_KEY") && err.contains("ANTHROPIC_AUTH_TOKEN"),
        "{err}"
    );
    assert_eq!(seen.lock().unwrap().len(), before);
    // A token that cannot be a header value: refused, named, not shown.
    let out = run(None, Some("tok-SECRET-3\u{7}"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("ANTHROPIC_AUTH_TOKEN contains a control character"),
        "{err}"
    );
    assert!(!err.contains("tok-SECRET-3"), "{err}");

    // The user's settings `env` sets the token.
    let config = dir.path().join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("settings.json"),
        json!({"env": {"ANTHROPIC_AUTH_TOKEN": "tok-from-settings"}}).to_string(),
    )
    .unwrap();
    let out = run(None, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        seen.lock().unwrap().last().unwrap().header("authorization"),
        Some("Bearer tok-from-settings")
    );
}

/// A `pause_turn` response is resumed: the next request carries the conversation with the
/// paused assistant message last (no new user message), and the answer is the parts
/// joined. Each resumption is a request, so `--max-turns` caps a model that keeps pausing.
#[test]
fn a_paused_turn_is_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = serve(|i, _| {
        if i == 0 {
            full(text_turn("Searching. ", "pause_turn"))
        } else {
            full(text_turn("Found it.", "end_turn"))
        }
    });
    let out = agent(&url, dir.path(), &["--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result = json_out(&out);
    assert_eq!(result["stop"], "the model finished");
    assert_eq!(result["final_text"], "Searching. Found it.");
    assert_eq!(result["turns"], 2);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let resumed = seen[1].messages();
    assert_eq!(resumed.len(), 2, "{resumed:?}");
    assert_eq!(resumed[0]["role"], "user");
    assert_eq!(text_of(&resumed[0]), "run the check");
    assert_eq!(
        resumed[1],
        json!({"role": "assistant", "content": [{"type": "text", "text": "Searching. "}]})
    );
    drop(seen);

    // Paused every time: --max-turns ends it, with what it has on --print.
    let (url, seen) = serve(|_, _| full(text_turn("more ", "pause_turn")));
    let out = agent(&url, dir.path(), &["--print", "--max-turns", "3"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("stopped after 3 requests (max_turns)"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "more more more \n");
    assert_eq!(seen.lock().unwrap().len(), 3);
}

/// A paused response that holds a call is a tool_use turn: the call runs and the next
/// request carries its result.
#[test]
fn a_paused_response_with_a_call_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let (url, seen) = serve(|i, _| {
        if i == 0 {
            let mut events = vec![start(10)];
            events.extend(tool_block(
                0,
                "toolu_p",
                "Bash",
                &json!({"command": "echo paused-call"}),
            ));
            events.extend(end("pause_turn", 5));
            full(sse(&events))
        } else {
            full(turn(Some("Done."), &[]))
        }
    });
    let out = agent(&url, dir.path(), &["--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    let results = results(&seen[1].messages()[2]);
    assert_eq!(results[0].0, "toolu_p");
    assert!(
        results[0].1["content"].to_string().contains("paused-call"),
        "{}",
        results[0].1
    );
}

/// The description of the Agent tool (its first request's) for the agent `name`: its line.
fn agent_line(request: &Request, name: &str) -> String {
    let description = request.tool("Agent").expect("the Agent tool is offered")["description"]
        .as_str()
        .unwrap()
        .to_owned();
    description
        .lines()
        .find(|l| l.starts_with(&format!("- {name}:")))
        .unwrap_or_else(|| panic!("no line for {name}: {description}"))
        .to_owned()
}

/// The Agent tool's description lists the tools each definition resolves to, as its
/// agents get them out of the caller's tools: no misspelt or miscased name, no
/// parentheses, nothing `disallowedTools` (miscased too) keeps out, nothing a sub-agent
/// never gets; `All tools` when `tools` is absent; never a control character as written.
#[test]
fn the_agent_tools_description_lists_the_tools_a_definition_gives() {
    let dir = tempfile::tempdir().unwrap();
    trust(dir.path());
    write_agent(
        dir.path(),
        "typos",
        "---\nname: typos\ndescription: d\ntools: Bsah, bash, Bash(git status), Read, Glob, AskUserQuestion\ndisallowedTools: glob\n---\nbody\n",
    );
    write_agent(
        dir.path(),
        "ctl",
        "---\nname: ctl\ndescription: d\ntools: Read, Gr\u{1b}[31mep\n---\nbody\n",
    );
    write_agent(
        dir.path(),
        "most",
        "---\nname: most\ndescription: d\ndisallowedTools: Bsah, Write\n---\nbody\n",
    );
    write_agent(
        dir.path(),
        "lead",
        "---\nname: lead\ndescription: d\ntools: Read, Agent(typos)\n---\nbody\n",
    );
    let (url, seen) = serve(|_, _| full(turn(Some("Done."), &[])));
    let out = agent(&url, dir.path(), &["--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    let first = &seen[0];
    assert_eq!(agent_line(first, "typos"), "- typos: d (Tools: Bash, Read)");
    let ctl = agent_line(first, "ctl");
    assert!(!ctl.contains('\u{1b}'), "{ctl:?}");
    assert_eq!(ctl, "- ctl: d (Tools: Read)");
    assert_eq!(
        agent_line(first, "most"),
        "- most: d (Tools: All tools except Bash, Write)"
    );
    assert_eq!(agent_line(first, "lead"), "- lead: d (Tools: Read, Agent)");
    assert!(
        agent_line(first, "general-purpose").ends_with("(Tools: All tools)"),
        "{}",
        agent_line(first, "general-purpose")
    );
    let all: Value = first.tool("Agent").unwrap()["description"].clone();
    assert!(!all.to_string().contains("Bsah"), "{all}");
}

/// An MCP server's tools count among those a definition's MCP names give: the description
/// lists them by name, and a definition that keeps the server out lists it as kept out.
#[test]
fn the_agent_tools_description_lists_an_mcp_servers_tools() {
    let Some(tiny) = serve_support::tiny_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    trust(dir.path());
    write_agent(
        dir.path(),
        "mcp",
        "---\nname: mcp\ndescription: d\ntools: Read, mcp__tiny__echo, mcp__gone\n---\nbody\n",
    );
    write_agent(
        dir.path(),
        "nomcp",
        "---\nname: nomcp\ndescription: d\ndisallowedTools: mcp__tiny__echo\n---\nbody\n",
    );
    let (url, seen) = serve(|_, _| full(turn(Some("Done."), &[])));
    let config = json!({"mcpServers": {"tiny": {"command": tiny, "args": []}}});
    let out = agent(
        &url,
        dir.path(),
        &["--json", "--mcp-config", &config.to_string()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    assert!(seen[0].tool("mcp__tiny__echo").is_some());
    assert_eq!(
        agent_line(&seen[0], "mcp"),
        "- mcp: d (Tools: Read, mcp__tiny__echo)"
    );
    assert_eq!(
        agent_line(&seen[0], "nomcp"),
        "- nomcp: d (Tools: All tools except mcp__tiny__echo)"
    );
}
