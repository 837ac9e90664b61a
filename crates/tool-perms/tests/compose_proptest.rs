//! Property: composing an allowed command with an arbitrary second command is never allowed
//! unless the second command is allowed on its own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, behavior, case, context, probe};
use proptest::prelude::*;
use serde_json::json;

const ALLOWED_FIRST: &[&str] = &[
    "npm test",
    "ls -la",
    "git status",
    "cat README.md",
    "npm test -- --watch",
    "echo hi",
];

const TOKENS: &[&str] = &[
    "rm",
    "-rf",
    "x",
    "/",
    "curl",
    "evil.example",
    "ls",
    "cat",
    "/etc/passwd",
    ".env",
    "$(rm x)",
    "`id`",
    "'",
    "\"",
    ";",
    "&&",
    "|",
    ">",
    "out.txt",
    "$HOME",
    "echo",
    "git",
    "push",
    "sudo",
    "bash",
    "-c",
    "'rm x'",
    "\\",
    "*",
    "{a,b}",
    "~",
    "..",
    "eval",
    "xargs",
    "-exec",
    "find",
    "(",
    ")",
    "#",
    "\n",
    "npm",
    "test",
    "$IFS",
    "r''m",
    ".git/config",
    "2>&1",
    ">>",
    "<(",
    "cd",
    "/tmp",
    "=",
    "FOO=1",
    "&",
    "||",
    "{",
    "}",
    "${X}",
    "$'\\x41'",
];

fn second() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::collection::vec(proptest::sample::select(TOKENS), 1..6).prop_map(|v| v.join(" ")),
        "[ -~]{1,24}",
    ]
}

/// `command` without a comment on its last line (`ls && # x` is `ls &&`), trimmed.
fn without_trailing_comment(command: &str) -> &str {
    let last_line = command.rfind('\n').map_or(0, |i| i + 1);
    let cut = command[last_line..]
        .match_indices('#')
        .map(|(i, _)| last_line + i)
        .find(|&i| i == 0 || command[..i].ends_with([' ', '\t', '\n', ';', '&', '|']));
    command[..cut.unwrap_or(command.len())].trim_end()
}

fn compose() -> impl Strategy<Value = (String, String)> {
    let ops = proptest::sample::select(&["&&", "||", ";", "|", "&", "\n", "|&"][..]);
    (
        proptest::sample::select(ALLOWED_FIRST),
        ops,
        second(),
        0..4u8,
    )
        .prop_map(|(first, op, second, wrap)| {
            let composed = match wrap {
                0 => format!("{first} {op} {second}"),
                1 => format!("{first} $({second})"),
                // Inside single quotes only when the second command has none (otherwise the quotes
                // re-split it and "second" is no longer what runs).
                2 if !second.contains('\'') => format!("bash -c '{first} {op} {second}'"),
                2 => format!("{first} {op} {second}"),
                // A trailing backslash would escape the separator and change what "second" is;
                // a trailing `&&`, `||` or `|` (before a comment too: `ls && #`) would take
                // the first command as its own operand (`eval || \n npm test` is the valid
                // `eval || npm test`), and so does a lone `!` in tree-sitter-bash's reading
                // (`! \n npm test` is read as `! npm test`; bash runs `npm test` either way,
                // while `!` alone is read as a syntax error, which asks).
                _ if second.ends_with('\\')
                    || ["&&", "||", "|", "|&", "!"]
                        .iter()
                        .any(|o| without_trailing_comment(&second).ends_with(o)) =>
                {
                    format!("{first} {op} {second}")
                }
                _ => format!("{second} {op} {first}"),
            };
            (composed, second)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, .. ProptestConfig::default() })]

    #[test]
    fn composition_is_never_more_permissive((composed, second) in compose()) {
        thread_local! {
            static FX: Fixture = Fixture::new();
        }
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        FX.with(|fx| {
            for mode in ["default", "acceptEdits"] {
                let c = case("allow", "Bash", "").allow(&["Bash(npm test:*)"]).mode(mode);
                let (engine, ctx) = context(fx, &c);
                let tool = probe(fx, "Bash");
                let whole = rt.block_on(engine.decide(&tool, &json!({"command": composed}), &ctx));
                if behavior(&whole) == "allow" {
                    let alone = rt.block_on(engine.decide(&tool, &json!({"command": second}), &ctx));
                    prop_assert_eq!(
                        behavior(&alone), "allow",
                        "mode {}: {:?} was allowed but {:?} alone is {:?}", mode, composed, second, alone
                    );
                }
            }
            Ok(())
        })?;
    }
}
