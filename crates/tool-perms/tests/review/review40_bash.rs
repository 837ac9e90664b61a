//! Session 40 on Bash: five ways past a Bash deny rule that the code review of session 39's
//! glob checks found, each run through the real bash with a fake `git` that records what it
//! was given, so that each test shows the command pushes, not only that it is asked about.
//! A bracket group bash does not take for a `[:…:]` class (`pu[s[:a[:]h`) was read as one;
//! `nullglob` turned on by a quoted or computed option (`bash -O nul"l"glob`) was not seen;
//! an exact rule (`Bash(git push)`) missed the globs after its words that nullglob removes;
//! a glob among git's options (`git ?-no-pager push`) that may become an option was not
//! asked about when the rule's words followed it as written; and a glob among xargs's own
//! options (`xargs -a * push`) was not looked at. Digits too big for a descriptor (`git
//! 2147483648</dev/null push`) were taken for a computed word, and asked about for a reason
//! that was not there.
//!
//! The second review of the day (black-box, a fuzzer run through the real bash) found more:
//! the words after a redirection in a list's, pipeline's or `!` command's last command, and a
//! `!` or assignments after `time` and `coproc`, each hiding the command bash runs.

use std::path::PathBuf;

use crate::common::{Case, Fixture, case, real_bash, run, run_table_in};
use serde_json::json;
use tool_core::{PermissionResult, ToolUseContext};
use tool_perms::bash::commands::glob_may_be;
use tool_perms::matches_rule;

const PUSH: &str = "Bash(git push:*)";

/// A table row: Bash `command` in bypass mode, with `deny` denied.
fn bypass(expect: &'static str, deny: &str, command: &str) -> Case {
    case(expect, "Bash", command)
        .mode("bypassPermissions")
        .deny(&[deny])
}

/// The rows for `command` with `deny` denied: in bypass mode, and in default mode with
/// `Bash(git:*)` (and the other `allow` rules) allowed.
fn both_modes(expect: &'static str, deny: &str, command: &str, allow: &[&str]) -> [Case; 2] {
    [
        bypass(expect, deny, command),
        case(expect, "Bash", command)
            .allow(&["Bash(git:*)"])
            .allow(allow)
            .deny(&[deny]),
    ]
}

/// Whether a hook whose `if` is `rule` runs for the Bash `command` in `fx`'s project.
fn hook_if_runs(fx: &Fixture, rule: &str, command: &str) -> bool {
    let ctx = ToolUseContext::new(&fx.proj).with_home(Some(fx.home.clone()));
    let bash = crate::common::probe(fx, "Bash");
    matches_rule(rule, &bash, &json!({ "command": command }), &ctx)
}

/// A fake `git` first on `PATH` (it writes its arguments, one call a line, to a file; `git
/// init` runs the real one), and an empty directory in the project for bash to run in.
struct FakeGit {
    fx: Fixture,
    dir: PathBuf,
    bin: PathBuf,
    args: PathBuf,
}

impl FakeGit {
    fn new() -> Self {
        let fx = Fixture::new();
        let dir = fx.proj.join("run");
        let bin = fx.out.join("bin");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&bin).unwrap();
        let git = bin.join("git");
        std::fs::write(
            &git,
            "#!/bin/sh\nif [ \"$1\" = init ]; then exec \"$REAL_GIT\" \"$@\"; fi\necho \"$*\" >> \"$ARGS\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&git, std::fs::Permissions::from_mode(0o755)).unwrap();
        let args = fx.out.join("args");
        Self { fx, dir, bin, args }
    }

    /// Puts a fake `name` first on `PATH` too, which writes `name` and its arguments to the
    /// same file as git's (a line a call).
    fn fake(&self, name: &str) -> &Self {
        let path = self.bin.join(name);
        std::fs::write(
            &path,
            format!("#!/bin/sh\necho \"{name} $*\" >> \"$ARGS\"\n"),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        self
    }

    /// Makes the empty files `names` in the directory bash runs in.
    fn files(&self, names: &[&str]) -> &Self {
        for n in names {
            std::fs::write(self.dir.join(n), "").unwrap();
        }
        self
    }

    /// What git was given, a line a call, when the real bash ran `command` in the
    /// directory (in the C locale); empty when git did not run.
    fn args(&self, command: &str) -> String {
        let _ = std::fs::remove_file(&self.args);
        let script = format!(
            "export LC_ALL=C ARGS='{}' REAL_GIT=\"$(command -v git)\" PATH='{}':\"$PATH\"; {command}",
            self.args.display(),
            self.bin.display(),
        );
        real_bash(&script, &self.dir, &self.fx.home);
        std::fs::read_to_string(&self.args).unwrap_or_default()
    }

    /// Removes what the last command made in the directory.
    fn clear(&self) -> &Self {
        std::fs::remove_dir_all(&self.dir).unwrap();
        std::fs::create_dir_all(&self.dir).unwrap();
        self
    }
}

/// Found by the code review: inside a bracket class bash takes `[:…:]` (and `[=…=]`,
/// `[.….]`) for a named member only when it is closed before any `]`; `pu[s[:a[:]h` is
/// `pu`, a class of `s`, `[`, `:`, `a`, `[`, `:`, then `h`, which matches a file `push`.
/// It was read as a named class `[:a[:]` with no `]` after it, so the `[` was taken for a
/// literal and the word could not be `push`: allowed past `Bash(git push:*)`, in bypass
/// mode too. A `[` followed by `:`, `=` or `.` that is not a well-formed named member now
/// makes the word one that may be anything.
#[tokio::test]
async fn a_bracket_group_bash_takes_for_no_class_may_spell_push() {
    let git = FakeGit::new();
    git.files(&["push"]);
    assert_eq!(git.args("git pu[s[:a[:]h"), "push\n");
    assert_eq!(git.args("git pu[s[=a[=]h"), "push\n");
    assert_eq!(
        git.args("touch push; git pu[s[:a[:]h origin"),
        "push origin\n"
    );
    assert_eq!(git.args("git p[![=p=]]]sh"), "push\n");

    for glob in [
        "pu[s[:a[:]h",
        "pu[s[=a[=]h",
        "pu[s[.a[.]h",
        "[[:]ush",
        "p[[:alpha]u]sh",
    ] {
        assert!(glob_may_be(glob, "push"), "{glob}");
    }
    // Well-formed members are still read as such.
    assert!(glob_may_be("[[:alpha:]]ush", "push"));
    assert!(!glob_may_be("[[:alpha:]]ull", "push"));
    assert!(!glob_may_be("[[:digit:][.x.]]ush", "pull"));
    // bash 5.2 closes a class after an equivalence class by whether it matched:
    // `p[![=p=]]]sh` is `p`, not `p` or `]`, `s`, `h`, which matches `push`.
    assert!(glob_may_be("p[![=p=]]]sh", "push"));

    let mut cases = Vec::new();
    for command in [
        "touch push; git pu[s[:a[:]h",
        "git pu[s[=a[=]h",
        "git pu[s[.a[.]h origin",
        "git p[![=p=]]]sh",
    ] {
        cases.extend(both_modes("ask", PUSH, command, &["Bash(touch:*)"]));
    }
    run_table_in(&git.fx, cases).await;
    assert!(hook_if_runs(&git.fx, PUSH, "git pu[s[:a[:]h"));
    assert!(hook_if_runs(&git.fx, PUSH, "git pu[s[=a[=]h"));
}

/// Found by the code review: nullglob was found by the text `nullglob` in the words as
/// written, so `bash -O nul"l"glob -c "git zzz* push"` (bash removes the quotes, turns
/// nullglob on, and the glob that matches nothing goes: `git push`) was allowed past
/// `Bash(git push:*)`, in bypass mode too; as were `nul\lglob` and `env
/// BASHOPTS=nul"l"glob bash -c …`. The words are now read after quote removal, and a shell
/// given a glob or a computed word (`bash -O $o`, `bash -O nul?glob`) or a `BASHOPTS` that
/// may hold nullglob counts too.
#[tokio::test]
async fn a_quoted_or_computed_shell_option_may_turn_nullglob_on() {
    let git = FakeGit::new();
    let commands = [
        "bash -O nul\"l\"glob -c \"git zzz* push\"",
        "bash -O nul\\lglob -c \"git zzz* push\"",
        "env BASHOPTS=nul\"l\"glob bash -c \"git zzz* push\"",
        "bash -O 'nullglob' -c 'git zzz* push'",
        "o=nullglob; bash -O $o -c \"git zzz* push\"",
        "bash -eO nul\"l\"glob -c \"git zzz* push\"",
        "env BASHOPTS=extglob:nul\"l\"glob bash -c \"git zzz* push\"",
    ];
    for command in commands {
        assert_eq!(git.args(command), "push\n", "{command}");
    }
    // (`nul?glob` is `nullglob` when a file of that name is there; else bash refuses it.)
    git.files(&["nullglob"]);
    assert_eq!(git.args("bash -O nul?glob -c \"git zzz* push\""), "push\n");
    git.clear();

    let mut cases = Vec::new();
    for command in commands
        .into_iter()
        .chain(["bash -O nul?glob -c \"git zzz* push\""])
    {
        cases.extend(both_modes(
            "ask",
            PUSH,
            command,
            &["Bash(bash:*)", "Bash(env:*)"],
        ));
    }
    // An option bash is given that is surely another one turns nothing on.
    cases.push(bypass(
        "allow",
        PUSH,
        "bash -O extglob -c \"git zzz* status\"",
    ));
    cases.push(bypass("allow", PUSH, "git zzz* status"));
    run_table_in(&git.fx, cases).await;
    assert!(hook_if_runs(
        &git.fx,
        PUSH,
        "bash -O nul\"l\"glob -c \"git zzz* push\""
    ));
}

/// Found by the code review: with nullglob possibly on, a glob after the words of an exact
/// rule (`Bash(git push)`) may match nothing and go, leaving the rule's words alone: `bash
/// -O nullglob -c "git push zzz*"` runs `git push`, and was allowed past a deny of `Bash(git
/// push)` (the walk compared only as many words as the rule has). Globs after an exact
/// rule's words that may all vanish now ask.
#[tokio::test]
async fn an_exact_rule_sees_globs_after_its_words_vanish() {
    let git = FakeGit::new();
    assert_eq!(git.args("bash -O nullglob -c \"git push zzz*\""), "push\n");
    assert_eq!(git.args("shopt -s nullglob; git push zzz*"), "push\n");
    assert_eq!(git.args("shopt -s nullglob; git push zzz* y*"), "push\n");
    let exact = "Bash(git push)";
    let mut cases = Vec::new();
    for command in [
        "bash -O nullglob -c \"git push zzz*\"",
        "shopt -s nullglob; git push zzz*",
        "shopt -s nullglob; git push zzz* y*",
    ] {
        cases.extend(both_modes(
            "ask",
            exact,
            command,
            &["Bash(bash:*)", "Bash(shopt:*)"],
        ));
    }
    // A word that is no glob stays: what runs is not `git push`.
    cases.push(bypass(
        "allow",
        exact,
        "shopt -s nullglob; git push zzz* origin",
    ));
    // Without nullglob the glob is a word of its own.
    cases.push(bypass("allow", exact, "git push zzz*"));
    run_table_in(&git.fx, cases).await;
    assert!(hook_if_runs(
        &git.fx,
        exact,
        "shopt -s nullglob; git push zzz*"
    ));
}

/// Found by the code review: a glob among git's options may become an option (a file
/// `--no-pager`, which the line may make: `git init -q -- --no-pager`, `ln -s x --
/// --no-pager`), and then the words after it are read from another place: `git ?-no-pager
/// push` runs `git --no-pager push`. It was asked about only when the name was on the disk
/// or a command that writes files in a known way made it; now a glob before the rule's words
/// in git's option area asks whenever the rule's words follow it.
#[tokio::test]
async fn a_glob_among_the_options_before_the_rule_words_asks() {
    let git = FakeGit::new();
    assert_eq!(
        git.args("ln -s x -- --no-pager; git ?-no-pager push"),
        "--no-pager push\n"
    );
    git.clear();
    assert_eq!(
        git.args("git init -q -- --no-pager; git ?-no-pager push"),
        "--no-pager push\n"
    );
    git.clear();
    assert_eq!(
        git.args("touch -- --no-pager; git [-]* push"),
        "--no-pager push\n"
    );
    git.clear();

    let mut cases = Vec::new();
    for command in [
        "git init -q -- --no-pager; git ?-no-pager push",
        "ln -s x -- --no-pager; git ?-no-pager push",
        "git ?-no-pager push",
        "git [-]* push origin",
        "git -C . ?-no-pager push",
    ] {
        cases.extend(both_modes("ask", PUSH, command, &["Bash(ln:*)"]));
    }
    cases.extend(both_modes(
        "ask",
        "Bash(git push)",
        "git ?-no-pager push",
        &[],
    ));
    run_table_in(&git.fx, cases).await;
    assert!(hook_if_runs(&git.fx, PUSH, "git ?-no-pager push"));
}

/// Found by the code review: xargs (and GNU parallel, xe) are read by their own code, not
/// through the wrapper tables, so a glob among their own options was never looked at:
/// `xargs -a * push`, with files `f` and `git` there, is `xargs -a f git push` to bash, which
/// pushes, and was allowed past `Bash(git push:*)` in bypass mode. Such a glob now asks, as
/// one among a wrapper's words does.
#[tokio::test]
async fn a_glob_among_xargs_own_words_asks() {
    let git = FakeGit::new();
    git.files(&["f", "git"]);
    assert_eq!(git.args("xargs -a * push"), "push\n");
    git.clear().files(&["1", "git"]);
    assert_eq!(git.args("xargs -n * push </dev/null"), "push\n");
    assert_eq!(git.args("xargs -P * push </dev/null"), "push\n");
    git.clear();

    let mut cases = Vec::new();
    for command in [
        "xargs -a * push",
        "xargs -n * push </dev/null",
        "xargs -P * push </dev/null",
        "touch f git; xargs -a * push",
        "xe -N * push </dev/null",
        "parallel -j * push ::: x",
    ] {
        cases.extend(both_modes("ask", PUSH, command, &["Bash(xargs:*)"]));
    }
    run_table_in(&git.fx, cases).await;
    assert!(hook_if_runs(&git.fx, PUSH, "xargs -a * push"));
    assert!(hook_if_runs(&git.fx, PUSH, "xargs -n * push"));
}

/// Found by the code review: `git 2147483648</dev/null push` (bash runs `git 2147483648
/// push`: the digits are too big for a descriptor) asked because "git configured on its
/// command line or by its variables may run any program", which it is not: the digits were
/// taken for a computed word. They are a plain word (an unknown subcommand), and the
/// command is judged as `git 2147483648 push` is, in each mode.
#[tokio::test]
async fn digits_too_big_for_a_descriptor_are_a_plain_word() {
    let git = FakeGit::new();
    assert_eq!(
        git.args("git 2147483648</dev/null push"),
        "2147483648 push\n"
    );
    // (The expectation is not used: the two readings are compared with each other.)
    let with_redirect = both_modes("deny", PUSH, "git 2147483648</dev/null push", &[]);
    let without = both_modes("deny", PUSH, "git 2147483648 push", &[]);
    for (with_redirect, without) in with_redirect.iter().zip(&without) {
        let got = run(&git.fx, with_redirect).await;
        let plain = run(&git.fx, without).await;
        assert_eq!(
            crate::common::behavior(&got),
            crate::common::behavior(&plain),
            "{with_redirect:?}: {got:?} / {plain:?}"
        );
        if let PermissionResult::Ask { message, .. } = got {
            assert!(!message.contains("configured"), "{message}");
        }
    }
}

/// What the fixes leave alone: globs no rule's words can be where they stand.
#[tokio::test]
async fn harmless_globs_stay_allowed() {
    let git = FakeGit::new();
    let rf = "Bash(rm -rf:*)";
    let mut cases = Vec::new();
    for command in [
        "git add *",
        "git -C . add *.rs",
        "git log --oneline -- *.rs",
    ] {
        cases.extend(both_modes("allow", PUSH, command, &[]));
    }
    for (deny, command) in [
        (rf, "rm *.tmp"),
        (rf, "rm -f *.tmp"),
        (PUSH, "ls *"),
        (PUSH, "xargs -n 1 echo"),
        (PUSH, "xargs -n 1 echo </dev/null"),
        (PUSH, "bash -O extglob -c 'ls *'"),
        ("Bash(git push)", "git push origin zzz*"),
    ] {
        cases.push(bypass("allow", deny, command));
    }
    // (In default mode `ls *` reads where the fixture's links lead, out of the project.)
    cases.push(case("allow", "Bash", "ls *.rs").deny(&[PUSH]));
    run_table_in(&git.fx, cases).await;
}

/// Found by the second review: tree-sitter makes a whole list, pipeline or `!` command the
/// statement a redirection belongs to, and reads the words after the redirection's target
/// as more targets; bash gives the redirection and those words to the last simple command
/// (`true && git >/dev/null push` runs `git push`). The words were scanned but never added to
/// that command, so deny rules, the critical-removal check, Read deny rules and protected
/// paths saw `git`, `rm`, `cat` and `tee` alone: allowed in bypass mode. They are now that
/// command's arguments, as they are for a lone command.
#[tokio::test]
async fn words_after_a_redirection_in_a_list_are_the_last_commands() {
    let git = FakeGit::new();
    let commands = [
        "true && git >/dev/null push",
        "echo | git 2>/dev/null push",
        "! git >/dev/null push",
        "false || git >/dev/null push",
        "true; true && git >/dev/null push",
        "echo $(true && git >/dev/null push)",
        "for i in 1; do true && git >/dev/null push; done",
        "true && git 2>/dev/null >/dev/null push",
        "true && echo | git 2>/dev/null push",
        "(true && echo >/dev/null x) && git >/dev/null push",
    ];
    for command in commands {
        assert_eq!(git.args(command), "push\n", "{command}");
    }
    let mut cases = Vec::new();
    for command in commands {
        cases.extend(both_modes("deny", PUSH, command, &["Bash(echo:*)"]));
    }
    let ssh = "Read(~/.ssh/**)";
    for (expect, deny, command) in [
        // (Decided only: never run.)
        ("ask", PUSH, "true && rm 2>/dev/null -rf ~"),
        ("ask", PUSH, "echo | rm 2>/dev/null -rf ~"),
        ("deny", ssh, "true && cat 2>/dev/null ~/.ssh/id_rsa"),
        ("deny", ssh, "echo x | cat 2>/dev/null ~/.ssh/id_rsa"),
        ("ask", PUSH, "echo | tee >/dev/null .git/config"),
        ("ask", PUSH, "! tee >/dev/null .git/config"),
    ] {
        cases.push(bypass(expect, deny, command));
    }
    cases.push(case("deny", "Bash", "true && cat 2>/dev/null ~/.ssh/id_rsa").deny(&[ssh]));
    // What stays allowed: the words after the redirection are harmless ones.
    for command in [
        "true && git >/dev/null status",
        "echo | git 2>/dev/null log --oneline",
    ] {
        cases.extend(both_modes("allow", PUSH, command, &["Bash(echo:*)"]));
    }
    run_table_in(&git.fx, cases).await;
    assert!(hook_if_runs(&git.fx, PUSH, "true && git >/dev/null push"));
}

/// Found by the second review: `time` and `coproc` are reserved words, and what follows them
/// is a pipeline (`time [-p] [--] [!] …`) or a simple command, with its own `!` and its own
/// assignments. They were read as wrappers, and the reading after them started at the `!`
/// or the `X=1`, taken for the command's name: `time ! git push`, `time X=1 git push` and
/// `coproc X=1 git push` (each runs `git push`) were allowed past `Bash(git push:*)` in
/// bypass mode, as were `time ! rm -rf ~` and `time X=1 cat ~/.ssh/id_rsa` past the
/// critical-removal check and a Read deny rule. The `!`s after `time` are now dropped and the
/// assignments after `time` or `coproc` are the command's.
#[tokio::test]
async fn time_and_coproc_take_a_bang_and_assignments() {
    let git = FakeGit::new();
    let commands = [
        "time ! git push",
        "time -p ! git push",
        "time -p -- ! git push",
        "time X=1 git push",
        "time ! ! X=1 Y=2 git push",
        "time ! time X=1 git push",
        "time LANG=C git push",
        "coproc X=1 git push; wait",
        "coproc LANG=C git push; wait",
        "time coproc X=1 git push; wait",
        "if time LANG=C git push; then :; fi",
        "time GIT_PAGER=cat git push | cat",
        "true && time ! git push",
    ];
    for command in commands {
        assert_eq!(git.args(command), "push\n", "{command}");
    }
    let mut cases = Vec::new();
    for command in commands {
        cases.extend(both_modes("deny", PUSH, command, &["Bash(cat:*)"]));
    }
    let ssh = "Read(~/.ssh/**)";
    for (expect, deny, command) in [
        // (Decided only: never run.)
        ("ask", PUSH, "time ! rm -rf ~"),
        ("ask", PUSH, "time X=1 rm -rf ~"),
        ("ask", PUSH, "coproc X=1 rm -rf ~"),
        ("deny", ssh, "time X=1 cat ~/.ssh/id_rsa"),
        ("deny", ssh, "time ! cat ~/.ssh/id_rsa"),
    ] {
        cases.push(bypass(expect, deny, command));
    }
    // What stays allowed.
    for command in [
        "time git status",
        "time ! git diff --quiet",
        "time LANG=C git log --oneline",
        "time -p git status",
    ] {
        cases.extend(both_modes("allow", PUSH, command, &[]));
    }
    run_table_in(&git.fx, cases).await;
    assert!(hook_if_runs(&git.fx, PUSH, "time ! git push"));
    assert!(hook_if_runs(&git.fx, PUSH, "coproc X=1 git push"));
}

/// Found by the second review: a computed word (a parameter expansion, a command or
/// arithmetic substitution) may be the word a deny or ask rule names, as an unquoted glob
/// may, and an unquoted one may vanish: `npm $(echo publish)`, `npm publis${x:-h}` and
/// `kubectl ${v:-delete} pod p` were allowed by `Bash(npm:*)`/`Bash(kubectl:*)` past the deny
/// of the subcommand, and `git push $x` or `git push "$@"` (both run `git push`) past an
/// exact `Bash(git push)`; in bypass mode `rm ${o:--rf} x` past `Bash(rm -rf:*)`. Such a word
/// where the rule's word stands now asks as the glob does, in bypass mode too; one where no
/// rule's word can stand stays allowed.
#[tokio::test]
async fn a_computed_word_where_the_rule_word_stands_asks() {
    let git = FakeGit::new();
    git.fake("npm").fake("kubectl").fake("cargo").fake("rm");
    for (command, ran) in [
        ("npm $(echo publish)", "npm publish\n"),
        ("npm publis${x:-h}", "npm publish\n"),
        ("npm pub${x}lish", "npm publish\n"),
        ("kubectl ${v:-delete} pod p", "kubectl delete pod p\n"),
        ("cargo `echo publish`", "cargo publish\n"),
        ("git push $x", "push\n"),
        ("git push \"$@\"", "push\n"),
        ("git push $(true)", "push\n"),
        ("git push `true`", "push\n"),
        ("git push ${x:0:0}", "push\n"),
        ("rm ${o:--rf} x", "rm -rf x\n"),
    ] {
        assert_eq!(git.args(command), ran, "{command}");
    }
    let npm = [
        "Bash(npm publish:*)",
        "Bash(kubectl delete:*)",
        "Bash(cargo publish:*)",
    ];
    let programs = ["Bash(npm:*)", "Bash(kubectl:*)", "Bash(cargo:*)"];
    let exact = "Bash(git push)";
    let mut cases = Vec::new();
    for command in [
        "npm $(echo publish)",
        "npm publis${x:-h}",
        "npm pub${x}lish",
        "kubectl ${v:-delete} pod p",
        "cargo ${x:-publish}",
        "cargo `echo publish`",
        "npm $((1)) publish",
    ] {
        cases.push(case("ask", "Bash", command).allow(&programs).deny(&npm));
        cases.push(
            case("ask", "Bash", command)
                .mode("bypassPermissions")
                .deny(&npm),
        );
    }
    for command in [
        "git push $x",
        "git push \"$@\"",
        "git push $(true)",
        "git push `true`",
        "git push ${x:0:0}",
        "git push \"${a[@]}\"",
        "git $x push",
    ] {
        cases.extend(both_modes("ask", exact, command, &[]));
    }
    cases.extend(both_modes("ask", PUSH, "git $(echo push)", &[]));
    cases.extend(both_modes("ask", PUSH, "git pu${x}sh origin", &[]));
    cases.push(bypass("ask", "Bash(rm -rf:*)", "rm ${o:--rf} x"));
    // Where no rule's word can stand, a computed word changes nothing.
    for command in [
        "npm run $script",
        "npm test -- \"$@\"",
        "kubectl get pod \"$name\"",
        "cargo build --target \"$t\"",
    ] {
        cases.push(case("allow", "Bash", command).allow(&programs).deny(&npm));
        cases.push(
            case("allow", "Bash", command)
                .mode("bypassPermissions")
                .deny(&npm),
        );
    }
    // (In default mode a computed word that may be a path asks for that reason.)
    for command in [
        "git log $REF",
        "git log \"$REF\" -- src",
        "git diff \"$base\"..HEAD",
        "git show HEAD:$f",
    ] {
        cases.push(bypass("allow", PUSH, command));
    }
    for command in [
        "git commit -m \"$(printf 'a\\nb')\"",
        "git -C \"$dir\" status",
        "git log -n \"$n\"",
    ] {
        cases.extend(both_modes("allow", PUSH, command, &[]));
    }
    // A rule whose only star ends it is read as the prefix rule it is.
    let star = "Bash(git push *)";
    for command in [
        "git commit -m \"$(cat msg)\"",
        "git log $REF",
        "git -C \"$dir\" status",
    ] {
        cases.push(bypass("allow", star, command));
    }
    cases.extend(both_modes(
        "allow",
        star,
        "git commit -m \"$(printf 'a\\nb')\"",
        &[],
    ));
    cases.extend(both_modes("ask", star, "git $(echo push)", &[]));
    cases.extend(both_modes("ask", star, "git pu${x}sh", &[]));
    for command in ["git push origin $branch", "git push \"$remote\""] {
        cases.extend(both_modes("allow", exact, command, &[]));
    }
    // (`"$f"` may be `-rf`, as `*` may: GNU rm takes options after operands too.)
    cases.push(bypass("ask", "Bash(rm -rf:*)", "rm \"$f\""));
    cases.push(bypass("ask", "Bash(rm -rf:*)", "rm -f x \"$f\""));
    cases.push(bypass("allow", "Bash(rm -rf:*)", "rm -f x.tmp"));
    run_table_in(&git.fx, cases).await;
    assert!(hook_if_runs(&git.fx, exact, "git push $x"));
}

/// Found by the second review: git runs `git push` as the program `git-push` in its exec
/// path (and `git foo` as any `git-foo` on `PATH`), which can be run by its own name:
/// `"$(git --exec-path)/git-push"` pushes, and was allowed past `Bash(git push:*)` in
/// bypass mode. A program whose file name is `git-<name>` is now also read as `git <name>`
/// by deny and ask rules.
#[tokio::test]
async fn a_dashed_git_program_is_git_with_that_subcommand() {
    let fx = Fixture::new();
    let exec = std::process::Command::new("git")
        .arg("--exec-path")
        .output()
        .expect("git runs");
    let exec = String::from_utf8(exec.stdout).unwrap().trim().to_owned();
    let setup = "git init -q --bare r.git && git init -q w && cd w \
        && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m i \
        && git remote add origin ../r.git && git config push.default current";
    let pushed = |command: &str| {
        let _ = std::fs::remove_dir_all(fx.out.join("r.git"));
        let _ = std::fs::remove_dir_all(fx.out.join("w"));
        assert!(crate::common::real_bash(setup, &fx.out, &fx.home));
        crate::common::real_bash(command, &fx.out.join("w"), &fx.home);
        crate::common::real_bash(
            "test -n \"$(git -C ../r.git branch)\"",
            &fx.out.join("w"),
            &fx.home,
        )
    };
    let commands = [
        format!("{exec}/git-push"),
        format!("PATH={exec}:$PATH git-push"),
        format!("{exec}/git-push origin"),
    ];
    assert!(!pushed("true"));
    for command in &commands {
        assert!(pushed(command), "{command}");
    }
    let mut cases = Vec::new();
    for command in &commands {
        cases.extend(both_modes("deny", PUSH, command, &[]));
    }
    cases.extend(both_modes("deny", PUSH, "git-push", &[]));
    // (Decided only: run there, it pushes the repository `GIT_DIR` names.)
    cases.push(bypass("deny", PUSH, &format!("cd {exec} && ./git-push")));
    cases.extend(both_modes("deny", "Bash(git foo:*)", "git-foo x", &[]));
    // Another subcommand is judged as `git <name>` is.
    cases.push(bypass("allow", PUSH, &format!("{exec}/git-status")));
    cases.push(bypass("allow", PUSH, "git-lfs ls-files"));
    run_table_in(&fx, cases).await;
    assert!(hook_if_runs(&fx, PUSH, &format!("{exec}/git-push")));
}
