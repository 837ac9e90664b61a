//! Fuzzing the bash analysis (on stable, with proptest): arbitrary text and structured
//! mutations of shell commands. Properties: the analysis and the read-only check never
//! panic; every refusal of the engine carries a message; and a denied command stays denied
//! whatever it is wrapped in (`;`, `&&`, pipes, subshells, command substitution, control
//! flow, line breaks): wrapping can never turn a deny into an allow.
//!
//! `TOOLWRIGHT_FUZZ_SECS=60 cargo test -p tool-perms --test fuzz_bash` (or `cargo xtask fuzz
//! bash`) runs for a minute instead of the quick pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, SHELL_BITS, case, context, probe};
use proptest::prelude::*;
use serde_json::json;
use tool_core::PermissionResult;
use tool_perms::bash::is_read_only_command;
use tool_perms::bash::parse::analyze;

/// Shell text: joined shell pieces, mutated commands, or anything.
fn shell_text() -> impl Strategy<Value = String> {
    let joined = proptest::collection::vec(proptest::sample::select(SHELL_BITS), 0..20)
        .prop_map(|v| v.join(" "));
    let glued = proptest::collection::vec(proptest::sample::select(SHELL_BITS), 0..20)
        .prop_map(|v| v.concat());
    let mutated =
        (joined.clone(), any::<prop::sample::Index>(), any::<char>()).prop_map(|(text, at, c)| {
            let mut chars: Vec<char> = text.chars().collect();
            let i = if chars.is_empty() {
                0
            } else {
                at.index(chars.len())
            };
            chars.insert(i, c);
            chars.into_iter().collect()
        });
    prop_oneof![joined, glued, mutated, any::<String>()]
}

/// An `rm` invocation: the command the deny rule names, with arguments of any kind.
fn rm_command() -> impl Strategy<Value = String> {
    (
        proptest::sample::select(
            &[
                "rm",
                "rm -rf",
                "rm -f",
                "\\rm",
                "/bin/rm",
                "command rm",
                "env rm",
                "sudo rm",
            ][..],
        ),
        proptest::collection::vec("[a-z./*~-]{1,8}", 1..4),
    )
        .prop_map(|(rm, args)| format!("{rm} {}", args.join(" ")))
}

/// Ways to wrap a command in a larger one.
const WRAPPERS: &[&str] = &[
    "{}",
    "echo a; {}",
    "echo a && {}",
    "echo a || {}",
    "echo a | {}",
    "{} | echo a",
    "({})",
    "{ {}; }",
    "echo $({})",
    "echo `{}`",
    "echo a\n{}",
    "if true; then {}; fi",
    "for i in 1 2; do {}; done",
    "while false; do :; done; {}",
    "case x in x) {};; esac",
    "echo a & {}",
    "! {}",
    "X=1 {}",
    "time {}",
    "nohup {}",
    "bash -c '{}'",
    "sh -c \"{}\"",
    "eval '{}'",
    "echo a | xargs {}",
];

#[path = "../../../tests/support/fuzz.rs"]
mod fuzz_support;
use fuzz_support::fuzz;

fn message(r: &PermissionResult) -> Option<&str> {
    match r {
        PermissionResult::Deny { message, .. } | PermissionResult::Ask { message, .. } => {
            Some(message)
        }
        PermissionResult::Passthrough { message, .. } => message.as_deref(),
        PermissionResult::Allow { .. } => None,
    }
}

#[test]
fn fuzz_bash_analysis() {
    fuzz(file!(), 2000, shell_text(), |cmd| {
        let analysis = analyze(&cmd);
        for c in &analysis.commands {
            let _ = c.raw_text();
        }
        let _ = is_read_only_command(&cmd);
        Ok(())
    });
}

#[test]
fn fuzz_bash_decisions() {
    let fx = Fixture::new();
    let c = case("x", "Bash", "")
        .allow(&["Bash(echo:*)", "Bash(ls:*)", "Bash(true)", "Bash(xargs:*)"])
        .deny(&["Bash(rm:*)"]);
    let (engine, ctx) = context(&fx, &c);
    let bash = probe(&fx, "Bash");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    fuzz(file!(), 400, shell_text(), |cmd| {
        let r = rt.block_on(engine.decide(&bash, &json!({"command": cmd}), &ctx));
        if let Some(m) = message(&r) {
            prop_assert!(
                !m.trim().is_empty(),
                "a refusal without a message for {:?}",
                cmd
            );
        }
        Ok(())
    });
}

#[test]
fn fuzz_wrapping_never_turns_a_deny_into_an_allow() {
    let fx = Fixture::new();
    let c = case("x", "Bash", "")
        .allow(&[
            "Bash(echo:*)",
            "Bash(ls:*)",
            "Bash(true)",
            "Bash(xargs:*)",
            "Bash(bash:*)",
            "Bash(sh:*)",
            "Bash(eval:*)",
            "Bash(time:*)",
            "Bash(nohup:*)",
        ])
        .deny(&["Bash(rm:*)"]);
    let (engine, ctx) = context(&fx, &c);
    let bash = probe(&fx, "Bash");
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let decide = |cmd: &str| rt.block_on(engine.decide(&bash, &json!({"command": cmd}), &ctx));
    fuzz(
        file!(),
        600,
        (rm_command(), proptest::sample::select(WRAPPERS)),
        |(rm, wrapper)| {
            let inner = decide(&rm);
            prop_assert!(
                !matches!(inner, PermissionResult::Allow { .. }),
                "{:?} itself was allowed",
                rm
            );
            let wrapped = wrapper.replace("{}", &rm);
            let outer = decide(&wrapped);
            prop_assert!(
                !matches!(outer, PermissionResult::Allow { .. }),
                "{:?} was allowed although {:?} is denied: {:?}",
                wrapped,
                rm,
                outer
            );
            Ok(())
        },
    );
}
