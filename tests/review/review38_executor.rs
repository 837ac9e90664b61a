//! Session 38, the executor as `run` and `agent` show it. Found by review: `run` with JSONL
//! or a non-streaming response ran both calls of a tool_use id given twice and printed two
//! results with that id (a message the API refuses), where the SSE form refused the turn;
//! and the first Ctrl-C to `agent` let a running Bash call go on until it ended or timed
//! out, where Claude Code's Esc/Ctrl-C (`user-cancel`) cancels every running tool. Real
//! `toolwright` processes in temporary directories, `agent` against a loopback stand-in for
//! the Messages API.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::binary::{output_with_stdin, toolwright_command};
use crate::model_api::{agent_command, end, full, serve, sse, start, tool_block, turn};

/// What `run` and `agent` say of a second tool_use with the id `toolu_1` of block 0.
const REPEATED: &str = "block 1's tool_use (Bash) has the id \"toolu_1\" of block 0: a tool_use id comes once in a message";

/// Two Bash calls with one id: the first echoes, the second creates `file`.
fn repeated_calls(file: &Path) -> [Value; 2] {
    [
        json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "echo one"}}),
        json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
            "input": {"command": format!("echo two > '{}'", file.display())}}),
    ]
}

/// The same turn as SSE events.
fn repeated_sse(calls: &[Value; 2]) -> String {
    let mut events = vec![start(10)];
    for (i, call) in calls.iter().enumerate() {
        events.extend(tool_block(
            i as u64,
            call["id"].as_str().unwrap(),
            "Bash",
            &call["input"],
        ));
    }
    events.extend(end("tool_use", 20));
    sse(&events)
}

/// Every form `run` reads refuses the second call of one id, with the message the SSE
/// form gives, and never runs it: the first call's result is the only one, and the exit
/// code says the input was malformed.
#[test]
fn run_refuses_a_repeated_tool_use_id_in_every_input_form() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let file = project.join("two.txt");
    let calls = repeated_calls(&file);
    let jsonl: String = calls.iter().map(|c| format!("{c}\n")).collect();
    let response = json!({"type": "message", "role": "assistant", "content": calls, "stop_reason": "tool_use"});
    let forms = [
        ("jsonl", jsonl),
        ("json", response.to_string()),
        (
            "pretty json",
            serde_json::to_string_pretty(&response).unwrap(),
        ),
        ("sse", repeated_sse(&calls)),
    ];
    for (form, text) in &forms {
        for from_stdin in [false, true] {
            let _ = std::fs::remove_file(&file);
            let path = project.join("turn.in");
            std::fs::write(&path, text).unwrap();
            let source = if from_stdin {
                "-".to_owned()
            } else {
                path.display().to_string()
            };
            let mut command = toolwright_command(
                &["run", "--json", "--mode", "bypassPermissions", &source],
                &project,
            );
            command
                .env("HOME", project.join(".home"))
                .env("CLAUDE_CONFIG_DIR", project.join(".home/.claude"));
            let out = output_with_stdin(command, from_stdin.then_some(text.as_str()));
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let what = format!("{form} (stdin: {from_stdin}): {stdout}\n{stderr}");
            assert!(!file.exists(), "the second call ran: {what}");
            assert_eq!(out.status.code(), Some(1), "{what}");
            assert!(stderr.contains(REPEATED), "{what}");
            assert!(stderr.contains("(the block before it was run)"), "{what}");
            let message: Value =
                serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {what}"));
            let results = message["content"].as_array().unwrap();
            assert_eq!(results.len(), 1, "{what}");
            assert_eq!(results[0]["tool_use_id"], "toolu_1", "{what}");
            assert_eq!(results[0]["content"], "one", "{what}");
        }
    }
}

/// A response whose second call repeats the first one's id: `agent` runs the first only,
/// ends the run as failed with the message `run` gives, and sends no request after it
/// (which would hold two calls and two results of one id).
#[test]
fn agent_runs_one_call_of_a_repeated_tool_use_id() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let file = project.join("two.txt");
    let body = repeated_sse(&repeated_calls(&file));
    let (url, seen) = serve(move |i, _| match i {
        0 => full(body.clone()),
        _ => full(turn(Some("Done."), &[])),
    });
    let settings = json!({"permissions": {"allow": ["Bash"]}}).to_string();
    let out = agent_command(&url, &project, &["--json", "--settings", &settings], "go")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!file.exists(), "the second call ran: {stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(REPEATED), "{stderr}");
    assert_eq!(seen.lock().unwrap().len(), 1, "a request after the error");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let messages = result["messages"].as_array().unwrap();
    let ids = |role: &str, key: &str| -> Vec<String> {
        messages
            .iter()
            .filter(|m| m["role"] == role)
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .filter_map(|b| b[key].as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(ids("assistant", "id"), ["toolu_1"], "{result}");
    assert_eq!(ids("user", "tool_use_id"), ["toolu_1"], "{result}");
}

/// Whether process `pid` is alive (a zombie is not).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| !stat.contains(") Z "))
}

/// The first Ctrl-C to `agent` is Claude Code's Esc (`user-cancel`): a running Bash call is
/// cancelled, its process group killed, and answered with the rejection text; the run ends
/// interrupted (exit code 130) without waiting for the command, which would have run for
/// five minutes.
#[test]
fn the_first_ctrl_c_cancels_a_running_bash_call() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let slow = turn(
        None,
        &[(
            "toolu_slow",
            "Bash",
            json!({"command": "sleep 300 & echo $! > sleeper; wait; touch finished"}),
        )],
    );
    let (url, seen) = serve(move |i, _| match i {
        0 => full(slow.clone()),
        _ => full(turn(Some("Done."), &[])),
    });
    let settings = json!({"permissions": {"allow": ["Bash"]}}).to_string();
    let mut child = agent_command(&url, &project, &["--json", "--settings", &settings], "go")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let marker = project.join("sleeper");
    let deadline = Instant::now() + Duration::from_secs(30);
    let sleeper = loop {
        if let Ok(pid) = std::fs::read_to_string(&marker)
            && pid.ends_with('\n')
        {
            break pid.trim().to_owned();
        }
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(10));
    };
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    // Far less than the command's five minutes; its end is not waited for.
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let _ = Command::new("kill").args(["-KILL", &sleeper]).status();
            panic!("the first Ctrl-C waited for the running command");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        !alive(&sleeper),
        "the command's process group was not killed"
    );
    assert!(!project.join("finished").exists());
    assert!(
        stderr.contains(
            "(interrupted: cancelling the running tools; Ctrl-C again stops waiting for them)"
        ),
        "{stderr}"
    );
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "a request after the interrupt"
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["stop"], "interrupted by the user");
    let messages = result["messages"].as_array().unwrap();
    let last = &messages[messages.len() - 1]["content"];
    assert_eq!(last[0]["tool_use_id"], "toolu_slow");
    assert_eq!(last[0]["is_error"], true);
    assert!(
        last[0]["content"]
            .as_str()
            .is_some_and(|t| t.starts_with("The user doesn't want to proceed with this tool use.")),
        "{last}"
    );
    assert_eq!(
        last[1],
        json!({"type": "text", "text": "[Request interrupted by user for tool use]"})
    );
}

/// A Ctrl-C typed while a permission question waits withdraws it; the run ends interrupted
/// (not rejected), the call refused and no request sent after it.
#[test]
fn a_ctrl_c_at_a_permission_question_ends_the_run_interrupted() {
    if Command::new("script").arg("--version").output().is_err() {
        let msg = "util-linux `script` (Debian's bsdutils) is not installed: this test cannot run";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
        eprintln!("skipped: {msg}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let copy = project.join("transcript-copy.jsonl");
    let config = project.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    let command = format!(
        r#"sed -n 's/.*"transcript_path":"\([^"]*\)".*/\1/p' | xargs -I{{}} cp {{}} '{}'"#,
        copy.display()
    );
    std::fs::write(
        config.join("settings.json"),
        json!({"hooks": {"SessionEnd": [{"hooks": [{"type": "command", "command": command}]}]}})
            .to_string(),
    )
    .unwrap();
    let asks = turn(
        None,
        &[("toolu_1", "Bash", json!({"command": "touch one"}))],
    );
    let (url, seen) = serve(move |i, _| match i {
        0 => full(asks.clone()),
        _ => full(turn(Some("Done."), &[])),
    });
    let out = crate::terminal::agent_on_terminal(
        &project,
        &url,
        "go",
        &[("Trust it", 1, b"n\n"), ("Allow Bash?", 1, b"\x03")],
    );
    let shown = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(130), "{shown}");
    assert!(!project.join("one").exists());
    assert_eq!(seen.lock().unwrap().len(), 1, "{shown}");
    let transcript = std::fs::read_to_string(&copy).unwrap();
    let result = transcript
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .flat_map(|e| {
            e["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|b| b["type"] == "tool_result")
        .unwrap_or_else(|| panic!("no result: {transcript}"));
    assert_eq!(result["tool_use_id"], "toolu_1");
    assert_eq!(result["is_error"], true);
    // The rejection text (followed by a note that the user interrupted before answering
    // when the question's withdrawal came back before the cancel reached the call).
    assert!(
        result["content"]
            .as_str()
            .is_some_and(|t| t.starts_with("The user doesn't want to proceed with this tool use.")),
        "{result}"
    );
}
