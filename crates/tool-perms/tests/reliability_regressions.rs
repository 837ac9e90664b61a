//! Regression tests for faults found by the reliability work (docs/reliability.md), each
//! named after what it was.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, behavior, case, context, probe};
use serde_json::json;
use tool_perms::bash::parse::analyze;

/// Found by `fuzz_bash`: tree-sitter-bash reads `echo a<newline>\rm a` as one command (its
/// last word spans the line break), so `Bash(echo:*)` allowed it and `Bash(rm:*)` never saw
/// the `rm` that bash runs on the second line.
#[tokio::test]
async fn a_line_break_before_an_escaped_command_hid_it_from_the_rules() {
    let fx = Fixture::new();
    let c = case("x", "Bash", "")
        .allow(&["Bash(echo:*)"])
        .deny(&["Bash(rm:*)"]);
    let (engine, ctx) = context(&fx, &c);
    let bash = probe(&fx, "Bash");
    for cmd in ["echo a\n\\rm a", "echo a\n\\rm -rf /", "echo a\r\n\\curl x"] {
        let analysis = analyze(cmd);
        let r = engine.decide(&bash, &json!({"command": cmd}), &ctx).await;
        assert_ne!(
            behavior(&r),
            "allow",
            "{cmd:?} was allowed: {r:?} (analysis: {:?})",
            analysis.complex
        );
    }
    // A line break inside quotes is ordinary text, and plain multi-line scripts are
    // still split into their commands.
    let r = engine
        .decide(&bash, &json!({"command": "echo 'a\nb'"}), &ctx)
        .await;
    assert_eq!(behavior(&r), "allow", "{r:?}");
    let r = engine
        .decide(&bash, &json!({"command": "echo a\necho b"}), &ctx)
        .await;
    assert_eq!(behavior(&r), "allow", "{r:?}");
    // A line continuation joins the lines: this is `echo a \rm b`, which only prints.
    let r = engine
        .decide(&bash, &json!({"command": "echo a \\\n\\rm b"}), &ctx)
        .await;
    assert_eq!(behavior(&r), "allow", "{r:?}");
}
