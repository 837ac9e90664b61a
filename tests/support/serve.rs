//! Shared by the tests that drive `toolwright serve` and third-party MCP clients (each
//! includes it with `#[path]`): finding the peers of `../shared/mcp-peers`, running a server
//! process that prints its URL, and running a client that prints JSON.
#![allow(dead_code)] // each test file uses a different part

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use serde_json::Value;

/// A peer's path from its environment variable (set by `eval "$(bash
/// ../shared/mcp-peers/install.sh)"`, which `.ci/run` does). In CI (`CI=true`) a missing peer
/// fails the test with a clear message; elsewhere the test is skipped with a printed notice.
pub fn peer(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(path) if !path.is_empty() && Path::new(&path).exists() => Some(path),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("{var} is not set in CI: .ci/run must install ../shared/mcp-peers")
        }
        _ => {
            eprintln!(
                "notice: {var} is not set; skipping (run `eval \"$(bash ../shared/mcp-peers/install.sh)\"`)"
            );
            None
        }
    }
}

/// A server process that printed its URL (`http://127.0.0.1:<port>/...`) as its first line
/// on stdout; killed when dropped.
pub struct UrlServer {
    /// The process.
    pub child: Child,
    /// The URL it printed.
    pub url: String,
}

impl UrlServer {
    /// Starts `command` with stdin closed and stdout piped, and reads the URL line.
    pub fn start(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line.trim().to_owned();
        assert!(
            url.starts_with("http://127.0.0.1:"),
            "no URL on stdout: {line:?}"
        );
        Self { child, url }
    }

    /// [`toolwright_http_command`] started, with its stderr shown.
    pub fn toolwright_http(project: &Path, extra: &[&str]) -> Self {
        let mut command = toolwright_http_command(project, extra);
        command.stderr(Stdio::inherit());
        Self::start(command)
    }

    /// The URL's path and query (`/mcp?token=…`), for raw requests.
    pub fn path(&self) -> String {
        let rest = self.url.trim_start_matches("http://");
        rest[rest.find('/').unwrap_or(rest.len())..].to_owned()
    }

    /// The URL with `path` in place of the endpoint's (the token kept).
    pub fn path_with(&self, path: &str) -> String {
        self.path().replacen("/mcp", path, 1)
    }

    /// The port of the URL.
    pub fn port(&self) -> u16 {
        let rest = self.url.trim_start_matches("http://127.0.0.1:");
        rest[..rest.find('/').unwrap_or(rest.len())]
            .parse()
            .unwrap()
    }
}

impl Drop for UrlServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `toolwright serve --http 127.0.0.1:0 --cwd <project> <extra...>`, with no user
/// configuration (`CLAUDE_CONFIG_DIR` points inside the project).
pub fn toolwright_http_command(project: &Path, extra: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolwright"));
    command
        .args(["serve", "--http", "127.0.0.1:0", "--cwd"])
        .arg(project)
        .args(extra)
        .env("CLAUDE_CONFIG_DIR", project.join(".no-user-config"));
    command
}

/// Sends SIGTERM to `child` and waits (up to 20 s) for it to exit; its exit status.
pub fn terminate_and_wait(child: &mut Child) -> std::process::ExitStatus {
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "the server did not exit"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The tiny rmcp server of `crates/tools-mcp/examples/tiny_server.rs` (built by `cargo build
/// -p tools-mcp --examples`, which CI does before the tests), as an upstream MCP server of
/// `serve`. Missing, it fails the test in CI and skips it elsewhere, with a notice.
pub fn tiny_server() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent()?.parent()?.join("examples").join("tiny_server");
    if path.exists() {
        return Some(path);
    }
    let msg = format!(
        "{} is missing: run `cargo build -p tools-mcp --example tiny_server` first",
        path.display()
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
    eprintln!("notice: {msg}; skipping");
    None
}

/// Runs a client command that prints one JSON document (the MCP inspector CLI's output),
/// failing with its stdout and stderr if it does not succeed.
pub fn json_from(mut command: Command) -> Value {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{:?} failed: {}\n{}",
        command.get_program(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
