//! The real tools with the real permission engine and no rules at all, in default mode:
//! what runs without asking (Claude Code's default `checkPermissions` allows tools that only
//! touch the session's own state, and reads inside the working directory) and what asks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tool_core::{RuleSource, SourcedRule, ToolPermissionContext, ToolUseContext};
use tool_perms::{PathRoots, PermissionEngine};

async fn decide(root: &std::path::Path, name: &str, input: Value) -> &'static str {
    decide_with(root, ToolPermissionContext::default(), name, input).await
}

/// The decision the pipeline reaches: on the input as permission checks see it (the tool's
/// observable input), as `run_tool_use` hands it to the engine.
async fn decide_with(
    root: &std::path::Path,
    permission: ToolPermissionContext,
    name: &str,
    input: Value,
) -> &'static str {
    let (engine, problems) = PermissionEngine::new_lenient(&permission, PathRoots::for_cwd(root));
    assert!(problems.is_empty(), "{problems:?}");
    let tools = tool_registry::all_base_tools();
    let tool = tools.iter().find(|t| t.name() == name).unwrap();
    let ctx = ToolUseContext::new(root)
        .with_tools(tools.clone())
        .with_permission(permission);
    let seen = tool.observable_input(&input, &ctx).unwrap_or(input);
    engine.decide(tool.as_ref(), &seen, &ctx).await.behavior()
}

#[tokio::test]
async fn session_state_tools_and_reads_in_the_working_directory_run_without_asking() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(root.join("src")).unwrap();
    let todo = json!({"todos": [{"content": "a", "status": "pending", "activeForm": "A"}]});
    for (name, input) in [
        ("TodoWrite", todo),
        ("ToolSearch", json!({"query": "select:Read"})),
        (
            "TaskOutput",
            json!({"task_id": "x", "block": false, "timeout": 1}),
        ),
        ("EnterPlanMode", json!({})),
        ("Glob", json!({"pattern": "**/*.rs"})),
        ("Glob", json!({"pattern": "*.rs", "path": "src"})),
        ("Grep", json!({"pattern": "fn main"})),
        ("Read", json!({"file_path": root.join("src/main.rs")})),
    ] {
        assert_eq!(
            decide(&root, name, input.clone()).await,
            "allow",
            "{name} {input}"
        );
    }
}

#[tokio::test]
async fn changes_and_reads_outside_still_ask() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    for (name, input) in [
        (
            "Write",
            json!({"file_path": root.join("a.txt"), "content": "x"}),
        ),
        ("Bash", json!({"command": "touch a.txt"})),
        // Searches that climb out of the working directory.
        ("Glob", json!({"pattern": "../**/*.rs"})),
        ("Grep", json!({"pattern": "x", "path": "../.."})),
        ("Grep", json!({"pattern": "x", "path": "/etc"})),
        (
            "AskUserQuestion",
            json!({"questions": [{"question": "Which?", "header": "Pick", "multiSelect": false, "options": [{"label": "a", "description": "A"}, {"label": "b", "description": "B"}]}]}),
        ),
    ] {
        assert_eq!(
            decide(&root, name, input.clone()).await,
            "ask",
            "{name} {input}"
        );
    }
}

/// A relative `path` is judged as the directory it names: ask rules apply to it, and a link
/// out of the project is followed by the check as the walker follows it. (Both were allowed:
/// a relative root had no permission subject, and a textual check let it through.)
#[tokio::test]
async fn searches_with_a_relative_path_meet_the_path_rules() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap().join("proj");
    std::fs::create_dir_all(root.join("secrets")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("out-link")).unwrap();
    let ask_secrets = ToolPermissionContext {
        ask: vec![SourcedRule {
            source: RuleSource::ProjectSettings,
            rule: "Read(./secrets)".to_owned(),
        }],
        ..ToolPermissionContext::default()
    };
    for name in ["Grep", "Glob"] {
        let input = json!({"pattern": "x", "path": "secrets"});
        assert_eq!(
            decide_with(&root, ask_secrets.clone(), name, input).await,
            "ask",
            "{name}"
        );
        let input = json!({"pattern": "x", "path": "out-link"});
        assert_eq!(decide(&root, name, input).await, "ask", "{name}");
        let input = json!({"pattern": "x", "path": "secrets"});
        assert_eq!(decide(&root, name, input).await, "allow", "{name}");
    }
}
