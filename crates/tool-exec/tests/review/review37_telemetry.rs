//! Review 37's finding on the decision source, with tool-perms' engine: a call refused
//! because nobody can approve it (a session that cannot prompt) is the configuration's
//! refusal (`config`, as under `dontAsk`), not a user's rejection; a person's "no" stays
//! `user_reject`.

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_core::{
    MaxResultSize, ProgressSender, Tool, ToolError, ToolPermissionContext, ToolResult,
    ToolUseContext, async_trait,
};
use tool_exec::{CallOutcome, Ending, Pipeline, PromptAnswer, PromptRequest, Prompter, ToolUse};
use tool_perms::{PathRoots, PermissionEngine};

/// A tool that is not read-only, so that the engine asks about it; it never runs here.
struct Touch;

#[async_trait]
impl Tool for Touch {
    fn name(&self) -> &str {
        "Touch"
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn description(&self) -> Cow<'_, str> {
        "changes a file".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(30_000)
    }
    async fn call(
        &self,
        _input: Value,
        _ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::text("touched"))
    }
}

/// A person who answers no, counting the questions.
#[derive(Default)]
struct SaysNo(Mutex<u32>);

#[async_trait]
impl Prompter for SaysNo {
    async fn prompt(&self, _request: &PromptRequest) -> PromptAnswer {
        *self.0.lock().unwrap() += 1;
        PromptAnswer::Deny { feedback: None }
    }
}

async fn call(cwd: &Path, avoid_prompts: bool, person: &Arc<SaysNo>) -> CallOutcome {
    let perm = ToolPermissionContext {
        avoid_prompts,
        ..Default::default()
    };
    let engine = PermissionEngine::new(&perm, PathRoots::for_cwd(cwd)).unwrap();
    let pipeline = Pipeline::new(
        Arc::new(engine),
        person.clone(),
        Arc::new(tool_exec::NoHooks),
    );
    let tools: Vec<Arc<dyn Tool>> = vec![Arc::new(Touch)];
    let ctx = ToolUseContext::new(cwd)
        .with_tools(tools)
        .with_permission(perm);
    pipeline
        .run_tool_use(
            &ToolUse::new("toolu_1", "Touch", json!({})),
            ctx,
            ProgressSender::none(),
        )
        .await
}

#[tokio::test]
async fn a_refusal_with_nobody_to_ask_is_the_configurations() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();

    let person = Arc::new(SaysNo::default());
    let refused = call(&cwd, true, &person).await;
    assert_eq!(refused.ending, Ending::Denied);
    assert_eq!(*person.0.lock().unwrap(), 0, "nobody was to be asked");
    assert_eq!(refused.decision, Some(("reject", "config")));

    let rejected = call(&cwd, false, &person).await;
    assert_eq!(rejected.ending, Ending::Denied);
    assert_eq!(*person.0.lock().unwrap(), 1);
    assert_eq!(rejected.decision, Some(("reject", "user_reject")));
}
