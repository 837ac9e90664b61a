//! Review 33's task hooks, end to end with the binary and real hook scripts: TaskCreated and
//! TaskCompleted hooks in the settings run when TaskCreate creates a task and when
//! TaskUpdate marks one completed, with Claude Code's stdin fields; exit code 2 (or a JSON
//! `decision: "block"`, or `continue: false`) keeps the task from being created or
//! completed and tells the model why; another exit code is a non-blocking error and the
//! task goes on. (They were loaded and never run: the review's repro created and completed
//! its task with a hook that exits 2, and the hook's log was never written.)

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

/// A temp dir, by its real path, with an empty user configuration directory (where the
/// task lists go: `CLAUDE_CONFIG_DIR/tasks`).
fn temp_root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("config")).unwrap();
    (dir, root)
}

/// `toolwright run --json --settings settings.json -` in `root` with Tasks v2 on, `blocks`
/// the response's tool_use blocks.
fn run(root: &Path, blocks: &[Value]) -> Output {
    let stdin: String = blocks.iter().map(|b| b.to_string() + "\n").collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["run", "--json", "--settings", "settings.json", "-"])
        .current_dir(root)
        .env("CLAUDE_CONFIG_DIR", root.join("config"))
        .env("TOOLWRIGHT_ENABLE_TASKS", "1")
        .env_remove("CLAUDE_CODE_ENABLE_TASKS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

fn create(id: &str, subject: &str, description: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "TaskCreate",
           "input": {"subject": subject, "description": description}})
}

fn complete(id: &str, task: &str) -> Value {
    json!({"type": "tool_use", "id": id, "name": "TaskUpdate",
           "input": {"taskId": task, "status": "completed"}})
}

/// A command hook that logs its stdin (one JSON a line) to `log`, then runs `then` (which
/// prints and exits as the case needs; the input is in `$input`).
fn hook(log: &Path, then: &str) -> Value {
    json!({"type": "command", "command": format!(
        "input=$(cat); printf '%s\\n' \"$input\" >> '{}'; {then}",
        log.display()
    )})
}

/// Writes `settings.json` with `created` as the TaskCreated hook's tail and `completed` as
/// the TaskCompleted hook's, both logging to `hooks.log`; returns the log's path.
fn settings(root: &Path, created: &str, completed: &str) -> PathBuf {
    let log = root.join("hooks.log");
    let settings = json!({"hooks": {
        "TaskCreated": [{"hooks": [hook(&log, created)]}],
        "TaskCompleted": [{"hooks": [hook(&log, completed)]}],
    }});
    std::fs::write(root.join("settings.json"), settings.to_string()).unwrap();
    log
}

/// The JSON lines the hooks logged.
fn logged(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The user message `--json` printed: each tool_result's text and error flag, in order,
/// and the whole message for failure texts.
fn results(out: &Output) -> (Vec<(String, bool)>, Value) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let message: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "{e}: {stdout}\nstderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let texts = message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .map(|b| {
            let text = match &b["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                other => other.to_string(),
            };
            (text, b["is_error"] == true)
        })
        .collect();
    (texts, message)
}

/// The session's task list directory (the only one under `config/tasks`), if any.
fn list_dir(root: &Path) -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = std::fs::read_dir(root.join("config/tasks"))
        .ok()?
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert!(dirs.len() <= 1, "{dirs:?}");
    dirs.into_iter().next()
}

/// The task files of the session's list (`N.json`), by name.
fn task_files(root: &Path) -> Vec<String> {
    let Some(dir) = list_dir(root) else {
        return Vec::new();
    };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

/// Task `id` as stored.
fn task(root: &Path, id: &str) -> Value {
    let path = list_dir(root).unwrap().join(format!("{id}.json"));
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// The review's repro: a hook that exits 2 with `blocked by hook` on stderr, for both
/// events (here only for a task whose subject is `A`). TaskCreate is refused with the
/// hook's stderr as the error, and no task file is left; the TaskUpdate after it finds no
/// task. The hook saw the task it refused, with Claude Code's fields (no team fields: there
/// are no teams here). The next TaskCreate, let through, takes the next id: the refused
/// one is not handed out again.
#[test]
fn a_task_created_hook_exiting_2_keeps_the_task_from_being_created() {
    let (_dir, root) = temp_root();
    let block =
        "case \"$input\" in *'\"task_subject\":\"A\"'*) echo 'blocked by hook' >&2; exit 2;; esac";
    let log = settings(&root, block, block);
    let out = run(
        &root,
        &[
            create("toolu_1", "A", "d1"),
            complete("toolu_2", "1"),
            create("toolu_3", "B", "d2"),
        ],
    );
    let (texts, message) = results(&out);
    assert_eq!(texts.len(), 3, "{message}");
    let (created, is_error) = &texts[0];
    assert!(*is_error, "TaskCreate was not refused: {message}");
    assert!(
        created.contains("TaskCreated hook feedback:") && created.contains("blocked by hook"),
        "{created}"
    );
    assert!(texts[1].1, "{message}");
    assert!(texts[1].0.contains("Task #1 not found"), "{message}");
    assert_eq!(
        texts[2],
        ("Task #2 created successfully: B".to_owned(), false),
        "{message}"
    );
    assert_eq!(task_files(&root), ["2.json"]);

    let seen = logged(&log);
    assert_eq!(seen.len(), 2, "{seen:?}");
    let input = &seen[0];
    assert_eq!(input["hook_event_name"], "TaskCreated");
    assert_eq!(input["task_id"], "1");
    assert_eq!(input["task_subject"], "A");
    assert_eq!(input["task_description"], "d1");
    assert_eq!(input["cwd"], root.to_string_lossy().as_ref());
    assert_eq!(input["permission_mode"], "default");
    for field in ["session_id", "transcript_path"] {
        assert!(input[field].is_string(), "{field}: {input}");
    }
    for field in ["teammate_name", "team_name"] {
        assert!(input.get(field).is_none(), "{field}: {input}");
    }
    assert_eq!(seen[1]["task_id"], "2");
    assert_eq!(seen[1]["task_subject"], "B");
}

/// A TaskCompleted hook that exits 2 keeps the task as it was (status and the other fields
/// the same call changed); the model is told the hook's stderr. The TaskCreated hook
/// (exit 0) let the task be created.
#[test]
fn a_task_completed_hook_exiting_2_leaves_the_status_unchanged() {
    let (_dir, root) = temp_root();
    let log = settings(&root, "exit 0", "echo 'tests still fail' >&2; exit 2");
    let update = json!({"type": "tool_use", "id": "toolu_2", "name": "TaskUpdate",
                        "input": {"taskId": "1", "status": "completed", "subject": "A2"}});
    let out = run(&root, &[create("toolu_1", "A", "d1"), update]);
    let (texts, message) = results(&out);
    assert_eq!(
        texts[0],
        ("Task #1 created successfully: A".to_owned(), false)
    );
    let (updated, is_error) = &texts[1];
    assert!(*is_error, "TaskUpdate was not refused: {message}");
    assert!(
        updated.contains("TaskCompleted hook feedback:") && updated.contains("tests still fail"),
        "{updated}"
    );
    let stored = task(&root, "1");
    assert_eq!(stored["status"], "pending", "{stored}");
    assert_eq!(stored["subject"], "A", "{stored}");

    let seen = logged(&log);
    let events: Vec<&str> = seen
        .iter()
        .map(|s| s["hook_event_name"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["TaskCreated", "TaskCompleted"]);
    assert_eq!(seen[1]["task_id"], "1");
    assert_eq!(seen[1]["task_subject"], "A");
    assert_eq!(seen[1]["task_description"], "d1");
}

/// Hooks that exit 0 let both go on, and each got the documented fields; hooks that exit 1
/// (a non-blocking error) too. An update that does not complete the task (in_progress) runs
/// no TaskCompleted hook, nor does completing a task already completed.
#[test]
fn hooks_that_exit_0_or_1_let_the_task_be_created_and_completed() {
    for code in [0, 1] {
        let (_dir, root) = temp_root();
        let tail = format!("echo 'a note' >&2; exit {code}");
        let log = settings(&root, &tail, &tail);
        let start = json!({"type": "tool_use", "id": "toolu_2", "name": "TaskUpdate",
                           "input": {"taskId": "1", "status": "in_progress"}});
        let out = run(
            &root,
            &[
                create("toolu_1", "A", "d1"),
                start,
                complete("toolu_3", "1"),
                complete("toolu_4", "1"),
            ],
        );
        let (texts, message) = results(&out);
        assert_eq!(
            texts,
            [
                ("Task #1 created successfully: A".to_owned(), false),
                ("Updated task #1 status".to_owned(), false),
                ("Updated task #1 status".to_owned(), false),
                (
                    "Task #1 unchanged (no field was given a new value)".to_owned(),
                    false
                ),
            ],
            "exit {code}: {message}"
        );
        assert_eq!(task(&root, "1")["status"], "completed");
        let seen = logged(&log);
        let events: Vec<&str> = seen
            .iter()
            .map(|s| s["hook_event_name"].as_str().unwrap())
            .collect();
        assert_eq!(events, ["TaskCreated", "TaskCompleted"], "exit {code}");
        for input in &seen {
            assert_eq!(input["task_id"], "1", "{input}");
            assert_eq!(input["task_subject"], "A", "{input}");
            assert_eq!(input["task_description"], "d1", "{input}");
            assert_eq!(input["cwd"], root.to_string_lossy().as_ref());
            for field in ["session_id", "transcript_path", "permission_mode"] {
                assert!(input[field].is_string(), "{field}: {input}");
            }
        }
        if code == 1 {
            // The non-blocking error is said to the user (stderr), not to the model.
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("TaskCreated hook error") && stderr.contains("a note"),
                "{stderr}"
            );
        }
    }
}

/// The JSON forms block as exit code 2 does: `decision: "block"` with its reason, and
/// `continue: false` with its `stopReason` (Claude Code stops the teammate; here the task
/// is not created or completed, and the model is told the reason).
#[test]
fn json_block_and_continue_false_block_too() {
    let (_dir, root) = temp_root();
    settings(
        &root,
        r#"echo '{"decision":"block","reason":"subject too vague"}'"#,
        "exit 0",
    );
    let out = run(&root, &[create("toolu_1", "A", "d1")]);
    let (texts, message) = results(&out);
    assert!(texts[0].1, "{message}");
    assert!(texts[0].0.contains("subject too vague"), "{message}");
    assert_eq!(task_files(&root), Vec::<String>::new());

    let (_dir, root) = temp_root();
    settings(
        &root,
        "exit 0",
        r#"echo '{"continue":false,"stopReason":"review first"}'"#,
    );
    let out = run(
        &root,
        &[create("toolu_1", "A", "d1"), complete("toolu_2", "1")],
    );
    let (texts, message) = results(&out);
    assert!(!texts[0].1, "{message}");
    assert!(texts[1].1, "{message}");
    assert!(texts[1].0.contains("review first"), "{message}");
    assert_eq!(task(&root, "1")["status"], "pending");
}
