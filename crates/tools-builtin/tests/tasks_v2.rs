//! Tasks v2 (TaskCreate, TaskGet, TaskUpdate, TaskList) on real task files in a temporary
//! directory: the model-facing texts, blockers kept symmetric, deletion, metadata merging,
//! unknown ids, 50 concurrent updates, and persistence across a fresh store.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tool_core::{Tool, ToolUseContext};
use tools_builtin::task_list::{
    TaskListStore, TaskPatch, TaskStatus, install_task_list_store, sanitize_list_id,
};
use tools_builtin::{TaskCreate, TaskGet, TaskList, TaskUpdate};

/// A session context whose task lists live under `<dir>/tasks`.
fn session(dir: &Path, session_id: &str) -> ToolUseContext {
    let ctx = common::ctx(dir).with_session_id(session_id);
    install_task_list_store(ctx.app_state(), TaskListStore::new(dir.join("tasks")));
    ctx
}

async fn create(ctx: &ToolUseContext, subject: &str) -> String {
    common::text(
        &TaskCreate,
        ctx,
        json!({"subject": subject, "description": format!("Do: {subject}")}),
    )
    .await
}

async fn update(ctx: &ToolUseContext, input: Value) -> Value {
    let out = common::run(&TaskUpdate, ctx, input).await.unwrap();
    json!({"text": out.content.joined_text(), "structured": out.structured})
}

#[tokio::test]
async fn create_get_update_and_list() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path(), "s1");

    assert_eq!(
        common::text(&TaskList, &ctx, json!({})).await,
        "No tasks found"
    );
    let out = common::run(
        &TaskCreate,
        &ctx,
        json!({"subject": "Write the parser", "description": "A recursive-descent parser",
               "activeForm": "Writing the parser", "metadata": {"area": "syntax", "gone": null}}),
    )
    .await
    .unwrap();
    assert_eq!(
        out.content.joined_text(),
        "Task #1 created successfully: Write the parser"
    );
    assert_eq!(
        out.structured,
        json!({"task": {"id": "1", "subject": "Write the parser"}})
    );
    assert_eq!(
        create(&ctx, "Run the tests").await,
        "Task #2 created successfully: Run the tests"
    );

    // The file on disk is Claude Code's format.
    let file = dir.path().join("tasks/s1/1.json");
    let stored: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(
        stored,
        json!({"id": "1", "subject": "Write the parser", "description": "A recursive-descent parser",
               "activeForm": "Writing the parser", "status": "pending", "blocks": [],
               "blockedBy": [], "metadata": {"area": "syntax"}})
    );

    let out = common::run(&TaskGet, &ctx, json!({"taskId": "1"}))
        .await
        .unwrap();
    assert_eq!(
        out.content.joined_text(),
        "Task #1: Write the parser\nStatus: pending\nDescription: A recursive-descent parser\nMetadata: {\"area\":\"syntax\"}"
    );
    assert_eq!(out.structured["task"]["activeForm"], "Writing the parser");

    let got = update(
        &ctx,
        json!({"taskId": "2", "owner": "tester", "subject": "Run all the tests", "description": "Do: Run the tests"}),
    )
    .await;
    // The description was already that value: only the changed fields are reported.
    assert_eq!(got["text"], "Updated task #2 subject, owner");
    assert_eq!(
        got["structured"],
        json!({"success": true, "taskId": "2", "updatedFields": ["subject", "owner"]})
    );
    let got = update(&ctx, json!({"taskId": "2", "owner": "tester"})).await;
    assert_eq!(
        got["text"],
        "Task #2 unchanged (no field was given a new value)"
    );

    let out = common::run(&TaskList, &ctx, json!({})).await.unwrap();
    assert_eq!(
        out.content.joined_text(),
        "#1 [pending] Write the parser\n#2 [pending] Run all the tests (tester)"
    );
    assert_eq!(
        out.structured,
        json!({"tasks": [
            {"id": "1", "subject": "Write the parser", "status": "pending", "blockedBy": []},
            {"id": "2", "subject": "Run all the tests", "status": "pending", "owner": "tester", "blockedBy": []}
        ]})
    );

    // An empty owner clears it; a blank subject is refused before anything runs.
    update(&ctx, json!({"taskId": "2", "owner": ""})).await;
    let stored: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("tasks/s1/2.json")).unwrap())
            .unwrap();
    assert!(stored.get("owner").is_none());
    let refused = common::fail(&TaskUpdate, &ctx, json!({"taskId": "2", "subject": "  "})).await;
    assert!(
        refused.text.contains("subject must not be empty"),
        "{}",
        refused.text
    );
    let refused = common::fail(
        &TaskCreate,
        &ctx,
        json!({"subject": "", "description": "x"}),
    )
    .await;
    assert!(
        refused.text.contains("subject must not be empty"),
        "{}",
        refused.text
    );

    // Another session has its own list.
    let other = session(dir.path(), "s2");
    assert_eq!(
        create(&other, "Elsewhere").await,
        "Task #1 created successfully: Elsewhere"
    );
    assert_eq!(
        common::text(&TaskList, &ctx, json!({}))
            .await
            .lines()
            .count(),
        2
    );
}

#[tokio::test]
async fn status_transitions_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path(), "s");
    create(&ctx, "Ship it").await;
    let got = update(&ctx, json!({"taskId": "1", "status": "in_progress"})).await;
    assert_eq!(got["text"], "Updated task #1 status");
    assert_eq!(
        got["structured"]["statusChange"],
        json!({"from": "pending", "to": "in_progress"})
    );
    let got = update(&ctx, json!({"taskId": "1", "status": "completed"})).await;
    assert_eq!(
        got["structured"]["statusChange"],
        json!({"from": "in_progress", "to": "completed"})
    );
    // Setting the same status again changes nothing.
    let got = update(&ctx, json!({"taskId": "1", "status": "completed"})).await;
    assert_eq!(got["structured"]["updatedFields"], json!([]));
    assert!(got["structured"].get("statusChange").is_none());
    // A completed task can be reopened.
    let got = update(&ctx, json!({"taskId": "1", "status": "pending"})).await;
    assert_eq!(
        got["structured"]["statusChange"],
        json!({"from": "completed", "to": "pending"})
    );
    // Not a status.
    let bad = common::fail(&TaskUpdate, &ctx, json!({"taskId": "1", "status": "done"})).await;
    assert!(
        bad.text.contains("The parameter `status` must be one of")
            && bad.text.contains("but is \"done\""),
        "{}",
        bad.text
    );
}

#[tokio::test]
async fn blockers_stay_symmetric() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path(), "s");
    for s in ["Design", "Build", "Test"] {
        create(&ctx, s).await;
    }
    let got = update(&ctx, json!({"taskId": "1", "addBlocks": ["2", "3"]})).await;
    assert_eq!(got["text"], "Updated task #1 blocks");
    let got = update(&ctx, json!({"taskId": "3", "addBlockedBy": ["2", "1"]})).await;
    // 1 already blocked 3; 2 is new.
    assert_eq!(got["text"], "Updated task #3 blockedBy");

    let store = TaskListStore::new(dir.path().join("tasks"));
    let tasks = store.list("s").unwrap().tasks;
    for t in &tasks {
        for b in &t.blocks {
            let other = tasks.iter().find(|o| &o.id == b).unwrap();
            assert!(other.blocked_by.contains(&t.id), "{} blocks {b}", t.id);
        }
        for b in &t.blocked_by {
            let other = tasks.iter().find(|o| &o.id == b).unwrap();
            assert!(other.blocks.contains(&t.id), "{} blocked by {b}", t.id);
        }
    }
    assert_eq!(tasks[0].blocks, ["2", "3"]);
    assert_eq!(tasks[1].blocks, ["3"]);
    assert_eq!(tasks[2].blocked_by, ["1", "2"]);

    assert_eq!(
        common::text(&TaskList, &ctx, json!({})).await,
        "#1 [pending] Design\n#2 [pending] Build [blocked by #1]\n#3 [pending] Test [blocked by #1, #2]"
    );
    assert!(
        common::text(&TaskGet, &ctx, json!({"taskId": "2"}))
            .await
            .ends_with("Blocked by: #1\nBlocks: #3")
    );
    // A completed blocker no longer shows in TaskList (it stays in the task).
    update(&ctx, json!({"taskId": "1", "status": "completed"})).await;
    assert_eq!(
        common::text(&TaskList, &ctx, json!({})).await,
        "#1 [completed] Design\n#2 [pending] Build\n#3 [pending] Test [blocked by #2]"
    );

    // An unknown blocker or a self-block fails and writes nothing.
    let before = std::fs::read(dir.path().join("tasks/s/2.json")).unwrap();
    let err = common::fail(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "2", "subject": "Renamed", "addBlockedBy": ["9"]}),
    )
    .await;
    assert_eq!(
        err.text,
        "addBlockedBy names task #9, which does not exist; nothing was changed"
    );
    let err = common::fail(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "2", "addBlocks": ["2"]}),
    )
    .await;
    assert_eq!(err.text, "Task #2 cannot block itself; nothing was changed");
    assert_eq!(
        std::fs::read(dir.path().join("tasks/s/2.json")).unwrap(),
        before
    );

    // A loop of blocking links (#1 blocks #2 and #3 already) is refused: none of its tasks
    // could ever start. The shortest loop is named. Also when one call adds both directions.
    let before: Vec<Vec<u8>> = ["1", "2", "3"]
        .iter()
        .map(|id| std::fs::read(dir.path().join(format!("tasks/s/{id}.json"))).unwrap())
        .collect();
    let err = common::fail(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "3", "addBlocks": ["1"]}),
    )
    .await;
    assert_eq!(
        err.text,
        "Task #3 would end up waiting on itself (#3 blocks #1 blocks #3); nothing was changed"
    );
    let err = common::fail(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "2", "addBlocks": ["1"]}),
    )
    .await;
    assert!(
        err.text.contains("(#2 blocks #1 blocks #2)"),
        "{}",
        err.text
    );
    create(&ctx, "Deploy").await;
    let err = common::fail(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "3", "addBlocks": ["4"], "addBlockedBy": ["4"]}),
    )
    .await;
    assert!(
        err.text.contains("(#3 blocks #4 blocks #3)"),
        "{}",
        err.text
    );
    let after: Vec<Vec<u8>> = ["1", "2", "3"]
        .iter()
        .map(|id| std::fs::read(dir.path().join(format!("tasks/s/{id}.json"))).unwrap())
        .collect();
    assert_eq!(after, before);
}

#[tokio::test]
async fn deleting_removes_the_task_and_its_links() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path(), "s");
    for s in ["A", "B", "C"] {
        create(&ctx, s).await;
    }
    update(
        &ctx,
        json!({"taskId": "2", "addBlocks": ["3"], "addBlockedBy": ["1"]}),
    )
    .await;
    let got = update(&ctx, json!({"taskId": "2", "status": "deleted"})).await;
    assert_eq!(got["text"], "Task #2 deleted");
    assert_eq!(got["structured"]["updatedFields"], json!(["deleted"]));
    assert!(!dir.path().join("tasks/s/2.json").exists());

    let err = common::fail(&TaskGet, &ctx, json!({"taskId": "2"})).await;
    assert_eq!(err.text, "Task #2 not found");
    let store = TaskListStore::new(dir.path().join("tasks"));
    let tasks = store.list("s").unwrap().tasks;
    assert_eq!(tasks.len(), 2);
    assert!(
        tasks
            .iter()
            .all(|t| t.blocks.is_empty() && t.blocked_by.is_empty())
    );
    assert_eq!(
        common::text(&TaskList, &ctx, json!({})).await,
        "#1 [pending] A\n#3 [pending] C"
    );

    // Ids are never reused, even when the highest task is deleted.
    update(&ctx, json!({"taskId": "3", "status": "deleted"})).await;
    assert_eq!(create(&ctx, "D").await, "Task #4 created successfully: D");
}

#[tokio::test]
async fn metadata_merges_and_null_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path(), "s");
    common::run(
        &TaskCreate,
        &ctx,
        json!({"subject": "M", "description": "d", "metadata": {"a": 1, "b": "two"}}),
    )
    .await
    .unwrap();
    // Through the tool: keys merge.
    let got = update(
        &ctx,
        json!({"taskId": "1", "metadata": {"c": [3], "b": "2"}}),
    )
    .await;
    assert_eq!(got["text"], "Updated task #1 metadata");
    // Through the store: a null value deletes the key; a missing key is no change.
    let store = TaskListStore::new(dir.path().join("tasks"));
    let meta = |v: Value| TaskPatch {
        metadata: v.as_object().cloned(),
        ..TaskPatch::default()
    };
    let out = store
        .update("s", "1", meta(json!({"a": null, "missing": null})))
        .unwrap();
    assert_eq!(out.updated_fields, ["metadata"]);
    assert_eq!(
        Value::Object(out.task.unwrap().metadata),
        json!({"b": "2", "c": [3]})
    );
    let out = store.update("s", "1", meta(json!({"a": null}))).unwrap();
    assert!(out.updated_fields.is_empty());
    assert_eq!(
        Value::Object(store.get("s", "1").unwrap().metadata),
        json!({"b": "2", "c": [3]})
    );
    // `_internal` tasks are hidden from TaskList but still readable.
    update(
        &ctx,
        json!({"taskId": "1", "metadata": {"_internal": true}}),
    )
    .await;
    assert_eq!(
        common::text(&TaskList, &ctx, json!({})).await,
        "No tasks found"
    );
    assert!(
        common::text(&TaskGet, &ctx, json!({"taskId": "1"}))
            .await
            .starts_with("Task #1: M")
    );
}

/// A `null` inside the free-form `metadata` object reaches the tool (tool-core's input check
/// drops nulls only for declared optional fields) and deletes the key.
#[tokio::test]
async fn metadata_null_through_the_tool_deletes_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path(), "s");
    common::run(
        &TaskCreate,
        &ctx,
        json!({"subject": "M", "description": "d", "metadata": {"a": 1, "b": "two"}}),
    )
    .await
    .unwrap();
    let got = update(&ctx, json!({"taskId": "1", "metadata": {"a": null}})).await;
    assert_eq!(got["text"], "Updated task #1 metadata");
    let task = TaskListStore::new(dir.path().join("tasks"))
        .get("s", "1")
        .unwrap();
    assert_eq!(Value::Object(task.metadata), json!({"b": "two"}));
}

#[tokio::test]
async fn unknown_ids_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path(), "s");
    create(&ctx, "Only").await;
    for id in ["42", "../1", "1.json", ""] {
        let err = common::fail(&TaskGet, &ctx, json!({"taskId": id})).await;
        assert_eq!(err.text, format!("Task #{id} not found"));
        let err = common::fail(
            &TaskUpdate,
            &ctx,
            json!({"taskId": id, "status": "completed"}),
        )
        .await;
        assert_eq!(err.text, format!("Task #{id} not found"));
    }
    let err = common::fail(
        &TaskUpdate,
        &ctx,
        json!({"taskId": "42", "status": "deleted"}),
    )
    .await;
    assert_eq!(err.text, "Task #42 not found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_concurrent_updates_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path(), "busy");
    create(&ctx, "Shared").await;
    // Not concurrency-safe in one executor, but other sessions, sub-agents and `serve`'s
    // calls update one list side by side: the store's lock keeps every change.
    let tool: Arc<dyn Tool> = Arc::new(TaskUpdate);
    let mut handles = Vec::new();
    for i in 0..50 {
        let (tool, ctx) = (Arc::clone(&tool), ctx.clone());
        handles.push(tokio::spawn(async move {
            common::run(
                tool.as_ref(),
                &ctx,
                json!({"taskId": "1", "metadata": {format!("k{i}"): i}}),
            )
            .await
            .map(|o| o.content.joined_text())
            .map_err(|f| f.text)
        }));
    }
    for h in handles {
        assert_eq!(h.await.unwrap().unwrap(), "Updated task #1 metadata");
    }
    // A fresh store reads the file: every key is there.
    let task = TaskListStore::new(dir.path().join("tasks"))
        .get("busy", "1")
        .unwrap();
    assert_eq!(task.metadata.len(), 50);
    for i in 0..50 {
        assert_eq!(task.metadata[&format!("k{i}")], json!(i), "k{i}");
    }

    // Concurrent creates get distinct ids.
    let mut handles = Vec::new();
    for i in 0..20 {
        let ctx = ctx.clone();
        handles.push(tokio::spawn(
            async move { create(&ctx, &format!("T{i}")).await },
        ));
    }
    let mut ids: Vec<u64> = Vec::new();
    for h in handles {
        let text = h.await.unwrap();
        let id = text
            .strip_prefix("Task #")
            .and_then(|r| r.split(' ').next())
            .unwrap();
        ids.push(id.parse().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, (2..=21).collect::<Vec<u64>>());
}

#[tokio::test]
async fn tasks_survive_a_fresh_store_and_process_state() {
    let dir = tempfile::tempdir().unwrap();
    {
        let ctx = session(dir.path(), "sess/../odd id");
        create(&ctx, "Persist me").await;
        update(
            &ctx,
            json!({"taskId": "1", "status": "in_progress", "owner": "me"}),
        )
        .await;
    }
    // The list id is the sanitised session id.
    assert_eq!(sanitize_list_id("sess/../odd id"), "sess----odd-id");
    assert!(dir.path().join("tasks/sess----odd-id/1.json").is_file());

    // A new context and store (as a new process would build) see the task.
    let ctx = session(dir.path(), "sess/../odd id");
    assert_eq!(
        common::text(&TaskList, &ctx, json!({})).await,
        "#1 [in_progress] Persist me (me)"
    );
    let store = TaskListStore::new(dir.path().join("tasks"));
    let task = store.get("sess/../odd id", "1").unwrap();
    assert_eq!(task.status, TaskStatus::InProgress);
    assert_eq!(
        create(&ctx, "Next").await,
        "Task #2 created successfully: Next"
    );
}

/// A field this version does not know (a newer Claude Code's, in a list both share) is
/// kept when the task is rewritten.
#[tokio::test]
async fn fields_of_other_versions_survive_an_update() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path(), "shared");
    create(&ctx, "Keep fields").await;
    let path = dir.path().join("tasks/shared/1.json");
    let mut stored: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    stored["epoch"] = json!(7);
    std::fs::write(&path, stored.to_string()).unwrap();
    update(&ctx, json!({"taskId": "1", "status": "in_progress"})).await;
    let stored: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(stored["epoch"], 7, "{stored}");
    assert_eq!(stored["status"], "in_progress");
}

#[tokio::test]
async fn a_corrupt_task_file_is_reported_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path(), "s");
    create(&ctx, "Good").await;
    let bad = dir.path().join("tasks/s/2.json");
    std::fs::write(&bad, b"{not json").unwrap();
    // The list still shows the good task, and names the bad file and what is wrong with it.
    let text = common::text(&TaskList, &ctx, json!({})).await;
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("#1 [pending] Good"), "{text}");
    let note = lines.next().unwrap_or_default();
    assert!(
        note.starts_with(&format!(
            "task file {} is not a valid task (",
            bad.display()
        )),
        "{text}"
    );
    assert!(
        note.ends_with("fix or remove it, it was left untouched"),
        "{text}"
    );
    assert_eq!(lines.next(), None, "{text}");
    // A new task does not take the bad file's id, and the file is not overwritten.
    create(&ctx, "Next").await;
    assert_eq!(std::fs::read(&bad).unwrap(), b"{not json");
    assert!(
        common::text(&TaskGet, &ctx, json!({"taskId": "3"}))
            .await
            .starts_with("Task #3: Next")
    );
    // Reading the bad task itself says what is wrong.
    let err = common::fail(&TaskGet, &ctx, json!({"taskId": "2"})).await;
    assert!(err.text.contains("is not a valid task"), "{}", err.text);
    // Deleting another task works around it.
    update(&ctx, json!({"taskId": "1", "status": "deleted"})).await;
    assert_eq!(std::fs::read(&bad).unwrap(), b"{not json");
}

#[test]
fn schemas_and_flags_match_claude_code() {
    let expected: Value =
        serde_json::from_str(include_str!("fixtures/claude-code-tool-inputs.json")).unwrap();
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(TaskCreate),
        Arc::new(TaskGet),
        Arc::new(TaskUpdate),
        Arc::new(TaskList),
    ];
    for tool in &tools {
        let name = tool.name();
        let schema = tool.input_schema();
        let props = schema["properties"].as_object().unwrap();
        let fields = expected[name]["fields"].as_object().unwrap();
        let mut ours: Vec<&String> = props.keys().collect();
        let mut theirs: Vec<&String> = fields.keys().collect();
        ours.sort();
        theirs.sort();
        assert_eq!(ours, theirs, "{name}");
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (field, spec) in fields {
            assert_eq!(
                required.contains(&field.as_str()),
                spec["required"] == true,
                "{name}.{field}"
            );
            assert!(props[field]["description"].is_string(), "{name}.{field}");
        }
        assert_eq!(schema["additionalProperties"], false, "{name}");
        // Get and List concurrency-safe and read-only; Create and Update run alone (Claude
        // Code marks them safe: semantics section 6), so one response's calls act in order;
        // all deferred.
        let input = match name {
            "TaskCreate" => json!({"subject": "s", "description": "d"}),
            "TaskGet" | "TaskUpdate" => json!({"taskId": "1"}),
            _ => json!({}),
        };
        assert_eq!(
            tool.is_concurrency_safe(&input),
            name == "TaskGet" || name == "TaskList",
            "{name}"
        );
        assert_eq!(
            tool.is_read_only(&input),
            name == "TaskGet" || name == "TaskList",
            "{name}"
        );
        assert!(tool.should_defer(), "{name}");
    }
}

/// A task file copied by hand is the task its name says: updating or deleting the copy
/// never touches the original.
#[tokio::test]
async fn a_copied_task_file_is_the_task_its_name_says() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path(), "s");
    create(&ctx, "Original").await;
    let list = dir.path().join("tasks/s");
    std::fs::copy(list.join("1.json"), list.join("8.json")).unwrap();
    update(&ctx, json!({"taskId": "8", "subject": "The copy"})).await;
    let store = TaskListStore::new(dir.path().join("tasks"));
    let subjects: Vec<(String, String)> = store
        .list("s")
        .unwrap()
        .tasks
        .into_iter()
        .map(|t| (t.id, t.subject))
        .collect();
    assert_eq!(
        subjects,
        [
            ("1".to_owned(), "Original".to_owned()),
            ("8".to_owned(), "The copy".to_owned())
        ]
    );
    update(&ctx, json!({"taskId": "8", "status": "deleted"})).await;
    assert!(list.join("1.json").is_file());
    assert!(!list.join("8.json").exists());
}

/// A high-water mark at the largest id refuses a new task instead of overflowing.
#[tokio::test]
async fn ids_that_would_overflow_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session(dir.path(), "s");
    create(&ctx, "First").await;
    let list = dir.path().join("tasks/s");
    for mark in ["999999999999999999", "18446744073709551615"] {
        std::fs::write(list.join(".highwatermark"), mark).unwrap();
        let err = common::fail(
            &TaskCreate,
            &ctx,
            json!({"subject": "Next", "description": "x"}),
        )
        .await;
        assert!(err.text.contains("over 18 digits"), "{}", err.text);
    }
}
