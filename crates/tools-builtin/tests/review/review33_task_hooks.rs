//! Review 33: TaskCreate and TaskUpdate raise TaskCreated and TaskCompleted through the
//! context's hook seam (`ToolUseContext::run_hook_event`), on real task files: when the hooks
//! run, with which fields, and what a block, a cancellation or their messages do to the
//! task list. (The binary's end-to-end test with real hook scripts is the workspace's
//! `tests/review/review33_task_hooks.rs`.)

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tool_core::{
    HookEventOutcome, HookEvents, INTERRUPT_MESSAGE_FOR_TOOL_USE, Message, ProgressSender, Tool,
    ToolUseContext, async_trait,
};
use tools_builtin::task_list::{TaskListStore, install_task_list_store};
use tools_builtin::{TaskCreate, TaskUpdate};

/// One run of the hooks: the event, its fields, and the task files present as it ran.
#[derive(Debug, Clone)]
struct Seen {
    event: &'static str,
    fields: Map<String, Value>,
    files: Vec<String>,
}

/// Hooks that answer each event as scripted (else with nothing) and note each run.
struct Scripted {
    list_dir: PathBuf,
    answers: Mutex<Vec<(&'static str, HookEventOutcome)>>,
    seen: Mutex<Vec<Seen>>,
}

#[async_trait]
impl HookEvents for Scripted {
    async fn run(
        &self,
        event: &'static str,
        fields: Map<String, Value>,
        _ctx: &ToolUseContext,
    ) -> HookEventOutcome {
        self.seen.lock().unwrap().push(Seen {
            event,
            fields,
            files: task_files(&self.list_dir),
        });
        self.answers
            .lock()
            .unwrap()
            .iter()
            .find(|(e, _)| *e == event)
            .map(|(_, answer)| answer.clone())
            .unwrap_or_default()
    }
}

fn task_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// A session `s` whose task list is under `dir/tasks`, with `hooks` as its hook seam.
fn session(dir: &Path) -> (ToolUseContext, Arc<Scripted>) {
    let hooks = Arc::new(Scripted {
        list_dir: dir.join("tasks/s"),
        answers: Mutex::new(Vec::new()),
        seen: Mutex::new(Vec::new()),
    });
    let ctx = ToolUseContext::new(dir)
        .with_session_id("s")
        .with_hook_events(hooks.clone());
    install_task_list_store(ctx.app_state(), TaskListStore::new(dir.join("tasks")));
    (ctx, hooks)
}

fn answer(hooks: &Scripted, event: &'static str, outcome: HookEventOutcome) {
    hooks.answers.lock().unwrap().push((event, outcome));
}

fn blocked(text: &str) -> HookEventOutcome {
    HookEventOutcome {
        blocking: vec![text.to_owned()],
        ..HookEventOutcome::default()
    }
}

/// Calls `tool` with `input`: its text and messages, or its error text.
async fn call(
    tool: &dyn Tool,
    ctx: &ToolUseContext,
    input: Value,
) -> Result<(String, Vec<Message>), String> {
    let input = tool.parse_input(input).unwrap();
    tool.validate_input(&input, ctx).await.unwrap();
    tool.call(input, ctx.clone(), ProgressSender::none())
        .await
        .map(|r| (r.data.content.joined_text(), r.new_messages))
        .map_err(|e| e.to_model_text())
}

fn stored(dir: &Path, id: &str) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join(format!("tasks/s/{id}.json"))).unwrap()).unwrap()
}

/// TaskCreated runs once the task's file is written (Claude Code creates it first), with
/// the task's id, subject and description; a block deletes it again, the error is each
/// hook's text after `TaskCreated hook feedback:`, and the id is not handed out again.
#[tokio::test]
async fn a_blocked_creation_removes_the_task_its_hooks_saw() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, hooks) = session(dir.path());
    answer(
        &hooks,
        "TaskCreated",
        HookEventOutcome {
            blocking: vec!["[a.sh]: too vague".into(), "be specific".into()],
            ..HookEventOutcome::default()
        },
    );
    let err = call(
        &TaskCreate,
        &ctx,
        json!({"subject": "A", "description": "d1"}),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err,
        "TaskCreated hook feedback:\n[a.sh]: too vague\nTaskCreated hook feedback:\nbe specific"
    );
    let seen = hooks.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].event, "TaskCreated");
    assert_eq!(
        Value::Object(seen[0].fields.clone()),
        json!({"task_id": "1", "task_subject": "A", "task_description": "d1"})
    );
    assert_eq!(seen[0].files, ["1.json"], "the file exists while hooks run");
    assert_eq!(
        task_files(&dir.path().join("tasks/s")),
        Vec::<String>::new()
    );

    hooks.answers.lock().unwrap().clear();
    let (text, _) = call(
        &TaskCreate,
        &ctx,
        json!({"subject": "B", "description": "d2"}),
    )
    .await
    .unwrap();
    assert_eq!(text, "Task #2 created successfully: B");
}

/// Hooks cancelled with the call decided nothing: the task is removed as for a block, and
/// the call ends as interrupted.
#[tokio::test]
async fn a_creation_whose_hooks_were_cancelled_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, hooks) = session(dir.path());
    answer(
        &hooks,
        "TaskCreated",
        HookEventOutcome {
            cancelled: true,
            ..HookEventOutcome::default()
        },
    );
    let err = call(
        &TaskCreate,
        &ctx,
        json!({"subject": "A", "description": "d1"}),
    )
    .await
    .unwrap_err();
    assert_eq!(err, INTERRUPT_MESSAGE_FOR_TOOL_USE);
    assert_eq!(
        task_files(&dir.path().join("tasks/s")),
        Vec::<String>::new()
    );
}

/// What hooks that let the task through said comes after the result, on both events.
#[tokio::test]
async fn messages_of_hooks_that_let_the_task_through_follow_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, hooks) = session(dir.path());
    for event in ["TaskCreated", "TaskCompleted"] {
        answer(
            &hooks,
            event,
            HookEventOutcome {
                messages: vec![Message::System(format!("{event} says hi"))],
                ..HookEventOutcome::default()
            },
        );
    }
    let (_, messages) = call(
        &TaskCreate,
        &ctx,
        json!({"subject": "A", "description": "d"}),
    )
    .await
    .unwrap();
    assert_eq!(messages, [Message::System("TaskCreated says hi".into())]);
    let (text, messages) = call(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "1", "status": "completed"}),
    )
    .await
    .unwrap();
    assert_eq!(text, "Updated task #1 status");
    assert_eq!(messages, [Message::System("TaskCompleted says hi".into())]);
}

/// A blocked completion writes nothing: not the status, not the other fields of the same
/// call, not the blocking link on the other task. The hook saw the task as it was.
#[tokio::test]
async fn a_blocked_completion_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, hooks) = session(dir.path());
    for subject in ["A", "B"] {
        call(
            &TaskCreate,
            &ctx,
            json!({"subject": subject, "description": "d"}),
        )
        .await
        .unwrap();
    }
    let before = (stored(dir.path(), "1"), stored(dir.path(), "2"));
    answer(&hooks, "TaskCompleted", blocked("[check.sh]: tests fail"));
    let err = call(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "1", "status": "completed", "subject": "A2",
               "description": "new", "addBlocks": ["2"], "metadata": {"k": 1}}),
    )
    .await
    .unwrap_err();
    assert_eq!(err, "TaskCompleted hook feedback:\n[check.sh]: tests fail");
    assert_eq!(
        (stored(dir.path(), "1"), stored(dir.path(), "2")),
        before,
        "a blocked completion wrote something"
    );
    let seen = hooks.seen.lock().unwrap().clone();
    let completed: Vec<&Seen> = seen.iter().filter(|s| s.event == "TaskCompleted").collect();
    assert_eq!(completed.len(), 1);
    assert_eq!(
        Value::Object(completed[0].fields.clone()),
        json!({"task_id": "1", "task_subject": "A", "task_description": "d"})
    );
}

/// TaskCompleted runs only for an update that would complete the task: not for another
/// status, not for a task already completed, not for one that does not exist, and not for
/// an update that fails on its own (a task blocking itself), which fails as before.
#[tokio::test]
async fn only_an_update_that_completes_a_task_runs_task_completed() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, hooks) = session(dir.path());
    call(
        &TaskCreate,
        &ctx,
        json!({"subject": "A", "description": "d"}),
    )
    .await
    .unwrap();
    let count = |hooks: &Scripted| {
        hooks
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.event == "TaskCompleted")
            .count()
    };
    call(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "1", "status": "in_progress"}),
    )
    .await
    .unwrap();
    let err = call(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "1", "status": "completed", "addBlocks": ["1"]}),
    )
    .await
    .unwrap_err();
    assert!(err.contains("cannot block itself"), "{err}");
    let err = call(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "9", "status": "completed"}),
    )
    .await
    .unwrap_err();
    assert_eq!(err, "Task #9 not found");
    assert_eq!(count(&hooks), 0);
    call(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "1", "status": "completed"}),
    )
    .await
    .unwrap();
    assert_eq!(count(&hooks), 1);
    assert_eq!(stored(dir.path(), "1")["status"], "completed");
    let (text, _) = call(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "1", "status": "completed"}),
    )
    .await
    .unwrap();
    assert_eq!(text, "Task #1 unchanged (no field was given a new value)");
    assert_eq!(count(&hooks), 1);
}

/// Hooks that, as they run, change the task they judge (another agent's update landing
/// meanwhile): the subject of task 1 rewritten on disk.
struct ChangingTask {
    dir: PathBuf,
}

#[async_trait]
impl HookEvents for ChangingTask {
    async fn run(
        &self,
        _event: &'static str,
        _fields: Map<String, Value>,
        _ctx: &ToolUseContext,
    ) -> HookEventOutcome {
        let path = self.dir.join("tasks/s/1.json");
        let mut task: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        task["subject"] = json!("changed meanwhile");
        std::fs::write(&path, task.to_string()).unwrap();
        HookEventOutcome::default()
    }
}

/// Found by the code review: the TaskCompleted hooks judged the task as a first look saw
/// it, and the update then wrote over whatever had changed while they ran. Now the update
/// goes ahead only while the task is still the one they judged: else the call fails and
/// nothing is written.
#[tokio::test]
async fn a_task_changed_while_its_completion_hooks_ran_is_not_completed() {
    let dir = tempfile::tempdir().unwrap();
    let (plain, _) = session(dir.path());
    call(
        &TaskCreate,
        &plain,
        json!({"subject": "A", "description": "d"}),
    )
    .await
    .unwrap();
    let ctx = plain
        .without_hook_events()
        .with_hook_events(Arc::new(ChangingTask {
            dir: dir.path().to_path_buf(),
        }));
    let err = call(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "1", "status": "completed"}),
    )
    .await
    .unwrap_err();
    assert!(
        err.contains("Task #1 changed while its TaskCompleted hooks ran; nothing was changed"),
        "{err}"
    );
    let task = stored(dir.path(), "1");
    assert_eq!(task["status"], "pending", "{task}");
    assert_eq!(task["subject"], "changed meanwhile", "{task}");
}
