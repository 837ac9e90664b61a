//! Session 35 on path rules: a command that reads a whole tree (`grep -r`, `rg`, `git
//! grep`) meets the Read ask rules as the Grep tool does; a path rule on a tool whose rules
//! are never consulted (`Write(./x)`, `Glob(...)`) given on the command line is an error;
//! `ln -s TARGET LINK` resolves a relative TARGET from LINK's directory, as the kernel
//! does; and the shells' startup files missing from the protected list are on it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Case, Fixture, behavior, case, messages, real_bash, run, run_table_in, sources};
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
/// ../docs/a.md sub/k` is about `docs/a.md` in the project, not a file beside it.
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
