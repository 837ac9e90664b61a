//! Review 27 findings on the bash analysis: a long command's analysis is bounded (past a
//! thousand simple commands it stops and is truncated), and a here-document followed on its
//! line by `;`, `&` or `)` (which the parser's grammar does not take there) or by `|`, `&&`
//! or `||` is read as bash runs it.

use crate::common::{Case, Fixture, case, real_bash, run_table_in};
use tool_perms::bash::parse::{MAX_LISTED_COMMANDS, analyze};

// --- 1. A long command's analysis is bounded ----------------------------------------------

/// A command over 10,000 characters (never auto-allowed) of up to 20,000 simple commands (as
/// many as fit in the 100,000 characters the analysis takes) lists at most
/// [`MAX_LISTED_COMMANDS`] of them and is truncated, whatever the command (`ls`, `cat x`,
/// `git status`, `cd src`, `true`); a shorter one is listed in full and not truncated, more
/// than that many commands too. The work after the parse (each command's rules and paths)
/// is so bounded by the count, not by the length of the command.
#[test]
fn a_long_command_lists_a_bounded_number_of_commands() {
    for command in ["ls", "cat x", "git status", "cd src", "true"] {
        let count = (99_000 / (command.len() + 1)).min(20_000);
        let long = vec![command; count].join(";");
        let a = analyze(&long);
        assert!(a.truncated, "{command}: not truncated");
        assert!(
            a.commands.len() <= MAX_LISTED_COMMANDS,
            "{command}: {} commands listed",
            a.commands.len()
        );
        assert!(
            a.commands.len() >= MAX_LISTED_COMMANDS / 2,
            "{command}: only {} commands listed",
            a.commands.len()
        );
        assert!(
            a.complex.iter().any(|why| why.contains("simple commands")),
            "{command}: {:?}",
            a.complex
        );
        assert_eq!(a.commands[0].raw_text(), command);

        let count = 10_000 / (command.len() + 1);
        let short = vec![command; count].join(";");
        let a = analyze(&short);
        assert!(!a.truncated, "{command}: {:?}", a.complex);
        assert_eq!(a.commands.len(), count, "{command}");
    }
    // Across every way commands are found: a pipeline, a `bash -c` payload, a second
    // reading (a backslash-newline that joins a word), substitutions.
    for long in [
        vec!["ls"; 20_000].join(" | "),
        format!("bash -c '{}'", vec!["ls"; 20_000].join(";")),
        format!("e\\\nc\\\nho; {}", vec!["ls"; 20_000].join(";")),
        vec!["echo $(ls)"; 8_000].join(";"),
        format!("{}; ls > out", vec!["ls"; 20_000].join(";")),
    ] {
        let a = analyze(&long);
        assert!(a.truncated, "{}", &long[..40]);
        assert!(
            a.commands.len() <= MAX_LISTED_COMMANDS,
            "{}: {} commands listed",
            &long[..40],
            a.commands.len()
        );
        assert!(a.redirects.len() <= MAX_LISTED_COMMANDS, "{}", &long[..40]);
    }
    // Redirections are bounded the same way.
    let a = analyze(&vec![">out"; 20_000].join(";"));
    assert!(a.truncated);
    assert!(a.redirects.len() <= MAX_LISTED_COMMANDS);
}

/// A command past the bound is never allowed: not by allow rules for every command in it,
/// not in bypass mode, not in plan mode; dontAsk denies it; a deny rule for a command among
/// those listed still denies it, and one for a command past the bound is not dodged into
/// an allow.
#[tokio::test]
async fn a_command_past_the_bound_is_never_allowed() {
    let fx = Fixture::new();
    let many = vec!["ls"; 20_000].join(";");
    let rm_first = format!("rm -rf x;{many}");
    let rm_last = format!("{many};rm -rf x");
    let cases: Vec<Case> = vec![
        case("ask", "Bash", &many).allow(&["Bash(ls:*)"]),
        case("ask", "Bash", &many).mode("bypassPermissions"),
        case("deny", "Bash", &many).mode("plan"),
        case("deny", "Bash", &many).mode("dontAsk"),
        case("ask", "Bash", &many).mode("acceptEdits"),
        case("deny", "Bash", &rm_first).deny(&["Bash(rm:*)"]),
        case("deny", "Bash", &rm_first)
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
        case("ask", "Bash", &rm_last)
            .allow(&["Bash(ls:*)", "Bash(rm:*)"])
            .deny(&["Bash(rm:*)"]),
        case("ask", "Bash", &rm_last)
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
    ];
    run_table_in(&fx, cases).await;
}

// --- 2. A here-document followed by more on its line ----------------------------------------

/// Commands written after a here-document's delimiter on its line, after `;`, `&` or the `)`
/// of a subshell (which the parser reads as the here-document command's arguments, `cat <<EOF;
/// rm x` as `cat rm x`), or after `|`, `&&`, `||` followed by more: real bash runs the `touch`
/// (the file appears), and a deny rule on `touch` denies the command, in default and bypass
/// mode; without rules it is not allowed, nor in plan mode.
#[tokio::test]
async fn commands_after_a_heredoc_on_its_line_are_seen() {
    let fx = Fixture::new();
    let shapes: &[&str] = &[
        "cat <<EOF; touch @\nbody\nEOF\n",
        "cat <<EOF;touch @\nbody\nEOF\n",
        "cat <<EOF ;touch @\nbody\nEOF\n",
        "cat <<EOF & touch @\nbody\nEOF\nwait\n",
        "cat <<EOF&touch @\nbody\nEOF\nwait\n",
        "cat <<EOF | cat; touch @\nbody\nEOF\n",
        "cat <<EOF || true; touch @\nbody\nEOF\n",
        "cat <<EOF && true; touch @\nbody\nEOF\n",
        "cat <<EOF > /dev/null; touch @\nbody\nEOF\n",
        "cat <<EOF x; touch @\nbody\nEOF\n",
        "(cat <<EOF); touch @\nbody\nEOF\n",
        "(cat <<EOF) ; touch @\nbody\nEOF\n",
        "cat <<-EOF; touch @\n\tbody\n\tEOF\n",
        "cat <<'EOF'; touch @\nbody\nEOF\n",
        "cat <<\"EOF\"&touch @\nbody\nEOF\nwait\n",
        "cat <<E\"O\"F; touch @\nbody\nEOF\n",
        "cat <<EOF; touch @",
        "cat <<EOF; touch @\nbody\n",
        "true && cat <<EOF; touch @ > /dev/null\nbody\nEOF\n",
        "! cat <<EOF; touch @\nbody\nEOF\n",
        "cat <<A && cat <<B; touch @\na\nA\nb\nB\n",
        "cat <<A <<B; touch @\na\nA\nb\nB\n",
        "cat <<EOF; echo a; touch @; echo b\nbody\nEOF\n",
        "cat <<EOF; if true; then touch @; fi\nbody\nEOF\n",
        "cat <<EOF; cat <<X; touch @\nbody\nEOF\nx\nX\n",
        "{ cat <<EOF; touch @; }\nbody\nEOF\n",
        "x=$(cat <<EOF; touch @\nbody\nEOF\n)\n",
        "x=$(cat <<EOF; touch @\nbody\nEOF)\n",
        "if true; then cat <<EOF; touch @\nbody\nEOF\nfi\n",
    ];
    let mut cases: Vec<Case> = Vec::new();
    for (i, shape) in shapes.iter().enumerate() {
        let file = format!("ran{i}");
        let command = shape.replace('@', &file);
        real_bash(&command, &fx.out, &fx.home);
        assert!(
            fx.out.join(&file).exists(),
            "bash did not run the touch in {command:?}"
        );
        for mode in ["default", "bypassPermissions"] {
            cases.push(
                case("deny", "Bash", &command)
                    .mode(mode)
                    .deny(&["Bash(touch:*)"]),
            );
        }
        cases.push(case("ask", "Bash", &command));
        cases.push(case("deny", "Bash", &command).mode("plan"));
    }
    run_table_in(&fx, cases).await;
}

/// A here-document's line that goes on with `| CMD`, `|| CMD` or `&& CMD` (which the parser
/// puts inside the here-document) runs as bash runs it: `cd DIR <<EOF | cat .env` runs the
/// `cd` in a pipeline stage, so `cat` reads `./.env`; `cd nope <<EOF || cat .env` runs `cat`
/// where the failed `cd` left the shell; `cat <<EOF | true && cd src/sub` runs the `cd` in the
/// shell itself, after the pipeline. Real bash reads the `.env` named (its content is copied
/// out), and a Read deny rule on that file denies the command, in acceptEdits mode too; the
/// same lines naming a file that is there are still allowed as read-only.
#[tokio::test]
async fn a_heredoc_line_going_on_with_a_pipe_or_a_list_runs_where_bash_runs_it() {
    let fx = Fixture::new();
    let out = fx.out.display().to_string();
    let mut cases: Vec<Case> = Vec::new();
    for (i, (shape, read, content)) in [
        ("cd src <<EOF | cat .env\nEOF\n", ".env", "SECRET=1"),
        ("cd nope <<EOF || cat .env\nEOF\n", ".env", "SECRET=1"),
        ("cd src <<EOF | cat\nEOF\ncat .env\n", ".env", "SECRET=1"),
        ("cd nope <<EOF || true\nEOF\ncat .env\n", ".env", "SECRET=1"),
        (
            "cd nope <<EOF && true || cat .env\nEOF\n",
            ".env",
            "SECRET=1",
        ),
        (
            "cat <<EOF | true && cd src/sub\nEOF\ncat .env\n",
            "src/sub/.env",
            "X=1",
        ),
        (
            "cat <<EOF | true | true && cd src/sub || true\nEOF\ncat .env\n",
            "src/sub/.env",
            "X=1",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let seen = format!("{out}/seen{i}");
        let probe = shape.replace("cat .env", &format!("cat .env > {seen}"));
        real_bash(&probe, &fx.proj, &fx.home);
        assert_eq!(
            std::fs::read_to_string(&seen).unwrap_or_default(),
            content,
            "bash did not read {read} in {probe:?}"
        );
        let rule = format!("Read(//$P/{read})");
        for mode in ["default", "acceptEdits"] {
            cases.push(case("deny", "Bash", shape).mode(mode).deny(&[&rule]));
        }
    }
    for ok in [
        "cat <<EOF | grep x\nx\nEOF\n",
        "cd src <<EOF && cat main.rs\nEOF\n",
        "cat <<EOF | grep x | wc -l\nx\nEOF\n",
        "cat <<EOF || echo failed\nx\nEOF\n",
        "cat <<EOF | grep x && cat README.md\nx\nEOF\n",
    ] {
        cases.push(case("allow", "Bash", ok));
    }
    run_table_in(&fx, cases).await;
}

/// The here-documents of the review read as bash reads them: `cat <<EOF; rm x` lists `cat`
/// and `rm x` (never `cat rm x`), for `;`, `&` and `)` after the delimiter, quoted or not.
#[test]
fn the_command_after_a_heredoc_is_its_own() {
    for command in [
        "cat <<EOF; rm x\nbody\nEOF",
        "cat <<EOF & rm x\nbody\nEOF",
        "cat <<'EOF' ; rm x\nbody\nEOF\n",
        "cat <<-EOF;rm x\n\tbody\n\tEOF\n",
        "(cat <<EOF); rm x\nbody\nEOF\n",
    ] {
        let a = analyze(command);
        let names: Vec<String> = a.commands.iter().map(|c| c.raw_text()).collect();
        assert!(names.iter().any(|n| n == "rm x"), "{command:?}: {names:?}");
        assert!(names.iter().any(|n| n == "cat"), "{command:?}: {names:?}");
        assert!(!a.is_simple(), "{command:?}");
    }
}

/// A `{` after a here-document's delimiter is an argument unless it starts a command (after
/// `|`, `&&`, `||`, `(`): `cat <<EOF { ; touch F` passes `{` to `cat` and ends the command
/// at `;`, so `touch` runs on its own. Real bash creates the file; a deny rule on `touch`
/// denies each line (in bypass mode too) where the scanner used to read a group that
/// never closed. A real group after a pipe still holds its `;` (`cat <<EOF | { cat; touch
/// F; }`).
#[tokio::test]
async fn a_brace_argument_after_a_heredoc_opens_no_group() {
    let fx = Fixture::new();
    let shapes: &[&str] = &[
        "cat <<EOF { ; touch @\nbody\nEOF\n",
        "cat <<EOF x { ; touch @\nbody\nEOF\n",
        "cat <<EOF { } ; touch @\nbody\nEOF\n",
        "cat <<EOF {\t; touch @\nbody\nEOF\n",
        "cat <<EOF | { cat; touch @; }\nbody\nEOF\n",
        "cat <<EOF && { true; }; touch @\nbody\nEOF\n",
    ];
    let mut cases: Vec<Case> = Vec::new();
    for (i, shape) in shapes.iter().enumerate() {
        let file = format!("brace{i}");
        let command = shape.replace('@', &file);
        real_bash(&command, &fx.out, &fx.home);
        assert!(
            fx.out.join(&file).exists(),
            "bash did not run the touch in {command:?}"
        );
        for mode in ["default", "bypassPermissions"] {
            cases.push(
                case("deny", "Bash", &command)
                    .mode(mode)
                    .deny(&["Bash(touch:*)"]),
            );
        }
    }
    run_table_in(&fx, cases).await;
}

// --- 3. A backslash-escaped blank that starts a word ---------------------------------------

/// Found by the composition property test: tree-sitter-bash leaves out a backslash-escaped
/// blank that starts a word, reading `\  npm test` as `npm test` and `\ <newline>npm test` as
/// `npm test` alone, where bash runs the command ` ` (with `npm` and `test` as arguments; or
/// alone, then `npm test`). Such a command is not proven simple, so an allow rule for what
/// the parser saw does not allow it; an escaped blank inside or at the end of a word
/// (`My\ Documents`, `a\  b`) is read as bash reads it and changes nothing.
#[tokio::test]
async fn an_escaped_blank_that_starts_a_word_is_not_read_away() {
    let fx = Fixture::new();
    let npm = |expect, command: &str| case(expect, "Bash", command).allow(&["Bash(npm test:*)"]);
    let cases: Vec<Case> = vec![
        npm("ask", "\\  npm test"),
        npm("ask", "\\ \nnpm test"),
        npm("ask", "\\ \n \n npm test"),
        npm("ask", "\\\tnpm test"),
        npm("ask", "npm test \\ x"),
        npm("allow", "npm test"),
        npm("allow", "npm test My\\ Documents"),
        npm("allow", "npm test a\\  b"),
        npm("allow", "npm test 'a \\ b'"),
        npm("allow", "npm test \"a \\ b\""),
    ];
    run_table_in(&fx, cases).await;
}
