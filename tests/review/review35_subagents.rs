//! Session 35's review of sub-agents in `toolwright agent`, against the local stand-in for
//! the Messages API (`support/model_api.rs`): a long `tools` list loads in linear time and is
//! cut; a project definition linked out of the project, or one a Read deny rule covers, is
//! refused as a project skill is; types a deny rule refuses are not listed; the SubagentStop
//! cap is said; several text blocks are kept apart; `model: "fable"`; and
//! `CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS` values that are no count are said.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::model_api::*;

/// Writes the agent definition `text` to `dir/.claude/agents/<file>.md`.
fn write_agent(dir: &Path, file: &str, text: &str) {
    let agents = dir.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join(format!("{file}.md")), text).unwrap();
}

/// Writes the user's settings (`.no-user-config/settings.json`, where `agent_command` points
/// the configuration).
fn user_settings(dir: &Path, settings: &Value) {
    let config = dir.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("settings.json"), settings.to_string()).unwrap();
}

/// A turn of the main agent calling Agent with `input` (id `toolu_agent`).
fn agent_turn(input: &Value) -> String {
    turn(None, &[("toolu_agent", "Agent", input.clone())])
}

/// The lines of the Agent tool's description that list agent types (`- name: ...`).
fn listed_types(request: &Request) -> Vec<String> {
    let description = request.tool("Agent").unwrap()["description"]
        .as_str()
        .unwrap()
        .to_owned();
    description
        .lines()
        .filter_map(|l| l.strip_prefix("- "))
        .filter_map(|l| l.split_once(':'))
        .map(|(name, _)| name.to_owned())
        .filter(|name| !name.contains(' '))
        .collect()
}

/// The tool_result of the main agent's Agent call, from its second request.
fn agent_result(seen: &Seen) -> Value {
    let seen = seen.lock().unwrap();
    let main: Vec<&Request> = seen.iter().filter(|r| !r.is_subagent()).collect();
    let second = main.get(1).expect("a second request of the main agent");
    let message = &second.messages()[2];
    results(message)
        .into_iter()
        .find(|(id, _)| id == "toolu_agent")
        .map(|(_, r)| r)
        .unwrap()
}

/// Runs `toolwright agent` until its first request reaches the stand-in, at most `limit`;
/// how long that took (`None`: it did not come), and the run's stderr (the process is
/// killed once the request came or the time is up).
fn time_to_first_request(dir: &Path, limit: Duration) -> (Option<Duration>, String) {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let tx = std::sync::Mutex::new(tx);
    let (url, _seen) = serve(move |_, _| {
        let _ = tx.lock().unwrap().send(());
        full(turn(Some("Done."), &[]))
    });
    let started = Instant::now();
    let mut child = agent_command(&url, dir, &["--json"], "hi")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let came = rx.recv_timeout(limit).ok().map(|()| started.elapsed());
    if came.is_none() {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    (came, stderr(&out))
}

/// Found by review: a definition's long `tools` list (comma form or YAML list) loaded in time
/// quadratic in its length before the first request (8,000 entries took 8 s, 200,000 more
/// than ten minutes of CPU) and signals waited for it. Loading is linear, duplicates are
/// dropped, and a list of more than `MAX_TOOL_ENTRIES` (2,000) different entries is cut
/// with a notice: the first request goes out at once. (The file itself is read up to
/// 256 KiB, as a `SKILL.md` is.)
#[test]
fn a_long_tools_list_loads_at_once_and_is_cut_with_a_notice() {
    for yaml in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<String> = (0..10_000).map(|i| format!("mcp__srv__t{i}")).collect();
        let tools = if yaml {
            format!(
                "tools:\n{}",
                names
                    .iter()
                    .map(|n| format!("  - {n}\n"))
                    .collect::<String>()
            )
        } else {
            format!("tools: Read, {}\n", names.join(", "))
        };
        write_agent(
            dir.path(),
            "wide",
            &format!("---\nname: wide\ndescription: d\n{tools}---\nbody\n"),
        );
        trust(dir.path());
        let (came, err) = time_to_first_request(dir.path(), Duration::from_secs(20));
        let took = came
            .unwrap_or_else(|| panic!("yaml {yaml}: no request within 20 s of the start: {err}"));
        assert!(
            took < Duration::from_secs(5),
            "yaml {yaml}: the first request took {took:?}"
        );
        let wanted = format!(
            "tools names {} different entries: only the first 2000 are read (the rest give nothing)",
            if yaml { 10_000 } else { 10_001 }
        );
        assert!(err.contains(&wanted), "yaml {yaml}: {err}");
    }
}

/// A `disallowedTools` list past the limit is not cut (the rest would no longer be kept
/// out): the definition is refused, said on stderr.
#[test]
fn a_disallowed_tools_list_past_the_limit_refuses_the_definition() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..5_000).map(|i| format!("mcp__srv__t{i}")).collect();
    write_agent(
        dir.path(),
        "narrow",
        &format!(
            "---\nname: narrow\ndescription: d\ndisallowedTools: {}\n---\nbody\n",
            names.join(", ")
        ),
    );
    trust(dir.path());
    let (url, seen) = serve(|_, _| full(turn(Some("Done."), &[])));
    let out = agent(&url, dir.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(
            "ignored: disallowedTools names 5000 different entries, more than the 2000 read"
        ),
        "{err}"
    );
    assert_eq!(listed_types(&seen.lock().unwrap()[0]), ["general-purpose"]);
}

/// Found by review: a project definition that is a symbolic link to a file outside the
/// project was loaded (its body sent as the sub-agent's system prompt), while the Skills
/// loader refuses the same. It is refused with the skills' check: not listed, said on
/// stderr, and a call of it finds no such type; its body never reaches the model.
#[test]
fn a_project_definition_linked_out_of_the_project_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("proj");
    let outside = tmp.path().join("outside");
    std::fs::create_dir_all(project.join(".claude/agents")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(
        outside.join("secret.md"),
        "---\nname: linked\ndescription: d\n---\nSECRET-BODY-OUTSIDE\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "../../../outside/secret.md",
        project.join(".claude/agents/linked.md"),
    )
    .unwrap();
    // A link inside the project is fine.
    std::fs::create_dir_all(project.join("docs")).unwrap();
    std::fs::write(
        project.join("docs/inner.md"),
        "---\nname: inner\ndescription: d\n---\nINNER-BODY\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "../../docs/inner.md",
        project.join(".claude/agents/inner.md"),
    )
    .unwrap();
    trust(&project);
    let call = agent_turn(&json!({"description": "d", "prompt": "p", "subagent_type": "linked"}));
    let (url, seen) = serve(move |_, request| {
        if request.is_subagent() {
            return full(turn(Some("sub report"), &[]));
        }
        match request.messages().len() {
            1 => full(call.clone()),
            _ => full(turn(Some("Done."), &[])),
        }
    });
    let out = agent(&url, &project, &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let link = project.join(".claude/agents/linked.md");
    assert!(
        err.contains(&format!(
            "agent definition {} ignored: it is a project agent definition, and its file {} leads out of the project {}",
            link.display(),
            link.display(),
            project.display()
        )),
        "{err}"
    );
    let seen_now = seen.lock().unwrap().clone();
    assert_eq!(
        listed_types(&seen_now[0]),
        ["general-purpose", "inner"],
        "{err}"
    );
    for request in &seen_now {
        assert!(
            !request.body.to_string().contains("SECRET-BODY-OUTSIDE"),
            "{}",
            request.body
        );
    }
    let result = agent_result(&seen);
    assert_eq!(result["is_error"], true, "{result}");
    assert!(
        result["content"]
            .to_string()
            .contains("Agent type 'linked' not found"),
        "{result}"
    );
}

/// Found by review: a project definition a Read deny rule covers (here through a link to a
/// denied file of the project) was loaded and its body sent. It is not listed, and a call of
/// it is refused naming the rule, as the Skill tool refuses such a skill.
#[test]
fn a_definition_a_read_deny_rule_covers_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(project.join("private")).unwrap();
    std::fs::write(
        project.join("private/notes.md"),
        "---\nname: private\ndescription: d\n---\nSECRET-BODY-DENIED\n",
    )
    .unwrap();
    std::fs::create_dir_all(project.join(".claude/agents")).unwrap();
    std::os::unix::fs::symlink(
        "../../private/notes.md",
        project.join(".claude/agents/private.md"),
    )
    .unwrap();
    write_agent(
        &project,
        "plain",
        "---\nname: plain\ndescription: d\n---\nPLAIN\n",
    );
    std::fs::write(
        project.join(".claude/settings.json"),
        json!({"permissions": {"deny": ["Read(./private/**)"]}}).to_string(),
    )
    .unwrap();
    trust(&project);
    let call = agent_turn(&json!({"description": "d", "prompt": "p", "subagent_type": "private"}));
    let (url, seen) = serve(move |_, request| {
        if request.is_subagent() {
            return full(turn(Some("sub report"), &[]));
        }
        match request.messages().len() {
            1 => full(call.clone()),
            _ => full(turn(Some("Done."), &[])),
        }
    });
    let out = agent(&url, &project, &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let seen_now = seen.lock().unwrap().clone();
    assert_eq!(listed_types(&seen_now[0]), ["general-purpose", "plain"]);
    assert!(
        seen_now.iter().all(|r| !r.is_subagent()),
        "no sub-agent started"
    );
    for request in &seen_now {
        assert!(!request.body.to_string().contains("SECRET-BODY-DENIED"));
    }
    let result = agent_result(&seen);
    assert_eq!(result["is_error"], true, "{result}");
    let file = project.join(".claude/agents/private.md");
    assert!(
        result["content"].to_string().contains(&format!(
            "Agent type 'private' cannot be started: its definition file {} is covered by the deny rule Read(./private/**)",
            file.display()
        )),
        "{result}"
    );
}

/// Found by review: agent types a deny rule refuses (`Agent(reviewer)`) were still listed in
/// the Agent tool's description; Claude Code leaves them out (`filterDeniedAgents`).
#[test]
fn types_a_deny_rule_refuses_are_not_listed() {
    let dir = tempfile::tempdir().unwrap();
    write_agent(
        dir.path(),
        "reviewer",
        "---\nname: reviewer\ndescription: d\n---\nR\n",
    );
    write_agent(
        dir.path(),
        "tester",
        "---\nname: tester\ndescription: d\n---\nT\n",
    );
    user_settings(
        dir.path(),
        &json!({"permissions": {"deny": ["Agent(reviewer)"]}}),
    );
    trust(dir.path());
    let (url, seen) = serve(|_, _| full(turn(Some("Done."), &[])));
    let out = agent(&url, dir.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        listed_types(&seen.lock().unwrap()[0]),
        ["general-purpose", "tester"]
    );
}

/// Found by review: a SubagentStop hook that kept blocking was overridden after 8
/// continuations without a word (Stop's cap is said on stderr). Said the same way, naming
/// the sub-agent.
#[test]
fn the_subagent_stop_cap_is_said() {
    let dir = tempfile::tempdir().unwrap();
    write_agent(
        dir.path(),
        "worker",
        "---\nname: worker\ndescription: d\n---\nW\n",
    );
    trust(dir.path());
    user_settings(
        dir.path(),
        &json!({"hooks": {"SubagentStop": [{"hooks": [{"type": "command", "command": "echo 'keep going' >&2; exit 2"}]}]}}),
    );
    let call = agent_turn(&json!({"description": "d", "prompt": "p", "subagent_type": "worker"}));
    let (url, seen) = serve(move |_, request| {
        if request.is_subagent() {
            return full(turn(Some("sub report"), &[]));
        }
        match request.messages().len() {
            1 => full(call.clone()),
            _ => full(turn(Some("Done."), &[])),
        }
    });
    let out = agent(&url, dir.path(), &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let subs = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.is_subagent())
        .count();
    assert_eq!(subs, 9);
    let err = stderr(&out);
    assert!(
        err.contains("toolwright: A SubagentStop hook blocked the worker agent (")
            && err.contains(") from ending 9 consecutive times - overriding and ending its turn."),
        "{err}"
    );
}

/// Found by review: the Agent tool's `model` refused "fable", which Claude Code's input
/// declares (`sonnet`, `opus`, `haiku`, `fable`). It is accepted; it runs on
/// `ANTHROPIC_DEFAULT_FABLE_MODEL`, and without it the call fails saying why (no model id is
/// known for it here), not the input's schema.
#[test]
fn model_fable_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let call = agent_turn(&json!({"description": "d", "prompt": "p", "model": "fable"}));
    let (url, seen) = serve(move |_, request| {
        if request.is_subagent() {
            return full(turn(Some("sub report"), &[]));
        }
        match request.messages().len() {
            1 => full(call.clone()),
            _ => full(turn(Some("Done."), &[])),
        }
    });
    let out = agent_command(&url, dir.path(), &["--json"], "go")
        .env_remove("ANTHROPIC_DEFAULT_FABLE_MODEL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let result = agent_result(&seen);
    assert_eq!(result["is_error"], true, "{result}");
    let text = result["content"].to_string();
    assert!(
        text.contains("The model `fable` has no model id here")
            && text.contains("ANTHROPIC_DEFAULT_FABLE_MODEL"),
        "{result}"
    );
    assert!(!text.contains("InputValidationError"), "{result}");

    seen.lock().unwrap().clear();
    let out = agent_command(&url, dir.path(), &["--json"], "go")
        .env("ANTHROPIC_DEFAULT_FABLE_MODEL", "claude-fable-test")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let seen = seen.lock().unwrap();
    let sub = seen
        .iter()
        .find(|r| r.is_subagent())
        .expect("a sub-agent ran");
    assert_eq!(sub.body["model"], "claude-fable-test");
}

/// `CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS` values that are no positive whole number fell
/// back to 4 without a word; said as the tool-use concurrency variable's are.
#[test]
fn a_bad_concurrent_subagents_value_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let (url, _seen) = serve(|_, _| full(turn(Some("Done."), &[])));
    for value in ["0", "abc"] {
        let out = agent_command(&url, dir.path(), &["--json"], "go")
            .env("CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS", value)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let wanted = format!(
            "toolwright: CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS=\"{value}\" is not a positive whole number of sub-agents; the default, 4, is used"
        );
        assert!(stderr(&out).contains(&wanted), "{}", stderr(&out));
    }
    let out = agent_command(&url, dir.path(), &["--json"], "go")
        .env("CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS", "2")
        .output()
        .unwrap();
    assert!(
        !stderr(&out).contains("CLAUDE_CODE_MAX_CONCURRENT_SUBAGENTS"),
        "{}",
        stderr(&out)
    );
}
