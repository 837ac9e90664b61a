//! Session 30 on read-only git: a repository's own files (`.git/config`, `config.worktree`,
//! what they include, its hooks, its submodules' repositories) may name programs that git
//! runs for the commands the engine allows as reads (`git status`, `git diff`, `git log`,
//! `git show`, `git help`). Such a repository arrives with an archive, a shared folder or a
//! copied tree. Git there asks (plan mode refuses it as no read; bypass mode allows it, as
//! any command), with a message naming the file and the key. Each threat is first shown
//! real: the same git command, run by the real git in a temporary repository, creates a
//! marker file.

use std::path::Path;

use crate::common::{Fixture, behavior};
use crate::git_fixture::{
    age, assert_allowed, assert_asks, assert_runs, decide, git, git_output, message, repository,
    script,
};

/// The keys of a repository's local configuration that make read-only git run a program,
/// each shown real first (the git command creates a marker file), then asked about in
/// default mode with the file and the key named, refused in plan mode, allowed in bypass
/// mode; the same repository without the key is allowed (an ordinary repository is still
/// a read).
#[tokio::test]
async fn keys_that_run_programs_make_read_only_git_ask() {
    struct Threat {
        /// The key the message names.
        key: &'static str,
        /// Sets the key (and what it needs) in the repository; the marker's path.
        set: fn(&Fixture, &Path, &Path),
        /// The git command that runs it, as the model would send it.
        command: &'static str,
        /// The file the message names, relative to the repository.
        file: &'static str,
    }
    fn sh(marker: &Path) -> String {
        format!("sh -c 'touch {}; cat' --", marker.display())
    }
    let threats = [
        Threat {
            key: "core.fsmonitor",
            set: |fx, r, m| {
                git(
                    fx,
                    r,
                    &[
                        "config",
                        "core.fsmonitor",
                        &format!("touch {}; false", m.display()),
                    ],
                );
            },
            command: "git status",
            file: ".git/config",
        },
        Threat {
            key: "diff.external",
            set: |fx, r, m| {
                git(fx, r, &["config", "diff.external", &sh(m)]);
                std::fs::write(r.join("f"), "two\n").unwrap();
            },
            command: "git diff",
            file: ".git/config",
        },
        Threat {
            key: "diff.x.textconv",
            set: |fx, r, m| {
                std::fs::write(r.join(".git/info/attributes"), "f diff=x\n").unwrap();
                git(fx, r, &["config", "diff.x.textconv", &sh(m)]);
                std::fs::write(r.join("f"), "two\n").unwrap();
            },
            command: "git diff",
            file: ".git/config",
        },
        Threat {
            key: "diff.x.command",
            set: |fx, r, m| {
                std::fs::write(r.join(".git/info/attributes"), "f diff=x\n").unwrap();
                git(fx, r, &["config", "diff.x.command", &sh(m)]);
                std::fs::write(r.join("f"), "two\n").unwrap();
            },
            command: "git diff",
            file: ".git/config",
        },
        Threat {
            key: "filter.x.clean",
            set: |fx, r, m| {
                std::fs::write(r.join(".git/info/attributes"), "f filter=x\n").unwrap();
                git(fx, r, &["config", "filter.x.clean", &sh(m)]);
                std::fs::write(r.join("f"), "two\n").unwrap();
            },
            command: "git diff",
            file: ".git/config",
        },
        Threat {
            key: "filter.x.smudge",
            set: |fx, r, m| {
                std::fs::write(r.join(".git/info/attributes"), "f filter=x\n").unwrap();
                git(fx, r, &["config", "filter.x.smudge", &sh(m)]);
            },
            command: "git cat-file --filters HEAD:f",
            file: ".git/config",
        },
        Threat {
            key: "filter.x.process",
            set: |fx, r, m| {
                std::fs::write(r.join(".git/info/attributes"), "f filter=x\n").unwrap();
                git(fx, r, &["config", "filter.x.process", &sh(m)]);
                std::fs::write(r.join("f"), "two\n").unwrap();
            },
            command: "git diff",
            file: ".git/config",
        },
        Threat {
            key: "gpg.program",
            set: |fx, r, m| {
                // A signed commit (its signature is not checked here, only its program run).
                let tree = git(fx, r, &["rev-parse", "HEAD^{tree}"]);
                let object = format!(
                    "tree {}\nauthor t <t@example.com> 1 +0000\ncommitter t <t@example.com> 1 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n x\n -----END PGP SIGNATURE-----\n\nsigned\n",
                    tree.trim()
                );
                let file = r.join(".git/signed-object");
                std::fs::write(&file, object).unwrap();
                let id = git(
                    fx,
                    r,
                    &["hash-object", "-t", "commit", "-w", ".git/signed-object"],
                );
                git(fx, r, &["update-ref", "HEAD", id.trim()]);
                script(&r.join(".git/fake-gpg"), m);
                git(
                    fx,
                    r,
                    &[
                        "config",
                        "gpg.program",
                        &r.join(".git/fake-gpg").display().to_string(),
                    ],
                );
            },
            command: "git log --show-signature",
            file: ".git/config",
        },
        Threat {
            key: "gpg.ssh.program",
            set: |fx, r, m| {
                let tree = git(fx, r, &["rev-parse", "HEAD^{tree}"]);
                let object = format!(
                    "tree {}\nauthor t <t@example.com> 1 +0000\ncommitter t <t@example.com> 1 +0000\ngpgsig -----BEGIN SSH SIGNATURE-----\n x\n -----END SSH SIGNATURE-----\n\nsigned\n",
                    tree.trim()
                );
                std::fs::write(r.join(".git/signed-object"), object).unwrap();
                let id = git(
                    fx,
                    r,
                    &["hash-object", "-t", "commit", "-w", ".git/signed-object"],
                );
                git(fx, r, &["update-ref", "HEAD", id.trim()]);
                script(&r.join(".git/fake-ssh-keygen"), m);
                git(
                    fx,
                    r,
                    &["config", "gpg.ssh.allowedSignersFile", "/dev/null"],
                );
                git(
                    fx,
                    r,
                    &[
                        "config",
                        "gpg.ssh.program",
                        &r.join(".git/fake-ssh-keygen").display().to_string(),
                    ],
                );
                git(fx, r, &["config", "log.showSignature", "true"]);
            },
            command: "git log",
            file: ".git/config",
        },
        Threat {
            key: "man.evil.cmd",
            set: |fx, r, m| {
                git(fx, r, &["config", "man.viewer", "evil"]);
                git(
                    fx,
                    r,
                    &[
                        "config",
                        "man.evil.cmd",
                        &format!("touch {}; :", m.display()),
                    ],
                );
            },
            command: "git help log",
            file: ".git/config",
        },
        Threat {
            // Included by `include.path`.
            key: "core.fsmonitor",
            set: |fx, r, m| {
                std::fs::write(
                    r.join(".git/extra.cfg"),
                    format!("[core]\n\tfsmonitor = \"touch {}; false\"\n", m.display()),
                )
                .unwrap();
                git(fx, r, &["config", "include.path", "extra.cfg"]);
            },
            command: "git status",
            file: ".git/extra.cfg",
        },
        Threat {
            // Included by `includeIf.gitdir:/.path`.
            key: "diff.external",
            set: |fx, r, m| {
                std::fs::write(
                    r.join("shared.cfg"),
                    format!("[diff]\n\texternal = \"{}\"\n", sh(m)),
                )
                .unwrap();
                git(
                    fx,
                    r,
                    &["config", "includeIf.gitdir:/.path", "../shared.cfg"],
                );
                std::fs::write(r.join("f"), "two\n").unwrap();
            },
            command: "git diff",
            file: "shared.cfg",
        },
    ];
    for t in threats {
        let fx = Fixture::new();
        let r = repository(&fx, "r");
        assert_allowed(&fx, &r, t.command).await;
        let marker = fx.out.join("PWNED");
        (t.set)(&fx, &r, &marker);
        let args: Vec<&str> = t.command.split(' ').skip(1).collect();
        assert_runs(&fx, &r, &args, &marker);
        let file = r.join(t.file);
        let key = t.key;
        assert_asks(&fx, &r, t.command, &file, key).await;
        // From a subdirectory, and through a nested shell, too.
        std::fs::create_dir_all(r.join("sub")).unwrap();
        assert_asks(&fx, &r.join("sub"), t.command, &file, key).await;
        let nested = format!("bash -c '{}'", t.command);
        let got = decide(&fx, &r, "default", &nested).await;
        assert_eq!(behavior(&got), "ask", "{nested}: {got:?}");
    }
}

/// A hook git runs when it writes the index (`post-index-change`), which `git status`
/// does when it refreshes stat data: in `.git/hooks` or where `core.hooksPath` points, it
/// makes read-only git ask; a hooks directory without it (husky's) does not.
#[tokio::test]
async fn a_hook_git_status_runs_makes_it_ask() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let marker = fx.out.join("PWNED");
    let hook = r.join(".git/hooks/post-index-change");
    script(&hook, &marker);
    age(&r.join("f"));
    assert_runs(&fx, &r, &["status"], &marker);
    assert_asks(&fx, &r, "git status", &hook, "post-index-change").await;
    std::fs::remove_file(&hook).unwrap();
    assert_allowed(&fx, &r, "git status").await;

    // core.hooksPath, relative to the work tree.
    script(&r.join("myhooks/pre-commit"), &marker);
    git(&fx, &r, &["config", "core.hooksPath", "myhooks"]);
    assert_allowed(&fx, &r, "git status").await;
    let hook = r.join("myhooks/post-index-change");
    script(&hook, &marker);
    age(&r.join("f"));
    assert_runs(&fx, &r, &["status"], &marker);
    assert_asks(&fx, &r, "git status", &hook, "post-index-change").await;
    // Written by a redirection before it on the line, which acceptEdits lets write.
    std::fs::remove_file(&hook).unwrap();
    let got = decide(
        &fx,
        &r,
        "acceptEdits",
        "cat evil > myhooks/post-index-change && git status",
    )
    .await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    let got = decide(&fx, &r, "acceptEdits", "git status").await;
    assert_eq!(behavior(&got), "allow", "{got:?}");
}

/// A linked work tree (its `.git` a gitfile naming `.git/worktrees/NAME`, whose
/// `commondir` names the main repository) uses the main repository's `config` and its own
/// `config.worktree`: a program either names makes git there ask.
#[tokio::test]
async fn a_linked_work_tree_is_checked_through_its_gitfile() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    git(&fx, &r, &["worktree", "add", "-q", "wt"]);
    let wt = r.join("wt");
    assert!(wt.join(".git").is_file());
    assert_allowed(&fx, &wt, "git status").await;
    let marker = fx.out.join("PWNED");
    let monitor = format!("touch {}; false", marker.display());
    git(&fx, &r, &["config", "core.fsmonitor", &monitor]);
    assert_runs(&fx, &wt, &["status"], &marker);
    assert_asks(
        &fx,
        &wt,
        "git status",
        &r.join(".git/config"),
        "core.fsmonitor",
    )
    .await;
    git(&fx, &r, &["config", "--unset", "core.fsmonitor"]);
    assert_allowed(&fx, &wt, "git status").await;
    // The work tree's own configuration.
    git(&fx, &r, &["config", "extensions.worktreeConfig", "true"]);
    git(
        &fx,
        &wt,
        &["config", "--worktree", "core.fsmonitor", &monitor],
    );
    let own = r.join(".git/worktrees/wt/config.worktree");
    assert!(own.is_file());
    assert_runs(&fx, &wt, &["status"], &marker);
    assert_asks(&fx, &wt, "git status", &own, "core.fsmonitor").await;
    // The main work tree does not read it.
    assert_allowed(&fx, &r, "git status").await;
}

/// `git status` and `git diff` go into each populated submodule (a gitlink in the index
/// whose directory holds a `.git`), even without `.gitmodules`, and run git there, which
/// obeys that repository's configuration: it is checked as the superproject's.
#[tokio::test]
async fn a_submodule_s_configuration_is_checked() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let inner = r.join("inner");
    std::fs::create_dir_all(&inner).unwrap();
    git(&fx, &inner, &["init", "-q"]);
    std::fs::write(inner.join("x"), "x").unwrap();
    git(&fx, &inner, &["add", "x"]);
    git(&fx, &inner, &["commit", "-qm", "x"]);
    let id = git(&fx, &inner, &["rev-parse", "HEAD"]);
    git(
        &fx,
        &r,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{},inner", id.trim()),
        ],
    );
    assert_allowed(&fx, &r, "git status").await;
    let marker = fx.out.join("PWNED");
    git(
        &fx,
        &inner,
        &[
            "config",
            "core.fsmonitor",
            &format!("touch {}; false", marker.display()),
        ],
    );
    assert_runs(&fx, &r, &["status"], &marker);
    assert_asks(
        &fx,
        &r,
        "git status",
        &inner.join(".git/config"),
        "core.fsmonitor",
    )
    .await;
    // An index this reader cannot read (a split index) hides the submodules: asked.
    git(&fx, &inner, &["config", "--unset", "core.fsmonitor"]);
    assert_allowed(&fx, &r, "git diff").await;
    git(&fx, &r, &["update-index", "--split-index"]);
    let got = decide(&fx, &r, "default", "git diff").await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    assert!(message(&got).contains("index"), "{got:?}");
}

/// In a partial clone, `git show` and `git log -p` fetch the objects the clone lacks from
/// its promisor remote, running what the configuration names for that
/// (`remote.NAME.uploadpack`, `core.sshCommand`, …): those keys ask there, and only there
/// (a deploy key's `core.sshCommand` in an ordinary clone is no read's concern).
#[tokio::test]
async fn a_partial_clone_s_fetch_programs_ask() {
    let fx = Fixture::new();
    let source = repository(&fx, "source");
    git(&fx, &source, &["config", "uploadpack.allowFilter", "true"]);
    let url = format!("file://{}", source.display());
    git(
        &fx,
        &fx.proj,
        &[
            "-c",
            "protocol.file.allow=always",
            "clone",
            "-q",
            "--filter=blob:none",
            "--no-checkout",
            &url,
            "pc",
        ],
    );
    let pc = fx.proj.join("pc");
    assert_allowed(&fx, &pc, "git show HEAD:f").await;
    let marker = fx.out.join("PWNED");
    git(
        &fx,
        &pc,
        &[
            "config",
            "remote.origin.uploadpack",
            &format!("touch {}; git-upload-pack", marker.display()),
        ],
    );
    assert_runs(
        &fx,
        &pc,
        &["-c", "protocol.file.allow=always", "show", "HEAD:f"],
        &marker,
    );
    assert_asks(
        &fx,
        &pc,
        "git show HEAD:f",
        &pc.join(".git/config"),
        "remote.origin.uploadpack",
    )
    .await;
    // An ordinary clone with the same keys: no fetch, no question.
    let plain = repository(&fx, "plain");
    git(&fx, &plain, &["config", "core.sshCommand", "ssh -i key"]);
    git(
        &fx,
        &plain,
        &["config", "remote.origin.uploadpack", "touch x"],
    );
    assert_allowed(&fx, &plain, "git log -p").await;
}

/// Values that run nothing stay allowed: a boolean `core.fsmonitor` (git's own daemon or
/// none), git-lfs's own filters (which many repositories hold locally), a pager (git starts
/// one only on a terminal, which the Bash tool never gives it: shown real), an alias that
/// would hide a git command (git ignores it: shown real), a benign included file.
#[tokio::test]
async fn values_that_run_nothing_stay_allowed() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let marker = fx.out.join("PWNED");
    for value in ["false", "true", "no", "Off", "0", "1", "YES", "on"] {
        git(&fx, &r, &["config", "core.fsmonitor", value]);
        assert_allowed(&fx, &r, "git status").await;
    }
    git(&fx, &r, &["config", "--unset", "core.fsmonitor"]);
    for (key, value) in [
        ("filter.lfs.clean", "git-lfs clean -- %f"),
        ("filter.lfs.smudge", "git-lfs smudge -- %f"),
        ("filter.lfs.process", "git-lfs filter-process"),
        ("filter.lfs.required", "true"),
    ] {
        git(&fx, &r, &["config", key, value]);
    }
    assert_allowed(&fx, &r, "git status").await;
    // Not git-lfs's value.
    git(
        &fx,
        &r,
        &["config", "filter.lfs.clean", "git-lfs clean -- %f; touch x"],
    );
    assert_asks(
        &fx,
        &r,
        "git status",
        &r.join(".git/config"),
        "filter.lfs.clean",
    )
    .await;
    git(
        &fx,
        &r,
        &["config", "filter.lfs.clean", "git-lfs clean -- %f"],
    );
    // A pager runs only on a terminal.
    let touch = format!("touch {}; cat", marker.display());
    git(&fx, &r, &["config", "core.pager", &touch]);
    git(&fx, &r, &["config", "pager.log", &touch]);
    git_output(&fx, &r, &["-p", "log"]);
    assert!(!marker.exists(), "a pager ran without a terminal");
    // An alias that hides a git command is ignored.
    git(
        &fx,
        &r,
        &[
            "config",
            "alias.status",
            &format!("!touch {}", marker.display()),
        ],
    );
    git_output(&fx, &r, &["status"]);
    assert!(!marker.exists(), "an alias hid git status");
    // A benign include.
    std::fs::write(r.join(".git/extra.cfg"), "[user]\n\tname = x\n").unwrap();
    git(&fx, &r, &["config", "include.path", "extra.cfg"]);
    for command in ["git status", "git log", "git diff", "git branch -a"] {
        assert_allowed(&fx, &r, command).await;
    }
    // Written by a redirection before it on the line, which acceptEdits lets write: the
    // included file is not what the disk shows now.
    std::fs::write(
        r.join("evil.cfg"),
        format!("[core]\n\tfsmonitor = {touch}\n"),
    )
    .unwrap();
    git(&fx, &r, &["config", "include.path", "../extra.cfg"]);
    std::fs::write(r.join("extra.cfg"), "").unwrap();
    let got = decide(
        &fx,
        &r,
        "acceptEdits",
        "cat evil.cfg > extra.cfg && git status",
    )
    .await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    let got = decide(
        &fx,
        &r,
        "acceptEdits",
        "cat evil.cfg > other.cfg && git status",
    )
    .await;
    assert_eq!(behavior(&got), "allow", "{got:?}");
}

/// What cannot be vouched for asks: a configuration that cannot be read (a directory in its
/// place, no read permission), one larger than the bound, one git's syntax rejects, an
/// included file that is missing, includes nested past the bound (a file that includes
/// itself), a gitfile that names no git directory.
#[tokio::test]
async fn what_cannot_be_read_asks() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let config = r.join(".git/config");
    let original = std::fs::read(&config).unwrap();
    let restore = || std::fs::write(&config, &original).unwrap();

    // Larger than 64 KiB, even of comments.
    let mut big = original.clone();
    big.extend(std::iter::repeat_n(b"# padding\n".as_slice(), 7000).flatten());
    std::fs::write(&config, &big).unwrap();
    assert!(git_output(&fx, &r, &["status"]).status.success());
    assert_asks(&fx, &r, "git status", &config, "64 KiB").await;
    restore();

    // A syntax git rejects.
    std::fs::write(&config, "[core]\n\tx = \"a\\qb\"\n").unwrap();
    assert!(!git_output(&fx, &r, &["config", "-l"]).status.success());
    assert_asks(&fx, &r, "git status", &config, "cannot be parsed").await;
    restore();

    // Without read permission (unless the tests run as root, who reads it anyway).
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&config).is_err() {
        assert_asks(&fx, &r, "git status", &config, "cannot be read").await;
    }
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_allowed(&fx, &r, "git status").await;

    // A missing include, and one that includes itself.
    git(&fx, &r, &["config", "include.path", "missing.cfg"]);
    assert_asks(
        &fx,
        &r,
        "git status",
        &r.join(".git/missing.cfg"),
        "cannot be read",
    )
    .await;
    restore();
    std::fs::write(r.join(".git/loop.cfg"), "[include]\n\tpath = loop.cfg\n").unwrap();
    git(&fx, &r, &["config", "include.path", "loop.cfg"]);
    assert!(!git_output(&fx, &r, &["status"]).status.success());
    assert_asks(&fx, &r, "git status", &r.join(".git/loop.cfg"), "include").await;
    restore();
    assert_allowed(&fx, &r, "git status").await;

    // A gitfile naming no git directory; a gitfile that is not one.
    let w = fx.proj.join("w");
    std::fs::create_dir_all(&w).unwrap();
    std::fs::write(w.join(".git"), "gitdir: /nonexistent/x\n").unwrap();
    assert_asks(&fx, &w, "git status", &w.join(".git"), "no git directory").await;
    std::fs::write(w.join(".git"), "hello\n").unwrap();
    assert_asks(&fx, &w, "git status", &w.join(".git"), "cannot be read").await;

    // A configuration that is a directory.
    std::fs::remove_file(&config).unwrap();
    std::fs::create_dir(&config).unwrap();
    assert_asks(&fx, &r, "git status", &config, "cannot be read").await;
}

/// Includes that fan out are read within one budget: a config that includes `a` 100 times,
/// which includes `b` 100 times, which includes an empty `c` 100 times, would be a million
/// reads (found by code review: the check ran on and on); it asks, saying why.
#[tokio::test]
async fn includes_that_fan_out_are_read_within_a_budget() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let include = |name: &str| format!("[include]\n{}", format!("\tpath = {name}\n").repeat(100));
    std::fs::write(r.join(".git/a.cfg"), include("b.cfg")).unwrap();
    std::fs::write(r.join(".git/b.cfg"), include("c.cfg")).unwrap();
    std::fs::write(r.join(".git/c.cfg"), "").unwrap();
    git(&fx, &r, &["config", "include.path", "a.cfg"]);
    assert_asks(
        &fx,
        &r,
        "git status",
        &r.join(".git"),
        "configuration files",
    )
    .await;
}

/// git's configuration syntax, read as git reads it: section and key names in any case, a
/// subsection's case kept, the key on the header's line, the old `[section.sub]` form,
/// quotes, escapes, continued lines, comments, CRLF line ends, a byte-order mark. For each
/// text, git's own reading (`git config --get`) says whether it sets the key, and the
/// decision follows it.
#[tokio::test]
async fn the_configuration_is_read_as_git_reads_it() {
    let fx = Fixture::new();
    let r = repository(&fx, "r");
    let config = r.join(".git/config");
    let base = std::fs::read_to_string(&config).unwrap();
    // (text appended to the configuration, the key git looks up, the value git reads for
    // it, whether that value is a program git runs)
    let cases: &[(&str, &str, Option<&str>, bool)] = &[
        (
            "[CORE]\n\tFSMonitor = \"touch x\"\n",
            "core.fsmonitor",
            Some("touch x"),
            true,
        ),
        (
            "[core] fsmonitor = touch x\n",
            "core.fsmonitor",
            Some("touch x"),
            true,
        ),
        (
            "[core]fsmonitor=touch x\n",
            "core.fsmonitor",
            Some("touch x"),
            true,
        ),
        (
            "[core]\n\tfsmonitor = tou\\\nch x\n",
            "core.fsmonitor",
            Some("touch x"),
            true,
        ),
        (
            "[core]\r\n\tfsmonitor = touch x\r\n",
            "core.fsmonitor",
            Some("touch x"),
            true,
        ),
        (
            "[core]\n\tfsmonitor = \"a;b\" # c\n",
            "core.fsmonitor",
            Some("a;b"),
            true,
        ),
        (
            "[core]\n\tfsmonitor = a\\tb  \n",
            "core.fsmonitor",
            Some("a\tb"),
            true,
        ),
        (
            "[core]\n# fsmonitor = touch x\n; fsmonitor = touch y\n",
            "core.fsmonitor",
            None,
            false,
        ),
        (
            "[core]\n\tfsmonitor = false # touch x\n",
            "core.fsmonitor",
            Some("false"),
            false,
        ),
        (
            "[core]\n\tfsmonitor = \"false\"\n",
            "core.fsmonitor",
            Some("false"),
            false,
        ),
        (
            "[core]\n\tfsmonitor = \"fal\"se\n",
            "core.fsmonitor",
            Some("false"),
            false,
        ),
        (
            "[core]\n\tfsmonitor = fal\\\nse\n",
            "core.fsmonitor",
            Some("false"),
            false,
        ),
        (
            "[core]\n\tfsmonitor = FALSE\n",
            "core.fsmonitor",
            Some("FALSE"),
            false,
        ),
        ("[core]\n\tfsmonitor\n", "core.fsmonitor", Some(""), false),
        (
            "[core \"x\"]\n\tfsmonitor = touch x\n",
            "core.fsmonitor",
            None,
            false,
        ),
        (
            "[Diff \"X\"]\n\tTextConv = cat\n",
            "diff.X.textconv",
            Some("cat"),
            true,
        ),
        (
            "[diff.x]\n\ttextconv = cat\n",
            "diff.x.textconv",
            Some("cat"),
            true,
        ),
        (
            "[diff \"a\\\"b\"]\n\tcommand = cat\n",
            "diff.a\"b.command",
            Some("cat"),
            true,
        ),
        (
            "[diff]\n\texternal = \"\"\n",
            "diff.external",
            Some(""),
            true,
        ),
        (
            "[gpg \"x509\"]\n\tprogram = gpgsm2\n",
            "gpg.x509.program",
            Some("gpgsm2"),
            true,
        ),
        (
            "[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n",
            "filter.lfs.clean",
            Some("git-lfs clean -- %f"),
            false,
        ),
        (
            "[filter \"lfs\"]\n\tsmudge = \"git-lfs smudge -- %f\"\n",
            "filter.lfs.smudge",
            Some("git-lfs smudge -- %f"),
            false,
        ),
        (
            "[filter \"LFS\"]\n\tprocess = sh -c x\n",
            "filter.LFS.process",
            Some("sh -c x"),
            true,
        ),
        (
            "[user]\n\tname = \"[core] fsmonitor = x\"\n",
            "core.fsmonitor",
            None,
            false,
        ),
    ];
    for &(text, key, value, program) in cases {
        std::fs::write(&config, format!("{base}{text}")).unwrap();
        let seen = git_output(&fx, &r, &["config", "--get", key]);
        let read = match seen.status.code() {
            Some(0) => Some(
                String::from_utf8_lossy(&seen.stdout)
                    .trim_end_matches('\n')
                    .to_owned(),
            ),
            Some(1) => None,
            _ => panic!(
                "git rejects {text:?}: {}",
                String::from_utf8_lossy(&seen.stderr)
            ),
        };
        assert_eq!(read.as_deref(), value, "git reads {text:?}");
        // `git log`, which runs every program these keys name (a signing program only for
        // the commands that verify signatures: review 31).
        let got = decide(&fx, &r, "default", "git log").await;
        let expect = if program { "ask" } else { "allow" };
        assert_eq!(behavior(&got), expect, "{text:?}: {got:?}");
        if program {
            assert!(message(&got).contains(key), "{text:?}: {got:?}");
        }
    }
    // A byte-order mark before the first section.
    std::fs::write(
        &config,
        format!("\u{feff}{base}[core]\n\tfsmonitor = touch x\n"),
    )
    .unwrap();
    assert!(
        git_output(&fx, &r, &["config", "--get", "core.fsmonitor"])
            .status
            .success()
    );
    let got = decide(&fx, &r, "default", "git status").await;
    assert_eq!(behavior(&got), "ask", "{got:?}");
    // Texts git rejects ask.
    for text in [
        "[ core ]\n",
        "[core\n",
        "[core \"x]\n",
        "[core]\n\tfs_monitor = x\n",
        "[core]\n\tx = \"open\n",
        "[core]\n\t1x = y\n",
    ] {
        std::fs::write(&config, format!("{base}{text}")).unwrap();
        assert!(
            !git_output(&fx, &r, &["config", "-l"]).status.success(),
            "git accepts {text:?}"
        );
        let got = decide(&fx, &r, "default", "git status").await;
        assert_eq!(behavior(&got), "ask", "{text:?}: {got:?}");
    }
}
