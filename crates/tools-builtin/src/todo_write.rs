//! TodoWrite: replaces the session's (or sub-agent's) todo list, kept in the context's app
//! state (Claude Code's `TodoWriteTool`).
//!
//! The list is keyed by the agent id when the call runs in a sub-agent, by the session id
//! otherwise. As in Claude Code, a list whose every item is completed is stored as empty.
//! Beyond Claude Code's schema, an item's `content` and `activeForm` must not be blank (a
//! refusal the model can correct). As in Claude Code, several items may be `in_progress` at
//! once: the prompt advises one at a time, the tool does not enforce it.
use std::borrow::Cow;
use std::collections::HashMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    MaxResultSize, ProgressSender, ToolError, ToolResult, ToolResultContent, ToolUseContext,
    TypedTool, ValidationError, async_trait,
};

/// The state of one todo item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One todo item.
//
// Other keys are dropped, as Claude Code's (non-strict) item schema drops them: a model that
// adds the older `id` or `priority` is not refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TodoItem {
    /// The task, in imperative form (e.g. "Run the tests")
    #[schemars(length(min = 1))]
    pub content: String,
    /// pending, in_progress or completed
    pub status: TodoStatus,
    /// The task in present continuous form, shown while it runs (e.g. "Running the tests")
    #[serde(rename = "activeForm")]
    #[schemars(length(min = 1))]
    pub active_form: String,
}

/// Input of the TodoWrite tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TodoWriteInput {
    /// The updated todo list
    pub todos: Vec<TodoItem>,
}

/// Output of the TodoWrite tool (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TodoWriteOutput {
    /// The list before the call.
    #[serde(rename = "oldTodos")]
    pub old_todos: Vec<TodoItem>,
    /// The list as given.
    #[serde(rename = "newTodos")]
    pub new_todos: Vec<TodoItem>,
}

/// Every todo list of a session, by agent id (or session id for the main thread). Kept in
/// [`ToolUseContext::app_state`].
#[derive(Debug, Clone, Default)]
pub struct TodoStore {
    lists: HashMap<String, Vec<TodoItem>>,
}

impl TodoStore {
    /// The list stored under `key`.
    pub fn list(&self, key: &str) -> &[TodoItem] {
        self.lists.get(key).map_or(&[], Vec::as_slice)
    }
}

/// The key of the context's todo list: the sub-agent's id, or the session id.
pub fn todo_key(ctx: &ToolUseContext) -> String {
    ctx.agent()
        .map_or_else(|| ctx.session_id().to_owned(), |a| a.id.clone())
}

/// The current todo list of the context's agent (or session).
pub fn current_todos(ctx: &ToolUseContext) -> Vec<TodoItem> {
    let key = todo_key(ctx);
    ctx.app_state()
        .update::<TodoStore, _>(|store| store.list(&key).to_vec())
}

/// The text the model sees after a successful write (Claude Code's).
pub const TODO_WRITE_RESULT: &str = "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable";

const PROMPT: &str = "Use this tool to create and manage a structured task list for your current coding session. This helps you track progress, organize complex tasks, and demonstrate thoroughness to the user.

Use it for complex multi-step tasks (3 or more distinct steps), when the user provides multiple tasks, and right after receiving new instructions. Skip it for a single, trivial task.

Each item has `content` (imperative: \"Run tests\"), `activeForm` (present continuous: \"Running tests\") and `status` (pending, in_progress, completed). Keep exactly one task in_progress at any time; mark tasks completed immediately after finishing them; only mark a task completed when it is fully accomplished.";

/// The TodoWrite tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct TodoWrite;

#[async_trait]
impl TypedTool for TodoWrite {
    type Input = TodoWriteInput;
    type Output = TodoWriteOutput;
    const NAME: &'static str = "TodoWrite";

    fn description(&self) -> Cow<'_, str> {
        "Update the todo list for the current session. To be used proactively and often to track progress and pending tasks. Make sure that at least one task is in_progress at all times. Always provide both content (imperative) and activeForm (present continuous) for each task.".into()
    }

    fn prompt(&self) -> Cow<'_, str> {
        PROMPT.into()
    }

    fn search_hint(&self) -> Option<&str> {
        Some("manage the session task checklist")
    }

    fn should_defer(&self) -> bool {
        true
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    async fn validate_input(
        &self,
        input: &TodoWriteInput,
        _ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        for (i, todo) in input.todos.iter().enumerate() {
            if todo.content.trim().is_empty() {
                return Err(ValidationError::new(format!(
                    "todos[{i}].content must not be empty"
                )));
            }
            if todo.active_form.trim().is_empty() {
                return Err(ValidationError::new(format!(
                    "todos[{i}].activeForm must not be empty"
                )));
            }
        }
        Ok(())
    }

    /// Touches only the session's own state: allowed, as Claude Code's default
    /// `checkPermissions` allows (deny and ask rules still apply first).
    async fn check_permissions(
        &self,
        _input: &TodoWriteInput,
        _ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        tool_core::PermissionResult::allow()
    }
    async fn call(
        &self,
        input: TodoWriteInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<TodoWriteOutput>, ToolError> {
        let key = todo_key(&ctx);
        let all_done = input
            .todos
            .iter()
            .all(|t| t.status == TodoStatus::Completed);
        let stored = if all_done {
            Vec::new()
        } else {
            input.todos.clone()
        };
        let old_todos = ctx
            .app_state()
            .update::<TodoStore, _>(|store| store.lists.insert(key, stored).unwrap_or_default());
        Ok(ToolResult::new(TodoWriteOutput {
            old_todos,
            new_todos: input.todos,
        }))
    }

    fn to_content(&self, _output: &TodoWriteOutput) -> ToolResultContent {
        ToolResultContent::Text(TODO_WRITE_RESULT.to_owned())
    }
}
