//! Session 31 on read-only git and the repository's own files: a `.git` git's own test
//! rejects does not hide the repository above it; a relative include is found from the path
//! git opened, not from where a link leads; `--remerge-diff` runs merge drivers; a brace
//! list before `git status` that writes a file the check read is seen; a line of many git
//! commands reads the repository once; signing programs matter only to the commands that
//! verify signatures. Each threat is first shown real: the same git command, run by the
//! real git in a temporary repository, creates a marker file.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use crate::common::{Fixture, behavior, real_bash};
use crate::git_fixture::{
    age, assert_allowed, assert_asks, assert_runs, assert_runs_nothing, decide, git, git_output,
    message, repository, script, signed_commit,
};

/// A repository at `fx.proj/r` whose `core.fsmonitor` is a script creating `fx.out/PWNED`;
/// the repository and the marker.
fn monitored_repository(fx: &Fixture) -> (PathBuf, PathBuf) {
    let r = repository(fx, "r");
    let marker = fx.out.join("PWNED");
    let monitor = r.join(".git/monitor.sh");
    script(&monitor, &marker);
    git(
        fx,
        &r,
        &["config", "core.fsmonitor", &monitor.display().to_string()],
    );
    (r, marker)
}

/// A layout of a `.git` made in the directory it is given, with what it is.
type Layout<'a> = (&'static str, Box<dyn Fn(&Path) + 'a>);

/// A decoy `.git` made in the directory it is given, with what it is.
type Decoy = (&'static str, fn(&Path));

/// Writes `text` to `path`, making its directory.
fn put(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A `.git` below the repository that git's own test of a git directory rejects
/// (`is_git_directory`: a `HEAD` that is no ref, a `commondir` naming nothing, `objects` a
/// plain file, `HEAD` naming `heads/main`) does not stop git's discovery: git goes on up
/// to the repository whose `core.fsmonitor` runs (shown real), and the check asks naming
/// that repository's configuration (found by review 31: the check took the decoy for the
/// repository and allowed). A `.git` git does take stops the walk, and its own
/// configuration decides.
#[tokio::test]
async fn a_decoy_git_directory_does_not_hide_the_repository_above() {
    let fx = Fixture::new();
    let (r, marker) = monitored_repository(&fx);
    let sub = r.join("sub");
    let decoys: [Decoy; _] = [
        ("a HEAD that is no ref", |g| {
            std::fs::create_dir_all(g.join("objects")).unwrap();
            std::fs::create_dir_all(g.join("refs")).unwrap();
            put(&g.join("HEAD"), "garbage\n");
        }),
        ("a commondir naming nothing", |g| {
            std::fs::create_dir_all(g.join("objects")).unwrap();
            std::fs::create_dir_all(g.join("refs")).unwrap();
            put(&g.join("HEAD"), "ref: refs/heads/main\n");
            put(&g.join("commondir"), "nothing\n");
        }),
        ("objects a plain file", |g| {
            std::fs::create_dir_all(g.join("refs")).unwrap();
            put(&g.join("objects"), "");
            put(&g.join("HEAD"), "ref: refs/heads/main\n");
        }),
        ("HEAD naming heads/main", |g| {
            std::fs::create_dir_all(g.join("objects")).unwrap();
            std::fs::create_dir_all(g.join("refs")).unwrap();
            put(&g.join("HEAD"), "ref: heads/main\n");
        }),
    ];
    for (what, make) in decoys {
        let _ = std::fs::remove_dir_all(&sub);
        std::fs::create_dir_all(&sub).unwrap();
        make(&sub.join(".git"));
        assert_runs(&fx, &sub, &["status"], &marker);
        let got = decide(&fx, &sub, "default", "git status").await;
        assert_eq!(behavior(&got), "ask", "{what}: {got:?}");
        assert_asks(
            &fx,
            &sub,
            "git status",
            &r.join(".git/config"),
            "core.fsmonitor",
        )
        .await;
    }
    // A `.git` git takes: the walk stops there, and its configuration runs nothing.
    let _ = std::fs::remove_dir_all(&sub);
    for d in ["objects", "refs"] {
        std::fs::create_dir_all(sub.join(".git").join(d)).unwrap();
    }
    put(&sub.join(".git/HEAD"), "ref: refs/heads/main\n");
    assert_runs_nothing(&fx, &sub, &["status"], &marker);
    assert_allowed(&fx, &sub, "git status").await;
}

/// git's own test decides, layout by layout: for each `sub/.git` (`HEAD` a symbolic ref
/// with or without spaces, an object id, too short, empty, a directory, a link into `refs/`
/// or elsewhere, a NUL inside; `objects` and `refs` plain files with or without the execute
/// bit, links; a `commondir` naming the repository above, nothing, or a directory), the
/// real git says which git directory it takes (`git rev-parse`), and the repository whose
/// configuration it reads names a program (`core.fsmonitor`, above and in `sub/.git`): the
/// check asks naming that very configuration, or, where git stops with an error, asks.
#[tokio::test]
async fn git_s_own_test_of_a_git_directory_decides_which_repository_is_read() {
    let fx = Fixture::new();
    let (r, _) = monitored_repository(&fx);
    let sub = r.join("sub");
    let id = git(&fx, &r, &["rev-parse", "HEAD"]).trim().to_owned();
    let layouts: Vec<Layout<'_>> = vec![
        ("HEAD ref: refs/…", Box::new(|_| {})),
        (
            "HEAD ref:refs/… without a space",
            Box::new(|g| put(&g.join("HEAD"), "ref:refs/heads/main")),
        ),
        (
            "HEAD ref: with tabs and line ends before refs/",
            Box::new(|g| put(&g.join("HEAD"), "ref:\t\r\n refs/heads/x\n")),
        ),
        (
            "HEAD ref: heads/main",
            Box::new(|g| put(&g.join("HEAD"), "ref: heads/main\n")),
        ),
        (
            "HEAD with a space before ref:",
            Box::new(|g| put(&g.join("HEAD"), " ref: refs/heads/main\n")),
        ),
        (
            "HEAD ref: with refs/ past the 255 bytes git reads",
            Box::new(|g| {
                put(
                    &g.join("HEAD"),
                    &format!("ref:{}refs/heads/main\n", " ".repeat(260)),
                )
            }),
        ),
        (
            "HEAD with a NUL inside refs/",
            Box::new(|g| put(&g.join("HEAD"), "ref: re\0fs/heads/main\n")),
        ),
        (
            "HEAD an object id",
            Box::new(|g| put(&g.join("HEAD"), &format!("{id}\n"))),
        ),
        (
            "HEAD an object id in capitals, then text",
            Box::new(|g| put(&g.join("HEAD"), &format!("{}xyz", id.to_uppercase()))),
        ),
        (
            "HEAD one hex digit short",
            Box::new(|g| put(&g.join("HEAD"), &format!("{}\n", &id[1..]))),
        ),
        ("HEAD empty", Box::new(|g| put(&g.join("HEAD"), ""))),
        (
            "HEAD a directory",
            Box::new(|g| {
                std::fs::remove_file(g.join("HEAD")).unwrap();
                std::fs::create_dir(g.join("HEAD")).unwrap();
            }),
        ),
        (
            "HEAD a dangling link into refs/",
            Box::new(|g| {
                std::fs::remove_file(g.join("HEAD")).unwrap();
                std::os::unix::fs::symlink("refs/heads/main", g.join("HEAD")).unwrap();
            }),
        ),
        (
            "HEAD a link elsewhere",
            Box::new(|g| {
                put(&g.join("HEAD2"), "ref: refs/heads/main\n");
                std::fs::remove_file(g.join("HEAD")).unwrap();
                std::os::unix::fs::symlink("HEAD2", g.join("HEAD")).unwrap();
            }),
        ),
        (
            "objects a plain file",
            Box::new(|g| {
                std::fs::remove_dir_all(g.join("objects")).unwrap();
                put(&g.join("objects"), "");
            }),
        ),
        (
            "objects an executable file",
            Box::new(|g| {
                std::fs::remove_dir_all(g.join("objects")).unwrap();
                put(&g.join("objects"), "");
                let mode = std::fs::Permissions::from_mode(0o755);
                std::fs::set_permissions(g.join("objects"), mode).unwrap();
            }),
        ),
        (
            "refs a dangling link",
            Box::new(|g| {
                std::fs::remove_dir_all(g.join("refs")).unwrap();
                std::os::unix::fs::symlink("nowhere", g.join("refs")).unwrap();
            }),
        ),
        (
            "objects a link to a directory",
            Box::new(|g| {
                std::fs::remove_dir_all(g.join("objects")).unwrap();
                std::fs::create_dir_all(g.join("store")).unwrap();
                std::os::unix::fs::symlink("store", g.join("objects")).unwrap();
            }),
        ),
        (
            "a commondir naming the repository above",
            Box::new(|g| put(&g.join("commondir"), "../../.git\n")),
        ),
        (
            "a commondir naming nothing",
            Box::new(|g| put(&g.join("commondir"), "nothing\n")),
        ),
        (
            "a commondir naming a directory without refs",
            Box::new(|g| {
                std::fs::create_dir_all(g.join("half/objects")).unwrap();
                put(&g.join("commondir"), "half");
            }),
        ),
        (
            "a commondir under a missing directory",
            Box::new(|g| put(&g.join("commondir"), "/nonexistent/deeper/x\n")),
        ),
        (
            "a commondir that is a directory",
            Box::new(|g| std::fs::create_dir_all(g.join("commondir")).unwrap()),
        ),
    ];
    let decoy_marker = fx.out.join("DECOY");
    let mut taken = 0;
    let mut skipped = 0;
    for (what, make) in layouts {
        let _ = std::fs::remove_dir_all(&sub);
        let g = sub.join(".git");
        for d in ["objects", "refs"] {
            std::fs::create_dir_all(g.join(d)).unwrap();
        }
        put(&g.join("HEAD"), "ref: refs/heads/main\n");
        script(&g.join("monitor.sh"), &decoy_marker);
        put(
            &g.join("config"),
            &format!("[core]\n\tfsmonitor = {}\n", g.join("monitor.sh").display()),
        );
        make(&g);
        let found = git_output(&fx, &sub, &["rev-parse", "--absolute-git-dir"]);
        let got = decide(&fx, &sub, "default", "git status").await;
        let text = message(&got);
        if !found.status.success() {
            // git stops with an error: the check asks all the same.
            assert_eq!(behavior(&got), "ask", "{what}: {got:?}");
            continue;
        }
        let git_dir = String::from_utf8_lossy(&found.stdout).trim().to_owned();
        let common = git_output(&fx, &sub, &["rev-parse", "--git-common-dir"]);
        let common = String::from_utf8_lossy(&common.stdout).trim().to_owned();
        let common = std::fs::canonicalize(sub.join(common)).unwrap();
        if Path::new(&git_dir) == g {
            taken += 1;
        } else {
            assert_eq!(Path::new(&git_dir), r.join(".git"), "{what}");
            skipped += 1;
        }
        let config = common.join("config");
        assert_eq!(behavior(&got), "ask", "{what}: {got:?}");
        assert!(
            text.contains(&format!("{} sets core.fsmonitor", config.display())),
            "{what}: git reads {}: {text}",
            config.display()
        );
    }
    assert!(
        taken >= 5 && skipped >= 8,
        "{taken} taken, {skipped} skipped"
    );
}

/// A relative include inside an included file that is a symbolic link is found from the
/// directory of the path git opened (`.git/a/link.cfg` → `../b/real.cfg` including `x.cfg`
/// reads `.git/a/x.cfg`), not from where the link leads (found by review 31: the check read
/// `.git/b/x.cfg`); the same from a file `~/` names, and from a top-level configuration
/// that is a link. Shown real each time.
#[tokio::test]
async fn a_relative_include_is_found_from_the_path_git_opened() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let marker = fx.out.join("PWNED");
    let monitor = fx.out.join("monitor.sh");
    script(&monitor, &marker);
    let evil = format!("[core]\n\tfsmonitor = {}\n", monitor.display());
    let benign = "[core]\n\tbare = false\n";

    put(&r.join(".git/b/real.cfg"), "[include]\n\tpath = x.cfg\n");
    put(&r.join(".git/b/x.cfg"), benign);
    put(&r.join(".git/a/x.cfg"), &evil);
    std::os::unix::fs::symlink("../b/real.cfg", r.join(".git/a/link.cfg")).unwrap();
    git(&fx, &r, &["config", "include.path", "a/link.cfg"]);
    assert_runs(&fx, &r, &["status"], &marker);
    assert_asks(
        &fx,
        &r,
        "git status",
        &r.join(".git/a/x.cfg"),
        "core.fsmonitor",
    )
    .await;
    git(&fx, &r, &["config", "--unset", "include.path"]);
    assert_allowed(&fx, &r, "git status").await;

    // From `~/`.
    put(
        &fx.home.join("store/real.cfg"),
        "[include]\n\tpath = x.cfg\n",
    );
    put(&fx.home.join("store/x.cfg"), benign);
    put(&fx.home.join("cfg/x.cfg"), &evil);
    std::os::unix::fs::symlink("../store/real.cfg", fx.home.join("cfg/link.cfg")).unwrap();
    git(&fx, &r, &["config", "include.path", "~/cfg/link.cfg"]);
    assert_runs(&fx, &r, &["status"], &marker);
    assert_asks(
        &fx,
        &r,
        "git status",
        &fx.home.join("cfg/x.cfg"),
        "core.fsmonitor",
    )
    .await;
    git(&fx, &r, &["config", "--unset", "include.path"]);

    // The repository's configuration itself a link.
    let config = std::fs::read_to_string(r.join(".git/config")).unwrap();
    put(
        &r.join("store/config"),
        &format!("{config}[include]\n\tpath = x.cfg\n"),
    );
    put(&r.join("store/x.cfg"), benign);
    put(&r.join(".git/x.cfg"), &evil);
    std::fs::remove_file(r.join(".git/config")).unwrap();
    std::os::unix::fs::symlink("../store/config", r.join(".git/config")).unwrap();
    assert_runs(&fx, &r, &["status"], &marker);
    assert_asks(
        &fx,
        &r,
        "git status",
        &r.join(".git/x.cfg"),
        "core.fsmonitor",
    )
    .await;
}

/// A merge driver (`merge.<driver>.driver`, named for files in `.gitattributes`) runs when
/// `git show` or `git log` shows a merge as a remerge diff: `--remerge-diff`,
/// `--diff-merges=remerge`, and `-m` where `log.diffMerges` is `remerge` (shown real). Those
/// ask, naming the key (found by review 31: they were allowed); commands that never merge
/// (`git status`, `git diff`, `git blame`, `git branch`) stay allowed.
#[tokio::test]
async fn a_merge_driver_asks_for_the_commands_that_remerge() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    std::fs::write(r.join("m.txt"), "base\n").unwrap();
    git(&fx, &r, &["add", "m.txt"]);
    git(&fx, &r, &["commit", "-qm", "base"]);
    git(&fx, &r, &["checkout", "-qb", "side"]);
    std::fs::write(r.join("m.txt"), "side\n").unwrap();
    git(&fx, &r, &["commit", "-qam", "side"]);
    git(&fx, &r, &["checkout", "-q", "-"]);
    std::fs::write(r.join("m.txt"), "main\n").unwrap();
    git(&fx, &r, &["commit", "-qam", "main"]);
    git(
        &fx,
        &r,
        &["merge", "-q", "-s", "ours", "-m", "merge", "side"],
    );
    std::fs::write(r.join(".gitattributes"), "*.txt merge=pw\n").unwrap();
    for command in ["git show --remerge-diff", "git status"] {
        assert_allowed(&fx, &r, command).await;
    }
    let marker = fx.out.join("PWNED");
    let driver = r.join(".git/driver.sh");
    script(&driver, &marker);
    git(
        &fx,
        &r,
        &[
            "config",
            "merge.pw.driver",
            &format!("{} %O %A %B", driver.display()),
        ],
    );
    let config = r.join(".git/config");
    for command in [
        "git show --remerge-diff",
        "git log -p --remerge-diff -1",
        "git log -p --diff-merges=remerge -1",
    ] {
        let args: Vec<&str> = command.split(' ').skip(1).collect();
        assert_runs(&fx, &r, &args, &marker);
        assert_asks(&fx, &r, command, &config, "merge.pw.driver").await;
    }
    git(&fx, &r, &["config", "log.diffMerges", "remerge"]);
    for command in ["git show -m", "git log -p -m -1"] {
        let args: Vec<&str> = command.split(' ').skip(1).collect();
        assert_runs(&fx, &r, &args, &marker);
        assert_asks(&fx, &r, command, &config, "merge.pw.driver").await;
    }
    for command in ["git status", "git diff", "git blame m.txt", "git branch"] {
        let args: Vec<&str> = command.split(' ').skip(1).collect();
        assert_runs_nothing(&fx, &r, &args, &marker);
        assert_allowed(&fx, &r, command).await;
    }
}

/// In acceptEdits mode, a command before git on the line that writes a file the check read
/// through a brace list (`cp {evil.txt,cfg/extra.cfg} && git status`, `mv {…}`, `touch
/// {…}`, a hook into `core.hooksPath`) is seen as the same command without braces is: the
/// line asks (shown real; found by review 31: it was allowed).
#[tokio::test]
async fn a_brace_list_before_git_that_writes_what_the_check_read_asks() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let marker = fx.out.join("PWNED");
    let monitor = fx.out.join("monitor.sh");
    script(&monitor, &marker);
    let extra = r.join("cfg/extra.cfg");
    put(&extra, "[user]\n\tname = x\n");
    git(&fx, &r, &["config", "include.path", "../cfg/extra.cfg"]);
    put(
        &r.join("evil.txt"),
        &format!("[core]\n\tfsmonitor = {}\n", monitor.display()),
    );
    std::fs::create_dir_all(r.join("myhooks")).unwrap();
    git(&fx, &r, &["config", "core.hooksPath", "myhooks"]);
    script(&r.join("tools.sh"), &marker);
    let got = decide(&fx, &r, "acceptEdits", "git status").await;
    assert_eq!(behavior(&got), "allow", "{got:?}");

    let line = "cp {evil.txt,cfg/extra.cfg} && git status";
    assert!(real_bash(line, &r, &fx.home));
    assert!(marker.exists(), "{line} ran no program");
    std::fs::remove_file(&marker).unwrap();
    put(&extra, "[user]\n\tname = x\n");
    let hook_line = "cp {tools.sh,myhooks/post-index-change} && git status";
    age(&r.join("f"));
    real_bash(hook_line, &r, &fx.home);
    assert!(marker.exists(), "{hook_line} ran no program");
    std::fs::remove_file(&marker).unwrap();
    std::fs::remove_file(r.join("myhooks/post-index-change")).unwrap();

    for command in [
        line,
        hook_line,
        "mv {evil.txt,cfg/extra.cfg} && git status",
        "touch {a,cfg/extra.cfg} && git status",
        "cp evil.txt cfg/extra.cfg && git status",
    ] {
        let got = decide(&fx, &r, "acceptEdits", command).await;
        assert_eq!(behavior(&got), "ask", "{command}: {got:?}");
    }
}

/// A line of many git commands reads the repository once per check, whatever it includes
/// (a configuration including a 58 KB file 250 times; found by review 31: 60 `git log -1`
/// took half a minute): the decision is the same as for one command, allowed while the
/// files name no program, asked once one does.
#[tokio::test]
async fn a_line_of_many_git_commands_is_decided_as_one() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let mut big = String::from("[x]\n");
    for i in 0..1000 {
        big.push_str(&format!("\ty{i} = {}\n", "v".repeat(48)));
    }
    put(&r.join(".git/big.cfg"), &big);
    let config = r.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&"[include]\n\tpath = big.cfg\n".repeat(250));
    std::fs::write(&config, text).unwrap();
    assert!(git_output(&fx, &r, &["status"]).status.success());
    let line = "git log -1 ; ".repeat(60);
    let line = line.trim_end_matches([' ', ';']);
    assert_allowed(&fx, &r, line).await;
    assert_allowed(&fx, &r, "git status && git diff && git log -1").await;
    big.push_str("[core]\n\tfsmonitor = touch x\n");
    put(&r.join(".git/big.cfg"), &big);
    let got = decide(&fx, &r, "default", line).await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    let got = decide(&fx, &r, "default", "git log -1").await;
    assert!(message(&got).contains("core.fsmonitor"), "{got:?}");
}

/// Signing programs (`gpg.program`, `gpg.ssh.program`: a common commit-signing setup) run
/// only when git verifies a signature: `git status`, `git diff`, `git branch`, `git blame`
/// and `git help` never do (shown real, with a signed commit), and stay allowed (found by
/// review 31: they asked). `git log --show-signature`, `git branch --sort=signature` and `git
/// branch` where `branch.sort` is `signature` do verify (shown real) and ask; so does any
/// `git log` or `git show`, which the user's own configuration may make verify
/// (`log.showSignature`).
#[tokio::test]
async fn signing_programs_ask_only_for_commands_that_verify() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let marker = fx.out.join("PWNED");
    let gpg = r.join(".git/fake-gpg");
    script(&gpg, &marker);
    signed_commit(&fx, &r, "PGP");
    git(
        &fx,
        &r,
        &["config", "gpg.program", &gpg.display().to_string()],
    );
    std::fs::write(r.join("f"), "two\n").unwrap();
    for command in [
        "git status",
        "git diff",
        "git branch",
        "git branch -v",
        "git blame f",
    ] {
        let args: Vec<&str> = command.split(' ').skip(1).collect();
        assert_runs_nothing(&fx, &r, &args, &marker);
        assert_allowed(&fx, &r, command).await;
    }
    assert_allowed(&fx, &r, "git help log").await;
    let config = r.join(".git/config");
    for command in ["git log --show-signature", "git branch --sort=signature"] {
        let args: Vec<&str> = command.split(' ').skip(1).collect();
        assert_runs(&fx, &r, &args, &marker);
        assert_asks(&fx, &r, command, &config, "gpg.program").await;
    }
    for command in ["git log", "git show"] {
        let got = decide(&fx, &r, "default", command).await;
        assert_eq!(behavior(&got), "ask", "{command}: {got:?}");
    }
    git(&fx, &r, &["config", "branch.sort", "signature"]);
    assert_runs(&fx, &r, &["branch"], &marker);
    assert_asks(&fx, &r, "git branch", &config, "gpg.program").await;
    assert_allowed(&fx, &r, "git status").await;

    // SSH signing, as a password manager's agent sets it up.
    let s = repository(&fx, "s");
    git(&fx, &s, &["config", "gpg.format", "ssh"]);
    git(
        &fx,
        &s,
        &["config", "gpg.ssh.program", "/opt/1password/op-ssh-sign"],
    );
    git(&fx, &s, &["config", "commit.gpgsign", "true"]);
    for command in ["git status", "git diff", "git branch", "git blame f"] {
        assert_allowed(&fx, &s, command).await;
    }
    let got = decide(&fx, &s, "default", "git log").await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    assert!(message(&got).contains("gpg.ssh.program"), "{got:?}");
}
