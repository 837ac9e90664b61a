//! Regression tests for faults found by the reliability work (docs/reliability.md), each
//! named after what it was.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, behavior, case, context, probe};
use serde_json::json;
use tool_perms::bash::parse::analyze;

/// Found by `fuzz_bash`: tree-sitter-bash reads `echo a<newline>\rm a` as one command (its
/// last word spans the line break), so `Bash(echo:*)` allowed it and `Bash(rm:*)` never saw
/// the `rm` that bash runs on the second line.
#[tokio::test]
async fn a_line_break_before_an_escaped_command_hid_it_from_the_rules() {
    let fx = Fixture::new();
    let c = case("x", "Bash", "")
        .allow(&["Bash(echo:*)"])
        .deny(&["Bash(rm:*)"]);
    let (engine, ctx) = context(&fx, &c);
    let bash = probe(&fx, "Bash");
    for cmd in ["echo a\n\\rm a", "echo a\n\\rm -rf /", "echo a\r\n\\curl x"] {
        let analysis = analyze(cmd);
        let r = engine.decide(&bash, &json!({"command": cmd}), &ctx).await;
        assert_ne!(
            behavior(&r),
            "allow",
            "{cmd:?} was allowed: {r:?} (analysis: {:?})",
            analysis.complex
        );
    }
    // A line break inside quotes is ordinary text, and plain multi-line scripts are
    // still split into their commands.
    let r = engine
        .decide(&bash, &json!({"command": "echo 'a\nb'"}), &ctx)
        .await;
    assert_eq!(behavior(&r), "allow", "{r:?}");
    let r = engine
        .decide(&bash, &json!({"command": "echo a\necho b"}), &ctx)
        .await;
    assert_eq!(behavior(&r), "allow", "{r:?}");
    // A line continuation joins the lines: this is `echo a \rm b`, which only prints.
    let r = engine
        .decide(&bash, &json!({"command": "echo a \\\n\\rm b"}), &ctx)
        .await;
    assert_eq!(behavior(&r), "allow", "{r:?}");
}

/// Found by review: a home directory spelled with `//` or a trailing `/.` (as `HOME` may
/// be) made `Read(~/.ssh/**)` panic inside the gitignore matcher ("path is expected to be
/// under the root") or silently miss; and a rule typed in Unicode NFD never matched the
/// NFC paths it is compared with.
#[tokio::test]
async fn odd_spellings_of_a_rule_root_or_name_missed_or_panicked() {
    use tool_core::{RuleSource, SourcedRule, ToolPermissionContext, ToolUseContext};
    use tool_perms::{PathRoots, PermissionEngine, probe::ProbeTool};
    let fx = Fixture::new();
    let key = fx.home.join(".ssh/id_rsa");
    let parent = fx.home.parent().unwrap().display().to_string();
    for home in [
        format!("{}/.", fx.home.display()),
        format!("{parent}//home"),
        format!("{parent}/./home/"),
    ] {
        let home = std::path::PathBuf::from(home);
        let perm = ToolPermissionContext {
            deny: vec![SourcedRule {
                source: RuleSource::UserSettings,
                rule: "Read(~/.ssh/**)".to_owned(),
            }],
            ..ToolPermissionContext::default()
        };
        let roots = PathRoots {
            home: Some(home.clone()),
            ..PathRoots::for_cwd(&fx.proj)
        };
        let engine = PermissionEngine::new(&perm, roots).unwrap();
        let ctx = ToolUseContext::new(&fx.proj)
            .with_home(Some(home.clone()))
            .with_permission(perm);
        let read = ProbeTool::new("Read", &fx.proj, Some(home.clone()));
        let r = engine.decide(&read, &json!({"file_path": key}), &ctx).await;
        assert_eq!(behavior(&r), "deny", "HOME={}: {r:?}", home.display());
    }

    // NFD rule, NFD file name on disk.
    let nfd = "cafe\u{301}.txt";
    std::fs::write(fx.proj.join(nfd), "x").unwrap();
    let c = case("x", "Read", "").deny(&[&format!("Read({nfd})")]);
    let (engine, ctx) = context(&fx, &c);
    for (tool, input) in [
        ("Read", json!({"file_path": fx.proj.join(nfd)})),
        ("Bash", json!({"command": format!("cat {nfd}")})),
    ] {
        let r = engine.decide(&probe(&fx, tool), &input, &ctx).await;
        assert_eq!(behavior(&r), "deny", "{tool}: {r:?}");
    }
}

/// Found by review: a symlink whose target does not exist yet was checked as itself (a file
/// inside the project), yet `>`, `touch`, `cp` and the Write tool follow it and create the
/// target: `ln -s ~/.ssh/authorized_keys dl` in a cloned repository, then `echo key >> dl`
/// in acceptEdits mode, wrote past `Edit(~/.ssh/**)`.
#[tokio::test]
async fn a_dangling_symlink_is_checked_as_its_target() {
    let fx = Fixture::new();
    std::os::unix::fs::symlink(fx.home.join(".ssh/authorized_keys"), fx.proj.join("dl")).unwrap();
    // Through a relative link, and a link to a directory that does not exist.
    std::os::unix::fs::symlink("../home/.ssh/new", fx.proj.join("rel")).unwrap();
    std::os::unix::fs::symlink(fx.home.join(".ssh/sub"), fx.proj.join("dir")).unwrap();
    let c = case("x", "Bash", "")
        .deny(&["Edit(~/.ssh/**)"])
        .mode("acceptEdits");
    let (engine, ctx) = context(&fx, &c);
    for (tool, input) in [
        ("Bash", json!({"command": "echo key >> dl"})),
        ("Bash", json!({"command": "touch dl"})),
        ("Bash", json!({"command": "cp README.md dl"})),
        ("Bash", json!({"command": "echo key > rel"})),
        ("Bash", json!({"command": "mkdir -p dir/x"})),
        (
            "Write",
            json!({"file_path": fx.proj.join("dl"), "content": "key"}),
        ),
    ] {
        let r = engine.decide(&probe(&fx, tool), &input, &ctx).await;
        assert_eq!(behavior(&r), "deny", "{tool} {input}: {r:?}");
    }
    // With no rule, a target outside the working directories is asked about.
    std::os::unix::fs::symlink(fx.out.join("new.txt"), fx.proj.join("out")).unwrap();
    let c = case("x", "Bash", "").mode("acceptEdits");
    let (engine, ctx) = context(&fx, &c);
    let r = engine
        .decide(
            &probe(&fx, "Bash"),
            &json!({"command": "echo x > out"}),
            &ctx,
        )
        .await;
    assert_eq!(behavior(&r), "ask", "{r:?}");
    let r = engine
        .decide(
            &probe(&fx, "Bash"),
            &json!({"command": "echo x > inside.txt"}),
            &ctx,
        )
        .await;
    assert_eq!(behavior(&r), "allow", "{r:?}");
}

/// Found by review: a symlink to `/proc/self/cwd` (planted in a cloned repository) was
/// resolved in the engine's own process, naming the engine's directory instead of the
/// shell's.
#[tokio::test]
async fn a_symlink_into_proc_cannot_be_checked() {
    let fx = Fixture::new();
    std::os::unix::fs::symlink("/proc/self/cwd", fx.proj.join("here")).unwrap();
    let c = case("x", "Bash", "")
        .deny(&["Read(./src/sub/**)"])
        .mode("bypassPermissions");
    let (engine, ctx) = context(&fx, &c);
    for cmd in [
        "cd src && cat ../here/sub/.env",
        "cd src && cat < ../here/sub/.env",
    ] {
        let r = engine
            .decide(&probe(&fx, "Bash"), &json!({"command": cmd}), &ctx)
            .await;
        assert_eq!(behavior(&r), "ask", "{cmd}: {r:?}");
    }
}

/// Found by the black-box review of Bash rules: options between a program and its
/// subcommand (`git --no-pager push`), a brace list (`git {push,origin} master`, `r{m,} x`)
/// and a glob in the command name got past deny and ask rules; a computed command or
/// script (`$X`, `eval "$y"`, a shell reading stdin) ran in bypass mode despite them; and a
/// computed path (`"$HOME/.bashrc"`, `rm -rf "$HOME"`) skipped the bypass-proof checks.
#[tokio::test]
async fn spellings_that_hid_a_command_or_path_from_the_rules() {
    let rules = case("x", "Bash", "")
        .mode("bypassPermissions")
        .allow(&["Bash(git:*)"])
        .deny(&[
            "Bash(git push:*)",
            "Bash(rm:*)",
            "Bash(kubectl delete:*)",
            "Bash(cargo publish:*)",
        ]);
    let none = case("x", "Bash", "").mode("bypassPermissions");
    let fx = Fixture::new();
    let bash = probe(&fx, "Bash");
    let decide = |c: &common::Case, cmd: &'static str| {
        let (engine, ctx) = context(&fx, c);
        let bash = bash.clone();
        async move {
            let r = engine.decide(&bash, &json!({"command": cmd}), &ctx).await;
            (behavior(&r).to_owned(), format!("{r:?}"))
        }
    };
    for (c, cmd, expect) in [
        (&rules, "git --no-pager push origin main", "deny"),
        (&rules, "git -C . push", "deny"),
        (&rules, "git -c x=y push", "deny"),
        (&rules, "kubectl -n prod delete pod x", "deny"),
        (&rules, "cargo +nightly publish", "deny"),
        (&rules, "git {push,origin} master", "deny"),
        (&rules, "r{m,} -rf x", "deny"),
        (&rules, "/bin/r[m] x", "ask"),
        (&rules, "$X -rf x", "ask"),
        (&rules, "eval \"$y\"", "ask"),
        (&rules, "bash <<'EOF'\nrm x\nEOF", "ask"),
        (&rules, "echo 'rm x' | sh", "ask"),
        (&rules, "bash -s < script.sh", "ask"),
        (&rules, "bash -c \"$Y\"", "ask"),
        (&rules, "sh -ec \"$Y\"", "ask"),
        (&rules, "command $X", "ask"),
        (&rules, "sudo $X", "ask"),
        (
            &rules,
            "git -c a=1 -c b=2 -c c=3 -c d=4 --no-pager push",
            "deny",
        ),
        (&rules, "bash --version", "allow"),
        // git's own option table: `log` is no value of `--no-pager`.
        (&rules, "git --no-pager log --grep push", "allow"),
        (
            &rules,
            "git -C \"$(git rev-parse --show-toplevel)\" push",
            "deny",
        ),
        (&rules, "git --attr-source HEAD push", "deny"),
        (&rules, "git --unknown-flag push", "deny"),
        (&rules, "echo 'rm -rf ~' | xargs -0 sh -c", "ask"),
        (&rules, "{r,}m -rf x", "ask"),
        (&rules, "sudo /bin/r? -rf ~", "ask"),
        (&rules, "./target/release/app* --help", "ask"),
        // A sourced file is a script as `bash f` runs one: no computed command.
        (&rules, "source .venv/bin/activate && pytest", "allow"),
        (&rules, "git -- push", "deny"),
        (&rules, "source /dev/stdin <<< 'rm x'", "ask"),
        (&rules, ". <(echo rm x)", "ask"),
        (&rules, "source \"$f\"", "ask"),
        (&rules, "bash -- \"$y\"", "ask"),
        (&rules, "bash /proc/self/fd/0 < f", "ask"),
        (&rules, "git -C sub -- push", "deny"),
        (&rules, "git -c alias.p=push p", "ask"),
        (&rules, "git -c core.pager='rm x' log", "ask"),
        (&rules, "git status", "allow"),
        // Settings that run nothing else, and values of options that cannot be `-c`.
        (&rules, "git -c core.pager=cat log", "allow"),
        (&rules, "git -c diff.noprefix=true diff", "allow"),
        (&rules, "git --git-dir=\"$D\" log", "allow"),
        (&rules, "GIT_PAGER=cat git log", "allow"),
        (
            &rules,
            "git -c hook.x.command='rm -rf ~' commit -m x",
            "ask",
        ),
        (&rules, "ls | xargs git -c alias.p=push p", "ask"),
        (&rules, "GIT_PAGER='rm -rf ~' git log", "ask"),
        (
            &rules,
            "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push git p",
            "ask",
        ),
        // A lone brace is a group's; one in quotes or an expansion is no brace list.
        (&rules, "time { make; }", "allow"),
        (&rules, "watch 'docker ps --format \"{{.Names}}\"'", "allow"),
        // bash reads `{rm,-rf,~}` as `rm -rf ~`; the parser as a broken group.
        (&rules, "{rm,-rf,~}", "ask"),
        // Not hidden: a subcommand that is no option's value, variables that run nothing.
        (&rules, "git log --grep push", "allow"),
        (&rules, "export A=$B; ls", "allow"),
        (&rules, "bash script.sh", "allow"),
        // Without rules, bypass mode runs what it cannot read...
        (&none, "$X -rf x", "allow"),
        (&none, "rm -rf \"$BUILD/out\"", "allow"),
        // ...but not past its own safety checks.
        (&none, "r{m,} -rf ~", "ask"),
        (&none, "nohup r{m,} -rf ~", "ask"),
        (&none, "{rm,-rf} ~", "ask"),
        (&none, "{rm,-rf,~}", "ask"),
        (&none, "x; {rm,-rf,/}", "ask"),
        (&none, "./target/release/app* --help", "allow"),
        (&none, "${CC:-gcc} -o x x.c", "allow"),
        // A script not in sight, without rules: bypass mode runs it, as before.
        (&none, "bash \"$SCRIPT\"", "allow"),
        (&none, "rm -rf \"${HOME:?}\"", "ask"),
        (&none, "rm -rf \"$HOME/..\"", "ask"),
        (&none, "rm -rf \"$(pwd -P)\"", "ask"),
        (&none, "rm -rf \"$BUILD_DIR\"/*", "ask"),
        // Another variable, empty, leaves `rm -rf ''` (an error): not the home.
        (&none, "rm -rf \"$BUILD_DIR\"", "allow"),
        (&none, "rm -rf \"$tmp\"", "allow"),
        (&none, "find ~ -delete", "ask"),
        (&none, "find \"$HOME\" -delete", "ask"),
        (&none, "find . -delete", "ask"),
        (&none, "find ~ -mindepth 1 -delete", "ask"),
        (&none, "rm -rf ~+", "ask"),
        (&none, "rm -rf $X/*/", "ask"),
        (&none, "find . -name '*.tmp' -delete", "allow"),
        (&none, "find build -delete", "allow"),
        (&none, "echo x >> \"$HOME/.bashrc\"", "ask"),
        (&none, "cp a \"$HOME/.ssh/authorized_keys\"", "ask"),
        (&none, "rm -rf \"$HOME\"", "ask"),
        (&none, "rm -rf \"$PWD\"/*", "ask"),
        (&none, "rm -r \"${HOME}\"", "ask"),
        // `rmdir` removes an empty directory only, and `rm` without `-r` no directory.
        (&none, "rmdir \"$PWD\"", "allow"),
        (&none, "rm \"$HOME\"", "allow"),
        (&none, "rm -rf $(pwd)", "ask"),
    ] {
        let (got, r) = decide(c, cmd).await;
        assert_eq!(got, expect, "{cmd:?}: {r}");
    }
}

/// Found by the same review: `git help -w` opens a browser and `git config edit` an editor,
/// yet both were read-only.
#[test]
fn git_help_in_a_browser_and_config_edit_are_not_read_only() {
    use tool_perms::bash::is_read_only_command;
    for cmd in [
        "git help -w log",
        "git help --web log",
        "git help -i log",
        // Git takes a long option abbreviated.
        "git help --we log",
        "git help --in log",
        "git config edit",
    ] {
        assert!(!is_read_only_command(cmd), "{cmd}");
    }
    for cmd in [
        "git help log",
        "git config user.name",
        "git config list",
        "git config get user.name",
    ] {
        assert!(is_read_only_command(cmd), "{cmd}");
    }
}

/// A third review of the Bash rules: commands judged read-only or allowed that removed a
/// device, wrote a file, or printed a Read-denied one; and plainly harmless ones asked.
#[tokio::test]
async fn bash_rules_third_review() {
    let fx = Fixture::new();
    // A link inside `src` to a denied file: `grep -r` and `rg` without `-L` do not follow it.
    std::os::unix::fs::symlink(fx.proj.join("secrets/key.pem"), fx.proj.join("src/kl")).unwrap();
    std::fs::write(fx.home.join(".gitconfig"), "[user]\n\tname = x\n").unwrap();
    let secrets = ["Read(./secrets/**)"];
    let cases = vec![
        // acceptEdits may write to `/dev/null`, not remove, move or link its entry.
        case("ask", "Bash", "rm /dev/null").mode("acceptEdits"),
        case("ask", "Bash", "rm -rf /dev/null").mode("acceptEdits"),
        case("ask", "Bash", "mv src/main.rs /dev/null").mode("acceptEdits"),
        case("ask", "Bash", "mv /dev/null src/x").mode("acceptEdits"),
        case("ask", "Bash", "ln -sf src/main.rs /dev/tty").mode("acceptEdits"),
        case("allow", "Bash", "ls > /dev/null").mode("acceptEdits"),
        case("allow", "Bash", "cp src/main.rs /dev/null").mode("acceptEdits"),
        // xxd's second operand is its output, even when it starts with `-`.
        case("deny", "Bash", "cd secrets && xxd ../src/main.rs -x").deny(&["Edit(./secrets/**)"]),
        case("ask", "Bash", "xxd src/main.rs -out"),
        case("allow", "Bash", "xxd src/main.rs"),
        case("allow", "Bash", "xxd -l 16 src/main.rs"),
        // jq takes no abbreviated options: `--slurp` is not `--slurpfile NAME FILE`.
        case("deny", "Bash", "jq --slurp -R . secrets/key.pem").deny(&secrets),
        case("deny", "Bash", "jq --slurp --raw-input . secrets/key.pem").deny(&secrets),
        // `git show` of a bare object id may print a blob, whatever the patch options.
        case("ask", "Bash", "git show -s 0123abcd4567").deny(&secrets),
        case("ask", "Bash", "git show --stat 0123abcd4567").deny(&secrets),
        case("allow", "Bash", "git show -s HEAD").deny(&secrets),
        // `--output=FILE` of git's diff family writes FILE.
        case("deny", "Bash", "git log --output=secrets/x")
            .allow(&["Bash(git log:*)"])
            .deny(&["Edit(./secrets/**)"]),
        case("deny", "Bash", "git diff --output secrets/y HEAD")
            .allow(&["Bash(git diff:*)"])
            .deny(&["Edit(./secrets/**)"]),
        case("deny", "Bash", "git show --output=secrets/z HEAD")
            .allow(&["Bash(git show:*)"])
            .deny(&["Edit(./secrets/**)"]),
        // Git's config printers read the config files.
        case("deny", "Bash", "git config --get user.name").deny(&["Read(./.git/config)"]),
        case("deny", "Bash", "git remote get-url origin").deny(&["Read(./.git/config)"]),
        case("deny", "Bash", "git remote -v").deny(&["Read(./.git/config)"]),
        case("deny", "Bash", "git var -l").deny(&["Read(./.git/config)"]),
        case("deny", "Bash", "git config --global --list").deny(&["Read(~/.gitconfig)"]),
        case("allow", "Bash", "git config --get user.name"),
        case("allow", "Bash", "git status").deny(&["Read(./.git/config)"]),
        // A link in the tree is not followed by `grep -r` or by `rg` without `-L`.
        case("allow", "Bash", "grep -rn hello src").deny(&secrets),
        case("allow", "Bash", "rg hello src").deny(&secrets),
        case("deny", "Bash", "rg -L hello src").deny(&secrets),
        case("deny", "Bash", "grep -R hello src").deny(&secrets),
        // Harmless commands that asked.
        case("allow", "Bash", "date -d yesterday"),
        case("allow", "Bash", "date -d '2020-01-01' +%s"),
        case("allow", "Bash", "git branch --contains HEAD"),
        case("allow", "Bash", "git branch --merged main"),
        case("allow", "Bash", "git tag --contains HEAD"),
        case("allow", "Bash", "git tag --sort -creatordate"),
        case("allow", "Bash", "uniq -c -f 1 src/main.rs"),
    ];
    common::run_table_in(&fx, cases).await;
}

/// The adversarial review of the third review's fixes: the new allowances and checks
/// bypassed.
#[tokio::test]
async fn bash_rules_third_review_bypasses() {
    let fx = Fixture::new();
    let git = ["Bash(git:*)"];
    let config = ["Read(./.git/config)"];
    let secrets = ["Read(./secrets/**)"];
    let cases = vec![
        // `-color` is xxd's `-c olor`: the next two words are its input and output.
        case("deny", "Bash", "xxd -r -p -color src/main.rs README.md").deny(&["Edit(./README.md)"]),
        case("ask", "Bash", "xxd -r -p -color src/main.rs README.md"),
        // git config printed in spellings the check did not read.
        case("ask", "Bash", "git config -lz")
            .allow(&git)
            .deny(&config),
        case("deny", "Bash", "git remote -vv")
            .allow(&git)
            .deny(&config),
        case("deny", "Bash", "git ls-remote --get-url")
            .allow(&git)
            .deny(&config),
        case("deny", "Bash", "git config --default x remote.origin.url")
            .allow(&git)
            .deny(&config),
        case("deny", "Bash", "git config --worktree -l")
            .allow(&git)
            .deny(&config),
        case("ask", "Bash", "git config -fsecrets/key.pem -l")
            .allow(&git)
            .deny(&secrets),
        case("ask", "Bash", "git config --fil secrets/key.pem -l")
            .allow(&git)
            .deny(&secrets),
        case("deny", "Bash", "git config -f secrets/key.pem remote.x.url")
            .allow(&git)
            .deny(&secrets),
        case(
            "ask",
            "Bash",
            "git -C ../elsewhere config --get remote.o.url",
        )
        .allow(&git)
        .deny(&config),
        case("ask", "Bash", "git --git-dir=/tmp/x remote -v")
            .allow(&git)
            .deny(&config),
        case(
            "ask",
            "Bash",
            "GIT_CONFIG_GLOBAL=secrets/key.pem git config --global -l",
        )
        .allow(&git)
        .deny(&secrets),
        case("ask", "Bash", "git config --includes --file inc.cfg -l")
            .allow(&git)
            .deny(&secrets),
        case("ask", "Bash", "git config --blob HEAD:creds.cfg -l")
            .allow(&git)
            .deny(&secrets),
        // A default file that is not there is not read.
        case("allow", "Bash", "git remote -v").deny(&["Read(~/.config/git/config)"]),
        // A peeled object id may still be a blob.
        case("ask", "Bash", "git show -s 0123abcd^{}").deny(&secrets),
        case("ask", "Bash", "git show --no-patch 0123abcd^{blob}").deny(&secrets),
        // cp replacing or re-moding /dev/null.
        case(
            "ask",
            "Bash",
            "cp --remove-destination src/main.rs /dev/null",
        )
        .mode("acceptEdits"),
        case("ask", "Bash", "cp -p src/main.rs /dev/null").mode("acceptEdits"),
        case("ask", "Bash", "cp -a src/main.rs /dev/null").mode("acceptEdits"),
        // A ripgrep configuration may add `--follow`.
        case("deny", "Bash", "RIPGREP_CONFIG_PATH=rgrc rg hello .").deny(&["Read(//$O/**)"]),
        // `--output` of the other formatting commands, and format-patch's directory.
        case("deny", "Bash", "git reflog -1 --output=README.md")
            .allow(&git)
            .deny(&["Edit(./README.md)"]),
        case("deny", "Bash", "git rev-list -1 --output=README.md HEAD")
            .allow(&git)
            .deny(&["Edit(./README.md)"]),
        case("deny", "Bash", "git shortlog --output=README.md")
            .allow(&git)
            .deny(&["Edit(./README.md)"]),
        case("deny", "Bash", "git format-patch -o docs -1")
            .allow(&git)
            .deny(&["Edit(./docs/**)"]),
        case(
            "deny",
            "Bash",
            "git format-patch --output-directory=docs -1",
        )
        .allow(&git)
        .deny(&["Edit(./docs/**)"]),
    ];
    common::run_table_in(&fx, cases).await;
}

/// The fourth review of the path rules: a deny rule that ignored case for ASCII only
/// (`Read(ÄPFEL.txt)` let `äpfel.txt` through), one naming its directory itself
/// (`Read(./)`) that did not cover that directory (a search of it answered "no files"),
/// and `Read(secrets/)` that held below the cwd only, where every other spelling of a name
/// holds anywhere.
#[tokio::test]
async fn path_rules_fourth_review() {
    let fx = Fixture::new();
    std::fs::write(fx.proj.join("äpfel.txt"), "x").unwrap();
    std::fs::create_dir_all(fx.out.join("secrets")).unwrap();
    std::fs::write(fx.out.join("secrets/x"), "s").unwrap();
    let cases = vec![
        case("deny", "Read", "$P/äpfel.txt").deny(&["Read(ÄPFEL.txt)"]),
        case("deny", "Read", "$P/äpfel.txt").deny(&["Read(Äpfel.TXT)"]),
        // A final sigma folds as any other (`ΟΔΟΣ*` against `ΟΔΟΣΑ.txt`).
        case("deny", "Read", "$P/ΟΔΟΣΑ.txt").deny(&["Read(ΟΔΟΣ*)"]),
        case("deny", "Bash", "cat äpfel.txt").deny(&["Read(ÄPFEL.txt)"]),
        case("ask", "Read", "$P/äpfel.txt")
            .ask(&["Read(./ÄPFEL.*)"])
            .mode("bypassPermissions"),
        // Another letter is not the same name.
        case("allow", "Read", "$P/äpfel.txt").deny(&["Read(APFEL.txt)"]),
        // The directory a rule names itself, searched.
        case("deny", "Grep", "$P").deny(&["Read(./)"]),
        case("deny", "Glob", "$P").deny(&["Read(.)"]),
        case("deny", "Grep", "$P").deny(&["Read(/)"]),
        case("deny", "Bash", "ls .").deny(&["Read(./)"]),
        // Without an operand, a lister lists the cwd.
        case("deny", "Bash", "ls").deny(&["Read(./)"]),
        case("deny", "Bash", "ls -la").deny(&["Read(./)"]),
        case("deny", "Bash", "find -name a.txt").deny(&["Read(./)"]),
        case("deny", "Bash", "du -a").deny(&["Read(./)"]),
        case("allow", "Bash", "ls"),
        case("allow", "Bash", "find -name main.rs"),
        case("deny", "Bash", "cat src/main.rs").deny(&["Read(./)"]),
        case("deny", "Read", "$P/src/main.rs").deny(&["Read(./)"]),
        // Written with `/**`, as `dir/**` covers `dir` (found by the adversarial review).
        case("deny", "Grep", "$P").deny(&["Read(/**)"]),
        case("deny", "Bash", "ls -R").deny(&["Read(/**)"]),
        case("deny", "Bash", "ls $H")
            .deny(&["Read(~/**)"])
            .mode("bypassPermissions"),
        case("deny", "Bash", "ls /")
            .deny(&["Read(//**)"])
            .mode("bypassPermissions"),
        // An allow rule naming a directory itself still matches nothing.
        case("allow", "Grep", "$P").allow(&["Read(./)"]),
        // A name with a trailing slash, at any depth, anywhere.
        case("deny", "Read", "$O/secrets/x").deny(&["Read(secrets/)"]),
        case("deny", "Read", "$P/secrets/key.pem").deny(&["Read(secrets/)"]),
        case("allow", "Read", "$P/src/main.rs").deny(&["Read(secrets/)"]),
    ];
    common::run_table_in(&fx, cases).await;
}
