//! Session 31's review of sub-agent definitions, against the local stand-in for the
//! Messages API (`support/model_api.rs`) and the tiny MCP server: server-wide MCP names
//! (`mcp__tiny`, `mcp__tiny__*`) in a definition's `tools` and `disallowedTools`, a
//! `disallowedTools` entry that matches none of the caller's tools, the cap on what a
//! description puts in the Agent tool's description, two files defining one name, and a
//! `tools` entry with a rule's content in parentheses.

use std::path::Path;

use serde_json::{Value, json};

use crate::model_api::*;
use crate::serve_support;

/// Writes the agent definition `text` to `dir/.claude/agents/<file>.md`.
fn write_agent(dir: &Path, file: &str, text: &str) {
    let agents = dir.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join(format!("{file}.md")), text).unwrap();
}

/// The agent type a sub-agent's request is for: its system prompt (the definition's body)
/// says `AGENT=<type>.`.
fn agent_type_of(request: &Request) -> Option<String> {
    let system = request.body["system"].as_str()?;
    let rest = system.split_once("AGENT=")?.1;
    Some(rest.split('.').next()?.to_owned())
}

/// What a run of [`run_sub_agents`] saw.
struct SubAgentRun {
    out: std::process::Output,
    /// Each sub-agent type's first request.
    first: Vec<(String, Request)>,
    /// Each sub-agent type's result of its `mcp__tiny__echo` call.
    echo: Vec<(String, Value)>,
    /// Each Agent call's result in the main agent's last request, by agent type.
    agent_results: Vec<(String, Value)>,
}

impl SubAgentRun {
    fn first(&self, kind: &str) -> &Request {
        &self
            .first
            .iter()
            .find(|(k, _)| k == kind)
            .unwrap_or_else(|| panic!("no request of {kind}"))
            .1
    }
    fn echo(&self, kind: &str) -> &Value {
        &self
            .echo
            .iter()
            .find(|(k, _)| k == kind)
            .unwrap_or_else(|| panic!("no echo result of {kind}"))
            .1
    }
    fn agent_result(&self, kind: &str) -> &Value {
        &self
            .agent_results
            .iter()
            .find(|(k, _)| k == kind)
            .unwrap_or_else(|| panic!("no Agent result of {kind}"))
            .1
    }
}

/// Runs `toolwright agent --json` in `dir` (trusted, holding the definitions) with the tiny
/// MCP server `tiny`: the main agent starts one sub-agent of each of `kinds` at once; each
/// calls `mcp__tiny__echo` and then reports.
fn run_sub_agents(dir: &Path, tiny: &Path, kinds: &[&str]) -> SubAgentRun {
    trust(dir);
    let calls: Vec<(String, Value)> = kinds
        .iter()
        .map(|kind| {
            (
                format!("toolu_{kind}"),
                json!({"description": "check", "prompt": "call echo", "subagent_type": kind}),
            )
        })
        .collect();
    let borrowed: Vec<(&str, &str, Value)> = calls
        .iter()
        .map(|(id, input)| (id.as_str(), "Agent", input.clone()))
        .collect();
    let parent = turn(None, &borrowed);
    let echo = turn(
        None,
        &[("toolu_echo", "mcp__tiny__echo", json!({"text": "hello"}))],
    );
    let (url, seen) = serve(move |_, request| {
        if request.is_subagent() {
            if request.messages().len() == 1 {
                full(echo.clone())
            } else {
                full(turn(Some("sub-agent report"), &[]))
            }
        } else if request.messages().len() == 1 {
            full(parent.clone())
        } else {
            full(turn(Some("Done."), &[]))
        }
    });
    let config = json!({"mcpServers": {"tiny": {"command": tiny, "args": []}}});
    let out = agent(
        &url,
        dir,
        &[
            "--json",
            "--mode",
            "bypassPermissions",
            "--mcp-config",
            &config.to_string(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap().clone();
    let mut first = Vec::new();
    let mut echo = Vec::new();
    for request in seen.iter().filter(|r| r.is_subagent()) {
        let kind = agent_type_of(request).expect("the sub-agent's type");
        if request.messages().len() == 1 {
            first.push((kind, request.clone()));
        } else {
            let result = results(&request.messages()[2])
                .into_iter()
                .find(|(id, _)| id == "toolu_echo")
                .expect("the echo call's result")
                .1;
            echo.push((kind, result));
        }
    }
    let last = seen.iter().rfind(|r| !r.is_subagent()).unwrap();
    let agent_results = results(last.messages().last().unwrap())
        .into_iter()
        .map(|(id, result)| (id.trim_start_matches("toolu_").to_owned(), result))
        .collect();
    SubAgentRun {
        out,
        first,
        echo,
        agent_results,
    }
}

/// The MCP tools of `tiny` a request offers.
fn tiny_tools(request: &Request) -> Vec<String> {
    request
        .tool_names()
        .into_iter()
        .filter(|n| n.starts_with("mcp__tiny__"))
        .collect()
}

/// A definition whose `disallowedTools` names an MCP server (`mcp__tiny`, `mcp__tiny__*`,
/// as settings' rules do) keeps all of that server's tools out: the sub-agent is offered
/// none of them and its call of one is no tool's (it was offered them all and its call
/// ran). One naming the server in `tools` gets all of them (it got none), and nothing
/// else.
#[test]
fn server_wide_mcp_names_in_tools_and_disallowed_tools_name_the_servers_tools() {
    let Some(tiny) = serve_support::tiny_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kinds = ["nomcp1", "nomcp2", "onlymcp1", "onlymcp2"];
    for (kind, field) in [
        ("nomcp1", "disallowedTools: mcp__tiny"),
        ("nomcp2", "disallowedTools: mcp__tiny__*"),
        ("onlymcp1", "tools: mcp__tiny"),
        ("onlymcp2", "tools: mcp__tiny__*"),
    ] {
        write_agent(
            dir.path(),
            kind,
            &format!("---\nname: {kind}\ndescription: d\n{field}\n---\nAGENT={kind}.\n"),
        );
    }
    let run = run_sub_agents(dir.path(), &tiny, &kinds);
    for kind in ["nomcp1", "nomcp2"] {
        let first = run.first(kind);
        assert_eq!(tiny_tools(first), Vec::<String>::new(), "{kind}");
        assert!(first.tool("Read").is_some(), "{kind}");
        let echo = run.echo(kind);
        assert_eq!(echo["is_error"], true, "{kind}: {echo}");
        assert!(
            echo.to_string()
                .contains("No such tool available: mcp__tiny__echo"),
            "{kind}: {echo}"
        );
    }
    for kind in ["onlymcp1", "onlymcp2"] {
        let first = run.first(kind);
        let offered = tiny_tools(first);
        assert!(
            offered.iter().any(|n| n == "mcp__tiny__echo") && offered.len() > 5,
            "{kind}: {offered:?}"
        );
        assert_eq!(first.tool_names().len(), offered.len(), "{kind}");
        let echo = run.echo(kind);
        assert_ne!(echo["is_error"], true, "{kind}: {echo}");
        assert!(echo.to_string().contains("hello"), "{kind}: {echo}");
    }
    let err = stderr(&run.out);
    assert!(
        !err.lines().any(|l| l.contains("agent definition")),
        "{err}"
    );
}

/// A `disallowedTools` entry naming MCP tools that none of the caller's tools is (a server
/// that is not there, a tool its server does not have) keeps nothing out, and the Agent
/// call's result says so, as a misspelt name is said (it was silent); the server-wide
/// names that do match say nothing.
#[test]
fn a_disallowed_mcp_name_that_matches_nothing_is_said() {
    let Some(tiny) = serve_support::tiny_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    write_agent(
        dir.path(),
        "stray",
        "---\nname: stray\ndescription: d\ndisallowedTools: mcp__nosuch, mcp__tiny__nosuch, mcp__tiny__fail\n---\nAGENT=stray.\n",
    );
    write_agent(
        dir.path(),
        "nomcp",
        "---\nname: nomcp\ndescription: d\ndisallowedTools: mcp__tiny\n---\nAGENT=nomcp.\n",
    );
    let run = run_sub_agents(dir.path(), &tiny, &["stray", "nomcp"]);
    let text = run.agent_result("stray")["content"].to_string();
    for name in ["mcp__nosuch", "mcp__tiny__nosuch"] {
        assert!(
            text.contains(&format!(
                "disallowedTools names `{name}`, which is none of the caller's tools: it keeps nothing out"
            )),
            "{name}: {text}"
        );
    }
    assert!(!text.contains("mcp__tiny__fail"), "{text}");
    // What it names exactly is kept out; the rest stays.
    let offered = tiny_tools(run.first("stray"));
    assert!(
        !offered.iter().any(|n| n == "mcp__tiny__fail"),
        "{offered:?}"
    );
    assert!(
        offered.iter().any(|n| n == "mcp__tiny__echo"),
        "{offered:?}"
    );
    let text = run.agent_result("nomcp")["content"].to_string();
    assert!(!text.contains("the agent's definition"), "{text}");
}

/// Runs `toolwright agent --json` in `dir` (trusted) where the main agent starts one
/// sub-agent of `kind`, which reports at once. Returns the output and the requests.
fn run_one(dir: &Path, kind: &str) -> (std::process::Output, Vec<Request>) {
    trust(dir);
    let parent = turn(
        None,
        &[(
            "toolu_agent",
            "Agent",
            json!({"description": "check", "prompt": "report", "subagent_type": kind}),
        )],
    );
    let (url, seen) = serve(move |_, request| {
        if request.is_subagent() {
            full(turn(Some("sub-agent report"), &[]))
        } else if request.messages().len() == 1 {
            full(parent.clone())
        } else {
            full(turn(Some("Done."), &[]))
        }
    });
    let out = agent(&url, dir, &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap().clone();
    (out, seen)
}

/// A description is put into the Agent tool's description (sent with every request) cut
/// at 1,000 characters, on a character boundary and with an ellipsis, and the cut is said
/// once on standard error naming the file: a 100,000-character description made the
/// tool's description 200 kB.
#[test]
fn a_long_description_is_cut_in_the_agent_tools_description() {
    let dir = tempfile::tempdir().unwrap();
    // Two-byte characters: a cut at a byte count would fall inside one.
    let long = "é".repeat(100_000);
    write_agent(
        dir.path(),
        "wordy",
        &format!("---\nname: wordy\ndescription: {long}\n---\nAGENT=wordy.\n"),
    );
    let (out, seen) = run_one(dir.path(), "wordy");
    let description = seen[0].tool("Agent").unwrap()["description"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        description.len() < 6_000,
        "the Agent tool's description is {} bytes",
        description.len()
    );
    let cut = format!("- wordy: {}…", "é".repeat(1_000));
    assert!(description.contains(&cut), "{description}");
    assert!(!description.contains(&format!("{}é", &cut[..cut.len() - "…".len()])));
    let err = stderr(&out);
    let said: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("wordy.md") && l.contains("description"))
        .collect();
    assert_eq!(said.len(), 1, "{err}");
    assert!(
        said[0].contains("100000 characters") && said[0].contains("first 1000"),
        "{err}"
    );
    // The sub-agent still runs (its description is for the caller only).
    assert!(seen.iter().any(|r| r.is_subagent()));
}

/// Two files of one directory that define the same agent name are said on standard error,
/// naming both files and the one used: the one whose file name sorts last (it was taken
/// without a word).
#[test]
fn two_files_defining_one_name_are_said_with_the_one_used() {
    let dir = tempfile::tempdir().unwrap();
    write_agent(
        dir.path(),
        "first",
        "---\nname: twin\ndescription: first\n---\nAGENT=first.\n",
    );
    write_agent(
        dir.path(),
        "second",
        "---\nname: twin\ndescription: second\n---\nAGENT=second.\n",
    );
    let (out, seen) = run_one(dir.path(), "twin");
    let sub = seen.iter().find(|r| r.is_subagent()).unwrap();
    assert_eq!(agent_type_of(sub).as_deref(), Some("second"));
    let err = stderr(&out);
    let first = dir.path().join(".claude/agents/first.md");
    let second = dir.path().join(".claude/agents/second.md");
    let line = err
        .lines()
        .find(|l| l.contains("`twin`"))
        .unwrap_or_else(|| panic!("no notice: {err}"));
    assert!(
        line.contains(&first.display().to_string())
            && line.contains(&second.display().to_string())
            && line.contains(&format!("{} is used", second.display())),
        "{line}"
    );
}

/// A `tools` entry with a rule's content (`Bash(git status)`) gives the whole tool: said on
/// standard error, naming the file (it was silent). `Agent(worker)` is no such entry.
#[test]
fn a_tools_entry_with_content_in_parentheses_is_said_to_give_the_whole_tool() {
    let dir = tempfile::tempdir().unwrap();
    write_agent(
        dir.path(),
        "gitter",
        "---\nname: gitter\ndescription: d\ntools: Read, Bash(git status), Agent(worker)\n---\nAGENT=gitter.\n",
    );
    write_agent(
        dir.path(),
        "worker",
        "---\nname: worker\ndescription: d\n---\nAGENT=worker.\n",
    );
    let (out, seen) = run_one(dir.path(), "gitter");
    let sub = seen.iter().find(|r| r.is_subagent()).unwrap();
    assert!(sub.tool("Bash").is_some());
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains("gitter.md")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("tools names `Bash(git status)`")
            && lines[0].contains("the whole `Bash` tool"),
        "{err}"
    );
}
