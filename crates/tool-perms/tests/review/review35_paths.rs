//! Session 35 on path rules: a command that reads a whole tree (`grep -r`, `rg`, `git
//! grep`) meets the Read ask rules as the Grep tool does; a path rule on a tool whose rules
//! are never consulted (`Write(./x)`, `Glob(...)`) given on the command line is an error;
//! `ln -s TARGET LINK` resolves a relative TARGET from LINK's directory, as the kernel
//! does; and the shells' startup files missing from the protected list are on it. Then the
//! review of those changes: a computed or brace target of `ln -s` judged by what it expands
//! to, the directories shells run at start protected, one helper naming the rule a path
//! rule on another tool means, one walker over `ln`'s options, and questions that name the
//! kinds of Read rules there are.

use crate::common;

use crate::common::{
    Case, Fixture, behavior, case, messages, real_bash, run, run_table_in, sources,
};
use serde_json::json;
use tool_core::PermissionResult;
use tool_perms::settings::{Severity, load_permissions};

// --- 1. Whole trees read past a Read ask rule ----------------------------------------------

/// The ask rules of the review: the project's `conf` tree and `.env`.
const ASKED: &[&str] = &["Read(./conf/**)", "Read(.env)"];

/// A fixture that also holds `conf/db.txt`, which the ask rule covers.
fn conf_fixture() -> Fixture {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.proj.join("conf")).unwrap();
    std::fs::write(fx.proj.join("conf/db.txt"), "PASS=hunter2\n").unwrap();
    fx
}

/// A table row: Bash `command` in `mode`, with the review's ask rules.
fn asked(expect: &'static str, mode: &'static str, command: &str) -> Case {
    case(expect, "Bash", command).mode(mode).ask(ASKED)
}

/// Found by review: `grep -r -e PASS -e K= .` printed `.env` and `conf/db.txt` in dontAsk
/// mode past `Read(./conf/**)` and `Read(.env)` ask rules (a read-only command), while the
/// Grep tool left both out and `cat conf/db.txt` asked. A command that reads a whole tree
/// holding a file an ask rule covers now asks as a Read of that file does: in bypass mode
/// too (an ask rule), refused in dontAsk mode. `git grep`, which prints files of its
/// repository it does not name, asks where such a rule could match in the repository.
#[tokio::test]
async fn tree_reads_meet_read_ask_rules() {
    let fx = conf_fixture();
    let mut cases = Vec::new();
    for command in [
        "grep -r -e PASS -e K= .",
        "grep -r PASS",
        "grep -R PASS .",
        "grep -rl PASS .",
        "grep -r PASS conf",
        "rg PASS",
        "rg -uu PASS",
        "rg PASS .",
        "git grep PASS",
        "diff -r conf docs",
    ] {
        cases.push(asked("ask", "default", command));
        cases.push(asked("ask", "bypassPermissions", command));
        cases.push(asked("deny", "dontAsk", command));
    }
    // Trees that hold nothing an ask rule covers, and a grep that reads no tree.
    for command in ["grep -r PASS docs", "rg PASS docs", "grep PASS README.md"] {
        cases.push(asked("allow", "default", command));
        cases.push(asked("allow", "dontAsk", command));
    }
    // ripgrep skips hidden files unless told: `.env` alone is not read by `rg PASS`.
    cases.push(case("allow", "Bash", "rg PASS").ask(&["Read(.env)"]));
    cases.push(case("ask", "Bash", "rg --hidden PASS").ask(&["Read(.env)"]));
    cases.push(case("ask", "Bash", "grep -r PASS .").ask(&["Read(.env)"]));
    // A deny rule still wins over an ask rule met first.
    cases.push(
        case("deny", "Bash", "grep -r PASS .")
            .mode("bypassPermissions")
            .ask(&["Read(.env)", "Read(./conf/**)"])
            .deny(&["Read(./secrets/**)"]),
    );
    // An ask rule on a place outside the repository does not reach `git grep`.
    cases.push(case("allow", "Bash", "git grep PASS").ask(&["Read(~/.ssh/**)"]));
    run_table_in(&fx, cases).await;
}

/// The question names the file the ask rule covers, the rule and the command.
#[tokio::test]
async fn a_tree_read_asked_about_names_the_file_and_the_rule() {
    let fx = conf_fixture();
    let got = run(&fx, &asked("ask", "bypassPermissions", "grep -r PASS .")).await;
    let PermissionResult::Ask { message, .. } = &got else {
        panic!("{got:?}");
    };
    assert!(
        (message.contains("conf/db.txt") || message.contains("/.env"))
            && message.contains("ask rule")
            && message.contains("`grep -r PASS .`"),
        "{message}"
    );
}

// --- 2. Path rules on tools whose rules are never consulted, on the command line -----------

/// The errors that stop a command given `value` as an inline `--settings` value.
fn inline_errors(value: &serde_json::Value) -> Vec<String> {
    let fx = Fixture::new();
    let mut s = sources(&fx, fx.proj.clone(), true);
    s.flag_settings = vec![value.to_string()];
    load_permissions(&s).command_line_errors()
}

/// Found by review: `--settings '{"permissions":{"deny":["Write(./x)"]}}'` only warned that
/// `Write(...)` is never consulted, and the write went ahead, while `Write(file_path:*)`
/// stopped the command. A deny or ask path rule on Write, NotebookEdit, MultiEdit, Glob,
/// Grep or LS given on the command line is now an error that says which rule to write.
#[test]
fn path_rules_on_other_tools_given_inline_are_errors() {
    for (rule, meant) in [
        ("Write(./x)", "Edit(./x)"),
        ("NotebookEdit(./n.ipynb)", "Edit(./n.ipynb)"),
        ("MultiEdit(src/**)", "Edit(src/**)"),
        ("Glob(./secrets/**)", "Read(./secrets/**)"),
        ("Grep(./secrets/**)", "Read(./secrets/**)"),
    ] {
        for list in ["deny", "ask"] {
            let errors = inline_errors(&json!({"permissions": {list: [rule]}}));
            assert!(
                errors.len() == 1 && errors[0].contains(rule) && errors[0].contains(meant),
                "{list} {rule}: {errors:?}"
            );
        }
        // An allow rule grants nothing either way: not checked.
        let errors = inline_errors(&json!({"permissions": {"allow": [rule]}}));
        assert!(errors.is_empty(), "allow {rule}: {errors:?}");
    }
}

/// In a settings file the same rules stay a warning (the file may be shared with Claude
/// Code, which accepts them), and the warning names the rule to write.
#[test]
fn path_rules_on_other_tools_in_a_file_stay_warnings() {
    let fx = Fixture::new();
    common::write(
        &fx.proj.join(".claude/settings.json"),
        json!({"permissions": {"deny": ["Write(./x)", "Grep(./secrets/**)"]}}).to_string(),
    );
    let loaded = load_permissions(&sources(&fx, fx.proj.clone(), true));
    let said = messages(&loaded);
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        loaded
            .diagnostics
            .iter()
            .all(|d| d.severity == Severity::Warning),
        "{said:?}"
    );
    assert!(said[0].contains("Edit(./x)"), "{said:?}");
    assert!(said[1].contains("Read(./secrets/**)"), "{said:?}");
}

// --- 3. `ln -s`: a relative target is resolved from the link's directory --------------------

/// A fixture with an empty `sub` directory beside `secrets`.
fn link_fixture() -> Fixture {
    let fx = Fixture::new();
    std::fs::create_dir_all(fx.proj.join("sub")).unwrap();
    fx
}

/// A table row: Bash `command` in bypass mode with `Read(./secrets/**)` denied.
fn bypass(expect: &'static str, command: &str) -> Case {
    case(expect, "Bash", command)
        .mode("bypassPermissions")
        .deny(&["Read(./secrets/**)"])
}

/// Found by review: `ln -s ../secrets/key.txt sub/k` (a link to the denied file: the kernel
/// resolves a relative target from the link's directory) was allowed, and `ln -s
/// secrets/key.txt sub/k2` (a link to `sub/secrets/key.txt`) denied. With the real `ln`,
/// the first link leads to the denied key. The target is now resolved from the link's
/// directory: the last operand's, that operand itself when it is a directory (or several
/// targets go into it), `-t DIR`; from the cwd with `-r` (ln computes the link from there).
#[tokio::test]
async fn ln_s_resolves_a_relative_target_from_the_links_directory() {
    let fx = link_fixture();
    assert!(real_bash(
        "ln -s ../secrets/key.pem sub/k",
        &fx.proj,
        &fx.home
    ));
    assert_eq!(
        std::fs::canonicalize(fx.proj.join("sub/k")).unwrap(),
        fx.proj.join("secrets/key.pem")
    );
    assert!(real_bash(
        "ln -s ../secrets/key.pem sub/",
        &fx.proj,
        &fx.home
    ));
    assert_eq!(
        std::fs::canonicalize(fx.proj.join("sub/key.pem")).unwrap(),
        fx.proj.join("secrets/key.pem")
    );
    std::fs::remove_file(fx.proj.join("sub/k")).unwrap();
    std::fs::remove_file(fx.proj.join("sub/key.pem")).unwrap();
    run_table_in(
        &fx,
        vec![
            bypass("deny", "ln -s ../secrets/key.pem sub/k"),
            bypass("deny", "ln -sf ../secrets/key.pem sub/k"),
            bypass("deny", "ln --symbolic ../secrets/key.pem sub/k"),
            bypass("deny", "ln -s ../secrets/key.pem sub"),
            bypass("deny", "ln -s ../secrets/key.pem sub/"),
            bypass("deny", "ln -s ../README.md ../secrets/key.pem sub"),
            bypass("deny", "ln -s ../README.md ../secrets/key.pem sub/"),
            bypass("deny", "ln -s -t sub ../secrets/key.pem"),
            bypass("deny", "ln -st sub ../README.md ../secrets/key.pem"),
            bypass("deny", "ln -s --target-directory=sub ../secrets/key.pem"),
            bypass("deny", "ln -sT ../secrets/key.pem sub/k"),
            bypass("deny", "ln -s ../../secrets/key.pem src/sub/k"),
            bypass("deny", "cd sub && ln -s ../../secrets/key.pem ../src/sub/k"),
            // Targets that name no denied file from the link's directory.
            bypass("allow", "ln -s secrets/key.pem sub/k2"),
            bypass("allow", "ln -s key.pem sub/k"),
            bypass("allow", "ln -s -t sub secrets/key.pem"),
            bypass("allow", "ln -s secrets/key.pem README.md sub/"),
            // Where the link is in the cwd, the cwd is its directory.
            bypass("deny", "ln -s secrets/key.pem k"),
            bypass("deny", "ln -s secrets/key.pem"),
            // `-r`: ln makes the link's target relative from the cwd's reading of it.
            bypass("deny", "ln -sr secrets/key.pem sub/k"),
            bypass("deny", "ln -s --relative secrets/key.pem sub/k"),
            bypass("allow", "ln -sr sub/x sub/k"),
            // A hard link names its file from the cwd.
            bypass("deny", "ln secrets/key.pem sub/k"),
            bypass("allow", "ln README.md sub/k"),
            // An absolute target is where it says.
            bypass("deny", "ln -s $P/secrets/key.pem sub/k"),
            // `-S SUFFIX`'s value is no option letter.
            bypass("deny", "ln -S r -s ../secrets/key.pem sub/k"),
            // A glob or brace target, named from the link's directory.
            bypass("deny", "ln -s ../secrets/* sub/"),
            bypass("deny", "ln -s ../{README.md,secrets/key.pem} sub/"),
            // Through a link to a directory (`link_in` -> `src`), the link goes into it;
            // with `-n` the link replaces `link_in` in the cwd.
            bypass("deny", "ln -sf ../secrets/key.pem link_in"),
            bypass("allow", "ln -snf ../secrets/key.pem link_in"),
            bypass("deny", "ln -snf secrets/key.pem link_in"),
            // A link whose directory cannot be known leads to what cannot be checked.
            bypass("ask", "ln -s ../secrets/key.pem \"$D\"/k"),
            bypass("ask", "ln -s ../{README.md,docs} \"$D\"/"),
            bypass("ask", "ln -s ../README.md su*/"),
        ],
    )
    .await;
}

/// The question about a link names the file the link leads to: in default mode `ln -s
/// ../docs/a.md sub/k` is about `docs/a.md` in the project, not a file beside it; where
/// the question names a path (an ask rule covers the file, or the link leads out of the
/// working directories), it is that file's.
#[tokio::test]
async fn ln_s_question_names_the_file_the_link_leads_to() {
    let fx = link_fixture();
    let got = run(&fx, &case("ask", "Bash", "ln -s ../docs/a.md sub/k")).await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    let beside = fx.proj.parent().unwrap().join("docs/a.md");
    let text = format!("{got:?}");
    assert!(
        !text.contains(&beside.display().to_string()) && !text.contains("outside the working"),
        "{text}"
    );
    // (command, ask rules, the file the link leads to, the file it would lead to from the
    // working directory)
    let outside = fx.out.join("notes.md");
    for (command, rules, led_to, from_cwd) in [
        (
            "ln -s ../docs/a.md sub/k",
            &["Edit(./docs/**)"][..],
            fx.proj.join("docs/a.md"),
            beside.clone(),
        ),
        (
            "ln -s ../../outside/notes.md sub/k",
            &[][..],
            outside.clone(),
            fx.proj
                .parent()
                .unwrap()
                .parent()
                .unwrap()
                .join("outside/notes.md"),
        ),
    ] {
        let got = run(&fx, &case("ask", "Bash", command).ask(rules)).await;
        let PermissionResult::Ask { message, .. } = &got else {
            panic!("{command}: {got:?}");
        };
        let (led_to, from_cwd) = (led_to.display().to_string(), from_cwd.display().to_string());
        assert!(
            message.contains(&led_to) && !message.contains(&from_cwd),
            "{command}: {led_to} not in, or {from_cwd} in: {message}"
        );
    }
}

// --- 4. Shell startup files -----------------------------------------------------------------

/// Found by review: writing `~/.bash_aliases` (which Debian's `.bashrc` sources) was allowed
/// in bypass mode. Every shell startup file is protected: a write asks in bypass mode, by the
/// Write tool or a command. Editor configurations are left out (not shell startup files).
#[tokio::test]
async fn shell_startup_files_are_protected() {
    let fx = Fixture::new();
    let mut cases = Vec::new();
    for name in [
        ".bash_aliases",
        ".bash_login",
        ".bash_logout",
        ".login",
        ".logout",
        ".mkshrc",
        ".shrc",
        ".yashrc",
        ".yash_profile",
        ".xonshrc",
        ".zshenv",
        ".zlogin",
    ] {
        for dir in ["$P", "$H"] {
            cases.push(case("ask", "Write", &format!("{dir}/{name}")).mode("bypassPermissions"));
            cases.push(
                case("ask", "Bash", &format!("echo 'alias ls=x' >> {dir}/{name}"))
                    .mode("bypassPermissions"),
            );
        }
    }
    // Not shell startup files.
    for name in [".vimrc", ".bash_history", "aliases"] {
        cases.push(case("allow", "Write", &format!("$P/{name}")).mode("bypassPermissions"));
    }
    run_table_in(&fx, cases).await;
}

// --- Review of the above: computed and brace targets, startup directories ------------------

/// A table row: Bash `command` in bypass mode with `Read(./secrets/**)`, the outside
/// directory's `secret.txt` and `~/.ssh/**` denied.
fn bypass_wide(expect: &'static str, command: &str) -> Case {
    case(expect, "Bash", command)
        .mode("bypassPermissions")
        .deny(&[
            "Read(./secrets/**)",
            "Read(/$O/secret.txt)",
            "Read(~/.ssh/**)",
        ])
}

/// Found by review: a computed target holding `{` (`${X}`) or a brace list was rewritten
/// whole as `DIR/RAW` in place of the word bash expands it to, so an absolute or `~`
/// choice was checked as a file below the link's directory: `X=/etc/shadow; ln -s ${X}
/// sub/k`, `ln -s {README.md,/etc/shadow} sub/` and `ln -s {x,~/.ssh/id_rsa} sub/` were
/// allowed in bypass mode past `Read(//etc/shadow)` and `Read(~/.ssh/**)`. Each choice is
/// now checked where it leads: an absolute one where it says, a relative one from the
/// link's directory; the word as written is still checked too.
#[tokio::test]
async fn brace_and_braced_variable_targets_of_ln_s_are_checked_where_they_lead() {
    let fx = link_fixture();
    // A file the links replace (`ln -sf`): nothing may land below it.
    std::fs::write(fx.proj.join("sub/old"), "o").unwrap();
    // With the real ln, a brace choice that is absolute links to that file.
    assert!(real_bash(
        &fx.subst("ln -s {README.md,$O/secret.txt} sub/"),
        &fx.proj,
        &fx.home
    ));
    assert_eq!(
        std::fs::canonicalize(fx.proj.join("sub/secret.txt")).unwrap(),
        fx.out.join("secret.txt")
    );
    std::fs::remove_file(fx.proj.join("sub/secret.txt")).unwrap();
    std::fs::remove_file(fx.proj.join("sub/README.md")).unwrap();
    run_table_in(
        &fx,
        vec![
            bypass_wide("deny", "X=$O/secret.txt; ln -s ${X} sub/k"),
            bypass_wide("deny", "X=$O/secret.txt; ln -s \"${X}\" sub/k"),
            bypass_wide("deny", "X=$O/secret.txt; ln -s $X sub/k"),
            bypass_wide("deny", "X=$O/secret.txt; ln -sf ${X} sub/old"),
            bypass_wide("deny", "X=$O/secret.txt; ln -sf \"${X}\" sub/old"),
            // A value with a `~` is not one the line's analysis takes as known: asked.
            bypass_wide("ask", "X=~/.ssh/id_rsa; ln -sf ${X} sub/old"),
            bypass_wide("deny", "ln -s {README.md,$O/secret.txt} sub/"),
            bypass_wide("deny", "ln -s {x,~/.ssh/id_rsa} sub/"),
            bypass_wide("deny", "ln -s {x,../secrets/key.pem} sub/"),
            bypass_wide("deny", "ln -s {x,$O/secret.txt} \"$D\"/"),
            // Choices that lead nowhere denied.
            bypass_wide("allow", "ln -s {README.md,docs/a.md} sub/"),
            // The review's own spellings.
            case("deny", "Bash", "X=/etc/shadow; ln -s ${X} sub/k")
                .mode("bypassPermissions")
                .deny(&["Read(//etc/shadow)"]),
            case("deny", "Bash", "X=/etc/shadow; ln -sf ${X} sub/old")
                .mode("bypassPermissions")
                .deny(&["Read(//etc/shadow)"]),
            case("deny", "Bash", "ln -s {README.md,/etc/shadow} sub/")
                .mode("bypassPermissions")
                .deny(&["Read(//etc/shadow)"]),
            case("deny", "Bash", "ln -s {x,~/.ssh/id_rsa} sub/")
                .mode("bypassPermissions")
                .deny(&["Read(~/.ssh/**)"]),
        ],
    )
    .await;
}

/// Found by review: a computed target without `{` was taken as not relative and checked
/// from the working directory only: `K=../secrets/key.pem; ln -s $K sub/k` was allowed in
/// bypass mode past `Read(./secrets/**)`, while `ln -s ../secrets/key.pem sub/k` was
/// denied. The values a variable of the line stands for are now each resolved from the
/// link's directory; a target whose values cannot be known adds what it leads to as a path
/// that cannot be checked (asked).
#[tokio::test]
async fn computed_targets_of_ln_s_are_resolved_from_the_links_directory() {
    let fx = link_fixture();
    // A file the links replace (`ln -sf`): nothing may land below it.
    std::fs::write(fx.proj.join("sub/old"), "o").unwrap();
    assert!(real_bash(
        "K=../secrets/key.pem; ln -s $K sub/k",
        &fx.proj,
        &fx.home
    ));
    assert_eq!(
        std::fs::canonicalize(fx.proj.join("sub/k")).unwrap(),
        fx.proj.join("secrets/key.pem")
    );
    std::fs::remove_file(fx.proj.join("sub/k")).unwrap();
    run_table_in(
        &fx,
        vec![
            bypass("deny", "K=../secrets/key.pem; ln -s $K sub/k"),
            bypass("deny", "K=../secrets/key.pem; ln -sf $K sub/old"),
            bypass("deny", "K=../secrets/key.pem; ln -sf \"$K\" sub/old"),
            bypass("deny", "K=../secrets/key.pem; ln -s \"$K\" sub/k"),
            bypass("deny", "K=../secrets/key.pem; ln -s ${K} sub/k"),
            bypass("deny", "K=../secrets/key.pem; ln -s \"$K\" sub/"),
            bypass("deny", "K='../secrets/*'; ln -s $K sub/"),
            bypass(
                "deny",
                "for k in ../README.md ../secrets/key.pem; do ln -s \"$k\" sub/; done",
            ),
            bypass("deny", "K=key.pem; ln -s ../secrets/\"$K\" sub/k"),
            // Values that lead nowhere denied: not denied (what lands in a destination from
            // a computed source is still not worked out, so asked).
            bypass("ask", "K=../README.md; ln -sf \"$K\" sub/old"),
            // Values that cannot be known: asked.
            bypass("ask", "ln -s \"$UNSET_K\" sub/k"),
            bypass("ask", "ln -s \"$(cat name)\" sub/k"),
        ],
    )
    .await;
    // The denial names the file the link leads to.
    let got = run(
        &fx,
        &bypass("deny", "K=../secrets/key.pem; ln -sf $K sub/old"),
    )
    .await;
    let PermissionResult::Deny { message, .. } = &got else {
        panic!("{got:?}");
    };
    let key = fx.proj.join("secrets/key.pem").display().to_string();
    assert!(message.contains(&key), "{key} not in: {message}");
}

/// Found by review: the shells' startup files were protected, but not the directories whose
/// every file a shell runs when it starts: `~/.bashrc.d/` (Fedora's `.bashrc` sources each
/// file in it), fish's `~/.config/fish/conf.d/` and `~/.config/fish/functions/`. A write
/// into one asks in bypass mode, by the Write tool or a command.
#[tokio::test]
async fn directories_shells_run_at_start_are_protected() {
    let fx = Fixture::new();
    let mut cases = Vec::new();
    for path in [
        "$H/.bashrc.d/10-aliases.sh",
        "$P/.bashrc.d/x.sh",
        "$H/.config/fish/conf.d/x.fish",
        "$H/.config/fish/functions/ls.fish",
    ] {
        cases.push(case("ask", "Write", path).mode("bypassPermissions"));
        cases.push(
            case("ask", "Bash", &format!("echo 'alias ls=x' > {path}")).mode("bypassPermissions"),
        );
    }
    // The directory itself, made or removed whole.
    cases.push(case("ask", "Bash", "mkdir -p $H/.bashrc.d").mode("bypassPermissions"));
    // Not such a directory.
    cases.push(case("allow", "Write", "$P/bashrc.d/x.sh").mode("bypassPermissions"));
    run_table_in(&fx, cases).await;
}

/// Found by review: the mapping of a path rule on a tool whose path rules are never
/// consulted to the rule meant (`Write(...)` to `Edit(...)`, `Grep(...)` to `Read(...)`) was
/// written twice, and the agent definitions' copy suggested `Edit(file_path:/etc/**)` for
/// `Write(file_path:/etc/**)`. One public helper now says it, and a `Tool(param:value)`
/// rule maps to no path rule.
#[test]
fn the_rule_a_path_rule_on_another_tool_means_is_said_once() {
    use tool_perms::rule::path_rule_meant;
    assert_eq!(
        path_rule_meant("Write", "/etc/**").as_deref(),
        Some("Edit(/etc/**)")
    );
    assert_eq!(path_rule_meant("LS", "./x").as_deref(), Some("Read(./x)"));
    assert_eq!(path_rule_meant("Write", "file_path:/etc/**"), None);
    assert_eq!(path_rule_meant("Grep", "pattern:secret"), None);
    // The settings' warning for such a field rule names no `Edit(file_path:...)` either.
    let errors = inline_errors(&json!({"permissions": {"deny": ["Write(file_path:/etc/**)"]}}));
    assert!(
        errors.len() == 1 && !errors[0].contains("Edit(file_path"),
        "{errors:?}"
    );
}

/// Found by review: `ln`'s options were read by two walkers that abbreviate long options
/// differently: `--t DIR` took DIR as `--target-directory`'s value in one and not in the
/// other, so `ln --t -s secrets/key.pem` (a hard link into the directory `-s`, as getopt
/// reads it) was taken for `ln -s`, its target resolved from `-s/`. One walker now reads
/// them, as getopt does.
#[tokio::test]
async fn ln_options_are_read_once_as_getopt_reads_them() {
    let fx = link_fixture();
    std::fs::create_dir_all(fx.proj.join("-s")).unwrap();
    assert!(real_bash("ln --t -s secrets/key.pem", &fx.proj, &fx.home));
    let made = std::fs::symlink_metadata(fx.proj.join("-s/key.pem")).unwrap();
    assert!(made.is_file(), "a hard link, not a symbolic one");
    std::fs::remove_file(fx.proj.join("-s/key.pem")).unwrap();
    run_table_in(
        &fx,
        vec![
            bypass("deny", "ln --t -s secrets/key.pem"),
            bypass("deny", "ln --target -s secrets/key.pem"),
            bypass("deny", "ln --t sub -s ../secrets/key.pem"),
            bypass("allow", "ln --t sub -s secrets/key.pem"),
            bypass("deny", "ln --sym ../secrets/key.pem sub/k"),
        ],
    )
    .await;
}

/// The one walker over `ln`'s and `cp`'s options: what each command line makes.
#[test]
fn link_options_are_read_as_getopt_reads_them() {
    use tool_perms::bash::commands::link_options;
    use tool_perms::bash::parse::Word;
    let words = |line: &str| -> Vec<Word> {
        line.split(' ')
            .map(|w| Word {
                raw: w.to_owned(),
                value: Some(w.to_owned()),
                plain: true,
                glob: false,
            })
            .collect()
    };
    let symbolic = |line: &str| {
        let w = words(line);
        link_options(&w[0].raw, &w).map(|o| o.symbolic)
    };
    for (line, expect) in [
        ("ln -s a b", Some(true)),
        ("ln -st d a", Some(true)),
        ("ln -ts d a", Some(false)),
        ("ln --t -s a", Some(false)),
        ("ln --target-directory -s a", Some(false)),
        ("ln --target-directory=d -s a", Some(true)),
        ("ln --sy a b", Some(true)),
        ("ln --s a b", Some(false)),
        ("ln -S -s a b", Some(false)),
        ("ln -- -s b", Some(false)),
        ("cp -s a b", Some(true)),
        ("cp --sym a b", Some(true)),
        ("cp --s a b", Some(false)),
        ("cp --sparse -s a b", Some(false)),
        ("cp --sparse=always -s a b", Some(true)),
        ("cp --pa -s a b", Some(true)),
        ("mv -s a b", None),
    ] {
        assert_eq!(symbolic(line), expect, "{line}");
    }
    let w = words("ln -srnT a b");
    let o = link_options("ln", &w).unwrap();
    assert!(o.symbolic && o.relative && o.no_dereference && o.no_target_directory);
    // `cp -r` is recursive, `cp -n` no-clobber: neither is ln's.
    let w = words("cp -srn a b");
    let o = link_options("cp", &w).unwrap();
    assert!(o.symbolic && !o.relative && !o.no_dereference);
}

/// Found by review: the question about a git command that prints files it does not name
/// always spoke of "the Read deny and ask rules", with only one kind of them set. It names
/// the kinds there are, as the question about a tree too large to check does.
#[tokio::test]
async fn git_content_question_names_the_kinds_of_read_rules_there_are() {
    let fx = Fixture::new();
    for (ask, deny, says) in [
        (&["Read(.env)"][..], &[][..], "the Read ask rules"),
        (&[][..], &["Read(.env)"][..], "the Read deny rules"),
        (
            &["Read(.env)"][..],
            &["Read(./secrets/**)"][..],
            "the Read deny and ask rules",
        ),
    ] {
        let got = run(&fx, &case("ask", "Bash", "git log -p").ask(ask).deny(deny)).await;
        let PermissionResult::Ask { message, .. } = &got else {
            panic!("{ask:?} {deny:?}: {got:?}");
        };
        assert!(
            message.contains("prints files of the repository it does not name")
                && message.contains(&format!("checked against {says}.")),
            "{ask:?} {deny:?}: {message}"
        );
    }
}
