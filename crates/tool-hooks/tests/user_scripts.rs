//! Hook scripts written the way Claude Code users write them, configured in a real
//! `.claude/settings.json`, loaded with `load_hooks` and run unchanged.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Env;
use serde_json::{Value, json};
use tool_core::{PermissionUpdate, RuleBehavior, RuleValue, UpdateDestination};
use tool_hooks::{
    HookRunner, PermissionDecision, PermissionRequestVerdict, SettingsPaths, ToolCallInfo,
    load_hooks,
};

/// Hook 1: A Bash command validator (python3) that exits 2 with reasons on stderr.
const VALIDATOR: &str = r#"#!/usr/bin/env python3
import json
import re
import sys

# (regex, message) pairs
VALIDATION_RULES = [
    (r"\bgrep\b(?!.*\|)", "Use 'rg' (ripgrep) instead of 'grep' for better performance and features"),
    (r"\bfind\s+\S+\s+-name\b", "Use 'rg --files -g pattern' instead of 'find -name'"),
]

def validate_command(command):
    issues = []
    for pattern, message in VALIDATION_RULES:
        if re.search(pattern, command):
            issues.append(message)
    return issues

try:
    input_data = json.load(sys.stdin)
except json.JSONDecodeError as e:
    print(f"Error: Invalid JSON input: {e}", file=sys.stderr)
    sys.exit(1)

tool_name = input_data.get("tool_name", "")
tool_input = input_data.get("tool_input", {})
command = tool_input.get("command", "")

if tool_name != "Bash" or not command:
    sys.exit(1)

issues = validate_command(command)
if issues:
    for message in issues:
        print(f"• {message}", file=sys.stderr)
    # Exit code 2 blocks the tool call and shows stderr to Claude
    sys.exit(2)
"#;

/// Hook 2: A formatter for PostToolUse on Edit|Write (bash + jq): strips trailing whitespace
/// from Python files, the way people call black/prettier.
const FORMATTER: &str = r#"#!/bin/bash
file_path=$(jq -r '.tool_input.file_path // empty')
if [[ -z "$file_path" ]]; then
  exit 0
fi
if [[ "$file_path" == *.py ]]; then
  sed -i 's/[[:space:]]*$//' "$file_path"
  echo "Formatted $file_path"
fi
exit 0
"#;

/// Hook 3: A logger appending one JSON line per call (jq), as in the docs' command logger.
const LOGGER_COMMAND: &str = r#"jq -c '{tool: .tool_name, command: (.tool_input.command // null), description: (.tool_input.description // "No description"), session: .session_id}' >> "$CLAUDE_PROJECT_DIR"/.claude/bash-command-log.jsonl"#;

/// Hook 4: A PreToolUse hook that rewrites input with updatedInput (python3): npm -> pnpm.
const REWRITER: &str = r#"#!/usr/bin/env python3
import json
import sys

data = json.load(sys.stdin)
tool_input = data.get("tool_input", {})
command = tool_input.get("command", "")

if command.startswith("npm "):
    new_input = dict(tool_input)
    new_input["command"] = "pnpm " + command[len("npm "):]
    print(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "This project uses pnpm",
            "updatedInput": new_input,
        }
    }))
sys.exit(0)
"#;

/// Hook 5: A PermissionRequest hook that approves test runs and saves the suggested rule.
const APPROVER: &str = r#"#!/usr/bin/env python3
import json
import sys

data = json.load(sys.stdin)
if data.get("tool_name") == "Bash" and data["tool_input"].get("command", "").startswith("pnpm test"):
    output = {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {
                "behavior": "allow",
                "updatedPermissions": data.get("permission_suggestions", []),
            },
        }
    }
    print(json.dumps(output))
sys.exit(0)
"#;

/// Hook 6: A file protector (sh + python one-liner): blocks edits to .env and .git/.
const PROTECTOR: &str = r#"#!/bin/sh
path=$(python3 -c 'import json,sys; print(json.load(sys.stdin).get("tool_input", {}).get("file_path", ""))')
case "$path" in
  *.env|*/.git/*)
    echo "Blocked: $path is protected" >&2
    exit 2
    ;;
esac
exit 0
"#;

fn setup() -> (Env, HookRunner) {
    let env = Env::new();
    env.script(".claude/hooks/validate_bash.py", VALIDATOR);
    env.script(".claude/hooks/format.sh", FORMATTER);
    env.script(".claude/hooks/rewrite_npm.py", REWRITER);
    env.script(".claude/hooks/approve_tests.py", APPROVER);
    env.script(".claude/hooks/protect.sh", PROTECTOR);
    let settings = json!({
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/validate_bash.py"},
                    {"type": "command", "command": LOGGER_COMMAND},
                    {"type": "command", "command": "python3 \"$CLAUDE_PROJECT_DIR/.claude/hooks/rewrite_npm.py\""}
                ]},
                {"matcher": "Edit|Write", "hooks": [
                    {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/protect.sh"}
                ]}
            ],
            "PostToolUse": [
                {"matcher": "Edit|Write", "hooks": [
                    {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/format.sh", "timeout": 30}
                ]}
            ],
            "PermissionRequest": [
                {"matcher": "Bash", "hooks": [
                    {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/approve_tests.py"}
                ]}
            ]
        }
    });
    std::fs::write(
        env.path(".claude/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    let paths = SettingsPaths {
        project_dir: Some(env.root().to_path_buf()),
        project_trusted: true,
        ..SettingsPaths::default()
    };
    let loaded = load_hooks(&paths);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let runner = HookRunner::new(loaded.config).with_project_dir(env.root());
    (env, runner)
}

fn bash(command: &str) -> ToolCallInfo {
    ToolCallInfo::new(
        "Bash",
        json!({"command": command, "description": "run it"}),
        "toolu_01",
    )
}

#[tokio::test]
async fn validator_blocks_grep_and_logger_logs() {
    let (env, r) = setup();
    let out = r
        .run_pre_tool_use(&bash("grep -r TODO src"), &env.ctx())
        .await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    let d = out.decision.unwrap();
    assert_eq!(d.behavior, PermissionDecision::Deny);
    assert_eq!(
        d.message,
        "PreToolUse:Bash hook error: [\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/validate_bash.py]: \
         • Use 'rg' (ripgrep) instead of 'grep' for better performance and features"
    );
    // An allowed command passes the validator; the logger appended both calls.
    let out = r.run_pre_tool_use(&bash("ls -la"), &env.ctx()).await;
    assert!(
        out.decision.is_none() && out.common.errors.is_empty(),
        "{out:?}"
    );
    let log = env.read(".claude/bash-command-log.jsonl");
    let lines: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        lines[1],
        json!({"tool": "Bash", "command": "ls -la", "description": "run it", "session": "sess-123"})
    );
}

#[tokio::test]
async fn rewriter_updates_input() {
    let (env, r) = setup();
    let out = r
        .run_pre_tool_use(&bash("npm install left-pad"), &env.ctx())
        .await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    let d = out.decision.unwrap();
    assert_eq!(d.behavior, PermissionDecision::Allow);
    assert_eq!(d.reason.as_deref(), Some("This project uses pnpm"));
    assert_eq!(
        d.updated_input,
        Some(json!({"command": "pnpm install left-pad", "description": "run it"}))
    );
}

#[tokio::test]
async fn protector_and_formatter() {
    let (env, r) = setup();
    let edit = |p: &str| {
        ToolCallInfo::new(
            "Edit",
            json!({"file_path": p, "old_string": "a", "new_string": "b"}),
            "t",
        )
    };
    let d = r
        .run_pre_tool_use(&edit("/repo/.env"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(d.behavior, PermissionDecision::Deny);
    assert!(
        d.message.ends_with("Blocked: /repo/.env is protected"),
        "{}",
        d.message
    );
    let file = env.path("app.py");
    std::fs::write(&file, "x = 1   \ny = 2\t\n").unwrap();
    let call = ToolCallInfo::new(
        "Write",
        json!({"file_path": file, "content": "x = 1   \ny = 2\t\n"}),
        "t",
    );
    let out = r
        .run_post_tool_use(
            &call,
            &json!({"type": "create", "filePath": file}),
            &env.ctx(),
        )
        .await;
    assert!(
        out.common.errors.is_empty() && out.common.blocking_errors.is_empty(),
        "{out:?}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x = 1\ny = 2\n");
}

#[tokio::test]
async fn approver_allows_with_permissions() {
    let (env, r) = setup();
    let suggestion = PermissionUpdate::AddRules {
        rules: vec![RuleValue {
            tool_name: "Bash".into(),
            rule_content: Some("pnpm test:*".into()),
        }],
        behavior: RuleBehavior::Allow,
        destination: UpdateDestination::LocalSettings,
    };
    let out = r
        .run_permission_request(
            &bash("pnpm test --watch=false"),
            std::slice::from_ref(&suggestion),
            &env.ctx(),
        )
        .await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    match out.verdict {
        Some(PermissionRequestVerdict::Allow {
            updated_input: None,
            updated_permissions,
            ..
        }) => {
            assert_eq!(updated_permissions, vec![suggestion]);
        }
        other => panic!("{other:?}"),
    }
    // Anything else: no verdict, the prompt is shown.
    assert!(
        r.run_permission_request(&bash("rm -rf build"), &[], &env.ctx())
            .await
            .verdict
            .is_none()
    );
}

/// Hook 7: a bash guard that reads its input with `read -r` under `set -e`. It works only
/// when the JSON ends with a line break, as Claude Code writes it; without one `read`
/// fails, the script exits 1 (a non-blocking error) and the command runs.
const READ_LINE_GUARD: &str = r#"#!/bin/bash
set -e
read -r INPUT
if echo "$INPUT" | grep -q 'rm -rf'; then
  echo "no rm -rf here" >&2
  exit 2
fi
exit 0
"#;

#[tokio::test]
async fn a_read_line_guard_sees_its_input() {
    let env = Env::new();
    env.script(".claude/hooks/guard.sh", READ_LINE_GUARD);
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh"}
    ]}]}});
    std::fs::write(env.path(".claude/settings.json"), settings.to_string()).unwrap();
    let paths = SettingsPaths {
        project_dir: Some(env.root().to_path_buf()),
        project_trusted: true,
        ..SettingsPaths::default()
    };
    let runner = HookRunner::new(load_hooks(&paths).config).with_project_dir(env.root());
    let out = runner
        .run_pre_tool_use(&bash("rm -rf build"), &env.ctx())
        .await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    let d = out.decision.expect("the guard blocks");
    assert_eq!(d.behavior, PermissionDecision::Deny);
    assert!(d.message.ends_with("no rm -rf here"), "{}", d.message);
    let out = runner.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(
        out.decision.is_none() && out.common.errors.is_empty(),
        "{out:?}"
    );
}
