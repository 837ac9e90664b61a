//! Session 34, the command line: a concurrency cap that is no number
//! (`TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY=abc`, `CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY=0`) was
//! dropped without a word; the session now says it on stderr, naming the variable, its value
//! and the default used, whether it came from the environment or the settings' `env`. Real
//! `toolwright run` processes in temporary directories.

use std::path::Path;

use crate::binary::{output_with_stdin, toolwright_command};

/// `toolwright run` of one Read in `project` with `extra` arguments and `env`; its stderr.
fn stderr_of_run(project: &Path, extra: &[&str], env: &[(&str, &str)]) -> String {
    std::fs::write(project.join("a.txt"), "hello\n").unwrap();
    let call = serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Read",
        "input": {"file_path": project.join("a.txt")}});
    let mut args = vec!["run", "--json"];
    args.extend_from_slice(extra);
    let mut command = toolwright_command(&args, project);
    command
        .env("HOME", project.join(".home"))
        .env("CLAUDE_CONFIG_DIR", project.join(".home/.claude"))
        .env_remove("TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY")
        .env_remove("CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = output_with_stdin(command, Some(&format!("{call}\n")));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("hello"), "the Read still ran: {stdout}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_invalid_concurrency_cap_is_said_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let stderr = stderr_of_run(
        &project,
        &[],
        &[("TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY", "abc")],
    );
    assert!(
        stderr.contains("TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY=\"abc\"")
            && stderr.contains("the default, 10, is used"),
        "{stderr}"
    );
    // From the settings' `env` too.
    let settings = r#"{"env":{"CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY":"0"}}"#;
    let stderr = stderr_of_run(&project, &["--settings", settings], &[]);
    assert!(
        stderr.contains("CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY=\"0\""),
        "{stderr}"
    );
    // A valid cap says nothing of it.
    let stderr = stderr_of_run(
        &project,
        &[],
        &[("TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY", "3")],
    );
    assert!(!stderr.contains("MAX_TOOL_USE_CONCURRENCY"), "{stderr}");
}

/// `toolwright agent -p hi` in `project` with `env`: its stderr and stdout together.
fn agent_output(project: &Path, env: &[(&str, &std::ffi::OsStr)]) -> String {
    let mut command = toolwright_command(&["agent", "-p", "hi"], project);
    command
        .env("HOME", project.join(".home"))
        .env("CLAUDE_CONFIG_DIR", project.join(".home/.claude"))
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_AUTH_TOKEN")
        .env_remove("ANTHROPIC_BASE_URL");
    for (k, v) in env {
        command.env(k, v);
    }
    let out = output_with_stdin(command, None);
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    )
}

/// Credentials in `ANTHROPIC_BASE_URL` (a gateway's key in the query, a user and password)
/// were printed in the errors that name it; a key that is not UTF-8 was said to be unset.
#[test]
fn the_agent_never_prints_the_credentials_of_its_base_url() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt as _;
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let key = OsStr::new("x");
    for url in [
        "https://gwuser:gwpass-SECRET@gateway.example:99999/",
        "http://127.0.0.1:1/anthropic?api-key=gwkey-SECRET-123",
        "ftp://gwuser:gwpass-SECRET@gateway.example/",
    ] {
        let out = agent_output(
            &project,
            &[
                ("ANTHROPIC_API_KEY", key),
                ("ANTHROPIC_BASE_URL", OsStr::new(url)),
            ],
        );
        assert!(!out.contains("SECRET"), "{url}: {out}");
        assert!(
            out.contains("redacted"),
            "{url}: the URL is still named: {out}"
        );
    }
    for name in ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"] {
        let bad = OsStr::from_bytes(b"sk-ant-\xe9SECRET");
        let out = agent_output(&project, &[(name, bad)]);
        assert!(
            out.contains(&format!("{name} is set but is not valid UTF-8")),
            "{name}: {out}"
        );
        assert!(!out.contains("SECRET"), "{out}");
    }
}

/// With `CLAUDE_CODE_SUBPROCESS_ENV_SCRUB` on, a command could still read the credentials
/// from its parent's `/proc/PID/environ` (`curl -d @/proc/$PPID/environ`); the process is
/// not dumpable then, so those files are root's. Run as an unprivileged user (`nobody` when
/// the test runs as root, which could read them anyway), from a copy of the binary that user
/// can reach.
#[test]
fn with_the_scrub_on_a_command_cannot_read_the_credentials_from_its_parent() {
    use std::os::unix::fs::PermissionsExt as _;
    use std::os::unix::process::CommandExt as _;
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
    let binary = root.join("toolwright");
    std::fs::copy(env!("CARGO_BIN_EXE_toolwright"), &binary).unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let call = serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
        "input": {"command": "echo direct=[$ANTHROPIC_API_KEY]; tr '\\0' '\\n' < /proc/$PPID/environ | grep -c FAKE-KEY-42 || true"}});
    let run = |scrub: &str| {
        let mut command = std::process::Command::new(&binary);
        command
            .args(["run", "--mode", "bypassPermissions", "--cwd"])
            .arg(&root)
            .current_dir(&root)
            .env("HOME", &root)
            .env("TMPDIR", &root)
            .env_remove("CLAUDE_CONFIG_DIR")
            .env("CLAUDE_CODE_SUBPROCESS_ENV_SCRUB", scrub)
            .env("ANTHROPIC_API_KEY", "sk-ant-FAKE-KEY-42");
        if nix::unistd::geteuid().is_root() {
            command.uid(65534).gid(65534);
        }
        let out = output_with_stdin(command, Some(&format!("{call}\n")));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let on = run("1");
    assert!(on.contains("direct=[]"), "{on}");
    assert!(
        !on.contains("FAKE-KEY-42") && on.contains("Permission denied"),
        "{on}"
    );
    // Off: the command has them both ways (the test would prove nothing if it could not).
    let off = run("0");
    assert!(off.contains("direct=[sk-ant-FAKE-KEY-42]"), "{off}");
    assert!(off.lines().any(|l| l.trim() == "1"), "{off}");
}
