//! Session 39 on Bash: three ways the command the rules saw was not the command bash runs.
//! A backslash before a carriage return and a line feed (`echo hi \<CR><LF>rm x`) was read
//! as a line continuation, though bash takes `\<CR>` for an escaped carriage return and
//! runs the next line as a command of its own. A redirection of descriptor 0 or of a
//! `{name}` descriptor (`git 0</dev/null push`, `git {fd}<f push`) left its `0` or
//! `{fd}` among the words (`git 0 push`), past deny rules, ask rules and hook `if`s. And a
//! glob in a subcommand (`git pu[s]h`, which bash expands to `push` when a file of that
//! name exists) got past the deny and ask rules that name it.

use crate::common::{Case, Fixture, case, real_bash, run, run_table};
use serde_json::json;
use tool_core::{PermissionResult, ToolUseContext};
use tool_perms::bash::parse::analyze;
use tool_perms::matches_rule;

/// A table row: Bash `command` in bypass mode, with `deny` denied.
fn bypass(expect: &'static str, deny: &str, command: &str) -> Case {
    case(expect, "Bash", command)
        .mode("bypassPermissions")
        .deny(&[deny])
}

/// Whether a hook whose `if` is `rule` runs for the Bash `command` in `fx`'s project.
fn hook_if_runs(fx: &Fixture, rule: &str, command: &str) -> bool {
    let ctx = ToolUseContext::new(&fx.proj).with_home(Some(fx.home.clone()));
    let bash = crate::common::probe(fx, "Bash");
    matches_rule(rule, &bash, &json!({ "command": command }), &ctx)
}

/// The words of each simple command `command` holds, as the analysis reads them.
fn commands(command: &str) -> Vec<Vec<String>> {
    analyze(command)
        .commands
        .iter()
        .map(|c| c.words.iter().map(|w| w.raw.clone()).collect())
        .collect()
}

/// Found by review: the real bash runs the line after `\<CR><LF>` as a command of its own
/// (it removed the file here), and after a word holding a carriage return a `#` starts no
/// comment. Both are now read as bash reads them: the `rm` is denied in bypass mode and
/// asked about in default mode, where it was allowed as part of a read-only `echo`.
#[tokio::test]
async fn a_backslash_before_crlf_is_no_line_continuation() {
    let fx = Fixture::new();
    std::fs::write(fx.proj.join("keep.txt"), "x").unwrap();
    assert!(real_bash("echo hi \\\r\nrm keep.txt", &fx.proj, &fx.home));
    assert!(
        !fx.proj.join("keep.txt").exists(),
        "bash ran the second line"
    );
    std::fs::write(fx.proj.join("keep.txt"), "x").unwrap();
    assert!(real_bash("echo a\r#; rm keep.txt", &fx.proj, &fx.home));
    assert!(!fx.proj.join("keep.txt").exists(), "bash read no comment");

    assert_eq!(
        commands("echo hi \\\r\nrm keep.txt"),
        vec![vec!["echo", "hi", "\\\r"], vec!["rm", "keep.txt"]]
    );
    assert_eq!(
        commands("echo a\r#; rm x"),
        vec![vec!["echo", "a\r#"], vec!["rm", "x"]]
    );
    // A vertical tab or form feed is a word character too, escaped or not.
    assert_eq!(commands("echo a\x0bb"), vec![vec!["echo", "a\x0bb"]]);
    assert_eq!(commands("echo a\x0c#; rm x")[1], vec!["rm", "x"]);
    // A backslash right before the line feed still continues the line.
    assert_eq!(
        commands("echo hi \\\nthere"),
        vec![vec!["echo", "hi", "there"]]
    );

    let rm = "Bash(rm:*)";
    run_table(vec![
        bypass("deny", rm, "echo hi \\\r\nrm keep.txt"),
        bypass("deny", rm, "echo a\r#; rm keep.txt"),
        bypass("deny", rm, "echo a\x0c#; rm keep.txt"),
        bypass("deny", rm, "git status \\\r\nrm x"),
        case("ask", "Bash", "echo hi \\\r\ntouch pwn"),
        case("ask", "Bash", "echo hi \\\r\nbash -c 'touch /tmp/x'"),
        case("deny", "Bash", "git status \\\r\nrm x")
            .allow(&["Bash(git:*)"])
            .deny(&[rm]),
        // Still read-only: the continuation, and lines ended by CR LF.
        case("allow", "Bash", "echo hi \\\nthere"),
        case("allow", "Bash", "echo a\r\necho b\r\n"),
    ])
    .await;
}

/// Every redirection operator that takes a descriptor before it, with descriptor 0 and with
/// a `{name}`: `git <redir> push` and `git push <redir>`.
fn descriptor_redirections() -> Vec<String> {
    let mut out = Vec::new();
    for fd in ["0", "{fd}"] {
        for op in [
            "</dev/null",
            ">/dev/null",
            ">>/dev/null",
            ">|/dev/null",
            "<&-",
            ">&-",
            "<&0",
            ">&1",
            "<<<x",
        ] {
            out.push(format!("{fd}{op}"));
        }
    }
    out
}

/// Found by review: `git 0</dev/null push` was read as `git 0 push`, and `env 0</dev/null rm
/// x` as `env 0 rm x`, so deny rules did not see `git push` or `rm`. Bash takes a `0` or a
/// `{name}` written right before `<` or `>` for the redirection's descriptor; such a word is
/// now no word of the command, before every operator. Before `&>` it is a word (bash runs
/// `git 0 push` for `git 0&>/dev/null push`), as are `0<(…)` and a `0` after a blank.
#[tokio::test]
async fn a_descriptor_before_a_redirection_is_no_word() {
    let fx = Fixture::new();
    std::fs::write(fx.proj.join("victim"), "x").unwrap();
    // What the real bash does: `{fd}` and `0` are no words of `rm`'s.
    assert!(real_bash("rm 0</dev/null victim", &fx.proj, &fx.home));
    assert!(!fx.proj.join("victim").exists());
    std::fs::write(fx.proj.join("victim"), "x").unwrap();
    assert!(real_bash("rm {fd}</dev/null victim", &fx.proj, &fx.home));
    assert!(!fx.proj.join("victim").exists());

    let push = "Bash(git push:*)";
    let exact = "Bash(git push)";
    let mut cases = Vec::new();
    for r in descriptor_redirections() {
        cases.push(bypass("deny", push, &format!("git {r} push")));
        cases.push(bypass("deny", exact, &format!("git push {r}")));
        cases.push(
            case("deny", "Bash", &format!("git {r} push"))
                .allow(&["Bash(git:*)"])
                .deny(&[push]),
        );
        cases.push(
            case("ask", "Bash", &format!("git {r} push"))
                .allow(&["Bash(git:*)"])
                .ask(&[push]),
        );
    }
    for heredoc in ["<<", "<<-"] {
        cases.push(bypass(
            "deny",
            push,
            &format!("git {{fd}}{heredoc}EOF push\nx\nEOF"),
        ));
        // The parser cannot read this one: it asks, in bypass mode too.
        cases.push(bypass(
            "ask",
            push,
            &format!("git 0{heredoc}EOF push\nx\nEOF"),
        ));
    }
    // Nor a word after `<&-` and another (a syntax error to the parser); one is the
    // command's (`git <&- push` runs `git push`), with or without a descriptor.
    cases.push(bypass("ask", push, "git 0<&- push origin main"));
    for r in ["<&-", ">&-", "3<&-", "0>&-", "{fd}<&-"] {
        cases.push(bypass("deny", push, &format!("git {r} push")));
    }
    let rm = "Bash(rm:*)";
    for command in [
        "env 0</dev/null rm victim",
        "rm 0>x victim",
        "0</dev/null rm x",
        "sudo 0</dev/null rm x",
        "nice 0</dev/null rm x",
        "nohup {fd}</dev/null rm x",
        "timeout 0</dev/null 5 rm x",
        "xargs 0</dev/null rm x",
        "sh 0</dev/null -c 'rm x'",
        "env {fd}>&- rm",
        "rm {fd}>&- x",
    ] {
        cases.push(bypass("deny", rm, command));
    }
    // `&>` and `&>>` take no descriptor: the `0` is git's.
    for op in ["&>", "&>>"] {
        cases.push(bypass(
            "deny",
            "Bash(git 0 push)",
            &format!("git 0{op}/dev/null push"),
        ));
        cases.push(bypass("allow", exact, &format!("git 0{op}/dev/null push")));
    }
    run_table(cases).await;

    assert_eq!(commands("rm 0>x victim"), vec![vec!["rm", "victim"]]);
    assert_eq!(commands("git {fd}>&- push"), vec![vec!["git", "push"]]);
    assert_eq!(commands("git 0<<<x push"), vec![vec!["git", "push"]]);
    assert_eq!(commands("echo 0<(true)")[1], vec!["echo", "0<(true)"]);
    assert_eq!(commands("echo 0 <x"), vec![vec!["echo", "0"]]);
    assert_eq!(commands("echo a0>x"), vec![vec!["echo", "a0"]]);

    // The question shows the command bash runs.
    let c = case("ask", "Bash", "git 0</dev/null push")
        .allow(&["Bash(git:*)"])
        .ask(&[push]);
    match run(&fx, &c).await {
        PermissionResult::Ask { message, .. } => {
            assert!(message.contains("git push"), "{message}");
            assert!(!message.contains("git 0 push"), "{message}");
        }
        other => panic!("expected ask, got {other:?}"),
    }

    // A hook's `if` sees it too.
    for command in ["env 0</dev/null rm v2", "rm {fd}</dev/null v2", "0<f rm v2"] {
        assert!(hook_if_runs(&fx, rm, command), "{command}");
    }
    for r in descriptor_redirections() {
        let command = format!("git {r} push");
        assert!(hook_if_runs(&fx, push, &command), "{command}");
    }
}

/// Found by review: with a file named `push` (the line may make it), bash runs `git push`
/// for `git pu[s]h`, which `Bash(git push:*)` did not match, so `Bash(git:*)` allowed it.
/// A glob that may spell a word a Bash deny or ask rule names for that program now asks, in
/// bypass mode too, and a hook's `if` for the rule runs. Globs no such rule can be
/// (`ls *.rs`, `git add *.rs`, `cat src/*.rs`) are judged as before.
#[tokio::test]
async fn a_glob_that_may_spell_a_denied_subcommand_asks() {
    let fx = Fixture::new();
    let git_rules = |c: Case| {
        c.allow(&["Bash(git:*)", "Bash(npm:*)"])
            .deny(&["Bash(git push:*)", "Bash(npm publish:*)"])
    };
    let ask_rules = |c: Case| {
        c.allow(&["Bash(git:*)", "Bash(npm:*)", "Bash(kubectl:*)"])
            .ask(&["Bash(git push:*)", "Bash(kubectl delete:*)"])
    };
    let mut cases = Vec::new();
    for command in [
        "touch push && git pu[s]h origin HEAD:refs/heads/b",
        "git pu[s]h origin main",
        "git pu?h origin main",
        "git pus* origin main",
        "git * origin main",
        "git -C . pu[s]h",
        "sudo git p[u]sh",
        "npm publis[h]",
        "npm 'publ'i?h",
        "shopt -s nullglob; git x*y push",
    ] {
        cases.push(git_rules(case("ask", "Bash", command).mode("acceptEdits")));
        cases.push(git_rules(
            case("ask", "Bash", command).mode("bypassPermissions"),
        ));
    }
    for command in ["git pu[s]h origin main", "kubectl delet[e] pod x"] {
        cases.push(ask_rules(case("ask", "Bash", command)));
    }
    cases.push(bypass(
        "ask",
        "Bash(terraform destroy:*)",
        "terraform destro? -auto-approve",
    ));
    // Globs no rule's word can be, or programs no rule names.
    for command in [
        "git add *.rs",
        "git log -- src/*.rs",
        "git pu[l]l",
        "npm test -- *.spec.js",
    ] {
        cases.push(git_rules(case("allow", "Bash", command)));
    }
    for command in [
        "ls *.rs",
        "cat src/*.rs",
        "wc -l src/*.rs",
        "grep -n fn src/*.rs",
    ] {
        cases.push(case("allow", "Bash", command).deny(&["Bash(rm:*)", "Bash(git push:*)"]));
        cases.push(case("allow", "Bash", command));
    }
    cases.push(bypass("allow", "Bash(rm:*)", "ls *.rs"));
    run_table(cases).await;

    // A hook's `if` for the rule runs for such a glob, not for another.
    assert!(hook_if_runs(&fx, "Bash(git push:*)", "git pu[s]h"));
    assert!(hook_if_runs(&fx, "Bash(npm publish:*)", "npm publis?"));
    assert!(!hook_if_runs(&fx, "Bash(git push:*)", "git add *.rs"));
    assert!(!hook_if_runs(&fx, "Bash(rm:*)", "ls *.rs"));
}

/// Found by the second review: a POSIX bracket class inside a glob class (`[[:alpha:]]`,
/// `[[.p.]]`, `[[=p=]]`) was taken to end at the `]` of `[:alpha:]`, so `git
/// [[:alpha:]]ush` (bash runs `git push` when a file `push` exists) was not seen to spell
/// `push`: allowed past `Bash(git push:*)`, in bypass mode too, and a hook's `if` missed it.
#[tokio::test]
async fn a_posix_bracket_class_may_spell_a_denied_subcommand() {
    use tool_perms::bash::commands::glob_may_be;
    let fx = Fixture::new();
    std::fs::write(fx.proj.join("push"), "").unwrap();
    for glob in [
        "[[:alpha:]]ush",
        "[[:lower:]]ush",
        "[[.p.]]ush",
        "[[=p=]]ush",
        "[![:digit:]]ush",
        "p[[:alpha:]s]sh",
    ] {
        assert!(glob_may_be(glob, "push"), "{glob}");
    }
    assert!(!glob_may_be("[[:alpha:]]ull", "push"));
    let push = "Bash(git push:*)";
    let mut cases = Vec::new();
    for command in [
        "touch push; git [[:alpha:]]ush origin main",
        "git [[:lower:]]ush",
        "git [[.p.]]ush",
        "git [[=p=]]ush",
    ] {
        cases.push(bypass("ask", push, command));
        cases.push(
            case("ask", "Bash", command)
                .allow(&["Bash(git:*)", "Bash(touch:*)"])
                .deny(&[push]),
        );
    }
    run_table(cases).await;
    assert!(hook_if_runs(&fx, push, "git [[:alpha:]]ush"));
}

/// Found by the second review: digits before `<` or `>` are a descriptor to bash only when
/// the number fits an `int` (leading zeros allowed); `git --namespace 2147483648</dev/null
/// push` runs `git --namespace 2147483648 push`, a push, which was read as `git --namespace
/// push` (the namespace `push`, no subcommand) and allowed past `Bash(git push:*)`.
#[tokio::test]
async fn digits_too_big_for_a_descriptor_are_a_word() {
    // What the real bash runs: the digits are an argument, and a redirection of standard
    // input; digits that fit an `int` name a descriptor.
    let fx = Fixture::new();
    let g = fx.proj.join("g");
    std::fs::write(&g, "#!/bin/sh\nprintf '%s\\n' \"$@\" > args\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&g, std::fs::Permissions::from_mode(0o755)).unwrap();
    let args = |command: &str| {
        let _ = std::fs::remove_file(fx.proj.join("args"));
        real_bash(command, &fx.proj, &fx.home);
        std::fs::read_to_string(fx.proj.join("args")).unwrap_or_default()
    };
    assert_eq!(
        args("./g --namespace 2147483648</dev/null push"),
        "--namespace\n2147483648\npush\n"
    );
    assert_eq!(args("./g 2147483648>/dev/null push"), "2147483648\npush\n");
    assert_eq!(args("./g 000000000000000000000<g push"), "push\n");
    assert_eq!(args("./g 2147483647>&- push"), "push\n");
    assert_eq!(
        commands("git 2147483648</dev/null push"),
        vec![vec!["git", "2147483648", "push"]]
    );
    assert_eq!(
        commands("git 99999999999999999999>/dev/null push"),
        vec![vec!["git", "99999999999999999999", "push"]]
    );
    assert_eq!(
        commands("git 2147483647</dev/null push"),
        vec![vec!["git", "push"]]
    );
    assert_eq!(
        commands("git 000000000002147483647</dev/null push"),
        vec![vec!["git", "push"]]
    );
    let push = "Bash(git push:*)";
    let mut cases = Vec::new();
    for command in [
        "git --namespace 2147483648</dev/null push origin main",
        "git -C 2147483648</dev/null push",
        "git --namespace 4294967296<x push",
        "git --namespace 2147483648>/dev/null push",
        "git --namespace 99999999999999999999>>/dev/null push",
    ] {
        cases.push(bypass("deny", push, command));
        cases.push(
            case("deny", "Bash", command)
                .allow(&["Bash(git:*)"])
                .deny(&[push]),
        );
    }
    run_table(cases).await;
}

/// Found by the second review: nullglob was found by the text `nullglob` in the line, but
/// bash removes quotes before `shopt` reads its argument (`shopt -s "null"glob`), and the
/// argument may be a glob or a variable. With nullglob on, `git zzz* push` runs `git push`
/// (the glob that matches nothing is removed). Any `shopt` in the line now counts.
#[tokio::test]
async fn any_shopt_may_turn_nullglob_on() {
    let push = "Bash(git push:*)";
    let mut cases = Vec::new();
    for command in [
        "shopt -s \"null\"glob; git zzz* push",
        "shopt -s nul?glob; git zzz* push",
        "shopt -s 'nullglob'; git zzz* push",
        "shopt -s $opt; git zzz* push",
        "shopt -s null\\\nglob; git zzz* push",
    ] {
        cases.push(bypass("ask", push, command));
        cases.push(
            case("ask", "Bash", command)
                .allow(&["Bash(git:*)", "Bash(shopt:*)"])
                .deny(&[push]),
        );
    }
    // Without a shopt a glob that cannot be `push` is no question.
    cases.push(bypass("allow", push, "git zzz* status"));
    run_table(cases).await;
    let fx = Fixture::new();
    assert!(hook_if_runs(
        &fx,
        push,
        "shopt -s \"null\"glob; git zzz* push"
    ));
}

/// Found by the second review: bracket ranges were compared lowercased, so `[Z-a]` (ASCII
/// `Z` to `a`: `[`, `\`, `]`, `^`, `_`, `` ` ``) became the empty `[z-a]` and was not seen
/// to spell `deploy_prod`.
#[tokio::test]
async fn a_range_is_compared_on_its_own_characters() {
    use tool_perms::bash::commands::glob_may_be;
    assert!(glob_may_be("deploy[Z-a]prod", "deploy_prod"));
    assert!(glob_may_be("[Z-a]ush", "_ush"));
    // Case is still ignored, as nocaseglob would.
    assert!(glob_may_be("[A-Z]ush", "push"));
    assert!(glob_may_be("[a-z]USH", "PUSH"));
    assert!(!glob_may_be("[0-9]ush", "push"));
    run_table(vec![bypass(
        "ask",
        "Bash(make deploy_prod:*)",
        "touch deploy_prod; make deploy[Z-a]prod",
    )])
    .await;
}

/// Found by the second review: `{fd}>&- git push` asked, rightly, but said "the command name
/// `fd}` is a brace list or a glob": what the question is about is the redirection written
/// before the command name.
#[tokio::test]
async fn a_redirection_before_the_name_is_named_as_such() {
    let fx = Fixture::new();
    for command in ["{fd}>&- git push", "{fd}>&- git push origin main"] {
        let c = bypass("ask", "Bash(git push:*)", command);
        match run(&fx, &c).await {
            PermissionResult::Ask { message, .. } => {
                assert!(
                    message.contains("a redirection before the command name"),
                    "{command}: {message}"
                );
                assert!(!message.contains("brace list"), "{command}: {message}");
            }
            other => panic!("{command}: expected ask, got {other:?}"),
        }
    }
    // Where the parser's fallback reads the words after it, a deny rule sees them.
    run_table(vec![bypass(
        "deny",
        "Bash(git push:*)",
        "{fd}</dev/null git push",
    )])
    .await;
}

/// Found by the second review: under `Bash(git push:*)` any glob that might spell `push`
/// asked, wherever it stood, in bypass mode too: `git add *`, `git diff -- *`. A glob now
/// counts only where it may put the rule's words where the rule reads them: the words are
/// compared with the rule's position by position, in each reading the deny rules take (as
/// written, past git's global options), and a word before the glob that differs from the
/// rule's (`add`) means the reading cannot match. A glob among the options may change the
/// reading (`git -C * status push` runs `git -C + -C status push`, a push, with files `+`
/// and `-C` in the C locale): it still asks.
#[tokio::test]
async fn a_glob_counts_only_where_the_rule_may_read_it() {
    // What the real bash runs for the glob among git's options.
    let fx = Fixture::new();
    let dir = fx.proj.join("d");
    std::fs::create_dir_all(fx.proj.join("bin")).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("+"), "").unwrap();
    std::fs::write(dir.join("-C"), "").unwrap();
    let git = fx.proj.join("bin/git");
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(&git, "#!/bin/sh\necho \"$*\" > \"$ARGS\"\n").unwrap();
    std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
    let args = fx.proj.join("args");
    let script = format!(
        "export LC_ALL=C ARGS='{}' PATH=\"$PWD/../bin:$PATH\"; git -C * status push",
        args.display()
    );
    real_bash(&script, &dir, &fx.home);
    assert_eq!(
        std::fs::read_to_string(&args).unwrap(),
        "-C + -C status push\n"
    );
    let push = "Bash(git push:*)";
    let rules = |c: Case| c.allow(&["Bash(git:*)"]).deny(&[push]);
    let mut cases = Vec::new();
    for command in [
        "git add *",
        "git diff -- *",
        "git commit -am wip && git add *",
        "git -C . add *",
        "git log --oneline -- *",
    ] {
        cases.push(bypass("allow", push, command));
        // (In default mode `git diff -- *` is a read of what `*` lists, which holds a link
        // out of the project here: asked for that.)
        if command.contains("add") {
            cases.push(rules(case("allow", "Bash", command)));
        }
    }
    for command in [
        "git -C . pu[s]h",
        "git -c a=b pu[s]h",
        "git --no-pager pu[s]h",
        "git * origin main",
        "git -C * status push",
        "git -[C] x pu[s]h",
        "git [p\"]\"]ush",
        "shopt -s nullglob; git zzz* push",
        "git \"pu\"*",
    ] {
        cases.push(bypass("ask", push, command));
        cases.push(rules(case("ask", "Bash", command)));
    }
    // An option rule: `rm *` may be `rm -rf x` (a file named `-rf`), `rm *.tmp` may not.
    let rf = "Bash(rm -rf:*)";
    cases.push(bypass("ask", rf, "rm *"));
    cases.push(bypass("ask", rf, "rm -[r]f x"));
    cases.push(bypass("allow", rf, "rm *.tmp"));
    cases.push(bypass("allow", rf, "rm -f *.tmp"));
    // A wildcard rule's `*` may stand for several words: any glob that may be its word.
    cases.push(bypass("ask", "Bash(git * push)", "git x pu[s]h"));
    run_table(cases).await;
    // `git checkout -- *` writes the work tree (and `.git`, asked about in bypass mode for
    // that), but not for its glob.
    for c in [
        bypass("ask", push, "git checkout -- *"),
        rules(case("ask", "Bash", "git diff -- *")),
    ] {
        if let PermissionResult::Ask { message, .. } = run(&fx, &c).await {
            assert!(!message.contains("is a glob"), "{message}");
        }
    }
}

/// Found by review 39's fixer: a glob among a wrapper's own words (`nice -n * push`, with
/// files `5` and `git` there) is `nice -n 5 git push` to bash, but was read as `nice` running
/// `push`, so `Bash(git push:*)` was dodged in bypass mode. Such a glob may move where the
/// wrapped command starts, and be its name: it asks, as a globbed command name does, where
/// Bash deny or ask rules could be dodged. An assignment (`env X=* ls`) and a glob in the
/// wrapped command's own words are read as before.
#[tokio::test]
async fn a_glob_among_a_wrappers_words_asks() {
    let fx = Fixture::new();
    let dir = fx.proj.join("w");
    std::fs::create_dir_all(fx.proj.join("bin")).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("5"), "").unwrap();
    let git = fx.proj.join("bin/git");
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(&git, "#!/bin/sh\necho \"$*\" > \"$ARGS\"\n").unwrap();
    std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::copy(&git, dir.join("git")).unwrap();
    let args = fx.proj.join("args");
    let script = format!(
        "export LC_ALL=C ARGS='{}' PATH=\"$PWD:$PATH\"; nice -n * push origin",
        args.display()
    );
    real_bash(&script, &dir, &fx.home);
    assert_eq!(std::fs::read_to_string(&args).unwrap(), "push origin\n");
    let push = "Bash(git push:*)";
    let mut cases = Vec::new();
    for command in ["nice -n * push", "touch 5 git; nice -n * push"] {
        cases.push(bypass("ask", push, command));
    }
    // A `git push` written out is still denied.
    cases.push(bypass("deny", push, "timeout -s * 5 git push"));
    for command in [
        "nice -n 5 ls *",
        "sudo ls *",
        "timeout 5 ls *.rs",
        "env X=* ls",
    ] {
        cases.push(bypass("allow", push, command));
    }
    // No Bash deny or ask rule to dodge: read as before.
    cases.push(case("allow", "Bash", "nice -n * ls").mode("bypassPermissions"));
    run_table(cases).await;
    // A hook's `if` for the rule runs for it.
    assert!(hook_if_runs(&fx, push, "nice -n * push"));
    assert!(!hook_if_runs(&fx, push, "nice -n 5 ls *"));
}

/// Found by the plan-mode review: with the plans directory a symbolic link (kept in a
/// synced folder), Write to the plan file was refused with the generic "Plan mode is active:
/// Write would make changes", though the model had been told to write exactly that file.
/// The refusal now says why: the plans directory is a link, which plan mode does not write
/// through, and what to do.
#[tokio::test]
async fn a_linked_plans_directory_is_named_in_the_refusal() {
    use tool_core::PermissionMode;
    let fx = Fixture::new();
    let loaded =
        tool_perms::settings::load_permissions(&crate::common::sources(&fx, fx.proj.clone(), true));
    let mut permission = loaded.context.clone();
    permission.mode = PermissionMode::Plan;
    let ctx = ToolUseContext::new(&fx.proj)
        .with_home(Some(fx.home.clone()))
        .with_session_id("s39")
        .with_permission(permission);
    let plan = ctx.plan_file().expect("a plan file");
    let plans = plan.parent().unwrap().to_path_buf();
    let elsewhere = fx.out.join("synced-plans");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(plans.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &plans).unwrap();
    let input = json!({"file_path": plan.display().to_string(), "content": "# plan"});
    let got = loaded
        .engine()
        .decide(&crate::common::probe(&fx, "Write"), &input, &ctx)
        .await;
    match got {
        PermissionResult::Deny { message, .. } => {
            assert!(message.contains("symbolic link"), "{message}");
            assert!(message.contains(&plans.display().to_string()), "{message}");
        }
        other => panic!("expected deny, got {other:?}"),
    }
    // Another file in plan mode: the usual refusal.
    let input = json!({"file_path": fx.proj.join("x.md").display().to_string(), "content": "x"});
    let got = loaded
        .engine()
        .decide(&crate::common::probe(&fx, "Write"), &input, &ctx)
        .await;
    match got {
        PermissionResult::Deny { message, .. } => {
            assert!(message.contains("would make changes"), "{message}")
        }
        other => panic!("expected deny, got {other:?}"),
    }
}
