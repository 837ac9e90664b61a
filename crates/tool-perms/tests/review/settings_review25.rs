//! Settings loading as a black-box review found it, from real files in a temp dir: what an
//! untrusted project's misspelt keys are reported as, numbers `JSON.parse` reads as
//! Infinity, a dangling link as a settings file, the home directory as the project,
//! `allowManagedPermissionRulesOnly`'s type and level, unknown keys in values given on the
//! command line, the bypass warning under a `--mode` flag, how inline values are named,
//! duplicate keys, `--rules`, and a chain of links ending nowhere.

use crate::common::{Fixture, bash, messages, sources, write};
use serde_json::json;
use tool_core::{PermissionMode, RuleSource};
use tool_perms::settings::{Severity, load_permissions};

// --- 1. An untrusted project's misspelt or misplaced keys --------------------------------------

/// Found by review: in an untrusted project a deny list beside `permissions`, under a
/// misspelt `Permissions`/`permission`, or under `permissions.Deny` was dropped without a
/// word (or `Deny` listed as a grant that was "not applied"), and so was a
/// `disableBypassPermissionsMode: true`, which trusted is an error. The warnings and errors
/// are the same whatever the trust state, and the untrusted notice lists only grants.
#[test]
fn an_untrusted_projects_mistakes_are_reported_as_a_trusted_ones() {
    let cases = [
        (
            r#"{"deny":["Bash(rm:*)"]}"#,
            "`deny` belongs under `permissions`",
        ),
        (
            r#"{"Permissions":{"deny":["Bash(rm:*)"]}}"#,
            "unknown key `Permissions`",
        ),
        (
            r#"{"permission":{"deny":["Bash(rm:*)"]}}"#,
            "unknown key `permission`",
        ),
        (
            r#"{"permissions":{"Deny":["Bash(rm:*)"]}}"#,
            "unknown key `permissions.Deny`",
        ),
        (
            r#"{"permissions":{"disableBypassPermissionsMode":true}}"#,
            "must be \"disable\", got true",
        ),
        (
            r#"{"permissions":{"allow":["Bash(("],"defaultMode":"yolo"}}"#,
            "unknown `defaultMode`",
        ),
    ];
    for (text, expected) in cases {
        let fx = Fixture::new();
        write(&fx.proj.join(".claude/settings.json"), text);
        let trusted = load_permissions(&sources(&fx, fx.proj.clone(), true));
        let untrusted = load_permissions(&sources(&fx, fx.proj.clone(), false));
        assert!(
            messages(&trusted).iter().any(|m| m.contains(expected)),
            "{text}: {:?}",
            messages(&trusted)
        );
        assert_eq!(
            messages(&untrusted),
            messages(&trusted),
            "{text}: untrusted and trusted differ"
        );
        let grants = text.contains("allow");
        assert_eq!(
            untrusted.untrusted_ignored_keys,
            if grants {
                vec!["allow rules".to_owned(), "defaultMode".to_owned()]
            } else {
                Vec::<String>::new()
            },
            "{text}"
        );
        assert_eq!(untrusted.untrusted_ignored.is_empty(), !grants, "{text}");
        // The grants were still not applied.
        assert!(untrusted.context.allow.is_empty(), "{text}");
    }
}

// --- 2. Numbers out of range --------------------------------------------------------------------

/// Found by review: `1e400` anywhere in a settings file made it invalid JSON, deny rules
/// included; `JSON.parse` reads it (as Infinity). The file loads, its deny rule holds, and
/// the number reads as the largest finite one, with its sign.
#[tokio::test]
async fn a_number_out_of_range_keeps_the_files_deny_rules() {
    let fx = Fixture::new();
    write(
        &fx.home.join("config/settings.json"),
        r#"{"cleanupPeriodDays": 1e400, "x": [-1E+400, 1e-400, "1e400"],
            "permissions": {"deny": ["Bash(rm:*)"]}}"#,
    );
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert_eq!(bash(&fx, &loaded, &fx.proj, "rm -rf build").await, "deny");
    let user = &loaded.files[0].value;
    assert_eq!(user["cleanupPeriodDays"], json!(f64::MAX));
    assert_eq!(user["x"], json!([-f64::MAX, 0.0, "1e400"]));
}

// --- 3. A dangling link as a settings file --------------------------------------------------

/// Found by review: a settings file that is a link to nothing counted as no file, its deny
/// rules dropped without a word. It is reported, naming where the link leads, as a FIFO in
/// that place is; and so is a `.claude` directory that is a link to nothing.
#[test]
fn a_dangling_link_as_a_settings_file_is_reported() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.home.join("config")).unwrap();
    let user = fx.home.join("config/settings.json");
    std::os::unix::fs::symlink(fx.home.join("nonexistent.json"), &user).unwrap();
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let said = messages(&loaded);
    assert!(
        said.iter()
            .any(|m| m.starts_with(&user.display().to_string())
                && m.contains("error")
                && m.contains("a link to")
                && m.contains("nonexistent.json")
                && m.contains("which does not exist")),
        "{said:?}"
    );
    assert!(loaded.has_errors());

    // The directory it is in is a link to nothing.
    let fx = Fixture::new();
    let proj = fx.home.join("p2");
    std::fs::create_dir_all(&proj).unwrap();
    std::os::unix::fs::symlink(fx.home.join("gone"), proj.join(".claude")).unwrap();
    let loaded = load_permissions(&sources(&fx, proj.clone(), true));
    let said = messages(&loaded);
    assert!(
        said.iter().any(|m| m.contains(".claude")
            && m.contains("a link to")
            && m.contains("gone")
            && m.contains("which does not exist")),
        "{said:?}"
    );
    // A file that is simply not there is still no file.
    let fx = Fixture::new();
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
}

// --- 4. The home directory as the project -----------------------------------------------------

/// Found by review: with the project directory at the home directory, `~/.claude/settings.json`
/// was read twice, as user and as project settings; untrusted, the notice said its allow
/// rules were not applied while they applied from the user settings. It is the user's file
/// only, also when the config directory is reached through a link.
#[tokio::test]
async fn the_user_settings_file_is_not_also_the_projects() {
    let fx = Fixture::new();
    write(
        &fx.home.join(".claude/settings.json"),
        r#"{"permissions":{"allow":["Bash(make:*)"],"deny":["Bash(rm:*)"]}}"#,
    );
    std::os::unix::fs::symlink(fx.home.join(".claude"), fx.home.join("linked")).unwrap();
    for config in [fx.home.join(".claude"), fx.home.join("linked")] {
        let mut s = sources(&fx, fx.home.clone(), false);
        s.user_config_dir = Some(config.clone());
        let loaded = load_permissions(&s);
        assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
        assert!(loaded.untrusted_ignored.is_empty(), "{config:?}");
        assert!(loaded.untrusted_ignored_keys.is_empty(), "{config:?}");
        let sources_of = |rules: &[tool_core::SourcedRule]| -> Vec<RuleSource> {
            rules.iter().map(|r| r.source).collect()
        };
        assert_eq!(
            sources_of(&loaded.context.allow),
            [RuleSource::UserSettings]
        );
        assert_eq!(sources_of(&loaded.context.deny), [RuleSource::UserSettings]);
    }
}

// --- 5. `allowManagedPermissionRulesOnly` ---------------------------------------------------

/// Found by review: a managed `"allowManagedPermissionRulesOnly": "true"` was ignored
/// without a word (failing open), and the key outside managed settings gave no warning. As
/// `allowManagedMcpServersOnly`, a managed value that is not a boolean is an error, and
/// other levels' allow rules are dropped (see
/// `a_mistyped_managed_rules_only_keeps_the_other_levels_deny_and_ask_rules`); elsewhere the
/// key is reported as read from managed settings only.
#[test]
fn allow_managed_permission_rules_only_is_checked_for_type_and_level() {
    let fx = Fixture::new();
    let managed = fx.home.join("managed");
    let managed_file = managed.join("managed-settings.json");
    write(
        &managed_file,
        r#"{"allowManagedPermissionRulesOnly": "true"}"#,
    );
    write(
        &fx.home.join("config/settings.json"),
        r#"{"permissions":{"allow":["Bash(ls)"]}}"#,
    );
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.managed_dir = Some(managed.clone());
    let loaded = load_permissions(&s);
    assert!(loaded.context.managed_rules_only, "{:?}", messages(&loaded));
    assert!(loaded.context.allow.is_empty());
    let error = loaded
        .diagnostics
        .iter()
        .find(|d| d.message.contains("allowManagedPermissionRulesOnly"))
        .unwrap_or_else(|| panic!("{:?}", messages(&loaded)));
    assert_eq!(error.severity, Severity::Error);
    assert_eq!(error.file.as_deref(), Some(managed_file.as_path()));
    assert!(error.message.contains("allow rules"), "{}", error.message);

    // `false` and `null` keep it off, without a word.
    for off in ["false", "null"] {
        write(
            &managed_file,
            format!(r#"{{"allowManagedPermissionRulesOnly": {off}}}"#),
        );
        let loaded = load_permissions(&s);
        assert!(!loaded.context.managed_rules_only, "{off}");
        assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    }

    // Outside managed settings: a warning in a file, an error in an inline value (see
    // `a_managed_only_key_in_an_inline_value_is_a_command_line_error`), and nothing
    // restricted.
    let fx = Fixture::new();
    let user = fx.home.join("config/settings.json");
    write(&user, r#"{"allowManagedPermissionRulesOnly": true}"#);
    let flag = fx.home.join("flag.json");
    write(&flag, r#"{"allowManagedPermissionRulesOnly": true}"#);
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![flag.display().to_string()];
    let loaded = load_permissions(&s);
    assert!(!loaded.context.managed_rules_only);
    let said: Vec<&tool_perms::settings::SettingsDiagnostic> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.message.contains("read from managed settings only"))
        .collect();
    assert_eq!(said.len(), 2, "{:?}", messages(&loaded));
    assert!(said.iter().all(|d| d.severity == Severity::Warning));
    assert!(
        said.iter()
            .any(|d| d.file.as_deref() == Some(user.as_path()))
    );
    assert!(
        said.iter()
            .any(|d| d.file.as_deref() == Some(flag.as_path()))
    );
    assert!(loaded.command_line_errors().is_empty());
}

// --- 6. Unknown keys in values given on the command line -----------------------------------

/// Found by review: an unknown key in an inline `--settings` value or inline rules
/// (`{"permissions":{"Deny":[...]}}`) was only a warning, so the command ran without the
/// rule meant. It is an error in what the command line gave; in a `--settings` file (which
/// may be shared with a Claude Code that reads newer keys) it stays a warning.
#[test]
fn an_unknown_key_in_an_inline_value_is_a_command_line_error() {
    let fx = Fixture::new();
    for (flag, inline) in [
        (Some(r#"{"permissions":{"Deny":["Bash(rm:*)"]}}"#), None),
        (Some(r#"{"deny":["Bash(rm:*)"]}"#), None),
        (Some(r#"{"Permissions":{"deny":["Bash(rm:*)"]}}"#), None),
        (None, Some(json!({"permissions": {"Deny": ["Bash(rm:*)"]}}))),
    ] {
        let mut s = sources(&fx, fx.proj.clone(), true);
        s.flag_settings = flag.into_iter().map(str::to_owned).collect();
        s.inline = inline
            .into_iter()
            .map(|v| (RuleSource::ProjectSettings, v))
            .collect();
        let loaded = load_permissions(&s);
        let errors = loaded.command_line_errors();
        assert_eq!(errors.len(), 1, "{flag:?}: {:?}", messages(&loaded));
        assert!(errors[0].contains("unknown key") || errors[0].contains("belongs under"));
        assert!(!errors[0].contains("ignored"), "{}", errors[0]);
    }
    // In a `--settings` file: a warning.
    let file = fx.home.join("flag.json");
    write(&file, r#"{"permissions":{"Deny":["Bash(rm:*)"]}}"#);
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![file.display().to_string()];
    let loaded = load_permissions(&s);
    assert!(loaded.command_line_errors().is_empty());
    assert_eq!(loaded.diagnostics.len(), 1, "{:?}", messages(&loaded));
    assert_eq!(loaded.diagnostics[0].severity, Severity::Warning);
}

// --- 7. The bypass warning under a `--mode` flag ------------------------------------------------

/// Found by review: with a `defaultMode` of bypassPermissions that another file disables and
/// `--mode plan`, the warning said "using default mode" while the session ran in plan mode.
/// The warning is about the settings' own mode: under a mode flag it is not said.
#[test]
fn the_bypass_off_warning_is_not_given_under_a_mode_flag() {
    let fx = Fixture::new();
    write(
        &fx.home.join("config/settings.json"),
        r#"{"permissions":{"defaultMode":"bypassPermissions"}}"#,
    );
    write(
        &fx.proj.join(".claude/settings.json"),
        r#"{"permissions":{"disableBypassPermissionsMode":"disable"}}"#,
    );
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let said = |mode| -> Vec<String> {
        loaded
            .diagnostics_under_mode(mode)
            .map(ToString::to_string)
            .collect()
    };
    assert!(
        said(None)
            .iter()
            .any(|m| m.contains("turns bypassPermissions off; using default mode")),
        "{:?}",
        said(None)
    );
    assert!(
        said(Some(PermissionMode::Plan)).is_empty(),
        "{:?}",
        said(Some(PermissionMode::Plan))
    );
}

// --- 8. How inline values are named ---------------------------------------------------------

/// Found by review: a problem in an inline value was labelled with a Rust name,
/// `FlagSettings (inline)`. It is named by its flag, with its position among the `--settings`
/// given when several are inline; an inline value of another kind by its source as Claude
/// Code spells it.
#[test]
fn inline_values_are_named_as_given() {
    let fx = Fixture::new();
    let bad = r#"{"permissions":{"deny":["Bash(("]}}"#;
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![bad.into()];
    let errors = load_permissions(&s).command_line_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].starts_with("--settings: error: "), "{errors:?}");

    let file = fx.home.join("ok.json");
    write(&file, "{}");
    s.flag_settings = vec![
        "{}".into(),
        file.display().to_string(),
        bad.into(),
        "{\"permissions\": [".into(),
    ];
    let errors = load_permissions(&s).command_line_errors();
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("--settings #3: error: ")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("--settings #4: error: ") && e.contains("invalid JSON")),
        "{errors:?}"
    );
    assert!(
        errors.iter().all(|e| !e.contains("FlagSettings")),
        "{errors:?}"
    );

    let mut s = sources(&fx, fx.proj.clone(), true);
    s.inline = vec![(
        RuleSource::ProjectSettings,
        json!({"permissions": {"deny": ["Bash(("]}}),
    )];
    let errors = load_permissions(&s).command_line_errors();
    assert!(
        errors[0].starts_with("inline projectSettings value: error: "),
        "{errors:?}"
    );
}

// --- 9. Duplicate keys ------------------------------------------------------------------------

/// Found by review: a key written twice in one object (`"deny"` twice) silently dropped the
/// first one's rules. The last one still wins, as with `JSON.parse`, and a warning names the
/// key and the file.
#[test]
fn a_duplicate_key_is_reported() {
    let fx = Fixture::new();
    let user = fx.home.join("config/settings.json");
    write(
        &user,
        r#"{"permissions":{"deny":["Bash(rm:*)"],"deny":[]},
            "hooks":{"PreToolUse":[{"matcher":"a","matcher":"b","hooks":[]}]},
            "env":{"A":"1"}, "x": 1e400}"#,
    );
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let said = messages(&loaded);
    assert!(loaded.context.deny.is_empty());
    for key in ["permissions.deny", "hooks.PreToolUse[0].matcher"] {
        assert!(
            said.iter()
                .any(|m| m.starts_with(&user.display().to_string())
                    && m.contains("warning")
                    && m.contains(&format!("duplicate key `{key}`"))),
            "{key}: {said:?}"
        );
    }
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(loaded.command_line_errors().is_empty());
    // In a `--settings` file too, a warning.
    let flag = fx.home.join("flag.json");
    write(
        &flag,
        r#"{"permissions":{"deny":["Bash(rm:*)"],"deny":[]}}"#,
    );
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![flag.display().to_string()];
    let loaded = load_permissions(&s);
    assert!(
        loaded.command_line_errors().is_empty(),
        "{:?}",
        messages(&loaded)
    );
    assert!(
        messages(&loaded).iter().any(|m| m.starts_with(&format!(
            "{}: warning: duplicate key `permissions.deny`",
            flag.display()
        ))),
        "{:?}",
        messages(&loaded)
    );
}

// --- 10. Duplicate and unknown keys in values given on the command line ---------------------

/// Found by review: a key written twice in an inline `--settings` value was only a warning,
/// though the value was written for this command and the first `deny` list's rules are lost
/// (failing open), as with an unknown key there. It is an error there, which stops the
/// command; in a `--settings` file it stays a warning (`a_duplicate_key_is_reported`).
#[test]
fn a_duplicate_key_in_an_inline_settings_value_is_a_command_line_error() {
    let fx = Fixture::new();
    for (value, key) in [
        (r#"{"env":{},"env":{}}"#, "env"),
        (
            r#"{"permissions":{"deny":["Bash(rm:*)"],"deny":[]}}"#,
            "permissions.deny",
        ),
    ] {
        let mut s = sources(&fx, fx.proj.clone(), true);
        s.flag_settings = vec![value.into()];
        let loaded = load_permissions(&s);
        let errors = loaded.command_line_errors();
        assert_eq!(errors.len(), 1, "{value}: {:?}", messages(&loaded));
        assert!(
            errors[0].starts_with(&format!("--settings: error: duplicate key `{key}`")),
            "{errors:?}"
        );
    }
}

/// Found by review: `permissions check --rules` with a key written twice
/// (`{"deny":["Read(.env)"],"deny":[]}`) allowed the read without a word, and a `--rules`
/// value in the `{"permissions": ...}` form with another key beside it
/// (`{"permissions":{},"rules":{"deny":[...]}}`) dropped that key's rules without a word.
/// Both are errors naming `--rules`; a wrong top-level key in the short form
/// (`{"rules":{"deny":[...]}}`) is the loader's unknown-key error, also an error; blank
/// text is refused; and a good value reads as project settings rules.
#[test]
fn duplicate_and_unknown_keys_in_rules_are_errors() {
    use tool_perms::settings::parse_rules_flag;
    for (text, expected) in [
        (
            r#"{"deny":["Read(.env)"],"deny":[]}"#,
            "--rules: error: duplicate key `deny`",
        ),
        (
            r#"{"permissions":{"deny":["Read(.env)"],"deny":[]}}"#,
            "--rules: error: duplicate key `permissions.deny`",
        ),
        (
            r#"{"permissions":{},"rules":{"deny":["Read(.env)"]}}"#,
            "--rules: error: unknown key `rules`",
        ),
        (
            r#"{"permissions":{},"allowManagedPermissionRulesOnly":true}"#,
            "--rules: error: unknown key `allowManagedPermissionRulesOnly`",
        ),
        ("[1]", "--rules must be a JSON object like"),
        (r#"{"deny":"#, "--rules is not valid JSON"),
        // An unset variable (`--rules "$RULES"`) is not "no rules".
        (" ", "--rules: error: the value is blank"),
    ] {
        let errors = parse_rules_flag(text).expect_err(text);
        assert_eq!(errors.len(), 1, "{text}: {errors:?}");
        assert!(errors[0].starts_with(expected), "{text}: {errors:?}");
    }
    // The short form's wrong key: the loader's error.
    let fx = Fixture::new();
    let value = parse_rules_flag(r#"{"rules":{"deny":["Read(.env)"]}}"#).unwrap();
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.inline = vec![(RuleSource::ProjectSettings, value)];
    let errors = load_permissions(&s).command_line_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("unknown key `permissions.rules`"),
        "{errors:?}"
    );
    // Good values, in both forms.
    for text in [
        "\u{feff}{\"deny\":[\"Read(.env)\"]}",
        r#"{"permissions":{"deny":["Read(.env)"]}}"#,
    ] {
        let value = parse_rules_flag(text).unwrap();
        assert_eq!(value, json!({"permissions": {"deny": ["Read(.env)"]}}));
    }
}

/// Found by review: `--settings '{"allowManagedPermissionRulesOnly":true}'` was only a
/// warning, though the key does nothing outside managed settings and the value was written
/// for this command (the rules it meant to restrict all apply). In an inline value, each
/// key read from managed settings only (`allowManagedPermissionRulesOnly`,
/// `allowManagedHooksOnly`, `allowManagedMcpServersOnly`, `managedMcpServers`) is an error,
/// as an unknown key there is; in a file it stays a warning.
#[test]
fn a_managed_only_key_in_an_inline_value_is_a_command_line_error() {
    let fx = Fixture::new();
    for (key, value) in [
        ("allowManagedPermissionRulesOnly", "true"),
        ("allowManagedPermissionRulesOnly", "\"true\""),
        ("allowManagedHooksOnly", "true"),
        ("allowManagedMcpServersOnly", "true"),
        ("managedMcpServers", "{}"),
    ] {
        let mut s = sources(&fx, fx.proj.clone(), true);
        s.flag_settings = vec![format!(r#"{{"{key}": {value}}}"#)];
        let loaded = load_permissions(&s);
        let errors = loaded.command_line_errors();
        assert_eq!(errors.len(), 1, "{key}: {:?}", messages(&loaded));
        assert!(
            errors[0].starts_with(&format!(
                "--settings: error: `{key}` is read from managed settings only"
            )),
            "{errors:?}"
        );
        assert!(!loaded.context.managed_rules_only);
    }
}

// --- 11. A chain of links ending nowhere ----------------------------------------------------

/// Found by review: with `.claude/settings.json -> l2 -> l3 -> <missing>`, the error said "a
/// link to l2, which does not exist", though `l2` exists. It names the missing end of the
/// chain.
#[test]
fn a_chain_of_links_ending_nowhere_names_its_missing_end() {
    let fx = Fixture::new();
    let claude = fx.proj.join(".claude");
    std::os::unix::fs::symlink("l2", claude.join("settings.json")).unwrap();
    std::os::unix::fs::symlink("l3", claude.join("l2")).unwrap();
    let missing = fx.home.join("nonexistent/x.json");
    std::os::unix::fs::symlink(&missing, claude.join("l3")).unwrap();
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let said = messages(&loaded);
    let error = said
        .iter()
        .find(|m| m.contains("settings.json: error"))
        .unwrap_or_else(|| panic!("{said:?}"));
    assert!(
        error.contains(&format!("{}, which does not exist", missing.display())),
        "{error}"
    );
    assert!(!error.contains("l2, which does not exist"), "{error}");
}

// --- 12. Duplicate keys at scale ------------------------------------------------------------

/// Found by review: the duplicate-key scan was quadratic (each duplicate's name looked up in
/// a list of all found, every array element's name distinct; the parent's whole path copied
/// at every `{` and `[`), so a large settings file in an untrusted repository hung the
/// start (80k duplicates took 18 s) and gave a warning for each. With 200k objects each
/// writing a key twice the file loads, its deny rule holds, the first 10 duplicates are
/// named and one more warning counts the rest; a duplicate below a 1 MB key and 100k
/// arrays is named in full. (The quadratic scan takes minutes on either.)
#[tokio::test]
async fn a_large_file_of_duplicate_keys_is_scanned_in_linear_time() {
    let fx = Fixture::new();
    let user = fx.home.join("config/settings.json");
    let objects = 200_000;
    let mut text = String::from(r#"{"permissions":{"deny":["Bash(rm:*)"]},"x":["#);
    for i in 0..objects {
        text.push_str(if i == 0 { "" } else { "," });
        text.push_str(r#"{"a":1,"a":2}"#);
    }
    text.push_str("]}");
    write(&user, &text);
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    assert_eq!(bash(&fx, &loaded, &fx.proj, "rm -rf build").await, "deny");
    let said = messages(&loaded);
    assert_eq!(said.len(), 11, "{:?}", &said[..said.len().min(20)]);
    for (i, m) in said[..10].iter().enumerate() {
        assert!(
            m.contains(&format!("warning: duplicate key `x[{i}].a`")),
            "{m}"
        );
    }
    assert!(
        said[10].contains("warning") && said[10].contains(&format!("{} more", objects - 10)),
        "{}",
        said[10]
    );

    let key = "k".repeat(1 << 20);
    let arrays = 100_000;
    let mut text = format!(r#"{{"{key}":["#);
    for _ in 0..arrays {
        text.push_str("[],");
    }
    text.push_str(r#"{"a":1,"a":2}]}"#);
    write(&user, &text);
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let said = messages(&loaded);
    assert_eq!(said.len(), 1, "{}", said.len());
    assert!(
        said[0].contains(&format!("duplicate key `{key}[{arrays}].a`")),
        "{}",
        &said[0][said[0].len().saturating_sub(200)..]
    );
}

// --- 13. A mistyped `allowManagedPermissionRulesOnly` --------------------------------------

/// Found by review: a managed `"allowManagedPermissionRulesOnly": "false"` was taken as
/// true, which dropped the user's and project's deny and ask rules along with their allows
/// (failing open for what they deny). A value that is not a boolean drops only the other
/// levels' allow rules, stricter than either reading: their deny and ask rules hold, the
/// managed rules apply, no rule is added during the session, and the error says so.
#[tokio::test]
async fn a_mistyped_managed_rules_only_keeps_the_other_levels_deny_and_ask_rules() {
    let fx = Fixture::new();
    let managed = fx.home.join("managed");
    let managed_file = managed.join("managed-settings.json");
    write(
        &fx.home.join("config/settings.json"),
        r#"{"permissions":{"allow":["Bash(touch:*)","Bash(rm:*)"],"deny":["Bash(rm:*)"],"ask":["Bash(git push:*)"]}}"#,
    );
    write(
        &fx.proj.join(".claude/settings.json"),
        r#"{"permissions":{"allow":["Bash(make:*)"],"deny":["Bash(curl:*)"]}}"#,
    );
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.managed_dir = Some(managed.clone());
    for value in [r#""false""#, r#""true""#, "0", "[]"] {
        write(
            &managed_file,
            format!(
                r#"{{"allowManagedPermissionRulesOnly": {value}, "permissions":{{"allow":["Bash(echo:*)"]}}}}"#
            ),
        );
        let loaded = load_permissions(&s);
        assert_eq!(
            bash(&fx, &loaded, &fx.proj, "rm -rf build").await,
            "deny",
            "{value}"
        );
        assert_eq!(
            bash(&fx, &loaded, &fx.proj, "curl x").await,
            "deny",
            "{value}"
        );
        assert_eq!(
            bash(&fx, &loaded, &fx.proj, "git push").await,
            "ask",
            "{value}"
        );
        assert_ne!(
            bash(&fx, &loaded, &fx.proj, "touch x").await,
            "allow",
            "{value}"
        );
        assert_ne!(
            bash(&fx, &loaded, &fx.proj, "make x").await,
            "allow",
            "{value}"
        );
        assert_eq!(
            bash(&fx, &loaded, &fx.proj, "echo hi").await,
            "allow",
            "{value}"
        );
        assert!(loaded.context.managed_rules_only, "{value}");
        let errors: Vec<_> = loaded
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .collect();
        assert_eq!(errors.len(), 1, "{value}: {:?}", messages(&loaded));
        assert_eq!(errors[0].file.as_deref(), Some(managed_file.as_path()));
        assert!(
            errors[0].message.contains("allow rules")
                && errors[0].message.contains("deny and ask rules"),
            "{}",
            errors[0].message
        );
    }
}
