//! Review 29 findings on Bash around Read/Edit deny rules: the script file a shell runs
//! (`bash FILE`, `sh -v FILE`) is read; git subcommands that name files (`git mv`, `git
//! rm`, `git checkout -- F`, `git restore F`, `git merge-file`) read and write them, and
//! `git fast-export` and `git unpack-file` print files they do not name; editors (`ex`,
//! `ed`, `nvim`, `pico`, ...), `mkfifo`/`mknod` write their files, and `look`, `sdiff`,
//! `diff3` read theirs. Programs that run a program they are given (`nix develop -c`, `gdb
//! --args`, `perf stat`, `ssh HOST CMD`, `hyperfine`, `make --eval`) meet Bash deny rules;
//! interpreters read their script file; `git commit -F F` reads F; git commands that write
//! unnamed files of the work tree (`git reset --hard`, `git switch`) ask under Edit rules;
//! in-place rewriters (`sponge`, `perl -i`, `gofmt -w`, `black`, `chattr`) write their files.

use crate::common;

use crate::common::{Case, Fixture, case, run_table, run_table_in};

/// A table row: Bash `command` in bypass mode, under the deny rules `deny`.
fn bash_in_bypass(deny: &'static [&'static str]) -> impl Fn(&'static str, &str) -> Case {
    move |expect, command: &str| {
        case(expect, "Bash", command)
            .mode("bypassPermissions")
            .deny(deny)
    }
}

/// A table row: Bash `command` in the default mode, under the allow rules `allow` and the
/// deny rules `deny`.
fn bash_allowed_by(
    allow: &'static [&'static str],
    deny: &'static [&'static str],
) -> impl Fn(&'static str, &str) -> Case {
    move |expect, command: &str| case(expect, "Bash", command).allow(allow).deny(deny)
}

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
    common::write(&fx.proj.join("scripts/build.sh"), "echo build");
    let allowed = bash_allowed_by(
        &["Bash(bash scripts/*)", "Bash(sh scripts/*)"],
        &["Read(./secrets/**)"],
    );
    let bypass = bash_in_bypass(&["Read(.env)"]);
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
    let allowed = bash_allowed_by(&["Bash(git:*)"], &["Read(.env)", "Edit(./src/**)"]);
    let bypass = bash_in_bypass(&["Read(.env)", "Edit(./src/**)"]);
    run_table(vec![
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
        // A switch writes the files that differ between the branches, whatever their
        // names (`git_commands_that_write_unnamed_files_of_the_work_tree_ask_under_an_edit_rule`).
        bypass("ask", "git switch main"),
        case("allow", "Bash", "git checkout main")
            .mode("bypassPermissions")
            .deny(&["Edit(**/*.lock)"]),
        // Without rules, nothing to ask about.
        case("allow", "Bash", "git checkout .").mode("bypassPermissions"),
        case("allow", "Bash", "git restore src").mode("bypassPermissions"),
        case("allow", "Bash", "git rm -r src").mode("bypassPermissions"),
    ])
    .await;
}

/// `git fast-export` prints every blob of the revisions it exports and `git unpack-file`
/// writes a blob to a file anyone can read: both print files they do not name, and ask
/// when a Read deny rule could match one (as `git cat-file` does), even under `Bash(git:*)`
/// and in bypass mode; without such a rule they are what they were.
#[tokio::test]
async fn git_commands_that_print_unnamed_blobs_ask_under_a_read_deny() {
    let allowed = bash_allowed_by(&["Bash(git:*)"], &["Read(.env)"]);
    let bypass = bash_in_bypass(&["Read(.env)"]);
    run_table(vec![
        allowed("ask", "git cat-file -p HEAD:.env"),
        allowed("ask", "git fast-export HEAD"),
        allowed("ask", "git fast-export --all"),
        allowed("ask", "git unpack-file HEAD:.env"),
        bypass("ask", "git fast-export HEAD"),
        bypass("ask", "git unpack-file HEAD:.env"),
        case("allow", "Bash", "git fast-export HEAD").allow(&["Bash(git:*)"]),
        case("allow", "Bash", "git fast-export HEAD").mode("bypassPermissions"),
    ])
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
    let bypass = bash_in_bypass(&["Read(.env)", "Edit(./src/**)"]);
    run_table(vec![
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
    ])
    .await;
}

/// Programs that run a program their arguments give are seen through as the wrappers are:
/// where the command is written out as words (`nix develop -c CMD`, `nix shell PKG -c CMD`,
/// `flatpak-spawn --host CMD`, `entr CMD`, `gdb --args CMD`, `perf stat CMD`, the remote
/// command of `ssh HOST CMD`) `Bash(rm:*)` denies it outright, in bypass mode too; where it
/// is a string or a script (`hyperfine 'rm x'`, `expect -c`, `make --eval`, `entr -s`,
/// `gdb -ex`, `perf stat --pre`, a remote command with shell syntax, `nix run PKG`, an
/// interactive `nix develop` or `ssh HOST` reading their input, `git rebase -x`, `git bisect
/// run`, `git submodule foreach`) it is asked about, as `tmux new 'rm x'` is. What runs a command no rule names stays allowed, and without Bash deny
/// or ask rules nothing is asked.
#[tokio::test]
async fn programs_that_run_a_program_they_are_given_meet_bash_deny_rules() {
    let bypass = bash_in_bypass(&["Bash(rm:*)"]);
    run_table(vec![
        // The command as words: denied outright.
        bypass("deny", "nix develop -c rm -rf x"),
        bypass("deny", "nix develop --command rm -rf x"),
        bypass("deny", "nix develop .#ci --impure -c rm -rf x"),
        bypass("deny", "nix shell nixpkgs#hello -c rm x"),
        bypass("deny", "nix shell nixpkgs#hello nixpkgs#jq --command rm x"),
        bypass(
            "deny",
            "nix --extra-experimental-features 'nix-command flakes' develop -c rm x",
        ),
        bypass("deny", "flatpak-spawn --host rm x"),
        bypass(
            "deny",
            "flatpak-spawn --host --env=A=1 --directory /tmp rm x",
        ),
        bypass("deny", "entr rm x"),
        bypass("deny", "entr -c -r rm x"),
        bypass("deny", "gdb -batch -ex run --args rm x"),
        bypass("deny", "gdb --args rm x"),
        bypass("deny", "gdb -q -args rm x"),
        bypass("deny", "perf stat rm x"),
        bypass("deny", "perf stat -e cycles -r 3 rm x"),
        bypass("deny", "perf stat -- rm x"),
        bypass("deny", "perf record -g -o perf.data rm x"),
        bypass("deny", "perf trace rm x"),
        bypass("deny", "nice perf stat rm x"),
        bypass("deny", "ssh localhost rm x"),
        bypass("deny", "ssh -p 22 localhost rm -rf x"),
        bypass("deny", "ssh -t localhost -- rm -rf x"),
        // A string, a script or its input: asked about.
        bypass("ask", "hyperfine 'rm x'"),
        bypass("ask", "hyperfine --prepare 'rm x' 'ls'"),
        bypass("ask", "expect -c 'spawn rm x'"),
        bypass("ask", "make --eval='x:;rm x' x"),
        bypass("ask", "make --eval 'x:;rm x' x"),
        bypass("ask", "make -E 'x:;rm x' x"),
        bypass("ask", "make -sE 'x:;rm x' x"),
        bypass("deny", "entr -s 'rm x'"),
        bypass("ask", "entr -s 'ls; rm x'"),
        bypass("ask", "gdb -ex 'shell rm x' --args ls"),
        bypass("ask", "gdb -x cmds.gdb --args ls"),
        bypass("ask", "nix run nixpkgs#coreutils -- rm x"),
        bypass("ask", "nix develop"),
        bypass("ask", "gdb -batch -ex 'shell rm x'"),
        bypass("ask", "perf stat --pre 'rm x' ls"),
        bypass("ask", "perf sched record rm x"),
        bypass("ask", "ssh localhost 'ls; rm x'"),
        bypass("ask", "ssh localhost"),
        bypass("ask", "git rebase -x 'rm x' main"),
        bypass("ask", "git rebase --exec='rm x' main"),
        bypass("ask", "git bisect run rm x"),
        bypass("ask", "git submodule foreach 'rm x'"),
        bypass("ask", "git filter-branch --tree-filter 'rm x' HEAD"),
        bypass("ask", "git difftool -x 'rm' HEAD"),
        bypass("ask", "tmux new -d 'rm -rf x'"),
        bypass("ask", "screen -dm rm -rf x"),
        bypass("ask", "at now"),
        // A command no rule names.
        bypass("allow", "nix develop -c cargo test"),
        bypass("allow", "nix shell nixpkgs#hello -c hello"),
        bypass("allow", "flatpak-spawn --host ls"),
        bypass("allow", "entr -r cargo test"),
        bypass("allow", "perf stat -e cycles ls"),
        bypass("allow", "perf report"),
        bypass("allow", "gdb --version"),
        bypass("allow", "gdb -batch -ex run -ex bt --args ls"),
        bypass("allow", "gdb ./app core"),
        bypass("allow", "ssh localhost ls"),
        bypass("allow", "ssh -N -L 8080:localhost:80 host"),
        bypass("allow", "make test"),
        bypass("allow", "make -j4 -C docs all"),
        bypass("allow", "hyperfine --version"),
        bypass("allow", "git rebase main"),
        bypass("allow", "git bisect good"),
        bypass("allow", "git submodule update --init"),
        // No rule to dodge.
        case("allow", "Bash", "hyperfine 'rm x'").mode("bypassPermissions"),
        case("allow", "Bash", "ssh localhost").mode("bypassPermissions"),
        case("allow", "Bash", "gdb -batch -ex run --args ls").mode("bypassPermissions"),
    ])
    .await;
}

/// Interpreters read the script file they run, as shells do (and their errors print its
/// lines): `python .env`, `node`, `perl`, `ruby`, `php`, `lua`, `Rscript`, `tclsh`,
/// `expect`, `awk -f`, `make -f`, `m4`, `busybox sh` are denied by `Read(.env)` in bypass
/// mode, whatever options come first (those that take a value read as the interpreter reads
/// them), and a script behind an allow rule that leads to a denied file is denied. Code given
/// on the command line (`python -c`, `-m MOD`, `node -e`, `perl -e`, `ruby -e`, `php -r`,
/// `Rscript -e`) reads no file, and the words after the script are its arguments, except
/// for `perl -n`/`-p`, which reads them. A computed script asks.
#[tokio::test]
async fn interpreters_read_the_script_file_they_run() {
    let fx = Fixture::new();
    common::write(&fx.proj.join("scripts/build.py"), "print(1)");
    let bypass = bash_in_bypass(&["Read(.env)"]);
    let allowed = bash_allowed_by(
        &["Bash(python3 scripts/*)", "Bash(node scripts/*)"],
        &["Read(./secrets/**)"],
    );
    run_table_in(
        &fx,
        vec![
            allowed("deny", "python3 scripts/../secrets/key.pem"),
            allowed("deny", "node scripts/../secrets/key.pem"),
            allowed("allow", "python3 scripts/build.py"),
            allowed("allow", "python3 scripts/build.py secrets/key.pem"),
            bypass("deny", "python .env"),
            bypass("deny", "python3 .env"),
            bypass("deny", "python3.12 .env"),
            bypass("deny", "python3 -u -B .env"),
            bypass("deny", "python3 -W ignore -X dev .env a b"),
            bypass("deny", "python3 -Wignore .env"),
            bypass("deny", "python3 -- .env"),
            bypass("deny", "env python3 .env"),
            bypass("deny", "pypy3 .env"),
            bypass("deny", "node .env"),
            bypass("deny", "nodejs .env"),
            bypass("deny", "node --require ./x.js --inspect .env"),
            bypass("deny", "node --env-file=.env app.js"),
            bypass("deny", "perl .env"),
            bypass("deny", "perl -w -I lib .env"),
            bypass("deny", "perl -ne print .env"),
            bypass("deny", "perl -lane 'print' .env"),
            bypass("deny", "ruby .env"),
            bypass("deny", "ruby -w -I lib -r json .env"),
            bypass("deny", "ruby -C scripts ../.env"),
            bypass("deny", "php .env"),
            bypass("deny", "php -f .env"),
            bypass("deny", "php -d display_errors=1 .env"),
            bypass("deny", "php -l .env"),
            bypass("deny", "lua .env"),
            bypass("deny", "lua -l socket .env"),
            bypass("deny", "lua5.4 .env"),
            bypass("deny", "Rscript .env"),
            bypass("deny", "Rscript --vanilla .env"),
            bypass("deny", "tclsh .env"),
            bypass("deny", "expect .env"),
            bypass("deny", "expect -f .env"),
            bypass("deny", "awk -f .env /dev/null"),
            bypass("deny", "gawk -f .env /dev/null"),
            bypass("deny", "make -f .env"),
            bypass("deny", "make --file=.env all"),
            bypass("deny", "make --makefile .env"),
            bypass("deny", "make -C scripts -f ../.env"),
            bypass("deny", "m4 .env"),
            bypass("deny", "m4 -D X=1 docs/a.md .env"),
            bypass("deny", "busybox sh .env"),
            // Code on the command line, a module, the script's arguments.
            bypass("allow", "python3 -c 'print(1)' .env"),
            bypass("allow", "python3 -m http.server"),
            bypass("allow", "python3 -m json.tool docs/a.md"),
            bypass("allow", "python3 scripts/build.py .env"),
            bypass("allow", "python3 -W ignore scripts/build.py"),
            bypass("allow", "node -e 'console.log(1)' .env"),
            bypass("allow", "node scripts/build.py .env"),
            bypass("allow", "perl -e 'print 1' .env"),
            bypass("allow", "ruby -e 'p 1' .env"),
            bypass("allow", "php -r 'echo 1;' .env"),
            bypass("allow", "Rscript -e 'x' .env"),
            bypass("allow", "lua -e 'print(1)'"),
            bypass("allow", "make test"),
            bypass("allow", "make -f docs/a.md"),
            bypass("allow", "m4 docs/a.md"),
            bypass("allow", "python3 --version"),
            bypass("allow", "python3"),
            bypass("ask", "python3 \"${SCRIPT}\""),
        ],
    )
    .await;
}

/// The file a git command reads its message from is read: `git commit -F .env` (`--file`,
/// attached, in a bundle), `git commit --template`, `git tag -F`, `git notes add -F`, `git
/// merge -F` are denied by `Read(.env)` under `Bash(git:*)` and in bypass mode; `-F -` is
/// the input and `-m` no file.
#[tokio::test]
async fn git_reads_the_file_its_message_comes_from() {
    let allowed = bash_allowed_by(&["Bash(git:*)"], &["Read(.env)"]);
    let bypass = bash_in_bypass(&["Read(.env)"]);
    run_table(vec![
        allowed("deny", "git commit -F .env"),
        bypass("deny", "git commit -F .env"),
        bypass("deny", "git commit --file=.env"),
        bypass("deny", "git commit --file .env"),
        bypass("deny", "git commit --fil=.env"),
        bypass("deny", "git commit -aF .env"),
        bypass("deny", "git commit -F.env"),
        bypass("deny", "git commit --template=.env"),
        bypass("deny", "git commit -t .env"),
        bypass("deny", "git -C docs commit -F ../.env"),
        bypass("deny", "git tag -a v1 -F .env"),
        bypass("deny", "git tag -F .env v1"),
        bypass("deny", "git notes add -F .env"),
        bypass("deny", "git notes append -F .env HEAD"),
        bypass("deny", "git merge -F .env main"),
        allowed("allow", "git commit -F docs/a.md"),
        allowed("allow", "git commit -m 'msg'"),
        allowed("allow", "git commit -F - src/main.rs"),
        allowed("allow", "git tag -m x v1"),
        bypass("allow", "git commit -am 'F .env'"),
        bypass("allow", "git commit -m .env"),
    ])
    .await;
}

/// git commands that write files of the work tree they do not name (`git clean -f`, `git
/// reset --hard`, `git stash`/`pop`/`apply`, `git apply`, `git am`, `git merge`, `git
/// rebase`, `git cherry-pick`, `git revert`, `git switch`, `git pull`) ask, in bypass mode
/// too, where an Edit deny or ask rule could match a file in the directory they work in, as
/// `git checkout .` does; a patch or mailbox they read meets the Read deny rules. A dry
/// run, a check, the index alone, a listing, a rule that cannot match there, and no rule at
/// all leave them allowed; `git checkout BRANCH` stays as it is.
#[tokio::test]
async fn git_commands_that_write_unnamed_files_of_the_work_tree_ask_under_an_edit_rule() {
    let bypass = bash_in_bypass(&["Read(.env)", "Edit(./src/**)"]);
    let mut cases = vec![];
    for command in [
        "git clean -f",
        "git clean -fd",
        "git clean -fdx",
        "git clean -ffdx",
        "git reset --hard",
        "git reset --hard HEAD~1",
        "git reset --merge",
        "git reset --keep HEAD^",
        "git stash",
        "git stash push",
        "git stash -u",
        "git stash pop",
        "git stash apply stash@{1}",
        "git apply fix.patch",
        "git apply -R --index fix.patch",
        "git am 0001.patch",
        "git am --abort",
        "git merge main",
        "git merge --abort",
        "git pull",
        "git pull --rebase origin main",
        "git rebase main",
        "git rebase --continue",
        "git cherry-pick abc123",
        "git cherry-pick -n abc123",
        "git revert HEAD",
        "git switch main",
        "git switch -C topic origin/topic",
    ] {
        cases.push(bypass("ask", command));
        cases.push(
            case("allow", "Bash", command)
                .mode("bypassPermissions")
                .deny(&["Edit(~/.bashrc)"]),
        );
        cases.push(case("allow", "Bash", command).mode("bypassPermissions"));
    }
    cases.extend([
        // A directory the rule denies, named: denied.
        bypass("deny", "git clean -f -- src"),
        bypass("deny", "git -C src reset --hard"),
        bypass("deny", "git apply .env"),
        bypass("deny", "git apply --check .env"),
        bypass("deny", "git am .env"),
        bypass("allow", "git clean -n"),
        bypass("allow", "git clean -fdn"),
        bypass("allow", "git clean --dry-run -d"),
        bypass("allow", "git clean -f docs"),
        bypass("allow", "git reset"),
        bypass("allow", "git reset --soft HEAD~1"),
        bypass("allow", "git reset -q HEAD docs/a.md"),
        bypass("allow", "git stash list"),
        bypass("allow", "git stash drop"),
        bypass("allow", "git apply --check fix.patch"),
        bypass("allow", "git apply --stat fix.patch"),
        bypass("allow", "git apply --cached fix.patch"),
        bypass("allow", "git am --show-current-patch"),
        bypass("allow", "git checkout main"),
        bypass("allow", "git switch -c feature"),
        bypass("allow", "git status"),
        bypass("allow", "git -C docs clean -fd"),
    ]);
    run_table(cases).await;
}

/// Programs that rewrite the files they are given in place write them: `sponge`,
/// `dos2unix`/`unix2dos`, `perl -i` (`-pi`, `-i.bak`), `gofmt -w`, `rustfmt`, `clang-format
/// -i`, `prettier --write`, `black`, `isort`, `chattr`, `setfacl`, `setfattr` are denied by
/// `Edit(./src/**)` in bypass mode (an option's value is no file); a directory they format
/// whole asks where such a rule could match inside. Without their writing option (or with
/// `--check`) they only read, and meet the Read deny rules instead.
#[tokio::test]
async fn in_place_rewriters_write_their_files() {
    let bypass = bash_in_bypass(&["Read(.env)", "Edit(./src/**)"]);
    run_table(vec![
        bypass("deny", "sponge src/main.rs"),
        bypass("deny", "echo x | sponge -a src/main.rs"),
        bypass("deny", "dos2unix src/main.rs"),
        bypass("deny", "dos2unix -k -q src/main.rs"),
        bypass("deny", "dos2unix -n docs/a.md src/out.rs"),
        bypass("deny", "unix2dos src/main.rs"),
        bypass("deny", "perl -i -pe 's/a/b/' src/main.rs"),
        bypass("deny", "perl -pi -e 's/a/b/' src/main.rs"),
        bypass("deny", "perl -i.bak -pe 's/a/b/' src/main.rs"),
        bypass("deny", "perl -pi.bak -e 's/a/b/' docs/a.md src/main.rs"),
        bypass("deny", "gofmt -w src/main.go"),
        bypass("deny", "gofmt -l -w src/main.go"),
        bypass("deny", "gofmt -r 'a -> b' -w src/main.go"),
        bypass("deny", "rustfmt src/main.rs"),
        bypass("deny", "rustfmt --edition 2021 src/main.rs"),
        bypass("deny", "clang-format -i src/a.c"),
        bypass("deny", "clang-format -i --style=file src/a.c"),
        bypass("deny", "clang-format -style file -i src/a.c"),
        bypass("deny", "prettier --write src/a.js"),
        bypass("deny", "prettier -w --tab-width 4 src/a.js"),
        bypass("deny", "black src/a.py"),
        bypass("deny", "black -l 100 src/a.py"),
        bypass("deny", "isort src/a.py"),
        bypass("deny", "chattr +i src/main.rs"),
        bypass("deny", "chattr -i src/main.rs"),
        bypass("deny", "chattr -R -v 2 +i src/main.rs"),
        bypass("deny", "setfacl -m u:nobody:r src/main.rs"),
        bypass("deny", "setfacl -b src/main.rs"),
        bypass("deny", "setfattr -n user.x -v 1 src/main.rs"),
        bypass("deny", "setfattr -x user.x src/main.rs"),
        // Reading only: the Read rules.
        bypass("deny", "gofmt .env"),
        bypass("deny", "clang-format .env"),
        bypass("deny", "prettier .env"),
        bypass("deny", "black --check .env"),
        bypass("deny", "dos2unix -i .env"),
        // A directory formatted whole.
        bypass("ask", "black ."),
        bypass("ask", "prettier --write ."),
        bypass("ask", "gofmt -w ."),
        bypass("ask", "isort src/../"),
        bypass("ask", "chattr -R +i ."),
        // No rule matches.
        bypass("allow", "gofmt src/main.rs"),
        bypass("allow", "gofmt -l docs"),
        bypass("allow", "clang-format src/a.c"),
        bypass("allow", "prettier --check src/a.js"),
        bypass("allow", "black --check src/a.py"),
        bypass("allow", "black --diff src/a.py"),
        bypass("allow", "isort --check-only src/a.py"),
        bypass("allow", "rustfmt --check src/main.rs"),
        bypass("allow", "perl -pe 's/a/b/' src/main.rs"),
        bypass("allow", "sponge docs/out.txt"),
        bypass("allow", "dos2unix docs/a.md"),
        bypass("allow", "chattr +i docs/a.md"),
        bypass("allow", "setfacl -m u:nobody:r docs/a.md"),
        bypass("allow", "setfattr -n user.x -v src/main.rs docs/a.md"),
        bypass("allow", "black docs"),
        case("allow", "Bash", "black .").mode("bypassPermissions"),
    ])
    .await;
}
