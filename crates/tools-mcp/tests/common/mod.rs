//! Helpers shared by the integration tests: peer lookup, the tiny server, ports, processes.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tool_core::{ProgressSender, Tool, ToolError, ToolProgress, ToolResult, ToolUseContext};
use tools_mcp::McpManager;

/// The path of a peer from its environment variable. Missing: fails under `CI=true`,
/// otherwise prints a notice and returns `None` (the test then returns early).
pub fn peer(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(p) if !p.is_empty() && std::path::Path::new(&p).exists() => Some(p),
        _ => {
            let msg = format!(
                "{var} is not set (or does not exist): install the MCP peers with \
                 `eval \"$(bash /work/shared/mcp-peers/install.sh)\"` before running these tests"
            );
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("{msg}");
            }
            eprintln!("SKIPPED: {msg}");
            None
        }
    }
}

/// The tiny rmcp server built from `examples/tiny_server.rs` (cargo test builds examples).
pub fn tiny_server() -> String {
    example("tiny_server")
}

/// The path of an example of this crate (cargo test builds examples).
pub fn example(name: &str) -> String {
    let exe = std::env::current_exe().unwrap();
    // target/debug/deps/<test> -> target/debug/examples/<name>
    let path = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|dir| dir.join("examples").join(name))
        .unwrap();
    assert!(
        path.exists(),
        "{} is missing: run the tests with `cargo test -p tools-mcp` (which builds examples)",
        path.display()
    );
    path.display().to_string()
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// A server process killed when dropped.
pub struct ChildGuard(pub Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts server-everything's Streamable HTTP transport on a free port and waits until it
/// accepts connections. Returns the guard and the endpoint URL.
pub fn start_everything_http(bin: &str) -> (ChildGuard, String) {
    start_everything_http_at(bin, free_port())
}

/// As [`start_everything_http`], on a given port (to restart a server at the same URL).
pub fn start_everything_http_at(bin: &str, port: u16) -> (ChildGuard, String) {
    let child = Command::new(bin)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let guard = ChildGuard(child);
    let deadline = Instant::now() + Duration::from_secs(15);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "server-everything did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (guard, format!("http://127.0.0.1:{port}/mcp"))
}

/// The port of an `http://127.0.0.1:<port>/mcp` URL.
pub fn port_of(url: &str) -> u16 {
    url.trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap()
}

/// Whether process `pid` is still running (not a zombie).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The state follows the ") " closing the command name.
            let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
            !matches!(state, Some(Some('Z' | 'X')))
        }
        Err(_) => false,
    }
}

/// Waits up to `timeout` for `pid` to end.
pub async fn wait_dead(pid: u32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    true
}

pub fn tool(manager: &McpManager, name: &str) -> Arc<dyn Tool> {
    let tools = manager.tools();
    tools
        .iter()
        .find(|t| t.name() == name)
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "no tool {name}; have {:?}",
                tools
                    .iter()
                    .map(|t| t.name().to_owned())
                    .collect::<Vec<_>>()
            )
        })
}

pub fn ctx() -> ToolUseContext {
    ToolUseContext::new(std::env::temp_dir())
}

pub async fn call(t: &Arc<dyn Tool>, input: Value) -> Result<ToolResult, ToolError> {
    t.call(input, ctx(), ProgressSender::none()).await
}

/// A progress sender that records every event.
pub fn recording_progress() -> (ProgressSender, Arc<Mutex<Vec<ToolProgress>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    (
        ProgressSender::new(
            "toolu_test",
            Arc::new(move |p| sink.lock().unwrap().push(p)),
        ),
        seen,
    )
}

/// Starts the python HTTP MCP server `script` (which prints its port on its first line)
/// from `dir` with the argument `mode`. Returns the guard and its endpoint.
#[allow(dead_code)]
pub fn start_python_http(dir: &std::path::Path, script: &str, mode: &str) -> (ChildGuard, String) {
    use std::io::BufRead as _;
    let path = dir.join("hh.py");
    std::fs::write(&path, script).unwrap();
    let mut child = std::process::Command::new("python3")
        .arg(&path)
        .arg(mode)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let guard = ChildGuard(child);
    let mut port = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut port)
        .unwrap();
    let port: u16 = port.trim().parse().expect("the server printed no port");
    (guard, format!("http://127.0.0.1:{port}/mcp"))
}
