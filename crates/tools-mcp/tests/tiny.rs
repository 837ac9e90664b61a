//! Against the tiny rmcp server of `examples/tiny_server.rs`: the cases third-party peers
//! cannot produce (hang until cancelled, crash mid-call, EOF mid-call, 200-character names,
//! root `anyOf` and invalid schemas, property names the model API refuses, paging, list_changed, `_meta` flags, JSON-RPC errors,
//! server requests without host handlers, backoff, bounded stderr).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::{call, ctx, tiny_server, tool, wait_dead};
use serde_json::json;
use tool_core::{MaxResultSize, PermissionResult, ProgressSender, ToolResultContent};
use tools_mcp::{McpManager, McpOptions, ServerConfig, ServerState, Severity};

/// How many tools the tiny server lists at start.
const TINY_TOOLS: usize = 18;

fn opts() -> McpOptions {
    McpOptions::new(std::env::temp_dir())
}

async fn tiny(args: &[&str], opts: McpOptions) -> McpManager {
    let (manager, diags) = McpManager::connect(
        vec![ServerConfig::stdio(
            "tiny",
            tiny_server(),
            args.iter().copied(),
        )],
        opts,
    )
    .await;
    assert!(diags.is_empty(), "{diags:?}");
    manager
}

#[tokio::test]
async fn paged_tools_names_schemas_and_flags() {
    let manager = tiny(&[], opts()).await;
    let tools = manager.tools();
    // 18 tools over 6 pages of 3.
    assert_eq!(tools.len(), TINY_TOOLS, "{tools:?}");

    let long = tools
        .iter()
        .find(|t| t.mcp_info().unwrap().tool_name.len() == 200)
        .unwrap();
    assert_eq!(long.name().len(), 64);
    assert!(long.name().starts_with("mcp__tiny__aaaa"));
    let text = call(long, json!({}))
        .await
        .unwrap()
        .data
        .content
        .joined_text();
    assert_eq!(text, "long ok");

    let union = tool(&manager, "mcp__tiny__union");
    let schema = union.input_schema();
    assert_eq!(schema["type"], "object");
    assert!(schema.get("anyOf").is_none() && schema.get("$defs").is_none());
    assert_eq!(
        schema["properties"]["id"],
        json!({"type": "string", "description": "an id"})
    );
    assert!(schema["properties"].get("n").is_some() && schema["properties"].get("name").is_some());
    assert_eq!(schema["required"], json!(["id"]));

    let echo = tool(&manager, "mcp__tiny__echo");
    let input = json!({"text": "x"});
    assert!(echo.is_read_only(&input) && echo.is_concurrency_safe(&input));
    assert!(echo.should_defer() && !echo.always_load());
    assert_eq!(echo.max_result_size(), MaxResultSize::Chars(100_000));
    assert_eq!(echo.user_facing_name(&input), "tiny - echo (MCP)");
    let info = echo.mcp_info().unwrap();
    assert_eq!(
        info.source.as_deref(),
        Some("dynamic"),
        "the scope of the entry"
    );
    assert_eq!(
        (info.server_name.as_str(), info.tool_name.as_str()),
        ("tiny", "echo")
    );

    let crash = tool(&manager, "mcp__tiny__crash");
    assert!(crash.is_destructive(&input) && crash.is_open_world(&input));
    assert!(!crash.is_read_only(&input) && !crash.is_concurrency_safe(&input));

    let flags = tool(&manager, "mcp__tiny__flags");
    assert!(flags.always_load() && !flags.should_defer());
    assert!(flags.requires_user_interaction());
    assert_eq!(flags.max_result_size(), MaxResultSize::Chars(500_000));
    assert_eq!(flags.search_hint(), Some("flag things"));

    // No resources capability: no resource tools.
    assert!(!tools.iter().any(|t| t.name() == "ListMcpResourcesTool"));
    manager.shutdown().await;
}

#[tokio::test]
async fn results_errors_and_output_limit() {
    let mut o = opts();
    o.max_output_tokens = 1_000;
    let manager = tiny(&[], o).await;
    let echo = tool(&manager, "mcp__tiny__echo");
    let r = call(&echo, json!({"text": "hello"})).await.unwrap();
    assert_eq!(r.data.content, ToolResultContent::Text("hello".into()));
    assert!(r.mcp_meta.is_none());

    let r = call(&tool(&manager, "mcp__tiny__structured"), json!({}))
        .await
        .unwrap();
    assert_eq!(
        r.mcp_meta.unwrap().structured_content,
        Some(json!({"n": 7}))
    );

    let err = call(&tool(&manager, "mcp__tiny__fail"), json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.to_model_text(), "it failed on purpose");

    // Text over the limit comes back whole: the pipeline saves it to a file from the
    // tool's result size (the token limit at 4 characters a token), tail included.
    let big = tool(&manager, "mcp__tiny__big");
    assert_eq!(big.max_result_size(), MaxResultSize::Chars(4_000));
    let r = call(&big, json!({"chars": 200_000})).await.unwrap();
    assert_eq!(r.data.content.joined_text(), "x".repeat(200_000));
    // A tool with its own maxResultSizeChars is saved from there instead.
    let big_meta = tool(&manager, "mcp__tiny__big_meta");
    assert_eq!(big_meta.max_result_size(), MaxResultSize::Chars(150_000));
    let r = call(&big_meta, json!({"chars": 200_000})).await.unwrap();
    assert_eq!(r.data.content.joined_text(), "x".repeat(200_000));

    // A non-object input is refused with the tool's name, not sent.
    let err = call(&echo, json!("text")).await.unwrap_err();
    assert!(err.to_string().contains("mcp__tiny__echo"), "{err}");
    manager.shutdown().await;
}

async fn stderr_contains(manager: &McpManager, needle: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if manager.stderr("tiny").unwrap_or_default().contains(needle) {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test]
async fn cancellation_mid_call_sends_notifications_cancelled() {
    let manager = tiny(&[], opts()).await;
    let hang = tool(&manager, "mcp__tiny__hang");
    let context = ctx();
    let token = context.cancellation().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        token.cancel();
    });
    // `hang` never answers on its own: only the cancellation can end this call (the guard
    // turns a regression into a failure instead of a hung test).
    let err = tokio::time::timeout(
        Duration::from_secs(60),
        hang.call(json!({}), context, ProgressSender::none()),
    )
    .await
    .expect("cancelling did not end the call")
    .unwrap_err();
    assert!(err.is_cancelled(), "{err}");
    assert!(
        stderr_contains(&manager, "hang: cancelled by the client").await,
        "the server never saw notifications/cancelled: {:?}",
        manager.stderr("tiny")
    );
    // The connection is still good.
    let r = call(&tool(&manager, "mcp__tiny__echo"), json!({"text": "after"}))
        .await
        .unwrap();
    assert_eq!(r.data.content.joined_text(), "after");
    manager.shutdown().await;
}

/// Calls `hang`, which only a timeout ends: the error names the server and `limit`, and the
/// server saw `notifications/cancelled`.
async fn hang_times_out(manager: &McpManager, limit: &str) {
    let err = call(&tool(manager, "mcp__tiny__hang"), json!({}))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("MCP server \"tiny\"") && text.contains(&format!("timed out after {limit}")),
        "{text}"
    );
    assert!(stderr_contains(manager, "hang: cancelled by the client").await);
}

#[tokio::test]
async fn per_call_timeout_cancels_the_request() {
    let mut o = opts();
    o.tool_timeout = Duration::from_millis(400);
    let manager = tiny(&[], o).await;
    hang_times_out(&manager, "400 ms").await;
    manager.shutdown().await;
}

/// A call its server says nothing about for the idle limit is cancelled
/// (`CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT`); progress notifications keep a long call going.
#[tokio::test]
async fn a_silent_call_is_cancelled_after_the_idle_limit_and_progress_keeps_one_alive() {
    let mut o = opts();
    o.tool_idle_timeout = Some(Duration::from_millis(700));
    let manager = tiny(&[], o).await;
    // (The guard turns a regression into a failure instead of a hung test.)
    let err = tokio::time::timeout(
        Duration::from_secs(30),
        call(&tool(&manager, "mcp__tiny__hang"), json!({})),
    )
    .await
    .expect("the idle limit did not end the call")
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("MCP server \"tiny\": tool \"hang\" sent nothing for 700 ms"),
        "{err}"
    );
    assert!(stderr_contains(&manager, "hang: cancelled by the client").await);
    // Ten reports 200 ms apart: two seconds in all, never 700 ms of silence.
    let r = call(
        &tool(&manager, "mcp__tiny__ticks"),
        json!({"count": 10, "every_ms": 200}),
    )
    .await
    .unwrap();
    assert_eq!(r.data.content.joined_text(), "ticked 10");
    manager.shutdown().await;
}

#[test]
fn the_idle_limit_comes_from_the_environment() {
    let env = |name: &str| (name == "CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT").then(|| "1500".to_owned());
    let o = McpOptions::from_lookup(std::env::temp_dir(), &env);
    assert_eq!(o.tool_idle_timeout, Some(Duration::from_millis(1500)));
    assert_eq!(opts().tool_idle_timeout, None);
}

/// A limit set to something that is not a positive whole number is not ignored silently:
/// `connect` warns, naming the variable, its value and the default used.
#[tokio::test]
async fn limits_from_the_environment_that_cannot_be_used_are_reported() {
    let env = |name: &str| match name {
        "MCP_TOOL_TIMEOUT" => Some("1.5e3".to_owned()),
        "MAX_MCP_OUTPUT_TOKENS" => Some("-1".to_owned()),
        "MCP_TIMEOUT" => Some("abc".to_owned()),
        _ => None,
    };
    let o = McpOptions::from_lookup(std::env::temp_dir(), &env);
    assert_eq!(o.tool_timeout, tools_mcp::DEFAULT_TOOL_TIMEOUT);
    let (manager, diags) = McpManager::connect(Vec::new(), o).await;
    let shown: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert!(
        diags
            .iter()
            .all(|d| d.severity == Severity::Warning && d.server.is_none()),
        "{shown:?}"
    );
    for expected in [
        "warning: MCP_TIMEOUT=\"abc\" is not a positive whole number of milliseconds; the default, 30000 ms, is used",
        "warning: MCP_TOOL_TIMEOUT=\"1.5e3\" is not a positive whole number of milliseconds; the default, 100000000 ms, is used",
        "warning: MAX_MCP_OUTPUT_TOKENS=\"-1\" is not a positive whole number of tokens; the default, 25000, is used",
    ] {
        assert!(
            shown.iter().any(|s| s == expected),
            "{expected}\nnot in {shown:#?}"
        );
    }
    assert_eq!(shown.len(), 3, "{shown:#?}");
    manager.shutdown().await;
}

/// Calls `crash`, which ends the server mid-call: the call fails at once, naming the server
/// and saying it was not retried. Returns the error text.
async fn crash_fails_clearly(manager: &McpManager) -> String {
    let err = call(&tool(manager, "mcp__tiny__crash"), json!({}))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("MCP server \"tiny\" disconnected"), "{text}");
    assert!(text.contains("not retried"), "{text}");
    text
}

#[tokio::test]
async fn crash_mid_call_fails_clearly_is_not_replayed_and_reconnects() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("crash.log");
    let config = ServerConfig::stdio("tiny", tiny_server(), Vec::<String>::new())
        .with_env("TINY_CRASH_LOG", log.display().to_string());
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let first_pid = manager.server_pid("tiny").unwrap();

    let text = crash_fails_clearly(&manager).await;
    assert!(
        text.contains("crash: exiting now"),
        "stderr tail expected: {text}"
    );
    // How it ended: `os._exit(3)`, `process::exit(3)`.
    assert!(
        text.contains("disconnected during tools/call \"crash\" (the server exited with status 3)"),
        "exit status expected: {text}"
    );
    assert!(wait_dead(first_pid, Duration::from_secs(3)).await);
    assert!(matches!(manager.servers()[0].state, ServerState::Failed(_)));

    // The next use reconnects (a new process) and works.
    let r = call(&tool(&manager, "mcp__tiny__echo"), json!({"text": "back"}))
        .await
        .unwrap();
    assert_eq!(r.data.content.joined_text(), "back");
    let second_pid = manager.server_pid("tiny").unwrap();
    assert_ne!(first_pid, second_pid);
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    // The crashing call ran exactly once: never replayed.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
    manager.shutdown().await;
}

/// A server started by a wrapper that leaves a helper behind holding its stdout (`sleep &`
/// in a script, then `exec` the server): when the server crashes mid-call, the pipe stays
/// open, but the call still fails at once with how the server ended (its process group is
/// killed on the failed exit), instead of waiting for its idle timeout.
///
/// A helper in a session of its own (`setsid`, Node's `detached: true`) is out of the
/// group's reach and keeps the pipe open: the failed exit still ends the connection.
#[tokio::test]
async fn a_crash_is_seen_while_a_helper_still_holds_the_servers_stdout() {
    let dir = tempfile::tempdir().unwrap();
    for (helper, number, in_group) in [("sleep", 4242, true), ("setsid sleep", 4243, false)] {
        let marker = format!("{number}.{}", std::process::id());
        let script = format!("{helper} {marker} & exec '{}'", tiny_server());
        let config = ServerConfig::stdio("tiny", "sh", ["-c", script.as_str()]).with_env(
            "TINY_CRASH_LOG",
            dir.path().join("crash.log").display().to_string(),
        );
        let (manager, diags) = McpManager::connect(vec![config], opts()).await;
        assert!(diags.is_empty(), "{diags:?}");
        // A hang guard, far below the idle timeout the call would otherwise wait out.
        let crashed = tokio::time::timeout(Duration::from_secs(60), crash_fails_clearly(&manager))
            .await
            .expect("the call waited on for a server that had exited");
        assert!(
            crashed.contains("(the server exited with status 3)"),
            "{helper}: {crashed}"
        );
        manager.shutdown().await;
        if in_group {
            assert!(
                processes_with_arg(&marker).is_empty(),
                "the helper outlived the server"
            );
        }
        for pid in processes_with_arg(&marker) {
            let _ = std::process::Command::new("kill")
                .arg(pid.to_string())
                .status();
        }
    }
}

/// A server that answers `initialize` with a protocol version this client does not know is
/// disconnected, with an error naming the version, as the MCP lifecycle (and the
/// TypeScript SDK) have it.
#[tokio::test]
async fn a_server_with_an_unknown_protocol_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("old.py");
    std::fs::write(
        &script,
        r#"import sys, json
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        result = {"protocolVersion": "1999-01-01", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "old", "version": "0"}}
    elif msg.get("method") == "tools/list":
        result = {"tools": []}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#,
    )
    .unwrap();
    let config = ServerConfig::stdio("old", "python3", [script.display().to_string()]);
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0]
            .message
            .contains("protocol version \"1999-01-01\", which this client does not support"),
        "{diags:?}"
    );
    assert!(matches!(manager.servers()[0].state, ServerState::Failed(_)));
    manager.shutdown().await;
}

/// What the TypeScript SDK (Claude Code's client) tolerates on a server's stdout is
/// tolerated here: a structured log line with an `id` and an `error` (no `"jsonrpc"`), a
/// response sent twice, and request 2 answered as `"id": "2"` (twice, too) or `"id": 2.0`.
/// Each call gets its answer, and the connection stays up.
#[tokio::test]
async fn a_sloppy_server_that_works_in_claude_code_works_here() {
    let dir = tempfile::tempdir().unwrap();
    let config = scripted_server(
        dir.path(),
        "sloppy",
        r#"mode = args.get("mode")
out({"level": "error", "msg": "upstream fetch failed", "id": "req-42", "error": "ECONNRESET"})
rid = str(i) if mode in ("strid", "strdup") else float(i) if mode == "float" else i
answer = {"jsonrpc": "2.0", "id": rid,
          "result": {"content": [{"type": "text", "text": "done " + mode}]}}
out(answer)
if mode in ("dup", "strdup"):
    out(answer)"#,
    );
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let pid = manager.server_pid("sloppy");
    let t = tool(&manager, "mcp__sloppy__t");
    for mode in ["log", "dup", "strid", "dup", "strdup", "float", "log"] {
        let r = call(&t, json!({"mode": mode}))
            .await
            .unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert_eq!(r.data.content.joined_text(), format!("done {mode}"));
    }
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    let log = manager.stderr("sloppy").unwrap_or_default();
    assert!(log.contains("a second response to request"), "{log}");
    // The same connection throughout: no duplicate was taken for a protocol error.
    assert!(!log.contains("never sent"), "{log}");
    assert_eq!(manager.server_pid("sloppy"), pid);
    manager.shutdown().await;
}

/// A launcher that hands its pipes to the real server and exits with status 0 (`server &`
/// in a wrapper): the connection lives on the server, and the close still ends the server
/// that ignores the end of its input (its group is killed: the launcher's status was read
/// without reaping it, so its id still names the group).
#[tokio::test]
async fn a_server_a_launcher_handed_its_pipes_to_ends_with_the_manager() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("stubborn.py");
    std::fs::write(
        &script,
        r#"import sys, json, time
for line in sys.stdin:
    msg = json.loads(line)
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "stubborn", "version": "0"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "ping", "description": "p", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "pong"}]}
    else:
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
time.sleep(1000)
"#,
    )
    .unwrap();
    let launcher = format!(
        "exec 3<&0; python3 '{}' <&3 3<&- & exit 0",
        script.display()
    );
    let config = ServerConfig::stdio("handed", "sh", ["-c", launcher.as_str()]);
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    // Past the watcher's look at the launcher's exit.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let r = call(&tool(&manager, "mcp__handed__ping"), json!({}))
        .await
        .unwrap();
    assert_eq!(r.data.content.joined_text(), "pong");
    manager.shutdown().await;
    let marker = script.display().to_string();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !processes_with_arg(&marker).is_empty() {
        assert!(Instant::now() < deadline, "the server outlived the manager");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn garbage_on_stdout_is_skipped() {
    let manager = tiny(&["--garbage"], opts()).await;
    let r = call(&tool(&manager, "mcp__tiny__echo"), json!({"text": "clean"}))
        .await
        .unwrap();
    assert_eq!(r.data.content.joined_text(), "clean");
    manager.shutdown().await;
}

fn processes_with_arg(arg: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline"))
            && cmdline.split(|b| *b == 0).any(|a| a == arg.as_bytes())
            && common::alive(pid)
        {
            found.push(pid);
        }
    }
    found
}

/// A stdio server that starts only once `other` has started: `touch <dir>/<me>`, wait for
/// `<dir>/<other>`, then run the tiny server.
fn gated(me: &str, other: &str, dir: &std::path::Path) -> ServerConfig {
    let script = format!(
        "touch '{d}/{me}'; while [ ! -e '{d}/{other}' ]; do sleep 0.02; done; exec \"$0\"",
        d = dir.display()
    );
    ServerConfig::stdio(me, "sh", ["-c".to_owned(), script, tiny_server()])
}

#[tokio::test]
async fn startup_timeout_never_blocks_the_other_servers() {
    let unique = format!("1000.{}", std::process::id());
    let gates = tempfile::tempdir().unwrap();
    let mut o = opts();
    o.startup_timeout = Duration::from_secs(20);
    let (manager, diags) = McpManager::connect(
        vec![
            // Never answers `initialize`; its own timeout (1 s) overrides MCP_TIMEOUT (20 s).
            ServerConfig::stdio("sleeper", "sleep", [unique.as_str()])
                .with_timeout(Duration::from_secs(1)),
            // Each of these two starts only after the other one started: they can only both
            // connect when servers are started concurrently (in sequence, the first would wait
            // for the second forever and time out).
            gated("gate-a", "gate-b", gates.path()),
            gated("gate-b", "gate-a", gates.path()),
            ServerConfig::stdio(
                "nothere",
                "/nonexistent/toolwright-mcp-server",
                Vec::<String>::new(),
            ),
        ],
        o,
    )
    .await;
    let sleeper = diags
        .iter()
        .find(|d| d.server.as_deref() == Some("sleeper"))
        .unwrap();
    assert_eq!(sleeper.severity, Severity::Error);
    assert!(
        sleeper
            .message
            .contains("did not complete initialization within 1 s"),
        "{sleeper}"
    );
    let missing = diags
        .iter()
        .find(|d| d.server.as_deref() == Some("nothere"))
        .unwrap();
    assert!(missing.message.contains("cannot start"), "{missing}");
    assert_eq!(diags.len(), 2, "{diags:?}");
    // Both gated servers are fully there.
    assert_eq!(manager.tools().len(), 2 * TINY_TOOLS);
    let connected: Vec<String> = manager
        .servers()
        .into_iter()
        .filter(|s| s.state == ServerState::Connected)
        .map(|s| s.name)
        .collect();
    assert_eq!(connected, ["gate-a", "gate-b"]);
    // The hung child was killed.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_with_arg(&unique).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the sleeping server was left running"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let states = manager.servers();
    let sleeper = states.iter().find(|s| s.name == "sleeper").unwrap();
    assert!(matches!(&sleeper.state, ServerState::Failed(m) if m.contains("initialization")));
    manager.shutdown().await;
}

#[tokio::test]
async fn list_changed_refreshes_the_tool_list() {
    let changes = Arc::new(AtomicUsize::new(0));
    let seen = changes.clone();
    let mut o = opts();
    o.on_tools_changed = Some(Arc::new(move |server: &str| {
        assert_eq!(server, "tiny");
        seen.fetch_add(1, Ordering::SeqCst);
    }));
    let manager = tiny(&[], o).await;
    let refresh = manager.refresh_tools_hook();
    assert!(!refresh().iter().any(|t| t.name() == "mcp__tiny__dynamic"));
    call(&tool(&manager, "mcp__tiny__add_tool"), json!({}))
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !refresh().iter().any(|t| t.name() == "mcp__tiny__dynamic") {
        assert!(Instant::now() < deadline, "list_changed was not handled");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(changes.load(Ordering::SeqCst) >= 1);
    let r = call(&tool(&manager, "mcp__tiny__dynamic"), json!({}))
        .await
        .unwrap();
    assert_eq!(r.data.content.joined_text(), "dynamic ok");
    manager.shutdown().await;
}

/// A burst of `tools/list_changed` notifications is coalesced: one listing runs at a time,
/// and one more after it for everything that came meanwhile, not one per notification.
#[tokio::test]
async fn a_burst_of_list_changed_is_coalesced() {
    let manager = tiny(&[], opts()).await;
    let lists = |m: &McpManager| {
        m.stderr("tiny")
            .unwrap_or_default()
            .matches("tools/list: from the start")
            .count()
    };
    assert!(stderr_contains(&manager, "tools/list: from the start").await);
    let before = lists(&manager);
    call(&tool(&manager, "mcp__tiny__add_tool"), json!({"times": 50}))
        .await
        .unwrap();
    // Settled: the count of listings stays the same for a second.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = (lists(&manager), Instant::now());
    while last.1.elapsed() < Duration::from_secs(1) {
        assert!(Instant::now() < deadline, "the listings never settled");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = lists(&manager);
        if now != last.0 {
            last = (now, Instant::now());
        }
    }
    let after = last.0 - before;
    // However the 50 arrive, far fewer listings than notifications.
    assert!(
        (1..=10).contains(&after),
        "{after} listings for 50 notifications"
    );
    assert!(
        manager
            .tools()
            .iter()
            .any(|t| t.name() == "mcp__tiny__dynamic")
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn children_end_with_the_manager_and_see_the_project_dir() {
    let project = tempfile::tempdir().unwrap();
    let manager = tiny(&[], McpOptions::new(project.path())).await;
    let pid = manager.server_pid("tiny").unwrap();
    assert!(common::alive(pid));
    let expected = format!("CLAUDE_PROJECT_DIR={}", project.path().display());
    assert!(
        stderr_contains(&manager, &expected).await,
        "{:?}",
        manager.stderr("tiny")
    );
    manager.shutdown().await;
    assert!(
        wait_dead(pid, Duration::from_secs(5)).await,
        "shutdown left the server running"
    );
    // Calls after shutdown fail clearly.
    let err = manager.reconnect("tiny").await.unwrap_err();
    assert!(err.to_string().contains("shut down"), "{err}");

    // Dropping the manager (no shutdown) kills the child too.
    let manager = tiny(&[], opts()).await;
    let pid = manager.server_pid("tiny").unwrap();
    let echo = tool(&manager, "mcp__tiny__echo");
    drop(manager);
    assert!(
        wait_dead(pid, Duration::from_secs(5)).await,
        "drop left the server running"
    );
    let err = call(&echo, json!({"text": "x"})).await.unwrap_err();
    assert!(err.to_string().contains("MCP server \"tiny\""), "{err}");
}

/// `roots/list` is answered with the project directory, then the session's additional
/// working directories (`--add-dir`, `additionalDirectories`), as Claude Code does.
#[tokio::test]
async fn roots_are_the_project_dir_and_the_additional_directories() {
    let project = tempfile::tempdir().unwrap();
    let extra_a = tempfile::tempdir().unwrap();
    let extra_b = tempfile::tempdir().unwrap();
    let mut o = McpOptions::new(project.path());
    o.additional_directories = vec![extra_a.path().to_owned(), extra_b.path().to_owned()];
    let manager = tiny(&["--print-roots"], o).await;
    assert!(
        stderr_contains(&manager, "roots: ").await,
        "{:?}",
        manager.stderr("tiny")
    );
    let log = manager.stderr("tiny").unwrap_or_default();
    let line = log.lines().find_map(|l| l.strip_prefix("roots: ")).unwrap();
    let answer: serde_json::Value =
        serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    let uris: Vec<&str> = answer["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = [project.path(), extra_a.path(), extra_b.path()]
        .iter()
        .map(|p| format!("file://{}", p.display()))
        .collect();
    assert_eq!(uris, expected, "{answer}");
    assert_eq!(
        answer["roots"][1]["name"],
        json!(extra_a.path().file_name().unwrap().to_str().unwrap())
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn unsupported_transports_are_reported() {
    let mut sse = ServerConfig::http("legacy", "http://127.0.0.1:9/sse");
    sse.transport = tools_mcp::TransportConfig::Sse {
        url: "http://127.0.0.1:9/sse".into(),
        headers: Default::default(),
    };
    let (manager, diags) = McpManager::connect(
        vec![
            sse,
            ServerConfig::http(
                "refused",
                format!("http://127.0.0.1:{}/mcp", common::free_port()),
            ),
        ],
        opts(),
    )
    .await;
    assert_eq!(diags.len(), 2, "{diags:?}");
    let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert!(
        text[0].contains("\"legacy\"") && text[0].contains("SSE"),
        "{text:?}"
    );
    assert!(
        text[1].contains("\"refused\"") && text[1].contains("failed to connect"),
        "{text:?}"
    );
    assert!(manager.tools().is_empty());
}

#[tokio::test]
async fn per_server_timeout_overrides_mcp_tool_timeout() {
    // MCP_TOOL_TIMEOUT stays at its default (about 28 hours): only the server's own
    // `timeout` can end this call.
    let (manager, diags) = McpManager::connect(
        vec![
            ServerConfig::stdio("tiny", tiny_server(), Vec::<String>::new())
                .with_timeout(Duration::from_secs(1)),
        ],
        opts(),
    )
    .await;
    assert!(diags.is_empty(), "{diags:?}");
    hang_times_out(&manager, "1 s").await;
    manager.shutdown().await;
}

#[tokio::test]
async fn protocol_errors_name_the_server_method_tool_and_code() {
    let manager = tiny(&[], opts()).await;
    let err = call(&tool(&manager, "mcp__tiny__protocol_error"), json!({}))
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP server \"tiny\" returned an error for tools/call \"protocol_error\": \
         bad params on purpose (code -32602)"
    );
    // A JSON-RPC error is an answer: the connection stays up.
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    let r = call(&tool(&manager, "mcp__tiny__echo"), json!({"text": "fine"}))
        .await
        .unwrap();
    assert_eq!(r.data.content.joined_text(), "fine");
    manager.shutdown().await;
}

#[tokio::test]
async fn an_invalid_schema_is_repaired_and_the_tool_still_works() {
    let manager = tiny(&[], opts()).await;
    let bad = tool(&manager, "mcp__tiny__bad_schema");
    // Sent: {"type": "array", "properties": 5, "required": "x", "anyOf": "nope", "items": ...}
    let schema = bad.input_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"], json!({}));
    assert!(schema.get("required").is_none() && schema.get("anyOf").is_none());
    let r = call(&bad, json!({"k": 1})).await.unwrap();
    assert_eq!(r.data.content.joined_text(), r#"bad_schema {"k":1}"#);
    // The other tools are unaffected.
    assert_eq!(manager.tools().len(), TINY_TOOLS);
    manager.shutdown().await;
}

#[tokio::test]
async fn server_requests_without_host_handlers_are_declined_cleanly() {
    let manager = tiny(&[], opts()).await;
    // The tiny server sends these whatever the client advertised.
    let r = call(&tool(&manager, "mcp__tiny__ask"), json!({}))
        .await
        .unwrap();
    let text = r.data.content.joined_text();
    assert!(
        text.starts_with("result: ") && text.contains(r#""action":"decline""#),
        "{text}"
    );
    let r = call(&tool(&manager, "mcp__tiny__sample"), json!({}))
        .await
        .unwrap();
    let text = r.data.content.joined_text();
    assert!(
        text.starts_with("error: ") && text.contains("sampling is not supported by this client"),
        "{text}"
    );
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    manager.shutdown().await;
}

/// A user who takes a while to fill in a form.
struct SlowUser;

#[tool_core::async_trait]
impl tools_mcp::ElicitationHandler for SlowUser {
    async fn elicit(&self, _server: &str, _request: serde_json::Value) -> serde_json::Value {
        tokio::time::sleep(Duration::from_millis(2500)).await;
        json!({"action": "accept", "content": {"name": "Ada"}})
    }
}

/// While the user answers the server's elicitation, the call waiting on it is not idle: the
/// idle limit (700 ms here) is not the user's time to answer.
#[tokio::test]
async fn a_call_waiting_for_the_users_answer_is_not_idle() {
    let mut o = opts();
    o.tool_idle_timeout = Some(Duration::from_millis(700));
    o.elicitation = Some(Arc::new(SlowUser));
    let manager = tiny(&[], o).await;
    let r = tokio::time::timeout(
        Duration::from_secs(30),
        call(&tool(&manager, "mcp__tiny__ask"), json!({})),
    )
    .await
    .expect("the call ended")
    .unwrap();
    let text = r.data.content.joined_text();
    assert!(
        text.starts_with("result: ") && text.contains(r#""name":"Ada""#),
        "{text}"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn stderr_is_kept_in_a_bounded_buffer() {
    let mut o = opts();
    o.stderr_capacity = 1024;
    let manager = tiny(&[], o).await;
    assert!(stderr_contains(&manager, "tiny_server: CLAUDE_PROJECT_DIR=").await);
    call(
        &tool(&manager, "mcp__tiny__noise"),
        json!({"bytes": 100_000}),
    )
    .await
    .unwrap();
    assert!(stderr_contains(&manager, "noise: done").await);
    let log = manager.stderr("tiny").unwrap();
    assert!(log.len() <= 1024, "{} bytes kept", log.len());
    // The newest bytes are kept, the oldest dropped.
    assert!(log.ends_with("nnnn\nnoise: done\n"), "{log:?}");
    assert!(!log.contains("CLAUDE_PROJECT_DIR"), "{log:?}");
    manager.shutdown().await;
}

#[tokio::test]
async fn server_always_load_means_never_deferred() {
    let mut config = ServerConfig::stdio("tiny", tiny_server(), Vec::<String>::new());
    config.always_load = true;
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let tools = manager.tools();
    assert_eq!(tools.len(), TINY_TOOLS);
    assert!(tools.iter().all(|t| t.always_load() && !t.should_defer()));
    manager.shutdown().await;
}

#[tokio::test]
async fn annotations_are_hints_never_an_allow() {
    let manager = tiny(&[], opts()).await;
    let context = ctx();
    for name in [
        "mcp__tiny__echo",  // readOnlyHint
        "mcp__tiny__crash", // destructiveHint, openWorldHint
        "mcp__tiny__flags", // _meta flags
    ] {
        let t = tool(&manager, name);
        assert_eq!(
            t.check_permissions(&json!({}), &context).await,
            PermissionResult::passthrough(),
            "{name}"
        );
    }
    manager.shutdown().await;
}

/// A server killed by someone else mid-call (the OOM killer, `kill -9`): the error says so.
#[tokio::test]
async fn a_server_killed_mid_call_is_reported_with_its_signal() {
    let manager = tiny(&[], opts()).await;
    let pid = manager.server_pid("tiny").unwrap();
    let hang = tool(&manager, "mcp__tiny__hang");
    let call = tokio::spawn(async move { call(&hang, json!({})).await });
    assert!(stderr_contains(&manager, "hang: started").await);
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let text = call.await.unwrap().unwrap_err().to_string();
    assert!(
        text.contains(
            "disconnected during tools/call \"hang\" (the server was killed by signal 9 (SIGKILL))"
        ),
        "{text}"
    );
    manager.shutdown().await;
}

/// The resource tools only read what a server the user configured offers: they allow
/// themselves, as Claude Code's ask for no approval. (A deny rule still stops them: the
/// permission engine looks at deny rules before a tool's own check.)
#[tokio::test]
async fn the_resource_tools_need_no_approval() {
    let manager = tiny(&["--resources-only"], opts()).await;
    let context = ctx();
    for (name, input) in [
        ("ListMcpResourcesTool", json!({})),
        ("ListMcpResourcesTool", json!({"server": "tiny"})),
        (
            "ReadMcpResourceTool",
            json!({"server": "tiny", "uri": "tiny://note"}),
        ),
    ] {
        let t = tool(&manager, name);
        assert_eq!(
            t.check_permissions(&input, &context).await,
            PermissionResult::allow(),
            "{name}"
        );
    }
    manager.shutdown().await;
}

#[tokio::test]
async fn eof_mid_call_with_the_process_still_running() {
    // `sh` runs the tiny server, then, once it has exited, closes its stdout and sleeps: the
    // client sees EOF from a process that keeps running.
    let config = ServerConfig::stdio(
        "tiny",
        "sh",
        [
            "-c".to_owned(),
            "\"$0\"; exec sleep 1000 >&-".to_owned(),
            tiny_server(),
        ],
    );
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let pid = manager.server_pid("tiny").unwrap();
    let text = crash_fails_clearly(&manager).await;
    // It did not end by itself: we killed it, which is no news about the server.
    assert!(
        !text.contains("exited with") && !text.contains("killed by signal"),
        "{text}"
    );
    // The process that stopped talking was killed (it would sleep for 1000 s).
    assert!(
        wait_dead(pid, Duration::from_secs(10)).await,
        "the silent process was left running"
    );
    // The next use starts a new one.
    let r = call(&tool(&manager, "mcp__tiny__echo"), json!({"text": "back"}))
        .await
        .unwrap();
    assert_eq!(r.data.content.joined_text(), "back");
    assert_ne!(manager.server_pid("tiny"), Some(pid));
    manager.shutdown().await;
}

/// A server that fails at startup says why on stderr as it dies, and its stdout can end
/// before those last words are in the log: here a helper process of the server writes them
/// 300 ms after the server's stdout closed. The error waits for the stderr pipe to end
/// (within `last_words_wait`), so they are in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_start_reports_what_the_server_wrote_as_it_died() {
    // The helper leaves the server's process group (setsid) and closes its copy of stdout
    // before the server exits, so the server's end is seen at once and the helper lives on.
    let script = "setsid sh -c \"exec >&-; sleep 0.5; echo 'cannot open the database: permission denied' >&2\" & sleep 0.2; exit 1";
    let config = ServerConfig::stdio("late", "sh", ["-c", script]);
    // Room for a loaded machine to start the helper; the wait ends once stderr does.
    let mut o = opts();
    o.last_words_wait = Duration::from_secs(10);
    let (manager, diags) = McpManager::connect(vec![config], o).await;
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0]
            .message
            .contains("cannot open the database: permission denied"),
        "the server's last words are missing: {diags:?}"
    );
    // How it ended, and no Rust type names.
    assert!(
        diags[0]
            .message
            .contains("; the server exited with status 1"),
        "{diags:?}"
    );
    assert!(!diags[0].message.contains("rmcp::"), "{diags:?}");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_failed_server_is_retried_with_backoff_then_reconnects() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts.log");
    let ready = dir.path().join("ready");
    // Logs every start; exits at once until `ready` exists.
    let script = format!(
        "echo start >> '{}'; [ -e '{}' ] || exit 1; exec \"$0\"",
        starts.display(),
        ready.display()
    );
    let config = ServerConfig::stdio("tiny", "sh", ["-c".to_owned(), script, tiny_server()]);
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(diags[0].message.contains("failed to connect"), "{diags:?}");
    assert!(manager.tools().is_empty());

    // Five uses in a row start the server at most once more (1 s, then 2 s, 4 s, ... between
    // attempts); without backoff each would start it.
    let mut errors = Vec::new();
    for _ in 0..5 {
        errors.push(manager.reconnect("tiny").await.unwrap_err().to_string());
    }
    assert!(
        errors.iter().all(|e| e.contains("MCP server \"tiny\"")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.contains("next reconnection attempt in")),
        "{errors:?}"
    );
    let count = |path: &std::path::Path| std::fs::read_to_string(path).unwrap().lines().count();
    assert!(count(&starts) <= 2, "{} starts", count(&starts));

    // Once the server can start, a later use (after the backoff) connects it.
    std::fs::write(&ready, "").unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while let Err(e) = manager.reconnect("tiny").await {
        assert!(Instant::now() < deadline, "never reconnected: {e}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    let r = call(&tool(&manager, "mcp__tiny__echo"), json!({"text": "up"}))
        .await
        .unwrap();
    assert_eq!(r.data.content.joined_text(), "up");
    manager.shutdown().await;
}

#[tokio::test]
async fn a_request_over_a_mebibyte_is_answered_like_any_other() {
    // Too large for the id check to read: its answer must still be accepted, not taken for
    // a response to a request never sent (which killed the server after the call ran).
    let manager = tiny(&[], opts()).await;
    let echo = tool(&manager, "mcp__tiny__echo");
    // A large input with a small answer (as writing a big file is).
    let r = call(
        &tool(&manager, "mcp__tiny__structured"),
        json!({"pad": "y".repeat(1_500_000)}),
    )
    .await
    .unwrap();
    assert_eq!(
        r.mcp_meta.unwrap().structured_content,
        Some(json!({"n": 7}))
    );
    // And the connection is still good for the next, small one.
    let r = call(&echo, json!({"text": "after"})).await.unwrap();
    assert_eq!(r.data.content, ToolResultContent::Text("after".into()));
    manager.shutdown().await;
}

#[tokio::test]
async fn what_a_server_started_ends_with_it() {
    // A launcher-style server: it starts a helper that ignores the closed stdin, then becomes
    // the server (as `npx` leaves `node`, or a wrapper script its children).
    for drop_it in [false, true] {
        let marker = format!("1000.{}{}", std::process::id(), u8::from(drop_it));
        let script = format!(
            "sleep {marker} </dev/null >/dev/null 2>&1 & exec '{}'",
            tiny_server()
        );
        let (manager, diags) = McpManager::connect(
            vec![ServerConfig::stdio("tiny", "sh", ["-c", script.as_str()])],
            opts(),
        )
        .await;
        assert!(diags.is_empty(), "{diags:?}");
        assert_eq!(processes_with_arg(&marker).len(), 1, "the helper runs");
        if drop_it {
            drop(manager);
        } else {
            manager.shutdown().await;
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !processes_with_arg(&marker).is_empty() {
            assert!(
                std::time::Instant::now() < deadline,
                "the helper outlived the server (dropped: {drop_it})"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test]
async fn credentials_in_a_server_url_stay_out_of_error_texts() {
    let url = "http://someone:pw-SECRET-1@127.0.0.1:9/mcp?key=SECRET-2";
    let (_manager, diags) =
        McpManager::connect(vec![ServerConfig::http("remote", url)], opts()).await;
    let text: String = diags.iter().map(ToString::to_string).collect();
    assert!(text.contains("remote"), "{text}");
    assert!(!text.contains("SECRET"), "{text}");
}

/// A one-letter password or query is hidden in the URL without taking its letter out of
/// the rest of the message, and a URL without a path is shown once, as written, however
/// many times the text is scrubbed on its way.
#[tokio::test]
async fn short_credentials_in_a_server_url_leave_error_texts_readable() {
    for (url, shown) in [
        (
            "http://127.0.0.1:1/mcp?e",
            "cannot connect to http://127.0.0.1:1/mcp?redacted: connection refused",
        ),
        (
            "http://user:o@127.0.0.1:1/mcp",
            "cannot connect to http://redacted@127.0.0.1:1/mcp: connection refused",
        ),
        (
            "http://127.0.0.1:1",
            "cannot connect to http://127.0.0.1:1: connection refused",
        ),
    ] {
        let (manager, diags) =
            McpManager::connect(vec![ServerConfig::http("remote", url)], opts()).await;
        let text: String = diags.iter().map(ToString::to_string).collect();
        assert!(text.contains(shown), "{url}: {text}");
        let ServerState::Failed(state) = &manager.servers()[0].state else {
            panic!("{url}: {:?}", manager.servers()[0].state);
        };
        assert!(state.contains(shown), "{url}: {state}");
        manager.shutdown().await;
    }
}

#[tokio::test]
async fn a_server_whose_tools_cannot_be_listed_is_not_kept_half_connected() {
    let (manager, diags) = McpManager::connect(
        vec![ServerConfig::stdio("tiny", tiny_server(), ["--fail-list"])],
        opts(),
    )
    .await;
    let text: String = diags.iter().map(ToString::to_string).collect();
    assert!(text.contains("tools/list failed"), "{text}");
    assert!(manager.tools().is_empty());
    assert!(
        processes_with_arg("--fail-list").is_empty() || {
            // The process is being reaped: give it a moment.
            tokio::time::sleep(Duration::from_secs(1)).await;
            processes_with_arg("--fail-list").is_empty()
        },
        "the server was left running"
    );
    // The next use waits for the backoff instead of reusing the half connection.
    let err = manager.reconnect("tiny").await.unwrap_err().to_string();
    assert!(
        err.contains("tools/list failed") || err.contains("next reconnection"),
        "{err}"
    );
    assert!(matches!(
        manager
            .servers()
            .into_iter()
            .find(|s| s.name == "tiny")
            .map(|s| s.state),
        Some(tools_mcp::ServerState::Failed(_))
    ));
}

#[tokio::test]
async fn a_server_that_never_lists_its_resources_does_not_hang_the_tool_and_is_told() {
    let mut o = opts();
    o.startup_timeout = Duration::from_millis(1500);
    let manager = tiny(&["--hang-resources"], o).await;
    let list = tool(&manager, "ListMcpResourcesTool");
    // Named: its silence is the answer, within the server's startup timeout.
    let err = call(&list, json!({"server": "tiny"})).await.unwrap_err();
    assert!(
        err.to_model_text()
            .contains("resources/list got no answer within 1500 ms"),
        "{}",
        err.to_model_text()
    );
    // The server is told the request was given up (MCP: a client SHOULD cancel a request
    // it no longer waits for).
    assert!(
        stderr_contains(&manager, ": abandoned").await,
        "the server never saw notifications/cancelled: {:?}",
        manager.stderr("tiny")
    );
    // And a cancelled call ends at once.
    let cancelled_ctx = tool_core::ToolUseContext::new(std::env::temp_dir());
    cancelled_ctx.cancellation().cancel();
    let cancelled = list
        .call(json!({}), cancelled_ctx, ProgressSender::none())
        .await;
    assert!(
        matches!(cancelled, Err(tool_core::ToolError::Cancelled(_))),
        "{cancelled:?}"
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn cancelling_a_resource_read_sends_notifications_cancelled() {
    let manager = tiny(&["--hang-resources"], opts()).await;
    let read = tool(&manager, "ReadMcpResourceTool");
    let context = ctx();
    let token = context.cancellation().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        token.cancel();
    });
    let err = tokio::time::timeout(
        Duration::from_secs(60),
        read.call(
            json!({"server": "tiny", "uri": "tiny://hang"}),
            context,
            ProgressSender::none(),
        ),
    )
    .await
    .expect("cancelling did not end the read")
    .unwrap_err();
    assert!(err.is_cancelled(), "{err}");
    assert!(
        stderr_contains(&manager, "read tiny://hang: cancelled by the client").await,
        "the server never saw notifications/cancelled: {:?}",
        manager.stderr("tiny")
    );
    assert!(
        stderr_contains(&manager, ": cancelled by the user").await,
        "the cancellation's reason is missing: {:?}",
        manager.stderr("tiny")
    );
    manager.shutdown().await;
}

#[tokio::test]
async fn a_server_whose_tool_pages_loop_fails_instead_of_listing_forever() {
    let (manager, diags) = McpManager::connect(
        vec![ServerConfig::stdio(
            "tiny",
            tiny_server(),
            ["--loop-cursor"],
        )],
        opts(),
    )
    .await;
    let text: String = diags.iter().map(ToString::to_string).collect();
    assert!(
        text.contains("tools/list failed: the server sent the cursor \"again\" twice"),
        "{text}"
    );
    assert!(manager.tools().is_empty());
    manager.shutdown().await;
}

#[tokio::test]
async fn resource_tool_inputs_go_through_the_schema_step() {
    let manager = tiny(&["--hang-resources"], opts()).await;
    let read = tool(&manager, "ReadMcpResourceTool");
    let err = read.parse_input(json!({"server": "tiny"})).unwrap_err();
    assert!(
        err.to_model_text().contains("InputValidationError"),
        "{}",
        err.to_model_text()
    );
    assert!(
        err.to_model_text().contains("uri"),
        "{}",
        err.to_model_text()
    );
    // Unknown keys are dropped, not refused (a non-strict object, as in Claude Code).
    let ok = read
        .parse_input(json!({"server": "tiny", "uri": "tiny://x", "extra": 1}))
        .unwrap();
    assert_eq!(ok, json!({"server": "tiny", "uri": "tiny://x"}));
    // A server that is not a string is refused, not read as "every server".
    let list = tool(&manager, "ListMcpResourcesTool");
    assert!(list.parse_input(json!({"server": 5})).is_err());
    manager.shutdown().await;
}

#[tokio::test]
async fn a_server_without_tools_connects_and_serves_its_resources() {
    // Declares resources only and answers tools/list with "Method not found", as the
    // TypeScript SDK's servers without tools do: it is not asked for tools.
    let manager = tiny(&["--resources-only"], opts()).await;
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    assert!(
        manager.tools().iter().all(|t| t.mcp_info().is_none()),
        "{:?}",
        manager.tools()
    );
    let list = tool(&manager, "ListMcpResourcesTool");
    let listed = call(&list, json!({"server": "tiny"}))
        .await
        .unwrap()
        .data
        .content
        .joined_text();
    assert!(listed.contains("tiny://note"), "{listed}");
    let read = tool(&manager, "ReadMcpResourceTool");
    let text = call(&read, json!({"server": "tiny", "uri": "tiny://note"}))
        .await
        .unwrap()
        .data
        .content
        .joined_text();
    assert!(text.contains("a note without tools"), "{text}");
    manager.shutdown().await;
}

/// A shutdown while a reconnection is starting the server leaves no server running: the
/// connection that completes after it is closed, not kept.
#[tokio::test]
async fn a_shutdown_during_a_reconnection_leaves_no_server_running() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("started-once");
    let pid_file = dir.path().join("second.pid");
    // Starts at once the first time; the second time notes its pid and takes a second.
    let script = format!(
        "if [ -e '{mark}' ]; then echo $$ > '{pid}.tmp'; mv '{pid}.tmp' '{pid}'; sleep 1; fi\ntouch '{mark}'\nexec '{tiny}' \"$@\"\n",
        mark = mark.display(),
        pid = pid_file.display(),
        tiny = tiny_server(),
    );
    let config = ServerConfig::stdio("tiny", "sh", ["-c".to_owned(), script, "sh".to_owned()]);
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    crash_fails_clearly(&manager).await;
    let echo = tool(&manager, "mcp__tiny__echo");
    let reconnecting = tokio::spawn(async move { call(&echo, json!({"text": "late"})).await });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pid_file.exists() {
        assert!(Instant::now() < deadline, "the reconnection never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    manager.shutdown().await;
    assert!(reconnecting.await.unwrap().is_err());
    assert!(
        wait_dead(pid, Duration::from_secs(5)).await,
        "the server started by the reconnection outlived the shutdown"
    );
    drop(manager);
}

/// A server that does not exit when its stdin closes gets SIGTERM (and time to clean up)
/// before SIGKILL, as MCP's stdio shutdown has it; it used to get SIGKILL straight away.
#[tokio::test]
async fn shutdown_sends_sigterm_before_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cleaned");
    // The server runs in the background; the wrapper outlives its stdin and cleans up on
    // SIGTERM.
    let script = format!(
        "trap 'echo cleaned > \"{}\"; exit 0' TERM; exec 3<&0; \"$0\" <&3 & wait; while :; do sleep 0.1; done",
        log.display()
    );
    let config = ServerConfig::stdio("tiny", "sh", ["-c".to_owned(), script, tiny_server()]);
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    manager.shutdown().await;
    assert_eq!(
        std::fs::read_to_string(&log).unwrap_or_default().trim(),
        "cleaned",
        "the server got no SIGTERM"
    );
}

/// A server that logs on stdout with lines such as `[DEBUG] recv {"jsonrpc":"2.0","id":3}`
/// (not JSON: it opens with a log level) keeps working; such a line used to be taken for a
/// broken JSON-RPC message and closed the connection.
#[tokio::test]
async fn log_lines_quoting_json_rpc_on_stdout_are_skipped() {
    // It prints one before serving and one before each echo answer.
    let manager = tiny(&["--bracket-logs"], opts()).await;
    let echo = tool(&manager, "mcp__tiny__echo");
    for text in ["one", "two"] {
        let r = call(&echo, json!({"text": text})).await.unwrap();
        assert_eq!(r.data.content.joined_text(), text);
    }
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    manager.shutdown().await;
}

/// A resource read that runs out of time is cancelled on the server, as a tool call is.
#[tokio::test]
async fn a_resource_read_that_times_out_is_cancelled_with_its_reason() {
    let mut o = opts();
    o.tool_timeout = Duration::from_millis(400);
    let manager = tiny(&["--hang-resources"], o).await;
    let read = tool(&manager, "ReadMcpResourceTool");
    let err = tokio::time::timeout(
        Duration::from_secs(60),
        call(&read, json!({"server": "tiny", "uri": "tiny://slow"})),
    )
    .await
    .expect("the timeout did not end the read")
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("MCP server \"tiny\": resources/read \"tiny://slow\" timed out after 400 ms"),
        "{err}"
    );
    assert!(
        stderr_contains(&manager, ": timed out").await,
        "the server never saw notifications/cancelled with the reason: {:?}",
        manager.stderr("tiny")
    );
    assert!(stderr_contains(&manager, "read tiny://slow: cancelled by the client").await);
    manager.shutdown().await;
}

/// Two servers whose names normalise alike (`my.server`, `my_server`) both connect; their
/// tools share names, and the first server's (by name) are offered, with one warning
/// naming what the other one loses.
#[tokio::test]
async fn servers_whose_names_normalise_alike_offer_the_first_ones_tools_with_a_warning() {
    let (manager, diags) = McpManager::connect(
        vec![
            ServerConfig::stdio("my_server", tiny_server(), Vec::<String>::new()),
            ServerConfig::stdio("my.server", tiny_server(), Vec::<String>::new()),
        ],
        opts(),
    )
    .await;
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].severity, Severity::Warning);
    assert_eq!(diags[0].server.as_deref(), Some("my_server"));
    assert!(
        diags[0]
            .message
            .contains(&format!("{TINY_TOOLS} of its tools are not offered"))
            && diags[0]
                .message
                .contains("mcp__my_server__echo (offered from server \"my.server\")"),
        "{}",
        diags[0]
    );
    let tools: Vec<_> = manager
        .tools()
        .into_iter()
        .filter(|t| t.mcp_info().is_some())
        .collect();
    assert_eq!(tools.len(), TINY_TOOLS);
    assert!(
        tools
            .iter()
            .all(|t| t.mcp_info().unwrap().server_name == "my.server")
    );
    let r = call(
        &tool(&manager, "mcp__my_server__echo"),
        json!({"text": "dot"}),
    )
    .await
    .unwrap();
    assert_eq!(r.data.content.joined_text(), "dot");
    assert!(
        manager
            .servers()
            .iter()
            .all(|s| s.state == ServerState::Connected)
    );
    manager.shutdown().await;
}

/// A stdio server started with `script`, which `sh` runs with the tiny server's path as
/// `$0` and `starts` holding one line per start so far (this one included) as `$n`.
fn restarting(script: &str, starts: &std::path::Path) -> ServerConfig {
    let script = format!(
        "echo start >> '{s}'; n=$(wc -l < '{s}'); {script}",
        s = starts.display()
    );
    ServerConfig::stdio("tiny", "sh", ["-c".to_owned(), script, tiny_server()])
}

/// A call whose server is being restarted (its connection died) ends at once when it is
/// cancelled, instead of when the restart ends (up to the startup timeout), and the
/// half-started server goes with everything it started.
#[tokio::test]
async fn cancelling_a_call_while_its_server_restarts_ends_it_and_leaves_nothing_running() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let pid_file = dir.path().join("second.pid");
    let marker = format!("1000.{}2", std::process::id());
    // The second start notes its pid, starts a helper in its process group (as `npx` starts
    // `node`) and takes half a minute before it becomes the server.
    let script = format!(
        "if [ \"$n\" -eq 2 ]; then sleep {marker} </dev/null >/dev/null 2>&1 & \
         echo $$ > '{p}.tmp'; mv '{p}.tmp' '{p}'; sleep 30; fi; exec \"$0\"",
        p = pid_file.display()
    );
    let mut o = opts();
    o.startup_timeout = Duration::from_secs(40);
    let (manager, diags) = McpManager::connect(vec![restarting(&script, &starts)], o).await;
    assert!(diags.is_empty(), "{diags:?}");
    crash_fails_clearly(&manager).await;

    let echo = tool(&manager, "mcp__tiny__echo");
    let context = ctx();
    let token = context.cancellation().clone();
    let reconnecting = tokio::spawn(async move {
        echo.call(json!({"text": "x"}), context, ProgressSender::none())
            .await
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while !pid_file.exists() {
        assert!(Instant::now() < deadline, "the restart never began");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(processes_with_arg(&marker).len(), 1, "the helper runs");
    token.cancel();
    let result = tokio::time::timeout(Duration::from_secs(5), reconnecting)
        .await
        .expect("the cancellation was not seen until the restart ended")
        .unwrap();
    assert!(
        matches!(result, Err(tool_core::ToolError::Cancelled(_))),
        "{result:?}"
    );
    assert!(
        wait_dead(pid, Duration::from_secs(5)).await,
        "the half-started server was left running"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_with_arg(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "what the half-started server started was left running"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The abandoned start is no failure: the next use starts the server at once.
    let r = call(&tool(&manager, "mcp__tiny__echo"), json!({"text": "back"}))
        .await
        .unwrap();
    assert_eq!(r.data.content.joined_text(), "back");
    manager.shutdown().await;
}

/// A manager whose server crashed, and an echo call reconnecting it, stuck listing the tools
/// (the second start answers `tools/list` only after a minute): the manager, the call's
/// cancellation token and the call.
async fn a_reconnection_stuck_listing_tools(
    dir: &std::path::Path,
) -> (
    McpManager,
    tool_core::CancellationToken,
    tokio::task::JoinHandle<Result<tool_core::ToolResult, tool_core::ToolError>>,
) {
    let starts = dir.join("starts");
    let script = "if [ \"$n\" -eq 2 ]; then exec \"$0\" --slow-list; fi; exec \"$0\"";
    let (manager, diags) = McpManager::connect(vec![restarting(script, &starts)], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    crash_fails_clearly(&manager).await;
    let echo = tool(&manager, "mcp__tiny__echo");
    let context = ctx();
    let token = context.cancellation().clone();
    let reconnecting = tokio::spawn(async move {
        echo.call(json!({"text": "x"}), context, ProgressSender::none())
            .await
    });
    assert!(
        stderr_contains(&manager, "tools/list: slow").await,
        "the reconnection never listed the tools: {:?}",
        manager.stderr("tiny")
    );
    (manager, token, reconnecting)
}

/// A reconnection abandoned while it lists the server's tools (the call that was making it
/// was cancelled) is not kept as a connection whose tools were never listed: it is killed,
/// and the next use connects afresh.
#[tokio::test]
async fn a_reconnection_cancelled_while_listing_tools_is_not_kept() {
    let dir = tempfile::tempdir().unwrap();
    let (manager, token, reconnecting) = a_reconnection_stuck_listing_tools(dir.path()).await;
    let pid = manager.server_pid("tiny").expect("the listing connection");
    token.cancel();
    let result = tokio::time::timeout(Duration::from_secs(5), reconnecting)
        .await
        .expect("the cancellation was not seen until the listing ended")
        .unwrap();
    assert!(
        matches!(result, Err(tool_core::ToolError::Cancelled(_))),
        "{result:?}"
    );
    assert!(
        matches!(&manager.servers()[0].state, ServerState::Failed(why) if why.contains("abandoned")),
        "{:?}",
        manager.servers()[0].state
    );
    assert!(
        wait_dead(pid, Duration::from_secs(5)).await,
        "the abandoned connection's server was left running"
    );
    let r = call(&tool(&manager, "mcp__tiny__echo"), json!({"text": "back"}))
        .await
        .unwrap();
    assert_eq!(r.data.content.joined_text(), "back");
    assert_ne!(manager.server_pid("tiny"), Some(pid));
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    manager.shutdown().await;
}

/// A call that comes while another call's reconnection is still listing the tools waits for
/// that listing instead of using the half-ready connection: when the first call is cancelled
/// and its connection killed, the second is not taken down with it.
#[tokio::test]
async fn a_call_during_another_calls_unfinished_reconnection_survives_its_cancellation() {
    let dir = tempfile::tempdir().unwrap();
    let (manager, token, reconnecting) = a_reconnection_stuck_listing_tools(dir.path()).await;
    // A second call, half a second long, starts while the listing hangs.
    let ticks = tool(&manager, "mcp__tiny__ticks");
    let second =
        tokio::spawn(async move { call(&ticks, json!({"count": 5, "every_ms": 100})).await });
    tokio::time::sleep(Duration::from_millis(200)).await;
    token.cancel();
    let first = tokio::time::timeout(Duration::from_secs(5), reconnecting)
        .await
        .expect("the cancellation was not seen until the listing ended")
        .unwrap();
    assert!(
        matches!(first, Err(tool_core::ToolError::Cancelled(_))),
        "{first:?}"
    );
    let second = tokio::time::timeout(Duration::from_secs(20), second)
        .await
        .expect("the second call never ended")
        .unwrap();
    assert!(
        second.is_ok(),
        "the second call went down with the first: {second:?}"
    );
    manager.shutdown().await;
}

/// Whether `key` is a property name the Anthropic API takes: `^[a-zA-Z0-9_.-]{1,64}$`.
fn api_key(key: &str) -> bool {
    (1..=64).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Every `required` in `schema` (at any depth) is an array, and no `type` is unknown.
fn nested_keywords_are_sane(schema: &serde_json::Value) -> bool {
    const TYPES: &[&str] = &[
        "array", "boolean", "integer", "null", "number", "object", "string",
    ];
    match schema {
        serde_json::Value::Object(map) => map.iter().all(|(k, v)| {
            let ok = match k.as_str() {
                "required" => v.is_array(),
                "type" => match v {
                    serde_json::Value::String(t) => TYPES.contains(&t.as_str()),
                    serde_json::Value::Array(ts) => ts
                        .iter()
                        .all(|t| t.as_str().is_some_and(|t| TYPES.contains(&t))),
                    _ => false,
                },
                "items" | "additionalProperties" | "not" => v.is_object() || v.is_boolean(),
                "anyOf" | "oneOf" | "allOf" => v.is_array(),
                "minLength" | "maxLength" => v.is_u64(),
                _ => true,
            };
            ok && nested_keywords_are_sane(v)
        }),
        serde_json::Value::Array(items) => items.iter().all(nested_keywords_are_sane),
        _ => true,
    }
}

/// A tool whose property names the model API refuses (`$filter`, `StartTime<`,
/// `settings[include_credits]`, `user name`) is offered with names it takes, `required` in
/// step, nested keywords of the wrong type dropped; a call with the new names reaches the
/// server under the names it declared.
#[tokio::test]
async fn property_names_the_model_api_refuses_are_renamed_and_mapped_back() {
    let manager = tiny(&[], opts()).await;
    let odd = tool(&manager, "mcp__tiny__odd_keys");
    let schema = odd.input_schema();
    let props = schema["properties"].as_object().unwrap();
    assert!(props.keys().all(|k| api_key(k)), "{schema}");
    assert!(nested_keywords_are_sane(&schema), "{schema}");
    // `_filter` was taken by a property of its own: `$filter` becomes `_filter_2`.
    let names: Vec<&str> = props.keys().map(String::as_str).collect();
    for name in [
        "_filter",
        "_filter_2",
        "StartTime_",
        "settings_include_credits_",
        "user_name",
        "nested",
    ] {
        assert!(names.contains(&name), "{name} missing: {names:?}");
    }
    assert_eq!(schema["required"], json!(["_filter_2", "nested"]));
    assert_eq!(
        props["_filter"],
        json!({"description": "a valid name already"})
    );
    // A name that is no type drops the whole `type` (no constraint, never a narrower one).
    assert_eq!(props["nested"]["properties"]["deep"], json!({}));

    let r = call(
        &odd,
        json!({"_filter_2": "f", "_filter": "own", "StartTime_": "t",
               "settings_include_credits_": true, "user_name": 1, "nested": {}}),
    )
    .await
    .unwrap();
    let text = r.data.content.joined_text();
    let echoed: serde_json::Value =
        serde_json::from_str(text.strip_prefix("odd_keys ").unwrap()).unwrap();
    assert_eq!(
        echoed,
        json!({"$filter": "f", "_filter": "own", "StartTime<": "t",
               "settings[include_credits]": true, "user name": 1, "nested": {}})
    );
    manager.shutdown().await;
}

/// A server that initialises, then exits on `tools/list` (as one that checks its
/// configuration on the first request does) is reported with what it wrote as it died.
#[tokio::test]
async fn a_server_that_dies_on_tools_list_is_reported_with_its_stderr() {
    let (manager, diags) = McpManager::connect(
        vec![ServerConfig::stdio(
            "tiny",
            tiny_server(),
            ["--exit-on-list"],
        )],
        opts(),
    )
    .await;
    let text: String = diags.iter().map(ToString::to_string).collect();
    assert!(text.contains("tools/list failed"), "{text}");
    assert!(text.contains("fatal: GITHUB_TOKEN not set"), "{text}");
    assert!(text.contains("; the server exited with status 1"), "{text}");
    match &manager.servers()[0].state {
        ServerState::Failed(why) => assert!(why.contains("fatal: GITHUB_TOKEN not set"), "{why}"),
        other => panic!("{other:?}"),
    }
    manager.shutdown().await;
}

/// A `tools/list` that times out at connection is reported with the server's stderr.
#[tokio::test]
async fn a_tools_list_that_times_out_is_reported_with_the_servers_stderr() {
    let mut o = opts();
    o.startup_timeout = Duration::from_millis(1500);
    let (manager, diags) = McpManager::connect(
        vec![ServerConfig::stdio("tiny", tiny_server(), ["--slow-list"])],
        o,
    )
    .await;
    let text: String = diags.iter().map(ToString::to_string).collect();
    assert!(text.contains("tools/list timed out"), "{text}");
    assert!(text.contains("tools/list: slow"), "{text}");
    manager.shutdown().await;
}

/// A resource read its server says nothing about for the idle limit is cancelled, as a
/// tool call is (`CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT`), instead of waiting for the call
/// timeout (about 28 hours by default).
#[tokio::test]
async fn a_silent_resource_read_is_cancelled_after_the_idle_limit() {
    let mut o = opts();
    o.tool_idle_timeout = Some(Duration::from_secs(1));
    let manager = tiny(&["--hang-resources"], o).await;
    let read = tool(&manager, "ReadMcpResourceTool");
    let err = tokio::time::timeout(
        Duration::from_secs(10),
        call(&read, json!({"server": "tiny", "uri": "tiny://hang"})),
    )
    .await
    .expect("the idle limit did not end the read")
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("MCP server \"tiny\": resources/read \"tiny://hang\" sent nothing for 1 s")
            && err.contains("CLAUDE_CODE_MCP_TOOL_IDLE_TIMEOUT"),
        "{err}"
    );
    assert!(stderr_contains(&manager, "read tiny://hang: cancelled by the client").await);
    assert!(stderr_contains(&manager, ": idle").await);
    manager.shutdown().await;
}

/// `connect_in_background`: the manager is there at once with its server still connecting
/// (no tools, pending for ToolSearch); a call that needs the server meanwhile waits for that
/// connection instead of starting a second process; once connected, its tools are there (the
/// host reads them: the first connection is not announced as a change).
#[tokio::test]
async fn connecting_in_background_brings_the_tools_when_done() {
    let gates = tempfile::tempdir().unwrap();
    let gate = gates.path().join("open");
    // Waits for the gate before it becomes the tiny server.
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.02; done; exec \"$0\"",
        gate.display()
    );
    let changes = Arc::new(AtomicUsize::new(0));
    let seen = changes.clone();
    let mut o = opts();
    o.on_tools_changed = Some(Arc::new(move |server: &str| {
        assert_eq!(server, "slow");
        seen.fetch_add(1, Ordering::SeqCst);
    }));
    let (manager, early, connecting) = McpManager::connect_in_background(
        vec![ServerConfig::stdio(
            "slow",
            "sh",
            ["-c".to_owned(), script.clone(), tiny_server()],
        )],
        o,
    );
    assert!(early.is_empty(), "{early:?}");
    let connecting = tokio::spawn(connecting);
    let manager = Arc::new(manager);
    assert_eq!(manager.servers()[0].state, ServerState::Connecting);
    assert!(manager.tools().is_empty());
    assert_eq!(
        manager.client_infos()[0].state,
        tool_core::McpClientState::Pending
    );
    // The server's process is up and waiting at the gate.
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes_with_arg(&script).is_empty() {
        assert!(Instant::now() < deadline, "the server was not started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A reconnection asked for meanwhile waits for the connection being made.
    let reconnect = tokio::spawn({
        let manager = Arc::clone(&manager);
        async move { manager.reconnect("slow").await }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        processes_with_arg(&script).len(),
        1,
        "a second server was started"
    );
    assert_eq!(changes.load(Ordering::SeqCst), 0);

    std::fs::write(&gate, "").unwrap();
    let diags = connecting.await.unwrap();
    assert!(diags.is_empty(), "{diags:?}");
    reconnect.await.unwrap().unwrap();
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    assert_eq!(manager.tools().len(), TINY_TOOLS);
    assert_eq!(changes.load(Ordering::SeqCst), 0);
    assert_eq!(
        manager.client_infos()[0].state,
        tool_core::McpClientState::Connected
    );
    let r = call(&tool(&manager, "mcp__slow__echo"), json!({"text": "hi"}))
        .await
        .unwrap();
    assert!(r.data.content.joined_text().contains("hi"));
    manager.shutdown().await;
}

/// A background connection abandoned half-way (its future dropped) leaves the server failed,
/// not connecting forever, and its half-started process gone.
#[tokio::test]
async fn an_abandoned_background_connection_is_no_longer_connecting() {
    let gates = tempfile::tempdir().unwrap();
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.02; done; exec \"$0\"",
        gates.path().join("never").display()
    );
    let (manager, _, connecting) = McpManager::connect_in_background(
        vec![ServerConfig::stdio(
            "slow",
            "sh",
            ["-c".to_owned(), script.clone(), tiny_server()],
        )],
        opts(),
    );
    let connecting = tokio::spawn(connecting);
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes_with_arg(&script).is_empty() {
        assert!(Instant::now() < deadline, "the server was not started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(manager.servers()[0].state, ServerState::Connecting);
    connecting.abort();
    let _ = connecting.await;
    assert!(
        matches!(&manager.servers()[0].state, ServerState::Failed(why) if why.contains("abandoned")),
        "{:?}",
        manager.servers()[0].state
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_with_arg(&script).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the half-started server was left running"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        manager.client_infos()[0].state,
        tool_core::McpClientState::Failed
    );
}

/// A PostToolUse hook's replacement of an MCP tool's output (`updatedMCPToolOutput`) in the
/// shape the hook was given (content blocks), or as a whole `CallToolResult`, is shown as
/// the server's own content would be, not as JSON text.
#[tokio::test]
async fn a_replacement_in_the_content_blocks_shape_is_shown_as_content() {
    let manager = tiny(&[], opts()).await;
    let echo = tool(&manager, "mcp__tiny__echo");
    let shown = |v: serde_json::Value| echo.render_output(&v).unwrap();
    assert_eq!(
        shown(json!([{"type": "text", "text": "ECHO:[REDACTED]"}])),
        ToolResultContent::Text("ECHO:[REDACTED]".into())
    );
    assert_eq!(
        shown(json!({"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}))
            .joined_text(),
        "a\nb"
    );
    assert_eq!(
        shown(json!("plain")),
        ToolResultContent::Text("plain".into())
    );
    assert_eq!(
        shown(json!({"a": 1})),
        ToolResultContent::Text("{\"a\":1}".into())
    );
    assert_eq!(
        shown(json!([1, 2])),
        ToolResultContent::Text("[1,2]".into())
    );
    manager.shutdown().await;
}

/// A stdio server in Python named `name` that lists one tool, `t`, and answers `tools/call`
/// with `on_call`: Python lines that see `i` (the request's id), `args` (its arguments) and
/// `out` (writes a message).
fn scripted_server(dir: &std::path::Path, name: &str, on_call: &str) -> ServerConfig {
    let script = dir.join(format!("{name}.py"));
    let on_call: String = on_call
        .lines()
        .map(|line| format!("        {line}\n"))
        .collect();
    std::fs::write(
        &script,
        format!(
            r#"import sys, json
def out(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    m, i = msg.get("method"), msg.get("id")
    if m == "initialize":
        out({{"jsonrpc": "2.0", "id": i, "result": {{"protocolVersion": msg["params"]["protocolVersion"],
             "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "{name}", "version": "1"}}}}}})
    elif m == "tools/list":
        out({{"jsonrpc": "2.0", "id": i, "result": {{"tools": [{{"name": "t", "inputSchema": {{"type": "object"}}}}]}}}})
    elif m == "tools/call":
        args = msg["params"].get("arguments") or {{}}
{on_call}    elif i is not None:
        out({{"jsonrpc": "2.0", "id": i, "result": {{}}}})
"#
        ),
    )
    .unwrap();
    ServerConfig::stdio(name, "python3", [script.display().to_string()])
}

/// A legacy result (`toolResult`, from before `content`) is shown as its value, as Claude
/// Code shows `String(result.toolResult)` (a non-string as JSON); a text block whose `text`
/// is not a string is shown as a note with the block, not taken for no output.
#[tokio::test]
async fn a_legacy_tool_result_and_a_text_block_without_text_are_shown() {
    let dir = tempfile::tempdir().unwrap();
    let config = scripted_server(
        dir.path(),
        "scripted",
        r#"result = {"legacy": {"toolResult": "legacy"},
          "object": {"toolResult": {"n": 1}},
          "number": {"content": [{"type": "text", "text": 5}]}}[args["mode"]]
out({"jsonrpc": "2.0", "id": i, "result": result})"#,
    );
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let t = tool(&manager, "mcp__scripted__t");
    let shown = async |mode: &str| {
        call(&t, json!({"mode": mode}))
            .await
            .unwrap_or_else(|e| panic!("{mode}: {e}"))
            .data
            .content
            .joined_text()
    };
    assert_eq!(shown("legacy").await, "legacy");
    assert_eq!(shown("object").await, r#"{"n":1}"#);
    let number = shown("number").await;
    assert!(
        number.contains("\"text\" is not a string") && number.contains("5"),
        "{number}"
    );
    manager.shutdown().await;
}

/// When this client closes the connection because the server broke the protocol (a
/// response to a request never sent, a JSON-RPC version other than 2.0), the waiting call's
/// error says what the server did, not only that the connection was closed.
#[tokio::test]
async fn a_call_cut_off_by_a_protocol_error_says_what_the_server_did() {
    let dir = tempfile::tempdir().unwrap();
    let config = scripted_server(
        dir.path(),
        "scripted",
        r#"if args["mode"] == "stray":
    out({"jsonrpc": "2.0", "id": 77, "result": {"content": []}})
else:
    out({"jsonrpc": "1.0", "id": i, "result": {"content": []}})"#,
    );
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let t = tool(&manager, "mcp__scripted__t");
    for (mode, why) in [
        (
            "stray",
            "(the connection was closed: protocol error: it sent a response to request 77, \
             which was never sent)",
        ),
        (
            "version",
            "(the connection was closed: protocol error: it sent a malformed response to \
             request",
        ),
    ] {
        let err = call(&t, json!({"mode": mode}))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("disconnected during tools/call \"t\" {why}")),
            "{mode}: {err}"
        );
    }
    manager.shutdown().await;
}

/// [`McpManager::terminate`], for a host being stopped: every stdio server gets SIGTERM at
/// once (one that cleans up on it, as `toolwright serve` stops its commands, gets to: a kill
/// on the spot left their commands running), one started by a launcher that SIGTERM ends at
/// once still gets its time, and one that ignores SIGTERM is killed once the grace is over.
/// None of them ends at the end of its input.
#[tokio::test]
async fn terminate_sends_sigterm_then_kills_within_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("terminated.log");
    // The Python of a scripted server run by a prelude that sets its SIGTERM handler and,
    // once the input ends, stays.
    let server = |name: &str, on_term: &str| -> String {
        scripted_server(
            dir.path(),
            name,
            r#"out({"jsonrpc": "2.0", "id": i, "result": {"content": []}})"#,
        );
        let script = dir.path().join(format!("{name}.py"));
        format!(
            "import signal, sys, time\n{on_term}\nexec(open({script:?}).read())\ntime.sleep(1000)\n",
            script = script.display().to_string()
        )
    };
    let logs = |line: &str, delay: f64| {
        format!(
            "def on_term(*_):\n    time.sleep({delay})\n    open({:?}, 'a').write('{line}\\n')\n    sys.exit(0)\nsignal.signal(signal.SIGTERM, on_term)",
            log.display().to_string()
        )
    };
    let tidy = ServerConfig::stdio(
        "tidy",
        "python3",
        ["-c".to_owned(), server("tidy", &logs("tidy", 0.0))],
    );
    let stubborn = ServerConfig::stdio(
        "stubborn",
        "python3",
        [
            "-c".to_owned(),
            server("stubborn", "signal.signal(signal.SIGTERM, signal.SIG_IGN)"),
        ],
    );
    // The shell waits for its server, and SIGTERM ends it at once.
    let launched = ServerConfig::stdio(
        "launched",
        "sh",
        [
            "-c".to_owned(),
            r#"python3 -c "$0"; exit"#.to_owned(),
            server("launched", &logs("launched", 0.3)),
        ],
    );
    let (manager, diags) = McpManager::connect(vec![tidy, stubborn, launched], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let pids = [
        manager.server_pid("tidy").unwrap(),
        manager.server_pid("stubborn").unwrap(),
        manager.server_pid("launched").unwrap(),
    ];
    manager.terminate(Duration::from_secs(2)).await;
    for pid in pids {
        assert!(
            wait_dead(pid, Duration::from_secs(5)).await,
            "server {pid} outlived terminate"
        );
    }
    let mut lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    assert_eq!(lines, ["launched", "tidy"]);
    assert!(manager.tools().is_empty());
    let err = manager.reconnect("tidy").await.unwrap_err();
    assert!(err.to_string().contains("shut down"), "{err}");
}

/// The lines every [`python_server`] starts with: `out(m)` writes a message, `raw(b)` a line
/// of bytes as they are, `answer(i, result)` a result, `init(msg, caps)` the `initialize`
/// result, `deep(n)` arrays nested `n` levels.
const PY_PRELUDE: &str = r#"import sys, json
def out(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
def raw(b):
    sys.stdout.buffer.write(b + b"\n"); sys.stdout.buffer.flush()
def answer(i, result):
    out({"jsonrpc": "2.0", "id": i, "result": result})
def init(msg, caps={"tools": {}}):
    return {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": caps,
            "serverInfo": {"name": "py", "version": "1"}}
def deep(n):
    d = []
    for _ in range(n):
        d = [d]
    return d
for line in sys.stdin:
    msg = json.loads(line)
    m, i = msg.get("method"), msg.get("id")
    args = (msg.get("params") or {}).get("arguments") or {}
"#;

/// A stdio server in Python named `name` whose loop body is `handler` (Python lines at the
/// loop's indentation, seeing `msg`, `m`, `i`, `args` and the helpers of [`PY_PRELUDE`]).
fn python_server(dir: &std::path::Path, name: &str, handler: &str) -> ServerConfig {
    let script = dir.join(format!("{name}.py"));
    let body: String = handler.lines().map(|l| format!("    {l}\n")).collect();
    std::fs::write(&script, format!("{PY_PRELUDE}{body}")).unwrap();
    ServerConfig::stdio(name, "python3", [script.display().to_string()])
}

/// Bytes that are not UTF-8 in a server's line (a Latin-1 `é`, a lone `\xff`, a 4-byte
/// sequence cut short) read as U+FFFD, as the TypeScript SDK (Claude Code's client) decodes
/// each line: a tool description in `tools/list` and a result's text, in a short line and
/// in one over a mebibyte (handed on as it comes). The server connects, each call gets its
/// answer, and the connection (the same process) stays up.
#[tokio::test]
async fn bytes_that_are_not_utf8_read_as_replacement_characters() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_server(
        dir.path(),
        "latin",
        r#"head = b'{"jsonrpc":"2.0","id":' + json.dumps(i).encode() + b',"result":'
if m == "initialize":
    answer(i, init(msg))
elif m == "tools/list":
    raw(head + b'{"tools":[{"name":"t","description":"r\xe9sum\xe9 \xff tool","inputSchema":{"type":"object"}}]}}')
elif m == "tools/call":
    pad = b"x" * args.get("pad", 0)
    raw(head + b'{"content":[{"type":"text","text":"' + pad + b'caf\xe9 latin1 \xff \xf0\x9f\x98"}]}}')
elif i is not None:
    answer(i, {})"#,
    );
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let t = tool(&manager, "mcp__latin__t");
    assert_eq!(t.description(), "r\u{FFFD}sum\u{FFFD} \u{FFFD} tool");
    let pid = manager.server_pid("latin");
    for pad in [0, 1_500_000] {
        let text = call(&t, json!({"pad": pad}))
            .await
            .unwrap_or_else(|e| panic!("pad {pad}: {e}"))
            .data
            .content
            .joined_text();
        assert_eq!(
            text,
            format!("{}caf\u{FFFD} latin1 \u{FFFD} \u{FFFD}", "x".repeat(pad)),
            "pad {pad}"
        );
    }
    assert_eq!(manager.server_pid("latin"), pid);
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    manager.shutdown().await;
}

/// A string a Node server cut mid-emoji (`"\ud83d"`, which `JSON.parse` reads and serde_json
/// refuses) in a result and in a log notification reads as U+FFFD, and a notification cut
/// off mid-line is left out, said in the server log: each call gets its answer and the
/// connection (the same process) stays up (found by review 36: each failed the connection
/// and restarted the server, its state lost).
#[tokio::test]
async fn a_lone_surrogate_or_a_broken_notification_keeps_the_connection() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_server(
        dir.path(),
        "cut",
        r#"if m == "initialize":
    answer(i, init(msg))
elif m == "tools/list":
    answer(i, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})
elif m == "tools/call":
    raw(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"half \\ud83d"}}')
    raw(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"cut')
    raw(b'{"jsonrpc":"2.0","id":' + json.dumps(i).encode() + b',"result":{"content":[{"type":"text","text":"ab\\ud83d"}]}}')
elif i is not None:
    answer(i, {})"#,
    );
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let t = tool(&manager, "mcp__cut__t");
    let pid = manager.server_pid("cut");
    for _ in 0..2 {
        let text = call(&t, json!({}))
            .await
            .unwrap()
            .data
            .content
            .joined_text();
        assert_eq!(text, "ab\u{FFFD}");
    }
    assert_eq!(manager.server_pid("cut"), pid);
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    let note = "a notification that is not valid JSON";
    let deadline = Instant::now() + Duration::from_secs(5);
    while !manager.stderr("cut").unwrap_or_default().contains(note) {
        assert!(Instant::now() < deadline, "{:?}", manager.stderr("cut"));
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    manager.shutdown().await;
}

/// JSON nested deeper than this client reads (serde_json stops at 128 levels): a result
/// that deep fails only its own call, saying so, in a short line and in one over a
/// mebibyte, and the connection (the same process) stays up for the next call; a tool
/// whose definition is that deep is left out with a warning naming it, and the server's
/// other tools are offered. A notification that deep does no harm.
#[tokio::test]
async fn json_nested_too_deep_fails_only_its_call_or_leaves_out_its_tool() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_server(
        dir.path(),
        "deep",
        r#"if m == "initialize":
    answer(i, init(msg))
elif m == "tools/list":
    answer(i, {"tools": [{"name": "t", "inputSchema": {"type": "object"}},
                         {"name": "nested", "inputSchema": {"type": "object", "x": deep(130)}}]})
elif m == "tools/call":
    mode = args.get("mode")
    if mode == "ok":
        out({"jsonrpc": "2.0", "method": "notifications/message",
             "params": {"level": "info", "data": deep(150)}})
        answer(i, {"content": [{"type": "text", "text": "fine"}]})
    else:
        text = "x" * (1200000 if mode == "big" else 10)
        answer(i, {"content": [{"type": "text", "text": text}], "structuredContent": {"tree": deep(200)}})
elif i is not None:
    answer(i, {})"#,
    );
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert_eq!(diags[0].severity, Severity::Warning, "{diags:?}");
    assert!(
        diags[0].message.contains("\"nested\"")
            && diags[0].message.contains("nested deeper than 100 levels"),
        "{diags:?}"
    );
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    assert!(
        manager
            .tools()
            .iter()
            .all(|t| t.name() != "mcp__deep__nested")
    );
    let t = tool(&manager, "mcp__deep__t");
    let pid = manager.server_pid("deep");
    for mode in ["small", "big"] {
        let err = call(&t, json!({"mode": mode}))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("nested deeper than 100 levels") && !err.contains("not valid JSON"),
            "{mode}: {err}"
        );
        let ok = call(&t, json!({"mode": "ok"}))
            .await
            .unwrap_or_else(|e| panic!("after {mode}: {e}"));
        assert_eq!(ok.data.content.joined_text(), "fine");
    }
    assert_eq!(manager.server_pid("deep"), pid);
    manager.shutdown().await;
}

/// A server whose `initialize` answer lacks a required field says which one, in words (no
/// `CustomResult(Object {…})`), and since it was this client that closed the server's
/// input, the server's exit with status 0 that follows is not reported as news.
#[tokio::test]
async fn an_initialize_answer_without_a_required_field_names_it() {
    let dir = tempfile::tempdir().unwrap();
    for field in ["serverInfo", "capabilities", "protocolVersion"] {
        let name = field.to_lowercase();
        let config = python_server(
            dir.path(),
            &name,
            &format!(
                r#"if m == "initialize":
    result = init(msg)
    del result["{field}"]
    answer(i, result)
elif i is not None:
    answer(i, {{}})"#
            ),
        );
        let (manager, diags) = McpManager::connect(vec![config], opts()).await;
        manager.shutdown().await;
        assert_eq!(diags.len(), 1, "{diags:?}");
        let text = diags[0].to_string();
        assert!(
            text.contains(&format!("`{field}`")) && text.contains("initialize"),
            "{field}: {text}"
        );
        for leak in ["CustomResult", "Some(", "Object {", "exited with status 0"] {
            assert!(!text.contains(leak), "{leak} in: {text}");
        }
    }
}

/// A `tools/list` answer whose `tools` is not a list says so in words, not as rmcp's
/// "Unexpected response type".
#[tokio::test]
async fn a_tools_list_answer_without_a_list_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_server(
        dir.path(),
        "notlist",
        r#"if m == "initialize":
    answer(i, init(msg))
elif m == "tools/list":
    answer(i, {"tools": {"a": 1}})
elif i is not None:
    answer(i, {})"#,
    );
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    manager.shutdown().await;
    assert_eq!(diags.len(), 1, "{diags:?}");
    let text = diags[0].to_string();
    assert!(
        text.contains("tools/list failed") && text.contains("`tools` is an object, not a list"),
        "{text}"
    );
    assert!(!text.contains("Unexpected response type"), "{text}");
    assert!(!text.contains("exited with status 0"), "{text}");
}

/// Tools a server lists that cannot be offered (no `inputSchema`, a null one, an empty, a
/// non-string or no name, an entry that is no object) are each named in a warning (by
/// position when nameless) with the reason, and the server's good tools are offered; a
/// server that declares `"tools": null` (and no resources) connects with a warning saying
/// it offers no tools, instead of silently.
#[tokio::test]
async fn tools_left_out_of_a_listing_are_each_named_in_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let listing = python_server(
        dir.path(),
        "sloppy",
        r#"if m == "initialize":
    answer(i, init(msg))
elif m == "tools/list":
    o = {"type": "object"}
    answer(i, {"tools": [{"name": "noschema"}, {"name": "nullschema", "inputSchema": None},
                         {"name": "", "inputSchema": o}, {"name": 5, "inputSchema": o},
                         {"inputSchema": o}, "x", {"name": "good", "inputSchema": o}]})
elif i is not None:
    answer(i, {})"#,
    );
    let null_caps = python_server(
        dir.path(),
        "nullcaps",
        r#"if m == "initialize":
    answer(i, init(msg, {"tools": None}))
elif i is not None:
    answer(i, {})"#,
    );
    let (manager, diags) = McpManager::connect(vec![listing, null_caps], opts()).await;
    let names: Vec<String> = manager
        .tools()
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, ["mcp__sloppy__good"]);
    assert_eq!(manager.servers()[0].state, ServerState::Connected);
    manager.shutdown().await;
    assert!(
        diags.iter().all(|d| d.severity == Severity::Warning),
        "{diags:?}"
    );
    let sloppy: Vec<&str> = diags
        .iter()
        .filter(|d| d.server.as_deref() == Some("sloppy"))
        .map(|d| d.message.as_str())
        .collect();
    for (who, why) in [
        ("\"noschema\"", "inputSchema"),
        ("\"nullschema\"", "inputSchema"),
        ("#3", "no name"),
        ("#4", "not a string"),
        ("#5", "no name"),
        ("#6", "not an object"),
    ] {
        assert!(
            sloppy.iter().any(|m| m.contains(who) && m.contains(why)),
            "{who} ({why}) not in {sloppy:#?}"
        );
    }
    assert_eq!(sloppy.len(), 6, "{sloppy:#?}");
    let nullcaps: Vec<&str> = diags
        .iter()
        .filter(|d| d.server.as_deref() == Some("nullcaps"))
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(nullcaps.len(), 1, "{diags:?}");
    assert!(nullcaps[0].contains("offers no tools"), "{nullcaps:?}");
}

/// A result whose container at the depth limit holds a great many values too deep
/// (`[[],[],…]` at level 100, 4 MB of them) is mended into one stand-in, not one per child
/// (which made it 19 times larger, past the message cap): the call fails at once with the
/// depth named, and the connection (the same process) stays up for the next call.
#[tokio::test]
async fn many_values_too_deep_in_one_container_fail_only_their_call() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_server(
        dir.path(),
        "wide",
        r#"if m == "initialize":
    answer(i, init(msg))
elif m == "tools/list":
    answer(i, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})
elif m == "tools/call":
    if args.get("mode") == "ok":
        answer(i, {"content": [{"type": "text", "text": "fine"}]})
    else:
        wide = [[] for _ in range(1000000)]
        for _ in range(96):
            wide = [wide]
        answer(i, {"content": [{"type": "text", "text": "x"}], "structuredContent": {"tree": wide}})
elif i is not None:
    answer(i, {})"#,
    );
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let t = tool(&manager, "mcp__wide__t");
    let pid = manager.server_pid("wide");
    let started = Instant::now();
    let err = call(&t, json!({})).await.unwrap_err().to_string();
    assert!(err.contains("nested deeper than 100 levels"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let ok = call(&t, json!({"mode": "ok"})).await.unwrap();
    assert_eq!(ok.data.content.joined_text(), "fine");
    assert_eq!(manager.server_pid("wide"), pid);
    manager.shutdown().await;
}

/// The 64 MiB message cap counts a line as it is read, mended: 23 MiB of bytes that are
/// not UTF-8, each read as U+FFFD (three bytes), make a message of 69 MiB, which closes the
/// connection as an over-long line does, and the call fails at once saying so.
#[tokio::test]
async fn the_message_cap_counts_a_line_as_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let config = python_server(
        dir.path(),
        "latin",
        r#"head = b'{"jsonrpc":"2.0","id":' + json.dumps(i).encode() + b',"result":'
if m == "initialize":
    answer(i, init(msg))
elif m == "tools/list":
    answer(i, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})
elif m == "tools/call":
    raw(head + b'{"content":[{"type":"text","text":"' + b"\xff" * (23 * 1024 * 1024) + b'"}]}}')
elif i is not None:
    answer(i, {})"#,
    );
    let (manager, diags) = McpManager::connect(vec![config], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let t = tool(&manager, "mcp__latin__t");
    let err = match call(&t, json!({})).await {
        Ok(read) => panic!(
            "a result of {} characters was read",
            read.data.content.joined_text().len()
        ),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("the server sent a message larger than 64 MiB as read"),
        "{err}"
    );
    manager.shutdown().await;
}
