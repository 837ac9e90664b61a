//! Against the hand-written Streamable HTTP server of `examples/raw_http_server.rs`: the
//! HTTP failures an SDK-built server cannot produce (pings that are never answered, a
//! connection dropped on every request after `initialize`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{ChildGuard, call, tool};
use serde_json::json;
use tools_mcp::{McpManager, McpOptions, ServerConfig, ServerState};

fn opts() -> McpOptions {
    McpOptions::new(std::env::temp_dir())
}

/// Starts the raw server in `mode`, logging to `log`. Returns the guard and its endpoint.
fn start_raw(mode: &str, log: &Path) -> (ChildGuard, String) {
    let mut command = Command::new(common::example("raw_http_server"));
    command.args(["--mode", mode, "--log"]).arg(log);
    common::start_port_printer(command)
}

/// Waits up to 10 s for the log at `path` to hold a line containing `needle`.
async fn logged(path: &Path, needle: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .any(|l| l.contains(needle))
        {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// A server whose pings go unanswered during a call is given up after the silence limit:
/// the call fails, the connection counts as dead, and the server is sent
/// `notifications/cancelled` for the call, as on a timeout or a user's cancel.
#[tokio::test]
async fn a_server_that_stops_answering_pings_is_told_the_call_was_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("raw.log");
    let (_server, url) = start_raw("stall-pings", &log);
    let mut o = opts();
    o.http_silence_limit = Duration::from_secs(3);
    let (manager, diags) = McpManager::connect(vec![ServerConfig::http("raw", url)], o).await;
    assert!(diags.is_empty(), "{diags:?}");
    let started = Instant::now();
    // (The guard turns a regression into a failure instead of a hung test.)
    let err = tokio::time::timeout(
        Duration::from_secs(60),
        call(&tool(&manager, "mcp__raw__hang"), json!({})),
    )
    .await
    .expect("the heartbeat never gave up")
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("MCP server \"raw\" stopped answering during tools/call \"hang\"")
            && err.contains("no answer to any ping for 3 s"),
        "{err}"
    );
    assert!(started.elapsed() >= Duration::from_secs(3));
    assert!(logged(&log, "ping held").await);
    assert!(
        logged(&log, "the server stopped answering pings").await,
        "the server was not sent notifications/cancelled: {:?}",
        std::fs::read_to_string(&log)
    );
    assert!(matches!(manager.servers()[0].state, ServerState::Failed(_)));
    manager.shutdown().await;
}

/// reqwest's errors end with ` for url (<the whole URL>)`: a token in the URL's query or
/// user info must not reach the texts the model sees through the listing's error, the
/// reconnection's `last error`, or the server's state.
#[tokio::test]
async fn credentials_in_a_server_url_stay_out_of_errors_after_initialize() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("raw.log");
    let (_server, url) = start_raw("drop-after-init", &log);
    let url = url.replace("http://", "http://someone:pw-SECRET-1@") + "?api_key=SECRET-2";
    let (manager, diags) = McpManager::connect(vec![ServerConfig::http("raw", url)], opts()).await;
    let text: String = diags.iter().map(ToString::to_string).collect();
    assert!(text.contains("tools/list failed"), "{text}");
    assert!(!text.contains("SECRET"), "{text}");
    // Within the backoff: the last error is quoted.
    let err = manager.reconnect("raw").await.unwrap_err().to_string();
    assert!(err.contains("last error"), "{err}");
    assert!(!err.contains("SECRET"), "{err}");
    match &manager.servers()[0].state {
        ServerState::Failed(why) => assert!(!why.contains("SECRET"), "{why}"),
        other => panic!("{other:?}"),
    }
    // After the backoff: the reconnection's own error.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let err = manager.reconnect("raw").await.unwrap_err().to_string();
    assert!(err.contains("could not be reconnected"), "{err}");
    assert!(!err.contains("SECRET"), "{err}");
    manager.shutdown().await;
}

/// A server that answers a call with "no such session" (404), also in the new session the
/// client opens to send it again: the call fails naming the refusal, and says the request
/// was refused before it ran (not that it was never retried, though it was sent twice).
#[tokio::test]
async fn a_call_refused_for_its_session_twice_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("raw.log");
    let (_server, url) = start_raw("refuse-calls", &log);
    let (manager, diags) = McpManager::connect(vec![ServerConfig::http("raw", url)], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let err = call(&tool(&manager, "mcp__raw__hang"), json!({}))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("did not know the session"), "{err}");
    assert!(
        err.contains("The server refused the request before it ran"),
        "{err}"
    );
    assert!(!err.contains("not retried"), "{err}");
    let refused = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .matches("call refused")
        .count();
    assert_eq!(refused, 2, "the request was sent {refused} times");
    manager.shutdown().await;
}

/// A server that answers a call with `500 Internal Server Error` answered: the call fails
/// saying so, with the status in words, not that the server "disconnected".
#[tokio::test]
async fn a_call_answered_with_an_error_status_says_the_server_answered() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("raw.log");
    let (_server, url) = start_raw("fail-calls", &log);
    let (manager, diags) = McpManager::connect(vec![ServerConfig::http("raw", url)], opts()).await;
    assert!(diags.is_empty(), "{diags:?}");
    let err = call(&tool(&manager, "mcp__raw__hang"), json!({}))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("answered tools/call \"hang\" with an error"),
        "{err}"
    );
    assert!(err.contains("500 Internal Server Error"), "{err}");
    assert!(!err.contains("disconnected"), "{err}");
    manager.shutdown().await;
}
