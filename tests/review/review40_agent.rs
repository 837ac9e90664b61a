//! Review 40's findings on the `agent` command's sub-agents, against the local stand-in for
//! the Messages API (`support/model_api.rs`): agent definitions in subfolders of
//! `.claude/agents/` were ignored without a word; the Agent tool's schema told the model of
//! an internal function (a rustdoc link from `AgentModel`'s doc comments); and
//! `CLAUDE_CODE_SUBAGENT_MODEL` was ignored. Then the code review of those fixes: stray
//! markdown in subfolders became notices or agents, the walk's file and depth bounds were
//! silent, hidden definitions were no longer read, and a host that does not validate got
//! the wrong `fable` refusal.

use std::path::Path;

use serde_json::{Value, json};

use crate::model_api::*;

/// Writes `text` to `dir/<relative>`, making the directories on the way.
fn write(dir: &Path, relative: &str, text: &str) {
    let path = dir.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A definition named `name` whose body is `<name> body`.
fn definition(name: &str) -> String {
    format!("---\nname: {name}\ndescription: the {name} agent\n---\n{name} body\n")
}

/// A server whose main agent calls Agent once with `input`, then ends with "ok"; every
/// sub-agent request is answered "done".
fn calling_agent(input: Value) -> (String, Seen) {
    serve(move |_, request| {
        if request.is_subagent() {
            return full(turn(Some("done"), &[]));
        }
        if request.messages().len() == 1 {
            full(turn(None, &[("toolu_agent", "Agent", input.clone())]))
        } else {
            full(turn(Some("ok"), &[]))
        }
    })
}

/// The `model` of the requests of the main agent and of its sub-agents.
fn models(seen: &Seen) -> (Vec<String>, Vec<String>) {
    let seen = seen.lock().unwrap();
    let model = |r: &Request| r.body["model"].as_str().unwrap_or_default().to_owned();
    (
        seen.iter()
            .filter(|r| !r.is_subagent())
            .map(model)
            .collect(),
        seen.iter().filter(|r| r.is_subagent()).map(model).collect(),
    )
}

/// Found by review: a definition in a subfolder of `.claude/agents/` (project or user) was
/// not read, and nothing said so. Claude Code reads them (the name is the frontmatter's,
/// not the path's): they are listed and can be started, a link to a directory (here one
/// that would loop) is not followed, and of two files of the tree defining one name, the
/// one whose path sorts last is used and a notice names the one that is not.
#[test]
fn definitions_in_subfolders_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    write(&project, ".claude/agents/top.md", &definition("top"));
    write(
        &project,
        ".claude/agents/review/nested.md",
        &definition("nested"),
    );
    write(
        &project,
        ".claude/agents/review/deep/deeper.md",
        &definition("deeper"),
    );
    write(&project, ".claude/agents/a-twin.md", &definition("twin"));
    write(
        &project,
        ".claude/agents/review/twin.md",
        "---\nname: twin\ndescription: the nested twin\n---\ntwin body\n",
    );
    std::os::unix::fs::symlink("..", project.join(".claude/agents/review/loop")).unwrap();
    // The user's agents directory (`agent_command` points `CLAUDE_CONFIG_DIR` at it).
    write(
        &project,
        ".no-user-config/agents/team/mine.md",
        &definition("mine"),
    );
    trust(&project);
    let (url, seen) =
        calling_agent(json!({"description": "d", "prompt": "p", "subagent_type": "nested"}));
    let out = agent_command(&url, &project, &["-p"], "go")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let seen = seen.lock().unwrap();
    let listing = seen[0].tool("Agent").unwrap()["description"]
        .as_str()
        .unwrap()
        .to_owned();
    for name in ["top", "nested", "deeper", "mine"] {
        assert!(
            listing.contains(&format!("- {name}: the {name} agent")),
            "{name} is not listed: {listing}\n{err}"
        );
    }
    assert!(listing.contains("- twin: the nested twin"), "{listing}");
    let (loser, winner) = (
        project.join(".claude/agents/a-twin.md"),
        project.join(".claude/agents/review/twin.md"),
    );
    assert!(
        err.contains(&format!(
            "{} is used, {} is not",
            winner.display(),
            loser.display()
        )),
        "{err}"
    );
    // The link was not followed (nothing was found twice through it), and that is said.
    assert_eq!(err.matches("both define the agent").count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "{} was not read for agent definitions: it is a link to a folder",
            project.join(".claude/agents/review/loop").display()
        )),
        "{err}"
    );
    let sub = seen
        .iter()
        .find(|r| r.is_subagent())
        .expect("the nested agent made no request");
    assert!(
        sub.body["system"]
            .as_str()
            .is_some_and(|s| s.contains("nested body")),
        "{}",
        sub.body["system"]
    );
}

/// Found by review: the Agent tool's `model` was a `oneOf` of constants each with a Rust doc
/// comment as its description, one of them a rustdoc link (``[`resolve_fable`]``) with the
/// comment's line breaks. It is a plain string enum, as Claude Code declares it, with one
/// description for the model; and no tool the agent sends (deferred ones included) has a
/// rustdoc link in its description or schema.
#[test]
fn the_schemas_the_model_gets_hold_no_rust_docs() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let mut tools = Vec::new();
    // With tool search on and off: the deferred tools' schemas are sent in the second.
    for search in ["true", "false"] {
        let (url, seen) = serve(|_, _| full(turn(Some("ok"), &[])));
        let out = agent_command(&url, &project, &["-p"], "go")
            .env("ENABLE_TOOL_SEARCH", search)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        tools.extend(
            seen.lock().unwrap()[0].body["tools"]
                .as_array()
                .unwrap()
                .clone(),
        );
    }
    let agent = tools.iter().find(|t| t["name"] == "Agent").unwrap();
    let model = &agent["input_schema"]["properties"]["model"];
    assert_eq!(model["type"], "string", "{model}");
    assert_eq!(
        model["enum"],
        json!(["sonnet", "opus", "haiku", "fable"]),
        "{model}"
    );
    assert!(model.get("oneOf").is_none(), "{model}");
    assert!(
        model["description"]
            .as_str()
            .is_some_and(|d| !d.is_empty() && !d.contains('\n')),
        "{model}"
    );
    assert!(tools.len() > 10, "{tools:?}");
    for tool in &tools {
        let text = tool.to_string();
        assert!(
            !text.contains("[`"),
            "a rustdoc link in {}: {text}",
            tool["name"]
        );
    }
}

/// Found by review: `CLAUDE_CODE_SUBAGENT_MODEL` was ignored. It names the model of every
/// sub-agent, before the call's `model` (a `fable` call too, which then needs no model id
/// of its own) and the definition's; an alias resolves as the call's does; the main
/// agent keeps its own model; an empty value counts as unset.
#[test]
fn the_subagent_model_variable_names_every_sub_agents_model() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    // From the environment, over the call's model.
    for call_model in ["opus", "fable"] {
        let (url, seen) =
            calling_agent(json!({"description": "d", "prompt": "p", "model": call_model}));
        let out = agent_command(&url, &project, &["-p"], "go")
            .env("CLAUDE_CODE_SUBAGENT_MODEL", "claude-from-env")
            .env_remove("ANTHROPIC_DEFAULT_FABLE_MODEL")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let (main, sub) = models(&seen);
        assert_eq!(main, ["claude-sonnet-4-5"; 2], "{}", stderr(&out));
        assert_eq!(sub, ["claude-from-env"], "{}", stderr(&out));
    }
    // `fable` from the variable, with no model id for it: refused, naming the variable.
    let (url, seen) = calling_agent(json!({"description": "d", "prompt": "p"}));
    let out = agent_command(&url, &project, &["-p"], "go")
        .env("CLAUDE_CODE_SUBAGENT_MODEL", "fable")
        .env_remove("ANTHROPIC_DEFAULT_FABLE_MODEL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(models(&seen).1.is_empty());
    let refusal = results(&seen.lock().unwrap()[1].messages()[2])[0].1.clone();
    assert_eq!(refusal["is_error"], true, "{refusal}");
    assert!(
        refusal
            .to_string()
            .contains("CLAUDE_CODE_SUBAGENT_MODEL names it"),
        "{refusal}"
    );
    // From the user's settings `env`, an alias, over a definition's model.
    write(
        &project,
        ".claude/agents/pinned.md",
        "---\nname: pinned\ndescription: d\nmodel: opus\n---\nbody\n",
    );
    trust(&project);
    write(
        &project,
        ".no-user-config/settings.json",
        &json!({"env": {"CLAUDE_CODE_SUBAGENT_MODEL": "haiku"}}).to_string(),
    );
    let (url, seen) =
        calling_agent(json!({"description": "d", "prompt": "p", "subagent_type": "pinned"}));
    let out = agent_command(&url, &project, &["-p"], "go")
        .env_remove("CLAUDE_CODE_SUBAGENT_MODEL")
        .env("ANTHROPIC_DEFAULT_HAIKU_MODEL", "my-haiku")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let (main, sub) = models(&seen);
    assert_eq!(main, ["claude-sonnet-4-5"; 2], "{}", stderr(&out));
    assert_eq!(sub, ["my-haiku"], "{}", stderr(&out));
    // Empty: unset, the definition's model applies.
    std::fs::remove_file(project.join(".no-user-config/settings.json")).unwrap();
    let (url, seen) =
        calling_agent(json!({"description": "d", "prompt": "p", "subagent_type": "pinned"}));
    let out = agent_command(&url, &project, &["-p"], "go")
        .env("CLAUDE_CODE_SUBAGENT_MODEL", "")
        .env_remove("ANTHROPIC_DEFAULT_OPUS_MODEL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(models(&seen).1, ["claude-opus-4-5"], "{}", stderr(&out));
}

/// The Agent tool's listing of agent types and the stderr of a `-p` run in `project`.
fn listing_and_stderr(project: &Path) -> (String, String) {
    let (url, seen) = serve(|_, _| full(turn(Some("ok"), &[])));
    let out = agent_command(&url, project, &["-p"], "go")
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let listing = seen.lock().unwrap()[0].tool("Agent").unwrap()["description"]
        .as_str()
        .unwrap()
        .to_owned();
    (listing, err)
}

/// Found by review: with subfolders read, a cloned agent collection's README.md, or a
/// docs/*.md, gave a notice on every start (no frontmatter), and one with frontmatter but no
/// `name` became an agent named after its file. Below the top level such files are skipped
/// quietly, as Claude Code's loader skips a file without a `name`; a file that names an
/// agent is still read (and refused with a notice when bad), and the top level keeps its
/// behaviour: its stem names an agent without `name`, and a file without frontmatter is
/// said.
#[test]
fn stray_markdown_in_subfolders_is_no_agent_and_no_notice() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let agents = project.join(".claude/agents");
    write(
        &agents,
        "collection/README.md",
        "# A collection of agents\n",
    );
    write(&agents, "collection/CONTRIBUTING.md", "How to help.\n");
    write(
        &agents,
        "collection/docs/guide.md",
        "---\ntitle: The guide\n---\nRead me.\n",
    );
    write(&agents, "collection/unterminated.md", "---\ntitle: x\n");
    write(&agents, "collection/real.md", &definition("real"));
    write(
        &agents,
        "collection/bad.md",
        "---\nname: two words\ndescription: d\n---\nbody\n",
    );
    write(
        &agents,
        "stemmed.md",
        "---\ndescription: by stem\n---\nbody\n",
    );
    write(&agents, "notes.md", "no frontmatter\n");
    trust(&project);
    let (listing, err) = listing_and_stderr(&project);
    assert!(listing.contains("- real: the real agent"), "{listing}");
    assert!(listing.contains("- stemmed: by stem"), "{listing}");
    for stray in ["README", "CONTRIBUTING", "guide", "unterminated"] {
        assert!(!listing.contains(&format!("- {stray}:")), "{listing}");
        assert!(!err.contains(&format!("{stray}.md")), "{err}");
    }
    assert!(
        err.contains(&format!(
            "agent definition {} ignored",
            agents.join("collection/bad.md").display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "agent definition {} ignored",
            agents.join("notes.md").display()
        )),
        "{err}"
    );
}

/// Found by review: the walk of an agents directory stopped at 1,000 files and at 8 levels
/// of subfolders without a word (only the bound on entries was said). Both are said now,
/// naming the directory (and the folder not searched).
#[test]
fn the_agents_walk_says_what_its_file_and_depth_bounds_left_unread() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let agents = project.join(".claude/agents");
    for i in 0..1001 {
        write(
            &agents,
            &format!("many/a{i:04}.md"),
            &definition(&format!("a{i:04}")),
        );
    }
    let deep = "d1/d2/d3/d4/d5/d6/d7/d8/d9";
    write(&agents, &format!("{deep}/deep.md"), &definition("deep"));
    trust(&project);
    let (_, err) = listing_and_stderr(&project);
    assert!(
        err.contains(&format!(
            "{} was not read whole: it stopped after 1000 markdown files",
            agents.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{} is more than 8 folders deep",
            agents.join(deep).display()
        )),
        "{err}"
    );
}

/// Found by review: a hidden definition at the top level of an agents directory
/// (`.draft.md`) was read before subfolders were, and was then skipped without a word.
/// Hidden files are read, at the top level and below, as Claude Code reads them; hidden
/// folders are not searched.
#[test]
fn hidden_definition_files_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let agents = project.join(".claude/agents");
    write(&agents, ".draft.md", &definition("draft"));
    write(&agents, "team/.nested.md", &definition("nested"));
    write(&agents, ".git/hidden.md", &definition("ingit"));
    trust(&project);
    let (listing, err) = listing_and_stderr(&project);
    assert!(
        listing.contains("- draft: the draft agent"),
        "{listing}\n{err}"
    );
    assert!(
        listing.contains("- nested: the nested agent"),
        "{listing}\n{err}"
    );
    assert!(!listing.contains("ingit"), "{listing}");
}

/// Set in the child process of
/// [`a_host_that_does_not_validate_gets_the_forced_fable_refusal`].
const FABLE_CHILD: &str = "REVIEW40_FABLE_CHILD";

/// Found by review: with `CLAUDE_CODE_SUBAGENT_MODEL=fable` and no model id for fable, a
/// host that calls the Agent tool without validating its input was refused with "call
/// Agent again with model sonnet, opus or haiku", which changes nothing while the variable
/// is set. `call` refuses as validation does, naming the variable. The variables are the
/// process's: the test runs itself again in a child process that has them, so no other
/// test (nor what it starts) sees them.
#[test]
fn a_host_that_does_not_validate_gets_the_forced_fable_refusal() {
    use toolwright::agent::{AgentDefinition, AgentLoop, AgentTool, LoopConfig};
    use toolwright::core::{ProgressSender, Tool, ToolUseContext};

    if std::env::var_os(FABLE_CHILD).is_none() {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "review40_agent::a_host_that_does_not_validate_gets_the_forced_fable_refusal",
                "--nocapture",
            ])
            .env(FABLE_CHILD, "1")
            .env("CLAUDE_CODE_SUBAGENT_MODEL", "fable")
            .env_remove("ANTHROPIC_DEFAULT_FABLE_MODEL")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            stderr(&out)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("1 passed"),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        return;
    }
    // Nothing listens there: the call is refused before any request.
    let client = toolwright::agent::AnthropicClient::new(toolwright::agent::ClientConfig {
        base_url: "http://127.0.0.1:9".into(),
        api_key: Some("k".into()),
        auth_token: None,
        attempts: 1,
        backoff: std::time::Duration::ZERO,
        headers: Default::default(),
    })
    .unwrap();
    let agent_loop = AgentLoop::new(
        std::sync::Arc::new(client),
        std::sync::Arc::new(toolwright::exec::Pipeline::allow_all()),
        LoopConfig::new("claude-sonnet-4-5"),
    );
    let tool = AgentTool::new(agent_loop, vec![AgentDefinition::general_purpose()]);
    let input = json!({"description": "d", "prompt": "p"});
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let validated = runtime
        .block_on(Tool::validate_input(
            &tool,
            &input,
            &ToolUseContext::new("/"),
        ))
        .unwrap_err()
        .to_string();
    let called = runtime
        .block_on(Tool::call(
            &tool,
            input,
            ToolUseContext::new("/"),
            ProgressSender::none(),
        ))
        .unwrap_err()
        .to_string();
    assert!(
        called.contains("CLAUDE_CODE_SUBAGENT_MODEL names it"),
        "{called}"
    );
    assert!(!called.contains("call Agent again"), "{called}");
    assert_eq!(validated, called);
}
