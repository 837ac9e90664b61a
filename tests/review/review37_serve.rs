//! Session 37 on `toolwright serve` over stdio, ending with calls in progress: on SIGTERM
//! the answers of the calls it cancelled are written out before the process exits (it
//! exited once no call ran, before they were written), and a client closing its input while
//! a progress report waits to be written gets its call's answer at once (the call waited
//! for a report rmcp would never send, 5 s, and its answer was lost).
//!
//! Both races are made to happen by holding the client's side: the test stops
//! reading the server's output (answers to `tools/list` fill the pipe), so that what the
//! server writes next waits, then stops the server and only reads again afterwards.
//!
//! Also: the range of request ids the docs give is the one the binary takes.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::processes::{wait_at_most, wait_until};

/// A temporary project, canonicalised.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// How many `tools/list` answers the test leaves unread: each is over 20 KB, far more
/// together than a pipe holds (64 KiB by default), so the server's writer is stuck behind
/// them until the test reads again.
const UNREAD_LISTS: u64 = 32;

/// `serve` over stdio in `root`, Bash allowed, initialized (on 2025-06-18): the process,
/// its input and its output (read by the test only when it chooses).
fn stdio_server(root: &Path) -> (Child, ChildStdin, BufReader<ChildStdout>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--cwd"])
        .arg(root)
        .args(["--settings", r#"{"permissions":{"allow":["Bash"]}}"#])
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let init: Value = serde_json::from_str(&line).unwrap();
    assert!(init.get("result").is_some(), "{init}");
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    (child, stdin, stdout)
}

/// Writes `message` as one line.
fn send(stdin: &mut ChildStdin, message: &Value) {
    writeln!(stdin, "{message}").unwrap();
    stdin.flush().unwrap();
}

/// A Bash call (request `id`) of `command`, first touching `started-<id>` in `root`;
/// with `_meta.progressToken` when `progress`.
fn bash_call(stdin: &mut ChildStdin, root: &Path, id: u64, command: &str, progress: bool) {
    let marker = root.join(format!("started-{id}"));
    let command = format!("touch '{}' && {command}", marker.display());
    let mut params = json!({"name": "Bash", "arguments": {"command": command}});
    if progress {
        params["_meta"] = json!({"progressToken": id});
    }
    send(
        stdin,
        &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
    );
}

/// Waits until the commands of calls `ids` have started.
fn wait_started(root: &Path, ids: &[u64]) {
    wait_until("the calls' commands never started", || {
        ids.iter()
            .all(|id| root.join(format!("started-{id}")).exists())
    });
}

/// Asks for the tool list [`UNREAD_LISTS`] times (ids from 100), and leaves the answers
/// unread for now: what the server writes after them waits.
fn fill_the_pipe(stdin: &mut ChildStdin) {
    for id in 100..100 + UNREAD_LISTS {
        send(
            stdin,
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}),
        );
    }
}

/// Everything the server writes from now until it exits (read by a thread), once it has
/// exited: its messages, and its exit status.
fn read_to_exit(mut child: Child, stdout: BufReader<ChildStdout>) -> (Vec<Value>, Option<i32>) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut stdout = stdout;
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        let _ = tx.send(text);
    });
    let status = wait_at_most(
        &mut child,
        Duration::from_secs(30),
        "the server did not exit",
    );
    let text = rx.recv_timeout(Duration::from_secs(30)).unwrap();
    let messages = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    (messages, status.code())
}

/// Whether `messages` hold the answer to request `id`, as interrupted.
fn answered_as_interrupted(messages: &[Value], id: u64) -> bool {
    messages.iter().any(|m| {
        m["id"] == id
            && m["result"]["content"].as_array().is_some_and(|content| {
                content.iter().any(|b| {
                    b["text"]
                        .as_str()
                        .is_some_and(|t| t.contains(tool_core::INTERRUPT_MESSAGE_FOR_TOOL_USE))
                })
            })
    })
}

/// The ids of the messages that are answers, for a failure's message.
fn answered_ids(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m.get("result").is_some() || m.get("error").is_some())
        .map(|m| &m["id"])
        .collect()
}

/// SIGTERM while three calls run: each is answered as interrupted, and the answers reach
/// the client although they could not be written at once (the client was not reading).
/// The server exited as soon as no call ran, before its answers were written: a client
/// reading promptly lost one in about five stops, and one that read late lost them all.
#[test]
fn on_sigterm_the_cancelled_calls_answers_are_written_before_the_exit() {
    let (_dir, root) = project();
    let (child, mut stdin, stdout) = stdio_server(&root);
    let calls = [10, 11, 12];
    for id in calls {
        bash_call(&mut stdin, &root, id, "sleep 30", false);
    }
    wait_started(&root, &calls);
    fill_the_pipe(&mut stdin);
    // The lists answered (and stuck in the pipe) before the signal.
    std::thread::sleep(Duration::from_millis(300));
    let signalled = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    // The calls end at once (their commands killed); the client reads only later.
    std::thread::sleep(Duration::from_millis(500));
    let (messages, code) = read_to_exit(child, stdout);
    drop(stdin);
    assert_eq!(code, Some(143), "SIGTERM's exit status");
    for id in calls {
        assert!(
            answered_as_interrupted(&messages, id),
            "call {id} was not answered as interrupted; answers: {:?}",
            answered_ids(&messages)
        );
    }
    for id in 100..100 + UNREAD_LISTS {
        assert!(
            messages.iter().any(|m| m["id"] == id),
            "tools/list {id} was not answered"
        );
    }
}

/// How many servers [`closing_stdin_while_a_progress_report_waits_loses_no_answer`] runs
/// at once: which of two events rmcp's loop takes first once the client reads again
/// decides whether the report was lost, and one run showed it in about nine cases out of
/// ten.
const PROGRESS_RUNS: usize = 3;

/// The client closes its input while a call's progress report waits to be written (the
/// client is not reading, and the command prints all along): that call and another
/// running one are answered as interrupted. The call used to wait for the report, which
/// rmcp never sends once the input has ended, until the server gave up 5 s later and exited
/// without its answer. [`PROGRESS_RUNS`] servers at once, each from a project of its own.
#[test]
fn closing_stdin_while_a_progress_report_waits_loses_no_answer() {
    let runs: Vec<_> = (0..PROGRESS_RUNS)
        .map(|_| std::thread::spawn(close_while_a_report_waits))
        .collect();
    for run in runs {
        run.join().unwrap();
    }
}

/// One run of [`closing_stdin_while_a_progress_report_waits_loses_no_answer`].
fn close_while_a_report_waits() {
    let (_dir, root) = project();
    let (child, mut stdin, stdout) = stdio_server(&root);
    bash_call(
        &mut stdin,
        &root,
        10,
        "while :; do echo tock; sleep 0.05; done",
        true,
    );
    bash_call(&mut stdin, &root, 11, "sleep 30", false);
    wait_started(&root, &[10, 11]);
    fill_the_pipe(&mut stdin);
    // Bash reports every 0.5 s: after this, one report waits behind the unread answers
    // (and a newer one after it).
    std::thread::sleep(Duration::from_millis(1200));
    drop(stdin);
    std::thread::sleep(Duration::from_millis(500));
    let (messages, code) = read_to_exit(child, stdout);
    assert_eq!(code, Some(0), "the client leaving is a normal end");
    assert!(
        messages
            .iter()
            .any(|m| m["method"] == "notifications/progress"),
        "no progress report came: the race was not set up"
    );
    for id in [10, 11] {
        assert!(
            answered_as_interrupted(&messages, id),
            "call {id} was not answered as interrupted; answers: {:?}",
            answered_ids(&messages)
        );
    }
}

/// The range of request ids docs/cli.md ("Bad messages") gives is the one the binary takes:
/// both ends of the signed 64-bit range are answered with their id, and one past either
/// end gets `-32600` with `id: null`, its message naming the range. The docs gave
/// `18446744073709551616` (past the unsigned range) as the first id refused.
#[test]
fn request_ids_are_taken_in_the_signed_64_bit_range_the_docs_name() {
    const RANGE: &str = "-9223372036854775808 to 9223372036854775807";
    let (_dir, root) = project();
    let (mut child, mut stdin, mut stdout) = stdio_server(&root);
    for id in [
        "9223372036854775807",
        "-9223372036854775808",
        "9223372036854775808",
        "-9223372036854775809",
    ] {
        writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#).unwrap();
    }
    stdin.flush().unwrap();
    let messages: Vec<Value> = (0..4)
        .map(|_| {
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            serde_json::from_str(&line).unwrap()
        })
        .collect();
    drop(stdin);
    wait_at_most(
        &mut child,
        Duration::from_secs(30),
        "the server did not exit",
    );
    for id in [json!(i64::MAX), json!(i64::MIN)] {
        assert!(
            messages
                .iter()
                .any(|m| m["id"] == id && m.get("result").is_some()),
            "ping {id} was not answered: {messages:#?}"
        );
    }
    let refused = messages
        .iter()
        .filter(|m| {
            m["id"].is_null()
                && m["error"]["code"] == -32600
                && m["error"]["message"]
                    .as_str()
                    .is_some_and(|t| t.contains(RANGE))
        })
        .count();
    assert_eq!(refused, 2, "{messages:#?}");
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/cli.md"))
        .unwrap()
        .replace('\n', " ");
    let docs = docs.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        docs.contains(RANGE) && docs.contains("`9223372036854775808`"),
        "docs/cli.md does not name the range of ids taken"
    );
    assert!(
        !docs.contains("18446744073709551616"),
        "docs/cli.md still gives an id past the unsigned range as the first one refused"
    );
}
