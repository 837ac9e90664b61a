//! Grep, review 35: a search whose files a read deny rule kept out does not say that no
//! file matched its `glob` or `type` (and send the model to a `path` it may not read).

use std::fs;

use crate::common::{ctx, text};
use serde_json::json;
use tool_core::{PermissionMode, RuleSource, SourcedRule, Tool as _, ToolPermissionContext};
use tools_builtin::Grep;

/// A Grep whose `glob` or `type` names only files a deny rule forbids answers as Claude
/// Code does, "No files found", without the note that no file matched (they did) and
/// without the advice to give them as `path` (which would be refused). Found by review: the
/// note said "no file matched the glob `*.rs`" in a project of `.rs` files. Where no deny
/// rule kept anything out, the note stays.
#[tokio::test]
async fn files_a_deny_rule_kept_out_are_not_said_to_be_unmatched() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();
    fs::write(dir.path().join("src/lib.rs"), "pub fn lib() {}\n").unwrap();
    fs::write(dir.path().join("notes.txt"), "fn in notes\n").unwrap();
    let denied = ToolPermissionContext {
        mode: PermissionMode::Default,
        deny: vec![SourcedRule {
            source: RuleSource::ProjectSettings,
            rule: "Read(**/*.rs)".to_owned(),
        }],
        ..Default::default()
    };
    let c = ctx(dir.path()).with_permission(denied);
    for input in [
        json!({"pattern": "fn", "glob": "*.rs"}),
        json!({"pattern": "fn", "type": "rust"}),
    ] {
        let out = text(&Grep, &c, input.clone()).await;
        assert_eq!(out, "No files found", "{input}");
    }
    // A glob anchored elsewhere (an absolute path) is still said: it names no file.
    let out = text(
        &Grep,
        &c,
        json!({"pattern": "fn", "glob": "/elsewhere/src/*.rs"}),
    )
    .await;
    assert!(
        out.contains("starts with /, which anchors it there"),
        "{out}"
    );
    // Without the rule the files are searched; a glob that matches nothing still says so.
    let c = ctx(dir.path());
    let out = text(&Grep, &c, json!({"pattern": "fn", "glob": "*.rs"})).await;
    assert!(out.contains("main.rs") && out.contains("lib.rs"), "{out}");
    let out = text(&Grep, &c, json!({"pattern": "fn", "glob": "*.go"})).await;
    assert!(out.contains("no file matched the glob `*.go`"), "{out}");
}

/// An absolute Glob pattern through the project's directory, whose name holds glob
/// characters (a project at `…/we[ir]d{x}`), finds the files in that directory, as written,
/// and is judged as a search there (not of its parent). Found by review: it found nothing, and in default mode
/// asked to read the parent directory, outside the project.
#[tokio::test]
async fn an_absolute_glob_through_a_directory_named_with_glob_characters() {
    let parent = tempfile::tempdir().unwrap();
    let project = parent.path().join("we[ir]d{x}");
    fs::create_dir_all(project.join("sub")).unwrap();
    fs::write(project.join("b.rs"), "hit\n").unwrap();
    fs::write(project.join("sub/c.rs"), "hit\n").unwrap();
    // What the brackets would match, were they a glob: not found.
    fs::create_dir_all(parent.path().join("wedx")).unwrap();
    fs::write(parent.path().join("wedx/decoy.rs"), "no\n").unwrap();
    let c = ctx(&project);
    let abs = project.display().to_string();
    let out = text(
        &tools_builtin::Glob,
        &c,
        json!({"pattern": format!("{abs}/*.rs")}),
    )
    .await;
    assert_eq!(out, "b.rs");
    let out = text(
        &tools_builtin::Glob,
        &c,
        json!({"pattern": format!("{abs}/**/*.rs")}),
    )
    .await;
    assert!(
        out.contains("b.rs") && out.contains("c.rs") && !out.contains("decoy"),
        "{out}"
    );
    // The search is judged as one of the project: allowed, where its parent would ask.
    // (As the pipeline takes it: the input as hooks and permission checks see it.)
    let input = tools_builtin::Glob
        .parse_input(json!({"pattern": format!("{abs}/*.rs")}))
        .unwrap();
    let input = tools_builtin::Glob
        .observable_input(&input, &c)
        .unwrap_or(input);
    let engine = tool_perms::PermissionEngine::new(
        &ToolPermissionContext::default(),
        tool_perms::PathRoots::for_cwd(&project),
    )
    .unwrap();
    let decided = engine.decide(&tools_builtin::Glob, &input, &c).await;
    assert_eq!(decided.behavior(), "allow", "{decided:?}");
}
