//! How settings files are read, from real files in a temp dir: a UTF-8 byte order mark,
//! blank files, where `.claude/settings.local.json` is (the git repository's root), and
//! what a bad inline `--settings` value is reported as.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::PathBuf;

use common::{Fixture, bash, behavior, messages, probe, sources, write};
use serde_json::json;
use tool_core::{RuleSource, ToolUseContext};
use tool_perms::settings::{
    LoadedPermissions, Severity, load_permissions, load_settings_files, resolve_flag_settings,
};

const BOM: &[u8] = b"\xEF\xBB\xBF";
const DENY_RM: &str = r#"{"permissions":{"deny":["Bash(rm *)"]}}"#;

fn with_bom(text: &str) -> Vec<u8> {
    [BOM, text.as_bytes()].concat()
}

// --- 1. A UTF-8 byte order mark -------------------------------------------------------------

/// A BOM'd user settings.json (what PowerShell 5.1 and some Windows editors write) is read:
/// its deny rule holds. It used to be thrown away as invalid JSON, deny rules with it.
#[tokio::test]
async fn a_bom_prefixed_user_settings_file_keeps_its_deny_rules() {
    let fx = Fixture::new();
    write(&fx.home.join("config/settings.json"), with_bom(DENY_RM));
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert!(
        loaded
            .context
            .deny
            .iter()
            .any(|r| r.rule == "Bash(rm *)" && r.source == RuleSource::UserSettings),
        "{:?}",
        loaded.context.deny
    );
    assert_eq!(bash(&fx, &loaded, &fx.proj, "rm -rf build").await, "deny");
}

/// A settings file with a byte that is not UTF-8 (an editor saved `café` as Latin-1) is
/// read as Claude Code reads it, the byte replaced, with a warning: its deny rules hold. It
/// used to be unreadable, its deny rules dropped with it.
#[tokio::test]
async fn a_settings_file_with_a_stray_byte_keeps_its_deny_rules() {
    let fx = Fixture::new();
    write(
        &fx.home.join("config/settings.json"),
        b"{\"permissions\":{\"deny\":[\"Bash(rm *)\"]},\"env\":{\"G\":\"caf\xe9\"}}",
    );
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let said = messages(&loaded);
    assert!(
        said.len() == 1 && said[0].contains("warning: not valid UTF-8"),
        "{said:?}"
    );
    assert_eq!(bash(&fx, &loaded, &fx.proj, "rm -rf build").await, "deny");
}

/// Half a surrogate pair (`JSON.stringify` writes `"\ud83d"` for an emoji cut in two) is JSON
/// to Claude Code's `JSON.parse`, so the file's deny rules apply here too, in a file and
/// inline.
#[tokio::test]
async fn a_settings_file_with_half_a_surrogate_pair_keeps_its_deny_rules() {
    let fx = Fixture::new();
    let text = r#"{"permissions":{"deny":["Bash(rm *)"]},"env":{"G":"cut \ud83d"}}"#;
    write(&fx.home.join("config/settings.json"), text.as_bytes());
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    assert!(messages(&loaded).is_empty(), "{:?}", messages(&loaded));
    assert_eq!(bash(&fx, &loaded, &fx.proj, "rm -rf build").await, "deny");

    let fx = Fixture::new();
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![text.replace("rm *", "curl *")];
    let loaded = load_permissions(&s);
    assert!(messages(&loaded).is_empty(), "{:?}", messages(&loaded));
    assert_eq!(bash(&fx, &loaded, &fx.proj, "curl x").await, "deny");
}

/// Every level takes a BOM: managed, a `--settings` file, project, local.
#[test]
fn every_settings_file_may_start_with_a_bom() {
    let fx = Fixture::new();
    let managed = fx.home.join("managed");
    let rule = |r: &str| format!(r#"{{"permissions":{{"deny":["{r}"]}}}}"#);
    write(
        &managed.join("managed-settings.json"),
        with_bom(&rule("Bash(curl:*)")),
    );
    write(
        &managed.join("managed-settings.d/10-x.json"),
        with_bom(&rule("Bash(wget:*)")),
    );
    let flag = fx.home.join("flag.json");
    write(&flag, with_bom(&rule("Bash(nc:*)")));
    write(
        &fx.proj.join(".claude/settings.json"),
        with_bom(&rule("Bash(scp:*)")),
    );
    write(
        &fx.proj.join(".claude/settings.local.json"),
        with_bom(&rule("Bash(ssh:*)")),
    );
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.managed_dir = Some(managed);
    s.flag_settings = vec![flag.display().to_string()];
    let loaded = load_permissions(&s);
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    let mut deny: Vec<(&str, RuleSource)> = loaded
        .context
        .deny
        .iter()
        .map(|r| (r.rule.as_str(), r.source))
        .collect();
    deny.sort_by_key(|(r, _)| *r);
    assert_eq!(
        deny,
        [
            ("Bash(curl:*)", RuleSource::PolicySettings),
            ("Bash(nc:*)", RuleSource::FlagSettings),
            ("Bash(scp:*)", RuleSource::ProjectSettings),
            ("Bash(ssh:*)", RuleSource::LocalSettings),
            ("Bash(wget:*)", RuleSource::PolicySettings),
        ]
    );
}

/// Inline `--settings` JSON with a BOM (pasted from a BOM'd file) is inline JSON, not a file
/// name, both where the binary resolves the values and where they are loaded.
#[tokio::test]
async fn inline_settings_json_may_start_with_a_bom() {
    let fx = Fixture::new();
    let inline = format!("\u{feff}{DENY_RM}");
    assert_eq!(
        resolve_flag_settings(std::slice::from_ref(&inline), &fx.proj),
        std::slice::from_ref(&inline),
        "a BOM'd inline value must stay inline, not become a file path"
    );
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![inline];
    let loaded = load_permissions(&s);
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert!(loaded.command_line_errors().is_empty());
    assert_eq!(bash(&fx, &loaded, &fx.proj, "rm -rf build").await, "deny");
}

/// `/x` in an inline `--settings` value is relative to the working directory, as on Claude
/// Code's command line, also when a `--settings` file elsewhere is given too (the engine
/// anchors flag rules at that file's folder).
#[tokio::test]
async fn an_inline_settings_rule_is_anchored_at_the_working_directory() {
    let fx = Fixture::new();
    let elsewhere = fx.home.join("sdir/s.json");
    write(&elsewhere, b"{}");
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![
        elsewhere.display().to_string(),
        r#"{"permissions":{"deny":["Edit(/y.txt)"]}}"#.to_owned(),
    ];
    let loaded = load_permissions(&s);
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    let engine = loaded.engine();
    let tctx = ToolUseContext::new(&fx.proj)
        .with_home(Some(fx.home.clone()))
        .with_permission(loaded.context.clone());
    let tool = probe(&fx, "Write");
    let decide = |path: PathBuf| {
        let (engine, tool, tctx) = (&engine, &tool, &tctx);
        async move {
            behavior(
                &engine
                    .decide(tool, &json!({"file_path": path, "content": ""}), tctx)
                    .await,
            )
            .to_owned()
        }
    };
    assert_eq!(decide(fx.proj.join("y.txt")).await, "deny");
    assert_ne!(decide(fx.home.join("sdir/y.txt")).await, "deny");
}

/// A BOM is taken only at the very start: one anywhere else is still invalid JSON, reported
/// with the file.
#[test]
fn a_bom_elsewhere_is_still_invalid_json() {
    let fx = Fixture::new();
    let user = fx.home.join("config/settings.json");
    write(&user, format!(" \u{feff}{DENY_RM}").as_bytes());
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let msgs = messages(&loaded);
    assert!(
        msgs.iter()
            .any(|m| m.starts_with(&user.display().to_string())
                && m.contains("invalid JSON")
                && m.contains("line 1 column")),
        "{msgs:?}"
    );
}

// --- 2. `.claude/settings.local.json` at the git repository's root --------------------------

/// `repo/.git` and `repo/.claude/settings.local.json` with a deny; a session in `repo/sub`
/// reads that local file (Claude Code keeps it at the repository root), while
/// `.claude/settings.json` stays relative to the project directory.
#[tokio::test]
async fn the_local_settings_file_is_read_from_the_git_root() {
    let fx = Fixture::new();
    let repo = fx.out.join("repo");
    let sub = repo.join("sub");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(&sub).unwrap();
    write(
        &repo.join(".claude/settings.local.json"),
        DENY_RM.as_bytes(),
    );
    // The shared file is the project directory's, not the root's.
    write(
        &repo.join(".claude/settings.json"),
        br#"{"permissions":{"deny":["Bash(root-shared *)"]}}"#,
    );
    write(
        &sub.join(".claude/settings.json"),
        br#"{"permissions":{"deny":["Bash(sub-shared *)"]}}"#,
    );
    let loaded = load_permissions(&sources(&fx, sub.clone(), true));
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    let deny: Vec<(&str, RuleSource)> = loaded
        .context
        .deny
        .iter()
        .map(|r| (r.rule.as_str(), r.source))
        .collect();
    assert_eq!(
        deny,
        [
            ("Bash(rm *)", RuleSource::LocalSettings),
            ("Bash(sub-shared *)", RuleSource::ProjectSettings),
        ]
    );
    let local = loaded
        .files
        .iter()
        .find(|f| f.source == RuleSource::LocalSettings)
        .and_then(|f| f.path.clone());
    assert_eq!(local, Some(repo.join(".claude/settings.local.json")));
    assert_eq!(bash(&fx, &loaded, &sub, "rm -rf build").await, "deny");
}

/// The local file's `/x` rules are anchored where the file is read, the repository's root:
/// from `repo/sub`, `Read(/secrets/**)` in `repo/.claude/settings.local.json` guards
/// `repo/secrets`, as it does from `repo`, and not `repo/sub/secrets`. The project file's
/// `/x` stays the project directory's.
#[tokio::test]
async fn the_local_files_slash_rules_are_anchored_at_the_git_root() {
    let fx = Fixture::new();
    let repo = fx.out.join("repo");
    let sub = repo.join("sub");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("secrets")).unwrap();
    std::fs::create_dir_all(sub.join("secrets")).unwrap();
    write(
        &repo.join(".claude/settings.local.json"),
        br#"{"permissions":{"deny":["Read(/secrets/**)"]}}"#,
    );
    write(
        &sub.join(".claude/settings.json"),
        br#"{"permissions":{"deny":["Read(/shared/**)"]}}"#,
    );
    let read = |cwd: PathBuf, loaded: LoadedPermissions, path: PathBuf| {
        let home = fx.home.clone();
        let tool = probe(&fx, "Read");
        async move {
            let mut perm = loaded.context.clone();
            perm.mode = tool_core::PermissionMode::BypassPermissions;
            perm.bypass_available = true;
            let tctx = ToolUseContext::new(&cwd)
                .with_home(Some(home))
                .with_permission(perm);
            behavior(
                &loaded
                    .engine()
                    .decide(&tool, &json!({"file_path": path}), &tctx)
                    .await,
            )
            .to_owned()
        }
    };
    for cwd in [&repo, &sub] {
        let loaded = load_permissions(&sources(&fx, cwd.clone(), true));
        assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
        let got = read(cwd.clone(), loaded, repo.join("secrets/k")).await;
        assert_eq!(got, "deny", "from {}", cwd.display());
    }
    let loaded = load_permissions(&sources(&fx, sub.clone(), true));
    assert_eq!(
        read(sub.clone(), loaded, sub.join("secrets/k")).await,
        "allow"
    );
    let loaded = load_permissions(&sources(&fx, sub.clone(), true));
    assert_eq!(
        read(sub.clone(), loaded, sub.join("shared/k")).await,
        "deny"
    );
}

/// A worktree's `.git` is a file: its directory is the root all the same.
#[test]
fn a_worktree_git_file_marks_the_root() {
    let fx = Fixture::new();
    let wt = fx.out.join("wt");
    write(&wt.join(".git"), b"gitdir: /somewhere/.git/worktrees/wt\n");
    write(&wt.join(".claude/settings.local.json"), DENY_RM.as_bytes());
    let deep = wt.join("a/b");
    std::fs::create_dir_all(&deep).unwrap();
    let loaded = load_permissions(&sources(&fx, deep, true));
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert!(
        loaded
            .context
            .deny
            .iter()
            .any(|r| r.rule == "Bash(rm *)" && r.source == RuleSource::LocalSettings),
        "{:?}",
        loaded.context.deny
    );
}

/// Outside any repository the local file is the project directory's, as before.
#[test]
fn without_a_repository_the_local_file_is_the_project_dirs() {
    let fx = Fixture::new();
    let plain = fx.out.join("plain");
    write(
        &plain.join(".claude/settings.local.json"),
        DENY_RM.as_bytes(),
    );
    // The directory above is no repository either (the temp dir's parents hold no `.git`).
    assert!(tool_core::git_root(&plain).is_none());
    let (files, diags) = load_settings_files(&sources(&fx, plain.clone(), true));
    assert!(diags.is_empty(), "{diags:?}");
    assert_eq!(
        files
            .iter()
            .find(|f| f.source == RuleSource::LocalSettings)
            .and_then(|f| f.path.clone()),
        Some(plain.join(".claude/settings.local.json"))
    );
}

/// A local file in a subdirectory of the repository is not read (Claude Code does not read
/// it either); one with content is reported, so that its rules are not lost unnoticed.
#[test]
fn a_local_file_below_the_git_root_is_reported_not_read() {
    let fx = Fixture::new();
    let repo = fx.out.join("repo");
    let sub = repo.join("sub");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let stray = sub.join(".claude/settings.local.json");
    write(&stray, br#"{"permissions":{"deny":["Bash(sub-local *)"]}}"#);
    let loaded = load_permissions(&sources(&fx, sub, true));
    assert!(loaded.context.deny.is_empty(), "{:?}", loaded.context.deny);
    let warning = loaded
        .diagnostics
        .iter()
        .find(|d| d.file.as_deref() == Some(stray.as_path()))
        .unwrap_or_else(|| panic!("{:?}", messages(&loaded)));
    assert_eq!(warning.severity, Severity::Warning);
    assert!(
        warning.message.contains(
            &repo
                .join(".claude/settings.local.json")
                .display()
                .to_string()
        ),
        "{warning}"
    );
    assert!(!loaded.has_errors());
}

// --- 3. Blank files --------------------------------------------------------------------------

/// Empty, whitespace-only and BOM-only files are `{}`: no error on every session.
#[test]
fn blank_settings_files_are_empty_objects() {
    let fx = Fixture::new();
    let managed = fx.home.join("managed");
    write(&managed.join("managed-settings.json"), b"");
    write(&fx.home.join("config/settings.json"), b"  \n\t\r\n");
    write(&fx.proj.join(".claude/settings.json"), BOM);
    write(
        &fx.proj.join(".claude/settings.local.json"),
        b"\xEF\xBB\xBF \n",
    );
    let flag = fx.home.join("blank-flag.json");
    write(&flag, b"\n");
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.managed_dir = Some(managed);
    s.flag_settings = vec![flag.display().to_string()];
    let loaded = load_permissions(&s);
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert!(loaded.command_line_errors().is_empty());
    assert!(loaded.context.deny.is_empty() && loaded.context.allow.is_empty());
}

// --- 4. A bad inline `--settings` value --------------------------------------------------------

/// Invalid inline JSON is reported with serde's line, column and reason.
#[test]
fn bad_inline_settings_json_says_where_and_what() {
    let fx = Fixture::new();
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec!["{\"permissions\": {\n  \"deny\": [\"Bash(rm *)\",]\n}}".into()];
    let loaded = load_permissions(&s);
    let errors = loaded.command_line_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let e = &errors[0];
    assert!(e.contains("--settings"), "{e}");
    assert!(e.contains("invalid JSON"), "{e}");
    assert!(e.contains("trailing comma"), "{e}");
    assert!(e.contains("line 2 column"), "{e}");

    s.flag_settings = vec![r#"{"permissions": {}} extra"#.into()];
    let errors = load_permissions(&s).command_line_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("trailing characters at line 1 column"),
        "{}",
        errors[0]
    );
}

// --- A `--mode` flag and `defaultMode` -------------------------------------------------------

/// `--mode` takes the place of the settings' `defaultMode`: under `defaultMode:
/// "bypassPermissions"`, `--mode plan` is plan mode (a write is refused, `rm` asks) and
/// `--mode default` asks, where keeping bypass available made plan mode act as bypass.
#[tokio::test]
async fn a_mode_flag_replaces_a_bypass_default_mode() {
    use tool_core::PermissionMode;
    let fx = Fixture::new();
    write(
        &fx.home.join("config/settings.json"),
        br#"{"permissions":{"defaultMode":"bypassPermissions"}}"#,
    );
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert_eq!(loaded.context.mode, PermissionMode::BypassPermissions);
    assert!(loaded.context.bypass_available);
    assert_eq!(bash(&fx, &loaded, &fx.proj, "rm -rf build").await, "allow");
    for (mode, expected) in [
        (PermissionMode::Plan, "deny"),
        (PermissionMode::Default, "ask"),
        (PermissionMode::BypassPermissions, "allow"),
    ] {
        let mut context = loaded.context.clone();
        loaded.apply_mode_flag(&mut context, Some(mode)).unwrap();
        assert_eq!(
            context.bypass_available,
            mode == PermissionMode::BypassPermissions,
            "{mode:?}"
        );
        let write = {
            let engine = loaded.engine();
            let tctx = ToolUseContext::new(&fx.proj)
                .with_home(Some(fx.home.clone()))
                .with_permission(context);
            let tool = probe(&fx, "Write");
            let input = json!({"file_path": fx.proj.join("x.txt"), "content": "y"});
            behavior(&engine.decide(&tool, &input, &tctx).await).to_owned()
        };
        assert_eq!(write, expected, "Write under --mode {mode:?}");
    }
}

// --- The session's own settings files ---------------------------------------------------------

/// Writing a settings file this session reads is a safety check (asks even in bypass mode)
/// wherever it is: the user's `settings.json` under a config dir that is no `.claude`
/// directory (`$CLAUDE_CONFIG_DIR`), before it exists too, and a `--settings` file. So is
/// anything else in that config dir (its skills and agents are every session's, as those of
/// `~/.claude` are); a file next to the `--settings` file is not.
#[tokio::test]
async fn the_sessions_settings_files_are_protected_wherever_they_are() {
    let fx = Fixture::new();
    let flag = fx.proj.join("perms.json");
    write(&flag, br#"{"permissions":{"allow":["Bash(ls)"]}}"#);
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![flag.display().to_string()];
    let loaded = load_permissions(&s);
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    let user = fx.home.join("config/settings.json");
    assert!(!user.exists());
    for mode in [
        tool_core::PermissionMode::BypassPermissions,
        tool_core::PermissionMode::AcceptEdits,
    ] {
        let mut context = loaded.context.clone();
        loaded.apply_mode_flag(&mut context, Some(mode)).unwrap();
        // Inside the working directories: acceptEdits would allow any other write there.
        context
            .additional_working_directories
            .push(fx.home.join("config"));
        let engine = loaded.engine();
        let tctx = ToolUseContext::new(&fx.proj)
            .with_home(Some(fx.home.clone()))
            .with_permission(context);
        let write = probe(&fx, "Write");
        let bash_tool = probe(&fx, "Bash");
        let decide = |tool, input: serde_json::Value| {
            let (engine, tctx) = (&engine, &tctx);
            async move { behavior(&engine.decide(tool, &input, tctx).await).to_owned() }
        };
        for path in [&user, &flag] {
            let input = json!({"file_path": path, "content": "{}"});
            assert_eq!(
                decide(&write, input).await,
                "ask",
                "{mode:?} Write {path:?}"
            );
            let command = format!("echo '{{}}' > {}", path.display());
            assert_eq!(
                decide(&bash_tool, json!({"command": command})).await,
                "ask",
                "{mode:?} {command}"
            );
        }
        let skill = fx.home.join("config/skills/s/SKILL.md");
        let input = json!({"file_path": skill, "content": "x"});
        assert_eq!(decide(&write, input).await, "ask", "{mode:?}");
        let command = format!("echo x > {}", skill.display());
        assert_eq!(
            decide(&bash_tool, json!({"command": command})).await,
            "ask",
            "{mode:?}"
        );
        let beside = json!({"file_path": fx.proj.join("notes.json"), "content": "{}"});
        assert_eq!(decide(&write, beside).await, "allow", "{mode:?}");
    }
}

/// A `defaultMode` of bypassPermissions that another file turns off is reported with the
/// file that turned it off (it named the managed settings, which were not there).
#[test]
fn disabled_bypass_is_reported_where_it_is_disabled() {
    let fx = Fixture::new();
    let user = fx.home.join("config/settings.json");
    write(
        &user,
        br#"{"permissions":{"disableBypassPermissionsMode":"disable"}}"#,
    );
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.inline.push((
        RuleSource::FlagSettings,
        json!({"permissions": {"defaultMode": "bypassPermissions"}}),
    ));
    let loaded = load_permissions(&s);
    assert_eq!(loaded.context.mode, tool_core::PermissionMode::Default);
    let warning = loaded
        .diagnostics
        .iter()
        .find(|d| d.message.contains("disableBypassPermissionsMode"))
        .unwrap_or_else(|| panic!("{:?}", messages(&loaded)));
    assert_eq!(warning.severity, Severity::Warning);
    assert_eq!(warning.source, RuleSource::UserSettings);
    assert_eq!(warning.file.as_deref(), Some(user.as_path()));
}

/// A rule list under a misspelt key, or beside `permissions` instead of in it, does nothing:
/// each is reported (a warning naming the file and the key), and the known keys are not.
#[test]
fn misplaced_and_unknown_permission_keys_are_reported() {
    let fx = Fixture::new();
    let user = fx.home.join("config/settings.json");
    write(
        &user,
        br#"{"deny": ["Read(.env)"], "permission": {}, "Permissions": {},
            "permissions": {"Deny": ["Read(.env)"], "denied": [], "allow": [], "ask": [],
            "defaultMode": "default", "additionalDirectories": []}}"#,
    );
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let said = messages(&loaded);
    for expected in [
        "`deny` belongs under `permissions`; ignored here",
        "unknown key `permission`; ignored (did you mean `permissions`?)",
        "unknown key `Permissions`; ignored (did you mean `permissions`?)",
        "unknown key `permissions.Deny`; ignored",
        "unknown key `permissions.denied`; ignored",
    ] {
        assert!(
            said.iter()
                .any(|m| m.starts_with(&user.display().to_string()) && m.contains(expected)),
            "{expected:?} not in {said:#?}"
        );
    }
    assert_eq!(said.len(), 5, "{said:#?}");
    assert!(
        loaded
            .diagnostics
            .iter()
            .all(|d| d.severity == Severity::Warning)
    );
}

/// Found by review: with a cwd whose name is not UTF-8, an inline `--settings` deny rule
/// `Read(/x)` given after a `--settings` file was made absolute with the name's lossy form
/// and silently matched nothing. It cannot be written as text: it is an error, which stops
/// the command as other broken `--settings` do.
#[test]
fn a_rule_that_cannot_be_anchored_in_a_non_utf8_directory_is_an_error() {
    use std::os::unix::ffi::OsStrExt as _;
    let fx = Fixture::new();
    let odd = fx.proj.join(std::ffi::OsStr::from_bytes(b"p\xff"));
    std::fs::create_dir_all(&odd).unwrap();
    let file_dir = fx.home.join("sb");
    std::fs::create_dir_all(&file_dir).unwrap();
    let file = file_dir.join("s.json");
    std::fs::write(&file, r#"{"permissions":{"deny":["Read(/y.txt)"]}}"#).unwrap();
    let mut s = sources(&fx, odd.clone(), true);
    s.flag_settings = vec![
        file.display().to_string(),
        r#"{"permissions":{"deny":["Read(/secret.txt)"]}}"#.to_owned(),
    ];
    let loaded = load_permissions(&s);
    let errors = loaded.command_line_errors();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("Read(/secret.txt)") && e.contains("not valid UTF-8")),
        "{errors:?}"
    );
    // A UTF-8 directory is anchored as before.
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![
        file.display().to_string(),
        r#"{"permissions":{"deny":["Read(/secret.txt)"]}}"#.to_owned(),
    ];
    let loaded = load_permissions(&s);
    assert!(
        loaded.command_line_errors().is_empty(),
        "{:?}",
        messages(&loaded)
    );
}

/// Found by review: a `~/.claude` that is a link to a dotfiles folder was protected only
/// through the link (by its name), not where the files really are; and a session working
/// anywhere inside the config directory left all of it unprotected. Only its own cwd's files
/// are the work.
#[tokio::test]
async fn the_config_directory_is_protected_through_its_link_and_beside_the_work() {
    let fx = Fixture::new();
    let real = fx.home.join("dotfiles/claude");
    std::fs::create_dir_all(real.join("agents")).unwrap();
    std::fs::create_dir_all(real.join("plugins/p")).unwrap();
    std::os::unix::fs::symlink(&real, fx.home.join(".claude")).unwrap();
    let write = probe(&fx, "Write");
    for (cwd, target, expect) in [
        (fx.proj.clone(), real.join("agents/x.md"), "ask"),
        // Only what sessions read there: the directory may be the home directory itself.
        (fx.proj.clone(), real.join("notes.md"), "allow"),
        // The directory itself (moved away, replaced by a link), and its parent.
        (fx.proj.clone(), real.clone(), "ask"),
        (fx.proj.clone(), fx.home.join("dotfiles"), "ask"),
        (fx.proj.clone(), real.join("Skills/s/SKILL.md"), "ask"),
        (fx.proj.clone(), real.join("CLAUDE.md"), "ask"),
        (fx.proj.clone(), fx.home.join(".claude/agents/y.md"), "ask"),
        (real.join("plugins/p"), real.join("plugins/p/x.md"), "allow"),
        (real.join("plugins/p"), real.join("agents/x.md"), "ask"),
    ] {
        let mut s = sources(&fx, cwd.clone(), true);
        s.user_config_dir = Some(fx.home.join(".claude"));
        let loaded = load_permissions(&s);
        let mut context = loaded.context.clone();
        loaded
            .apply_mode_flag(
                &mut context,
                Some(tool_core::PermissionMode::BypassPermissions),
            )
            .unwrap();
        context.additional_working_directories.push(real.clone());
        let engine = loaded.engine();
        let tctx = ToolUseContext::new(&cwd)
            .with_home(Some(fx.home.clone()))
            .with_permission(context);
        let r = engine
            .decide(&write, &json!({"file_path": target, "content": "x"}), &tctx)
            .await;
        assert_eq!(
            behavior(&r),
            expect,
            "{} from {}: {r:?}",
            target.display(),
            cwd.display()
        );
    }
}

/// Found by review: a settings file that is a FIFO hung the command, and one that is a link
/// to `/dev/zero` took all its memory (a repository can hold such a link). Only a regular
/// file is read; the others are reported, and the rest of the settings still apply.
#[test]
fn a_settings_file_that_is_no_regular_file_is_reported_not_read() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.proj.join(".claude")).unwrap();
    let project = fx.proj.join(".claude/settings.json");
    let local = fx.proj.join(".claude/settings.local.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&project)
        .status()
        .unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", &local).unwrap();
    write(
        &fx.home.join("config/settings.json"),
        br#"{"permissions":{"deny":["Bash(rm:*)"]}}"#,
    );
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let shown = messages(&loaded);
    for file in [&project, &local] {
        assert!(
            shown.iter().any(
                |m| m.contains(&file.display().to_string()) && m.contains("not a regular file")
            ),
            "{shown:?}"
        );
    }
    assert_eq!(loaded.context.deny[0].rule, "Bash(rm:*)");
}
