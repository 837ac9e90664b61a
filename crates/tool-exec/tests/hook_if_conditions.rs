//! Hooks' `if` conditions through tool-exec's [`PermissionRuleMatcher`], with real hook
//! scripts: a rule applies to calls of the tool it names (or of that tool's legacy name),
//! not to every tool the same rule would cover as a deny rule.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tool_core::{
    FileAccess, MaxResultSize, PermissionSubject, ProgressSender, RuleSource, Tool, ToolError,
    ToolResult, ToolUseContext, async_trait,
};
use tool_exec::PermissionRuleMatcher;
use tool_hooks::{HookRunner, HooksConfig, ToolCallInfo};

/// A tool named `name` whose calls are about `file_path` with `access`, or (no access) about
/// nothing in particular.
struct FileTool {
    name: &'static str,
    access: Option<FileAccess>,
}

#[async_trait]
impl Tool for FileTool {
    fn name(&self) -> &str {
        self.name
    }
    fn input_schema(&self) -> Value {
        json!({"type": "object"})
    }
    fn description(&self) -> Cow<'_, str> {
        "file tool".into()
    }
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(1000)
    }
    fn permission_subject(&self, input: &Value) -> Option<PermissionSubject> {
        let access = self.access?;
        let path = input["file_path"].as_str()?;
        Some(PermissionSubject::Path {
            path: PathBuf::from(path),
            access,
        })
    }
    async fn call(
        &self,
        _input: Value,
        _ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        Err(ToolError::msg("not called"))
    }
}

fn tools() -> Vec<Arc<dyn Tool>> {
    let tool = |name, access| Arc::new(FileTool { name, access }) as Arc<dyn Tool>;
    vec![
        tool("Read", Some(FileAccess::Read)),
        tool("Write", Some(FileAccess::Write)),
        tool("Edit", Some(FileAccess::Write)),
        tool("NotebookEdit", Some(FileAccess::Write)),
        tool("Agent", None),
        tool("TaskStop", None),
    ]
}

/// A runner whose one PreToolUse hook, for every tool, appends the tool's name to `log`
/// when `rule` matches the call.
fn runner(dir: &Path, rule: &str, log: &Path) -> HookRunner {
    let hooks = json!({"PreToolUse": [{"matcher": "*", "hooks": [{
        "type": "command",
        "if": rule,
        "command": format!(
            "grep -o '\"tool_name\":\"[^\"]*\"' | cut -d'\"' -f4 >> '{}'",
            log.display()
        ),
    }]}]});
    let (config, diags) = HooksConfig::from_hooks_value(&hooks, RuleSource::ProjectSettings);
    assert!(diags.is_empty(), "{diags:?}");
    HookRunner::new(config).with_rule_matcher(Arc::new(PermissionRuleMatcher::for_tools(
        tools(),
        dir.to_path_buf(),
    )))
}

fn ran(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// `if: "Read(**/.env)"` guards reads of `.env` files: it ran for Write and Edit of `.env`
/// too, since the condition was matched as a deny rule (where a Read rule also covers
/// writes). Claude Code's `if` needs the rule's tool to be the call's tool.
#[tokio::test]
async fn a_read_rule_in_if_runs_for_reads_only() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let log = cwd.join("ran.log");
    let r = runner(&cwd, "Read(**/.env)", &log);
    let ctx = ToolUseContext::new(&cwd);
    let env_file = cwd.join("sub").join(".env");
    for tool in ["Read", "Write", "Edit"] {
        let call = ToolCallInfo::new(
            tool,
            json!({"file_path": env_file, "content": "x", "old_string": "a", "new_string": "b"}),
            "toolu_1",
        );
        let out = r.run_pre_tool_use(&call, &ctx).await;
        assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    }
    // Another file: no tool.
    let other = ToolCallInfo::new(
        "Read",
        json!({"file_path": cwd.join("notes.txt")}),
        "toolu_2",
    );
    r.run_pre_tool_use(&other, &ctx).await;
    assert_eq!(ran(&log), ["Read"]);
}

/// An Edit rule in `if` is for Edit calls: not for Write (which the deny-rule reading
/// covers with Edit rules), nor for Read.
#[tokio::test]
async fn an_edit_rule_in_if_runs_for_edits_only() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let log = cwd.join("ran.log");
    let r = runner(&cwd, "Edit(*.ts)", &log);
    let ctx = ToolUseContext::new(&cwd);
    for tool in ["Read", "Write", "Edit"] {
        let call = ToolCallInfo::new(tool, json!({"file_path": cwd.join("a.ts")}), "toolu_1");
        r.run_pre_tool_use(&call, &ctx).await;
    }
    assert_eq!(ran(&log), ["Edit"]);
}

/// A path rule in a file tool's own name filters its calls by path (`Write(*.ts)` for
/// Writes of `.ts` files, `NotebookEdit(*.ipynb)`), as the Edit or Read rule would.
#[tokio::test]
async fn a_path_rule_in_the_calls_own_tool_name_filters_by_path() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let ctx = ToolUseContext::new(&cwd);
    for (rule, tool, file, expected) in [
        ("Write(*.ts)", "Write", "a.ts", true),
        ("Write(*.ts)", "Write", "a.rs", false),
        ("Write(*.ts)", "Edit", "a.ts", false),
        ("NotebookEdit(*.ipynb)", "NotebookEdit", "n.ipynb", true),
        ("NotebookEdit(*.ipynb)", "NotebookEdit", "n.txt", false),
        ("Read(*.ts)", "Read", "a.ts", true),
        ("Edit(src/**)", "Edit", "src/a.ts", true),
        ("Write(src/**)", "Write", "src/a.ts", true),
    ] {
        let name = format!("{rule}-{tool}-{file}.log").replace(['/', '*', '(', ')'], "_");
        let log = cwd.join(name);
        let r = runner(&cwd, rule, &log);
        let call = ToolCallInfo::new(tool, json!({"file_path": cwd.join(file)}), "toolu_1");
        r.run_pre_tool_use(&call, &ctx).await;
        assert_eq!(
            !ran(&log).is_empty(),
            expected,
            "if {rule:?} on {tool} of {file}"
        );
    }
}

/// Legacy names still name the tool: `Task` is Agent, `KillShell` is TaskStop, on either
/// side.
#[tokio::test]
async fn legacy_tool_names_in_if_still_match() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    let ctx = ToolUseContext::new(&cwd);
    for (rule, tool, expected) in [
        ("Task", "Agent", true),
        ("Agent", "Task", true),
        ("KillShell", "TaskStop", true),
        ("Task", "TaskStop", false),
        ("Read", "Agent", false),
    ] {
        let log = cwd.join(format!("{rule}-{tool}.log"));
        let r = runner(&cwd, rule, &log);
        r.run_pre_tool_use(&ToolCallInfo::new(tool, json!({}), "toolu_1"), &ctx)
            .await;
        assert_eq!(!ran(&log).is_empty(), expected, "if {rule:?} on {tool}");
    }
}

/// A malformed `if` rule matches nothing, also for a tool the matcher cannot see (where a
/// well-formed rule naming the call fails open, as Claude Code runs the hook): the load-time
/// diagnostic says the hook never runs, and it must not.
#[test]
fn a_malformed_if_rule_matches_no_call_even_of_an_unknown_tool() {
    use tool_hooks::RuleMatcher as _;
    let dir = tempfile::tempdir().unwrap();
    let matcher = PermissionRuleMatcher::for_tools(tools(), dir.path().to_path_buf());
    assert!(!matcher.matches("Foo()", "Foo", &json!({})));
    assert!(!matcher.matches("Foo(", "Foo", &json!({})));
    assert!(matcher.matches("Foo(x)", "Foo", &json!({})));
}

/// An MCP tool whose full name is too long for the API goes by a shortened one; a hook's
/// `if` that names it in full (`mcp__fake__xxx…`) matches its calls, as a permission rule
/// naming it so does. It matched only the shortened name: a guard keyed on the full name
/// never ran.
#[test]
fn an_if_rule_names_a_shortened_mcp_tool_by_its_full_name_too() {
    use tool_hooks::RuleMatcher as _;
    struct Long;
    #[async_trait]
    impl Tool for Long {
        fn name(&self) -> &str {
            "mcp__fake__xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx_706e1ae6"
        }
        fn mcp_info(&self) -> Option<tool_core::McpToolInfo> {
            Some(tool_core::McpToolInfo {
                server_name: "fake".into(),
                tool_name: "x".repeat(200),
                source: None,
            })
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn description(&self) -> Cow<'_, str> {
            "long".into()
        }
        fn max_result_size(&self) -> MaxResultSize {
            MaxResultSize::Chars(1000)
        }
        async fn call(
            &self,
            _input: Value,
            _ctx: ToolUseContext,
            _progress: ProgressSender,
        ) -> Result<ToolResult, ToolError> {
            Err(ToolError::msg("not called"))
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let matcher = PermissionRuleMatcher::for_tools(vec![Arc::new(Long)], dir.path().to_path_buf());
    let short = Long.name().to_owned();
    let full = format!("mcp__fake__{}", "x".repeat(200));
    assert!(matcher.matches(&full, &short, &json!({})));
    assert!(matcher.matches(&short, &short, &json!({})));
    assert!(!matcher.matches("mcp__fake__y", &short, &json!({})));
}
