//! Review 29 findings on Bash around Read/Edit deny rules: the script file a shell runs
//! (`bash FILE`, `sh -v FILE`) is read; git subcommands that name files (`git mv`, `git
//! rm`, `git checkout -- F`, `git restore F`, `git merge-file`) read and write them, and
//! `git fast-export` and `git unpack-file` print files they do not name; editors (`ex`,
//! `ed`, `nvim`, `pico`, ...), `mkfifo`/`mknod` write their files, and `look`, `sdiff`,
//! `diff3` read theirs.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, case, run_table_in};

/// A file a shell runs as its script is read, as `source FILE` reads it: `bash
/// scripts/../secrets/key.pem` is denied by `Read(./secrets/**)` although `Bash(bash
/// scripts/*)` allows the command, and `sh -v .env` (which prints the file) is denied by
/// `Read(.env)` in bypass mode, in every spelling of the options before the script. A
/// script not denied stays allowed by the allow rule, the arguments after the script are
/// no files of the shell's, and a shell that runs no script file (`-c`, `-s`, its input)
/// reads none. A script whose name is computed, or that `xargs` appends, cannot be checked
/// and asks.
#[tokio::test]
async fn a_shell_reads_the_script_file_it_runs() {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.proj.join("scripts")).unwrap();
    std::fs::write(fx.proj.join("scripts/build.sh"), "echo build").unwrap();
    let allowed = |expect, command: &str| {
        case(expect, "Bash", command)
            .allow(&["Bash(bash scripts/*)", "Bash(sh scripts/*)"])
            .deny(&["Read(./secrets/**)"])
    };
    let bypass = |expect, command: &str| {
        case(expect, "Bash", command)
            .mode("bypassPermissions")
            .deny(&["Read(.env)"])
    };
    run_table_in(
        &fx,
        vec![
            allowed("deny", "bash scripts/../secrets/key.pem"),
            allowed("deny", "sh scripts/../secrets/key.pem"),
            allowed("deny", "source scripts/../secrets/key.pem"),
            allowed("allow", "bash scripts/build.sh"),
            allowed("allow", "bash scripts/build.sh secrets/key.pem"),
            allowed("allow", "sh scripts/build.sh"),
            bypass("deny", "sh -v .env"),
            bypass("deny", "bash .env"),
            bypass("deny", "zsh .env"),
            bypass("deny", "dash .env"),
            bypass("deny", "ksh .env"),
            bypass("deny", "mksh .env"),
            bypass("deny", "/bin/sh .env"),
            bypass("deny", "bash -- .env"),
            bypass("deny", "bash - .env"),
            bypass("deny", "bash -x .env a b"),
            bypass("deny", "bash -o pipefail .env"),
            bypass("deny", "bash -euo pipefail .env"),
            bypass("deny", "bash -O extglob .env"),
            bypass("deny", "bash --norc --noprofile .env"),
            bypass("deny", "bash --rcfile /dev/null .env"),
            bypass("deny", "env bash .env"),
            bypass("deny", "nice -n 5 sh -v ./.env"),
            bypass("deny", "bash src/../.env"),
            bypass("allow", "bash -c 'echo hi' .env"),
            bypass("allow", "bash -xc 'echo hi'"),
            bypass("allow", "bash -o pipefail -c 'echo hi' .env"),
            bypass("allow", "echo 'echo hi' | bash -s .env"),
            bypass("allow", "bash scripts/build.sh .env"),
            bypass("allow", "bash -x scripts/build.sh"),
            bypass("allow", "bash --version"),
            bypass("ask", "bash \"${SCRIPT}\""),
            // The script xargs appends is not in sight.
            bypass("ask", "find . -name '*.sh' | xargs -n1 bash"),
            bypass("allow", "find . -name '*.sh' | xargs -n1 bash -c 'echo x'"),
            bypass("allow", "bash < scripts/build.sh"),
        ],
    )
    .await;
}

/// git subcommands that name files use them: `git mv` reads and moves its sources and
/// writes its destination (and what lands in it), `git rm` deletes its pathspecs (`-r`
/// with everything under a directory), `git checkout [REV] -- F`, `git checkout REV F`,
/// `git restore F` and `git checkout-index F` write theirs, `git merge-file` reads its three
/// files and writes the first without `-p`. Each is held against the Read and Edit deny rules
/// as `mv`, `rm` and `cat` are, under `Bash(git:*)` and in bypass mode. What touches no file
/// stays allowed: a checkout of a branch, `--cached`/`--staged` (the index only), a dry
/// run, files no rule names; a pathspec git matches itself (a glob, `:(magic)`) cannot be
/// checked and asks.
#[tokio::test]
async fn git_subcommands_that_name_files_read_and_write_them() {
    let fx = Fixture::new();
    let rules = |c: common::Case| c.deny(&["Read(.env)", "Edit(./src/**)"]);
    let allowed =
        |expect, command: &str| rules(case(expect, "Bash", command).allow(&["Bash(git:*)"]));
    let bypass =
        |expect, command: &str| rules(case(expect, "Bash", command).mode("bypassPermissions"));
    run_table_in(
        &fx,
        vec![
            allowed("deny", "git mv .env leaked.txt"),
            allowed("deny", "mv .env leaked.txt"),
            bypass("deny", "git mv .env leaked.txt"),
            bypass("deny", "git mv -f .env docs"),
            bypass("deny", "git mv README.md src/"),
            bypass("deny", "git mv src lib"),
            bypass("deny", "git mv -- README.md src/x.md"),
            allowed("deny", "git rm src/main.rs"),
            bypass("deny", "git rm src/main.rs"),
            bypass("deny", "git rm -f -- src/main.rs"),
            bypass("deny", "git rm -r src"),
            bypass("deny", "git rm .env"),
            bypass("deny", "git -C src rm main.rs"),
            bypass("deny", "git --no-pager rm -q src/main.rs"),
            allowed("deny", "git checkout -- src/main.rs"),
            bypass("deny", "git checkout -- src/main.rs"),
            bypass("deny", "git checkout HEAD src/main.rs"),
            bypass("deny", "git checkout HEAD~1 -- src/main.rs"),
            bypass("deny", "git checkout --ours src/main.rs"),
            bypass("deny", "git checkout src"),
            allowed("deny", "git restore src/main.rs"),
            bypass("deny", "git restore src/main.rs"),
            bypass("deny", "git restore --source=HEAD~1 src/main.rs"),
            bypass("deny", "git restore -s HEAD src/main.rs"),
            bypass("deny", "git restore --staged --worktree src/main.rs"),
            bypass("deny", "git restore -SW src/main.rs"),
            bypass("deny", "git checkout-index -f src/main.rs"),
            bypass("deny", "git checkout-index -f -- src/main.rs"),
            bypass("deny", "git checkout-index --prefix=src/ README.md"),
            allowed("deny", "git merge-file -p .env /dev/null /dev/null"),
            bypass("deny", "git merge-file -p .env /dev/null /dev/null"),
            bypass(
                "deny",
                "git merge-file -L a -L b -L c -p /dev/null .env /dev/null",
            ),
            bypass("deny", "git merge-file src/main.rs docs/a.md README.md"),
            // Pathspecs git matches itself.
            bypass("ask", "git rm '*.rs'"),
            bypass("ask", "git checkout -- ':(glob)src/*'"),
            bypass("ask", "git rm --pathspec-from-file=list.txt"),
            bypass("ask", "git checkout-index -a"),
            // A directory's files are written, whatever their names: asked about where an
            // Edit rule could match one.
            bypass("ask", "git checkout ."),
            bypass("ask", "git checkout -- ."),
            bypass("ask", "git restore ."),
            bypass("ask", "git restore -- ./"),
            // Nothing a rule names, or no file touched.
            allowed("allow", "git mv README.md docs/readme.md"),
            allowed("allow", "git rm docs/a.md"),
            allowed("allow", "git rm --cached src/main.rs"),
            allowed("allow", "git rm -n src/main.rs"),
            allowed("allow", "git mv -n .env x"),
            allowed("allow", "git checkout main"),
            allowed("allow", "git checkout -b feature origin/feature"),
            allowed("allow", "git checkout -- docs/a.md"),
            allowed("allow", "git restore --staged src/main.rs"),
            allowed("allow", "git restore docs/a.md"),
            allowed("allow", "git merge-file -p docs/a.md /dev/null README.md"),
            allowed("allow", "git status"),
            bypass("allow", "git checkout main"),
            bypass("allow", "git switch main"),
            case("allow", "Bash", "git checkout main")
                .mode("bypassPermissions")
                .deny(&["Edit(**/*.lock)"]),
            // Without rules, nothing to ask about.
            case("allow", "Bash", "git checkout .").mode("bypassPermissions"),
            case("allow", "Bash", "git restore src").mode("bypassPermissions"),
            case("allow", "Bash", "git rm -r src").mode("bypassPermissions"),
        ],
    )
    .await;
}

/// `git fast-export` prints every blob of the revisions it exports and `git unpack-file`
/// writes a blob to a file anyone can read: both print files they do not name, and ask
/// when a Read deny rule could match one (as `git cat-file` does), even under `Bash(git:*)`
/// and in bypass mode; without such a rule they are what they were.
#[tokio::test]
async fn git_commands_that_print_unnamed_blobs_ask_under_a_read_deny() {
    let fx = Fixture::new();
    let allowed = |expect, command: &str| {
        case(expect, "Bash", command)
            .allow(&["Bash(git:*)"])
            .deny(&["Read(.env)"])
    };
    let bypass = |expect, command: &str| {
        case(expect, "Bash", command)
            .mode("bypassPermissions")
            .deny(&["Read(.env)"])
    };
    run_table_in(
        &fx,
        vec![
            allowed("ask", "git cat-file -p HEAD:.env"),
            allowed("ask", "git fast-export HEAD"),
            allowed("ask", "git fast-export --all"),
            allowed("ask", "git unpack-file HEAD:.env"),
            bypass("ask", "git fast-export HEAD"),
            bypass("ask", "git unpack-file HEAD:.env"),
            case("allow", "Bash", "git fast-export HEAD").allow(&["Bash(git:*)"]),
            case("allow", "Bash", "git fast-export HEAD").mode("bypassPermissions"),
        ],
    )
    .await;
}

/// Editors write the files they open and readers read theirs, held against the Edit and
/// Read deny rules in bypass mode: `ex`/`ed` with a script (`+cmd`, their input), `view`,
/// `nvim`, `vimdiff`, `pico`, `red`, `micro`, `kak`, `hx`, ... and `mkfifo`/`mknod` inside an
/// Edit-denied directory are denied, and so are `look S .env`, `sdiff`, `diff3` of a
/// Read-denied file. An option's value (`vim -c CMD`, `-S FILE`) is no file opened and
/// does not hide the one that is. The vi family and `ed` run commands (from the command
/// line or their input) that may open other files, which cannot be checked: with path
/// rules they ask; `nano` and `look`'s search string name no other file.
#[tokio::test]
async fn editors_write_and_readers_read_their_files() {
    let fx = Fixture::new();
    let bypass = |expect, command: &str| {
        case(expect, "Bash", command)
            .mode("bypassPermissions")
            .deny(&["Read(.env)", "Edit(./src/**)"])
    };
    run_table_in(
        &fx,
        vec![
            bypass("deny", "ex -s '+%s/main/pwned/' '+wq' src/main.rs"),
            bypass(
                "deny",
                "printf ',s/main/pwned/\\nw\\nq\\n' | ed -s src/main.rs",
            ),
            bypass("deny", "ed -s .env <<< ,p"),
            bypass("deny", "ex -s '+%p' '+q!' .env"),
            bypass("deny", "look S .env"),
            bypass("deny", "look -f -t x S .env"),
            bypass("deny", "sdiff .env /dev/null"),
            bypass("deny", "sdiff -o docs/out .env /dev/null"),
            bypass("deny", "sdiff -o src/out docs/a.md /dev/null"),
            bypass("deny", "diff3 .env docs/a.md README.md"),
            bypass("deny", "cmp .env docs/a.md"),
            bypass("deny", "comm .env docs/a.md"),
            bypass("deny", "view src/main.rs"),
            bypass("deny", "rview src/main.rs"),
            bypass("deny", "nvim src/main.rs"),
            bypass("deny", "nvim --headless -c 'wq' src/main.rs"),
            bypass("deny", "vim -c 'set nu' src/main.rs"),
            bypass("deny", "vim -u NONE -S docs/a.md src/main.rs"),
            bypass("deny", "vim -S .env docs/a.md"),
            bypass("deny", "vimdiff docs/a.md src/main.rs"),
            bypass("deny", "gvim src/main.rs"),
            bypass("deny", "pico src/main.rs"),
            bypass("deny", "nano +3 src/main.rs"),
            bypass("deny", "red src/main.rs"),
            bypass("deny", "joe src/main.rs"),
            bypass("deny", "micro src/main.rs"),
            bypass("deny", "kak src/main.rs"),
            bypass("deny", "hx src/main.rs"),
            bypass("deny", "helix src/main.rs"),
            bypass("deny", "mg src/main.rs"),
            bypass("deny", "jed src/main.rs"),
            bypass("deny", "ne src/main.rs"),
            bypass("deny", "emacs -nw src/main.rs"),
            bypass("deny", "emacs --batch --eval '(message 1)' src/main.rs"),
            bypass("deny", "mkfifo src/p"),
            bypass("deny", "mkfifo -m 600 src/p"),
            bypass("deny", "mknod src/p p"),
            bypass("deny", "mknod -m 600 src/p p"),
            // What the editor's commands open cannot be seen.
            bypass("ask", "ex -s '+r .env' '+%p' '+q!' docs/a.md"),
            bypass("ask", "vim docs/a.md"),
            bypass("ask", "ed -s docs/a.md"),
            bypass("allow", "nano docs/a.md"),
            bypass("allow", "pico +3 docs/a.md"),
            bypass("allow", "look .env docs/a.md"),
            bypass("allow", "sdiff docs/a.md README.md"),
            bypass("allow", "mkfifo docs/p"),
            bypass("allow", "mknod docs/p p"),
            bypass("allow", "mknod -m 600 docs/p c 1 3"),
        ],
    )
    .await;
}
