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

/// A denial's message (empty for another result).
fn denial(result: &PermissionResult) -> String {
    match result {
        PermissionResult::Deny { message, .. } => message.clone(),
        _ => String::new(),
    }
}

// --- 1. Hidden managed drop-ins ------------------------------------------------------------

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

// --- 2. Top-level `disableAutoMode` ---------------------------------------------------------

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

// --- 3. Claude Code's newer `permissions` keys ----------------------------------------------

/// Found by review: `permissions.blockReadsOutsideWorkingDirectories` (and its siblings
/// `blockWritesOutsideWorkingDirectories` and `denyInsteadOfPrompting`) were called unknown
/// keys, an error in an inline value. They are read, without a word.
#[test]
fn the_newer_permissions_keys_are_known() {
    let fx = Fixture::new();
    let keys = json!({"permissions": {
        "blockReadsOutsideWorkingDirectories": true,
        "blockWritesOutsideWorkingDirectories": true,
        "denyInsteadOfPrompting": true,
    }});
    let loaded = user_file(&fx, &keys);
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    let errors = inline_errors(&keys);
    assert!(errors.is_empty(), "{errors:?}");
    // A value of the wrong type is said, and read as true: a restriction of the wrong type
    // never fails open.
    let fx = Fixture::new();
    let loaded = user_file(
        &fx,
        &json!({"permissions": {"blockReadsOutsideWorkingDirectories": "yes"}}),
    );
    let said = messages(&loaded);
    assert!(
        said.len() == 1
            && said[0].contains("error")
            && said[0].contains("blockReadsOutsideWorkingDirectories")
            && said[0].contains("read as true"),
        "{said:?}"
    );
    assert!(loaded.context.block_reads_outside_working_dirs);
}

/// Found by review: `blockReadsOutsideWorkingDirectories: true` was dropped, so a Read of a
/// file outside the working directories was asked about (and allowed in bypassPermissions).
/// Read, Grep and Glob on a path outside are denied in every mode, an allow rule does not
/// lift it, the message tells the model to ask the user to add the directory; inside (and
/// in an additional working directory) nothing changes; a Bash command that reads outside
/// is asked about, even in bypassPermissions.
#[tokio::test]
async fn reads_outside_are_blocked_in_every_mode() {
    let fx = Fixture::new();
    let secret = fx.out.join("secret.txt");
    let loaded = user_file(
        &fx,
        &json!({"permissions": {
            "blockReadsOutsideWorkingDirectories": true,
            "allow": [format!("Read(/{}/**)", fx.out.display()), "Bash(cat:*)"],
            "deny": ["Read(./.env)"],
        }}),
    );
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::BypassPermissions,
    ] {
        for (tool, path) in [
            ("Read", secret.clone()),
            ("Grep", fx.out.clone()),
            ("Glob", fx.out.clone()),
            ("Read", fx.proj.join("link_out")),
        ] {
            let got = decide(&fx, &loaded, tool, on(tool, &path), mode).await;
            let message = denial(&got);
            assert!(
                message.contains("outside the working directories")
                    && message.contains("blockReadsOutsideWorkingDirectories")
                    && message.contains("permissions.additionalDirectories"),
                "{mode:?} {tool} {}: {got:?}",
                path.display()
            );
        }
        // Inside: as before (the deny rule still denies).
        let readme = fx.proj.join("README.md");
        let got = decide(&fx, &loaded, "Read", on("Read", &readme), mode).await;
        assert_eq!(behavior(&got), "allow", "{mode:?}: {got:?}");
        let env = fx.proj.join(".env");
        let got = decide(&fx, &loaded, "Read", on("Read", &env), mode).await;
        assert!(
            behavior(&got) == "deny" && !denial(&got).contains("outside"),
            "{mode:?}: {got:?}"
        );
        // A shell read outside is asked about, whatever the mode and the allow rule.
        let cat = json!({"command": format!("cat {}", secret.display())});
        let got = decide(&fx, &loaded, "Bash", cat, mode).await;
        assert_eq!(behavior(&got), "ask", "{mode:?}: {got:?}");
        let cat = json!({"command": "cat README.md"});
        let got = decide(&fx, &loaded, "Bash", cat, mode).await;
        assert_eq!(behavior(&got), "allow", "{mode:?}: {got:?}");
    }
    // An additional working directory counts as inside.
    let fx = Fixture::new();
    let loaded = user_file(
        &fx,
        &json!({"permissions": {
            "blockReadsOutsideWorkingDirectories": true,
            "additionalDirectories": [fx.out.display().to_string()],
        }}),
    );
    for mode in [PermissionMode::Default, PermissionMode::BypassPermissions] {
        let secret = fx.out.join("secret.txt");
        let got = decide(&fx, &loaded, "Read", on("Read", &secret), mode).await;
        assert_eq!(behavior(&got), "allow", "{mode:?}: {got:?}");
    }
    // Off (not set): a read outside is asked about, as before.
    let fx = Fixture::new();
    let loaded = user_file(&fx, &json!({}));
    let secret = fx.out.join("secret.txt");
    let got = decide(
        &fx,
        &loaded,
        "Read",
        on("Read", &secret),
        PermissionMode::Default,
    )
    .await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
}

/// `blockWritesOutsideWorkingDirectories: true`: Write, Edit and NotebookEdit on a path
/// outside the working directories are denied in every mode (an Edit allow rule does not
/// lift it); inside nothing changes; shell commands are not limited by it.
#[tokio::test]
async fn writes_outside_are_blocked_in_every_mode() {
    let fx = Fixture::new();
    let loaded = user_file(
        &fx,
        &json!({"permissions": {
            "blockWritesOutsideWorkingDirectories": true,
            "allow": [format!("Edit(/{}/**)", fx.out.display())],
        }}),
    );
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::BypassPermissions,
    ] {
        for (tool, path) in [
            ("Write", fx.out.join("new.txt")),
            ("Edit", fx.out.join("notes.md")),
            ("NotebookEdit", fx.out.join("n.ipynb")),
            ("Write", fx.proj.join("link_out")),
        ] {
            let got = decide(&fx, &loaded, tool, on(tool, &path), mode).await;
            let message = denial(&got);
            assert!(
                message.contains("outside the working directories")
                    && message.contains("blockWritesOutsideWorkingDirectories")
                    && message.contains("permissions.additionalDirectories"),
                "{mode:?} {tool} {}: {got:?}",
                path.display()
            );
        }
        // Reading outside is not blocked by it (the Read allow rule the Edit rule implies).
        let notes = fx.out.join("notes.md");
        let got = decide(&fx, &loaded, "Read", on("Read", &notes), mode).await;
        assert_ne!(behavior(&got), "deny", "{mode:?}: {got:?}");
    }
    // Inside: as the mode says.
    let main = fx.proj.join("src/main.rs");
    let got = decide(
        &fx,
        &loaded,
        "Edit",
        on("Edit", &main),
        PermissionMode::AcceptEdits,
    )
    .await;
    assert_eq!(behavior(&got), "allow", "{got:?}");
    // A shell command that writes outside is not limited by it.
    let echo = json!({"command": format!("echo x > {}", fx.out.join("f").display())});
    let got = decide(
        &fx,
        &loaded,
        "Bash",
        echo,
        PermissionMode::BypassPermissions,
    )
    .await;
    assert_eq!(behavior(&got), "allow", "{got:?}");
}

/// A `true` from any level applies: a repository's `false` (trusted or not) cannot turn
/// off what the user turned on, and an untrusted repository's `true` restricts.
#[tokio::test]
async fn a_true_from_any_level_wins() {
    let fx = Fixture::new();
    write(
        &fx.home.join("config/settings.json"),
        json!({"permissions": {"blockWritesOutsideWorkingDirectories": true,
                                "blockReadsOutsideWorkingDirectories": true}})
        .to_string(),
    );
    write(
        &fx.proj.join(".claude/settings.json"),
        json!({"permissions": {"blockWritesOutsideWorkingDirectories": false,
                                "blockReadsOutsideWorkingDirectories": false}})
        .to_string(),
    );
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let new = fx.out.join("new.txt");
    let got = decide(
        &fx,
        &loaded,
        "Write",
        on("Write", &new),
        PermissionMode::BypassPermissions,
    )
    .await;
    assert_eq!(behavior(&got), "deny", "{got:?}");
    let secret = fx.out.join("secret.txt");
    let got = decide(
        &fx,
        &loaded,
        "Read",
        on("Read", &secret),
        PermissionMode::BypassPermissions,
    )
    .await;
    assert_eq!(behavior(&got), "deny", "{got:?}");

    let fx = Fixture::new();
    write(
        &fx.proj.join(".claude/settings.json"),
        json!({"permissions": {"blockWritesOutsideWorkingDirectories": true,
                                "denyInsteadOfPrompting": true}})
        .to_string(),
    );
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), false));
    assert!(
        loaded.context.block_writes_outside_working_dirs
            && loaded.context.deny_instead_of_prompting,
        "{:?}",
        loaded.context
    );
}

/// `denyInsteadOfPrompting: true`: a call that would ask is denied, the turn going on; one
/// that is allowed is not touched. It holds where the host turns prompts back on after
/// loading (`agent` on a terminal, `serve`), and in the order that runs PermissionRequest
/// hooks first.
#[tokio::test]
async fn deny_instead_of_prompting_denies_asks() {
    let fx = Fixture::new();
    let loaded = user_file(
        &fx,
        &json!({"permissions": {"denyInsteadOfPrompting": true}}),
    );
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert!(loaded.context.avoid_prompts, "{:?}", loaded.context);
    let main = fx.proj.join("src/main.rs");
    let readme = fx.proj.join("README.md");
    let engine = loaded.engine();
    for prompts_back_on in [false, true] {
        let mut ctx = session(&fx, &loaded, PermissionMode::Default);
        if prompts_back_on {
            let mut permission = ctx.permission().clone();
            permission.avoid_prompts = false;
            ctx = ctx.with_permission(permission);
        }
        let write = probe(&fx, "Write");
        let got = engine.decide(&write, &on("Write", &main), &ctx).await;
        let message = denial(&got);
        assert!(
            message.contains("denyInsteadOfPrompting"),
            "{prompts_back_on}: {got:?}"
        );
        if prompts_back_on {
            let got = engine
                .decide_keeping_asks(&write, &on("Write", &main), &ctx)
                .await;
            assert_eq!(behavior(&got), "deny", "{got:?}");
        }
        let read = probe(&fx, "Read");
        let got = engine.decide(&read, &on("Read", &readme), &ctx).await;
        assert_eq!(behavior(&got), "allow", "{got:?}");
    }
}

// --- 4. A rule list written as a string -----------------------------------------------------

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
