//! Shared by the tests of read-only git and the repository's own files: the real git run in
//! a fixture's repository (kept away from the caller's and the system's configuration), a
//! script that leaves a marker when run, and the engine's decision on a git command in a
//! directory. Included with `#[path = "common/git.rs"] mod git_fixture;` beside `mod
//! common;` (it uses `crate::common`).
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common::{Fixture, behavior, case, context, probe};
use tool_core::PermissionResult;

/// Runs the real git in `dir` with `args`, kept away from the caller's and the system's
/// configuration (`HOME` is the fixture's, with no `.gitconfig`), standard input empty and
/// output piped (no terminal, as the Bash tool runs it).
pub fn git_output(fx: &Fixture, dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", &fx.home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env("GIT_PAGER", "cat")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .env_remove("GIT_COMMON_DIR")
        .env_remove("GIT_OBJECT_DIRECTORY")
        .stdin(Stdio::null())
        .output()
        .expect("git runs")
}

/// [`git_output`] that must succeed; its standard output.
pub fn git(fx: &Fixture, dir: &Path, args: &[&str]) -> String {
    let out = git_output(fx, dir, args);
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A repository made by `git init` at `fx.proj/name`, with one committed file `f`.
pub fn repository(fx: &Fixture, name: &str) -> PathBuf {
    let dir = fx.proj.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    git(fx, &dir, &["init", "-q"]);
    std::fs::write(dir.join("f"), "one\n").unwrap();
    git(fx, &dir, &["add", "f"]);
    git(fx, &dir, &["commit", "-qm", "one"]);
    dir
}

/// Makes `f`'s modification time old, so that git's next look at it finds its stat data
/// changed and refreshes (and writes) the index.
pub fn age(file: &Path) {
    // Another time at each call: the index keeps the last one git saw.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000 + n);
    std::fs::File::options()
        .write(true)
        .open(file)
        .unwrap()
        .set_modified(old)
        .unwrap();
}

/// An executable shell script at `path` that creates `marker`.
pub fn script(path: &Path, marker: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\ntouch '{}'\n", marker.display())).unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// What the engine decides for `command` run by Bash in `cwd`, in `mode`.
pub async fn decide(
    fx: &Fixture,
    cwd: &Path,
    mode: &'static str,
    command: &str,
) -> PermissionResult {
    let c = case("", "Bash", command).mode(mode);
    let (engine, ctx) = context(fx, &c);
    let ctx = ctx.with_cwd(cwd);
    engine
        .decide(&probe(fx, "Bash"), &fx.input("Bash", command), &ctx)
        .await
}

/// The message of a decision (empty for an allow).
pub fn message(r: &PermissionResult) -> String {
    match r {
        PermissionResult::Ask { message, .. } | PermissionResult::Deny { message, .. } => {
            message.clone()
        }
        PermissionResult::Passthrough { message, .. } => message.clone().unwrap_or_default(),
        PermissionResult::Allow { .. } => String::new(),
    }
}

/// `command` in `cwd` asks in default mode with a message naming `file` and `key`, is
/// refused in plan mode (no read), and is allowed in bypass mode, as any command is.
pub async fn assert_asks(fx: &Fixture, cwd: &Path, command: &str, file: &Path, key: &str) {
    let got = decide(fx, cwd, "default", command).await;
    let text = message(&got);
    assert_eq!(
        behavior(&got),
        "ask",
        "{command} in {}: {got:?}",
        cwd.display()
    );
    assert!(
        text.contains(&file.display().to_string()) && text.contains(key),
        "{command}: the message names {} and {key}: {text}",
        file.display()
    );
    assert!(
        text.starts_with(&format!("`{command}` needs approval: ")),
        "{text}"
    );
    let got = decide(fx, cwd, "plan", command).await;
    assert_eq!(behavior(&got), "deny", "{command} in plan mode: {got:?}");
    assert!(message(&got).contains("Plan mode is active"), "{got:?}");
    let got = decide(fx, cwd, "bypassPermissions", command).await;
    assert_eq!(behavior(&got), "allow", "{command} in bypass mode: {got:?}");
}

/// `command` in `cwd` is allowed as a read in default and plan mode.
pub async fn assert_allowed(fx: &Fixture, cwd: &Path, command: &str) {
    for mode in ["default", "plan"] {
        let got = decide(fx, cwd, mode, command).await;
        assert_eq!(
            behavior(&got),
            "allow",
            "{command} in {} ({mode}): {got:?}",
            cwd.display()
        );
    }
}

/// Runs `args` with the real git in `dir` and asserts that it created `marker`: the
/// configuration really runs a program there.
pub fn assert_runs(fx: &Fixture, dir: &Path, args: &[&str], marker: &Path) {
    let _ = std::fs::remove_file(marker);
    let out = git_output(fx, dir, args);
    assert!(
        marker.exists(),
        "git {args:?} in {} ran no program: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_file(marker).unwrap();
}

/// Runs `args` with the real git in `dir` and asserts that it did not create `marker`.
pub fn assert_runs_nothing(fx: &Fixture, dir: &Path, args: &[&str], marker: &Path) {
    let _ = std::fs::remove_file(marker);
    git_output(fx, dir, args);
    assert!(
        !marker.exists(),
        "git {args:?} in {} ran a program",
        dir.display()
    );
}

/// Points `HEAD` of the repository `r` at a new commit whose object carries a (fake)
/// signature of `kind` (`PGP` or `SSH`): verifying it runs the signing program.
pub fn signed_commit(fx: &Fixture, r: &Path, kind: &str) {
    let tree = git(fx, r, &["rev-parse", "HEAD^{tree}"]);
    let blank = if kind == "PGP" { " \n" } else { "" };
    let object = format!(
        "tree {}\nauthor t <t@example.com> 1 +0000\ncommitter t <t@example.com> 1 +0000\ngpgsig -----BEGIN {kind} SIGNATURE-----\n{blank} x\n -----END {kind} SIGNATURE-----\n\nsigned\n",
        tree.trim()
    );
    std::fs::write(r.join(".git/signed-object"), object).unwrap();
    let id = git(
        fx,
        r,
        &["hash-object", "-t", "commit", "-w", ".git/signed-object"],
    );
    git(fx, r, &["update-ref", "HEAD", id.trim()]);
}
