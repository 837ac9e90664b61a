//! Property tests: configuration parsing, matchers and rule matching never panic, whatever
//! the input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tool_core::RuleSource;
use tool_hooks::{BasicRuleMatcher, HookOutput, HooksConfig, Matcher, RuleMatcher};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1.0e6f64..1.0e6).prop_map(|f| json!(f)),
        prop_oneof![
            Just("PreToolUse".to_owned()),
            Just("command".to_owned()),
            Just("hooks".to_owned()),
            Just("matcher".to_owned()),
            ".{0,12}"
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop_oneof![
                        Just("PreToolUse".to_owned()),
                        Just("hooks".to_owned()),
                        Just("matcher".to_owned()),
                        Just("type".to_owned()),
                        Just("command".to_owned()),
                        Just("timeout".to_owned()),
                        Just("args".to_owned()),
                        Just("if".to_owned()),
                        "[a-z]{1,6}"
                    ],
                    inner
                ),
                0..6
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_hooks_json_gives_config_or_diagnostics(v in arb_json()) {
        let (config, diags) = HooksConfig::from_hooks_value(&v, RuleSource::ProjectSettings);
        // Every handler that made it in came from an object; problems are reported.
        let _ = config.matching("PreToolUse", Some("Bash"));
        for d in &diags {
            prop_assert!(!d.to_string().is_empty());
        }
    }

    #[test]
    fn matcher_parse_never_panics(s in ".{0,24}", v in ".{0,16}") {
        if let Ok(m) = Matcher::parse(Some(&s)) {
            let _ = m.is_match(&v);
            if let Matcher::Exact(names) = &m {
                prop_assert!(names.iter().all(|n| !n.contains('|') && !n.contains(',') && !n.is_empty()));
            }
        }
    }

    #[test]
    fn basic_rule_matcher_never_panics(rule in ".{0,24}", tool in "[A-Za-z_]{0,8}", cmd in ".{0,24}") {
        let _ = BasicRuleMatcher.matches(&rule, &tool, &json!({"command": cmd, "file_path": cmd}));
    }

    #[test]
    fn hook_output_round_trips(cont in any::<Option<bool>>(), msg in proptest::option::of(".{0,16}"), reason in proptest::option::of(".{0,16}")) {
        let out = HookOutput { continue_: cont, system_message: msg, reason, ..HookOutput::default() };
        let text = serde_json::to_string(&out).unwrap();
        let back: HookOutput = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(back, out);
    }
}
