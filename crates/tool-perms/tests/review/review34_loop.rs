//! Session 34 on Bash: the approval question for a loop (`for`, `select`, `while read`, a C
//! style `for`, a `case`) gives the reasons that are real. The parts of a loop's head (its
//! variable, the words it lists, a `case` item's patterns) are no "unsupported shell syntax":
//! tree-sitter-bash's names for them (`variable_name`, `number`) were shown to the user as
//! if they were. Syntax that is genuinely not understood, in a loop's body too, is still
//! named.

use crate::common::{Fixture, case, run};
use tool_core::PermissionResult;
use tool_perms::bash::parse::analyze;

/// The reason every loop asks with.
const CONTROL_FLOW: &str = "control flow (if/for/while/case) is not auto-allowed";

/// The engine's question for Bash `command` in default mode: its message and its reason.
async fn ask_of(fx: &Fixture, command: &str) -> (String, String) {
    let got = run(fx, &case("ask", "Bash", command)).await;
    let PermissionResult::Ask {
        message, reason, ..
    } = &got
    else {
        panic!("{command}: not an ask: {got:?}")
    };
    let reason = match reason {
        Some(tool_core::DecisionReason::Other { reason }) => reason.clone(),
        other => panic!("{command}: reason {other:?}"),
    };
    (message.clone(), reason)
}

/// The review's loop, and every loop head bash has: asked about for their control flow
/// only, in the analysis's reasons, in the question's message and in its reason.
#[tokio::test]
async fn a_loop_head_is_no_unsupported_syntax() {
    let fx = Fixture::new();
    for command in [
        "for i in 1 2 3; do echo line$i; done",
        "for x in a b; do echo $x; done",
        "for x in 'a b' \"c $HOME\" d*e x$HOME 1.5 -2; do echo $x; done",
        "for x; do echo $x; done",
        "for ((i=0;i<3;i++)); do echo $i; done",
        "for ((;;)); do echo x; done",
        "for (( i = 0 ; i < 3 ; i += 1 )); do echo $i; done",
        "select x in a b c; do echo $x; break; done",
        "select x in 1 2; do echo $x; done",
        "while read -r line; do echo \"$line\"; done",
        "until false; do echo x; done",
        "while true; do echo $HOME; done",
        "case $1 in a|b) echo ab;; 1) echo one;; *.txt|[0-9]*) echo t;; *) echo other;; esac",
        "case x in (a) echo a;; esac",
        "if [ -f x ]; then echo a; elif true; then echo b; else echo c; fi",
    ] {
        let analysis = analyze(command);
        assert_eq!(analysis.complex, vec![CONTROL_FLOW.to_owned()], "{command}");
        let (message, reason) = ask_of(&fx, command).await;
        assert!(
            !message.contains("unsupported shell syntax"),
            "{command}: {message}"
        );
        assert_eq!(reason, CONTROL_FLOW, "{command}: {message}");
    }
}

/// The question of the review's loop, word for word.
#[tokio::test]
async fn the_reviews_loop_asks_for_its_control_flow_only() {
    let fx = Fixture::new();
    let (message, _) = ask_of(&fx, "for i in 1 2 3; do echo line$i; done").await;
    assert_eq!(
        message,
        format!("This command cannot be proven safe and needs approval: {CONTROL_FLOW}.")
    );
}

/// The reason an arithmetic command gives.
const ARITHMETIC_COMMAND: &str = "unsupported shell syntax `((…))` (an arithmetic command)";

/// The reason a `for ((…))` gives whose arithmetic reads a variable of another's.
const C_STYLE_FOR: &str = "the arithmetic of a `for ((…))` that refers to a variable other than the loop's own counters, or to a substitution, evaluates it as an expression, which can run a command";

/// The reason an arithmetic expansion gives that reads a variable.
const ARITHMETIC: &str = "an arithmetic context (`$(( ))`, an array subscript, a substring offset, `${!x}`) that refers to a variable or a substitution evaluates it as an expression, which can run a command";

/// What the walk does not follow, or what may run a command, is still named: in a loop's
/// body, its list, its arithmetic, a `case`'s word; the arithmetic command by what it is
/// (`((…))`), not by the parser's name of its expression (`binary_expression`).
#[tokio::test]
async fn unsupported_syntax_in_a_loop_is_still_named() {
    let fx = Fixture::new();
    for (command, named) in [
        ("for i in 1 2; do ((n+=i)); done", ARITHMETIC_COMMAND),
        ("while read -r line; do ((n++)); done", ARITHMETIC_COMMAND),
        ("case $1 in a) ((n++));; esac", ARITHMETIC_COMMAND),
        ("while ((i < 3)); do echo; done", ARITHMETIC_COMMAND),
        ("for i in $((n+1)); do echo $i; done", ARITHMETIC),
        ("for i in ${a[$(id)]}; do echo $i; done", ARITHMETIC),
        ("case ${x:$(id)} in a) echo;; esac", ARITHMETIC),
        ("select x in $((n)); do echo; done", ARITHMETIC),
        // A `for ((…))` that reads a variable it does not count with, or whose counter
        // something else may set (`read i`, then `i++` evaluates what was read).
        ("for ((i=0;i<n;i++)); do echo $i; done", C_STYLE_FOR),
        ("for ((;;x++)); do echo; done", C_STYLE_FOR),
        ("for ((i=0;i<3;i++)); do read i; done", C_STYLE_FOR),
        ("read i; for ((i=0;i<3;i++)); do echo; done", C_STYLE_FOR),
        ("for ((i=0;i<3;i++)); do i=x; done", C_STYLE_FOR),
        ("for ((i=0;i<$(id);i++)); do echo; done", C_STYLE_FOR),
    ] {
        let analysis = analyze(command);
        assert!(
            analysis.complex.iter().any(|why| why == CONTROL_FLOW),
            "{command}: {:?}",
            analysis.complex
        );
        assert!(
            analysis.complex.iter().any(|why| why == named),
            "{command}: {:?}",
            analysis.complex
        );
        let (message, _) = ask_of(&fx, command).await;
        assert!(message.contains(named), "{command}: {message}");
    }
}

/// What a loop's head runs is still found, and checked against the rules: a substitution in
/// a `for`'s or `select`'s list, a `case`'s word or pattern, a `for ((…))`'s arithmetic.
#[tokio::test]
async fn what_a_loop_head_runs_is_still_checked() {
    let fx = Fixture::new();
    for command in [
        "for f in $(rm -rf x); do echo $f; done",
        "for f in a \"$(rm -rf x)\" b; do echo $f; done",
        "select f in `rm -rf x`; do echo $f; done",
        "case $(rm -rf x) in a) echo;; esac",
        "case y in $(rm -rf x)) echo;; esac",
        "for ((i=$(rm -rf x); i<3; i++)); do echo; done",
        "for ((i=0; i<3; i+=$(rm -rf x))); do echo; done",
        "f() { echo; }; for f in 1; do rm -rf x; done",
    ] {
        let analysis = analyze(command);
        assert!(
            analysis
                .commands
                .iter()
                .any(|c| c.words.first().is_some_and(|w| w.raw == "rm")),
            "{command}: {:?}",
            analysis.commands
        );
        let got = run(&fx, &case("deny", "Bash", command).deny(&["Bash(rm:*)"])).await;
        assert_eq!(got.behavior(), "deny", "{command}: {got:?}");
    }
}

/// A `for ((…))` sets the names it assigns or steps (`i=0`, `j += 2`, `k--`, `++m`): they are
/// among the line's assignments, as a `for`'s variable is.
#[test]
fn a_c_style_for_notes_what_it_assigns() {
    let analysis = analyze("for ((i=0, j=1; i<3; j += 2, k--, ++m)); do echo $i; done");
    let names: Vec<&str> = analysis.assigned.iter().map(|a| a.name.as_str()).collect();
    for name in ["i", "j", "k", "m"] {
        assert!(names.contains(&name), "{name}: {names:?}");
    }
}

/// A function's name is no unsupported syntax either.
#[test]
fn a_function_name_is_no_unsupported_syntax() {
    for command in [
        "f() { echo; }",
        "function f { echo; }",
        "function f() ( echo )",
    ] {
        assert_eq!(
            analyze(command).complex,
            vec!["a function definition can shadow commands".to_owned()],
            "{command}"
        );
    }
}
