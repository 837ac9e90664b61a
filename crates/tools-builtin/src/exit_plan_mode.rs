//! ExitPlanMode: asks the user to approve the plan and restores the mode that was active
//! before plan mode, through a context modifier (Claude Code's `ExitPlanModeV2Tool`).
//!
//! It needs the user's approval (`requires_user_interaction`, and an `ask` permission
//! result). The mode restored is the one [`EnterPlanMode`](crate::EnterPlanMode) remembered
//! (`default` when none was). The plan itself is read from the input's passthrough `plan`
//! field (as hooks inject it) or from the file named by `planFilePath`, else from the
//! session's plan file, read once per call (see `session_plan`).
use std::borrow::Cow;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tool_core::{
    MaxResultSize, PermissionMode, PermissionResult, ProgressSender, ToolError, ToolResult,
    ToolResultContent, ToolUseContext, TypedTool, ValidationError, async_trait,
};

use crate::enter_plan_mode::with_mode;

/// A prompt-based permission ExitPlanMode asks for.
//
// Deprecated in Claude Code 2.1.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AllowedPrompt {
    /// The tool the permission applies to (only "Bash")
    pub tool: String,
    /// A description of the commands to allow (e.g. "run tests")
    pub prompt: String,
}

/// Input of ExitPlanMode. Unknown keys pass through (Claude Code's passthrough object):
/// hooks inject `plan` and `planFilePath`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExitPlanModeInput {
    /// Prompt-based permissions needed to implement the plan (deprecated)
    #[serde(rename = "allowedPrompts")]
    pub allowed_prompts: Option<Vec<AllowedPrompt>>,
    /// Every other key, as given.
    #[serde(flatten)]
    #[schemars(skip)]
    pub extra: Map<String, Value>,
}

/// Output of ExitPlanMode (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitPlanModeOutput {
    /// The approved plan, when there is one.
    pub plan: Option<String>,
    /// Whether the call ran in a sub-agent.
    #[serde(rename = "isAgent")]
    pub is_agent: bool,
    /// Where the plan is saved.
    #[serde(rename = "filePath", skip_serializing_if = "Option::is_none")]
    pub file_path: Option<String>,
}

/// The ExitPlanMode tool. Requires the user's interaction.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExitPlanMode;

/// Largest plan file read.
pub const MAX_PLAN_BYTES: u64 = 1024 * 1024;

/// The plans directories, where a host saves plan files (`planFilePath`): Claude Code's
/// `~/.claude/plans`, and `$CLAUDE_CONFIG_DIR/plans` when that is set (the context's
/// [`config_dir`](ToolUseContext::config_dir)); each once (`CLAUDE_CONFIG_DIR` may be
/// `~/.claude` itself, by its path or through a link).
fn plans_dirs(ctx: &ToolUseContext) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut real: Vec<PathBuf> = Vec::new();
    for dir in ctx
        .config_dir()
        .map(Path::to_path_buf)
        .into_iter()
        .chain(ctx.home().map(|h| h.join(".claude")))
        .map(|d| d.join("plans"))
    {
        // Compared by components (a trailing `/` or a `.` makes no other directory) and,
        // where it exists, by where it really is.
        let canonical = std::fs::canonicalize(&dir).ok();
        if dirs.contains(&dir) || canonical.as_ref().is_some_and(|c| real.contains(c)) {
            continue;
        }
        real.extend(canonical);
        dirs.push(dir);
    }
    dirs
}

/// The refusal of `path` as a `planFilePath`, naming the plans directories `dirs`: "the
/// plans directory (X)" or "the plans directories (X or Y)".
fn not_a_plan_file(path: &Path, dirs: &[PathBuf]) -> String {
    let shown: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    let which = match shown.as_slice() {
        [] => {
            return format!(
                "planFilePath {} is not a plan file: there is no plans directory to read one from (neither a home directory nor CLAUDE_CONFIG_DIR is known)",
                path.display()
            );
        }
        [one] => format!("the plans directory ({one})"),
        many => format!("the plans directories ({})", many.join(" or ")),
    };
    format!(
        "planFilePath {} is not a plan file: only files in {which} are read",
        path.display()
    )
}

/// The plan a host saved at `path`: only a regular file of at most 1 MiB inside the plans
/// directory is read. `planFilePath` arrives in the tool's input, which the model writes: any
/// other path would let it read a file the user never agreed to show (the question only says
/// "Exit plan mode?"). A missing file is no plan.
async fn read_plan_file(path: &Path, ctx: &ToolUseContext) -> Result<Option<String>, String> {
    let dirs = plans_dirs(ctx);
    let refuse = || not_a_plan_file(path, &dirs);
    let dirs: Vec<PathBuf> = dirs
        .iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .collect();
    let real = match std::fs::canonicalize(path) {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let meta =
        std::fs::metadata(&real).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    if !dirs.iter().any(|d| real.starts_with(d)) || !meta.is_file() {
        return Err(refuse());
    }
    if meta.len() > MAX_PLAN_BYTES {
        return Err(format!(
            "the plan file {} is {} bytes; the limit is {MAX_PLAN_BYTES}",
            path.display(),
            meta.len()
        ));
    }
    tokio::fs::read_to_string(&real)
        .await
        .map(Some)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// The session's plan file ([`ToolUseContext::plan_file`]) and what it holds, as read now:
/// the file itself only (no link), of at most [`MAX_PLAN_BYTES`]. `None` when there is none
/// (no plan file known, or none written): no plan, not an error (the model named no file).
/// A plan file that is there but cannot be shown (too large, no regular file, not text) is
/// an error: the user would otherwise be asked a bare "Exit plan mode?" and approve a plan
/// they were never shown.
fn read_session_plan(ctx: &ToolUseContext) -> Result<Option<SessionPlan>, String> {
    let Some(path) = ctx.plan_file() else {
        return Ok(None);
    };
    let cannot_read =
        |e: std::io::Error| format!("cannot read the plan file {}: {e}", path.display());
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot_read(e)),
    };
    if !meta.file_type().is_file() {
        return Err(format!(
            "the plan file {} is not a regular file (a link, a directory or a device is not read as a plan); write the plan to that file itself and call ExitPlanMode again",
            path.display()
        ));
    }
    let too_large = |len: u64| {
        format!(
            "the plan file {} is {len} bytes; the limit is {MAX_PLAN_BYTES}: write a shorter plan there and call ExitPlanMode again",
            path.display()
        )
    };
    if meta.len() > MAX_PLAN_BYTES {
        return Err(too_large(meta.len()));
    }
    // Opened without waiting, its type checked on the opened file and the read capped: the
    // file may have been swapped or grown since it was measured.
    let plan = tool_core::read_regular_file(&path, Some(MAX_PLAN_BYTES)).map_err(|e| {
        if e.kind() == std::io::ErrorKind::InvalidData {
            format!(
                "the plan file {} is not UTF-8 text, so it cannot be shown to the user; write the plan there as text and call ExitPlanMode again",
                path.display()
            )
        } else {
            cannot_read(e)
        }
    })?;
    Ok(Some(SessionPlan {
        plan,
        file: Some(path),
    }))
}

/// The session's plan as one call read it.
#[derive(Debug, Clone)]
struct SessionPlan {
    /// What the plan file held.
    plan: String,
    /// The plan file, while it is known to hold `plan` (the call forgets it when the file
    /// was rewritten after the question).
    file: Option<PathBuf>,
}

/// How many calls' readings of the session's plan are kept.
const KEPT_READINGS: usize = 16;

/// The session's plan as each recent call read it (`Ok(None)`: there was none; an error: one
/// that cannot be shown), by the call's [`call_order`](ToolUseContext::call_order), which is
/// unique in the process. The pipeline shows hooks and the user the plan injected into the
/// observable input, and hands the call the model's own input (`{}`) when nobody changed
/// that: read again there, the plan file could hold another plan than the one approved
/// (another call may rewrite it while the user reads the question).
#[derive(Default)]
struct SessionPlanReadings(VecDeque<(u64, SessionPlanReading)>);

/// One call's reading of the session's plan (see [`read_session_plan`]).
type SessionPlanReading = Result<Option<SessionPlan>, String>;

/// The session's plan for the call `ctx` is in: read once, the first time the call looks
/// (its validation, before its PreToolUse hooks' input and its question show the plan),
/// then the same for its call, its result and its PostToolUse hooks. Outside a call (no
/// call order) it is read as it is now. Only the last [`KEPT_READINGS`] calls' readings are
/// kept (each at most [`MAX_PLAN_BYTES`]).
fn session_plan(ctx: &ToolUseContext) -> SessionPlanReading {
    let Some(call) = ctx.call_order() else {
        return read_session_plan(ctx);
    };
    let known = |readings: &SessionPlanReadings| {
        readings
            .0
            .iter()
            .find(|(c, _)| *c == call)
            .map(|(_, plan)| plan.clone())
    };
    if let Some(plan) = ctx
        .app_state()
        .update(|r: &mut SessionPlanReadings| known(r))
    {
        return plan;
    }
    // Read outside the app state's lock: a slow file system holds only this call.
    let read = read_session_plan(ctx);
    ctx.app_state().update(|r: &mut SessionPlanReadings| {
        // A reading that came first stays the call's one.
        if let Some(plan) = known(r) {
            return plan;
        }
        if r.0.len() >= KEPT_READINGS {
            r.0.pop_front();
        }
        r.0.push_back((call, read.clone()));
        read
    })
}

/// Forgets the plan file of the call `ctx` is in: it no longer holds the plan the call runs
/// with, so neither its result nor its PostToolUse hooks name it.
fn forget_session_plan_file(ctx: &ToolUseContext) {
    let Some(call) = ctx.call_order() else {
        return;
    };
    ctx.app_state().update(|r: &mut SessionPlanReadings| {
        if let Some((_, Ok(Some(plan)))) = r.0.iter_mut().find(|(c, _)| *c == call) {
            plan.file = None;
        }
    });
}

/// Whether the plan file `path` (as `planFilePath` names one, read as [`read_plan_file`]
/// reads it) holds exactly `plan`.
async fn file_holds(path: &str, plan: &str, ctx: &ToolUseContext) -> bool {
    read_plan_file(&ctx.resolve_path(path), ctx)
        .await
        .ok()
        .flatten()
        .is_some_and(|held| held == plan)
}

/// The plan `input` carries: its `plan` field (as hooks inject it), else the file
/// `planFilePath` names (see [`read_plan_file`]); with that path.
async fn plan_of(
    input: &ExitPlanModeInput,
    ctx: &ToolUseContext,
) -> Result<(Option<String>, Option<String>), String> {
    let file_path = input
        .extra
        .get("planFilePath")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let (plan, file_path) = match (input.extra.get("plan").and_then(Value::as_str), file_path) {
        (Some(plan), path) => (Some(plan.to_owned()), path),
        (None, Some(path)) => (
            read_plan_file(&ctx.resolve_path(&path), ctx).await?,
            Some(path),
        ),
        // The session's plan file, where plan mode let the model write its plan, as this
        // call read it.
        (None, None) => match session_plan(ctx)? {
            Some(read) => (
                Some(read.plan),
                read.file.map(|path| path.display().to_string()),
            ),
            None => (None, None),
        },
    };
    Ok((plan.filter(|p| !p.trim().is_empty()), file_path))
}

#[async_trait]
impl TypedTool for ExitPlanMode {
    type Input = ExitPlanModeInput;
    type Output = ExitPlanModeOutput;
    const NAME: &'static str = "ExitPlanMode";
    const DENY_UNKNOWN_FIELDS: bool = false;

    fn description(&self) -> Cow<'_, str> {
        "Prompts the user to exit plan mode and start coding".into()
    }

    fn prompt(&self) -> Cow<'_, str> {
        "Use this tool when you are in plan mode and have finished writing your plan and are ready for the user's approval. The user sees the plan and decides whether you may start implementing it. Only use it for tasks that require planning the implementation steps of a task that requires writing code.".into()
    }

    fn search_hint(&self) -> Option<&str> {
        Some("present the plan for approval and start coding")
    }

    fn should_defer(&self) -> bool {
        true
    }

    fn requires_user_interaction(&self) -> bool {
        true
    }

    /// Hooks see the plan the user is asked about, as in Claude Code (`plan` and
    /// `planFilePath` injected): the session's plan file, when the input names none, as the
    /// call read it (once: PostToolUse hooks see the plan the call ran with, and its file
    /// only while it still held that plan).
    fn observable_input(&self, input: &Value, ctx: &ToolUseContext) -> Option<Value> {
        if input.get("plan").is_some() || input.get("planFilePath").is_some() {
            return None;
        }
        let read = session_plan(ctx).ok().flatten()?;
        let mut seen = input.as_object()?.clone();
        seen.insert("plan".into(), read.plan.into());
        if let Some(path) = read.file {
            seen.insert("planFilePath".into(), path.display().to_string().into());
        }
        Some(Value::Object(seen))
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    /// Not concurrency-safe (Claude Code says it is): the mode switch is a context modifier,
    /// and the executor applies modifiers only from tools that run alone (design
    /// invariant 3), so that no call runs under a half-switched mode.
    fn is_concurrency_safe(&self, _input: &ExitPlanModeInput) -> bool {
        false
    }

    async fn validate_input(
        &self,
        input: &ExitPlanModeInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        if ctx.permission().mode != PermissionMode::Plan {
            return Err(ValidationError::new(
                "You are not in plan mode. This tool is only for exiting plan mode after writing a plan. If your plan was already approved, continue with implementation.",
            ));
        }
        if let Some(bad) = input
            .allowed_prompts
            .iter()
            .flatten()
            .find(|p| p.tool != "Bash")
        {
            return Err(ValidationError::new(format!(
                "allowedPrompts only supports the tool \"Bash\", not \"{}\"",
                bad.tool
            )));
        }
        // A `plan` is text: anything else (`null`, a number) would leave the question
        // without the plan the call then reads from elsewhere.
        if let Some(plan) = input.extra.get("plan")
            && !plan.is_string()
        {
            return Err(ValidationError::new(
                "plan must be a string (the plan the user is asked to approve)",
            ));
        }
        // A `planFilePath` that is no plan file is refused before anyone is asked.
        plan_of(input, ctx).await.map_err(ValidationError::new)?;
        Ok(())
    }

    /// Always asks; the question shows the plan the user approves, and carries it in the
    /// input the call runs with (`plan`, with the plan file it was read from): the result
    /// hands the model that text, not what the plan file holds by then (another call may
    /// have rewritten it while the user read).
    async fn check_permissions(
        &self,
        input: &ExitPlanModeInput,
        ctx: &ToolUseContext,
    ) -> PermissionResult {
        let Ok((Some(plan), file)) = plan_of(input, ctx).await else {
            return PermissionResult::ask("Exit plan mode?");
        };
        let mut run_with = input.extra.clone();
        if let Some(prompts) = &input.allowed_prompts {
            run_with.insert(
                "allowedPrompts".into(),
                serde_json::to_value(prompts).unwrap_or(Value::Null),
            );
        }
        run_with.insert("plan".into(), Value::String(plan.clone()));
        // The file is named only where it holds the plan shown (a plan file, read as
        // `read_plan_file` reads one): a path given beside another `plan` is a label the
        // user would be sent to in vain.
        let holds_it = match &file {
            Some(path) => file_holds(path, &plan, ctx).await,
            None => false,
        };
        match file.filter(|_| holds_it) {
            Some(file) => run_with.insert("planFilePath".into(), Value::String(file)),
            None => run_with.remove("planFilePath"),
        };
        PermissionResult::Ask {
            message: format!("Exit plan mode and start on this plan?\n\n{plan}"),
            updated_input: Some(Value::Object(run_with)),
            suggestions: Vec::new(),
            reason: None,
        }
    }

    async fn call(
        &self,
        input: ExitPlanModeInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<ExitPlanModeOutput>, ToolError> {
        let (plan, file_path) = plan_of(&input, &ctx).await.map_err(ToolError::msg)?;
        // The plan is the one the user was shown (the input's, or the session's plan file as
        // this call read it before the question); its file is named only while it still
        // holds it: the model is told it can refer back to that file.
        let file_path = match (&plan, file_path) {
            (Some(plan), Some(path)) if !file_holds(&path, plan, &ctx).await => {
                forget_session_plan_file(&ctx);
                None
            }
            (_, path) => path,
        };
        let permission = ctx.permission();
        let restore = permission
            .pre_plan_mode
            .filter(|m| *m != PermissionMode::Plan)
            // Never back to bypassing permissions where the session may not.
            .filter(|m| *m != PermissionMode::BypassPermissions || permission.bypass_available)
            .unwrap_or_default();
        Ok(ToolResult::new(ExitPlanModeOutput {
            plan,
            is_agent: ctx.agent().is_some(),
            file_path,
        })
        .with_context_modifier(move |ctx| with_mode(ctx, restore)))
    }

    fn to_content(&self, output: &ExitPlanModeOutput) -> ToolResultContent {
        let text = match (&output.plan, output.is_agent) {
            (_, true) => "User has approved the plan. There is nothing else needed from you now. Please respond with \"ok\"".to_owned(),
            (None, false) => "User has approved exiting plan mode. You can now proceed.".to_owned(),
            (Some(plan), false) => {
                let saved = output.file_path.as_ref().map_or_else(String::new, |p| {
                    format!("Your plan has been saved to: {p}\nYou can refer back to it if needed during implementation.\n\n")
                });
                format!(
                    "User has approved your plan. You can now start coding. Start with updating your todo list if applicable\n\n{saved}## Approved Plan:\n{plan}"
                )
            }
        };
        ToolResultContent::Text(text)
    }
}
