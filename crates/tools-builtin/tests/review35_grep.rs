//! Grep, review 35: a search whose files a read deny rule kept out does not say that no
//! file matched its `glob` or `type` (and send the model to a `path` it may not read).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;

use common::{ctx, text};
use serde_json::json;
use tool_core::{PermissionMode, RuleSource, SourcedRule, ToolPermissionContext};
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
    // Without the rule the files are searched; a glob that matches nothing still says so.
    let c = ctx(dir.path());
    let out = text(&Grep, &c, json!({"pattern": "fn", "glob": "*.rs"})).await;
    assert!(out.contains("main.rs") && out.contains("lib.rs"), "{out}");
    let out = text(&Grep, &c, json!({"pattern": "fn", "glob": "*.go"})).await;
    assert!(out.contains("no file matched the glob `*.go`"), "{out}");
}
