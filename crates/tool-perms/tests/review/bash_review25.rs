//! Review 25 findings on the bash analysis: here-documents whose delimiter bash reads
//! differently from the parser, and xargs supplying the command or subcommand a deny rule
//! names.

use crate::common::{Case, Fixture, case, real_bash, run_table, run_table_in};
use tool_perms::bash::parse::analyze;

// --- 1. Here-document delimiters bash takes after quote removal ------------------------------

/// How a here-document's delimiter can be spelled so that bash ends the body at a line the
/// parser does not take for its end: (the word after `<<`, the line bash ends it at, what a
/// deny rule on a command after it gives). A delimiter with a backslash in it has no
/// spelling the parser reads as bash does: the command asks.
const DELIMITERS: &[(&str, &str, &str)] = &[
    ("E\"O\"F", "EOF", "deny"),
    ("E'O'F", "EOF", "deny"),
    ("E\"\"OF", "EOF", "deny"),
    ("$'EOF'", "EOF", "deny"),
    ("$'E\\x4fF'", "EOF", "deny"),
    ("E\\\"OF", "E\"OF", "deny"),
    ("\"E\"OF", "EOF", "deny"),
    ("'E'OF", "EOF", "deny"),
    ("E$'O'F", "EOF", "deny"),
    ("$\"EOF\"", "EOF", "deny"),
    ("tru\"e\"", "true", "deny"),
    ("\"E\\OF\"", "E\\OF", "ask"),
    ("'E\\OF'", "E\\OF", "ask"),
];

/// The lines after bash's end of a here-document run, however its delimiter is quoted: for
/// every spelling, real bash runs the `touch` that follows the line it ends the body at (the
/// file appears), and the engine never allows the command: a deny rule on `touch` denies it
/// (or asks) in default and bypass mode, plan mode refuses it as no read-only command, it
/// asks in default mode and is denied in dontAsk mode, and writing a protected file there
/// asks even in bypass mode.
#[tokio::test]
async fn commands_after_a_partly_quoted_heredoc_delimiter_are_seen() {
    let fx = Fixture::new();
    let mut cases: Vec<Case> = Vec::new();
    for (i, (word, ends_at, with_deny)) in DELIMITERS.iter().enumerate() {
        let file = format!("pwned{i}");
        let command = format!("cat <<{word}\n{ends_at}\ntouch {file}\n{word}\n");
        real_bash(&command, &fx.out, &fx.home);
        assert!(
            fx.out.join(&file).exists(),
            "bash did not run the line after {ends_at:?} for <<{word}"
        );
        for mode in ["default", "bypassPermissions"] {
            cases.push(
                case(with_deny, "Bash", &command)
                    .mode(mode)
                    .deny(&["Bash(touch:*)"]),
            );
        }
        // Plan mode runs read-only commands only: this is not one.
        cases.push(case("deny", "Bash", &command).mode("plan"));
        cases.push(
            case("deny", "Bash", &command)
                .mode("plan")
                .deny(&["Bash(touch:*)"]),
        );
        cases.push(case("ask", "Bash", &command));
        cases.push(case("deny", "Bash", &command).mode("dontAsk"));
        let hook = format!("cat <<{word}\n{ends_at}\ntouch .git/hooks/{file}\n{word}\n");
        cases.push(case("ask", "Bash", &hook).mode("bypassPermissions"));
        cases.push(case("ask", "Bash", &hook).mode("plan").bypass_available());
    }
    // The review's repros.
    cases.push(
        case("deny", "Bash", "cat <<E\"O\"F\nEOF\nrm -rf ~\nE\"O\"F")
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
    );
    cases.push(
        case(
            "deny",
            "Bash",
            "cat <<tru\"e\"\ntrue\ntouch pwned1\ntru\"e\"",
        )
        .mode("plan")
        .deny(&["Bash(touch:*)"]),
    );
    run_table_in(&fx, cases).await;
}

/// Other here-documents bash ends elsewhere than the parser does: a quoted delimiter after
/// a line ending in a backslash, an unquoted one joined across a backslash-newline, one
/// inside a `bash -c` payload, one inside backticks. Real bash runs the `touch` after its
/// end; the engine does not allow the command, in bypass mode either, and a deny rule on
/// `touch` denies it.
#[tokio::test]
async fn heredocs_the_parser_ends_elsewhere_are_not_allowed() {
    let fx = Fixture::new();
    let commands = [
        (
            "deny",
            "cat <<EOF\nfoo\nEO\\\nF\ntouch pwnedA\nEOF\n",
            "pwnedA",
        ),
        (
            "deny",
            "cat <<'EOF'\nx\\\nEOF\ntouch pwnedB\nEOF\n",
            "pwnedB",
        ),
        (
            "deny",
            "bash -c 'cat <<E\"O\"F\nEOF\ntouch pwnedC\nE\"O\"F'",
            "pwnedC",
        ),
        (
            "deny",
            "echo `cat <<EOF\nfoo`; touch pwnedD\nEOF\n",
            "pwnedD",
        ),
    ];
    let mut cases = Vec::new();
    for (with_deny, command, file) in commands {
        real_bash(command, &fx.out, &fx.home);
        assert!(
            fx.out.join(file).exists(),
            "bash did not run {file}: {command:?}"
        );
        cases.push(case("ask", "Bash", command));
        let hook = command.replace(file, &format!(".git/hooks/{file}"));
        cases.push(case("ask", "Bash", &hook).mode("bypassPermissions"));
        cases.push(
            case(with_deny, "Bash", command)
                .mode("bypassPermissions")
                .deny(&["Bash(touch:*)"]),
        );
    }
    run_table_in(&fx, cases).await;
}

/// Here-documents that bash and the parser end at the same line keep their meaning: they
/// are read in full, nothing is marked incomplete, and read-only ones are still allowed.
#[tokio::test]
async fn ordinary_heredocs_are_unchanged() {
    let ordinary = [
        "cat <<EOF\nhello\nEOF",
        "cat <<'EOF'\nhello $x\nEOF",
        "cat <<\"EOF\"\nhello\nEOF",
        "cat <<\\EOF\nhello\nEOF",
        "cat << EOF\nhello\nEOF\n",
        "cat <<-EOF\n\thello\n\tEOF",
        "cat <<EOF\n\n   indented\n\nEOF",
        "cat <<EOF | wc -l\nhello\nEOF",
        "cat <<A\na\nA\ncat <<B >/dev/null\nb\nB",
        "git commit -m \"$(cat <<'EOF'\nmsg\nEOF\n)\"",
        "echo \"$(cat <<EOF\nfoo\nEOF)\"",
        "cat <<EOF # note\nhello\nEOF",
        "cat <<E_O-F.1\nx\nE_O-F.1",
    ];
    for command in ordinary {
        let a = analyze(command);
        assert!(a.incomplete.is_empty(), "{command:?}: {:?}", a.incomplete);
        assert!(a.is_parsed(), "{command:?}: {:?}", a.complex);
    }
    run_table(vec![
        case("allow", "Bash", "cat <<EOF\nhello\nEOF"),
        case("allow", "Bash", "cat <<'EOF'\nhello\nEOF\n"),
        case("allow", "Bash", "cat <<-EOF\n\thello\n\tEOF"),
        case("allow", "Bash", "cat <<EOF | wc -l\nhello\nEOF"),
    ])
    .await;
}

/// Here-documents the parser ends *earlier* than bash (a body line `  EOF`, `EOF `, a
/// tab-indented `EOF` in a plain `<<'EOF'`, a nested `<<-EOF`'s end) or that are written with
/// CRLF line ends (bash's delimiter is then `EOF\r`, and a line `EOF\r` ends it): real bash
/// writes the whole body to the file and runs nothing else, and the engine does not mark
/// them incomplete: they are allowed in bypass mode (deny rules on other commands present),
/// and the CRLF ones in acceptEdits mode. (Where the parser ends one early, the body lines
/// it reads as commands are still commands to it: acceptEdits asks about those.)
#[tokio::test]
async fn heredocs_the_parser_ends_early_or_with_crlf_stay_allowed() {
    let fx = Fixture::new();
    let writes = [
        (
            "cat > install.sh <<'EOF'\nif [ -z \"$1\" ]; then\n\tcat <<-EOF\n\tusage\n\tEOF\nfi\nEOF\n",
            "install.sh",
            "if [ -z \"$1\" ]; then\n\tcat <<-EOF\n\tusage\n\tEOF\nfi\n",
        ),
        (
            "cat > a.txt <<'EOF'\n  EOF\nhello\nEOF\n",
            "a.txt",
            "  EOF\nhello\n",
        ),
        (
            "cat > b.txt <<'EOF'\nEOF \nhello\nEOF\n",
            "b.txt",
            "EOF \nhello\n",
        ),
        (
            "cat > c.txt <<'EOF'\n\tEOF\nhello\nEOF\n",
            "c.txt",
            "\tEOF\nhello\n",
        ),
        (
            "cat > d.txt <<EOF\nEOFX\nhello\nEOF\n",
            "d.txt",
            "EOFX\nhello\n",
        ),
        (
            "cat > e.txt <<'EOF'\r\nhello\r\nEOF\r\n",
            "e.txt",
            "hello\r\n",
        ),
        (
            "cat > f.txt <<EOF\r\nhello\r\nEOF\r\n",
            "f.txt",
            "hello\r\n",
        ),
    ];
    let mut cases = Vec::new();
    for (command, file, body) in writes {
        real_bash(command, &fx.proj, &fx.home);
        assert_eq!(
            std::fs::read_to_string(fx.proj.join(file)).unwrap(),
            body,
            "bash wrote another body for {command:?}"
        );
        let a = analyze(command);
        assert!(a.incomplete.is_empty(), "{command:?}: {:?}", a.incomplete);
        cases.push(case("allow", "Bash", command).mode("bypassPermissions"));
        cases.push(
            case("allow", "Bash", command)
                .mode("bypassPermissions")
                .deny(&["Bash(rm:*)", "Bash(touch:*)"]),
        );
        if command.contains('\r') {
            cases.push(case("allow", "Bash", command).mode("acceptEdits"));
        }
    }
    run_table_in(&fx, cases).await;
}

/// Where the parser ends a here-document earlier than bash, the body lines it then reads as
/// commands may hide the lines bash runs after its own end (a `<<FOO` in the body swallowing
/// them, a quote in the body opening a string across them). The commands are also read as
/// bash reads them: real bash runs the `touch`, and a deny rule on `touch` denies the
/// command in bypass mode; writing a protected file there asks in bypass mode.
#[tokio::test]
async fn heredocs_the_parser_ends_early_do_not_hide_what_bash_runs() {
    let fx = Fixture::new();
    let commands = [
        (
            "cat <<'EOF'\n  EOF\ncat <<FOO\nEOF\ntouch early1\nFOO\n",
            "early1",
        ),
        ("cat <<'EOF'\n  EOF\nit's\nEOF\ntouch early2\n'\n", "early2"),
        (
            "cat <<'EOF'\n\tEOF\necho \"\nEOF\ntouch early3\n\"\n",
            "early3",
        ),
        (
            "cat <<EOF\r\nEOF\ncat <<X\r\nEOF\r\ntouch early4\nX\n",
            "early4",
        ),
    ];
    let mut cases = Vec::new();
    for (command, file) in commands {
        real_bash(command, &fx.out, &fx.home);
        assert!(
            fx.out.join(file).exists(),
            "bash did not run {file}: {command:?}"
        );
        cases.push(
            case("deny", "Bash", command)
                .mode("bypassPermissions")
                .deny(&["Bash(touch:*)"]),
        );
        cases.push(case("ask", "Bash", command));
        let hook = command.replace(file, &format!(".git/hooks/{file}"));
        cases.push(case("ask", "Bash", &hook).mode("bypassPermissions"));
    }
    run_table_in(&fx, cases).await;
}

/// The reason a misread here-document gives names what differs: the delimiter's spelling
/// only when it is spelled with quotes or escapes, a joined line, the closing backtick.
#[test]
fn heredoc_misread_reasons_say_what_differs() {
    let reason = |command: &str| analyze(command).incomplete.join("; ");
    let spelled = reason("cat <<E\"O\"F\nEOF\ntouch x\nE\"O\"F\n");
    assert!(
        spelled.contains("`E\"O\"F`") && spelled.contains("`EOF`"),
        "{spelled}"
    );
    let joined = reason("cat <<EOF\nfoo\nEO\\\nF\ntouch x\nEOF\n");
    assert!(joined.contains("backslash"), "{joined}");
    assert!(!joined.contains("quote"), "{joined}");
    let backticks = reason("echo `cat <<EOF\nfoo`; touch x\nEOF\n");
    assert!(backticks.contains("backtick"), "{backticks}");
    assert!(!backticks.contains("quote"), "{backticks}");
}

/// Here-documents the parser cannot end where bash does for other reasons than the
/// delimiter's quotes (`0<<`, which the parser never ends; a delimiter followed by `)` or a
/// backtick, which the parser takes into the word; one inside backticks, which bash ends at
/// the closing backtick) are read again as bash reads them: real bash runs the `touch` after
/// them, and a deny rule on `touch` denies the command in bypass mode (the command still
/// asks without one).
#[tokio::test]
async fn heredocs_read_otherwise_are_denied_by_deny_rules() {
    let fx = Fixture::new();
    let commands = [
        ("cat 0<<EOF\nfoo\nEOF\ntouch other1\n", "other1"),
        ("cat 0<<E\"O\"F\nEOF\ntouch other2\nE\"O\"F\n", "other2"),
        (
            "echo \"$(cat <<EOF)\"\nfoo\nEOF\ntouch other3\nEOF\n",
            "other3",
        ),
        ("echo $(cat <<EOF)\nEOF\ntouch other4\n", "other4"),
        ("echo `cat <<EOF`\nfoo\nEOF\ntouch other5\n", "other5"),
        ("echo `cat <<EOF\nfoo`; touch other6\nEOF\n", "other6"),
        ("echo `cat <<'EOF'\nfoo\n`\ntouch other7\n", "other7"),
    ];
    let mut cases = Vec::new();
    for (command, file) in commands {
        real_bash(command, &fx.out, &fx.home);
        assert!(
            fx.out.join(file).exists(),
            "bash did not run {file}: {command:?}"
        );
        cases.push(
            case("deny", "Bash", command)
                .mode("bypassPermissions")
                .deny(&["Bash(touch:*)"]),
        );
        cases.push(case("ask", "Bash", command).mode("bypassPermissions"));
    }
    run_table_in(&fx, cases).await;
}

// --- 2. xargs supplying the command or the subcommand -----------------------------------------

/// With Bash deny rules, xargs running a wrapper with no command after it (`xargs env`,
/// `xargs nice`, `xargs timeout 5`, `xargs sudo`), or with its `-I` replacement where the
/// command or the subcommand goes, runs what its input names: asked about even in bypass
/// mode. Real xargs deletes the files. `xargs rm` is still denied, and a subcommand written
/// out is still matched.
#[tokio::test]
async fn xargs_supplying_a_denied_command_asks_in_bypass_mode() {
    let fx = Fixture::new();
    for (command, victim) in [
        ("echo rm | xargs -I% env % victim1", "victim1"),
        ("echo rm victim2 | xargs env", "victim2"),
        ("echo rm victim3 | xargs nice", "victim3"),
        ("echo rm victim4 | xargs timeout 5", "victim4"),
    ] {
        std::fs::write(fx.out.join(victim), "x").unwrap();
        real_bash(command, &fx.out, &fx.home);
        assert!(
            !fx.out.join(victim).exists(),
            "{command} did not delete {victim}"
        );
    }
    let rm = |expect, command: &str| {
        case(expect, "Bash", command)
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"])
    };
    let push = |expect, command: &str| {
        case(expect, "Bash", command)
            .mode("bypassPermissions")
            .deny(&["Bash(git push:*)"])
    };
    run_table_in(
        &fx,
        vec![
            rm("ask", "echo rm | xargs -I% env % victim1"),
            rm("ask", "echo rm victim2 | xargs env"),
            rm("ask", "echo rm victim | xargs nice"),
            rm("ask", "echo rm victim | xargs nice -n 5"),
            rm("ask", "echo rm victim | xargs timeout 5"),
            rm("ask", "echo rm victim | xargs sudo"),
            rm("ask", "echo rm victim | xargs sudo -u root"),
            rm("ask", "echo rm victim | xargs command"),
            rm("ask", "echo rm victim | xargs exec"),
            rm("ask", "echo rm victim | xargs nohup"),
            rm("ask", "echo rm victim | xargs xargs"),
            rm("ask", "echo rm | xargs -I{} sudo {} victim"),
            rm("ask", "echo rm | xargs -i nice {} victim"),
            rm("ask", "echo rm | xargs --replace=@ @ victim"),
            rm("ask", "echo rm | xargs -I{} xargs {} victim"),
            push("ask", "echo push | xargs git"),
            push("ask", "echo push | xargs -I{} git {}"),
            push("ask", "echo push | xargs git --no-pager"),
            push("ask", "echo push | xargs env git"),
            push("ask", "echo push | xargs -I{} git -C . {} origin"),
            // What was already decided stays so.
            rm("deny", "echo x | xargs rm"),
            rm("deny", "echo x | xargs env rm"),
            rm("deny", "echo x | xargs -I{} rm {}"),
            push("deny", "echo x | xargs git push"),
            push("deny", "echo x | xargs -I{} git push {}"),
            push("allow", "echo x | xargs git log"),
            push("allow", "echo x | xargs -I{} git log {}"),
            // Without Bash deny or ask rules, bypass mode allows them as before.
            case("allow", "Bash", "echo rm victim2 | xargs env").mode("bypassPermissions"),
            case("allow", "Bash", "echo push | xargs git").mode("bypassPermissions"),
        ],
    )
    .await;
}

/// Plain uses of xargs are unchanged by deny rules that do not name them: a program whose
/// arguments are files or patterns gets its input as before (allowed in bypass mode), a
/// subcommand written out is still matched by allow rules, and `xargs rm` is denied.
#[tokio::test]
async fn plain_xargs_uses_are_unchanged() {
    let deny = &["Bash(rm:*)", "Bash(git push:*)"];
    let bypass = |expect, command: &str| {
        case(expect, "Bash", command)
            .deny(deny)
            .mode("bypassPermissions")
    };
    run_table(vec![
        bypass("allow", "ls | xargs cat"),
        bypass("allow", "find . -name '*.rs' | xargs grep -l main"),
        bypass("allow", "ls | xargs wc -l"),
        bypass("allow", "ls | xargs -I{} cat {}"),
        bypass("allow", "ls | xargs -I{} touch {}.bak"),
        bypass("allow", "ls | xargs touch"),
        bypass("allow", "ls | xargs -n1 basename"),
        bypass("allow", "ls | xargs -0 -I % cp % /tmp/"),
        bypass("allow", "echo x | xargs git log"),
        bypass("deny", "ls | xargs rm"),
        case("deny", "Bash", "ls | xargs rm").deny(deny),
        case("allow", "Bash", "echo x | xargs git log")
            .allow(&["Bash(git log:*)"])
            .deny(deny),
    ])
    .await;
}

// --- 3. Relative-path allow rules after a `cd` -------------------------------------------------

/// An allow rule naming a program by a relative path (`Bash(./build.sh:*)`) matches it after
/// a `cd` as Claude Code's does (the session's directory carries over from call to call, so
/// a rule tied to the starting directory could not hold anyway): `cd src && ./build.sh` and
/// a `cd` to the project itself are allowed, and a deny rule still denies.
#[tokio::test]
async fn relative_path_allow_rules_match_after_cd_as_claude_code() {
    let fx = Fixture::new();
    std::fs::write(fx.proj.join("build.sh"), "#!/bin/sh\n").unwrap();
    std::fs::write(fx.proj.join("src/build.sh"), "#!/bin/sh\n").unwrap();
    run_table_in(
        &fx,
        vec![
            case("allow", "Bash", "./build.sh").allow(&["Bash(./build.sh:*)"]),
            case("allow", "Bash", "cd $P && ./build.sh").allow(&["Bash(./build.sh:*)"]),
            case("allow", "Bash", "cd src && ./build.sh --release").allow(&["Bash(./build.sh:*)"]),
            case("allow", "Bash", "cd src; ./build.sh x").allow(&["Bash(./build.sh *)"]),
            case("deny", "Bash", "cd src && ./build.sh")
                .mode("bypassPermissions")
                .deny(&["Bash(./build.sh:*)"]),
        ],
    )
    .await;
}
