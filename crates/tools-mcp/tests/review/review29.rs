//! Client bugs from the 29th review, each against a real server (a small Python stdio or
//! Streamable HTTP server written to a temporary directory) or real configuration files:
//! the ping silence limit kept as documented, `${VAR}` warnings only for entries that are
//! used, a refused connection said to have sent nothing, control characters in server and
//! tool names escaped in diagnostics, collision warnings naming the tools left out, and an
//! HTTP connection that closed mid-call said in words.

use crate::common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{ChildGuard, call, python_server, tool};
use serde_json::json;
use tools_mcp::{
    ConfigLoader, Diagnostic, EnvLookup, McpManager, McpOptions, McpPolicy, ServerConfig, Severity,
};

fn opts() -> McpOptions {
    let mut o = McpOptions::new(std::env::temp_dir());
    o.startup_timeout = Duration::from_secs(20);
    // Far longer than any answer here may take: a call that waits for it is the bug.
    o.tool_idle_timeout = Some(Duration::from_secs(120));
    o
}

/// The rest of a Streamable HTTP server in Python ([`common::python_http_server`], which
/// answers `initialize`, `tools/list` (one tool, `t`) and notifications): pings and
/// `tools/call` as its `mode` says: `ok` answers them, `silent` never answers either (each
/// waits for an hour), `die` ends the whole process on `tools/call` without answering it.
const HTTP_METHODS: &str = r#"        if meth in ("ping", "tools/call") and mode == "silent":
            time.sleep(3600)
        if meth == "tools/call" and mode == "die":
            os._exit(1)
        if meth == "ping":
            return self.reply({"jsonrpc": "2.0", "id": mid, "result": {}})
        if meth == "tools/call":
            return self.reply({"jsonrpc": "2.0", "id": mid,
                               "result": {"content": [{"type": "text", "text": "ok"}]}})
"#;

/// Starts the server of [`HTTP_METHODS`] in `mode` from `dir`. Returns the guard and its
/// endpoint.
fn start_http(dir: &std::path::Path, mode: &str) -> (ChildGuard, String) {
    common::start_python_http(dir, &common::python_http_server(HTTP_METHODS), mode)
}

/// A loop body listing the tools named `tools` and failing every call with a JSON-RPC
/// error.
fn listing(tools: &[&str]) -> String {
    let tools: Vec<_> = tools
        .iter()
        .map(|t| json!({"name": t, "inputSchema": {"type": "object"}}))
        .collect();
    format!(
        r#"if m == "initialize":
    answer(i, init(msg, {{"tools": {{}}}}))
elif m == "tools/list":
    answer(i, json.loads({tools:?}))
elif m == "tools/call":
    out({{"jsonrpc": "2.0", "id": i, "error": {{"code": -32000, "message": "refused"}}}})
elif i is not None:
    out({{"jsonrpc": "2.0", "id": i, "error": {{"code": -32601, "message": "Method not found"}}}})"#,
        tools = json!({ "tools": tools }).to_string()
    )
}

fn env(pairs: &[(&str, &str)]) -> EnvLookup {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    Arc::new(move |k| map.get(k).cloned())
}

fn shown(diags: &[Diagnostic]) -> String {
    diags
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// An HTTP server that leaves the pings sent during a call unanswered fails the call when
/// they have gone unanswered for the silence limit, and the message says how long that was.
/// With a limit longer than one ping's own wait (10 s), the old loop waited out a whole
/// further ping before looking (the limit of 11 s ended after 22 s, said as "22 s"; the
/// documented 60 s after 70 s).
#[tokio::test]
async fn pings_left_unanswered_fail_the_call_at_the_silence_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = start_http(dir.path(), "silent");
    let mut o = opts();
    o.http_silence_limit = Duration::from_secs(11);
    let (manager, diags) = McpManager::connect(vec![ServerConfig::http("h", url)], o).await;
    assert!(diags.is_empty(), "{diags:?}");
    let started = Instant::now();
    // (The guard turns a regression into a failure instead of a hung test.)
    let err = tokio::time::timeout(
        Duration::from_secs(90),
        call(&tool(&manager, "mcp__h__t"), json!({})),
    )
    .await
    .expect("the heartbeat never gave up")
    .unwrap_err()
    .to_string();
    let elapsed = started.elapsed();
    assert!(
        err.contains("MCP server \"h\" stopped answering during tools/call \"t\"")
            && err.contains("(no answer to any ping for 11 s)"),
        "after {elapsed:?}: {err}"
    );
    manager.shutdown().await;
}

/// A `${VAR}` that is not set is warned about only for entries that will be used: not for
/// a project server left out by `disabledMcpjsonServers`, blocked by `deniedMcpServers`, or
/// overridden by a server of the same name in a higher scope (`--mcp-config`). A server that
/// is used still gets its warning.
#[test]
fn unset_variables_are_warned_about_only_for_servers_that_are_used() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(
        project.path().join(".mcp.json"),
        json!({"mcpServers": {
            "proj": {"command": "p", "env": {"B": "${UNSET_OVERRIDDEN}"}},
            "off": {"command": "o", "env": {"B": "${UNSET_DISABLED}"}},
            "blocked": {"command": "b", "env": {"B": "${UNSET_DENIED}"}},
            "used": {"command": "u", "env": {"B": "${UNSET_USED}"}}
        }})
        .to_string(),
    )
    .unwrap();
    let settings = json!({
        "disabledMcpjsonServers": ["off"],
        "deniedMcpServers": [{"serverName": "blocked"}]
    });
    let (policy, problems) = McpPolicy::from_settings([(false, None, &settings)]);
    assert!(problems.is_empty(), "{problems:?}");
    let mut loader = ConfigLoader::new(project.path())
        .with_env(env(&[("HOME", home.path().to_str().unwrap())]))
        .with_mcp_config([r#"{"mcpServers": {"proj": {"command": "from-flag"}}}"#])
        .with_policy(policy);
    loader.managed_dir = None;
    let (servers, diags) = loader.load();
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["proj", "used"], "{}", shown(&diags));
    let text = shown(&diags);
    assert!(
        text.contains("MCP server \"used\"") && text.contains("UNSET_USED is not set"),
        "{text}"
    );
    for unused in ["UNSET_OVERRIDDEN", "UNSET_DISABLED", "UNSET_DENIED"] {
        assert!(!text.contains(unused), "{unused} warned about: {text}");
    }
    // The deny is still reported.
    assert!(text.contains("MCP server \"blocked\""), "{text}");
}

/// A call to an HTTP server that is gone (the connection refused) never sent the request:
/// the error says so, instead of "it may or may not have taken effect".
#[tokio::test]
async fn a_refused_connection_at_call_time_says_the_request_was_not_sent() {
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = start_http(dir.path(), "ok");
    let port = common::port_of(&url);
    let (manager, diags) = McpManager::connect(vec![ServerConfig::http("ev", url)], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let echo = tool(&manager, "mcp__ev__t");
    call(&echo, json!({})).await.unwrap();
    drop(server);
    // Gone for certain: its port refuses connections.
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
        assert!(Instant::now() < deadline, "the server still listens");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The client's pooled connection closing is seen by its connection task.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let err = tokio::time::timeout(Duration::from_secs(60), call(&echo, json!({})))
        .await
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(err.contains("connection refused"), "{err}");
    assert!(err.contains("The request was not sent"), "{err}");
    assert!(!err.contains("may or may not"), "{err}");
    manager.shutdown().await;
}

/// A server name holding a line break (or an escape sequence) is shown escaped in every
/// diagnostic, so that it cannot print a line of its own that passes for another message;
/// so are tool names in a collision warning and in a call's error.
#[tokio::test]
async fn control_characters_in_server_and_tool_names_are_escaped() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let mut loader = ConfigLoader::new(project.path())
        .with_env(env(&[("HOME", home.path().to_str().unwrap())]))
        .with_mcp_config([
            r#"{"mcpServers": {"a\nFAKE LINE": {"command": "/nonexistent"}, "b\u001b[2Jc": {"command": "/nonexistent", "env": {"X": "${UNSET_IN_B}"}}}}"#,
        ]);
    loader.managed_dir = None;
    let (servers, mut diags) = loader.load();
    assert_eq!(servers.len(), 2, "{}", shown(&diags));
    let (manager, more) = McpManager::connect(servers, opts()).await;
    diags.extend(more);
    manager.shutdown().await;
    assert!(
        diags
            .iter()
            .any(|d| d.severity == Severity::Error && d.to_string().contains("FAKE LINE")),
        "{diags:?}"
    );
    for d in &diags {
        let text = d.to_string();
        assert!(!text.contains('\n'), "a line break in: {text:?}");
        assert!(!text.contains('\u{1b}'), "an escape in: {text:?}");
    }
    let text = shown(&diags);
    assert!(text.contains(r#"MCP server "a\nFAKE LINE""#), "{text}");
    assert!(text.contains(r#"MCP server "b\u{1b}[2Jc""#), "{text}");

    // Tool names: a collision warning, and a call's error.
    let dir = tempfile::tempdir().unwrap();
    let config = python_server(
        dir.path(),
        "s\nFAKE SERVER",
        "s",
        &listing(&["t\nFAKE TOOL", "t_FAKE TOOL"]),
    );
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert_eq!(diags.len(), 1, "{diags:?}");
    let warning = diags[0].to_string();
    assert!(!warning.contains('\n'), "{warning:?}");
    assert!(warning.contains(r#"tool "t_FAKE TOOL""#), "{warning}");
    assert!(warning.contains(r#"tool "t\nFAKE TOOL""#), "{warning}");
    let err = call(
        &tool(&manager, "mcp__s_FAKE_SERVER__t_FAKE_TOOL"),
        json!({}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(!err.contains('\n'), "{err:?}");
    assert!(
        err.contains(r#"MCP server "s\nFAKE SERVER" returned an error for tools/call "t\nFAKE TOOL": refused"#),
        "{err}"
    );
    manager.shutdown().await;
}

/// Two tools of one server whose names normalise alike (`a.b` and `a_b`): the warning names
/// the tool left out by its own name and the tool offered in its place, not only the
/// model-facing name both share.
#[tokio::test]
async fn a_name_collision_names_the_tool_left_out_and_the_one_offered() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_server(dir.path(), "r", "r", &listing(&["a.b", "a_b"]));
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    manager.shutdown().await;
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].severity, Severity::Warning);
    let text = diags[0].to_string();
    assert!(
        text.contains(
            r#"tool "a_b", whose name mcp__r__a_b (offered from server "r") is that of tool "a.b""#
        ),
        "{text}"
    );
}

/// An HTTP server that dies while a call waits for its answer fails the call with the
/// reason in words, without hyper's `client error (SendRequest)`.
#[tokio::test]
async fn an_http_connection_closed_mid_call_is_said_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = start_http(dir.path(), "die");
    let (manager, diags) = McpManager::connect(vec![ServerConfig::http("h", url)], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let err = tokio::time::timeout(
        Duration::from_secs(60),
        call(&tool(&manager, "mcp__h__t"), json!({})),
    )
    .await
    .unwrap()
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("(the connection closed before the answer came)"),
        "{err}"
    );
    for leak in ["SendRequest", "client error", "error sending request"] {
        assert!(!err.contains(leak), "{leak} in: {err}");
    }
    assert!(err.contains("may or may not have taken effect"), "{err}");
    manager.shutdown().await;
}
