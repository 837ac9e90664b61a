//! Review 40: a matcher is a JavaScript regular expression, compiled and run as Claude
//! Code's `new RegExp(matcher).test(name)` does. Rust's `regex` read `B\ash` as `B<BEL>sh`
//! (its guard never ran, with no warning), refused `[^]*`, `\cBash|Bash` and `Bash\k|Bash`
//! (valid in JavaScript) as unreadable, and took `(?i)bash`, which JavaScript rejects.
//! And every error in a hooks key of a `--settings` value stops the command: a
//! `disableAllHooks` of the wrong type there was only a warning, and the hooks ran.

use std::process::Command;

use crate::common::{Env, cmd, one};
use serde_json::json;
use tool_core::RuleSource;
use tool_hooks::{
    HookRunner, HooksConfig, JsRegex, Matcher, MatcherError, PermissionDecision, SettingsPaths,
    ToolCallInfo, load_hooks,
};

/// Each matcher, a tool name, and what node 20 answers for
/// `node -e 'console.log(new RegExp(M).test(N))'`: `Some(result)`, or `None` where
/// `new RegExp(M)` throws (a SyntaxError: Claude Code runs no hook of that group).
/// These are node's answers, hard-coded so that the test runs where node is not.
const NODE_ANSWERS: &[(&str, &str, Option<bool>)] = &[
    // An identity escape: `\a` is `a` in JavaScript (Rust reads it as BEL).
    (r"B\ash", "Bash", Some(true)),
    (r"B\ash", "Edit", Some(false)),
    // `[^]` is any character in JavaScript (Rust: an unclosed class).
    ("[^]*", "Bash", Some(true)),
    ("[^]*", "Edit", Some(true)),
    // `\c` before a letter is a control character; Rust has no `\c`.
    (r"\cBash|Bash", "Bash", Some(true)),
    (r"\cBash|Bash", "Edit", Some(false)),
    // `\k` with no named group is a `k` (Annex B); Rust has no `\k`.
    (r"Bash\k|Bash", "Bash", Some(true)),
    (r"Bash\k|Bash", "Edit", Some(false)),
    // An inline flag group is a syntax error in JavaScript ("Invalid group").
    ("(?i)bash", "Bash", None),
    ("(?i)bash", "Edit", None),
    // Lookaround and backreferences, which worked before and still must.
    ("^(?!mcp__).*", "Bash", Some(true)),
    ("^(?!mcp__).*", "mcp__memory__create", Some(false)),
    ("(?<=Notebook)Edit", "NotebookEdit", Some(true)),
    ("(?<=Notebook)Edit", "Edit", Some(false)),
    (r"^(\w)\1", "llm_tool", Some(true)),
    (r"^(\w)\1", "Bash", Some(false)),
    // Pattern and value are UTF-16 code units: an emoji is two of them.
    ("^.$", "😀", Some(false)),
    ("^..$", "😀", Some(true)),
    // Without the `u` flag `\u{3}` is `u` three times (regress read it as U+0003), and
    // `\u{41}` is not `A`.
    (r"\u{3}", "uuu", Some(true)),
    (r"\u{41}", "A", Some(false)),
    (r"[\u{41}]", "{", Some(true)),
    (r"\\u{2}", r"\uu", Some(true)),
    // In a group name `\u{..}` is an escape, with or without the flag.
    (r"(?<\u{41}b>x)\k<Ab>", "xx", Some(true)),
    // Two escaped surrogates are two code units, which the emoji is (regress joined them
    // into one code point that no unit equals); a quantifier takes the second alone.
    (r"\uD83D\uDE00", "😀", Some(true)),
    (r"^[\uD83D\uDE00]$", "😀", Some(false)),
    (r"^\uD83D\uDE00+$", "😀😀", Some(false)),
    (r"^(?:\uD83D\uDE00)+$", "😀😀", Some(true)),
    // Without a named group, `\k<..>` is `k<..>`, and what follows is read as elsewhere.
    (r"\k<\u{2}>", "k<uu>", Some(true)),
    // A word boundary takes no quantifier (regress took one).
    (r"\b+", "a", None),
    (r"x\B{2}", "xy", None),
    (r"\b{", "a{", Some(true)),
    (r"[\b+]", "+", Some(true)),
];

/// What node answers for `new RegExp(matcher).test(name)` where it is installed: the
/// hard-coded answers are checked against it, so that a wrong one is caught.
fn node_answer(matcher: &str, name: &str) -> Option<Option<bool>> {
    let out = Command::new("node")
        .args([
            "-e",
            "let r; try { r = new RegExp(process.argv[1]) } catch (e) { console.log('error'); process.exit(0) } console.log(r.test(process.argv[2]))",
            matcher,
            name,
        ])
        .output()
        .ok()?;
    match String::from_utf8_lossy(&out.stdout).trim() {
        "true" => Some(Some(true)),
        "false" => Some(Some(false)),
        "error" => Some(None),
        other => panic!("node said {other:?} for {matcher:?}"),
    }
}

#[test]
fn matchers_match_as_javascript_regexes_do() {
    let mut asked_node = false;
    for &(matcher, name, expected) in NODE_ANSWERS {
        if let Some(node) = node_answer(matcher, name) {
            asked_node = true;
            assert_eq!(node, expected, "node's answer for {matcher:?} on {name}");
        }
        match (Matcher::parse(Some(matcher)), expected) {
            (Ok(m), Some(want)) => assert_eq!(m.is_match(name), want, "{matcher:?} on {name}"),
            (Err(e), Some(_)) => panic!("{matcher:?} is valid JavaScript: {e}"),
            (Ok(m), None) => panic!("{matcher:?} is no JavaScript regex, read as {m:?}"),
            (Err(e), None) => assert_eq!(e.pattern, matcher, "{e}"),
        }
    }
    if !asked_node {
        eprintln!("note: node is not installed; checked against its hard-coded answers only");
    }
}

fn bash() -> ToolCallInfo {
    ToolCallInfo::new("Bash", json!({"command": "true"}), "toolu_01")
}

/// A guard behind `B\ash` blocks Bash, as under Claude Code (it never ran: a silent hole);
/// one behind `[^]*` runs for every call instead of refusing them all as unreadable.
#[tokio::test]
async fn a_guard_behind_a_javascript_only_matcher_runs() {
    let env = Env::new();
    for matcher in [r"B\ash", "[^]*", r"\cBash|Bash", r"Bash\k|Bash"] {
        let hooks = one(
            "PreToolUse",
            matcher,
            vec![cmd("echo blocked by the guard >&2; exit 2")],
        );
        let (config, diags) = HooksConfig::from_hooks_value(&hooks, RuleSource::UserSettings);
        assert!(diags.is_empty(), "{matcher:?}: {diags:?}");
        let out = HookRunner::new(config)
            .run_pre_tool_use(&bash(), &env.ctx())
            .await;
        let decision = out
            .decision
            .unwrap_or_else(|| panic!("{matcher:?}: the call ran"));
        assert_eq!(decision.behavior, PermissionDecision::Deny, "{matcher:?}");
        assert!(
            decision.message.contains("blocked by the guard"),
            "{matcher:?}: {}",
            decision.message
        );
    }
}

/// A matcher JavaScript rejects is reported when the settings are loaded, with the engine's
/// reason, and its guard refuses the calls (fails closed) rather than match as Rust would.
#[tokio::test]
async fn a_matcher_javascript_rejects_is_reported_and_refuses() {
    let env = Env::new();
    let hooks = one("PreToolUse", "(?i)bash", vec![cmd("exit 0")]);
    let (config, diags) = HooksConfig::from_hooks_value(&hooks, RuleSource::UserSettings);
    let text = format!("{diags:?}");
    assert!(
        text.contains("invalid matcher regex \\\"(?i)bash\\\"") && text.contains("group"),
        "{text}"
    );
    let out = HookRunner::new(config)
        .run_pre_tool_use(&bash(), &env.ctx())
        .await;
    let decision = out.decision.expect("the call was not refused");
    assert_eq!(decision.behavior, PermissionDecision::Deny);
    assert!(
        decision.message.contains("(?i)bash"),
        "{}",
        decision.message
    );
}

/// Every error the hooks loader finds in a key of a `--settings` value stops the command,
/// the switches too: a `disableAllHooks` or `allowManagedHooksOnly` of the wrong type was
/// only a warning ("…; ignored"), and the hooks it was to turn off ran. What is not run by
/// design (`allowManagedHooksOnly` outside managed settings) stays a notice, and a value
/// that is no JSON is the permission settings loader's to report.
#[test]
fn every_hooks_key_error_on_the_command_line_stops_the_command() {
    let flag = |value: &str| {
        let mut paths = SettingsPaths::default();
        paths.flag_settings.push(value.to_owned());
        load_hooks(&paths).command_line_errors()
    };
    for (value, key) in [
        (json!({"disableAllHooks": "true"}), "disableAllHooks"),
        (
            json!({"allowManagedHooksOnly": "yes"}),
            "allowManagedHooksOnly",
        ),
    ] {
        let errors = flag(&value.to_string());
        assert!(
            errors.len() == 1
                && errors[0].starts_with(&format!("--settings ({key}): must be a boolean"))
                && !errors[0].contains("ignored"),
            "{value}: {errors:?}"
        );
    }
    assert_eq!(
        flag(&json!({"allowManagedHooksOnly": true}).to_string()),
        Vec::<String>::new()
    );
    assert_eq!(flag("{not json"), Vec::<String>::new());
}

/// Code review 2, finding 1: a matcher that backtracks exponentially (`(a+)+$`) ran with no
/// bound, on the async worker that asked, 2 to 4 times per event: a long enough tool name
/// stalled the process. Now a search that has not ended within the deadline counts as a
/// match (the guard runs: it fails closed), the user is told once, naming the matcher, and
/// the verdict is kept, so that the next call of that tool starts no second search.
#[test]
fn a_runaway_matcher_is_cut_off_counts_as_a_match_and_runs_once_per_name() {
    // 23 `a`s: about 11 s for regress in a debug build on a 2-core machine, well past the
    // 1 s deadline however fast the machine; far more would leave the abandoned search
    // burning a core until the test binary ends.
    let name = format!("mcp__srv__{}!", "a".repeat(23));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn({
        let name = name.clone();
        move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            let env = Env::new();
            let hooks = one(
                "PreToolUse",
                r"(a+)+$",
                vec![cmd("echo blocked by the guard >&2; exit 2")],
            );
            let (config, diags) = HooksConfig::from_hooks_value(&hooks, RuleSource::UserSettings);
            assert!(diags.is_empty(), "{diags:?}");
            let runner = HookRunner::new(config);
            let call = ToolCallInfo::new(name.clone(), json!({}), "toolu_01");
            let mut said = Vec::new();
            for _ in 0..2 {
                let out = rt.block_on(runner.run_pre_tool_use(&call, &env.ctx()));
                let decision = out.decision.expect("the guard did not run");
                assert_eq!(decision.behavior, PermissionDecision::Deny);
                said.push(
                    out.common
                        .errors
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>(),
                );
            }
            tx.send(said).unwrap();
        }
    });
    // Generous: only so that the test fails instead of hanging.
    let said = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the matcher's search was not cut off");
    assert!(
        said[0].len() == 1
            && said[0][0].contains(r#"the matcher "(a+)+$""#)
            && said[0][0].contains(&name)
            && said[0][0].contains("counted as a match"),
        "{:?}",
        said[0]
    );
    assert!(said[1].is_empty(), "said again: {:?}", said[1]);
}

/// Code review 2, finding 2: ES2025's modifier groups (`(?i:bash)`) and group names repeated
/// in alternatives are read. **Decision**: node 20 and 22 reject them (Claude Code on those
/// runs none of the group's hooks), engines that implement ES2025 read them as here; a guard
/// behind one runs.
#[test]
fn a_modifier_group_is_read_as_es2025_reads_it() {
    let m = Matcher::parse(Some("(?i:bash)")).unwrap();
    assert!(m.is_match("BASH") && m.is_match("Bash") && !m.is_match("Edit"));
    // So is a group name repeated in alternatives, as ES2025 allows.
    let m = Matcher::parse(Some("^(?<t>Bash)$|^(?<t>Edit)$")).unwrap();
    assert!(m.is_match("Edit") && !m.is_match("Read"));
}

/// Code review 2, finding 4: `JsRegex::new` answered with `regress::Error`, which put a
/// dependency's type in this crate's API; it answers with the crate's [`MatcherError`].
#[test]
fn a_regex_javascript_rejects_is_this_crates_error() {
    let e: MatcherError = JsRegex::new("(?i)bash").unwrap_err();
    assert_eq!(e.pattern, "(?i)bash");
    assert!(e.reason.contains("Invalid group"), "{e}");
    assert!(JsRegex::new("B\\ash").unwrap().is_match("Bash"));
}
