//! Hostile servers from the 27th review, each a small Python server written to a temporary
//! directory: Streamable HTTP answers that do not answer the request they came with (another
//! id, no id, an empty or too deep body), a resource read with a bad blob among good ones, a
//! `tools/list` page whose `nextCursor` is no string, and an HTTP server whose URL is an unset
//! variable.

use crate::common;

use std::time::{Duration, Instant};

use crate::common::{ChildGuard, call, tool};
use serde_json::json;
use tools_mcp::{McpManager, McpOptions, ServerConfig, Severity};

fn opts() -> McpOptions {
    let mut o = McpOptions::new(std::env::temp_dir());
    o.startup_timeout = Duration::from_secs(20);
    // Far longer than any answer here may take: a call that waits for it is the bug.
    o.tool_idle_timeout = Some(Duration::from_secs(120));
    o
}

/// The rest of a Streamable HTTP server in Python ([`common::python_http_server`], which
/// answers `initialize` and `tools/list`, one tool `t`): pings answered properly, and
/// `tools/call` as its `mode` says.
const HTTP_METHODS: &str = r#"        if meth == "ping":
            return self.reply({"jsonrpc": "2.0", "id": mid, "result": {}})
        if meth == "tools/call":
            if mode == "wrongid":
                return self.reply({"jsonrpc": "2.0", "id": 9999, "result": {"content": []}})
            if mode == "idless":
                return self.reply({"jsonrpc": "2.0", "id": None,
                                   "error": {"code": -32603, "message": "the backend is down"}})
            if mode == "notification":
                return self.reply({"jsonrpc": "2.0", "method": "notifications/message",
                                   "params": {"level": "info", "data": "working"}})
            if mode == "stringid":
                return self.reply({"jsonrpc": "2.0", "id": str(mid),
                                   "result": {"content": [{"type": "text", "text": "string id ok"}]}})
            if mode == "empty":
                return self.reply(b"")
            if mode == "notjson":
                return self.reply(b"{\"jsonrpc\": \"2.0\", \"id\": ")
            if mode == "notjsonrpc":
                return self.reply({"hello": "world"})
            if mode == "deep":
                v = "x"
                for _ in range(200):
                    v = [v]
                return self.reply({"jsonrpc": "2.0", "id": mid, "result": {
                    "content": [{"type": "text", "text": "ok"}], "structuredContent": {"a": v}}})
            return self.reply({"jsonrpc": "2.0", "id": mid,
                               "result": {"content": [{"type": "text", "text": "ok"}]}})
"#;

/// Starts the server of [`HTTP_METHODS`] in `mode` from `dir`. Returns the guard and its
/// endpoint.
fn start_http(dir: &std::path::Path, mode: &str) -> (ChildGuard, String) {
    common::start_python_http(dir, &common::python_http_server(HTTP_METHODS), mode)
}

/// Calls `t` on an HTTP server in `mode` and returns the error, with how long it took.
async fn http_call_error(mode: &str) -> (String, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = start_http(dir.path(), mode);
    let (manager, diags) = McpManager::connect(vec![ServerConfig::http("h", url)], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let started = Instant::now();
    // (The guard turns a regression into a failure instead of a hung test.)
    let result = tokio::time::timeout(
        Duration::from_secs(60),
        call(&tool(&manager, "mcp__h__t"), json!({})),
    )
    .await
    .expect("the call waited for an answer that was not coming");
    let elapsed = started.elapsed();
    manager.shutdown().await;
    (result.unwrap_err().to_string(), elapsed)
}

/// No Rust type names in what the user reads.
fn no_type_names(text: &str) {
    for leak in [
        "ServerJsonRpcMessage",
        "JsonRpcMessage",
        "rmcp::",
        "tools_mcp::",
    ] {
        assert!(!text.contains(leak), "{leak} in: {text}");
    }
}

/// A Streamable HTTP server that answers a `tools/call` POST with a complete JSON body for
/// another request (id 9999) fails the call at once, saying what it answered, instead of
/// leaving it to wait for the idle limit (300 s by default) as one never answered.
#[tokio::test]
async fn an_http_answer_for_another_request_fails_the_call_at_once() {
    let (err, elapsed) = http_call_error("wrongid").await;
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}: {err}");
    assert!(
        err.contains("the server's answer names request 9999, not request "),
        "{err}"
    );
    assert!(!err.contains("sent nothing"), "{err}");
    no_type_names(&err);
}

/// An HTTP answer to a `tools/call` POST that is a notification, not a response, leaves
/// the request without its answer: the call fails at once, saying so.
#[tokio::test]
async fn an_http_answer_that_is_no_response_fails_the_call_at_once() {
    let (err, elapsed) = http_call_error("notification").await;
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}: {err}");
    assert!(
        err.contains("with a notification (notifications/message), not with its response"),
        "{err}"
    );
    no_type_names(&err);
}

/// An HTTP answer to a `tools/call` POST that is a JSON-RPC error without an id (which
/// rmcp cannot route, and dropped) is that request's error: the call fails at once with
/// the server's own message and code.
#[tokio::test]
async fn an_id_less_error_answering_an_http_request_is_its_error() {
    let (err, elapsed) = http_call_error("idless").await;
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}: {err}");
    assert!(err.contains("the backend is down (code -32603)"), "{err}");
}

/// An HTTP answer whose id names the request as a string (`"3"` for request 3) still
/// answers it, as rmcp routes it: the check for an answer to another request leaves it be.
#[tokio::test]
async fn an_http_answer_naming_the_request_as_a_string_still_answers_it() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url) = start_http(dir.path(), "stringid");
    let (manager, diags) = McpManager::connect(vec![ServerConfig::http("h", url)], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let result = tokio::time::timeout(
        Duration::from_secs(60),
        call(&tool(&manager, "mcp__h__t"), json!({})),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(result.data.content.joined_text(), "string id ok");
    manager.shutdown().await;
}

/// An HTTP answer that cannot be read as a JSON-RPC message is said in words: an empty
/// body, a body that is not JSON, JSON that is no JSON-RPC message, or JSON nested too
/// deep; never with the SDK's Rust type names (`ServerJsonRpcMessage`).
#[tokio::test]
async fn unreadable_http_answers_are_said_in_words() {
    for (mode, expected) in [
        (
            "empty",
            "the server's answer was not an MCP answer: its body was empty",
        ),
        (
            "notjson",
            "the server's answer was not an MCP answer: it is not JSON (EOF while parsing a value",
        ),
        (
            "notjsonrpc",
            "the server's answer was not an MCP answer: it is JSON, but not a JSON-RPC message: {\"hello\": \"world\"}",
        ),
        (
            "deep",
            "the server's answer was not an MCP answer: it is nested too deeply (JSON arrays and objects",
        ),
    ] {
        let (err, _) = http_call_error(mode).await;
        assert!(err.contains(expected), "{mode}: {err}");
        no_type_names(&err);
    }
}

/// A stdio server in Python named `name` whose loop body is `handler`.
fn python_server(dir: &std::path::Path, name: &str, handler: &str) -> ServerConfig {
    common::python_server(dir, name, name, handler)
}

/// A resource read whose contents hold a blob that is not base64 among good ones fails
/// with an error naming it, and writes none of them: nothing is left behind unreported
/// under the blob directory.
#[tokio::test]
async fn a_resource_read_with_one_bad_blob_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let blobs = tempfile::tempdir().unwrap();
    let config = python_server(
        dir.path(),
        "res",
        r#"if m == "initialize":
    answer(i, init(msg, {"resources": {}}))
elif m == "resources/list":
    answer(i, {"resources": [{"uri": "x://a", "name": "a"}]})
elif m == "resources/read":
    good = base64.b64encode(b"\x00\x01binary").decode()
    answer(i, {"contents": [
        {"uri": "x://a", "blob": good, "mimeType": "application/octet-stream"},
        {"uri": "x://b", "blob": good},
        {"uri": "x://c", "blob": "!!!notbase64"},
        {"uri": "x://d", "blob": good}]})
elif i is not None:
    out({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "Method not found"}})"#,
    );
    let mut o = opts();
    o.blob_dir = Some(blobs.path().to_path_buf());
    let (manager, diags) = McpManager::connect(vec![config], o).await;
    assert!(
        diags.iter().all(|d| d.severity != Severity::Error),
        "{diags:?}"
    );
    let read = tool(&manager, "ReadMcpResourceTool");
    let err = call(&read, json!({"server": "res", "uri": "x://a"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("x://c has invalid base64 data"), "{err}");
    let left: Vec<_> = std::fs::read_dir(blobs.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "written though the read failed: {left:?}");
    manager.shutdown().await;
}

/// A `tools/list` page whose `nextCursor` is not a string (a number) fails the listing
/// with an error naming it, as a looping cursor does, instead of ending the paging quietly
/// after the first page (the server's other tools would be missing without a word).
#[tokio::test]
async fn a_next_cursor_that_is_no_string_fails_the_listing() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_server(
        dir.path(),
        "pages",
        r#"if m == "initialize":
    answer(i, init(msg, {"tools": {}}))
elif m == "tools/list":
    cursor = (msg.get("params") or {}).get("cursor")
    name = "second" if cursor else "first"
    page = {"tools": [{"name": name, "inputSchema": {"type": "object"}}]}
    if not cursor:
        page["nextCursor"] = 2
    answer(i, page)
elif i is not None:
    out({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "Method not found"}})"#,
    );
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    let errors: Vec<String> = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(ToString::to_string)
        .collect();
    assert_eq!(errors.len(), 1, "{diags:?}");
    assert!(
        errors[0].contains("`nextCursor` is the number 2, not a string"),
        "{errors:?}"
    );
    manager.shutdown().await;
}

/// An HTTP server whose whole `url` is a variable that is not set fails to connect with an
/// error naming the variable, not with the URL hidden as `<the configured URL>`.
#[tokio::test]
async fn an_unset_variable_as_the_url_is_named() {
    let (manager, diags) = McpManager::connect(vec![ServerConfig::http("u", "${U}")], opts()).await;
    manager.shutdown().await;
    let errors: Vec<String> = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(ToString::to_string)
        .collect();
    assert_eq!(errors.len(), 1, "{diags:?}");
    assert!(
        errors[0].contains("its url uses ${U}, which is not set"),
        "{errors:?}"
    );
    assert!(!errors[0].contains("<the configured URL>"), "{errors:?}");
    // A variable inside the URL is named the same way.
    let (manager, diags) = McpManager::connect(
        vec![ServerConfig::http("u", "https://${HOST_X}/mcp?k=${KEY_Y}")],
        opts(),
    )
    .await;
    manager.shutdown().await;
    let text = diags
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        text.contains("its url uses ${HOST_X} and ${KEY_Y}, which are not set"),
        "{text}"
    );
}

/// A server entry whose `alwaysLoad` is not a boolean (`"yes"`) is warned about, naming the
/// server, as a wrongly typed `timeout` is, instead of being ignored without a word; the
/// server still loads, its tools deferred as without the key.
#[test]
fn an_always_load_that_is_no_boolean_is_warned_about() {
    let project = tempfile::tempdir().unwrap();
    let doc = json!({"mcpServers": {
        "s": {"command": "x", "alwaysLoad": "yes"},
        "ok": {"command": "x", "alwaysLoad": true}
    }});
    let (servers, diags) =
        tools_mcp::parse_mcp_json(&doc, tools_mcp::ConfigScope::Project, project.path());
    assert_eq!(servers.len(), 2, "{diags:?}");
    let s = servers.iter().find(|s| s.name == "s").unwrap();
    assert!(!s.always_load);
    assert!(servers.iter().find(|s| s.name == "ok").unwrap().always_load);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].severity, Severity::Warning);
    assert_eq!(diags[0].server.as_deref(), Some("s"));
    assert!(
        diags[0]
            .message
            .contains("\"alwaysLoad\" must be true or false"),
        "{diags:?}"
    );
}

/// A `tools/call` result whose `isError` is not a boolean (`"yes"`) is not taken for a
/// success: MCP's schema allows only a boolean (the TypeScript SDK refuses such a result),
/// so the call fails, showing the server's text and saying what was wrong.
#[tokio::test]
async fn a_result_whose_is_error_is_no_boolean_is_no_success() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_server(
        dir.path(),
        "iserr",
        r#"if m == "initialize":
    answer(i, init(msg, {"tools": {}}))
elif m == "tools/list":
    answer(i, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})
elif m == "tools/call":
    answer(i, {"content": [{"type": "text", "text": "disk full"}], "isError": "yes"})
elif i is not None:
    out({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "Method not found"}})"#,
    );
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let err = call(&tool(&manager, "mcp__iserr__t"), json!({}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("disk full"), "{err}");
    assert!(err.contains("`isError` is the string \"yes\""), "{err}");
    manager.shutdown().await;
}
