//! Helpers shared by the integration tests: peer lookup, the tiny server, ports, processes.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tool_core::{ProgressSender, Tool, ToolError, ToolProgress, ToolResult, ToolUseContext};
use tools_mcp::{McpManager, ServerConfig};

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

/// Starts `command`, a server that prints its port on its first line, with no input and its
/// errors dropped. Returns the guard and its `http://127.0.0.1:<port>/mcp` endpoint.
pub fn start_port_printer(mut command: Command) -> (ChildGuard, String) {
    use std::io::BufRead as _;
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
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

/// Starts the python HTTP MCP server `script` (which prints its port on its first line)
/// from `dir` with the argument `mode`. Returns the guard and its endpoint.
pub fn start_python_http(dir: &std::path::Path, script: &str, mode: &str) -> (ChildGuard, String) {
    let path = dir.join("hh.py");
    std::fs::write(&path, script).unwrap();
    let mut command = Command::new("python3");
    command.arg(&path).arg(mode);
    start_port_printer(command)
}

/// The start of a Streamable HTTP MCP server in Python, up to the methods a test's server
/// answers in its own way: `mode` is the first argument; GET is answered 405, DELETE 200, a
/// notification 202; `self.reply(obj, ctype)` sends a JSON value (or bytes) with the session
/// id `s1`; `do_POST` reads the message (`m`, its `meth` and `mid`) and answers `initialize`
/// and `tools/list` (one tool, `t`). [`python_http_server`] puts it together.
pub const PY_HTTP_HEAD: &str = r#"import sys, json, os, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
mode = sys.argv[1]
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a):
        pass
    def do_GET(self):
        self.send_response(405); self.send_header("Content-Length", "0"); self.end_headers()
    def do_DELETE(self):
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()
    def reply(self, obj, ctype="application/json"):
        body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
        self.send_response(200); self.send_header("Content-Type", ctype)
        self.send_header("Mcp-Session-Id", "s1")
        self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        m = json.loads(self.rfile.read(n))
        meth, mid = m.get("method"), m.get("id")
        if mid is None:
            self.send_response(202); self.send_header("Content-Length", "0"); self.end_headers()
            return
        if meth == "initialize":
            return self.reply({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": m["params"]["protocolVersion"],
                "capabilities": {"tools": {}}, "serverInfo": {"name": "hh", "version": "1"}}})
        if meth == "tools/list":
            return self.reply({"jsonrpc": "2.0", "id": mid,
                               "result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}})
"#;

/// A Streamable HTTP MCP server in Python for [`start_python_http`]: [`PY_HTTP_HEAD`], then
/// `methods` (the rest of `do_POST`, its lines indented 8 spaces), then "method not found"
/// for any other method; it serves on a free port of 127.0.0.1 and prints the port first.
pub fn python_http_server(methods: &str) -> String {
    format!(
        r#"{PY_HTTP_HEAD}{methods}        self.reply({{"jsonrpc": "2.0", "id": mid, "error": {{"code": -32601, "message": "nf"}}}})
server = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
"#
    )
}

/// The lines of a Python stdio MCP server before its loop body: `out(m)` writes a message,
/// `answer(i, result)` a result, `init(msg, caps)` the `initialize` result; the loop reads
/// each message as `msg`, its method as `m` and its id as `i`.
pub const PY_STDIO_PRELUDE: &str = r#"import sys, json, base64
def out(m):
    sys.stdout.write(json.dumps(m) + "\n"); sys.stdout.flush()
def answer(i, result):
    out({"jsonrpc": "2.0", "id": i, "result": result})
def init(msg, caps):
    return {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": caps,
            "serverInfo": {"name": "py", "version": "1"}}
for line in sys.stdin:
    msg = json.loads(line)
    m, i = msg.get("method"), msg.get("id")
"#;

/// A stdio server in Python named `name` (its script in `dir` as `<script>.py`) whose loop
/// body is `handler` ([`PY_STDIO_PRELUDE`] before it).
pub fn python_server(
    dir: &std::path::Path,
    name: &str,
    script: &str,
    handler: &str,
) -> ServerConfig {
    let path = dir.join(format!("{script}.py"));
    let body: String = handler.lines().map(|l| format!("    {l}\n")).collect();
    std::fs::write(&path, format!("{PY_STDIO_PRELUDE}{body}")).unwrap();
    ServerConfig::stdio(name, "python3", [path.display().to_string()])
}
