//! Review 39 on Bash, through the real binary: commands whose words the permission rules
//! saw otherwise than bash ran them, so that a deny rule (or the read-only allowance) let
//! through a command that deleted a file or pushed a branch. A backslash before CR LF
//! (`echo hi \<CR><LF>rm keep.txt`), a redirection of descriptor 0 or of a `{name}`
//! (`git 0</dev/null push`), and a glob in a subcommand (`git pu[s]h` with a file `push`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// A project with its own home, user configuration and a git repository with a bare
/// remote `origin`, one commit in it.
struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    proj: PathBuf,
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    out
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let proj = root.join("proj");
        std::fs::create_dir_all(&proj).unwrap();
        std::fs::create_dir_all(root.join("home/.claude")).unwrap();
        git(&root, &["init", "-q", "--bare", "remote.git"]);
        git(&proj, &["init", "-q"]);
        git(
            &proj,
            &[
                "-c",
                "user.email=a@b",
                "-c",
                "user.name=a",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "init",
            ],
        );
        git(&proj, &["remote", "add", "origin", "../remote.git"]);
        Self {
            _dir: dir,
            root,
            proj,
        }
    }

    /// Runs the Bash `commands` with `toolwright run` in `mode` under `settings`; what it
    /// printed.
    fn run(&self, mode: &str, settings: &Value, commands: &[&str]) -> String {
        let lines: String = commands
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let call = json!({"type": "tool_use", "id": format!("toolu_{i}"), "name": "Bash",
                    "input": {"command": c}});
                format!("{call}\n")
            })
            .collect();
        let input = self.root.join("calls.jsonl");
        std::fs::write(&input, lines).unwrap();
        let home = self.root.join("home");
        let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
            .arg("run")
            .args(["--mode", mode, "--settings", &settings.to_string()])
            .arg(&input)
            .current_dir(&self.proj)
            .env("HOME", &home)
            .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    /// The branches the remote holds.
    fn pushed(&self) -> String {
        let out = git(&self.root.join("remote.git"), &["branch", "--list"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// Found by review: `echo hi \<CR><LF>rm keep.txt` was allowed as the read-only `echo hi rm
/// keep.txt` and bash removed the file; a `bash -c` after it wrote outside the project. The
/// `rm` is now denied by `Bash(rm:*)`, and with no rule the second line asks (and a run has
/// no one to ask).
#[test]
fn a_backslash_before_crlf_hides_no_command() {
    let p = Project::new();
    std::fs::write(p.proj.join("keep.txt"), "data").unwrap();
    let outside = p.root.join("OUTSIDE");
    let touch = format!("echo hi \\\r\nbash -c \"touch {}\"", outside.display());
    let out = p.run(
        "default",
        &json!({"permissions": {"deny": ["Bash(rm:*)"]}}),
        &[
            "echo hi \\\r\nrm keep.txt",
            &touch,
            "echo a\r#; rm keep.txt",
        ],
    );
    assert!(p.proj.join("keep.txt").exists(), "{out}");
    assert!(!outside.exists(), "{out}");
}

/// Found by review: `git 0</dev/null push` was judged as `git 0 push` and `env 0</dev/null
/// rm victim` as `env 0 rm victim`: with `Bash(git push:*)` and `Bash(rm:*)` denied, in
/// bypass mode, the branch was pushed and the file removed. With `{fd}` the same in default
/// mode under `Bash(git:*)`. Both are now denied.
#[test]
fn a_descriptor_before_a_redirection_hides_no_word() {
    let p = Project::new();
    std::fs::write(p.proj.join("victim"), "x").unwrap();
    let deny = json!({"permissions": {"deny": ["Bash(rm:*)", "Bash(git push:*)"]}});
    let out = p.run(
        "bypassPermissions",
        &deny,
        &[
            "git 0</dev/null push origin HEAD:refs/heads/a",
            "env 0</dev/null rm victim",
            "git push origin HEAD:refs/heads/b 0<&-",
            "0</dev/null rm victim",
        ],
    );
    assert!(p.proj.join("victim").exists(), "{out}");
    let allow_git =
        json!({"permissions": {"allow": ["Bash(git:*)"], "deny": ["Bash(git push:*)"]}});
    let more = p.run(
        "default",
        &allow_git,
        &[
            "git {fd}</dev/null push origin HEAD:refs/heads/c",
            "git 0>&1 push origin HEAD:refs/heads/d",
        ],
    );
    assert_eq!(p.pushed(), "", "{out}\n{more}");
    // What is no redirection of a descriptor still runs: `git status` under `Bash(git:*)`.
    let status = p.run(
        "default",
        &allow_git,
        &["git status 2>/dev/null 0</dev/null"],
    );
    assert!(status.contains("On branch"), "{status}");
}

/// Found by review: `touch push && git pu[s]h origin …` was allowed by `Bash(git:*)` in
/// acceptEdits mode despite `Bash(git push:*)` denied, and bash pushed (the glob matched the
/// file it had just made). It now asks (refused in a run), as does `npm publis[h]`; a glob
/// no rule's word can be (`ls *.txt`) is still read-only and runs.
#[test]
fn a_glob_in_a_subcommand_gets_past_no_rule() {
    let p = Project::new();
    std::fs::write(p.proj.join("push"), "").unwrap();
    std::fs::write(p.proj.join("notes.txt"), "").unwrap();
    let settings = json!({"permissions": {
        "allow": ["Bash(git:*)", "Bash(npm:*)"],
        "deny": ["Bash(git push:*)", "Bash(npm publish:*)"],
    }});
    let out = p.run(
        "acceptEdits",
        &settings,
        &[
            "touch push && git pu[s]h origin HEAD:refs/heads/b",
            "git pu?h origin HEAD:refs/heads/c",
        ],
    );
    let bypass = p.run(
        "bypassPermissions",
        &settings,
        &["git pus* origin HEAD:refs/heads/d"],
    );
    assert_eq!(p.pushed(), "", "{out}\n{bypass}");
    let listed = p.run("default", &settings, &["ls *.txt"]);
    assert!(listed.contains("notes.txt"), "{listed}");
}
