//! Tasks v2 (TaskCreate, TaskGet, TaskUpdate, TaskList) through the executor, with the
//! registry's tools and the real permission engine: calls of one response act in the order
//! the model wrote them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::json;
use tool_core::{ToolPermissionContext, ToolUseContext};
use tool_exec::{DenyAsks, ExecutorConfig, NoHooks, Pipeline, ToolUse, run_tools};
use tool_perms::{PathRoots, PermissionEngine};
use tools_builtin::task_list::{TaskListStore, install_task_list_store};

/// The text of a result, and whether it is an error.
fn text(result: &tool_exec::ToolCallResult) -> (String, bool) {
    (
        result.outcome.result.content.joined_text(),
        result.outcome.result.is_error,
    )
}

/// `[TaskCreate, TaskCreate, TaskUpdate "1", TaskList, TaskGet "2"]` in one response: the
/// writers run alone and in block order, so the ids follow the blocks, the update finds the
/// task created before it, and the list and the get after them see both tasks and the
/// update. Repeated: when the writers ran side by side, TaskList said "No tasks found" and
/// TaskUpdate "Task #1 not found" in most runs, and the ids came out of order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn task_calls_of_one_response_act_in_block_order() {
    let tools = tool_registry::all_base_tools_in(&|var| {
        (var == tool_registry::TASKS_ENV).then(|| "1".to_owned())
    });
    for name in ["TaskCreate", "TaskUpdate", "TaskList", "TaskGet"] {
        assert!(tools.iter().any(|t| t.name() == name), "{name} is offered");
    }
    let tools: Arc<[_]> = tools.into();
    for round in 0..20 {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let permission = ToolPermissionContext {
            avoid_prompts: true,
            ..Default::default()
        };
        let (engine, problems) =
            PermissionEngine::new_lenient(&permission, PathRoots::for_cwd(&root));
        assert!(problems.is_empty(), "{problems:?}");
        let ctx = ToolUseContext::new(&root)
            .with_session_id(format!("order-{round}"))
            .with_tools(Arc::clone(&tools))
            .with_permission(permission);
        install_task_list_store(ctx.app_state(), TaskListStore::new(root.join("tasks")));
        let pipeline = Arc::new(Pipeline::new(
            Arc::new(engine),
            Arc::new(DenyAsks),
            Arc::new(NoHooks),
        ));
        let create = |id: &str, subject: &str| {
            ToolUse::new(
                id,
                "TaskCreate",
                json!({"subject": subject, "description": format!("Do: {subject}")}),
            )
        };
        let (results, _) = run_tools(
            pipeline,
            ctx,
            vec![
                create("c1", "First"),
                create("c2", "Second"),
                ToolUse::new(
                    "u1",
                    "TaskUpdate",
                    json!({"taskId": "1", "status": "in_progress"}),
                ),
                ToolUse::new("l", "TaskList", json!({})),
                ToolUse::new("g", "TaskGet", json!({"taskId": "2"})),
            ],
            ExecutorConfig::default(),
        )
        .await;
        let texts: Vec<(String, bool)> = results.iter().map(text).collect();
        assert_eq!(
            texts[..4],
            [
                ("Task #1 created successfully: First".to_owned(), false),
                ("Task #2 created successfully: Second".to_owned(), false),
                ("Updated task #1 status".to_owned(), false),
                (
                    "#1 [in_progress] First\n#2 [pending] Second".to_owned(),
                    false
                ),
            ],
            "round {round}"
        );
        assert!(
            !texts[4].1 && texts[4].0.starts_with("Task #2: Second\nStatus: pending"),
            "round {round}: {:?}",
            texts[4]
        );
    }
}
