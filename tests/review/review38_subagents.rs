//! Session 38's review of sub-agents and skills in `toolwright agent`, against the local
//! stand-in for the Messages API (`support/model_api.rs`). Found by review: an agent
//! definition's `hooks` frontmatter was dropped without a word, so a sub-agent ran the very
//! command its definition's PreToolUse hook blocks, and `skills` and `mcpServers` were
//! ignored as silently; a skill's `model` was read and never applied, unsaid.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::model_api::*;

/// Writes the agent definition `text` to `dir/.claude/agents/<file>.md`.
fn write_agent(dir: &Path, file: &str, text: &str) {
    let agents = dir.join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join(format!("{file}.md")), text).unwrap();
}

/// The tool_result of the main agent's call `id`, from its second request.
fn main_result(seen: &Seen, id: &str) -> Value {
    let seen = seen.lock().unwrap();
    let main: Vec<&Request> = seen.iter().filter(|r| !r.is_subagent()).collect();
    let second = main.get(1).expect("a second request of the main agent");
    results(&second.messages()[2])
        .into_iter()
        .find(|(result_id, _)| result_id == id)
        .map(|(_, r)| r)
        .unwrap()
}

/// Found by review: a definition whose frontmatter has a PreToolUse hook (here a real
/// script that blocks every Bash call with exit code 2) ran as if the hook were not there:
/// the sub-agent's `touch` ran, and nothing said the hook was dropped. Toolwright does not
/// run a definition's own hooks, so such an agent is not started at all: the Agent call is
/// refused saying why, the sub-agent makes no request and the file is never made, and the
/// definitions' notice on stderr names the file and its hooks.
#[test]
fn a_definitions_guard_hook_refuses_its_agent_rather_than_run_it_unguarded() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(
        project.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Bash"]}}).to_string(),
    )
    .unwrap();
    let guard = project.join("guard.sh");
    std::fs::write(
        &guard,
        "#!/bin/sh\necho \"blocked by the agent's own hook\" >&2\nexit 2\n",
    )
    .unwrap();
    std::fs::set_permissions(&guard, std::fs::Permissions::from_mode(0o755)).unwrap();
    write_agent(
        &project,
        "guarded",
        &format!(
            "---\nname: guarded\ndescription: guarded agent\nhooks:\n  PreToolUse:\n    - matcher: \"Bash\"\n      hooks:\n        - type: command\n          command: \"{}\"\n---\nYou are careful.\n",
            guard.display()
        ),
    );
    trust(&project);
    let ran = project.join("RAN");
    let touch = turn(
        None,
        &[(
            "toolu_bash",
            "Bash",
            json!({"command": format!("touch '{}'", ran.display())}),
        )],
    );
    let call = turn(
        None,
        &[(
            "toolu_agent",
            "Agent",
            json!({"description": "d", "prompt": "p", "subagent_type": "guarded"}),
        )],
    );
    let (url, seen) = serve(move |_, request| {
        if request.is_subagent() {
            return match request.messages().len() {
                1 => full(touch.clone()),
                _ => full(turn(Some("done"), &[])),
            };
        }
        match request.messages().len() {
            1 => full(call.clone()),
            _ => full(turn(Some("MAIN DONE"), &[])),
        }
    });
    let out = agent(&url, &project, &["--json"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!ran.exists(), "the command the hook blocks ran: {err}");
    assert!(
        !seen.lock().unwrap().iter().any(Request::is_subagent),
        "the guarded agent was started: {err}"
    );
    let result = main_result(&seen, "toolu_agent");
    assert_eq!(result["is_error"], true, "{result}");
    let text = result["content"].to_string();
    assert!(
        text.contains("Agent type 'guarded' cannot be started: its definition")
            && text.contains("has PreToolUse hooks"),
        "{result}"
    );
    let file = project.join(".claude/agents/guarded.md");
    assert!(
        err.contains(&format!("agent definition {}: hooks", file.display()))
            && err.contains("calls of this agent type are refused"),
        "{err}"
    );
}

/// Found by review: `skills`, `mcpServers` and hooks that guard nothing (PostToolUse) were
/// ignored without a word. The agent still runs, and the definitions' notice says of each
/// field that it is not applied.
#[test]
fn skills_mcp_servers_and_other_hooks_of_a_definition_are_said_not_applied() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    write_agent(
        &project,
        "noted",
        "---\nname: noted\ndescription: d\nskills:\n  - review\nmcpServers:\n  - memory\nhooks:\n  PostToolUse:\n    - matcher: \"Edit\"\n      hooks:\n        - type: command\n          command: \"true\"\n---\nYou note.\n",
    );
    trust(&project);
    let call = turn(
        None,
        &[(
            "toolu_agent",
            "Agent",
            json!({"description": "d", "prompt": "p", "subagent_type": "noted"}),
        )],
    );
    let (url, seen) = serve(move |_, request| {
        if request.is_subagent() {
            return full(turn(Some("noted report"), &[]));
        }
        match request.messages().len() {
            1 => full(call.clone()),
            _ => full(turn(Some("Done."), &[])),
        }
    });
    let out = agent(&url, &project, &["--json"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let file = project.join(".claude/agents/noted.md");
    for field in ["hooks", "skills", "mcpServers"] {
        assert!(
            err.contains(&format!("agent definition {}: {field} ", file.display())),
            "{field}: {err}"
        );
    }
    assert!(err.contains("the agent runs without them"), "{err}");
    let result = main_result(&seen, "toolu_agent");
    assert_ne!(result["is_error"], true, "{result}");
    assert!(
        result["content"].to_string().contains("noted report"),
        "{result}"
    );
}

/// Found by review: a skill's `model` frontmatter was read (the Skill tool's structured
/// output carries it) but never applied, and nothing said so. The requests after the skill
/// loads keep the session's model, and a notice on stderr says the skill's model is not
/// applied.
#[test]
fn a_skills_model_is_said_not_applied() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let skill = project.join(".claude/skills/fast");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\ndescription: quick lookups\nmodel: haiku\n---\nAnswer briefly.\n",
    )
    .unwrap();
    std::fs::write(
        project.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Skill"]}}).to_string(),
    )
    .unwrap();
    trust(&project);
    let call = turn(None, &[("toolu_skill", "Skill", json!({"skill": "fast"}))]);
    let (url, seen) = serve(move |_, request| match request.messages().len() {
        1 => full(call.clone()),
        _ => full(turn(Some("ok"), &[])),
    });
    let out = agent(&url, &project, &["--json", "--model", "sonnet"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "{err}");
    assert_eq!(seen[1].body["model"], seen[0].body["model"], "{err}");
    assert!(
        err.contains("skill fast asks for the model `haiku`, which is not applied"),
        "{err}"
    );
}
