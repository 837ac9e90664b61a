//! The 38th review's findings on `permissions.blockReadsOutsideWorkingDirectories`, from
//! real settings files and real files in a temp dir: shell commands that read outside the
//! working directories through a path the engine classes as written or cannot see, the
//! refusal's advice, plan mode's own file, and what the denial tells the model to ask for.

use std::path::Path;

use crate::common::{Fixture, behavior, messages, probe, write};
use serde_json::{Value, json};
use tool_core::{PermissionMode, PermissionResult, ToolUseContext};
use tool_perms::settings::{LoadedPermissions, load_permissions};

/// The settings loaded with `settings` as the user's `settings.json` (`<home>/config`).
fn user_file(fx: &Fixture, settings: &Value) -> LoadedPermissions {
    write(&fx.home.join("config/settings.json"), settings.to_string());
    let loaded = load_permissions(&crate::common::sources(fx, fx.proj.clone(), true));
    assert!(loaded.diagnostics.is_empty(), "{:?}", messages(&loaded));
    loaded
}

/// The context a session of `loaded` decides in, in `mode`.
fn session(fx: &Fixture, loaded: &LoadedPermissions, mode: PermissionMode) -> ToolUseContext {
    let mut permission = loaded.context.clone();
    permission.mode = mode;
    permission.bypass_available = mode == PermissionMode::BypassPermissions;
    ToolUseContext::new(&fx.proj)
        .with_home(Some(fx.home.clone()))
        .with_session_id("s38")
        .with_permission(permission)
}

/// What `loaded` decides for a call of the probe tool `tool` with `input` in `ctx`.
async fn decide_in(
    fx: &Fixture,
    loaded: &LoadedPermissions,
    tool: &str,
    input: &Value,
    ctx: &ToolUseContext,
) -> PermissionResult {
    loaded.engine().decide(&probe(fx, tool), input, ctx).await
}

/// A result's message (a denial's or a question's).
fn message(result: &PermissionResult) -> String {
    match result {
        PermissionResult::Deny { message, .. } | PermissionResult::Ask { message, .. } => {
            message.clone()
        }
        _ => String::new(),
    }
}

/// The shell commands the review found allowed in bypassPermissions (and by allow rules)
/// although they read `out/secret.txt`, outside the working directories.
fn reads_outside(out: &Path) -> Vec<String> {
    let s = out.join("secret.txt").display().to_string();
    vec![
        // Operands the engine classes as written: rsync's source, `sort -o`'s input, a
        // link's target, read back through the link the same line makes.
        format!("rsync {s} ."),
        format!("sort -o a.txt {s}"),
        format!("ln -s {s} l && cat l"),
        // Paths that cannot be seen: computed, or fed to the command by xargs.
        format!("cat $(echo {s})"),
        format!("xargs cat <<< {s}"),
        format!("echo {s} | xargs cat"),
        // A script or command name that cannot be seen.
        format!("eval \"$(echo cat {s})\""),
        format!("$(echo cat) {s}"),
    ]
}

/// Found by review: with `blockReadsOutsideWorkingDirectories` on, a shell read outside the
/// working directories was allowed by bypassPermissions (and by a Bash allow rule) when the
/// engine classed the path as written (`rsync SRC .`, `sort -o OUT IN`, `ln -s SRC l`) or
/// could not see it (`cat $(…)`, a command fed by xargs, `eval` of a computed string). Each
/// is now asked about in every mode, whatever allow rule matches; inside the working
/// directories nothing changes, and with the switch off every one of them runs in
/// bypassPermissions as before.
#[tokio::test]
async fn shell_reads_outside_through_any_operand_are_asked_in_every_mode() {
    let fx = Fixture::new();
    let allow = json!([
        "Bash(rsync:*)",
        "Bash(sort:*)",
        "Bash(ln:*)",
        "Bash(cat:*)",
        "Bash(xargs:*)",
        "Bash(echo:*)",
        format!("Read(/{}/**)", fx.out.display()),
        format!("Edit(/{}/**)", fx.out.display()),
    ]);
    let loaded = user_file(
        &fx,
        &json!({"permissions": {"blockReadsOutsideWorkingDirectories": true, "allow": allow}}),
    );
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::BypassPermissions,
    ] {
        let ctx = session(&fx, &loaded, mode);
        for command in reads_outside(&fx.out) {
            let input = json!({ "command": command });
            let got = decide_in(&fx, &loaded, "Bash", &input, &ctx).await;
            assert_eq!(behavior(&got), "ask", "{mode:?} `{command}`: {got:?}");
        }
        // Inside: as before.
        for command in [
            "rsync README.md copy.md",
            "sort -o a.txt README.md",
            "cat README.md",
        ] {
            let input = json!({ "command": command });
            let got = decide_in(&fx, &loaded, "Bash", &input, &ctx).await;
            assert_eq!(behavior(&got), "allow", "{mode:?} `{command}`: {got:?}");
        }
    }
    // The question says why, and which switch asks.
    let ctx = session(&fx, &loaded, PermissionMode::BypassPermissions);
    let input = json!({"command": format!("rsync {} .", fx.out.join("secret.txt").display())});
    let got = decide_in(&fx, &loaded, "Bash", &input, &ctx).await;
    assert!(
        message(&got).contains("blockReadsOutsideWorkingDirectories"),
        "{got:?}"
    );

    // Off: every one of them runs in bypassPermissions, as before.
    let fx = Fixture::new();
    let loaded = user_file(&fx, &json!({}));
    let ctx = session(&fx, &loaded, PermissionMode::BypassPermissions);
    for command in reads_outside(&fx.out) {
        let input = json!({ "command": command });
        let got = decide_in(&fx, &loaded, "Bash", &input, &ctx).await;
        assert_eq!(behavior(&got), "allow", "off `{command}`: {got:?}");
    }
}

/// Found by review: the refusal of a blocked shell read, in a session that cannot prompt
/// (`run`) or under `denyInsteadOfPrompting`, ended "(an allow rule in the settings would
/// let it run)" although the allow rules were there already: no allow rule lifts the block,
/// and the refusal no longer says one would.
#[tokio::test]
async fn a_blocked_read_s_refusal_does_not_promise_an_allow_rule() {
    let fx = Fixture::new();
    let secret = fx.out.join("secret.txt");
    for deny_instead in [false, true] {
        let loaded = user_file(
            &fx,
            &json!({"permissions": {
                "blockReadsOutsideWorkingDirectories": true,
                "denyInsteadOfPrompting": deny_instead,
                "allow": ["Bash(cat:*)", format!("Read(/{}/**)", fx.out.display())],
            }}),
        );
        let mut ctx = session(&fx, &loaded, PermissionMode::Default);
        let mut permission = ctx.permission().clone();
        permission.avoid_prompts = true;
        ctx = ctx.with_permission(permission);
        for command in [
            format!("cat {}", secret.display()),
            format!("cat $(echo {})", secret.display()),
        ] {
            let input = json!({ "command": command });
            let got = decide_in(&fx, &loaded, "Bash", &input, &ctx).await;
            let said = message(&got);
            assert!(
                behavior(&got) == "deny" && !said.contains("allow rule"),
                "{deny_instead} `{command}`: {got:?}"
            );
        }
    }
}

/// Found by review: with `blockReadsOutsideWorkingDirectories` on, plan mode's own plan file
/// (`<config>/plans/<id>.md`, outside the working directories) could be written but not read,
/// although plan mode tells the model to read it; a later Edit of it then failed. It is
/// readable and writable in plan mode, and readable after it (the session's own file); any
/// other file beside it stays blocked.
#[tokio::test]
async fn the_plan_file_stays_readable() {
    let fx = Fixture::new();
    let loaded = user_file(
        &fx,
        &json!({"permissions": {
            "blockReadsOutsideWorkingDirectories": true,
            "blockWritesOutsideWorkingDirectories": true,
        }}),
    );
    let ctx = session(&fx, &loaded, PermissionMode::Plan);
    let plan = ctx.plan_file().expect("a plan file");
    write(&plan, "# plan");
    let other = plan.with_file_name("other.md");
    write(&other, "# another session's plan");
    let read = json!({"file_path": plan.display().to_string()});
    let edit =
        json!({"file_path": plan.display().to_string(), "old_string": "plan", "new_string": "p"});
    for (tool, input) in [("Read", &read), ("Write", &edit), ("Edit", &edit)] {
        let got = decide_in(&fx, &loaded, tool, input, &ctx).await;
        assert_eq!(behavior(&got), "allow", "{tool}: {got:?}");
    }
    let got = decide_in(
        &fx,
        &loaded,
        "Read",
        &json!({"file_path": other.display().to_string()}),
        &ctx,
    )
    .await;
    assert_eq!(behavior(&got), "deny", "{got:?}");
    // After plan mode: still the session's own file to read (asked about as any path
    // outside, not refused).
    let ctx = session(&fx, &loaded, PermissionMode::Default);
    let got = decide_in(&fx, &loaded, "Read", &read, &ctx).await;
    assert_ne!(behavior(&got), "deny", "{got:?}");
}

/// Found by review: the block's denial told the model to have the user add the directory
/// "with --add-dir", a flag no Toolwright session command takes. It names
/// `permissions.additionalDirectories`, which is how a session gets a working directory.
#[tokio::test]
async fn the_denial_names_what_a_user_can_do() {
    let fx = Fixture::new();
    let loaded = user_file(
        &fx,
        &json!({"permissions": {
            "blockReadsOutsideWorkingDirectories": true,
            "blockWritesOutsideWorkingDirectories": true,
        }}),
    );
    let ctx = session(&fx, &loaded, PermissionMode::BypassPermissions);
    for (tool, file) in [("Read", "secret.txt"), ("Write", "new.txt")] {
        let input = json!({"file_path": fx.out.join(file).display().to_string(), "content": "x"});
        let got = decide_in(&fx, &loaded, tool, &input, &ctx).await;
        let said = message(&got);
        assert!(
            behavior(&got) == "deny"
                && said.contains("permissions.additionalDirectories")
                && !said.contains("--add-dir"),
            "{tool}: {got:?}"
        );
    }
}
