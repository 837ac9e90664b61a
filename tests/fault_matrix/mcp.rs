//! MCP servers that misbehave: a small Python server speaking JSON-RPC over stdio
//! (`fake_mcp.py`), configured in the project's `.mcp.json` and reached through rmcp as the
//! binary does; the crash and hang cases also run against the real rmcp server of
//! `crates/tools-mcp/examples/tiny_server.rs` when it is built.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::json;
use tempfile::TempDir;
use tool_exec::ToolCallResult;

use crate::rig::{Rig, RigBuilder, assert_no_process, call, rig, settle, text};
use crate::serve_support::tiny_server;

const FAKE_SERVER: &str = include_str!("fake_mcp.py");

/// The real Python interpreter (not a version-manager shim), found once.
fn python() -> &'static str {
    static PYTHON: OnceLock<String> = OnceLock::new();
    PYTHON.get_or_init(|| {
        let out = std::process::Command::new("python3")
            .args(["-c", "import sys; print(sys.executable)"])
            .output()
            .expect("python3 is needed for the fake MCP servers");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    })
}

/// The fake server's files: the script, its pid file and its log, in a directory whose
/// path is the marker of its processes.
struct Fake {
    dir: TempDir,
}

impl Fake {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("fake_mcp.py"), FAKE_SERVER).unwrap();
        Self { dir }
    }
    fn script(&self) -> PathBuf {
        self.dir.path().join("fake_mcp.py")
    }
    fn pid_file(&self) -> PathBuf {
        self.dir.path().join("server.pid")
    }
    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
    }
    fn marker(&self) -> String {
        self.script().display().to_string()
    }
    fn pid(&self) -> Option<u32> {
        std::fs::read_to_string(self.pid_file())
            .ok()
            .and_then(|t| t.trim().parse().ok())
    }
    /// A rig with this server as `fake`, in `mode`.
    fn rig(&self, mode: &str) -> RigBuilder {
        rig()
            .settings(json!({"permissions": {"allow": ["mcp__fake"]}}))
            .mcp_json(json!({"mcpServers": {"fake": {
                "command": python(),
                "args": [self.script(), mode],
                "env": {
                    "FAKE_MCP_PID": self.pid_file(),
                    "FAKE_MCP_LOG": self.dir.path().join("server.log"),
                },
            }}}))
    }
}

async fn work(rig: &Rig, id: &str, kind: &str) -> ToolCallResult {
    rig.run_one(call(id, "mcp__fake__work", json!({"kind": kind})))
        .await
}

fn assert_error(r: &ToolCallResult, expected: &[&str]) {
    let t = text(r);
    assert!(r.outcome.result.is_error, "expected an error, got {t}");
    for e in expected {
        assert!(t.contains(e), "expected {e:?} in {t}");
    }
}

/// Whether `pid` is gone (or a zombie).
async fn gone(pid: u32) -> bool {
    settle(|| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let running = stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X'));
        if running { vec![pid] } else { Vec::new() }
    })
    .await
    .is_empty()
}

/// The end of every MCP fault: the rest of the session works, nothing temporary is left,
/// and once the session closes no server process remains.
async fn finish(rig: Rig, fake: &Fake) {
    rig.assert_survives().await;
    rig.assert_no_temp_files();
    if let Some(m) = &rig.mcp {
        m.shutdown().await;
    }
    drop(rig);
    assert_no_process(&fake.marker(), None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_crashes_mid_call() {
    let fake = Fake::new();
    let rig = fake.rig("crash").build().await;
    let first = fake.pid().unwrap();
    let r = work(&rig, "toolu_1", "").await;
    assert_error(
        &r,
        &[
            "MCP server \"fake\" disconnected during tools/call \"work\"",
            "not retried",
        ],
    );
    assert!(gone(first).await);
    assert_eq!(fake.log().matches("crashing").count(), 1, "{}", fake.log());
    // The next use starts a new server (which crashes again, clearly).
    let r = work(&rig, "toolu_2", "").await;
    assert_error(&r, &["disconnected during tools/call"]);
    assert_ne!(fake.pid().unwrap(), first);
    finish(rig, &fake).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_hangs_on_initialize() {
    let fake = Fake::new();
    let rig = fake
        .rig("hang-init")
        .mcp_options(|o| o.startup_timeout = Duration::from_secs(1))
        .build()
        .await;
    assert!(
        rig.notices
            .iter()
            .any(|n| n.contains("\"fake\"")
                && n.contains("did not complete initialization within 1 s")),
        "{:?}",
        rig.notices
    );
    // The hung process was killed; its tools are not offered.
    assert!(
        gone(fake.pid().unwrap()).await,
        "the hung server is still running"
    );
    let r = work(&rig, "toolu_1", "").await;
    assert_error(&r, &["No such tool available: mcp__fake__work"]);
    finish(rig, &fake).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_hangs_on_a_call() {
    let fake = Fake::new();
    let rig = fake
        .rig("hang-call")
        .mcp_options(|o| o.tool_timeout = Duration::from_secs(1))
        .build()
        .await;
    let r = work(&rig, "toolu_1", "").await;
    assert_error(
        &r,
        &[
            "MCP server \"fake\": tool \"work\" timed out after 1 s",
            "the request was cancelled",
        ],
    );
    // The server was told (notifications/cancelled).
    let told = settle(|| {
        if fake.log().contains("cancelled") {
            Vec::new()
        } else {
            vec![0]
        }
    })
    .await;
    assert!(told.is_empty(), "{}", fake.log());
    finish(rig, &fake).await;
}

/// One invalid tool definition (or one without a name) leaves that tool out, named in the
/// server's log; the others
/// are offered. rmcp failed the whole `tools/list` ("Unexpected response type"), so the
/// server connected with no tools and no word of which was wrong.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_lists_an_invalid_tool() {
    let fake = Fake::new();
    let rig = fake.rig("bad-tool").build().await;
    let r = work(&rig, "toolu_1", "").await;
    assert!(!r.outcome.result.is_error, "{}", text(&r));
    let mcp = rig.mcp.as_ref().unwrap();
    assert!(
        !mcp.tools().iter().any(|t| t.name() == "mcp__fake__broken"),
        "the invalid tool was offered"
    );
    let log = mcp.stderr("fake").unwrap_or_default();
    assert!(
        log.contains("the tool \"broken\" is left out: its definition is not valid"),
        "{log}"
    );
    // A tool without a name is not offered as `mcp__fake__` (a rule for the whole server
    // would match it).
    assert!(
        !mcp.tools().iter().any(|t| t.name() == "mcp__fake__"),
        "the nameless tool was offered"
    );
    assert!(
        log.contains("the tool #3 is left out: it has no name"),
        "{log}"
    );
    finish(rig, &fake).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_sends_malformed_json_rpc() {
    let fake = Fake::new();
    // Only the last case (binary junk, indistinguishable from log noise) waits for the
    // timeout; everything else fails at once.
    let rig = fake
        .rig("malformed")
        .mcp_options(|o| o.tool_timeout = Duration::from_secs(2))
        .build()
        .await;
    let disconnected = "MCP server \"fake\" disconnected during tools/call \"work\"";
    for (i, (kind, expected)) in [
        (
            "not-json",
            vec![
                disconnected,
                "[toolwright] protocol error: it sent a JSON-RPC message that is not valid JSON",
            ],
        ),
        // Read as `JSON.parse` reads it (Claude Code's client): the answer, the connection
        // kept.
        ("lone-surrogate", vec!["cut mid-emoji x\u{FFFD}"]),
        (
            "result-not-object",
            vec![
                "tool \"work\" returned a malformed result",
                "\"just a string\"",
            ],
        ),
        (
            "content-not-list",
            vec!["returned a malformed result", "{\"content\":42}"],
        ),
        (
            "error-without-message",
            vec![
                disconnected,
                "protocol error: it sent a malformed response to request",
            ],
        ),
        (
            "wrong-id",
            vec![
                disconnected,
                "protocol error: it sent a response to request 987654, which was never sent",
            ],
        ),
        (
            "wrong-version",
            vec![disconnected, "protocol error: it sent a malformed response"],
        ),
        (
            "array",
            vec![disconnected, "protocol error: it answered with a batch"],
        ),
        ("unknown-block", vec![]),
        (
            "binary",
            vec![
                "tool \"work\" timed out after 2 s",
                "the request was cancelled",
            ],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let pid = fake.pid().unwrap();
        let r = work(&rig, &format!("toolu_{i}"), kind).await;
        if expected.is_empty() {
            // Valid JSON-RPC with a block type we do not know: shown, not an error.
            assert!(!r.outcome.result.is_error, "{kind}: {}", text(&r));
            assert!(
                text(&r).contains("Unsupported MCP content type \"hologram\""),
                "{}",
                text(&r)
            );
            continue;
        }
        if !expected.iter().all(|e| text(&r).contains(e)) {
            panic!(
                "{kind}: {}\nserver log:\n{}\nnotices: {:?}",
                text(&r),
                fake.log(),
                rig.notices
            );
        }
        if expected[0] == disconnected {
            // The broken connection's process is gone; the next call starts a new one.
            assert!(gone(pid).await, "{kind}: the server is still running");
        } else if kind == "lone-surrogate" {
            // (That the connection stays up: `a_lone_surrogate_or_a_broken_notification_keeps_the_connection`.)
            assert!(!r.outcome.result.is_error, "{kind}: {}", text(&r));
        }
    }
    finish(rig, &fake).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_sends_a_50_mb_result() {
    let fake = Fake::new();
    let rig = fake.rig("big").build().await;
    // 50 MB arrives: the model sees a preview, the whole of it is saved to a file.
    let r = work(&rig, "toolu_1", "").await;
    let t = text(&r);
    assert!(!r.outcome.result.is_error, "{}", &t[..t.len().min(500)]);
    assert!(
        t.len() < 150_000,
        "{} characters reached the model",
        t.len()
    );
    assert!(
        t.starts_with("<persisted-output>"),
        "{}",
        &t[..t.len().min(500)]
    );
    let saved = r.outcome.persisted.as_ref().unwrap();
    assert!(std::fs::metadata(saved).unwrap().len() >= 50_000_000);
    // Above the 64 MiB message bound the connection is closed, clearly.
    let pid = fake.pid().unwrap();
    let r = work(&rig, "toolu_2", "huge").await;
    assert_error(
        &r,
        &[
            "disconnected during tools/call \"work\"",
            "the server sent a message larger than 64 MiB; the connection was closed",
        ],
    );
    assert!(gone(pid).await);
    finish(rig, &fake).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_closes_stdout_but_keeps_running() {
    let fake = Fake::new();
    let rig = fake.rig("close-stdout").build().await;
    let pid = fake.pid().unwrap();
    let r = work(&rig, "toolu_1", "").await;
    assert_error(
        &r,
        &[
            "MCP server \"fake\" disconnected during tools/call \"work\"",
            "not retried",
        ],
    );
    // It would run for ever on its own: the client killed it.
    assert!(
        gone(pid).await,
        "the server without stdout is still running"
    );
    finish(rig, &fake).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tiny_rmcp_server_crash_and_hang() {
    let Some(server) = tiny_server() else { return };
    let log = tempfile::tempdir().unwrap();
    let rig = rig()
        .settings(json!({"permissions": {"allow": ["mcp__tiny"]}}))
        .mcp_json(json!({"mcpServers": {"tiny": {
            "command": server,
            "env": {"TINY_CRASH_LOG": log.path().join("crash.log")},
        }}}))
        .mcp_options(|o| o.tool_timeout = Duration::from_secs(1))
        .build()
        .await;
    let manager = rig.mcp.as_ref().unwrap();
    let first = manager.server_pid("tiny").unwrap();
    // Crash mid-call.
    let r = rig
        .run_one(call("toolu_1", "mcp__tiny__crash", json!({})))
        .await;
    assert_error(
        &r,
        &[
            "MCP server \"tiny\" disconnected during tools/call \"crash\"",
            "crash: exiting now",
        ],
    );
    assert!(gone(first).await);
    // Hang on a call: the timeout cancels it (after a reconnection).
    let r = rig
        .run_one(call("toolu_2", "mcp__tiny__hang", json!({})))
        .await;
    assert_error(
        &r,
        &[
            "tool \"hang\" timed out after 1 s",
            "the request was cancelled",
        ],
    );
    let pid = manager.server_pid("tiny").unwrap();
    rig.assert_survives().await;
    rig.assert_no_temp_files();
    manager.shutdown().await;
    assert!(gone(pid).await, "shutdown left the server running");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tiny_rmcp_server_sends_50_mb() {
    let Some(server) = tiny_server() else { return };
    let rig = rig()
        .settings(json!({"permissions": {"allow": ["mcp__tiny"]}}))
        .mcp_json(json!({"mcpServers": {"tiny": {"command": server}}}))
        .build()
        .await;
    let r = rig
        .run_one(call(
            "toolu_1",
            "mcp__tiny__big",
            json!({"chars": 50 * 1024 * 1024}),
        ))
        .await;
    let t = text(&r);
    assert!(!r.outcome.result.is_error, "{t}");
    assert!(
        t.len() < 150_000,
        "{} characters reached the model",
        t.len()
    );
    assert!(t.starts_with("<persisted-output>"), "{t}");
    let saved = r.outcome.persisted.as_ref().unwrap();
    assert_eq!(
        std::fs::metadata(saved).unwrap().len(),
        50 * 1024 * 1024,
        "the whole result is saved"
    );
    rig.assert_survives().await;
    rig.assert_no_temp_files();
    rig.mcp.as_ref().unwrap().shutdown().await;
}
