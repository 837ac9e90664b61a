//! Session 30 on rules: a `Skill` rule written with the slash of a slash command
//! (`Skill(/greet)`) names the skill `greet`, and a `Skill(name:*)` deny or ask rule reaches
//! every skill whose name starts with `name`, as Claude Code's; the question about reading a
//! path whose links lead out of the project names where they lead, not only the link.

use std::path::Path;

use crate::common::{Case, Fixture, case, context, probe, run_table};
use serde_json::json;
use tool_core::{DecisionReason, PermissionResult};

/// A table row: the Skill tool invoking `skill`.
fn skill(expect: &'static str, skill: &str) -> Case {
    case(expect, "Skill", skill)
}

/// A `Skill` rule's leading `/` is the slash command's, not part of the name (the Skill tool
/// takes it off the model's input too): `Skill(/greet)` denies, asks about and allows the
/// skill `greet`, however the model names it (`greet`, `/greet`, ` /greet `).
#[tokio::test]
async fn a_skill_rule_with_a_leading_slash_names_the_skill() {
    run_table(vec![
        skill("deny", "greet")
            .allow(&["Skill"])
            .deny(&["Skill(/greet)"]),
        skill("deny", "/greet")
            .allow(&["Skill"])
            .deny(&["Skill(/greet)"]),
        skill("deny", " /greet ")
            .allow(&["Skill"])
            .deny(&["Skill(/greet)"]),
        skill("deny", "deploy-prod")
            .allow(&["Skill"])
            .deny(&["Skill(/deploy:*)"]),
        skill("deny", "greet")
            .allow(&["Skill"])
            .deny(&["Skill(/gr*)"]),
        skill("ask", "greet")
            .allow(&["Skill"])
            .ask(&["Skill(/greet)"]),
        skill("allow", "greet").allow(&["Skill(/greet)"]),
        skill("allow", "/greet").allow(&["Skill(/greet)"]),
        skill("allow", "deploy:prod").allow(&["Skill(/deploy:*)"]),
        // The rule still names one skill.
        skill("allow", "greeting")
            .allow(&["Skill"])
            .deny(&["Skill(/greet)"]),
        skill("ask", "other").allow(&["Skill(/greet)"]),
    ])
    .await;
}

/// `Skill(deploy:*)` in a deny or ask rule reaches every skill whose name starts with
/// `deploy` (`deploy-prod`, `deployment`), as Claude Code reads it, so that a settings file
/// shared with it denies here at least what it denies there; in an allow rule it keeps the
/// narrower reading (the name, or the name followed by `:`, a space or `/`), which allows
/// less. `Skill(:*)`, whose prefix is empty, denies every skill there, and here.
#[tokio::test]
async fn a_skill_prefix_deny_or_ask_reaches_every_name_it_starts() {
    run_table(vec![
        skill("deny", "deploy-prod")
            .allow(&["Skill"])
            .deny(&["Skill(deploy:*)"]),
        skill("deny", "deployment")
            .allow(&["Skill"])
            .deny(&["Skill(deploy:*)"]),
        skill("deny", "deploy")
            .allow(&["Skill"])
            .deny(&["Skill(deploy:*)"]),
        skill("deny", "deploy:prod")
            .allow(&["Skill"])
            .deny(&["Skill(deploy:*)"]),
        skill("allow", "dep")
            .allow(&["Skill"])
            .deny(&["Skill(deploy:*)"]),
        skill("ask", "deploy-prod")
            .allow(&["Skill"])
            .ask(&["Skill(deploy:*)"]),
        skill("deny", "anything")
            .allow(&["Skill"])
            .deny(&["Skill(:*)"]),
        // Allow rules keep the narrower reading.
        skill("ask", "deploy-prod").allow(&["Skill(deploy:*)"]),
        skill("ask", "deployment").allow(&["Skill(deploy:*)"]),
        skill("allow", "deploy").allow(&["Skill(deploy:*)"]),
        skill("allow", "deploy:prod").allow(&["Skill(deploy:*)"]),
        skill("allow", "deploy/prod").allow(&["Skill(deploy:*)"]),
        // Agent rules are not Skill rules: their prefix keeps its reading.
        case("allow", "Agent", "Explorer")
            .allow(&["Agent"])
            .deny(&["Agent(Explore:*)"]),
    ])
    .await;
}

/// The message and the reason of an ask (`None` for any other decision).
fn ask_text(r: &PermissionResult) -> Option<(String, Option<DecisionReason>)> {
    match r {
        PermissionResult::Ask {
            message, reason, ..
        } => Some((message.clone(), reason.clone())),
        _ => None,
    }
}

/// What the engine decides for `tool` with `input` in the fixture's project, with the
/// rules of `c`.
async fn decide(fx: &Fixture, c: &Case, input: serde_json::Value) -> PermissionResult {
    let (engine, ctx) = context(fx, c);
    engine.decide(&probe(fx, c.tool), &input, &ctx).await
}

/// The question about reading a link in the project that leads to `~/.ssh/id_rsa` names
/// both the link and the key, for Read, and for Glob and Grep searching a directory link
/// that leads out: a user approving `notes.txt` must see that it is the SSH key. It stays
/// the question about a read outside the working directories (reads of protected paths are
/// no safety check, in Claude Code or here). A write through a link that leads out names
/// where it leads the same way.
#[tokio::test]
async fn a_read_through_a_link_out_of_the_project_names_where_it_leads() {
    let fx = Fixture::new();
    let link = fx.proj.join("notes.txt");
    let key = fx.home.join(".ssh/id_rsa");
    std::os::unix::fs::symlink(&key, &link).unwrap();
    let c = case("ask", "Read", "");
    let got = decide(&fx, &c, json!({"file_path": link.display().to_string()})).await;
    let (message, reason) =
        ask_text(&got).unwrap_or_else(|| panic!("a read of the link is asked about: {got:?}"));
    let (link_s, key_s) = (link.display().to_string(), key.display().to_string());
    assert!(
        message.contains(&link_s) && message.contains(&key_s),
        "the question names the link and the key: {message}"
    );
    assert!(
        message.contains("outside the working directories"),
        "{message}"
    );
    match reason {
        Some(DecisionReason::WorkingDir { reason }) => assert!(
            reason.contains(&link_s) && reason.contains(&key_s),
            "the reason names both: {reason}"
        ),
        other => panic!("a read outside the working directories: {other:?}"),
    }

    // A search of a directory link leading out (`dir_out` -> the outside directory).
    let dir_link = fx.proj.join("dir_out");
    for tool in ["Glob", "Grep"] {
        let c = case("ask", tool, "");
        let got = decide(
            &fx,
            &c,
            json!({"path": dir_link.display().to_string(), "pattern": "x"}),
        )
        .await;
        let (message, _) =
            ask_text(&got).unwrap_or_else(|| panic!("{tool} of the link asks: {got:?}"));
        assert!(
            message.contains(&dir_link.display().to_string())
                && message.contains(&fx.out.display().to_string()),
            "{tool}: the question names the link and where it leads: {message}"
        );
    }

    // A file below a directory link: the question names the real file too.
    let below = fx.proj.join("dir_out/notes.md");
    let got = decide(&fx, &c, json!({"file_path": below.display().to_string()})).await;
    let (message, _) = ask_text(&got).unwrap();
    assert!(
        message.contains(&below.display().to_string())
            && message.contains(&fx.out.join("notes.md").display().to_string()),
        "{message}"
    );

    // An ask rule matched where the link leads names it too.
    let c = case("ask", "Read", "").ask(&["Read(~/.ssh/**)"]);
    let got = decide(&fx, &c, json!({"file_path": link_s})).await;
    let (message, _) = ask_text(&got).unwrap();
    assert!(
        message.contains(&link_s) && message.contains(&key_s),
        "the ask rule's question names the key: {message}"
    );

    // A write through a link that leads out (to a file nothing protects) names it too.
    let out_link = fx.proj.join("link_out");
    let c = case("ask", "Write", "");
    let got = decide(
        &fx,
        &c,
        json!({"file_path": out_link.display().to_string(), "content": "x"}),
    )
    .await;
    let (message, _) = ask_text(&got).unwrap();
    assert_eq!(
        message,
        format!(
            "Claude requested permissions to write to {} (a link to {}), which is outside the working directories.",
            out_link.display(),
            fx.out.join("secret.txt").display()
        )
    );

    // A path that is no link is named alone, as before.
    let plain = fx.out.join("notes.md");
    let c = case("ask", "Read", "");
    let got = decide(&fx, &c, json!({"file_path": plain.display().to_string()})).await;
    let (message, _) = ask_text(&got).unwrap();
    assert_eq!(
        message,
        format!(
            "Claude requested permissions to read from {}, which is outside the working directories.",
            plain.display()
        )
    );
    assert!(Path::new(&key).exists());
}
