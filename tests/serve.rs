//! `toolwright serve` over stdio, driven by third-party MCP clients of `../shared/mcp-peers`
//! (installed by `.ci/run`): the MCP inspector CLI (`MCP_INSPECTOR_CLI`) and the Python SDK
//! (`MCP_PYTHON`). `tests/serve_http.rs` covers Streamable HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[path = "support/serve.rs"]
mod support;
use support::{json_from, peer};

/// The inspector's path, or `None` (with a notice) outside CI when it is not installed.
fn inspector() -> Option<String> {
    peer("MCP_INSPECTOR_CLI")
}

/// The inspector CLI against `toolwright serve` over stdio in `project`.
fn call(inspector: &str, project: &Path, method_args: &[&str]) -> Value {
    let mut command = Command::new(inspector);
    command
        .arg(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--cwd", project.to_str().unwrap()])
        .args(method_args)
        .env("CLAUDE_CONFIG_DIR", project.join(".no-user-config"));
    json_from(command)
}

#[test]
fn a_third_party_client_lists_and_calls_our_tools_through_the_pipeline() {
    let Some(inspector) = inspector() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(rm:*)"]}}"#,
    )
    .unwrap();
    std::fs::write(root.join("f.txt"), "served file\n").unwrap();

    let list = call(&inspector, &root, &["--method", "tools/list"]);
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for expected in ["Bash", "Read", "Edit", "Glob", "Grep", "Write"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    let read = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Read")
        .unwrap();
    assert_eq!(read["inputSchema"]["required"][0], "file_path");
    assert_eq!(read["annotations"]["readOnlyHint"], true);
    let write = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Write")
        .unwrap();
    assert_eq!(write["annotations"]["readOnlyHint"], false);
    assert_eq!(write["annotations"]["destructiveHint"], true);
    // Stopping a task kills a process: not "only additive updates", which a `false` would
    // say; the hint stays at MCP's default (true).
    let stop = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "TaskStop")
        .unwrap();
    assert_eq!(stop["annotations"]["destructiveHint"], Value::Null);
    assert_eq!(stop["annotations"]["readOnlyHint"], false);

    let ok = call(
        &inspector,
        &root,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "Bash",
            "--tool-arg",
            "command=echo served",
        ],
    );
    assert_eq!(ok["isError"], false);
    assert_eq!(ok["content"][0]["text"], "served");

    let path = root.join("f.txt");
    let arg = format!("file_path={}", path.display());
    let read = call(
        &inspector,
        &root,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "Read",
            "--tool-arg",
            &arg,
        ],
    );
    assert_eq!(read["content"][0]["text"], "     1→served file");

    // The project's deny rule applies to MCP clients too.
    let denied = call(
        &inspector,
        &root,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "Bash",
            "--tool-arg",
            "command=rm f.txt",
        ],
    );
    assert_eq!(denied["isError"], true);
    assert!(
        denied["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("denied"),
        "{denied}"
    );
    assert!(path.exists());

    let unknown = call(
        &inspector,
        &root,
        &["--method", "tools/call", "--tool-name", "Nope"],
    );
    assert_eq!(unknown["isError"], true);
}

/// A Python SDK client that spawns `toolwright serve` (stdio) and answers elicitations as
/// argv[3] says (`accept` or `decline`).
const PY_STDIO_CLIENT: &str = r#"
import json, sys, anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

exe, project, answer = sys.argv[1:4]
asked = []

async def elicit(ctx, params):
    asked.append(params.message)
    if answer == "accept":
        return types.ElicitResult(action="accept", content={"allow": True})
    return types.ElicitResult(action="decline")

async def main():
    server = StdioServerParameters(
        command=exe,
        args=["serve", "--cwd", project, "--settings", '{"permissions": {"ask": ["Bash(touch:*)"]}}'],
        env={"CLAUDE_CONFIG_DIR": project + "/.no-user-config"},
    )
    async with Client(server, mode="legacy", elicitation_callback=elicit) as c:
        r = await c.call_tool("Bash", {"command": "touch made.txt"})
        print(json.dumps({"asked": asked, "isError": r.is_error, "text": r.content[0].text}))

anyio.run(main)
"#;

#[test]
fn over_stdio_an_ask_is_an_elicitation_to_the_client() {
    let Some(python) = peer("MCP_PYTHON") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let script = root.join(".client.py");
    std::fs::write(&script, PY_STDIO_CLIENT).unwrap();
    let run = |answer: &str| -> Value {
        let out = Command::new(&python)
            .arg(&script)
            .arg(env!("CARGO_BIN_EXE_toolwright"))
            .arg(&root)
            .arg(answer)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "python client failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
    };

    let declined = run("decline");
    assert_eq!(declined["asked"].as_array().unwrap().len(), 1, "{declined}");
    assert_eq!(declined["isError"], true);
    assert_eq!(declined["text"], toolwright::exec::REJECT_MESSAGE);
    assert!(!root.join("made.txt").exists());

    let accepted = run("accept");
    let message = accepted["asked"][0].as_str().unwrap();
    assert!(
        message.starts_with("Allow Bash(touch made.txt)?"),
        "{message}"
    );
    assert_eq!(accepted["isError"], false, "{accepted}");
    assert!(root.join("made.txt").exists());
}

/// A Python SDK client that calls AskUserQuestion and answers the form it is sent.
const PY_QUESTION_CLIENT: &str = r#"
import json, sys, anyio
import mcp_types as types
from mcp import Client, StdioServerParameters

exe, project = sys.argv[1:3]
asked = []

async def elicit(ctx, params):
    asked.append({"message": params.message, "schema": params.requested_schema})
    return types.ElicitResult(action="accept", content={"q1": "SQLite", "q2": ["Docs", "Bench"], "q2_other": "CI"})

async def main():
    server = StdioServerParameters(
        command=exe,
        args=["serve", "--cwd", project],
        env={"CLAUDE_CONFIG_DIR": project + "/.no-user-config"},
    )
    questions = [
        {"question": "Which database?", "header": "DB", "multiSelect": False, "options": [
            {"label": "Postgres", "description": "relational"},
            {"label": "SQLite", "description": "embedded"}]},
        {"question": "Which extras?", "header": "Extras", "multiSelect": True, "options": [
            {"label": "Docs", "description": "write them"},
            {"label": "Bench", "description": "measure"}]},
    ]
    async with Client(server, mode="legacy", elicitation_callback=elicit) as c:
        r = await c.call_tool("AskUserQuestion", {"questions": questions})
        print(json.dumps({"asked": asked, "isError": r.is_error, "text": r.content[0].text}, default=str))

anyio.run(main)
"#;

#[test]
fn over_stdio_ask_user_question_is_answered_by_the_clients_user() {
    let Some(python) = peer("MCP_PYTHON") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let script = root.join(".client.py");
    std::fs::write(&script, PY_QUESTION_CLIENT).unwrap();
    let out = Command::new(&python)
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_toolwright"))
        .arg(&root)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "python client failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let result: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(result["asked"].as_array().unwrap().len(), 1, "{result}");
    let message = result["asked"][0]["message"].as_str().unwrap();
    assert!(message.contains("1. Which database?"), "{message}");
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(
        result["text"],
        "User has answered your questions: \"Which database?\"=\"SQLite\", \"Which extras?\"=\"Docs, Bench, CI\". You can now continue with the user's answers in mind."
    );
}

/// SIGTERM (a client's shutdown: close stdin, SIGTERM, SIGKILL) stops the running command and
/// the background tasks before the server exits; a signal ends a process without its
/// destructors, so both were left running.
#[test]
fn a_signal_stops_running_commands_and_background_tasks() {
    use std::io::{BufRead, BufReader, Write};
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--mode", "bypassPermissions", "--cwd"])
        .arg(&project)
        .env("CLAUDE_CONFIG_DIR", project.join(".config"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "signal-test", "version": "1"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = |id: u64, command: &str, background: bool| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "Bash", "arguments": {"command": command, "run_in_background": background}}})
    };
    send(call(2, "echo $$ > bg.pid; exec sleep 300", true));
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":2"), "{line}");
    send(call(3, "echo $$ > fg.pid; exec sleep 300", false));

    let pid_of = |name: &str| -> Option<String> {
        let text = std::fs::read_to_string(project.join(name)).ok()?;
        Some(text.trim().to_owned()).filter(|t| !t.is_empty())
    };
    let start = Instant::now();
    let (fg, bg) = loop {
        if let (Some(fg), Some(bg)) = (pid_of("fg.pid"), pid_of("bg.pid")) {
            break (fg, bg);
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the commands did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(alive(&fg) && alive(&bg));

    let status = support::terminate_and_wait(&mut server);
    assert_eq!(status.code(), Some(143));
    let start = Instant::now();
    while (alive(&fg) || alive(&bg)) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(&fg), "the running command outlived the server");
    assert!(!alive(&bg), "the background task outlived the server");
}

/// A second signal exits at once, and still takes with it what its commands started: a
/// process a command put in a session of its own (`setsid`) that ignores SIGTERM, which the
/// first signal's grace would have killed in the end. The session's directory (nothing
/// saved in it) goes too, as after an orderly end.
#[test]
fn a_second_signal_kills_what_a_command_took_out_of_its_group() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap().join("p");
    let tmp = project.with_file_name("tmp");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let mut server = RawStdio::spawn_with_tmpdir(
        &project,
        &["--mode", "bypassPermissions"],
        std::process::Stdio::null(),
        Some(&tmp),
    );
    server.initialize(serde_json::json!({}), "2025-06-18");
    let sessions = || {
        std::fs::read_dir(&tmp)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.starts_with("toolwright-"))
            .collect::<Vec<_>>()
    };
    server.send(&bash_call(
        2,
        "setsid sh -c 'trap \"\" TERM; echo $$ > escaped.pid; exec sleep 300' & sleep 300",
    ));
    let escaped = pid_written_to(&project.join("escaped.pid"));
    assert!(alive(&escaped));
    assert!(!sessions().is_empty(), "no session directory in TMPDIR");
    let pid = server.child.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the server did not exit"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(143));
    assert_eq!(
        sessions(),
        Vec::<String>::new(),
        "a session's directory is left"
    );
    let start = Instant::now();
    while alive(&escaped) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(&escaped), "the escaped process outlived the server");
}

/// `toolwright serve` over stdio, driven with raw JSON-RPC lines (no third-party peer).
struct RawStdio {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    /// The server's output lines, read by a thread (so that a missing answer is a timeout,
    /// not a test that hangs).
    stdout: std::sync::mpsc::Receiver<String>,
    /// The answer to `initialize`.
    init: Value,
}

/// How long an answer may take before the test fails.
const ANSWER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// Whether process `pid` runs (a zombie runs nothing).
fn alive(pid: impl std::fmt::Display) -> bool {
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !state.is_empty() && !state.contains(") Z ")
}

/// The pid a command wrote to `file` (a whole line), waited for.
fn pid_written_to(file: &Path) -> String {
    let deadline = std::time::Instant::now() + ANSWER_TIMEOUT;
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .filter(|p| p.ends_with('\n') && !p.trim().is_empty())
        {
            return pid.trim().to_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the command did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

impl RawStdio {
    /// Starts `serve --cwd project extra...` and initializes with `capabilities`.
    fn start(project: &Path, extra: &[&str], capabilities: Value) -> Self {
        Self::start_with_stderr(project, extra, capabilities, std::process::Stdio::null())
    }

    /// [`Self::start`] with the server's stderr going to `stderr`.
    fn start_with_stderr(
        project: &Path,
        extra: &[&str],
        capabilities: Value,
        stderr: std::process::Stdio,
    ) -> Self {
        Self::start_on(project, extra, capabilities, stderr, "2025-06-18")
    }

    /// [`Self::start`] in bypass mode with the upstream MCP servers of `config` (an
    /// `.mcp.json` document).
    fn with_upstream(project: &Path, config: &Value) -> Self {
        let config = config.to_string();
        let extra = ["--mode", "bypassPermissions", "--mcp-config", &config];
        Self::start(project, &extra, serde_json::json!({}))
    }

    /// [`Self::start_with_stderr`], asking for protocol version `protocol`.
    fn start_on(
        project: &Path,
        extra: &[&str],
        capabilities: Value,
        stderr: std::process::Stdio,
        protocol: &str,
    ) -> Self {
        let mut this = Self::spawn(project, extra, stderr);
        this.initialize(capabilities, protocol);
        this
    }

    /// Sends `initialize` (request 1) for `protocol` and `notifications/initialized`.
    fn initialize(&mut self, capabilities: Value, protocol: &str) {
        let init = self.request(
            1,
            "initialize",
            serde_json::json!({"protocolVersion": protocol, "capabilities": capabilities,
                "clientInfo": {"name": "raw-test", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "{init}");
        self.init = init;
        self.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Starts `serve --cwd project extra...` for a 2026-07-28 client, which sends no
    /// `initialize` (each request names its version in its `_meta`).
    fn start_without_initialize(project: &Path, extra: &[&str]) -> Self {
        Self::spawn(project, extra, std::process::Stdio::null())
    }

    /// Starts `serve --cwd project extra...`, its stderr going to `stderr`; sends nothing.
    fn spawn(project: &Path, extra: &[&str], stderr: std::process::Stdio) -> Self {
        Self::spawn_with_tmpdir(project, extra, stderr, None)
    }

    /// [`Self::spawn`], with `TMPDIR` (where sessions keep their directories) set to `tmp`.
    fn spawn_with_tmpdir(
        project: &Path,
        extra: &[&str],
        stderr: std::process::Stdio,
        tmp: Option<&Path>,
    ) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolwright"));
        command
            .args(["serve", "--cwd"])
            .arg(project)
            .args(extra)
            .env("CLAUDE_CONFIG_DIR", project.join(".no-user-config"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(stderr);
        if let Some(tmp) = tmp {
            command.env("TMPDIR", tmp);
        }
        let mut child = command.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let output = std::io::BufReader::new(child.stdout.take().unwrap());
        let (lines, stdout) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in output.lines() {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            stdout,
            init: Value::Null,
        }
    }

    fn send(&mut self, message: &Value) {
        use std::io::Write;
        writeln!(self.stdin, "{message}").unwrap();
    }

    /// Sends `bytes` as they are, then a newline.
    fn send_raw(&mut self, bytes: &[u8]) {
        use std::io::Write;
        self.stdin.write_all(bytes).unwrap();
        self.stdin.write_all(b"\n").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message from the server, if one comes within `wait`.
    fn next_within(&mut self, wait: std::time::Duration) -> Option<Value> {
        match self.stdout.recv_timeout(wait) {
            Ok(line) => Some(serde_json::from_str(&line).unwrap()),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                panic!("the server closed its output")
            }
        }
    }

    /// The next message from the server.
    fn next(&mut self) -> Value {
        self.next_within(ANSWER_TIMEOUT)
            .unwrap_or_else(|| panic!("no message from the server in {ANSWER_TIMEOUT:?}"))
    }

    /// Sends a request and returns its response (skipping notifications).
    fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        loop {
            let message = self.next();
            assert!(
                message.get("id").is_none() || message.get("method").is_none(),
                "unexpected request from the server: {message}"
            );
            if message["id"] == id {
                return message;
            }
        }
    }

    /// The texts of a `tools/call` response's content.
    fn call_texts(&mut self, id: u64, tool: &str, arguments: Value) -> (bool, Vec<String>) {
        let response = self.request(
            id,
            "tools/call",
            serde_json::json!({"name": tool, "arguments": arguments}),
        );
        let result = &response["result"];
        let texts = result["content"]
            .as_array()
            .unwrap_or_else(|| panic!("{response}"))
            .iter()
            .filter_map(|c| c["text"].as_str().map(str::to_owned))
            .collect();
        (result["isError"] == true, texts)
    }
}

impl Drop for RawStdio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a call adds for the model besides its result reaches the client: a skill's body
/// (Claude Code adds it as a message after "Launching skill"), a PostToolUse hook's
/// blocking feedback (exit 2), and a hook's request to stop.
#[test]
fn a_skills_body_and_a_hooks_feedback_reach_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join(".claude/skills/greet")).unwrap();
    std::fs::write(
        root.join(".claude/skills/greet/SKILL.md"),
        "---\ndescription: Greets\n---\nSKILL BODY: greet $ARGUMENTS warmly.\n",
    )
    .unwrap();
    let lint = root.join("lint.sh");
    std::fs::write(&lint, "cat >/dev/null; echo lint failed >&2; exit 2\n").unwrap();
    let stop = root.join("stop.sh");
    std::fs::write(
        &stop,
        "cat >/dev/null; echo '{\"continue\": false, \"stopReason\": \"enough globbing\"}'\n",
    )
    .unwrap();
    let settings = serde_json::json!({"hooks": {"PostToolUse": [
        {"matcher": "Write", "hooks": [{"type": "command", "command": format!("sh {}", lint.display())}]},
        {"matcher": "Glob", "hooks": [{"type": "command", "command": format!("sh {}", stop.display())}]},
    ]}});
    let settings = settings.to_string();
    let mut server = RawStdio::start(
        &root,
        &["--mode", "bypassPermissions", "--settings", &settings],
        serde_json::json!({}),
    );

    let (is_error, texts) = server.call_texts(
        2,
        "Skill",
        serde_json::json!({"skill": "greet", "args": "Ada"}),
    );
    assert!(!is_error, "{texts:?}");
    assert_eq!(texts[0], "Launching skill: greet", "{texts:?}");
    assert!(
        texts
            .iter()
            .any(|t| t.contains("SKILL BODY: greet Ada warmly.")),
        "{texts:?}"
    );

    let file = root.join("new.txt");
    let (_, texts) = server.call_texts(
        3,
        "Write",
        serde_json::json!({"file_path": file, "content": "x\n"}),
    );
    assert!(file.exists());
    assert!(
        texts.iter().skip(1).any(|t| t.contains("lint failed")),
        "{texts:?}"
    );

    let (_, texts) = server.call_texts(4, "Glob", serde_json::json!({"pattern": "*.txt"}));
    assert!(
        texts.iter().skip(1).any(|t| t.contains("enough globbing")),
        "{texts:?}"
    );
}

/// A client that declared only URL-mode elicitation cannot be sent a form: its asks (a
/// Bash ask, AskUserQuestion) are refused as for a client that cannot be asked, in words
/// true of it: it did declare elicitation, only not form elicitation. An empty
/// `elicitation` object means forms.
#[test]
fn a_client_with_only_url_elicitation_is_not_sent_a_form() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let ask = r#"{"permissions": {"ask": ["Bash(touch:*)"]}}"#;
    let mut url_only = RawStdio::start(
        &root,
        &["--settings", ask],
        serde_json::json!({"elicitation": {"url": {}}}),
    );
    let (is_error, texts) =
        url_only.call_texts(2, "Bash", serde_json::json!({"command": "touch made.txt"}));
    assert!(is_error, "{texts:?}");
    assert!(
        texts[0].contains("cannot be asked: it did not declare form elicitation"),
        "{texts:?}"
    );
    assert!(
        !texts[0].contains("did not declare the elicitation capability"),
        "{texts:?}"
    );
    assert!(!root.join("made.txt").exists());
    let question = serde_json::json!({"questions": [{"question": "Which database?",
        "header": "DB", "multiSelect": false, "options": [
            {"label": "Postgres", "description": "relational"},
            {"label": "SQLite", "description": "embedded"}]}]});
    let (is_error, texts) = url_only.call_texts(3, "AskUserQuestion", question);
    assert!(is_error, "{texts:?}");
    assert!(
        texts[0].contains("cannot be asked: it did not declare form elicitation")
            && !texts[0].contains("the elicitation capability"),
        "{texts:?}"
    );

    // `{}` is form support: the server asks.
    let mut form = RawStdio::start(
        &root,
        &["--settings", ask],
        serde_json::json!({"elicitation": {}}),
    );
    form.send(&bash_call(2, "touch made.txt"));
    let asked = form.next();
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    form.send(&serde_json::json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"action": "decline"}}));
    let answer = loop {
        let message = form.next();
        if message["id"] == 2 {
            break message;
        }
    };
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(!root.join("made.txt").exists());
}

/// EnterPlanMode is refused to a client that cannot be asked (it could never leave plan
/// mode), but only while it is served: denied for the whole session, it is an unknown tool
/// like any other.
#[test]
fn enter_plan_mode_refused_without_asks_unless_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut served = RawStdio::start(&root, &[], serde_json::json!({}));
    let (is_error, texts) = served.call_texts(2, "EnterPlanMode", serde_json::json!({}));
    assert!(is_error, "{texts:?}");
    assert!(
        texts[0].contains("not available to this client"),
        "{texts:?}"
    );
    let deny = r#"{"permissions": {"deny": ["EnterPlanMode"]}}"#;
    let mut denied = RawStdio::start(&root, &["--settings", deny], serde_json::json!({}));
    let (is_error, texts) = denied.call_texts(2, "EnterPlanMode", serde_json::json!({}));
    assert!(is_error, "{texts:?}");
    assert!(
        texts[0].contains("No such tool available")
            && !texts[0].contains("not available to this client"),
        "{texts:?}"
    );
}

impl RawStdio {
    /// Sends a `tools/call` and answers every `elicitation/create` the server sends with
    /// `answer` (an `ElicitResult`); the call's response, and the messages it was asked.
    fn call_answering(
        &mut self,
        id: u64,
        tool: &str,
        arguments: Value,
        answer: &Value,
    ) -> (Value, Vec<String>) {
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}),
        );
        let mut asked = Vec::new();
        loop {
            let message = self.next();
            if message["method"] == "elicitation/create" {
                asked.push(message["params"]["message"].as_str().unwrap().to_owned());
                self.send(
                    &serde_json::json!({"jsonrpc": "2.0", "id": message["id"], "result": answer}),
                );
            } else if message["id"] == id && message.get("method").is_none() {
                return (message, asked);
            }
        }
    }
}

/// The texts of a `tools/call` response's content.
fn texts_of(response: &Value) -> Vec<String> {
    response["result"]["content"]
        .as_array()
        .unwrap_or_else(|| panic!("{response}"))
        .iter()
        .filter_map(|c| c["text"].as_str().map(str::to_owned))
        .collect()
}

/// A plan too long to show whole in the approval form can still be approved: the form shows
/// its head and tail and names the plan file, where the user reads it whole. It was denied
/// without asking ("the input is too long to show for approval"), the denial repeating the
/// whole plan, so the session could never leave plan mode. A short plan is shown exactly as
/// written (no period added after it).
#[test]
fn a_long_plan_is_put_to_the_user_and_a_short_one_shown_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let accept = serde_json::json!({"action": "accept", "content": {"allow": true}});
    for (plan, long) in [
        (
            format!("# Plan\n{}", "step line of the plan\n".repeat(800)),
            true,
        ),
        ("# Plan\n1. write zz.txt with x".to_owned(), false),
    ] {
        let mut server = RawStdio::start(&root, &[], serde_json::json!({"elicitation": {}}));
        let (entered, _) =
            server.call_answering(2, "EnterPlanMode", serde_json::json!({}), &accept);
        let text = texts_of(&entered).join("\n");
        let plan_file = text
            .split("Write your plan to ")
            .nth(1)
            .and_then(|rest| rest.split(" (create it").next())
            .unwrap_or_else(|| panic!("no plan file named: {text}"))
            .to_owned();
        let (written, _) = server.call_answering(
            3,
            "Write",
            serde_json::json!({"file_path": plan_file, "content": plan}),
            &accept,
        );
        assert_eq!(written["result"]["isError"], false, "{written}");
        let (exited, asked) =
            server.call_answering(4, "ExitPlanMode", serde_json::json!({}), &accept);
        assert_eq!(
            asked.len(),
            1,
            "the user was not asked: {:.300}",
            exited.to_string()
        );
        assert_eq!(exited["result"]["isError"], false, "{exited}");
        let message = &asked[0];
        if long {
            assert!(message.contains(&plan_file), "{message}");
            assert!(message.contains("characters not shown"), "{message}");
            assert!(message.chars().count() < 12_000, "{}", message.len());
            assert!(
                message.contains("# Plan\nstep line of the plan\n"),
                "{message}"
            );
        } else {
            assert!(message.ends_with(&format!(":\n{plan}")), "{message}");
            assert!(!message.contains("?."), "{message}");
        }
        // Out of plan mode: a file outside the plan file can be written (asked, allowed).
        let (made, _) = server.call_answering(
            5,
            "Write",
            serde_json::json!({"file_path": root.join("zz.txt"), "content": "x\n"}),
            &accept,
        );
        assert_eq!(made["result"]["isError"], false, "{made}");
        std::fs::remove_file(root.join("zz.txt")).unwrap();
    }
}

/// A call too long to show in the approval form is refused without asking; the refusal's
/// advice fits why it asked: a rule can allow an ask of the rules, no rule lifts a safety
/// check (a command longer than the checks read), where only a smaller call helps. It said
/// "allow it with a permission rule" for both, though `Bash` was already allowed.
#[test]
fn a_call_too_long_to_show_is_refused_with_advice_that_can_work() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let accept = serde_json::json!({"action": "accept", "content": {"allow": true}});
    let long = format!("echo {} | wc -c", "a".repeat(12_000));
    let settings = serde_json::json!({"permissions": {"allow": ["Bash"]}}).to_string();
    let mut server = RawStdio::start(
        &root,
        &["--settings", &settings],
        serde_json::json!({"elicitation": {}}),
    );
    let (refused, asked) =
        server.call_answering(2, "Bash", serde_json::json!({"command": long}), &accept);
    assert!(asked.is_empty(), "{asked:?}");
    let text = texts_of(&refused).join("\n");
    assert!(
        text.contains("too long to show for approval"),
        "{text:.600}"
    );
    assert!(
        text.contains("no permission rule can allow it"),
        "{text:.600}"
    );
    assert!(
        !text.contains("allow it with a permission rule"),
        "{text:.600}"
    );
    // An ask of the rules (a Write outside any rule, in default mode) keeps the advice.
    let mut server = RawStdio::start(&root, &[], serde_json::json!({"elicitation": {}}));
    let (refused, asked) = server.call_answering(
        2,
        "Write",
        serde_json::json!({"file_path": root.join("big.txt"), "content": "b".repeat(12_000)}),
        &accept,
    );
    assert!(asked.is_empty(), "{asked:?}");
    let text = texts_of(&refused).join("\n");
    assert!(
        text.contains("allow it with a permission rule"),
        "{text:.600}"
    );
    assert!(!root.join("big.txt").exists());
}

/// The description of a tool in a `tools/list` answer.
fn served_description(server: &mut RawStdio, id: u64, name: &str) -> String {
    let list = server.request(id, "tools/list", serde_json::json!({}));
    list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .find(|t| t["name"] == name)
        .and_then(|t| t["description"].as_str())
        .unwrap_or_else(|| panic!("no {name} in {list}"))
        .to_owned()
}

/// Over MCP each Bash command starts in the served directory: the description says so (it
/// said "The working directory persists between commands", so a model's `cd build` then
/// `rm -rf ./*` would empty the project), and a result whose `cd` did not carry over says
/// that too.
#[test]
fn served_bash_says_each_command_starts_in_the_project_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir(root.join("build")).unwrap();
    let mut server = RawStdio::start(
        &root,
        &["--mode", "bypassPermissions"],
        serde_json::json!({}),
    );
    let description = served_description(&mut server, 2, "Bash");
    assert!(
        !description.contains("persists between commands"),
        "{description}"
    );
    assert!(
        description.contains(&format!(
            "Each command starts in the project directory ({})",
            root.display()
        )),
        "{description}"
    );
    let (is_error, texts) =
        server.call_texts(3, "Bash", serde_json::json!({"command": "cd build"}));
    assert!(!is_error, "{texts:?}");
    assert!(
        texts.iter().any(|t| t.contains(&format!(
            "the next command starts in {} again, not in {}",
            root.display(),
            root.join("build").display()
        ))),
        "{texts:?}"
    );
    let (_, texts) = server.call_texts(4, "Bash", serde_json::json!({"command": "pwd"}));
    assert_eq!(texts[0], root.display().to_string(), "{texts:?}");
    // A command that does not move says nothing of it.
    assert_eq!(texts.len(), 1, "{texts:?}");
}

/// The served Skill tool's description lists the skills a client may load (their names and
/// descriptions), as Claude Code tells its model; a skill only the user may invoke is not
/// listed. A client had no way to learn the names.
#[test]
fn the_served_skill_tool_lists_the_skills() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    for (name, front) in [
        ("greet", "description: Greets the user\n"),
        (
            "deploy",
            "description: Deploys\ndisable-model-invocation: true\n",
        ),
    ] {
        std::fs::create_dir_all(root.join(".claude/skills").join(name)).unwrap();
        std::fs::write(
            root.join(".claude/skills").join(name).join("SKILL.md"),
            format!("---\n{front}---\nBody of {name}.\n"),
        )
        .unwrap();
    }
    let mut server = RawStdio::start(&root, &[], serde_json::json!({}));
    let description = served_description(&mut server, 2, "Skill");
    assert!(
        description.contains("The following skills are available")
            && description.contains("- greet: Greets the user"),
        "{description}"
    );
    assert!(!description.contains("deploy"), "{description}");
}

/// Malformed early requests are told what is wrong: an `initialize` without `clientInfo`
/// or `capabilities` which field is missing, and a request before `initialize` that
/// `initialize` must come first. Both were answered with rmcp's message about the
/// 2026-07-28 `_meta` fields, which such a client never sends.
#[test]
fn early_requests_are_told_what_is_wrong() {
    use std::io::{BufRead as _, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--cwd"])
        .arg(&root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut ask = |request: Value| -> Value {
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    };
    let no_client_info = ask(serde_json::json!({"jsonrpc": "2.0", "id": 1,
        "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}}}));
    let message = no_client_info["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(no_client_info["error"]["code"], -32602, "{no_client_info}");
    assert!(
        message.contains("Invalid params for initialize") && message.contains("clientInfo"),
        "{no_client_info}"
    );
    let no_capabilities = ask(serde_json::json!({"jsonrpc": "2.0", "id": 2,
        "method": "initialize", "params": {"protocolVersion": "2025-06-18",
        "clientInfo": {"name": "raw", "version": "1"}}}));
    let message = no_capabilities["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("capabilities"), "{no_capabilities}");
    let early = ask(serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let message = early["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("send `initialize` first") && !message.contains("malformed"),
        "{early}"
    );
    // The session goes on: a good `initialize` is answered.
    let init = ask(
        serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    assert!(init.get("result").is_some(), "{init}");
    drop(stdin);
    let _ = child.wait();
}

/// A supervisor that follows SIGTERM with SIGKILL soon after (500 ms here) finds the
/// background tasks already gone: they are killed first, before the server waits for its
/// calls to wind down (here a PostToolUse hook holds the cancelled call for seconds).
#[test]
fn background_tasks_are_killed_before_the_calls_are_awaited() {
    use std::io::{BufRead, BufReader, Write};
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let slow = project.join("slow.sh");
    std::fs::write(
        &slow,
        "input=$(cat); case \"$input\" in *fg.pid*) sleep 4;; esac; exit 0\n",
    )
    .unwrap();
    let hook = serde_json::json!([{"matcher": "Bash", "hooks": [
        {"type": "command", "command": format!("sh {}", slow.display())}]}]);
    let settings =
        serde_json::json!({"hooks": {"PostToolUse": hook, "PostToolUseFailure": hook}}).to_string();
    let mut server = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args([
            "serve",
            "--mode",
            "bypassPermissions",
            "--settings",
            &settings,
            "--cwd",
        ])
        .arg(&project)
        .env("CLAUDE_CONFIG_DIR", project.join(".config"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "signal-test", "version": "1"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = |id: u64, command: &str, background: bool| {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "Bash", "arguments": {"command": command, "run_in_background": background}}})
    };
    send(call(2, "echo $$ > bg.pid; exec sleep 300", true));
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":2"), "{line}");
    send(call(3, "echo $$ > fg.pid; exec sleep 300", false));

    let pid_of = |name: &str| -> Option<String> {
        let text = std::fs::read_to_string(project.join(name)).ok()?;
        Some(text.trim().to_owned()).filter(|t| !t.is_empty())
    };
    let start = Instant::now();
    let bg = loop {
        if let (Some(_), Some(bg)) = (pid_of("fg.pid"), pid_of("bg.pid")) {
            break bg;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the commands did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(alive(&bg));

    Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let _ = server.kill();
    let _ = server.wait();
    let start = Instant::now();
    while alive(&bg) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let orphaned = alive(&bg);
    if orphaned {
        let _ = Command::new("kill").args(["-KILL", &bg]).status();
    }
    assert!(
        !orphaned,
        "the background task outlived the server's SIGKILL"
    );
}

/// Before `initialize`, a notification (`notifications/initialized` too early, an unknown
/// one, an `initialize` without an id) or a response is dropped, as JSON-RPC answers neither,
/// and reported on stderr: the session goes on, and the client's `initialize` is answered.
#[test]
fn notifications_and_responses_before_initialize_do_not_end_the_session() {
    use std::io::{BufRead as _, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("stderr.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--cwd"])
        .arg(&root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let early = [
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "method": "foo/bar"}),
        serde_json::json!({"jsonrpc": "2.0", "method": "initialize", "params": {}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "result": {}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 4, "error": {"code": 1, "message": "x"}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "1"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        // A cursor this server never gave out is invalid params.
        serde_json::json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list",
            "params": {"cursor": "garbage"}}),
    ];
    for message in early {
        writeln!(stdin, "{message}").unwrap();
    }
    stdin.flush().unwrap();
    let (lines, answers) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let Ok(value) = serde_json::from_str::<Value>(&line) else {
                break;
            };
            if lines.send(value).is_err() {
                break;
            }
        }
    });
    let init = answers
        .recv_timeout(ANSWER_TIMEOUT)
        .expect("initialize answered");
    assert_eq!(init["id"], 1, "{init}");
    assert!(init["result"]["protocolVersion"].is_string(), "{init}");
    let mut by_id = std::collections::HashMap::new();
    while by_id.len() < 2 {
        let answer = answers
            .recv_timeout(ANSWER_TIMEOUT)
            .expect("tools/list answered");
        by_id.insert(answer["id"].as_u64().unwrap(), answer);
    }
    let list = &by_id[&2];
    assert!(
        list["result"]["tools"]
            .as_array()
            .is_some_and(|t| !t.is_empty()),
        "{list}"
    );
    assert!(list["result"].get("nextCursor").is_none(), "{list}");
    let bad = &by_id[&5];
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown cursor"),
        "{bad}"
    );
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        stderr
            .matches("a notification or response before `initialize`")
            .count(),
        5,
        "{stderr}"
    );
}

/// A 2026-07-28 client sends no `initialize` (each request carries its protocol version):
/// over stdio its `notifications/cancelled` is the only way to cancel, and it ends the call,
/// the command's process group with it, rather than being dropped as a notification before
/// `initialize`.
#[test]
fn a_2026_07_28_client_cancels_a_call_over_stdio() {
    use std::io::{BufRead as _, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("stderr.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args([
            "serve",
            "--settings",
            r#"{"permissions": {"allow": ["Bash"]}}"#,
            "--cwd",
        ])
        .arg(&root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let meta = serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    // The command writes its pid, then sleeps for long.
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "Bash", "arguments": {"command": "echo $$ > pid; exec sleep 600"}, "_meta": meta}});
    writeln!(stdin, "{call}").unwrap();
    stdin.flush().unwrap();
    let pid = pid_written_to(&root.join("pid"));
    let cancel = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "the user moved on"}});
    writeln!(stdin, "{cancel}").unwrap();
    stdin.flush().unwrap();
    let deadline = std::time::Instant::now() + ANSWER_TIMEOUT;
    while alive(&pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the cancelled command still runs: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(stdin);
    let mut out = String::new();
    for line in std::io::BufReader::new(child.stdout.take().unwrap()).lines() {
        out.push_str(&line.unwrap());
    }
    assert!(child.wait().unwrap().success());
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(!stderr.contains("before `initialize`"), "{stderr}");
    // A cancelled request is not answered (MCP).
    assert!(!out.contains("\"id\":1"), "{out}");
}

/// `serve --cwd root extra...` with its input and output as pipes, initialized with
/// `capabilities`: the process, its input (dropped to close it) and its messages, read by a
/// thread.
fn serve_with_pipes(
    root: &Path,
    extra: &[&str],
    capabilities: Value,
) -> (
    std::process::Child,
    std::process::ChildStdin,
    std::sync::mpsc::Receiver<Value>,
) {
    use std::io::BufRead as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--cwd"])
        .arg(root)
        .args(extra)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (lines, answers) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let Ok(value) = serde_json::from_str::<Value>(&line) else {
                break;
            };
            if lines.send(value).is_err() {
                break;
            }
        }
    });
    send_line(
        &mut stdin,
        &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": capabilities,
        "clientInfo": {"name": "raw-test", "version": "1"}}}),
    );
    let init = answers.recv_timeout(ANSWER_TIMEOUT).unwrap();
    assert!(init.get("result").is_some(), "{init}");
    send_line(
        &mut stdin,
        &serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    (child, stdin, answers)
}

/// Writes `message` as one line to `stdin`.
fn send_line(stdin: &mut std::process::ChildStdin, message: &Value) {
    use std::io::Write as _;
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
}

/// A `tools/call` request of Bash with `command`, id `id`.
fn bash_call(id: u64, command: &str) -> Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "Bash", "arguments": {"command": command}}})
}

/// Calls still in progress when the client closes its input are answered as interrupted
/// (`[Request interrupted by user for tool use]`), as the docs say, wherever they were:
/// one waiting for the client's answer to its permission question was answered with the
/// user's rejection ("The user doesn't want to proceed…"), one inside a PreToolUse hook
/// with "The user doesn't want to take this action right now". Neither runs its command.
#[test]
fn calls_asking_or_in_a_hook_when_stdin_closes_are_answered_as_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let hook_started = root.join("hook-started");
    let settings = serde_json::json!({
        "permissions": {"ask": ["Bash(touch asked.txt)"], "allow": ["Bash(touch hooked.txt)"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": format!("grep -q hooked.txt && touch '{}' && sleep 30; exit 0",
                hook_started.display())}]}]},
    })
    .to_string();
    for case in ["asked", "hooked"] {
        let _ = std::fs::remove_file(&hook_started);
        let (mut child, mut stdin, answers) = serve_with_pipes(
            &root,
            &["--settings", &settings],
            serde_json::json!({"elicitation": {}}),
        );
        send_line(&mut stdin, &bash_call(2, &format!("touch {case}.txt")));
        match case {
            "asked" => {
                let asked = answers.recv_timeout(ANSWER_TIMEOUT).unwrap();
                assert_eq!(asked["method"], "elicitation/create", "{asked}");
            }
            _ => {
                let started = std::time::Instant::now();
                while !hook_started.exists() {
                    assert!(started.elapsed() < ANSWER_TIMEOUT, "the hook never ran");
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            }
        }
        drop(stdin);
        let answer = loop {
            let message = answers
                .recv_timeout(ANSWER_TIMEOUT)
                .expect("the call is answered");
            if message["id"] == 2 && message.get("method").is_none() {
                break message;
            }
        };
        assert_eq!(answer["result"]["isError"], true, "{case}: {answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"], "[Request interrupted by user for tool use]",
            "{case}: {answer}"
        );
        assert!(child.wait().unwrap().success(), "{case}");
        assert!(!root.join(format!("{case}.txt")).exists(), "{case} ran");
    }
}

/// A client that closes its input while a call runs ends that call at once: the command's
/// process group is killed and the call's interruption is still answered (rmcp stopped
/// waiting for running calls after 5 s and the server exited with no answer, the command
/// running until then).
#[test]
fn closing_stdin_ends_the_calls_in_progress_and_answers_them() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (mut child, mut stdin, answers) = serve_with_pipes(
        &root,
        &["--mode", "bypassPermissions"],
        serde_json::json!({}),
    );
    let pid_file = root.join("pid");
    send_line(
        &mut stdin,
        &bash_call(2, &format!("echo $$ > {}; sleep 60", pid_file.display())),
    );
    let started = std::time::Instant::now();
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        {
            break pid;
        }
        assert!(
            started.elapsed() < ANSWER_TIMEOUT,
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    drop(stdin);
    let answer = answers
        .recv_timeout(ANSWER_TIMEOUT)
        .expect("the interrupted call is answered");
    assert_eq!(answer["id"], 2, "{answer}");
    assert!(answer.to_string().contains("interrupted"), "{answer}");
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s
                .rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'))),
        "the command outlived the server"
    );
}

/// A line that is not a JSON-RPC request for this server is answered with the error JSON-RPC
/// 2.0 gives for it (the client would otherwise wait for ever), the server says so on stderr,
/// and the next request is served: a line that is not JSON (-32700, id null) or not UTF-8
/// (-32700), JSON that is not a request (-32600), a line over the 16 MiB limit (-32600 with
/// the id read before the limit, the rest skipped), and a known method's bad params (-32602,
/// not "method not found").
#[test]
fn lines_that_are_not_requests_get_json_rpc_errors_and_the_server_goes_on() {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("stderr.txt");
    let mut server = RawStdio::start_with_stderr(
        &root,
        &["--mode", "bypassPermissions"],
        serde_json::json!({}),
        std::fs::File::create(&log).unwrap().into(),
    );
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"Bash","arguments":{{"command":"echo {}"}}}}}}"#,
        "a".repeat(17 << 20)
    );
    let cases: Vec<(&str, Vec<u8>, i64, Value)> = vec![
        ("not JSON", b"{not json".to_vec(), -32700, Value::Null),
        (
            "not UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}".to_vec(),
            -32700,
            serde_json::json!(3),
        ),
        (
            "tools/call without a name",
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{}}"#.to_vec(),
            -32602,
            serde_json::json!(4),
        ),
        (
            "tools/call with arguments that are not an object",
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"Bash","arguments":"str"}}"#.to_vec(),
            -32602,
            serde_json::json!(5),
        ),
        (
            "no method",
            br#"{"jsonrpc":"2.0","id":6}"#.to_vec(),
            -32600,
            serde_json::json!(6),
        ),
        (
            "JSON-RPC 1.0",
            br#"{"jsonrpc":"1.0","id":"seven","method":"ping"}"#.to_vec(),
            -32600,
            serde_json::json!("seven"),
        ),
        ("over 16 MiB", huge.into_bytes(), -32600, serde_json::json!(8)),
    ];
    for (n, (what, line, code, id)) in cases.into_iter().enumerate() {
        let ping = 100 + n as u64;
        server.send_raw(&line);
        server.send(&serde_json::json!({"jsonrpc": "2.0", "id": ping, "method": "ping"}));
        // Both are answered (in either order: a handler's answer may come after the ping's).
        let (mut error, mut pong) = (None, None);
        while error.is_none() || pong.is_none() {
            // Once the ping is answered, the error has had its time.
            let wait = match pong {
                Some(_) => Duration::from_secs(5),
                None => ANSWER_TIMEOUT,
            };
            let Some(message) = server.next_within(wait) else {
                panic!("{what}: no answer to the line (the ping was answered: {pong:?})")
            };
            if message["id"] == ping {
                pong = Some(message);
            } else {
                error = Some(message);
            }
        }
        let (error, pong) = (error.unwrap(), pong.unwrap());
        assert_eq!(error["error"]["code"], code, "{what}: {error}");
        assert_eq!(error["id"], id, "{what}: {error}");
        assert_eq!(error["jsonrpc"], "2.0", "{what}: {error}");
        assert!(pong.get("result").is_some(), "{what}: {pong}");
    }
    // Not even the huge line's tail was taken for a message; a call still runs.
    let (is_error, texts) =
        server.call_texts(200, "Bash", serde_json::json!({"command": "echo alive"}));
    assert!(!is_error, "{texts:?}");
    assert_eq!(texts[0], "alive");
    assert!(server.next_within(Duration::from_millis(500)).is_none());

    let stderr = std::fs::read_to_string(&log).unwrap();
    for expected in [
        "toolwright serve: message ",
        "answered with error -32700",
        "answered with error -32600",
        "longer than 16777216 bytes",
    ] {
        assert!(
            stderr.contains(expected),
            "{expected:?} not in stderr: {stderr}"
        );
    }
}

/// What hooks say to the user reaches the person running the server: a PreToolUse hook that
/// fails (the call goes ahead: it fails open) or times out, and a hook's `systemMessage`, are
/// printed on stderr as `run` prints them, and not sent to the client.
#[test]
fn hook_errors_timeouts_and_system_messages_are_printed_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("stderr.txt");
    let settings = serde_json::json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo guard script broken >&2; exit 1"},
        {"type": "command", "command": "sleep 5", "timeout": 1},
        {"type": "command", "command": "echo '{\"systemMessage\": \"note for the user\"}'"},
    ]}]}})
    .to_string();
    let mut server = RawStdio::start_with_stderr(
        &root,
        &["--mode", "bypassPermissions", "--settings", &settings],
        serde_json::json!({}),
        std::fs::File::create(&log).unwrap().into(),
    );
    let (is_error, texts) =
        server.call_texts(2, "Bash", serde_json::json!({"command": "echo ran"}));
    assert!(!is_error, "{texts:?}");
    assert_eq!(texts[0], "ran");
    assert!(
        !texts.iter().any(|t| t.contains("note for the user")),
        "{texts:?}"
    );
    let stderr = std::fs::read_to_string(&log).unwrap();
    for expected in [
        "toolwright serve: hook: ",
        "failed with exit code 1: guard script broken",
        "timed out after 1s",
        "note for the user",
    ] {
        assert!(
            stderr.contains(expected),
            "{expected:?} not in stderr: {stderr}"
        );
    }
}

/// An upstream MCP server's tools are served as they are now, not as they were at start:
/// when it adds a tool and says so (`notifications/tools/list_changed`), `serve` (which
/// advertises `tools.listChanged`) tells its client, lists the new tool and runs its calls.
#[test]
fn an_upstream_servers_new_tool_is_announced_listed_and_callable() {
    use std::time::Duration;
    let Some(tiny) = support::tiny_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = serde_json::json!({"mcpServers": {"tiny": {"command": tiny, "args": []}}});
    let mut server = RawStdio::with_upstream(&root, &config);
    assert_eq!(
        server.init["result"]["capabilities"]["tools"]["listChanged"], true,
        "{}",
        server.init
    );
    let names = |server: &mut RawStdio, id: u64| -> Vec<String> {
        let list = server.request(id, "tools/list", serde_json::json!({}));
        list["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{list}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let before = names(&mut server, 2);
    assert!(
        before.iter().any(|n| n == "mcp__tiny__add_tool"),
        "{before:?}"
    );
    assert!(
        !before.iter().any(|n| n == "mcp__tiny__dynamic"),
        "{before:?}"
    );

    // tiny's `add_tool` adds `dynamic` and sends list_changed: the answer and our own
    // notification come in either order.
    server.send(
        &serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "mcp__tiny__add_tool", "arguments": {}}}),
    );
    let (mut answer, mut told) = (None, false);
    while answer.is_none() || !told {
        let Some(message) = server.next_within(Duration::from_secs(30)) else {
            panic!("no notifications/tools/list_changed (the call's answer: {answer:?})")
        };
        if message["method"] == "notifications/tools/list_changed" {
            told = true;
        } else if message["id"] == 3 {
            answer = Some(message);
        }
    }
    let answer = answer.unwrap();
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "added", "{answer}");

    let after = names(&mut server, 4);
    assert!(after.iter().any(|n| n == "mcp__tiny__dynamic"), "{after:?}");
    let (is_error, texts) = server.call_texts(5, "mcp__tiny__dynamic", serde_json::json!({}));
    assert!(!is_error, "{texts:?}");
    assert_eq!(texts[0], "dynamic ok");
}

/// `initialize` is answered while an upstream MCP server is still starting (a client with a
/// short handshake timeout is not kept waiting for it); `tools/call` and `tools/list` wait
/// for the server's first connection, then call it and list its tools.
#[test]
fn initialize_does_not_wait_for_upstream_servers_and_tools_list_does() {
    use std::time::Duration;
    let Some(tiny) = support::tiny_server() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let gate = root.join("open");
    // Becomes the tiny server once the gate is open.
    let script = format!(
        "while [ ! -e '{}' ]; do sleep 0.02; done; exec \"$0\"",
        gate.display()
    );
    let config = serde_json::json!({"mcpServers": {"slow": {
        "command": "sh", "args": ["-c", script, tiny]}}});
    // Answered with the gate shut (before, `initialize` waited for the server: no answer).
    let mut server = RawStdio::with_upstream(&root, &config);
    server.send(
        &serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "mcp__slow__echo", "arguments": {"text": "hi"}}}),
    );
    server.send(&serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let early = server.next_within(Duration::from_millis(500));
    assert!(
        early.is_none(),
        "tools/call or tools/list did not wait: {early:?}"
    );
    std::fs::write(&gate, "").unwrap();
    let (mut call, mut list) = (None, None);
    while call.is_none() || list.is_none() {
        let message = server.next();
        if message["id"] == 2 {
            call = Some(message);
        } else if message["id"] == 3 {
            list = Some(message);
        }
    }
    let (call, list) = (call.unwrap(), list.unwrap());
    assert_eq!(call["result"]["isError"], false, "{call}");
    assert!(
        call["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("hi")),
        "{call}"
    );
    let names: Vec<&str> = list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"mcp__slow__echo"), "{names:?}");
    assert!(names.contains(&"Read"), "{names:?}");
}

/// A method this server does not serve is `-32601` saying so (`Method not found: NAME`, not
/// the bare name), and a `_meta.progressToken` that is neither a string nor an integer is
/// `-32602` Invalid params rather than no token at all.
#[test]
fn unknown_methods_and_bad_progress_tokens_are_answered_as_mcp_says() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut server = RawStdio::start(
        &root,
        &["--mode", "bypassPermissions"],
        serde_json::json!({}),
    );
    for (id, method) in [
        (2, "resources/list"),
        (3, "prompts/list"),
        (4, "resources/templates/list"),
        (5, "completion/complete"),
        (6, "nothing/here"),
    ] {
        let answer = server.request(id, method, serde_json::json!({}));
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
        assert_eq!(
            answer["error"]["message"],
            format!("Method not found: {method}"),
            "{answer}"
        );
    }
    let call = |token: Value| {
        serde_json::json!({"name": "Bash", "arguments": {"command": "echo tokened"},
            "_meta": {"progressToken": token}})
    };
    for (id, token) in [
        (10, serde_json::json!({"an": "object"})),
        (11, serde_json::json!([1])),
        (12, serde_json::json!(1.5)),
        (13, serde_json::json!(true)),
    ] {
        let answer = server.request(id, "tools/call", call(token.clone()));
        assert_eq!(answer["error"]["code"], -32602, "{token}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("progressToken"), "{message}");
    }
    let listed = server.request(
        14,
        "tools/list",
        serde_json::json!({"_meta": {"progressToken": {}}}),
    );
    assert_eq!(listed["error"]["code"], -32602, "{listed}");
    for (id, token) in [(20, serde_json::json!("tok")), (21, serde_json::json!(7))] {
        let answer = server.request(id, "tools/call", call(token.clone()));
        assert_eq!(answer["result"]["isError"], false, "{token}: {answer}");
        assert_eq!(answer["result"]["content"][0]["text"], "tokened");
    }
}

/// Protocol 2025-03-26 has JSON-RPC batches (later versions removed them): a client that
/// negotiated it may send an array, and gets one array of the answers (requests answered,
/// notifications not, an element that is not a request answered with its error). On later
/// versions an array is still `-32600` Invalid Request.
#[test]
fn a_2025_03_26_client_may_send_batches() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut server = RawStdio::start_on(
        &root,
        &["--mode", "bypassPermissions"],
        serde_json::json!({}),
        std::process::Stdio::null(),
        "2025-03-26",
    );
    assert_eq!(
        server.init["result"]["protocolVersion"], "2025-03-26",
        "{}",
        server.init
    );
    server.send(&serde_json::json!([
        {"jsonrpc": "2.0", "id": 10, "method": "ping"},
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        bash_call(11, "sleep 0.3; echo batched"),
        {"jsonrpc": "2.0", "id": "twelve", "method": "nothing/here"},
        {"jsonrpc": "2.0", "id": 13},
    ]));
    let answer = server.next();
    let answers = answer
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {answer}"));
    assert_eq!(answers.len(), 4, "{answer}");
    let by_id = |id: Value| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("no answer with id {id}: {answer}"))
    };
    assert!(
        by_id(serde_json::json!(10)).get("result").is_some(),
        "{answer}"
    );
    let called = by_id(serde_json::json!(11));
    assert_eq!(
        called["result"]["content"][0]["text"], "batched",
        "{answer}"
    );
    assert_eq!(by_id(serde_json::json!("twelve"))["error"]["code"], -32601);
    assert_eq!(by_id(serde_json::json!(13))["error"]["code"], -32600);
    // An empty batch is one error, not an array.
    server.send(&serde_json::json!([]));
    let empty = server.next();
    assert_eq!(empty["error"]["code"], -32600, "{empty}");
    // Single messages are served as before.
    let (is_error, texts) =
        server.call_texts(20, "Bash", serde_json::json!({"command": "echo single"}));
    assert!(!is_error, "{texts:?}");
    assert_eq!(texts[0], "single");

    // 2025-06-18 has no batches.
    let mut later = RawStdio::start(&root, &[], serde_json::json!({}));
    later.send(&serde_json::json!([{"jsonrpc": "2.0", "id": 2, "method": "ping"}]));
    let refused = later.next();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
}

/// The errors for a batch inside a batch and for an id that is neither a string nor an
/// integer say what is wrong: a nested batch of a 2025-03-26 client was refused as "a batch,
/// which MCP has only on protocol 2025-03-26" (the protocol it was on), `"id": 1.5` as an
/// "unrecognized JSON-RPC message", and an id past the 64-bit range was answered with a
/// changed id (`1.8446744073709552e+19`): it is refused, answered with id null.
#[test]
fn nested_batches_and_ids_that_are_not_integers_are_told_why() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut server = RawStdio::start_on(
        &root,
        &["--mode", "bypassPermissions"],
        serde_json::json!({}),
        std::process::Stdio::null(),
        "2025-03-26",
    );
    server.send_raw(br#"[[], {"jsonrpc": "2.0", "id": 1, "method": "ping"}]"#);
    let answer = server.next();
    let answers = answer
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {answer}"));
    assert_eq!(answers.len(), 2, "{answer}");
    let nested = answers
        .iter()
        .find(|a| a["id"].is_null())
        .unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(nested["error"]["code"], -32600, "{answer}");
    let message = nested["error"]["message"].as_str().unwrap();
    assert!(message.contains("inside a batch"), "{message}");
    assert!(!message.contains("only on protocol"), "{message}");
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == 1 && a.get("result").is_some())
    );

    for id in [
        "1.5",
        "18446744073709551616",
        "-9223372036854775809",
        "true",
    ] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        server.send_raw(line.as_bytes());
        let refused = server.next();
        assert_eq!(refused["error"]["code"], -32600, "{id}: {refused}");
        assert!(refused["id"].is_null(), "{id}: {refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("`id` must be a string or an integer"),
            "{id}: {message}"
        );
    }
    // The largest integers are ids as any other, answered as they were sent.
    for id in ["9223372036854775807", "-9223372036854775808"] {
        let line = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        server.send_raw(line.as_bytes());
        let answer = server.next();
        assert!(answer.get("result").is_some(), "{id}: {answer}");
        assert_eq!(answer["id"].to_string(), id, "{answer}");
    }
}

/// A 2026-07-28 request's `_meta` (no `initialize` on that version), for a client that can
/// answer form elicitations.
fn stateless_meta() -> Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
    })
}

/// On 2026-07-28 one "allow once" runs the call once: the `requestState` of the
/// input-required result is used up by the retry that carries the answer, so the same
/// answer posted again is refused, saying that its request state was already used, and the
/// command does not run again; a call without it is asked about again, with a new state.
#[test]
fn a_2026_07_28_allow_once_is_not_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut server = RawStdio::start_without_initialize(
        &root,
        &["--settings", r#"{"permissions": {"ask": ["Bash"]}}"#],
    );
    let arguments = serde_json::json!({"command": "echo run >> count.txt"});
    let call = |state: Option<&str>| {
        let mut params =
            serde_json::json!({"name": "Bash", "arguments": arguments, "_meta": stateless_meta()});
        if let Some(state) = state {
            params["requestState"] = Value::from(state);
            params["inputResponses"] = serde_json::json!({"permission": {"action": "accept",
                "content": {"allow": true}}});
        }
        params
    };
    let runs = || {
        std::fs::read_to_string(root.join("count.txt"))
            .unwrap_or_default()
            .lines()
            .count()
    };
    let asked = server.request(1, "tools/call", call(None));
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();

    let ran = server.request(2, "tools/call", call(Some(&state)));
    assert_eq!(ran["result"]["isError"], false, "{ran}");
    assert_eq!(runs(), 1, "{ran}");

    for id in 3..6 {
        let replayed = server.request(id, "tools/call", call(Some(&state)));
        assert_eq!(replayed["result"]["isError"], true, "{replayed}");
        let text = replayed["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains("request state was already used") && text.contains("ask"),
            "{text}"
        );
        assert_eq!(runs(), 1, "a replayed answer ran the command again");
    }

    let again = server.request(6, "tools/call", call(None));
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    assert_ne!(
        again["result"]["requestState"],
        Value::from(state),
        "{again}"
    );
    assert_eq!(runs(), 1);
}

/// `initialize` comes once per session: a second one is refused with `-32600` and changes
/// nothing (the session stays on the version it agreed on, so a batch, which only 2025-03-26
/// has, is still refused), and one inside a JSON-RPC batch is refused (MCP: it "MUST NOT be
/// part of a JSON-RPC batch") while the rest of the batch is served.
#[test]
fn initialize_is_answered_once_and_never_in_a_batch() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut server = RawStdio::start_on(
        &root,
        &[],
        serde_json::json!({}),
        std::process::Stdio::null(),
        "2025-11-25",
    );
    let again = server.request(
        2,
        "initialize",
        serde_json::json!({"protocolVersion": "2025-03-26", "capabilities": {},
            "clientInfo": {"name": "other", "version": "9"}}),
    );
    assert_eq!(again["error"]["code"], -32600, "{again}");
    let message = again["error"]["message"].as_str().unwrap();
    assert!(message.contains("already initialized"), "{message}");
    server.send(&serde_json::json!([{"jsonrpc": "2.0", "id": 3, "method": "ping"}]));
    let batch = server.next();
    assert_eq!(batch["error"]["code"], -32600, "{batch}");

    let mut batching = RawStdio::start_on(
        &root,
        &[],
        serde_json::json!({}),
        std::process::Stdio::null(),
        "2025-03-26",
    );
    batching.send(&serde_json::json!([
        {"jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {"protocolVersion":
            "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}},
        {"jsonrpc": "2.0", "id": 6, "method": "ping"},
    ]));
    let answer = batching.next();
    let answers = answer
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {answer}"));
    assert_eq!(answers.len(), 2, "{answer}");
    let refused = answers.iter().find(|a| a["id"] == 5).unwrap();
    assert_eq!(refused["error"]["code"], -32600, "{answer}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("batch"),
        "{answer}"
    );
    assert!(
        answers
            .iter()
            .any(|a| a["id"] == 6 && a.get("result").is_some())
    );
    // Still on 2025-03-26: batches go on being served.
    batching.send(&serde_json::json!([{"jsonrpc": "2.0", "id": 7, "method": "ping"}]));
    let still = batching.next();
    assert!(still.is_array(), "{still}");
}

/// A request whose id is that of a request still in progress is refused at once with
/// `-32600` naming the id, and does not run; the first one runs and is answered (rmcp ran
/// both and lost the first's answer without a word).
#[test]
fn a_request_reusing_an_id_in_flight_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut server = RawStdio::start(
        &root,
        &["--mode", "bypassPermissions"],
        serde_json::json!({}),
    );
    server.send(&bash_call(14, "sleep 2; echo A > first.txt; echo first"));
    server.send(&bash_call(14, "echo B > second.txt; echo second"));
    let refused = server.next();
    assert_eq!(refused["id"], 14, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("14") && message.contains("in progress"),
        "{message}"
    );
    let answered = server.next();
    assert_eq!(answered["id"], 14, "{answered}");
    assert_eq!(
        answered["result"]["content"][0]["text"], "first",
        "{answered}"
    );
    assert!(root.join("first.txt").exists());
    assert!(!root.join("second.txt").exists(), "the refused request ran");
    // Once answered, the id may be used again.
    let (is_error, texts) =
        server.call_texts(14, "Bash", serde_json::json!({"command": "echo again"}));
    assert!(!is_error, "{texts:?}");
    assert_eq!(texts[0], "again");
}

/// A cancelled request's id stays in use until its call has ended: a request reusing it
/// right after the `notifications/cancelled` is refused with `-32600` and does not run,
/// the cancelled call is not answered, and once it has ended the id is taken again and
/// that request answered with its own result (the id was freed on the cancel: the new
/// request ran, and its only answer was the cancelled call's interruption).
#[test]
fn a_cancelled_requests_id_is_in_use_until_its_call_ends() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut server = RawStdio::start(
        &root,
        &["--mode", "bypassPermissions"],
        serde_json::json!({}),
    );
    let call = |command: &str| bash_call(8, command);
    // The command ignores SIGTERM: its call stays in progress for the cancel's grace, so
    // the reuse surely arrives before it has ended, however loaded the machine is.
    server.send(&call("trap '' TERM; echo $$ > pid; exec sleep 600"));
    let pid = pid_written_to(&root.join("pid"));
    let cancel = serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 8}});
    // One write: the reuse arrives before the cancelled call can have ended.
    server.send_raw(format!("{cancel}\n{}", call("touch reused.txt; echo reused")).as_bytes());
    let refused = server.next();
    assert_eq!(refused["id"], 8, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("in progress"), "{message}");
    let deadline = std::time::Instant::now() + ANSWER_TIMEOUT;
    while alive(&pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the cancelled command still runs"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(!root.join("reused.txt").exists(), "the refused request ran");
    // Once the cancelled call has ended (it is not answered), the id is free again.
    let mut attempt = 0;
    let answered = loop {
        attempt += 1;
        assert!(attempt < 100, "the id was never freed");
        server.send(&call("echo again"));
        let answer = server.next();
        assert_eq!(answer["id"], 8, "{answer}");
        if answer["error"]["code"] == -32600 {
            std::thread::sleep(std::time::Duration::from_millis(50));
            continue;
        }
        break answer;
    };
    assert_eq!(
        answered["result"]["content"][0]["text"], "again",
        "{answered}"
    );
    // Nothing else came: the cancelled call's interruption was not sent.
    assert_eq!(
        server.next_within(std::time::Duration::from_millis(500)),
        None
    );
}
