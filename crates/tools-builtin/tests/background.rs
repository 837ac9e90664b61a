//! Background tasks with real processes: Bash `run_in_background`, TaskOutput, TaskStop, the
//! lifetime limit and the registry's drop; /proc must show nothing left running.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{gone_within, live_in_group};
use serde_json::{Value, json};
use tool_core::{ProgressSender, Tool, ToolOutput, ToolUseContext};
use tools_builtin::tasks::{TaskSnapshot, TaskStatus, task_registry};
use tools_builtin::{Bash, TaskOutput, TaskStop};

async fn call(tool: &dyn Tool, ctx: &ToolUseContext, input: Value) -> Result<ToolOutput, String> {
    let input = tool.parse_input(input).map_err(|e| e.to_model_text())?;
    tool.validate_input(&input, ctx)
        .await
        .map_err(|e| e.message)?;
    tool.call(input, ctx.clone(), ProgressSender::none())
        .await
        .map(|r| r.data)
        .map_err(|e| e.to_model_text())
}

fn ctx(dir: &Path) -> ToolUseContext {
    common::ctx(dir).with_results_dir(dir.join("results"))
}

/// How long a step may take before the test calls it a hang: a guard, not a timing
/// assertion (each step ends on an event well before it, even on a loaded machine).
const HANG_GUARD: Duration = Duration::from_secs(60);

/// A shell loop that waits until `path` exists (the test's go-ahead).
fn wait_for_file(path: &Path) -> String {
    format!("while [ ! -e '{}' ]; do sleep 0.02; done", path.display())
}

/// Polls until `path` holds exactly `expected` (the hang guard bounds the wait).
async fn wait_for_contents(path: &Path, expected: &str) {
    let deadline = Instant::now() + HANG_GUARD;
    loop {
        let now = std::fs::read_to_string(path).unwrap_or_default();
        if now == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{} holds {now:?}, not {expected:?}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Starts `command` in the background; returns its id and process group.
async fn start(ctx: &ToolUseContext, command: &str, timeout: Option<u64>) -> (String, i32) {
    let mut input = json!({"command": command, "run_in_background": true});
    if let Some(t) = timeout {
        input["timeout"] = json!(t);
    }
    // The call returns while the command runs: the hang guard catches one that waits for it.
    let out = tokio::time::timeout(HANG_GUARD, call(&Bash::default(), ctx, input))
        .await
        .expect("starting a background command waited for it")
        .unwrap();
    let id = out.structured["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let task = task_registry(ctx).get(&id).unwrap();
    assert_eq!(
        out.content.joined_text(),
        format!(
            "Command running in background with ID: {id}. Output is being written to: {}",
            task.output_file.display()
        )
    );
    (id, task.pgid)
}

#[tokio::test]
async fn a_background_command_runs_and_its_output_is_read_incrementally() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let go = dir.path().join("go");
    // The command cannot end before the test creates `go`: `start` returning at all (within
    // its hang guard) shows the call does not wait for the command.
    let (id, pgid) = start(
        &ctx,
        &format!(
            "echo start; echo oops >&2; {}; echo done; exit 3",
            wait_for_file(&go)
        ),
        None,
    )
    .await;
    assert!(id.starts_with('b') && id.len() == 9, "{id}");
    let task = task_registry(&ctx).get(&id).unwrap();
    assert!(
        task.output_file
            .starts_with(dir.path().join("results/tasks"))
    );

    // Not blocking while it runs: not_ready. The command has written its first lines and
    // waits for `go`.
    wait_for_contents(&task.output_file, "start\noops\n").await;
    let out = call(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": false, "timeout": 0}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["retrieval_status"], "not_ready");
    assert_eq!(out.structured["task"]["status"], "running");
    assert_eq!(out.structured["task"]["output"], "start\noops\n");

    // Blocking: waits for the end, returns only the new output.
    std::fs::write(&go, "").unwrap();
    let out = call(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": true, "timeout": 60000}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["retrieval_status"], "success");
    assert_eq!(out.structured["task"]["status"], "failed");
    assert_eq!(out.structured["task"]["exitCode"], 3);
    assert_eq!(out.structured["task"]["output"], "done\n");
    assert_eq!(
        out.content.joined_text(),
        format!(
            "<retrieval_status>success</retrieval_status>\n\n<task_id>{id}</task_id>\n\n\
             <task_type>local_bash</task_type>\n\n<status>failed</status>\n\n\
             <exit_code>3</exit_code>\n\n<output>\ndone\n</output>"
        )
    );
    // Nothing new after that; the file holds everything.
    let out = call(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": true, "timeout": 10}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["task"]["output"], "");
    assert_eq!(
        std::fs::read_to_string(&task.output_file).unwrap(),
        "start\noops\ndone\n"
    );
    assert!(live_in_group(pgid).is_empty());

    // A task that succeeds is `completed`; a short blocking wait on a running one (it waits
    // for `go2`) times out.
    let go2 = dir.path().join("go2");
    let (id2, _) = start(&ctx, &format!("{}; echo ok", wait_for_file(&go2)), None).await;
    let out = call(
        &TaskOutput,
        &ctx,
        json!({"task_id": id2, "block": true, "timeout": 50}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["retrieval_status"], "timeout");
    std::fs::write(&go2, "").unwrap();
    let out = call(
        &TaskOutput,
        &ctx,
        json!({"task_id": id2, "block": true, "timeout": 60000}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["task"]["status"], "completed");
    assert_eq!(out.structured["task"]["output"], "ok\n");
}

#[tokio::test]
async fn task_stop_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let (id, pgid) = start(&ctx, "sleep 100 & sleep 100 & wait", None).await;
    let start_wait = Instant::now();
    while live_in_group(pgid).len() < 3 && start_wait.elapsed() < HANG_GUARD {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(live_in_group(pgid).len() >= 3, "shell and two sleeps run");

    // The deprecated shell_id works.
    let out = call(&TaskStop, &ctx, json!({"shell_id": id}))
        .await
        .unwrap();
    assert_eq!(
        out.content.joined_text(),
        format!("Successfully stopped task: {id} (sleep 100 & sleep 100 & wait)")
    );
    assert!(live_in_group(pgid).is_empty(), "{:?}", live_in_group(pgid));
    let task = task_registry(&ctx).get(&id).unwrap();
    assert_eq!(task.status, TaskStatus::Killed);
    assert_eq!(task.kill_reason.as_deref(), Some("stopped"));

    let err = call(&TaskStop, &ctx, json!({"task_id": id}))
        .await
        .unwrap_err();
    assert_eq!(err, format!("Task {id} is not running (status: killed)"));
    let out = call(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": false, "timeout": 0}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["task"]["status"], "killed");
    assert_eq!(out.structured["task"]["error"], "Task was killed: stopped");
}

#[tokio::test]
async fn a_task_dies_when_its_lifetime_ends() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let (id, pgid) = start(&ctx, "trap '' TERM; sleep 100 & sleep 100", Some(300)).await;
    let started = Instant::now();
    let out = call(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": true, "timeout": 60000}),
    )
    .await
    .unwrap();
    // The shell ignores SIGTERM: SIGKILL follows after the grace period. A hang guard, not a
    // speed check: well under the 100 s sleeps, so the lifetime's kill ended them.
    assert!(started.elapsed() < HANG_GUARD, "{:?}", started.elapsed());
    assert_eq!(out.structured["task"]["status"], "killed");
    assert_eq!(
        out.structured["task"]["error"],
        "Task was killed: its lifetime of 300 ms ended"
    );
    assert!(gone_within(pgid, HANG_GUARD).await);
}

/// The runtime shutting down as a process ends drops a task's watcher before (or without)
/// the registry: what the command took out of its group (`setsid`) is killed with it, not
/// left to init after the shell alone was killed.
#[test]
fn a_runtime_shutting_down_kills_what_a_task_took_out_of_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("escaped.pid");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let ctx = ctx(dir.path());
    let command = format!(
        "setsid sh -c 'echo $$ > {}; exec sleep 300' & sleep 300",
        pid_file.display()
    );
    let registry = runtime.block_on(async {
        start(&ctx, &command, None).await;
        let deadline = Instant::now() + HANG_GUARD;
        while !std::fs::read_to_string(&pid_file).is_ok_and(|p| p.ends_with('\n')) {
            assert!(Instant::now() < deadline, "the command did not start");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        task_registry(&ctx)
    });
    let escaped = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_owned();
    let alive = |pid: &str| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        !stat.is_empty() && !stat.contains(") Z ")
    };
    assert!(alive(&escaped));
    // The registry outlives the runtime (as a session's does while the process exits).
    drop(runtime);
    let deadline = Instant::now() + HANG_GUARD;
    while alive(&escaped) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let left = alive(&escaped);
    if left {
        let _ = std::process::Command::new("kill")
            .args(["-9", &escaped])
            .status();
    }
    assert!(
        !left,
        "the process the task took out of its group outlived it"
    );
    drop((registry, ctx));
}

/// A background command that ends leaving a process running (`(sleep 2; echo late) &`)
/// has it stopped with it, and TaskOutput says so: the output that process would have
/// written never comes, and the model is not left waiting for it. One that leaves nothing
/// gets no such note.
#[tokio::test]
async fn a_tasks_stopped_leftovers_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    for (command, noted) in [
        ("(sleep 30; echo late) & echo started", true),
        ("echo started", false),
    ] {
        let (id, _) = start(&ctx, command, None).await;
        let out = call(
            &TaskOutput,
            &ctx,
            json!({"task_id": id, "block": true, "timeout": 60_000}),
        )
        .await
        .unwrap();
        let text = out.content.joined_text();
        assert!(
            text.contains("<status>completed</status>") && text.contains("started"),
            "{text}"
        );
        assert_eq!(
            text.contains("Stopped the processes this command left running"),
            noted,
            "{command}: {text}"
        );
        assert!(!text.lines().any(|l| l == "late"), "{text}");
    }
}

#[tokio::test]
async fn dropping_the_registry_kills_its_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let (_, pgid1) = start(&ctx, "sleep 100 & sleep 100", None).await;
    let (_, pgid2) = start(&ctx, "sleep 100", None).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!live_in_group(pgid1).is_empty() && !live_in_group(pgid2).is_empty());
    drop(ctx);
    assert!(gone_within(pgid1, HANG_GUARD).await);
    assert!(gone_within(pgid2, HANG_GUARD).await);
}

#[tokio::test]
async fn unknown_and_missing_ids_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let err = call(
        &TaskOutput,
        &ctx,
        json!({"task_id": "bnope", "block": true, "timeout": 10}),
    )
    .await
    .unwrap_err();
    assert_eq!(err, "No task found with ID: bnope");
    let err = call(&TaskStop, &ctx, json!({"task_id": "bnope"}))
        .await
        .unwrap_err();
    assert_eq!(err, "No task found with ID: bnope");
    let err = call(&TaskStop, &ctx, json!({})).await.unwrap_err();
    assert_eq!(err, "Missing required parameter: task_id");
    assert_eq!(
        TaskOutput.aliases(),
        ["BashOutput", "BashOutputTool", "AgentOutputTool"]
    );
    assert_eq!(TaskStop.aliases(), ["KillShell"]);
}

#[tokio::test]
async fn a_truncated_output_file_is_read_again_from_its_start() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let (id, _) = start(&ctx, "echo first-output-line; sleep 100", None).await;
    let registry = task_registry(&ctx);
    let deadline = Instant::now() + HANG_GUARD;
    let file = registry.get(&id).unwrap().output_file;
    while std::fs::read_to_string(&file)
        .unwrap_or_default()
        .is_empty()
    {
        assert!(Instant::now() < deadline, "no output");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (first, _) = registry.read_new_output(&id, 1 << 20).unwrap();
    assert_eq!(first, "first-output-line\n");
    // The model empties the file (`: > file`) and something writes less than was read.
    std::fs::write(&file, "new\n").unwrap();
    let (again, skipped) = registry.read_new_output(&id, 1 << 20).unwrap();
    assert_eq!((again.as_str(), skipped), ("new\n", false));
    registry.kill_all();
    assert_eq!(registry.read_new_output(&id, 1 << 20).unwrap().0, "");
}

/// A character the task has only half written is not shown broken: it waits for the next
/// read, whole; a read that skips ahead starts at a whole character.
#[tokio::test]
async fn a_half_written_character_waits_for_the_next_read() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let (id, _) = start(&ctx, "sleep 100", None).await;
    let registry = task_registry(&ctx);
    let file = registry.get(&id).unwrap().output_file;
    // "é" is C3 A9: the first byte alone, then the second.
    std::fs::write(&file, b"caf\xC3").unwrap();
    assert_eq!(registry.read_new_output(&id, 1 << 20).unwrap().0, "caf");
    std::fs::write(&file, "café\n").unwrap();
    assert_eq!(registry.read_new_output(&id, 1 << 20).unwrap().0, "é\n");
    // Skipping ahead into the middle of a character: from the next whole one.
    std::fs::write(&file, "café\nééé").unwrap();
    let (text, skipped) = registry.read_new_output(&id, 5).unwrap();
    assert_eq!((text.as_str(), skipped), ("éé", true));
    registry.kill_all();
}

/// A read that skips ahead into the middle of a line starts at the next line: the tail of
/// the cut line (`8` of `195718`) read as output of its own. A cut that falls at a line's
/// start keeps that line.
#[tokio::test]
async fn a_read_that_skips_ahead_starts_at_a_whole_line() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let (id, _) = start(&ctx, "sleep 100", None).await;
    let registry = task_registry(&ctx);
    let file = registry.get(&id).unwrap().output_file;
    let numbers: String = (1..=2000).map(|n| format!("{n}\n")).collect();
    std::fs::write(&file, &numbers).unwrap();
    let (text, skipped) = registry.read_new_output(&id, 1001).unwrap();
    assert!(skipped);
    let lines: Vec<u32> = text.lines().map(|l| l.parse().unwrap()).collect();
    assert_eq!(*lines.last().unwrap(), 2000);
    // Whole numbers, one after another: the first line is no cut tail.
    assert!(lines.windows(2).all(|w| w[1] == w[0] + 1), "{text}");
    assert!(numbers.ends_with(&text) && numbers[..numbers.len() - text.len()].ends_with('\n'));
    // The cut right after a line end: that line is kept whole.
    std::fs::write(&file, format!("{numbers}a\nbb\n")).unwrap();
    let (text, skipped) = registry.read_new_output(&id, 3).unwrap();
    assert_eq!((text.as_str(), skipped), ("bb\n", true));
    registry.kill_all();
}

#[tokio::test]
async fn kill_all_stops_every_running_task_now() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let (_, pgid) = start(&ctx, "sleep 100 & sleep 100", None).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!live_in_group(pgid).is_empty());
    task_registry(&ctx).kill_all();
    assert!(gone_within(pgid, HANG_GUARD).await);
}

/// A background command runs with what the session's hooks exported (`CLAUDE_ENV_FILE`), as
/// a foreground one does; the task still shows the command as given.
#[tokio::test]
async fn a_background_command_sees_the_session_environment_file() {
    let dir = tempfile::tempdir().unwrap();
    let env_dir = dir.path().join("session-env");
    std::fs::create_dir(&env_dir).unwrap();
    let env_file = env_dir.join("sessionstart-hook-0.sh");
    // What the file turns on holds for the command's own first line (bash parses a whole
    // line before running it: an `extglob` pattern after the sourcing on the same line
    // would be a syntax error).
    std::fs::write(&env_file, "export FROM_HOOK=exported\nshopt -s extglob\n").unwrap();
    let ctx = ctx(dir.path());
    let mut options = ctx.options().clone();
    options.session_env_dir = Some(env_dir);
    let ctx = ctx.with_options(options);
    let (id, _) = start(&ctx, "echo \"hook says $FROM_HOOK\" +(x|y)", None).await;
    let out = call(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": true, "timeout": 60000}),
    )
    .await
    .unwrap();
    assert_eq!(
        out.structured["task"]["output"],
        "hook says exported +(x|y)\n"
    );
    assert_eq!(
        task_registry(&ctx).get(&id).unwrap().command,
        "echo \"hook says $FROM_HOOK\" +(x|y)"
    );
}

/// The session's directory was removed: a background command runs in the project directory
/// (as a foreground one does) and says so; it failed to start before. (`pwd` is read-only:
/// the executor drops its context change, so it does not claim to reset the session.)
#[tokio::test]
async fn a_background_command_runs_where_the_session_fell_back_to() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let gone = root.join("build");
    std::fs::create_dir(&gone).unwrap();
    let ctx = ctx(&root).with_cwd(&gone);
    std::fs::remove_dir(&gone).unwrap();
    let out = call(
        &Bash::default(),
        &ctx,
        json!({"command": "pwd", "run_in_background": true}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    assert!(
        text.contains(&format!(
            "Shell cwd {} no longer exists; this command ran in {}",
            gone.display(),
            root.display()
        )),
        "{text}"
    );
    let id = out.structured["backgroundTaskId"].as_str().unwrap();
    let done = call(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": true, "timeout": 60000}),
    )
    .await
    .unwrap();
    assert_eq!(
        done.structured["task"]["output"],
        format!("{}\n", root.display())
    );
}

/// A foreground command still running at its timeout goes on as a background task (as in
/// Claude Code): the call returns its id, the task's output holds what the command wrote
/// before and after, and it ends as the command ends.
#[tokio::test]
async fn a_command_past_its_timeout_moves_to_the_background() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let ctx = ctx(&root);
    let stop = root.join("stop");
    let command = format!(
        "echo before; while [ ! -e '{}' ]; do sleep 0.05; done; echo after >&2; exit 3",
        stop.display()
    );
    let out = call(
        &Bash::default(),
        &ctx,
        json!({"command": command, "timeout": 500}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    assert!(
        text.starts_with(
            "Command was still running after its timeout of 500 ms, so it was moved to the \
             background with ID: "
        ),
        "{text}"
    );
    let id = out.structured["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let task = task_registry(&ctx).get(&id).unwrap();
    assert!(
        !live_in_group(task.pgid).is_empty(),
        "the command was killed"
    );
    std::fs::write(&stop, "").unwrap();
    let done = call(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": true, "timeout": 60000}),
    )
    .await
    .unwrap();
    assert_eq!(done.structured["task"]["output"], "before\nafter\n");
    assert_eq!(done.structured["task"]["exitCode"], 3);
    assert!(gone_within(task.pgid, HANG_GUARD).await);
}

/// A command moved to the background at its timeout starts its task's file with the bytes it
/// wrote so far, in the order they were read from its two streams, not converted to text:
/// a character its last write before the timeout split (its rest comes after, with error
/// output in between) is whole in the file. The task is named by the model's description.
#[tokio::test]
async fn a_command_moved_to_the_background_keeps_its_bytes_their_order_and_its_description() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let ctx = ctx(&root);
    // The pauses let each write be read before the next; the last one outlasts the timeout.
    let command = "printf 'out1\\n'; sleep 0.2; printf 'err1\\n' >&2; sleep 0.2; \
                   printf 'out2\\n\\xe2\\x82'; sleep 0.2; printf 'err2\\n' >&2; sleep 3; \
                   printf '\\xac done\\n'; exit 3";
    let (done, task, saved) = moved_to_the_background(
        &ctx,
        json!({"command": command, "timeout": 1500, "description": "mydesc"}),
    )
    .await;
    assert_eq!(done.structured["task"]["exitCode"], 3);
    assert_eq!(saved, "out1\nerr1\nout2\nerr2\n\u{20ac} done\n");
    assert_eq!(task.description.as_deref(), Some("mydesc"));
}

/// Runs the Bash `input`, which must move to the background at its timeout, and waits for
/// its task to end: TaskOutput's answer, the task, and its output file's text.
async fn moved_to_the_background(
    ctx: &ToolUseContext,
    input: serde_json::Value,
) -> (ToolOutput, TaskSnapshot, String) {
    let out = call(&Bash::default(), ctx, input).await.unwrap();
    let id = out.structured["backgroundTaskId"]
        .as_str()
        .expect("moved to the background")
        .to_owned();
    let done = call(
        &TaskOutput,
        ctx,
        json!({"task_id": id, "block": true, "timeout": 60000}),
    )
    .await
    .unwrap();
    let task = task_registry(ctx).get(&id).unwrap();
    let saved = String::from_utf8_lossy(&std::fs::read(&task.output_file).unwrap()).into_owned();
    (done, task, saved)
}

/// Found by review: a command whose output had spilled (over 1 MiB) when it moved to the
/// background at its timeout left its task's file with the omission note alone: no head,
/// no tail, where the last lines before the timeout are what the model needs.
#[tokio::test]
async fn a_spilled_command_moved_to_the_background_keeps_its_head_and_tail() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let ctx = ctx(&root);
    let command = "seq 1 300000; echo LAST-BEFORE-TIMEOUT; sleep 3; echo after";
    let (_, _, saved) =
        moved_to_the_background(&ctx, json!({"command": command, "timeout": 1500})).await;
    assert!(
        saved.starts_with("1\n2\n3\n"),
        "no head: {:?}",
        &saved[..saved.len().min(200)]
    );
    assert!(saved.contains("LAST-BEFORE-TIMEOUT\n"), "no tail");
    assert!(
        saved.trim_end().ends_with("after"),
        "{:?}",
        &saved[saved.len().saturating_sub(200)..]
    );
}

/// TaskStop sends SIGTERM to the whole group and gives it the grace period: a grandchild that
/// cleans up on SIGTERM finishes, although the shell leading the group dies at once. It was
/// SIGKILLed as soon as the leader was reaped.
#[tokio::test]
async fn task_stop_gives_a_grandchild_s_term_trap_its_grace() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let ready = dir.path().join("ready");
    let cleaned = dir.path().join("cleaned");
    let command = format!(
        "bash -c 'trap \"sleep 0.5; touch {c}\" TERM; touch {r}; sleep 100 & wait'; true",
        c = cleaned.display(),
        r = ready.display()
    );
    let (id, pgid) = start(&ctx, &command, None).await;
    let deadline = Instant::now() + HANG_GUARD;
    while !ready.exists() {
        assert!(Instant::now() < deadline, "the command did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    call(&TaskStop, &ctx, json!({"task_id": id})).await.unwrap();
    assert!(cleaned.exists(), "the TERM trap did not finish");
    assert!(live_in_group(pgid).is_empty(), "{:?}", live_in_group(pgid));
    assert_eq!(
        task_registry(&ctx).get(&id).unwrap().status,
        TaskStatus::Killed
    );
}

/// A command moved to the background at its timeout counts as ended only once what it wrote
/// to its pipes is all in its output file: a non-blocking TaskOutput that sees it ended has
/// its whole output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adopted_command_ends_only_once_its_output_is_in_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let ctx = ctx(&root);
    for round in 0..5 {
        let stop = root.join(format!("stop{round}"));
        let command = format!(
            "while [ ! -e '{}' ]; do sleep 0.05; done; seq 1 200000",
            stop.display()
        );
        let out = call(
            &Bash::default(),
            &ctx,
            json!({"command": command, "timeout": 300}),
        )
        .await
        .unwrap();
        let id = out.structured["backgroundTaskId"]
            .as_str()
            .expect("moved to the background")
            .to_owned();
        std::fs::write(&stop, "").unwrap();
        let deadline = Instant::now() + HANG_GUARD;
        // Everything read up to the read that first sees the task ended.
        let mut output = String::new();
        let status = loop {
            let out = call(
                &TaskOutput,
                &ctx,
                json!({"task_id": id, "block": false, "timeout": 0}),
            )
            .await
            .unwrap();
            output.push_str(out.structured["task"]["output"].as_str().unwrap());
            if out.structured["task"]["status"] != "running" {
                break out.structured["task"]["status"].clone();
            }
            assert!(Instant::now() < deadline, "the command did not end");
            tokio::task::yield_now().await;
        };
        assert_eq!(status, "completed");
        assert!(
            output.ends_with("\n199999\n200000\n"),
            "round {round}: the output ends with {:?}",
            &output[output.len().saturating_sub(40)..]
        );
    }
}

/// Tasks ended by `kill_all` (and so by dropping the registry, which kills the same way) are
/// `killed`, with a reason, not `failed`.
#[tokio::test]
async fn tasks_ended_by_kill_all_are_killed() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let (id, pgid) = start(&ctx, "sleep 100", None).await;
    let registry = task_registry(&ctx);
    registry.kill_all();
    let task = registry.wait(&id, HANG_GUARD).await.unwrap();
    assert_eq!(task.status, TaskStatus::Killed);
    assert_eq!(task.exit_code, None);
    assert!(task.kill_reason.is_some());
    assert!(gone_within(pgid, HANG_GUARD).await);
    let out = call(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": false, "timeout": 0}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["task"]["status"], "killed");
}

/// Claude Code's schema defaults `block` (true) and `timeout` (30000 ms, at most 600000):
/// `{"task_id": ...}` alone parses and waits for the task, and the schema tells the model so.
#[tokio::test]
async fn task_output_needs_only_the_task_id() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let (id, _) = start(&ctx, "sleep 0.3; echo finished", None).await;
    let started = Instant::now();
    let out = call(&TaskOutput, &ctx, json!({"task_id": id}))
        .await
        .unwrap();
    assert_eq!(out.structured["retrieval_status"], "success");
    assert_eq!(out.structured["task"]["status"], "completed");
    assert_eq!(out.structured["task"]["output"], "finished\n");
    // It returned when the task ended, not at the default timeout of 30 s.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );

    // One of the two given: the other keeps its default (no wait when not blocking). The
    // task runs until TaskStop ends it: `not_ready` shows the call did not wait for its end,
    // and a non-blocking call that waited out the default timeout would take 30 s.
    let (id, _) = start(&ctx, "sleep 100", None).await;
    let started = Instant::now();
    let out = call(&TaskOutput, &ctx, json!({"task_id": id, "block": false}))
        .await
        .unwrap();
    assert_eq!(out.structured["retrieval_status"], "not_ready");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let out = call(&TaskOutput, &ctx, json!({"task_id": id, "timeout": 50}))
        .await
        .unwrap();
    assert_eq!(out.structured["retrieval_status"], "timeout");
    call(&TaskStop, &ctx, json!({"task_id": id})).await.unwrap();

    // The defaults, as parsed and as the model sees them.
    let input: tools_builtin::task_output::TaskOutputInput =
        serde_json::from_value(json!({"task_id": "b1"})).unwrap();
    assert!(input.block);
    assert!((input.timeout - 30_000.0).abs() < f64::EPSILON);
    let schema = TaskOutput.input_schema();
    assert_eq!(schema["required"], json!(["task_id"]));
    assert_eq!(schema["properties"]["block"]["default"], true);
    assert_eq!(schema["properties"]["timeout"]["default"], 30_000.0);
    assert_eq!(schema["properties"]["timeout"]["maximum"], 600_000);
    assert_eq!(schema["properties"]["timeout"]["minimum"], 0);
}
