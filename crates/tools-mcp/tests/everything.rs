//! Against the real third-party server-everything, over stdio and Streamable HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{call, ctx, peer, recording_progress, start_everything_http, tool, wait_dead};
use serde_json::{Value, json};
use tool_core::{ContentBlock, ProgressSender, Tool, ToolResultContent};
use tools_mcp::{
    ElicitationHandler, McpManager, McpOptions, SamplingHandler, ServerConfig, ServerState,
};

const EVERYTHING: &str = "MCP_SERVER_EVERYTHING";

fn opts() -> McpOptions {
    McpOptions::new(std::env::temp_dir())
}

async fn connect(config: ServerConfig, opts: McpOptions) -> McpManager {
    let (manager, diags) = McpManager::connect(vec![config], opts).await;
    assert!(diags.is_empty(), "{diags:?}");
    manager
}

/// The checks both transports must pass: list, echo, get-sum, image, structured content,
/// resource links, progress, cancellation mid-call.
async fn basic_suite(manager: &McpManager) {
    let names: Vec<String> = manager
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    for expected in [
        "mcp__everything__echo",
        "mcp__everything__get-sum",
        "mcp__everything__get-tiny-image",
        "mcp__everything__trigger-long-running-operation",
        "ListMcpResourcesTool",
        "ReadMcpResourceTool",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} missing from {names:?}"
        );
    }
    let echo = tool(manager, "mcp__everything__echo");
    assert!(echo.is_read_only(&json!({})) && echo.should_defer());
    let r = call(&echo, json!({"message": "hi there"})).await.unwrap();
    assert_eq!(r.data.content.joined_text(), "Echo: hi there");

    let r = call(
        &tool(manager, "mcp__everything__get-sum"),
        json!({"a": 2, "b": 3}),
    )
    .await
    .unwrap();
    assert!(
        r.data.content.joined_text().contains('5'),
        "{:?}",
        r.data.content
    );

    // Invalid arguments: the server's complaint, as an error.
    let err = call(
        &tool(manager, "mcp__everything__get-sum"),
        json!({"a": "two"}),
    )
    .await
    .unwrap_err();
    assert!(!err.to_model_text().trim().is_empty());

    let r = call(&tool(manager, "mcp__everything__get-tiny-image"), json!({}))
        .await
        .unwrap();
    assert!(r.data.content.has_image(), "{:?}", r.data.content);
    let ToolResultContent::Blocks(blocks) = &r.data.content else {
        panic!("blocks expected")
    };
    assert!(
        blocks
            .iter()
            .any(|b| matches!(b, ContentBlock::Image { .. }))
    );

    let r = call(
        &tool(manager, "mcp__everything__get-structured-content"),
        json!({"location": "Chicago"}),
    )
    .await
    .unwrap();
    let structured = r.mcp_meta.unwrap().structured_content.unwrap();
    assert!(structured.get("temperature").is_some(), "{structured}");

    let r = call(
        &tool(manager, "mcp__everything__get-resource-links"),
        json!({"count": 2}),
    )
    .await
    .unwrap();
    let text = r.data.content.joined_text();
    assert!(
        text.contains("[Resource link:") && text.contains("demo://"),
        "{text}"
    );

    // Progress notifications are forwarded as progress events.
    let long = tool(manager, "mcp__everything__trigger-long-running-operation");
    let (progress, seen) = recording_progress();
    let r = long
        .call(json!({"duration": 1, "steps": 4}), ctx(), progress)
        .await
        .unwrap();
    assert!(
        r.data.content.joined_text().contains("completed"),
        "{:?}",
        r.data.content
    );
    // Every report the server sent before its result, in order, the last one too.
    let events = seen.lock().unwrap().clone();
    let progress: Vec<&Value> = events.iter().map(|e| &e.data["progress"]).collect();
    assert_eq!(
        progress,
        [&json!(1.0), &json!(2.0), &json!(3.0), &json!(4.0)],
        "{events:?}"
    );
    assert_eq!(events[0].tool_use_id, "toolu_test");
    assert_eq!(events[0].data["type"], "mcp_progress");
    assert_eq!(events[0].data["server"], "everything");
    assert_eq!(events.last().unwrap().data["total"], json!(4.0));

    // Embedded resources (text inline, binary as a note).
    let reference = tool(manager, "mcp__everything__get-resource-reference");
    let r = call(&reference, json!({"resourceType": "Text", "resourceId": 2}))
        .await
        .unwrap();
    let text = r.data.content.joined_text();
    assert!(
        text.contains("[Resource from demo://resource/dynamic/text/2]\nResource 2:"),
        "{text}"
    );
    let r = call(&reference, json!({"resourceType": "Blob", "resourceId": 1}))
        .await
        .unwrap();
    let text = r.data.content.joined_text();
    assert!(
        text.contains("[Binary resource demo://resource/dynamic/blob/1"),
        "{text}"
    );

    // server-everything registers get-roots-list after initialization and announces it with
    // notifications/tools/list_changed; the tool asks us for roots/list, answered with the
    // project directory.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !manager
        .tools()
        .iter()
        .any(|t| t.name() == "mcp__everything__get-roots-list")
    {
        assert!(
            Instant::now() < deadline,
            "tools/list_changed was not handled: get-roots-list never appeared"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let r = call(&tool(manager, "mcp__everything__get-roots-list"), json!({}))
        .await
        .unwrap();
    let text = r.data.content.joined_text();
    assert!(
        text.contains(&format!("file://{}", std::env::temp_dir().display())),
        "{text}"
    );

    // Cancellation mid-call (the operation would take 30 s and succeed) returns a
    // cancellation and leaves the connection usable.
    let context = ctx();
    let token = context.cancellation().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        token.cancel();
    });
    let err = long
        .call(
            json!({"duration": 30, "steps": 3}),
            context,
            ProgressSender::none(),
        )
        .await
        .unwrap_err();
    assert!(err.is_cancelled(), "{err}");
    let r = call(&echo, json!({"message": "still here"})).await.unwrap();
    assert_eq!(r.data.content.joined_text(), "Echo: still here");
}

#[tokio::test]
async fn stdio_suite() {
    let Some(bin) = peer(EVERYTHING) else { return };
    let manager = connect(ServerConfig::stdio("everything", bin, ["stdio"]), opts()).await;
    basic_suite(&manager).await;
    let pid = manager.server_pid("everything").unwrap();
    manager.shutdown().await;
    assert!(wait_dead(pid, Duration::from_secs(5)).await);
}

#[tokio::test]
async fn streamable_http_suite() {
    let Some(bin) = peer(EVERYTHING) else { return };
    let (_server, url) = start_everything_http(&bin);
    let manager = connect(ServerConfig::http("everything", url), opts()).await;
    basic_suite(&manager).await;
    manager.shutdown().await;
}

#[tokio::test]
async fn http_server_killed_mid_call_fails_clearly_then_reconnects() {
    let Some(bin) = peer(EVERYTHING) else { return };
    let (server, url) = start_everything_http(&bin);
    let manager = connect(ServerConfig::http("everything", url.clone()), opts()).await;
    let long = tool(&manager, "mcp__everything__trigger-long-running-operation");
    let killer = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        drop(server);
    });
    let err = call(&long, json!({"duration": 20, "steps": 2}))
        .await
        .unwrap_err();
    killer.await.unwrap();
    let text = err.to_string();
    eprintln!("in-flight call failed with: {text}");
    assert!(text.contains("MCP server \"everything\""), "{text}");
    assert!(text.contains("not retried"), "{text}");

    // A new server on the same URL: the next use reconnects (new session).
    let (_server, _) = common::start_everything_http_at(&bin, common::port_of(&url));
    let echo = tool(&manager, "mcp__everything__echo");
    let deadline = Instant::now() + Duration::from_secs(10);
    let r = loop {
        match call(&echo, json!({"message": "again"})).await {
            Ok(r) => break r,
            Err(e) => {
                assert!(e.to_string().contains("MCP server \"everything\""), "{e}");
                assert!(Instant::now() < deadline, "no reconnection: {e}");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    };
    assert_eq!(r.data.content.joined_text(), "Echo: again");
    manager.shutdown().await;
}

#[tokio::test]
async fn http_session_lost_between_calls_is_renewed_on_next_use() {
    let Some(bin) = peer(EVERYTHING) else { return };
    let (server, url) = start_everything_http(&bin);
    let manager = connect(ServerConfig::http("everything", url.clone()), opts()).await;
    let echo = tool(&manager, "mcp__everything__echo");
    let r = call(&echo, json!({"message": "one"})).await.unwrap();
    assert_eq!(r.data.content.joined_text(), "Echo: one");

    // The server restarts while no call is in flight: it no longer knows our session and
    // answers the next request with HTTP 400 and an id-less "No valid session ID provided"
    // error (the specification says 404; the TypeScript SDK's examples say 400). That use
    // starts a new session and succeeds.
    // (The restart runs off the runtime's thread, so the client sees its old connections
    // close, as it would between two calls of an agent.)
    let port = common::port_of(&url);
    let (_server, _) = tokio::task::spawn_blocking(move || {
        drop(server);
        common::start_everything_http_at(&bin, port)
    })
    .await
    .unwrap();
    let r = call(&echo, json!({"message": "two"})).await.unwrap();
    assert_eq!(r.data.content.joined_text(), "Echo: two");
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    manager.shutdown().await;
}

#[tokio::test]
async fn stdio_server_killed_mid_call_fails_clearly_then_reconnects() {
    let Some(bin) = peer(EVERYTHING) else { return };
    let manager = connect(ServerConfig::stdio("everything", bin, ["stdio"]), opts()).await;
    let pid = manager.server_pid("everything").unwrap();
    let long = tool(&manager, "mcp__everything__trigger-long-running-operation");
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    });
    let err = call(&long, json!({"duration": 20, "steps": 2}))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("MCP server \"everything\" disconnected"),
        "{text}"
    );
    assert!(text.contains("not retried"), "{text}");
    assert!(matches!(manager.servers()[0].state, ServerState::Failed(_)));

    let r = call(
        &tool(&manager, "mcp__everything__echo"),
        json!({"message": "again"}),
    )
    .await
    .unwrap();
    assert_eq!(r.data.content.joined_text(), "Echo: again");
    assert_ne!(manager.server_pid("everything"), Some(pid));
    manager.shutdown().await;
}

#[tokio::test]
async fn resources_text_and_binary() {
    let Some(bin) = peer(EVERYTHING) else { return };
    let blobs = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.blob_dir = Some(blobs.path().to_path_buf());
    let manager = connect(ServerConfig::stdio("everything", bin, ["stdio"]), o).await;

    let list = tool(&manager, "ListMcpResourcesTool");
    assert!(list.is_read_only(&json!({})));
    let r = call(&list, json!({})).await.unwrap();
    let listed = r.data.structured.as_array().unwrap().clone();
    assert!(!listed.is_empty());
    assert!(listed.iter().all(|x| x["server"] == "everything"));
    let r = call(&list, json!({"server": "nope"})).await.unwrap_err();
    assert!(
        r.to_string()
            .contains("MCP server \"nope\" is not configured"),
        "{r}"
    );

    let read = tool(&manager, "ReadMcpResourceTool");
    let r = call(
        &read,
        json!({"server": "everything", "uri": "demo://resource/dynamic/text/1"}),
    )
    .await
    .unwrap();
    let contents = &r.data.structured["contents"];
    assert!(
        contents[0]["text"].as_str().unwrap().contains('1'),
        "{contents}"
    );

    let r = call(
        &read,
        json!({"server": "everything", "uri": "demo://resource/dynamic/blob/1"}),
    )
    .await
    .unwrap();
    let item = &r.data.structured["contents"][0];
    let path = item["blobSavedTo"].as_str().unwrap();
    assert!(path.starts_with(blobs.path().to_str().unwrap()));
    assert!(!std::fs::read(path).unwrap().is_empty());

    let err = call(
        &read,
        json!({"server": "everything", "uri": "demo://no/such"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains("MCP server \"everything\""),
        "{err}"
    );
    manager.shutdown().await;
}

struct DecliningElicitation(std::sync::Mutex<Vec<Value>>);

#[tools_mcp_async_trait]
impl ElicitationHandler for DecliningElicitation {
    async fn elicit(&self, server: &str, request: Value) -> Value {
        assert_eq!(server, "everything");
        self.0.lock().unwrap().push(request);
        json!({"action": "decline"})
    }
}

struct RefusingSampling;

#[tools_mcp_async_trait]
impl SamplingHandler for RefusingSampling {
    async fn create_message(&self, _server: &str, _request: Value) -> Result<Value, String> {
        Err("the user refused sampling".into())
    }
}

use tool_core::async_trait as tools_mcp_async_trait;

#[tokio::test]
async fn elicitation_and_sampling_reach_host_handlers() {
    let Some(bin) = peer(EVERYTHING) else { return };
    let elicit = Arc::new(DecliningElicitation(std::sync::Mutex::new(Vec::new())));
    let mut o = opts();
    o.elicitation = Some(elicit.clone());
    o.sampling = Some(Arc::new(RefusingSampling));
    let manager = connect(ServerConfig::stdio("everything", bin, ["stdio"]), o).await;
    // These tools are registered after initialization (tools/list_changed).
    let deadline = Instant::now() + Duration::from_secs(5);
    let has = |m: &McpManager, n: &str| m.tools().iter().any(|t| t.name() == n);
    while !(has(&manager, "mcp__everything__trigger-elicitation-request")
        && has(&manager, "mcp__everything__trigger-sampling-request"))
    {
        assert!(
            Instant::now() < deadline,
            "list_changed tools never appeared"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let r = call(
        &tool(&manager, "mcp__everything__trigger-elicitation-request"),
        json!({}),
    )
    .await;
    let text = match r {
        Ok(r) => r.data.content.joined_text(),
        Err(e) => e.to_string(),
    };
    assert!(text.to_lowercase().contains("decline"), "{text}");
    assert_eq!(elicit.0.lock().unwrap().len(), 1);

    let r = call(
        &tool(&manager, "mcp__everything__trigger-sampling-request"),
        json!({"prompt": "hi"}),
    )
    .await;
    let text = match r {
        Ok(r) => r.data.content.joined_text(),
        Err(e) => e.to_string(),
    };
    assert!(text.contains("refused sampling"), "{text}");
    manager.shutdown().await;
}

#[tokio::test]
async fn without_handlers_nothing_is_advertised_and_calls_do_not_hang() {
    let Some(bin) = peer(EVERYTHING) else { return };
    let manager = connect(ServerConfig::stdio("everything", bin, ["stdio"]), opts()).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let names: Vec<String> = manager
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    // Capability-gated tools are not offered without the capability.
    assert!(
        !names
            .iter()
            .any(|n| n.ends_with("trigger-sampling-request")),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.ends_with("trigger-elicitation-request")),
        "{names:?}"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn filesystem_and_memory_servers() {
    let (Some(fs_bin), Some(mem_bin)) = (peer("MCP_SERVER_FILESYSTEM"), peer("MCP_SERVER_MEMORY"))
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("note.txt"), "hello from a file").unwrap();
    let mem_file = root.join("memory.jsonl");
    let (manager, diags) = McpManager::connect(
        vec![
            ServerConfig::stdio("fs", fs_bin, [root.display().to_string()]),
            ServerConfig::stdio("memory", mem_bin, Vec::<String>::new())
                .with_env("MEMORY_FILE_PATH", mem_file.display().to_string()),
        ],
        opts(),
    )
    .await;
    assert!(diags.is_empty(), "{diags:?}");

    let read = tool(&manager, "mcp__fs__read_text_file");
    assert!(read.is_read_only(&json!({})));
    let r = call(&read, json!({"path": root.join("note.txt")}))
        .await
        .unwrap();
    assert_eq!(r.data.content.joined_text(), "hello from a file");
    // Outside the allowed directories: the server's own error, as an error result.
    let err = call(&read, json!({"path": "/etc/hostname"}))
        .await
        .unwrap_err();
    assert!(err.to_string().to_lowercase().contains("denied"), "{err}");

    // A huge text result comes back whole; the pipeline saves what is over the tool's
    // size (MAX_MCP_OUTPUT_TOKENS, 25,000 tokens ~ 100,000 characters) to a file.
    std::fs::write(root.join("huge.txt"), "y".repeat(300_000)).unwrap();
    let r = call(&read, json!({"path": root.join("huge.txt")}))
        .await
        .unwrap();
    assert_eq!(r.data.content.joined_text(), "y".repeat(300_000));
    assert_eq!(
        read.max_result_size(),
        tool_core::MaxResultSize::Chars(100_000)
    );

    let create = tool(&manager, "mcp__memory__create_entities");
    call(
        &create,
        json!({"entities": [{"name": "Toolwright", "entityType": "project", "observations": ["written in Rust"]}]}),
    )
    .await
    .unwrap();
    let r = call(&tool(&manager, "mcp__memory__read_graph"), json!({}))
        .await
        .unwrap();
    assert!(r.data.content.joined_text().contains("written in Rust"));
    assert!(
        std::fs::read_to_string(&mem_file)
            .unwrap()
            .contains("Toolwright")
    );
    let tools: Vec<Arc<dyn Tool>> = manager.tools();
    assert!(tools.iter().all(|t| t.name().len() <= 64));
    manager.shutdown().await;
}
