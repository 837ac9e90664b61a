//! Session 34, the command line: a concurrency cap that is no number
//! (`TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY=abc`, `CLAUDE_CODE_MAX_TOOL_USE_CONCURRENCY=0`) was
//! dropped without a word; the session now says it on stderr, naming the variable, its value
//! and the default used, whether it came from the environment or the settings' `env`. Real
//! `toolwright run` processes in temporary directories.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

#[path = "support/binary.rs"]
mod binary;
use binary::{output_with_stdin, toolwright_command};

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
