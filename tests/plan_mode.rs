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

/// The plan file (Claude Code's): in plan mode Write creates, and Edit may change, the
/// session's plan file without a question (it sits under `~/.claude`, which otherwise asks),
/// while every other write is refused; EnterPlanMode tells the model where it is, and
/// ExitPlanMode shows the user the plan it holds and hands it back approved.
#[tokio::test]
async fn plan_mode_writes_the_plan_file_and_exit_presents_it() {
    use tool_perms::{PromptAnswer, PromptRequest, Prompter};
    /// Allows ExitPlanMode, refuses anything else, and keeps what it was asked.
    #[derive(Default)]
    struct ApprovesThePlan(std::sync::Mutex<Vec<PromptRequest>>);
    #[tool_core::async_trait]
    impl Prompter for ApprovesThePlan {
        async fn prompt(&self, request: &PromptRequest) -> PromptAnswer {
            self.0.lock().unwrap().push(request.clone());
            if request.tool_name == "ExitPlanMode" {
                PromptAnswer::AllowOnce {
                    updated_input: None,
                }
            } else {
                PromptAnswer::Deny { feedback: None }
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let permission = ToolPermissionContext {
        allow: vec![SourcedRule {
            source: RuleSource::ProjectSettings,
            rule: "EnterPlanMode".into(),
        }],
        ..Default::default()
    };
    let mut roots = PathRoots::for_cwd(&root);
    roots.home = Some(home.clone());
    let (engine, problems) = PermissionEngine::new_lenient(&permission, roots);
    assert!(problems.is_empty(), "{problems:?}");
    let ctx = ToolUseContext::new(&root)
        .with_home(Some(home.clone()))
        .with_config_dir(Some(home.join(".claude")))
        .with_session_id("plan-test-1")
        .with_tools(tool_registry::all_base_tools())
        .with_permission(permission);
    let plan_file = ctx.plan_file().unwrap();
    let prompter = Arc::new(ApprovesThePlan::default());
    let pipeline = Arc::new(Pipeline::new(
        Arc::new(engine),
        Arc::clone(&prompter) as Arc<dyn Prompter>,
        Arc::new(NoHooks),
    ));
    let (results, after) = run_tools(
        pipeline,
        ctx,
        vec![
            ToolUse::new("p", "EnterPlanMode", json!({})),
            ToolUse::new(
                "w1",
                "Write",
                json!({"file_path": plan_file, "content": "# The plan\n1. Do it\n"}),
            ),
            ToolUse::new(
                "e1",
                "Edit",
                json!({"file_path": plan_file, "old_string": "Do it", "new_string": "Do it well"}),
            ),
            ToolUse::new(
                "w2",
                "Write",
                json!({"file_path": root.join("during.txt"), "content": "x"}),
            ),
            ToolUse::new("x", "ExitPlanMode", json!({})),
        ],
        ExecutorConfig::default(),
    )
    .await;
    let text = |i: usize| results[i].outcome.result.content.joined_text();
    assert!(
        text(0).contains(&plan_file.display().to_string()),
        "{}",
        text(0)
    );
    for i in [1, 2] {
        assert!(!results[i].outcome.result.is_error, "{}", text(i));
    }
    assert_eq!(
        std::fs::read_to_string(&plan_file).unwrap(),
        "# The plan\n1. Do it well\n"
    );
    assert!(results[3].outcome.result.is_error, "{}", text(3));
    assert!(!root.join("during.txt").exists());
    assert!(!results[4].outcome.result.is_error, "{}", text(4));
    assert!(
        text(4).contains("## Approved Plan:\n# The plan\n1. Do it well"),
        "{}",
        text(4)
    );
    assert_eq!(after.permission().mode, PermissionMode::Default);
    // The user was asked about ExitPlanMode only, and was shown the plan.
    let asked = prompter.0.lock().unwrap();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].message.contains("1. Do it well"),
        "{}",
        asked[0].message
    );
}

/// The plan file is only the file itself: a hard link planted at its path, or a plans
/// directory that is a link, would turn plan mode's one write into a write elsewhere, so
/// such a path is refused as any other write in plan mode; Read of the plan file is allowed
/// in plan mode, though it is outside the working directories.
#[tokio::test]
async fn the_plan_file_is_no_way_to_write_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    let permission = ToolPermissionContext {
        mode: PermissionMode::Plan,
        avoid_prompts: true,
        ..Default::default()
    };
    let mut roots = PathRoots::for_cwd(&root);
    roots.home = Some(home.clone());
    let (engine, _) = PermissionEngine::new_lenient(&permission, roots);
    let ctx = ToolUseContext::new(&root)
        .with_home(Some(home.clone()))
        .with_config_dir(Some(home.join(".claude")))
        .with_session_id("plan-test-2")
        .with_tools(tool_registry::all_base_tools())
        .with_permission(permission);
    let plan_file = ctx.plan_file().unwrap();
    std::fs::create_dir_all(plan_file.parent().unwrap()).unwrap();
    std::fs::write(&plan_file, "# Plan\n").unwrap();
    let pipeline = Arc::new(Pipeline::new(
        Arc::new(engine),
        Arc::new(DenyAsks),
        Arc::new(NoHooks),
    ));
    let (results, _) = run_tools(
        Arc::clone(&pipeline),
        ctx.clone(),
        vec![ToolUse::new("r", "Read", json!({"file_path": plan_file}))],
        ExecutorConfig::default(),
    )
    .await;
    let shown = results[0].outcome.result.content.joined_text();
    assert!(
        !results[0].outcome.result.is_error && shown.contains("# Plan"),
        "{shown}"
    );
    // A hard link of another file at the plan file's path.
    let victim = root.join("victim.txt");
    std::fs::write(&victim, "keep me\n").unwrap();
    std::fs::remove_file(&plan_file).unwrap();
    std::fs::hard_link(&victim, &plan_file).unwrap();
    // Read as the model would have read it (so that only the permission decides).
    let mut seen = tool_core::FileState::read(
        "keep me\n".into(),
        tool_core::mtime_ms(&std::fs::metadata(&plan_file).unwrap()),
        tool_core::ContentHash::of(b"keep me\n"),
        1,
        None,
    );
    seen.read_order = None;
    ctx.file_state().insert(&plan_file, seen);
    let (results, _) = run_tools(
        Arc::clone(&pipeline),
        ctx.clone(),
        vec![ToolUse::new(
            "w",
            "Write",
            json!({"file_path": plan_file, "content": "overwritten\n"}),
        )],
        ExecutorConfig::default(),
    )
    .await;
    let said = results[0].outcome.result.content.joined_text();
    assert!(said.contains("Plan mode is active"), "{said}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me\n");
    // A plans directory that is a link to another directory: a new plan file there would
    // land in it.
    let elsewhere = root.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let plans = plan_file.parent().unwrap();
    std::fs::remove_file(&plan_file).unwrap();
    std::fs::remove_dir(plans).unwrap();
    std::os::unix::fs::symlink(&elsewhere, plans).unwrap();
    let (results, _) = run_tools(
        pipeline,
        ctx,
        vec![ToolUse::new(
            "w",
            "Write",
            json!({"file_path": plan_file, "content": "a plan\n"}),
        )],
        ExecutorConfig::default(),
    )
    .await;
    let said = results[0].outcome.result.content.joined_text();
    assert!(said.contains("Plan mode is active"), "{said}");
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

/// A session that starts in plan mode is told so, and where its plan goes (whether the file
/// is there yet); one in another mode, or a sub-agent, is not.
#[test]
fn a_session_started_in_plan_mode_is_told_of_it_and_of_its_plan_file() {
    use tools_builtin::enter_plan_mode::plan_mode_reminder;
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join("config");
    let in_mode = |mode: PermissionMode| {
        ToolUseContext::new(&root)
            .with_config_dir(Some(config.clone()))
            .with_session_id("plan-start-1")
            .with_permission(ToolPermissionContext {
                mode,
                ..Default::default()
            })
    };
    assert_eq!(plan_mode_reminder(&in_mode(PermissionMode::Default)), None);
    assert_eq!(
        plan_mode_reminder(&in_mode(PermissionMode::AcceptEdits)),
        None
    );

    let plan = config.join("plans/plan-start-1.md");
    let text = plan_mode_reminder(&in_mode(PermissionMode::Plan)).unwrap();
    assert!(
        text.starts_with("<system-reminder>\nPlan mode is active"),
        "{text}"
    );
    assert!(text.ends_with("\n</system-reminder>"), "{text}");
    assert!(text.contains("ExitPlanMode"), "{text}");
    assert!(
        text.contains(&format!("Write your plan to {}:", plan.display())),
        "{text}"
    );
    assert!(text.contains("Create it with Write"), "{text}");

    std::fs::create_dir_all(plan.parent().unwrap()).unwrap();
    std::fs::write(&plan, "# Plan\n").unwrap();
    let text = plan_mode_reminder(&in_mode(PermissionMode::Plan)).unwrap();
    assert!(text.contains("It exists already"), "{text}");

    let subagent = in_mode(PermissionMode::Plan).with_agent(tool_core::AgentInfo {
        id: "a1".into(),
        agent_type: "Explore".into(),
    });
    assert_eq!(plan_mode_reminder(&subagent), None);
}
