//! Session 33 on sed scripts that name files: every file a sed script writes (`w FILE`, `W
//! FILE`, the `w FILE` flag of `s`) is checked as a write of that path, and every file it
//! reads (`r FILE`, `R FILE`) as a read, in every spelling GNU sed accepts (`-e` pieces,
//! commands on lines of their own or after `;`, addresses before them, the `w` flag after
//! other flags, bracket expressions in the regex). Protected paths ask in every mode, bypass
//! included; Edit and Read deny rules deny; `/dev/stdout` and `/dev/stderr` are GNU sed's
//! own names, no files. A script read from a file (`-f FILE`) may write anything: a safety
//! check, asked even in bypass mode.

use crate::common;

use crate::common::{Case, Fixture, case, installed, real_bash, run, run_table_in};
use tool_core::PermissionResult;

/// The modes of the table, in its columns' order.
const MODES: [&str; 4] = ["bypassPermissions", "default", "acceptEdits", "plan"];

/// The deny rules every case of the table runs with (ask rules in [`rules_deny_and_ask`]).
const DENY: [&str; 2] = ["Read(./.env)", "Edit(./src/locked.txt)"];

/// The fixture: the common one, plus the file sed edits (`f`), a script file and a file an
/// Edit deny rule covers.
fn fixture() -> Fixture {
    let fx = Fixture::new();
    std::fs::write(fx.proj.join("f"), "a\n").unwrap();
    std::fs::write(fx.proj.join("fix.sed"), "s/a/b/\n").unwrap();
    std::fs::write(fx.proj.join("src/locked.txt"), "locked\n").unwrap();
    std::fs::create_dir_all(fx.proj.join(".claude")).unwrap();
    fx
}

/// One row: `command` with the decisions expected in [`MODES`], with [`DENY`] rules.
fn row(command: &str, expect: [&'static str; 4]) -> Vec<Case> {
    MODES
        .iter()
        .zip(expect)
        .map(|(mode, e)| case(e, "Bash", command).mode(mode).deny(&DENY))
        .collect()
}

/// The sed commands that write `T` (replaced by the target).
const WRITES: [&str; 7] = [
    "sed -n 'w T' f",
    "sed -i 'w T' f",
    "sed -n 'W T' f",
    "sed -n 's/a/b/w T' f",
    "sed -n 's/a/b/gpw T' f",
    "sed -i -e 's/a/b/' -e '$W T' f",
    "sed -n '1,/x/{p;w T\n}' f",
];

/// The sed commands that read `T`.
const READS: [&str; 4] = [
    "sed 'r T' f",
    "sed -n '1R T' f",
    "sed -i -e 's/a/b/' -e '$r T' f",
    "sed -n 'p;$!r T' f",
];

/// Found by review: the files a sed script names were never checked as paths: the command
/// was "a path that cannot be checked", which bypass mode lets through, so `sed -i "w
/// .git/hooks/pre-commit" f` planted a hook without a question (and `r .env` read a
/// Read-denied file). Each is now checked as the path it is, in each mode.
#[tokio::test]
async fn the_files_a_sed_script_names_are_checked_in_every_mode() {
    let fx = fixture();
    let mut cases = Vec::new();
    // (target, expected in bypass, default, acceptEdits, plan) for writes.
    let write_targets: [(&str, [&str; 4]); 7] = [
        (".git/hooks/pre-commit", ["ask", "ask", "ask", "deny"]),
        (".claude/settings.json", ["ask", "ask", "ask", "deny"]),
        ("$O/x.txt", ["allow", "ask", "ask", "deny"]),
        (".env", ["deny", "deny", "deny", "deny"]),
        ("src/locked.txt", ["deny", "deny", "deny", "deny"]),
        ("out.txt", ["allow", "ask", "ask", "deny"]),
        ("/dev/stdout", ["allow", "ask", "ask", "deny"]),
    ];
    for form in WRITES {
        for (target, expect) in write_targets {
            cases.extend(row(&form.replace('T', target), expect));
        }
    }
    // Reads: a protected path is read freely, a Read-denied one is denied.
    let read_targets: [(&str, [&str; 4]); 6] = [
        (".git/config", ["allow", "ask", "ask", "deny"]),
        (".claude/settings.json", ["allow", "ask", "ask", "deny"]),
        ("$O/notes.md", ["allow", "ask", "ask", "deny"]),
        (".env", ["deny", "deny", "deny", "deny"]),
        ("README.md", ["allow", "ask", "ask", "deny"]),
        ("/dev/stdin", ["allow", "ask", "ask", "deny"]),
    ];
    for form in READS {
        for (target, expect) in read_targets {
            cases.extend(row(&form.replace('T', target), expect));
        }
    }
    // A script file: what it writes cannot be seen, asked even in bypass mode; the file
    // itself is a read (a Read-denied one is denied).
    for command in [
        "sed -f fix.sed f",
        "sed -i -f fix.sed f",
        "sed -n --file=fix.sed f",
        "sed -nffix.sed f",
        "sed -e p -f fix.sed f",
    ] {
        cases.extend(row(command, ["ask", "ask", "ask", "deny"]));
    }
    cases.extend(row("sed -f .env f", ["deny", "deny", "deny", "deny"]));
    run_table_in(&fx, cases).await;
}

/// Without any rule, a script file still asks in bypass mode (a safety check, not a path
/// rule that could be dodged), and a protected file a script writes too.
#[tokio::test]
async fn without_rules_bypass_still_asks_for_a_script_file_and_a_protected_write() {
    let fx = fixture();
    let bypass = |expect, command: &str| case(expect, "Bash", command).mode("bypassPermissions");
    run_table_in(
        &fx,
        vec![
            bypass("ask", "sed -f fix.sed f"),
            bypass("ask", "sed -i -f fix.sed f"),
            bypass("ask", "sed -n 'w .git/hooks/pre-commit' f"),
            bypass("allow", "sed -n 'w out.txt' f"),
            bypass("allow", "sed -n 'r README.md' f"),
            bypass("allow", "sed -i 's/a/b/' f"),
        ],
    )
    .await;
}

/// Every spelling GNU sed reads as a write of `.git/hooks/pre-commit` asks in bypass mode;
/// text that only looks like one (the text of `a`, a replacement, a label) does not.
#[tokio::test]
async fn every_spelling_of_a_write_asks_in_bypass_mode() {
    let fx = fixture();
    let h = ".git/hooks/pre-commit";
    let mut cases = Vec::new();
    for command in [
        format!(r#"sed -i "w {h}" f"#),
        format!(r#"sed -n "w {h}" f"#),
        format!("sed -n 'W {h}' f"),
        format!("sed -n 's/a/b/w {h}' f"),
        format!("sed -n 's|a|b|Igw {h}' f"),
        format!("sed -n 's/a/b/ w {h}' f"),
        format!("sed -n 's/a/b/2w {h}' f"),
        format!("sed -n 's/a/b/ew {h}' f"),
        format!("sed -n -e p -e 'w {h}' f"),
        format!("sed -n --expression='w {h}' f"),
        format!("sed -n --expr='w {h}' f"),
        format!("sed -ne 'w {h}' f"),
        format!("sed -n -- 'w {h}' f"),
        format!("sed -n $'p\\nw {h}' f"),
        format!("sed -n 'p;w {h}' f"),
        format!("sed -n 'p ; w {h}' f"),
        format!("sed -n '1,/x/w {h}' f"),
        format!("sed -n '/a/!w {h}' f"),
        format!("sed -n '$ w {h}' f"),
        format!("sed -n '1~2w {h}' f"),
        format!("sed -n '0,/a/w {h}' f"),
        format!("sed -n '\\%a%Iw {h}' f"),
        format!("sed -n '/a/{{p;w {h}\n}}' f"),
        format!("sed -n ':a;w {h}' f"),
        format!("sed -n 'b end;w {h}' f"),
        format!("sed -n 'y/ab/cd/;w {h}' f"),
        format!("sed -n '# comment\nw {h}' f"),
        format!("sed -n 'a text\nw {h}' f"),
        format!("sed -n 'c\\\ntext\\\nmore\nw {h}' f"),
        // GNU sed 4.9 reads `/` in a bracket expression as a member; older versions end
        // the regex there (and read `w …` as the `w` flag after `]`).
        format!("sed -n 's/[/]/x/w {h}' f"),
        format!("sed -n 's/[/]/w {h}/' f"),
        format!("sed -n '/[/]/w {h}' f"),
        // An error after it: GNU sed has made the file when it finds the error.
        format!("sed -n 'w {h}\ns/a' f"),
        // A script that cannot be read (here the `/` of the path ends the regex), with a
        // `w` in it: it may write anything.
        format!("sed -n 's/w {h}/x/' f"),
        "sed -n 's/a/b/w' f".to_owned(),
        // Through a wrapper, a shell, find.
        format!("env sed -n 'w {h}' f"),
        format!("bash -c \"sed -n 'w {h}' f\""),
        format!("find . -name f -exec sed -n 'w {h}' {{}} \\;"),
        format!("cat f | sed -n 'w {h}'"),
        // Through a link to the repository (`gitlink` -> `.git`).
        "sed -n 'w gitlink/hooks/pre-commit' f".to_owned(),
        // An expansion elsewhere in the script, or in the name's last part.
        format!(r#"sed -n "s/$A/b/w {h}" f"#),
        r#"sed -n "w .git/hooks/$N" f"#.to_owned(),
    ] {
        cases.push(case("ask", "Bash", &command).mode("bypassPermissions"));
    }
    // Not a file: the text of `a`, `i`, `c` (also continued into the next `-e`), a
    // replacement, a regex, a comment, a label; GNU sed's own names.
    for command in [
        format!("sed -n 'a w {h}' f"),
        format!("sed -n 'a foo\\\nw {h}' f"),
        format!("sed -n -e 'a foo\\' -e 'w {h}' f"),
        format!("sed -n -e 'i\\' -e 'w {h}' f"),
        format!("sed -n 's|w {h}|x|' f"),
        format!("sed -n 's|x|w {h}|g' f"),
        format!("sed -n '\\|w {h}|p' f"),
        format!("sed -n '# w {h}' f"),
        "sed -n 'y/w/x/' f".to_owned(),
        "sed -n 's/a/b/w /dev/stdout' f".to_owned(),
        "sed -n 'w /dev/stderr' f".to_owned(),
    ] {
        cases.push(case("allow", "Bash", &command).mode("bypassPermissions"));
    }
    run_table_in(&fx, cases).await;
}

/// A script the shell computes is a path that cannot be checked, as `cp x "$DEST"` is: the
/// same decision in bypass mode (allowed without rules, asked with path rules), and asked
/// in the other modes.
#[tokio::test]
async fn a_computed_script_is_as_safe_as_a_computed_destination() {
    let fx = fixture();
    let mut cases = Vec::new();
    for command in [
        r#"cp x "$DEST""#,
        r#"sed -n "w $DEST" f"#,
        r#"sed -i "$S" f"#,
    ] {
        cases.push(case("allow", "Bash", command).mode("bypassPermissions"));
        cases.push(
            case("ask", "Bash", command)
                .mode("bypassPermissions")
                .deny(&DENY),
        );
        cases.push(case("ask", "Bash", command).mode("default"));
        cases.push(case("ask", "Bash", command).mode("acceptEdits"));
    }
    run_table_in(&fx, cases).await;
}

/// An Edit ask rule and a Read ask rule on a file a script names ask even in bypass mode.
#[tokio::test]
async fn ask_rules_on_a_scripts_files_ask_in_bypass_mode() {
    let fx = fixture();
    let bypass = |command: &str, rule: &str| {
        case("ask", "Bash", command)
            .mode("bypassPermissions")
            .ask(&[rule])
    };
    run_table_in(
        &fx,
        vec![
            bypass("sed -n 'w docs/a.md' f", "Edit(./docs/**)"),
            bypass("sed -n 'r secrets/key.pem' f", "Read(./secrets/**)"),
            bypass("sed -n 'R secrets/key.pem' f", "Read(./secrets/**)"),
            case("allow", "Bash", "sed -n 'w out.txt' f")
                .mode("bypassPermissions")
                .ask(&["Edit(./docs/**)"]),
        ],
    )
    .await;
}

/// The message of an ask or a deny, and whether bypass mode could skip it.
async fn message(fx: &Fixture, c: &Case) -> String {
    match run(fx, c).await {
        PermissionResult::Ask { message, .. } | PermissionResult::Deny { message, .. } => message,
        other => panic!("{c:?}: {other:?}"),
    }
}

/// The asks and denials name the file: the protected one written, the denied one read; a
/// script with no protected path keeps the earlier messages in default and acceptEdits
/// modes ("runs a sed script that reads or writes other files (`w out.txt`)", "runs a sed
/// script file (`-f fix.sed`)").
#[tokio::test]
async fn the_messages_name_the_file() {
    let fx = fixture();
    let p = fx.proj.display().to_string();
    let said = message(
        &fx,
        &case("ask", "Bash", "sed -i 'w .git/hooks/pre-commit' f").mode("bypassPermissions"),
    )
    .await;
    assert!(
        said.contains(&format!("write to {p}/.git/hooks/pre-commit"))
            && said.contains("protected directory"),
        "{said}"
    );
    let said = message(
        &fx,
        &case("deny", "Bash", "sed -n 'r .env' f")
            .mode("bypassPermissions")
            .deny(&DENY),
    )
    .await;
    assert!(said.contains(&format!("read {p}/.env")), "{said}");
    let said = message(
        &fx,
        &case("deny", "Bash", "sed -n 's/a/b/w src/locked.txt' f")
            .mode("acceptEdits")
            .deny(&DENY),
    )
    .await;
    assert!(said.contains(&format!("edit {p}/src/locked.txt")), "{said}");
    for (mode, command, reason) in [
        (
            "acceptEdits",
            "sed -i 'w out.txt' f",
            "runs a sed script that reads or writes other files (`w out.txt`)",
        ),
        (
            "default",
            "sed -n 's/a/b/w out.txt' f",
            "runs a sed script that reads or writes other files (`s/a/b/w out.txt`)",
        ),
        (
            "acceptEdits",
            "sed -i 'r /etc/hostname' f",
            "runs a sed script that reads or writes other files (`r /etc/hostname`)",
        ),
        (
            "acceptEdits",
            "sed -i -f fix.sed f",
            "runs a sed script file (`-f fix.sed`)",
        ),
        (
            "bypassPermissions",
            "sed -i -f fix.sed f",
            "runs a sed script file (`-f fix.sed`)",
        ),
    ] {
        let said = message(&fx, &case("ask", "Bash", command).mode(mode)).await;
        assert!(
            said.contains(reason) && !said.contains("computed path"),
            "{mode} {command}: {said}"
        );
    }
}

/// `gsed` (GNU sed's name beside a BSD sed) is read as sed is: its files are checked.
#[tokio::test]
async fn gsed_is_sed() {
    let fx = fixture();
    let bypass = |expect, command: &str| case(expect, "Bash", command).mode("bypassPermissions");
    run_table_in(
        &fx,
        vec![
            bypass("ask", "gsed -i 's/a/b/' .git/hooks/pre-commit"),
            bypass("ask", "gsed -n 'w .git/hooks/pre-commit' f"),
            bypass("ask", "gsed -f fix.sed f"),
            bypass("deny", "gsed -n 'r .env' f").deny(&DENY),
            bypass("deny", "gsed -n 1p .env").deny(&DENY),
            bypass("allow", "gsed -i 's/a/b/' f"),
        ],
    )
    .await;
}

/// Whether the `sed` on `PATH` is GNU sed (the scripts' meaning is GNU sed's).
fn gnu_sed() -> bool {
    installed("sed")
        && std::process::Command::new("sed")
            .arg("--version")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("GNU sed"))
}

/// The threat is real: GNU sed writes the file a `w` names, with `-n` and no `-i` too, and
/// in the other spellings above (a hook planted in `.git/hooks`). For each command the
/// real sed writes the hook with, the engine asks in bypass mode; for each it does not,
/// the engine knows it (allows). The same scripts, run and judged.
#[tokio::test]
async fn real_sed_writes_what_the_engine_asks_about() {
    if !gnu_sed() {
        eprintln!("GNU sed is not installed: skipped");
        return;
    }
    let fx = fixture();
    let hook = fx.proj.join(".git/hooks/pre-commit");
    let h = ".git/hooks/pre-commit";
    let commands = [
        format!("sed -n 'w {h}' f"),
        format!("sed -i 'w {h}' f"),
        format!("sed -n 's/a/b/w {h}' f"),
        format!("sed -n 's/a/b/ w {h}' f"),
        format!("sed -n -e p -e 'W {h}' f"),
        format!("sed -n ':a;w {h}' f"),
        format!("sed -n 'b end;w {h}\n:end' f"),
        format!("sed -n 's/[/]/x/w {h}' f"),
        format!("sed -n '/[/]/w {h}' f"),
        format!("sed -n 'c\\\ntext\\\nmore\nw {h}' f"),
        format!("sed -n 'w {h}\ns/a' f"),
        format!("sed -n 'a w {h}' f"),
        format!("sed -n -e 'a foo\\' -e 'w {h}' f"),
        format!("sed -n -e 'i\\' -e 'w {h}' f"),
        format!("sed -n 's|x|w {h}|g' f"),
        format!("sed -n '\\|w {h}|p' f"),
        format!("sed -n '# w {h}' f"),
        format!("sed -n 's/[/]/w {h}/' f"),
    ];
    let mut wrote = 0;
    for command in &commands {
        let _ = std::fs::remove_file(&hook);
        real_bash(command, &fx.proj, &fx.home);
        let written = hook.exists();
        wrote += usize::from(written);
        let c = case("ask", "Bash", command).mode("bypassPermissions");
        let got = common::behavior(&run(&fx, &c).await);
        if written {
            assert_eq!(got, "ask", "the real sed wrote the hook: {command}");
        }
        // What the real sed did not write is not asked about, but for the older reading
        // of a bracket (`s/[/]/w …/` writes `…/` there).
        if !written && !command.contains("[/]") {
            assert_eq!(got, "allow", "the real sed wrote no hook: {command}");
        }
    }
    let _ = std::fs::remove_file(&hook);
    assert!(wrote >= 10, "the real sed wrote the hook {wrote} times");
    // `sed -n 'w FILE'` without `-i` writes FILE with every line it reads.
    assert!(real_bash("sed -n 'w out.txt' f", &fx.proj, &fx.home));
    assert_eq!(
        std::fs::read_to_string(fx.proj.join("out.txt")).unwrap(),
        "a\n"
    );
}

/// A computed word may be options: `$OPTS` may be `-n` or `-e` (the next word is then the
/// script, and its `w` writes), `"$F"` may be `-i` (the files are then written in place).
/// Both readings are checked: the protected file asks in bypass mode, and a file only read
/// is still checked as read (a Read ask rule asks).
#[tokio::test]
async fn a_computed_word_may_be_the_option_that_makes_sed_write() {
    let fx = fixture();
    let bypass = |expect, command: &str| case(expect, "Bash", command).mode("bypassPermissions");
    run_table_in(
        &fx,
        vec![
            bypass("ask", "sed $SEDOPTS 'w .git/hooks/pre-commit' f"),
            bypass("ask", "sed $SEDOPTS -i 's/a/b/' .git/hooks/pre-commit"),
            bypass("ask", "sed \"$F\" 's/a/b/' .git/hooks/pre-commit"),
            bypass("ask", "sed 's/a/b/' \"$F\" .git/hooks/pre-commit"),
            bypass("ask", "sed -n \"$X\" -e p .git/config"),
            // `$X` may be `-e`, after the script too (the script is then a file).
            bypass("ask", "sed s/a/b/ $X 'w .git/hooks/pre-commit' f"),
            // A computed word that starts with literal text is no option: the script it is
            // may hold anything (a computed path, as before: allowed in bypass mode, asked
            // with path rules), but the operand after it is no script (`w.env` is a file,
            // not `w .env`, which the Edit rules would deny).
            bypass("allow", "sed \"s/$A/b/\" w.env"),
            bypass("ask", "sed \"s/$A/b/\" w.env").deny(&DENY),
            case("ask", "Bash", "sed \"s/$A/b/\" w.env").mode("default"),
            bypass("ask", "sed -n 1p \"$F\" secrets/key.pem").ask(&["Read(./secrets/**)"]),
            // `"$D"/x` may be `-i/x` (in place, the backup suffix `/x`); `x/"$D"` is surely
            // no option and changes nothing.
            bypass("ask", "sed -n 1p \"$D\"/x .git/config"),
            bypass("allow", "sed -n 1p x/\"$D\" .git/config"),
            bypass("allow", "sed -n 1p .git/config"),
        ],
    )
    .await;
}

/// `find … -exec sed -n 'w {}' …` writes each file found (find fills in `{}` inside a
/// word): the files it may find are lost as `-exec sed -i … {}` loses them.
#[tokio::test]
async fn find_exec_sed_writing_what_it_finds_is_asked_about() {
    let fx = fixture();
    std::fs::write(fx.proj.join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
    let bypass = |expect, command: &str| case(expect, "Bash", command).mode("bypassPermissions");
    run_table_in(
        &fx,
        vec![
            bypass("ask", "find . -name pre-commit -exec sed -i s/a/b/ {} \\;"),
            bypass("ask", "find . -name pre-commit -exec sed -n 'w {}' f \\;"),
            bypass(
                "ask",
                "find . -name pre-commit -exec sed -n 's/a/b/w {}' f \\;",
            ),
            // Where find finds no protected file, as `-exec sed -i`.
            bypass("allow", "find docs -name '*.md' -exec sed -i s/a/b/ {} \\;"),
            bypass("allow", "find docs -name '*.md' -exec sed -n 'w {}' {} \\;"),
        ],
    )
    .await;
}

/// Found by the code review of the sed reader: a label run into a `#` (`b#`: GNU sed 4.9
/// ends the label there and reads a comment to the line's end) or a `}` hid the `w` on the
/// next line, which the reader took for the text of an `a` command; a class closed by `::]`
/// (`[[:a::]]`: still open in GNU sed) hid the `w` flag of a substitution; and `w
/// /dev/stdin`, a file where GNU sed does not take it for its own name (`--posix`,
/// `POSIXLY_CORRECT`), emptied what standard input was opened from. Each asks in bypass
/// mode now.
#[tokio::test]
async fn a_label_a_bracket_class_or_dev_stdin_hides_no_write() {
    let fx = fixture();
    let bypass = |expect, command: &str| case(expect, "Bash", command).mode("bypassPermissions");
    run_table_in(
        &fx,
        vec![
            bypass("ask", "sed -n '/nomatch/b# a x\\\nw .bashrc' f"),
            bypass("ask", "sed -n ':a# a x\\\nw .bashrc' f"),
            bypass("ask", "sed -n 't} a x\\\nw .bashrc' f"),
            bypass("ask", "sed -n 's/[[:a::]]/Q/;w x;:]]/R/w .bashrc' f"),
            bypass(
                "ask",
                "POSIXLY_CORRECT=1 sed -n 's/x/y/w /dev/stdin' f < .git/config",
            ),
            bypass("ask", "sed -n --posix 's/x/y/w /dev/stdin' f < .git/config"),
            // What stays understood and allowed.
            bypass("allow", "sed -n '/x/b end; p; :end' f"),
            bypass("allow", "sed -n 's/[[:alpha:]]/Q/w out.txt' f"),
            bypass("allow", "sed -n 's/x/y/w /dev/stdout' f"),
        ],
    )
    .await;
}
