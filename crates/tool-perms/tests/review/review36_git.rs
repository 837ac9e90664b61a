//! Code review 36 of read-only git in an untrusted repository: path values of the
//! repository's configuration are located as git locates them. A `core.hooksPath` or
//! `core.worktree` with a byte that is not UTF-8 was read lossily (another path: the hook or
//! the submodule's fsmonitor git runs went unseen); `~//x` was read as `/x` where git reads
//! `$HOME//x`; `/proc/self/cwd/…` was resolved from this process's working directory, not
//! git's. Each case is first shown real: git runs the program.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;

use crate::common::{Fixture, behavior, real_bash};
use crate::git_fixture::{age, decide, git, repository, script};

/// `core.hooksPath` naming a directory whose name is not UTF-8, holding the hook git runs
/// when `git status` writes the index: asked about (refused in plan mode).
#[tokio::test]
async fn a_hooks_path_that_is_not_utf8_is_the_directory_git_reads() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let marker = fx.out.join("HOOK");
    script(
        &r.join(OsStr::from_bytes(b"hk\xff/post-index-change")),
        &marker,
    );
    let mut config = std::fs::read(r.join(".git/config")).unwrap();
    config.extend_from_slice(b"[core]\n\thooksPath = hk\xff\n");
    std::fs::write(r.join(".git/config"), config).unwrap();
    age(&r.join("f"));
    real_bash("git status", &r, &fx.home);
    assert!(
        marker.exists(),
        "git did not run the hook: the case shows nothing"
    );
    // Not read-only: asked about, and refused in plan mode.
    for (mode, expected) in [("default", "ask"), ("plan", "deny")] {
        let got = decide(&fx, &r, mode, "git status").await;
        assert_eq!(behavior(&got), expected, "{mode}: {got:?}");
    }
}

/// `core.worktree` naming a work tree whose name is not UTF-8, holding a submodule whose
/// configuration names `core.fsmonitor`: asked about.
#[tokio::test]
async fn a_work_tree_that_is_not_utf8_is_the_one_git_reads() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let work_tree = r.join(OsStr::from_bytes(b"w\xff"));
    std::fs::create_dir_all(&work_tree).unwrap();
    let sub = repository(&fx, "sub");
    let marker = fx.out.join("FSMONITOR");
    let monitor = fx.out.join("monitor.sh");
    script(&monitor, &marker);
    git(
        &fx,
        &sub,
        &["config", "core.fsmonitor", &monitor.display().to_string()],
    );
    let s = r.join("s");
    std::fs::rename(&sub, &s).unwrap();
    git(&fx, &r, &["add", "s"]);
    std::fs::rename(&s, work_tree.join("s")).unwrap();
    let mut config = std::fs::read(r.join(".git/config")).unwrap();
    config.extend_from_slice(b"[core]\n\tworktree = ../w\xff\n");
    std::fs::write(r.join(".git/config"), config).unwrap();
    real_bash("git status", &r, &fx.home);
    assert!(
        marker.exists(),
        "git did not run the fsmonitor: the case shows nothing"
    );
    let got = decide(&fx, &r, "default", "git status").await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
}

/// `core.hooksPath = ~//../<project>/r/hk` is `$HOME//../…` to git, the hooks directory in
/// the repository; `/proc/self/cwd/hk` is git's own working directory, not this process's:
/// both asked about.
#[tokio::test]
async fn hooks_paths_from_home_and_through_proc_are_the_ones_git_reads() {
    for value in ["~//../proj/r/hk", "/proc/self/cwd/hk"] {
        let fx = Fixture::new();
        let r = repository(&fx, "r");
        assert_eq!(fx.home.parent(), fx.proj.parent());
        assert_eq!(fx.proj.file_name().unwrap(), "proj");
        let marker = fx.out.join("HOOK");
        script(&r.join("hk/post-index-change"), &marker);
        git(&fx, &r, &["config", "core.hooksPath", value]);
        age(&r.join("f"));
        real_bash("git status", &r, &fx.home);
        assert!(marker.exists(), "{value}: git did not run the hook");
        let got = decide(&fx, &r, "default", "git status").await;
        assert_eq!(behavior(&got), "ask", "{value}: {got:?}");
    }
}

/// `include.path = ~//<dir>/x.cfg` is `$HOME//<dir>/x.cfg` to git, whose `core.fsmonitor`
/// git runs; a harmless `/<dir>/x.cfg` is not what it reads: asked about.
#[tokio::test]
async fn an_include_from_home_with_a_doubled_slash_is_the_file_git_reads() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let marker = fx.out.join("FSMONITOR");
    let monitor = fx.out.join("monitor.sh");
    script(&monitor, &marker);
    // A harmless file where the old reading looked, the program under the home.
    let decoy = fx.out.join("decoy");
    std::fs::create_dir_all(&decoy).unwrap();
    std::fs::write(decoy.join("x.cfg"), "[user]\n\tname = x\n").unwrap();
    let relative = decoy.strip_prefix("/").unwrap();
    let evil = fx.home.join(relative).join("x.cfg");
    std::fs::create_dir_all(evil.parent().unwrap()).unwrap();
    std::fs::write(
        &evil,
        format!("[core]\n\tfsmonitor = {}\n", monitor.display()),
    )
    .unwrap();
    let include = format!("~//{}/x.cfg", relative.display());
    git(&fx, &r, &["config", "include.path", &include]);
    real_bash("git status", &r, &fx.home);
    assert!(
        marker.exists(),
        "git did not run the fsmonitor: the case shows nothing"
    );
    let got = decide(&fx, &r, "default", "git status").await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
}

/// `core.worktree` in `config` moves the work tree to the home directory, and a
/// `config.worktree` git does not read (no `extensions.worktreeConfig`) sets it back: git
/// uses the first (shown real: `git status` lists the home's files), so it asks. Found by
/// the fix of review 36: the check took the last value it read, from a file git ignores.
#[tokio::test]
async fn a_work_tree_git_uses_is_not_hidden_by_a_file_git_ignores() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    std::fs::write(fx.home.join("home-file.txt"), "x\n").unwrap();
    git(
        &fx,
        &r,
        &["config", "core.worktree", &fx.home.display().to_string()],
    );
    std::fs::write(r.join(".git/config.worktree"), "[core]\n\tworktree = ..\n").unwrap();
    let out = std::process::Command::new("git")
        .args(["status", "--porcelain", "--untracked-files=all"])
        .current_dir(&r)
        .env("HOME", &fx.home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("home-file.txt"),
        "git does not use the home as its work tree: the case shows nothing ({out:?})"
    );
    let got = decide(&fx, &r, "default", "git status").await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
}

/// `core.hooksPath = lnk/cwd/hk` with `lnk` a link in the repository to `/proc/self`: git's
/// own working directory again, reached through a link the lexical check did not see (found
/// by the re-read of session 36): asked about.
#[tokio::test]
async fn a_hooks_path_through_a_link_to_proc_self_is_the_one_git_reads() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    std::os::unix::fs::symlink("/proc/self", r.join("lnk")).unwrap();
    let marker = fx.out.join("HOOK");
    script(&r.join("hk/post-index-change"), &marker);
    git(&fx, &r, &["config", "core.hooksPath", "lnk/cwd/hk"]);
    age(&r.join("f"));
    real_bash("git status", &r, &fx.home);
    assert!(
        marker.exists(),
        "git did not run the hook: the case shows nothing"
    );
    let got = decide(&fx, &r, "default", "git status").await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
}
