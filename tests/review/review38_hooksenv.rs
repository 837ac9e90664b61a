//! Session 38's review of the hooks as `toolwright agent` runs them. Found by review: every
//! SessionStart hook was given one shared `CLAUDE_ENV_FILE`, so a hook that wrote it with
//! `>` (the pattern Claude Code's own examples use, safe there because each hook has a
//! file of its own) erased what the others exported; and the transcript's assistant lines
//! held only `role` and `content`, where Claude Code's carry the response's id, model,
//! usage and `requestId`. Real `toolwright agent` processes in temporary directories,
//! against a loopback stand-in for the Messages API.

use std::path::Path;

use serde_json::json;

use crate::model_api::{agent_command, json_out, results, serve, stderr, text_of, turn};

/// A shell word for `path`.
fn quoted(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', "'\\''"))
}

/// Waits (up to 20 s) until `mark` exists: the hook that runs it goes on only after the
/// other hook said it is done, whatever order they were started in.
fn wait_for(mark: &Path) -> String {
    format!(
        "i=0; while [ ! -e {m} ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done",
        m = quoted(mark)
    )
}

/// Runs `agent` in `dir` with the SessionStart hooks `hooks` (commands, in configuration
/// order); the model calls Bash once with `command`, then ends. Returns what Bash printed.
fn bash_after_session_start(dir: &Path, hooks: &[String], command: &str) -> String {
    let settings = json!({
        "permissions": {"allow": ["Bash"]},
        "hooks": {"SessionStart": hooks.iter().map(|c| json!({"hooks": [{"type": "command", "command": c}]})).collect::<Vec<_>>()},
    });
    let call = turn(None, &[("toolu_1", "Bash", json!({"command": command}))]);
    let (url, seen) = serve(move |i, _| {
        crate::model_api::full(if i == 0 {
            call.clone()
        } else {
            turn(Some("done"), &[])
        })
    });
    let out = agent_command(
        &url,
        dir,
        &["--json", "--settings", &settings.to_string()],
        "go",
    )
    .env_remove("CLAUDE_ENV_FILE")
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    json_out(&out);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "{}", stderr(&out));
    let messages = seen[1].messages();
    let (_, result) = results(&messages[2]).remove(0);
    text_of(&result)
}

/// Two SessionStart hooks that each write `$CLAUDE_ENV_FILE` with `>` (the second only
/// once the first has written) both reach Bash: each hook has a file of its own, as in
/// Claude Code. Before, they shared one, and the second erased the first's export.
#[test]
fn each_session_start_hook_has_its_own_env_file() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("first-wrote");
    let first = format!(
        "echo 'export PROJECT_ENV=development' > \"$CLAUDE_ENV_FILE\"; touch {}",
        quoted(&mark)
    );
    let second = format!(
        "{}; echo 'export NODE_ENV=production' > \"$CLAUDE_ENV_FILE\"",
        wait_for(&mark)
    );
    let printed = bash_after_session_start(
        dir.path(),
        &[first, second],
        "echo PROJECT_ENV=$PROJECT_ENV NODE_ENV=$NODE_ENV",
    );
    assert_eq!(
        printed.trim(),
        "PROJECT_ENV=development NODE_ENV=production"
    );
}

/// The hooks' files are sourced in the hooks' configuration order, not the order they
/// finished in: the second hook's export of a variable both set wins, though the first
/// wrote last. Each file is named by its hook's index (`sessionstart-hook-<i>.sh`, Claude
/// Code's names).
#[test]
fn session_start_env_files_are_sourced_in_configuration_order() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("second-wrote");
    let names = dir.path().join("names");
    let first = format!(
        "{}; echo 'export ORDER=first' >> \"$CLAUDE_ENV_FILE\"; basename \"$CLAUDE_ENV_FILE\" >> {}",
        wait_for(&mark),
        quoted(&names)
    );
    let second = format!(
        "echo 'export ORDER=second' >> \"$CLAUDE_ENV_FILE\"; basename \"$CLAUDE_ENV_FILE\" >> {n}; touch {m}",
        n = quoted(&names),
        m = quoted(&mark)
    );
    let printed = bash_after_session_start(dir.path(), &[first, second], "echo ORDER=$ORDER");
    assert_eq!(printed.trim(), "ORDER=second");
    let names = std::fs::read_to_string(&names).unwrap();
    assert_eq!(
        names.lines().collect::<Vec<_>>(),
        ["sessionstart-hook-1.sh", "sessionstart-hook-0.sh"],
        "the hooks' CLAUDE_ENV_FILE names, in the order they wrote"
    );
}
