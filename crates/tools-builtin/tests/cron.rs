//! The cron tools (feature `agent-triggers`): CronCreate/CronList/CronDelete through the tool
//! contract, expression validation, `due_jobs` driven with explicit times (recurring,
//! one-shot, expiry), durable jobs in a real JSON file across fresh stores, and a corrupt file
//! reported and left untouched.
#![cfg(feature = "agent-triggers")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tool_core::{Tool, ToolUseContext};
use tools_builtin::cron::{
    CronError, CronStore, CronTimeZone, DEFAULT_RECURRING_MAX_AGE, MAX_JOBS, NewCronJob,
    cron_store, format_time, install_cron_store,
};
use tools_builtin::{CronCreate, CronDelete, CronList};

/// 2024-01-01T00:00:00Z.
const MIDNIGHT: u64 = 1_704_067_200;

/// 2024-01-01 at `h:m:s` UTC.
fn at(h: u64, m: u64, s: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(MIDNIGHT + h * 3600 + m * 60 + s)
}

fn utc_store(path: &Path) -> CronStore {
    CronStore::new(path).with_time_zone(CronTimeZone::Utc)
}

fn job(cron: &str, prompt: &str, recurring: bool, durable: bool) -> NewCronJob {
    NewCronJob {
        cron: cron.into(),
        prompt: prompt.into(),
        recurring,
        durable,
    }
}

/// A context whose cron store keeps durable jobs in `<dir>/jobs.json`, in UTC.
fn session(dir: &Path) -> (ToolUseContext, CronStore, PathBuf) {
    let ctx = common::ctx(dir);
    let path = dir.join("jobs.json");
    let store = utc_store(&path);
    install_cron_store(ctx.app_state(), store.clone());
    (ctx, store, path)
}

/// The job id in a CronCreate text (`Scheduled ... job <id> (`).
fn id_of(text: &str) -> String {
    text.split(" job ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn create_list_and_delete_through_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, store, path) = session(dir.path());
    assert_eq!(
        common::text(&CronList, &ctx, json!({})).await,
        "No scheduled jobs."
    );

    let before = SystemTime::now();
    let out = common::run(
        &CronCreate,
        &ctx,
        json!({"cron": "*/5 * * * *", "prompt": "check the build"}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    let id = id_of(&text);
    assert_eq!(id.len(), 8);
    assert!(id.chars().all(|c| c.is_ascii_hexdigit()), "{id}");
    let jobs = store.list().unwrap();
    assert_eq!(jobs.len(), 1);
    let next = jobs[0].next_fire_at;
    assert!(next > before && next <= before + Duration::from_secs(300));
    assert_eq!(
        text,
        format!(
            "Scheduled recurring job {id} (*/5 * * * *, UTC). Next fire: {}. Session-only (not written to disk; it ends with this session). Auto-expires after 7 days. Use CronDelete with id {id} to cancel it.",
            format_time(next, CronTimeZone::Utc)
        )
    );
    assert_eq!(out.structured["recurring"], true);
    assert_eq!(out.structured["durable"], false);
    assert_eq!(out.structured["expiresAfterDays"], 7);
    // Session-only: nothing on disk.
    assert!(!path.exists());

    // A durable one-shot job is written to the file.
    let text = common::text(
        &CronCreate,
        &ctx,
        json!({"cron": "30 14 28 2 *", "prompt": "remind me", "recurring": false, "durable": true}),
    )
    .await;
    let durable_id = id_of(&text);
    assert!(
        text.starts_with(&format!(
            "Scheduled one-shot job {durable_id} (30 14 28 2 *, UTC). It fires once at "
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("Persisted to {}", path.display())),
        "{text}"
    );
    let file: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let tasks = file["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0]["id"], durable_id.as_str());
    assert_eq!(tasks[0]["cron"], "30 14 28 2 *");
    assert_eq!(tasks[0]["prompt"], "remind me");
    assert!(tasks[0]["createdAt"].is_i64());
    assert!(tasks[0].get("recurring").is_none());

    let out = common::run(&CronList, &ctx, json!({})).await.unwrap();
    let lines: Vec<String> = out
        .content
        .joined_text()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].starts_with(&format!(
            "{id} — */5 * * * * (recurring, session-only) — next "
        )),
        "{}",
        lines[0]
    );
    assert!(lines[0].ends_with(": check the build"));
    assert!(
        lines[1].starts_with(&format!(
            "{durable_id} — 30 14 28 2 * (one-shot, durable) — next "
        )),
        "{}",
        lines[1]
    );
    assert_eq!(out.structured["jobs"][1]["durable"], true);

    // Delete: the durable job leaves the file; unknown ids are named.
    assert_eq!(
        common::text(&CronDelete, &ctx, json!({"id": durable_id})).await,
        format!("Cancelled job {durable_id}.")
    );
    let file: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(file, json!({"tasks": []}));
    let err = common::fail(&CronDelete, &ctx, json!({"id": durable_id})).await;
    assert_eq!(
        err.text,
        format!("No scheduled job with id \"{durable_id}\"; CronList shows the current ids")
    );
    common::text(&CronDelete, &ctx, json!({"id": id})).await;
    assert_eq!(
        common::text(&CronList, &ctx, json!({})).await,
        "No scheduled jobs."
    );
}

#[tokio::test]
async fn the_default_store_uses_the_project_file() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = common::ctx(dir.path());
    let store = cron_store(&ctx);
    let expected = dir.path().join(".claude/scheduled_tasks.json");
    assert_eq!(store.path(), expected);
    assert_eq!(store.time_zone(), CronTimeZone::Local);
    assert_eq!(store.recurring_max_age(), Some(DEFAULT_RECURRING_MAX_AGE));
    let text = common::text(
        &CronCreate,
        &ctx,
        json!({"cron": "7 * * * *", "prompt": "hourly", "durable": true}),
    )
    .await;
    assert!(text.contains(", local time). Next fire: "), "{text}");
    assert!(expected.is_file());
    // The same store is kept in the app state.
    assert_eq!(cron_store(&ctx).list().unwrap().len(), 1);
    // Inside one of EnterWorktree's worktrees, the project's file (a worktree may be
    // removed, and its jobs with it).
    let inside = dir.path().join(".claude/worktrees/feature/src");
    std::fs::create_dir_all(&inside).unwrap();
    assert_eq!(cron_store(&common::ctx(&inside)).path(), expected);
    // A `cd` (the session's cwd moved into a subdirectory) does not move the project file.
    let sub = dir.path().join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    assert_eq!(
        cron_store(&common::ctx(dir.path()).with_cwd(&sub)).path(),
        expected
    );
}

#[tokio::test]
async fn invalid_expressions_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, store, _) = session(dir.path());
    let err = common::fail(
        &CronCreate,
        &ctx,
        json!({"cron": "61 * * * *", "prompt": "x"}),
    )
    .await;
    assert!(
        err.text
            .contains("Invalid cron expression \"61 * * * *\": "),
        "{}",
        err.text
    );
    // The parser's own reason follows the expression.
    let reason = err
        .text
        .split("\"61 * * * *\": ")
        .nth(1)
        .unwrap()
        .split(". Use 5 fields")
        .next()
        .unwrap();
    assert!(!reason.is_empty());

    let err = common::fail(
        &CronCreate,
        &ctx,
        json!({"cron": "0 */5 * * * *", "prompt": "x"}),
    )
    .await;
    assert!(
        err.text.contains(
            "Invalid cron expression \"0 */5 * * * *\": expected 5 fields, found 6. Use 5 fields: minute hour day-of-month month day-of-week"
        ),
        "{}",
        err.text
    );
    let err = common::fail(
        &CronCreate,
        &ctx,
        json!({"cron": "every day", "prompt": "x"}),
    )
    .await;
    assert!(err.text.contains("found 2"), "{}", err.text);
    let err = common::fail(
        &CronCreate,
        &ctx,
        json!({"cron": "0 0 30 2 *", "prompt": "x"}),
    )
    .await;
    assert!(
        err.text
            .contains("Cron expression \"0 0 30 2 *\" never fires"),
        "{}",
        err.text
    );
    let err = common::fail(
        &CronCreate,
        &ctx,
        json!({"cron": "* * * * *", "prompt": " "}),
    )
    .await;
    assert!(
        err.text.contains("prompt must not be empty"),
        "{}",
        err.text
    );
    // Malformed lists, signs and numbers out of a field's range are named with the field.
    for (expr, said) in [
        (
            "1,,2 * * * *",
            "the minute field \"1,,2\" has an empty item in its list",
        ),
        (
            "1, * * * *",
            "the minute field \"1,\" has an empty item in its list",
        ),
        (
            ",1 * * * *",
            "the minute field \",1\" has an empty item in its list",
        ),
        ("+5 * * * *", "the minute field \"+5\" has a sign in \"+5\""),
        (
            "60 * * * *",
            "60 is out of range in the minute field \"60\" (minute values are 0-59)",
        ),
        (
            "0 9 * * 8",
            "8 is out of range in the day-of-week field \"8\" (day-of-week values are 0-7)",
        ),
        (
            "0 0 0 * *",
            "0 is out of range in the day-of-month field \"0\" (day-of-month values are 1-31)",
        ),
        (
            "0 0 1-40 * *",
            "40 is out of range in the day-of-month field \"1-40\"",
        ),
        ("*/0 * * * *", "the minute field \"*/0\" has a step of 0"),
        (
            "0 0 * * L",
            "`L` in the day-of-week field needs a day before it",
        ),
    ] {
        let err = common::fail(&CronCreate, &ctx, json!({"cron": expr, "prompt": "x"})).await;
        assert!(err.text.contains(said), "{expr}: {}", err.text);
        assert!(!err.text.contains(".."), "{expr}: {}", err.text);
    }

    // The store refuses too, for hosts that call it directly.
    let err = store
        .create(job("a b c d e", "x", true, false), at(10, 0, 0))
        .unwrap_err();
    assert!(matches!(err, CronError::InvalidExpression { .. }), "{err}");
    assert!(store.list().unwrap().is_empty());
    // `7L` is the last Sunday, as `0L` is.
    for expr in ["0 0 * * 7L", "0 0 * * 0L", "0 0 * * 7#1", "0 0 * * 5L"] {
        common::text(&CronCreate, &ctx, json!({"cron": expr, "prompt": "x"})).await;
    }
}

#[test]
fn recurring_jobs_fire_and_move_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = utc_store(&dir.path().join("jobs.json"));
    let created = store
        .create(job("*/5 * * * *", "poll", true, false), at(10, 2, 0))
        .unwrap();
    assert_eq!(created.next_fire_at, at(10, 5, 0));

    assert!(store.due_jobs(at(10, 4, 59)).unwrap().is_empty());
    let due = store.due_jobs(at(10, 5, 0)).unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].id, created.id);
    assert_eq!(due[0].prompt, "poll");
    assert_eq!(due[0].scheduled_for, at(10, 5, 0));
    assert_eq!(due[0].next_fire_at, Some(at(10, 10, 0)));
    assert!(!due[0].expired);
    // Not due again within the same window.
    assert!(store.due_jobs(at(10, 5, 30)).unwrap().is_empty());
    // A host that slept through several matches gets one fire, then the next future match.
    let due = store.due_jobs(at(10, 27, 0)).unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].scheduled_for, at(10, 10, 0));
    assert_eq!(due[0].next_fire_at, Some(at(10, 30, 0)));
    let listed = store.list().unwrap();
    assert_eq!(listed[0].last_fired_at, Some(at(10, 27, 0)));
    assert_eq!(listed[0].next_fire_at, at(10, 30, 0));

    // Several jobs due at once come in fire-time order.
    let hourly = store
        .create(job("0 * * * *", "hourly", true, false), at(10, 27, 0))
        .unwrap();
    let due = store.due_jobs(at(11, 0, 0)).unwrap();
    let ids: Vec<&str> = due.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, [created.id.as_str(), hourly.id.as_str()]);
    assert_eq!(due[0].scheduled_for, at(10, 30, 0));
    assert_eq!(due[1].scheduled_for, at(11, 0, 0));
}

#[test]
fn one_shot_jobs_fire_once_and_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    let store = utc_store(&dir.path().join("jobs.json"));
    let once = store
        .create(job("30 14 * * *", "remind", false, false), at(9, 0, 0))
        .unwrap();
    let keep = store
        .create(job("0 9 * * *", "daily", true, false), at(9, 0, 0))
        .unwrap();
    assert_eq!(once.next_fire_at, at(14, 30, 0));
    assert!(store.due_jobs(at(14, 29, 59)).unwrap().is_empty());
    let due = store.due_jobs(at(14, 30, 1)).unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].id, once.id);
    assert!(!due[0].recurring);
    assert_eq!(due[0].next_fire_at, None);
    let ids: Vec<String> = store.list().unwrap().into_iter().map(|j| j.id).collect();
    assert_eq!(ids, [keep.id]);
    assert!(
        store
            .due_jobs(at(14, 30, 0) + Duration::from_secs(86_400 * 3 / 2))
            .unwrap()
            .iter()
            .all(|d| d.id != once.id)
    );
}

#[test]
fn recurring_jobs_expire_after_their_max_age() {
    let dir = tempfile::tempdir().unwrap();
    let store = utc_store(&dir.path().join("jobs.json"));
    let created = store
        .create(job("0 12 * * *", "noon", true, false), at(11, 0, 0))
        .unwrap();
    // Six days later it still recurs.
    let day = Duration::from_secs(86_400);
    let due = store.due_jobs(at(12, 0, 0) + day * 6).unwrap();
    assert_eq!(due.len(), 1);
    assert!(!due[0].expired);
    // At seven days it fires one final time and is removed.
    let due = store.due_jobs(at(12, 0, 0) + day * 7).unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].id, created.id);
    assert!(due[0].expired);
    assert_eq!(due[0].next_fire_at, None);
    assert!(store.list().unwrap().is_empty());

    // Without a max age a recurring job lives on.
    let forever = utc_store(&dir.path().join("other.json")).with_recurring_max_age(None);
    forever
        .create(job("0 12 * * *", "noon", true, false), at(11, 0, 0))
        .unwrap();
    let due = forever.due_jobs(at(12, 0, 0) + day * 30).unwrap();
    assert!(!due[0].expired);
    assert_eq!(forever.list().unwrap().len(), 1);
}

#[test]
fn durable_jobs_survive_a_fresh_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/.claude/scheduled_tasks.json");
    let first = utc_store(&path);
    let durable = first
        .create(job("*/10 * * * *", "durable poll", true, true), at(8, 1, 0))
        .unwrap();
    let once = first
        .create(job("0 20 * * *", "durable once", false, true), at(8, 1, 0))
        .unwrap();
    first
        .create(job("* * * * *", "session only", true, false), at(8, 1, 0))
        .unwrap();
    // Written atomically: no temporary file is left beside it, only the lock file changes
    // are made under.
    let mut siblings: Vec<String> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    siblings.sort();
    assert_eq!(
        siblings,
        ["scheduled_tasks.json", "scheduled_tasks.json.lock"]
    );

    // A new store (a new process) loads the durable jobs only, with the same next times.
    let second = utc_store(&path);
    let jobs = second.list().unwrap();
    let ids: Vec<&str> = jobs.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, [durable.id.as_str(), once.id.as_str()]);
    assert_eq!(jobs[0].next_fire_at, at(8, 10, 0));
    assert_eq!(jobs[0].created_at, at(8, 1, 0));
    assert!(jobs[0].durable && jobs[0].recurring);
    assert!(!jobs[1].recurring);

    // Firing is persisted: the recurring job records lastFiredAt, the one-shot one leaves.
    let due = second.due_jobs(at(20, 0, 0)).unwrap();
    assert_eq!(due.len(), 2);
    let file: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(file["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(file["tasks"][0]["id"], durable.id.as_str());
    assert_eq!(file["tasks"][0]["recurring"], true);
    assert_eq!(
        file["tasks"][0]["lastFiredAt"],
        json!((MIDNIGHT + 20 * 3600) * 1000)
    );
    let third = utc_store(&path);
    assert_eq!(third.list().unwrap()[0].next_fire_at, at(20, 10, 0));
    assert!(third.due_jobs(at(20, 5, 0)).unwrap().is_empty());

    // A file written by Claude Code (same format, extra `permanent` flag) loads too.
    std::fs::write(
        &path,
        format!(
            r#"{{"tasks": [{{"id": "cafe0001", "cron": "0 6 * * 1", "prompt": "weekly", "createdAt": {}, "recurring": true, "permanent": true}}]}}"#,
            MIDNIGHT * 1000
        ),
    )
    .unwrap();
    let fourth = utc_store(&path);
    let jobs = fourth.list().unwrap();
    assert_eq!(jobs[0].id, "cafe0001");
    assert!(jobs[0].permanent);
    // 2024-01-01 is a Monday: the first match after midnight is 06:00 that day.
    assert_eq!(jobs[0].next_fire_at, at(6, 0, 0));
    // Permanent jobs never expire.
    let due = fourth
        .due_jobs(at(6, 0, 0) + Duration::from_secs(86_400 * 28))
        .unwrap();
    assert!(!due[0].expired);
}

#[tokio::test]
async fn a_corrupt_file_is_reported_and_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, store, path) = session(dir.path());
    std::fs::write(&path, b"{\"tasks\": [oops").unwrap();

    let err = store.list().unwrap_err();
    let CronError::Corrupt { path: p, reason } = &err else {
        panic!("{err}")
    };
    assert_eq!(p, &path);
    assert!(!reason.is_empty());
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!(
            "The scheduled jobs file {} is not valid (",
            path.display()
        )),
        "{msg}"
    );
    assert!(msg.ends_with("fix or remove it, it was left untouched"));

    // Every tool and the poll refuse the same way; the file stays as it was.
    let err = common::fail(&CronList, &ctx, json!({})).await;
    assert_eq!(err.text, msg);
    let err = common::fail(
        &CronCreate,
        &ctx,
        json!({"cron": "* * * * *", "prompt": "x", "durable": true}),
    )
    .await;
    assert_eq!(err.text, msg);
    let err = common::fail(
        &CronCreate,
        &ctx,
        json!({"cron": "* * * * *", "prompt": "x"}),
    )
    .await;
    assert_eq!(err.text, msg);
    assert!(store.due_jobs(at(12, 0, 0)).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"{\"tasks\": [oops");

    // Once the file is removed (or holds no `tasks` at all) the store works again.
    std::fs::write(&path, b"{}").unwrap();
    assert!(store.list().unwrap().is_empty());
    std::fs::remove_file(&path).unwrap();
    assert!(store.list().unwrap().is_empty());
    common::text(
        &CronCreate,
        &ctx,
        json!({"cron": "* * * * *", "prompt": "x", "durable": true}),
    )
    .await;
    assert!(path.is_file());
}

/// One bad entry in the durable file does not stop the good ones: they load and fire, the
/// bad ones are reported with their reasons, kept verbatim across rewrites, and removable.
#[tokio::test]
async fn a_bad_entry_is_reported_and_kept_while_the_others_run() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, store, path) = session(dir.path());
    let created = MIDNIGHT * 1000;
    let bad_expr = json!({"id": "bad1", "cron": "99 * * * *", "prompt": "p", "createdAt": created, "note": "hand-edited"});
    let never = json!({"id": "feb30", "cron": "0 0 30 2 *", "prompt": "p", "createdAt": created});
    let no_prompt = json!({"id": "half", "cron": "* * * * *", "createdAt": created});
    let twice = json!({"id": "good", "cron": "0 * * * *", "prompt": "again", "createdAt": created});
    let not_an_object = json!([1, 2]);
    let bad = [bad_expr, never, no_prompt, twice, not_an_object];
    let good = json!({"id": "good", "cron": "*/10 * * * *", "prompt": "poll", "createdAt": created, "recurring": true});
    let file = json!({"tasks": [
        bad[0].clone(), good, bad[1].clone(), bad[2].clone(), bad[3].clone(), bad[4].clone()
    ]});
    std::fs::write(&path, serde_json::to_vec(&file).unwrap()).unwrap();

    let jobs = store.list().unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].id, "good");
    let unusable = store.unusable().unwrap();
    let ids: Vec<Option<&str>> = unusable.iter().map(|u| u.id.as_deref()).collect();
    assert_eq!(
        ids,
        [
            Some("bad1"),
            Some("feb30"),
            Some("half"),
            Some("good"),
            None
        ]
    );
    assert!(
        unusable[0]
            .reason
            .starts_with("Invalid cron expression \"99 * * * *\""),
        "{}",
        unusable[0].reason
    );
    assert_eq!(
        unusable[1].reason,
        "cron expression \"0 0 30 2 *\" never fires"
    );
    assert!(
        unusable[2].reason.contains("missing field `prompt`"),
        "{}",
        unusable[2].reason
    );
    assert_eq!(unusable[3].reason, "job id \"good\" appears twice");
    assert!(unusable[4].reason.starts_with("not a job entry"));

    // The good job fires, and the rewrite keeps every bad entry exactly as it was, where it
    // was: only the fired job's entry changes.
    let due = store.due_jobs(at(0, 10, 0)).unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].prompt, "poll");
    let written: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let tasks = written["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 6);
    assert_eq!(tasks[1]["id"], "good");
    assert_eq!(tasks[1]["lastFiredAt"], json!(created + 600_000));
    assert_eq!(tasks[0], bad[0]);
    assert_eq!(tasks[2..], bad[1..]);

    // CronList shows both, with the file and the way out.
    let text = common::text(&CronList, &ctx, json!({})).await;
    assert!(text.contains("good — */10 * * * *"), "{text}");
    assert!(
        text.contains(&format!(
            "Not scheduled: 5 unusable entries in {}",
            path.display()
        )),
        "{text}"
    );
    assert!(text.contains("- bad1: Invalid cron expression"), "{text}");
    assert!(text.contains("- feb30: cron expression"), "{text}");

    // A new id never takes a bad entry's; CronDelete removes a bad entry by its id.
    let text = common::text(&CronDelete, &ctx, json!({"id": "feb30"})).await;
    assert_eq!(
        text,
        "Removed the unusable entry feb30 from the scheduled jobs file."
    );
    let written: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(written["tasks"].as_array().unwrap().len(), 5);
    assert!(!written.to_string().contains("feb30"));
    assert_eq!(store.unusable().unwrap().len(), 4);
    // The scheduled job goes, and its unusable duplicate with it: it would be the job again
    // at the next load.
    common::text(&CronDelete, &ctx, json!({"id": "good"})).await;
    assert!(store.list().unwrap().is_empty());
    let ids: Vec<Option<String>> = store
        .unusable()
        .unwrap()
        .into_iter()
        .map(|u| u.id)
        .collect();
    assert_eq!(ids, [Some("bad1".into()), Some("half".into()), None]);
    assert!(utc_store(&path).list().unwrap().is_empty());
}

#[test]
fn at_most_fifty_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let store = utc_store(&dir.path().join("jobs.json"));
    for i in 0..MAX_JOBS {
        store
            .create(
                job("* * * * *", &format!("job {i}"), true, false),
                at(1, 0, 0),
            )
            .unwrap();
    }
    let ids: std::collections::HashSet<String> =
        store.list().unwrap().into_iter().map(|j| j.id).collect();
    assert_eq!(ids.len(), MAX_JOBS);
    let err = store
        .create(job("* * * * *", "one too many", true, false), at(1, 0, 0))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Too many scheduled jobs (the limit is 50); delete one with CronDelete first"
    );
}

#[test]
fn schemas_flags_and_markers() {
    let expected: Value =
        serde_json::from_str(include_str!("fixtures/claude-code-tool-inputs.json")).unwrap();
    let tools: Vec<(Arc<dyn Tool>, Value)> = vec![
        (
            Arc::new(CronCreate),
            json!({"cron": "* * * * *", "prompt": "p"}),
        ),
        (Arc::new(CronList), json!({})),
        (Arc::new(CronDelete), json!({"id": "x"})),
    ];
    for (tool, input) in &tools {
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
        }
        assert_eq!(schema["additionalProperties"], false, "{name}");
        // CronList is read-only and concurrency-safe; the others keep the defaults.
        let list = name == "CronList";
        assert_eq!(tool.is_read_only(input), list, "{name}");
        assert_eq!(tool.is_concurrency_safe(input), list, "{name}");
        assert!(tool.should_defer(), "{name}");
        assert!(
            tool.prompt()
                .contains("toolwright-gated-tool:agent-triggers"),
            "{name}"
        );
    }
}

/// Two sessions in one project (two stores on one file): neither loses the other's durable
/// jobs, a deleted job stays deleted, and a due durable job fires in one session only.
#[test]
fn two_sessions_share_the_durable_file_without_losing_or_double_firing_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".claude/scheduled_tasks.json");
    let a = utc_store(&path);
    let b = utc_store(&path);
    // Both sessions have looked at the (empty) file before either creates anything.
    assert!(a.list().unwrap().is_empty());
    assert!(b.list().unwrap().is_empty());

    let ja = a
        .create(job("0 12 * * *", "from A", true, true), at(8, 0, 0))
        .unwrap();
    let jb = b
        .create(job("0 12 * * *", "from B", true, true), at(8, 1, 0))
        .unwrap();
    let file_ids = || -> Vec<String> {
        let file: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        file["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(file_ids(), [ja.id.clone(), jb.id.clone()], "a job was lost");
    // Each session sees the other's durable jobs.
    let ids =
        |s: &CronStore| -> Vec<String> { s.list().unwrap().into_iter().map(|j| j.id).collect() };
    assert_eq!(ids(&a), [ja.id.clone(), jb.id.clone()]);
    assert_eq!(ids(&b), [ja.id.clone(), jb.id.clone()]);

    // A deletes its job: B's stays, and B never writes A's back nor fires it.
    a.delete(&ja.id).unwrap();
    assert_eq!(file_ids(), [jb.id.as_str()]);
    assert_eq!(ids(&b), [jb.id.as_str()]);
    let due_a = a.due_jobs(at(12, 0, 0)).unwrap();
    let due_b = b.due_jobs(at(12, 0, 0)).unwrap();
    let fired: Vec<&str> = due_a.iter().chain(&due_b).map(|d| d.id.as_str()).collect();
    assert_eq!(fired, [jb.id.as_str()], "fired once, by one session only");
    assert_eq!(file_ids(), [jb.id.as_str()]);
    // Both see the claimed fire: the next time is tomorrow for either session.
    for s in [&a, &b] {
        let jobs = s.list().unwrap();
        assert_eq!(jobs[0].last_fired_at, Some(at(12, 0, 0)));
        assert_eq!(
            jobs[0].next_fire_at,
            at(12, 0, 0) + Duration::from_secs(86_400)
        );
    }
    // B deletes a job A created... after A fired it: nothing comes back.
    b.delete(&jb.id).unwrap();
    assert!(file_ids().is_empty());
    assert!(ids(&a).is_empty());
    assert!(
        a.due_jobs(at(12, 0, 0) + Duration::from_secs(86_400))
            .unwrap()
            .is_empty()
    );
    // Deleting what the other session already deleted is "not found", not a rewrite.
    assert!(matches!(a.delete(&jb.id), Err(CronError::NotFound { .. })));
}

/// Many sessions polling at the same moment: a due durable one-shot job and a due recurring
/// one each fire exactly once across them all.
#[test]
fn due_durable_jobs_are_claimed_by_one_of_many_concurrent_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    let creator = utc_store(&path);
    let once = creator
        .create(job("30 9 * * *", "once", false, true), at(9, 0, 0))
        .unwrap();
    let daily = creator
        .create(job("30 9 * * *", "daily", true, true), at(9, 0, 0))
        .unwrap();
    let sessions = 8;
    let barrier = Arc::new(std::sync::Barrier::new(sessions));
    let handles: Vec<_> = (0..sessions)
        .map(|_| {
            let store = utc_store(&path);
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                store.list().unwrap();
                barrier.wait();
                store.due_jobs(at(9, 30, 0)).unwrap()
            })
        })
        .collect();
    let mut fired: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .map(|d| d.id)
        .collect();
    fired.sort();
    let mut expected = vec![once.id.clone(), daily.id.clone()];
    expected.sort();
    assert_eq!(fired, expected);
    // The one-shot job is gone from the file, the recurring one records its fire.
    let jobs = utc_store(&path).list().unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].id, daily.id);
    assert_eq!(jobs[0].last_fired_at, Some(at(9, 30, 0)));
    // Changes are made under a lock file beside the durable file; no temporary file is left.
    let mut siblings: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    siblings.sort();
    assert_eq!(siblings, ["jobs.json", "jobs.json.lock"]);
}

/// A month name is refused outside the month field and a weekday name outside the
/// day-of-week field (the parser would otherwise read `MON` in the month field as January),
/// with the field and the value named.
#[test]
fn names_are_accepted_only_in_their_own_field() {
    let dir = tempfile::tempdir().unwrap();
    let store = utc_store(&dir.path().join("jobs.json"));
    let refused = [
        (
            "0 9 * MON *",
            "the month field has \"MON\", a day-of-week name",
        ),
        (
            "0 9 * * JAN",
            "the day-of-week field has \"JAN\", a month name",
        ),
        (
            "0 9 FRI * *",
            "the day-of-month field has \"FRI\", a day-of-week name",
        ),
        (
            "sun 9 * * *",
            "the minute field has \"sun\", a day-of-week name",
        ),
        ("0 dec * * *", "the hour field has \"dec\", a month name"),
        ("0 9 * 1jan *", "the month field has \"1jan\""),
        ("0 9 * * monday", "the day-of-week field has \"monday\""),
    ];
    for (expr, reason) in refused {
        let err = store
            .create(job(expr, "x", true, false), at(1, 0, 0))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(&format!("Invalid cron expression \"{expr}\": {reason}")),
            "{expr}: {err}"
        );
    }
    // Names in their own field work, in any case, in lists and ranges.
    let day = Duration::from_secs(86_400);
    // 2024-01-01 is a Monday.
    let mon = store
        .create(job("0 9 * * MON", "x", true, false), at(1, 0, 0))
        .unwrap();
    assert_eq!(mon.next_fire_at, at(9, 0, 0));
    let weekdays = store
        .create(job("0 9 * * tue-Fri", "x", true, false), at(1, 0, 0))
        .unwrap();
    assert_eq!(weekdays.next_fire_at, at(9, 0, 0) + day);
    let march = store
        .create(job("0 9 1 mar,Apr *", "x", true, false), at(1, 0, 0))
        .unwrap();
    // 2024-03-01: 31 + 29 days after 2024-01-01.
    assert_eq!(march.next_fire_at, at(9, 0, 0) + day * 60);
    assert!(
        store
            .create(job("0 9 L * *", "x", true, false), at(1, 0, 0))
            .is_ok()
    );
    assert!(
        store
            .create(job("0 9 * * 5L", "x", true, false), at(1, 0, 0))
            .is_ok()
    );
    assert!(
        store
            .create(job("0 9 * * mon#2", "x", true, false), at(1, 0, 0))
            .is_ok()
    );
}

/// Day-of-month and day-of-week combine as in Vixie cron: with OR when both are restricted,
/// but a field starting with `*` (`*/1`, `*/2`) counts as unrestricted, so the other one
/// alone decides.
#[test]
fn a_day_field_starting_with_a_star_is_unrestricted_as_in_vixie_cron() {
    let dir = tempfile::tempdir().unwrap();
    let store = utc_store(&dir.path().join("jobs.json")).with_recurring_max_age(None);
    let day = Duration::from_secs(86_400);
    // 2024-01-01 (a Monday): `0 0 15 * */1` fires on the 15th only, not every day.
    let fifteenth = store
        .create(job("0 0 15 * */1", "x", true, false), at(1, 0, 0))
        .unwrap();
    assert_eq!(fifteenth.next_fire_at, at(0, 0, 0) + day * 14);
    // `*/2` in the day of the month (odd days) with Monday: odd-day Mondays only.
    // 2024-01-01 is an odd Monday (already past at 01:00); the next odd Monday is 01-15.
    let odd_mondays = store
        .create(job("0 0 */2 * 1", "x", true, false), at(1, 0, 0))
        .unwrap();
    assert_eq!(odd_mondays.next_fire_at, at(0, 0, 0) + day * 14);
    // Both restricted: either one (the 15th, or any Monday: 2024-01-08).
    let either = store
        .create(job("0 0 15 * 1", "x", true, false), at(1, 0, 0))
        .unwrap();
    assert_eq!(either.next_fire_at, at(0, 0, 0) + day * 7);
    // `*` alone is unrestricted as before.
    let mondays = store
        .create(job("0 0 * * 1", "x", true, false), at(1, 0, 0))
        .unwrap();
    assert_eq!(mondays.next_fire_at, at(0, 0, 0) + day * 7);
    // Firing follows the same rule.
    let due = store.due_jobs(at(0, 0, 0) + day * 7).unwrap();
    let ids: Vec<&str> = due.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, [either.id.as_str(), mondays.id.as_str()]);
}

/// The lock is a real file lock: sessions in separate processes (this test binary run again
/// as children) polling the same file at the same moment fire a due durable job once.
#[test]
fn due_durable_jobs_fire_once_across_processes() {
    const CHILD: &str = "TOOLWRIGHT_CRON_CHILD_FILE";
    if let Some(path) = std::env::var_os(CHILD) {
        // A child: wait for the go file, poll once, print what fired.
        let path = PathBuf::from(path);
        let store = utc_store(&path);
        store.list().unwrap();
        let go = path.with_file_name("go");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !go.exists() {
            assert!(std::time::Instant::now() < deadline, "no go file");
            std::thread::sleep(Duration::from_millis(2));
        }
        for due in store.due_jobs(at(9, 30, 0)).unwrap() {
            println!("FIRED {}", due.id);
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("jobs.json");
    let creator = utc_store(&path);
    let once = creator
        .create(job("30 9 * * *", "once", false, true), at(9, 0, 0))
        .unwrap();
    let daily = creator
        .create(job("30 9 * * *", "daily", true, true), at(9, 0, 0))
        .unwrap();
    let children: Vec<_> = (0..4)
        .map(|_| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "due_durable_jobs_fire_once_across_processes",
                    "--nocapture",
                    "--test-threads=1",
                ])
                .env(CHILD, &path)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    std::fs::write(dir.path().join("go"), b"").unwrap();
    let mut fired = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        fired.extend(
            stdout
                .lines()
                // The harness's `test ... ` may precede the first line on its line.
                .filter_map(|l| l.split("FIRED ").nth(1))
                .map(|rest| rest.split_whitespace().next().unwrap_or("").to_owned()),
        );
    }
    fired.sort();
    let mut expected = vec![once.id, daily.id];
    expected.sort();
    assert_eq!(fired, expected, "each due job fires in exactly one process");
}

/// A store waiting for the durable file's lock (another session holds it) does not hold up
/// what needs only the store's own state: the time zone (read by CronCreate's async input
/// check) and session-only jobs.
#[test]
fn waiting_for_the_file_lock_does_not_hold_the_store() {
    use nix::fcntl::{Flock, FlockArg};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(".claude/scheduled_tasks.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let lock_file =
        std::fs::File::create(dir.path().join(".claude/scheduled_tasks.json.lock")).unwrap();
    // Another session holds the lock.
    let held = Flock::lock(lock_file, FlockArg::LockExclusive).unwrap();
    let store = CronStore::new(&path);
    let waiting = {
        let store = store.clone();
        std::thread::spawn(move || {
            store.create(job("0 9 * * *", "durable", true, true), SystemTime::now())
        })
    };
    // Long enough for the durable create to be waiting for the lock.
    std::thread::sleep(Duration::from_millis(300));
    let (tx, rx) = std::sync::mpsc::channel();
    {
        let store = store.clone();
        std::thread::spawn(move || {
            let tz = store.time_zone();
            let session = store.create(job("0 9 * * *", "session", true, false), SystemTime::now());
            let _ = tx.send((tz, session.is_ok()));
        });
    }
    let answered = rx.recv_timeout(Duration::from_secs(20));
    drop(held);
    assert!(waiting.join().unwrap().is_ok());
    assert!(
        matches!(answered, Ok((_, true))),
        "the store was held while waiting for the file lock: {answered:?}"
    );
}

/// Plan mode refuses what writes the durable file (a durable job, deleting one) and lets
/// session-only jobs be made and deleted: they change nothing outside the session.
#[tokio::test]
async fn plan_mode_refuses_durable_jobs_only() {
    let dir = tempfile::tempdir().unwrap();
    let (ctx, _store, path) = session(dir.path());
    // A durable job made before plan mode.
    let durable = id_of(
        &common::text(
            &CronCreate,
            &ctx,
            json!({"cron": "0 9 * * *", "prompt": "report", "durable": true}),
        )
        .await,
    );
    let mut perm = ctx.permission().clone();
    perm.set_mode(tool_core::PermissionMode::Plan);
    let plan = ctx.clone().with_permission(perm);
    let refused = |r: tool_core::PermissionResult| match r {
        tool_core::PermissionResult::Deny { message, .. } => {
            message.starts_with("Plan mode is active: ")
        }
        _ => false,
    };
    let check = |tool: &'static dyn Tool, input: Value| {
        let plan = plan.clone();
        async move {
            let input = tool.parse_input(input).unwrap();
            tool.check_permissions(&input, &plan).await
        }
    };
    assert!(refused(
        check(
            &CronCreate,
            json!({"cron": "0 9 * * *", "prompt": "x", "durable": true})
        )
        .await
    ));
    assert!(refused(check(&CronDelete, json!({"id": durable})).await));
    assert!(!refused(
        check(&CronCreate, json!({"cron": "0 9 * * *", "prompt": "x"})).await
    ));
    let session_job = id_of(
        &common::text(
            &CronCreate,
            &plan,
            json!({"cron": "0 9 * * *", "prompt": "x"}),
        )
        .await,
    );
    assert!(!refused(
        check(&CronDelete, json!({"id": session_job})).await
    ));
    assert!(std::fs::read_to_string(&path).unwrap().contains(&durable));
}
