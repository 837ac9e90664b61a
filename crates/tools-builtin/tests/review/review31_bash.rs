//! Review 31, the Bash tool's execution: a session directory swapped for a link, job
//! control's groups without a terminal, the user's `CLAUDE_ENV_FILE`, and a background
//! task's output file truncated or deleted while the task runs.

use crate::common;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::{
    PermissionMode, PermissionResult, ProgressSender, Tool, ToolError, ToolOutput,
    ToolPermissionContext, ToolResult, ToolUseContext,
};
use tools_builtin::tasks::task_registry;
use tools_builtin::{Bash, TaskOutput, Write};

/// How long a step may take before the test calls it a hang: a guard, not a timing
/// assertion.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// A call through the executor's steps (schema, validation, call), the result whole (with
/// its context change).
async fn call(tool: &dyn Tool, ctx: &ToolUseContext, input: Value) -> Result<ToolResult, String> {
    let input = tool.parse_input(input).map_err(|e| e.to_model_text())?;
    tool.validate_input(&input, ctx)
        .await
        .map_err(|e| e.message)?;
    tool.call(input, ctx.clone(), ProgressSender::none())
        .await
        .map_err(|e: ToolError| e.to_model_text())
}

/// What the model sees of a successful call.
async fn output(tool: &dyn Tool, ctx: &ToolUseContext, input: Value) -> ToolOutput {
    call(tool, ctx, input).await.unwrap().data
}

/// The context after `result`'s change, as the executor applies it.
fn after(ctx: &ToolUseContext, result: ToolResult) -> ToolUseContext {
    match result.context_modifier {
        Some(change) => change.apply(ctx.clone()),
        None => ctx.clone(),
    }
}

/// Whether process `pid` is alive (a zombie counts as gone).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next())
            != Some("Z")
    })
}

/// Polls until process `pid` is gone (signals are delivered asynchronously).
async fn pid_gone_within(pid: i32, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    !alive(pid)
}

/// The pid a command wrote to `path`, waiting for it to be written.
async fn pid_in(path: &Path) -> i32 {
    let start = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            return pid;
        }
        assert!(start.elapsed() < HANG_GUARD, "no pid in {}", path.display());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Kills `pid` if it still runs: a failing test leaves nothing behind.
fn reap(pid: i32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

// ----- 1. A session directory swapped for a link -----

/// A session that moved into a subdirectory (`cd sub2`) whose directory is then replaced by
/// a link to a place outside the project: the link does not carry the session out of the
/// working directories. The working directories stay the project's (the cwd never widens
/// them), so the permission engine asks about a write through the link (acceptEdits would
/// otherwise write outside unasked); and the next Bash command finds the session's directory
/// outside by its real path, runs in the project directory instead, says `Shell cwd was
/// reset to <project>`, and moves the session there. The engine resolves the command's
/// relative paths against the same directory, so what it allowed is what runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_session_directory_swapped_for_a_link_leads_nowhere_outside() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (proj, outside) = (root.join("proj"), root.join("outside"));
    let sub2 = proj.join("sub2");
    std::fs::create_dir_all(&sub2).unwrap();
    std::fs::create_dir(&outside).unwrap();
    let perm = ToolPermissionContext {
        mode: PermissionMode::AcceptEdits,
        ..ToolPermissionContext::default()
    };
    let engine = Arc::new(
        tool_perms::PermissionEngine::new(&perm, tool_perms::PathRoots::for_cwd(&proj)).unwrap(),
    );
    let ctx = ToolUseContext::new(&proj)
        .with_permission(perm)
        .with_results_dir(root.join("results"));
    ctx.app_state()
        .set(tool_perms::SessionEngine(engine.clone()));
    let decide = async |tool: &dyn Tool, input: Value, ctx: ToolUseContext| {
        let input = tool.parse_input(input).unwrap();
        let observed = tool.observable_input(&input, &ctx).unwrap_or(input);
        engine.decide(tool, &observed, &ctx).await
    };

    let moved = call(&Bash::default(), &ctx, json!({"command": "cd sub2"}))
        .await
        .unwrap();
    let in_sub2 = after(&ctx, moved);
    assert_eq!(in_sub2.cwd(), sub2);
    // The cwd is inside the project: it adds no working directory of its own.
    assert_eq!(in_sub2.working_directories(), vec![proj.clone()]);

    std::fs::remove_dir(&sub2).unwrap();
    symlink(&outside, &sub2).unwrap();

    // A write through the link is a write outside: asked about, not allowed by acceptEdits.
    let write = json!({"file_path": sub2.join("w.txt"), "content": "x"});
    let decided = decide(&Write, write.clone(), in_sub2.clone()).await;
    assert!(
        matches!(decided, PermissionResult::Ask { .. }),
        "{decided:?}"
    );

    // The command is judged where it runs, the project directory.
    let touch = json!({"command": "touch planted.txt; pwd -P"});
    let decided = decide(&Bash::default(), touch.clone(), in_sub2.clone()).await;
    assert!(
        matches!(decided, PermissionResult::Allow { .. }),
        "{decided:?}"
    );
    let ran = call(&Bash::default(), &in_sub2, touch).await.unwrap();
    let text = ran.data.content.joined_text();
    assert!(
        !outside.join("planted.txt").exists(),
        "the command ran outside: {text}"
    );
    assert!(proj.join("planted.txt").is_file(), "{text}");
    assert!(
        text.starts_with(&format!("{}\n", proj.display()))
            && text.contains(&format!("Shell cwd was reset to {}", proj.display())),
        "{text}"
    );
    let reset = after(&in_sub2, ran);
    assert_eq!(reset.cwd(), proj);
    let decided = decide(&Write, write, reset.clone()).await;
    assert!(
        matches!(decided, PermissionResult::Ask { .. }),
        "{decided:?}"
    );

    // A read-only command (whose context change the executor drops) says where it ran, each
    // time, and does not claim to move the session.
    let pwd = output(&Bash::default(), &in_sub2, json!({"command": "pwd"})).await;
    let text = pwd.content.joined_text();
    assert!(
        text.starts_with(&format!("{}\n", proj.display()))
            && text.contains(&format!(
                "Shell cwd {} leads to {}, outside the working directories; this command ran in {}",
                sub2.display(),
                outside.display(),
                proj.display()
            )),
        "{text}"
    );
}

/// A working directory entered from outside the others (a worktree elsewhere: EnterWorktree
/// moves the session there) is one while the session stays in it, also after a `cd` into
/// a subdirectory of it; a move back into the project ends that. A move inside the project
/// never adds one.
#[test]
fn a_directory_entered_from_outside_stays_a_working_directory_while_the_session_is_in_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let (proj, tree) = (root.join("proj"), root.join("tree"));
    std::fs::create_dir_all(proj.join("src")).unwrap();
    std::fs::create_dir_all(tree.join("sub")).unwrap();
    let ctx = ToolUseContext::new(&proj);
    let in_src = ctx.clone().with_cwd(proj.join("src"));
    assert_eq!(in_src.working_directories(), vec![proj.clone()]);
    let in_tree = in_src.with_cwd(&tree);
    assert_eq!(
        in_tree.working_directories(),
        vec![tree.clone(), proj.clone()]
    );
    let deeper = in_tree.with_cwd(tree.join("sub"));
    assert_eq!(
        deeper.working_directories(),
        vec![tree.clone(), proj.clone()]
    );
    assert_eq!(deeper.effective_cwd(), tree.join("sub"));
    let back = deeper.with_cwd(&proj);
    assert_eq!(back.working_directories(), vec![proj]);
}

// ----- 2. Job control without a terminal -----

/// Job control (`set -m`) puts a background job in a process group of its own. Without a
/// terminal (under an MCP host, in CI: as these tests run) the command's shell shares this
/// process's session, where those groups could not be told from others once the shell
/// exited: the job ran on after the command. The shell now marks what it starts (its pid in
/// the environment), so its job groups are found and stopped with it, with the note, in
/// the foreground and in the background alike, also those a nested shell made and left.
#[tokio::test]
async fn job_control_leaves_nothing_running_without_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path()).with_results_dir(dir.path().join("results"));
    // A job at the top, a subshell's (which runs no program: its environment is the
    // shell's), and a nested shell's, left when that shell exited before the command did.
    for (what, job) in [
        ("top", "set -m; sleep 3331 & echo $! > PIDFILE".to_owned()),
        (
            "subshell",
            "set -m; (sleep 3333; true) & echo $! > PIDFILE".to_owned(),
        ),
        (
            "nested",
            "bash -c \"set -m; sleep 3334 & echo \\$! > PIDFILE\"".to_owned(),
        ),
    ] {
        let pid_file = dir.path().join(format!("{what}.pid"));
        let command = format!(
            "{}; echo started",
            job.replace("PIDFILE", &format!("'{}'", pid_file.display()))
        );
        let out = tokio::time::timeout(
            HANG_GUARD,
            output(&Bash::default(), &ctx, json!({"command": command})),
        )
        .await
        .expect("the command waited for its job");
        let pid = pid_in(&pid_file).await;
        let gone = pid_gone_within(pid, Duration::from_secs(10)).await;
        reap(pid);
        let text = out.content.joined_text();
        assert!(
            gone,
            "{what}: the job is still running after the command: {text}"
        );
        assert!(
            text.starts_with("started\n")
                && text.contains("Stopped the processes this command left running"),
            "{what}: {text}"
        );
    }

    let pid_file = dir.path().join("bg.pid");
    let command = format!(
        "set -m; sleep 3332 & echo $! > '{}'; echo started",
        pid_file.display()
    );
    let started = output(
        &Bash::default(),
        &ctx,
        json!({"command": command, "run_in_background": true}),
    )
    .await;
    let id = started.structured["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let pid = pid_in(&pid_file).await;
    let done = output(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": true, "timeout": 60000}),
    )
    .await;
    let gone = pid_gone_within(pid, Duration::from_secs(10)).await;
    // What the leftover scan saw of it, should it have missed it (its session and group in
    // `stat`, whether its environment holds the command's mark): a rare miss under load in
    // CI was seen once (session 37) and not reproduced.
    let seen = (!gone).then(|| {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let marked = environ
            .split(|&b| b == 0)
            .any(|e| e.starts_with(b"TOOLWRIGHT_COMMAND="));
        let last = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid").unwrap_or_default();
        format!(
            "stat: {stat}; marked: {marked}; ns_last_pid: {}; this process: session {:?}, group {:?}",
            last.trim(),
            nix::unistd::getsid(None),
            nix::unistd::getpgrp()
        )
    });
    reap(pid);
    let task = &done.structured["task"];
    assert!(
        gone,
        "the job is still running after the task: {task}; {}",
        seen.unwrap_or_default()
    );
    assert_eq!(task["status"], "completed", "{task}");
    assert!(
        task["output"]
            .as_str()
            .unwrap()
            .contains("Stopped the processes this command left running"),
        "{task}"
    );
}

/// What the command did not start is never taken for its leftovers: a process this process
/// starts in a group of its own while a command runs (a hook, an MCP server, another
/// command) is in the same session, made after the command's shell, and outlives the
/// command untouched, and the command's result has no note.
#[tokio::test]
async fn a_group_the_command_did_not_make_is_left_alone() {
    use std::os::unix::process::CommandExt as _;
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path()).with_results_dir(dir.path().join("results"));
    let (started, go) = (dir.path().join("started"), dir.path().join("go"));
    let command = format!("touch '{}'; {}", started.display(), wait_for_file(&go));
    let running = tokio::spawn({
        let ctx = ctx.clone();
        async move { output(&Bash::default(), &ctx, json!({"command": command})).await }
    });
    wait_for_contents(&started, "").await;
    let mut other = Command::new("sleep");
    other.arg("3335").process_group(0);
    let mut other = other.spawn().unwrap();
    let pid = i32::try_from(other.id()).unwrap();
    std::fs::write(&go, "").unwrap();
    let out = tokio::time::timeout(HANG_GUARD, running)
        .await
        .unwrap()
        .unwrap();
    let survived = alive(pid);
    let _ = other.kill();
    let _ = other.wait();
    let text = out.content.joined_text();
    assert!(survived, "{text}");
    assert!(!text.contains("Stopped the processes"), "{text}");
}

// ----- 3. The user's CLAUDE_ENV_FILE -----

/// The variable that tells a rerun of a test which case it runs.
const ENV_FILE_CASE: &str = "REVIEW31_ENV_FILE_CASE";

/// Runs the test `name` of this binary again with `env` set (and [`ENV_FILE_CASE`] to
/// `case`): the variables a session starts with are this process's, which a test must not
/// change while others run beside it.
fn rerun_with(name: &str, case: &str, env: &[(&str, &Path)]) {
    let mut command = Command::new(std::env::current_exe().unwrap());
    // The test's path in the `review` binary, this file being its module `review31_bash`.
    let name = format!("review31_bash::{name}");
    command
        .args(["--exact", &name, "--test-threads=1"])
        .env(ENV_FILE_CASE, case);
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().unwrap();
    common::assert_rerun_passed(&out);
}

/// A `CLAUDE_ENV_FILE` the user set (in the process's environment, where the settings'
/// `env` puts it too) is sourced before each command, foreground and background, as Claude
/// Code does; before the session's own file (the SessionStart hooks'), whose exports win.
/// A file that is missing or cannot be read does not keep the command from running: the
/// result says it was not sourced.
#[test]
fn the_users_claude_env_file_is_sourced_before_each_command() {
    const NAME: &str = "the_users_claude_env_file_is_sourced_before_each_command";
    match std::env::var(ENV_FILE_CASE).ok().as_deref() {
        None => {
            let dir = tempfile::tempdir().unwrap();
            let env_file = dir.path().join("envf.sh");
            std::fs::write(&env_file, "export FOO=yes\nexport BOTH=user\n").unwrap();
            rerun_with(NAME, "sourced", &[("CLAUDE_ENV_FILE", &env_file)]);
            rerun_with(
                NAME,
                "missing",
                &[("CLAUDE_ENV_FILE", &dir.path().join("nowhere.sh"))],
            );
        }
        Some(case) => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(env_file_case(case)),
    }
}

/// One case of [`the_users_claude_env_file_is_sourced_before_each_command`], in its rerun.
async fn env_file_case(case: &str) {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path()).with_results_dir(dir.path().join("results"));
    let echo = json!({"command": "echo \"[$FOO] [$BOTH]\""});
    if case == "missing" {
        let named = std::env::var("CLAUDE_ENV_FILE").unwrap();
        let out = output(&Bash::default(), &ctx, echo).await;
        let text = out.content.joined_text();
        assert!(
            text.starts_with("[] []\n")
                && text.contains(&format!("CLAUDE_ENV_FILE {named} was not sourced")),
            "{text}"
        );
        return;
    }
    let out = output(&Bash::default(), &ctx, echo.clone()).await;
    assert_eq!(out.content.joined_text(), "[yes] [user]");
    // Beside the session's own file: the user's first, the hooks' after it.
    let session_dir = dir.path().join("session-env");
    std::fs::create_dir(&session_dir).unwrap();
    std::fs::write(
        session_dir.join("sessionstart-hook-0.sh"),
        "export BOTH=session\n",
    )
    .unwrap();
    let mut options = ctx.options().clone();
    options.session_env_dir = Some(session_dir);
    let ctx = ctx.with_options(options);
    let out = output(&Bash::default(), &ctx, echo).await;
    assert_eq!(out.content.joined_text(), "[yes] [session]");
    // In the background too.
    let started = output(
        &Bash::default(),
        &ctx,
        json!({"command": "echo \"[$FOO]\"", "run_in_background": true}),
    )
    .await;
    let id = started.structured["backgroundTaskId"].as_str().unwrap();
    let done = output(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": true, "timeout": 60000}),
    )
    .await;
    assert_eq!(done.structured["task"]["output"], "[yes]\n");
}

// ----- 4. A background task's output file -----

/// A shell loop that waits until `path` exists (the test's go-ahead).
fn wait_for_file(path: &Path) -> String {
    format!("while [ ! -e '{}' ]; do sleep 0.02; done", path.display())
}

/// Polls until `path` holds `expected`.
async fn wait_for_contents(path: &Path, expected: &str) {
    let start = Instant::now();
    loop {
        if std::fs::read_to_string(path).unwrap_or_default() == expected {
            return;
        }
        assert!(
            start.elapsed() < HANG_GUARD,
            "{} never held {expected:?}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Starts `command` in the background; its id and output file.
async fn start(ctx: &ToolUseContext, command: &str) -> (String, PathBuf) {
    let out = output(
        &Bash::default(),
        ctx,
        json!({"command": command, "run_in_background": true}),
    )
    .await;
    let id = out.structured["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let file = task_registry(ctx).get(&id).unwrap().output_file;
    (id, file)
}

/// The output file is appended to: a command that empties it (`: > FILE`) while the task
/// runs makes the task's later output start the file again, not follow a hole of NUL bytes
/// as long as what was there (the writer's offset, without `O_APPEND`).
#[tokio::test]
async fn a_truncated_output_file_holds_no_hole() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path()).with_results_dir(dir.path().join("results"));
    let go = dir.path().join("go");
    let (id, file) = start(
        &ctx,
        &format!("echo m1; echo m2; {}; echo m3; echo m4", wait_for_file(&go)),
    )
    .await;
    wait_for_contents(&file, "m1\nm2\n").await;
    std::fs::write(&file, "").unwrap();
    std::fs::write(&go, "").unwrap();
    let done = output(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": true, "timeout": 60000}),
    )
    .await;
    assert_eq!(done.structured["task"]["output"], "m3\nm4\n");
    assert_eq!(std::fs::read(&file).unwrap(), b"m3\nm4\n");
}

/// An output file deleted (or replaced) while the task runs: TaskOutput says so, where the
/// task's later output went nowhere anyone can read, instead of showing nothing as if the
/// task had printed nothing (and never shows another file's content as the task's).
#[tokio::test]
async fn a_deleted_output_file_is_named_as_gone() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path()).with_results_dir(dir.path().join("results"));
    for replace in [false, true] {
        let go = dir.path().join(format!("go-{replace}"));
        let (id, file) = start(&ctx, &format!("echo m1; {}; echo m2", wait_for_file(&go))).await;
        wait_for_contents(&file, "m1\n").await;
        std::fs::remove_file(&file).unwrap();
        if replace {
            std::fs::write(&file, "someone else's\n").unwrap();
        }
        std::fs::write(&go, "").unwrap();
        let done = output(
            &TaskOutput,
            &ctx,
            json!({"task_id": id, "block": true, "timeout": 60000}),
        )
        .await;
        let task = &done.structured["task"];
        let said = task["output"].as_str().unwrap();
        assert!(
            said.contains(&format!(
                "The output file {} was deleted or replaced while the task ran",
                file.display()
            )) && !said.contains("someone else's"),
            "replace: {replace}: {task}"
        );
        assert_eq!(task["status"], "completed", "{task}");
    }
}
