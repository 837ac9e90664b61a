//! Session 29 on paths: a variable the command line sets to plain words only (`for d in
//! build dist`, `X=build`) is checked as each of its words, in bypass mode too: the
//! everyday loops and assignments are allowed again, and what their words name (`/usr`,
//! `.git`, a link to the home) is asked about as if written out.

use crate::common;

use std::path::Path;

use crate::common::{Case, Fixture, case, context, run_table, run_table_in};

/// A table row: Bash `command` in bypass mode.
fn bypass(expect: &'static str, command: &str) -> Case {
    case(expect, "Bash", command).mode("bypassPermissions")
}

/// The ref of a branch `main`, a file under `.git` (a protected place).
const BRANCH: (&str, &str) = ("$P/.git/refs/heads/main", "0123");
/// A git configuration in the home's `.config`.
const GIT_CONFIG: (&str, &str) = ("$H/.config/git/config", "[user]");

/// A fixture that also holds the directories `dirs` and the files `files` (path, contents),
/// each path in the project (`$P/…`) or the home (`$H/…`).
fn fixture_with(dirs: &[&str], files: &[(&str, &str)]) -> Fixture {
    let fx = Fixture::new();
    for dir in dirs {
        std::fs::create_dir_all(fx.subst(dir)).unwrap();
    }
    for (file, contents) in files {
        common::write(Path::new(&fx.subst(file)), contents);
    }
    fx
}

/// Removals through a `for` variable or an assignment of plain words are checked word by
/// word: `for d in build dist; do rm -rf "$d"; done` is allowed in bypass mode, as `rm -rf
/// build dist` is, while a word that is protected, critical or a link to the home (`for d
/// in usr; do rm -rf /"$d"`, `for d in build .git`, `for d in homelink; do rm -rf "$d"/`)
/// asks. A variable the line may set otherwise (`read`, `unset`, `declare`, `${d:=…}`, a
/// glob or a quoted list, `IFS`) still asks.
#[tokio::test]
async fn removals_through_plainly_set_variables_are_checked_word_by_word() {
    let fx = fixture_with(&["$P/build/node_modules", "$P/dist/node_modules"], &[]);
    std::os::unix::fs::symlink(&fx.home, fx.proj.join("homelink")).unwrap();
    run_table_in(
        &fx,
        vec![
            bypass("allow", "for d in build dist; do rm -rf \"$d\"; done"),
            bypass("allow", "for d in build dist; do rm -rf $d; done"),
            bypass(
                "allow",
                "for d in build dist\ndo\n  rm -rf \"$d/node_modules\"\ndone",
            ),
            // Where it runs, `X` may not be set (a prefix assignment, one in a branch):
            // unset, this removes `/dist`, a top-level directory.
            bypass("ask", "X=build; rm -rf \"$X/dist\""),
            bypass("allow", "export T=build && rm -rf \"${T}\""),
            bypass(
                "allow",
                "for d in build dist; do find \"$d\" -name '*.pyc' -delete; done",
            ),
            bypass("allow", "for d in build; do find \"$d\" -delete; done"),
            // Each word is checked as written.
            bypass("ask", "for d in usr; do rm -rf /\"$d\"; done"),
            bypass("ask", "for d in build .git; do rm -rf \"$d\"; done"),
            bypass("ask", "for d in homelink; do rm -rf \"$d\"/; done"),
            bypass("ask", "for d in build ..; do rm -rf \"$d\"; done"),
            bypass("ask", "d=.; rm -rf \"$d\""),
            bypass("ask", "d=; rm -rf \"$d\"/"),
            bypass("ask", "d=build; d=/; rm -rf \"$d\""),
            bypass("ask", "for d in x; do find \"$d\" .git -delete; done"),
            bypass(
                "ask",
                "for d in .git; do find \"$d\" -name '*' -delete; done",
            ),
            bypass("ask", "d=src; rm -rf \"$d\"/../.git"),
            // Anything else that may set the variable.
            bypass("ask", "d=build; read d; rm -rf \"$d\""),
            bypass("ask", "d=build; unset d; rm -rf \"$d\"/"),
            bypass("ask", "d=build; declare -n d=HOME; rm -rf \"$d\""),
            bypass("ask", "d=build; : ${d:=~}; rm -rf \"$d\""),
            bypass("ask", "d=build; bash -c 'd=~'; rm -rf \"$d\""),
            bypass("ask", "for d in build ~; do rm -rf \"$d\"; done"),
            bypass("ask", "for d in \"$@\" build; do rm -rf \"$d\"; done"),
            bypass(
                "ask",
                "for d in build; do rm -rf \"$d\"; done; for d in */; do rm -rf \"$d\"; done",
            ),
            bypass("ask", "IFS=x; for d in ..x; do rm -rf $d; done"),
            bypass("ask", "d=build; d+=/..; rm -rf \"$d\""),
            bypass("ask", "d=build; getopts x d; rm -rf \"$d\""),
        ],
    )
    .await;
}

/// A removal of a path that is `/`, the home or the project when a variable in it is empty
/// or unset (`rm -rf "$HOME/$x"`, `rm -rf /"$d"`, `find ~/"$x" -delete`): a safety check,
/// asked even in bypass mode, as `rm -rf "$HOME"` is. With something fixed after the
/// variable (`"$HOME/.cache/$x"`, `"$HOME/$x/build"`) or under a directory of no
/// importance (`build/$x`) it stays allowed; a line that sets the variable to plain words
/// has them checked instead (`for x in .cache; do rm -rf "$HOME/$x"; done`).
#[tokio::test]
async fn a_removal_that_an_empty_variable_makes_the_home_or_the_root_asks() {
    run_table(vec![
        bypass("ask", "rm -rf \"${HOME}/$x\""),
        bypass("ask", "rm -rf \"${HOME}/${x}/\""),
        bypass("ask", "rm -rf ~/\"$x\""),
        bypass("ask", "rm -rf \"/$X\""),
        bypass("ask", "rm -rf /\"$a\"/\"$b\""),
        bypass("ask", "rm -rf \"${PWD}/$x\""),
        bypass("ask", "rm -rf \"$(pwd)/$x\""),
        bypass("ask", "rm -rf \"${HOME}/$(cat name)\""),
        bypass("ask", "rm -rf \"$BUILD/$x\"/*"),
        bypass("ask", "find ~/\"$x\" -delete"),
        bypass("ask", "for x in .ssh; do rm -rf \"${HOME}/$x\"; done"),
        bypass("allow", "rm -rf \"${HOME}/.cache/$x\""),
        bypass("allow", "rm -rf \"${HOME}/$x/build\""),
        bypass("allow", "rm -rf \"build/$x\""),
        bypass("allow", "rm -rf \"$BUILD/$x\""),
        // An expansion that stops the command when empty, or has a default, is no gap.
        bypass("allow", "rm -rf \"${HOME}/${x:?}\""),
        bypass("allow", "rm -rf \"${HOME:?}/${x:?}\""),
        bypass("allow", "rm -rf /\"${d:-build}\""),
        bypass("ask", "rm -rf /\"${d:+x}\""),
        bypass("ask", "rm -rf /\"${d:-}\""),
        bypass("allow", "for x in .cache; do rm -rf \"${HOME}/$x\"; done"),
    ])
    .await;
}

/// What `find` finds, taken away by another program than `rm` (`-exec unlink`, `shred -u`,
/// `truncate -s0`, `mv`, or `xargs` of them) or passed through a stage that only picks or
/// orders lines (`| sort |`, `| grep -v x |`, `| head |`) before `xargs rm`, is checked as
/// `find … -delete` is: a branch's ref under `.git` or `~/.config/git/config` asks even in
/// bypass mode; what stays clear of protected files (`-name '*.pyc'`) is allowed, and so
/// is a list rewritten on the way (`| sed …`), which names other paths.
#[tokio::test]
async fn what_find_finds_taken_away_otherwise_or_through_line_filters_is_checked() {
    let fx = fixture_with(&[], &[BRANCH, GIT_CONFIG, ("$H/.config/app/settings", "x")]);
    run_table_in(
        &fx,
        vec![
            bypass("ask", "find . -name main -exec unlink {} \\;"),
            bypass("ask", "find . -name main -exec shred -u {} +"),
            bypass("ask", "find . -name main -exec truncate -s0 {} +"),
            bypass("ask", "find . -name main -exec mv {} /tmp \\;"),
            bypass("ask", "find . -name main | xargs -n1 unlink"),
            bypass("ask", "find . -name main | xargs truncate -s 0"),
            bypass("ask", "find . -name main | xargs mv -t /tmp"),
            bypass("ask", "find . -name main | sort | xargs rm"),
            bypass("ask", "find . -name main | grep -v zzz | xargs rm -f"),
            bypass("ask", "find . -name main | sort -u | head -n 5 | xargs rm"),
            bypass("ask", "find ~ -name config -delete"),
            bypass("ask", "find ~/.config -name 'conf*' -delete"),
            bypass("allow", "find ~ -name settings -delete"),
            bypass("allow", "find . -name '*.pyc' -exec unlink {} \\;"),
            bypass("allow", "find . -name '*.pyc' | sort | xargs rm"),
            bypass("allow", "find . -name main | sed 's/main/x/' | xargs rm"),
            bypass("allow", "ls | xargs mv -t /tmp"),
        ],
    )
    .await;
}

/// An `rm` in a loop that reads what `find` prints into the variable it removes (`find .
/// -name main | while read f; do rm "$f"; done`) removes what `find … -delete` would: a
/// branch's ref asks even in bypass mode, `*.pyc` files do not.
#[tokio::test]
async fn an_rm_of_lines_read_from_find_removes_what_find_finds() {
    let fx = fixture_with(&[], &[BRANCH]);
    run_table_in(
        &fx,
        vec![
            bypass(
                "ask",
                "find . -name main | while read f; do rm \"$f\"; done",
            ),
            bypass(
                "ask",
                "find . -name main | while IFS= read -r f; do rm -f -- \"${f}\"; done",
            ),
            bypass(
                "ask",
                "find . -name main | while read f; do unlink $f; done",
            ),
            bypass(
                "allow",
                "find . -name '*.pyc' | while read -r f; do rm -f \"$f\"; done",
            ),
        ],
    )
    .await;
}

/// A path rule that surely matches other than what it was meant to says so when loaded: a
/// variable, which is not expanded (`Read(${HOME}/.ssh/**)` names a directory called
/// `${HOME}`), a character that shows nothing (`.env` with a zero-width space), a `[…]`
/// class with a letter beyond ASCII (it matches one byte). Each was accepted without a word,
/// a deny rule that protected nothing. Rules without them say nothing.
#[test]
fn path_rules_that_match_other_than_meant_are_warned_about() {
    let fx = Fixture::new();
    let said = |rule: &str| {
        let c = case("ask", "Read", "").deny(&[rule]);
        let (engine, _) = context(&fx, &c);
        engine
            .diagnostics()
            .into_iter()
            .map(|d| d.reason)
            .collect::<Vec<_>>()
    };
    let variable = said("Read(${HOME}/.ssh/**)");
    assert!(
        variable
            .iter()
            .any(|w| w.contains("variables are not expanded")),
        "{variable:?}"
    );
    let hidden = said("Read(.env\u{200b})");
    assert!(
        hidden
            .iter()
            .any(|w| w.contains("shows nothing") && w.contains("\\u{200b}")),
        "{hidden:?}"
    );
    let class = said("Read([ä]pfel.txt)");
    assert!(
        class.iter().any(|w| w.contains("matches one byte")),
        "{class:?}"
    );
    for fine in [
        "Read(./secrets/**)",
        "Read(~/.ssh/**)",
        "Read([abc]*.txt)",
        "Read(äpfel.txt)",
    ] {
        assert!(said(fine).is_empty(), "{fine}: {:?}", said(fine));
    }
}

/// Found by the adversarial review of this session's checks: spellings that left `/` or the
/// home (`/./"$x"`, `${x:-..}`, `${x:-$y}`), a variable's words trusted where its assignment
/// does not hold (a prefix assignment, one after the use, in a branch, in a subshell, a
/// `select` answered with no choice), an assignment split by a backslash-newline, an empty
/// variable beside a protected name (`.gi"$x"t`): each asks in bypass mode now. A loop's
/// own variable in its body keeps its words only (`for d in build dist; do rm -rf "$d"/*;
/// done` stays allowed), and so does an expansion that is never empty.
#[tokio::test]
async fn adversarial_spellings_of_empty_or_unset_variables_ask() {
    let fx = fixture_with(&["$P/build/a", "$P/dist/b"], &[BRANCH]);
    run_table_in(
        &fx,
        vec![
            bypass("ask", "find /./\"$x\" -delete"),
            bypass("ask", "rm -rf /./\"$x\"*"),
            bypass("ask", "find ~/./\"$x\" -delete"),
            bypass("ask", "rm -rf \"${HOME}/./$x\"*"),
            bypass("ask", "rm -rf \"${HOME}/${x:-$y}\""),
            bypass("ask", "rm -rf \"${HOME}/${x:=$y}\""),
            bypass("ask", "rm -rf \"${HOME}/${x:-/}\""),
            bypass("ask", "find \"${HOME}/${x:-..}\" -delete"),
            bypass("ask", "rm -rf \"${x:-${HOME}}\""),
            bypass("ask", "rm -rf ${x:-~}"),
            bypass("ask", "rm -rf \"${HOME}/${x:+..}\""),
            bypass("ask", "d=build true; rm -rf \"${HOME}/$d\""),
            bypass("ask", "rm -rf \"${HOME}/$d\"; d=build"),
            bypass(
                "ask",
                "if [ -d x ]; then d=build; fi; rm -rf \"${HOME}/$d\"",
            ),
            bypass("ask", "(d=build); rm -rf \"${HOME}/$d\""),
            bypass(
                "ask",
                "echo 9 | select d in build; do rm -rf \"${HOME}/$d\"; break; done",
            ),
            bypass("ask", "d=build true; find ~/\"$d\" -delete"),
            bypass("ask", "d=build; d\\\n=.git; rm -rf \"$d\""),
            bypass("ask", "d=build; for \\\nd in .git; do rm -rf \"$d\"; done"),
            bypass("ask", "rm -rf .gi\"$x\"t"),
            bypass("ask", "rm -rf .git\"$x\""),
            bypass("ask", "rm -rf \"${HOME}/.ssh$x\""),
            bypass("ask", "for HOME in ; do :; done; rm -rf \"$HOME\""),
            bypass("ask", "find . -name main | sort -k 1 | xargs rm"),
            bypass("allow", "for d in build dist; do rm -rf \"$d\"/*; done"),
            bypass(
                "allow",
                "for d in build dist; do rm -rf \"${HOME}/$d\"; done",
            ),
            bypass("allow", "rm -rf \"${HOME}/${x:?}\""),
            bypass("allow", "find . -name '*.pyc' | sort -k 1 | xargs rm"),
        ],
    )
    .await;
}

/// A directory taken away whole that is or holds `.config` with git's or fish's
/// configuration in it (`rm -rf ~/.config`, `find ~/.config -delete`, `mv ~/.config x`)
/// asks in bypass mode, as `rm -rf ~/.config/git` does; the find walk knew them, the
/// removal of a whole directory did not. And a find that deletes what is empty takes a
/// repository's empty directories (`.git/refs/tags`): no filter that rules out protected
/// names.
#[tokio::test]
async fn a_config_directory_with_git_in_it_or_empty_git_directories_ask() {
    let dirs = [
        "$H/other/.config/fish",
        "$P/.git/refs/tags",
        "$P/build/empty",
    ];
    let fx = fixture_with(&dirs, &[GIT_CONFIG]);
    run_table_in(
        &fx,
        vec![
            bypass("ask", "rm -rf ~/.config"),
            bypass("ask", "find ~/.config -delete"),
            bypass("ask", "find ~/.config -type f -delete"),
            bypass("ask", "mv ~/.config $O/c"),
            bypass("ask", "rm -rf ~/other"),
            bypass("ask", "find . -type d -empty -delete"),
            bypass("allow", "find build -type d -empty -delete"),
            bypass("allow", "rm -rf ~/other/.config/app"),
        ],
    )
    .await;
}

/// git's pathspecs are where `GIT_WORK_TREE` (or `GIT_DIR`) set on the line says: `GIT_WORK_TREE=src
/// git rm -f main.rs` removes `src/main.rs`, which an Edit deny rule covers. It asks now, as
/// `git --work-tree=src rm` does; without the variable the pathspec is checked as written.
#[tokio::test]
async fn git_work_tree_set_on_the_line_makes_pathspecs_unchecked() {
    let bypass = |expect, command: &str| self::bypass(expect, command).deny(&["Edit(./src/**)"]);
    run_table(vec![
        bypass("ask", "GIT_WORK_TREE=src git rm -f main.rs"),
        bypass("ask", "env GIT_WORK_TREE=src git restore main.rs"),
        bypass("ask", "export GIT_WORK_TREE=src; git checkout -- main.rs"),
        bypass("deny", "git rm -f src/main.rs"),
        bypass("allow", "git rm -f README.md"),
    ])
    .await;
}
