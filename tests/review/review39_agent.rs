//! Review 39's findings on the agent's start: a signal that came before the interrupt
//! watcher started (while standard input was read for the prompt, or while the session
//! opened) was swallowed, and the run went on to send its request.

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::model_api::*;
use crate::processes::{process_alive, wait_at_most, wait_until};

/// `agent -p hi` with `extra` before the prompt, against `url`, in `dir`.
fn agent_run(url: &str, dir: &std::path::Path, extra: &[&str]) -> Command {
    let mut command = agent_command(url, dir, extra, "hi");
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    command
}

/// SIGTERM while the prompt is still read from a pipe its writer keeps open (`tail -f`,
/// a slow producer): the run ends there with 143, and no request is sent. It was swallowed,
/// and the run went on once the pipe closed.
#[test]
fn a_signal_while_the_prompt_is_read_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (url, seen) = serve(|_, _| full(turn(Some("ok"), &[])));
    let mut child = agent_run(&url, &root, &["-p"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    // A first byte, then the pipe held open: the prompt is being read.
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"more context").unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = wait_at_most(
        &mut child,
        Duration::from_secs(20),
        "SIGTERM did not end the run while it read its prompt",
    );
    drop(stdin);
    // Before its handlers were installed the default action ends it, which is as right.
    assert!(
        status.code() == Some(143)
            || std::os::unix::process::ExitStatusExt::signal(&status) == Some(15),
        "{status:?}"
    );
    assert!(seen.lock().unwrap().is_empty(), "a request was sent");
}

/// SIGTERM while the session opens (an MCP server that never answers `initialize`, with
/// half a minute to do so): the run ends there with 143, the server gone with it, and no
/// request is sent.
#[test]
fn a_signal_while_the_agents_session_opens_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (url, seen) = serve(|_, _| full(turn(Some("ok"), &[])));
    let started = root.join("server-started");
    let marker = format!("1039.{}", std::process::id());
    let mcp = json!({"mcpServers": {"slow": {"command": "sh", "args": ["-c",
        format!("touch '{}'; exec sleep {marker}", started.display())]}}});
    let mut child = agent_run(&url, &root, &["-p", "--mcp-config", &mcp.to_string()])
        .env("MCP_TIMEOUT", "30000")
        .spawn()
        .unwrap();
    wait_until("the server never started", || started.exists());
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = wait_at_most(
        &mut child,
        Duration::from_secs(15),
        "SIGTERM did not end the run while its session opened",
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(seen.lock().unwrap().is_empty(), "a request was sent");
    wait_until("the server outlived the run", || !process_alive(&marker));
}

/// A 200 that stopped right after its `message_start` (nothing shown, nothing run) was not
/// retried, while one that stopped before any event was: it is, and the run goes on with
/// the next attempt's answer.
#[test]
fn a_200_cut_right_after_message_start_is_retried() {
    let dir = tempfile::tempdir().unwrap();
    let cut = sse(&[start(10)]);
    let err = assert_retried_once(dir.path(), move || {
        Reply::Stream(vec![Part::Data(cut.clone()), Part::Cut])
    });
    assert!(err.contains("retrying"), "{err}");
}

/// An empty 200 without an event-stream Content-Type was refused as "no Content-Type
/// instead of an event stream: " (nothing after the colon) and not retried: no body is no
/// other kind of body, so it is retried and, at the last attempt, called empty.
#[test]
fn an_empty_200_without_a_content_type_is_retried_and_called_empty() {
    let dir = tempfile::tempdir().unwrap();
    let empty =
        || Reply::Raw("HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".into());
    assert_retried_once(dir.path(), empty);
    let err = assert_failed_without_retries(dir.path(), empty);
    assert!(err.contains("the response was empty"), "{err}");
}
