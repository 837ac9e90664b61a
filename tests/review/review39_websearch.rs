//! WebSearch, review 39: the tool was in no build. `toolwright tools` lists it; `run`, which
//! has no model to search with, says so; and `toolwright agent` searches through the
//! Messages API's `web_search` server tool (the local stand-in, `support/model_api.rs`), as
//! Claude Code does, and hands the main model Claude Code's result text.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use crate::binary;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The binary in `cwd` with `args`, no user settings (`CLAUDE_CONFIG_DIR` an empty place).
fn toolwright(args: &[&str], cwd: &Path, stdin: Option<&str>) -> Output {
    let mut cmd = binary::toolwright_command(args, cwd);
    cmd.env("CLAUDE_CONFIG_DIR", cwd.join(".no-user-config"))
        .env_remove("CLAUDE_CODE_SIMPLE")
        .env_remove("CLAUDE_CODE_MAX_WEB_SEARCHES_PER_SESSION");
    binary::output_with_stdin(cmd, stdin)
}

/// Every WebSearch call allowed.
fn allow_web_search() -> String {
    json!({"permissions": {"allow": ["WebSearch"]}}).to_string()
}

/// Found by review: no build had WebSearch (`tools` did not list it, and a recorded call
/// got "No such tool available"). It is listed, deferred, with Claude Code's input fields.
#[test]
fn tools_lists_web_search() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolwright(&["tools", "--json", "--schemas"], dir.path(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools = listed
        .as_array()
        .or_else(|| listed["tools"].as_array())
        .unwrap_or_else(|| panic!("{listed}"));
    let tool = tools
        .iter()
        .find(|t| t["name"] == "WebSearch")
        .unwrap_or_else(|| {
            let names: Vec<&Value> = tools.iter().map(|t| &t["name"]).collect();
            panic!("WebSearch is not listed: {names:?}")
        });
    let schema = tool
        .get("input_schema")
        .or_else(|| tool.get("inputSchema"))
        .unwrap_or_else(|| panic!("{tool}"));
    assert_eq!(schema["required"], json!(["query"]), "{schema}");
    assert_eq!(schema["properties"]["query"]["minLength"], 2, "{schema}");
    assert_eq!(schema["additionalProperties"], false, "{schema}");
}

/// `run` replays a recorded WebSearch call; it has no model to search with, and the call's
/// result says so (and how a host gives one) instead of "No such tool available". Without
/// an allow rule the call asks, and nobody can answer in `run`.
#[test]
fn run_says_it_has_no_model_to_search_with() {
    let dir = tempfile::tempdir().unwrap();
    let call = json!({"type": "tool_use", "id": "toolu_1", "name": "WebSearch",
        "input": {"query": "rust release", "allowed_domains": ["rust-lang.org"]}});
    let input = format!("{call}\n");
    let allow = allow_web_search();
    let out = toolwright(
        &["run", "--json", "--settings", &allow, "-"],
        dir.path(),
        Some(&input),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let result = &message["content"][0];
    assert_eq!(result["tool_use_id"], "toolu_1", "{message}");
    assert_eq!(result["is_error"], true, "{message}");
    let said = result["content"].as_str().unwrap_or_default().to_owned();
    assert!(
        said.contains("WebSearch needs a model to search the web with, and this session has none")
            && said.contains("WebSearchBackendHook"),
        "{said}"
    );
    // Without the rule it asks, and `run` cannot ask.
    let out = toolwright(&["run", "--json", "-"], dir.path(), Some(&input));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let said = message["content"][0]["content"].to_string();
    assert!(
        !said.contains("needs a model") && !said.contains("No such tool"),
        "{said}"
    );
    // Both domain lists: Claude Code's refusal, before anything else.
    let both = json!({"type": "tool_use", "id": "toolu_2", "name": "WebSearch",
        "input": {"query": "rust", "allowed_domains": ["a.com"], "blocked_domains": ["b.com"]}});
    let out = toolwright(
        &["run", "--json", "--settings", &allow, "-"],
        dir.path(),
        Some(&format!("{both}\n")),
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        message["content"][0]["content"],
        "<tool_use_error>Error: Cannot specify both allowed_domains and blocked_domains in the \
         same request</tool_use_error>",
        "{message}"
    );
}
