//! Session 35 on read-only git in an untrusted repository: what git reads besides the
//! directory it runs in is a path read. A work tree the repository's own configuration
//! moves (`core.worktree`, also through an include) outside the directory holding its
//! `.git`; a git directory reached through a gitfile, a `.git` link or a `commondir`; and
//! the files the repository's configuration includes, for the commands that print
//! configuration values. Each threat is first shown real: the real git prints the outside
//! file's content in a temporary repository.

use std::path::Path;

use crate::common::{Fixture, behavior, case, context, probe};
use crate::git_fixture::{decide, git, git_output, message, repository};
use tool_core::PermissionResult;

/// A layout of a `.git` made in the directory it is given, with what it is.
type Layout<'a> = (&'static str, Box<dyn Fn(&Path) + 'a>);

/// What the engine decides for `command` run by Bash in `cwd`, in default mode, with the
/// Read deny rules `deny`.
async fn decide_denying(
    fx: &Fixture,
    cwd: &Path,
    command: &str,
    deny: &[&str],
) -> PermissionResult {
    let c = case("", "Bash", command).deny(deny);
    let (engine, ctx) = context(fx, &c);
    let ctx = ctx.with_cwd(cwd);
    engine
        .decide(&probe(fx, "Bash"), &fx.input("Bash", command), &ctx)
        .await
}

/// Asserts that the real git, run in `dir` with `args`, prints `secret`.
fn assert_prints(fx: &Fixture, dir: &Path, args: &[&str], secret: &str) {
    let out = git_output(fx, dir, args);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(secret),
        "git {args:?} in {} prints {secret}: {text} {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `command` in `cwd` asks in default mode, naming `named`, and is no read in plan mode.
async fn assert_asks_naming(fx: &Fixture, cwd: &Path, command: &str, named: &Path) {
    let got = decide(fx, cwd, "default", command).await;
    assert_eq!(behavior(&got), "ask", "{command}: {got:?}");
    let text = message(&got);
    assert!(
        text.contains(&named.display().to_string()),
        "{command}: the message names {}: {text}",
        named.display()
    );
    let got = decide(fx, cwd, "plan", command).await;
    assert_ne!(behavior(&got), "allow", "{command} in plan mode: {got:?}");
}

/// A repository at `fx.home/private` (outside the working directories) with `creds.txt`
/// committed.
fn private_repository(fx: &Fixture) -> std::path::PathBuf {
    let dir = fx.home.join("private");
    std::fs::create_dir_all(&dir).unwrap();
    git(fx, &dir, &["init", "-q"]);
    std::fs::write(dir.join("creds.txt"), "password=hunter2\n").unwrap();
    git(fx, &dir, &["add", "creds.txt"]);
    git(fx, &dir, &["commit", "-qm", "private"]);
    dir
}

/// `core.worktree` in the repository's own `.git/config` (or in a file it includes) moves
/// the work tree to the home directory: `git diff` and `git grep` print `~/.ssh/id_rsa`,
/// which the index lists (shown real). Found by review 35: allowed with no rules, in plan
/// mode too. Now the work tree is a path read outside the working directories: it asks. A
/// work tree moved inside the working directories, or back to the repository's own
/// directory, is still a read.
#[tokio::test]
async fn a_work_tree_moved_outside_by_the_repository_s_config_asks() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let blob = {
        let out = std::process::Command::new("git")
            .args(["hash-object", "-w", "--stdin"])
            .current_dir(&r)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write as _;
                c.stdin.take().unwrap().write_all(b"x\n")?;
                c.wait_with_output()
            })
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    git(
        &fx,
        &r,
        &["config", "core.worktree", &fx.home.display().to_string()],
    );
    git(
        &fx,
        &r,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("100644,{blob},.ssh/id_rsa"),
        ],
    );
    assert_prints(&fx, &r, &["diff"], "+key");
    assert_prints(&fx, &r, &["grep", "-h", "key"], "key");
    for command in ["git diff", "git grep -h key", "git status"] {
        assert_asks_naming(&fx, &r, command, &fx.home).await;
    }
    // Through `config.worktree` (`extensions.worktreeConfig`), which git's setup reads.
    git(&fx, &r, &["config", "--unset", "core.worktree"]);
    git(&fx, &r, &["config", "extensions.worktreeConfig", "true"]);
    std::fs::write(
        r.join(".git/config.worktree"),
        format!("[core]\n\tworktree = {}\n", fx.home.display()),
    )
    .unwrap();
    assert_prints(&fx, &r, &["diff"], "+key");
    assert_asks_naming(&fx, &r, "git diff", &fx.home).await;
    let got = decide(&fx, &r, "default", "git diff").await;
    assert!(message(&got).contains("config.worktree"), "{got:?}");
    // Back in the repository's own directory, or elsewhere inside the working directories.
    std::fs::remove_file(r.join(".git/config.worktree")).unwrap();
    git(&fx, &r, &["config", "core.worktree", ".."]);
    assert_eq!(
        behavior(&decide(&fx, &r, "default", "git diff").await),
        "allow"
    );
    std::fs::create_dir_all(fx.proj.join("other")).unwrap();
    git(&fx, &r, &["config", "core.worktree", "../../other"]);
    assert_eq!(
        behavior(&decide(&fx, &r, "default", "git diff").await),
        "allow"
    );
}

/// A `.git` gitfile (absolute or relative `gitdir:`), a `.git` link, or a `.git` whose
/// `commondir` names another repository, outside the working directories: `git show
/// HEAD:creds.txt` prints that repository's file (shown real). Found by review 35: allowed,
/// even with a Read deny rule over it. Now its git directory is a path read: outside the
/// working directories it asks, under a Read deny rule it is denied (as `cat` of it).
#[tokio::test]
async fn a_git_directory_elsewhere_is_a_path_read() {
    let fx = Fixture::new();
    let private = private_repository(&fx);
    let private_git = private.join(".git");
    let relative = Path::new("../..")
        .join(fx.home.file_name().unwrap())
        .join("private/.git");
    let layouts: [Layout<'_>; 4] = [
        (
            "an absolute gitfile",
            Box::new(|d: &Path| {
                std::fs::write(
                    d.join(".git"),
                    format!("gitdir: {}\n", private_git.display()),
                )
                .unwrap();
            }),
        ),
        (
            "a relative gitfile",
            Box::new(|d: &Path| {
                std::fs::write(d.join(".git"), format!("gitdir: {}\n", relative.display()))
                    .unwrap();
            }),
        ),
        (
            "a .git link",
            Box::new(|d: &Path| std::os::unix::fs::symlink(&private_git, d.join(".git")).unwrap()),
        ),
        (
            "a commondir",
            Box::new(|d: &Path| {
                let g = d.join(".git");
                std::fs::create_dir_all(&g).unwrap();
                std::fs::write(g.join("HEAD"), "ref: refs/heads/master\n").unwrap();
                std::fs::write(g.join("commondir"), format!("{}\n", private_git.display()))
                    .unwrap();
            }),
        ),
    ];
    for (what, make) in layouts {
        let g = fx.proj.join("g");
        let _ = std::fs::remove_dir_all(&g);
        std::fs::create_dir_all(&g).unwrap();
        make(&g);
        assert_prints(&fx, &g, &["show", "HEAD:creds.txt"], "hunter2");
        for command in [
            "git show HEAD:creds.txt",
            "git log -p",
            "git grep -h password HEAD",
        ] {
            let got = decide(&fx, &g, "default", command).await;
            assert_eq!(behavior(&got), "ask", "{what}: {command}: {got:?}");
            assert!(message(&got).contains("private"), "{what}: {got:?}");
            let got = decide(&fx, &g, "plan", command).await;
            assert_ne!(
                behavior(&got),
                "allow",
                "{what}: {command} in plan mode: {got:?}"
            );
            let got = decide_denying(&fx, &g, command, &["Read(~/private/**)"]).await;
            assert_eq!(behavior(&got), "deny", "{what}: {command}: {got:?}");
        }
    }
    // `cat` of the same file, for comparison.
    let got = decide_denying(
        &fx,
        &fx.proj,
        "cat ../home/private/creds.txt",
        &["Read(~/private/**)"],
    )
    .await;
    assert_eq!(behavior(&got), "deny", "{got:?}");
}

/// A linked work tree (`git worktree add`) inside the working directories of a repository
/// outside them points back at its gitfile (`gitdir`): git's reads there stay reads. So
/// does a repository whose git directory is inside the directory holding its `.git`.
#[tokio::test]
async fn a_linked_work_tree_of_an_outside_repository_stays_a_read() {
    let fx = Fixture::new();
    let private = private_repository(&fx);
    let wt = fx.proj.join("wt");
    git(
        &fx,
        &private,
        &["worktree", "add", "-q", &wt.display().to_string()],
    );
    assert_prints(&fx, &wt, &["log", "--oneline"], "private");
    for command in ["git status", "git log -p", "git diff"] {
        let got = decide(&fx, &wt, "default", command).await;
        assert_eq!(behavior(&got), "allow", "{command}: {got:?}");
    }
    // A gitfile naming a git directory beside it.
    let g = fx.proj.join("g");
    std::fs::create_dir_all(&g).unwrap();
    git(&fx, &g, &["init", "-q", "--separate-git-dir", "real.git"]);
    let got = decide(&fx, &g, "default", "git status").await;
    assert_eq!(behavior(&got), "allow", "{got:?}");
}

/// `include.path` (or `includeIf.*.path`) in the repository's `.git/config` naming a file
/// outside it: `git config --list` and `git config pypi.password` print its secrets (shown
/// real). Found by review 35: allowed, even with a Read deny rule over it. Now each
/// included file is a path read for the commands that print configuration values, judged
/// as `git config -f FILE --list` is. Commands that print no configuration stay reads.
#[tokio::test]
async fn files_the_repository_s_config_includes_are_path_reads() {
    let fx = Fixture::new();
    let pypirc = fx.home.join(".pypirc");
    std::fs::write(&pypirc, "[pypi]\n\tpassword = hunter2\n").unwrap();
    for (key,) in [("include.path",), ("includeIf.gitdir:/.path",)] {
        let r = fx.proj.join(format!("r{}", key.len()));
        let _ = std::fs::remove_dir_all(&r);
        let r = repository(&fx, r.file_name().unwrap().to_str().unwrap());
        git(&fx, &r, &["config", key, "~/.pypirc"]);
        assert_prints(&fx, &r, &["config", "--list"], "hunter2");
        assert_prints(&fx, &r, &["config", "pypi.password"], "hunter2");
        for command in [
            "git config --list",
            "git config -l",
            "git config pypi.password",
            "git config --get pypi.password",
            "git var -l",
        ] {
            assert_asks_naming(&fx, &r, command, &pypirc).await;
            let got = decide_denying(&fx, &r, command, &["Read(~/.pypirc)"]).await;
            assert_eq!(behavior(&got), "deny", "{key}: {command}: {got:?}");
        }
        let got = decide_denying(
            &fx,
            &r,
            "git config -f ~/.pypirc --list",
            &["Read(~/.pypirc)"],
        )
        .await;
        assert_eq!(behavior(&got), "deny", "{got:?}");
        for command in ["git status", "git log -1"] {
            let got = decide(&fx, &r, "default", command).await;
            assert_eq!(behavior(&got), "allow", "{key}: {command}: {got:?}");
        }
    }
    // An include inside the repository is read as the repository's own configuration.
    let r = repository(&fx, "inside");
    std::fs::write(r.join(".git/extra.inc"), "[x]\n\ty = 1\n").unwrap();
    git(&fx, &r, &["config", "include.path", "extra.inc"]);
    let got = decide(&fx, &r, "default", "git config --list").await;
    assert_eq!(behavior(&got), "allow", "{got:?}");
}

/// What the engine decides for `command` run by Bash in `cwd`, in default mode, with the
/// Bash allow rules `allow`.
async fn decide_allowing(
    fx: &Fixture,
    cwd: &Path,
    command: &str,
    allow: &[&str],
) -> PermissionResult {
    let c = case("", "Bash", command).allow(allow);
    let (engine, ctx) = context(fx, &c);
    let ctx = ctx.with_cwd(cwd);
    engine
        .decide(&probe(fx, "Bash"), &fx.input("Bash", command), &ctx)
        .await
}

/// A planted repository at `fx.proj/name` (made fresh) whose branch `master` names the
/// private repository's commit, for its objects to be reached some other way.
fn planted(fx: &Fixture, name: &str, private: &Path) -> std::path::PathBuf {
    let g = fx.proj.join(name);
    let _ = std::fs::remove_dir_all(&g);
    std::fs::create_dir_all(&g).unwrap();
    git(fx, &g, &["init", "-q", "-b", "master"]);
    let head = git(fx, private, &["rev-parse", "HEAD"]);
    std::fs::write(g.join(".git/refs/heads/master"), head).unwrap();
    g
}

/// Review 35b, finding 1: a planted `.git` that points back at itself (`core.worktree =
/// ..`, or a `gitdir` file naming its `.git`) claimed the linked-work-tree exemption, so an
/// `alternates` naming the private repository's objects, or `objects` linked to them, was
/// judged by the Read rules only: `git log -p` printed the private file, allowed with no
/// rules (shown real). Now only a linked work tree's git and common directories are
/// exempt: the object stores ask.
#[tokio::test]
async fn a_planted_git_directory_pointing_back_is_no_linked_work_tree() {
    let fx = Fixture::new();
    let private = private_repository(&fx);
    let objects = private.join(".git/objects");
    let layouts: [Layout<'_>; 3] = [
        (
            "core.worktree = .. and alternates",
            Box::new(|g: &Path| {
                git(&fx, g, &["config", "core.worktree", ".."]);
                std::fs::write(
                    g.join(".git/objects/info/alternates"),
                    format!("{}\n", objects.display()),
                )
                .unwrap();
            }),
        ),
        (
            "a gitdir file and alternates",
            Box::new(|g: &Path| {
                std::fs::write(
                    g.join(".git/gitdir"),
                    format!("{}\n", g.join(".git").display()),
                )
                .unwrap();
                std::fs::write(
                    g.join(".git/objects/info/alternates"),
                    format!("{}\n", objects.display()),
                )
                .unwrap();
            }),
        ),
        (
            "core.worktree = .. and objects linked",
            Box::new(|g: &Path| {
                git(&fx, g, &["config", "core.worktree", ".."]);
                std::fs::remove_dir_all(g.join(".git/objects")).unwrap();
                std::os::unix::fs::symlink(&objects, g.join(".git/objects")).unwrap();
            }),
        ),
    ];
    for (what, make) in layouts {
        let g = planted(&fx, "g", &private);
        make(&g);
        assert_prints(&fx, &g, &["log", "-p"], "hunter2");
        let got = decide(&fx, &g, "default", "git log -p").await;
        assert_eq!(behavior(&got), "ask", "{what}: {got:?}");
        assert!(message(&got).contains("private"), "{what}: {got:?}");
    }
}

/// Review 35b, finding 2: `alternates` was read unlike git: a quoted entry is C-unquoted
/// (`"\057home…"`), the character after its closing quote skipped and the rest another
/// entry, and git follows each store's own `alternates` (five levels). Each reached the
/// private repository's objects unasked (shown real). Now read as git reads it.
#[tokio::test]
async fn alternates_are_read_as_git_reads_them() {
    let fx = Fixture::new();
    let private = private_repository(&fx);
    let objects = private.join(".git/objects").display().to_string();
    let octal: String = objects
        .bytes()
        .map(|b| {
            if b == b'/' {
                "\\057".to_owned()
            } else {
                (b as char).to_string()
            }
        })
        .collect();
    let mid = fx.proj.join("mid/objects");
    std::fs::create_dir_all(mid.join("info")).unwrap();
    std::fs::write(mid.join("info/alternates"), format!("{objects}\n")).unwrap();
    let contents = [
        ("octal escapes", format!("\"{octal}\"\n")),
        (
            "text after the closing quote",
            format!("\"nothere\"X{objects}\n"),
        ),
        ("an alternate's alternates", format!("{}\n", mid.display())),
    ];
    for (what, text) in contents {
        let g = planted(&fx, "g", &private);
        std::fs::write(g.join(".git/objects/info/alternates"), text).unwrap();
        assert_prints(&fx, &g, &["log", "-p"], "hunter2");
        let got = decide(&fx, &g, "default", "git log -p").await;
        assert_eq!(behavior(&got), "ask", "{what}: {got:?}");
        assert!(message(&got).contains("private"), "{what}: {got:?}");
    }
}

/// Review 35b, finding 3: an `alternates` file that cannot be read here (larger than 64
/// KiB: 700 comment lines, then the private store, which git reads; a FIFO) stood for
/// itself, a path inside the project, and was allowed. Now it asks, naming it.
#[tokio::test]
async fn an_alternates_file_that_cannot_be_read_asks() {
    let fx = Fixture::new();
    let private = private_repository(&fx);
    let objects = private.join(".git/objects").display().to_string();
    let g = planted(&fx, "big", &private);
    let file = g.join(".git/objects/info/alternates");
    let mut text = format!("#{}\n", "x".repeat(100)).repeat(700);
    text.push_str(&format!("{objects}\n"));
    std::fs::write(&file, text).unwrap();
    assert_prints(&fx, &g, &["log", "-p"], "hunter2");
    let got = decide(&fx, &g, "default", "git log -p").await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    assert!(message(&got).contains("alternates"), "{got:?}");
    let g = planted(&fx, "fifo", &private);
    let file = g.join(".git/objects/info/alternates");
    let made = std::process::Command::new("mkfifo")
        .arg(&file)
        .status()
        .unwrap();
    assert!(made.success());
    let got = decide(&fx, &g, "default", "git log -p").await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    assert!(message(&got).contains("alternates"), "{got:?}");
}

/// Review 35b, finding 4: where the repository's files cannot be read (a `commondir` to
/// the private repository and a `config.worktree` git ignores but that cannot be parsed
/// here), the outside reads were not checked and only the later check of programs asked,
/// after allow rules: with `Bash(git log:*)` allowed, `git log -p` printed the private
/// file unasked (shown real). Now it asks, naming why, whatever the allow rules.
#[tokio::test]
async fn a_repository_that_cannot_be_read_asks_before_allow_rules() {
    let fx = Fixture::new();
    let private = private_repository(&fx);
    let g = fx.proj.join("g");
    std::fs::create_dir_all(g.join(".git")).unwrap();
    std::fs::write(g.join(".git/HEAD"), "ref: refs/heads/master\n").unwrap();
    std::fs::write(
        g.join(".git/commondir"),
        format!("{}\n", private.join(".git").display()),
    )
    .unwrap();
    std::fs::write(g.join(".git/config.worktree"), "[[[\n").unwrap();
    assert_prints(&fx, &g, &["log", "-p"], "hunter2");
    let got = decide_allowing(&fx, &g, "git log -p", &["Bash(git log:*)"]).await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    assert!(message(&got).contains("config.worktree"), "{got:?}");
    // A repository whose configuration names a program (a Git LFS filter) but leads
    // nowhere outside: the allow rule still allows it.
    let r = repository(&fx, "lfs");
    git(
        &fx,
        &r,
        &["config", "filter.lfs.clean", "git-lfs clean -- %f"],
    );
    let got = decide_allowing(&fx, &r, "git log -p", &["Bash(git log:*)"]).await;
    assert_eq!(behavior(&got), "allow", "{got:?}");
}

/// Review 35b, finding 5: links inside a planted `.git` other than `objects` and `refs`
/// were not judged: `config` linked to the private repository's (`git config --list`
/// prints its remote's credentials), `objects/pack` linked to its packs (`git log -p`
/// prints its file), shown real. Now each link's target outside is a path read.
#[tokio::test]
async fn links_inside_a_planted_git_directory_are_path_reads() {
    let fx = Fixture::new();
    let private = private_repository(&fx);
    git(
        &fx,
        &private,
        &["remote", "add", "origin", "https://u:tok3n@example.com/x"],
    );
    git(&fx, &private, &["gc", "-q"]);
    let g = planted(&fx, "cfg", &private);
    std::fs::remove_file(g.join(".git/config")).unwrap();
    std::os::unix::fs::symlink(private.join(".git/config"), g.join(".git/config")).unwrap();
    assert_prints(&fx, &g, &["config", "--list"], "tok3n");
    let got = decide(&fx, &g, "default", "git config --list").await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    assert!(message(&got).contains("private"), "{got:?}");
    let g = planted(&fx, "pack", &private);
    let pack = g.join(".git/objects/pack");
    std::fs::remove_dir_all(&pack).unwrap();
    std::os::unix::fs::symlink(private.join(".git/objects/pack"), &pack).unwrap();
    assert_prints(&fx, &g, &["log", "-p"], "hunter2");
    let got = decide(&fx, &g, "default", "git log -p").await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    assert!(message(&got).contains("private"), "{got:?}");
    // A link that stays inside the project is no outside read.
    let g = planted(&fx, "inside", &private);
    std::fs::create_dir_all(fx.proj.join("shared")).unwrap();
    std::fs::write(fx.proj.join("shared/exclude"), "*.o\n").unwrap();
    std::fs::remove_file(g.join(".git/info/exclude")).unwrap();
    std::os::unix::fs::symlink(fx.proj.join("shared/exclude"), g.join(".git/info/exclude"))
        .unwrap();
    std::fs::write(g.join(".git/refs/heads/master"), "").unwrap();
    std::fs::remove_file(g.join(".git/refs/heads/master")).unwrap();
    let got = decide(&fx, &g, "default", "git status").await;
    assert_eq!(behavior(&got), "allow", "{got:?}");
}
