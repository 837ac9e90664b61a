//! `toolwright run` as a real process, for what a review found in its input and its end:
//! standard input that fails part-way with `--pace`, a standard output nobody reads (or one
//! read slowly) when a signal comes, a PermissionRequest hook's stop beside a call that
//! already ran, and a saved response with more after it.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::processes::{wait_at_most, wait_until};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn jsonl(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// `toolwright run ARGS` in `root`, its user settings kept out of the way.
fn command(root: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolwright"));
    cmd.arg("run")
        .args(args)
        .current_dir(root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"));
    cmd
}

fn user_settings(root: &Path, settings: &Value) {
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("settings.json"), settings.to_string()).unwrap();
}

/// With `--pace` (standard input read whole first), standard input that fails part-way (a
/// connection reset after one whole JSONL line and half of the next) no longer loses what
/// was read: the whole line's call runs and gets its result, and the run says why it
/// stopped and exits 1 (it used to exit 2 with no result, the call not run).
#[test]
fn a_paced_standard_input_that_fails_part_way_runs_what_was_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    // Bytes the server never reads: closing it then resets the connection (RST).
    (&client).write_all(b"unread").unwrap();
    let line = json!({"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": root.join("a.txt")}});
    server
        .write_all(format!("{line}\n{{\"type\":\"tool_use\",\"id\":\"t2\"").as_bytes())
        .unwrap();
    let child = command(&root, &["--pace", "--json"])
        .stdin(std::os::fd::OwnedFd::from(client))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    drop(server);
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot read standard input") && stderr.contains("the block before it"),
        "{stderr}"
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let content = message["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{message}");
    assert_eq!(content[0]["tool_use_id"], "t1", "{message}");
    assert!(
        content[0]["content"].as_str().unwrap().contains("alpha"),
        "{message}"
    );
}

/// Writes `root/turn.jsonl`: six Bash calls of 20 lines of 1,000 characters each (their
/// results are about twice what a pipe holds), then `touch all-ran`, which says that every
/// call has run. Returns the file's path.
fn big_output_turn(root: &Path) -> PathBuf {
    let mut lines: Vec<Value> = (1..=6)
        .map(|i| {
            json!({"type": "tool_use", "id": format!("t{i}"), "name": "Bash",
                "input": {"command": "for i in $(seq 20); do printf '%01000d\\n' 0; done"}})
        })
        .collect();
    lines.push(json!({"type": "tool_use", "id": "t7", "name": "Bash", "input": {"command": "touch all-ran"}}));
    let input = root.join("turn.jsonl");
    std::fs::write(&input, jsonl(&lines)).unwrap();
    input
}

/// A signal while the run's standard output is not read (a pipe whose reader does not
/// read, so a write of the results blocks) ends the run soon, with the signal's status,
/// saying that nothing reads standard output: in the text mode (the calls' lines, written
/// while they run) the last-resort exit came only 25 s later and blamed a hung network
/// mount; with `--json` (the message, written at the end) the signal was not heeded at all
/// and the run waited for ever.
#[test]
fn a_signal_ends_a_run_whose_standard_output_nobody_reads() {
    for mode in [None, Some("--json")] {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let input = big_output_turn(&root);
        let (reader, writer) = std::io::pipe().unwrap();
        let mut child = command(&root, &["--mode", "bypassPermissions"])
            .args(mode)
            .arg(&input)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_until("the calls never ran", || root.join("all-ran").exists());
        std::thread::sleep(Duration::from_secs(1));
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let signalled = std::time::Instant::now();
        let status = wait_at_most(
            &mut child,
            Duration::from_secs(60),
            "the run did not end after the signal",
        );
        let took = signalled.elapsed();
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        drop(reader);
        assert_eq!(status.code(), Some(143), "{mode:?}: {stderr}");
        assert!(
            stderr.contains("nothing is reading standard output")
                && !stderr.contains("network mount"),
            "{mode:?}: {stderr}"
        );
        assert!(took < Duration::from_secs(10), "{mode:?}: {took:?}");
    }
}

/// After a PermissionRequest hook stops the turn (`interrupt: true`), a later call that had
/// already run beside it (a read-only Read, in parallel) keeps its result, and stderr says
/// so: it counts the later calls that had not started (answered with the rejection text)
/// instead of saying that every later call was not run.
#[test]
fn a_stop_beside_a_call_that_ran_says_which_were_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let outside = tempfile::tempdir().unwrap();
    let outside = std::fs::canonicalize(outside.path()).unwrap();
    std::fs::write(outside.join("far.txt"), "far\n").unwrap();
    std::fs::write(root.join("near.txt"), "near\n").unwrap();
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
        "decision": {"behavior": "deny", "message": "stop all", "interrupt": true}}});
    user_settings(
        &root,
        &json!({"permissions": {"allow": ["Bash(echo:*)"]},
            "hooks": {"PermissionRequest": [{"matcher": "Read", "hooks": [{"type": "command",
                "command": format!("cat > /dev/null; sleep 1; echo '{answer}'")}]}]}}),
    );
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": outside.join("far.txt")}}),
        json!({"type": "tool_use", "id": "t2", "name": "Read", "input": {"file_path": root.join("near.txt")}}),
        json!({"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "echo later > later.txt"}}),
    ]);
    let input = root.join("turn.jsonl");
    std::fs::write(&input, turn).unwrap();
    let out: Output = command(&root, &["--json"])
        .arg(&input)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let content = message["content"].as_array().unwrap();
    assert!(
        content[1]["content"].as_str().unwrap().contains("near"),
        "{message}"
    );
    assert!(
        content[2]["content"]
            .as_str()
            .unwrap()
            .contains("doesn't want to proceed"),
        "{message}"
    );
    assert!(!root.join("later.txt").exists());
    assert!(
        stderr.contains("a PermissionRequest hook stopped the turn at Read(")
            && stderr.contains("1 of the response's 2 later calls had not started and was not run")
            && !stderr.contains("later calls were not run"),
        "{stderr}"
    );
}

/// A saved non-streaming response with more after it (a second document pasted on) runs
/// its calls, then exits 1 naming the line where the rest begins (it ran nothing); an
/// element of its `content` that is no block stops it there as a block without a name
/// does (it was skipped without a word, and the run exited 0).
#[test]
fn a_saved_response_runs_its_blocks_up_to_a_problem() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("a.txt"), "alpha\n").unwrap();
    let read = json!({"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": root.join("a.txt")}});
    let later = json!({"type": "tool_use", "id": "t3", "name": "Read", "input": {"file_path": root.join("a.txt")}});
    for (input, said) in [
        (
            format!(
                "{} {{\"x\":1}}",
                json!({"type": "message", "content": [read]})
            ),
            "line 1: the response is followed by more",
        ),
        (
            json!({"type": "message", "content": [read, "str", later]}).to_string(),
            "content block 1: expected a content block",
        ),
    ] {
        let file = root.join("turn.json");
        std::fs::write(&file, &input).unwrap();
        let out = command(&root, &["--json"])
            .arg(&file)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{input}: {stderr}");
        assert!(stderr.contains(said), "{input}: {stderr}");
        let message: Value = serde_json::from_slice(&out.stdout).unwrap();
        let content = message["content"].as_array().unwrap();
        assert_eq!(content.len(), 1, "{message}");
        assert!(
            content[0]["content"].as_str().unwrap().contains("alpha"),
            "{message}"
        );
    }
}

/// A signal while a slow reader reads the run's standard output (1 KiB a second, steadily:
/// a pipe passes what was written on a page of 4 KiB at a time, so the run's write moves
/// only every 4 s) does not end the run: the reader gets the whole message. The stall
/// guard used to give up after 2 s without movement and exit 143, saying that nothing was
/// reading standard output, the results not yet printed lost.
#[test]
fn a_signal_waits_for_a_slow_reader_of_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let input = big_output_turn(&root);
    let (mut reader, writer) = std::io::pipe().unwrap();
    let mut child = command(&root, &["--mode", "bypassPermissions", "--json"])
        .arg(&input)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the calls never ran", || root.join("all-ran").exists());
    // The message's write fills the pipe and waits.
    std::thread::sleep(Duration::from_secs(1));
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    // 1 KiB a second for 10 s, then the rest at once.
    let slow_reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut piece = [0u8; 1024];
        for _ in 0..10 {
            let n = std::io::Read::read(&mut reader, &mut piece).unwrap();
            got.extend_from_slice(&piece[..n]);
            if n == 0 {
                return got;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
        std::io::Read::read_to_end(&mut reader, &mut got).unwrap();
        got
    });
    let status = wait_at_most(
        &mut child,
        Duration::from_secs(60),
        "the run did not end after the signal",
    );
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let stdout = slow_reader.join().unwrap();
    assert!(
        !stderr.contains("nothing is reading"),
        "{status:?}: {stderr}"
    );
    let message: Value = serde_json::from_slice(&stdout)
        .unwrap_or_else(|e| panic!("{e}: got {} bytes; {stderr}", stdout.len()));
    let content = message["content"].as_array().unwrap();
    assert_eq!(content.len(), 7, "{stderr}");
    for result in &content[..6] {
        assert_eq!(
            result["content"].as_str().unwrap().matches('0').count(),
            20_000,
            "{stderr}"
        );
    }
    assert!(
        matches!(status.code(), Some(0 | 143)),
        "{status:?}: {stderr}"
    );
}
