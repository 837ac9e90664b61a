//! Fixes from a black-box review of the hooks runner, each with real hook processes in a
//! temp dir: the `cwd` hooks are told once the session's cwd is removed, a long message
//! saved to one file, and stderr cut at the capture limit said to be cut; an empty deny
//! reason read as no reason, and a SessionEnd hook past its budget said once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::{Env, cmd, one, runner};
use serde_json::{Value, json};
use tool_hooks::{MAX_CAPTURE_BYTES, PermissionRequestVerdict, ToolCallInfo};

fn bash(command: &str) -> ToolCallInfo {
    ToolCallInfo::new("Bash", json!({"command": command}), "toolu_01")
}

/// The files saved in `dir` (none when it does not exist).
fn saved_files(dir: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    }
}

/// The path a `<persisted-output>` block names.
fn saved_path(text: &str) -> PathBuf {
    let line = text
        .lines()
        .find(|l| l.contains("saved to: "))
        .unwrap_or_else(|| panic!("no saved path in {:?}", &text[..text.len().min(300)]));
    PathBuf::from(line.rsplit("saved to: ").next().unwrap())
}

/// The session's cwd removed by an earlier command (`mkdir -p gone && cd gone`, then `rm -r
/// ../gone`): hooks run where Bash now runs, and their input's `cwd` names that directory,
/// not the removed one (it did, while the hook ran elsewhere).
#[tokio::test]
async fn the_input_cwd_is_where_the_hook_runs_once_the_cwd_is_removed() {
    let env = Env::new();
    let gone = env.path("gone");
    std::fs::create_dir(&gone).unwrap();
    let ctx = env.ctx().with_cwd(&gone);
    std::fs::remove_dir(&gone).unwrap();
    let ran_in = ctx.effective_cwd().into_owned();
    assert_eq!(ran_in, env.root(), "Bash's fallback is the project dir");
    for event in ["PreToolUse", "PostToolUse"] {
        let log = env.path(&format!("{event}.log"));
        let r = runner(one(
            event,
            "Bash",
            vec![cmd(&format!("{{ pwd -P; cat; }} > '{}'", log.display()))],
        ));
        let errors = match event {
            "PreToolUse" => r.run_pre_tool_use(&bash("pwd"), &ctx).await.common.errors,
            _ => {
                let response = json!({"stdout": "", "stderr": "", "interrupted": false});
                r.run_post_tool_use(&bash("pwd"), &response, &ctx)
                    .await
                    .common
                    .errors
            }
        };
        assert!(errors.is_empty(), "{event}: {errors:?}");
        let logged = std::fs::read_to_string(&log).unwrap();
        let (pwd, input) = logged.split_once('\n').unwrap();
        let input: Value = serde_json::from_str(input).unwrap();
        assert_eq!(input["cwd"], json!(ran_in.to_string_lossy()), "{event}");
        assert_eq!(
            Path::new(pwd),
            ran_in.canonicalize().unwrap(),
            "{event}: the hook ran where its input says"
        );
    }
}

/// A long exit-2 message on PreToolUse is saved once: the deny message and the blocking
/// error it came from name the same file (each saved it, and the blocking error's copy was
/// never shown). The same holds for a long `decision: "block"` reason; on PostToolUse,
/// which shows its blocking errors, the message is still saved and named.
#[tokio::test]
async fn a_long_blocking_message_is_saved_to_one_file() {
    let env = Env::new();
    let long_stderr = "head -c 20000 /dev/zero | tr '\\0' R >&2; exit 2";
    let long_block = "printf '{\"decision\": \"block\", \"reason\": \"'; \
                      head -c 20000 /dev/zero | tr '\\0' R; printf '\"}'";
    for (i, hook) in [long_stderr, long_block].into_iter().enumerate() {
        let out_dir = env.path(&format!("pre-{i}"));
        let r = runner(one("PreToolUse", "Bash", vec![cmd(hook)])).with_output_dir(&out_dir);
        let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
        let d = out.decision.expect("the hook blocked");
        let files = saved_files(&out_dir.join("toolwright-hook-output"));
        assert_eq!(files.len(), 1, "{hook}: {files:?}");
        assert_eq!(saved_path(&d.message), files[0], "{hook}");
        assert_eq!(saved_path(&out.common.blocking_errors[0].text), files[0]);
        let saved = std::fs::read_to_string(&files[0]).unwrap();
        assert!(saved.contains(&"R".repeat(20_000)), "{hook}");
    }
    let out_dir = env.path("post");
    let r = runner(one("PostToolUse", "Bash", vec![cmd(long_stderr)])).with_output_dir(&out_dir);
    let response = json!({"stdout": "", "stderr": "", "interrupted": false});
    let out = r
        .run_post_tool_use(&bash("ls"), &response, &env.ctx())
        .await;
    let files = saved_files(&out_dir.join("toolwright-hook-output"));
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(out.common.blocking_errors.len(), 1);
    assert_eq!(saved_path(&out.common.blocking_errors[0].text), files[0]);
}

/// stderr over the capture limit is cut, and what is saved says so: the file ends with how
/// much was kept of how much (it was labelled the full output, holding 1 MiB of 3 MB).
#[tokio::test]
async fn stderr_cut_at_the_capture_limit_says_it_was_cut() {
    let env = Env::new();
    let out_dir = env.path("out");
    // What a PreToolUse hook that writes `bytes` to stderr and blocks has saved.
    let saved_by = |bytes: usize| {
        let r = runner(one(
            "PreToolUse",
            "Bash",
            vec![cmd(&format!(
                "head -c {bytes} /dev/zero | tr '\\0' e >&2; exit 2"
            ))],
        ))
        .with_output_dir(&out_dir);
        let ctx = env.ctx();
        async move {
            let d = r
                .run_pre_tool_use(&bash("ls"), &ctx)
                .await
                .decision
                .expect("the hook blocked");
            std::fs::read_to_string(saved_path(&d.message)).unwrap()
        }
    };
    let saved = saved_by(3_000_000).await;
    assert!(saved.contains(&"e".repeat(MAX_CAPTURE_BYTES)));
    assert!(!saved.contains(&"e".repeat(MAX_CAPTURE_BYTES + 1)));
    let last = saved.lines().last().unwrap();
    assert_eq!(
        last,
        format!(
            "[stderr cut at the 1MB capture limit: the first {MAX_CAPTURE_BYTES} of 3000000 bytes were kept]"
        )
    );
    // stderr within the limit carries no such line.
    let saved = saved_by(20_000).await;
    assert!(!saved.contains("capture limit"));
    assert!(saved.contains(&"e".repeat(20_000)));
}

/// An empty or blank deny reason is no reason, as Claude Code's `||` reads it
/// (`permissionDecisionReason || reason || 'Blocked by hook'`): the model is told the
/// default text, or the other reason field, never an empty error result.
#[tokio::test]
async fn an_empty_deny_reason_falls_back_to_the_default_text() {
    let env = Env::new();
    let pre = |reason: &str, legacy: &str| {
        format!(
            r#"echo '{{"hookSpecificOutput":{{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"{reason}"}}{legacy}}}'"#
        )
    };
    let cases = [
        (pre("", ""), "Hook PreToolUse:Bash denied this tool"),
        (pre("  ", ""), "Hook PreToolUse:Bash denied this tool"),
        (
            pre("", r#","reason":"the legacy reason""#),
            "the legacy reason",
        ),
        (
            r#"echo '{"decision":"block","reason":""}'"#.to_owned(),
            "Blocked by hook",
        ),
        (
            r#"echo '{"decision":"block","reason":"  "}'"#.to_owned(),
            "Blocked by hook",
        ),
        (
            r#"echo '{"decision":"block","reason":""}'; echo STDERR >&2; exit 2"#.to_owned(),
            "PreToolUse:Bash hook error: [",
        ),
    ];
    for (hook, expected) in cases {
        let r = runner(one("PreToolUse", "Bash", vec![cmd(&hook)]));
        let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
        let d = out.decision.expect("the hook denied");
        assert!(d.message.starts_with(expected), "{hook}: {:?}", d.message);
        assert!(!d.message.trim().is_empty(), "{hook}");
        for e in &out.common.blocking_errors {
            assert!(!e.text.trim().is_empty(), "{hook}: {e:?}");
        }
    }
    // Exit 2 with an empty JSON reason: stderr is the message.
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd(
            r#"echo '{"decision":"block","reason":""}'; echo STDERR >&2; exit 2"#,
        )],
    ));
    let d = r
        .run_pre_tool_use(&bash("ls"), &env.ctx())
        .await
        .decision
        .unwrap();
    assert!(d.message.ends_with("]: STDERR"), "{:?}", d.message);

    for message in ["", "  "] {
        let hook = format!(
            r#"echo '{{"hookSpecificOutput":{{"hookEventName":"PermissionRequest","decision":{{"behavior":"deny","message":"{message}"}}}}}}'"#
        );
        let r = runner(one("PermissionRequest", "Bash", vec![cmd(&hook)]));
        let out = r.run_permission_request(&bash("ls"), &[], &env.ctx()).await;
        match out.verdict {
            Some(PermissionRequestVerdict::Deny { message, .. }) => {
                assert_eq!(message, "Permission to use Bash denied by hook");
            }
            other => panic!("{message:?}: {other:?}"),
        }
    }
}

/// A SessionEnd hook still running when the shared budget (here its own 2 s timeout) runs
/// out is reported once: its own timeout and the budget fire together, and both were said
/// ("timed out after 2s" and "SessionEnd hooks were stopped after their 2000 ms budget").
#[tokio::test]
async fn a_session_end_hook_past_its_budget_is_reported_once() {
    let env = Env::new();
    let runs = (0..6).map(|_| {
        let r = runner(json!({"SessionEnd": [{"hooks": [
            {"type": "command", "command": "sleep 30", "timeout": 2}
        ]}]}));
        let ctx = env.ctx();
        async move {
            let mut extra = serde_json::Map::new();
            extra.insert("reason".into(), json!("other"));
            r.run_event("SessionEnd", extra, Some("other"), &ctx).await
        }
    });
    for out in futures::future::join_all(runs).await {
        assert_eq!(out.common.errors.len(), 1, "{:?}", out.common.errors);
    }
}
