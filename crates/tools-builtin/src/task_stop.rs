//! TaskStop: stops a background task and its whole process group (Claude Code's
//! `TaskStopTool`, formerly `KillShell`).
use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    MaxResultSize, ProgressSender, ToolError, ToolResult, ToolResultContent, ToolUseContext,
    TypedTool, ValidationError, async_trait,
};

use crate::tasks::{TaskStatus, task_registry};

/// Input of the TaskStop tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskStopInput {
    /// The ID of the background task to stop
    pub task_id: Option<String>,
    /// Deprecated: use task_id instead
    pub shell_id: Option<String>,
}

impl TaskStopInput {
    /// The task named: `task_id`, else the deprecated `shell_id`.
    pub fn id(&self) -> Option<&str> {
        self.task_id.as_deref().or(self.shell_id.as_deref())
    }
}

/// Output of the TaskStop tool (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskStopOutput {
    /// What happened.
    pub message: String,
    /// The task stopped.
    pub task_id: String,
    /// Always `local_bash`.
    pub task_type: String,
    /// The task's command.
    pub command: String,
}

/// The TaskStop tool (alias `KillShell`).
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskStop;

#[async_trait]
impl TypedTool for TaskStop {
    type Input = TaskStopInput;
    type Output = TaskStopOutput;
    const NAME: &'static str = "TaskStop";
    const ALIASES: &'static [&'static str] = &["KillShell"];

    fn description(&self) -> Cow<'_, str> {
        "Stop a running background task by ID".into()
    }

    fn prompt(&self) -> Cow<'_, str> {
        "- Stops a running background task by its ID\n\
- Takes a task_id parameter identifying the task to stop\n\
- The task's whole process group is killed\n\
- Use this tool when you need to terminate a long-running task"
            .into()
    }

    fn search_hint(&self) -> Option<&str> {
        Some("kill a running background task")
    }

    fn should_defer(&self) -> bool {
        true
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    fn is_concurrency_safe(&self, _input: &TaskStopInput) -> bool {
        true
    }

    async fn validate_input(
        &self,
        input: &TaskStopInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        let Some(id) = input.id() else {
            return Err(ValidationError::with_code(
                "Missing required parameter: task_id",
                1,
            ));
        };
        match task_registry(ctx).get(id) {
            None => Err(ValidationError::with_code(
                format!("No task found with ID: {id}"),
                1,
            )),
            Some(task) if task.status != crate::tasks::TaskStatus::Running => {
                Err(ValidationError::with_code(
                    format!(
                        "Task {id} is not running (status: {})",
                        task.status.as_str()
                    ),
                    3,
                ))
            }
            Some(_) => Ok(()),
        }
    }

    /// Touches only the session's own state: allowed, as Claude Code's default
    /// `checkPermissions` allows (deny and ask rules still apply first).
    async fn check_permissions(
        &self,
        _input: &TaskStopInput,
        _ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        tool_core::PermissionResult::allow()
    }
    async fn call(
        &self,
        input: TaskStopInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<TaskStopOutput>, ToolError> {
        let id = input
            .id()
            .ok_or_else(|| ToolError::msg("Missing required parameter: task_id"))?;
        let task = task_registry(&ctx).stop(id).await?;
        // Said from where the task ended up: it may have finished on its own meanwhile, or
        // still be dying.
        let message = match task.status {
            TaskStatus::Killed => {
                format!("Successfully stopped task: {} ({})", task.id, task.command)
            }
            TaskStatus::Running => {
                return Err(ToolError::msg(format!(
                    "Task {} did not stop within {} s; it is still being killed",
                    task.id,
                    crate::tasks::STOP_WAIT.as_secs()
                )));
            }
            other => format!(
                "Task {} had already finished ({}{}) before it could be stopped: {}",
                task.id,
                other.as_str(),
                task.exit_code
                    .map(|c| format!(", exit code {c}"))
                    .unwrap_or_default(),
                task.command
            ),
        };
        Ok(ToolResult::new(TaskStopOutput {
            message,
            task_id: task.id,
            task_type: "local_bash".to_owned(),
            command: task.command,
        }))
    }

    fn to_content(&self, output: &TaskStopOutput) -> ToolResultContent {
        ToolResultContent::Text(output.message.clone())
    }
}
