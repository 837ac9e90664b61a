//! Session 30 on Bash in bypass mode: what `find` finds, reaching a program that takes it
//! away by other spellings than `| xargs` (a command substitution as operands, a `for` loop
//! over one, a `while read` loop fed by a process substitution or a here-string, a shell
//! script `find -exec` runs), is checked as the `find … -exec PROG {} +` it amounts to; so
//! is what `find` finds reaching a program that overwrites it (`sed -i`, `perl -i`, `cp
//! /dev/null`, `dd of=`, `tee`); and the safety message says what the program does to it
//! (deletes, moves away, empties, overwrites).

use crate::common::{Case, Fixture, case, installed, real_bash, run, run_table_in};
use tool_core::PermissionResult;

/// A fixture whose repository has a branch `main` (`.git/refs/heads/main`) besides its
/// `.git/config`: `-name main` and `-name config` reach a protected file, `-name '*.pyc'`
/// does not.
fn repository() -> Fixture {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.proj.join(".git/refs/heads")).unwrap();
    std::fs::write(fx.proj.join(".git/refs/heads/main"), "0123").unwrap();
    std::fs::write(fx.proj.join("a.pyc"), "x").unwrap();
    std::fs::write(fx.proj.join("a.log"), "x").unwrap();
    std::fs::write(fx.proj.join("notes.txt"), "a").unwrap();
    fx
}

fn bypass(expect: &'static str, command: &str) -> Case {
    case(expect, "Bash", command).mode("bypassPermissions")
}

/// `rm $(find …)` (in backticks, quoted, through a stage that only orders lines, with
/// `unlink` or `truncate`) takes away what the find finds, as `find … -exec rm {} +` would:
/// a branch's ref asks in bypass mode, `*.pyc` files do not, and neither does the everyday
/// `rm $(ls *.log)` (`ls` without `-a` prints no hidden name, and every protected name but
/// `config.fish` is hidden; its operands are checked as the taker's).
#[tokio::test]
async fn a_command_substitution_of_find_as_operands_is_checked_as_find_exec() {
    let fx = repository();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "rm $(find . -name main)"),
            bypass("ask", "rm -f `find . -name main`"),
            bypass("ask", "rm \"$(find . -name main)\""),
            bypass("ask", "rm $(find . -name main | sort)"),
            bypass(
                "ask",
                "rm -f -- $(find . -name main 2>/dev/null | grep -v zzz)",
            ),
            bypass("ask", "unlink $(find . -name main)"),
            bypass("ask", "truncate -s0 $(find . -name main)"),
            bypass("ask", "rm $(true) $(find . -name main)"),
            bypass("ask", "sudo rm $(find . -name main)"),
            bypass("allow", "rm $(find . -name '*.pyc')"),
            bypass("allow", "rm -f $(find . -name '*.pyc' | sort)"),
            bypass("allow", "rm $(ls *.log)"),
            bypass("allow", "cat $(find . -name main)"),
            bypass("allow", "echo $(find . -name main)"),
        ],
    )
    .await;
}

/// What `ls` prints is the operands it is given that are no directories (`ls .git/config`,
/// `ls -d .git`, `ls *.log`) and the names a directory it lists holds, hidden ones only with
/// `-a`/`-A`: a program fed by it takes away those operands, checked as if given them (`rm
/// $(ls .git/config)` is `rm .git/config`), and a protected name a listed directory holds
/// and shows (`.bashrc` for `ls -a ~`, `config.fish` even without `-a`) asks. The everyday
/// `rm $(ls *.log)`, `ls ~ | xargs rm` and `ls src | xargs rm` stay allowed.
#[tokio::test]
async fn what_ls_lists_is_checked_as_the_operands_and_names_it_prints() {
    let fx = repository();
    std::fs::create_dir_all(fx.home.join(".config/fish")).unwrap();
    std::fs::write(fx.home.join(".config/fish/config.fish"), "set x").unwrap();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "rm $(ls .git/config)"),
            bypass("ask", "rm -r $(ls -d .git)"),
            bypass("ask", "ls .git/refs/heads/main | xargs truncate -s0"),
            bypass("ask", "for f in $(ls -a ~); do rm \"$f\"; done"),
            bypass("ask", "ls -A ~ | xargs rm -f"),
            bypass("ask", "cd ~ && rm $(ls -a)"),
            bypass("ask", "cd ~/.config/fish && rm $(ls)"),
            bypass("allow", "rm $(ls *.log)"),
            bypass("allow", "for f in $(ls *.log); do rm \"$f\"; done"),
            bypass("allow", "ls ~ | xargs rm"),
            bypass("allow", "rm $(ls src)"),
            bypass("allow", "ls -a src | xargs rm"),
        ],
    )
    .await;
}

/// A `for` loop over a substitution of find (`for f in $(find . -name main); do rm "$f";
/// done`) takes away, through its variable, what the find finds: checked as `find … -exec
/// rm {} +`, as the `while read` loop a pipeline feeds is. A loop over `*.pyc` files, or
/// over `ls *.log`, stays allowed.
#[tokio::test]
async fn a_for_loop_over_a_substitution_of_find_is_checked_as_find_exec() {
    let fx = repository();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "for f in $(find . -name main); do rm \"$f\"; done"),
            bypass("ask", "for f in `find . -name main`; do rm -f $f; done"),
            bypass(
                "ask",
                "for f in $(find . -name main | sort); do unlink \"${f}\"; done",
            ),
            bypass(
                "ask",
                "for f in \"$(find . -name main)\"; do rm \"$f\"; done",
            ),
            bypass(
                "ask",
                "for f in $(find . -name main); do echo \"$f\"; rm -f -- \"$f\"; done",
            ),
            bypass(
                "allow",
                "for f in $(find . -name '*.pyc'); do rm \"$f\"; done",
            ),
            bypass("allow", "for f in $(ls *.log); do rm \"$f\"; done"),
            bypass(
                "allow",
                "for f in $(find . -name main); do cat \"$f\"; done",
            ),
        ],
    )
    .await;
}

/// A `while read` loop (or `xargs`) whose input is a process substitution of find (`done <
/// <(find …)`) or a here-string of one (`<<< "$(find …)"`) takes away what the find finds:
/// checked as `find … -exec rm {} +`. `*.pyc` files stay allowed, and a loop reading a
/// file is as before.
#[tokio::test]
async fn a_loop_reading_a_substitution_of_find_is_checked_as_find_exec() {
    let fx = repository();
    run_table_in(
        &fx,
        vec![
            bypass(
                "ask",
                "while read f; do rm \"$f\"; done < <(find . -name main)",
            ),
            bypass(
                "ask",
                "while IFS= read -r f; do rm -f \"$f\"; done <<< \"$(find . -name main)\"",
            ),
            bypass(
                "ask",
                "while read f; do rm \"$f\"; done <<< $(find . -name main | sort)",
            ),
            bypass("ask", "xargs rm < <(find . -name main)"),
            bypass("ask", "xargs rm <<< \"$(find . -name main)\""),
            bypass(
                "ask",
                "while read f; do rm \"$f\"; done < <(find . -name main) 2>/dev/null",
            ),
            bypass(
                "allow",
                "while read f; do rm \"$f\"; done < <(find . -name '*.pyc')",
            ),
            bypass("allow", "xargs rm < <(find . -name '*.pyc')"),
            bypass("allow", "while read f; do rm \"$f\"; done < list.txt"),
        ],
    )
    .await;
}

/// A shell script `find -exec` (or `xargs`) runs on what find finds, whose taking-away
/// command takes its positional parameters or its loop variable (`-exec sh -c 'rm "$1"' _
/// {} \;`, `-exec bash -c 'for f; do rm "$f"; done' _ {} +`), takes away what find finds:
/// checked as `-exec rm {}`. A script that only prints, or a find of `*.pyc` files, stays
/// allowed.
#[tokio::test]
async fn a_shell_script_find_runs_on_what_it_finds_is_checked_as_find_exec() {
    let fx = repository();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "find . -name main -exec sh -c 'rm \"$1\"' _ {} \\;"),
            bypass(
                "ask",
                "find . -name main -exec bash -c 'for f; do rm \"$f\"; done' _ {} +",
            ),
            bypass(
                "ask",
                "find . -name main -exec sh -c 'rm -- \"$@\"' sh {} +",
            ),
            bypass(
                "ask",
                "find . -type f -name main -execdir sh -c 'unlink \"$0\"' {} \\;",
            ),
            bypass("ask", "find . -name main | xargs sh -c 'rm \"$@\"' _"),
            bypass(
                "allow",
                "find . -name '*.pyc' -exec sh -c 'rm \"$1\"' _ {} \\;",
            ),
            bypass(
                "allow",
                "find . -name main -exec sh -c 'echo \"$1\"' _ {} \\;",
            ),
        ],
    )
    .await;
}

/// Programs that overwrite what find gives them (`sed -i`, `perl -i`, `cp /dev/null {}`,
/// `dd of={}`, `tee {}`), by `-exec`, `xargs` or a loop, lose a protected file's content as
/// a removal does: `find . -name config -exec sed -i … {} +` would rewrite `.git/config` and
/// asks in bypass mode. What rules out protected names (`*.txt`, `*.bak`), reads only (`sed`
/// without `-i`), or copies the found file elsewhere (`cp {} /tmp`, `cp -t DIR`), does not.
#[tokio::test]
async fn programs_that_overwrite_what_find_finds_are_checked_as_removals() {
    let fx = repository();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "find . -name config -exec sed -i s/a/b/ {} +"),
            bypass("ask", "find . -name config -exec sed -i.bak s/a/b/ {} +"),
            bypass(
                "ask",
                "find . -name config -exec sed --in-place s/a/b/ {} \\;",
            ),
            bypass("ask", "find . -name config -exec perl -pi -e 's/a/b/' {} +"),
            bypass("ask", "find . -name config -exec cp /dev/null {} \\;"),
            bypass("ask", "find . -name config -exec dd if=/dev/null of={} \\;"),
            bypass("ask", "find . -name config -exec tee {} \\;"),
            bypass("ask", "find . -type f -exec sed -i s/a/b/ {} +"),
            bypass("ask", "find . -name config | xargs sed -i s/a/b/"),
            bypass("ask", "find . -name config | xargs perl -pi -e s/a/b/"),
            bypass("ask", "find . -name config | xargs -I{} cp /dev/null {}"),
            bypass("ask", "find . -name config | xargs -n1 tee"),
            bypass("ask", "sed -i s/a/b/ $(find . -name config)"),
            bypass(
                "ask",
                "for f in $(find . -name main); do sed -i s/a/b/ \"$f\"; done",
            ),
            bypass("allow", "find . -name '*.txt' -exec sed -i s/a/b/ {} +"),
            bypass("allow", "find . -name '*.bak' -exec sed -i s/a/b/ {} +"),
            bypass("allow", "find . -name config -exec sed s/a/b/ {} +"),
            bypass("allow", "find . -name config -exec sed -n p {} +"),
            bypass("allow", "find . -name config -exec cp {} /tmp/x \\;"),
            bypass("allow", "find . -name config | xargs cp -t /tmp"),
            bypass("allow", "find . -name config | xargs -I{} cp {} /tmp/"),
            bypass("allow", "find . -name '*.txt' | xargs sed -i s/a/b/"),
            bypass("allow", "find . -name config -exec perl -ne print {} +"),
        ],
    )
    .await;
}

/// The message of an ask says what the program does to what find finds: `-delete` and
/// `rm` delete, `mv` moves away, `truncate` empties, `shred`, `sed -i` and `cp /dev/null`
/// overwrite, also through `xargs`, a substitution or a directory taken whole (`-type f`).
#[tokio::test]
async fn the_safety_message_says_what_the_program_does() {
    let fx = repository();
    let said = [
        ("find . -name main -delete", "may delete"),
        ("find . -name main -exec mv {} /tmp \\;", "may move away"),
        ("find . -name main -exec truncate -s0 {} +", "may empty"),
        ("find . -name main -exec shred {} +", "may overwrite"),
        (
            "find . -name config -exec sed -i s/a/b/ {} +",
            "may overwrite",
        ),
        (
            "find . -name config | xargs sed -i s/a/b/",
            "overwrites what",
        ),
        ("truncate -s0 $(find . -name main)", "empties what"),
        ("find . -type f -exec sed -i s/a/b/ {} +", "may overwrite"),
        (
            "find . -name .bashrc -exec truncate -s0 {} +",
            "empties files of a protected name",
        ),
    ];
    let mut wrong = Vec::new();
    for (command, words) in said {
        match run(&fx, &bypass("ask", command)).await {
            PermissionResult::Ask { message, .. } if message.contains(words) => {}
            other => wrong.push(format!("{command}: wanted {words:?}, got {other:?}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What the asked spellings do, run by the real bash in a copy of such a repository: each
/// deletes, empties or rewrites the branch's ref or `.git/config` (so asking is right), and
/// the allowed ones leave both as they were.
#[test]
fn the_asked_spellings_really_take_away_a_protected_file() {
    for program in ["find", "xargs", "sed", "perl", "dd", "tee", "truncate"] {
        if !installed(program) {
            eprintln!("{program} is not installed: skipped");
            return;
        }
    }
    let lost = |command: &str| {
        let fx = repository();
        std::fs::write(fx.proj.join(".git/config"), "[core]a").unwrap();
        real_bash(command, &fx.proj, &fx.home);
        let main = std::fs::read_to_string(fx.proj.join(".git/refs/heads/main")).ok();
        let config = std::fs::read_to_string(fx.proj.join(".git/config")).ok();
        main.as_deref() != Some("0123") || config.as_deref() != Some("[core]a")
    };
    for command in [
        "rm $(find . -name main)",
        "for f in $(find . -name main); do rm \"$f\"; done",
        "while read f; do rm \"$f\"; done < <(find . -name main)",
        "while read f; do rm \"$f\"; done <<< \"$(find . -name main)\"",
        "find . -name main -exec sh -c 'rm \"$1\"' _ {} \\;",
        "find . -name main -exec bash -c 'for f; do rm \"$f\"; done' _ {} +",
        "find . -name config -exec sed -i s/a/b/ {} +",
        "find . -name config -exec perl -pi -e 's/a/b/' {} +",
        "find . -name config -exec cp /dev/null {} \\;",
        "find . -name config -exec dd if=/dev/null of={} \\;",
        "find . -name config -exec tee {} \\; < /dev/null",
        "find . -name config | xargs sed -i s/a/b/",
        "find . -name main -exec truncate -s0 {} +",
    ] {
        assert!(
            lost(command),
            "{command} left the protected files as they were"
        );
    }
    for command in [
        "rm $(find . -name '*.pyc')",
        "find . -name '*.txt' -exec sed -i s/a/b/ {} +",
        "find . -name config -exec sed s/a/b/ {} +",
        "find . -name config | xargs -I{} cp {} /tmp/",
    ] {
        assert!(!lost(command), "{command} changed a protected file");
    }
}
