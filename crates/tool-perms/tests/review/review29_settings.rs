//! Settings and rule checks as the 29th black-box review found them, from real files in a
//! temp dir: misspelt tool names in deny and ask rules, unbalanced parentheses, `Bash( )`,
//! and invisible characters in what diagnostics quote.

use crate::common::{Fixture, messages, sources, write};
use serde_json::json;
use tool_perms::rule::parse_rule;
use tool_perms::settings::{Severity, load_permissions};

/// The diagnostics of a project settings file (trusted) holding `settings`.
fn project_file_messages(settings: &serde_json::Value) -> (Vec<String>, Vec<Severity>) {
    let fx = Fixture::new();
    write(&fx.proj.join(".claude/settings.json"), settings.to_string());
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    (
        messages(&loaded),
        loaded.diagnostics.iter().map(|d| d.severity).collect(),
    )
}

/// The errors that stop a command given `value` as an inline `--settings` value.
fn inline_errors(value: &str) -> Vec<String> {
    let fx = Fixture::new();
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![value.to_owned()];
    load_permissions(&s).command_line_errors()
}

/// Found by review: misspelt tool names in deny and ask rules (`WebFecth`, `Wirte`, `Bsah`,
/// `Edti`) were accepted without a word, so the deny meant did nothing; only other capitals
/// (`bash`) were reported. As Claude Code warns of unknown tool names in deny and ask rules
/// (names with `_` or `*` exempt), each is a warning naming its file, with the tool meant
/// when one is close; the names of every build's tools (and their old names) are known, and
/// allow rules are not checked (a misspelt allow grants nothing).
#[test]
fn unknown_tool_names_in_deny_and_ask_rules_are_warned_about() {
    let (said, severities) = project_file_messages(&json!({"permissions": {
        "deny": ["WebFecth", "Wirte(./x)", "Bsah(rm:*)", "Zyzzyva"],
        "ask": ["Edti"],
        "allow": ["Wirte", "Bsah"],
    }}));
    for (rule, meant) in [
        ("WebFecth", Some("WebFetch")),
        ("Wirte(./x)", Some("Write")),
        ("Bsah(rm:*)", Some("Bash")),
        ("Edti", Some("Edit")),
        ("Zyzzyva", None),
    ] {
        let about: Vec<&String> = said
            .iter()
            .filter(|m| m.contains(&format!("rule `{rule}`")))
            .collect();
        assert_eq!(about.len(), 1, "{rule}: {said:?}");
        assert!(
            about[0].contains(".claude/settings.json: warning: ")
                && about[0].contains("no tool is named"),
            "{}",
            about[0]
        );
        match meant {
            Some(meant) => assert!(
                about[0].contains(&format!("did you mean `{meant}`?")),
                "{}",
                about[0]
            ),
            None => assert!(!about[0].contains("did you mean"), "{}", about[0]),
        }
    }
    assert!(
        severities.iter().all(|s| *s == Severity::Warning),
        "{said:?}"
    );
    assert!(
        !said.iter().any(|m| m.contains("allow rule")),
        "allow rules are not checked: {said:?}"
    );
    // Known names, from every build and Claude Code's, and the exempt ones: no word.
    let (said, _) = project_file_messages(&json!({"permissions": {
        "deny": ["Bash", "Read(./.env)", "WebFetch", "Sleep", "CronCreate", "REPL",
                 "EnterWorktree", "WordCount", "Task", "KillShell", "BashOutput", "Agent(x)",
                 "TaskCreate", "ToolSearch", "WebSearch", "LSP", "mcp__srv__tool", "my_tool",
                 "mcp__*", "*", "Web*"],
        "ask": ["AskUserQuestion", "Monitor(tail:*)", "PowerShell", "Skill(x)"],
    }}));
    assert!(said.is_empty(), "{said:?}");
}

/// In a value given inline on the command line (`--settings '{...}'`), which was written for
/// this command, a deny or ask rule naming no tool stops the command, as a misspelt key
/// there does: the deny meant would not hold. So does one with other capitals (`bash`),
/// which a file only warns of.
#[test]
fn an_unknown_tool_name_in_an_inline_value_stops_the_command() {
    for (value, meant) in [
        (r#"{"permissions":{"deny":["Bsah(rm:*)"]}}"#, "Bash"),
        (r#"{"permissions":{"ask":["Wirte"]}}"#, "Write"),
        (r#"{"permissions":{"deny":["bash(rm:*)"]}}"#, "Bash"),
    ] {
        let errors = inline_errors(value);
        assert_eq!(errors.len(), 1, "{value}: {errors:?}");
        assert!(
            errors[0].starts_with("--settings: error: ")
                && errors[0].contains(&format!("did you mean `{meant}`?")),
            "{value}: {}",
            errors[0]
        );
    }
    assert!(inline_errors(r#"{"permissions":{"allow":["Bsah"],"deny":["mcp__x__y"]}}"#).is_empty());
    // A file keeps the other capitals a warning.
    let (said, severities) =
        project_file_messages(&json!({"permissions": {"deny": ["bash(rm:*)"]}}));
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(severities, [Severity::Warning]);
}

/// Found by review: unbalanced parentheses were accepted without a word (`Bash(rm -rf *))`,
/// `Bash((rm -rf *)`, `Read(secrets)/**)`), the deny rule then matching nothing. As Claude
/// Code's validation, a rule needs as many unescaped `(` as `)`: these are errors, while
/// escaped parentheses in the content, and balanced ones, stay valid.
#[test]
fn unbalanced_parentheses_are_reported() {
    for rule in [
        "Bash(rm -rf *))",
        "Bash((rm -rf *)",
        "Read(secrets)/**)",
        "Bash(echo \\\\))",
        "Edit((x)",
    ] {
        let err = parse_rule(rule).unwrap_err();
        assert!(
            err.reason.contains("mismatched parentheses"),
            "{rule}: {err}"
        );
        let (said, severities) = project_file_messages(&json!({"permissions": {"deny": [rule]}}));
        assert_eq!(said.len(), 1, "{rule}: {said:?}");
        assert!(said[0].contains("mismatched parentheses"), "{}", said[0]);
        assert_eq!(severities, [Severity::Error], "{rule}");
        assert_eq!(
            inline_errors(&json!({"permissions": {"deny": [rule]}}).to_string()).len(),
            1,
            "{rule}"
        );
    }
    for (rule, content) in [
        ("Bash(echo \\(hi\\))", "echo (hi)"),
        ("Bash(echo (hi))", "echo (hi)"),
        ("Bash(f\\))", "f)"),
        ("Bash(f\\()", "f("),
        ("Read(./a\\(b)", "./a(b"),
        ("Bash(echo \\\\)", "echo \\"),
    ] {
        let parsed = parse_rule(rule).unwrap_or_else(|e| panic!("{rule}: {e}"));
        assert_eq!(parsed.content.as_deref(), Some(content), "{rule}");
    }
}

/// Found by review: `Bash( )` was taken as `Bash()` in the warning's words but kept matching
/// only an empty command, while `Bash()` is an error and `Read( )` was one of its own. Nothing
/// but spaces between the parentheses is the same error as `()`, in every tool's rule.
#[test]
fn nothing_but_spaces_in_parentheses_is_empty_parentheses() {
    for rule in [
        "Bash( )",
        "Bash(   )",
        "Read( )",
        "WebFetch(\t)",
        "mcp__x__y( )",
    ] {
        let err = parse_rule(rule).unwrap_err();
        assert!(err.reason.contains("empty parentheses"), "{rule}: {err}");
        let (said, severities) = project_file_messages(&json!({"permissions": {"deny": [rule]}}));
        assert_eq!(said.len(), 1, "{rule}: {said:?}");
        assert!(
            said[0].contains("empty parentheses") && !said[0].contains("read as"),
            "{}",
            said[0]
        );
        assert_eq!(severities, [Severity::Error], "{rule}");
    }
    assert_eq!(
        parse_rule("Bash( ls )").unwrap().content.as_deref(),
        Some(" ls ")
    );
}

/// Found by review: invisible characters in a key or a rule (a zero-width space, a no-break
/// space) were printed raw, so a diagnostic quoted a name that looked like the right one.
/// Every name and value a diagnostic quotes shows them escaped (`\u{200b}`), and a tool name
/// holding one is refused as such, not as an unsupported `Tool(param:value)` rule.
#[test]
fn invisible_characters_are_escaped_in_diagnostics() {
    let errors = inline_errors("{\"permissions\u{200b}\":{}}");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("unknown key `permissions\\u{200b}`"),
        "{}",
        errors[0]
    );
    let (said, _) = project_file_messages(&json!({
        "permissions": {"deny": ["Bash\u{200b}(rm:*)", "Read(./a\u{202e}b)"], "ask\u{a0}": []},
        "env\u{2028}": {},
    }));
    let all = said.join("\n");
    for hidden in ['\u{200b}', '\u{202e}', '\u{a0}', '\u{2028}'] {
        assert!(!all.contains(hidden), "{all:?}");
    }
    assert!(all.contains("`permissions.ask\\u{a0}`"), "{all}");
    assert!(all.contains("`env\\u{2028}`"), "{all}");
    let rule = said
        .iter()
        .find(|m| m.contains("`Bash\\u{200b}(rm:*)`"))
        .unwrap_or_else(|| panic!("{all}"));
    assert!(
        rule.contains("error: ")
            && rule.contains("invisible character")
            && !rule.contains("param:value"),
        "{rule}"
    );
    let err = parse_rule("Bash\u{200b}(rm:*)").unwrap_err();
    assert!(err.reason.contains("invisible character"), "{err}");
}
