//! The binary's settings and session set-up as the 27th black-box review found them:
//! `permissions check` and a session expanding `~` alike under a settings `env` that sets
//! `HOME`, misspelt keys in an inline `--settings`, two inputs reading standard input, the
//! session directory left behind by a refusal, a NUL byte in a path, and the words of a
//! fatal `--settings` problem.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs the binary in `cwd` with `args`, `stdin` on its standard input (none: `/dev/null`),
/// no user settings (`CLAUDE_CONFIG_DIR` an empty place) unless `env` says otherwise.
fn toolwright(args: &[&str], cwd: &Path, stdin: Option<&str>, env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolwright"));
    cmd.args(args)
        .current_dir(cwd)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("CLAUDE_CONFIG_DIR", cwd.join(".no-user-config"))
        .envs(env.iter().copied());
    let mut child = cmd.spawn().unwrap();
    if let Some(input) = stdin {
        use std::io::Write;
        // The binary may refuse before it reads: a closed pipe is no failure here.
        let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    }
    child.wait_with_output().unwrap()
}

/// Runs `bash -c script` in `dir` with the binary as `$TW`, `stdin` on its input.
fn bash(dir: &Path, script: &str, stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new("bash")
        .args(["-c", script])
        .current_dir(dir)
        .env("TW", env!("CARGO_BIN_EXE_toolwright"))
        .env("CLAUDE_CONFIG_DIR", dir.join(".no-user-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

/// A temp dir, by its real path.
fn temp_root() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// Found by review: with user settings whose `env` sets `HOME` and a deny rule on a file in
/// that home, a session denied `cat ~/secret` (its `~` is the settings' `HOME`, as every
/// command it runs sees it) while `permissions check` allowed it, expanding `~` to the
/// `HOME` from before the settings. Both expand it alike now, and both deny.
#[test]
fn permissions_check_expands_tilde_as_the_session_does() {
    let (_dir, root) = temp_root();
    let (home, fake, config, project) = (
        root.join("home"),
        root.join("fakehome"),
        root.join("config"),
        root.join("p1"),
    );
    for d in [&home, &fake, &config, &project] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(fake.join("secret"), "TOPSECRET").unwrap();
    std::fs::write(
        config.join("settings.json"),
        json!({"env": {"HOME": fake},
               "permissions": {"deny": [format!("Read(/{}/secret)", fake.display())]}})
        .to_string(),
    )
    .unwrap();
    let env = [
        ("HOME", home.as_path()),
        ("CLAUDE_CONFIG_DIR", config.as_path()),
    ];
    let call = json!({"type": "tool_use", "id": "t1", "name": "Bash",
        "input": {"command": "cat ~/secret"}});
    let out = toolwright(
        &[
            "run",
            "--json",
            "--mode",
            "bypassPermissions",
            "--cwd",
            "p1",
            "-",
        ],
        &root,
        Some(&format!("{call}\n")),
        &env,
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][0]["is_error"], true, "{message}");
    assert!(!message.to_string().contains("TOPSECRET"), "{message}");
    let out = toolwright(
        &[
            "permissions",
            "check",
            "--json",
            "--cwd",
            "p1",
            "--mode",
            "bypassPermissions",
            "Bash",
            r#"{"command":"cat ~/secret"}"#,
        ],
        &root,
        None,
        &env,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["decision"], "deny", "{report}");
}

/// Found by review: a misspelt `permissions` in an inline `--settings` value was accepted and
/// its deny rule dropped: the `rm` it was there to stop ran. The run stops (exit 2) naming
/// the key meant, and nothing runs.
#[test]
fn a_misspelt_key_in_an_inline_settings_value_stops_the_run() {
    let (_dir, root) = temp_root();
    std::fs::write(root.join("keep.txt"), "kept").unwrap();
    let call = json!({"type": "tool_use", "id": "t1", "name": "Bash",
        "input": {"command": "rm keep.txt"}});
    for settings in [
        r#"{"permisions":{"deny":["Bash(rm:*)"]}}"#,
        r#"{"permissions ":{"deny":["Bash(rm:*)"]}}"#,
    ] {
        let out = toolwright(
            &[
                "run",
                "--json",
                "--mode",
                "bypassPermissions",
                "--settings",
                settings,
                "-",
            ],
            &root,
            Some(&format!("{call}\n")),
            &[],
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{settings}: {err}");
        assert!(err.contains("(did you mean `permissions`?)"), "{err}");
        assert!(root.join("keep.txt").exists(), "{settings}: the rm ran");
    }
}

/// Found by review: `run --settings /dev/stdin -` let the settings reader take the model's
/// turn as settings, and the run then failed with "the input is malformed: it is empty".
/// Two inputs that both read standard input (`--settings` or `--mcp-config` naming it
/// however: `/dev/stdin`, `/dev/fd/0`, `/proc/self/fd/0`, and the run's input) are refused
/// up front, saying so; settings from standard input with the turn in a file still work.
#[test]
fn two_inputs_reading_standard_input_are_refused() {
    let (_dir, root) = temp_root();
    let call = json!({"type": "tool_use", "id": "t1", "name": "Bash",
        "input": {"command": "touch ran"}});
    let turn = format!("{call}\n");
    std::fs::write(root.join("turn.jsonl"), &turn).unwrap();
    for script in [
        r#"exec "$TW" run --json --mode bypassPermissions --settings /dev/stdin -"#,
        r#"exec "$TW" run --json --mode bypassPermissions --settings /dev/fd/0"#,
        r#"exec "$TW" run --json --mode bypassPermissions --settings /proc/self/fd/0 -"#,
        r#"exec "$TW" run --json --mode bypassPermissions --mcp-config /dev/stdin -"#,
        r#"exec "$TW" run --json --mode bypassPermissions --settings /dev/stdin /dev/stdin"#,
        // Standard input a regular file: each reader would read it whole.
        r#"exec "$TW" run --json --mode bypassPermissions --settings /dev/stdin - < turn.jsonl"#,
    ] {
        let out = bash(&root, script, &turn);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{script}: {err}");
        assert!(err.contains("both read standard input"), "{script}: {err}");
        assert!(!root.join("ran").exists(), "{script}");
    }
    // The settings from standard input, the turn from a file: no conflict.
    let out = bash(
        &root,
        r#"exec "$TW" run --json --mode bypassPermissions --settings /dev/stdin turn.jsonl"#,
        r#"{"permissions":{"deny":["Bash(touch:*)"]}}"#,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][0]["is_error"], true, "{message}");
    assert!(!root.join("ran").exists());
}

/// Found by review: `run`, `serve` and `agent` refusing to start over a bad hook in
/// `--settings` (exit 2) left an empty `toolwright-*` session directory in `$TMPDIR`.
/// Nothing is left now.
#[test]
fn a_refused_start_leaves_no_session_directory() {
    let (_dir, root) = temp_root();
    let tmp = root.join("tmp");
    let project = root.join("proj");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        root.join("bad2.json"),
        r#"{"hooks":{"PreToolUse":[{"matcher":"(","hooks":[{"type":"command","command":"x"}]}]}}"#,
    )
    .unwrap();
    let call = json!({"type": "tool_use", "id": "t1", "name": "Bash",
        "input": {"command": "echo hi"}});
    std::fs::write(root.join("c1.jsonl"), format!("{call}\n")).unwrap();
    let unreachable = Path::new("http://127.0.0.1:9");
    let key = Path::new("sk-test-not-used");
    let env = [
        ("TMPDIR", tmp.as_path()),
        ("ANTHROPIC_API_KEY", key),
        ("ANTHROPIC_BASE_URL", unreachable),
    ];
    for args in [
        &[
            "run",
            "--settings",
            "bad2.json",
            "--cwd",
            "proj",
            "c1.jsonl",
        ][..],
        &["serve", "--settings", "bad2.json", "--cwd", "proj"][..],
        &[
            "agent",
            "-p",
            "hi",
            "--settings",
            "bad2.json",
            "--cwd",
            "proj",
        ][..],
    ] {
        let out = toolwright(args, &root, None, &env);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let left: Vec<_> = std::fs::read_dir(&tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
}

/// Found by review: `permissions check` allowed a Read whose `file_path` holds a NUL byte,
/// which a session refuses before any permission is decided ("The file_path parameter
/// contains a null byte"). The check reports that refusal (exit 2, as for an input the
/// schema refuses); what a session refuses only for the file's state (an Edit of a file not
/// read yet) still gets a decision.
#[test]
fn permissions_check_reports_a_nul_byte_refusal() {
    let (_dir, root) = temp_root();
    std::fs::write(root.join("notes.txt"), "X=1").unwrap();
    let nul_path = json!({"file_path": format!("{}/notes.txt\u{0}x", root.display())}).to_string();
    for (tool, input) in [
        ("Read", nul_path.clone()),
        ("Glob", json!({"pattern": "*\u{0}"}).to_string()),
    ] {
        let out = toolwright(
            &[
                "permissions",
                "check",
                "--mode",
                "bypassPermissions",
                tool,
                &input,
            ],
            &root,
            None,
            &[],
        );
        let err = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{tool}: {}{err}",
            text(&out.stdout)
        );
        assert!(err.contains("contains a null byte"), "{tool}: {err}");
        assert!(!text(&out.stdout).contains("decision: allow"), "{tool}");
    }
    let edit = json!({"file_path": root.join("notes.txt"), "old_string": "X", "new_string": "Y"});
    let out = toolwright(
        &[
            "permissions",
            "check",
            "--json",
            "--mode",
            "bypassPermissions",
            "Edit",
            &edit.to_string(),
        ],
        &root,
        None,
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["decision"], "allow", "{report}");
}

/// Found by review: a `--settings` file that is not JSON stopped the run (exit 2) with
/// "invalid JSON …; file ignored", and a hook matcher that is no regular expression with
/// "…; group skipped": neither was ignored nor skipped, the run stopped. The fatal message
/// says what is wrong without a consequence that did not happen.
#[test]
fn a_fatal_settings_problem_is_not_said_to_be_ignored() {
    let (_dir, root) = temp_root();
    std::fs::write(root.join("bad.json"), "[\n").unwrap();
    std::fs::write(
        root.join("bad2.json"),
        r#"{"hooks":{"PreToolUse":[{"matcher":"(","hooks":[{"type":"command","command":"x"}]}]}}"#,
    )
    .unwrap();
    let call = json!({"type": "tool_use", "id": "t1", "name": "Bash",
        "input": {"command": "echo hi"}});
    for (file, said) in [("bad.json", "invalid JSON"), ("bad2.json", "matcher")] {
        let out = toolwright(
            &["run", "--settings", file, "-"],
            &root,
            Some(&format!("{call}\n")),
            &[],
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{file}: {err}");
        assert!(err.contains(said), "{file}: {err}");
        assert!(
            !err.contains("ignored") && !err.contains("skipped"),
            "{file}: {err}"
        );
    }
}
