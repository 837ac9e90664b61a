//! Fuzzing hook output handling (on stable, with proptest): a real command hook prints what
//! the case says (stdout, stderr, exit code), and the runner interprets it for PreToolUse
//! and PostToolUse. Stdout is hook JSON built from the real fields with values of every
//! type, the same JSON cut short, or arbitrary bytes. Properties: no panic; exactly one run
//! is reported; every error and every deny or ask carries a message; exit code 2 on
//! PreToolUse always blocks.
//!
//! `TOOLWRIGHT_FUZZ_SECS=60 cargo test -p tool-hooks --test fuzz_hook_output` (or `cargo
//! xtask fuzz hook-output`) runs for a minute instead of the quick pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tool_core::{RuleSource, ToolUseContext};
use tool_hooks::{HookRunner, HooksConfig, PermissionDecision, ToolCallInfo};

const TOP: &[&str] = &[
    "continue",
    "stopReason",
    "suppressOutput",
    "systemMessage",
    "decision",
    "reason",
    "hookSpecificOutput",
    "terminalSequence",
    "other",
];
const SPECIFIC: &[&str] = &[
    "hookEventName",
    "permissionDecision",
    "permissionDecisionReason",
    "updatedInput",
    "additionalContext",
    "updatedToolOutput",
    "updatedMCPToolOutput",
    "decision",
    "retry",
    "sessionTitle",
];
const STRINGS: &[&str] = &[
    "PreToolUse",
    "PostToolUse",
    "Stop",
    "allow",
    "deny",
    "ask",
    "defer",
    "block",
    "approve",
    "",
    " ",
    "reason",
    "é",
    "\u{0}",
    "behavior",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        proptest::sample::select(STRINGS).prop_map(|s| Value::String(s.to_owned())),
        any::<String>().prop_map(Value::String),
        Just(json!({})),
        Just(json!({"command": "ls"})),
        Just(json!({"behavior": "allow"})),
        Just(json!([1, "x"])),
    ]
}

fn object(
    keys: &'static [&'static str],
    values: BoxedStrategy<Value>,
) -> impl Strategy<Value = Value> {
    proptest::collection::vec((proptest::sample::select(keys), values), 0..6).prop_map(|kv| {
        let mut m = Map::new();
        for (k, v) in kv {
            m.insert(k.to_owned(), v);
        }
        Value::Object(m)
    })
}

fn hook_json() -> impl Strategy<Value = Value> {
    let specific = object(SPECIFIC, leaf().boxed()).boxed();
    let value = prop_oneof![3 => leaf(), 1 => specific].boxed();
    object(TOP, value)
}

/// What the hook prints on stdout.
fn stdout() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => hook_json().prop_map(|v| v.to_string().into_bytes()),
        1 => (hook_json(), any::<prop::sample::Index>()).prop_map(|(v, i)| {
            let t = v.to_string().into_bytes();
            let cut = i.index(t.len() + 1);
            t[..cut].to_vec()
        }),
        1 => any::<String>().prop_map(String::into_bytes),
        1 => proptest::collection::vec(any::<u8>(), 0..64),
        1 => Just(Vec::new()),
    ]
}

#[derive(Debug, Clone)]
struct Case {
    stdout: Vec<u8>,
    stderr: String,
    code: u8,
    post: bool,
}

fn case() -> impl Strategy<Value = Case> {
    (
        stdout(),
        prop_oneof![Just(String::new()), any::<String>()],
        prop_oneof![4 => Just(0u8), 2 => Just(2u8), 1 => Just(1u8), 1 => any::<u8>()],
        any::<bool>(),
    )
        .prop_map(|(stdout, stderr, code, post)| Case {
            stdout,
            stderr,
            code,
            post,
        })
}

fn runner(dir: &Path) -> HookRunner {
    let command = format!(
        "cat '{d}/out'; cat '{d}/err' >&2; exit $(cat '{d}/code')",
        d = dir.display()
    );
    let hooks = json!({
        "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": command}]}],
        "PostToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": command}]}],
    });
    let (config, diags) = HooksConfig::from_hooks_value(&hooks, RuleSource::UserSettings);
    assert!(diags.is_empty(), "{diags:?}");
    HookRunner::new(config)
}

#[path = "../../../tests/support/fuzz.rs"]
mod fuzz_support;
use fuzz_support::fuzz;

#[test]
fn fuzz_hook_output() {
    let dir = tempfile::tempdir().unwrap();
    let r = runner(dir.path());
    let ctx = ToolUseContext::new(dir.path()).with_results_dir(dir.path().join("results"));
    let call = ToolCallInfo::new("Bash", json!({"command": "ls"}), "toolu_1");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Every case starts a process: a smaller quick pass.
    fuzz(file!(), 120, case(), |c| {
        std::fs::write(dir.path().join("out"), &c.stdout).unwrap();
        std::fs::write(dir.path().join("err"), &c.stderr).unwrap();
        std::fs::write(dir.path().join("code"), c.code.to_string()).unwrap();
        let common = if c.post {
            rt.block_on(r.run_post_tool_use(&call, &json!({"stdout": "x"}), &ctx))
                .common
        } else {
            let out = rt.block_on(r.run_pre_tool_use(&call, &ctx));
            if let Some(d) = &out.decision
                && matches!(
                    d.behavior,
                    PermissionDecision::Deny | PermissionDecision::Ask
                )
            {
                prop_assert!(
                    !d.message.trim().is_empty(),
                    "a {:?} without a message",
                    d.behavior
                );
            }
            if c.code == 2 {
                prop_assert!(
                    out.decision
                        .as_ref()
                        .is_some_and(|d| d.behavior == PermissionDecision::Deny),
                    "exit code 2 did not block: {:?}",
                    out.decision
                );
            }
            out.common
        };
        prop_assert_eq!(common.runs.len(), 1);
        for e in common.errors.iter().chain(&common.blocking_errors) {
            prop_assert!(!e.text.trim().is_empty(), "an error without text: {:?}", e);
        }
        Ok(())
    });
}
