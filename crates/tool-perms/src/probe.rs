//! [`ProbeTool`]: a stand-in that describes a Claude Code tool by its name, for explaining
//! decisions (`toolwright permissions check`) and for tests. It never runs anything.
//!
//! It derives the [`PermissionSubject`] from Claude Code's input field names (Bash `command`,
//! Read `file_path`, Glob/Grep `path`, WebFetch `url`, Skill `skill`, Agent `subagent_type`),
//! so the engine sees what it would see from the real tool. The engine itself never depends
//! on it.

use std::borrow::Cow;
use std::path::PathBuf;

use serde_json::Value;
use tool_core::{
    FileAccess, MaxResultSize, McpToolInfo, PermissionResult, PermissionSubject, ProgressSender,
    Tool, ToolError, ToolResult, ToolUseContext, expand_path,
};

/// A tool known only by its name (see the [module docs](self)).
#[derive(Debug, Clone)]
pub struct ProbeTool {
    name: String,
    cwd: PathBuf,
    home: Option<PathBuf>,
    own_check: Option<PermissionResult>,
    read_only_tools: bool,
    mcp_server: Option<String>,
}

impl ProbeTool {
    /// A probe for the tool called `name` (a legacy name, `Task` or `KillShell`, stands for
    /// the tool's current one, as in a session), resolving relative paths against `cwd` and
    /// `~` against `home`.
    pub fn new(name: impl Into<String>, cwd: impl Into<PathBuf>, home: Option<PathBuf>) -> Self {
        let name = name.into();
        Self {
            name: tool_core::normalize_tool_name(&name).to_owned(),
            cwd: cwd.into(),
            home,
            own_check: None,
            read_only_tools: true,
            mcp_server: None,
        }
    }

    /// The MCP server the probed tool comes from, as configured (default: the part of an
    /// `mcp__…` name before its second `__`, which is ambiguous for a server whose name
    /// holds `__`). The probe's name must start with `mcp__<normalised server>__`.
    pub fn with_mcp_server(mut self, server: impl Into<String>) -> Self {
        self.mcp_server = Some(server.into());
        self
    }

    /// Makes the probe's own `check_permissions` return `result` (default: passthrough,
    /// except for the read-only tools without a subject, see
    /// [`with_read_only_allow`](Self::with_read_only_allow)).
    pub fn with_own_check(mut self, result: PermissionResult) -> Self {
        self.own_check = Some(result);
        self
    }

    /// Whether subject-less read-only tools (TodoWrite, TaskList, ToolSearch, ...) allow
    /// themselves, as Claude Code's do (default `true`).
    pub fn with_read_only_allow(mut self, on: bool) -> Self {
        self.read_only_tools = on;
        self
    }

    fn path(&self, raw: &str) -> PathBuf {
        expand_path(raw, &self.cwd, self.home.as_deref())
    }
}

fn str_field<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input.get(key).and_then(Value::as_str)
}

const SELF_ALLOWING: &[&str] = &[
    "TodoWrite",
    "TaskCreate",
    "TaskGet",
    "TaskUpdate",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "ToolSearch",
    "EnterPlanMode",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "Agent",
];

#[async_trait::async_trait]
impl Tool for ProbeTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn aliases(&self) -> &[&str] {
        match self.name.as_str() {
            "Agent" => &["Task"],
            "TaskStop" => &["KillShell"],
            _ => &[],
        }
    }

    fn mcp_info(&self) -> Option<McpToolInfo> {
        let rest = self.name.strip_prefix("mcp__")?;
        let (server, tool) = match &self.mcp_server {
            // The name holds the server's normalised form; the info keeps it as configured.
            Some(server) => (
                server.as_str(),
                rest.strip_prefix(tool_core::normalize_mcp_name(server).as_str())?
                    .strip_prefix("__")?,
            ),
            None => rest.split_once("__")?,
        };
        Some(McpToolInfo {
            server_name: server.to_owned(),
            tool_name: tool.to_owned(),
            source: None,
        })
    }

    fn input_schema(&self) -> Value {
        serde_json::json!({"type": "object"})
    }

    fn description(&self) -> Cow<'_, str> {
        "A stand-in for explaining permission decisions".into()
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(1)
    }

    fn requires_user_interaction(&self) -> bool {
        matches!(self.name.as_str(), "AskUserQuestion" | "ExitPlanMode")
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        matches!(
            self.name.as_str(),
            "Read" | "Glob" | "Grep" | "WebFetch" | "WebSearch" | "LS"
        )
    }

    fn permission_subject(&self, input: &Value) -> Option<PermissionSubject> {
        let path = |key: &str, access| {
            let raw = str_field(input, key).unwrap_or(".");
            Some(PermissionSubject::Path {
                path: self.path(raw),
                access,
            })
        };
        match self.name.as_str() {
            "Bash" | "Monitor" | "PowerShell" => {
                str_field(input, "command").map(|c| PermissionSubject::Command(c.into()))
            }
            "Read" => path("file_path", FileAccess::Read),
            "Glob" | "Grep" | "LS" => path("path", FileAccess::Read),
            "Edit" | "Write" | "MultiEdit" => path("file_path", FileAccess::Write),
            "NotebookEdit" => path("notebook_path", FileAccess::Write),
            "WebFetch" => str_field(input, "url").map(|u| PermissionSubject::Url(u.into())),
            "Skill" => str_field(input, "skill").map(|s| PermissionSubject::Name(s.into())),
            // As the Agent tool reads it: trimmed, `general-purpose` when absent or blank.
            "Agent" | "Task" => str_field(input, "subagent_type")
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .or(Some("general-purpose"))
                .map(|s| PermissionSubject::Name(s.into())),
            _ => None,
        }
    }

    async fn check_permissions(&self, _input: &Value, _ctx: &ToolUseContext) -> PermissionResult {
        if let Some(r) = &self.own_check {
            return r.clone();
        }
        if self.read_only_tools && SELF_ALLOWING.contains(&self.name.as_str()) {
            return PermissionResult::allow();
        }
        PermissionResult::passthrough()
    }

    async fn call(
        &self,
        _input: Value,
        _ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        Err(ToolError::Message(
            "a probe tool only explains permission decisions; it does not run".into(),
        ))
    }
}
