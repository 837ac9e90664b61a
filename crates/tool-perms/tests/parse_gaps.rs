//! Commands that bash reads differently from the parse, or whose reads and runs hide in an
//! option: line continuations inside words, here-document bodies, every `find -exec`, git's
//! blob reads, `.rgignore`, wrapper prefixes in suggestions, `less` lesskey options, jq
//! imports. Each was allowed (or let a deny rule be dodged) before its fix.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Case, Fixture, behavior, case, run, run_table};
use tool_perms::bash::parse::analyze;
use tool_perms::prefix_suggestion;

/// Every case, in default, plan and bypass mode: a bad command asks in default mode, is
/// denied in plan mode (not read-only), and a deny rule still denies in bypass mode.
fn everywhere(expect: &'static str, cmd: &str, deny: &[&str]) -> Vec<Case> {
    let plan = if expect == "allow" { "allow" } else { "deny" };
    let mut cases = vec![
        case(expect, "Bash", cmd).deny(deny),
        case(plan, "Bash", cmd).deny(deny).mode("plan"),
    ];
    if expect == "deny" {
        cases.push(
            case("deny", "Bash", cmd)
                .deny(deny)
                .mode("bypassPermissions"),
        );
    }
    cases
}

/// 1. A backslash-newline inside a word: bash deletes it and joins the pieces, which
///    tree-sitter-bash reads as two words (the pair is whitespace in its grammar).
#[tokio::test]
async fn backslash_newline_inside_a_word_joins_it() {
    let rm = &["Bash(rm:*)"];
    let mut cases = Vec::new();
    for cmd in [
        "find . -\\\ndelete",
        "tr\\\nuncate -s 0 README.md",
        "sort -\\\no out.txt README.md",
        "ls -la\\\n\\\n;touch x",
        "echo a\\ \\\n$(touch x)",
        "l\\\ns",
        "echo \"a\\\nb\"",
        "cat \"$\\\nHOME/.ssh/id_rsa\"",
    ] {
        cases.extend(everywhere("ask", cmd, &[]));
    }
    for cmd in [
        // The parser saw a comment: bash runs the backticks.
        "echo a\\\n# `rm -rf x`",
        "echo a\\\n#\n`rm -rf x`",
        // `$\<newline>(` is `$(` to bash.
        "echo \"$\\\n(rm -rf x)\"",
        "echo $\\\n(rm -rf x)",
        "echo \"`r\\\nm -rf x`\"",
        "r\\\nm -rf x",
        "bash -c 'r\\\nm -rf x'",
    ] {
        cases.extend(everywhere("deny", cmd, rm));
    }
    // Continuation lines between words, and backslash-newlines bash keeps (in single quotes,
    // ANSI-C strings, comments and quoted here-documents), still work.
    for cmd in [
        "ls \\\n  -la",
        "ls -la \\\n src",
        "ls \\\n  -la \\\n  src",
        "git status &&\\\ngit diff",
        "git status && \\\n  git diff",
        "grep 'a\\\nb' README.md",
        "echo 'a\\\nb'",
        "echo $'a\\\nb'",
        "echo x # a\\\nls",
        "cat <<'EOF'\na\\\nb\nEOF",
    ] {
        cases.extend(everywhere("allow", cmd, rm));
    }
    cases.push(case("allow", "Bash", "cargo test \\\n  --all").allow(&["Bash(cargo test:*)"]));
    cases.push(case("ask", "Bash", "cargo test\\\n--all").allow(&["Bash(cargo test:*)"]));
    run_table(cases).await;
}

#[test]
fn backslash_newline_substitutions_are_seen() {
    for cmd in [
        "echo \"$\\\n(rm -rf x)\"",
        "echo a\\\n# `rm -rf x`",
        "cat <<EOF\n$\\\n(rm -rf x)\nEOF",
    ] {
        let a = analyze(cmd);
        assert!(!a.is_simple(), "{cmd}");
        assert!(
            a.commands.iter().any(|c| c.raw_text() == "rm -rf x"),
            "{cmd}: {:?}",
            a.commands
        );
    }
}

/// 2. An unquoted here-document's body is expanded: tree-sitter does not turn backticks (or
///    `$\<newline>(`, or a `$(` after leading blanks) there into substitutions.
#[tokio::test]
async fn unquoted_heredoc_bodies_run_their_substitutions() {
    let rm = &["Bash(rm:*)"];
    let mut cases = Vec::new();
    for cmd in [
        "cat <<EOF\n`rm -rf x`\nEOF",
        "cat <<-EOF\n\t`rm -rf x`\n\tEOF",
        "grep x <<EOF\n`rm -rf x`\nEOF",
        "cat <<EOF\n\t$(rm -rf x)\nEOF",
        "cat <<-EOF\n\t$(rm -rf x)\n\tEOF",
        "cat <<EOF\n$\\\n(rm -rf x)\nEOF",
        "cat <<EOF\nsome text `rm -rf x` more\nEOF",
        "cat <<EOF && ls\na\n  `rm -rf x`\nEOF",
        "cat <<\"E\"OF\n`id`\nEOF\ncat <<EOF\n`rm -rf x`\nEOF",
        "cat <<EOF\n\\\\`rm -rf x`\nEOF",
        "echo \"$(cat <<EOF\n`rm -rf x`\nEOF\n)\"",
        "cat <<EOF\n\t$(case x in x) rm -rf y;; esac)\nEOF",
        // Escaped backticks inside backticks run too (bash unescapes the body).
        "cat <<EOF\n\t`echo \\`rm -rf x\\``\nEOF",
        "echo `echo \\`rm -rf x\\``",
    ] {
        cases.extend(everywhere("deny", cmd, rm));
        cases.push(case("ask", "Bash", cmd));
    }
    // A here-document with no command.
    for cmd in [
        "<<EOF\n`rm -rf x`\nEOF",
        "<<EOF\n  `rm -rf x`\nEOF",
        "{ <<EOF\n  `rm -rf x`\nEOF\n}",
        "ls; <<EOF\n  `rm -rf x`\nEOF",
    ] {
        cases.extend(everywhere("deny", cmd, rm));
        cases.push(case("ask", "Bash", cmd));
    }
    // Escaped, or in a quoted here-document: literal text.
    for cmd in [
        "cat <<'EOF'\n`rm -rf x` $(rm -rf y)\nEOF",
        "cat <<\"EOF\"\n`rm -rf x`\nEOF",
        "cat <<\\EOF\n`rm -rf x`\nEOF",
        "cat <<EOF\nprice \\$5, a \\` quote\nEOF",
        "cat <<EOF\nhello $HOME\nEOF",
        "cat <<EOF\nit's\nEOF",
    ] {
        cases.extend(everywhere("allow", cmd, rm));
    }
    run_table(cases).await;
}

/// Words after a here-document's delimiter are the command's arguments (tree-sitter puts
/// them in the redirection): `cat <<EOF .env` reads `.env`.
#[tokio::test]
async fn words_after_a_heredoc_delimiter_are_arguments() {
    let env = &["Read(.env)"];
    let mut cases = Vec::new();
    for cmd in [
        "cat <<EOF .env\nbody\nEOF",
        "cat <<EOF > /dev/null .env\nbody\nEOF",
        "cat <<EOF 2>/dev/null .env\nbody\nEOF",
    ] {
        cases.extend(everywhere("deny", cmd, env));
    }
    cases.extend(everywhere("allow", "cat <<EOF src/main.rs\nbody\nEOF", env));
    cases.extend(everywhere("ask", "cat <<EOF $O/secret.txt\nbody\nEOF", &[]));
    run_table(cases).await;
}

/// 3. `find` runs every `-exec`/`-execdir`/`-ok`/`-okdir`, not only the first.
#[tokio::test]
async fn find_runs_every_exec() {
    let allow = &["Bash(find:*)", "Bash(echo:*)"];
    let rm = &["Bash(rm:*)"];
    let mut cases = Vec::new();
    for cmd in [
        "find . -exec echo {} + -exec rm -rf x {} +",
        "find . -name -exec -o -exec rm -rf {} ;",
        "find . -exec echo {} \\; -execdir rm {} \\;",
        "find . -ok echo {} \\; -okdir rm {} \\;",
        "find . -exec echo + -exec rm -rf x \\;",
    ] {
        cases.push(case("deny", "Bash", cmd).allow(allow).deny(rm));
        cases.push(
            case("deny", "Bash", cmd)
                .allow(allow)
                .deny(rm)
                .mode("bypassPermissions"),
        );
    }
    cases.push(case("allow", "Bash", "find . -exec echo {} + -exec echo {} \\;").allow(allow));
    run_table(cases).await;
    let a = analyze("find . -exec echo {} + -exec rm -rf x {} + -ok touch y \\;");
    let names: Vec<String> = a.commands.iter().map(|c| c.raw_text()).collect();
    assert!(names.contains(&"rm -rf x {}".to_owned()), "{names:?}");
    assert!(names.contains(&"touch y".to_owned()), "{names:?}");
}

/// 4. Read-only git subcommands print files past Read deny rules.
#[tokio::test]
async fn git_reads_are_checked_against_read_deny_rules() {
    let env = &["Read(.env)"];
    let mut cases = Vec::new();
    for cmd in [
        "git blame .env",
        "git log -p -- .env",
        "git log -p .env",
        "git show HEAD -- .env",
        "git show HEAD:./.env",
        "git grep SECRET -- .env",
    ] {
        cases.push(case("deny", "Bash", cmd).deny(env));
        cases.push(
            case("deny", "Bash", cmd)
                .deny(env)
                .mode("bypassPermissions"),
        );
        cases.push(case("deny", "Bash", cmd).deny(env).allow(&["Bash(git:*)"]));
    }
    for cmd in [
        "git show HEAD:.env",
        "git show :.env",
        "git cat-file -p HEAD:.env",
        "git cat-file blob abc123",
        "git grep SECRET",
        "git grep SECRET HEAD",
        "git log -p",
        "git log --patch",
        "git log -U3",
        "git whatchanged -p",
        "git show HEAD",
        "git show",
        "git log -p -- src",
        "git log -p -- '*.env'",
        "git diff HEAD:.env HEAD:README.md",
        "git --no-pager show HEAD:.env",
        "git -c core.pager=cat show HEAD:.env",
        "git -c alias.s=show s HEAD:.env",
        "git -C src show HEAD:.env",
        "git -C src log -p -- main.rs",
        "git log -L1,5:.env",
        "git stash show -p",
    ] {
        // A safety check: asked in every mode, even with an allow rule.
        cases.push(case("ask", "Bash", cmd).deny(env));
        cases.push(case("ask", "Bash", cmd).deny(env).allow(&["Bash(git:*)"]));
        cases.push(case("ask", "Bash", cmd).deny(env).mode("bypassPermissions"));
    }
    // Without Read deny rules, or reading named files that are not denied: as before.
    for cmd in [
        "git show HEAD:.env",
        "git grep SECRET",
        "git log -p",
        "git show HEAD",
        "git cat-file -p HEAD:README.md",
    ] {
        cases.push(case("allow", "Bash", cmd));
    }
    for cmd in [
        "git status",
        "git log --oneline -5",
        "git log --stat",
        "git show --stat HEAD",
        "git show --name-only HEAD",
        "git blame src/main.rs",
        "git log -p -- src/main.rs",
        "git log -p src/main.rs",
        "git diff HEAD~1 HEAD -- src",
        "git diff",
    ] {
        cases.push(case("allow", "Bash", cmd).deny(env));
    }
    cases.push(
        case("allow", "Bash", "git -C src status")
            .deny(env)
            .allow(&["Bash(git:*)"]),
    );
    // Its paths are relative to another directory.
    cases.push(
        case("ask", "Bash", "git -C src blame main.rs")
            .deny(env)
            .allow(&["Bash(git:*)"]),
    );
    run_table(cases).await;
}

/// 5. ripgrep reads `.rgignore`: `!.env` there makes it search a denied hidden file.
#[tokio::test]
async fn rgignore_is_honoured_when_rg_walks_the_tree() {
    let fx = Fixture::new();
    let env = &["Read(.env)"];
    let before = case("allow", "Bash", "rg SECRET").deny(env);
    assert_eq!(behavior(&run(&fx, &before).await), "allow");
    std::fs::write(fx.proj.join(".rgignore"), "!.env\n").unwrap();
    for c in [
        case("deny", "Bash", "rg SECRET").deny(env),
        case("deny", "Bash", "rg SECRET .").deny(env),
        case("deny", "Bash", "rg SECRET")
            .deny(env)
            .mode("bypassPermissions"),
    ] {
        let got = run(&fx, &c).await;
        assert_eq!(behavior(&got), c.expect, "{c:?}: {got:?}");
    }
    std::fs::remove_file(fx.proj.join(".rgignore")).unwrap();
    // An ignore file given on the command line can do the same.
    std::fs::write(fx.proj.join("docs/ig"), "!.env\n").unwrap();
    for cmd in [
        "rg --ignore-file=docs/ig SECRET",
        "rg --ignore-file docs/ig SECRET",
    ] {
        let c = case("deny", "Bash", cmd).deny(env);
        let got = run(&fx, &c).await;
        assert_eq!(behavior(&got), c.expect, "{c:?}: {got:?}");
    }
    // Patterns from a file: the working directory is still searched.
    for cmd in [
        "rg --hidden -f docs/a.md",
        "rg -uu --file docs/a.md",
        "grep -r -f docs/a.md",
    ] {
        let c = case("deny", "Bash", cmd).deny(env);
        let got = run(&fx, &c).await;
        assert_eq!(behavior(&got), c.expect, "{c:?}: {got:?}");
    }
    std::fs::write(fx.proj.join("src/.rgignore"), "!.env\n").unwrap();
    let c = case("deny", "Bash", "rg SECRET src").deny(env);
    let got = run(&fx, &c).await;
    assert_eq!(behavior(&got), c.expect, "{c:?}: {got:?}");
}

/// 6. "Don't ask again" prefixes see through wrappers: a wrapped `rm` gets an exact rule.
#[test]
fn prefix_suggestions_see_through_wrappers() {
    let suggest = |cmd: &str| prefix_suggestion(&analyze(cmd).commands[0]);
    for cmd in [
        "nice rm -rf build",
        "nice -n 5 rm -rf build",
        "nohup rm -rf build",
        "noglob rm -rf build",
        "setsid rm -rf build",
        "stdbuf -oL rm -rf build",
        "ionice -c3 rm -rf build",
        "chrt -o 0 rm -rf build",
        "taskset 1 rm -rf build",
        "timeout 5 rm -rf build",
        "time rm -rf build",
        "command rm -rf build",
        "builtin eval x",
        "exec rm -rf build",
        "env rm -rf build",
        "sudo rm -rf build",
        "nice timeout 5 python3 x.py",
        "setsid git push",
        "chronic curl x",
    ] {
        assert_eq!(suggest(cmd), cmd, "{cmd}");
    }
    assert_eq!(suggest("nice git push origin"), "git push:*");
    assert_eq!(suggest("timeout 60 npm test"), "npm test:*");
    assert_eq!(suggest("git push origin"), "git push:*");
    assert_eq!(suggest("rm -rf build"), "rm -rf build");
}

/// 7. less reads a lesskey file or its content (which can run commands) in any spelling.
#[tokio::test]
async fn less_lesskey_options_in_any_spelling() {
    let mut cases = Vec::new();
    for cmd in [
        "less --lesskey-content='x' README.md",
        "less --lesskey-content 'x' README.md",
        "less --lesskey-con='x' README.md",
        "less --lesskey-c=x README.md",
        "less --lesskey=x README.md",
        "less --lesskey-f=x README.md",
        "less --lesskey-s x README.md",
    ] {
        cases.extend(everywhere("ask", cmd, &[]));
    }
    cases.extend(everywhere("allow", "less -N README.md", &[]));
    run_table(cases).await;
}

/// 8. jq programs can read modules (any file, through a path) with `import`/`include`.
#[tokio::test]
async fn jq_imports_are_not_read_only() {
    let mut cases = Vec::new();
    for cmd in [
        "jq -n 'import \"../outside/creds\" as $c; $c'",
        "jq -n 'include \"../outside/creds\"; .'",
        "jq -n '# a comment \"\ninclude \"x\"; .'",
        "jq -n 'import \"x\" as y; y::f'",
        "jq -n '\"x\" | modulemeta'",
        "jq -n -L src '.'",
        "jq -n --library-path src '.'",
        "jq -f prog.jq README.md",
        "jq --from-file prog.jq README.md",
        "echo x | xargs jq",
    ] {
        cases.extend(everywhere("ask", cmd, &[]));
    }
    for cmd in [
        "jq . package.json",
        "jq '.include' package.json",
        "jq '.[] | select(.type == \"import\")' package.json",
        "jq -n '$__loc__'",
    ] {
        cases.extend(everywhere("allow", cmd, &[]));
    }
    run_table(cases).await;
}
