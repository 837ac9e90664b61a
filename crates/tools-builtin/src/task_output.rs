//! TaskOutput: reads a background task's new output, optionally waiting for it to end
//! (Claude Code's `TaskOutputTool`, formerly `BashOutput`).
//!
//! BashOutput's own input is taken too, as TaskStop takes KillShell's `shell_id`: `bash_id`
//! for `task_id`, with no wait unless `block` is given (BashOutput never waited), and
//! `filter`, a regular expression that keeps only the lines of new output it matches: all
//! the new output is read for it (the matching lines are then cut to [`MAX_OUTPUT_BYTES`],
//! the end kept), and a line the task has not ended yet is left for a later read, which sees
//! it whole (once the task has ended, its last line is taken as it is). The schema the
//! model is shown is TaskOutput's alone (`task_id`, `block`, `timeout`); the schema step
//! ([`TaskOutput`]'s `parse_input`) puts a legacy input in those words first, so hooks and
//! permission rules see one shape.
//!
//! An ended task whose output file's file system was full when it ended says that output may
//! be missing ([`TaskSnapshot::output_incomplete`](crate::tasks::TaskSnapshot)): what the
//! command wrote then was lost, and so was its own error about it, which went to the same
//! file.
use std::borrow::Cow;
use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_core::{
    CancellationToken, InputError, InputIssue, InterruptBehavior, MaxResultSize, PermissionResult,
    PermissionSubject, ProgressSender, SearchOrRead, Tool, ToolError, ToolResult,
    ToolResultContent, ToolUseContext, TypedTool, ValidationError, async_trait,
};

use crate::tasks::{TaskRegistry, TaskStatus, task_registry};

/// Longest wait, in milliseconds (Claude Code's schema maximum). The input schema's range
/// refuses larger and negative values, as Claude Code's does; a caller that skips the
/// input check gets them clamped to `0..=MAX_WAIT_MS`.
pub const MAX_WAIT_MS: u64 = 600_000;
/// Bytes of new output returned at most (with a `filter`, of the matching lines); the end is
/// kept.
pub const MAX_OUTPUT_BYTES: u64 = 30_000;

/// How long a blocking read waits when `timeout` is not given, in milliseconds (Claude
/// Code's default).
pub const DEFAULT_WAIT_MS: u64 = 30_000;

/// Input of the TaskOutput tool. Only `task_id` is required: as Claude Code's runtime
/// schema does, `block` defaults to true and `timeout` to [`DEFAULT_WAIT_MS`] (at most
/// [`MAX_WAIT_MS`]). The JSON schema shows both defaults and the range, and lists only
/// `task_id` as required. BashOutput's `bash_id` and `filter` are read too (see the module
/// documentation), though the schema does not show them.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct TaskOutputInput {
    /// The task ID to get output from
    #[serde(alias = "bash_id")]
    pub task_id: String,
    /// Whether to wait for completion
    #[serde(default = "default_block")]
    pub block: bool,
    /// Max wait time in ms
    #[serde(default = "default_timeout")]
    #[schemars(range(min = 0, max = 600_000))]
    pub timeout: f64,
    /// BashOutput's `filter`: a regular expression; only the lines of new output it matches
    /// are returned (the others are read all the same; a line not yet ended is left for a
    /// later read). Not in the schema the model sees.
    #[serde(default)]
    #[schemars(skip)]
    pub filter: Option<String>,
}

/// The longest compiled `filter` regular expression, in bytes: a larger one is refused
/// rather than built.
const MAX_FILTER_REGEX_BYTES: usize = 1 << 20;

/// `filter` compiled, or why it cannot be.
fn compile_filter(filter: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(filter)
        .size_limit(MAX_FILTER_REGEX_BYTES)
        .build()
        .map_err(|e| format!("The filter {filter:?} is not a valid regular expression: {e}"))
}

/// The lines a `filter` matched, the last [`MAX_OUTPUT_BYTES`] of them kept as they come.
#[derive(Debug, Default)]
struct Matches {
    lines: VecDeque<String>,
    bytes: usize,
    /// Earlier matching lines were dropped.
    cut: bool,
}

impl Matches {
    /// The limit, in bytes.
    fn limit() -> usize {
        usize::try_from(MAX_OUTPUT_BYTES).unwrap_or(usize::MAX)
    }

    /// Keeps `line` if `filter` matches it (without its line break), dropping the earliest
    /// lines kept once they pass the limit.
    fn offer(&mut self, line: &str, filter: &regex::Regex) {
        if !filter.is_match(line.trim_end_matches(['\n', '\r'])) {
            return;
        }
        self.lines.push_back(line.to_owned());
        self.bytes += line.len();
        while self.bytes > Self::limit() && self.lines.len() > 1 {
            if let Some(first) = self.lines.pop_front() {
                self.bytes -= first.len();
            }
            self.cut = true;
        }
    }

    /// The lines kept, at most the limit (a single longer line keeps its end, from a whole
    /// character), and whether earlier ones were dropped.
    fn finish(self) -> (String, bool) {
        let mut text: String = self.lines.into_iter().collect();
        let mut cut = self.cut;
        if text.len() > Self::limit() {
            let mut from = text.len() - Self::limit();
            while !text.is_char_boundary(from) {
                from += 1;
            }
            text.drain(..from);
            cut = true;
        }
        (text, cut)
    }
}

/// Reads task `id`'s new output on a blocking thread: with a `filter`, all of it, line by
/// line, keeping the matching lines (cut to [`MAX_OUTPUT_BYTES`], the end kept; a line the
/// task has not ended yet is left for a later read); without, its last
/// [`MAX_OUTPUT_BYTES`]. The text and whether earlier output was left out; `None` when
/// there is no such task. A read `cancel` stops leaves the output unread.
async fn read_output(
    registry: TaskRegistry,
    id: String,
    filter: Option<regex::Regex>,
    cancel: CancellationToken,
) -> Result<Option<(String, bool)>, ToolError> {
    let read = tokio::task::spawn_blocking(move || match filter {
        None => Ok(registry.read_new_output(&id, MAX_OUTPUT_BYTES)),
        Some(filter) => {
            let mut matches = Matches::default();
            let flow = registry.read_new_lines(&id, |line| {
                if cancel.is_cancelled() {
                    return ControlFlow::Break(());
                }
                matches.offer(line, &filter);
                ControlFlow::Continue(())
            });
            match flow {
                None => Ok(None),
                Some(ControlFlow::Break(())) => Err(ToolError::Cancelled(None)),
                Some(ControlFlow::Continue(())) => Ok(Some(matches.finish())),
            }
        }
    });
    read.await
        .map_err(|e| ToolError::msg(format!("Reading the task's output failed: {e}")))?
}

/// BashOutput's input put in TaskOutput's words for the schema step: `bash_id` becomes
/// `task_id`, and without a `block` the read does not wait (BashOutput's never did). The
/// `filter` (BashOutput's) is taken out, to go back in after the schema step, which does
/// not know it; a `null` one is none. Both `task_id` and `bash_id`, or a `filter` that is
/// no string, are refused.
fn legacy_input(mut input: Value) -> Result<(Value, Option<String>), InputError> {
    let Value::Object(map) = &mut input else {
        return Ok((input, None));
    };
    if let Some(id) = map.remove("bash_id") {
        if map.contains_key("task_id") {
            return Err(InputError::other(
                TaskOutput::NAME,
                "TaskOutput was given both task_id and bash_id (its old name): give only task_id",
            ));
        }
        map.insert("task_id".to_owned(), id);
        map.entry("block").or_insert(Value::Bool(false));
    }
    let filter = match map.remove("filter") {
        None | Some(Value::Null) => None,
        Some(Value::String(filter)) => Some(filter),
        Some(other) => {
            return Err(InputError::from_issues(
                TaskOutput::NAME,
                vec![InputIssue::WrongType {
                    path: "filter".to_owned(),
                    expected: "string".to_owned(),
                    received: tool_core::json_type(&other),
                }],
            ));
        }
    };
    Ok((input, filter))
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

/// The TaskOutput tool (aliases `BashOutput`, `BashOutputTool`, `AgentOutputTool`), which
/// takes BashOutput's input too (see the module documentation).
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskOutput;

impl TaskOutput {
    /// The tool's name.
    pub const NAME: &'static str = "TaskOutput";
}

/// TaskOutput as a typed tool: all of it but the legacy input, which [`TaskOutput`] puts in
/// TaskOutput's words before this one's schema step.
#[derive(Debug, Clone, Copy, Default)]
struct Typed;

#[async_trait]
impl Tool for TaskOutput {
    fn name(&self) -> &str {
        Tool::name(&Typed)
    }
    fn aliases(&self) -> &[&str] {
        Tool::aliases(&Typed)
    }
    fn input_schema(&self) -> Value {
        Tool::input_schema(&Typed)
    }
    fn description(&self) -> Cow<'_, str> {
        Tool::description(&Typed)
    }
    fn prompt(&self) -> Cow<'_, str> {
        Tool::prompt(&Typed)
    }
    fn search_hint(&self) -> Option<&str> {
        Tool::search_hint(&Typed)
    }
    fn user_facing_name(&self, input: &Value) -> String {
        Tool::user_facing_name(&Typed, input)
    }
    fn is_enabled(&self) -> bool {
        Tool::is_enabled(&Typed)
    }
    fn should_defer(&self) -> bool {
        Tool::should_defer(&Typed)
    }
    fn always_load(&self) -> bool {
        Tool::always_load(&Typed)
    }
    fn max_result_size(&self) -> MaxResultSize {
        Tool::max_result_size(&Typed)
    }
    fn render_output(&self, output: &Value) -> Option<ToolResultContent> {
        Tool::render_output(&Typed, output)
    }
    fn interrupt_behavior(&self) -> InterruptBehavior {
        Tool::interrupt_behavior(&Typed)
    }
    fn requires_user_interaction(&self) -> bool {
        Tool::requires_user_interaction(&Typed)
    }
    fn user_supplied_fields(&self) -> &'static [&'static str] {
        Tool::user_supplied_fields(&Typed)
    }
    fn is_concurrency_safe(&self, input: &Value) -> bool {
        Tool::is_concurrency_safe(&Typed, input)
    }
    fn is_read_only(&self, input: &Value) -> bool {
        Tool::is_read_only(&Typed, input)
    }
    fn is_destructive(&self, input: &Value) -> bool {
        Tool::is_destructive(&Typed, input)
    }
    fn is_open_world(&self, input: &Value) -> bool {
        Tool::is_open_world(&Typed, input)
    }
    fn is_search_or_read(&self, input: &Value) -> SearchOrRead {
        Tool::is_search_or_read(&Typed, input)
    }
    fn permission_subject(&self, input: &Value) -> Option<PermissionSubject> {
        Tool::permission_subject(&Typed, input)
    }
    fn observable_input(&self, input: &Value, ctx: &ToolUseContext) -> Option<Value> {
        Tool::observable_input(&Typed, input, ctx)
    }
    /// The schema step, after a legacy input is put in TaskOutput's words (`bash_id` as
    /// `task_id`, no wait unless asked); a `filter` goes back into the checked input.
    fn parse_input(&self, input: Value) -> Result<Value, InputError> {
        let (input, filter) = legacy_input(input)?;
        let mut checked = Tool::parse_input(&Typed, input)?;
        if let (Some(filter), Value::Object(map)) = (filter, &mut checked) {
            map.insert("filter".to_owned(), Value::String(filter));
        }
        Ok(checked)
    }
    async fn validate_input(
        &self,
        input: &Value,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        Tool::validate_input(&Typed, input, ctx).await
    }
    async fn check_permissions(&self, input: &Value, ctx: &ToolUseContext) -> PermissionResult {
        Tool::check_permissions(&Typed, input, ctx).await
    }
    async fn call(
        &self,
        input: Value,
        ctx: ToolUseContext,
        progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        Tool::call(&Typed, input, ctx, progress).await
    }
}

#[async_trait]
impl TypedTool for Typed {
    type Input = TaskOutputInput;
    type Output = TaskOutputOutput;
    const NAME: &'static str = TaskOutput::NAME;
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

    /// A read only waits (with `block`, up to ten minutes): a user interrupt ends the wait
    /// at once, as it ends Sleep's, and leaves the task running.
    fn interrupt_behavior(&self) -> InterruptBehavior {
        InterruptBehavior::Cancel
    }

    fn is_concurrency_safe(&self, _input: &TaskOutputInput) -> bool {
        true
    }

    fn is_read_only(&self, _input: &TaskOutputInput) -> bool {
        true
    }

    /// An id no task has is a bad input (as TaskStop says it), refused before anything runs;
    /// so is a `filter` that is no regular expression.
    async fn validate_input(
        &self,
        input: &TaskOutputInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        if let Some(filter) = &input.filter {
            compile_filter(filter).map_err(|e| ValidationError::with_code(e, 2))?;
        }
        match task_registry(ctx).get(&input.task_id) {
            Some(_) => Ok(()),
            None => Err(ValidationError::with_code(
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
        let filter = match &input.filter {
            Some(filter) => Some(compile_filter(filter).map_err(ToolError::msg)?),
            None => None,
        };
        let filtered = filter.is_some();
        let (mut output, skipped) = read_output(
            registry,
            input.task_id.clone(),
            filter,
            ctx.cancellation().clone(),
        )
        .await?
        .ok_or_else(missing)?;
        if skipped {
            let what = if filtered { "matching lines" } else { "output" };
            output = format!(
                "[earlier {what} skipped; the full output is in {}]\n{output}",
                task.output_file.display()
            );
        }
        if task_registry(&ctx).output_file_lost(&task.id) == Some(true) {
            if !output.is_empty() && !output.ends_with('\n') {
                output.push('\n');
            }
            output.push_str(&format!(
                "[The output file {} was deleted or replaced while the task ran: what the task \
                 wrote after that cannot be read]",
                task.output_file.display()
            ));
        }
        if task.status != TaskStatus::Running && task.output_incomplete {
            if !output.is_empty() && !output.ends_with('\n') {
                output.push('\n');
            }
            output.push_str(crate::tasks::OUTPUT_INCOMPLETE);
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
