//! Fixes from a review of the hooks runner, each with real hook scripts in a temp dir:
//! background jobs that hold the hook's pipes, the `{"async": true}` first line, matchers
//! made only of separators and malformed `if` rules.

use std::time::Duration;

use crate::common::{Env, cmd, live_group_members, one, runner, wait_group_gone};
use serde_json::{Map, json};
use tool_core::RuleSource;
use tool_hooks::{HooksConfig, Matcher, ToolCallInfo};

fn bash(command: &str) -> ToolCallInfo {
    ToolCallInfo::new("Bash", json!({"command": command}), "toolu_01")
}

/// Waits up to `secs` seconds for `path` to exist.
async fn appears(path: &std::path::Path, secs: u64) -> bool {
    for _ in 0..secs * 20 {
        if path.exists() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    path.exists()
}

/// Waits (without blocking the runtime, whose tasks do the killing) up to 4 s for a process
/// group to be empty; what is still in it then.
async fn group_gone(pgid: i32) -> Vec<i32> {
    for _ in 0..80 {
        if live_group_members(pgid).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    live_group_members(pgid)
}

fn read_pgid(env: &Env, name: &str) -> i32 {
    env.read(name)
        .trim()
        .parse()
        .expect("the hook wrote its pid")
}

// ----- 1. a background job holding the hook's pipes -----

/// A Stop hook that plays a sound or notifies in the background (`(sleep 1; notify-send …)
/// &`) keeps the hook's stdout/stderr: its outcome is returned without waiting for it, and
/// the job goes on (it was killed 200 ms after the hook exited).
#[tokio::test]
async fn a_background_job_holding_the_pipes_runs_on_after_the_outcome() {
    let env = Env::new();
    let mark = env.path("notified");
    let hook = format!(
        "(sleep 1; touch '{}') & echo '{{\"systemMessage\": \"stopping\"}}'",
        mark.display()
    );
    let r = runner(json!({"Stop": [{"hooks": [cmd(&hook)]}]}));
    let out = tokio::time::timeout(
        Duration::from_secs(4),
        r.run_event("Stop", Map::new(), None, &env.ctx()),
    )
    .await
    .expect("the Stop hook's outcome came back without waiting for its job");
    assert_eq!(out.common.system_messages[0].text, "stopping");
    assert_eq!(out.common.runs.len(), 1);
    assert_eq!(out.common.runs[0].exit_code, Some(0));
    let text = &out.common.errors[0].text;
    assert!(!text.contains("was killed"), "{text}");
    assert!(text.contains("its later output is not used"), "{text}");
    assert!(
        appears(&mark, 3).await,
        "the background job was cut off before it finished"
    );
}

/// A host about to exit waits for such a job as it waits for `async` hooks (it counts among
/// the pending ones): `toolwright run` ending right after the call does not cut the
/// notification off.
#[tokio::test]
async fn a_host_about_to_exit_waits_for_a_job_holding_the_pipes() {
    let env = Env::new();
    let mark = env.path("notified");
    let hook = format!("(sleep 1; touch '{}') &", mark.display());
    let r = runner(json!({"Stop": [{"hooks": [cmd(&hook)]}]}));
    r.run_event("Stop", Map::new(), None, &env.ctx()).await;
    assert_eq!(r.pending_async(), 1);
    tokio::time::timeout(Duration::from_secs(10), r.wait_for_async())
        .await
        .expect("the wait ends when the job closes the pipes");
    assert!(mark.exists(), "the wait ended before the job did");
    assert_eq!(r.pending_async(), 0);
}

/// The job is still bounded: at the hook's timeout its whole group is killed, so nothing
/// runs past it (`"timeout": 2` and a job that would sleep 30 s).
#[tokio::test]
async fn a_background_job_holding_the_pipes_is_killed_at_the_hook_timeout() {
    let env = Env::new();
    let mark = env.path("late");
    let hook = format!(
        "echo $$ > '{}'; (sleep 30; touch '{}') & echo '{{}}'",
        env.path("pid").display(),
        mark.display()
    );
    let r =
        runner(json!({"Stop": [{"hooks": [{"type": "command", "command": hook, "timeout": 2}]}]}));
    let out = r.run_event("Stop", Map::new(), None, &env.ctx()).await;
    assert_eq!(out.common.runs[0].exit_code, Some(0));
    assert!(!out.common.runs[0].timed_out);
    let pgid = read_pgid(&env, "pid");
    assert!(
        !live_group_members(pgid).is_empty(),
        "the job was killed as soon as the hook exited"
    );
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let left = group_gone(pgid).await;
    assert!(left.is_empty(), "still running after the timeout: {left:?}");
    assert!(!mark.exists());
}

/// Cancelling the context (the turn) kills a job left behind, as it kills a running hook.
#[tokio::test]
async fn a_background_job_holding_the_pipes_is_killed_on_cancel() {
    let env = Env::new();
    let hook = format!("echo $$ > '{}'; sleep 30 &", env.path("pid").display());
    let r = runner(one("PreToolUse", "Bash", vec![cmd(&hook)]));
    let ctx = env.ctx();
    let out = r.run_pre_tool_use(&bash("ls"), &ctx).await;
    assert!(!out.common.cancelled);
    let pgid = read_pgid(&env, "pid");
    assert!(!live_group_members(pgid).is_empty());
    ctx.cancellation().cancel();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let left = group_gone(pgid).await;
    assert!(left.is_empty(), "still running after the cancel: {left:?}");
}

/// Dropping the runner (the session ends) kills a job left behind.
#[tokio::test]
async fn a_background_job_holding_the_pipes_is_killed_when_the_runner_goes() {
    let env = Env::new();
    let hook = format!("echo $$ > '{}'; sleep 30 &", env.path("pid").display());
    let r = runner(one("PreToolUse", "Bash", vec![cmd(&hook)]));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(!out.common.cancelled);
    let pgid = read_pgid(&env, "pid");
    assert!(!live_group_members(pgid).is_empty());
    drop(r);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let left = group_gone(pgid).await;
    assert!(
        left.is_empty(),
        "still running after the runner went: {left:?}"
    );
}

/// The runtime shutting down (the binary exiting) kills a job left behind, even when the
/// task that drains it never ran.
#[test]
fn a_background_job_holding_the_pipes_is_killed_when_the_runtime_shuts_down() {
    let env = Env::new();
    let hook = format!(
        "echo $$ > '{}'; sleep 30 & sleep 30 >/dev/null 2>&1 & echo '{{\"async\":true}}'; sleep 30",
        env.path("pid").display()
    );
    for hook in [
        format!("echo $$ > '{}'; sleep 30 &", env.path("pid").display()),
        hook,
    ] {
        let r = runner(one("PreToolUse", "Bash", vec![cmd(&hook)]));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(r.run_pre_tool_use(&bash("ls"), &env.ctx()));
        let pgid = read_pgid(&env, "pid");
        assert!(!live_group_members(pgid).is_empty(), "{hook}");
        drop(rt);
        let left = wait_group_gone(pgid);
        assert!(left.is_empty(), "{hook}: still running: {left:?}");
        drop(r);
    }
}

// ----- 2. the `{"async": true}` first line -----

const DENY: &str = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"late"}}"#;

/// A first stdout line `{"async": true}` backgrounds the hook, as in Claude Code: the call
/// goes on at once, and what it prints later decides nothing (it was waited for, and its
/// two JSON objects read as plain text).
#[tokio::test]
async fn an_async_first_line_backgrounds_the_hook() {
    let env = Env::new();
    let hook = format!(
        "echo $$ > '{}'; echo '{{\"async\":true}}'; sleep 5; echo '{DENY}'",
        env.path("pid").display()
    );
    let r = runner(one("PreToolUse", "Bash", vec![cmd(&hook)]));
    let out = tokio::time::timeout(
        Duration::from_secs(4),
        r.run_pre_tool_use(&bash("ls"), &env.ctx()),
    )
    .await
    .expect("the hook was backgrounded, not waited for");
    assert!(out.decision.is_none(), "{:?}", out.decision);
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    assert!(out.common.blocking_errors.is_empty());
    assert!(out.common.additional_contexts.is_empty());
    assert_eq!(out.common.runs.len(), 1);
    // It goes on in the background.
    let pgid = read_pgid(&env, "pid");
    assert!(!live_group_members(pgid).is_empty());
}

/// Even when the hook has already exited when its output is read, the async form is
/// success with nothing: no deny, no plain-text context.
#[tokio::test]
async fn an_async_first_line_of_a_finished_hook_decides_nothing() {
    let env = Env::new();
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![cmd(&format!("echo '{{\"async\": true}}'; echo '{DENY}'"))],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.decision.is_none(), "{:?}", out.decision);
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
}

/// On SessionStart, whose plain stdout is context, nothing the backgrounded hook prints
/// becomes context.
#[tokio::test]
async fn an_async_first_line_gives_no_session_start_context() {
    let env = Env::new();
    let late =
        r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"late"}}"#;
    let hooks = json!({"SessionStart": [{"hooks": [
        cmd(&format!("echo '{{\"async\":true}}'; sleep 3; echo '{late}'")),
        cmd("echo '{\"async\":true}'; echo 'plain text'"),
    ]}]});
    let r = runner(hooks);
    let mut extra = Map::new();
    extra.insert("source".into(), json!("startup"));
    let out = tokio::time::timeout(
        Duration::from_secs(2),
        r.run_event("SessionStart", extra, Some("startup"), &env.ctx()),
    )
    .await
    .expect("the hooks were backgrounded");
    assert!(
        out.common.additional_contexts.is_empty(),
        "{:?}",
        out.common.additional_contexts
    );
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    assert_eq!(out.common.runs.len(), 2);
    // Nor later.
    tokio::time::sleep(Duration::from_millis(3500)).await;
    assert!(r.take_async_results().is_empty());
}

/// `asyncTimeout` (ms) bounds the backgrounded hook: its group is killed then.
#[tokio::test]
async fn a_backgrounded_hook_is_killed_at_its_async_timeout() {
    let env = Env::new();
    let mark = env.path("late");
    let hook = format!(
        "echo $$ > '{}'; echo '{{\"async\":true,\"asyncTimeout\":1000}}'; sleep 4; touch '{}'",
        env.path("pid").display(),
        mark.display()
    );
    let r = runner(one("PreToolUse", "Bash", vec![cmd(&hook)]));
    let out = tokio::time::timeout(
        Duration::from_secs(3),
        r.run_pre_tool_use(&bash("ls"), &env.ctx()),
    )
    .await
    .expect("backgrounded");
    assert!(out.decision.is_none());
    let pgid = read_pgid(&env, "pid");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let left = group_gone(pgid).await;
    assert!(
        left.is_empty(),
        "still running after asyncTimeout: {left:?}"
    );
    tokio::time::sleep(Duration::from_millis(3000)).await;
    assert!(!mark.exists());
}

/// Without `asyncTimeout`, the hook's own timeout bounds it.
#[tokio::test]
async fn a_backgrounded_hook_is_killed_at_its_timeout() {
    let env = Env::new();
    let hook = format!(
        "echo $$ > '{}'; echo '{{\"async\":true}}'; sleep 30",
        env.path("pid").display()
    );
    let r = runner(one(
        "PreToolUse",
        "Bash",
        vec![json!({"type": "command", "command": hook, "timeout": 1})],
    ));
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    let pgid = read_pgid(&env, "pid");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let left = group_gone(pgid).await;
    assert!(left.is_empty(), "still running after the timeout: {left:?}");
}

/// A first line that is not the async form (another object, `async: false`, text) leaves
/// the hook synchronous.
#[tokio::test]
async fn other_first_lines_keep_the_hook_synchronous() {
    let env = Env::new();
    for first in [r#"{"async":false}"#, r#"{"asyncx":true}"#, "hello"] {
        let r = runner(one(
            "PreToolUse",
            "Bash",
            vec![cmd(&format!(
                "echo '{first}'; sleep 0.3; echo 'second' >&2; exit 2"
            ))],
        ));
        let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
        let d = out.decision.expect(first);
        assert!(d.message.contains("second"), "{first}: {}", d.message);
    }
}

// ----- 4. a matcher of separators only -----

/// `"|"`, `","`, `" , "` name no tool: they match nothing (they matched every tool). Only
/// `"*"`, `""` or no matcher match everything (not `" * "`).
#[tokio::test]
async fn a_matcher_of_separators_only_matches_nothing() {
    for m in ["|", ",", " , ", "||", "| ,"] {
        let parsed = Matcher::parse(Some(m)).unwrap();
        assert!(!parsed.is_match("Bash"), "{m:?} matched Bash");
        assert!(!parsed.is_match(""), "{m:?} matched the empty value");
        let env = Env::new();
        let r = runner(one(
            "PreToolUse",
            m,
            vec![cmd(&format!("touch '{}'", env.path("ran").display()))],
        ));
        assert!(!r.has_hooks("PreToolUse", Some("Bash")), "{m:?}");
        r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
        assert!(!env.path("ran").exists(), "{m:?}: the hook ran");
    }
    for all in [None, Some(""), Some("*")] {
        assert!(Matcher::parse(all).unwrap().is_match("Bash"), "{all:?}");
    }
    // As written, as Claude Code tests it: `" * "` is a regex that needs a space.
    assert!(!Matcher::parse(Some(" * ")).unwrap().is_match("Bash"));
}

/// A hook there for a tool by name is told from a catch-all: a host counting on a hook to
/// answer for ExitPlanMode must not count a `*` PermissionRequest hook that approves
/// `npm test` (the agent then let plan mode in, and nothing could leave it).
#[test]
fn a_hook_naming_a_tool_is_told_from_a_catch_all() {
    for (matcher, naming) in [
        ("ExitPlanMode", true),
        ("Exit.*", true),
        ("Bash|ExitPlanMode", true),
        ("*", false),
        ("", false),
        (".*", false),
        ("Bash", false),
    ] {
        let r = runner(one("PermissionRequest", matcher, vec![cmd("true")]));
        assert_eq!(
            r.has_hooks_naming("PermissionRequest", "ExitPlanMode"),
            naming,
            "{matcher:?}"
        );
    }
}

// ----- 5. a malformed `if` rule -----

/// A malformed `if` (unbalanced parentheses, no tool name) still never runs, as in Claude
/// Code, but it is reported when the configuration is loaded, naming the event and the rule.
#[tokio::test]
async fn a_malformed_if_rule_is_reported_and_never_runs() {
    let env = Env::new();
    let ran = env.path("ran");
    let touch = format!("touch '{}'", ran.display());
    let hooks = json!({
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": touch, "if": "Bash(git *"},
            {"type": "command", "command": touch.clone() + " ", "if": "(git *)"},
            {"type": "command", "command": "true", "if": "Bash(git *)"},
        ]}],
        "PostToolUse": [{"hooks": [
            {"type": "command", "command": "true", "if": "Edit)"},
        ]}],
    });
    let (config, diags) = HooksConfig::from_hooks_value(&hooks, RuleSource::ProjectSettings);
    let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert_eq!(diags.len(), 3, "{text:#?}");
    let has = |loc: &str, needles: &[&str]| {
        diags.iter().any(|d| {
            d.location == loc
                && needles
                    .iter()
                    .all(|n| d.message.contains(n) || d.to_string().contains(n))
        })
    };
    assert!(
        has(
            "hooks.PreToolUse[0].hooks[0].if",
            &["PreToolUse", "Bash(git *", "never runs"]
        ),
        "{text:#?}"
    );
    assert!(
        has(
            "hooks.PreToolUse[0].hooks[1].if",
            &["PreToolUse", "(git *)"]
        ),
        "{text:#?}"
    );
    assert!(
        has(
            "hooks.PostToolUse[0].hooks[0].if",
            &["PostToolUse", "Edit)"]
        ),
        "{text:#?}"
    );
    // The hooks stay configured, and never run.
    let r = tool_hooks::HookRunner::new(config);
    let out = r.run_pre_tool_use(&bash("git status"), &env.ctx()).await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    assert!(!ran.exists());
}

/// An `if` on an event that sees no tool call (Stop, UserPromptSubmit, SessionStart, …)
/// never lets its hook run, as in Claude Code: said when the configuration is loaded,
/// naming the event and the rule (the hook was silently never run), as a hook that never
/// runs (`NotRun`). The hook stays configured and does not run; the same `if` on a tool
/// event is no problem.
#[tokio::test]
async fn an_if_on_an_event_without_tool_calls_is_reported() {
    let env = Env::new();
    let ran = env.path("ran");
    let touch = format!("touch '{}'", ran.display());
    let hooks = json!({
        "SessionStart": [{"hooks": [{"type": "command", "command": touch, "if": "Bash(git *)"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "true", "if": "Bash(git *)"},
        ]}],
    });
    let (config, diags) = HooksConfig::from_hooks_value(&hooks, RuleSource::ProjectSettings);
    let text: Vec<String> = diags.iter().map(ToString::to_string).collect();
    assert_eq!(diags.len(), 1, "{text:#?}");
    let d = &diags[0];
    assert_eq!(d.location, "hooks.SessionStart[0].hooks[0].if", "{text:#?}");
    assert_eq!(d.kind, tool_hooks::DiagnosticKind::NotRun, "{text:#?}");
    for needle in [
        "SessionStart",
        "Bash(git *)",
        "tool events only",
        "never runs",
    ] {
        assert!(d.to_string().contains(needle), "{needle}: {text:#?}");
    }
    let r = tool_hooks::HookRunner::new(config);
    r.run_event("SessionStart", Map::new(), Some("startup"), &env.ctx())
        .await;
    assert!(!ran.exists());
}

/// Each diagnostic says whether the configuration is wrong (`Invalid`: a host may refuse to
/// start, as `--settings` does) or read and, by design, not run (`NotRun`: a handler type
/// this layer does not run, a malformed `if`, an http URL the policy keeps out, a setting
/// only managed settings may give).
#[test]
fn diagnostics_tell_a_broken_configuration_from_one_not_run_by_design() {
    use tool_hooks::{DiagnosticKind, SettingsFile};
    let hooks = json!({
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [
                {"type": "prompt", "prompt": "is this safe?"},
                {"type": "agent", "prompt": "check"},
                {"type": "mcp_tool", "server": "s", "tool": "t"},
                {"type": "command", "command": "true", "if": "Bash(git *"},
                {"type": "http", "url": "https://elsewhere.example.org/hook"},
                {"type": "webhook", "url": "https://x"},
                {"type": "command"},
                {"type": 3},
            ]},
            {"matcher": "(", "hooks": [{"type": "command", "command": "true"}]},
        ],
        "NoSuchEvent": [],
    });
    let files = [SettingsFile {
        source: RuleSource::ProjectSettings,
        path: None,
        value: json!({
            "hooks": hooks,
            "allowedHttpHookUrls": ["https://hooks.example.com/*"],
            "allowManagedHooksOnly": true,
        }),
    }];
    let (_, diags) = HooksConfig::from_settings(&files);
    let kind_at = |loc: &str| {
        let found: Vec<DiagnosticKind> = diags
            .iter()
            .filter(|d| d.location == loc)
            .map(|d| d.kind)
            .collect();
        assert_eq!(found.len(), 1, "{loc}: {diags:#?}");
        found[0]
    };
    // A guard of a type this layer does not run (`prompt`, `agent`, `mcp_tool` on
    // PreToolUse) is no guard dropped by design: it refuses what it would see, as a broken
    // one does (found by review 36: the calls it guarded ran unguarded).
    let not_run = [
        "hooks.PreToolUse[0].hooks[3].if",
        "hooks.PreToolUse[0].hooks[4]",
        "allowManagedHooksOnly",
    ];
    let invalid = [
        "hooks.PreToolUse[0].hooks[0]",
        "hooks.PreToolUse[0].hooks[1]",
        "hooks.PreToolUse[0].hooks[2]",
        "hooks.PreToolUse[0].hooks[5]",
        "hooks.PreToolUse[0].hooks[6]",
        "hooks.PreToolUse[0].hooks[7]",
        "hooks.PreToolUse[1].matcher",
        "hooks.NoSuchEvent",
    ];
    for loc in not_run {
        assert_eq!(kind_at(loc), DiagnosticKind::NotRun, "{loc}");
    }
    for loc in invalid {
        assert_eq!(kind_at(loc), DiagnosticKind::Invalid, "{loc}");
    }
    assert_eq!(diags.len(), not_run.len() + invalid.len(), "{diags:#?}");
}
