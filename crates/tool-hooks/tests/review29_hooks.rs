//! Review 29's hooks findings, each with real hook scripts in a temp dir: a guard with one
//! wrongly typed field is never dropped unsaid (a cosmetic field is ignored, a field with a
//! safe reading is read that way, and a guard that cannot be run as written refuses the
//! calls it would see), a later PermissionRequest hook's `interrupt` stops the turn, and
//! PostToolUseFailure's `error` is middle-truncated once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, cmd, one, runner};
use serde_json::{Value, json};
use tool_hooks::{
    LoadedHooks, PermissionDecision, PermissionRequestVerdict, SettingsPaths, ToolCallInfo,
    load_hooks,
};

fn bash(command: &str) -> ToolCallInfo {
    ToolCallInfo::new("Bash", json!({"command": command}), "toolu_01")
}

fn read(path: &str) -> ToolCallInfo {
    ToolCallInfo::new("Read", json!({"file_path": path}), "toolu_02")
}

/// Loads `hooks` from the user's settings file (`user/settings.json`), beside an allow rule
/// for the command the tests run, as the review's settings had it.
fn user_settings(env: &Env, hooks: Value) -> LoadedHooks {
    let dir = env.path("user");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({"permissions": {"allow": ["Bash(echo *)"]}, "hooks": hooks});
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    load_hooks(&SettingsPaths {
        user_config_dir: Some(dir),
        ..SettingsPaths::default()
    })
}

/// The diagnostics of `loaded`, as a host shows them.
fn shown(loaded: &LoadedHooks) -> Vec<String> {
    loaded.diagnostics.iter().map(ToString::to_string).collect()
}

/// A guard that blocks every call it sees, and leaves `marker` behind when it runs.
fn guard(env: &Env, marker: &str) -> Value {
    let marker = env.path(marker);
    json!({"type": "command", "command": format!(
        "touch '{}'; echo '{{\"decision\":\"block\",\"reason\":\"GUARD\"}}'",
        marker.display()
    )})
}

/// The guard with `field` set to `value`, in a PreToolUse group for Bash.
fn guard_with(env: &Env, marker: &str, field: &str, value: Value) -> Value {
    let mut handler = guard(env, marker);
    handler[field] = value;
    json!({"PreToolUse": [{"matcher": "Bash", "hooks": [handler]}]})
}

/// The review's case: a guard whose `statusMessage` is a number was dropped whole, so the
/// call it blocks ran, and the warning did not say the hook was dropped. A field that only
/// changes what the user is shown is ignored, the guard runs and blocks, and the warning
/// says the field is ignored.
#[tokio::test]
async fn a_guard_with_a_wrongly_typed_status_message_still_blocks() {
    let env = Env::new();
    let loaded = user_settings(&env, guard_with(&env, "ran", "statusMessage", json!(5)));
    let diags = shown(&loaded);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        diags[0].contains("`statusMessage` must be a string, got 5; ignored"),
        "{diags:?}"
    );
    let r = tool_hooks::HookRunner::new(loaded.config);
    let out = r.run_pre_tool_use(&bash("echo hi"), &env.ctx()).await;
    let decision = out.decision.expect("the guard ran");
    assert_eq!(decision.behavior, PermissionDecision::Deny);
    assert_eq!(decision.message, "GUARD");
    assert!(env.path("ran").exists());
}

/// A wrongly typed `timeout`, `async`, `asyncRewake`, `onFailure` or `if` no longer drops
/// the guard: each is read the safe way (the event's default timeout; in the foreground, so
/// the hook's answer counts; a failure that blocks; for every call the matcher selects), the
/// guard runs and blocks, and the warning says how the field was read.
#[tokio::test]
async fn fields_with_a_safe_reading_are_read_that_way_and_the_guard_runs() {
    let env = Env::new();
    let cases = [
        (
            "timeout",
            json!("30"),
            "; ignored: the hook runs with the default timeout",
        ),
        ("async", json!("no"), "; read as false"),
        ("asyncRewake", json!("no"), "; read as false"),
        ("onFailure", json!("deny"), "; read as \"block\""),
        (
            "if",
            json!(5),
            "; ignored: the hook runs for every call its matcher selects",
        ),
    ];
    for (i, (field, value, said)) in cases.into_iter().enumerate() {
        let marker = format!("ran-{i}");
        let loaded = user_settings(&env, guard_with(&env, &marker, field, value.clone()));
        let diags = shown(&loaded);
        assert_eq!(diags.len(), 1, "{field}: {diags:?}");
        assert!(
            diags[0].contains(&format!("`{field}` must be")) && diags[0].contains(said),
            "{field}: {diags:?}"
        );
        let r = tool_hooks::HookRunner::new(loaded.config);
        let out = r.run_pre_tool_use(&bash("echo hi"), &env.ctx()).await;
        let decision = out
            .decision
            .unwrap_or_else(|| panic!("{field}: no decision"));
        assert_eq!(decision.behavior, PermissionDecision::Deny, "{field}");
        assert_eq!(decision.message, "GUARD", "{field}");
        assert!(env.path(&marker).exists(), "{field}: the guard did not run");
    }

    // `onFailure` that is neither "continue" nor "block" is read as "block": a guard that
    // fails refuses the call.
    let failing = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo broken >&2; exit 1", "onFailure": "deny"}
    ]}]});
    let loaded = user_settings(&env, failing);
    let r = tool_hooks::HookRunner::new(loaded.config);
    let out = r.run_pre_tool_use(&bash("echo hi"), &env.ctx()).await;
    let decision = out.decision.expect("the failure blocks");
    assert_eq!(decision.behavior, PermissionDecision::Deny);
    assert!(decision.message.contains("broken"), "{}", decision.message);

    // An `if` that cannot be read makes the hook a guard that never approves: its allow
    // (meant for the calls its `if` named) is no decision.
    let approver = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "if": 5, "command":
            "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'"}
    ]}]});
    let loaded = user_settings(&env, approver);
    let r = tool_hooks::HookRunner::new(loaded.config);
    let out = r.run_pre_tool_use(&bash("rm -rf x"), &env.ctx()).await;
    assert!(out.decision.is_none(), "{:?}", out.decision);
}

/// A guard that cannot be run as written (a `shell` that is not "bash" or "powershell",
/// `args` that are no array, an empty `command`, an unknown `type`, a group whose `hooks`
/// is no array) is not run, and the warning says so ("; handler skipped" / "; group
/// skipped": the hook will not run); on PreToolUse and PermissionRequest it stays in its
/// place and refuses the calls its matcher selects, naming the problem, until it is fixed:
/// a guard dropped unsaid let the call it blocks run. On other events it is skipped.
#[tokio::test]
async fn a_guard_that_cannot_be_run_as_written_refuses_the_calls_it_would_see() {
    let env = Env::new();
    let with = |marker: &str, field: &str, value: Value| {
        let mut h = guard(&env, marker);
        h[field] = value;
        h
    };
    let cases: Vec<(&str, Value, &str, &str)> = vec![
        (
            "shell",
            json!([with("m-shell", "shell", json!("zsh"))]),
            "`shell` must be \"bash\" or \"powershell\", got \"zsh\"",
            "; handler skipped",
        ),
        (
            "args",
            json!([with("m-args", "args", json!("x"))]),
            "`args` must be an array of strings, got \"x\"",
            "; handler skipped",
        ),
        (
            "command",
            json!([{"type": "command", "command": ""}]),
            "a command hook needs a non-empty `command` string",
            "; handler skipped",
        ),
        (
            "type",
            json!([with("m-type", "type", json!("comand"))]),
            "unknown hook type \"comand\"",
            "; handler skipped",
        ),
        (
            "hooks null",
            Value::Null,
            "a matcher group needs a `hooks` array, got null",
            "; group skipped",
        ),
        (
            "hooks object",
            guard(&env, "m-object"),
            "a matcher group needs a `hooks` array, got an object",
            "; group skipped",
        ),
    ];
    for (what, hooks, problem, tail) in cases {
        let group = |event: &str| json!({event: [{"matcher": "Bash", "hooks": hooks.clone()}]});
        let loaded = user_settings(&env, group("PreToolUse"));
        let diags = shown(&loaded);
        assert_eq!(diags.len(), 1, "{what}: {diags:?}");
        assert!(
            diags[0].contains(&format!("{problem}{tail}: ")) && diags[0].contains("will not run"),
            "{what}: {diags:?}"
        );
        assert!(diags[0].contains("refused"), "{what}: {diags:?}");
        let r = tool_hooks::HookRunner::new(loaded.config);
        let out = r.run_pre_tool_use(&bash("echo hi"), &env.ctx()).await;
        let decision = out
            .decision
            .unwrap_or_else(|| panic!("{what}: the call is not refused"));
        assert_eq!(decision.behavior, PermissionDecision::Deny, "{what}");
        assert!(
            decision
                .message
                .starts_with("PreToolUse:Bash hook error: [")
                && decision
                    .message
                    .contains("settings.json (hooks.PreToolUse[0]")
                && decision
                    .message
                    .contains("cannot be read, so the call is refused")
                && decision.message.contains(problem),
            "{what}: {}",
            decision.message
        );
        // Only what the matcher selects.
        let other = r.run_pre_tool_use(&read("/tmp/x"), &env.ctx()).await;
        assert!(other.decision.is_none(), "{what}: {:?}", other.decision);

        // A PermissionRequest guard refuses in the same way.
        let loaded = user_settings(&env, group("PermissionRequest"));
        let r = tool_hooks::HookRunner::new(loaded.config);
        let out = r
            .run_permission_request(&bash("echo hi"), &[], &env.ctx())
            .await;
        match out.verdict {
            Some(PermissionRequestVerdict::Deny { message, .. }) => assert!(
                message.starts_with("Permission to use Bash denied: [")
                    && message.contains(problem),
                "{what}: {message}"
            ),
            other => panic!("{what}: {other:?}"),
        }

        // Elsewhere it is skipped, and said to be.
        let loaded = user_settings(&env, group("PostToolUse"));
        let diags = shown(&loaded);
        assert!(
            diags.len() == 1
                && diags[0].contains(&format!("{problem}{tail}: "))
                && diags[0].contains("will not run")
                && !diags[0].contains("refused"),
            "{what}: {diags:?}"
        );
        assert!(loaded.config.is_empty(), "{what}");
    }
    // No command ran.
    for marker in ["m-shell", "m-args", "m-type", "m-object"] {
        assert!(!env.path(marker).exists(), "{marker}");
    }

    // An `async` hook decides nothing, so one that cannot be run refuses nothing either.
    let loaded = user_settings(
        &env,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": " ", "async": true}
        ]}]}),
    );
    let diags = shown(&loaded);
    assert!(
        diags.len() == 1 && diags[0].contains("; handler skipped: the hook will not run"),
        "{diags:?}"
    );
    assert!(loaded.config.is_empty());
}

/// Every message of a load that goes on says what was left out, including the ones that
/// did not: an event whose value is no array, a matcher group that is no object.
#[test]
fn every_skipping_message_says_what_was_left_out() {
    let env = Env::new();
    let loaded = user_settings(
        &env,
        json!({"PostToolUse": {"matcher": "x"}, "Stop": ["nope"]}),
    );
    let diags = shown(&loaded);
    assert_eq!(diags.len(), 2, "{diags:?}");
    assert!(
        diags
            .iter()
            .any(|d| d.contains("(hooks.PostToolUse)") && d.contains("; skipped")),
        "{diags:?}"
    );
    assert!(
        diags
            .iter()
            .any(|d| d.contains("(hooks.Stop[0])") && d.contains("; group skipped")),
        "{diags:?}"
    );
}

/// Given by `--settings`, the same problems stop the command: what says so names the
/// problem without the tail of a load that goes on (no "ignored", "read as", "skipped").
#[test]
fn command_line_errors_name_the_problem_alone() {
    let hooks = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "true", "statusMessage": 5},
        {"type": "command", "command": "true", "onFailure": "deny"},
        {"type": "command", "command": "true", "shell": "zsh"},
    ]}]}});
    let loaded = load_hooks(&SettingsPaths {
        flag_settings: vec![hooks.to_string()],
        ..SettingsPaths::default()
    });
    let errors = loaded.command_line_errors();
    assert_eq!(errors.len(), 3, "{errors:?}");
    for e in &errors {
        assert!(
            !e.contains("ignored")
                && !e.contains("read as")
                && !e.contains("skipped")
                && !e.contains("refused"),
            "{e}"
        );
    }
    assert!(
        errors[0].ends_with("`statusMessage` must be a string, got 5"),
        "{errors:?}"
    );
    assert!(
        errors[2].ends_with("`shell` must be \"bash\" or \"powershell\", got \"zsh\""),
        "{errors:?}"
    );
}

/// Two PermissionRequest hooks deny; only the second says `interrupt`. The first one's
/// message is the result, and the turn still stops: any denying hook's interrupt does (it
/// was ignored when an earlier hook also denied).
#[tokio::test]
async fn a_later_denying_hooks_interrupt_stops_the_turn() {
    let env = Env::new();
    let deny = |message: &str, interrupt: bool| {
        let mut decision = json!({"behavior": "deny", "message": message});
        if interrupt {
            decision["interrupt"] = json!(true);
        }
        let out = json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest", "decision": decision}});
        cmd(&format!("echo '{out}'"))
    };
    let r = runner(one(
        "PermissionRequest",
        "Bash",
        vec![deny("FIRST", false), deny("SECOND", true)],
    ));
    let out = r
        .run_permission_request(&bash("echo hi"), &[], &env.ctx())
        .await;
    match out.verdict {
        Some(PermissionRequestVerdict::Deny {
            message, interrupt, ..
        }) => {
            assert_eq!(message, "FIRST");
            assert!(interrupt, "the second hook's interrupt was lost");
        }
        other => panic!("{other:?}"),
    }
    // Neither interrupting: no interrupt.
    let r = runner(one(
        "PermissionRequest",
        "Bash",
        vec![deny("FIRST", false), deny("SECOND", false)],
    ));
    let out = r
        .run_permission_request(&bash("echo hi"), &[], &env.ctx())
        .await;
    assert!(
        matches!(
            out.verdict,
            Some(PermissionRequestVerdict::Deny {
                interrupt: false,
                ..
            })
        ),
        "{:?}",
        out.verdict
    );
}

/// PostToolUseFailure's `error` is the text the model saw, middle-truncated once: given
/// that text (already cut, with its `[N characters truncated]` line) the hook gets it as
/// it is, not cut again to a `[40 characters truncated]` that hides the real count; given
/// the full text, the hook gets the same cut.
#[tokio::test]
async fn post_tool_use_failure_error_is_truncated_once() {
    let env = Env::new();
    let log = env.path("failure.json");
    let r = runner(one(
        "PostToolUseFailure",
        "Bash",
        vec![cmd(&format!("cat > '{}'", log.display()))],
    ));
    let full = format!("Exit code 3\n{}{}", "a".repeat(15_000), "z".repeat(15_000));
    let model_text = tool_core::truncate_middle(&full, tool_core::MAX_ERROR_CHARS);
    let cut = full.chars().count() - tool_core::MAX_ERROR_CHARS;
    assert!(model_text.contains(&format!("[{cut} characters truncated]")));
    for given in [&model_text, &full] {
        std::fs::remove_file(&log).ok();
        r.run_post_tool_use_failure(&bash("x"), given, false, &env.ctx())
            .await;
        let input: Value = serde_json::from_str(&env.read("failure.json")).unwrap();
        let error = input["error"].as_str().unwrap();
        let marker = |t: &str| {
            t.lines()
                .find(|l| l.contains("characters truncated"))
                .map(str::to_owned)
        };
        assert!(
            error == model_text,
            "given {} chars, the hook got {} chars, marked {:?}",
            given.len(),
            error.len(),
            marker(error)
        );
    }
}
