//! Bash's working directory through the streaming executor: a `cd` in a read-only command
//! still carries to the next call (the executor keeps context modifiers only from calls that
//! run alone, so such a call must not count as concurrency-safe).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use tool_core::{RuleSource, SourcedRule, ToolPermissionContext, ToolUseContext};
use tool_exec::{DenyAsks, ExecutorConfig, NoHooks, Pipeline, ToolUse, run_tools};
use tool_perms::{PathRoots, PermissionEngine};

#[tokio::test]
async fn a_read_only_cd_carries_to_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let permission = ToolPermissionContext {
        allow: vec![SourcedRule {
            source: RuleSource::ProjectSettings,
            rule: "Bash".into(),
        }],
        avoid_prompts: true,
        ..Default::default()
    };
    let (engine, problems) = PermissionEngine::new_lenient(&permission, PathRoots::for_cwd(&root));
    assert!(problems.is_empty(), "{problems:?}");
    let ctx = ToolUseContext::new(&root)
        .with_tools(tool_registry::all_base_tools())
        .with_permission(permission);
    let pipeline = Arc::new(Pipeline::new(
        Arc::new(engine),
        Arc::new(DenyAsks),
        Arc::new(NoHooks),
    ));
    let bash = |id: &str, command: &str| ToolUse::new(id, "Bash", json!({"command": command}));
    let (results, after) = run_tools(
        pipeline,
        ctx,
        vec![
            bash("ls", "ls"),
            bash("cd", "cd sub && ls"),
            bash("pwd", "pwd"),
        ],
        ExecutorConfig::default(),
    )
    .await;
    let texts: Vec<String> = results
        .iter()
        .map(|r| {
            assert!(!r.outcome.result.is_error, "{:?}", r.outcome.result);
            r.outcome.result.content.joined_text()
        })
        .collect();
    assert!(texts[0].contains("sub"), "{texts:?}");
    assert_eq!(texts[2].trim(), root.join("sub").display().to_string());
    assert_eq!(after.cwd(), root.join("sub"));
}
