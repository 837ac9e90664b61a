//! Fuzzing the permission rule parser (on stable, with proptest): arbitrary strings and
//! structured mutations of real rules. Properties: no panic; a refusal names the rule and
//! says why; a rule written by `format_rule` (what "always allow" saves) parses back to the
//! same tool and content; the engine accepts any rule list, reporting each bad one.
//!
//! `TOOLWRIGHT_FUZZ_SECS=60 cargo test -p tool-perms --test fuzz_rules` (or `cargo xtask
//! fuzz rules`) runs for a minute instead of the quick pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use tool_core::{RuleSource, SourcedRule, ToolPermissionContext};
use tool_perms::rule::{format_rule, parse_rule, parse_rule_lenient};
use tool_perms::{PathRoots, PermissionEngine};

const TOOLS: &[&str] = &[
    "Bash",
    "Read",
    "Edit",
    "Write",
    "WebFetch",
    "Glob",
    "Grep",
    "Task",
    "Agent",
    "KillShell",
    "NotebookEdit",
    "mcp__srv",
    "mcp__srv__tool",
    "mcp__srv__*",
    "*",
    "",
];

const CONTENT_BITS: &[&str] = &[
    "npm run test:*",
    "git status",
    "./src/**",
    "/abs/**",
    "~/x",
    "//root",
    "domain:example.com",
    "*",
    "**",
    "(",
    ")",
    "\\(",
    "\\)",
    "\\",
    "\\\\",
    ":*",
    " ",
    "é",
    "\u{0}",
    "\n",
    "**/*.rs",
    "rm -rf",
    "$(x)",
    "a b",
];

/// A rule: a tool name and optional content, joined with real separators, then mutated.
fn rule_text() -> impl Strategy<Value = String> {
    let built = (
        proptest::sample::select(TOOLS),
        proptest::option::of(proptest::collection::vec(
            proptest::sample::select(CONTENT_BITS),
            0..6,
        )),
    )
        .prop_map(|(tool, content)| match content {
            Some(bits) => format!("{tool}({})", bits.concat()),
            None => tool.to_owned(),
        });
    let mutated = (
        built.clone(),
        any::<prop::sample::Index>(),
        any::<char>(),
        0..3u8,
    )
        .prop_map(|(rule, at, c, how)| {
            let mut chars: Vec<char> = rule.chars().collect();
            let i = if chars.is_empty() {
                0
            } else {
                at.index(chars.len())
            };
            match how {
                0 if !chars.is_empty() => {
                    chars.remove(i);
                }
                1 => chars.insert(i, c),
                _ => chars.truncate(i),
            }
            chars.into_iter().collect()
        });
    prop_oneof![built, mutated, any::<String>(), "[ -~]{0,40}"]
}

#[path = "../../../tests/support/fuzz.rs"]
mod fuzz_support;
use fuzz_support::fuzz;

#[test]
fn fuzz_rule_parser() {
    fuzz(file!(), 2000, rule_text(), |rule| {
        let lenient = parse_rule_lenient(&rule);
        match parse_rule(&rule) {
            Ok(parsed) => {
                prop_assert_eq!(
                    &parsed,
                    &lenient,
                    "strict and lenient disagree on {:?}",
                    rule
                );
                // What "always allow" would save for this rule parses back to it.
                let saved = format_rule(&parsed.tool_name, parsed.content.as_deref());
                let reparsed = parse_rule(&saved);
                prop_assert_eq!(
                    reparsed.as_ref(),
                    Ok(&parsed),
                    "{:?} saved as {:?}",
                    rule,
                    saved
                );
            }
            Err(e) => {
                let text = e.to_string();
                prop_assert!(!e.reason.trim().is_empty(), "no reason for {:?}", rule);
                prop_assert!(
                    text.contains(&rule),
                    "the error does not name the rule: {}",
                    text
                );
            }
        }
        Ok(())
    });
}

#[test]
fn fuzz_saved_rules_round_trip() {
    // Any content a user approves at the prompt is saved with `format_rule` and must mean the
    // same thing when read back.
    let content = prop_oneof![
        proptest::collection::vec(proptest::sample::select(CONTENT_BITS), 1..6)
            .prop_map(|b| b.concat()),
        any::<String>(),
    ];
    fuzz(
        file!(),
        2000,
        (proptest::sample::select(&TOOLS[..13]), content),
        |(tool, content)| {
            let saved = format_rule(tool, Some(&content));
            let parsed = parse_rule_lenient(&saved);
            let expected = if content.is_empty() || content == "*" {
                None
            } else {
                Some(content.clone())
            };
            prop_assert_eq!(parsed.content, expected, "saved as {:?}", saved);
            Ok(())
        },
    );
}

#[test]
fn fuzz_engine_rule_lists() {
    fuzz(
        file!(),
        300,
        proptest::collection::vec(rule_text(), 0..6),
        |rules| {
            let sourced = |rules: &[String]| {
                rules
                    .iter()
                    .map(|r| SourcedRule {
                        source: RuleSource::ProjectSettings,
                        rule: r.clone(),
                    })
                    .collect::<Vec<_>>()
            };
            let perm = ToolPermissionContext {
                allow: sourced(&rules),
                ask: sourced(&rules[rules.len() / 2..]),
                deny: sourced(&rules[..rules.len() / 2]),
                ..Default::default()
            };
            let (_engine, problems) =
                PermissionEngine::new_lenient(&perm, PathRoots::for_cwd("/p"));
            for p in &problems {
                prop_assert!(!p.to_string().trim().is_empty());
            }
            Ok(())
        },
    );
}
