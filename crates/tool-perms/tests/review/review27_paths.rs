//! Review 27 findings on paths: a home directory behind a symlink removed by its real
//! path, a directory holding protected files removed or moved whole, a bare-name deny rule
//! naming a symlinked directory, `~` in a command when no home directory is known, and the
//! tool list under a bare `Edit` or `Read` deny.

use std::path::PathBuf;

use crate::common::{Case, Fixture, behavior, case, context, probe, run_table_in};
use tool_core::ToolUseContext;
use tool_perms::{PathRoots, PermissionEngine};

/// What `c` decides in `fx` with the engine's roots changed by `adjust` and the context's
/// home set to `home` (the session's `$HOME`).
async fn decide_with(
    fx: &Fixture,
    c: &Case,
    home: Option<PathBuf>,
    adjust: impl Fn(&mut PathRoots),
) -> String {
    let (engine, ctx) = context(fx, c);
    let perm = ctx.permission().clone();
    let mut roots = engine.roots().clone();
    roots.home.clone_from(&home);
    adjust(&mut roots);
    let engine = PermissionEngine::new(&perm, roots).unwrap();
    let ctx = ToolUseContext::new(&fx.proj)
        .with_home(home.clone())
        .with_permission(perm);
    let tool = tool_perms::probe::ProbeTool::new(c.tool, &fx.proj, home);
    behavior(
        &engine
            .decide(&tool, &fx.input(c.tool, &c.input), &ctx)
            .await,
    )
    .to_owned()
}

/// Runs every case with [`decide_with`] and fails with the list of those that differ.
async fn table_with(
    fx: &Fixture,
    cases: Vec<Case>,
    home: Option<PathBuf>,
    adjust: impl Fn(&mut PathRoots) + Copy,
) {
    let mut failures = Vec::new();
    for c in &cases {
        let got = decide_with(fx, c, home.clone(), adjust).await;
        if got != c.expect {
            failures.push(format!(
                "expected {} got {got} for {} {:?} mode={} deny={:?}",
                c.expect, c.tool, c.input, c.mode, c.deny
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

// --- 1. The home directory behind a symlink, removed by its real path -------------------

/// With `$HOME` a link (`homelink -> home`), removing the home by its real path is the
/// critical removal `rm -rf ~` is: asked even in bypass mode, by `rm -rf`, `rm -rf DIR/*`,
/// `find DIR -delete` and `rmdir`; a directory inside the home is no critical one.
#[tokio::test]
async fn removing_the_real_home_behind_a_linked_home_asks_in_bypass() {
    let fx = Fixture::new();
    let link = fx.home.parent().unwrap().join("homelink");
    std::os::unix::fs::symlink(&fx.home, &link).unwrap();
    let bypass = |expect, command: &str| case(expect, "Bash", command).mode("bypassPermissions");
    table_with(
        &fx,
        vec![
            bypass("ask", "rm -rf ~"),
            bypass("ask", "rm -rf $H"),
            bypass("ask", "rm -rf $H/"),
            bypass("ask", "rm -rf $H/*"),
            bypass("ask", "find $H -delete"),
            bypass("ask", "rmdir $H"),
            bypass("allow", "rm -rf $H/build"),
        ],
        Some(link),
        |_| {},
    )
    .await;
}

// --- 2. A directory holding protected paths, removed or moved whole ---------------------

/// A recursive removal or a move of a directory that holds, directly, a protected name
/// (`.git`, `.bashrc`) asks as removing that name would, in acceptEdits and bypass mode;
/// so does one of a directory at or above a settings file or the managed settings
/// directory the session knows by path. Everyday build directories are still removed
/// without a question.
#[tokio::test]
async fn removing_or_moving_a_directory_holding_protected_paths_asks() {
    let fx = Fixture::new();
    let o = fx.out.clone();
    for d in [
        fx.proj.join("sub/.git"),
        fx.proj.join("rc"),
        fx.proj.join("node_modules/pkg"),
        fx.proj.join("target/debug"),
        fx.proj.join("plain/inner"),
        o.join("etc/claude-code/managed-settings.d"),
        o.join("flags"),
        o.join("cfg/config"),
        o.join("unrelated"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    for (f, c) in [
        (fx.proj.join("sub/.bashrc"), "# rc"),
        (fx.proj.join("sub/.git/config"), "[core]"),
        (fx.proj.join("rc/.bashrc"), "# rc"),
        (fx.proj.join("node_modules/pkg/index.js"), "x"),
        (fx.proj.join("node_modules/.package-lock.json"), "{}"),
        (fx.proj.join("target/.rustc_info.json"), "{}"),
        (fx.proj.join("plain/inner/a.txt"), "a"),
        (
            fx.proj.join(".claude/worktrees/wt/.git"),
            "gitdir: ../../../.git/worktrees/wt",
        ),
        (o.join("etc/claude-code/managed-settings.json"), "{}"),
        (o.join("etc/claude-code/other.txt"), "x"),
        (o.join("flags/s.json"), "{}"),
        (o.join("unrelated/x"), "x"),
    ] {
        std::fs::write(f, c).unwrap();
    }
    let managed = o.join("etc/claude-code");
    let flags = o.join("flags/s.json");
    let cfg = o.join("cfg/config");
    let adjust = move |roots: &mut PathRoots| {
        roots
            .settings_files
            .push(managed.join("managed-settings.json"));
        roots.settings_files.push(managed.join("managed-mcp.json"));
        roots.settings_dirs.push(managed.join("managed-settings.d"));
        roots.settings_files.push(flags.clone());
        roots.flag_settings_dir = flags.parent().map(PathBuf::from);
        roots.user_config_dir = Some(cfg.clone());
    };
    let adjust = &adjust;
    let bash = |expect, command: &str, mode| case(expect, "Bash", command).mode(mode);
    let mut cases = Vec::new();
    for mode in ["acceptEdits", "bypassPermissions"] {
        cases.extend([
            // Name-based protections, one level down.
            bash("ask", "rm -rf sub", mode),
            bash("ask", "rm -r rc", mode),
            bash("ask", "rm --recursive rc/", mode),
            bash("ask", "find sub -delete", mode),
            bash("ask", "mv sub $O/moved", mode),
            bash("ask", "mv rc rc2", mode),
            // Known places, at any depth.
            bash("ask", "rm -rf $O/etc/claude-code", mode),
            bash("ask", "rm -rf $O/etc", mode),
            bash("ask", "mv $O/etc/claude-code $O/x", mode),
            bash("ask", "find $O/etc -delete", mode),
            bash("ask", "rmdir $O/etc/claude-code", mode),
            bash("ask", "rm -rf $O/flags", mode),
            bash("ask", "rm -rf $O/cfg", mode),
            // What holds none stays as it was.
            bash("allow", "rm -rf node_modules", mode),
            bash("allow", "rm -rf target/", mode),
            bash("allow", "rm -rf build", mode),
            bash("allow", "rm -rf plain", mode),
            bash("allow", "mv plain plain2", mode),
            bash("allow", "rm -rf sub/.git/../other", mode),
            // A linked work tree's `.git` file is no repository.
            bash("allow", "rm -rf .claude/worktrees/wt", mode),
        ]);
    }
    cases.extend([
        // A find that filters what it deletes does not take its root away.
        bash("allow", "find . -name '*.pyc' -delete", "bypassPermissions"),
        bash("allow", "rm -rf $O/unrelated", "bypassPermissions"),
        bash(
            "allow",
            "rm $O/etc/claude-code/other.txt",
            "bypassPermissions",
        ),
    ]);
    table_with(&fx, cases, Some(fx.home.clone()), adjust).await;
}

// --- 3. A bare-name deny rule naming a symlinked directory -------------------------------

/// A cwd-relative deny or ask rule naming a directory link (`sdir -> secrets`) as a bare
/// name (`sdir`, `./sdir`, `sdir/`, `sdir/**`) also covers where the link leads, as
/// `./sdir/**` does: reading `secrets/key.pem` is denied, by Read and by Bash.
#[tokio::test]
async fn a_bare_name_rule_naming_a_directory_link_covers_its_target() {
    let fx = Fixture::new();
    std::os::unix::fs::symlink("secrets", fx.proj.join("sdir")).unwrap();
    let mut cases = Vec::new();
    for rule in [
        "Read(./sdir)",
        "Read(sdir)",
        "Read(sdir/)",
        "Read(sdir/**)",
        "Read(**/sdir)",
        "Read(./sdir/**)",
        "Read(/sdir)",
    ] {
        cases.extend([
            case("deny", "Read", "$P/secrets/key.pem")
                .mode("bypassPermissions")
                .deny(&[rule]),
            case("deny", "Read", "$P/sdir/key.pem")
                .mode("bypassPermissions")
                .deny(&[rule]),
            case("deny", "Bash", "cat secrets/key.pem")
                .mode("bypassPermissions")
                .deny(&[rule]),
            case("allow", "Read", "$P/docs/a.md")
                .mode("bypassPermissions")
                .deny(&[rule]),
            case("ask", "Read", "$P/secrets/key.pem")
                .mode("bypassPermissions")
                .ask(&[rule]),
        ]);
    }
    run_table_in(&fx, cases).await;
}

// --- 4. `~` in a command when no home directory is known ----------------------------------

/// With no home directory known (`HOME` unset or empty), a `~` bash expands names a place
/// that cannot be worked out (bash takes the password database's home, or the empty
/// string): a computed path, as `$HOME/…` is. It is not read as a file named `~` in the cwd,
/// which passed deny rules (`cat ~/etc/hostname` under `Read(//etc/**)`), the working
/// directory check (`echo x > ~/tmp/pwned` in acceptEdits) and the critical removal check.
#[tokio::test]
async fn a_tilde_without_a_home_is_a_computed_path() {
    let fx = Fixture::new();
    let bash = |expect, command: &str| case(expect, "Bash", command);
    let cases = || {
        vec![
            bash("ask", "cat ~/etc/hostname").deny(&["Read(//etc/**)"]),
            bash("ask", "cat < ~/etc/hostname").deny(&["Read(//etc/**)"]),
            bash("ask", "echo x > ~/tmp/pwned").mode("acceptEdits"),
            bash("ask", "touch ~/tmp/pwned").mode("acceptEdits"),
            bash("ask", "cd ~ && touch x").mode("acceptEdits"),
            bash("ask", "cd ~/tmp && touch x").mode("acceptEdits"),
            bash("ask", "rm -rf ~").mode("bypassPermissions"),
            bash("ask", "rm -rf ~/").mode("bypassPermissions"),
            bash("ask", "find ~ -delete").mode("bypassPermissions"),
            bash("ask", "echo x >> ~/.bashrc").mode("bypassPermissions"),
            // A `~` bash does not expand is a name, and what names no path is unchanged.
            bash("allow", "cat '~/x'").deny(&["Read(//etc/**)"]),
            bash("allow", "echo ~").mode("acceptEdits"),
            bash("allow", "touch new.txt").mode("acceptEdits"),
        ]
    };
    // `HOME` unset, and `HOME` set to the empty string.
    table_with(&fx, cases(), None, |roots| roots.user_config_dir = None).await;
    table_with(&fx, cases(), Some(PathBuf::new()), |roots| {
        roots.user_config_dir = None;
    })
    .await;
}

// --- 5. The tool list under a bare `Edit` or `Read` deny ---------------------------------

/// `deny: ["Edit"]` removes every built-in tool whose every call writes a path (Write,
/// Edit, NotebookEdit, MultiEdit) from the tool list, and `deny: ["Read"]` every one whose
/// every call reads (Read, Glob, Grep, LS), as the engine denies each of their calls; the
/// other family, Bash and an MCP tool of the same name stay. A call of one of them is
/// denied, also by the rule-based check that follows a PreToolUse hook's allow.
#[tokio::test]
async fn a_bare_edit_or_read_deny_removes_its_whole_family_from_the_tool_list() {
    let fx = Fixture::new();
    let writers = ["Edit", "Write", "NotebookEdit", "MultiEdit"];
    let readers = ["Read", "Glob", "Grep", "LS"];
    for (rule, family, other) in [("Edit", writers, readers), ("Read", readers, writers)] {
        let c = case("deny", "Bash", "").deny(&[rule]);
        let (engine, ctx) = context(&fx, &c);
        for name in family {
            let tool = probe(&fx, name);
            assert!(engine.is_blanket_denied(&tool), "{name} under {rule}");
            // The list agrees with the decision for a call.
            let input = fx.input(name, "$P/README.md");
            let got = behavior(&engine.decide(&tool, &input, &ctx).await);
            assert_eq!(got, "deny", "a call of {name} under {rule}");
            // So does the check after a PreToolUse hook's allow.
            let after_hook = engine.check_rule_based(&tool, &input, &ctx).await;
            assert!(
                matches!(after_hook, Some(tool_core::PermissionResult::Deny { .. })),
                "{name} under {rule} after a hook's allow: {after_hook:?}"
            );
        }
        for name in other
            .iter()
            .chain(&["Bash", "mcp__srv__Write", "mcp__srv__Read"])
        {
            assert!(
                !engine.is_blanket_denied(&probe(&fx, name)),
                "{name} under {rule}"
            );
        }
    }
}

// --- 6. A find whose tests do not filter what it deletes ---------------------------------

/// Only a test ANDed before `-delete` filters what find deletes: one after it (find deletes
/// each file before it tests it), a negated one or an `-o` branch deletes everything, so
/// `find ~ -delete -name nothing` removes the home as `find ~ -delete` does. Asked even in
/// bypass mode for a critical root or one holding protected names; a filtered find and one
/// of a plain directory stay allowed.
#[tokio::test]
async fn a_find_whose_tests_come_after_or_branch_around_the_deletion_deletes_everything() {
    let fx = Fixture::new();
    for d in [fx.proj.join("victimrepo/.git"), fx.proj.join("build/obj")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(fx.proj.join("victimrepo/a.txt"), "a").unwrap();
    std::fs::write(fx.proj.join("build/obj/a.o"), "o").unwrap();
    let bypass = |expect, command: &str| case(expect, "Bash", command).mode("bypassPermissions");
    table_with(
        &fx,
        vec![
            bypass("ask", "find ~ -delete"),
            bypass("ask", "find ~ -delete -name nothing"),
            bypass("ask", "find / -delete -name x"),
            bypass("ask", "find . ! -name x -delete"),
            bypass("ask", "find . -not -name x -delete"),
            bypass("ask", "find . -name .git -prune -o -delete"),
            bypass("ask", "find . -name x -delete -o -delete"),
            bypass("ask", "find ~ -exec true {} \\; -delete"),
            bypass("ask", "find victimrepo -delete -name nothing"),
            bypass("ask", "rm -rf victimrepo"),
            // Filtered, or a plain directory: as before.
            bypass("allow", "find . -name '*.pyc' -delete"),
            bypass("allow", "find build -delete"),
            bypass("allow", "find build -name '*.o' -delete"),
            bypass("allow", "find build -delete -name nothing"),
            bypass("allow", "find . -name '*.pyc' -print"),
        ],
        Some(fx.home.clone()),
        |_| {},
    )
    .await;
}

// --- 7. A filtered find that deletes protected files -------------------------------------

/// A find that deletes (`-delete`, `-exec rm`) what its filters let through asks, even in
/// bypass mode, when a filter names a protected file (`-name .bashrc`), or when its filters
/// do not rule out every protected name (`-type f`, `-path`, a glob or a name that matches
/// one, such as `config`) and a start point holds a protected path, as `rm` of that path
/// asks. A name filter that matches no protected name (`-name '*.pyc'`, `-name a.o`) keeps
/// it allowed.
#[tokio::test]
async fn a_filtered_find_deleting_protected_files_asks() {
    let fx = Fixture::new();
    for d in [fx.proj.join("sub/.git"), fx.proj.join("build/obj")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(fx.proj.join("sub/.git/config"), "[core]").unwrap();
    std::fs::write(fx.proj.join("build/obj/a.o"), "o").unwrap();
    let bypass = |expect, command: &str| case(expect, "Bash", command).mode("bypassPermissions");
    table_with(
        &fx,
        vec![
            bypass("ask", "find . -name .bashrc -delete"),
            bypass("ask", "find build -name .bashrc -delete"),
            bypass("ask", "find build -iname .BASHRC -delete"),
            bypass("ask", "find ~ -type f -delete"),
            bypass("ask", "find sub -path '*/.git/*' -delete"),
            bypass("ask", "find . -type f -name config -delete"),
            bypass("ask", "find . -name '.bash*' -delete"),
            bypass("ask", "find . -type f -exec rm {} +"),
            // Filters that rule out every protected name, or a root that holds none.
            bypass("allow", "find . -name '*.pyc' -delete"),
            bypass("allow", "find . -type f -name a.o -delete"),
            bypass("allow", "find ~ -name '*.tmp' -delete"),
            bypass("allow", "find build -type f -delete"),
            bypass("allow", "find build -path '*/obj/*' -delete"),
            // Empty directories in a repository's `.git` are its structure (refs/tags).
            bypass("ask", "find . -type d -empty -delete"),
            bypass("allow", "find build -type d -empty -delete"),
        ],
        Some(fx.home.clone()),
        |_| {},
    )
    .await;
}

// --- 8. Removals through a variable or `~user` -------------------------------------------

/// A removal (`rm -r`, `mv`'s source) of a variable the line sets, of a command
/// substitution, or (also `rmdir`) of a `~user` home is a safety check, asked even in bypass
/// mode: it may be `/` or a home. `mv` of the home is treated as `rm -rf ~` is, also with no
/// home known.
/// A computed path with a fixed name after it stays allowed.
#[tokio::test]
async fn removals_through_a_variable_or_a_user_home_ask_in_bypass() {
    let fx = Fixture::new();
    let bypass = |expect, command: &str| case(expect, "Bash", command).mode("bypassPermissions");
    let cases = || {
        vec![
            bypass("ask", "x=/; rm -rf $x"),
            bypass("ask", "x=$(pwd); rm -rf \"$x\""),
            bypass("ask", "x=${HOME}; rm -rf $x"),
            bypass("ask", "rm -rf $(echo /)"),
            bypass("ask", "rm -rf ~bin/"),
            bypass("ask", "rm -rf ~root/"),
            bypass("ask", "rm -rf ~sys"),
            bypass("ask", "rmdir ~root"),
            bypass("ask", "mv ~root /tmp/r"),
            bypass("ask", "mv \"${HOME}\" /tmp/h"),
            bypass("ask", "mv ~ /tmp/h"),
            bypass("ask", "x=~; mv $x /tmp/h"),
            // Found by the third adversarial review: the variable followed by more.
            bypass("ask", "x=/; rm -rf \"$x\"/"),
            bypass("ask", "x=~; rm -rf \"$x\"/"),
            bypass("ask", "x=/; rm -rf $x/etc"),
            bypass("ask", "x=/; rm -rf \"${x}\"/etc"),
            bypass("ask", "x=/; mv $x/etc /tmp/e"),
            bypass("allow", "rm -rf \"$TMPDIR/build\""),
            bypass("allow", "mv notes.txt \"$x\""),
            bypass("allow", "rm -rf build"),
        ]
    };
    table_with(&fx, cases(), Some(fx.home.clone()), |_| {}).await;
    table_with(&fx, cases(), None, |roots| roots.user_config_dir = None).await;
}

// --- 9. A bare-name rule in another case naming a directory link ------------------------

/// Deny rules ignore case, so `Read(SDIR)` names the link `sdir -> secrets` as `Read(sdir)`
/// does, and covers where it leads: reading `secrets/key.pem` is denied.
#[tokio::test]
async fn a_bare_name_rule_in_another_case_follows_the_link() {
    let fx = Fixture::new();
    std::os::unix::fs::symlink("secrets", fx.proj.join("sdir")).unwrap();
    let mut cases = Vec::new();
    for rule in ["Read(SDIR)", "Read(./Sdir)", "Read(SDir/**)"] {
        cases.extend([
            case("deny", "Read", "$P/secrets/key.pem")
                .mode("bypassPermissions")
                .deny(&[rule]),
            case("deny", "Bash", "cat secrets/key.pem")
                .mode("bypassPermissions")
                .deny(&[rule]),
            case("allow", "Read", "$P/docs/a.md")
                .mode("bypassPermissions")
                .deny(&[rule]),
        ]);
    }
    run_table_in(&fx, cases).await;
}

// --- 10. `~` when the session's environment empties HOME ---------------------------------

/// A context with no home (the settings' `env` emptied `HOME`, so Bash expands `~` to the
/// empty string) makes `~` a computed path even though the engine knows the process's home
/// from before the settings: `cat ~/etc/hostname` under `Read(//etc/**)` asks.
#[tokio::test]
async fn a_context_without_a_home_is_not_given_the_engines_home() {
    let fx = Fixture::new();
    let c = case("ask", "Bash", "cat ~/etc/hostname").deny(&["Read(//etc/**)"]);
    let (engine, ctx) = context(&fx, &c);
    let perm = ctx.permission().clone();
    let mut roots = engine.roots().clone();
    roots.home = Some(fx.home.clone());
    let engine = PermissionEngine::new(&perm, roots).unwrap();
    let tool = tool_perms::probe::ProbeTool::new(c.tool, &fx.proj, None);
    for mode in ["default", "bypassPermissions"] {
        let c = case("ask", "Bash", "cat ~/etc/hostname")
            .deny(&["Read(//etc/**)"])
            .mode(mode);
        let (_, ctx) = context(&fx, &c);
        let ctx = ctx.with_home(None);
        let got = behavior(
            &engine
                .decide(&tool, &fx.input("Bash", &c.input), &ctx)
                .await,
        );
        assert_eq!(got, "ask", "{} in {mode}", c.input);
    }
}
