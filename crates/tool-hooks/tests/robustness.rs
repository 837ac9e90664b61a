//! Misbehaving hooks: timeouts, hangs, stdin never read, grandchildren, huge or broken
//! output, cancellation. Each ends with a clear non-blocking error naming the hook, on time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use common::{Env, cmd, one, runner, wait_group_gone};
use serde_json::json;
use tool_hooks::{MAX_HOOK_STRING_CHARS, PermissionDecision, ToolCallInfo};

fn bash(command: &str) -> ToolCallInfo {
    ToolCallInfo::new("Bash", json!({"command": command}), "toolu_01")
}

/// How long a run may take before the test calls it a hang: a guard, not a timing
/// assertion. Every hook here that does not end on its own sleeps far longer (1000 s), so a
/// run that ends within the guard was ended by its timeout, cancellation or drop.
const HANG_GUARD: Duration = Duration::from_secs(60);

/// A shell loop that waits until `path` exists (the test's go-ahead); it gives up after a
/// minute or so, so that a failed test leaves no process behind for long.
fn wait_for_file(path: &std::path::Path) -> String {
    format!(
        "i=0; while [ ! -e '{}' ] && [ $i -lt 3000 ]; do sleep 0.02; i=$((i+1)); done",
        path.display()
    )
}

/// Waits (within the hang guard) until the hook wrote its process id, a whole line, to `path`.
async fn wait_for_pid_file(path: &std::path::Path) {
    let deadline = Instant::now() + HANG_GUARD;
    while !std::fs::read_to_string(path).is_ok_and(|s| s.ends_with('\n')) {
        assert!(Instant::now() < deadline, "the hook did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn timeout_kills_the_whole_process_group() {
    let env = Env::new();
    let pid_file = env.path("pid");
    let child_file = env.path("child");
    // The hook and a background grandchild both sleep forever.
    let hook = format!(
        "echo $$ > '{}'; sleep 1000 & echo $! > '{}'; sleep 1000",
        pid_file.display(),
        child_file.display()
    );
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json!({"type": "command", "command": hook, "timeout": 1})],
    ));
    let start = Instant::now();
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    let elapsed = start.elapsed();
    // The 1 s timeout was waited for, and it (not the 1000 s sleep) ended the run: the upper
    // bound is a hang guard, not a speed check.
    assert!(
        elapsed >= Duration::from_millis(950) && elapsed < HANG_GUARD,
        "{elapsed:?}"
    );
    assert!(out.decision.is_none(), "a timed-out hook makes no decision");
    assert_eq!(out.common.errors.len(), 1);
    assert_eq!(
        out.common.errors[0].text,
        "timed out after 1s; its process group was killed"
    );
    assert!(out.common.runs[0].timed_out);
    let pgid: i32 = env.read("pid").trim().parse().unwrap();
    let grandchild: i32 = env.read("child").trim().parse().unwrap();
    assert!(
        wait_group_gone(pgid).is_empty(),
        "process group {pgid} still has members"
    );
    assert!(
        !std::path::Path::new(&format!("/proc/{grandchild}/cmdline")).exists() || {
            // A zombie awaiting reaping by init is acceptable; a live one is not.
            let stat =
                std::fs::read_to_string(format!("/proc/{grandchild}/stat")).unwrap_or_default();
            stat.rsplit(')')
                .next()
                .is_some_and(|s| s.trim_start().starts_with('Z'))
        }
    );
}

#[tokio::test]
async fn timeout_with_on_failure_block_denies() {
    let env = Env::new();
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![
            json!({"type": "command", "command": "sleep 1000", "timeout": 0.3, "onFailure": "block"}),
        ],
    ));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(d.behavior, PermissionDecision::Deny);
    assert!(d.message.contains("timed out after 0.3s"), "{}", d.message);
}

#[tokio::test]
async fn hook_that_never_reads_stdin() {
    let env = Env::new();
    // 4 MB of input, far above a pipe buffer; the hook exits without reading it.
    let big = "x".repeat(4 * 1024 * 1024);
    let call = ToolCallInfo::new("Write", json!({"file_path": "/a", "content": big}), "t");
    let r = runner(one(
        "PreToolUse",
        "*",
        vec![cmd("echo '{\"systemMessage\":\"fine\"}'")],
    ));
    // Its default timeout is 600 s: a run stuck writing stdin is caught by the hang guard.
    let out = tokio::time::timeout(HANG_GUARD, r.run_pre_tool_use(&call, &env.ctx()))
        .await
        .expect("the run hung on the stdin the hook never read");
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    assert_eq!(out.common.system_messages[0].text, "fine");
    // One that never reads and never exits is stopped by its timeout.
    let r = runner(one(
        "PreToolUse",
        "*",
        vec![json!({"type": "command", "command": "sleep 1000", "timeout": 0.5})],
    ));
    let start = Instant::now();
    let out = r.run_pre_tool_use(&call, &env.ctx()).await;
    assert!(start.elapsed() < HANG_GUARD, "{:?}", start.elapsed());
    assert!(out.common.errors[0].text.starts_with("timed out"));
}

#[tokio::test]
async fn grandchild_keeping_stdout_open() {
    let env = Env::new();
    // The grandchild holds the hook's stdout until the test creates `go`, after the run
    // returned: the run cannot have waited for it.
    let go = env.path("go");
    let hook = format!(
        "( {} ) & {}",
        wait_for_file(&go),
        r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"nope"}}'"#
    );
    let r = runner(one("PreToolUse", "Bash", vec![cmd(&hook)]));
    let out = tokio::time::timeout(HANG_GUARD, r.run_pre_tool_use(&bash("ls"), &env.ctx()))
        .await
        .expect("the run waited for the grandchild holding stdout");
    std::fs::write(&go, "").unwrap();
    assert_eq!(out.decision.unwrap().message, "nope");
    assert!(
        out.common
            .errors
            .iter()
            .any(|e| e.text.contains("background process")),
        "{:?}",
        out.common.errors
    );
}

#[tokio::test]
async fn huge_outputs_are_bounded() {
    let env = Env::new();
    // 20 MB of plain stdout: drained, capped, no error.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd("head -c 20000000 /dev/zero | tr '\\0' a; exit 0")],
    ));
    // A hang guard, not a speed check (the hook's default timeout is 600 s).
    let out = tokio::time::timeout(HANG_GUARD, r.run_pre_tool_use(&bash("ls"), &env.ctx()))
        .await
        .expect("the run hung draining 20 MB of stdout");
    assert!(out.decision.is_none() && out.common.errors.is_empty());
    // JSON of a few MiB (a hook replacing a large tool result) is read whole.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd(
            "printf '{\"systemMessage\": \"'; head -c 3000000 /dev/zero | tr '\\0' a; printf '\"}'",
        )],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    assert_eq!(out.common.system_messages.len(), 1);
    // JSON above the capture limit: clear error (a guard's refuses the call, review 38).
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd(
            "printf '{\"systemMessage\": \"'; head -c 17000000 /dev/zero | tr '\\0' a; printf '\"}'",
        )],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    let refusal = out.decision.expect("the call was not refused").message;
    assert!(refusal.contains("capture limit"), "{refusal}");
    // A 50,000-char reason is saved to a file; the model sees a preview and the path.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd("printf '{\"decision\": \"block\", \"reason\": \"'; head -c 50000 /dev/zero | tr '\\0' r; printf '\"}'")],
    ))
    .with_output_dir(env.path("out"));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert!(d.message.chars().count() < MAX_HOOK_STRING_CHARS);
    assert!(
        d.message
            .starts_with("<persisted-output>\nOutput too large (48.8KB). Full output saved to: "),
        "{}",
        &d.message[..200]
    );
    let path = d
        .message
        .lines()
        .nth(1)
        .unwrap()
        .rsplit("saved to: ")
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(std::fs::read_to_string(path).unwrap().len(), 50_000);
    // Huge stderr with exit 2 is bounded too.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd("head -c 3000000 /dev/zero | tr '\\0' e >&2; exit 2")],
    ))
    .with_output_dir(env.path("out"));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert!(d.message.len() < 20_000 && d.message.contains("persisted-output"));
}

#[tokio::test]
async fn broken_output_is_a_non_blocking_error() {
    let env = Env::new();
    let cases = [
        ("printf '\\377\\376{'", "not valid UTF-8"),
        ("echo '{\"continue\": \"no\"}'", "expected a boolean"),
        (
            "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"perhaps\"}}'",
            "unknown variant `perhaps`",
        ),
        (
            "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"updatedInput\": \"rm -rf\"}}'",
            "expected a map",
        ),
        ("echo '[1, 2]'; exit 1", "failed with exit code 1"),
        (
            "echo '{\"hookSpecificOutput\": {\"hookEventName\": \"PostToolUse\", \"permissionDecision\": \"deny\"}}'",
            "hookEventName is \"PostToolUse\"",
        ),
        ("kill -9 $$", "was killed by signal 9 (SIGKILL)"),
        ("kill -SEGV $$", "was killed by signal 11 (SIGSEGV)"),
    ];
    for (hook, expect) in cases {
        let r = runner(one("PreToolUse", "Bash", vec![cmd(hook)]));
        let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
        assert!(out.decision.is_none(), "{hook}: {:?}", out.decision);
        assert_eq!(
            out.common.errors.len(),
            1,
            "{hook}: {:?}",
            out.common.errors
        );
        assert_eq!(out.common.errors[0].hook, hook);
        assert!(
            out.common.errors[0].text.contains(expect),
            "{hook}: {}",
            out.common.errors[0].text
        );
    }
    // Binary junk: reported, never a decision.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd("printf 'junk\\200\\377\\000'; exit 0")],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.decision.is_none());
    assert!(
        out.common.errors[0].text.contains("not valid UTF-8"),
        "{:?}",
        out.common.errors
    );
    // Text that starts with `{` but is not JSON is plain text, said in a notice (it may be a
    // decision that was not taken), unless the handler says invalid output is a failure.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd("echo '{\"decision\": '")],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.decision.is_none(), "{out:?}");
    assert!(
        out.common.errors.len() == 1
            && out.common.errors[0].text.contains("not valid JSON")
            && out.common.errors[0].text.contains("read as plain text"),
        "{out:?}"
    );
    // Half a surrogate pair, as Node's `JSON.stringify` writes a reason cut in the middle of
    // an emoji, is JSON to `JSON.parse`: the deny holds, the half read as U+FFFD.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd(
            "printf '%s' '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"\\udeab blocked\"}}'",
        )],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    let d = out.decision.unwrap();
    assert_eq!(d.behavior, PermissionDecision::Deny);
    assert_eq!(d.message, "\u{FFFD} blocked");
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    let mut strict = cmd("echo '{\"decision\": '");
    strict["onFailure"] = json!("block");
    let r = runner(one("PreToolUse", "Bash", vec![strict]));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert_eq!(d.behavior, PermissionDecision::Deny);
    assert!(d.message.contains("not valid JSON"), "{}", d.message);
    // One invalid byte does not throw away a decision: it is replaced, with a notice.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd(
            "printf '{\"hookSpecificOutput\": {\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"caf\\351\"}}'",
        )],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    let d = out.decision.unwrap();
    assert_eq!(d.behavior, PermissionDecision::Deny);
    assert_eq!(d.message, "caf\u{FFFD}");
    assert!(out.common.errors[0].text.contains("not valid UTF-8"));
    // Exit 2 with schema-invalid JSON still blocks.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd("echo '{\"continue\": 5}'; echo stop >&2; exit 2")],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert_eq!(out.decision.unwrap().behavior, PermissionDecision::Deny);
    // JSON deeper than serde_json reads (130 levels), which `JSON.parse` reads: its deny
    // cannot be read, so the call is refused, saying why (found by review 36: read as plain
    // text, the call ran). As plain text elsewhere (PostToolUse), with a notice.
    let deep = format!(
        "{{\"hookSpecificOutput\": {{\"hookEventName\": \"PreToolUse\", \"permissionDecision\": \"deny\", \"permissionDecisionReason\": \"deep deny\"}}, \"debug\": {}{}}}",
        "[".repeat(130),
        "]".repeat(130)
    );
    std::fs::write(env.path("deep.json"), &deep).unwrap();
    let show = format!("cat '{}'", env.path("deep.json").display());
    let r = runner(one("PreToolUse", "Bash", vec![cmd(&show)]));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    let d = out.decision.unwrap();
    assert_eq!(d.behavior, PermissionDecision::Deny);
    assert!(
        d.message.contains("nested deeper than 128 levels")
            && d.message.contains("the call is refused"),
        "{}",
        d.message
    );
}

#[tokio::test]
async fn cancellation_kills_hooks() {
    let env = Env::new();
    let ctx = env.ctx();
    let token = ctx.cancellation().clone();
    let pid_file = env.path("pid");
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd(&format!(
            "echo $$ > '{}'; sleep 1000",
            pid_file.display()
        ))],
    ));
    // Cancelled once the hook runs (it wrote its pid).
    tokio::spawn(async move {
        wait_for_pid_file(&pid_file).await;
        token.cancel();
    });
    let start = Instant::now();
    let out = r.run_pre_tool_use(&bash("ls"), &ctx).await;
    // Cancellation, not the 1000 s sleep, ended it (a hang guard, not a speed check).
    assert!(start.elapsed() < HANG_GUARD, "{:?}", start.elapsed());
    assert!(out.common.cancelled);
    assert!(out.decision.is_none());
    let pgid: i32 = env.read("pid").trim().parse().unwrap();
    assert!(wait_group_gone(pgid).is_empty());
}

/// The hooks of an event run at the same time: each waits, at a file barrier, until all
/// eight have started, which hooks run one after another never do (the first would time
/// out waiting for the others).
#[tokio::test]
async fn parallel_hooks_take_the_time_of_one() {
    let env = Env::new();
    let barrier = env.path("barrier");
    std::fs::create_dir(&barrier).unwrap();
    let hooks: Vec<_> = (0..8)
        .map(|i| {
            let command = format!(
                "touch '{b}/s{i}'; until [ \"$(ls '{b}' | wc -l)\" -ge 8 ]; do sleep 0.02; done",
                b = barrier.display()
            );
            json!({"type": "command", "command": command, "timeout": 30})
        })
        .collect();
    let r = runner(one("PostToolUse", "*", hooks));
    // Hooks run one after another would take minutes (all but the last time out after 30 s
    // each): the guard ends the test sooner.
    let out = tokio::time::timeout(
        HANG_GUARD,
        r.run_post_tool_use(&bash("ls"), &json!({}), &env.ctx()),
    )
    .await
    .expect("the hooks did not run at the same time");
    assert_eq!(out.common.runs.len(), 8);
    assert!(
        out.common
            .runs
            .iter()
            .all(|run| !run.timed_out && run.exit_code == Some(0)),
        "{:?}",
        out.common.runs
    );
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
}

#[tokio::test]
async fn dropping_the_run_kills_the_hook() {
    let env = Env::new();
    let pid_file = env.path("pid");
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd(&format!(
            "echo $$ > '{}'; sleep 1000 & sleep 1000",
            pid_file.display()
        ))],
    ));
    // The caller stops waiting once the hook runs (it wrote its pid) and drops the future.
    let ctx = env.ctx();
    let call = bash("ls");
    let mut run = Box::pin(r.run_pre_tool_use(&call, &ctx));
    tokio::select! {
        _ = &mut run => panic!("the run ended by itself"),
        () = wait_for_pid_file(&pid_file) => {}
    }
    drop(run);
    let pgid: i32 = env.read("pid").trim().parse().unwrap();
    assert!(wait_group_gone(pgid).is_empty());
}

#[test]
fn runner_and_its_futures_are_send() {
    fn send_sync_clone<T: Send + Sync + Clone>() {}
    fn send<T: Send>(_: &T) {}
    send_sync_clone::<tool_hooks::HookRunner>();
    let r = tool_hooks::HookRunner::none();
    let ctx = tool_core::ToolUseContext::new("/");
    let call = bash("ls");
    send(&r.run_pre_tool_use(&call, &ctx));
    send(&r.run_post_tool_use(&call, &json!({}), &ctx));
    send(&r.run_post_tool_use_failure(&call, "e", false, &ctx));
    send(&r.run_permission_request(&call, &[], &ctx));
    send(&r.run_permission_denied(&call, "r", &ctx));
    send(&r.run_post_tool_batch(&[], &ctx));
    send(&r.run_event("Stop", serde_json::Map::new(), None, &ctx));
}
