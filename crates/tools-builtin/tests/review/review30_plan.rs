//! Review 30: ExitPlanMode reads the session's plan file once per call. The pipeline shows
//! hooks and the user the observable input (the plan file's text injected as `plan`), and,
//! when nobody changed that input, hands the call the model's own input (`{}`): the call
//! read the plan file again, so a plan rewritten while the user read the question was the
//! one the model was handed as approved (and the one PostToolUse hooks saw).

use serde_json::{Value, json};
use tool_core::{
    PermissionMode, PermissionResult, ProgressSender, Tool, ToolPermissionContext, ToolUseContext,
};
use tools_builtin::ExitPlanMode;

/// A plan-mode context of session `session` whose config dir is `config`, inside call `id`
/// (as the pipeline runs a call: with its tool_use id).
fn call_ctx(
    dir: &std::path::Path,
    config: &std::path::Path,
    session: &str,
    id: &str,
) -> ToolUseContext {
    ToolUseContext::new(dir)
        .with_config_dir(Some(config.to_path_buf()))
        .with_session_id(session)
        .with_permission(ToolPermissionContext {
            mode: PermissionMode::Plan,
            ..ToolPermissionContext::default()
        })
        .with_tool_use_id(id)
}

/// Runs the call as the pipeline does after an allow that changed nothing: validation and
/// the call on the model's input; returns the text the model is handed.
async fn run_unchanged(ctx: &ToolUseContext, model_input: Value) -> String {
    let input = ExitPlanMode.parse_input(model_input).unwrap();
    ExitPlanMode.validate_input(&input, ctx).await.unwrap();
    ExitPlanMode
        .call(input, ctx.clone(), ProgressSender::none())
        .await
        .unwrap()
        .data
        .content
        .joined_text()
}

/// The question shows the plan of the pipeline's observable input; the pinned input the
/// question carries is that same input, so the pipeline hands the call `{}`.
async fn asked(ctx: &ToolUseContext) -> (Value, String) {
    let observed = ExitPlanMode
        .observable_input(&json!({}), ctx)
        .unwrap_or_else(|| json!({}));
    let input = ExitPlanMode.parse_input(observed.clone()).unwrap();
    match ExitPlanMode.check_permissions(&input, ctx).await {
        PermissionResult::Ask {
            message,
            updated_input,
            ..
        } => {
            if let Some(pinned) = updated_input {
                // What makes the pipeline give the call the model's input.
                assert_eq!(pinned, observed, "the question's input is the observed one");
            }
            (observed, message)
        }
        other => panic!("ExitPlanMode did not ask: {other:?}"),
    }
}

/// The plan the user approves is the plan the model is handed and PostToolUse hooks see,
/// even when the plan file is rewritten while the question is open (it was "# Plan B
/// EVIL"); the result does not send the model to the file, which no longer holds the plan
/// approved. A later call reads the file afresh; a plan file created while a question
/// without a plan was open is not handed over as approved.
#[tokio::test]
async fn the_plan_shown_is_the_plan_the_call_runs_with() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("plans")).unwrap();
    let ctx = call_ctx(dir.path(), &config, "s-race", "toolu_exit_1");
    let plan_file = ctx.plan_file().unwrap();
    std::fs::write(&plan_file, "# Plan A benign\n").unwrap();

    let (observed, message) = asked(&ctx).await;
    assert_eq!(observed["plan"], "# Plan A benign\n");
    assert!(message.ends_with("# Plan A benign\n"), "{message}");
    // Another call rewrites the plan file while the user reads.
    std::fs::write(&plan_file, "# Plan B EVIL\n").unwrap();
    let text = run_unchanged(&ctx, json!({})).await;
    assert!(
        text.ends_with("## Approved Plan:\n# Plan A benign\n"),
        "the model was not handed the plan shown: {text}"
    );
    assert!(!text.contains("EVIL"), "{text}");
    assert!(
        !text.contains(&plan_file.display().to_string()),
        "the result names a file that no longer holds the plan approved: {text}"
    );
    // PostToolUse hooks see the plan the call ran with.
    let post = ExitPlanMode.observable_input(&json!({}), &ctx).unwrap();
    assert_eq!(post["plan"], "# Plan A benign\n", "{post}");
    assert!(post.get("planFilePath").is_none(), "{post}");

    // The next call reads the file as it is now.
    let next = call_ctx(dir.path(), &config, "s-race", "toolu_exit_2");
    let (_, message) = asked(&next).await;
    assert!(message.ends_with("# Plan B EVIL\n"), "{message}");
    let text = run_unchanged(&next, json!({})).await;
    assert!(
        text.ends_with("## Approved Plan:\n# Plan B EVIL\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "Your plan has been saved to: {}",
            plan_file.display()
        )),
        "{text}"
    );

    // No plan when asked; one written while the question was open is not approved.
    let empty = call_ctx(dir.path(), &config, "s-none", "toolu_exit_3");
    let (_, message) = asked(&empty).await;
    assert_eq!(message, "Exit plan mode?");
    std::fs::write(empty.plan_file().unwrap(), "# Plan C EVIL\n").unwrap();
    let text = run_unchanged(&empty, json!({})).await;
    assert_eq!(
        text,
        "User has approved exiting plan mode. You can now proceed."
    );
}
