//! TodoWrite (app state, validation, output text) and the plan-mode tools (mode switching
//! through context modifiers, as the executor applies them).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::{Value, json};
use tool_core::{
    AgentInfo, PermissionMode, ProgressSender, Tool, ToolOutput, ToolPermissionContext, ToolResult,
    ToolUseContext,
};
use tools_builtin::todo_write::{TodoStatus, current_todos};
use tools_builtin::{EnterPlanMode, ExitPlanMode, TodoWrite};

/// Runs a call through parse, validate and call, then applies its context modifier the way
/// the executor does; returns the output and the next context.
async fn step(
    tool: &dyn Tool,
    ctx: ToolUseContext,
    input: Value,
) -> Result<(ToolOutput, ToolUseContext), String> {
    let input = tool.parse_input(input).map_err(|e| e.to_model_text())?;
    tool.validate_input(&input, &ctx)
        .await
        .map_err(|e| e.message)?;
    let result: ToolResult = tool
        .call(input, ctx.clone(), ProgressSender::none())
        .await
        .map_err(|e| e.to_model_text())?;
    let next = match result.context_modifier {
        Some(m) => m.apply(ctx),
        None => ctx,
    };
    Ok((result.data, next))
}

fn todo(content: &str, status: &str) -> Value {
    json!({"content": content, "status": status, "activeForm": format!("{content}ing")})
}

#[tokio::test]
async fn todo_write_keeps_the_list_in_app_state() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path()).with_session_id("s1");
    let (out, ctx) = step(
        &TodoWrite,
        ctx,
        json!({"todos": [todo("Build", "in_progress"), todo("Test", "pending")]}),
    )
    .await
    .unwrap();
    assert_eq!(
        out.content.joined_text(),
        "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable"
    );
    assert_eq!(out.structured["oldTodos"], json!([]));
    assert_eq!(out.structured["newTodos"][0]["activeForm"], "Building");
    let list = current_todos(&ctx);
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].status, TodoStatus::InProgress);
    // Keys of older item shapes (`id`, `priority`) are dropped, not refused.
    let mut older = todo("Build", "in_progress");
    older["id"] = json!("1");
    older["priority"] = json!("high");
    let (out, ctx) = step(
        &TodoWrite,
        ctx,
        json!({"todos": [older, todo("Test", "pending")]}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["newTodos"][0].get("priority"), None);

    // The next write sees the previous list; a sub-agent has its own.
    let agent_ctx = ctx.clone().with_agent(AgentInfo {
        id: "a1".into(),
        agent_type: "general-purpose".into(),
    });
    let (out, agent_ctx) = step(
        &TodoWrite,
        agent_ctx,
        json!({"todos": [todo("Explore", "pending")]}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["oldTodos"], json!([]));
    assert_eq!(current_todos(&agent_ctx).len(), 1);
    assert_eq!(current_todos(&ctx).len(), 2);

    // All completed: the list is cleared, the output still shows it.
    let (out, ctx) = step(
        &TodoWrite,
        ctx,
        json!({"todos": [todo("Build", "completed"), todo("Test", "completed")]}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["oldTodos"].as_array().unwrap().len(), 2);
    assert_eq!(out.structured["newTodos"].as_array().unwrap().len(), 2);
    assert!(current_todos(&ctx).is_empty());
}

/// Claude Code accepts a list with several items in progress (its prompt only advises one
/// at a time): it is stored as given.
#[tokio::test]
async fn todo_write_accepts_several_items_in_progress() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path()).with_session_id("s1");
    let (out, ctx) = step(
        &TodoWrite,
        ctx,
        json!({"todos": [todo("A", "in_progress"), todo("B", "in_progress"), todo("C", "pending")]}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["newTodos"].as_array().unwrap().len(), 3);
    let list = current_todos(&ctx);
    let statuses: Vec<TodoStatus> = list.iter().map(|t| t.status).collect();
    assert_eq!(
        statuses,
        [
            TodoStatus::InProgress,
            TodoStatus::InProgress,
            TodoStatus::Pending
        ]
    );
    assert_eq!(list[1].content, "B");
}

#[tokio::test]
async fn todo_write_refuses_bad_lists() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path());
    let err = step(
        &TodoWrite,
        ctx.clone(),
        json!({"todos": [{"content": " ", "status": "pending", "activeForm": "x"}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(err, "todos[0].content must not be empty");
    let err = step(
        &TodoWrite,
        ctx.clone(),
        json!({"todos": [{"content": "A", "status": "started", "activeForm": "x"}]}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains(
            "The parameter `todos[0].status` must be one of \"pending\", \"in_progress\", \"completed\", but is \"started\""
        ),
        "{err}"
    );
    let err = step(
        &TodoWrite,
        ctx.clone(),
        json!({"todos": [{"content": "A", "status": "pending"}]}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("activeForm"), "{err}");
    assert!(current_todos(&ctx).is_empty());
}

fn mode_ctx(dir: &std::path::Path, mode: PermissionMode) -> ToolUseContext {
    common::ctx(dir).with_permission(ToolPermissionContext {
        mode,
        ..ToolPermissionContext::default()
    })
}

#[tokio::test]
async fn plan_mode_round_trip_restores_the_previous_mode() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = mode_ctx(dir.path(), PermissionMode::AcceptEdits);
    assert!(!EnterPlanMode.requires_user_interaction());
    assert!(ExitPlanMode.requires_user_interaction());

    // Not in plan mode: ExitPlanMode refuses.
    let err = step(&ExitPlanMode, ctx.clone(), json!({}))
        .await
        .unwrap_err();
    assert!(err.starts_with("You are not in plan mode."), "{err}");

    let (out, ctx) = step(&EnterPlanMode, ctx, json!({})).await.unwrap();
    assert_eq!(ctx.permission().mode, PermissionMode::Plan);
    assert!(out.content.joined_text().starts_with("Entered plan mode."));
    // Entering again keeps the remembered mode.
    let (_, ctx) = step(&EnterPlanMode, ctx, json!({})).await.unwrap();
    assert_eq!(ctx.permission().mode, PermissionMode::Plan);

    // The permission check asks the user.
    let input = ExitPlanMode.parse_input(json!({})).unwrap();
    assert_eq!(
        ExitPlanMode
            .check_permissions(&input, &ctx)
            .await
            .behavior(),
        "ask"
    );

    // The plan arrives through the passthrough fields, as hooks inject it.
    let (out, ctx) = step(
        &ExitPlanMode,
        ctx,
        json!({"plan": "1. Do it", "allowedPrompts": [{"tool": "Bash", "prompt": "run tests"}]}),
    )
    .await
    .unwrap();
    assert_eq!(ctx.permission().mode, PermissionMode::AcceptEdits);
    assert_eq!(
        out.content.joined_text(),
        "User has approved your plan. You can now start coding. Start with updating your todo list if applicable\n\n## Approved Plan:\n1. Do it"
    );
    assert_eq!(out.structured["plan"], "1. Do it");
    assert_eq!(out.structured["isAgent"], false);

    // The user leaves plan mode and comes back through the host (`set_mode`): leaving plan
    // mode again returns to where the user entered it from, not to a mode left long ago.
    let ctx = mode_ctx(dir.path(), PermissionMode::BypassPermissions);
    let (_, ctx) = step(&EnterPlanMode, ctx, json!({})).await.unwrap();
    let mut permission = ctx.permission().clone();
    permission.set_mode(PermissionMode::Default);
    permission.set_mode(PermissionMode::Plan);
    let ctx = ctx.with_permission(permission);
    let (_, ctx) = step(&ExitPlanMode, ctx, json!({})).await.unwrap();
    assert_eq!(ctx.permission().mode, PermissionMode::Default);
    // Nor back to bypassing permissions where the session may not.
    let ctx = mode_ctx(dir.path(), PermissionMode::BypassPermissions);
    let (_, ctx) = step(&EnterPlanMode, ctx, json!({})).await.unwrap();
    let (_, ctx) = step(&ExitPlanMode, ctx, json!({})).await.unwrap();
    assert_eq!(ctx.permission().mode, PermissionMode::Default);
}

/// The question carries the plan it shows, and the call runs with it: what the user
/// approves is what the model is handed, even if the plan file is rewritten while the user
/// reads (the call re-read the file); a file is named only where it holds the plan shown;
/// a `plan` that is no string is refused (the question showed nothing while the call read a
/// plan from elsewhere).
#[tokio::test]
async fn the_approved_plan_is_the_plan_shown() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".claude/plans")).unwrap();
    let plan = home.join(".claude/plans/plan.md");
    std::fs::write(&plan, "# Plan A").unwrap();
    let ctx = mode_ctx(dir.path(), PermissionMode::Plan).with_home(Some(home.clone()));
    let ask = |input: Value| {
        let ctx = ctx.clone();
        async move {
            let input = ExitPlanMode.parse_input(input).unwrap();
            match ExitPlanMode.check_permissions(&input, &ctx).await {
                tool_core::PermissionResult::Ask {
                    message,
                    updated_input,
                    ..
                } => (message, updated_input.expect("the shown plan in the input")),
                other => panic!("{other:?}"),
            }
        }
    };
    let (message, run_with) = ask(json!({"planFilePath": plan.to_str().unwrap()})).await;
    assert!(message.ends_with("# Plan A"), "{message}");
    assert_eq!(run_with["plan"], "# Plan A");
    assert_eq!(run_with["planFilePath"], plan.to_str().unwrap());
    // Rewritten while the user reads: the call hands the model the plan approved.
    std::fs::write(&plan, "# Plan B").unwrap();
    let (out, _) = step(&ExitPlanMode, ctx.clone(), run_with).await.unwrap();
    assert!(
        out.content
            .joined_text()
            .ends_with("## Approved Plan:\n# Plan A"),
        "{}",
        out.content.joined_text()
    );
    // A plan of the model's beside a file that holds another: the file is not named.
    let (_, run_with) =
        ask(json!({"plan": "short plan", "planFilePath": plan.to_str().unwrap()})).await;
    assert_eq!(run_with["plan"], "short plan");
    assert!(run_with.get("planFilePath").is_none(), "{run_with}");
    for bad in [json!(null), json!(0), json!(["a"])] {
        let input = ExitPlanMode.parse_input(json!({"plan": bad})).unwrap();
        let err = ExitPlanMode
            .validate_input(&input, &ctx)
            .await
            .unwrap_err()
            .message;
        assert!(err.contains("plan must be a string"), "{bad}: {err}");
    }
}

#[tokio::test]
async fn exit_plan_mode_reads_the_plan_file_and_defaults_to_default_mode() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir_all(home.join(".claude/plans")).unwrap();
    let plan = home.join(".claude/plans/plan.md");
    std::fs::write(&plan, "# Plan\n- step").unwrap();
    let mode_ctx = |dir: &std::path::Path, mode| mode_ctx(dir, mode).with_home(Some(home.clone()));
    // Plan mode set by the host (no EnterPlanMode): exit goes to `default`. The question
    // shows the plan the user approves.
    let ctx = mode_ctx(dir.path(), PermissionMode::Plan);
    let input = ExitPlanMode
        .parse_input(json!({"planFilePath": plan.to_str().unwrap()}))
        .unwrap();
    match ExitPlanMode.check_permissions(&input, &ctx).await {
        tool_core::PermissionResult::Ask { message, .. } => assert_eq!(
            message,
            "Exit plan mode and start on this plan?\n\n# Plan\n- step"
        ),
        other => panic!("{other:?}"),
    }
    let (out, ctx) = step(
        &ExitPlanMode,
        ctx,
        json!({"planFilePath": plan.to_str().unwrap()}),
    )
    .await
    .unwrap();
    assert_eq!(ctx.permission().mode, PermissionMode::Default);
    let text = out.content.joined_text();
    assert!(
        text.contains(&format!("Your plan has been saved to: {}", plan.display())),
        "{text}"
    );
    assert!(
        text.ends_with("## Approved Plan:\n# Plan\n- step"),
        "{text}"
    );

    // A path the model made up, outside the plans directory, is not read.
    std::fs::write(dir.path().join("secret.txt"), "hunter2").unwrap();
    // It is refused by validation, before anyone is asked to approve.
    let ctx = mode_ctx(dir.path(), PermissionMode::Plan);
    let input = ExitPlanMode
        .parse_input(json!({"planFilePath": "secret.txt"}))
        .unwrap();
    let err = ExitPlanMode
        .validate_input(&input, &ctx)
        .await
        .unwrap_err()
        .message;
    assert!(
        err.contains("is not a plan file") && !err.contains("hunter2"),
        "{err}"
    );

    // No plan at all.
    let ctx = mode_ctx(dir.path(), PermissionMode::Plan);
    let (out, _) = step(&ExitPlanMode, ctx, json!({})).await.unwrap();
    assert_eq!(
        out.content.joined_text(),
        "User has approved exiting plan mode. You can now proceed."
    );
    // The session's plan file, read when the input names none; one that is a link out of
    // the plans directory is refused, saying so (not naming a planFilePath never given, nor
    // showing what the link leads to): never approved unseen.
    let session_ctx = |id: &str| {
        mode_ctx(dir.path(), PermissionMode::Plan)
            .with_config_dir(Some(home.join(".claude")))
            .with_session_id(id)
    };
    std::fs::write(home.join(".claude/plans/s-plain.md"), "# Session plan").unwrap();
    let (out, _) = step(&ExitPlanMode, session_ctx("s-plain"), json!({}))
        .await
        .unwrap();
    assert!(
        out.content
            .joined_text()
            .ends_with("## Approved Plan:\n# Session plan"),
        "{}",
        out.content.joined_text()
    );
    std::os::unix::fs::symlink(
        dir.path().join("secret.txt"),
        home.join(".claude/plans/s-link.md"),
    )
    .unwrap();
    let err = step(&ExitPlanMode, session_ctx("s-link"), json!({}))
        .await
        .unwrap_err();
    assert!(
        err.contains("is not a regular file")
            && !err.contains("planFilePath")
            && !err.contains("hunter2"),
        "{err}"
    );

    // Only Bash prompts.
    let ctx = mode_ctx(dir.path(), PermissionMode::Plan);
    let err = step(
        &ExitPlanMode,
        ctx,
        json!({"allowedPrompts": [{"tool": "Edit", "prompt": "x"}]}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        "allowedPrompts only supports the tool \"Bash\", not \"Edit\""
    );
}

#[tokio::test]
async fn enter_plan_mode_is_refused_in_agents() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path()).with_agent(AgentInfo {
        id: "a".into(),
        agent_type: "Explore".into(),
    });
    let err = step(&EnterPlanMode, ctx, json!({})).await.unwrap_err();
    assert_eq!(err, "EnterPlanMode tool cannot be used in agent contexts");
}

fn questions() -> Value {
    json!([
        {"question": "Which database?", "header": "Database", "multiSelect": false,
         "options": [{"label": "Postgres", "description": "Relational"},
                     {"label": "SQLite", "description": "Embedded"}]},
        {"question": "Which features?", "header": "Features", "multiSelect": true,
         "options": [{"label": "Auth", "description": "Login"},
                     {"label": "Search", "description": "Full text", "preview": "fn search()"}]}
    ])
}

#[tokio::test]
async fn ask_user_question_returns_the_answers_given_by_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path());
    let tool = tools_builtin::AskUserQuestion;
    assert!(tool.requires_user_interaction());
    let input = tool.parse_input(json!({"questions": questions()})).unwrap();
    assert_eq!(tool.check_permissions(&input, &ctx).await.behavior(), "ask");
    // The model's call alone has no answers.
    let err = step(&tool, ctx.clone(), json!({"questions": questions()}))
        .await
        .unwrap_err();
    assert!(err.starts_with("The user did not answer"), "{err}");
    // The host's updatedInput carries them.
    let (out, _) = step(
        &tool,
        ctx,
        json!({
            "questions": questions(),
            "answers": {"Which features?": "Auth, Search", "Which database?": "SQLite"},
            "annotations": {"Which database?": {"notes": "keep it small"}},
            "metadata": {"source": "test"}
        }),
    )
    .await
    .unwrap();
    assert_eq!(
        out.content.joined_text(),
        "User has answered your questions: \"Which database?\"=\"SQLite\" user notes: keep it small, \
         \"Which features?\"=\"Auth, Search\". You can now continue with the user's answers in mind."
    );
    assert_eq!(out.structured["answers"]["Which database?"], "SQLite");
    assert_eq!(out.structured["questions"][1]["multiSelect"], true);
}

#[tokio::test]
async fn ask_user_question_enforces_its_limits() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path());
    let tool = tools_builtin::AskUserQuestion;
    let opts = json!([{"label": "A", "description": "a"}, {"label": "B", "description": "b"}]);
    let q = |text: &str, header: &str, options: Value| json!({"question": text, "header": header, "options": options, "multiSelect": false});
    let cases = [
        // The counts and the header's length are the schema's (Claude Code's zod bounds).
        (
            json!([]),
            "The parameter `questions` must have at least 1 items, but has 0",
        ),
        (
            json!([
                q("1?", "h", opts.clone()),
                q("2?", "h", opts.clone()),
                q("3?", "h", opts.clone()),
                q("4?", "h", opts.clone()),
                q("5?", "h", opts.clone())
            ]),
            "The parameter `questions` must have at most 4 items, but has 5",
        ),
        (
            json!([q("Same?", "h", opts.clone()), q("Same?", "h", opts.clone())]),
            "Question texts must be unique: \"Same?\" appears more than once",
        ),
        (
            json!([q("Long?", "Thirteen char", opts.clone())]),
            "The parameter `questions[0].header` must have at most 12 characters, but has 13",
        ),
        (
            json!([q("One?", "h", json!([{"label": "A", "description": "a"}]))]),
            "The parameter `questions[0].options` must have at least 2 items, but has 1",
        ),
        (
            json!([q(
                "Dup?",
                "h",
                json!([{"label": "A", "description": "a"}, {"label": "A", "description": "b"}])
            )]),
            "Option labels must be unique within a question: \"A\" appears more than once in \"Dup?\"",
        ),
    ];
    for (questions, want) in cases {
        let err = step(&tool, ctx.clone(), json!({"questions": questions}))
            .await
            .unwrap_err();
        assert!(err.contains(want), "{err}");
    }
    // Twelve characters (not bytes) is fine.
    step(
        &tool,
        ctx,
        json!({"questions": [q("Ok?", "ééééééééééé!", opts)], "answers": {"Ok?": "A"}}),
    )
    .await
    .unwrap();
}

/// AskUserQuestion's and TodoWrite's bounds are in the schemas the model receives (Claude
/// Code's zod `min`/`max`), and a call past them is refused at the schema step as Claude
/// Code refuses it (`InputValidationError`), not later as a tool error.
#[test]
fn question_and_todo_bounds_are_schema_bounds() {
    use tool_core::Tool as _;
    let ask = tools_builtin::AskUserQuestion;
    let schema = ask.input_schema();
    let questions = &schema["properties"]["questions"];
    assert_eq!(
        (
            questions["minItems"].as_u64(),
            questions["maxItems"].as_u64()
        ),
        (Some(1), Some(4)),
        "{schema}"
    );
    let options = &questions["items"]["properties"]["options"];
    assert_eq!(
        (options["minItems"].as_u64(), options["maxItems"].as_u64()),
        (Some(2), Some(4)),
        "{schema}"
    );
    let option = |l: &str| serde_json::json!({"label": l, "description": l});
    let question = |options: Vec<serde_json::Value>| serde_json::json!({"question": "Q?", "header": "H", "options": options});
    for (input, says) in [
        (
            serde_json::json!({"questions": []}),
            "The parameter `questions` must have at least 1 items, but has 0",
        ),
        (
            serde_json::json!({"questions": vec![question(vec![option("a"), option("b")]); 5]}),
            "The parameter `questions` must have at most 4 items, but has 5",
        ),
        (
            serde_json::json!({"questions": [question(vec![option("a")])]}),
            "The parameter `questions[0].options` must have at least 2 items, but has 1",
        ),
    ] {
        let err = ask.parse_input(input).unwrap_err().to_model_text();
        assert!(
            err.contains("InputValidationError: AskUserQuestion failed"),
            "{err}"
        );
        assert!(err.contains(says), "{err}");
    }
    let todo = tools_builtin::TodoWrite;
    let schema = todo.input_schema();
    assert_eq!(
        schema["properties"]["todos"]["items"]["properties"]["content"]["minLength"], 1,
        "{schema}"
    );
    let err = todo
        .parse_input(serde_json::json!({"todos": [{"content": "", "status": "pending", "activeForm": "Doing"}]}))
        .unwrap_err()
        .to_model_text();
    assert!(
        err.contains("The parameter `todos[0].content` must have at least 1 characters, but has 0"),
        "{err}"
    );
}
