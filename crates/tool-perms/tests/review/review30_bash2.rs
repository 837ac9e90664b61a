//! Session 30, second review of Bash in bypass mode: programs that delete their operand
//! (compressors, `awk -i inplace`) are writers of it; a substitution after a fixed `./` or
//! `../` is checked as the expansion it is; a program fed by `ls` is checked where `ls`
//! runs, with `ls`'s options that take a value read as such; shell scripts run on what
//! find finds through `{}` (or xargs's `-I` string) inside the script text, `./"$1"` or a
//! redirection; the near-variants of find's output reaching a program (`./$(find …)`, a
//! `for` list with other words, several substitutions, `command find`, `cat -`, a
//! subshell); every program that asks when run on `.git/config` directly also asks behind
//! `-exec`/`xargs`; what find feeds is checked by its walk and not also as a variable set
//! on the command line (`rm -rf $(find . -name __pycache__)` stays allowed); the walks of
//! one command are bounded; the messages show the command as find would run it.

use crate::common;

use crate::common::{Case, Fixture, case, installed, real_bash, run, run_table_in};
use tool_core::PermissionResult;

/// A fixture whose repository has a branch `main` (`.git/refs/heads/main`), `.git/HEAD`
/// and `.git/config`, beside `a.pyc`, `a.log`, `notes.txt`, a `__pycache__` and C sources;
/// its home has `.bashrc`, `.ssh/id_rsa` and `.config/git/config`.
fn repository() -> Fixture {
    let fx = Fixture::new();
    for (file, text) in [
        (".git/refs/heads/main", "0123"),
        (".git/HEAD", "ref: refs/heads/main"),
        ("a.pyc", "x"),
        ("a.log", "x"),
        ("notes.txt", "a"),
        ("src/__pycache__/m.pyc", "x"),
        ("src/a.c", "int a;"),
        ("src/sub/b.c", "int b;"),
    ] {
        common::write(&fx.proj.join(file), text);
    }
    common::write(&fx.home.join(".config/git/config"), "[user]");
    std::fs::create_dir_all(fx.proj.join("build")).unwrap();
    fx
}

fn bypass(expect: &'static str, command: &str) -> Case {
    case(expect, "Bash", command).mode("bypassPermissions")
}

/// Whether running `command` with the real bash in a fresh [`repository`] (from `cwd`
/// under the project) changes or removes the branch's ref, `.git/config`, `.git/HEAD`,
/// `~/.bashrc` or the project itself.
fn loses_a_protected_file(command: &str) -> bool {
    let fx = repository();
    let watched = [
        fx.proj.join(".git/refs/heads/main"),
        fx.proj.join(".git/config"),
        fx.proj.join(".git/HEAD"),
        fx.home.join(".bashrc"),
    ];
    let before: Vec<_> = watched.iter().map(|p| std::fs::read(p).ok()).collect();
    real_bash(command, &fx.proj, &fx.home);
    let after: Vec<_> = watched.iter().map(|p| std::fs::read(p).ok()).collect();
    before != after || !fx.proj.is_dir()
}

/// Compressors that replace their operand by its compressed form delete it: `xz`, `bzip2`
/// and `lzma` unless `-k`, `-c`, `-t` or `-l`; `zstd`, `lz4` and `brotli` with `--rm`;
/// decompressors write the file without the suffix (`unxz .git/config.xz` writes
/// `.git/config`); gawk's `-i inplace` rewrites its files. Each asks on a protected file as
/// `gzip` does, and stays allowed on other files or when it only reads (`-c`, `-t`, `-l`,
/// `zstd -o /tmp/x`).
#[tokio::test]
async fn compressors_that_delete_their_operand_are_writers_of_it() {
    let fx = repository();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "gzip .git/config"),
            bypass("ask", "xz .git/refs/heads/main"),
            bypass("ask", "bzip2 ~/.bashrc"),
            bypass("ask", "lzma .git/config"),
            bypass("ask", "xz -9 -T0 -- .git/config"),
            bypass("ask", "zstd --rm .git/config"),
            bypass("ask", "zstd -q --rm -19 .git/config"),
            bypass("ask", "lz4 --rm .git/config"),
            bypass("ask", "brotli --rm .git/config"),
            bypass("ask", "brotli -j .git/config"),
            bypass("ask", "unxz .git/config.xz"),
            bypass("ask", "bunzip2 ~/.bashrc.bz2"),
            bypass("ask", "unlzma .git/config.lzma"),
            bypass("ask", "xz -d .git/config.xz"),
            bypass("ask", "zstd -d .git/config.zst"),
            bypass("ask", "zstd -o .git/config notes.txt"),
            bypass("ask", "lz4 notes.txt .git/config"),
            bypass("ask", "awk -i inplace 1 ~/.bashrc"),
            bypass("ask", "gawk -i inplace '{print}' .git/config"),
            bypass("ask", "gawk --include=inplace 1 .git/config"),
            bypass("ask", "awk -iinplace 1 ~/.bashrc"),
            bypass("allow", "xz a.log"),
            bypass("allow", "bzip2 -k notes.txt"),
            bypass("allow", "xz -c .git/config > /tmp/c.xz"),
            bypass("allow", "bzip2 -c ~/.bashrc > /tmp/rc.bz2"),
            bypass("allow", "xz -t a.log.xz"),
            bypass("allow", "xz -l a.log.xz"),
            bypass("allow", "zstd -c .git/config > /tmp/c.zst"),
            bypass("allow", "zstd .git/config -o /tmp/c.zst"),
            bypass("allow", "zstd --rm a.log"),
            bypass("allow", "xzcat .git/config.xz"),
            bypass("allow", "awk 1 ~/.bashrc"),
            bypass("allow", "awk -i inplace 1 notes.txt"),
        ],
    )
    .await;
}

/// A command substitution after a fixed `./` is that substitution (`./$(echo .git)` names
/// `.git`), and after `../` it may be the project itself or anything beside it: `rm -rf
/// ../$(basename "$PWD")`, `rm -rf ./$(echo .git)`, `mv ./$(find . -name .git) /tmp/x/`
/// ask as `rm -rf $(pwd)` does; a fixed name after the substitution (`./$(x)/build`) and a
/// removal that is not recursive of a plain name stay as before.
#[tokio::test]
async fn a_substitution_after_a_fixed_dot_segment_is_checked_as_the_expansion() {
    let fx = repository();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "rm -rf $(pwd)"),
            bypass("ask", "rm -rf $(find . -name .git)"),
            bypass("ask", "rm -rf ../$(basename \"$PWD\")"),
            bypass("ask", "rm -rf ./$(find . -name .git)"),
            bypass("ask", "rm -rf ./$(echo .git)"),
            bypass("ask", "rm -rf ././$(echo .git)"),
            bypass("ask", "rm -rf \"./$(echo .git)\""),
            bypass("ask", "rm -rf ../\"$(basename $PWD)\""),
            bypass("ask", "rm -rf ../`basename $PWD`"),
            bypass("ask", "mv ./$(find . -name .git) /tmp/x/"),
            bypass("allow", "rm -rf ./$(echo build)/out"),
            bypass("allow", "rm -f ./$(echo a).log"),
        ],
    )
    .await;
}

/// Found by code review: dot segments in another order or doubled slashes before the
/// substitution (`./../`, `.././`, `..//`) escaped the check `../$(…)` gets, and a
/// placeholder inside a word (`./{}`, which GNU find and `xargs -I{}` fill in) escaped the
/// check of what find finds for programs outside the listed ones (`gzip`, `xz`, `ln -sf`).
#[tokio::test]
async fn dot_segments_in_any_order_and_placeholders_inside_words_are_checked() {
    let fx = repository();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "rm -rf ./../\"$(basename \"$PWD\")\""),
            bypass("ask", "rm -rf .././$(basename \"$PWD\")"),
            bypass("ask", "rm -rf ..//$(basename $PWD)"),
            bypass("ask", "rm -rf ../../$(basename $PWD)"),
            bypass("ask", "find . -name main -exec gzip ./{} \\;"),
            bypass("ask", "find . -name main -exec xz ./{} \\;"),
            bypass(
                "ask",
                "find . -name main | xargs -I{} ln -sf /dev/null ./{}",
            ),
            bypass("allow", "rm -rf ./../$(echo build)/out"),
            bypass("allow", "find . -name '*.log' -exec gzip ./{} \\;"),
        ],
    )
    .await;
}

/// `ls` lists where it runs: after `cd .git/refs/heads`, `rm $(ls)` removes the branch's
/// ref, and after `cd .git`, `rm -f $(ls -A)` removes `config` and `HEAD`; they ask as `rm
/// *` there does. `ls`'s options that take a value (`-I x`, `--ignore=x`, `-w 1`, `--sort
/// time`) are no operands: `cd ~ && rm $(ls -I x -a)` lists the home. Listing a directory
/// without protected names after a `cd` stays allowed. `echo` and `printf '%s\n'` print
/// their operands: `echo .git/config | xargs rm` is `rm .git/config`.
#[tokio::test]
async fn a_program_fed_by_ls_is_checked_where_ls_runs() {
    let fx = repository();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "cd .git/refs/heads && rm *"),
            bypass("ask", "cd .git/refs/heads && rm $(ls)"),
            bypass("ask", "cd .git && rm -f $(ls -A)"),
            bypass("ask", "cd .git && rm -f $(ls)"),
            bypass("ask", "cd ~/.ssh && ls | xargs rm"),
            bypass(
                "ask",
                "cd .git && ls refs/heads | xargs -I{} rm refs/heads/{}",
            ),
            bypass("ask", "cd .git/refs && rm $(ls heads/main)"),
            bypass("ask", "cd ~ && rm $(ls -I x -a)"),
            bypass("ask", "cd ~ && rm $(ls --ignore=x -a)"),
            bypass("ask", "cd ~ && rm $(ls -w 1 -a)"),
            bypass("ask", "cd ~ && rm $(ls -a --sort time)"),
            bypass("ask", "cd ~ && rm $(ls -a --hide x)"),
            bypass("ask", "cd ~ && rm $(ls -a -T 1)"),
            bypass("ask", "cd ~ && rm $(ls -a --format single-column)"),
            bypass("allow", "cd src && rm $(ls)"),
            bypass("allow", "cd src && ls | xargs rm -f"),
            bypass("allow", "cd src && rm $(ls -I x)"),
            bypass("allow", "rm $(ls -I x *.log)"),
            bypass("ask", "echo .git/config | xargs rm"),
            bypass("ask", "printf '%s\\n' .git/config | xargs rm"),
            bypass("allow", "echo a.log | xargs rm"),
        ],
    )
    .await;
}

/// A shell script run on what find (or xargs) gives it takes it through `{}` (or the `-I`
/// string) substituted into the script text, through a fixed `./` before its parameter
/// (`./"$1"`), through a redirection truncating it (`: > "$1"`), or by feeding it on
/// (`printf … "$@" | xargs rm`): each asks on a branch's ref or `.git/config`, checked as
/// `find … -exec rm {} +`; the same scripts on `*.pyc` files stay allowed.
#[tokio::test]
async fn shell_scripts_run_on_what_find_finds_are_checked_as_find_exec() {
    let fx = repository();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "find . -name main -exec sh -c 'rm {}' \\;"),
            bypass(
                "ask",
                "find . -name config -exec sh -c 'sed -i s/a/b/ {}' \\;",
            ),
            bypass("ask", "find . -name main | xargs -I% sh -c 'rm %'"),
            bypass("ask", "find . -name main | xargs -I {} bash -c 'rm -f {}'"),
            bypass(
                "ask",
                "find . -name main -exec bash -c 'rm ./\"$1\"' _ {} \\;",
            ),
            bypass("ask", "find . -name main -exec sh -c ': > \"$1\"' _ {} \\;"),
            bypass("ask", "find . -name main -exec sh -c '> \"$1\"' _ {} \\;"),
            bypass(
                "ask",
                "find . -name main -exec sh -c 'printf \"%s\\n\" \"$@\" | xargs rm' sh {} +",
            ),
            bypass("allow", "find . -name '*.pyc' -exec sh -c 'rm {}' \\;"),
            bypass("allow", "find . -name '*.pyc' | xargs -I% sh -c 'rm %'"),
            bypass(
                "allow",
                "find . -name '*.pyc' -exec sh -c ': > \"$1\"' _ {} \\;",
            ),
            bypass("allow", "find . -name main -exec sh -c 'cat {}' \\;"),
            bypass(
                "allow",
                "find . -name main -exec sh -c 'echo {} > /tmp/x' \\;",
            ),
        ],
    )
    .await;
}

/// Near-variants of find's output reaching a program: `./$(find …)`, a `for` list with
/// other words, `"./$f"` in a fed loop, several substitutions (each checked), find behind
/// `command`/`env`/`nice` or a backslash, `cat -` passing its input on, a subshell holding
/// the find, and a redirection in a `for` loop truncating the file: each asks, as `find
/// . -name main -exec rm {} +` does.
#[tokio::test]
async fn near_variants_of_find_feeding_a_program_are_checked_as_find_exec() {
    let fx = repository();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "rm ./$(find . -name main)"),
            bypass("ask", "for f in a $(find . -name main); do rm \"$f\"; done"),
            bypass(
                "ask",
                "find . -name main | while read f; do rm \"./$f\"; done",
            ),
            bypass("ask", "rm $(find . -name '*.pyc') $(find . -name main)"),
            bypass("ask", "rm $(command find . -name main)"),
            bypass("ask", "command find . -name main | xargs rm"),
            bypass("ask", "env find . -name main | xargs rm"),
            bypass("ask", "nice find . -name main | xargs rm"),
            bypass("ask", "\\find . -name main | xargs rm"),
            bypass("ask", "find . -name main | cat - | xargs rm"),
            bypass("ask", "(find . -name main) | xargs rm"),
            bypass("ask", "for f in $(find . -name main); do > \"$f\"; done"),
            bypass(
                "allow",
                "rm $(find . -name '*.pyc') $(find . -name '*.log')",
            ),
            bypass(
                "allow",
                "for f in a $(find . -name '*.pyc'); do rm \"$f\"; done",
            ),
            bypass("allow", "(find . -name '*.pyc') | xargs rm"),
            bypass(
                "allow",
                "for f in $(find . -name '*.pyc'); do > \"$f\"; done",
            ),
        ],
    )
    .await;
}

/// Programs that overwrite or remove their operand, run by `find -exec`, `xargs` or
/// `parallel` on what find finds, ask as they do when run on `.git/config` directly:
/// `gzip`, `sort -o`, `tar --remove-files`, `install`, `ln -sf`, `dd of=X` under `xargs -I
/// X`, `parallel dd of={}`. The same on `*.txt` files stays allowed.
#[tokio::test]
async fn every_program_that_writes_its_operand_asks_behind_find_exec() {
    let fx = repository();
    run_table_in(
        &fx,
        vec![
            bypass("ask", "gzip .git/config"),
            bypass("ask", "find . -name config -exec gzip {} +"),
            bypass("ask", "find . -name config -exec xz {} +"),
            bypass("ask", "find . -name config -exec sort -o {} /dev/null \\;"),
            bypass(
                "ask",
                "find . -name config -exec tar --remove-files -cf ../x.tar {} +",
            ),
            bypass("ask", "find . -name config -exec install notes.txt {} \\;"),
            bypass("ask", "find . -name config -exec ln -sf notes.txt {} \\;"),
            bypass(
                "ask",
                "find . -name config | xargs -IX dd if=/dev/null of=X",
            ),
            bypass("ask", "find . -name config | xargs gzip"),
            bypass(
                "ask",
                "find . -name config | parallel dd if=/dev/null of={}",
            ),
            bypass("allow", "find . -name '*.txt' -exec gzip {} +"),
            bypass("allow", "find . -name config -exec gzip -c {} \\;"),
            bypass("allow", "find . -name config -exec cp {} /tmp/x \\;"),
            bypass(
                "allow",
                "find . -name '*.txt' | xargs -IX dd if=/dev/null of=X",
            ),
        ],
    )
    .await;
}

/// Everyday removals and moves of what find finds stay allowed in bypass mode, as their
/// `-exec` and `xargs` equivalents are: the fed check (the walk of find's tree) replaces
/// the "set on this command line, may be / or the home" check of a variable or
/// substitution find fills.
#[tokio::test]
async fn what_find_feeds_is_not_also_a_variable_that_may_be_the_home() {
    let fx = repository();
    run_table_in(
        &fx,
        vec![
            bypass("allow", "find . -type d -name __pycache__ | xargs rm -rf"),
            bypass("allow", "find src -name '*.c' -exec mv {} build/ \\;"),
            bypass("allow", "rm -rf $(find . -name __pycache__)"),
            bypass(
                "allow",
                "for d in $(find . -type d -name __pycache__); do rm -r \"$d\"; done",
            ),
            bypass(
                "allow",
                "find . -type d -name __pycache__ | while read d; do rm -rf \"$d\"; done",
            ),
            bypass("allow", "mv $(find src -name '*.c') build/"),
            bypass(
                "allow",
                "for f in $(find src -name \"*.c\"); do mv \"$f\" build/; done",
            ),
            bypass(
                "allow",
                "find src -name '*.c' -exec sh -c 'mv \"$1\" \"${1%.c}.cc\"' _ {} \\;",
            ),
            bypass("ask", "rm -rf $(find . -name .git)"),
            bypass(
                "ask",
                "for d in $(find . -name .git); do rm -r \"$d\"; done",
            ),
            bypass("ask", "rm -rf $(find ~ -maxdepth 0)"),
            bypass("ask", "d=$(echo ~); rm -rf \"$d\""),
        ],
    )
    .await;
}

/// Many finds in one command are each checked, and the work stays bounded: for 250 `rm
/// $(find . -name zzN)` in a tree of 12,000 entries the tree is walked once for all of
/// them, not once per find (3 million entries): each of its directories is opened once, as
/// inotify counts (a count, not a time: the machine's load does not change it); and one of
/// them reaching a protected name still asks.
#[tokio::test]
async fn many_finds_in_one_command_walk_the_tree_once() {
    use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
    let fx = repository();
    for d in 0..120 {
        let dir = fx.proj.join(format!("tree/d{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100 {
            std::fs::write(dir.join(format!("f{f}")), "").unwrap();
        }
    }
    let watcher = Inotify::init(InitFlags::IN_NONBLOCK).unwrap();
    // Closes watched too: inotify merges an event into the one before it when they are
    // the same and unread, so opens alone would count once however many there were.
    watcher
        .add_watch(
            &fx.proj.join("tree/d7"),
            AddWatchFlags::IN_OPEN | AddWatchFlags::IN_CLOSE_NOWRITE,
        )
        .unwrap();
    let many: Vec<String> = (0..250)
        .map(|n| format!("rm $(find . -name zz{n})"))
        .collect();
    let allowed = run(&fx, &bypass("allow", &many.join("; "))).await;
    assert!(
        matches!(allowed, PermissionResult::Allow { .. }),
        "{allowed:?}"
    );
    // The directory's own opens (its listing), not its files'.
    let mut opened = 0;
    while let Ok(events) = watcher.read_events() {
        opened += events
            .iter()
            .filter(|e| {
                e.name.is_none()
                    && e.mask
                        .contains(AddWatchFlags::IN_ISDIR | AddWatchFlags::IN_OPEN)
            })
            .count();
    }
    assert!(
        (1..=2).contains(&opened),
        "tree/d7 was listed {opened} times for 250 finds"
    );
    let with_main = format!("{}; rm $(find . -name main)", many.join("; "));
    let asked = run(&fx, &bypass("ask", &with_main)).await;
    assert!(matches!(asked, PermissionResult::Ask { .. }), "{asked:?}");
}

/// The message of an ask shows the command as find would run it: xargs's `-I X` string is
/// where `{}` goes (`-exec rm {} +` for `xargs -I X rm X`), parallel's replacement strings
/// too, and a script that moves what it is given says it may move it away.
#[tokio::test]
async fn the_messages_show_the_command_as_find_would_run_it() {
    let fx = repository();
    let said = [
        ("find . -name main | xargs -I X rm X", "-exec rm {}"),
        ("find . -name main | parallel rm {/}", "-exec rm {}"),
        (
            "find . -name main -exec sh -c 'mv \"$1\" /tmp/x' _ {} \\;",
            "may move away",
        ),
    ];
    let mut wrong = Vec::new();
    for (command, words) in said {
        match run(&fx, &bypass("ask", command)).await {
            PermissionResult::Ask { message, .. }
                if message.contains(words) && !message.contains("-exec rm X") =>
            {
                if message.contains("set on this command line") {
                    wrong.push(format!("{command}: a variable's message: {message}"));
                }
            }
            other => wrong.push(format!("{command}: wanted {words:?}, got {other:?}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// What the asked spellings do, run by the real bash in a copy of such a repository: each
/// deletes, empties or rewrites a branch's ref, `.git/config`, `.git/HEAD`, `~/.bashrc` or
/// the project (so asking is right), and the allowed everyday ones leave them as they
/// were.
#[test]
fn the_asked_spellings_really_take_away_a_protected_file() {
    for program in ["find", "xargs", "xz", "bzip2", "zstd", "ls"] {
        if !installed(program) {
            eprintln!("{program} is not installed: skipped");
            return;
        }
    }
    for command in [
        "xz .git/refs/heads/main",
        "bzip2 ~/.bashrc",
        "lzma .git/config",
        "zstd -q --rm .git/config",
        "rm -rf ./$(echo .git)",
        "rm -rf ./$(find . -name .git)",
        "cd .git/refs/heads && rm $(ls)",
        "cd .git && rm -f $(ls -A)",
        "cd ~ && rm -f $(ls -I x -a)",
        "find . -name main -exec sh -c 'rm {}' \\;",
        "find . -name main | xargs -I% sh -c 'rm %'",
        "find . -name main -exec bash -c 'rm ./\"$1\"' _ {} \\;",
        "find . -name main -exec sh -c ': > \"$1\"' _ {} \\;",
        "rm $(find . -name '*.pyc') $(find . -name main)",
        "find . -name main | cat - | xargs rm",
        "(find . -name main) | xargs rm",
        "find . -name config -exec gzip {} +",
        "find . -name config | xargs -IX dd if=/dev/null of=X",
    ] {
        assert!(
            loses_a_protected_file(command),
            "{command} left the protected files as they were"
        );
    }
    for command in [
        "rm -rf $(find . -name __pycache__)",
        "for f in $(find src -name \"*.c\"); do mv \"$f\" build/; done",
        "cd src && rm $(ls)",
        "xz -c .git/config > /dev/null",
    ] {
        assert!(
            !loses_a_protected_file(command),
            "{command} changed a protected file"
        );
    }
}
