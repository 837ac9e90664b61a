//! TaskOutput: reads a background task's new output, optionally waiting for it to end
//! (Claude Code's `TaskOutputTool`, formerly `BashOutput`).
use std::borrow::Cow;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    MaxResultSize, ProgressSender, ToolError, ToolResult, ToolResultContent, ToolUseContext,
    TypedTool, async_trait,
};

use crate::tasks::{TaskStatus, task_registry};

/// Longest wait, in milliseconds (Claude Code's schema maximum). The input schema's range
/// refuses larger and negative values, as Claude Code's does; a caller that skips the
/// input check gets them clamped to `0..=MAX_WAIT_MS`.
pub const MAX_WAIT_MS: u64 = 600_000;
/// Bytes of new output returned at most; the end is kept.
pub const MAX_OUTPUT_BYTES: u64 = 30_000;

/// How long a blocking read waits when `timeout` is not given, in milliseconds (Claude
/// Code's default).
pub const DEFAULT_WAIT_MS: u64 = 30_000;

/// Input of the TaskOutput tool. Only `task_id` is required: as Claude Code's runtime
/// schema does, `block` defaults to true and `timeout` to [`DEFAULT_WAIT_MS`] (at most
/// [`MAX_WAIT_MS`]). The JSON schema shows both defaults and the range, and lists only
/// `task_id` as required.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskOutputInput {
    /// The task ID to get output from
    pub task_id: String,
    /// Whether to wait for completion
    #[serde(default = "default_block")]
    pub block: bool,
    /// Max wait time in ms
    #[serde(default = "default_timeout")]
    #[schemars(range(min = 0, max = 600_000))]
    pub timeout: f64,
}

/// `block`'s default: wait.
fn default_block() -> bool {
    true
}

/// `timeout`'s default: [`DEFAULT_WAIT_MS`].
#[expect(clippy::cast_precision_loss, reason = "30000 is exact in an f64")]
fn default_timeout() -> f64 {
    DEFAULT_WAIT_MS as f64
}

/// Output of the TaskOutput tool (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskOutputOutput {
    /// `success` (ended), `timeout` (still running after the wait) or `not_ready` (running,
    /// no wait asked).
    pub retrieval_status: String,
    /// The task.
    pub task: TaskOutputTask,
}

/// The task part of [`TaskOutputOutput`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskOutputTask {
    /// The task id.
    pub task_id: String,
    /// Always `local_bash`.
    pub task_type: String,
    /// `running`, `completed`, `failed` or `killed`.
    pub status: String,
    /// The command's description, else the command.
    pub description: String,
    /// Output written since the previous read.
    pub output: String,
    /// The exit code, once exited.
    #[serde(rename = "exitCode", skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Why the task was killed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The TaskOutput tool (aliases `BashOutput`, `BashOutputTool`, `AgentOutputTool`).
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskOutput;

#[async_trait]
impl TypedTool for TaskOutput {
    type Input = TaskOutputInput;
    type Output = TaskOutputOutput;
    const NAME: &'static str = "TaskOutput";
    const ALIASES: &'static [&'static str] = &["BashOutput", "BashOutputTool", "AgentOutputTool"];

    fn description(&self) -> Cow<'_, str> {
        "Retrieves output from a running or completed background task".into()
    }

    fn prompt(&self) -> Cow<'_, str> {
        "- Retrieves output from a running or completed background task (a background shell)\n\
- Takes a task_id parameter identifying the task\n\
- Returns the output written since the last read, with the task's status\n\
- Use block=true (the default) to wait for the task to finish, up to timeout milliseconds (default 30000, at most 600000)\n\
- Use block=false for a non-blocking check of the current status\n\
- Task IDs are returned by Bash when run_in_background is set"
            .into()
    }

    fn search_hint(&self) -> Option<&str> {
        Some("read background shell task output")
    }

    fn should_defer(&self) -> bool {
        true
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    fn is_concurrency_safe(&self, _input: &TaskOutputInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &TaskOutputInput) -> bool {
        true
    }

    /// An id no task has is a bad input (as TaskStop says it), refused before anything runs.
    async fn validate_input(
        &self,
        input: &TaskOutputInput,
        ctx: &ToolUseContext,
    ) -> Result<(), tool_core::ValidationError> {
        match task_registry(ctx).get(&input.task_id) {
            Some(_) => Ok(()),
            None => Err(tool_core::ValidationError::with_code(
                format!("No task found with ID: {}", input.task_id),
                1,
            )),
        }
    }

    /// Touches only the session's own state: allowed, as Claude Code's default
    /// `checkPermissions` allows (deny and ask rules still apply first).
    async fn check_permissions(
        &self,
        _input: &TaskOutputInput,
        _ctx: &ToolUseContext,
    ) -> tool_core::PermissionResult {
        tool_core::PermissionResult::allow()
    }
    async fn call(
        &self,
        input: TaskOutputInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<TaskOutputOutput>, ToolError> {
        let registry = task_registry(&ctx);
        let missing = || ToolError::msg(format!("No task found with ID: {}", input.task_id));
        let mut task = registry.get(&input.task_id).ok_or_else(missing)?;
        if input.block && task.status == TaskStatus::Running {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "clamped to 0..=MAX first"
            )]
            let ms = if input.timeout.is_finite() {
                input.timeout.clamp(0.0, MAX_WAIT_MS as f64) as u64
            } else {
                MAX_WAIT_MS
            };
            let wait = registry.wait(&input.task_id, Duration::from_millis(ms));
            task = tokio::select! {
                t = wait => t.ok_or_else(missing)?,
                () = ctx.cancellation().cancelled() => return Err(ToolError::Cancelled(None)),
            };
        }
        let (mut output, skipped) = registry
            .read_new_output(&input.task_id, MAX_OUTPUT_BYTES)
            .ok_or_else(missing)?;
        if skipped {
            output = format!(
                "[earlier output skipped; the full output is in {}]\n{output}",
                task.output_file.display()
            );
        }
        if task.status != TaskStatus::Running && task.leftovers_stopped {
            if !output.is_empty() && !output.ends_with('\n') {
                output.push('\n');
            }
            output.push_str(crate::tasks::LEFTOVERS_STOPPED);
        }
        let retrieval_status = match (task.status, input.block) {
            (TaskStatus::Running, true) => "timeout",
            (TaskStatus::Running, false) => "not_ready",
            _ => "success",
        };
        Ok(ToolResult::new(TaskOutputOutput {
            retrieval_status: retrieval_status.to_owned(),
            task: TaskOutputTask {
                task_id: task.id,
                task_type: "local_bash".to_owned(),
                status: task.status.as_str().to_owned(),
                description: task.description.unwrap_or(task.command),
                output,
                exit_code: task.exit_code,
                error: task.kill_reason.map(|r| format!("Task was killed: {r}")),
            },
        }))
    }

    fn to_content(&self, output: &TaskOutputOutput) -> ToolResultContent {
        let t = &output.task;
        let mut parts = vec![
            format!(
                "<retrieval_status>{}</retrieval_status>",
                output.retrieval_status
            ),
            format!("<task_id>{}</task_id>", t.task_id),
            format!("<task_type>{}</task_type>", t.task_type),
            format!("<status>{}</status>", t.status),
        ];
        if let Some(code) = t.exit_code {
            parts.push(format!("<exit_code>{code}</exit_code>"));
        }
        if !t.output.trim().is_empty() {
            parts.push(format!("<output>\n{}\n</output>", t.output.trim_end()));
        }
        if let Some(error) = &t.error {
            parts.push(format!("<error>{error}</error>"));
        }
        ToolResultContent::Text(parts.join("\n\n"))
    }
}
