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

/// `--add-dir` is taken relative to where the command runs, as `--cwd` and `--settings` are
/// (it was taken relative to `--cwd`), and one that is no directory is warned about instead
/// of quietly adding nothing.
#[test]
fn add_dir_is_relative_to_where_the_command_runs_and_warned_about_when_missing() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.proj.join("extra")).unwrap();
    let read = r#"{"file_path":"$O/notes.md"}"#;
    // `extra` under `--cwd` exists, but the command does not run there.
    let r = check(&args(&fx, &["--add-dir", "extra", "Read", read]), &[]).unwrap();
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("--add-dir") && w.contains("does not exist")),
        "{:?}",
        r.warnings
    );
    let r = check(&args(&fx, &["--add-dir", "$O/missing", "Read", read]), &[]).unwrap();
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("$O/missing")
                || w.contains(&format!("{}/missing", fx.out.display()))),
        "{:?}",
        r.warnings
    );
    // An existing one is added without a word: the file in it is readable.
    let r = check(
        &args(&fx, &["--mode", "dontAsk", "--add-dir", "$O", "Read", read]),
        &[],
    )
    .unwrap();
    assert_eq!(r.decision, "allow", "{:?}", r.warnings);
    assert!(
        r.warnings.iter().all(|w| !w.contains("--add-dir")),
        "{:?}",
        r.warnings
    );
}

/// The text report shows a carriage return or an escape sequence in a path as an escape:
/// printed raw, `\r` made a terminal overwrite the reason line with what followed it.
#[test]
fn the_text_report_escapes_control_characters() {
    let fx = Fixture::new();
    let a = args(
        &fx,
        &[
            "Write",
            r#"{"file_path":"$P/.git/x\rREADME.md","content":"x"}"#,
        ],
    );
    let text = render_text(&check(&a, &[]).unwrap());
    assert!(!text.contains('\r'), "{text:?}");
    assert!(text.contains("x\\rREADME.md"), "{text}");
}
