//! The 40th review's finding on the MCP client, against real server processes: the resource
//! tools sent `resources/list` and `resources/read` to a server the model named even when
//! that server declared no `resources` capability, and answered with the server's "Method not
//! found" (a failed listing quoting an empty name too: `resources/list ""`). Claude Code
//! looks at the capability first: such a server has no resources to list, and reading one
//! fails with "does not support resources".

use std::time::Duration;

use crate::common::{call, peer, python_server, tiny_server, tool};
use serde_json::json;
use tools_mcp::{McpManager, McpOptions, ServerConfig, Severity};

fn opts() -> McpOptions {
    let mut o = McpOptions::new(std::env::temp_dir());
    o.startup_timeout = Duration::from_secs(20);
    o
}

/// The answer of ListMcpResourcesTool when there is nothing to list.
const NO_RESOURCES: &str =
    "No resources found. MCP servers may still provide tools even if they have no resources.";

/// The third-party filesystem server declares tools only: naming it to the resource tools
/// (offered because the tiny server declares resources) lists nothing and fails a read with
/// "does not support resources", not with the server's "Method not found". The server with
/// resources is served as before.
#[tokio::test]
async fn a_named_server_without_resources_is_not_asked_for_them() {
    let Some(fs_bin) = peer("MCP_SERVER_FILESYSTEM") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (manager, diags) = McpManager::connect(
        vec![
            ServerConfig::stdio("docs", tiny_server(), ["--resources-only"]),
            ServerConfig::stdio("fs", fs_bin, [root.display().to_string()]),
        ],
        opts(),
    )
    .await;
    assert!(
        diags.iter().all(|d| d.severity != Severity::Error),
        "{diags:?}"
    );
    let list = tool(&manager, "ListMcpResourcesTool");
    let read = tool(&manager, "ReadMcpResourceTool");

    let listed = call(&list, json!({"server": "fs"})).await.unwrap();
    assert_eq!(listed.data.content.joined_text(), NO_RESOURCES);

    let err = call(
        &read,
        json!({"server": "fs", "uri": "file:///etc/hostname"}),
    )
    .await
    .unwrap_err()
    .to_string();
    assert_eq!(err, "MCP server \"fs\" does not support resources");

    // The server with resources still lists and reads them.
    let listed = call(&list, json!({"server": "docs"})).await.unwrap();
    assert!(
        listed.data.content.joined_text().contains("tiny://note"),
        "{}",
        listed.data.content.joined_text()
    );
    let all = call(&list, json!({})).await.unwrap();
    assert!(
        all.data
            .content
            .joined_text()
            .contains("\"server\": \"docs\""),
        "{}",
        all.data.content.joined_text()
    );
    let r = call(&read, json!({"server": "docs", "uri": "tiny://note"}))
        .await
        .unwrap();
    assert!(
        r.data
            .content
            .joined_text()
            .contains("a note without tools"),
        "{}",
        r.data.content.joined_text()
    );
    manager.shutdown().await;
}

/// A server that declares no resources but would answer for them (as some do) is not sent
/// `resources/list` or `resources/read` at all: its log of the methods it was sent has
/// neither, and the tools answer as for a server without resources.
#[tokio::test]
async fn no_resource_request_reaches_a_server_that_declared_none() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("methods.log");
    let quiet = python_server(
        dir.path(),
        "quiet",
        "quiet",
        &format!(
            r#"open({log:?}, "a").write(str(m) + "\n")
if m == "initialize":
    answer(i, init(msg, {{"tools": {{}}}}))
elif m == "tools/list":
    answer(i, {{"tools": []}})
elif m == "resources/list":
    answer(i, {{"resources": [{{"uri": "q://secret", "name": "secret"}}]}})
elif m == "resources/read":
    answer(i, {{"contents": [{{"uri": "q://secret", "text": "undeclared"}}]}})
elif i is not None:
    answer(i, {{}})"#,
            log = log.display().to_string()
        ),
    );
    let (manager, diags) = McpManager::connect(
        vec![
            ServerConfig::stdio("docs", tiny_server(), ["--resources-only"]),
            quiet,
        ],
        opts(),
    )
    .await;
    assert!(
        diags.iter().all(|d| d.severity != Severity::Error),
        "{diags:?}"
    );
    let list = tool(&manager, "ListMcpResourcesTool");
    let read = tool(&manager, "ReadMcpResourceTool");
    let listed = call(&list, json!({"server": "quiet"})).await.unwrap();
    assert_eq!(listed.data.content.joined_text(), NO_RESOURCES);
    let err = call(&read, json!({"server": "quiet", "uri": "q://secret"}))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(err, "MCP server \"quiet\" does not support resources");
    let all = call(&list, json!({})).await.unwrap();
    assert!(
        !all.data.content.joined_text().contains("q://secret"),
        "{}",
        all.data.content.joined_text()
    );
    let sent = std::fs::read_to_string(&log).unwrap();
    assert!(!sent.contains("resources/"), "sent to quiet:\n{sent}");
    manager.shutdown().await;
}

/// A server that declares resources and fails to list them: the error names the method and
/// the server's message, with no empty name quoted after the method (`resources/list ""`).
#[tokio::test]
async fn a_failed_listing_quotes_no_empty_name() {
    let dir = tempfile::tempdir().unwrap();
    let broken = python_server(
        dir.path(),
        "broken",
        "broken",
        r#"if m == "initialize":
    answer(i, init(msg, {"resources": {}}))
elif m == "resources/list":
    out({"jsonrpc": "2.0", "id": i, "error": {"code": -32603, "message": "index unavailable"}})
elif i is not None:
    out({"jsonrpc": "2.0", "id": i, "error": {"code": -32601, "message": "Method not found"}})"#,
    );
    let (manager, diags) = McpManager::connect(vec![broken], opts()).await;
    assert!(
        diags.iter().all(|d| d.severity != Severity::Error),
        "{diags:?}"
    );
    let list = tool(&manager, "ListMcpResourcesTool");
    let err = call(&list, json!({"server": "broken"}))
        .await
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "MCP server \"broken\" returned an error for resources/list: index unavailable \
         (code -32603)"
    );
    manager.shutdown().await;
}
