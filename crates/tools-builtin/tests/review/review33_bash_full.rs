//! Review 33, a full disk under Bash and the task tools, on real small tmpfs mounts:
//!
//! 1. A `cd` made while the scratch directory's file system is full holds, or the result
//!    says the working directory could not be tracked and where the next command runs.
//! 2. A scratch directory out of inodes: the call says the command could not start, and
//!    why (its scratch file could not be created there); in the background, that its
//!    output file could not be.
//! 3. An output spill that fails on a full disk leaves no half-written spill file.
//! 4. TaskCreate that cannot update the id counter creates nothing (a retry makes no
//!    duplicate), and says so.
//! 5. A background task whose output filled its file system: TaskOutput says output may be
//!    missing.
//!
//! A tmpfs needs root (CAP_SYS_ADMIN): elsewhere each test is skipped with a printed reason
//! (under `CI=true` it fails instead: CI runs as root).

use crate::common;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::{Value, json};
use tool_core::{ProgressSender, Tool, ToolError, ToolResult, ToolUseContext};
use tools_builtin::task_list::{TaskListStore, install_task_list_store};
use tools_builtin::{Bash, TaskCreate, TaskList, TaskOutput};

/// A mounted tmpfs, unmounted (lazily: a process may still hold a file) when dropped.
struct Tmpfs {
    dir: PathBuf,
    _holder: tempfile::TempDir,
}

impl Tmpfs {
    /// A tmpfs mounted with `options`, or `None` (with a printed reason naming `case`) when
    /// this process may not mount one.
    fn mount(options: &str, case: &str) -> Option<Self> {
        let skip = |why: String| {
            let msg = format!("SKIPPED {case}: cannot mount a tmpfs here ({why})");
            assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
            eprintln!("{msg}");
            None
        };
        if !nix::unistd::geteuid().is_root() {
            return skip("needs root with CAP_SYS_ADMIN; not root".to_owned());
        }
        let holder = tempfile::tempdir().unwrap();
        let dir = holder.path().join("fs");
        std::fs::create_dir(&dir).unwrap();
        match Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "tmpfs"])
            .arg(&dir)
            .output()
        {
            Ok(o) if o.status.success() => Some(Self {
                dir,
                _holder: holder,
            }),
            Ok(o) => skip(String::from_utf8_lossy(&o.stderr).trim().to_owned()),
            Err(e) => skip(format!("cannot run `mount`: {e}")),
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.dir).status();
    }
}

/// Fills the file system of `dir` with one file of zeros, until a write fails.
fn fill_blocks(dir: &Path) {
    let mut file = std::fs::File::create(dir.join("filler")).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    loop {
        if let Err(e) = file.write_all(&chunk) {
            assert_eq!(e.raw_os_error(), Some(28), "{e}");
            break;
        }
    }
    // What the last write held back must not land later.
    let _ = file.sync_all();
}

/// Names the inode fillers apart, call after call.
static FILLERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Uses up the inodes of `dir`'s file system with empty files; their paths.
fn fill_inodes(dir: &Path) -> Vec<PathBuf> {
    let fill = dir.join("inode-fillers");
    let _ = std::fs::create_dir(&fill);
    let mut made = Vec::new();
    loop {
        let n = FILLERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = fill.join(n.to_string());
        match std::fs::File::create(&path) {
            Ok(_) => made.push(path),
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(28), "{e}");
                break;
            }
        }
    }
    made
}

async fn bash(ctx: &ToolUseContext, input: Value) -> Result<ToolResult, ToolError> {
    let tool: Arc<dyn Tool> = Arc::new(Bash::default());
    let input = tool
        .parse_input(input)
        .map_err(|e| ToolError::msg(e.to_model_text()))?;
    tool.call(input, ctx.clone(), ProgressSender::none()).await
}

/// The text the model sees of a result, success or failure.
fn seen(result: &Result<ToolResult, ToolError>) -> String {
    match result {
        Ok(r) => r.data.content.joined_text(),
        Err(e) => e.to_model_text(),
    }
}

/// The context a result hands the next call (its `cd`), success or failure.
fn next_ctx(result: Result<ToolResult, ToolError>, ctx: &ToolUseContext) -> ToolUseContext {
    match result {
        Ok(r) => match r.context_modifier {
            Some(m) => m.apply(ctx.clone()),
            None => ctx.clone(),
        },
        Err(e) => match e.take_context_change() {
            (_, Some(m)) => m.apply(ctx.clone()),
            (_, None) => ctx.clone(),
        },
    }
}

/// A project (on the ordinary disk, with `sub/`) and a session whose own directory (the
/// Bash scratch files, and the results directory inside it) is on `fs`.
fn project_on(fs: &Path) -> (tempfile::TempDir, PathBuf, ToolUseContext) {
    let proj_holder = tempfile::tempdir().unwrap();
    let proj = std::fs::canonicalize(proj_holder.path()).unwrap();
    std::fs::create_dir(proj.join("sub")).unwrap();
    let session = fs.join("session");
    std::fs::create_dir(&session).unwrap();
    let ctx = common::ctx(&proj).with_results_dir(session.join("tool-results"));
    (proj_holder, proj, ctx)
}

/// Finding 1, the reviewer's repro: the command fills the scratch directory's file system,
/// then `cd`s. The next command runs where it went.
#[tokio::test(flavor = "multi_thread")]
async fn a_cd_on_a_full_scratch_disk_holds() {
    let Some(fs) = Tmpfs::mount("size=256k", "a_cd_on_a_full_scratch_disk_holds") else {
        return;
    };
    let (_keep, proj, ctx) = project_on(&fs.dir);
    let f = fs.dir.display();
    let first = bash(
        &ctx,
        json!({"command": format!(
            "fallocate -l $(df -B1 --output=avail {f} | tail -1) {f}/filler; cd sub && pwd"
        )}),
    )
    .await;
    let said = seen(&first);
    assert!(said.contains(&format!("{}/sub", proj.display())), "{said}");
    let ctx = next_ctx(first, &ctx);
    let second = bash(&ctx, json!({"command": "touch marker; pwd"})).await;
    let ran_in = seen(&second);
    // The scratch file's room was reserved before the command ran: the `cd` holds. (Were
    // it lost, the first result would have to say so, and where the next command runs.)
    assert_eq!(
        ran_in.lines().next(),
        Some(&*format!("{}/sub", proj.display())),
        "the `cd` was lost: the first call said {said:?}, the next ran in {ran_in:?}"
    );
    assert!(proj.join("sub/marker").exists());
}

/// Finding 1, when the scratch file cannot be written at all (the disk was full before the
/// command started): an empty scratch file is a write that failed, not a removed directory,
/// and the result says so, with where the next command runs.
#[tokio::test(flavor = "multi_thread")]
async fn an_untracked_cd_is_said_with_where_the_next_command_runs() {
    let Some(fs) = Tmpfs::mount(
        "size=256k",
        "an_untracked_cd_is_said_with_where_the_next_command_runs",
    ) else {
        return;
    };
    let (_keep, proj, ctx) = project_on(&fs.dir);
    fill_blocks(&fs.dir);
    let first = bash(&ctx, json!({"command": "cd sub && pwd"})).await;
    let said = seen(&first);
    assert!(first.is_ok(), "{said}");
    assert!(said.contains(&format!("{}/sub", proj.display())), "{said}");
    assert!(
        said.contains("The working directory could not be tracked")
            && said.to_lowercase().contains("no space left on device")
            && said.contains(&format!("the next command runs in {}", proj.display())),
        "{said}"
    );
    // Said so, and true: the next command runs there (and, the disk still full, says so
    // again).
    let ctx = next_ctx(first, &ctx);
    let second = bash(&ctx, json!({"command": "pwd"})).await;
    let said = seen(&second);
    assert_eq!(
        said.lines().next(),
        Some(&*proj.display().to_string()),
        "{said}"
    );
    // A removed directory is still told apart from a write that failed: it resets the
    // session without the note (the space freed, so the marker can be written).
    std::fs::remove_file(fs.dir.join("filler")).unwrap();
    let gone = bash(
        &ctx,
        json!({"command": "mkdir gone && cd gone && rmdir \"$PWD\""}),
    )
    .await;
    let said = seen(&gone);
    assert!(!said.contains("could not be tracked"), "{said}");
}

/// Finding 2: out of inodes, the call says the command could not start and why, naming what
/// could not be created; the command did not run.
#[tokio::test(flavor = "multi_thread")]
async fn no_inode_for_the_scratch_file_says_the_command_never_started() {
    let Some(fs) = Tmpfs::mount(
        "size=1m,nr_inodes=64",
        "no_inode_for_the_scratch_file_says_the_command_never_started",
    ) else {
        return;
    };
    let (_keep, proj, ctx) = project_on(&fs.dir);
    let session = fs.dir.join("session");
    std::fs::create_dir(session.join("tool-results")).unwrap();
    fill_inodes(&fs.dir);
    let marker = proj.join("marker");
    let result = bash(
        &ctx,
        json!({"command": format!("touch {}", marker.display())}),
    )
    .await;
    let said = seen(&result);
    assert!(result.is_err(), "{said}");
    assert!(!marker.exists(), "the command ran");
    assert!(
        said.contains(&format!(
            "Could not start the command: cannot create its scratch file in {}: No space left on device",
            session.display()
        )),
        "{said}"
    );
}

/// Finding 3: an output spill that fails on a full disk leaves no partial spill file behind,
/// and names none; the model is told the omitted bytes could not be saved.
#[tokio::test(flavor = "multi_thread")]
async fn a_failed_spill_leaves_no_partial_file() {
    let Some(fs) = Tmpfs::mount("size=256k", "a_failed_spill_leaves_no_partial_file") else {
        return;
    };
    let (_keep, _proj, ctx) = project_on(&fs.dir);
    let results = fs.dir.join("session/tool-results");
    let result = bash(
        &ctx,
        json!({"command": "head -c 3000000 /dev/zero | tr '\\0' a"}),
    )
    .await;
    let said = seen(&result);
    assert!(result.is_ok(), "{said}");
    assert!(said.contains("they could not be saved"), "{said}");
    let left: Vec<String> = std::fs::read_dir(&results)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        left.iter()
            .all(|name| !name.starts_with("toolwright-bash-")),
        "spill files left behind: {left:?}"
    );
    assert!(!said.contains(&results.display().to_string()), "{said}");
}

/// Finding 4: TaskCreate with the id counter's write failing (no inode left for it)
/// creates nothing, and says so; a retry once there is room makes exactly one task.
#[tokio::test(flavor = "multi_thread")]
async fn task_create_that_cannot_count_creates_nothing() {
    let Some(fs) = Tmpfs::mount(
        "size=1m,nr_inodes=64",
        "task_create_that_cannot_count_creates_nothing",
    ) else {
        return;
    };
    let proj = tempfile::tempdir().unwrap();
    let ctx = common::ctx(proj.path()).with_session_id("full");
    install_task_list_store(ctx.app_state(), TaskListStore::new(fs.dir.join("tasks")));
    let list = fs.dir.join("tasks/full");
    let create = |subject: &'static str| {
        let ctx = ctx.clone();
        async move {
            common::run(
                &TaskCreate,
                &ctx,
                json!({"subject": subject, "description": "d"}),
            )
            .await
            .map(|out| out.content.joined_text())
            .map_err(|f| f.text)
        }
    };
    let task_files = || {
        let mut names: Vec<String> = std::fs::read_dir(&list)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".json"))
            .collect();
        names.sort();
        names
    };
    create("first").await.unwrap();
    assert_eq!(task_files(), ["1.json"]);

    // One inode free: enough for the task file, not for the counter's new file too.
    let mut fillers = fill_inodes(&fs.dir);
    std::fs::remove_file(fillers.pop().unwrap()).unwrap();
    match create("second").await {
        Ok(said) => {
            assert!(said.contains("Task #2 created"), "{said}");
            assert_eq!(task_files(), ["1.json", "2.json"]);
            let counter = std::fs::read_to_string(list.join(".highwatermark")).unwrap();
            assert_eq!(counter.trim(), "2");
        }
        Err(said) => {
            assert_eq!(
                task_files(),
                ["1.json"],
                "a failed TaskCreate left its task behind: {said}"
            );
            assert!(said.contains("no task was created"), "{said}");
        }
    }
    let before = task_files();

    // No inode free: nothing can be written, nothing is created, and the call says so.
    fillers.extend(fill_inodes(&fs.dir));
    let said = create("third").await.unwrap_err();
    assert!(said.contains("no task was created"), "{said}");
    assert_eq!(task_files(), before);

    // Room again: the retry makes one task, and each subject is there once.
    for f in fillers {
        std::fs::remove_file(f).unwrap();
    }
    create("third").await.unwrap();
    let listed = common::text(&TaskList, &ctx, json!({})).await;
    for subject in ["first", "third"] {
        assert_eq!(listed.matches(subject).count(), 1, "{listed}");
    }
    assert_eq!(task_files().len(), before.len() + 1, "{listed}");
}

/// Finding 5: a background task whose output filled its file system: TaskOutput says output
/// may be missing (the command's own write error was lost with it).
#[tokio::test(flavor = "multi_thread")]
async fn task_output_says_when_the_output_file_system_was_full() {
    let Some(fs) = Tmpfs::mount(
        "size=256k",
        "task_output_says_when_the_output_file_system_was_full",
    ) else {
        return;
    };
    let (_keep, _proj, ctx) = project_on(&fs.dir);
    let started = bash(
        &ctx,
        json!({"command": "seq 1 400000", "run_in_background": true}),
    )
    .await
    .unwrap();
    let id = started.data.structured["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = common::text(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": true, "timeout": 60000}),
    )
    .await;
    assert!(
        out.contains("<status>failed</status>"),
        "{}",
        &out[..out.len().min(800)]
    );
    let tail = &out[out.len().saturating_sub(800)..];
    assert!(
        out.contains("The output file's file system was full")
            && out.contains("output may be missing"),
        "{tail}"
    );
    // A task whose file system has room says nothing of the kind.
    std::fs::remove_dir_all(fs.dir.join("session/tool-results/tasks")).unwrap();
    let started = bash(
        &ctx,
        json!({"command": "seq 1 10", "run_in_background": true}),
    )
    .await
    .unwrap();
    let id = started.data.structured["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let out = common::text(
        &TaskOutput,
        &ctx,
        json!({"task_id": id, "block": true, "timeout": 60000}),
    )
    .await;
    assert!(out.contains("<status>completed</status>"), "{out}");
    assert!(!out.contains("file system was full"), "{out}");
}

/// Finding 2, in the background: out of inodes, `run_in_background` says what it could not
/// create, and where; the command did not run.
#[tokio::test(flavor = "multi_thread")]
async fn no_inode_for_a_background_output_file_says_what_could_not_be_made() {
    let Some(fs) = Tmpfs::mount(
        "size=1m,nr_inodes=64",
        "no_inode_for_a_background_output_file_says_what_could_not_be_made",
    ) else {
        return;
    };
    let (_keep, proj, ctx) = project_on(&fs.dir);
    std::fs::create_dir(fs.dir.join("session/tool-results")).unwrap();
    fill_inodes(&fs.dir);
    let marker = proj.join("marker");
    let result = bash(
        &ctx,
        json!({"command": format!("touch {}", marker.display()), "run_in_background": true}),
    )
    .await;
    let said = seen(&result);
    assert!(result.is_err(), "{said}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(!marker.exists(), "the command ran");
    assert!(
        said.contains(&format!(
            "Could not create the background task's output file in {}: No space left on device",
            fs.dir.join("session/tool-results/tasks").display()
        )),
        "{said}"
    );
}
