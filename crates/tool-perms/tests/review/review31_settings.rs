//! Settings and rule loading as the 31st black-box review found them, from real files in a
//! temp dir: `sandbox` and model lists that are not read, Claude Code's `Tool(param:value)`
//! rules on built-in tools, `--settings` names with spaces, the refusal of
//! `--mode bypassPermissions` and `Bash( * )`.

use std::path::PathBuf;

use crate::common::{Fixture, behavior, messages, probe, sources, write};
use serde_json::{Value, json};
use tool_core::{PermissionMode, PermissionResult, ToolUseContext};
use tool_perms::settings::{
    LoadedPermissions, SettingsSources, Severity, load_permissions, resolve_flag_settings,
};

/// The settings loaded with `settings` as the (trusted) project's `.claude/settings.json`.
fn project_file(fx: &Fixture, settings: &Value) -> LoadedPermissions {
    write(&fx.proj.join(".claude/settings.json"), settings.to_string());
    load_permissions(&sources(fx, fx.proj.clone(), true))
}

/// The errors that stop a command given `value` as an inline `--settings` value.
fn inline_errors(value: &Value) -> Vec<String> {
    let fx = Fixture::new();
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![value.to_string()];
    load_permissions(&s).command_line_errors()
}

/// What `loaded` decides for a call of the probe tool `tool` with `input`, in `mode`.
async fn decide(
    fx: &Fixture,
    loaded: &LoadedPermissions,
    tool: &str,
    input: Value,
    mode: PermissionMode,
) -> PermissionResult {
    let mut permission = loaded.context.clone();
    permission.mode = mode;
    permission.bypass_available = mode == PermissionMode::BypassPermissions;
    let ctx = ToolUseContext::new(&fx.proj)
        .with_home(Some(fx.home.clone()))
        .with_permission(permission);
    loaded.engine().decide(&probe(fx, tool), &input, &ctx).await
}

/// The messages that quote `rule`.
fn about<'a>(said: &'a [String], rule: &str) -> Vec<&'a String> {
    said.iter()
        .filter(|m| m.contains(&format!("`{rule}`")))
        .collect()
}

// --- 1. Settings that are not read ----------------------------------------------------------

/// Found by review: `sandbox.enabled: true` was ignored without a word, so Bash ran
/// unconfined where the user's settings asked for a sandbox. It is a warning naming the
/// file (Toolwright has no sandbox), an error in a value given on the command line (the
/// confinement meant would not hold); a `sandbox` that enables nothing is not mentioned.
#[test]
fn an_enabled_sandbox_is_said_not_to_confine_anything() {
    let fx = Fixture::new();
    let user = fx.home.join("config/settings.json");
    write(
        &user,
        json!({"sandbox": {"enabled": true, "autoAllowBashIfSandboxed": false},
               "permissions": {"allow": ["Bash"]}})
        .to_string(),
    );
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let said = messages(&loaded);
    let sandbox: Vec<&String> = said.iter().filter(|m| m.contains("sandbox")).collect();
    assert_eq!(sandbox.len(), 1, "{said:?}");
    assert!(
        sandbox[0].starts_with(&format!("{}: warning: ", user.display()))
            && sandbox[0].contains("no sandbox")
            && sandbox[0].contains("not confine"),
        "{}",
        sandbox[0]
    );
    let errors = inline_errors(&json!({"sandbox": {"enabled": true}}));
    assert!(
        errors.len() == 1
            && errors[0].starts_with("--settings: error: ")
            && errors[0].contains("no sandbox"),
        "{errors:?}"
    );
    // Nothing enabled: Toolwright does what it says.
    let fx = Fixture::new();
    let loaded = project_file(&fx, &json!({"sandbox": {"enabled": false}}));
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
}

/// Found by review: managed `availableModels` and `deniedModels` were ignored without a word,
/// though the `agent` command may use any model. Each is a warning naming the file.
#[test]
fn model_lists_are_said_not_to_restrict_the_model() {
    let fx = Fixture::new();
    let managed = fx.home.join("managed");
    write(
        &managed.join("managed-settings.json"),
        json!({"availableModels": ["sonnet"], "deniedModels": ["opus"]}).to_string(),
    );
    let loaded = load_permissions(&SettingsSources {
        managed_dir: Some(managed.clone()),
        ..sources(&fx, fx.proj.clone(), true)
    });
    let said = messages(&loaded);
    for key in ["availableModels", "deniedModels"] {
        let found: Vec<&String> = said
            .iter()
            .filter(|m| m.contains(&format!("`{key}`")))
            .collect();
        assert_eq!(found.len(), 1, "{key}: {said:?}");
        assert!(
            found[0].starts_with(&format!(
                "{}: warning: ",
                managed.join("managed-settings.json").display()
            )) && found[0].contains("does not restrict"),
            "{}",
            found[0]
        );
    }
}

// --- 2. `Tool(param:value)` rules -----------------------------------------------------------

/// Found by review: Claude Code's `Tool(param:value)` deny rules on Bash, Read, Agent and
/// Skill did nothing, without a word: a Bash call with `run_in_background: true` ran under
/// `Bash(run_in_background:true)`. A deny or ask rule naming one of the tool's top-level
/// input fields now matches a call whose field has that value (`*` for any, a field left
/// out never matches), in every mode, and the rule is not reported as doing nothing.
#[tokio::test]
async fn field_rules_deny_and_ask_by_the_input_field() {
    let fx = Fixture::new();
    let loaded = project_file(
        &fx,
        &json!({"permissions": {
            "deny": ["Bash(run_in_background:true)", "Read(offset:*)", "Agent(model:opus)",
                     "Skill(args:*)", "Edit(replace_all:true)", "WebFetch(prompt:secret*)"],
            "ask": ["Task(isolation:worktree)"],
        }}),
    );
    let said = messages(&loaded);
    assert!(
        !said.iter().any(|m| m.contains("does nothing")
            || m.contains("not supported")
            || m.contains("error")),
        "{said:?}"
    );
    let readme = fx.proj.join("README.md").display().to_string();
    let main = fx.proj.join("src/main.rs").display().to_string();
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::BypassPermissions,
    ] {
        for (expect, tool, input) in [
            (
                "deny",
                "Bash",
                json!({"command": "ls", "run_in_background": true}),
            ),
            (
                "deny",
                "Bash",
                json!({"command": "ls", "run_in_background": "true"}),
            ),
            (
                "allow",
                "Bash",
                json!({"command": "ls", "run_in_background": false}),
            ),
            ("allow", "Bash", json!({"command": "ls"})),
            ("deny", "Read", json!({"file_path": readme, "offset": 3})),
            ("allow", "Read", json!({"file_path": readme})),
            (
                "deny",
                "Agent",
                json!({"prompt": "x", "description": "x", "model": "opus"}),
            ),
            (
                "allow",
                "Agent",
                json!({"prompt": "x", "description": "x", "model": "sonnet"}),
            ),
            ("allow", "Agent", json!({"prompt": "x", "description": "x"})),
            (
                "ask",
                "Agent",
                json!({"prompt": "x", "description": "x", "isolation": "worktree"}),
            ),
            ("deny", "Skill", json!({"skill": "commit", "args": ""})),
            (
                "deny",
                "WebFetch",
                json!({"url": "https://example.com", "prompt": "secret key"}),
            ),
            (
                "deny",
                "Edit",
                json!({"file_path": main, "old_string": "a", "new_string": "b", "replace_all": true}),
            ),
        ] {
            let got = decide(&fx, &loaded, tool, input.clone(), mode).await;
            // Bypass mode allows what is not denied or asked by a rule.
            let expect = match (mode, expect) {
                (PermissionMode::BypassPermissions, "allow") => "allow",
                (_, e) => e,
            };
            let got_behavior = behavior(&got);
            let fine = got_behavior == expect
                // Outside bypass a call that is not allowed may ask: only a deny or its
                // absence is the rule's.
                || (expect == "allow" && got_behavior == "ask" && mode != PermissionMode::BypassPermissions);
            assert!(fine, "{mode:?} {tool} {input}: {got:?}");
            if expect == "deny" {
                let PermissionResult::Deny { message, .. } = &got else {
                    unreachable!()
                };
                assert!(message.contains(tool), "{message}");
            }
        }
    }
    // The skill without arguments, and another that Read's offset does not name: untouched.
    let got = decide(
        &fx,
        &loaded,
        "Skill",
        json!({"skill": "commit"}),
        PermissionMode::BypassPermissions,
    )
    .await;
    assert_eq!(behavior(&got), "allow", "{got:?}");
}

/// A `FIELD:*` rule that is also the legacy prefix rule of a command or name
/// (`Bash(timeout:*)`: the command `timeout`) keeps that meaning and is read as Claude Code's
/// field rule too (a deny or ask, fail-closed), and the warning says both.
#[tokio::test]
async fn a_field_rule_that_is_also_a_prefix_rule_is_read_both_ways() {
    let fx = Fixture::new();
    let loaded = project_file(&fx, &json!({"permissions": {"deny": ["Bash(timeout:*)"]}}));
    let said = messages(&loaded);
    let found = about(&said, "Bash(timeout:*)");
    assert_eq!(found.len(), 1, "{said:?}");
    assert!(
        found[0].contains(": warning: ")
            && found[0].contains("`timeout` field")
            && found[0].contains("command"),
        "{}",
        found[0]
    );
    for input in [
        json!({"command": "timeout 5 ls"}),
        json!({"command": "ls", "timeout": 5000}),
    ] {
        let got = decide(&fx, &loaded, "Bash", input.clone(), PermissionMode::Default).await;
        assert_eq!(behavior(&got), "deny", "{input}: {got:?}");
    }
    let got = decide(
        &fx,
        &loaded,
        "Bash",
        json!({"command": "ls"}),
        PermissionMode::Default,
    )
    .await;
    assert_eq!(behavior(&got), "allow", "{got:?}");
}

/// A field rule on the field the tool's rules already match (`Bash(command:rm*)`,
/// `Read(file_path:/etc/*)`), which Claude Code ignores, does nothing: a warning in a file,
/// an error in a value given on the command line (the deny meant would not hold), as is a
/// deny that does nothing on an MCP tool (content naming no field: `mcp__gh__delete(prod)`).
/// A field rule in an allow list, which Claude Code reads in deny and ask lists only, is a
/// warning.
#[test]
fn field_rules_that_do_nothing_are_said_and_stop_an_inline_value() {
    let fx = Fixture::new();
    let loaded = project_file(
        &fx,
        &json!({"permissions": {
            "deny": ["Bash(command:rm*)", "Read(file_path:/etc/*)"],
            "allow": ["Bash(run_in_background:true)"],
        }}),
    );
    let said = messages(&loaded);
    for rule in ["Bash(command:rm*)", "Read(file_path:/etc/*)"] {
        let found = about(&said, rule);
        assert_eq!(found.len(), 1, "{rule}: {said:?}");
        assert!(
            found[0].contains(".claude/settings.json: warning: ")
                && found[0].contains("does nothing"),
            "{}",
            found[0]
        );
    }
    let found = about(&said, "Bash(run_in_background:true)");
    assert_eq!(found.len(), 1, "{said:?}");
    assert!(
        found[0].contains(": warning: ") && found[0].contains("deny and ask"),
        "{}",
        found[0]
    );
    for rule in ["Bash(command:rm*)", "mcp__gh__delete(prod)"] {
        let errors = inline_errors(&json!({"permissions": {"deny": [rule]}}));
        assert!(
            errors.len() == 1
                && errors[0].starts_with("--settings: error: ")
                && errors[0].contains(rule)
                && errors[0].contains("does nothing"),
            "{rule}: {errors:?}"
        );
    }
    // An allow field rule given inline grants nothing: not an error.
    assert!(
        inline_errors(&json!({"permissions": {"allow": ["Bash(run_in_background:true)"]}}))
            .is_empty()
    );
}

// --- 3. `--settings` names ------------------------------------------------------------------

/// Found by review: `--settings` file names were trimmed, so `' s5.json'` read `s5.json` (a
/// different file) and a file whose name ends in a space could not be read. A name on the
/// command line is taken as written.
#[test]
fn settings_file_names_are_taken_as_written() {
    let fx = Fixture::new();
    let resolved = resolve_flag_settings(&[" s5.json".to_owned()], &fx.proj);
    assert!(resolved[0].ends_with("/ s5.json"), "{resolved:?}");
    let trailing = fx.out.join("only-trailing.json ");
    write(
        &trailing,
        json!({"permissions": {"deny": ["Bash(rm:*)"]}}).to_string(),
    );
    let named = resolve_flag_settings(&[trailing.display().to_string()], &fx.proj);
    assert_eq!(PathBuf::from(&named[0]), trailing);
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = named;
    let loaded = load_permissions(&s);
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    assert!(
        loaded.context.deny.iter().any(|r| r.rule == "Bash(rm:*)"),
        "{:?}",
        loaded.context
    );
}

/// Found by review: `--settings ' '` was read as the directory the command ran in
/// ("Is a directory"). A blank name is an error that says so.
#[test]
fn a_blank_settings_name_is_an_error_saying_so() {
    let fx = Fixture::new();
    for blank in [" ", "", "\t "] {
        let mut s = sources(&fx, fx.proj.clone(), true);
        s.flag_settings = resolve_flag_settings(&[blank.to_owned()], &fx.proj);
        let errors = load_permissions(&s).command_line_errors();
        assert!(
            errors.len() == 1
                && errors[0].contains("--settings")
                && errors[0].contains("blank")
                && !errors[0].contains("directory"),
            "{blank:?}: {errors:?}"
        );
    }
}

// --- 4. The refusal of `--mode bypassPermissions` -------------------------------------------

/// Found by review: `--mode bypassPermissions` refused by `disableBypassPermissionsMode`
/// did not say which file disabled it. The refusal names it.
#[test]
fn a_refused_bypass_names_the_file_that_disabled_it() {
    let fx = Fixture::new();
    let loaded = project_file(
        &fx,
        &json!({"permissions": {"disableBypassPermissionsMode": "disable"}}),
    );
    let mut context = loaded.context.clone();
    let err = loaded
        .apply_mode_flag(&mut context, Some(PermissionMode::BypassPermissions))
        .unwrap_err();
    let file = fx.proj.join(".claude/settings.json").display().to_string();
    assert!(
        err.contains("bypass is disabled by settings") && err.contains(&file),
        "{err}"
    );
}

// --- 5. `Bash( * )` -------------------------------------------------------------------------

/// Found by review: `Bash( * )` was said to be read as `Bash(*)`, but did not act as it: Bash
/// stayed offered and its calls were refused one by one. It now is the whole tool, as
/// `Bash(*)` is.
#[tokio::test]
async fn a_spaced_star_is_the_whole_tool() {
    let fx = Fixture::new();
    let loaded = project_file(&fx, &json!({"permissions": {"deny": ["Bash( * )"]}}));
    let said = messages(&loaded);
    assert!(
        said.iter().any(|m| m.contains("read as `Bash(*)`")),
        "{said:?}"
    );
    assert!(loaded.engine().is_blanket_denied(&probe(&fx, "Bash")));
    let got = decide(
        &fx,
        &loaded,
        "Bash",
        json!({"command": "ls"}),
        PermissionMode::Default,
    )
    .await;
    let PermissionResult::Deny { message, .. } = &got else {
        panic!("{got:?}")
    };
    assert_eq!(message, "Permission to use Bash has been denied.");
    assert!(
        loaded
            .diagnostics
            .iter()
            .all(|d| d.severity == Severity::Warning),
        "{said:?}"
    );
}

/// A field rule on Read whose own reading (a path) is refused is dropped whole: it indexed
/// its place among the field rules before the path was refused, and that place then held the
/// next rule (`Bash(timeout:*)`, an ask), which denied every Bash call given a timeout.
#[tokio::test]
async fn a_field_rule_dropped_for_its_path_leaves_no_index_behind() {
    let fx = Fixture::new();
    let loaded = project_file(
        &fx,
        &json!({"permissions": {
            "deny": ["Read(pages:a/../b)"],
            "ask": ["Bash(timeout:*)"],
        }}),
    );
    assert!(
        messages(&loaded)
            .iter()
            .any(|m| m.contains("Read(pages:a/../b)") && m.contains("..")),
        "{:?}",
        messages(&loaded)
    );
    let r = decide(
        &fx,
        &loaded,
        "Bash",
        json!({"command": "ls", "timeout": 1000}),
        PermissionMode::Default,
    )
    .await;
    assert_eq!(behavior(&r), "ask", "{r:?}");
}
