//! Session 33 on the permission modes: a `disableBypassPermissionsMode` of the wrong type
//! (`true`, `"disabled"`) disables bypass as `"disable"` does, at every level (a restriction
//! of the wrong type never fails open); a reference file (`touch -r F`, `chmod
//! --reference=F`) is only read; a sed script that names files is asked about for what it
//! is, not as a computed path; and an `additionalDirectories` entry that names no directory
//! is reported, naming its settings file.

// The binary's `out!`/`outln!`/`eoutln!` as plain prints, for the CLI module compiled in.
macro_rules! out {
    ($($arg:tt)*) => { print!($($arg)*) };
}
macro_rules! outln {
    ($($arg:tt)*) => { println!($($arg)*) };
}
macro_rules! eoutln {
    ($($arg:tt)*) => { eprintln!($($arg)*) };
}

// `toolwright permissions check`, in-process (as tests/cli.rs builds it); the `crate::trust`
// and `crate::session` it names are declared in main.rs.
#[path = "../../../../src/cli/permissions.rs"]
#[allow(dead_code, unreachable_pub, unused_macros)]
mod permissions;

use crate::common;

use std::path::{Path, PathBuf};

use crate::common::{
    Case, Fixture, behavior, case, installed, messages, real_bash, run, run_table_in, sources,
    write,
};
use clap::Parser;
use serde_json::{Value, json};
use tool_core::{PermissionMode, PermissionResult, RuleSource, ToolUseContext};
use tool_perms::settings::{LoadedPermissions, Severity, load_permissions};

// --- 1. `disableBypassPermissionsMode` of the wrong type -----------------------------------

/// The values of the wrong type the review tried, and a few more.
fn wrong_values() -> Vec<Value> {
    vec![
        json!(true),
        json!("disabled"),
        json!("Disable"),
        json!(" disable"),
        json!(false),
        json!(1),
        json!(["disable"]),
        json!({"disable": true}),
        // Present, though `null`: Claude Code's schema refuses it as it refuses `true`.
        Value::Null,
    ]
}

/// Where each level's settings file is, for the fixture's sources ([`sources`], with the
/// managed settings in `<root>/managed`).
fn level_file(fx: &Fixture, level: RuleSource) -> PathBuf {
    match level {
        RuleSource::UserSettings => fx.home.join("config/settings.json"),
        RuleSource::ProjectSettings => fx.proj.join(".claude/settings.json"),
        RuleSource::LocalSettings => fx.proj.join(".claude/settings.local.json"),
        RuleSource::PolicySettings => managed_dir(fx).join("managed-settings.json"),
        RuleSource::FlagSettings => fx.out.join("flag-settings.json"),
        other => panic!("no file for {other:?}"),
    }
}

fn managed_dir(fx: &Fixture) -> PathBuf {
    fx.proj.parent().unwrap().join("managed")
}

/// The settings of `fx` with `value` written at `level` (the project trusted or not), and
/// managed settings read from the fixture's own directory.
fn load_at(fx: &Fixture, level: RuleSource, value: &Value, trusted: bool) -> LoadedPermissions {
    let file = level_file(fx, level);
    write(&file, value.to_string());
    let mut s = sources(fx, fx.proj.clone(), trusted);
    s.managed_dir = Some(managed_dir(fx));
    if level == RuleSource::FlagSettings {
        s.flag_settings = vec![file.display().to_string()];
    }
    let loaded = load_permissions(&s);
    std::fs::remove_file(&file).unwrap();
    loaded
}

/// Found by review: `disableBypassPermissionsMode: true` (or `"disabled"`, `"Disable"`) was
/// reported ("must be \"disable\", got true; ignored") and then ignored, even in managed
/// settings, so `--mode bypassPermissions` started and bypassed. A restriction of the wrong
/// type never fails open: every present value disables bypass as `"disable"` does, at every
/// level where the key counts (an untrusted project's own files too), and the diagnostic says
/// it is read as `"disable"`. The refusal of `--mode bypassPermissions` names the file.
#[test]
fn a_disable_of_the_wrong_type_disables_bypass_at_every_level() {
    let levels = [
        (RuleSource::PolicySettings, true),
        (RuleSource::UserSettings, true),
        (RuleSource::ProjectSettings, true),
        (RuleSource::ProjectSettings, false),
        (RuleSource::LocalSettings, true),
        (RuleSource::LocalSettings, false),
        (RuleSource::FlagSettings, true),
    ];
    let fx = Fixture::new();
    for (level, trusted) in levels {
        for value in wrong_values() {
            let settings = json!({"permissions": {"disableBypassPermissionsMode": value}});
            let loaded = load_at(&fx, level, &settings, trusted);
            let at = format!("{level:?} (trusted: {trusted}) {value}");
            assert!(loaded.bypass_disabled, "{at}: {:?}", messages(&loaded));
            let mut context = loaded.context.clone();
            let refused = loaded
                .apply_mode_flag(&mut context, Some(PermissionMode::BypassPermissions))
                .expect_err(&at);
            let file = level_file(&fx, level).display().to_string();
            assert!(
                refused.contains("bypass is disabled by settings")
                    && refused.contains("read as `\"disable\"`")
                    && refused.contains(&file),
                "{at}: {refused}"
            );
            assert!(!context.bypass_available, "{at}");
            let said = messages(&loaded);
            assert!(
                said.iter().any(|m| m.contains(&file)
                    && m.contains(
                        "`permissions.disableBypassPermissionsMode` must be \"disable\""
                    )
                    && m.contains("read as \"disable\"")
                    && !m.contains("ignored")),
                "{at}: {said:?}"
            );
        }
    }
}

/// A `defaultMode` of bypassPermissions is turned off by a `disableBypassPermissionsMode:
/// true` as by `"disable"` (reported where it is disabled), and a Write outside the project
/// is then asked about, not allowed: the review's repro in managed settings.
#[tokio::test]
async fn a_true_in_managed_settings_keeps_bypass_off() {
    let fx = Fixture::new();
    write(
        &level_file(&fx, RuleSource::PolicySettings),
        r#"{"permissions":{"disableBypassPermissionsMode":true}}"#,
    );
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.managed_dir = Some(managed_dir(&fx));
    s.inline.push((
        RuleSource::FlagSettings,
        json!({"permissions": {"defaultMode": "bypassPermissions"}}),
    ));
    let loaded = load_permissions(&s);
    assert_eq!(loaded.context.mode, PermissionMode::Default);
    assert!(!loaded.context.bypass_available);
    let off = loaded
        .diagnostics
        .iter()
        .find(|d| d.message.contains("turns bypassPermissions off"))
        .unwrap_or_else(|| panic!("{:?}", messages(&loaded)));
    assert_eq!(off.source, RuleSource::PolicySettings);

    let write_outside = json!({"file_path": fx.out.join("x.txt"), "content": "x"});
    let tctx = ToolUseContext::new(&fx.proj)
        .with_home(Some(fx.home.clone()))
        .with_permission(loaded.context.clone());
    let got = loaded
        .engine()
        .decide(&common::probe(&fx, "Write"), &write_outside, &tctx)
        .await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
}

/// `"disable"` itself disables bypass without a word.
#[test]
fn disable_is_not_reported() {
    let fx = Fixture::new();
    let loaded = load_at(
        &fx,
        RuleSource::UserSettings,
        &json!({"permissions": {"disableBypassPermissionsMode": "disable"}}),
        true,
    );
    assert!(loaded.bypass_disabled);
    assert!(messages(&loaded).is_empty(), "{:?}", messages(&loaded));
}

/// In a value given on the command line (`--settings '{…}'`), the wrong type stays an error
/// that stops the command, worded for a command that stops (no "read as" consequence).
#[test]
fn on_the_command_line_the_wrong_type_stops_the_command() {
    let fx = Fixture::new();
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![r#"{"permissions":{"disableBypassPermissionsMode":true}}"#.into()];
    let loaded = load_permissions(&s);
    let errors = loaded.command_line_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("must be \"disable\", got true") && !errors[0].contains("read as"),
        "{errors:?}"
    );
    assert!(loaded.bypass_disabled);
    assert!(
        loaded
            .diagnostics
            .iter()
            .all(|d| d.severity == Severity::Error)
    );
}

// --- 2. Reference files ---------------------------------------------------------------------

/// A fixture with `src/a.txt` and `src/b.txt`.
fn files_fixture() -> Fixture {
    let fx = Fixture::new();
    std::fs::write(fx.proj.join("src/a.txt"), "a").unwrap();
    std::fs::write(fx.proj.join("src/b.txt"), "b").unwrap();
    std::fs::write(fx.proj.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    fx
}

fn bypass(expect: &'static str, command: &str) -> Case {
    case(expect, "Bash", command).mode("bypassPermissions")
}

/// The real `touch -r REF FILE` only reads REF: its time is not changed, FILE gets it.
#[test]
fn touch_reference_only_reads_the_reference() {
    if !installed("touch") {
        return;
    }
    let fx = files_fixture();
    let a = fx.proj.join("src/a.txt");
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
    std::fs::File::options()
        .write(true)
        .open(&a)
        .unwrap()
        .set_modified(old)
        .unwrap();
    assert!(real_bash(
        "touch -r src/a.txt src/b.txt",
        &fx.proj,
        &fx.home
    ));
    let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
    assert_eq!(mtime(&a), old, "the reference was not touched");
    assert_eq!(
        mtime(&fx.proj.join("src/b.txt")),
        old,
        "the operand got its time"
    );
}

/// Found by review: `touch -r FILE`, `touch --reference=FILE`, `chmod/chown/chgrp
/// --reference=FILE` checked the reference file as written: a protected one (`.git/HEAD`)
/// asked in bypass mode, an Edit deny on it denied. The reference is only read: a Read deny
/// on it applies, a protected one or an Edit deny does not; the operands are still written.
#[tokio::test]
async fn a_reference_file_is_checked_as_read() {
    let fx = files_fixture();
    let mut cases = Vec::new();
    for reference in [
        "touch --reference=.git/HEAD src/a.txt",
        "touch --reference .git/HEAD src/a.txt",
        "touch --ref=.git/HEAD src/a.txt",
        "touch -r .git/HEAD src/a.txt",
        "touch -r.git/HEAD src/a.txt",
        "touch -cr .git/HEAD src/a.txt",
        "touch -m -r .git/HEAD src/a.txt",
        "chmod --reference=.git/HEAD src/a.txt",
        "chmod --reference .git/HEAD src/a.txt",
        "chown --reference=.git/HEAD src/a.txt",
        "chgrp --reference=.git/HEAD src/a.txt",
        "chgrp --reference .git/HEAD src/a.txt",
        "truncate -r .git/HEAD src/a.txt",
        "truncate --reference=.git/HEAD src/a.txt",
        "touch -r $H/.ssh/id_rsa src/a.txt",
    ] {
        cases.push(bypass("allow", reference));
    }
    // What is written is still checked as written.
    for written in [
        "touch .git/x",
        "touch -r src/a.txt .git/HEAD",
        "touch --reference=src/a.txt .git/HEAD",
        "touch -d 2020-01-01 .git/HEAD",
        "touch --date 2020-01-01 .git/HEAD",
        "chmod --reference=src/a.txt .git/config",
        "chown --reference src/a.txt .git/config",
        "chgrp --reference=src/a.txt .git/config",
        "truncate -r src/a.txt .git/HEAD",
        "truncate -s 0 .git/HEAD",
    ] {
        cases.push(bypass("ask", written));
    }
    // A Read deny on the reference applies; an Edit deny on it does not.
    for mode in ["acceptEdits", "bypassPermissions"] {
        for command in [
            "touch -r src/a.txt src/b.txt",
            "touch --reference=src/a.txt src/b.txt",
            "chmod --reference=src/a.txt src/b.txt",
        ] {
            cases.push(
                case("deny", "Bash", command)
                    .mode(mode)
                    .deny(&["Read(./src/a.txt)"]),
            );
            // acceptEdits runs `touch`, not `chmod`, without asking.
            let not_denied = if mode == "acceptEdits" && command.starts_with("chmod") {
                "ask"
            } else {
                "allow"
            };
            cases.push(
                case(not_denied, "Bash", command)
                    .mode(mode)
                    .deny(&["Edit(./src/a.txt)"]),
            );
        }
        cases.push(
            case("deny", "Bash", "touch -r src/b.txt src/a.txt")
                .mode(mode)
                .deny(&["Edit(./src/a.txt)"]),
        );
        cases.push(
            case("deny", "Bash", "touch src/a.txt")
                .mode(mode)
                .deny(&["Edit(./src/a.txt)"]),
        );
    }
    run_table_in(&fx, cases).await;
}

/// A reference outside the project is a read outside, not a write: asked about as a read
/// in acceptEdits mode.
#[tokio::test]
async fn a_reference_outside_is_a_read_outside() {
    let fx = files_fixture();
    let c = case("ask", "Bash", "touch -r $O/notes.md src/a.txt").mode("acceptEdits");
    let got = run(&fx, &c).await;
    let PermissionResult::Ask { message, .. } = &got else {
        panic!("{got:?}")
    };
    assert!(
        !message.contains("write") && !message.contains("edit"),
        "{message}"
    );
}

// --- 3. sed scripts that name files -----------------------------------------------------

/// Found by review: a sed script that names files (`r FILE`, `w FILE`, `s///w FILE`, `R`,
/// `W`, `-f FILE`) was asked about as "a computed path", which it is not. It is still asked
/// about, for what it is.
#[tokio::test]
async fn a_sed_script_that_names_files_is_asked_about_for_what_it_is() {
    let fx = files_fixture();
    std::fs::write(fx.proj.join("fix.sed"), "s/a/b/\n").unwrap();
    let cases = [
        (
            r#"sed -i "r /etc/hostname" src/a.txt"#,
            "a sed script that reads or writes other files (`r /etc/hostname`)",
        ),
        (
            "sed -i 'w out.txt' src/a.txt",
            "a sed script that reads or writes other files (`w out.txt`)",
        ),
        (
            "sed -i 's/a/b/w out.txt' src/a.txt",
            "a sed script that reads or writes other files (`s/a/b/w out.txt`)",
        ),
        (
            "sed -i '1R x.txt' src/a.txt",
            "a sed script that reads or writes other files (`1R x.txt`)",
        ),
        (
            "sed -i -e 's/a/b/' -e '$W y.txt' src/a.txt",
            "a sed script that reads or writes other files (`$W y.txt`)",
        ),
        (
            "sed -i -f fix.sed src/a.txt",
            "a sed script file (`-f fix.sed`)",
        ),
        (
            "sed -i --file=fix.sed src/a.txt",
            "a sed script file (`-f fix.sed`)",
        ),
    ];
    for (command, reason) in cases {
        let c = case("ask", "Bash", command).mode("acceptEdits");
        let got = run(&fx, &c).await;
        let PermissionResult::Ask { message, .. } = &got else {
            panic!("{command}: {got:?}")
        };
        assert!(
            message.contains(reason) && !message.contains("computed path"),
            "{command}: {message}"
        );
    }
    // A computed script is still a computed one.
    let c = case("ask", "Bash", r#"sed -i "$S" src/a.txt"#).mode("acceptEdits");
    let got = run(&fx, &c).await;
    let PermissionResult::Ask { message, .. } = &got else {
        panic!("{got:?}")
    };
    assert!(message.contains("computed"), "{message}");
    // The decisions are unchanged: asked in acceptEdits mode, allowed in bypass mode.
    run_table_in(
        &fx,
        vec![
            bypass("allow", "sed -i 'w out.txt' src/a.txt"),
            case("ask", "Bash", "sed -i 'r /etc/hostname' src/a.txt").mode("acceptEdits"),
            case("ask", "Bash", "sed -i -f fix.sed src/a.txt").mode("acceptEdits"),
        ],
    )
    .await;
}

// --- 4. `additionalDirectories` that name no directory ----------------------------------

/// Found by review: `permissions.additionalDirectories` entries that name no directory (a
/// `$HOME/...` left unexpanded, a relative name that does not exist, `""`) were ignored
/// without a word, while `--add-dir` warns. Each is reported, naming its settings file;
/// `$HOME` is not expanded (Claude Code does not), and the warning says so.
#[test]
fn additional_directories_that_name_no_directory_are_reported() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.proj.join("real-dir")).unwrap();
    let user = fx.home.join("config/settings.json");
    write(
        &user,
        json!({"permissions": {"additionalDirectories": [
            "$HOME/hx", "nope", "", "real-dir", "README.md", fx.out.display().to_string()
        ]}})
        .to_string(),
    );
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let said = messages(&loaded);
    let about = |entry: &str| {
        said.iter()
            .filter(|m| {
                m.starts_with(&user.display().to_string())
                    && m.contains("warning")
                    && m.contains(entry)
                    && m.contains("adds nothing a session could use")
            })
            .cloned()
            .collect::<Vec<_>>()
    };
    let home = about("`$HOME/hx`");
    assert_eq!(home.len(), 1, "{said:?}");
    assert!(
        home[0].contains("does not exist") && home[0].contains("not expanded"),
        "{home:?}"
    );
    let nope = about("`nope`");
    assert_eq!(nope.len(), 1, "{said:?}");
    assert!(nope[0].contains("does not exist"), "{nope:?}");
    let empty = about("empty");
    assert_eq!(empty.len(), 1, "{said:?}");
    let file = about("`README.md`");
    assert_eq!(file.len(), 1, "{said:?}");
    assert!(!file[0].contains("does not exist"), "{file:?}");
    // The directories that exist are not mentioned, and are added.
    assert_eq!(said.len(), 4, "{said:?}");
    assert!(
        loaded
            .context
            .additional_working_directories
            .contains(&fx.proj.join("real-dir"))
    );
    assert!(
        loaded
            .context
            .additional_working_directories
            .contains(&fx.out)
    );
    // An untrusted project's file is checked as a trusted one's.
    let project = fx.proj.join(".claude/settings.json");
    write(
        &project,
        json!({"permissions": {"additionalDirectories": ["nope"]}}).to_string(),
    );
    std::fs::remove_file(&user).unwrap();
    for trusted in [true, false] {
        let loaded = load_permissions(&sources(&fx, fx.proj.clone(), trusted));
        let said = messages(&loaded);
        assert!(
            said.iter()
                .any(|m| m.starts_with(&project.display().to_string())
                    && m.contains("`nope`")
                    && m.contains("does not exist")),
            "trusted {trusted}: {said:?}"
        );
    }
}

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    args: permissions::CheckArgs,
}

/// `permissions check` says it too, for a `--settings` file, naming it.
#[test]
fn permissions_check_reports_them() {
    let fx = Fixture::new();
    let settings = fx.out.join("s.json");
    write(
        &settings,
        r#"{"permissions":{"additionalDirectories":["$HOME/hx"]}}"#,
    );
    let argv = [
        "check".to_owned(),
        "--cwd".to_owned(),
        fx.proj.display().to_string(),
        "--settings".to_owned(),
        settings.display().to_string(),
        "Read".to_owned(),
        json!({"file_path": fx.proj.join("README.md")}).to_string(),
    ];
    let args = Cli::try_parse_from(argv).unwrap().args;
    let report = permissions::check(&args, &[]).unwrap();
    assert!(
        report
            .warnings
            .iter()
            .any(|w| w.starts_with(&settings.display().to_string())
                && w.contains("`$HOME/hx`")
                && w.contains("adds nothing a session could use")),
        "{:?}",
        report.warnings
    );
}
