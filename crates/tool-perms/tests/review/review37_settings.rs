//! Users' real settings files as the 37th black-box review found them, from real files in a
//! temp dir: hidden managed drop-ins, Claude Code's top-level `disableAutoMode`, its
//! `permissions.blockReadsOutsideWorkingDirectories`, `blockWritesOutsideWorkingDirectories`
//! and `denyInsteadOfPrompting`, and a `deny` list written as a lone string.

use std::path::Path;

use crate::common::{Fixture, behavior, messages, probe, sources, write};
use serde_json::{Value, json};
use tool_core::{PermissionMode, PermissionResult, ToolUseContext};
use tool_perms::settings::{LoadedPermissions, SettingsSources, Severity, load_permissions};

/// The settings loaded with `settings` as the user's `settings.json` (`<home>/config`).
fn user_file(fx: &Fixture, settings: &Value) -> LoadedPermissions {
    write(&fx.home.join("config/settings.json"), settings.to_string());
    load_permissions(&sources(fx, fx.proj.clone(), true))
}

/// The errors that stop a command given `value` as an inline `--settings` value.
fn inline_errors(value: &Value) -> Vec<String> {
    let fx = Fixture::new();
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![value.to_string()];
    load_permissions(&s).command_line_errors()
}

/// The context a session of `loaded` decides in, in `mode`.
fn session(fx: &Fixture, loaded: &LoadedPermissions, mode: PermissionMode) -> ToolUseContext {
    let mut permission = loaded.context.clone();
    permission.mode = mode;
    permission.bypass_available = mode == PermissionMode::BypassPermissions;
    ToolUseContext::new(&fx.proj)
        .with_home(Some(fx.home.clone()))
        .with_permission(permission)
}

/// What `loaded` decides for a call of the probe tool `tool` with `input`, in `mode`.
async fn decide(
    fx: &Fixture,
    loaded: &LoadedPermissions,
    tool: &str,
    input: Value,
    mode: PermissionMode,
) -> PermissionResult {
    let ctx = session(fx, loaded, mode);
    loaded.engine().decide(&probe(fx, tool), &input, &ctx).await
}

/// The input of `tool` on `path` (a file tool's path field, Glob's and Grep's `path`).
fn on(tool: &str, path: &Path) -> Value {
    let path = path.display().to_string();
    match tool {
        "Glob" | "Grep" => json!({"path": path, "pattern": "x"}),
        "NotebookEdit" => json!({"notebook_path": path, "new_source": "x"}),
        "Bash" => json!({"command": path}),
        _ => json!({"file_path": path, "content": "x"}),
    }
}

/// Found by review: a managed drop-in an administrator had switched off by renaming it to a
/// dotfile (`.10-old-policy.json`) still applied its allow rules, an editor's lock link
/// (`.#20-policy.json`, a link to nothing) was an error, and so was a directory named
/// `old.json`. As Claude Code's loader: only files and links to them whose names end in
/// `.json` and do not start with `.` are read; a link to a file is read as before, and a
/// link to nothing whose name is not hidden is still an error.
#[tokio::test]
async fn hidden_and_directory_drop_ins_are_skipped() {
    let fx = Fixture::new();
    let managed = fx.home.join("managed");
    let drop_ins = managed.join("managed-settings.d");
    write(
        &drop_ins.join(".10-old-policy.json"),
        json!({"permissions": {"allow": ["Bash(rm:*)"]}}).to_string(),
    );
    std::os::unix::fs::symlink(
        "root@host.1234:1700000000",
        drop_ins.join(".#20-policy.json"),
    )
    .unwrap();
    std::fs::create_dir_all(drop_ins.join("old.json")).unwrap();
    // A link to a policy file kept elsewhere is read.
    write(
        &fx.out.join("policy.json"),
        json!({"permissions": {"deny": ["Bash(curl:*)"]}}).to_string(),
    );
    std::os::unix::fs::symlink(fx.out.join("policy.json"), drop_ins.join("30-linked.json"))
        .unwrap();
    let (paths, errors) = tool_core::managed_drop_ins(&managed);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(paths, vec![drop_ins.join("30-linked.json")]);

    let loaded = load_permissions(&SettingsSources {
        managed_dir: Some(managed.clone()),
        ..sources(&fx, fx.proj.clone(), true)
    });
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    let rules: Vec<&str> = loaded
        .context
        .allow
        .iter()
        .chain(&loaded.context.deny)
        .map(|r| r.rule.as_str())
        .collect();
    assert_eq!(rules, vec!["Bash(curl:*)"]);
    assert_eq!(
        behavior(
            &decide(
                &fx,
                &loaded,
                "Bash",
                json!({"command": "rm -f nothing"}),
                PermissionMode::Default
            )
            .await
        ),
        "ask"
    );

    // A link to nothing whose name is not hidden keeps its error: the policy meant is lost.
    std::os::unix::fs::symlink(fx.out.join("gone.json"), drop_ins.join("40-gone.json")).unwrap();
    let loaded = load_permissions(&SettingsSources {
        managed_dir: Some(managed),
        ..sources(&fx, fx.proj.clone(), true)
    });
    let said = messages(&loaded);
    assert!(
        said.len() == 1
            && said[0].contains("40-gone.json")
            && said[0].contains("error: cannot read the settings file"),
        "{said:?}"
    );
}

/// Found by review: Claude Code's top-level `disableAutoMode` (its `Settings` has it there as
/// well as under `permissions`) was said to belong under `permissions`, and as an inline
/// `--settings` value stopped the command. It is accepted at either level without a word,
/// as `permissions.disableAutoMode` is.
#[test]
fn disable_auto_mode_is_accepted_at_the_top_level() {
    let fx = Fixture::new();
    let loaded = user_file(&fx, &json!({"disableAutoMode": "disable"}));
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    let errors = inline_errors(&json!({"disableAutoMode": "disable"}));
    assert!(errors.is_empty(), "{errors:?}");
    let errors = inline_errors(&json!({"permissions": {"disableAutoMode": "disable"}}));
    assert!(errors.is_empty(), "{errors:?}");
    // The other keys of `permissions` written beside it are still said to be misplaced.
    let errors = inline_errors(&json!({"deny": ["Bash"]}));
    assert!(
        errors.len() == 1 && errors[0].contains("belongs under `permissions`"),
        "{errors:?}"
    );
}

/// Found by review: `"deny": "Read(.env)"` (a string, not a list) was dropped with an error,
/// so the read it was meant to stop went through. A deny or ask list written as one string
/// is read as a list of that rule (an error still says the type is wrong): a restriction of
/// the wrong type never fails open. An allow list so written still grants nothing.
#[tokio::test]
async fn a_lone_deny_or_ask_string_is_one_rule() {
    let fx = Fixture::new();
    let loaded = user_file(
        &fx,
        &json!({"permissions": {"deny": "Read(.env)", "ask": "Bash(rm:*)", "allow": "Write"}}),
    );
    let said = messages(&loaded);
    for key in ["deny", "ask"] {
        assert!(
            said.iter().any(|m| m.contains("error")
                && m.contains(&format!("`permissions.{key}` must be an array"))
                && m.contains("read as a list of its one rule")),
            "{key}: {said:?}"
        );
    }
    assert!(
        said.iter()
            .any(|m| m.contains("`permissions.allow` must be an array; ignored")),
        "{said:?}"
    );
    for mode in [PermissionMode::Default, PermissionMode::BypassPermissions] {
        let env = fx.proj.join(".env");
        let got = decide(&fx, &loaded, "Read", on("Read", &env), mode).await;
        assert_eq!(behavior(&got), "deny", "{mode:?}: {got:?}");
        let rm = json!({"command": "rm -f nothing"});
        let got = decide(&fx, &loaded, "Bash", rm, mode).await;
        assert_eq!(behavior(&got), "ask", "{mode:?}: {got:?}");
    }
    let main = fx.proj.join("src/main.rs");
    let got = decide(
        &fx,
        &loaded,
        "Write",
        on("Write", &main),
        PermissionMode::Default,
    )
    .await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    assert!(
        loaded
            .diagnostics
            .iter()
            .filter(|d| d.message.contains("must be an array"))
            .all(|d| d.severity == Severity::Error)
    );
}
