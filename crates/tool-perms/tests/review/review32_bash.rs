//! Session 32 on Bash: programs that write or read the files they are given, missing from
//! the tables (`ld`, `as`, `gpg`, `mktemp`, `fallocate`, `cpio`, `sqlite3`), are judged as
//! what they do to their files; an array element or an unquoted variable that bash expands
//! as a glob lists its directory (`a=(secrets/*)`, `X='secrets/*'; echo $X`); and a git
//! command is not read-only when a `GIT_` variable exported earlier in the line, or set in
//! the environment the command inherits, makes git work on another repository or run
//! programs.

use crate::common;
use crate::git_fixture;

use crate::common::{Case, Fixture, case, installed, real_bash, run_table_in};
use tool_core::PermissionResult;

/// The Read deny rule of the review: the project's `secrets` directory.
const READ_SECRETS: &str = "Read(./secrets/**)";
/// The Edit deny rule of the review: the project's `secrets` directory.
const EDIT_SECRETS: &str = "Edit(./secrets/**)";

/// A table row: Bash `command` in bypass mode, with `deny` denied.
fn bypass(expect: &'static str, deny: &str, command: &str) -> Case {
    case(expect, "Bash", command)
        .mode("bypassPermissions")
        .deny(&[deny])
}

/// A fixture that also holds `a.o`, `a.s`, `m.gpg`, `secrets/a.s`, `secrets/m.gpg` and
/// `secrets/db`.
fn fixture() -> Fixture {
    let fx = Fixture::new();
    for f in [
        "a.o",
        "a.s",
        "m.gpg",
        "secrets/a.s",
        "secrets/m.gpg",
        "secrets/db",
    ] {
        std::fs::write(fx.proj.join(f), "x").unwrap();
    }
    fx
}

/// The real programs write into the directory they are told to: `mktemp secrets/tmp.XXXX`
/// creates a file there, `fallocate -l 1M secrets/big` makes one, `sqlite3 DB SQL` creates
/// its database, `as -o OUT IN` and `ld -o OUT IN` write their output. Each of them, and
/// `gpg -o`, `cpio -O`, with `Edit(./secrets/**)` denied, is denied in bypass mode, however
/// the file is named (an option's value joined to it, `--output=`, `--tmpdir=`); the
/// everyday uses outside are not.
#[tokio::test]
async fn programs_that_write_their_files_are_checked_as_writes() {
    let fx = fixture();
    let secrets = fx.proj.join("secrets");
    let count = |fx: &Fixture| std::fs::read_dir(fx.proj.join("secrets")).unwrap().count();
    if installed("mktemp") {
        let before = count(&fx);
        assert!(real_bash("mktemp secrets/tmp.XXXX", &fx.proj, &fx.home));
        assert_eq!(count(&fx), before + 1, "mktemp made a file in secrets/");
    }
    if installed("fallocate") {
        assert!(real_bash(
            "fallocate -l 4096 secrets/big",
            &fx.proj,
            &fx.home
        ));
        assert!(secrets.join("big").exists());
    }
    if installed("sqlite3") {
        assert!(real_bash(
            "sqlite3 secrets/db.sqlite 'create table t(x)'",
            &fx.proj,
            &fx.home
        ));
        assert!(secrets.join("db.sqlite").exists());
    }
    if installed("as") && installed("ld") {
        std::fs::write(fx.proj.join("start.s"), ".globl _start\n_start:\n  nop\n").unwrap();
        assert!(real_bash(
            "as -o secrets/start.o start.s",
            &fx.proj,
            &fx.home
        ));
        assert!(secrets.join("start.o").exists());
        assert!(real_bash(
            "ld -o secrets/start secrets/start.o",
            &fx.proj,
            &fx.home
        ));
        assert!(secrets.join("start").exists());
    }
    let e = EDIT_SECRETS;
    run_table_in(
        &fx,
        vec![
            // ld
            bypass("deny", e, "ld -o secrets/x a.o"),
            bypass("deny", e, "ld -osecrets/x a.o"),
            bypass("deny", e, "ld --output=secrets/x a.o"),
            bypass("deny", e, "ld --output secrets/x a.o"),
            bypass("deny", e, "ld a.o -o secrets/x"),
            bypass("deny", e, "cd secrets && ld a.o"),
            bypass("deny", e, "ld -Map=secrets/map -o out a.o"),
            bypass("allow", e, "ld -o out a.o"),
            bypass("allow", e, "ld -shared -o libx.so a.o -L. -lc"),
            bypass("allow", e, "ld --version"),
            // as
            bypass("deny", e, "as -o secrets/x.o a.s"),
            bypass("deny", e, "as a.s -o secrets/x.o"),
            bypass("allow", e, "as -o x.o a.s"),
            bypass("allow", e, "as --version"),
            // gpg
            bypass("deny", e, "gpg -o secrets/k --decrypt m.gpg"),
            bypass("deny", e, "gpg --output secrets/k --decrypt m.gpg"),
            bypass("deny", e, "gpg --output=secrets/k -d m.gpg"),
            bypass("deny", e, "gpg --batch -osecrets/k -d m.gpg"),
            bypass("deny", e, "gpg --homedir secrets --list-keys"),
            bypass("allow", e, "gpg -o k --decrypt m.gpg"),
            bypass("allow", e, "gpg --list-keys"),
            // mktemp
            bypass("deny", e, "mktemp secrets/tmp.XXXX"),
            bypass("deny", e, "mktemp -d secrets/tmp.XXXX"),
            bypass("deny", e, "mktemp -p secrets tmp.XXXX"),
            bypass("deny", e, "mktemp --tmpdir=secrets"),
            bypass("deny", e, "mktemp --tmpdir=secrets tmp.XXXX"),
            bypass("deny", e, "mktemp -psecrets"),
            bypass("deny", e, "cd secrets && mktemp x.XXXX"),
            bypass("allow", e, "mktemp"),
            bypass("allow", e, "mktemp -d"),
            bypass("allow", e, "mktemp -u secrets/tmp.XXXX"),
            bypass("allow", e, "mktemp tmp.XXXX"),
            bypass("allow", e, "mktemp --tmpdir tmp.XXXX"),
            // fallocate
            bypass("deny", e, "fallocate -l 1M secrets/big"),
            bypass("deny", e, "fallocate --length=1M secrets/big"),
            bypass("deny", e, "fallocate -l1M -- secrets/big"),
            bypass("allow", e, "fallocate -l 1M big"),
            // cpio
            bypass("deny", e, "cpio -O secrets/a.cpio"),
            bypass("deny", e, "cpio -o -F secrets/a.cpio"),
            bypass("deny", e, "cpio --file=secrets/a.cpio -o"),
            bypass("deny", e, "cpio -oOsecrets/a.cpio"),
            bypass("deny", e, "cd secrets && cpio -i"),
            bypass("deny", e, "cpio -i -D secrets"),
            bypass("deny", e, "cpio -p secrets"),
            bypass("allow", e, "cpio -o -O a.cpio"),
            bypass("allow", e, "cpio -t -I a.cpio"),
            // sqlite3
            bypass("deny", e, "sqlite3 secrets/db.sqlite 'select 1'"),
            bypass("deny", e, "sqlite3 -batch secrets/db.sqlite"),
            bypass("deny", e, "sqlite3 -cmd 'select 1' secrets/db.sqlite"),
            bypass("allow", e, "sqlite3 -readonly secrets/db 'select 1'"),
            bypass("allow", e, "sqlite3 :memory: 'select 1'"),
            bypass("allow", e, "sqlite3"),
            bypass("allow", e, "sqlite3 db.sqlite 'select 1'"),
            // What each writes beside its input, or by a URI.
            bypass("deny", e, "gpg -e -r x secrets/key.pem"),
            bypass("deny", e, "gpg --clear-sign secrets/key.pem"),
            bypass("deny", e, "gpg secrets/m.gpg"),
            bypass("deny", e, "gpg --decrypt-files secrets/m.gpg"),
            bypass("allow", e, "gpg -d secrets/m.gpg"),
            bypass("allow", e, "gpg --verify secrets/m.gpg"),
            bypass("deny", e, "sqlite3 file:secrets/db.sqlite 'select 1'"),
            bypass("deny", e, "sqlite3 'file:secrets/d%62.sqlite'"),
            bypass("allow", e, "sqlite3 'file:secrets/db?mode=ro' 'select 1'"),
            bypass("allow", e, "sqlite3 'file:x?mode=memory'"),
            // What cannot be worked out: a directory from the environment set on the line,
            // a plugin, an archive command, an option not in the table.
            bypass("ask", e, "TMPDIR=secrets mktemp"),
            bypass("ask", e, "GNUPGHOME=secrets gpg --list-keys"),
            bypass("ask", e, "ld -plugin ./p.so -o out a.o"),
            bypass("ask", e, "sqlite3 a.db -Ax"),
            bypass("ask", e, "cpio -i --absolute-filenames < a.cpio"),
            bypass("ask", e, "mktemp --frobnicate x.XXXX"),
        ],
    )
    .await;
}

/// What these programs read is checked as read: with `Read(./secrets/**)` denied, `gpg
/// --decrypt secrets/m.gpg` (and gpg's other input operands), `sqlite3 -readonly
/// secrets/db`, `as -o out.o secrets/a.s`, `ld secrets/a.o`, `cpio -I secrets/a.cpio`,
/// `sqlite3 -init secrets/init.sql` are denied in bypass mode; reading outside is not.
#[tokio::test]
async fn programs_that_read_their_files_are_checked_as_reads() {
    let fx = fixture();
    let r = READ_SECRETS;
    run_table_in(
        &fx,
        vec![
            bypass("deny", r, "gpg --decrypt secrets/m.gpg"),
            bypass("deny", r, "gpg -d secrets/m.gpg"),
            bypass("deny", r, "gpg -o out --decrypt secrets/m.gpg"),
            bypass("deny", r, "gpg --import secrets/key.pem"),
            bypass("deny", r, "gpg --verify secrets/m.gpg m"),
            bypass("deny", r, "gpg -e -r x secrets/key.pem"),
            bypass("deny", r, "gpg --passphrase-file secrets/key.pem -c m"),
            bypass("deny", r, "sqlite3 -readonly secrets/db 'select 1'"),
            bypass("deny", r, "sqlite3 secrets/db 'select 1'"),
            bypass("deny", r, "sqlite3 -init secrets/key.pem db"),
            bypass("deny", r, "as -o out.o secrets/a.s"),
            bypass("deny", r, "ld -o out secrets/a.o"),
            bypass("deny", r, "ld -T secrets/link.ld -o out a.o"),
            bypass("deny", r, "cpio -i -I secrets/a.cpio"),
            bypass("deny", r, "cpio -t -F secrets/a.cpio"),
            bypass("allow", r, "gpg --decrypt m.gpg"),
            bypass("allow", r, "sqlite3 -readonly db 'select 1'"),
            bypass("allow", r, "as -o out.o a.s"),
            bypass("allow", r, "ld -o out a.o"),
            bypass("allow", r, "cpio -i -I a.cpio"),
            bypass("allow", r, "sqlite3 :memory: 'select 1'"),
            // The files `cpio -o` archives are named on its input: not seen.
            bypass("ask", r, "printf '%s\\n' a.c | cpio -o -O out.cpio"),
            bypass("ask", r, "cpio -o -O out.cpio < list"),
            bypass("ask", r, "cpio -p out < list"),
        ],
    )
    .await;
}

/// An array assignment whose element is an unquoted glob (`a=(secrets/*)`) lists the
/// directory, as bash expands it: the real bash puts the secret's name into the array. An
/// unquoted expansion of a variable holding a glob (`X='secrets/*'; echo $X`) is split and
/// expanded by bash too. With `Read(./secrets/**)` denied, each is denied in bypass mode,
/// as `echo secrets/*` is; a quoted element or expansion (`a=("secrets/*")`, `echo "$X"`)
/// and a glob elsewhere are not.
#[tokio::test]
async fn array_and_variable_globs_list_their_directory() {
    let fx = fixture();
    let out = fx.out.join("listing");
    assert!(real_bash(
        &format!("a=(secrets/*); echo \"${{a[@]}}\" > '{}'", out.display()),
        &fx.proj,
        &fx.home
    ));
    assert!(std::fs::read_to_string(&out).unwrap().contains("key.pem"));
    assert!(real_bash(
        &format!("X='secrets/*'; echo $X > '{}'", out.display()),
        &fx.proj,
        &fx.home
    ));
    assert!(std::fs::read_to_string(&out).unwrap().contains("key.pem"));
    let r = READ_SECRETS;
    run_table_in(
        &fx,
        vec![
            bypass("deny", r, "echo secrets/*"),
            bypass("deny", r, "a=(secrets/*)"),
            bypass("deny", r, "a=(docs/a.md secrets/*.pem); echo ${a[@]}"),
            bypass("deny", r, "declare -a a=(secrets/*)"),
            bypass("deny", r, "local -a a=(secrets/*)"),
            bypass("deny", r, "a+=(secrets/*)"),
            bypass("deny", r, "cd secrets && a=(*)"),
            bypass("deny", r, "X='secrets/*'; echo $X"),
            bypass("deny", r, "X=secrets/\\*; echo $X"),
            bypass("deny", r, "export X='secrets/*'; ls $X"),
            bypass("deny", r, "X=\"secrets/*\"; for f in $X; do :; done"),
            bypass("deny", r, "X='secrets/*'; a=($X)"),
            bypass("deny", r, "for X in 'secrets/*'; do echo $X; done"),
            bypass("allow", r, "a=(\"secrets/*\")"),
            bypass("allow", r, "a=('secrets/*')"),
            bypass("allow", r, "a=(docs/*)"),
            bypass("allow", r, "X='secrets/*'; echo \"$X\""),
            bypass("allow", r, "X='docs/*'; echo $X"),
            bypass("allow", r, "X=secrets; echo $X"),
            bypass("deny", r, "X='secrets/*'; echo ${X}"),
            bypass("deny", r, "X='secrets/*'; printf '%s\\n' $X"),
            bypass("deny", r, "X='secrets/*'; cat $X"),
            bypass("deny", r, "X='secrets/'\"*\"; echo $X"),
            // Values the analysis cannot spell out, but that hold a glob: asked.
            bypass("ask", r, "Y='*'; X=secrets/$Y; echo $X"),
            bypass("ask", r, "a=('secrets/*'); echo ${a[@]}"),
            bypass("ask", r, "X=\"${Q}secrets/*\"; echo $X"),
            // A loop over a glob holds the names it found: expanding one again lists nothing
            // more. What a command prints is not followed (nor is an unquoted `$(…)`).
            bypass("allow", r, "for f in docs/*; do echo $f; done"),
            bypass("allow", r, "d=docs; for f in \"$d\"/*; do echo $f; done"),
            bypass("allow", r, "V=$(cat README.md); echo $V"),
            bypass("allow", r, "a=(docs/*); echo \"${a[@]}\""),
        ],
    )
    .await;
}

/// A repository `r` in the project, and another one `other` whose `core.fsmonitor` is a
/// script creating `fx.out/PWNED`; `r`, `other` and the marker.
fn two_repositories(fx: &Fixture) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let r = git_fixture::repository(fx, "r");
    let other = git_fixture::repository(fx, "other");
    let marker = fx.out.join("PWNED");
    let monitor = fx.out.join("monitor.sh");
    git_fixture::script(&monitor, &marker);
    git_fixture::git(
        fx,
        &other,
        &["config", "core.fsmonitor", &monitor.display().to_string()],
    );
    (r, other, marker)
}

/// Runs `command` with the real bash in `dir`, git kept away from the caller's and the
/// system's configuration as [`git_fixture::git_output`] keeps it; whether it succeeded.
fn real_git_line(fx: &Fixture, dir: &std::path::Path, command: &str) -> bool {
    std::process::Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("HOME", &fx.home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("bash runs")
        .success()
}

/// A `GIT_` variable exported (or assigned, then exported) earlier in the line reaches the
/// git after it: with the real git, `export GIT_DIR=../other/.git; git status` in `r` works
/// on `other` and runs its `core.fsmonitor`, and so do `GIT_DIR=…; export GIT_DIR; git
/// status` and `export GIT_CONFIG_COUNT=… GIT_CONFIG_KEY_0=core.fsmonitor …`. None of them
/// is allowed as read-only (default mode asks, plan mode refuses, the Bash tool's read-only
/// flag is off); the same git without the variable, or with a variable that changes nothing
/// git runs or reads, still is. (This held before session 32: any assignment or declaration
/// makes the line ask on its own. Kept as a guard of it.)
#[tokio::test]
async fn git_variables_exported_earlier_in_the_line_make_git_not_read_only() {
    let fx = Fixture::new();
    let (r, other, marker) = two_repositories(&fx);
    let other_git = other.join(".git").display().to_string();
    let monitor = fx.out.join("monitor.sh").display().to_string();
    let lines = [
        format!("export GIT_DIR={other_git}; git status"),
        format!("GIT_DIR={other_git}; export GIT_DIR; git status"),
        format!("declare -x GIT_DIR={other_git}; git status"),
        format!(
            "export GIT_DIR={other_git} GIT_WORK_TREE={}; git status",
            other.display()
        ),
        format!(
            "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0={monitor}; git status"
        ),
    ];
    for line in &lines {
        let _ = std::fs::remove_file(&marker);
        git_fixture::age(&other.join("f"));
        real_git_line(&fx, &r, line);
        assert!(marker.exists(), "the real `{line}` ran other's fsmonitor");
    }
    let mut more: Vec<String> = lines.to_vec();
    more.extend([
        format!("export GIT_WORK_TREE={}; git status", other.display()),
        format!("export GIT_INDEX_FILE={other_git}/index; git diff"),
        format!("export GIT_COMMON_DIR={other_git}; git log"),
        format!("export GIT_OBJECT_DIRECTORY={other_git}/objects; git log"),
        "export GIT_EXEC_PATH=/tmp/x; git log".to_owned(),
        "export GIT_CONFIG_GLOBAL=/tmp/x.cfg; git log".to_owned(),
        "export GIT_CONFIG_PARAMETERS=\"'core.pager'='sh'\"; git log".to_owned(),
        "export GIT_TRACE=/tmp/trace; git log".to_owned(),
        "export GIT_PAGER=./evil.sh; git log".to_owned(),
        "export GIT_DIR; git status".to_owned(),
        "typeset -x GIT_DIR=/tmp/x; git log".to_owned(),
        "readonly GIT_DIR=/tmp/x; git log".to_owned(),
        "GIT_DIR=/tmp/x git log".to_owned(),
        format!("(export GIT_DIR={other_git}); git status"),
    ]);
    for line in &more {
        assert!(!tool_perms::bash::is_read_only_command(line), "{line}");
        let got = git_fixture::decide(&fx, &r, "default", line).await;
        assert_ne!(common::behavior(&got), "allow", "`{line}` in r: {got:?}");
        let got = git_fixture::decide(&fx, &r, "plan", line).await;
        assert_eq!(
            common::behavior(&got),
            "deny",
            "`{line}` in plan mode: {got:?}"
        );
    }
    for line in ["git status", "git log", "LANG=C git log"] {
        git_fixture::assert_allowed(&fx, &r, line).await;
    }
}

/// The variable that tells this test binary, run again as a child, which variable its
/// environment was given and what the check should decide.
const INHERITED: &str = "TW_REVIEW32_INHERITED_GIT_VARIABLE";

/// A `GIT_` variable in the environment toolwright runs in reaches every git the Bash tool
/// runs (the command inherits it): `git status` is not read-only then (asked in default
/// mode, refused in plan mode, not read-only for the Bash tool's own flags). A value that
/// changes nothing (`GIT_CONFIG_GLOBAL=/dev/null`) or another variable (`GIT_SSL_CAINFO`)
/// leaves it read-only. Checked in a child process of this test binary, whose environment
/// is set as a session's would be: see [`git_variable_in_the_inherited_environment_child`].
#[test]
fn git_variable_in_the_inherited_environment_makes_git_not_read_only() {
    for (name, value, expect) in [
        ("GIT_DIR", "/tmp/elsewhere/.git", "ask"),
        ("GIT_WORK_TREE", "/tmp/elsewhere", "ask"),
        ("GIT_COMMON_DIR", "/tmp/elsewhere/.git", "ask"),
        ("GIT_INDEX_FILE", "/tmp/elsewhere.index", "ask"),
        ("GIT_CONFIG_COUNT", "1", "ask"),
        ("GIT_CONFIG_GLOBAL", "/tmp/elsewhere.cfg", "ask"),
        ("GIT_CONFIG_PARAMETERS", "'user.name'='t'", "ask"),
        ("GIT_EXEC_PATH", "/tmp/elsewhere", "ask"),
        ("GIT_EXTERNAL_DIFF", "/tmp/elsewhere.sh", "ask"),
        ("GIT_CONFIG_GLOBAL", "/dev/null", "allow"),
        ("GIT_CONFIG_COUNT", "0", "allow"),
        ("GIT_DIR", "", "allow"),
        (
            "GIT_SSL_CAINFO",
            "/etc/ssl/certs/ca-certificates.crt",
            "allow",
        ),
        ("GIT_PAGER", "cat", "allow"),
    ] {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "--exact",
                // Its path in the `review` binary (this file is its module `review32_bash`).
                "review32_bash::git_variable_in_the_inherited_environment_child",
                "--nocapture",
            ])
            .env(INHERITED, format!("{expect}:{name}"));
        for v in tool_perms::bash::commands::GIT_ENVIRONMENT {
            child.env_remove(v);
        }
        child.env(name, value);
        // (The fixture's own git runs with it too: a count needs its key and value.)
        if name == "GIT_CONFIG_COUNT" {
            child
                .env("GIT_CONFIG_KEY_0", "user.name")
                .env("GIT_CONFIG_VALUE_0", "t");
        }
        let out = child.output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "with {name}={value}: {text}");
        assert!(text.contains("1 passed"), "the child ran its check: {text}");
    }
}

/// The child of [`git_variable_in_the_inherited_environment_makes_git_not_read_only`]: a
/// no-op unless [`INHERITED`] says what to expect (`ask:GIT_DIR`, `allow:GIT_PAGER`).
#[tokio::test]
async fn git_variable_in_the_inherited_environment_child() {
    let Some((expect, name)) = std::env::var(INHERITED)
        .ok()
        .and_then(|v| v.split_once(':').map(|(e, n)| (e.to_owned(), n.to_owned())))
    else {
        return;
    };
    let fx = Fixture::new();
    let r = git_fixture::repository(&fx, "r");
    let got = git_fixture::decide(&fx, &r, "default", "git status").await;
    let read_only = tool_perms::bash::is_read_only_command("git status");
    if expect == "allow" {
        assert_eq!(common::behavior(&got), "allow", "{name} set: {got:?}");
        assert!(read_only, "{name} set");
        return;
    }
    assert_eq!(common::behavior(&got), "ask", "{name} set: {got:?}");
    // The question names the variable that made git ask: the user can see why.
    let message = match &got {
        PermissionResult::Ask { message, .. } => Some(message.as_str()),
        PermissionResult::Passthrough { message, .. } => message.as_deref(),
        _ => None,
    };
    assert!(
        message.is_some_and(|m| m.contains(&name) && m.contains("git status")),
        "{name} set: the question says so: {got:?}"
    );
    assert!(!read_only, "{name} set");
    assert_eq!(
        tool_perms::bash::commands::inherited_git_variable(),
        Some(name.as_str()),
        "the variable that decided it"
    );
    let got = git_fixture::decide(&fx, &r, "plan", "git status").await;
    assert_eq!(
        common::behavior(&got),
        "deny",
        "{name} set, plan mode: {got:?}"
    );
}
