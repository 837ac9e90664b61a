//! Client bugs from the 35th review, against real server processes: an error response
//! without an id (`"id": null`, as JSON-RPC 2.0 prescribes for a server that cannot tell
//! which request it answers) is the waiting request's error, over stdio and in a request's
//! event stream over Streamable HTTP, not dropped (the call waited for the idle limit, 30
//! minutes over stdio, then said the server "sent nothing", or said it "disconnected").

use std::time::Duration;

use crate::common::{call, python_http_server, python_server, start_python_http, tool};
use serde_json::json;
use tools_mcp::{McpManager, McpOptions, ServerConfig};

fn opts() -> McpOptions {
    // A short idle limit: the call fails for it if the error is dropped.
    let mut o = McpOptions::from_lookup(std::env::temp_dir(), &|k: &str| {
        (k == "CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT").then(|| "20000".to_owned())
    });
    o.startup_timeout = Duration::from_secs(20);
    o
}

#[tokio::test]
async fn an_idless_error_over_stdio_is_the_waiting_calls_error() {
    let dir = tempfile::tempdir().unwrap();
    let server = python_server(
        dir.path(),
        "idl",
        "idless",
        r#"if m == "initialize":
    answer(i, init(msg, {"tools": {}}))
elif m == "tools/list":
    answer(i, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})
elif m == "tools/call":
    out({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request: upstream refused"}})
elif i is not None:
    answer(i, {})"#,
    );
    let (manager, diags) = McpManager::connect(vec![server], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let t = tool(&manager, "mcp__idl__t");
    let started = std::time::Instant::now();
    let error = call(&t, json!({})).await.unwrap_err().to_string();
    assert!(
        error.contains("Invalid Request: upstream refused") && error.contains("-32600"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(15), "{error}");
    // The connection is still good: the next call gets its own answer the same way.
    let again = call(&t, json!({})).await.unwrap_err().to_string();
    assert!(again.contains("upstream refused"), "{again}");
    manager.shutdown().await;
}

#[tokio::test]
async fn an_idless_error_in_a_calls_event_stream_is_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let script = python_http_server(
        r#"        if meth == "tools/call":
            err = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request: upstream refused"}}
            return self.reply(("event: message\ndata: " + json.dumps(err) + "\n\n").encode(), "text/event-stream")
"#,
    );
    let (_guard, url) = start_python_http(dir.path(), &script, "sse");
    let (manager, diags) =
        McpManager::connect(vec![ServerConfig::http("b", url.as_str())], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let t = tool(&manager, "mcp__b__t");
    let error = call(&t, json!({})).await.unwrap_err().to_string();
    assert!(
        error.contains("Invalid Request: upstream refused") && !error.contains("disconnected"),
        "{error}"
    );
    manager.shutdown().await;
}

/// A call the client cancelled (its timeout) waits no more: an error without an id that
/// comes later is the error of the one call still waiting, not a reason to drop the
/// connection ("2 requests were waiting"). Found by the code review of the fix.
#[tokio::test]
async fn a_cancelled_call_does_not_count_as_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let server = python_server(
        dir.path(),
        "idl",
        "idless_after_cancel",
        r#"if m == "initialize":
    answer(i, init(msg, {"tools": {}}))
elif m == "tools/list":
    answer(i, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})
elif m == "tools/call" and (msg["params"].get("arguments") or {}).get("hang"):
    pass
elif m == "tools/call":
    out({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid Request: upstream refused"}})
elif i is not None:
    answer(i, {})"#,
    );
    let mut o = opts();
    o.tool_timeout = Duration::from_millis(500);
    let (manager, diags) = McpManager::connect(vec![server], o).await;
    assert!(diags.is_empty(), "{diags:?}");
    let t = tool(&manager, "mcp__idl__t");
    let hung = call(&t, json!({"hang": true}))
        .await
        .unwrap_err()
        .to_string();
    assert!(hung.contains("timed out"), "{hung}");
    let error = call(&t, json!({})).await.unwrap_err().to_string();
    assert!(
        error.contains("upstream refused") && !error.contains("requests were waiting"),
        "{error}"
    );
    manager.shutdown().await;
}
