//! Settings loading as the 27th black-box review found it, from real files in a temp dir:
//! misspelt top-level keys whose loss fails open, `env` entries no environment can hold,
//! and the words of a `--settings` problem that stops the command.

use crate::common::{Fixture, messages, sources, write};
use tool_perms::settings::{Severity, load_permissions};

/// Found by review: a misspelt top-level key in an inline `--settings` value
/// (`permisions`, `permissions ` with a space) was accepted without a word and its rules
/// dropped, so the run failed open; only case variants were caught. A near miss (edit
/// distance, case, surrounding whitespace) of a key whose loss fails open is an error in an
/// inline value, each naming the key meant, while an unknown key that is no near miss stays
/// accepted (Claude Code's settings have many keys).
#[test]
fn a_near_miss_of_a_key_that_restricts_is_an_error_in_an_inline_value() {
    let fx = Fixture::new();
    for (value, meant) in [
        (r#"{"permisions":{"deny":["Bash(rm:*)"]}}"#, "permissions"),
        (r#"{"permissions ":{"deny":["Bash(rm:*)"]}}"#, "permissions"),
        (r#"{" permissions":{"deny":["Bash(rm:*)"]}}"#, "permissions"),
        (r#"{"PERMISSIONS":{"deny":["Bash(rm:*)"]}}"#, "permissions"),
        (r#"{"premissions":{"deny":["Bash(rm:*)"]}}"#, "permissions"),
        (r#"{"hoks":{}}"#, "hooks"),
        (r#"{"Hooks":{}}"#, "hooks"),
        (r#"{"hook":{}}"#, "hooks"),
        (r#"{"evn":{"A":"1"}}"#, "env"),
        (r#"{"ENV":{"A":"1"}}"#, "env"),
        (r#"{"disableAllHook":true}"#, "disableAllHooks"),
        (
            r#"{"allowedHttpHookUrl":["https://x/*"]}"#,
            "allowedHttpHookUrls",
        ),
        (
            r#"{"deniedMcpServer":[{"serverName":"x"}]}"#,
            "deniedMcpServers",
        ),
        (r#"{"allowedMcpServer":[]}"#, "allowedMcpServers"),
        (
            r#"{"disabledMcpJsonServers":["x"]}"#,
            "disabledMcpjsonServers",
        ),
    ] {
        let mut s = sources(&fx, fx.proj.clone(), true);
        s.flag_settings = vec![value.to_owned()];
        let loaded = load_permissions(&s);
        let errors = loaded.command_line_errors();
        assert_eq!(errors.len(), 1, "{value}: {:?}", messages(&loaded));
        assert!(
            errors[0].starts_with("--settings: error: unknown key `")
                && errors[0].contains(&format!("(did you mean `{meant}`?)")),
            "{value}: {}",
            errors[0]
        );
        assert!(!errors[0].contains("ignored"), "{}", errors[0]);
    }
    // Keys that are no near miss of such a key are accepted, as Claude Code's many others.
    for value in [
        r#"{"model":"opus","statusLine":{"type":"command","command":"x"}}"#,
        r#"{"theme":"dark","cleanupPeriodDays":3,"e":1,"fooBar":true}"#,
        r#"{"permissions":{"deny":["Bash(rm:*)"]},"hooks":{},"env":{},"disableAllHooks":false}"#,
        r#"{"enabledMcpjsonServers":["a"],"disabledMcpjsonServers":["b"]}"#,
    ] {
        let mut s = sources(&fx, fx.proj.clone(), true);
        s.flag_settings = vec![value.to_owned()];
        let loaded = load_permissions(&s);
        assert!(
            loaded.diagnostics.is_empty(),
            "{value}: {:?}",
            messages(&loaded)
        );
    }
}

/// The same near misses in a settings file (a `--settings` file, the user's, a project's)
/// are warnings naming the file: it may be shared with a Claude Code that reads other keys,
/// but its rules are not read, and that must not pass unseen.
#[test]
fn a_near_miss_in_a_settings_file_is_a_warning_naming_the_file() {
    let fx = Fixture::new();
    let flag = fx.home.join("flag.json");
    write(&flag, r#"{"permisions":{"deny":["Bash(rm:*)"]}}"#);
    let user = fx.home.join("config/settings.json");
    write(&user, r#"{"hoooks":{},"env ":{"A":"1"}}"#);
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![flag.display().to_string()];
    let loaded = load_permissions(&s);
    assert!(
        loaded.command_line_errors().is_empty(),
        "{:?}",
        messages(&loaded)
    );
    let said = messages(&loaded);
    for (file, key, meant) in [
        (&flag, "permisions", "permissions"),
        (&user, "hoooks", "hooks"),
        (&user, "env ", "env"),
    ] {
        assert!(
            said.iter()
                .any(|m| m.starts_with(&format!("{}: warning: ", file.display()))
                    && m.contains(&format!("unknown key `{key}`"))
                    && m.contains(&format!("(did you mean `{meant}`?)"))),
            "{key}: {said:?}"
        );
    }
    assert!(
        loaded
            .diagnostics
            .iter()
            .all(|d| d.severity == Severity::Warning)
    );
}

/// Found by review: a settings `env` entry whose name holds `=` (or is empty) or whose value
/// holds a NUL byte cannot be set in an environment, and was dropped without a word. Each is
/// a warning naming the file and the key.
#[test]
fn an_env_entry_no_environment_can_hold_is_a_warning() {
    let fx = Fixture::new();
    let user = fx.home.join("config/settings.json");
    write(
        &user,
        r#"{"env":{"A=B":"1","NUL_VALUE":"x\u0000y","":"empty","FINE":"ok","N":3}}"#,
    );
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let said = messages(&loaded);
    for key in ["`env.A=B`", "`env.NUL_VALUE`", "`env.`"] {
        assert!(
            said.iter()
                .any(|m| m.starts_with(&format!("{}: warning: ", user.display()))
                    && m.contains(key)
                    && m.contains("not set")),
            "{key}: {said:?}"
        );
    }
    assert_eq!(said.len(), 3, "{said:?}");
    // Inline: named by its flag.
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.user_config_dir = None;
    s.flag_settings = vec![r#"{"env":{"X=Y":"1"}}"#.to_owned()];
    let said = messages(&load_permissions(&s));
    assert!(
        said.iter()
            .any(|m| m.starts_with("--settings: warning: ") && m.contains("`env.X=Y`")),
        "{said:?}"
    );
}

/// Found by review: a `--settings` file that is not valid JSON stopped the command with
/// "invalid JSON …; file ignored": when the problem is fatal, its words must not say that
/// the file was ignored (nor any other "…; ignored" consequence).
#[test]
fn a_fatal_settings_problem_does_not_say_it_was_ignored() {
    let fx = Fixture::new();
    let bad = fx.home.join("bad.json");
    write(&bad, "[");
    let mistyped = fx.home.join("mistyped.json");
    write(
        &mistyped,
        r#"{"env":3,"permissions":{"deny":"Bash(rm:*)","defaultMode":"yolo","allow":[3]}}"#,
    );
    for file in [&bad, &mistyped] {
        let mut s = sources(&fx, fx.proj.clone(), true);
        s.flag_settings = vec![file.display().to_string()];
        let errors = load_permissions(&s).command_line_errors();
        assert!(!errors.is_empty(), "{}", file.display());
        for e in &errors {
            assert!(
                !e.contains("ignored") && !e.contains("skipped") && !e.contains("left out"),
                "{e}"
            );
        }
    }
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![bad.display().to_string()];
    let errors = load_permissions(&s).command_line_errors();
    assert!(errors[0].contains("invalid JSON"), "{errors:?}");
    // The diagnostic itself, shown where a file is ignored (an ambient one), keeps its tail.
    let user = fx.home.join("config/settings.json");
    write(&user, "[");
    let said = messages(&load_permissions(&sources(&fx, fx.proj.clone(), true)));
    assert!(
        said.iter().any(|m| m.ends_with("; file ignored")),
        "{said:?}"
    );
}
