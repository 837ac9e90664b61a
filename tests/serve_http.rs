//! `toolwright serve --http` as a real process, driven by third-party clients of
//! `../shared/mcp-peers` (the MCP inspector CLI, `MCP_INSPECTOR_CLI`; the Python SDK,
//! `MCP_PYTHON`) and by raw HTTP requests: listing and calling tools, the Host/Origin checks,
//! permission asks turned into elicitations (answered by a Python client, on the
//! 2025-11-25 handshake and on 2026-07-28's input-required retries), progress notifications
//! and cancellation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

#[path = "support/serve.rs"]
mod support;
use support::{UrlServer as Server, json_from, peer};

/// A temporary project, canonicalised.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// The inspector CLI against the server at `url`.
fn inspector_call(inspector: &str, url: &str, args: &[&str]) -> Value {
    let mut command = Command::new(inspector);
    command.args([url, "--transport", "http"]).args(args);
    json_from(command)
}

#[test]
fn the_inspector_lists_and_calls_tools_over_http_through_the_pipeline() {
    let Some(inspector) = peer("MCP_INSPECTOR_CLI") else {
        return;
    };
    let (_dir, root) = project();
    std::fs::write(root.join("f.txt"), "served file\n").unwrap();
    let server = Server::toolwright_http(
        &root,
        &["--settings", r#"{"permissions": {"deny": ["Bash(rm:*)"]}}"#],
    );

    let list = inspector_call(&inspector, &server.url, &["--method", "tools/list"]);
    let tools = list["tools"].as_array().unwrap();
    let tool = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap();
    for name in ["Bash", "Read", "Edit", "Glob", "Grep", "Write"] {
        assert_eq!(tool(name)["inputSchema"]["type"], "object", "{name}");
    }
    assert_eq!(tool("Read")["inputSchema"]["required"][0], "file_path");
    // Annotations from the safety flags.
    assert_eq!(tool("Read")["annotations"]["readOnlyHint"], true);
    assert_eq!(tool("Read")["annotations"]["openWorldHint"], false);
    assert_eq!(tool("Write")["annotations"]["readOnlyHint"], false);
    assert_eq!(tool("Write")["annotations"]["destructiveHint"], true);
    assert_eq!(tool("Bash")["annotations"]["destructiveHint"], true);
    assert_eq!(tool("WebFetch")["annotations"]["openWorldHint"], true);

    let echo = inspector_call(
        &inspector,
        &server.url,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "Bash",
            "--tool-arg",
            "command=echo served over http",
        ],
    );
    assert_eq!(echo["isError"], false, "{echo}");
    assert_eq!(echo["content"][0]["text"], "served over http");

    let arg = format!("file_path={}", root.join("f.txt").display());
    let read = inspector_call(
        &inspector,
        &server.url,
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

    let denied = inspector_call(
        &inspector,
        &server.url,
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
    assert!(root.join("f.txt").exists());
}

/// Every tool `tools/list` shows is called by the inspector through the pipeline, each with
/// a small input: the tools that can succeed without a person or a network do, the others
/// answer with a clear error result (no session state in a one-shot client, nobody to ask).
/// A tool added to the build without an entry here fails the test.
#[test]
fn the_inspector_calls_every_listed_tool() {
    let Some(inspector) = peer("MCP_INSPECTOR_CLI") else {
        return;
    };
    let (_dir, root) = project();
    std::fs::write(root.join("f.txt"), "served file\n").unwrap();
    let server = Server::toolwright_http(
        &root,
        &[
            "--settings",
            r#"{"permissions": {"allow": ["Write", "Edit", "NotebookEdit", "Bash(echo:*)", "WebFetch", "Skill", "REPL", "CronCreate", "CronDelete", "EnterWorktree", "ExitWorktree"]}}"#,
        ],
    );
    let path = |name: &str| root.join(name).display().to_string();
    let todos = r#"todos=[{"content":"Serve","status":"pending","activeForm":"Serving"}]"#;
    // (tool, arguments, must it succeed?, a word its text must contain, or "")
    let calls: Vec<(&str, Vec<String>, bool, &str)> = vec![
        ("Read", vec![format!("file_path={}", path("f.txt"))], true, "served file"),
        ("Write", vec![format!("file_path={}", path("new.txt")), "content=new".into()], true, "new.txt"),
        // A one-shot client has not read the file in its session: Edit refuses, clearly.
        ("Edit", vec![format!("file_path={}", path("f.txt")), "old_string=served".into(), "new_string=x".into()], false, "read"),
        ("NotebookEdit", vec![format!("notebook_path={}", path("n.ipynb")), "new_source=x".into()], false, "does not exist"),
        ("Glob", vec!["pattern=*.txt".into()], true, "f.txt"),
        ("Grep", vec!["pattern=served".into()], true, "f.txt"),
        ("Bash", vec!["command=echo every tool".into()], true, "every tool"),
        ("TodoWrite", vec![todos.into()], true, "odo"),
        ("TaskOutput", vec!["task_id=nope".into(), "block=false".into(), "timeout=1".into()], false, ""),
        ("TaskStop", vec!["task_id=nope".into()], false, ""),
        ("WebFetch", vec!["url=http://127.0.0.1:9/".into(), "prompt=x".into()], false, ""),
        ("Skill", vec!["skill=no-such-skill".into()], false, ""),
        // Plan mode is left only with a person's approval, whom this client cannot reach:
        // not entered (the client would be stuck in it).
        ("EnterPlanMode", vec![], false, "not available to this client"),
        // Both need a person, whom this client cannot reach: refused.
        ("ExitPlanMode", vec![], false, ""),
        ("AskUserQuestion", vec![r#"questions=[{"question":"Which?","header":"Pick","multiSelect":false,"options":[{"label":"a","description":"A"},{"label":"b","description":"B"}]}]"#.into()], false, ""),
        // The tools of the `internal` profile (listed only in builds with their features).
        // The project is not a git repository, and no worktree was entered.
        ("EnterWorktree", vec!["name=w1".into()], false, "git"),
        ("ExitWorktree", vec!["action=keep".into()], false, "worktree"),
        ("REPL", vec!["language=python".into(), "code=print(6 * 7)".into()], true, "42"),
        ("Sleep", vec!["duration_ms=1".into()], true, ""),
        ("CronCreate", vec!["cron=*/5 * * * *".into(), "prompt=check".into()], true, ""),
        ("CronList", vec![], true, ""),
        ("CronDelete", vec!["id=nope".into()], false, "nope"),
        ("WordCount", vec![format!("file_path={}", path("f.txt"))], true, "2"),
    ];
    let list = inspector_call(&inspector, &server.url, &["--method", "tools/list"]);
    let listed: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    // A client lists every tool's schema itself: ToolSearch (whose `tool_reference` answers
    // load deferred schemas into a model's request) is not served.
    assert!(!listed.contains(&"ToolSearch"), "{listed:?}");
    for name in &listed {
        assert!(
            calls.iter().any(|c| c.0 == *name),
            "{name} is listed but this test has no call for it"
        );
    }
    for (tool, args, succeeds, word) in &calls {
        if !listed.contains(tool) {
            continue;
        }
        let mut argv = vec!["--method", "tools/call", "--tool-name", tool];
        for a in args {
            argv.extend(["--tool-arg", a.as_str()]);
        }
        let out = inspector_call(&inspector, &server.url, &argv);
        let text = out["content"][0]["text"].as_str().unwrap_or_default();
        assert!(!text.is_empty(), "{tool}: empty result {out}");
        assert_eq!(out["isError"] == true, !succeeds, "{tool}: {out}");
        assert!(
            text.to_lowercase().contains(&word.to_lowercase()),
            "{tool}: `{word}` not in {text}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(root.join("new.txt")).unwrap(),
        "new"
    );
}

/// Sends one raw HTTP/1.1 request (an `initialize`) and returns the status code and as much
/// of the body as arrives before the server closes or the body is complete.
fn raw_request(port: u16, path: &str, headers: &[(&str, String)]) -> (u16, String) {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let (code, _, text) = raw_post(port, path, headers, body);
    (code, text)
}

/// Sends one raw HTTP/1.1 POST of `body` and returns the status code, the response headers
/// (names in lower case) and the body when it has a length (an event stream is not read).
fn raw_post(
    port: u16,
    path: &str,
    headers: &[(&str, String)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!("POST {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!(
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    ));
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let code: u16 = status.split_whitespace().nth(1).unwrap().parse().unwrap();
    let mut response_headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            response_headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let length = response_headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok());
    let text = match length {
        Some(n) => {
            let mut buf = vec![0; n];
            reader.read_exact(&mut buf).unwrap();
            String::from_utf8_lossy(&buf).into_owned()
        }
        None => String::new(),
    };
    (code, response_headers, text)
}

#[test]
fn requests_with_a_foreign_host_or_origin_are_refused_before_anything_runs() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &[]);
    let port = server.port();
    let path = server.path();
    let host = |h: &str| ("Host", h.to_owned());

    // The DNS-rebinding attack: the browser sends the attacker's name as Host.
    let (code, body) = raw_request(port, &path, &[host(&format!("evil.example:{port}"))]);
    assert_eq!(code, 403, "{body}");
    assert!(body.contains("Host header `evil.example:"), "{body}");
    assert!(body.contains("DNS-rebinding"), "{body}");

    // Loopback, but not this server's port.
    let (code, _) = raw_request(port, &path, &[host("localhost:1")]);
    assert_eq!(code, 403);

    // A page of another site, even with a loopback Host.
    let (code, body) = raw_request(
        port,
        &path,
        &[
            host(&format!("127.0.0.1:{port}")),
            ("Origin", "http://evil.example".to_owned()),
        ],
    );
    assert_eq!(code, 403, "{body}");
    assert!(
        body.contains("Origin `http://evil.example` is not allowed"),
        "{body}"
    );

    // The same request from this machine's names is served: loopback origins too.
    for (name, origin) in [
        (format!("127.0.0.1:{port}"), None),
        (format!("localhost:{port}"), Some("http://localhost:6274")),
        (format!("[::1]:{port}"), Some("http://127.0.0.1:3000")),
    ] {
        let mut headers = vec![host(&name)];
        if let Some(origin) = origin {
            headers.push(("Origin", origin.to_owned()));
        }
        let (code, body) = raw_request(port, &path, &headers);
        assert_eq!(code, 200, "{name} {origin:?}: {body}");
    }

    // Only /mcp is served.
    let (code, body) = raw_request(
        port,
        &server.path_with("/other"),
        &[host(&format!("127.0.0.1:{port}"))],
    );
    assert_eq!(code, 404);
    assert!(body.contains("the MCP endpoint is /mcp"), "{body}");

    // Loopback is not private: without the run's token (in the printed URL, or as a bearer
    // token), nothing is served.
    let loopback = host(&format!("127.0.0.1:{port}"));
    let (code, body) = raw_request(port, "/mcp", std::slice::from_ref(&loopback));
    assert_eq!(code, 401, "{body}");
    assert!(body.contains("Unauthorized"), "{body}");
    let (code, _) = raw_request(port, "/mcp?token=wrong", std::slice::from_ref(&loopback));
    assert_eq!(code, 401);
    let token = path.split("token=").nth(1).unwrap().to_owned();
    let bearer = ("Authorization", format!("Bearer {token}"));
    let (code, body) = raw_request(port, "/mcp", &[loopback.clone(), bearer]);
    assert_eq!(code, 200, "{body}");
    // The scheme's name is case-insensitive.
    let bearer = ("Authorization", format!("bearer {token}"));
    let (code, body) = raw_request(port, "/mcp", &[loopback.clone(), bearer]);
    assert_eq!(code, 200, "{body}");
    let basic = ("Authorization", format!("Basic {token}"));
    let (code, _) = raw_request(port, "/mcp", &[loopback, basic]);
    assert_eq!(code, 401);
}

/// Behind a TLS proxy that passes `Host: box.lan` (no port), `--allowed-host box.lan` lets
/// the request through, both our check and rmcp's.
#[test]
fn a_host_without_a_port_is_served_when_allowed_without_one() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &["--allowed-host", "box.lan"]);
    let port = server.port();
    let path = server.path();
    let (code, body) = raw_request(port, &path, &[("Host", "box.lan".to_owned())]);
    assert_eq!(code, 200, "{body}");
    let (code, _) = raw_request(port, &path, &[("Host", "evil.example".to_owned())]);
    assert_eq!(code, 403);
}

#[test]
fn a_non_loopback_address_needs_an_explicit_flag() {
    let (_dir, root) = project();
    // Refused before anything starts: this MCP server would leave a mark.
    let marker = root.join("server-started");
    let mcp = serde_json::json!({"mcpServers": {"marker": {"command": "sh",
        "args": ["-c", format!("touch '{}'; sleep 5", marker.display())]}}})
    .to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args([
            "serve",
            "--http",
            "0.0.0.0:0",
            "--mcp-config",
            &mcp,
            "--cwd",
        ])
        .arg(&root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0:0: it is not a loopback address"),
        "{stderr}"
    );
    assert!(stderr.contains("--allow-non-loopback"), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(!marker.exists(), "an MCP server was started first");

    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--http", "example.com:80", "--cwd"])
        .arg(&root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("`example.com:80` is not an address"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The Python SDK client every Python test runs: `client.py URL MODE PROTOCOL WORKDIR`,
/// printing one JSON object (the elicitations it was sent, the progress it got, the result).
const PY_CLIENT: &str = r#"
import json, os, sys, anyio
import mcp_types as types
from mcp import Client

url, mode, protocol, work = sys.argv[1:5]
out = {"elicitations": [], "progress": []}

async def answer(ctx, params):
    out["elicitations"].append({"message": params.message, "schema": params.requested_schema})
    if mode == "accept":
        return types.ElicitResult(action="accept", content={"allow": True})
    return types.ElicitResult(action="decline")

async def on_progress(progress, total, message):
    out["progress"].append({"progress": progress, "total": total, "message": message})

def dump(result):
    return {"isError": result.is_error, "text": [c.text for c in result.content if c.type == "text"]}

async def main():
    asked, withdrawn, tools_changed = anyio.Event(), anyio.Event(), anyio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            tools_changed.set()

    async def never_answer(ctx, params):
        asked.set()
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            withdrawn.set()
            raise
        return types.ElicitResult(action="decline")

    # "session" can be asked (it declines): plan mode, left only with a person's approval,
    # is entered only by clients that can ask one.
    callback = answer if mode in ("accept", "decline", "session") else never_answer if mode == "withdraw" else None
    async with Client(url, mode=protocol, elicitation_callback=callback, message_handler=on_message) as c:
        out["protocol"] = c.protocol_version
        if mode in ("accept", "decline", "no-elicitation"):
            out["result"] = dump(await c.call_tool("Bash", {"command": "touch made.txt"}))
        elif mode == "session":
            f = os.path.join(work, "f.txt")
            out["read"] = dump(await c.call_tool("Read", {"file_path": f}))
            out["edit"] = dump(await c.call_tool("Edit", {"file_path": f, "old_string": "served", "new_string": "edited"}))
            await c.call_tool("Bash", {"command": "mkdir -p sub && cd sub"})
            out["pwd"] = dump(await c.call_tool("Bash", {"command": "pwd"}))
            out["plan"] = dump(await c.call_tool("EnterPlanMode", {}))
            out["write"] = dump(await c.call_tool("Write", {"file_path": os.path.join(work, "planned.txt"), "content": "x"}))
        elif mode == "withdraw":
            # The call is cancelled while its question is open: the server withdraws it.
            async with anyio.create_task_group() as tg:
                async def call():
                    await c.call_tool("Bash", {"command": "touch made.txt"})
                tg.start_soon(call)
                with anyio.fail_after(30):
                    await asked.wait()
                tg.cancel_scope.cancel()
            with anyio.fail_after(10):
                await withdrawn.wait()
            out["withdrawn"] = True
        elif mode == "spoof":
            # Requests on 2026-07-28 (no sessions) that name made-up sessions must neither
            # reach nor push out this client's session state.
            import httpx2
            from mcp.client.streamable_http import streamable_http_client
            f = os.path.join(work, "f.txt")
            out["read"] = dump(await c.call_tool("Read", {"file_path": f}))
            for i in range(40):
                async with httpx2.AsyncClient(headers={"Mcp-Session-Id": f"made-up-{i}"}) as h:
                    async with Client(streamable_http_client(url, http_client=h), mode="auto") as other:
                        await other.call_tool("Glob", {"pattern": "*.txt"})
                        if i == 0:
                            # Sessionless requests share their state whatever they send.
                            g = os.path.join(work, "g.txt")
                            await other.call_tool("Read", {"file_path": g})
                            out["other_edit"] = dump(await other.call_tool("Edit", {"file_path": g, "old_string": "other", "new_string": "edited"}))
            out["edit"] = dump(await c.call_tool("Edit", {"file_path": f, "old_string": "served", "new_string": "edited"}))
        elif mode == "list_changed":
            # The upstream server `tiny` adds a tool: this client is told, lists it, calls it.
            names = lambda listed: [t.name for t in listed.tools]
            out["before"] = names(await c.list_tools())
            if c.protocol_version >= "2026-07-28":
                # No sessions: changes come on a subscription.
                async with c.listen(tools_list_changed=True) as sub:
                    out["added"] = dump(await c.call_tool("mcp__tiny__add_tool", {}))
                    with anyio.fail_after(30):
                        async for event in sub:
                            out["told"] = type(event).__name__
                            break
            else:
                out["added"] = dump(await c.call_tool("mcp__tiny__add_tool", {}))
                with anyio.fail_after(30):
                    await tools_changed.wait()
                out["told"] = "notifications/tools/list_changed"
            out["after"] = names(await c.list_tools())
            out["result"] = dump(await c.call_tool("mcp__tiny__dynamic", {}))
        elif mode == "idle":
            # A call longer than the idle timeout, with no progress: the session stays.
            out["result"] = dump(await c.call_tool("Bash", {"command": "sleep 3 && echo outlived"}))
        elif mode == "progress":
            command = "for i in 1 2 3 4 5 6; do echo line $i; sleep 0.4; done"
            out["result"] = dump(await c.call_tool("Bash", {"command": command}, progress_callback=on_progress))
        elif mode == "cancel":
            pid_file = os.path.join(work, "shell.pid")
            async with anyio.create_task_group() as tg:
                async def call():
                    await c.call_tool("Bash", {"command": f"echo $$ > {pid_file}.tmp && mv {pid_file}.tmp {pid_file} && sleep 60 && touch {work}/late.txt"})
                    out["finished"] = True
                tg.start_soon(call)
                with anyio.fail_after(30):
                    while not os.path.exists(pid_file):
                        await anyio.sleep(0.02)
                tg.cancel_scope.cancel()
            pid = int(open(pid_file).read())
            # The server cancels the call, which ends the shell's process group.
            with anyio.fail_after(30):
                while True:
                    try:
                        os.kill(pid, 0)
                    except ProcessLookupError:
                        break
                    await anyio.sleep(0.02)
            out["shell_gone"] = True
            out["result"] = dump(await c.call_tool("Bash", {"command": "echo still serving"}))
    print(json.dumps(out))

anyio.run(main)
"#;

/// Runs the Python client against `server`; `protocol` is the SDK's `mode`: `legacy` (the
/// 2025-11-25 handshake) or `auto` (2026-07-28 when the server offers it).
fn python(python: &str, server: &Server, work: &Path, mode: &str, protocol: &str) -> Value {
    let script = work.join(".client.py");
    std::fs::write(&script, PY_CLIENT).unwrap();
    let out = Command::new(python)
        .arg(&script)
        .args([server.url.as_str(), mode, protocol])
        .arg(work)
        .current_dir(work)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python client ({mode}, {protocol}) failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

const ASK_TOUCH: &str = r#"{"permissions": {"ask": ["Bash(touch:*)"]}}"#;

#[test]
fn an_ask_rule_becomes_an_elicitation_and_the_answer_decides() {
    let Some(py) = peer("MCP_PYTHON") else { return };
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &["--settings", ASK_TOUCH]);
    let made = root.join("made.txt");
    for protocol in ["legacy", "auto"] {
        // Accept with allow: true runs the call once.
        let out = python(&py, &server, &root, "accept", protocol);
        let expected = if protocol == "legacy" {
            "2025-11-25"
        } else {
            "2026-07-28"
        };
        assert_eq!(out["protocol"], expected, "{out}");
        let asked = &out["elicitations"].as_array().unwrap();
        assert_eq!(asked.len(), 1, "{out}");
        let message = asked[0]["message"].as_str().unwrap();
        assert!(
            message.starts_with("Allow Bash(touch made.txt)?"),
            "{message}"
        );
        assert!(
            message.contains("rule Bash(touch:*) in --settings"),
            "{message}"
        );
        assert_eq!(asked[0]["schema"]["properties"]["allow"]["type"], "boolean");
        assert_eq!(out["result"]["isError"], false, "{out}");
        assert!(made.exists(), "{protocol}: the accepted call did not run");
        std::fs::remove_file(&made).unwrap();

        // Decline: the call does not run and the caller reads the rejection.
        let out = python(&py, &server, &root, "decline", protocol);
        assert_eq!(out["elicitations"].as_array().unwrap().len(), 1, "{out}");
        assert_eq!(out["result"]["isError"], true, "{out}");
        assert_eq!(
            out["result"]["text"][0],
            toolwright::exec::REJECT_MESSAGE,
            "{out}"
        );
        assert!(!made.exists(), "{protocol}: the declined call ran");

        // A client without the capability gets a deny that says why.
        let out = python(&py, &server, &root, "no-elicitation", protocol);
        assert_eq!(out["elicitations"], serde_json::json!([]));
        assert_eq!(out["result"]["isError"], true, "{out}");
        let text = out["result"]["text"][0].as_str().unwrap();
        assert!(
            text.contains("requires approval (rule Bash(touch:*) in --settings"),
            "{text}"
        );
        assert!(
            text.contains("cannot be asked: it did not declare form elicitation"),
            "{text}"
        );
        assert!(!made.exists());
    }
}

/// One client's calls share its state: a Read lets its Edit through (also on 2026-07-28,
/// which has no sessions), and EnterPlanMode puts its later calls in plan mode.
#[test]
fn a_client_keeps_its_read_cache_and_plan_mode_across_calls() {
    let Some(py) = peer("MCP_PYTHON") else { return };
    for protocol in ["legacy", "auto"] {
        let (_dir, root) = project();
        std::fs::write(root.join("f.txt"), "served file\n").unwrap();
        let server = Server::toolwright_http(
            &root,
            &[
                "--settings",
                r#"{"permissions": {"allow": ["Edit", "Write", "Bash"]}}"#,
            ],
        );
        let out = python(&py, &server, &root, "session", protocol);
        // A `cd` does not carry over to the next command.
        assert_eq!(
            out["pwd"]["text"][0],
            root.display().to_string(),
            "{protocol}: {out}"
        );
        assert_eq!(out["read"]["isError"], false, "{protocol}: {out}");
        assert_eq!(out["edit"]["isError"], false, "{protocol}: {out}");
        assert_eq!(
            std::fs::read_to_string(root.join("f.txt")).unwrap(),
            "edited file\n"
        );
        assert_eq!(out["plan"]["isError"], false, "{protocol}: {out}");
        assert_eq!(out["write"]["isError"], true, "{protocol}: {out}");
        assert!(
            out["write"]["text"][0]
                .as_str()
                .unwrap()
                .contains("Plan mode"),
            "{protocol}: {out}"
        );
        assert!(!root.join("planned.txt").exists());
    }
}

/// A call cancelled while its permission question is open withdraws the question
/// (`notifications/cancelled` for the elicitation), and nothing runs.
#[test]
fn a_cancelled_call_withdraws_its_open_question() {
    let Some(py) = peer("MCP_PYTHON") else { return };
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &["--settings", ASK_TOUCH]);
    let out = python(&py, &server, &root, "withdraw", "legacy");
    assert_eq!(out["withdrawn"], true, "{out}");
    assert_eq!(
        out["elicitations"].as_array().map(Vec::len),
        Some(0),
        "{out}"
    );
    assert!(!root.join("made.txt").exists());
}

/// A session's state belongs to the session rmcp made, not to whatever `Mcp-Session-Id` a
/// request names: forty sessionless requests naming made-up sessions leave a real
/// session's read cache in place.
#[test]
fn requests_naming_made_up_sessions_do_not_push_out_a_real_one() {
    let Some(py) = peer("MCP_PYTHON") else { return };
    let (_dir, root) = project();
    std::fs::write(root.join("f.txt"), "served file\n").unwrap();
    let server = Server::toolwright_http(
        &root,
        &["--settings", r#"{"permissions": {"allow": ["Edit"]}}"#],
    );
    std::fs::write(root.join("g.txt"), "other file\n").unwrap();
    let out = python(&py, &server, &root, "spoof", "legacy");
    assert_eq!(out["read"]["isError"], false, "{out}");
    assert_eq!(out["other_edit"]["isError"], false, "{out}");
    assert_eq!(out["edit"]["isError"], false, "{out}");
    assert_eq!(
        std::fs::read_to_string(root.join("f.txt")).unwrap(),
        "edited file\n"
    );
}

#[test]
fn a_call_with_a_progress_token_gets_progress_notifications() {
    let Some(py) = peer("MCP_PYTHON") else { return };
    let (_dir, root) = project();
    let server = Server::toolwright_http(
        &root,
        &["--settings", r#"{"permissions": {"allow": ["Bash"]}}"#],
    );
    for protocol in ["legacy", "auto"] {
        let out = python(&py, &server, &root, "progress", protocol);
        assert_eq!(out["result"]["isError"], false, "{out}");
        assert_eq!(
            out["result"]["text"][0],
            "line 1\nline 2\nline 3\nline 4\nline 5\nline 6"
        );
        let progress: Vec<f64> = out["progress"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["progress"].as_f64().unwrap())
            .collect();
        assert!(!progress.is_empty(), "{protocol}: no progress: {out}");
        // Bash's reports count output bytes; MCP wants every notification to increase.
        assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
        let message = out["progress"][0]["message"].as_str().unwrap();
        assert!(
            message.contains("bytes of output; last line: line "),
            "{message}"
        );
    }
}

#[test]
fn cancelling_a_request_cancels_the_call_and_the_server_goes_on() {
    let Some(py) = peer("MCP_PYTHON") else { return };
    let (_dir, root) = project();
    let server = Server::toolwright_http(
        &root,
        &["--settings", r#"{"permissions": {"allow": ["Bash"]}}"#],
    );
    for protocol in ["legacy", "auto"] {
        let _ = std::fs::remove_file(root.join("shell.pid"));
        let out = python(&py, &server, &root, "cancel", protocol);
        assert_eq!(out["shell_gone"], true, "{out}");
        assert!(out.get("finished").is_none(), "{out}");
        assert_eq!(out["result"]["text"][0], "still serving", "{out}");
        assert!(!root.join("late.txt").exists());
    }
}

/// A session lives as long as a call of its runs, however long and however quiet (rmcp's
/// own idle timeout counted messages, and closed a session, cancelling its call, five
/// minutes into a silent one), and is closed once idle for the timeout.
#[test]
fn a_long_silent_call_keeps_its_session_and_an_idle_session_closes() {
    let Some(py) = peer("MCP_PYTHON") else { return };
    let (_dir, root) = project();
    let server = Server::toolwright_http(
        &root,
        &[
            "--settings",
            r#"{"permissions": {"allow": ["Bash"]}}"#,
            "--session-idle-timeout",
            "1",
        ],
    );
    let out = python(&py, &server, &root, "idle", "legacy");
    assert_eq!(out["result"]["isError"], false, "{out}");
    assert_eq!(out["result"]["text"][0], "outlived", "{out}");

    // A session whose client went away without DELETE (nothing open, nothing arriving).
    let host = [("Host", format!("127.0.0.1:{}", server.port()))];
    let (code, headers, _) = raw_post(
        server.port(),
        &server.path(),
        &host,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    );
    assert_eq!(code, 200);
    let session = headers
        .iter()
        .find(|(name, _)| name == "mcp-session-id")
        .map(|(_, value)| value.clone())
        .unwrap();
    let ping = |id: &str| {
        let headers = [host[0].clone(), ("Mcp-Session-Id", id.to_owned())];
        raw_post(
            server.port(),
            &server.path(),
            &headers,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
        )
        .0
    };
    assert_eq!(ping(&session), 200, "the session is there at first");
    // Closed once left alone for longer than the timeout (a ping is activity, so each try
    // waits longer, in case a slow machine kept the first wait from being long enough).
    let closed = [2, 4, 8].into_iter().any(|secs| {
        std::thread::sleep(Duration::from_secs(secs));
        ping(&session) == 404
    });
    assert!(closed, "an idle session was never closed");
}

/// `--no-auth` serves without a token (the printed URL has none), and TOOLWRIGHT_SERVE_TOKEN
/// fixes the token of a run.
#[test]
fn the_token_can_be_fixed_or_turned_off() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &["--no-auth"]);
    assert!(!server.url.contains("token="), "{}", server.url);
    let port = server.port();
    let (code, body) = raw_request(port, "/mcp", &[("Host", format!("127.0.0.1:{port}"))]);
    assert_eq!(code, 200, "{body}");

    let mut command = support::toolwright_http_command(&root, &[]);
    command.env("TOOLWRIGHT_SERVE_TOKEN", "fixed-token_1-0123456789");
    command.stderr(Stdio::inherit());
    let server = Server::start(command);
    assert!(
        server.url.ends_with("/mcp?token=fixed-token_1-0123456789"),
        "{}",
        server.url
    );
}

/// The token comes from the process's environment only: a settings file's `env` (a
/// trusted repository's committed `.claude/settings.json` among them) cannot pin it to a
/// value it publishes, with or without `TOOLWRIGHT_SERVE_TOKEN` set (it set the token, over
/// the real variable too).
#[test]
fn a_settings_files_env_does_not_set_the_token() {
    let (_dir, root) = project();
    let pinned = "published-token-0123456789";
    let settings = serde_json::json!({"env": {"TOOLWRIGHT_SERVE_TOKEN": pinned}}).to_string();
    for real in [None, Some("real-secret-token-0123456789")] {
        let mut command = support::toolwright_http_command(&root, &["--settings", &settings]);
        command.stderr(Stdio::inherit());
        if let Some(real) = real {
            command.env("TOOLWRIGHT_SERVE_TOKEN", real);
        }
        let server = Server::start(command);
        assert!(!server.url.contains(pinned), "{real:?}: {}", server.url);
        if let Some(real) = real {
            assert!(
                server.url.ends_with(&format!("?token={real}")),
                "{}",
                server.url
            );
        }
        let port = server.port();
        let host = ("Host", format!("127.0.0.1:{port}"));
        let (code, body) = raw_request(port, &format!("/mcp?token={pinned}"), &[host]);
        assert_eq!(code, 401, "{real:?}: the settings' token was taken: {body}");
    }
}

/// A `?token=` whose characters are percent-encoded (as a client or a proxy may write any
/// of them) is the same token, decoded before it is compared: it was refused with `401`.
/// A wrong token stays wrong however it is written.
#[test]
fn a_percent_encoded_token_in_the_query_is_accepted() {
    let (_dir, root) = project();
    let token = "fixed-token_1-0123456789";
    let mut command = support::toolwright_http_command(&root, &[]);
    command
        .env("TOOLWRIGHT_SERVE_TOKEN", token)
        .stderr(Stdio::inherit());
    let server = Server::start(command);
    let port = server.port();
    let host = || ("Host", format!("127.0.0.1:{port}"));
    let every: String = token.bytes().map(|b| format!("%{b:02X}")).collect();
    let some = token.replace('-', "%2d").replace('_', "%5F");
    for written in [every, some] {
        let (code, body) = raw_request(port, &format!("/mcp?token={written}"), &[host()]);
        assert_eq!(code, 200, "?token={written}: {body}");
    }
    let wrong: String = "fixed-token_1-0123456780"
        .bytes()
        .map(|b| format!("%{b:02x}"))
        .collect();
    for written in [wrong.as_str(), "%zz", "fixed-token_1-012345678%"] {
        let (code, _) = raw_request(port, &format!("/mcp?token={written}"), &[host()]);
        assert_eq!(code, 401, "?token={written}");
    }
}

/// SIGTERM stops the server with 143 (128 + 15), after its calls are cancelled.
#[test]
fn a_signal_stops_the_http_server_with_its_status() {
    let (_dir, root) = project();
    let mut server = Server::toolwright_http(&root, &[]);
    let status = support::terminate_and_wait(&mut server.child);
    assert_eq!(status.code(), Some(143));
}

/// The token is printed on standard output only: standard error (often a log file others
/// can read) names the address, not the token.
#[test]
fn the_token_is_not_printed_on_standard_error() {
    let (_dir, root) = project();
    let mut command = support::toolwright_http_command(&root, &[]);
    command
        .env("TOOLWRIGHT_SERVE_TOKEN", "secret-token-42-0123456789")
        .stderr(Stdio::piped());
    let mut server = Server::start(command);
    assert!(
        server.url.ends_with("?token=secret-token-42-0123456789"),
        "{}",
        server.url
    );
    let status = support::terminate_and_wait(&mut server.child);
    assert_eq!(status.code(), Some(143));
    let mut stderr = String::new();
    server
        .child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(
        stderr.contains("MCP over Streamable HTTP at http://127.0.0.1:"),
        "{stderr}"
    );
    assert!(!stderr.contains("secret-token-42-0123456789"), "{stderr}");
}

/// A POST whose body is not a JSON-RPC message gets `400 Bad Request` with a JSON-RPC error
/// saying why (`-32700` for a body that is not JSON, `-32600` for JSON that is not a
/// message), not rmcp's `415 Unsupported Media Type` and a line of text; the server goes on.
#[test]
fn a_body_that_is_not_a_json_rpc_message_gets_400_and_a_json_rpc_error() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &["--no-auth"]);
    let port = server.port();
    let host = ("Host", format!("127.0.0.1:{port}"));
    for (body, code) in [
        ("{not json", -32700),
        (
            "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":{\"x\":\"\u{1}",
            -32700,
        ),
        ("", -32700),
        (r#"{"jsonrpc":"2.0","id":6}"#, -32600),
        (r#"{"jsonrpc":"1.0","id":7,"method":"ping"}"#, -32600),
        ("[]", -32600),
    ] {
        let (status, headers, text) = raw_post(port, "/mcp", std::slice::from_ref(&host), body);
        assert_eq!(status, 400, "{body}: {text}");
        assert!(
            headers
                .iter()
                .any(|(name, value)| name == "content-type" && value == "application/json"),
            "{body}: {headers:?}"
        );
        let answer: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{body}: {e}: {text}"));
        assert_eq!(answer["error"]["code"], code, "{body}: {answer}");
        assert_eq!(answer["jsonrpc"], "2.0", "{body}: {answer}");
        assert!(answer["id"].is_null(), "{body}: {answer}");
    }
    let (code, body) = raw_request(port, "/mcp", std::slice::from_ref(&host));
    assert_eq!(code, 200, "{body}");
}

/// Every client is told when an upstream MCP server's tools change, and lists and calls the
/// new tool: an HTTP session (2025-11-25) gets `notifications/tools/list_changed`, a
/// 2026-07-28 client (no sessions) gets it on its `subscriptions/listen` stream.
#[test]
fn clients_are_told_when_an_upstream_servers_tools_change() {
    let Some(py) = peer("MCP_PYTHON") else { return };
    let Some(tiny) = support::tiny_server() else {
        return;
    };
    let config = serde_json::json!({"mcpServers": {"tiny": {"command": tiny, "args": []}}});
    for protocol in ["legacy", "auto"] {
        // A server each: tiny keeps the tool it added.
        let (_dir, root) = project();
        let server = Server::toolwright_http(
            &root,
            &[
                "--mode",
                "bypassPermissions",
                "--mcp-config",
                &config.to_string(),
            ],
        );
        let out = python(&py, &server, &root, "list_changed", protocol);
        let has = |key: &str, name: &str| {
            out[key]
                .as_array()
                .unwrap_or_else(|| panic!("{protocol}: {out}"))
                .iter()
                .any(|n| n == name)
        };
        assert!(has("before", "mcp__tiny__add_tool"), "{protocol}: {out}");
        assert!(!has("before", "mcp__tiny__dynamic"), "{protocol}: {out}");
        assert_eq!(out["added"]["isError"], false, "{protocol}: {out}");
        assert!(out["told"].is_string(), "{protocol}: {out}");
        assert!(has("after", "mcp__tiny__dynamic"), "{protocol}: {out}");
        assert_eq!(out["result"]["isError"], false, "{protocol}: {out}");
        assert_eq!(out["result"]["text"][0], "dynamic ok", "{protocol}: {out}");
    }
}

/// Sends one raw HTTP/1.1 `DELETE` of the endpoint with `headers`; the status code.
fn raw_delete(port: u16, path: &str, headers: &[(&str, String)]) -> u16 {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!("DELETE {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut status = String::new();
    BufReader::new(stream).read_line(&mut status).unwrap();
    status.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Ending a session that does not exist is `404 Not Found`, as MCP says of a session id the
/// server does not know; ending a real one is accepted, and it is gone after.
#[test]
fn deleting_an_unknown_session_is_404() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &[]);
    let host = ("Host", format!("127.0.0.1:{}", server.port()));
    let made_up = ("Mcp-Session-Id", "no-such-session".to_owned());
    assert_eq!(
        raw_delete(server.port(), &server.path(), &[host.clone(), made_up]),
        404
    );
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let (code, headers, _) = raw_post(
        server.port(),
        &server.path(),
        std::slice::from_ref(&host),
        body,
    );
    assert_eq!(code, 200);
    let id = headers
        .iter()
        .find(|(name, _)| name == "mcp-session-id")
        .map(|(_, value)| value.clone())
        .unwrap_or_else(|| panic!("no session id: {headers:?}"));
    let real = ("Mcp-Session-Id", id);
    let code = raw_delete(server.port(), &server.path(), &[host.clone(), real.clone()]);
    assert!(code == 200 || code == 202, "{code}");
    assert_eq!(
        raw_delete(server.port(), &server.path(), &[host, real]),
        404
    );
}

/// A session its client ends (`DELETE`) stops its calls at once: rmcp let a closed
/// session's call run on for five seconds, its command's effects included.
#[test]
fn ending_a_session_stops_its_calls() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(
        &root,
        &["--settings", r#"{"permissions": {"allow": ["Bash"]}}"#],
    );
    let host = ("Host", format!("127.0.0.1:{}", server.port()));
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let (code, headers, _) = raw_post(
        server.port(),
        &server.path(),
        std::slice::from_ref(&host),
        init,
    );
    assert_eq!(code, 200);
    let id = headers
        .iter()
        .find(|(name, _)| name == "mcp-session-id")
        .map(|(_, value)| value.clone())
        .unwrap();
    let session = [host.clone(), ("Mcp-Session-Id", id)];
    let (code, _, _) = raw_post(
        server.port(),
        &server.path(),
        &session,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(code, 202);
    // The call, its response stream kept open (not read).
    let marker = root.join("late.txt");
    let pid_file = root.join("call.pid");
    let command = format!(
        "echo $$ > '{}'; sleep 2; touch '{}'; sleep 30",
        pid_file.display(),
        marker.display()
    );
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "Bash", "arguments": {"command": command}}})
    .to_string();
    let mut stream = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    let mut request = format!("POST {} HTTP/1.1\r\n", server.path());
    for (name, value) in &session {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!(
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{call}",
        call.len()
    ));
    stream.write_all(request.as_bytes()).unwrap();
    let started = std::time::Instant::now();
    // The shell's pid, once it is written whole (the file exists before `echo` fills it).
    let shell: i32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.strip_suffix('\n').and_then(|t| t.parse().ok()))
        {
            break pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the call never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let code = raw_delete(server.port(), &server.path(), &session);
    assert!(code == 200 || code == 202, "{code}");
    // Well past the `sleep 2`: the command was stopped before it.
    std::thread::sleep(Duration::from_secs(4));
    assert!(!marker.exists(), "the ended session's command ran on");
    assert!(
        !std::path::Path::new(&format!("/proc/{shell}")).exists(),
        "the ended session's shell is still running"
    );
    drop(stream);
}

/// The token stays out of what the server's commands, hooks and MCP servers inherit (`env`
/// through Bash printed it), and one too short to resist guessing is refused (exit 2)
/// before anything starts.
#[test]
fn the_token_is_not_inherited_and_a_short_one_is_refused() {
    let (_dir, root) = project();
    let token = "inherit-me-not-0123456789";
    let hook_env = root.join("hook-env.txt");
    let settings = serde_json::json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command",
            "command": format!("env > '{}'", hook_env.display())}]}]},
    })
    .to_string();
    let mut command = support::toolwright_http_command(&root, &["--settings", &settings]);
    command
        .env("TOOLWRIGHT_SERVE_TOKEN", token)
        .stderr(Stdio::inherit());
    let server = Server::start(command);
    let path = server.path();
    let host = ("Host", format!("127.0.0.1:{}", server.port()));
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let (code, headers, _) = raw_post(server.port(), &path, std::slice::from_ref(&host), init);
    assert_eq!(code, 200);
    let id = headers
        .iter()
        .find(|(name, _)| name == "mcp-session-id")
        .map(|(_, value)| value.clone())
        .unwrap();
    let session = [host.clone(), ("Mcp-Session-Id", id)];
    let (code, _, _) = raw_post(
        server.port(),
        &path,
        &session,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(code, 202);
    let env_file = root.join("env.txt");
    let call = serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "Bash", "arguments": {"command": "env > env.tmp && mv env.tmp env.txt"}}})
    .to_string();
    // The response stream is kept open (not read) until the command has written its file.
    let mut stream = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    let mut request = format!("POST {path} HTTP/1.1\r\n");
    for (name, value) in &session {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!(
        "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{call}",
        call.len()
    ));
    stream.write_all(request.as_bytes()).unwrap();
    let started = std::time::Instant::now();
    while !env_file.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the command never ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(stream);
    for file in [&env_file, &hook_env] {
        let env = std::fs::read_to_string(file).unwrap();
        assert!(env.contains("PATH="), "{env}");
        assert!(
            !env.contains("TOOLWRIGHT_SERVE_TOKEN") && !env.contains(token),
            "{}: {env}",
            file.display()
        );
    }

    let mut short = support::toolwright_http_command(&root, &[])
        .env("TOOLWRIGHT_SERVE_TOKEN", "short-token")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while short.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            let _ = short.kill();
            panic!("a server with a short token started");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = short.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("TOOLWRIGHT_SERVE_TOKEN is 11 characters long; a token needs at least 16"),
        "{stderr}"
    );
}

/// An `initialize` without `clientInfo` is told so (`-32602`, with its id), not
/// `400 Session ID is required`.
#[test]
fn an_initialize_without_client_info_is_told_what_is_missing() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &[]);
    let host = ("Host", format!("127.0.0.1:{}", server.port()));
    let init = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#;
    let (code, _, body) = raw_post(server.port(), &server.path(), &[host], init);
    assert_eq!(code, 400, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"));
    assert_eq!(answer["id"], 7, "{answer}");
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("Invalid params for initialize") && message.contains("clientInfo"),
        "{answer}"
    );
}

/// Sends `head` (a request's start line and headers, without the blank line) and `body` on
/// a new connection to `port`, and reads the response's lines until `until` says stop (or
/// the server closes, or 60 s pass); the lines read, and the connection (still open).
fn raw_exchange(
    port: u16,
    head: &str,
    body: &str,
    until: impl Fn(&str) -> bool,
) -> (Vec<String>, TcpStream) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let request = format!("{head}\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let stop = until(&line);
        lines.push(line);
        if stop {
            break;
        }
    }
    (lines, stream)
}

/// A call still running keeps its session, as `--session-idle-timeout` says, also when its
/// client closed the connection: past the timeout its result can still be fetched with
/// `GET` and `Last-Event-ID`, and the call runs to its end (it was killed when the timeout
/// passed); the idle clock starts when it ends.
#[test]
fn a_running_call_keeps_its_session_after_its_client_disconnects() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(
        &root,
        &["--mode", "bypassPermissions", "--session-idle-timeout", "1"],
    );
    let (port, path) = (server.port(), server.path());
    let host = format!("Host: 127.0.0.1:{port}");
    let (code, headers, _) = raw_post(
        port,
        &path,
        &[("Host", format!("127.0.0.1:{port}"))],
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
    );
    assert_eq!(code, 200);
    let session = headers
        .iter()
        .find(|(name, _)| name == "mcp-session-id")
        .map(|(_, value)| value.clone())
        .unwrap();
    let session_headers = format!(
        "{host}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\nAccept: application/json, text/event-stream"
    );
    // The call's stream opens with an event whose id resumes it; then the client leaves.
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"sleep 5 && touch done.txt && echo finished"}}}"#;
    let (lines, connection) = raw_exchange(
        port,
        &format!("POST {path} HTTP/1.1\r\n{session_headers}\r\nContent-Type: application/json"),
        call,
        |line| line.starts_with("id: "),
    );
    let event = lines
        .last()
        .and_then(|l| l.strip_prefix("id: "))
        .map(|id| id.trim().to_owned())
        .unwrap_or_else(|| panic!("no event id: {lines:?}"));
    drop(connection);
    // Longer than the idle timeout (and the reaper's period), shorter than the call.
    std::thread::sleep(Duration::from_millis(2500));
    let (lines, _) = raw_exchange(
        port,
        &format!("GET {path} HTTP/1.1\r\n{session_headers}\r\nLast-Event-ID: {event}"),
        "",
        |line| line.contains("finished"),
    );
    assert!(
        lines.last().is_some_and(|l| l.contains(r#""id":2"#)),
        "the result was not resumed: {lines:?}"
    );
    assert!(
        root.join("done.txt").exists(),
        "the call of a session whose client disconnected did not run to its end"
    );

    // Then, left alone, the session closes.
    let ping = || {
        raw_post(
            port,
            &path,
            &[
                ("Host", format!("127.0.0.1:{port}")),
                ("Mcp-Session-Id", session.clone()),
            ],
            r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        )
        .0
    };
    let closed = [2, 4, 8].into_iter().any(|secs| {
        std::thread::sleep(Duration::from_secs(secs));
        ping() == 404
    });
    assert!(closed, "the session was never closed after its call ended");
}

/// `--session-idle-timeout` beyond the largest accepted is refused saying it is too large
/// and what the largest is (it said the number was not positive).
#[test]
fn a_session_idle_timeout_too_large_is_refused_as_too_large() {
    let (_dir, root) = project();
    for (value, expected) in [
        ("1e30", "too large"),
        ("inf", "too large"),
        ("0", "not a positive number"),
        ("soon", "not a positive number"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
            .args([
                "serve",
                "--http",
                "0",
                "--session-idle-timeout",
                value,
                "--cwd",
            ])
            .arg(&root)
            .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{value}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(expected), "{value}: {stderr}");
        if expected == "too large" {
            assert!(stderr.contains("1000000000"), "{value}: {stderr}");
        }
    }
}

/// Over HTTP too, a session's second `initialize` is refused with `-32600`, and a request
/// reusing the id of one of its session still in progress is refused at once (`400` with
/// `-32600` naming the id) and does not run, while the first is answered.
#[test]
fn a_second_initialize_and_an_id_in_progress_are_refused_over_http() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &["--mode", "bypassPermissions"]);
    let (port, path) = (server.port(), server.path());
    let host = ("Host", format!("127.0.0.1:{port}"));
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let (code, headers, _) = raw_post(port, &path, std::slice::from_ref(&host), initialize);
    assert_eq!(code, 200);
    let session = headers
        .iter()
        .find(|(name, _)| name == "mcp-session-id")
        .map(|(_, value)| value.clone())
        .unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json"
    );
    let (lines, _) = raw_exchange(port, &head, initialize, |l| l.contains(r#""id":1"#));
    let answer = lines.last().unwrap();
    assert!(
        answer.contains("-32600") && answer.contains("already initialized"),
        "{lines:?}"
    );

    let first = r#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"sleep 2; echo first"}}}"#;
    let (started, connection) = raw_exchange(port, &head, first, |l| l.starts_with("id: "));
    assert!(
        started.last().is_some_and(|l| l.starts_with("id: ")),
        "{started:?}"
    );
    let second = r#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"touch second.txt; echo second"}}}"#;
    let (code, _, body) = raw_post(
        port,
        &path,
        &[host, ("Mcp-Session-Id", session.clone())],
        second,
    );
    assert_eq!(code, 400, "{body}");
    let refused: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(refused["id"], 14, "{body}");
    assert_eq!(refused["error"]["code"], -32600, "{body}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("14") && message.contains("in progress"),
        "{message}"
    );
    let mut reader = BufReader::new(connection);
    let mut answered = String::new();
    while !answered.contains("first") {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "no answer: {answered}"
        );
        answered.push_str(&line);
    }
    assert!(!root.join("second.txt").exists(), "the refused request ran");
}

/// Initializes a session on the server at `port` (protocol 2025-11-25, with `capabilities`);
/// its `Mcp-Session-Id`.
fn raw_session(port: u16, path: &str, capabilities: &str) -> String {
    let initialize = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{capabilities},"clientInfo":{{"name":"raw","version":"1"}}}}}}"#
    );
    let host = ("Host", format!("127.0.0.1:{port}"));
    let (code, headers, body) = raw_post(port, path, &[host], &initialize);
    assert_eq!(code, 200, "{body}");
    headers
        .iter()
        .find(|(name, _)| name == "mcp-session-id")
        .map(|(_, value)| value.clone())
        .unwrap()
}

/// The head of a POST (or, with `method`, another request) of session `session`.
fn session_head(method: &str, port: u16, path: &str, session: &str) -> String {
    format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json"
    )
}

/// Whether `body` (a `400` answer) refuses request `id` as one whose id is in use.
fn refused_as_in_use(body: &str, id: &str) -> bool {
    let Ok(refused) = serde_json::from_str::<Value>(body) else {
        return false;
    };
    refused["error"]["code"] == -32600
        && refused["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("request id {id} ")) && m.contains("in progress"))
}

/// Ids are compared as rmcp reads them: while request `15` runs, requests with id `15.0`,
/// `15e0` or `150e-1` (the number 15 to rmcp, and answered as `15`) are refused with
/// `-32600` and do not run, and the first one's answer still comes (the check compared
/// the JSON text: they ran, and the first one's answer was lost).
#[test]
fn an_id_in_progress_written_another_way_is_refused_over_http() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &["--mode", "bypassPermissions"]);
    let (port, path) = (server.port(), server.path());
    let session = raw_session(port, &path, "{}");
    let head = session_head("POST", port, &path, &session);
    let first = r#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"sleep 2; echo first"}}}"#;
    let (started, connection) = raw_exchange(port, &head, first, |l| l.starts_with("id: "));
    assert!(
        started.last().is_some_and(|l| l.starts_with("id: ")),
        "{started:?}"
    );
    for (n, id) in ["15.0", "15e0", "150e-1"].into_iter().enumerate() {
        let again = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"Bash","arguments":{{"command":"touch again{n}.txt; echo again"}}}}}}"#
        );
        let (code, _, body) = raw_post(
            port,
            &path,
            &[
                ("Host", format!("127.0.0.1:{port}")),
                ("Mcp-Session-Id", session.clone()),
            ],
            &again,
        );
        assert_eq!(code, 400, "{id}: {body}");
        // Named as rmcp reads it.
        assert!(refused_as_in_use(&body, "15"), "{id}: {body}");
    }
    let mut reader = BufReader::new(connection);
    let mut answered = String::new();
    while !answered.contains("first") {
        let mut line = String::new();
        assert!(
            reader.read_line(&mut line).unwrap() > 0,
            "the first request's answer was lost: {answered}"
        );
        answered.push_str(&line);
    }
    assert!(answered.contains(r#""id":15"#), "{answered}");
    for n in 0..3 {
        assert!(
            !root.join(format!("again{n}.txt")).exists(),
            "a refused request ran"
        );
    }
}

/// A call whose client closed the connection keeps its id in use as long as it runs: a
/// request reusing the id is refused (`400`, `-32600`) and does not run, and the first
/// call's result can still be fetched with `GET` and `Last-Event-ID` (the id was freed
/// with the response stream: the second request ran, and the first result was lost).
#[test]
fn an_id_stays_in_use_while_its_call_runs_after_its_client_disconnects() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &["--mode", "bypassPermissions"]);
    let (port, path) = (server.port(), server.path());
    let session = raw_session(port, &path, "{}");
    let head = session_head("POST", port, &path, &session);
    let first = r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"sleep 3; echo first10"}}}"#;
    let (lines, connection) = raw_exchange(port, &head, first, |l| l.starts_with("id: "));
    let event = lines
        .last()
        .and_then(|l| l.strip_prefix("id: "))
        .map(|id| id.trim().to_owned())
        .unwrap_or_else(|| panic!("no event id: {lines:?}"));
    drop(connection);
    std::thread::sleep(Duration::from_millis(300));
    let second = r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"touch second.txt; echo second10"}}}"#;
    let (code, _, body) = raw_post(
        port,
        &path,
        &[
            ("Host", format!("127.0.0.1:{port}")),
            ("Mcp-Session-Id", session.clone()),
        ],
        second,
    );
    assert_eq!(code, 400, "the request reusing the id was served: {body}");
    assert!(refused_as_in_use(&body, "10"), "{body}");
    let (lines, _) = raw_exchange(
        port,
        &format!(
            "{}\r\nLast-Event-ID: {event}",
            session_head("GET", port, &path, &session)
        ),
        "",
        |line| line.contains("first10"),
    );
    assert!(
        lines
            .last()
            .is_some_and(|l| l.contains("first10") && l.contains(r#""id":10"#)),
        "the first call's result was not resumed: {lines:?}"
    );
    assert!(!root.join("second.txt").exists(), "the refused request ran");
}

/// A call waiting for its client's answer to a permission question does not keep the
/// session of a client that went away: the session closes at the idle timeout (it was
/// kept for ever), and the call ends without running its command.
#[test]
fn a_call_waiting_on_a_gone_client_does_not_keep_its_session() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(
        &root,
        &["--settings", ASK_TOUCH, "--session-idle-timeout", "1"],
    );
    let (port, path) = (server.port(), server.path());
    let session = raw_session(port, &path, r#"{"elicitation":{}}"#);
    let head = session_head("POST", port, &path, &session);
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"touch made.txt"}}}"#;
    let (lines, connection) = raw_exchange(port, &head, call, |l| l.contains("elicitation/create"));
    assert!(
        lines
            .last()
            .is_some_and(|l| l.contains("elicitation/create")),
        "the call did not ask: {lines:?}"
    );
    drop(connection);
    let ping = || {
        raw_post(
            port,
            &path,
            &[
                ("Host", format!("127.0.0.1:{port}")),
                ("Mcp-Session-Id", session.clone()),
            ],
            r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
        )
        .0
    };
    let closed = [2, 4, 8].into_iter().any(|secs| {
        std::thread::sleep(Duration::from_secs(secs));
        ping() == 404
    });
    assert!(
        closed,
        "the session of a call waiting on a client that went away was never closed"
    );
    assert!(!root.join("made.txt").exists(), "the unanswered call ran");
}

/// The event id (`id:` line) a call's stream opens with, read from `lines`.
fn first_event_id(lines: &[String]) -> String {
    lines
        .iter()
        .find_map(|l| l.strip_prefix("id: "))
        .map(|id| id.trim().to_owned())
        .unwrap_or_else(|| panic!("no event id: {lines:?}"))
}

/// A call that ends while its client is away (the connection closed after the stream's
/// first event, and not back before the result came) keeps its result for the session:
/// `GET` with the stream's `Last-Event-ID` replays it, once (it was lost: rmcp dropped
/// the stream's events when the answer was sent, and the `GET` got an empty `200`). A
/// `Last-Event-ID` that cannot be resumed (fetched already, never given out, not an event
/// id) gets `400` with a JSON-RPC error saying why, not an empty `200`.
#[test]
fn a_result_that_came_while_its_client_was_away_is_replayed_once() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &["--mode", "bypassPermissions"]);
    let (port, path) = (server.port(), server.path());
    let session = raw_session(port, &path, "{}");
    let head = session_head("POST", port, &path, &session);
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"sleep 1; echo finished"}}}"#;
    let (lines, connection) = raw_exchange(port, &head, call, |l| l.starts_with("id: "));
    let event = first_event_id(&lines);
    drop(connection);
    // The call ends meanwhile (within the `retry: 3000` a client is told to wait).
    std::thread::sleep(Duration::from_millis(2500));
    let get = format!(
        "{}\r\nLast-Event-ID: {event}",
        session_head("GET", port, &path, &session)
    );
    let (lines, _) = raw_exchange(port, &get, "", |line| line.contains("finished"));
    assert!(lines[0].contains(" 200 "), "{lines:?}");
    assert!(
        lines
            .last()
            .is_some_and(|l| l.contains(r#""id":2"#) && l.contains("finished")),
        "the result was not replayed: {lines:?}"
    );

    // Fetched: it is not kept, and asking again (or for what never was) is refused.
    let (stream_count, session_count) = (
        event.split('/').nth(1).unwrap().to_owned(),
        event.split('/').next().unwrap().to_owned(),
    );
    let never = format!(
        "{session_count}/{}",
        stream_count.parse::<u64>().unwrap() + 99
    );
    for (id, why) in [
        (event.as_str(), "no event stream"),
        (never.as_str(), "no event stream"),
        ("garbage", "not an event id"),
        ("7/x", "not an event id"),
    ] {
        let get = format!(
            "{}\r\nLast-Event-ID: {id}\r\nConnection: close",
            session_head("GET", port, &path, &session)
        );
        let (lines, _) = raw_exchange(port, &get, "", |line| line.starts_with('{'));
        assert!(lines[0].contains(" 400 "), "{id}: {lines:?}");
        let body: Value = serde_json::from_str(lines.last().unwrap()).unwrap();
        assert_eq!(body["error"]["code"], -32600, "{id}: {body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(why) && message.contains(id),
            "{id}: {message}"
        );
    }
}

/// SIGTERM answers every call in progress over HTTP as interrupted, on its own stream,
/// before the server exits (143), as over stdio: the stream closed with no answer.
#[test]
fn a_signal_answers_http_calls_in_progress_as_interrupted() {
    let (_dir, root) = project();
    let mut server = Server::toolwright_http(&root, &["--mode", "bypassPermissions"]);
    let (port, path) = (server.port(), server.path());
    let session = raw_session(port, &path, "{}");
    let head = session_head("POST", port, &path, &session);
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"Bash","arguments":{"command":"touch started; sleep 60"}}}"#;
    let (_, connection) = raw_exchange(port, &head, call, |l| l.starts_with("id: "));
    let started = std::time::Instant::now();
    while !root.join("started").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the command never ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = support::terminate_and_wait(&mut server.child);
    assert_eq!(status.code(), Some(143));
    let mut rest = String::new();
    let _ = BufReader::new(connection).read_to_string(&mut rest);
    let answer = rest
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .filter(|data| !data.is_empty())
        .unwrap_or_else(|| panic!("the call was not answered: {rest:?}"));
    let answer: Value = serde_json::from_str(answer).unwrap();
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "[Request interrupted by user for tool use]",
        "{answer}"
    );
}

/// A batch is refused over HTTP whatever the protocol, and the error says why in terms
/// that hold for a client on 2025-03-26 too: this server takes batches only over stdio,
/// and over HTTP each message goes in a request of its own (it told a 2025-03-26 client
/// that batches exist "only on protocol 2025-03-26").
#[test]
fn a_batch_over_http_is_refused_saying_batches_are_stdio_only() {
    let (_dir, root) = project();
    let server = Server::toolwright_http(&root, &["--no-auth"]);
    let port = server.port();
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;
    let host = ("Host", format!("127.0.0.1:{port}"));
    let (code, headers, body) = raw_post(port, "/mcp", &[host], initialize);
    assert_eq!(code, 200, "{body}");
    let session = headers
        .iter()
        .find(|(name, _)| name == "mcp-session-id")
        .map(|(_, value)| value.clone())
        .unwrap();
    let batch = r#"[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]"#;
    // The answer is chunked: read to the end of the connection, its JSON on a line of its
    // own.
    let head = session_head("POST", port, "/mcp", &session).replace("2025-11-25", "2025-03-26")
        + "\r\nConnection: close";
    let (lines, _) = raw_exchange(port, &head, batch, |_| false);
    assert!(lines[0].contains(" 400 "), "{lines:?}");
    let answer: Value = lines
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line.trim()).ok())
        .find(Value::is_object)
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("only over stdio") && message.contains("one message per request"),
        "{message}"
    );
    assert!(!message.contains("only on protocol"), "{message}");
}

/// Stops `server` and returns what it wrote on standard error (piped).
fn stderr_after_stopping(server: &mut Server) -> String {
    support::terminate_and_wait(&mut server.child);
    let mut stderr = String::new();
    server
        .child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    stderr
}

/// A settings file's `env` that sets `TOOLWRIGHT_SERVE_TOKEN` is told, in one warning line
/// at start, that the value is ignored (only the process environment's counts); it was
/// ignored without a word. Without it, no such warning.
#[test]
fn a_token_in_a_settings_files_env_is_warned_about() {
    let (_dir, root) = project();
    let settings =
        serde_json::json!({"env": {"TOOLWRIGHT_SERVE_TOKEN": "published-token-0123456789"}})
            .to_string();
    for (extra, warned) in [
        (vec!["--settings", settings.as_str()], true),
        (vec![], false),
    ] {
        let mut command = support::toolwright_http_command(&root, &extra);
        command.stderr(Stdio::piped());
        let mut server = Server::start(command);
        let stderr = stderr_after_stopping(&mut server);
        let warning: Vec<&str> = stderr
            .lines()
            .filter(|line| line.contains("TOOLWRIGHT_SERVE_TOKEN"))
            .collect();
        if warned {
            assert_eq!(warning.len(), 1, "{stderr}");
            assert!(
                warning[0].contains("warning")
                    && warning[0].contains("ignored")
                    && warning[0].contains("process environment"),
                "{stderr}"
            );
        } else {
            assert!(warning.is_empty(), "{stderr}");
        }
    }
}

/// The start banner names the served folder as one shell word: a name holding a newline or
/// an escape is written as `$'…'`, so the banner stays one line with nothing a terminal acts
/// on (it printed the folder raw).
#[test]
fn the_banner_names_a_folder_with_control_characters_escaped() {
    let (_dir, base) = project();
    let root = base.join("ev\nil\u{1b}[31m");
    std::fs::create_dir(&root).unwrap();
    let mut command = support::toolwright_http_command(&root, &[]);
    command.stderr(Stdio::piped());
    let mut server = Server::start(command);
    let stderr = stderr_after_stopping(&mut server);
    assert!(!stderr.contains('\u{1b}'), "{stderr:?}");
    let banner = stderr
        .lines()
        .find(|line| line.contains("MCP over Streamable HTTP at"))
        .unwrap_or_else(|| panic!("{stderr:?}"));
    assert!(
        banner.contains(&format!(
            "for $'{}/ev\\x0ail\\x1b[31m' (Ctrl-C",
            base.display()
        )),
        "{banner:?}"
    );
}
