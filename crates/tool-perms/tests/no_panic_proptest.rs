//! Robustness (in place of a cargo-fuzz run): arbitrary rule strings and arbitrary shell text
//! never panic the rule parser, the bash analysis or the engine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, SHELL_BITS, case, context, probe};
use proptest::prelude::*;
use serde_json::json;
use tool_core::{RuleSource, SourcedRule, ToolPermissionContext};
use tool_perms::bash::parse::analyze;
use tool_perms::rule::{parse_rule, parse_rule_lenient};
use tool_perms::{PathRoots, PermissionEngine};

/// Shell text: the shared shell pieces plus a NUL byte, glued or spaced, or anything.
fn shell_text() -> impl Strategy<Value = String> {
    let bits: Vec<&str> = SHELL_BITS.iter().copied().chain(["\u{0}"]).collect();
    prop_oneof![
        proptest::collection::vec(proptest::sample::select(bits.clone()), 0..16)
            .prop_map(|v| v.join("")),
        proptest::collection::vec(proptest::sample::select(bits), 0..16).prop_map(|v| v.join(" ")),
        any::<String>(),
    ]
}

fn rule_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z_*]{0,8}(\\([ -~]{0,16}\\)?)?",
        "(Read|Edit|WebFetch|Bash|mcp__[a-z*]{0,3}__[a-z*]{0,3})\\([ -~]{0,20}\\)",
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, .. ProptestConfig::default() })]

    #[test]
    fn bash_analysis_never_panics(cmd in shell_text()) {
        let a = analyze(&cmd);
        for c in &a.commands {
            let _ = c.raw_text();
        }
    }

    #[test]
    fn rule_parsing_never_panics(rule in rule_text()) {
        let _ = parse_rule(&rule);
        let _ = parse_rule_lenient(&rule);
        let perm = ToolPermissionContext {
            allow: vec![SourcedRule { source: RuleSource::UserSettings, rule: rule.clone() }],
            deny: vec![SourcedRule { source: RuleSource::ProjectSettings, rule }],
            ..Default::default()
        };
        let _ = PermissionEngine::new_lenient(&perm, PathRoots::for_cwd("/p"));
    }

    #[test]
    fn decisions_never_panic(cmd in shell_text(), rule in rule_text(), path in "[ -~]{0,30}") {
        thread_local! {
            static FX: Fixture = Fixture::new();
        }
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        FX.with(|fx| {
            let c = case("x", "Bash", "");
            let (_, ctx) = context(fx, &c);
            let perm = ToolPermissionContext {
                allow: vec![SourcedRule { source: RuleSource::ProjectSettings, rule: rule.clone() }],
                deny: vec![SourcedRule { source: RuleSource::ProjectSettings, rule }],
                ..Default::default()
            };
            let (engine, _) = PermissionEngine::new_lenient(&perm, PathRoots::for_cwd(&fx.proj));
            rt.block_on(engine.decide(&probe(fx, "Bash"), &json!({"command": cmd}), &ctx));
            rt.block_on(engine.decide(&probe(fx, "Read"), &json!({"file_path": path}), &ctx));
            rt.block_on(engine.decide(&probe(fx, "Edit"), &json!({"file_path": path}), &ctx));
            rt.block_on(engine.decide(&probe(fx, "WebFetch"), &json!({"url": path}), &ctx));
        });
    }
}
