//! Review 39: plan mode. A session plan file that cannot be shown (over 1 MiB, not text) was
//! dropped without a word: ExitPlanMode asked a bare "Exit plan mode?" and the user approved
//! a plan they were never shown.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tool_core::{RuleSource, SourcedRule, ToolPermissionContext, ToolUseContext};
use tool_exec::{
    ExecutorConfig, NoHooks, Pipeline, PromptAnswer, PromptRequest, Prompter, ToolUse, run_tools,
};
use tool_perms::{PathRoots, PermissionEngine};

/// Approves everything it is asked; keeps the questions.
#[derive(Default)]
struct Approves(Mutex<Vec<String>>);

#[tool_core::async_trait]
impl Prompter for Approves {
    async fn prompt(&self, request: &PromptRequest) -> PromptAnswer {
        self.0.lock().unwrap().push(request.message.clone());
        PromptAnswer::AllowOnce {
            updated_input: None,
        }
    }
}

/// The real permission engine and a context for a session `session` in `root`, its home
/// `home`, that may enter plan mode (an allow rule for EnterPlanMode), with every built-in
/// tool.
pub(crate) fn plan_session(
    root: &Path,
    home: &Path,
    session: &str,
) -> (PermissionEngine, ToolUseContext) {
    let permission = ToolPermissionContext {
        allow: vec![SourcedRule {
            source: RuleSource::ProjectSettings,
            rule: "EnterPlanMode".into(),
        }],
        ..Default::default()
    };
    let mut roots = PathRoots::for_cwd(root);
    roots.home = Some(home.to_path_buf());
    let (engine, problems) = PermissionEngine::new_lenient(&permission, roots);
    assert!(problems.is_empty(), "{problems:?}");
    let ctx = ToolUseContext::new(root)
        .with_home(Some(home.to_path_buf()))
        .with_config_dir(Some(home.join(".claude")))
        .with_session_id(session)
        .with_tools(tool_registry::all_base_tools())
        .with_permission(permission);
    (engine, ctx)
}

/// Enters plan mode, writes `plan` (bytes) to the session's plan file as plan mode lets the
/// model, and calls ExitPlanMode, through the pipeline and the real permission engine (as
/// the agent asks on a terminal). Gives the questions asked and ExitPlanMode's result
/// (whether an error, its text).
async fn exit_with_plan_file(plan: &[u8]) -> (Vec<String>, bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    std::fs::create_dir_all(home.join(".claude/plans")).unwrap();
    let (engine, ctx) = plan_session(&root, &home, "review39-plan");
    let plan_file = ctx.plan_file().unwrap();
    let prompter = Arc::new(Approves::default());
    let pipeline = Arc::new(Pipeline::new(
        Arc::new(engine),
        Arc::clone(&prompter) as Arc<dyn Prompter>,
        Arc::new(NoHooks),
    ));
    let (results, ctx) = run_tools(
        Arc::clone(&pipeline),
        ctx,
        vec![ToolUse::new("p", "EnterPlanMode", json!({}))],
        ExecutorConfig::default(),
    )
    .await;
    assert!(!results[0].outcome.result.is_error);
    std::fs::write(&plan_file, plan).unwrap();
    let (results, _) = run_tools(
        pipeline,
        ctx,
        vec![ToolUse::new("x", "ExitPlanMode", json!({}))],
        ExecutorConfig::default(),
    )
    .await;
    let asked = prompter.0.lock().unwrap().clone();
    let result = &results[0].outcome.result;
    (asked, result.is_error, result.content.joined_text())
}

/// A plan file over 1 MiB is refused, saying so (as a `planFilePath` that large is); the
/// user is not asked to approve a plan they cannot see. Its last step would have been run
/// unseen.
#[tokio::test(flavor = "multi_thread")]
async fn a_plan_file_over_the_limit_is_refused_not_approved_unseen() {
    let mut plan = "1. Read the code.\n".repeat(70_000);
    plan.push_str("LAST STEP: rm -rf build\n");
    assert!(plan.len() as u64 > tools_builtin::exit_plan_mode::MAX_PLAN_BYTES);
    let (asked, is_error, text) = exit_with_plan_file(plan.as_bytes()).await;
    assert!(
        asked.is_empty(),
        "the user was asked about a plan not shown: {asked:?}"
    );
    assert!(is_error, "{text}");
    assert!(
        text.contains(&format!("bytes; the limit is {}", 1024 * 1024)) && text.contains(".md"),
        "{text}"
    );
    assert!(!text.contains("approved"), "{text}");
}

/// A plan file that is not UTF-8 text is refused in the same way.
#[tokio::test(flavor = "multi_thread")]
async fn a_plan_file_that_is_not_text_is_refused_not_approved_unseen() {
    let (asked, is_error, text) = exit_with_plan_file(b"# Plan\n\xff\xfe rm -rf build\n").await;
    assert!(
        asked.is_empty(),
        "the user was asked about a plan not shown: {asked:?}"
    );
    assert!(is_error, "{text}");
    assert!(text.contains("is not UTF-8 text"), "{text}");
}

/// A plan file of a plan's size is still shown and approved (and none written is still no
/// plan: a bare question).
#[tokio::test(flavor = "multi_thread")]
async fn a_plan_file_of_a_plans_size_is_shown_and_approved() {
    let (asked, is_error, text) = exit_with_plan_file(b"# Plan\n1. Fix it.\n").await;
    assert!(!is_error, "{text}");
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].ends_with("# Plan\n1. Fix it.\n"), "{}", asked[0]);
    assert!(
        text.ends_with("## Approved Plan:\n# Plan\n1. Fix it.\n"),
        "{text}"
    );
}
