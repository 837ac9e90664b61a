//! Review 25 findings on the bash analysis, continued: GNU `parallel` and `xe` as command
//! runners, and the protected files `git config`, `git init`, `git clone`, `unzip -d` and
//! `split` write.

use crate::common::{Fixture, case, installed, real_bash, run_table, run_table_in};

// --- 3. parallel and xe run commands ----------------------------------------------------------

/// GNU parallel runs the words before `:::` as a command for each argument (or each line of
/// its input), and with no command runs the arguments themselves; xe runs its command like
/// xargs. Where they are installed, real runs delete the victims. A deny rule on `rm`
/// denies every such command in bypass mode, however it is written.
#[tokio::test]
async fn parallel_and_xe_commands_meet_deny_rules() {
    let fx = Fixture::new();
    let real = [
        ("parallel", "parallel rm ::: victim1", "victim1"),
        ("parallel", "echo victim2 | parallel rm", "victim2"),
        ("parallel", "parallel ::: 'rm victim3'", "victim3"),
        (
            "parallel",
            "parallel 'rm {}; echo gone' ::: victim4",
            "victim4",
        ),
        ("xe", "echo victim5 | xe rm", "victim5"),
        ("xe", "echo victim6 | xe -s 'rm \"$1\"'", "victim6"),
        ("xe", "xe -a rm -- victim7", "victim7"),
    ];
    for (program, command, victim) in real {
        if !installed(program) {
            eprintln!("{program} is not installed: not run");
            continue;
        }
        std::fs::write(fx.out.join(victim), "x").unwrap();
        real_bash(command, &fx.out, &fx.home);
        assert!(
            !fx.out.join(victim).exists(),
            "{command} did not delete {victim}"
        );
    }
    let rm = |command: &str| {
        case("deny", "Bash", command)
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"])
    };
    let mut cases: Vec<_> = real.iter().map(|(_, command, _)| rm(command)).collect();
    cases.extend(
        [
            "parallel -j2 rm -f {} ::: x",
            "parallel --will-cite -k rm ::: x",
            "parallel --jobs 4 'rm -rf {}' ::: x",
            "parallel -q rm ::: x",
            "ls | parallel --pipe rm",
            "parallel rm :::: list.txt",
            "echo x | xe -N2 rm",
            "echo x | xe -j 4 rm {}",
            "xe -A SEP rm SEP x",
            "find . | xargs parallel rm :::",
        ]
        .map(rm),
    );
    run_table_in(&fx, cases).await;
}

/// A command parallel or xe take from their input or arguments (parallel with no command,
/// arguments of several `:::` groups joined into a command line, the placeholder where the
/// command or its subcommand goes, a wrapper with no command after it, Perl code in a
/// replacement string) may be what a deny rule names: with Bash deny rules it asks even in
/// bypass mode. Where they are installed, real runs delete the victims. Without Bash deny or
/// ask rules, bypass mode allows them.
#[tokio::test]
async fn commands_parallel_and_xe_take_from_input_ask_with_deny_rules() {
    let fx = Fixture::new();
    // (What a deny rule sees written out among the arguments is denied.)
    let real = [
        ("parallel", "echo rm victim1 | parallel", "victim1", "ask"),
        ("parallel", "parallel ::: rm ::: victim2", "victim2", "deny"),
        ("parallel", "parallel {} victim3 ::: rm", "victim3", "ask"),
        (
            "parallel",
            "parallel env ::: rm ::: victim4",
            "victim4",
            "ask",
        ),
        ("xe", "echo rm | xe {} victim5", "victim5", "ask"),
        ("xe", "echo rm | xe -I% env % victim6", "victim6", "ask"),
    ];
    for (program, command, victim, _) in real {
        if !installed(program) {
            eprintln!("{program} is not installed: not run");
            continue;
        }
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
    let mut cases: Vec<_> = real
        .iter()
        .map(|(_, command, _, expect)| rm(expect, command))
        .collect();
    cases.extend([
        rm("ask", "parallel < commands.txt"),
        rm("ask", "parallel -a commands.txt"),
        rm("deny", "parallel -n2 ::: rm x"),
        push("ask", "parallel ::: git ::: push"),
        push("ask", "parallel -N2 ::: git push"),
        rm("ask", "parallel 'echo {= $_=`rm x` =}' ::: a"),
        rm(
            "ask",
            "parallel --rpl '{r} system(\"rm x\")' echo {r} ::: a",
        ),
        rm("ask", "parallel \"$cmd\" ::: x"),
        rm("ask", "echo rm | xe -p '*' %"),
        rm("ask", "parallel 'echo start; {} x' ::: rm"),
        push("ask", "parallel git ::: push"),
        push("ask", "echo push | parallel git"),
        push("ask", "echo push | xe git"),
        push("deny", "parallel git push ::: origin"),
        // Without Bash deny or ask rules, bypass mode allows them.
        case("allow", "Bash", "echo rm x | parallel").mode("bypassPermissions"),
        case("allow", "Bash", "echo rm | xe -I@ @ x").mode("bypassPermissions"),
    ]);
    run_table_in(&fx, cases).await;
}

/// Plain uses of parallel and xe are unchanged by deny rules that do not name what they run:
/// allowed in bypass mode (their commands and arguments are written out, or are data).
#[tokio::test]
async fn plain_parallel_and_xe_uses_stay_allowed() {
    let fx = Fixture::new();
    let bypass = |command: &str| {
        case("allow", "Bash", command)
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)", "Bash(git push:*)"])
    };
    run_table_in(
        &fx,
        [
            "parallel gzip ::: a.txt b.txt",
            "ls | parallel wc -l",
            "parallel -j4 --bar gzip -k {} {.}.gz ::: a.txt",
            "parallel 'gzip {} && echo ok' ::: a.txt",
            "parallel ::: 'echo a' 'echo b'",
            "parallel git log ::: a",
            "ls | xe wc -l",
            "ls | xe",
            "echo a | xe -s 'echo \"$1\"'",
            "ls | xe -N0 cat",
        ]
        .map(bypass)
        .to_vec(),
    )
    .await;
}

// --- 4. Protected files that git config, git init/clone, unzip and split write -----------------

/// The commands the analysis did not see as writes change git's protected files: real git,
/// unzip and split, in a real repository, write `.git/config` (`git config
/// core.hooksPath …`, also `-f .git/config`, `--file=`), `~/.gitconfig` (`--global`),
/// `.git/…` (`unzip -d .git`, `split … .git/hooks/pre-`, `git init .git`). The engine asks
/// about each even in bypass mode, as it does for a redirect to the file, when the setting
/// may make git run a program (a hook path, a pager, an alias, a template directory, a key
/// not known) or the file is named on the line; reading the configuration, and setting
/// `user.name`, are unchanged.
#[tokio::test]
async fn git_config_and_other_writes_to_protected_files_ask_in_bypass_mode() {
    let fx = Fixture::new();
    let repo = fx.out.join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("a.txt"), "one\ntwo\n").unwrap();
    let tools = installed("git");
    if tools {
        assert!(real_bash("git init -q .", &repo, &fx.home));
        let config = || std::fs::read_to_string(repo.join(".git/config")).unwrap();
        for (command, written) in [
            (
                "git config core.hooksPath /tmp/evil",
                "hooksPath = /tmp/evil",
            ),
            (
                "git config -f .git/config core.fsmonitor evil",
                "fsmonitor = evil",
            ),
            (
                "git config --file=.git/config core.pager evil1",
                "pager = evil1",
            ),
            ("cd src && git config core.editor evil2", "editor = evil2"),
        ] {
            assert!(real_bash(command, &repo, &fx.home), "{command} failed");
            assert!(config().contains(written), "{command}: {}", config());
        }
        assert!(real_bash(
            "git config --global core.pager evil",
            &repo,
            &fx.home
        ));
        let global = std::fs::read_to_string(fx.home.join(".gitconfig")).unwrap();
        assert!(global.contains("pager = evil"), "{global}");
        assert!(real_bash(
            "split -l1 a.txt .git/hooks/pre-",
            &repo,
            &fx.home
        ));
        assert!(repo.join(".git/hooks/pre-aa").exists());
        assert!(real_bash("git init -q .git", &repo, &fx.home));
        assert!(repo.join(".git/.git").is_dir());
        if installed("zip") && installed("unzip") {
            assert!(real_bash("zip -q a.zip a.txt", &repo, &fx.home));
            assert!(real_bash("unzip -q a.zip -d .git", &repo, &fx.home));
            assert!(repo.join(".git/a.txt").exists());
        }
        // Reading is no write.
        let before = config();
        assert!(real_bash(
            "git config --get core.hooksPath",
            &repo,
            &fx.home
        ));
        assert!(real_bash("git config --list", &repo, &fx.home));
        assert!(real_bash("git config core.hooksPath", &repo, &fx.home));
        assert_eq!(config(), before);
    } else {
        eprintln!("git is not installed: not run");
    }
    let bypass = |command: &str| case("ask", "Bash", command).mode("bypassPermissions");
    let mut cases: Vec<_> = [
        "git config core.hooksPath /tmp/evil",
        "git config -f .git/config core.fsmonitor evil",
        "git config --file=.git/config core.pager evil",
        "git config --file .git/config core.pager evil",
        "git config -f.git/config core.pager evil",
        "git config --global core.pager evil",
        "git config --global --add core.pager evil",
        "git config set core.hooksPath /tmp/evil",
        "git config --unset core.hooksPath",
        "git config --unset-all core.hooksPath",
        "git config --add core.hooksPath /tmp/evil",
        "git config --replace-all core.hooksPath /tmp/evil",
        "git config --rename-section core old",
        "git config --remove-section core",
        "git config --edit",
        "git config --local core.hooksPath /tmp/evil",
        "git --no-pager config core.hooksPath /tmp/evil",
        "git -C src config core.hooksPath /tmp/evil",
        "git --git-dir=.git config core.hooksPath /tmp/evil",
        "cd src && git config core.hooksPath /tmp/evil",
        "unzip a.zip -d .git",
        "unzip -d .git/hooks a.zip",
        "unzip -o -d.git a.zip",
        "split -l1 a.txt .git/hooks/pre-",
        "split -a1 -l1 a.txt $H/.bashr",
        "git init .git",
        "git init --bare .git",
        "git init --separate-git-dir .git/x newrepo",
        "git clone https://example.com/r.git .git",
        "git clone --depth 1 https://example.com/r.git .git/hooks",
        "git config init.templateDir /tmp/evil",
        "git config -f $H/.bashrc alias.x y",
        "git config alias.st '!rm -rf ~'",
        "git config \"$KEY\" x",
    ]
    .map(bypass)
    .to_vec();
    // Path rules see them too.
    cases.push(
        case("deny", "Bash", "git config --system core.pager evil")
            .mode("bypassPermissions")
            .deny(&["Edit(//etc/**)"]),
    );
    cases.push(
        case("deny", "Bash", "unzip a.zip -d docs")
            .mode("bypassPermissions")
            .deny(&["Edit(docs/**)"]),
    );
    // `split --filter` runs a shell command: what runs is computed.
    cases.push(
        case("ask", "Bash", "split --filter='rm -rf ~' a.txt")
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
    );
    // Reading the configuration, and writes elsewhere, stay as they were.
    let allow = |mode: &'static str, command: &str| case("allow", "Bash", command).mode(mode);
    cases.extend([
        allow("default", "git config --get user.name"),
        allow("default", "git config user.name"),
        allow("default", "git config --list"),
        allow("default", "git config -l"),
        allow("default", "git config --global --get user.email"),
        allow("bypassPermissions", "git config --get user.name"),
        allow("bypassPermissions", "git config get user.name"),
        allow("bypassPermissions", "git config user.name Someone"),
        allow(
            "bypassPermissions",
            "git config --global user.email me@example.com",
        ),
        allow("bypassPermissions", "git config --unset user.name"),
        allow("bypassPermissions", "unzip a.zip"),
        allow("bypassPermissions", "unzip -l a.zip"),
        allow("bypassPermissions", "unzip a.zip -d build"),
        allow("bypassPermissions", "split -l 100 big.txt parts-"),
        allow("bypassPermissions", "git init"),
        allow("bypassPermissions", "git init newrepo"),
        allow("bypassPermissions", "git clone https://example.com/r.git"),
        allow(
            "bypassPermissions",
            "git clone https://example.com/r.git vendor/r",
        ),
    ]);
    run_table_in(&fx, cases).await;
}

// --- review 25b: here-documents deep in substitutions, xargs input ------------------------------

/// The here-document check works out the substitutions around each here-document in one walk
/// of the tree: ten here-documents 8000 substitutions deep (minutes when each one walked up to
/// the root) are checked, and with a deny rule on the `rm` among them bypass mode asks (it
/// is nested deeper than the analysis follows).
#[tokio::test]
async fn heredocs_deep_in_substitutions_are_checked_in_one_walk() {
    let depth = 8000;
    let mut command = "$(".repeat(depth);
    for _ in 0..10 {
        command.push_str("cat <<A\nx\nA\n");
    }
    command.push_str("rm victim\n");
    command.push_str(&")".repeat(depth));
    let started = std::time::Instant::now();
    run_table(vec![
        case("ask", "Bash", &command)
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
    ])
    .await;
    eprintln!("checked in {:?}", started.elapsed());
}

/// A wrapper whose script xargs appends from its input (`env -S`, `flock FILE -c`, with
/// nothing written after the option) runs whatever the input says: real runs delete the
/// victims, and with a deny rule on `rm` bypass mode asks.
#[tokio::test]
async fn xargs_wrapper_script_from_input_asks_with_deny_rules() {
    let fx = Fixture::new();
    let lock = fx.out.join("lockfile");
    let lock = lock.display();
    let real = [
        ("echo rm victim8 | xargs env -S".to_string(), "victim8"),
        (
            format!("echo 'rm victim9' | xargs -0 flock {lock} -c"),
            "victim9",
        ),
    ];
    for (command, victim) in &real {
        std::fs::write(fx.out.join(victim), "x").unwrap();
        real_bash(command, &fx.out, &fx.home);
        assert!(
            !fx.out.join(victim).exists(),
            "{command} did not delete {victim}"
        );
    }
    let rm = |command: &str| {
        case("ask", "Bash", command)
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"])
    };
    let mut cases: Vec<_> = real.iter().map(|(command, _)| rm(command)).collect();
    cases.extend(
        [
            "echo rm x | xargs env -S",
            "echo rm x | xargs env --split-string",
            "echo 'rm x' | xargs flock /tmp/l -c",
            "echo 'rm x' | xargs flock -c",
        ]
        .map(rm),
    );
    run_table_in(&fx, cases).await;
}

/// Programs that only read by name can run a program when xargs appends options from its
/// input (`find -exec`, `rg --pre`, `sort --compress-program`): real runs of find and rg run
/// `touch`, and with a deny rule on `touch` bypass mode asks. `xargs grep`, `cat` and `wc`
/// are still allowed.
#[tokio::test]
async fn xargs_input_to_programs_that_run_programs_asks_with_deny_rules() {
    let fx = Fixture::new();
    let pre = fx.out.join("pre.sh");
    std::fs::write(&pre, "#!/bin/sh\ntouch pwned2\ncat \"$1\"\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&pre, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::write(fx.out.join("f"), "pat\n").unwrap();
    let real = [
        (
            "echo '-exec touch pwned1 ;' | xargs find .".to_string(),
            "pwned1",
            "find",
        ),
        (
            format!("echo '--pre={} pat f' | xargs rg", pre.display()),
            "pwned2",
            "rg",
        ),
    ];
    for (command, made, program) in &real {
        if !installed(program) {
            eprintln!("{program} is not installed: not run");
            continue;
        }
        real_bash(command, &fx.out, &fx.home);
        assert!(fx.out.join(made).exists(), "{command} did not make {made}");
    }
    let touch = |expect, command: &str| {
        case(expect, "Bash", command)
            .mode("bypassPermissions")
            .deny(&["Bash(touch:*)"])
    };
    let mut cases: Vec<_> = real
        .iter()
        .map(|(command, _, _)| touch("ask", command))
        .collect();
    cases.extend(
        [
            "echo x | xargs sort",
            "echo x | xargs fd",
            "echo x | xargs tar",
            "echo x | xargs parallel -j2 sort",
            "echo x | parallel rg pat",
            "echo x | xe sort",
            "echo x | xargs -I{} rg {} f",
        ]
        .map(|c| touch("ask", c)),
    );
    cases.extend(
        [
            "echo x | xargs grep pat",
            "echo x | xargs cat",
            "echo x | xargs wc -l",
            "find . -name '*.rs' | xargs grep -n foo",
        ]
        .map(|c| touch("allow", c)),
    );
    run_table_in(&fx, cases).await;
}

/// A subcommand find/xargs take from their input could be what a deny or ask rule for that
/// program names (`echo push | xargs git` and `Bash(git push:*)`): asked about even in bypass
/// mode. A rule for another program cannot be dodged that way, so everyday uses (`xargs
/// clang-format -i`, `xargs -n1 curl -O`) stay as the mode allows under `Bash(rm:*)`.
#[tokio::test]
async fn a_subcommand_from_input_asks_only_under_a_rule_for_that_program() {
    run_table(vec![
        case("ask", "Bash", "echo push | xargs git")
            .mode("bypassPermissions")
            .deny(&["Bash(git push:*)"]),
        case("ask", "Bash", "echo push | xargs -I{} git {}")
            .mode("bypassPermissions")
            .ask(&["Bash(git push:*)"]),
        case("ask", "Bash", "echo push | xargs git")
            .mode("bypassPermissions")
            .deny(&["Bash(* push:*)"]),
        // git's global options from input (`-c alias.x='!rm v'`) run any program.
        case("ask", "Bash", "echo push | xargs git")
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
        case("ask", "Bash", "echo x | xargs -I{} git {}")
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
        case("allow", "Bash", "echo a.txt | xargs git add")
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
        case(
            "allow",
            "Bash",
            "find . -name '*.c' | xargs clang-format -i",
        )
        .mode("bypassPermissions")
        .deny(&["Bash(rm:*)"]),
        case("allow", "Bash", "ls | xargs -n1 curl -O")
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
        case("allow", "Bash", "find . -exec rustfmt {} +")
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
        // Still: a command name from input, under any rule.
        case("ask", "Bash", "echo rm x | xargs env")
            .mode("bypassPermissions")
            .deny(&["Bash(git push:*)"]),
    ])
    .await;
}

/// Found by the second adversarial review: git configured to pipe `git archive` through a
/// program (`tar.<format>.command`) or to write its traces to any file (`trace2.*`), `sem`
/// (GNU parallel's `--semaphore`), `git grep -O` (runs a pager program it is given), and a
/// command with very many here-documents (their checks grew faster than the text: asked
/// about, quickly).
#[tokio::test]
async fn second_review_bypasses_are_closed() {
    let many: String =
        "cat <<E\"O\"F | ".repeat(200) + "cat\n" + &"EOF\n".repeat(200) + "rm victim\n";
    run_table(vec![
        case(
            "ask",
            "Bash",
            "git -c tar.tgz.command='rm victim; cat' archive --format=tgz HEAD",
        )
        .mode("bypassPermissions")
        .deny(&["Bash(rm:*)"]),
        case(
            "ask",
            "Bash",
            "git config tar.tgz.command 'rm victim; gzip -cn'",
        )
        .mode("bypassPermissions")
        .deny(&["Bash(rm:*)"]),
        case("ask", "Bash", "git config trace2.eventTarget ~/.bashrc")
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
        case("deny", "Bash", "sem rm victim; sem --wait")
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
        case(
            "ask",
            "Bash",
            "git grep --open-files-in-pager='rm victim' x",
        )
        .mode("bypassPermissions")
        .deny(&["Bash(rm:*)"]),
        case("ask", "Bash", "git grep -O'rm victim' x")
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
        case("ask", "Bash", &many)
            .mode("bypassPermissions")
            .deny(&["Bash(rm:*)"]),
        // Unchanged.
        case("allow", "Bash", "git config user.name x").mode("bypassPermissions"),
        case("allow", "Bash", "git grep -n foo"),
    ])
    .await;
}
