//! Commands that bash reads differently from the parse, or whose reads and runs hide in an
//! option: line continuations inside words, here-document bodies, every `find -exec`, git's
//! blob reads, `.rgignore`, wrapper prefixes in suggestions, `less` lesskey options, jq
//! imports, options that run a local command (ssh `-o ProxyCommand`, rsync `-e`, vim `-c`,
//! zip `-TT`). Each was allowed (or let a deny rule be dodged) before its fix.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Case, Fixture, behavior, case, real_bash, run, run_table, run_table_in};
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

/// A read-only command that reads outside the working directories: asked about, also in
/// plan mode (a read changes nothing).
fn reads_outside(cmd: &str) -> Vec<Case> {
    vec![
        case("ask", "Bash", cmd),
        case("ask", "Bash", cmd).mode("plan"),
    ]
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
    cases.extend(reads_outside("cat <<EOF $O/secret.txt\nbody\nEOF"));
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
        "git diff --stat HEAD~1 HEAD",
        "git diff",
    ] {
        cases.push(case("allow", "Bash", cmd).deny(env));
    }
    // Revisions compared over a directory may print a file under it the index no longer
    // lists.
    cases.push(case("ask", "Bash", "git diff HEAD~1 HEAD -- src").deny(env));
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
    // Subcommands and programs that run whatever they are given get the exact command.
    for cmd in [
        "uv run pytest",
        "npm exec vitest",
        "deno eval 'console.log(1)'",
        "docker run --rm alpine ls",
        "poetry run pytest",
        "toybox sh -c ls",
        "npx prettier --check .",
    ] {
        assert_eq!(suggest(cmd), cmd, "{cmd}");
    }
    assert_eq!(suggest("npm run test"), "npm run:*");
    assert_eq!(suggest("docker ps -a"), "docker ps:*");
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

/// 4a. Only a Read deny rule that can match a file of the repository (or of the directories
///     the command runs in) makes git's unnamed reads ask: `Read(~/.ssh/**)` names nothing
///     git can print.
#[tokio::test]
async fn git_reads_ask_only_for_read_deny_rules_reaching_the_repository() {
    let git = &["Bash(git:*)"];
    let mut cases = Vec::new();
    let unnamed = [
        "git show HEAD",
        "git show",
        "git log -p -3",
        "git grep foo",
        "git show HEAD:.env",
        "git cat-file -p HEAD:README.md",
    ];
    for deny in [
        "Read(~/.ssh/**)",
        "Read(~/.bashrc)",
        "Read(/$O/**)",
        "Read(/$O/secret.txt)",
        "Read(//etc/shadow)",
    ] {
        for cmd in unnamed {
            // `git cat-file` is read-only too; each is allowed in default mode.
            cases.push(case("allow", "Bash", cmd).deny(&[deny]));
            cases.push(case("allow", "Bash", cmd).deny(&[deny]).allow(git));
            cases.push(
                case("allow", "Bash", cmd)
                    .deny(&[deny])
                    .mode("bypassPermissions"),
            );
        }
    }
    // Rules that can match a file of the repository, present or only in its history.
    for deny in [
        "Read(./.env)",
        "Read(.env)",
        "Read(**/.env)",
        "Read(src/**)",
        "Read(secrets/gone/**)",
        "Read(/secrets/**)",
        "Read(/$P/.env)",
        "Read(/$P/secrets/**)",
        "Read(../proj/secrets/**)",
        "Read(~/../proj/.env)",
        "Read(//**/id_rsa)",
        "Read(*.pem)",
    ] {
        for cmd in unnamed {
            cases.push(case("ask", "Bash", cmd).deny(&[deny]).allow(git));
            cases.push(
                case("ask", "Bash", cmd)
                    .deny(&[deny])
                    .mode("bypassPermissions"),
            );
        }
    }
    // In another directory, or in a repository given elsewhere, the rule may match.
    let ssh = &["Read(~/.ssh/**)"];
    for cmd in [
        "cd $H && git show HEAD",
        "cd \"$X\" && git show HEAD",
        "GIT_DIR=$H/.git git show HEAD",
        "GIT_WORK_TREE=$H git grep foo",
        "git --git-dir=$H/.git show HEAD",
        "git --work-tree=$H grep foo",
        "git -C $H grep foo",
    ] {
        cases.push(case("ask", "Bash", cmd).deny(ssh).allow(git));
        cases.push(case("ask", "Bash", cmd).deny(ssh).mode("bypassPermissions"));
    }
    for cmd in [
        "export GIT_WORK_TREE=$H; git grep foo",
        "export GIT_DIR=$H/.git; git show HEAD",
        "declare -x GIT_WORK_TREE=$H; git grep foo",
    ] {
        cases.push(case("ask", "Bash", cmd).deny(ssh).allow(&[
            "Bash(git:*)",
            "Bash(export:*)",
            "Bash(declare:*)",
        ]));
        cases.push(case("ask", "Bash", cmd).deny(ssh).mode("bypassPermissions"));
    }
    run_table(cases).await;
}

/// The repository is found where git finds it: above the working directory, its files
/// outside the working directory may be printed; the project inside the home directory
/// does not bring `~/.ssh` into it.
#[tokio::test]
async fn git_reads_find_the_repository_as_git_does() {
    let git = &["Bash(git:*)"];
    // The session runs in `proj/src`, inside the repository at `proj`.
    let mut fx = Fixture::new();
    let repo = fx.proj.clone();
    fx.proj = repo.join("src");
    let env = format!("Read(/{}/.env)", repo.display());
    for (expect, cmd, deny) in [
        ("ask", "git show HEAD", env.as_str()),
        ("ask", "git grep foo", env.as_str()),
        ("allow", "git show HEAD", "Read(~/.ssh/**)"),
    ] {
        let c = case(expect, "Bash", cmd).deny(&[deny]).allow(git);
        let got = run(&fx, &c).await;
        assert_eq!(behavior(&got), c.expect, "{c:?}: {got:?}");
    }
    // A `.git` that is no git directory (an empty `.git/` in `src`) does not stop git's
    // walk: it prints the repository above.
    let mut fx = Fixture::new();
    let repo = fx.proj.clone();
    for d in ["objects", "refs"] {
        std::fs::create_dir_all(repo.join(".git").join(d)).unwrap();
    }
    std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(repo.join("src/.git")).unwrap();
    fx.proj = repo.join("src");
    let env = format!("Read(/{}/.env)", repo.display());
    for mode in ["default", "bypassPermissions"] {
        let c = case("ask", "Bash", "git show HEAD")
            .deny(&[env.as_str()])
            .allow(git)
            .mode(mode);
        let got = run(&fx, &c).await;
        assert_eq!(behavior(&got), c.expect, "{c:?}: {got:?}");
    }
    // A work tree configured elsewhere, or a directory inside a git directory: the
    // repository's files may be anywhere.
    let fx = Fixture::new();
    std::fs::write(fx.proj.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::create_dir_all(fx.proj.join(".git/objects")).unwrap();
    std::fs::create_dir_all(fx.proj.join(".git/refs")).unwrap();
    for (cmd, config) in [
        ("git grep foo", "[core]\n\tworktree = $H\n"),
        ("git show HEAD", "[core]\n\tWorkTree = $H\n"),
        ("cd .git && git show HEAD", "[core]\n"),
        ("cd .git/objects && git grep foo", "[core]\n"),
    ] {
        std::fs::write(fx.proj.join(".git/config"), fx.subst(config)).unwrap();
        for mode in ["default", "bypassPermissions"] {
            let c = case("ask", "Bash", cmd)
                .deny(&["Read(~/.ssh/**)"])
                .allow(&["Bash(git:*)", "Bash(cd:*)"])
                .mode(mode);
            let got = run(&fx, &c).await;
            assert_eq!(behavior(&got), c.expect, "{c:?}: {got:?}");
        }
    }
    std::fs::write(fx.proj.join(".git/config"), "[core]\n").unwrap();
    let c = case("allow", "Bash", "git grep foo")
        .deny(&["Read(~/.ssh/**)"])
        .mode("bypassPermissions");
    let got = run(&fx, &c).await;
    assert_eq!(behavior(&got), c.expect, "{c:?}: {got:?}");
    // The project inside the home directory.
    let mut fx = Fixture::new();
    fx.home = fx.proj.parent().unwrap().to_path_buf();
    std::fs::create_dir_all(fx.home.join(".ssh")).unwrap();
    for (expect, deny) in [
        ("allow", "Read(~/.ssh/**)"),
        ("allow", "Read(~/.ssh/id_*)"),
        ("allow", "Read(~/outside/**)"),
        ("ask", "Read(~/proj/.env)"),
        // Everything: `HEAD` names a file denied too.
        ("deny", "Read(~/**)"),
        ("ask", "Read(~/*/.env)"),
        ("ask", "Read(~/**/.env)"),
    ] {
        for mode in ["default", "bypassPermissions"] {
            let c = case(expect, "Bash", "git show HEAD")
                .deny(&[deny])
                .allow(git)
                .mode(mode);
            let got = run(&fx, &c).await;
            assert_eq!(behavior(&got), c.expect, "{c:?}: {got:?}");
        }
    }
}

/// 4b. git's option values and `git grep`'s pattern are not paths: they no longer read as
///     reads outside the working directories. Its paths are still checked.
#[tokio::test]
async fn git_option_values_and_grep_patterns_are_not_paths() {
    let env = &["Read(.env)"];
    let mut cases = Vec::new();
    for cmd in [
        "git grep \"/api/v1\"",
        "git grep /api/v1 -- src",
        "git grep -e /users",
        "git grep -e /users -e /admin HEAD -- src",
        "git grep -n -i /api/v1",
        "git grep -C 3 /api/v1",
        "git grep -A2 -B 2 --max-depth 1 /api/v1",
        "git grep --and -e /a --or -e /b",
        "git log --grep /fix/",
        "git log --grep=/fix/",
        "git log -S /usr/local",
        "git log -S/usr/local",
        "git log -G /usr/.*",
        "git log -p -G /usr -- src",
        "git log --author /x/ --committer /y/",
        "git log --format=/%h/",
        "git log -n 3 --since /x --until /y",
        "git log --max-count 3 --skip 1 --oneline",
        "git log --date /x/ --encoding /x",
        "git log -I /x -p -- src",
        "git log --diff-filter /x",
        "git show -S /usr/local HEAD",
        "git diff -S /usr/local",
        "git blame -L 1,5 src/main.rs",
        "git blame --ignore-rev /x src/main.rs",
    ] {
        cases.extend(everywhere("allow", cmd, &[]));
    }
    // Paths, and files option values name, are still read.
    for cmd in [
        "git grep -f /etc/patterns",
        "git grep -e x -- $O/secret.txt",
        "git grep x $O/secret.txt",
        "git log -p -- $O/secret.txt",
        "git log -n 3 $O/secret.txt",
        "git blame -L 1,5 $O/secret.txt",
        "git blame -S /etc/revs src/main.rs",
        "git log -O /etc/order -p",
    ] {
        cases.push(case("ask", "Bash", cmd));
    }
    for cmd in [
        "git log -n 3 -p .env",
        "git log -S x -p .env",
        "git log -S x -p -- .env",
        "git log --grep fix -p .env",
        "git log --author=me -p .env",
        "git log -p --follow .env",
        "git grep -e x .env",
        "git grep -e x -e y HEAD -- .env",
        "git grep -n x .env",
        "git grep -i -n x .env",
        "git grep x HEAD .env",
        "git grep -f .env",
        "git grep --file=.env",
        "git blame -L 1,5 .env",
        "git blame -M .env",
        "git blame -S .env src/main.rs",
        "git blame -w -n .env",
        "git show -n 1 HEAD -- .env",
    ] {
        cases.push(case("deny", "Bash", cmd).deny(env));
        cases.push(
            case("deny", "Bash", cmd)
                .deny(env)
                .mode("bypassPermissions"),
        );
    }
    // An option's value names no pathspec: every file's patch is printed.
    for cmd in [
        "git log -p -S README.md",
        "git log -p --grep README.md",
        "git show -G src/main.rs",
        "git grep .env",
        // Bundled short options.
        "git log -pw",
        "git log -pS README.md",
        "git log -wL1,5:.env",
    ] {
        cases.push(case("ask", "Bash", cmd).deny(env).mode("bypassPermissions"));
    }
    cases.push(case("allow", "Bash", "git log -p -n 3 -- README.md").deny(env));
    run_table(cases).await;
}

/// 8b. Only jq's program is a program: an input file or an option's value that holds
///     `import` or `include` is not one.
#[tokio::test]
async fn jq_only_its_program_is_a_program() {
    let mut cases = Vec::new();
    for cmd in [
        "jq .version node_modules/eslint-plugin-import/package.json",
        "jq . include.json",
        "jq . src/include",
        "jq --arg include x '.a'",
        "jq --arg x 'include \"y\"; .' '.a'",
        "jq --arg x 'import \"y\" as $c; $c' -n '$x'",
        "jq --argjson import 1 '.a' package.json",
        "jq --slurpfile include package.json '.a' package.json",
        "jq --rawfile import package.json -n '$import'",
        "jq -n '$ARGS' --args include import",
        "jq -n '$ARGS' --jsonargs 1 '\"include\"'",
        "jq --args -n '$ARGS' include 'import \"x\" as $c; $c'",
        "jq --indent 2 .a package.json",
        "jq -r --tab .include package.json",
        "jq -- .a package.json",
    ] {
        cases.extend(everywhere("allow", cmd, &[]));
    }
    for cmd in [
        "jq -n 'import \"x\" as $c; $c'",
        "jq --arg a b 'include \"x\"; .'",
        "jq --indent 2 'import \"x\" as $c; $c' package.json",
        "jq --args 'include \"x\"; .' a",
        "jq -nr 'include \"x\"; .'",
        "jq -- 'include \"x\"; .' package.json",
        "jq -n -- 'include \"x\"; .'",
        "jq '-(\"x\" | modulemeta)'",
        "jq --rawfile a package.json --arg b c 'include \"x\"; .'",
        "echo x | xargs jq -n 'include \"x\"; .'",
        "echo x | xargs jq -L src .",
        "echo x | xargs jq -f prog.jq",
    ] {
        cases.extend(everywhere("ask", cmd, &[]));
    }
    // A program that starts with a dash is still the program: the file is read.
    for cmd in [
        "jq -R '-(-1) as $x | .' $O/secret.txt",
        "jq -R -- '.' $O/secret.txt",
        "jq --arg a b '.' $O/secret.txt",
        "jq --indent 2 . $O/secret.txt",
        "jq --rawfile a $O/secret.txt -n '$a'",
    ] {
        cases.extend(reads_outside(cmd));
    }
    run_table(cases).await;
}

/// A `$'...'` word is what bash makes of it: the value ends at a NUL (`$'.env\x00'` opens
/// `.env`), and `\xHH` / `\NNN` are bytes, so `$'donn\xc3\xa9es'` is `données`; bytes that
/// are no UTF-8 name no path known here, which asks even in bypass mode when path rules
/// could be at stake.
#[tokio::test]
async fn ansi_c_words_are_decoded_as_bash_decodes_them() {
    let env = &["Read(.env)", "Read(données/**)"];
    let mut cases = Vec::new();
    for cmd in [
        "cat $'.env\\x00'",
        "cat $'.env\\0zz'",
        "cat $'.env\\c@zz'",
        "cat $'.env\\u0000'",
        "cat $'.en\\x76'",
        "cat $'donn\\xc3\\xa9es/s.txt'",
        "cat $'donn\\303\\251es/s.txt'",
    ] {
        cases.extend(everywhere("deny", cmd, env));
    }
    cases.push(case("ask", "Bash", "cat $'donn\\351es/s.txt'").deny(env));
    cases.push(
        case("ask", "Bash", "cat $'donn\\351es/s.txt'")
            .deny(env)
            .mode("bypassPermissions"),
    );
    cases.extend(everywhere("allow", "cat $'src/main.rs\\x00.env'", env));
    run_table(cases).await;
}

/// A glob bash expands where it cannot be listed here (in a directory part, in a
/// redirection's target) that may match a protected name writes a protected path: asked even
/// in bypass mode. One that cannot match one is only unchecked.
#[tokio::test]
async fn a_glob_that_may_name_a_protected_path_asks_even_in_bypass_mode() {
    let mut cases = Vec::new();
    for cmd in [
        "cp README.md .gi[t]/config",
        "echo x >> .git/co?fig",
        "cp README.md .git/hook[s]/pre-commit",
        "cp README.md ~/.clau?e/settings.json",
        "echo k >> ~/.ss[h]/authorized_keys",
    ] {
        cases.push(case("ask", "Bash", cmd).mode("bypassPermissions"));
        cases.push(case("ask", "Bash", cmd).mode("acceptEdits"));
    }
    cases.push(case("allow", "Bash", "cp README.md src/*/y").mode("bypassPermissions"));
    run_table(cases).await;
}

/// Shell options that change what a path names: `nocaseglob` (a glob matches regardless
/// of case), `globstar` (`**` goes down directories), `cdable_vars` (`cd NAME` goes where
/// the variable NAME says), `lastpipe` (a pipeline's last stage runs in the shell, so its
/// `cd` holds), and a `cd` to a glob (it goes where the glob matches).
#[tokio::test]
async fn shell_options_that_move_paths_are_followed() {
    let main = &["Read(./src/main.rs)"];
    let mut cases = Vec::new();
    cases.extend(everywhere(
        "deny",
        "shopt -s nocaseglob; cat .ENV*",
        &["Read(.env)"],
    ));
    cases.extend(everywhere(
        "deny",
        "shopt -s nocaseglob; cat src/MAIN*",
        main,
    ));
    cases.extend(everywhere(
        "deny",
        "shopt -s lastpipe; echo | cd src; cat main.rs",
        main,
    ));
    cases.extend(everywhere("allow", "echo | cd src; cat README.md", main));
    for cmd in [
        "shopt -s globstar; grep fn **",
        "shopt -s cdable_vars; x=src; cd x && cat main.rs",
        "set -o cdable_vars; x=src; cd x && cat main.rs",
        "cd sr? && cat main.rs",
        "cd -- s* && cat main.rs",
    ] {
        cases.push(case("ask", "Bash", cmd).deny(main));
        cases.push(
            case("ask", "Bash", cmd)
                .deny(main)
                .mode("bypassPermissions"),
        );
    }
    cases.push(case("ask", "Bash", "cd .gi? && touch config").mode("acceptEdits"));
    cases.push(case("allow", "Bash", "grep fn docs/**").deny(main));
    run_table(cases).await;
}

/// `time`, `!` and `coproc` before a compound command, which tree-sitter-bash misreads (a
/// command `time { rm x` and a command `}`): the group's commands are seen all the same, by
/// deny rules and by the checks bypass mode keeps.
#[tokio::test]
async fn a_compound_command_after_time_bang_or_coproc_is_seen() {
    let rm = &["Bash(rm:*)"];
    let mut cases = Vec::new();
    for cmd in [
        "time { rm x; }",
        "time -p { rm x; }",
        "! { rm x; }",
        "coproc { rm x; }",
        "coproc worker { rm x; }",
        "time for f in a; do rm x; done",
        "! for f in a; do rm x; done",
        "time ! { rm x; }",
        "! time { rm x; }",
        "ls | time { rm x; }",
        "echo $(! { rm x; })",
        "bash -c 'time { rm x; }'",
    ] {
        cases.extend(everywhere("deny", cmd, rm));
    }
    cases.extend(everywhere("deny", "! { cat .env; }; true", &["Read(.env)"]));
    cases.push(case("ask", "Bash", "time { rm -rf ~; }").mode("bypassPermissions"));
    cases.push(
        case("ask", "Bash", "! { cp README.md .git/hooks/pre-commit; }").mode("bypassPermissions"),
    );
    // The misread text still asks outside bypass mode.
    cases.push(
        case("allow", "Bash", "time { ls; }")
            .deny(rm)
            .mode("bypassPermissions"),
    );
    run_table(cases).await;
}

/// `eval`, `source` and `.` take `--` as the end of their options: `eval -- rm x` runs `rm x`.
#[tokio::test]
async fn eval_and_source_after_double_dash_are_read() {
    let rm = &["Bash(rm:*)"];
    let mut cases = Vec::new();
    for cmd in [
        "eval -- rm x",
        "eval -- 'rm x'",
        "builtin eval -- rm x",
        "eval -- eval -- rm x",
    ] {
        cases.extend(everywhere("deny", cmd, rm));
    }
    for cmd in ["source -- <(echo rm x)", ". -- <(echo rm x)"] {
        cases.push(case("ask", "Bash", cmd).deny(rm).mode("bypassPermissions"));
    }
    run_table(cases).await;
}

/// `find` that deletes everything under a critical directory, whatever spells it: `-exec rm`
/// of what it finds, or tests every name passes.
#[tokio::test]
async fn find_deleting_everything_is_a_critical_removal() {
    let mut cases = Vec::new();
    for cmd in [
        "find ~ -exec rm -rf {} +",
        "find . -maxdepth 0 -exec rm -rf {} \\;",
        "find ~ -true -delete",
        "find ~ ! -false -delete",
        "find ~ -name '*' -delete",
        "find ~ -regex '.*' -delete",
        "find . -mindepth 1 -execdir rm -r {} +",
    ] {
        cases.push(case("ask", "Bash", cmd).mode("bypassPermissions"));
    }
    for cmd in [
        "find ~ -name '*.tmp' -delete",
        "find . -name '*.o' -exec rm {} +",
        "find ~ -exec echo {} +",
    ] {
        cases.push(case("allow", "Bash", cmd).mode("bypassPermissions"));
    }
    run_table(cases).await;
}

/// A nested shell reads its startup file before its script: `bash --rcfile F`,
/// `BASH_ENV=F bash -c`, `env ENV=F sh -i` read F, checked against Read rules; one set some
/// other way on the line (`export BASH_ENV=…`) cannot be worked out, which asks.
#[tokio::test]
async fn a_nested_shells_startup_file_is_a_file_read() {
    let env = &["Read(.env)"];
    let mut cases = Vec::new();
    for cmd in [
        "BASH_ENV=.env bash -c 'echo $SECRET'",
        "bash --rcfile .env -i -c :",
        "bash --init-file .env -c :",
        "env BASH_ENV=.env bash -c :",
        "ENV=.env sh -i -c :",
        "BASH_ENV=src/sub/.env bash -c :",
    ] {
        cases.extend(everywhere("deny", cmd, env));
    }
    for cmd in ["export BASH_ENV=.env; bash -c :", "BASH_ENV=$F bash -c :"] {
        cases.push(case("ask", "Bash", cmd).deny(env));
        cases.push(case("ask", "Bash", cmd).deny(env).mode("bypassPermissions"));
    }
    cases.push(
        case("allow", "Bash", "BASH_ENV=README.md bash -c :")
            .deny(env)
            .mode("bypassPermissions"),
    );
    run_table(cases).await;
}

/// Commands that run a program or a command string some other way than as their command:
/// wrappers seen through (`fakeroot`, `strace`, `pkexec`, `toybox`, `script -c`, `sg -c`),
/// and programs given in an option, a script or the history (`tar --to-command`, `sed 'e'`,
/// `awk system()`, `fc`), or a shell script xargs fills with its input, which a Bash deny
/// rule cannot be checked against: asked even in bypass mode. A computed command inside a
/// nested shell is one for the whole line.
#[tokio::test]
async fn programs_run_by_other_programs_meet_bash_deny_rules() {
    let rm = &["Bash(rm:*)"];
    let mut cases = Vec::new();
    for cmd in [
        "fakeroot rm x",
        "strace -f -o log rm x",
        "ltrace rm x",
        "pkexec rm x",
        "toybox rm x",
        "valgrind --tool=memcheck rm x",
        "script -qc 'rm x' /dev/null",
        "script --command='rm x' /dev/null",
        "sg root -c 'rm x'",
    ] {
        cases.extend(everywhere("deny", cmd, rm));
    }
    for cmd in [
        "set -o history\nhistory -s 'rm v7'\nfc -s rm",
        "printf 'rm v9' | xargs -I{} sh -c '{}'",
        "sed -n '1e rm v10' README.md",
        "sed 's/.*/rm x/e' README.md",
        "tar -xf a.tar --to-command='rm x'",
        "tar -I 'rm x' -xf a.tar",
        "rg --pre rm x",
        "sort --compress-program=rm README.md",
        "awk 'BEGIN{system(\"rm x\")}'",
        "bash -c 'eval \"$x\"'",
        "bash -c 'tar -xf a.tar --to-command=sh'",
        "bash -c 'git -c alias.x=!rm x'",
    ] {
        cases.push(case("ask", "Bash", cmd).deny(rm).mode("bypassPermissions"));
    }
    for cmd in [
        "sed -n 1p README.md",
        "sed 's/e/f/g' README.md",
        "awk '{print $1}' README.md",
        "sort README.md",
        "tar -tf a.tar",
    ] {
        cases.push(
            case("allow", "Bash", cmd)
                .deny(rm)
                .mode("bypassPermissions"),
        );
    }
    run_table(cases).await;
}

/// A glob that matches some hidden names is no removal of everything (`rm -f .en?` beside
/// `.git`), and `>&3-` moves a descriptor: no file is written.
#[tokio::test]
async fn hidden_globs_and_descriptor_moves_are_read_as_bash_reads_them() {
    let cases = vec![
        case("allow", "Bash", "rm -f .en?").mode("acceptEdits"),
        case("ask", "Bash", "rm -rf .*").mode("bypassPermissions"),
        case("allow", "Bash", "echo hi >&1-"),
        case("allow", "Bash", "echo hi 3>&1-"),
    ];
    run_table(cases).await;
}

/// Second review of this session's readings: prefixes in any number (`! ! {`, `time time
/// {`, `time coproc {`), `$'\x{HH}'`, programs given computed or brace-listed scripts and
/// options, old-style tar bundles, sed addresses with `I`/`M` and brackets and labels,
/// `script`'s valued options, `find` deletions behind wrappers and tests that pass every
/// name, a globbed startup file, a computed protected glob; and no asks for awk's `|` in a
/// regex or a string, or for `fc -l`.
#[tokio::test]
async fn second_review_of_the_new_readings() {
    let rm = &["Bash(rm:*)"];
    let mut cases = Vec::new();
    for cmd in [
        "! ! { rm x; }",
        "time time { rm x; }",
        "time coproc { rm x; }",
        "! time ! { rm x; }",
        "script -O log -c 'rm x'",
        "script -E never -c 'rm x'",
        "script -q log -c 'rm x'",
        "script --co='rm x'",
    ] {
        cases.extend(everywhere("deny", cmd, rm));
    }
    cases.extend(everywhere("deny", "cat $'.en\\x{76}'", &["Read(.env)"]));
    for cmd in [
        "sed {\"e rm x\",} README.md",
        "sed \"$s\" README.md",
        "tar xf a.tar $FLAGS",
        "tar xfI a.tar 'rm x'",
        "sed '/x/Ie' README.md",
        "sed '\\%x%Me' README.md",
        "sed '/[/]/e' README.md",
        "sed ':a;e rm x' README.md",
        "sed 's/x/y/;T;e rm x' README.md",
        "awk '{print | \"sh\"}' README.md",
        "awk -f prog.awk README.md",
    ] {
        cases.push(case("ask", "Bash", cmd).deny(rm).mode("bypassPermissions"));
    }
    for cmd in [
        "find ~ -exec sudo rm -rf {} +",
        "find ~ -exec timeout 5 rm -rf {} +",
        "find ~ \\( -true \\) -exec rm -rf {} +",
        "find ~ -name '?*' -exec rm -rf {} +",
        "find ~ -regex '.*.*' -delete",
        "find ~ -type d -exec rm -rf {} +",
        "find ~ -follow -delete",
        "find * -exec rm -rf {} +",
        "rm -rf $'\\x{2f}'",
        "cp README.md ${HOME}/.clau?e/settings.json",
    ] {
        cases.push(case("ask", "Bash", cmd).mode("bypassPermissions"));
    }
    cases.push(
        case("ask", "Bash", "bash --rcfile .en? -i -c :")
            .deny(&["Read(.env)"])
            .mode("bypassPermissions"),
    );
    for cmd in [
        "awk -F'|' '{print $1}' README.md",
        "awk '/a|b/' README.md",
        "awk '{print $1 \"|\" $2}' README.md",
        "awk '$1 == 1 || $2 == 2' README.md",
        "fc -l",
        "find build -type d -empty -delete",
        "find . -name '*.o' -exec rm {} +",
        "time make",
        "! grep -q x README.md",
        "sed -i s/e/f/ README.md",
    ] {
        cases.push(
            case("allow", "Bash", cmd)
                .deny(&["Bash(curl:*)"])
                .mode("bypassPermissions"),
        );
    }
    run_table(cases).await;
}

/// A line that only mentions `lastpipe` does not set it: a `cd` in a pipeline's last stage
/// may or may not move the shell, and what follows is checked in both places.
#[tokio::test]
async fn a_mentioned_lastpipe_checks_both_directories() {
    let main = &["Read(./src/main.rs)"];
    let mut cases = Vec::new();
    cases.extend(everywhere(
        "deny",
        "echo lastpipe | cd docs && cat src/main.rs",
        main,
    ));
    cases.extend(everywhere(
        "deny",
        "shopt -s lastpipe; echo | cd src && cat main.rs",
        main,
    ));
    run_table(cases).await;
}

/// A tracer's or wrapper's own output file is a write of its own: `strace -o ~/.bashrc`
/// asks even in bypass mode, as `> ~/.bashrc` does.
#[tokio::test]
async fn a_wrappers_own_files_are_checked() {
    let mut cases = Vec::new();
    for cmd in [
        "strace -o ~/.bashrc true",
        "strace -o.git/config true",
        "ltrace --output=.git/config true",
        "valgrind --log-file=.git/hooks/pre-commit true",
        "fakeroot -s .git/config true",
    ] {
        cases.push(case("ask", "Bash", cmd).mode("bypassPermissions"));
    }
    cases.push(case("allow", "Bash", "strace -o trace.log true").mode("bypassPermissions"));
    cases.push(case("deny", "Bash", "fakeroot -i .env true").deny(&["Read(.env)"]));
    run_table(cases).await;
}

/// A tracer's short options read as getopt reads them: a flag before `-o` (`-x -o F`) and a
/// bundle (`-fo F`) still name the output file.
#[tokio::test]
async fn a_tracers_bundled_output_option_is_read() {
    let mut cases = Vec::new();
    for cmd in [
        "strace -x -o ~/.bashrc true",
        "strace -fo ~/.bashrc true",
        "strace -fo.git/config true",
        "ltrace -S -o .git/config true",
    ] {
        cases.push(case("ask", "Bash", cmd).mode("bypassPermissions"));
    }
    run_table(cases).await;
}

/// 9. Options that make a program run a command on this machine: ssh's, scp's and sftp's
///    `-o ProxyCommand=…` (any case, `=` or a space, before or after the host),
///    `LocalCommand`, `KnownHostsCommand`, scp's and sftp's `-S PROGRAM`, rsync's `-e` /
///    `--rsh` (other than a plain ssh), vim's `-c`, `+CMD`, `--cmd` and `-S`, zip's `-TT`;
///    their variables (`ZIPOPT`, `RSYNC_RSH`, git's) written before the command or assigned
///    by an earlier statement (`export ZIPOPT=…; zip …`).
///    Real runs of the installed programs create the victim file; under `Bash(touch:*)` the
///    engine asks about each even in bypass mode. Their everyday uses stay allowed.
#[tokio::test]
async fn options_that_run_a_local_command_meet_deny_rules() {
    let fx = Fixture::new();
    std::fs::write(fx.out.join("f"), "hi\n").unwrap();
    std::fs::write(fx.out.join("s.sh"), "#!/bin/sh\ntouch victim\n").unwrap();
    std::fs::write(
        fx.out.join("ssh_config"),
        "Host x\n  ProxyCommand touch victim\n",
    )
    .unwrap();
    real_bash("chmod +x s.sh && zip -q a.zip f", &fx.out, &fx.home);
    // (command, the program it needs, whether a real run is safe and quick here)
    let runs: &[(&str, &str, bool)] = &[
        (
            "ssh -o ProxyCommand='touch victim' -o BatchMode=yes x",
            "ssh",
            true,
        ),
        (
            "ssh -oproxycommand='touch victim' -o BatchMode=yes x",
            "ssh",
            true,
        ),
        (
            "ssh -o 'ProxyCommand touch victim' -o BatchMode=yes x",
            "ssh",
            true,
        ),
        (
            "ssh x -o 'ProxyCommand touch victim' -o BatchMode=yes",
            "ssh",
            true,
        ),
        (
            "ssh -vo ProxyCommand='touch victim' -o BatchMode=yes x",
            "ssh",
            true,
        ),
        (
            "scp -o ProxyCommand='touch victim' -o BatchMode=yes f x:y",
            "scp",
            true,
        ),
        ("scp -S ./s.sh f x:y", "scp", true),
        ("sftp -S ./s.sh x", "sftp", true),
        ("vim -es -c '!touch victim' -c 'qa!'", "vim", true),
        ("vim -es '+!touch victim' '+qa!'", "vim", true),
        ("vim -es --cmd '!touch victim' -c 'qa!'", "vim", true),
        ("zip -T -TT 'touch victim; true' a.zip", "zip", true),
        (
            "zip -T --unzip-command 'touch victim; true' a.zip",
            "zip",
            true,
        ),
        ("rsync -e 'sh -c \"touch victim\"' f x:y", "rsync", true),
        ("rsync -avze 'sh -c \"touch victim\"' f x:y", "rsync", true),
        ("rsync --rsh='sh -c \"touch victim\"' f x:y", "rsync", true),
        (
            "rsync -e 'ssh -o ProxyCommand=\"touch victim\"' f x:y",
            "rsync",
            true,
        ),
        ("ssh -o \"$options\" x", "ssh", false),
        (
            "ssh -o LocalCommand='touch victim' -o PermitLocalCommand=yes x",
            "ssh",
            false,
        ),
        ("ssh -o KnownHostsCommand='touch victim' x", "ssh", false),
        ("vim -S evil.vim f", "vim", false),
        // Found by code review: values that are computed, options attached or bundled,
        // options whose value is a file of commands or a library, flags read as values.
        (
            "scp -O -o ProxyCommand='touch victim' -o BatchMode=yes f x:y",
            "scp",
            true,
        ),
        (
            "sftp -N -o ProxyCommand='touch victim' -o BatchMode=yes x",
            "sftp",
            true,
        ),
        (
            "sftp -p -o ProxyCommand='touch victim' -o BatchMode=yes x",
            "sftp",
            true,
        ),
        ("ssh -F ssh_config -o BatchMode=yes x", "ssh", true),
        ("sftp -D ./s.sh x", "sftp", true),
        ("scp -D ./s.sh f x:y", "scp", true),
        ("sftp -b batch x", "sftp", false),
        ("ssh -I ./evil.so x", "ssh", false),
        ("vim '-c!touch victim' '-cqa!' -es", "vim", true),
        ("vim -es '+/x/|!touch victim' '+qa!'", "vim", false),
        ("printf '!touch victim\\n' | vim -es", "vim", false),
        ("zip -T '-TTtouch victim; true' a.zip", "zip", true),
        ("a='-S evil.vim'; vim $a", "vim", false),
        ("o='-TT touch'; zip $o a.zip", "zip", false),
        ("o='-oProxyCommand=touch'; ssh $o x", "ssh", false),
        (
            "rsync -e ssh -e 'sh -c \"touch victim\"' f x:y",
            "rsync",
            true,
        ),
        (
            "RSYNC_RSH='sh -c \"touch victim\"' rsync f x:y",
            "rsync",
            true,
        ),
        ("vim f", "vim", false),
        // Found by a second adversarial review: `-B` takes a value (the checker read its
        // value as the host and stopped), vim under Debian's names, zip's options from
        // `ZIPOPT`.
        (
            "ssh -B lo localhost -o ProxyCommand='touch victim' -o BatchMode=yes true",
            "ssh",
            true,
        ),
        ("editor -es -c '!touch victim' -c 'qa!'", "editor", false),
        (
            "vim.basic -es -c '!touch victim' -c 'qa!'",
            "vim.basic",
            false,
        ),
        (
            "ZIPOPT='-TT \"touch victim\"' zip -q b.zip f -T",
            "zip",
            false,
        ),
        // Found by the last session's note: the variable exported by an earlier
        // statement, not written before the command (not run here: `timeout` cannot run
        // `export`; the `ZIPOPT=… zip` above shows zip reads it).
        (
            "export ZIPOPT='-TT \"touch victim\"'; zip -q b.zip f -T",
            "zip",
            false,
        ),
        (
            "ZIPOPT='-TT \"touch victim\"'; export ZIPOPT; zip -q b.zip f -T",
            "zip",
            false,
        ),
        (
            "declare -x ZIPOPT='-TT \"touch victim\"'; zip -q b.zip f -T",
            "zip",
            false,
        ),
        (
            "export RSYNC_RSH='sh -c \"touch victim\"'; rsync f x:y",
            "rsync",
            false,
        ),
        (
            "export GIT_SSH_COMMAND='touch victim'; git fetch",
            "git",
            false,
        ),
        ("export GIT_PAGER='touch victim'; git log", "git", false),
    ];
    for (command, program, real) in runs {
        if !*real || !common::installed(program) {
            continue;
        }
        let victim = fx.out.join("victim");
        let _ = std::fs::remove_file(&victim);
        real_bash(
            &format!("timeout 10 {command} </dev/null"),
            &fx.out,
            &fx.home,
        );
        assert!(victim.exists(), "`{command}` did not run its command");
    }
    let touch = |expect, command: &str| {
        case(expect, "Bash", command)
            .mode("bypassPermissions")
            .deny(&["Bash(touch:*)"])
    };
    let mut cases: Vec<Case> = runs.iter().map(|(c, _, _)| touch("ask", c)).collect();
    cases.extend(
        [
            "ssh x ls",
            "ssh -p 2222 -o ConnectTimeout=5 x uptime",
            "ssh -o StrictHostKeyChecking=no x ls",
            "scp -P 2222 f x:y",
            "rsync -avz f x:y",
            "rsync -e ssh f x:y",
            "rsync -av -e 'ssh -p 2222' f x:y",
            "ssh x grep -F pattern file",
            "ssh -p 22 x -- -o ProxyCommand=y",
            "scp f x:y -S ./s.sh",
            "sftp -p -P 2222 x",
            "zip -r a.zip f",
            "zip -T a.zip f",
            "export LC_ALL=C; zip -r a.zip f",
            "export GIT_PAGER=cat; git log",
        ]
        .map(|c| touch("allow", c)),
    );
    run_table_in(&fx, cases).await;
}

/// 10. A shell started with `BASH_ENV` or `ENV` set (on its line, through `env`, by an
///     earlier statement, or by a script around it) reads a startup file whose name bash
///     expands (`$(…)` in it runs) and whose commands run before its script: what runs is
///     computed. And the variables that make git, rsync and zip run a command count
///     wherever they were set: through `env VAR=…`, inside an `eval` (which runs in the
///     shell), or before a nested shell (`export VAR=…; bash -c 'git fetch'`). Real runs
///     create the victim file; under `Bash(touch:*)` each asks in bypass mode, and everyday
///     commands stay allowed.
#[tokio::test]
async fn startup_files_and_command_variables_cross_statements_and_shells() {
    let fx = Fixture::new();
    std::fs::write(fx.out.join("f"), "hi\n").unwrap();
    real_bash("git init -q . && zip -q a.zip f", &fx.out, &fx.home);
    // (command, the program it needs, whether a real run is safe and quick here)
    let runs: &[(&str, &str, bool)] = &[
        ("BASH_ENV='$(touch victim)' bash -c true", "bash", true),
        (
            "export BASH_ENV='$(touch victim)'; bash -c true",
            "bash",
            true,
        ),
        ("env BASH_ENV='$(touch victim)' bash -c ls", "bash", true),
        ("BASH_ENV='$(touch victim)' bash ./s.sh", "bash", false),
        (
            "B='$(touch victim)'; export BASH_ENV=$B; bash -c :",
            "bash",
            true,
        ),
        (
            "eval \"export BASH_ENV='\\$(touch victim)'\"; bash -c true",
            "bash",
            true,
        ),
        (
            "bash -c 'export BASH_ENV=\\$\\(touch\\ victim\\); bash -c :'",
            "bash",
            true,
        ),
        ("ENV='$(touch victim)' sh -i -c true", "sh", false),
        (
            "eval \"export GIT_SSH_COMMAND='touch victim'\"; git fetch -q ssh://h/x",
            "git",
            true,
        ),
        (
            "export GIT_SSH_COMMAND='touch victim'; bash -c 'git fetch -q ssh://h/x'",
            "git",
            true,
        ),
        (
            "GIT_SSH_COMMAND='touch victim'; bash -c 'git fetch -q ssh://h/x'",
            "git",
            false,
        ),
        (
            "env GIT_SSH_COMMAND='touch victim' git fetch -q ssh://h/x",
            "git",
            true,
        ),
        (
            "env -i PATH=/usr/bin:/bin GIT_SSH_COMMAND='touch victim' git fetch -q ssh://h/x",
            "git",
            true,
        ),
        (
            "export RSYNC_RSH='sh -c \"touch victim\"'; bash -c 'rsync f x:y'",
            "rsync",
            true,
        ),
        (
            "eval \"export RSYNC_RSH='sh -c \\\"touch victim\\\"'\"; rsync f x:y",
            "rsync",
            true,
        ),
        (
            "env RSYNC_RSH='sh -c \"touch victim\"' rsync f x:y",
            "rsync",
            true,
        ),
        (
            "env ZIPOPT='-TT \"touch victim\"' zip -q b.zip f -T",
            "zip",
            true,
        ),
        (
            "export ZIPOPT='-TT \"touch victim\"'; sh -c 'zip -q b.zip f -T'",
            "zip",
            true,
        ),
    ];
    for (command, program, real) in runs {
        if !*real || !common::installed(program) {
            continue;
        }
        let victim = fx.out.join("victim");
        let _ = std::fs::remove_file(&victim);
        real_bash(
            &format!("timeout 10 bash -c {}", shell_quote(command)),
            &fx.out,
            &fx.home,
        );
        assert!(victim.exists(), "`{command}` did not run its command");
    }
    let touch = |expect, command: &str| {
        case(expect, "Bash", command)
            .mode("bypassPermissions")
            .deny(&["Bash(touch:*)"])
    };
    let mut cases: Vec<Case> = runs.iter().map(|(c, _, _)| touch("ask", c)).collect();
    cases.extend(
        [
            "bash -c 'ls'",
            "env LC_ALL=C bash -c 'ls'",
            "export LC_ALL=C; bash -c 'git fetch'",
            "env LANG=C git fetch",
            "eval 'export X=1'; git fetch",
            "bash -c 'export X=1'; git fetch",
            "env LC_ALL=C zip -r a.zip f",
            "sh ./s.sh",
        ]
        .map(|c| touch("allow", c)),
    );
    run_table_in(&fx, cases).await;
}

/// `s` quoted for bash as one word.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}
