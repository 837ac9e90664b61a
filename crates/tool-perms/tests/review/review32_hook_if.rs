//! A hook's `if` written in Claude Code's `Tool(param:value)` form, as the 32nd review
//! found it: `"if": "Bash(run_in_background:true)"`, `"if": "Agent(model:opus)"` and
//! `"if": "mcp__srv__tool(repo:secret-*)"` never matched, so the hook never ran. Claude Code
//! reads `if` as a permission rule, and a deny rule of that form matches a call whose
//! top-level input field has the value; the hooks' matcher (tool-exec's
//! `PermissionRuleMatcher`) asks [`tool_perms::matches_rule`], checked here, and
//! [`tool_perms::covers_as_allow_rule`] for whether an approver's allow counts.

use crate::common::{Fixture, probe};
use serde_json::{Value, json};
use tool_core::ToolUseContext;
use tool_perms::probe::ProbeTool;
use tool_perms::{covers_as_allow_rule, matches_rule};

fn ctx(fx: &Fixture) -> ToolUseContext {
    ToolUseContext::new(&fx.proj).with_home(Some(fx.home.clone()))
}

/// Asserts that `rule` matches (`expect`) each of `inputs` for `tool`.
fn check(rule: &str, tool: &ProbeTool, ctx: &ToolUseContext, cases: &[(Value, bool)]) {
    let mut wrong = Vec::new();
    for (input, expect) in cases {
        let got = matches_rule(rule, tool, input, ctx);
        if got != *expect {
            wrong.push(format!("{rule} on {input}: expected {expect}, got {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Found by review: `Bash(run_in_background:true)` was read only as the command
/// `run_in_background:true`, so no call matched. It now matches the calls whose
/// `run_in_background` is `true` (or the string `"true"`), whatever the command, and no other.
#[test]
fn a_field_if_on_bash_matches_the_calls_with_that_field() {
    let fx = Fixture::new();
    let ctx = ctx(&fx);
    let bash = probe(&fx, "Bash");
    check(
        "Bash(run_in_background:true)",
        &bash,
        &ctx,
        &[
            (json!({"command": "ls", "run_in_background": true}), true),
            (
                json!({"command": "npm run dev", "run_in_background": "true"}),
                true,
            ),
            (json!({"command": "ls"}), false),
            (json!({"command": "ls", "run_in_background": false}), false),
            (json!({"command": "ls", "run_in_background": null}), false),
        ],
    );
    // A wildcard value, and a number compared as its text.
    check(
        "Bash(timeout:6*)",
        &bash,
        &ctx,
        &[
            (json!({"command": "ls", "timeout": 60000}), true),
            (json!({"command": "ls", "timeout": 5000}), false),
            (json!({"command": "ls"}), false),
        ],
    );
    // The command reading is unchanged.
    check(
        "Bash(git *)",
        &bash,
        &ctx,
        &[
            (
                json!({"command": "git push", "run_in_background": true}),
                true,
            ),
            (json!({"command": "ls", "run_in_background": true}), false),
        ],
    );
}

/// Found by review: `Agent(model:opus)` matched no call (it was read only as an agent type
/// named `model:opus`). It now matches the Agent calls whose `model` is `opus`.
#[test]
fn a_field_if_on_agent_matches_the_calls_with_that_field() {
    let fx = Fixture::new();
    let ctx = ctx(&fx);
    let agent = probe(&fx, "Agent");
    check(
        "Agent(model:opus)",
        &agent,
        &ctx,
        &[
            (
                json!({"subagent_type": "Explore", "prompt": "p", "description": "d", "model": "opus"}),
                true,
            ),
            (
                json!({"subagent_type": "Explore", "prompt": "p", "description": "d", "model": "sonnet"}),
                false,
            ),
            (
                json!({"subagent_type": "Explore", "prompt": "p", "description": "d"}),
                false,
            ),
        ],
    );
    // The legacy name of the rule's tool, as in permission rules.
    check(
        "Task(model:opus)",
        &agent,
        &ctx,
        &[(
            json!({"subagent_type": "x", "prompt": "p", "model": "opus"}),
            true,
        )],
    );
}

/// Found by review: `mcp__srv__tool(repo:secret-*)` matched no call of that MCP tool. It now
/// matches the calls whose top-level `repo` matches the pattern, and no call of another tool.
#[test]
fn a_field_if_on_an_mcp_tool_matches_the_calls_with_that_field() {
    let fx = Fixture::new();
    let ctx = ctx(&fx);
    let tool = probe(&fx, "mcp__srv__tool");
    check(
        "mcp__srv__tool(repo:secret-*)",
        &tool,
        &ctx,
        &[
            (json!({"repo": "secret-x", "title": "t"}), true),
            (json!({"repo": "secret-"}), true),
            (json!({"repo": "public"}), false),
            (json!({"repo": "x-secret-y"}), false),
            (json!({"title": "secret-x"}), false),
            (json!({}), false),
            (json!({"repo": ["secret-x"]}), false),
        ],
    );
    let other = probe(&fx, "mcp__srv__other");
    check(
        "mcp__srv__tool(repo:secret-*)",
        &other,
        &ctx,
        &[(json!({"repo": "secret-x"}), false)],
    );
}

/// Found while fixing: on a file tool other than Read and Edit (`Write(content:*TODO*)`,
/// `Grep(pattern:TODO)`) the `if` was turned into the Read or Edit rule for a path named
/// `content:*TODO*`, so a field condition on such a tool never matched either. A path rule
/// written in the tool's own name keeps working.
#[test]
fn a_field_if_on_a_file_tool_matches_the_field_not_a_path() {
    let fx = Fixture::new();
    let ctx = ctx(&fx);
    let write = probe(&fx, "Write");
    check(
        "Write(content:*TODO*)",
        &write,
        &ctx,
        &[
            (json!({"file_path": "a.md", "content": "x TODO y"}), true),
            (json!({"file_path": "a.md", "content": "done"}), false),
        ],
    );
    check(
        "Write(*.md)",
        &write,
        &ctx,
        &[
            (json!({"file_path": "a.md", "content": "x"}), true),
            (json!({"file_path": "a.rs", "content": "x"}), false),
        ],
    );
    let grep = probe(&fx, "Grep");
    check(
        "Grep(pattern:TODO)",
        &grep,
        &ctx,
        &[
            (json!({"pattern": "TODO"}), true),
            (json!({"pattern": "FIXME"}), false),
        ],
    );
}

/// Decision kept: a field condition says nothing about the rest of the call (the command,
/// the other fields), and Claude Code's `Tool(param:value)` rules are deny and ask rules
/// only, so such an `if` never covers a call as an allow rule: a hook it chooses runs (and
/// its deny or ask holds) but its allow is not honoured.
#[test]
fn a_field_if_never_covers_a_call_for_an_approver() {
    let fx = Fixture::new();
    let ctx = ctx(&fx);
    let cases = [
        (
            "Bash(run_in_background:true)",
            probe(&fx, "Bash"),
            json!({"command": "rm -rf x", "run_in_background": true}),
        ),
        (
            "mcp__srv__tool(repo:secret-*)",
            probe(&fx, "mcp__srv__tool"),
            json!({"repo": "secret-x"}),
        ),
        (
            "Write(content:*TODO*)",
            probe(&fx, "Write"),
            json!({"file_path": "content:x TODO", "content": "TODO"}),
        ),
    ];
    for (rule, tool, input) in &cases {
        assert!(matches_rule(rule, tool, input, &ctx), "{rule} should match");
        assert!(
            !covers_as_allow_rule(rule, tool, input, &ctx),
            "{rule} should not cover {input}"
        );
    }
}
