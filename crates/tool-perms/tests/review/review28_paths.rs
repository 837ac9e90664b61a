//! Review 28 findings on paths: a find whose name filter rules out every protected name
//! may still delete what a protected directory holds (a branch's ref, git's packs, a key),
//! and relative paths after a `cd` to a directory that is not known (`cd "$OLDPWD"`, `cd
//! ~-`, `cd "$X"`) that name a protected item or remove the whole directory.

use crate::common::{Fixture, case, run_table_in};

/// A find that deletes (`-delete`, `-exec rm`) names its filters let through inside a
/// protected directory of a start point (`.git/refs/heads/main`, `.git/objects/pack/*.pack`,
/// `~/.ssh/*.pub`): asked even in bypass mode, with the file named. A filter that matches
/// nothing there stays allowed, and so does a start point that holds no protected directory.
#[tokio::test]
async fn a_find_whose_names_match_inside_a_protected_directory_asks() {
    let fx = Fixture::new();
    for d in [
        ".git/refs/heads",
        ".git/objects/pack",
        "build/deep",
        "vendor/lib/.git",
    ] {
        std::fs::create_dir_all(fx.proj.join(d)).unwrap();
    }
    for (f, c) in [
        (".git/refs/heads/main", "0123"),
        (".git/objects/pack/pack-0a1b.pack", "PACK"),
        ("build/main", "bin"),
        ("vendor/lib/.git/HEAD", "ref: refs/heads/main"),
        ("build/deep/.bashrc", "alias x=y"),
    ] {
        std::fs::write(fx.proj.join(f), c).unwrap();
    }
    std::fs::write(fx.home.join(".ssh/id_ed25519.pub"), "ssh-ed25519 AAAA").unwrap();
    // A link find follows with `-L` or `-follow`, into the repository's git directory.
    std::os::unix::fs::symlink(fx.proj.join(".git"), fx.proj.join("build/linked")).unwrap();
    let bypass = |expect, command: &str| case(expect, "Bash", command).mode("bypassPermissions");
    run_table_in(
        &fx,
        vec![
            bypass("ask", "find . -name main -delete"),
            bypass("ask", "find . -type f -name MAIN -delete"),
            bypass("ask", "find . -name '*.pack' -delete"),
            bypass(
                "ask",
                "find . \\( -name '*.pyc' -o -name '*.pack' \\) -delete",
            ),
            bypass("ask", "find . -name 'pack-*' -exec rm {} +"),
            bypass("ask", "find ~ -name '*.pub' -delete"),
            // Nested protected directories, and directories removed whole with one.
            bypass("ask", "find vendor -name HEAD -delete"),
            bypass("ask", "find build -name '*rc' -delete"),
            bypass("ask", "find . -name lib -exec rm -rf {} +"),
            bypass("ask", "find . -type d -name lib -exec rm -r {} \\;"),
            bypass("ask", "find -L build -name main -delete"),
            bypass("ask", "find build -follow -name main -delete"),
            bypass("ask", "find \"${HOME}\" -type f -delete"),
            // A computed root cannot be walked.
            bypass("ask", "find \"${PWD}\" -name main -delete"),
            bypass("ask", "find \"${PWD}\" -name '*.pyc' -delete"),
            bypass("ask", "find . -name x -prune -o -name main -delete"),
            bypass("ask", "find . \\( -true -o -name '*.pyc' \\) -delete"),
            bypass(
                "ask",
                "find ~ -mindepth 1 \\( -true -o -name '*.pyc' \\) -delete",
            ),
            bypass(
                "allow",
                "find . -name node_modules -prune -o -name '*.pyc' -delete",
            ),
            bypass("allow", "find . -name lib -delete"),
            // `build` holds `deep/.bashrc`.
            bypass("ask", "find . -name build -exec rm -rf {} +"),
            bypass("allow", "find . -name deep -delete"),
            bypass("allow", "find . -name obj -exec rm -rf {} +"),
            // Nothing there passes the filter, or no protected directory is walked.
            bypass("allow", "find . -name '*.pyc' -delete"),
            bypass(
                "allow",
                "find . \\( -name '*.pyc' -o -name '*.pyo' \\) -delete",
            ),
            bypass("allow", "find build -name main -delete"),
            bypass("allow", "find ~ -name '*.tmp' -delete"),
            bypass("allow", "find . -name main -print"),
        ],
    )
    .await;
}

/// After a `cd` to a directory that is not known, a relative path that names a protected
/// item (`.git`, `.bashrc`, `.claude/settings.json`) is still one, written or removed, by a
/// command or a redirection; and `.` or `*` removed whole there may be the home or the
/// project. Both are safety checks, asked even in bypass mode; other names stay allowed.
#[tokio::test]
async fn a_protected_name_after_a_cd_to_an_unknown_directory_asks() {
    let fx = Fixture::new();
    let bypass = |expect, command: &str| case(expect, "Bash", command).mode("bypassPermissions");
    run_table_in(
        &fx,
        vec![
            bypass("ask", "cd \"${OLDPWD}\"; rm -rf .git"),
            bypass("ask", "cd ~-; echo x > .bashrc"),
            bypass("ask", "cd \"$X\" && touch .claude/settings.json"),
            bypass("ask", "cd \"$X\"; rm -rf ."),
            bypass("ask", "cd \"$X\"; rm -rf ./*"),
            bypass("ask", "cd \"$X\"; find . -delete"),
            bypass("ask", "cd \"$X\"; find -delete"),
            bypass("ask", "cd \"${OLDPWD}\" && rm -rf ./"),
            bypass("ask", "cd \"$X\"; rm -rf .//"),
            bypass("ask", "cd \"$X\"; rm -rf ../.."),
            bypass("ask", "cd \"$X\"; find ./ -delete"),
            bypass("ask", "cd \"$X\"; find ../.. -delete"),
            bypass("ask", "cd \"$X\" && find . -type f -delete"),
            bypass("allow", "cd \"$X\"; rm -rf build"),
            bypass("allow", "cd \"$X\"; echo x > out.txt"),
            bypass("allow", "cd \"$X\"; cat .bashrc"),
            // Its tree cannot be walked for protected files a filter may reach.
            bypass("ask", "cd \"$X\"; find . -name '*.o' -delete"),
        ],
    )
    .await;
}

/// Plan mode asks about a read-only command that reads outside the working directories
/// (`cat /etc/hostname`, `ls ~`), as it asks about Read of that file, rather than refusing it
/// as a change; a writing command there, and git in a planted repository, are still refused.
#[tokio::test]
async fn plan_mode_asks_about_a_read_only_command_outside_the_project() {
    let fx = Fixture::new();
    std::fs::write(fx.out.join("notes.txt"), "n").unwrap();
    let plan = |expect, tool, input: &str| case(expect, tool, input).mode("plan");
    run_table_in(
        &fx,
        vec![
            plan("ask", "Bash", "cat $O/notes.txt"),
            plan("ask", "Bash", "ls $O"),
            plan("ask", "Bash", "wc -l $O/notes.txt README.md"),
            plan("ask", "Bash", "ls $O && cat $O/notes.txt"),
            plan("ask", "Bash", "cat $O/notes.txt; ls $O"),
            plan("ask", "Read", "$O/notes.txt"),
            plan("allow", "Bash", "cat README.md"),
            plan("deny", "Bash", "touch $O/new.txt"),
            plan("deny", "Bash", "cat $O/notes.txt > copy.txt"),
            plan("deny", "Bash", "rm README.md"),
        ],
    )
    .await;
}

/// A removal of a `for` loop's variable (`for d in ~; do rm -rf "$d"; done`) or of a
/// positional parameter (`set -- ~; rm -rf "$1"`, a function's `"$@"`) removes what the line
/// set it to, which may be the home or `/`: a safety check, asked even in bypass mode, as
/// `x=~; rm -rf $x` is. One under a fixed directory stays allowed.
#[tokio::test]
async fn removals_through_a_loop_variable_or_a_positional_parameter_ask_in_bypass() {
    let fx = Fixture::new();
    let bypass = |expect, command: &str| case(expect, "Bash", command).mode("bypassPermissions");
    run_table_in(
        &fx,
        vec![
            bypass("ask", "for d in ~; do rm -rf \"$d\"; done"),
            bypass("ask", "for d in / ~; do rm -rf $d; done"),
            bypass("ask", "select d in ~; do rm -rf \"$d\"; done"),
            bypass("ask", "set -- ~; rm -rf \"$1\""),
            bypass("ask", "f() { rm -rf \"$@\"; }; f ~"),
            bypass("ask", "rm -rf \"${1}\""),
            bypass("ask", "cd ~ && rm -rf \"$_\""),
            bypass("ask", "for d in ~; do find \"$d\" -delete; done"),
            bypass("ask", "set -- ~; find \"$1\" -delete"),
            bypass("ask", "x=~; find \"$x\" -delete"),
            bypass("ask", "x=~; find \"$x\" -type f -delete"),
            bypass("ask", "d=HOME; rm -rf \"${!d}\""),
            bypass("ask", "f() { rm -rf \"${!#}\"; }; f ~"),
            bypass("ask", "for d in */; do rm -rf \"$d\"; done"),
            bypass("ask", "for d in ..; do rm -rf \"$d\"; done"),
            // However plain the list looks: a protected name, a word IFS splits (a list of
            // plain words is checked word by word: review29_paths.rs).
            bypass("ask", "for d in .git; do rm -rf \"$d\"; done"),
            bypass("ask", "IFS=x; for d in x..x; do find $d -delete; done"),
            bypass("allow", "for d in a b; do rm -rf build/\"$d\"; done"),
            bypass("allow", "for f in *.o; do rm \"$f\"; done"),
        ],
    )
    .await;
}

/// An `rm` that `xargs` runs on what `find` prints removes what `find … -delete` would:
/// `find ~ | xargs rm -rf` is a critical removal and `find . -name main | xargs rm` may delete
/// a branch's ref, asked even in bypass mode, while `find . -name '*.pyc' | xargs rm -f`
/// stays allowed. A recursive one fed by anything else (`echo ~`, `ls`) may remove a whole
/// directory and asks; a plain `rm` of a listing stays allowed.
#[tokio::test]
async fn an_rm_fed_by_a_pipeline_removes_what_its_producer_prints() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.proj.join(".git/refs/heads")).unwrap();
    std::fs::write(fx.proj.join(".git/refs/heads/main"), "0123").unwrap();
    std::fs::create_dir_all(fx.proj.join("vendor/lib/.git")).unwrap();
    std::fs::create_dir_all(fx.home.join("project/.git")).unwrap();
    let bypass = |expect, command: &str| case(expect, "Bash", command).mode("bypassPermissions");
    run_table_in(
        &fx,
        vec![
            bypass("ask", "find ~ | xargs rm -rf"),
            bypass("ask", "find . -print0 | xargs -0 rm -rf"),
            bypass("ask", "find . -name main | xargs rm"),
            bypass("ask", "find . -name .bashrc | xargs rm -f"),
            bypass("ask", "echo ~ | xargs rm -rf"),
            bypass("ask", "ls | xargs rm -r"),
            bypass("ask", "pwd | xargs -I{} rm -rf {}"),
            bypass("ask", "find ~ 2>/dev/null | xargs rm -rf"),
            bypass("ask", "echo ~ 2>/dev/null | xargs rm -rf"),
            bypass("ask", "(echo ~) | xargs rm -rf"),
            bypass("ask", "for d in ~; do echo \"$d\"; done | xargs rm -rf"),
            bypass("ask", "xargs rm -rf < list.txt"),
            bypass("ask", "xargs -a list.txt rm -r"),
            bypass("ask", "find . -name lib | xargs rm -rf"),
            bypass(
                "ask",
                "find . -print -o -name '*.pyc' -print | xargs rm -rf",
            ),
            bypass("ask", "find . -printf '%p\\n' -name zzz | xargs rm -rf"),
            bypass(
                "ask",
                "find . \\( -true -o -name '*.pyc' \\) -print | xargs rm -rf",
            ),
            bypass("ask", "find ~ -maxdepth 1 -name 'pro*' | xargs rm -rf"),
            bypass("ask", "parallel rm -rf ::: ~"),
            bypass("ask", "echo ~ | parallel rm -rf"),
            bypass("ask", "find ~ | xargs env rm -rf"),
            bypass("ask", "find ~ | xargs sudo rm -rf"),
            bypass("ask", "find . -name main | xargs busybox rm"),
            bypass(
                "allow",
                "find . -name node_modules -prune -o -name '*.log' -print | xargs rm -f",
            ),
            bypass("allow", "find . -name '*.pyc' | xargs env rm -f"),
            bypass("allow", "find . -name '*.pyc' 2>/dev/null | xargs rm -f"),
            bypass("allow", "xargs rm -f < list.txt"),
            bypass("allow", "find . -name '*.pyc' | xargs rm -f"),
            bypass("allow", "find . -name '*.pyc' -print0 | xargs -0 rm -rf"),
            bypass("allow", "ls *.o | xargs rm"),
            bypass("allow", "git ls-files -d | xargs rm -f"),
        ],
    )
    .await;
}
