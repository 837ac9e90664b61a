//! Plan mode end to end through the streaming executor, with the real tools and the real
//! permission engine: after EnterPlanMode the next Write is refused, after ExitPlanMode
//! (answered through `updatedInput`-style input) writes are decided by the rules again.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use tool_core::{PermissionMode, RuleSource, SourcedRule, ToolPermissionContext, ToolUseContext};
use tool_exec::{DenyAsks, ExecutorConfig, NoHooks, Pipeline, ToolUse, run_tools};
use tool_perms::{PathRoots, PermissionEngine};

#[tokio::test]
async fn plan_mode_switches_through_the_executor_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let permission = ToolPermissionContext {
        allow: vec![
            SourcedRule {
                source: RuleSource::ProjectSettings,
                rule: "Write".into(),
            },
            SourcedRule {
                source: RuleSource::ProjectSettings,
                rule: "EnterPlanMode".into(),
            },
        ],
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
    let write = |id: &str, name: &str| {
        ToolUse::new(
            id,
            "Write",
            json!({"file_path": root.join(name), "content": "x"}),
        )
    };
    let (results, after) = run_tools(
        Arc::clone(&pipeline),
        ctx,
        vec![
            write("w1", "before.txt"),
            ToolUse::new("p", "EnterPlanMode", json!({})),
            write("w2", "during.txt"),
        ],
        ExecutorConfig::default(),
    )
    .await;
    assert!(
        !results[0].outcome.result.is_error,
        "{:?}",
        results[0].outcome.result
    );
    assert!(
        !results[1].outcome.result.is_error,
        "{:?}",
        results[1].outcome.result
    );
    assert_eq!(after.permission().mode, PermissionMode::Plan);
    assert!(
        results[2].outcome.result.is_error,
        "a write in plan mode must be refused"
    );
    assert!(root.join("before.txt").exists());
    assert!(!root.join("during.txt").exists());
}
