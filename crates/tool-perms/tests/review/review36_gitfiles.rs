//! Session 36 (read-only area, finding 3) on read-only git in an untrusted repository: the
//! files the repository's own configuration names that git reads for the commands taken
//! for reads (`blame.ignoreRevsFile`, `mailmap.file`, `core.attributesFile`,
//! `core.excludesFile`, `diff.orderFile`, `gpg.ssh.allowedSignersFile`,
//! `gpg.ssh.revocationFile`) are path reads, judged as `cat` of them is. Each threat is
//! first shown real: the real git prints (or acts on) the outside file's content in a
//! temporary repository.

use std::path::Path;

use crate::common::{Fixture, behavior, case, context, probe};
use crate::git_fixture::{decide, git, git_output, message, repository};
use tool_core::PermissionResult;

/// What the engine decides for `command` run by Bash in `cwd`, in `mode`, with the deny
/// rules `deny`.
async fn decide_denying(
    fx: &Fixture,
    cwd: &Path,
    mode: &'static str,
    command: &str,
    deny: &[&str],
) -> PermissionResult {
    let c = case("", "Bash", command).mode(mode).deny(deny);
    let (engine, ctx) = context(fx, &c);
    let ctx = ctx.with_cwd(cwd);
    engine
        .decide(&probe(fx, "Bash"), &fx.input("Bash", command), &ctx)
        .await
}

/// What the real git, run in `dir` with `args`, prints (standard output and error).
fn printed(fx: &Fixture, dir: &Path, args: &[&str]) -> String {
    let out = git_output(fx, dir, args);
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `command` in `cwd` reads `file` because of `key`: it asks in default mode naming both,
/// is denied under a Read deny rule on the file (`rule`), and is no read in plan mode.
async fn assert_reads(fx: &Fixture, cwd: &Path, command: &str, file: &Path, key: &str, rule: &str) {
    let got = decide(fx, cwd, "default", command).await;
    assert_eq!(behavior(&got), "ask", "{command}: {got:?}");
    let text = message(&got);
    assert!(
        text.contains(&file.display().to_string()) && text.contains(key),
        "{command}: the message names {} and {key}: {text}",
        file.display()
    );
    let got = decide_denying(fx, cwd, "default", command, &[rule]).await;
    assert_eq!(behavior(&got), "deny", "{command} under {rule}: {got:?}");
    assert!(message(&got).contains(key), "{got:?}");
    let got = decide_denying(fx, cwd, "plan", command, &[rule]).await;
    assert_eq!(behavior(&got), "deny", "{command} in plan mode: {got:?}");
    let got = decide(fx, cwd, "plan", command).await;
    assert_ne!(behavior(&got), "allow", "{command} in plan mode: {got:?}");
}

/// `blame.ignoreRevsFile = ~/.git-credentials` in the repository's own `.git/config`: `git
/// blame f` prints the file's first line (`fatal: invalid object name: https://alice:…`),
/// shown real. Found by review 36: allowed as a read, in plan mode and past a
/// `Read(~/.git-credentials)` deny rule. Now the file is a path read: denied under the
/// rule, no read in plan mode, asked outside the working directories. Every value counts
/// (a later one inside the repository hides nothing), a relative one is found from the top
/// of the work tree (where git runs, from a subdirectory too), and one that cannot be
/// located asks. A file inside the repository's directory (`.git-blame-ignore-revs`), or
/// an empty value, is still a read.
#[tokio::test]
async fn blame_ignore_revs_file_outside_is_a_path_read() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let creds = fx.home.join(".git-credentials");
    std::fs::write(&creds, "https://alice:ghp_SECRETTOKEN123@github.com\n").unwrap();
    let rule = "Read(~/.git-credentials)";
    git(
        &fx,
        &r,
        &["config", "blame.ignoreRevsFile", "~/.git-credentials"],
    );
    let out = printed(&fx, &r, &["blame", "f"]);
    assert!(out.contains("ghp_SECRETTOKEN123"), "{out}");
    // `cat` of it, for comparison.
    let got = decide_denying(&fx, &r, "default", "cat ~/.git-credentials", &[rule]).await;
    assert_eq!(behavior(&got), "deny", "{got:?}");
    for command in ["git blame f", "git blame -- f", "git blame -e f"] {
        assert_reads(&fx, &r, command, &creds, "blame.ignoreRevsFile", rule).await;
    }
    // A later value inside the repository: git reads both.
    std::fs::write(r.join(".git-blame-ignore-revs"), "").unwrap();
    git(
        &fx,
        &r,
        &[
            "config",
            "--add",
            "blame.ignoreRevsFile",
            ".git-blame-ignore-revs",
        ],
    );
    let out = printed(&fx, &r, &["blame", "f"]);
    assert!(out.contains("ghp_SECRETTOKEN123"), "{out}");
    assert_reads(&fx, &r, "git blame f", &creds, "blame.ignoreRevsFile", rule).await;
    // Relative, from the top of the work tree, git started in a subdirectory.
    git(&fx, &r, &["config", "--unset-all", "blame.ignoreRevsFile"]);
    let relative = Path::new("../..")
        .join(fx.home.file_name().unwrap())
        .join(".git-credentials");
    git(
        &fx,
        &r,
        &[
            "config",
            "blame.ignoreRevsFile",
            &relative.display().to_string(),
        ],
    );
    let sub = r.join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("g"), "two\n").unwrap();
    git(&fx, &r, &["add", "sub/g"]);
    git(&fx, &r, &["commit", "-qm", "two"]);
    let out = printed(&fx, &sub, &["blame", "g"]);
    assert!(out.contains("ghp_SECRETTOKEN123"), "{out}");
    assert_reads(
        &fx,
        &sub,
        "git blame g",
        &creds,
        "blame.ignoreRevsFile",
        rule,
    )
    .await;
    // Through a link inside the repository's directory.
    std::os::unix::fs::symlink(&creds, r.join("revs")).unwrap();
    git(&fx, &r, &["config", "blame.ignoreRevsFile", "revs"]);
    let out = printed(&fx, &r, &["blame", "f"]);
    assert!(out.contains("ghp_SECRETTOKEN123"), "{out}");
    assert_reads(&fx, &r, "git blame f", &creds, "blame.ignoreRevsFile", rule).await;
    // A user git cannot find: not known.
    git(
        &fx,
        &r,
        &["config", "blame.ignoreRevsFile", "~no-such-user-review36/x"],
    );
    let got = decide(&fx, &r, "default", "git blame f").await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    assert!(message(&got).contains("blame.ignoreRevsFile"), "{got:?}");
    // Inside the repository's directory, or empty: a read.
    for value in [".git-blame-ignore-revs", ""] {
        git(&fx, &r, &["config", "blame.ignoreRevsFile", value]);
        for mode in ["default", "plan"] {
            let got = decide_denying(&fx, &r, mode, "git blame f", &[rule]).await;
            assert_eq!(behavior(&got), "allow", "{value:?} ({mode}): {got:?}");
        }
    }
}

/// `mailmap.file` naming a file outside: `git log` (and `git show`, `git blame`, `git
/// shortlog`) prints the names it maps for the commits' emails, shown real; the repository
/// chooses its commits' emails, so it can read the names a private mailmap holds. Now the
/// file is a path read (`git shortlog` is no read the engine allows, whatever the
/// configuration).
#[tokio::test]
async fn mailmap_file_outside_is_a_path_read() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let mailmap = fx.home.join(".mailmap-private");
    std::fs::write(&mailmap, "Secret Person <t@example.com>\n").unwrap();
    let rule = "Read(~/.mailmap-private)";
    git(&fx, &r, &["config", "mailmap.file", "~/.mailmap-private"]);
    for args in [
        &["log"][..],
        &["show", "-s"],
        &["blame", "f"],
        &["shortlog", "-s", "HEAD"],
    ] {
        let out = printed(&fx, &r, args);
        assert!(out.contains("Secret Person"), "git {args:?}: {out}");
    }
    for command in ["git log", "git show -s", "git blame f"] {
        assert_reads(&fx, &r, command, &mailmap, "mailmap.file", rule).await;
    }
    let got = decide(&fx, &r, "default", "git shortlog -s HEAD").await;
    assert_ne!(behavior(&got), "allow", "{got:?}");
}

/// The other keys naming a file git reads for a read: `core.excludesFile` (`git status`
/// hides what it lists, shown real), `core.attributesFile` (`git diff` takes a file it
/// marks `-diff` for binary, shown real), `diff.orderFile`, `gpg.ssh.allowedSignersFile`
/// and `gpg.ssh.revocationFile`: each, outside, is a path read.
#[tokio::test]
async fn other_files_the_configuration_names_are_path_reads() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let secret = fx.home.join("secret");
    std::fs::write(&secret, "u*\nf -diff\n").unwrap();
    let rule = "Read(~/secret)";
    std::fs::write(r.join("untracked"), "").unwrap();
    std::fs::write(r.join("f"), "changed\n").unwrap();
    assert!(printed(&fx, &r, &["status", "--porcelain"]).contains("untracked"));
    assert!(!printed(&fx, &r, &["diff"]).contains("Binary"));
    for (key, command) in [
        ("core.excludesFile", "git status"),
        ("core.attributesFile", "git diff"),
        ("diff.orderFile", "git diff"),
        ("gpg.ssh.allowedSignersFile", "git log"),
        ("gpg.ssh.revocationFile", "git log"),
    ] {
        git(&fx, &r, &["config", key, "~/secret"]);
        match key {
            "core.excludesFile" => {
                assert!(!printed(&fx, &r, &["status", "--porcelain"]).contains("untracked"));
            }
            "core.attributesFile" => assert!(printed(&fx, &r, &["diff"]).contains("Binary")),
            _ => {}
        }
        assert_reads(&fx, &r, command, &secret, key, rule).await;
        git(&fx, &r, &["config", "--unset", key]);
        let got = decide_denying(&fx, &r, "default", command, &[rule]).await;
        assert_eq!(behavior(&got), "allow", "{key} unset: {got:?}");
    }
}
