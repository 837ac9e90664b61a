//! Review 29's hooks findings, each with real hook scripts in a temp dir: a guard with one
//! wrongly typed field is never dropped unsaid (a cosmetic field is ignored, a field with a
//! safe reading is read that way, and a guard that cannot be run as written refuses the
//! calls it would see), a later PermissionRequest hook's `interrupt` stops the turn, and
//! PostToolUseFailure's `error` is middle-truncated once.

use crate::common::{Env, cmd, one, runner};
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

// ----- Review of the fixes above -----

/// What `--settings` (inline JSON holding `hooks`) gives, loaded with nothing else.
fn flag_settings(settings: Value) -> LoadedHooks {
    load_hooks(&SettingsPaths {
        flag_settings: vec![settings.to_string()],
        ..SettingsPaths::default()
    })
}

/// An http PreToolUse guard whose `url` cannot be used (empty, no URL, no scheme, a scheme
/// other than http or https, no host) refused nothing: nothing was said at load, and at
/// call time the request failed (`builder error`) as a non-blocking error, so the call ran.
/// Such a URL is checked at load: the warning says what is wrong and that the calls the
/// guard would see are refused, and they are; on another event the hook is skipped, and
/// given by `--settings` it stops the command.
#[tokio::test]
async fn an_http_guard_whose_url_cannot_be_used_refuses_the_calls_it_would_see() {
    let env = Env::new();
    for url in [
        "",
        "not a url",
        "localhost:8080/hook",
        "ftp://127.0.0.1/x",
        "http://",
    ] {
        let hooks = |event: &str| json!({event: [{"matcher": "Bash", "hooks": [{"type": "http", "url": url}]}]});
        let loaded = user_settings(&env, hooks("PreToolUse"));
        let diags = shown(&loaded);
        assert_eq!(diags.len(), 1, "{url:?}: {diags:?}");
        assert!(
            diags[0].contains("(hooks.PreToolUse[0].hooks[0])")
                && diags[0].contains("`url` must be an http:// or https:// URL with a host")
                && diags[0].contains("refused"),
            "{url:?}: {diags:?}"
        );
        let r = tool_hooks::HookRunner::new(loaded.config);
        let out = r.run_pre_tool_use(&bash("echo hi"), &env.ctx()).await;
        let decision = out
            .decision
            .unwrap_or_else(|| panic!("{url:?}: the call is not refused"));
        assert_eq!(decision.behavior, PermissionDecision::Deny, "{url:?}");
        assert!(
            decision
                .message
                .contains("cannot be read, so the call is refused")
                && decision.message.contains("`url` must be"),
            "{url:?}: {}",
            decision.message
        );
        assert!(out.common.errors.is_empty(), "{url:?}: {:?}", out.common);

        let loaded = user_settings(&env, hooks("PostToolUse"));
        let diags = shown(&loaded);
        assert!(
            diags.len() == 1 && diags[0].contains("`url` must be") && !diags[0].contains("refused"),
            "{url:?}: {diags:?}"
        );
        assert!(loaded.config.is_empty(), "{url:?}");

        let errors = flag_settings(json!({"hooks": hooks("PreToolUse")})).command_line_errors();
        assert!(
            errors.len() == 1
                && errors[0].starts_with("--settings (hooks.PreToolUse[0].hooks[0]): ")
                && errors[0].contains("`url` must be")
                && !errors[0].contains("refused")
                && !errors[0].contains("skipped"),
            "{url:?}: {errors:?}"
        );
    }
    // A usable URL is no problem.
    let loaded = user_settings(
        &env,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "http", "url": "http://127.0.0.1:9/hook"},
            {"type": "http", "url": "https://hooks.example.com/a?key=x"}
        ]}]}),
    );
    assert!(loaded.diagnostics.is_empty(), "{:?}", shown(&loaded));
}

/// On PreToolUse and PermissionRequest, a group whose `matcher` cannot be read (not a
/// string, not a valid regular expression) was skipped, its guard dropped, while a group
/// with no `hooks` at all refused every call its matcher selected. Now the unreadable
/// matcher's hooks refuse every call (which calls they would see is unknown), each within
/// its `if` when that is a rule, and the warning says so; the hook itself never runs. A
/// group with no `hooks` has nothing to run: it is reported and refuses nothing. On other
/// events an unreadable matcher's group is skipped, as before.
#[tokio::test]
async fn a_guard_group_whose_matcher_cannot_be_read_refuses_every_call() {
    let env = Env::new();
    for (i, matcher) in [json!(5), json!("(bad"), json!(["Bash"])]
        .into_iter()
        .enumerate()
    {
        let marker = format!("m-matcher-{i}");
        let group =
            |event: &str| json!({event: [{"matcher": matcher, "hooks": [guard(&env, &marker)]}]});
        let loaded = user_settings(&env, group("PreToolUse"));
        let diags = shown(&loaded);
        assert_eq!(diags.len(), 1, "{matcher}: {diags:?}");
        assert!(
            diags[0].contains("(hooks.PreToolUse[0].matcher)")
                && diags[0].contains("; group skipped: its hooks will not run")
                && diags[0].contains("every call")
                && diags[0].contains("refused"),
            "{matcher}: {diags:?}"
        );
        let r = tool_hooks::HookRunner::new(loaded.config);
        for call in [bash("echo hi"), read("/tmp/x")] {
            let out = r.run_pre_tool_use(&call, &env.ctx()).await;
            let decision = out
                .decision
                .unwrap_or_else(|| panic!("{matcher}: {} is not refused", call.tool_name));
            assert_eq!(decision.behavior, PermissionDecision::Deny, "{matcher}");
            assert!(
                decision
                    .message
                    .contains("cannot be read, so the call is refused")
                    && decision.message.contains("matcher"),
                "{matcher}: {}",
                decision.message
            );
        }
        let loaded = user_settings(&env, group("PermissionRequest"));
        let r = tool_hooks::HookRunner::new(loaded.config);
        let out = r
            .run_permission_request(&read("/tmp/x"), &[], &env.ctx())
            .await;
        assert!(
            matches!(&out.verdict, Some(PermissionRequestVerdict::Deny { message, .. })
                if message.starts_with("Permission to use Read denied: [")),
            "{matcher}: {:?}",
            out.verdict
        );
        // Elsewhere the group is skipped and said to be.
        let loaded = user_settings(&env, group("PostToolUse"));
        let diags = shown(&loaded);
        assert!(
            diags.len() == 1
                && diags[0].contains("; group skipped")
                && !diags[0].contains("refused"),
            "{matcher}: {diags:?}"
        );
        assert!(loaded.config.is_empty());
        assert!(!env.path(&marker).exists(), "{matcher}: the guard ran");
    }

    // A handler's `if` still limits what it refuses; an `async` one refuses nothing.
    let mut limited = guard(&env, "m-limited");
    limited["if"] = json!("Bash(rm *)");
    let loaded = user_settings(
        &env,
        json!({"PreToolUse": [{"matcher": "(", "hooks": [
            limited,
            {"type": "command", "command": "true", "async": true}
        ]}]}),
    );
    let r = tool_hooks::HookRunner::new(loaded.config);
    let out = r.run_pre_tool_use(&bash("echo hi"), &env.ctx()).await;
    assert!(out.decision.is_none(), "{:?}", out.decision);
    let out = r.run_pre_tool_use(&bash("rm -rf x"), &env.ctx()).await;
    assert_eq!(
        out.decision.map(|d| d.behavior),
        Some(PermissionDecision::Deny)
    );

    // A group with no `hooks` has nothing to run: reported, and nothing is refused.
    for event in ["PreToolUse", "PermissionRequest"] {
        let loaded = user_settings(&env, json!({event: [{"matcher": "Bash"}]}));
        let diags = shown(&loaded);
        assert!(
            diags.len() == 1
                && diags[0].contains(&format!("(hooks.{event}[0].hooks)"))
                && diags[0].contains("; group skipped")
                && !diags[0].contains("refused"),
            "{event}: {diags:?}"
        );
        assert!(loaded.config.is_empty(), "{event}");
        let r = tool_hooks::HookRunner::new(loaded.config);
        let out = r.run_pre_tool_use(&bash("echo hi"), &env.ctx()).await;
        assert!(out.decision.is_none(), "{event}: {:?}", out.decision);
        let out = r
            .run_permission_request(&bash("echo hi"), &[], &env.ctx())
            .await;
        assert!(out.verdict.is_none(), "{event}: {:?}", out.verdict);
    }
}

/// An `if` whose tool name no tool can have disabled its guard with no word: `*` (a
/// wildcard: an `if` names one tool), `mcp__srv` (a server, not a tool), `mcp__srv__*`.
/// Each is reported at load, naming the file and the `if`'s location. A tool name that
/// differs from the call's tool only in case (`bash(touch *)` for a Bash call) is said when
/// the call comes and the hook does not run for it (tool-hooks has no list of tool names
/// to check it against at load), once per runner. Valid names are not reported.
#[tokio::test]
async fn an_if_that_can_name_no_tool_is_reported() {
    let env = Env::new();
    for rule in ["*", "mcp__srv", "mcp__srv__*", "mcp__srv__"] {
        let mut h = guard(&env, "m-if");
        h["if"] = json!(rule);
        let loaded = user_settings(
            &env,
            json!({"PreToolUse": [{"matcher": "*", "hooks": [h]}]}),
        );
        let diags = shown(&loaded);
        assert!(
            diags.len() == 1
                && diags[0].contains("settings.json (hooks.PreToolUse[0].hooks[0].if)")
                && diags[0].contains(&format!("{rule:?}"))
                && diags[0].contains("never runs"),
            "{rule}: {diags:?}"
        );
    }
    for rule in ["Bash(touch *)", "mcp__srv__tool", "Task", "Read(*.env)"] {
        let mut h = guard(&env, "m-if");
        h["if"] = json!(rule);
        let loaded = user_settings(
            &env,
            json!({"PreToolUse": [{"matcher": "*", "hooks": [h]}]}),
        );
        assert!(
            loaded.diagnostics.is_empty(),
            "{rule}: {:?}",
            shown(&loaded)
        );
    }

    // The case slip, when the call comes.
    let mut h = guard(&env, "m-case");
    h["if"] = json!("bash(touch *)");
    let loaded = user_settings(
        &env,
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [h]}]}),
    );
    let r = tool_hooks::HookRunner::new(loaded.config);
    let out = r.run_pre_tool_use(&bash("touch x"), &env.ctx()).await;
    assert!(out.decision.is_none(), "{:?}", out.decision);
    assert!(!env.path("m-case").exists());
    let said: Vec<String> = out.common.errors.iter().map(ToString::to_string).collect();
    assert!(
        said.len() == 1
            && said[0].contains("\"bash(touch *)\"")
            && said[0].contains("`Bash`")
            && said[0].contains("settings.json (hooks.PreToolUse[0].hooks[0].if)"),
        "{said:?}"
    );
    let again = r.run_pre_tool_use(&bash("touch y"), &env.ctx()).await;
    assert!(again.common.errors.is_empty(), "{:?}", again.common.errors);
    // Said of no call whose tool the `if` does name.
    let mut h = guard(&env, "m-case2");
    h["if"] = json!("Bash(touch *)");
    let loaded = user_settings(
        &env,
        json!({"PreToolUse": [{"matcher": "*", "hooks": [h]}]}),
    );
    let r = tool_hooks::HookRunner::new(loaded.config);
    let out = r.run_pre_tool_use(&bash("ls"), &env.ctx()).await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
    let out = r.run_pre_tool_use(&read("/x"), &env.ctx()).await;
    assert!(out.common.errors.is_empty(), "{:?}", out.common.errors);
}

/// An `if` that is no valid rule, given by `--settings`, only got a "never runs" note while
/// the command went on without the guard it was given; it stops the command now, worded
/// without that tail, as the other hook errors `--settings` gives. In a settings file it is
/// still a note of a load that goes on.
#[test]
fn an_invalid_if_given_by_settings_stops_the_command() {
    let env = Env::new();
    let mut h = guard(&env, "m");
    h["if"] = json!("Bash(touch *");
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [h]}]});
    let errors = flag_settings(json!({"hooks": hooks})).command_line_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("--settings (hooks.PreToolUse[0].hooks[0].if): ")
            && errors[0].contains("\"Bash(touch *\" is not a valid permission rule")
            && !errors[0].contains("never runs"),
        "{errors:?}"
    );
    let loaded = user_settings(&env, hooks);
    assert!(loaded.command_line_errors().is_empty());
    let diags = shown(&loaded);
    assert!(
        diags.len() == 1 && diags[0].ends_with("; the hook never runs"),
        "{diags:?}"
    );
}

/// `Diagnostic::stopping_the_command` cut at the last of the tails' marks anywhere in the
/// message, so a value quoted from the settings holding one (`; skipped`) lost what came
/// after it: a warning has no tail and kept only `the matcher "Bash`. The tail is recorded
/// when it is added, and only it is cut.
#[test]
fn stopping_the_command_cuts_only_the_tail_the_loader_added() {
    let env = Env::new();
    let loaded = user_settings(
        &env,
        json!({"PreToolUse": [{"matcher": "Bash; skipped\n", "hooks": [{"type": "command", "command": "true"}]}]}),
    );
    assert_eq!(loaded.diagnostics.len(), 1, "{:?}", shown(&loaded));
    let d = &loaded.diagnostics[0];
    assert_eq!(d.stopping_the_command(), d.to_string());

    let errors = flag_settings(
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "true", "if": "Bash(x; skipped"},
            {"type": "x; ignored", "command": "true"},
        ]}]}}),
    )
    .command_line_errors();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].contains("\"Bash(x; skipped\" is not a valid permission rule ("),
        "{errors:?}"
    );
    assert!(
        errors[1].ends_with("unknown hook type \"x; ignored\""),
        "{errors:?}"
    );
}

/// An event name holding a line break was printed raw in the location of a diagnostic
/// (`(hooks.Bad` and `Event): …` on two lines); it is escaped there as in the message.
#[test]
fn an_event_name_with_a_line_break_is_escaped_in_the_location() {
    let env = Env::new();
    let loaded = user_settings(&env, json!({"Bad\nEvent\u{200b}": []}));
    let diags = shown(&loaded);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(
        !diags[0].contains('\n')
            && !diags[0].contains('\u{200b}')
            && diags[0].contains("(hooks.Bad\\nEvent\\u{200b}): "),
        "{diags:?}"
    );
}

/// With `disableAllHooks` (here from `--settings`), no hook of the user's file runs, so a
/// broken guard there refuses nothing: its warning said "the calls it would see are refused
/// until it is fixed", which was untrue. It says the hooks are off instead.
#[tokio::test]
async fn with_hooks_disabled_a_broken_guard_is_not_said_to_refuse() {
    let env = Env::new();
    let dir = env.path("user");
    std::fs::create_dir_all(&dir).unwrap();
    let mut broken = guard(&env, "m");
    broken["shell"] = json!("zsh");
    for hooks in [
        json!({"PreToolUse": [{"matcher": "Bash", "hooks": [broken.clone()]}]}),
        json!({"PreToolUse": [{"matcher": "(", "hooks": [broken.clone()]}]}),
        json!({"PermissionRequest": [{"matcher": "Bash", "hooks": {"type": "command"}}]}),
    ] {
        std::fs::write(
            dir.join("settings.json"),
            json!({"hooks": hooks}).to_string(),
        )
        .unwrap();
        let loaded = load_hooks(&SettingsPaths {
            user_config_dir: Some(dir.clone()),
            flag_settings: vec![json!({"disableAllHooks": true}).to_string()],
            ..SettingsPaths::default()
        });
        let diags = shown(&loaded);
        assert!(
            diags.len() == 1
                && !diags[0].contains("refused")
                && diags[0].contains("disableAllHooks"),
            "{hooks}: {diags:?}"
        );
        let r = tool_hooks::HookRunner::new(loaded.config);
        let out = r.run_pre_tool_use(&bash("echo hi"), &env.ctx()).await;
        assert!(out.decision.is_none(), "{hooks}: {:?}", out.decision);
    }
}
