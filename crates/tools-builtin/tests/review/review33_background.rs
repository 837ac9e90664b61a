//! Review 33, background tasks and ExitPlanMode.
//!
//! 1. A background command's job-control children (`(set -m; sleep N &)`: a process group of
//!    their own, reparented once their subshell exits) must end however the task ends:
//!    TaskStop, its lifetime, its output cap, [`TaskRegistry::kill_all`], the registry's
//!    drop, the runtime's shutdown, and for a command moved to the background at its
//!    timeout too. Each job writes its pid to a file; the test then checks that pid is gone
//!    (by its command line, so a reused pid is not taken for it) and kills what a failing
//!    run leaves behind.
//! 2. ExitPlanMode's refusal of a `planFilePath` outside the plans directories names each
//!    directory once, in the grammar that fits.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::{
    PermissionMode, ProgressSender, Tool, ToolOutput, ToolPermissionContext, ToolUseContext,
};
use tools_builtin::tasks::{TaskRegistry, TaskStatus, task_registry};
use tools_builtin::{Bash, ExitPlanMode, TaskStop};

/// How long a step may take before the test calls it a hang: a guard, not a timing
/// assertion.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// How long a job may outlive the end of its task before the test calls it left running:
/// SIGKILL is delivered at once; this only covers a loaded machine.
const GONE_WITHIN: Duration = Duration::from_secs(10);

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

/// A job control child of the command: `sleep SECS` in a process group of its own, made by a
/// subshell that exits at once (so the job's parent link to the command is gone), its pid
/// written to `pid_file`; then the command itself runs on.
fn job_command(pid_file: &Path, secs: u32) -> String {
    format!(
        "echo begin; (set -m; sleep {secs} & echo $! > '{}'); sleep 100",
        pid_file.display()
    )
}

/// A job's pid and what it runs: alive only while `/proc` shows that very `sleep SECS`, not
/// a zombie (a reused pid is not the job).
#[derive(Debug, Clone, Copy)]
struct Job {
    pid: i32,
    secs: u32,
}

impl Job {
    fn alive(self) -> bool {
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", self.pid)).unwrap_or_default();
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).unwrap_or_default();
        let zombie = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next())
            == Some("Z");
        cmdline == format!("sleep\0{}\0", self.secs).as_bytes() && !zombie
    }

    /// Polls (blocking the thread: no runtime is driven meanwhile) until the job is gone.
    fn gone_within(self, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if !self.alive() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        !self.alive()
    }

    /// Polls without blocking the runtime until the job is gone.
    async fn gone_within_async(self, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if !self.alive() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        !self.alive()
    }
}

/// Kills the job, if it still runs, when the test ends (also when it fails).
struct Reap(Option<Job>);

impl Drop for Reap {
    fn drop(&mut self) {
        if let Some(job) = self.0
            && job.alive()
        {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(job.pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// The job whose pid it wrote to `path`, once it runs `sleep` (both waited for).
async fn job_in(path: &Path, secs: u32) -> Job {
    let start = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .filter(|s| s.ends_with('\n'))
            .and_then(|s| s.trim().parse().ok())
        {
            // Written after the fork, maybe before the job's `exec` of `sleep`: waited for.
            let job = Job { pid, secs };
            if job.alive() {
                return job;
            }
        }
        assert!(
            start.elapsed() < HANG_GUARD,
            "no running job's pid in {}",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Starts `command` in the background (with `timeout` as its lifetime); its task id.
async fn start(ctx: &ToolUseContext, command: &str, timeout: Option<u64>) -> String {
    let mut input = json!({"command": command, "run_in_background": true});
    if let Some(t) = timeout {
        input["timeout"] = json!(t);
    }
    let out = tokio::time::timeout(HANG_GUARD, call(&Bash::default(), ctx, input))
        .await
        .expect("starting a background command waited for it")
        .unwrap();
    out.structured["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// A background job whose task TaskStop stops goes with it.
#[tokio::test]
async fn task_stop_ends_what_job_control_made() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let pid_file = dir.path().join("job.pid");
    let id = start(&ctx, &job_command(&pid_file, 3371), None).await;
    let job = job_in(&pid_file, 3371).await;
    let _reap = Reap(Some(job));
    let out = call(&TaskStop, &ctx, json!({"task_id": id})).await.unwrap();
    assert!(
        out.content
            .joined_text()
            .starts_with("Successfully stopped task: "),
        "{}",
        out.content.joined_text()
    );
    assert!(
        job.gone_within_async(GONE_WITHIN).await,
        "the job {} outlived TaskStop",
        job.pid
    );
    task_registry(&ctx).kill_all();
}

/// A foreground command moved to the background at its timeout, then stopped: its job goes
/// with it.
#[tokio::test]
async fn a_command_moved_to_the_background_and_stopped_ends_its_job() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let pid_file = dir.path().join("moved.pid");
    let out = tokio::time::timeout(
        HANG_GUARD,
        call(
            &Bash::default(),
            &ctx,
            json!({"command": job_command(&pid_file, 3372), "timeout": 300}),
        ),
    )
    .await
    .expect("the command was not moved to the background")
    .unwrap();
    let id = out.structured["backgroundTaskId"]
        .as_str()
        .unwrap_or_else(|| panic!("not moved: {}", out.content.joined_text()))
        .to_owned();
    let job = job_in(&pid_file, 3372).await;
    let _reap = Reap(Some(job));
    call(&TaskStop, &ctx, json!({"task_id": id})).await.unwrap();
    assert!(
        job.gone_within_async(GONE_WITHIN).await,
        "the job {} outlived TaskStop of the moved command",
        job.pid
    );
    task_registry(&ctx).kill_all();
}

/// The end of a task's lifetime ends its job.
#[tokio::test]
async fn the_end_of_a_task_s_lifetime_ends_its_job() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let pid_file = dir.path().join("life.pid");
    // Long enough for the job to start on a loaded machine (the test needs its pid).
    let id = start(&ctx, &job_command(&pid_file, 3373), Some(3000)).await;
    let job = job_in(&pid_file, 3373).await;
    let _reap = Reap(Some(job));
    let task = task_registry(&ctx).wait(&id, HANG_GUARD).await.unwrap();
    assert_eq!(task.status, TaskStatus::Killed, "{task:?}");
    assert_eq!(
        task.kill_reason.as_deref(),
        Some("its lifetime of 3000 ms ended")
    );
    assert!(
        job.gone_within_async(GONE_WITHIN).await,
        "the job {} outlived its task's lifetime",
        job.pid
    );
}

/// A task whose output passes the cap is killed with its job. (The output file grows by a
/// hole: `truncate` of the command's own standard output, nothing written.)
#[tokio::test]
async fn a_task_past_its_output_cap_ends_its_job() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let pid_file = dir.path().join("cap.pid");
    let command = format!(
        "(set -m; sleep 3374 & echo $! > '{}'); truncate -s {} /dev/stdout; sleep 100",
        pid_file.display(),
        tools_builtin::bash::KILL_CAP + 1
    );
    let id = start(&ctx, &command, None).await;
    let job = job_in(&pid_file, 3374).await;
    let _reap = Reap(Some(job));
    let task = task_registry(&ctx).wait(&id, HANG_GUARD).await.unwrap();
    assert_eq!(task.status, TaskStatus::Killed, "{task:?}");
    assert!(
        task.kill_reason
            .as_deref()
            .is_some_and(|r| r.starts_with("its output passed")),
        "{task:?}"
    );
    // The sparse output file goes at once.
    let _ = std::fs::remove_file(&task.output_file);
    assert!(
        job.gone_within_async(GONE_WITHIN).await,
        "the job {} outlived its task's output cap",
        job.pid
    );
}

/// A runtime that runs on one thread, driven only inside `block_on`: what happens between
/// two `block_on`s is the registry's own doing, never its watchers'.
fn one_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Starts the job command in the background on `runtime`; its task id and job.
fn start_job(
    runtime: &tokio::runtime::Runtime,
    ctx: &ToolUseContext,
    pid_file: &Path,
    secs: u32,
) -> (String, Job) {
    runtime.block_on(async {
        let id = start(ctx, &job_command(pid_file, secs), None).await;
        (id, job_in(pid_file, secs).await)
    })
}

/// `kill_all` (a host about to exit without unwinding) ends the job itself, at once: no
/// watcher runs after it here.
#[test]
fn kill_all_ends_the_jobs_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = one_thread();
    let ctx = ctx(dir.path());
    let (id, job) = start_job(&runtime, &ctx, &dir.path().join("all.pid"), 3375);
    let _reap = Reap(Some(job));
    task_registry(&ctx).kill_all();
    assert!(
        job.gone_within(GONE_WITHIN),
        "the job {} outlived kill_all",
        job.pid
    );
    let task = runtime
        .block_on(task_registry(&ctx).wait(&id, HANG_GUARD))
        .unwrap();
    assert_eq!(task.status, TaskStatus::Killed, "{task:?}");
}

/// The registry's last handle dropped (the session ended) ends the job itself.
#[test]
fn dropping_the_registry_ends_the_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = one_thread();
    let ctx = ctx(dir.path());
    let (_, job) = start_job(&runtime, &ctx, &dir.path().join("drop.pid"), 3376);
    let _reap = Reap(Some(job));
    drop(ctx);
    assert!(
        job.gone_within(GONE_WITHIN),
        "the job {} outlived the registry",
        job.pid
    );
    drop(runtime);
}

/// The runtime shutting down as the process ends (its watchers dropped, the registry still
/// held) ends the job.
#[test]
fn a_runtime_shutting_down_ends_the_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = one_thread();
    let ctx = ctx(dir.path());
    let (_, job) = start_job(&runtime, &ctx, &dir.path().join("rt.pid"), 3377);
    let _reap = Reap(Some(job));
    let registry: TaskRegistry = task_registry(&ctx);
    drop(runtime);
    assert!(
        job.gone_within(GONE_WITHIN),
        "the job {} outlived the runtime",
        job.pid
    );
    drop((registry, ctx));
}

// ----- 2. ExitPlanMode's refusal names each plans directory once -----

fn plan_ctx(dir: &Path, home: &Path, config: Option<PathBuf>) -> ToolUseContext {
    common::ctx(dir)
        .with_permission(ToolPermissionContext {
            mode: PermissionMode::Plan,
            ..ToolPermissionContext::default()
        })
        .with_home(Some(home.to_path_buf()))
        .with_config_dir(config)
}

async fn refusal(ctx: &ToolUseContext, path: &Path) -> String {
    let input = ExitPlanMode
        .parse_input(json!({"planFilePath": path.to_str().unwrap()}))
        .unwrap();
    ExitPlanMode
        .validate_input(&input, ctx)
        .await
        .unwrap_err()
        .message
}

#[tokio::test]
async fn the_plan_file_refusal_names_each_plans_directory_once() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    std::fs::create_dir_all(home.join(".claude/plans")).unwrap();
    let other = dir.path().join("elsewhere");
    std::fs::create_dir_all(other.join("plans")).unwrap();
    let outside = dir.path().join("secret.txt");
    std::fs::write(&outside, "hunter2").unwrap();
    let home_plans = home.join(".claude/plans");
    let expected_one = format!(
        "planFilePath {} is not a plan file: only files in the plans directory ({}) are read",
        outside.display(),
        home_plans.display()
    );

    // CLAUDE_CONFIG_DIR is `~/.claude` itself (also spelt with a trailing slash): one
    // directory.
    for config in [
        home.join(".claude"),
        PathBuf::from(format!("{}/", home.join(".claude").display())),
    ] {
        let ctx = plan_ctx(dir.path(), &home, Some(config));
        assert_eq!(refusal(&ctx, &outside).await, expected_one);
    }
    // CLAUDE_CONFIG_DIR is a link to `~/.claude`: the same directory, named once.
    let link = dir.path().join("link-to-claude");
    std::os::unix::fs::symlink(home.join(".claude"), &link).unwrap();
    let ctx = plan_ctx(dir.path(), &home, Some(link.clone()));
    assert_eq!(
        refusal(&ctx, &outside).await,
        format!(
            "planFilePath {} is not a plan file: only files in the plans directory ({}) are read",
            outside.display(),
            link.join("plans").display()
        )
    );
    // No CLAUDE_CONFIG_DIR: the home's only.
    let ctx = plan_ctx(dir.path(), &home, None);
    assert_eq!(refusal(&ctx, &outside).await, expected_one);

    // Another CLAUDE_CONFIG_DIR: two directories, named as such.
    let ctx = plan_ctx(dir.path(), &home, Some(other.clone()));
    assert_eq!(
        refusal(&ctx, &outside).await,
        format!(
            "planFilePath {} is not a plan file: only files in the plans directories ({} or {}) are read",
            outside.display(),
            other.join("plans").display(),
            home_plans.display()
        )
    );
}

/// A foreground command killed at its timeout (a command starting with `sleep` is killed, not
/// moved to the background), cancelled (an interrupt), or abandoned (its future dropped):
/// its job-control child goes with it, as when the command ends by itself.
#[tokio::test]
async fn a_foreground_command_killed_cancelled_or_dropped_ends_its_job() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());

    // Killed at its timeout (the job seen running before).
    let pid_file = dir.path().join("timeout.pid");
    let running = tokio::spawn({
        let command = format!("sleep 0.01; {}", job_command(&pid_file, 3381));
        let ctx = ctx.clone();
        async move {
            call(
                &Bash::default(),
                &ctx,
                json!({"command": command, "timeout": 1000}),
            )
            .await
        }
    });
    let job = job_in(&pid_file, 3381).await;
    let _reap = Reap(Some(job));
    let out = tokio::time::timeout(HANG_GUARD, running)
        .await
        .expect("the command outlived its timeout");
    assert!(
        job.gone_within_async(GONE_WITHIN).await,
        "the job {} outlived its command's timeout: {out:?}",
        job.pid
    );

    // Cancelled.
    let pid_file = dir.path().join("cancel.pid");
    let token = tool_core::CancellationToken::new();
    let cancelled = ctx.clone().with_cancellation(token.clone());
    let running = tokio::spawn({
        let command = job_command(&pid_file, 3382);
        async move { call(&Bash::default(), &cancelled, json!({ "command": command })).await }
    });
    let job = job_in(&pid_file, 3382).await;
    let _reap = Reap(Some(job));
    token.cancel();
    let out = tokio::time::timeout(HANG_GUARD, running)
        .await
        .expect("the cancelled command went on");
    assert!(
        job.gone_within_async(GONE_WITHIN).await,
        "the job {} outlived its cancelled command: {out:?}",
        job.pid
    );

    // Abandoned: the call's future dropped midway.
    let pid_file = dir.path().join("drop.pid");
    let running = tokio::spawn({
        let command = job_command(&pid_file, 3383);
        let ctx = ctx.clone();
        async move { call(&Bash::default(), &ctx, json!({ "command": command })).await }
    });
    let job = job_in(&pid_file, 3383).await;
    let _reap = Reap(Some(job));
    running.abort();
    let _ = running.await;
    assert!(
        job.gone_within_async(GONE_WITHIN).await,
        "the job {} outlived its abandoned command",
        job.pid
    );
}
