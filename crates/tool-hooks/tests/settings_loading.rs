//! Reading real settings files from every level, merging, and reporting bad ones.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::Env;
use serde_json::{Value, json};
use tool_core::RuleSource;
use tool_hooks::{HandlerKind, HookRunner, SettingsPaths, ToolCallInfo, load_hooks};

fn write(env: &Env, rel: &str, v: &Value) {
    let p = env.path(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, v.to_string()).unwrap();
}

fn hook(tag: &str) -> Value {
    json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": format!("echo {tag} >> \"$CLAUDE_PROJECT_DIR/order\"")}]}]}})
}

fn commands(loaded: &tool_hooks::LoadedHooks) -> Vec<String> {
    loaded
        .config
        .matching("PreToolUse", Some("Bash"))
        .into_iter()
        .filter_map(|h| match &h.kind {
            HandlerKind::Command(c) => Some(
                c.command
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or_default()
                    .to_owned(),
            ),
            _ => None,
        })
        .collect()
}

fn paths(env: &Env) -> SettingsPaths {
    SettingsPaths {
        managed_dir: Some(env.path("managed")),
        flag_settings: Vec::new(),
        project_dir: Some(env.path("project")),
        user_config_dir: Some(env.path("user")),
        project_trusted: true,
    }
}

#[tokio::test]
async fn all_levels_merge_in_configuration_order() {
    let env = Env::new();
    write(&env, "managed/managed-settings.json", &hook("managed"));
    write(
        &env,
        "managed/managed-settings.d/20-b.json",
        &hook("dropin-b"),
    );
    write(
        &env,
        "managed/managed-settings.d/10-a.json",
        &hook("dropin-a"),
    );
    write(&env, "project/.claude/settings.json", &hook("project"));
    write(&env, "project/.claude/settings.local.json", &hook("local"));
    write(&env, "user/settings.json", &hook("user"));
    write(&env, "flag.json", &hook("flagfile"));
    let mut p = paths(&env);
    p.flag_settings
        .push(env.path("flag.json").to_string_lossy().into_owned());
    p.flag_settings.push(hook("inline").to_string());
    let loaded = load_hooks(&p);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    assert_eq!(loaded.files.len(), 8);
    assert_eq!(
        commands(&loaded),
        [
            "user", "project", "local", "flagfile", "inline", "managed", "dropin-a", "dropin-b"
        ]
    );
    // And they all really run, in parallel, once each.
    let runner = HookRunner::new(loaded.config).with_project_dir(env.root());
    let out = runner
        .run_pre_tool_use(
            &ToolCallInfo::new("Bash", json!({"command": "ls"}), "t"),
            &env.ctx(),
        )
        .await;
    assert_eq!(out.common.runs.len(), 8);
    assert_eq!(env.read("order").lines().count(), 8);
}

#[test]
fn duplicates_across_files_run_once_and_disable_all() {
    let env = Env::new();
    write(&env, "project/.claude/settings.json", &hook("same"));
    write(&env, "user/settings.json", &hook("same"));
    let loaded = load_hooks(&paths(&env));
    assert_eq!(commands(&loaded), ["same"]);

    let mut local = hook("local");
    local["disableAllHooks"] = json!(true);
    write(&env, "project/.claude/settings.local.json", &local);
    write(&env, "managed/managed-settings.json", &hook("managed"));
    let loaded = load_hooks(&paths(&env));
    assert_eq!(commands(&loaded), ["managed"]);
    assert!(loaded.config.disabled_all);
}

#[test]
fn bad_files_are_reported_with_their_path() {
    let env = Env::new();
    std::fs::create_dir_all(env.path("project/.claude")).unwrap();
    std::fs::write(env.path("project/.claude/settings.json"), "{ not json").unwrap();
    write(
        &env,
        "project/.claude/settings.local.json",
        &json!({"hooks": {"PreToolUse": "oops"}}),
    );
    write(&env, "user/settings.json", &json!([1]));
    let mut p = paths(&env);
    p.flag_settings
        .push(env.path("missing.json").to_string_lossy().into_owned());
    let loaded = load_hooks(&p);
    let text: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 4, "{text:#?}");
    assert!(
        text.iter()
            .any(|t| t.contains("project/.claude/settings.json") && t.contains("invalid JSON"))
    );
    assert!(
        text.iter()
            .any(|t| t.contains("settings.local.json (hooks.PreToolUse)")
                && t.contains("array of matcher groups"))
    );
    assert!(
        text.iter()
            .any(|t| t.contains("user/settings.json") && t.contains("must be a JSON object"))
    );
    assert!(
        text.iter()
            .any(|t| t.contains("missing.json") && t.contains("not found"))
    );
    assert_eq!(loaded.diagnostics[0].source, Some(RuleSource::FlagSettings));
}

#[test]
fn discover_uses_claude_config_dir_or_home() {
    let p = SettingsPaths::discover("/some/project");
    assert_eq!(
        p.project_dir.as_deref(),
        Some(std::path::Path::new("/some/project"))
    );
    let expected = std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|v| !v.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".claude")));
    assert_eq!(p.user_config_dir, expected);
    assert!(p.managed_dir.is_some());
}

#[test]
fn an_untrusted_project_runs_none_of_its_hooks() {
    let env = Env::new();
    let dir = env.path("project").join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("settings.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": "touch /tmp/pwned"}]}]}}"#,
    )
    .unwrap();
    let trusted = load_hooks(&paths(&env));
    assert!(!trusted.config.is_empty());
    assert!(trusted.untrusted_ignored.is_empty());
    let untrusted = load_hooks(&SettingsPaths {
        project_trusted: false,
        ..paths(&env)
    });
    assert!(
        untrusted
            .config
            .matching("PreToolUse", Some("Bash"))
            .is_empty(),
        "no project hook may run"
    );
    assert_eq!(untrusted.untrusted_ignored, vec![dir.join("settings.json")]);
    // The default is untrusted.
    assert!(!SettingsPaths::discover("/x").project_trusted);
}

/// With the project directory at the home directory, `.claude/settings.json` is the user's
/// own settings file: read once, as the user's. Untrusted, its hooks are not reported as
/// ignored (they run, as user hooks), and trusted, they are not read a second time.
#[test]
fn the_user_settings_file_is_not_also_the_projects() {
    let env = Env::new();
    write(&env, "home/.claude/settings.json", &hook("user"));
    let home_paths = SettingsPaths {
        managed_dir: None,
        flag_settings: Vec::new(),
        project_dir: Some(env.path("home")),
        user_config_dir: Some(env.path("home/.claude")),
        project_trusted: false,
    };
    let untrusted = load_hooks(&home_paths);
    assert!(
        untrusted.untrusted_ignored.is_empty(),
        "{:?}",
        untrusted.untrusted_ignored
    );
    assert_eq!(commands(&untrusted), ["user"]);
    let sources: Vec<RuleSource> = untrusted.files.iter().map(|f| f.source).collect();
    assert_eq!(sources, [RuleSource::UserSettings]);
    let trusted = load_hooks(&SettingsPaths {
        project_trusted: true,
        ..home_paths
    });
    let sources: Vec<RuleSource> = trusted.files.iter().map(|f| f.source).collect();
    assert_eq!(sources, [RuleSource::UserSettings]);
}

/// A matcher with a tab, a line break or other whitespace besides spaces at its start or
/// end is reported when the file is loaded, as a warning naming the file and the group,
/// saying what it matches; an exact name list around which that whitespace stands is the
/// list (`"Bash\n"` guards Bash). Before the fix such a matcher said nothing, and
/// `"Bash\n"` or `"\tRead|Edit"` were regexes that needed that character in the tool name:
/// the guard never ran. Plain spaces around a list stay silent.
#[tokio::test]
async fn a_matcher_with_stray_whitespace_is_warned_about() {
    use tool_hooks::DiagnosticKind;
    let env = Env::new();
    let group = |matcher: &str, tag: &str| json!({"matcher": matcher, "hooks": [{"type": "command", "command": format!("echo {tag} >> \"$CLAUDE_PROJECT_DIR/order\"")}]});
    write(
        &env,
        "user/settings.json",
        &json!({"hooks": {"PreToolUse": [
            group("Bash\n", "newline"),
            group("\tRead|Edit", "tab"),
            group(" \t ", "blank"),
            group("Bash.*\r\n", "regex"),
            group(" Bash ", "spaces"),
        ]}}),
    );
    let loaded = load_hooks(&paths(&env));
    let warnings: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.kind == DiagnosticKind::Warning)
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        warnings.len(),
        loaded.diagnostics.len(),
        "{:?}",
        loaded.diagnostics
    );
    assert_eq!(warnings.len(), 4, "{warnings:#?}");
    let at = |i: usize, needed: &[&str]| {
        let w = &warnings[i];
        assert!(
            w.contains("user/settings.json")
                && w.contains(&format!("(hooks.PreToolUse[{i}].matcher)")),
            "{w}"
        );
        for n in needed {
            assert!(w.contains(n), "{n}: {w}");
        }
    };
    at(0, &[r#""Bash\n""#, "exact", "Bash"]);
    at(1, &[r#""\tRead|Edit""#, "exact", "Read|Edit"]);
    at(2, &["matches nothing"]);
    at(3, &["regular expression", "no tool name"]);
    assert_eq!(commands(&loaded), ["newline", "spaces"]);

    // The Bash guard written with a line break runs.
    let runner = HookRunner::new(loaded.config).with_project_dir(env.root());
    let out = runner
        .run_pre_tool_use(
            &ToolCallInfo::new("Read", json!({"file_path": "/etc/hostname"}), "t"),
            &env.ctx(),
        )
        .await;
    assert_eq!(out.common.runs.len(), 1, "{:?}", out.common.runs);
    assert_eq!(env.read("order").trim(), "tab");
}

/// A drop-in directory that cannot be read is reported, not taken for an empty policy.
#[tokio::test]
async fn an_unreadable_managed_drop_in_directory_is_reported() {
    let env = Env::new();
    write(&env, "managed/managed-settings.json", &hook("managed"));
    // A file where the directory should be: reading it fails, as an unreadable directory
    // does for a user who is not root.
    std::fs::write(env.path("managed/managed-settings.d"), "not a directory").unwrap();
    let loaded = load_hooks(&paths(&env));
    let shown: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        shown.iter().any(|d| d.contains("managed-settings.d")
            && d.contains("cannot read the managed settings drop-in directory")),
        "{shown:?}"
    );
    assert_eq!(commands(&loaded), ["managed"]);
}

/// A problem in inline JSON given to `--settings` is named by the flag, not by a Rust name
/// (`FlagSettings`): the user sees which of their inputs is wrong.
#[test]
fn a_problem_in_inline_settings_is_named_by_its_flag() {
    let env = Env::new();
    let loaded = load_hooks(&SettingsPaths {
        managed_dir: None,
        flag_settings: vec![
            r#"{"hooks": {"PreTooluse": [{"hooks": [{"type": "command", "command": "true"}]}]}}"#
                .to_owned(),
        ],
        project_dir: Some(env.path("project")),
        user_config_dir: None,
        project_trusted: true,
    });
    let shown: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        shown.iter().any(|d| d.starts_with("--settings (hooks")),
        "{shown:?}"
    );
    assert!(
        shown.iter().all(|d| !d.contains("FlagSettings")),
        "{shown:?}"
    );
}

/// A hook `--settings` gives that cannot be read stops the command, so what says it is
/// worded as a problem alone: `LoadedHooks::command_line_errors` names each one (an invalid
/// matcher regex, an unknown event) without the `; group skipped` / `; skipped` a load that
/// goes on adds (the message said the group was skipped while the command exited). The same
/// problems in an ambient settings file are not among them, and their diagnostics keep
/// saying what was skipped.
#[test]
fn command_line_errors_do_not_say_skipped() {
    let env = Env::new();
    let bad = json!({"hooks": {
        "PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "true"}]}],
        "NoSuchEvent": [],
    }});
    write(&env, "project/.claude/settings.json", &bad);
    let mut p = paths(&env);
    p.flag_settings.push(bad.to_string());
    let loaded = load_hooks(&p);
    let errors = loaded.command_line_errors();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("hooks.PreToolUse[0].matcher") && e.contains("invalid matcher")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("unknown hook event")),
        "{errors:?}"
    );
    for e in &errors {
        assert!(e.starts_with("--settings"), "{e}");
        assert!(!e.contains("skipped") && !e.contains("ignored"), "{e}");
    }
    // The project file's own problems are reported as a load that goes on reports them.
    let ambient: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.source == Some(RuleSource::ProjectSettings))
        .map(ToString::to_string)
        .collect();
    assert_eq!(ambient.len(), 2, "{ambient:?}");
    // The group of a PreToolUse matcher that is no regex refuses every call until fixed,
    // and says so after the "; group skipped".
    assert!(
        ambient
            .iter()
            .any(|d| d.contains("; group skipped: its hooks will not run")),
        "{ambient:?}"
    );
}

/// A restriction list of the wrong type never fails open. Given by `--settings`,
/// `allowedHttpHookUrls` or `httpHookAllowedEnvVars` that is not an array is a command-line
/// error (the command stops, as for an invalid hook): dropping it let an http hook POST
/// anywhere. In a settings file, it is read as an empty list and the warning says so: no
/// http hook is allowed (none is configured, nothing is sent to a listening server) and no
/// environment variable is expanded in a header. An item of such a list that is no string
/// is skipped with an error of its own.
#[tokio::test]
async fn restriction_lists_of_the_wrong_type_fail_closed() {
    let env = Env::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!("http://{}/exfil", listener.local_addr().unwrap());
    let http_hook = |extra: Value| {
        let mut h = json!({"type": "http", "url": url});
        h.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        json!({"PreToolUse": [{"hooks": [h]}]})
    };

    // On the command line: an error that stops the command, for either list.
    for key in ["allowedHttpHookUrls", "httpHookAllowedEnvVars"] {
        let mut p = paths(&env);
        p.flag_settings
            .push(json!({key: "http://127.0.0.1:1/*", "hooks": http_hook(json!({}))}).to_string());
        let errors = load_hooks(&p).command_line_errors();
        assert!(
            errors.len() == 1
                && errors[0].starts_with("--settings")
                && errors[0].contains(key)
                && errors[0].contains("must be an array of strings"),
            "{key}: {errors:?}"
        );
        // An item that is no string is an error of its own, not dropped unsaid (in a
        // file it is skipped with a warning that says so).
        let mut p = paths(&env);
        p.flag_settings.push(
            json!({key: [1, "http://127.0.0.1:1/*"], "hooks": http_hook(json!({}))}).to_string(),
        );
        let errors = load_hooks(&p).command_line_errors();
        assert!(
            errors.len() == 1
                && errors[0].contains(key)
                && errors[0].ends_with("item 0 must be a string, got 1"),
            "{key}: {errors:?}"
        );
    }

    // In a file: an empty URL allow list, so the hook is not configured and sends nothing.
    write(
        &env,
        "user/settings.json",
        &json!({"allowedHttpHookUrls": "http://127.0.0.1:1/*", "hooks": http_hook(json!({}))}),
    );
    let loaded = load_hooks(&paths(&env));
    assert!(loaded.command_line_errors().is_empty());
    let shown: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        shown.iter().any(|d| d.contains("allowedHttpHookUrls")
            && d.contains("must be an array of strings")
            && d.contains("no http hook runs")),
        "{shown:?}"
    );
    assert!(
        loaded
            .config
            .matching("PreToolUse", Some("Bash"))
            .is_empty(),
        "{:?}",
        loaded.config
    );
    let out = HookRunner::new(loaded.config)
        .run_pre_tool_use(
            &ToolCallInfo::new("Bash", json!({"command": "ls"}), "toolu_1"),
            &env.ctx(),
        )
        .await;
    assert!(out.decision.is_none());
    assert!(
        listener.accept().is_err(),
        "the http hook reached the server"
    );

    // An env var list of the wrong type: the hook runs, but expands no variable.
    write(
        &env,
        "user/settings.json",
        &json!({
            "httpHookAllowedEnvVars": "TOKEN",
            "hooks": http_hook(json!({"allowedEnvVars": ["TOKEN"], "headers": {"A": "$TOKEN"}})),
        }),
    );
    let loaded = load_hooks(&paths(&env));
    let shown: Vec<String> = loaded.diagnostics.iter().map(ToString::to_string).collect();
    assert!(
        shown.iter().any(|d| d.contains("httpHookAllowedEnvVars")
            && d.contains("no environment variable is expanded")),
        "{shown:?}"
    );
    let hooks = loaded.config.matching("PreToolUse", Some("Bash"));
    assert!(
        matches!(&hooks[..], [h] if matches!(&h.kind, HandlerKind::Http(http) if http.allowed_env_vars.is_empty())),
        "{hooks:?}"
    );
}
