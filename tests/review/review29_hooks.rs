//! Review 29's hooks findings, end to end with the binary and real hook scripts: a later
//! PermissionRequest hook's `interrupt` stops the turn (`toolwright run`), PostToolUseFailure
//! hooks get the error the model saw, cut once, and the Notification hooks of a permission
//! question in `toolwright agent` (on a terminal) are told the asking call's `prompt_id`.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::model_api::*;
use crate::terminal::agent_on_terminal;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A temp dir, by its real path, with an empty user configuration directory.
fn temp_root() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join(".no-user-config")).unwrap();
    (dir, root)
}

/// `toolwright run --json` in `cwd` with `args` before the input, `stdin` the JSONL of the
/// response's tool_use blocks.
fn run(cwd: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .arg("run")
        .arg("--json")
        .args(args)
        .arg("-")
        .current_dir(cwd)
        .env("CLAUDE_CONFIG_DIR", cwd.join(".no-user-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

/// One tool_use block a line.
fn calls(calls: &[(&str, &str)]) -> String {
    calls
        .iter()
        .map(|(id, command)| {
            json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}})
                .to_string()
                + "\n"
        })
        .collect()
}

/// The JSON lines a hook logging `printf '%s\n' "$(cat)" >> FILE` wrote.
fn logged(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A command hook that logs its input to `log` (one JSON a line), then prints `output`.
fn logging_hook(log: &Path, output: &Value) -> Value {
    json!({"type": "command", "command": format!(
        "printf '%s\\n' \"$(cat)\" >> '{}'; printf '%s' '{}'",
        log.display(),
        output
    )})
}

/// The review's case, in the user's settings beside an allow rule for the command: a
/// PreToolUse guard whose `statusMessage` is a number still runs and blocks (the field is
/// ignored, and the warning says so); one whose `shell` is not "bash" or "powershell" does
/// not run, and the call it would see is refused with the reason, not run unguarded. The
/// call ran, and the warning did not say the hook was dropped.
#[test]
fn a_guard_with_a_bad_field_is_never_dropped_unsaid() {
    let guard = "echo '{\"decision\":\"block\",\"reason\":\"GUARD\"}'";
    for (field, value, result, warning) in [
        (
            "statusMessage",
            json!(5),
            "GUARD",
            "`statusMessage` must be a string, got 5; ignored",
        ),
        (
            "shell",
            json!("zsh"),
            "cannot be read, so the call is refused",
            "; handler skipped: the hook will not run, and the calls it would see are refused",
        ),
    ] {
        let (_dir, root) = temp_root();
        let mut handler = json!({"type": "command", "command": guard});
        handler[field] = value;
        std::fs::write(
            root.join(".no-user-config/settings.json"),
            json!({"permissions": {"allow": ["Bash(echo *)"]},
                   "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]}})
            .to_string(),
        )
        .unwrap();
        let out = run(&root, &[], &calls(&[("toolu_1", "echo hi > out.txt")]));
        let stdout = text(&out.stdout);
        let stderr = text(&out.stderr);
        let message: Value = serde_json::from_str(stdout.trim())
            .unwrap_or_else(|e| panic!("{field}: {e}: {stdout}\n{stderr}"));
        let first = &message["content"][0];
        assert_eq!(first["is_error"], true, "{field}: {message}");
        assert!(first.to_string().contains(result), "{field}: {message}");
        assert!(!root.join("out.txt").exists(), "{field}: the call ran");
        assert!(stderr.contains(warning), "{field}: {stderr}");
    }
}

/// Two PermissionRequest hooks deny the first of two calls (they ask: nobody can be asked
/// here, so the hooks answer); only the second hook says `interrupt`. The call is refused
/// with the first hook's message, and the turn stops: the second call never reaches the
/// hooks and the next user message says the turn was interrupted. (The second hook's
/// `interrupt` was ignored, and the second call went on.)
#[test]
fn a_later_permission_request_hooks_interrupt_stops_the_turn() {
    let (_dir, root) = temp_root();
    let deny = |message: &str, interrupt: bool| {
        let mut decision = json!({"behavior": "deny", "message": message});
        if interrupt {
            decision["interrupt"] = json!(true);
        }
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}})
    };
    let (first, second) = (root.join("first.log"), root.join("second.log"));
    let settings = json!({"hooks": {"PermissionRequest": [{"matcher": "Bash", "hooks": [
        logging_hook(&first, &deny("FIRST", false)),
        logging_hook(&second, &deny("SECOND", true)),
    ]}]}});
    std::fs::write(root.join("settings.json"), settings.to_string()).unwrap();
    let out = run(
        &root,
        &["--settings", "settings.json"],
        &calls(&[("toolu_1", "touch one"), ("toolu_2", "touch two")]),
    );
    let stdout = text(&out.stdout);
    let message: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", text(&out.stderr)));
    let content = message["content"].as_array().unwrap();
    assert_eq!(content[0]["tool_use_id"], "toolu_1");
    assert_eq!(content[0]["is_error"], true);
    assert!(content[0].to_string().contains("FIRST"), "{message}");
    assert!(
        content
            .iter()
            .any(|b| b["text"] == tool_core::INTERRUPT_MESSAGE_FOR_TOOL_USE),
        "the turn was not stopped: {message}"
    );
    for log in [&first, &second] {
        let seen = logged(log);
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert_eq!(seen[0]["tool_input"]["command"], "touch one");
    }
    assert!(!root.join("one").exists() && !root.join("two").exists());
}

/// A Bash call that writes 30,000 characters to stderr and exits 3: its PostToolUseFailure
/// hook's `error` is the error text the model saw, middle-truncated once, with the same
/// `[N characters truncated]` (it said `[40 characters truncated]`, cut a second time).
#[test]
fn post_tool_use_failure_gets_the_error_cut_once() {
    let (_dir, root) = temp_root();
    let log = root.join("failure.log");
    let settings = json!({"hooks": {"PostToolUseFailure": [{"matcher": "Bash", "hooks": [
        logging_hook(&log, &json!({})),
    ]}]}});
    std::fs::write(root.join("settings.json"), settings.to_string()).unwrap();
    let out = run(
        &root,
        &["--settings", "settings.json", "--mode", "bypassPermissions"],
        &calls(&[(
            "toolu_1",
            "head -c 30000 /dev/zero | tr '\\0' x >&2; exit 3",
        )]),
    );
    let stdout = text(&out.stdout);
    let message: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            &stdout[..stdout.len().min(500)],
            text(&out.stderr)
        )
    });
    let result = &message["content"][0];
    assert_eq!(result["is_error"], true);
    let model_text = match &result["content"] {
        Value::String(s) => s.clone(),
        blocks => blocks[0]["text"].as_str().unwrap().to_owned(),
    };
    let marker = |t: &str| {
        t.lines()
            .find(|l| l.contains("characters truncated"))
            .map(str::to_owned)
    };
    assert!(
        marker(&model_text).is_some_and(|m| m != "... [40 characters truncated] ..."),
        "{:?}",
        marker(&model_text)
    );
    let seen = logged(&log);
    assert_eq!(seen.len(), 1);
    let error = seen[0]["error"].as_str().unwrap();
    assert!(
        error == model_text,
        "the hook's error ({} chars, {:?}) is not the model's ({} chars, {:?})",
        error.len(),
        marker(error),
        model_text.len(),
        marker(&model_text)
    );
}

/// In `toolwright agent` on a terminal, the Notification hooks a permission question runs
/// are told the user prompt the asking call works on (`prompt_id`, the one its PreToolUse
/// hooks got), as docs/hooks.md says of every event once a prompt is being worked on. They
/// were given the session's context, which has none.
#[test]
fn a_permission_notification_has_the_calls_prompt_id() {
    if Command::new("script").arg("--version").output().is_err() {
        let msg = "util-linux `script` (Debian's bsdutils) is not installed: this test cannot run";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
        eprintln!("skipped: {msg}");
        return;
    }
    let (_dir, root) = temp_root();
    let (notified, pre) = (root.join("notifications.log"), root.join("pre.log"));
    std::fs::write(
        root.join(".no-user-config/settings.json"),
        json!({"hooks": {
            "Notification": [{"matcher": "permission_prompt", "hooks": [
                logging_hook(&notified, &json!({}))
            ]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [logging_hook(&pre, &json!({}))]}],
        }})
        .to_string(),
    )
    .unwrap();
    let first = turn(
        None,
        &[("toolu_1", "Bash", json!({"command": "touch one"}))],
    );
    let (url, _seen) = serve(move |i, _| match i {
        0 => full(first.clone()),
        _ => full(turn(Some("Done."), &[])),
    });
    let out = agent_on_terminal(
        &root,
        &url,
        "make the file",
        &[
            ("Trust it [y/N]? ", 1, b"n\n"),
            ("Allow Bash? [y]es / [n]o / [a]lways", 1, b"y\n"),
        ],
    );
    let shown = text(&out.stdout).replace('\r', "");
    assert!(out.status.success(), "{shown}\n{}", text(&out.stderr));
    assert!(root.join("one").exists(), "{shown}");
    let pre = logged(&pre);
    assert_eq!(pre.len(), 1, "{pre:?}");
    let prompt_id = pre[0]["prompt_id"].as_str().expect("PreToolUse has it");
    assert!(!prompt_id.is_empty());
    let notifications = logged(&notified);
    assert_eq!(notifications.len(), 1, "{notifications:?}");
    assert_eq!(notifications[0]["notification_type"], "permission_prompt");
    assert_eq!(
        notifications[0]["prompt_id"].as_str(),
        Some(prompt_id),
        "{}",
        notifications[0]
    );
    assert!(notifications[0].get("agent_id").is_none());
}
