//! `toolwright permissions check`, tested in-process: the root package's CLI module is
//! compiled into this test (it only needs this crate, tool-core, serde_json and clap).
#![allow(clippy::unwrap_used, clippy::expect_used)]

// The binary's `out!`/`outln!`/`eoutln!` (which survive a closed standard output or error)
// as plain prints.
macro_rules! out {
    ($($arg:tt)*) => { print!($($arg)*) };
}
macro_rules! outln {
    ($($arg:tt)*) => { println!($($arg)*) };
}
macro_rules! eoutln {
    ($($arg:tt)*) => { eprintln!($($arg)*) };
}

#[path = "../../../src/cli/permissions.rs"]
#[allow(dead_code, unreachable_pub)]
mod permissions;

// `permissions check` reads the workspace trust record, like a session would.
#[path = "../../../src/trust.rs"]
#[allow(dead_code, unreachable_pub)]
mod trust;

// `permissions check` reads the environment as it was before the settings' `env` (the
// binary's `session` module); no settings `env` is applied in these tests.
mod session {
    pub fn var_before_settings(name: &str) -> Option<std::ffi::OsString> {
        std::env::var_os(name)
    }
}

mod common;

use clap::Parser;
use common::Fixture;
use permissions::{CheckArgs, check, render_json, render_text};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: CheckArgs,
}

fn args(fx: &Fixture, extra: &[&str]) -> CheckArgs {
    let mut argv = vec![
        "check".to_owned(),
        "--cwd".to_owned(),
        fx.proj.display().to_string(),
    ];
    argv.extend(extra.iter().map(|s| fx.subst(s)));
    Cli::try_parse_from(argv).unwrap().args
}

#[test]
fn issue_example_explains_the_subcommand() {
    let fx = Fixture::new();
    let a = args(
        &fx,
        &[
            "--rules",
            r#"{"allow":["Bash(git status:*)"]}"#,
            "--json",
            "Bash",
            r#"{"command":"git status && rm x"}"#,
        ],
    );
    let report = check(&a, &[]).unwrap();
    let v = render_json(&report);
    assert_eq!(v["decision"], "ask");
    assert_eq!(v["subcommand"], "rm x");
    assert!(v["reason"].as_str().unwrap().contains("rm x"));
    assert!(
        v["details"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d.as_str().unwrap().contains("Bash(git status:*)"))
    );
}

#[test]
fn allow_and_deny_name_the_rule_and_source() {
    let fx = Fixture::new();
    let a = args(
        &fx,
        &[
            "--rules",
            r#"{"allow":["Bash(git status:*)"],"deny":["Read(.env)"]}"#,
            "Bash",
            r#"{"command":"git status"}"#,
        ],
    );
    let v = render_json(&check(&a, &[]).unwrap());
    assert_eq!(v["decision"], "allow");
    assert_eq!(v["rule"], "Bash(git status:*)");
    assert_eq!(v["source"], "projectSettings");
    let a = args(
        &fx,
        &[
            "--rules",
            r#"{"deny":["Read(.env)"]}"#,
            "Read",
            r#"{"file_path":".env"}"#,
        ],
    );
    let r = check(&a, &[]).unwrap();
    assert_eq!(r.decision, "deny");
    let text = render_text(&r);
    assert!(
        text.contains("decision: deny") && text.contains("rule: Read(.env) (from projectSettings)"),
        "{text}"
    );

    let flag = fx.home.join("flag.json");
    std::fs::write(
        &flag,
        r#"{"permissions":{"deny":["WebFetch(domain:evil.com)"]}}"#,
    )
    .unwrap();
    let a = args(
        &fx,
        &[
            "--settings",
            flag.to_str().unwrap(),
            "WebFetch",
            r#"{"url":"http://a.com@evil.com/","prompt":"x"}"#,
        ],
    );
    let v = render_json(&check(&a, &[]).unwrap());
    assert_eq!(v["decision"], "deny");
    assert_eq!(v["source"], "flagSettings");
}

#[test]
fn every_tool_kind_and_modes() {
    let fx = Fixture::new();
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "Edit",
                r#"{"file_path":"README.md","old_string":"a","new_string":"b"}"#,
            ],
            "ask",
        ),
        (
            &[
                "--mode",
                "acceptEdits",
                "Edit",
                r#"{"file_path":"README.md"}"#,
            ],
            "allow",
        ),
        (
            &[
                "--mode",
                "bypassPermissions",
                "Write",
                r#"{"file_path":".git/config"}"#,
            ],
            "ask",
        ),
        (
            &["--mode", "dontAsk", "Bash", r#"{"command":"npm install"}"#],
            "deny",
        ),
        (&["--mode", "plan", "Bash", r#"{"command":"ls"}"#], "allow"),
        (&["Read", r#"{"file_path":"$O/notes.md"}"#], "ask"),
        (
            &["--add-dir", "$O", "Read", r#"{"file_path":"$O/notes.md"}"#],
            "allow",
        ),
        (&["Glob", r#"{"pattern":"**/*.rs"}"#], "allow"),
        (
            &["WebFetch", r#"{"url":"https://docs.rs","prompt":"x"}"#],
            "ask",
        ),
        (&["mcp__gh__create_issue", "{}"], "ask"),
        (
            &[
                "--rules",
                r#"{"allow":["mcp__gh"]}"#,
                "mcp__gh__create_issue",
                "{}",
            ],
            "allow",
        ),
        (
            &[
                "--rules",
                r#"{"deny":["Skill(deploy)"]}"#,
                "Skill",
                r#"{"skill":"deploy"}"#,
            ],
            "deny",
        ),
        (
            &[
                "--rules",
                r#"{"deny":["Agent(Explore)"]}"#,
                "Agent",
                r#"{"subagent_type":"Explore","prompt":"x","description":"x"}"#,
            ],
            "deny",
        ),
        (&["AskUserQuestion", r#"{"questions":[]}"#], "ask"),
        (&["TodoWrite", r#"{"todos":[]}"#], "allow"),
    ];
    for (argv, expect) in cases {
        let report = check(&args(&fx, argv), &[]).unwrap();
        assert_eq!(
            report.decision, *expect,
            "{argv:?}: {:?}",
            report.explanation
        );
    }
}

#[test]
fn bad_input_is_an_error_with_a_clear_message() {
    let fx = Fixture::new();
    let err = |argv: &[&str]| check(&args(&fx, argv), &[]).unwrap_err();
    assert!(err(&["Bash", "{not json"]).contains("INPUT-JSON is not valid JSON"));
    assert!(err(&["Bash", "[1]"]).contains("must be a JSON object"));
    assert!(err(&["--mode", "yolo", "Bash", "{}"]).contains("unknown permission mode `yolo`"));
    assert!(err(&["--rules", "{", "Bash", "{}"]).contains("--rules is not valid JSON"));
    assert!(err(&["--rules", r#"{"allow":["Bash(x"]}"#, "Bash", "{}"]).contains("Bash(x"));
    assert!(err(&["--settings", "/no/such/file.json", "Bash", "{}"]).contains("cannot read"));
    let bad = fx.home.join("bad.json");
    std::fs::write(&bad, "{ nope").unwrap();
    assert!(err(&["--settings", bad.to_str().unwrap(), "Bash", "{}"]).contains("invalid JSON"));
    let e = check(
        &Cli::try_parse_from(["check", "--cwd", "/no/such/dir", "Bash", "{}"])
            .unwrap()
            .args,
        &[],
    )
    .unwrap_err();
    // The system's own reason, as `run` says it.
    assert!(
        e.contains("cannot use /no/such/dir as the project directory: No such file"),
        "{e}"
    );
}
