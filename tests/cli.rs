//! The `toolwright` binary as a real process: the demo, `run` on recorded turns (golden
//! `--json` output), `tools`, and bad inputs with clear messages and the right exit codes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

#[path = "support/processes.rs"]
mod processes;
use processes::{process_alive, wait_at_most, wait_until};

fn toolwright(args: &[&str], cwd: &Path, stdin: Option<&str>) -> Output {
    toolwright_with_env(args, cwd, stdin, &[])
}

/// [`toolwright`] with more environment variables.
fn toolwright_with_env(
    args: &[&str],
    cwd: &Path,
    stdin: Option<&str>,
    env: &[(&str, &Path)],
) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolwright"));
    cmd.args(args).current_dir(cwd).stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    // Keep the user's own Claude Code settings out of the tests.
    cmd.env("CLAUDE_CONFIG_DIR", cwd.join(".no-user-config"));
    cmd.envs(env.iter().copied());
    let mut child = cmd.spawn().unwrap();
    if let Some(input) = stdin {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn demo_runs_the_whole_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolwright(&["demo", "--no-pace"], dir.path(), None);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    // Parallel reads, the edit, the hook rewrite, the passing tests, the denied rm -rf.
    assert!(stdout.contains("✓ Glob(**/*.py)"), "{stdout}");
    // The bundled MCP server (this binary's `serve`) answers through the MCP client.
    assert!(
        stdout.contains("✓ mcp__docs__Grep(mean)   allow · rule mcp__docs (project settings)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("allow · rule Edit(./**) (project settings)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("hook: The hook rewrote `python` to `python3`"),
        "{stdout}"
    );
    assert!(
        stdout.contains("allow · rule Bash(python3 -m unittest:*) (project settings)"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "✗ Bash(rm -rf build dist __pycache__)   deny · rule Bash(rm -rf:*) (project settings)"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("streaming saved"), "{stdout}");

    // The user's settings change nothing, in the bundled MCP server either: a deny of
    // Grep and a hook that refuses every call.
    let config = dir.path().join("user-config");
    std::fs::create_dir_all(&config).unwrap();
    let refuse = r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}'"#;
    let settings = json!({"permissions": {"deny": ["Grep", "mcp__docs"]},
        "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": refuse}]}]}});
    std::fs::write(config.join("settings.json"), settings.to_string()).unwrap();
    let out = toolwright_with_env(
        &["demo", "--no-pace"],
        dir.path(),
        None,
        &[("CLAUDE_CONFIG_DIR", &config)],
    );
    let again = text(&out.stdout);
    assert!(out.status.success(), "{again}\n{}", text(&out.stderr));
    assert!(
        again.contains("✓ mcp__docs__Grep(mean)   allow · rule mcp__docs (project settings)"),
        "{again}"
    );
}

fn jsonl(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn run_json_prints_the_next_user_message() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": root.join("notes.txt")}}),
        json!({"type": "tool_use", "id": "toolu_2", "name": "Grep", "input": {"pattern": "beta", "path": root, "output_mode": "content"}}),
        json!({"type": "tool_use", "id": "toolu_3", "name": "Bash", "input": {"command": "echo from-bash"}}),
        json!({"type": "tool_use", "id": "toolu_4", "name": "Write", "input": {"file_path": root.join("new.txt"), "content": "x"}}),
        json!({"type": "tool_use", "id": "toolu_5", "name": "Frobnicate", "input": {}}),
    ]);
    let out = toolwright(&["run", "--json", "-"], &root, Some(&turn));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        message,
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "     1→alpha\n     2→beta"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "notes.txt:2:beta"},
            {"type": "tool_result", "tool_use_id": "toolu_3", "content": "from-bash"},
            // A write with no allow rule would ask; nobody can be asked here, so it is denied.
            {"type": "tool_result", "tool_use_id": "toolu_4", "is_error": true,
             "content": message["content"][3]["content"].clone()},
            {"type": "tool_result", "tool_use_id": "toolu_5", "is_error": true,
             "content": "<tool_use_error>Error: No such tool available: Frobnicate</tool_use_error>"},
        ]})
    );
    assert!(
        !root.join("new.txt").exists(),
        "a denied Write wrote nothing"
    );
    // With acceptEdits the write inside the project runs.
    let out = toolwright(
        &["run", "--json", "--mode", "acceptEdits", "-"],
        &root,
        Some(&turn),
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][3].get("is_error"), None, "{message}");
    assert_eq!(std::fs::read_to_string(root.join("new.txt")).unwrap(), "x");
}

#[test]
fn run_lets_permission_request_hooks_answer_before_refusing() {
    // `toolwright run` cannot prompt: an ask is refused unless a PermissionRequest hook
    // answers it first (Claude Code's order for sessions without prompts).
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    let hook = r#"input=$(cat); case "$input" in *allowed.txt*) echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}';; esac"#;
    std::fs::write(
        config.join("settings.json"),
        json!({"hooks": {"PermissionRequest": [{"matcher": "Write", "hooks": [{"type": "command", "command": hook}]}]}})
            .to_string(),
    )
    .unwrap();
    let write = |id: &str, name: &str| json!({"type": "tool_use", "id": id, "name": "Write", "input": {"file_path": root.join(name), "content": "x"}});
    let turn = jsonl(&[
        write("toolu_1", "allowed.txt"),
        write("toolu_2", "refused.txt"),
    ]);
    let out = toolwright(&["run", "--json", "-"], &root, Some(&turn));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][0].get("is_error"), None, "{message}");
    assert_eq!(message["content"][1]["is_error"], true, "{message}");
    assert!(
        message["content"][1]["content"]
            .as_str()
            .unwrap()
            .contains("Prompts are not available in this session"),
        "{message}"
    );
    // The refusal says why the call needed approval, not only that nobody could give it.
    assert!(
        message["content"][1]["content"]
            .as_str()
            .unwrap()
            .contains("It needed approval: "),
        "{message}"
    );
    assert!(root.join("allowed.txt").exists());
    assert!(!root.join("refused.txt").exists());
}

/// AskUserQuestion's `answers` are the user's, filled by the prompt or a hook's
/// `updatedInput`: a PermissionRequest hook that only approves the call does not turn the
/// model's own `answers` into the user's choice (it used to: "User has answered your
/// questions: ... = B", B the model's pick). A hook that supplies them is still heard.
#[test]
fn a_models_answers_are_never_taken_for_the_users() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    let question = json!({"question": "Which one?", "header": "Pick", "options": [
        {"label": "A", "description": "a"}, {"label": "B", "description": "b"}]});
    let ask = |id: &str| {
        json!({"type": "tool_use", "id": id, "name": "AskUserQuestion", "input": {
        "questions": [question], "answers": {"Which one?": "B"}}})
    };
    for (decision, expected, not_expected) in [
        (
            json!({"behavior": "allow"}),
            "did not answer",
            "User has answered",
        ),
        (
            json!({"behavior": "allow", "updatedInput": {"questions": [question], "answers": {"Which one?": "A"}}}),
            "\"Which one?\"=\"A\"",
            "=\"B\"",
        ),
    ] {
        let answer = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}});
        let hook = root.join("approve.sh");
        std::fs::write(
            &hook,
            format!("#!/bin/sh\ncat >/dev/null\necho '{answer}'\n"),
        )
        .unwrap();
        std::fs::set_permissions(&hook, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        std::fs::write(
            config.join("settings.json"),
            json!({"hooks": {"PermissionRequest": [{"matcher": "AskUserQuestion", "hooks": [{"type": "command", "command": hook}]}]}})
                .to_string(),
        )
        .unwrap();
        let out = toolwright(
            &["run", "--json", "-"],
            &root,
            Some(&jsonl(&[ask("toolu_1")])),
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let message: Value = serde_json::from_slice(&out.stdout).unwrap();
        let result = message["content"][0]["content"]
            .as_str()
            .unwrap_or_default();
        assert!(result.contains(expected), "{decision}: {message}");
        assert!(!result.contains(not_expected), "{decision}: {message}");
    }
}

#[test]
fn post_tool_use_hooks_can_redact_a_built_in_tool_output() {
    // A PostToolUse hook's `updatedToolOutput` in Bash's output shape replaces what the model
    // sees; one in another shape is ignored.
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    let redact = r#"printf '%s' '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": {"stdout": "token=[REDACTED]\n", "stderr": "", "interrupted": false}}}'"#;
    let wrong = r#"printf '%s' '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": {"text": "lost"}}}'"#;
    std::fs::write(
        config.join("settings.json"),
        json!({"hooks": {"PostToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": format!("grep -q hunter2 && {redact} || {wrong}")}]}
        ]}})
        .to_string(),
    )
    .unwrap();
    let bash = |id: &str, command: &str| json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}});
    let turn = jsonl(&[
        bash("toolu_1", "echo token=hunter2"),
        bash("toolu_2", "echo harmless"),
    ]);
    let out = toolwright(
        &["run", "--json", "--mode", "bypassPermissions", "-"],
        &root,
        Some(&turn),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        message["content"][0]["content"], "token=[REDACTED]",
        "{message}"
    );
    assert_eq!(message["content"][1]["content"], "harmless", "{message}");
}

/// A hook's rewritten input meets the deny rules in the form the call will run with: a
/// `"timeout": "60000"` the schema step repairs must not hide the command from a
/// `Bash(rm:*)` deny rule (read raw, the input had no permission subject at all).
#[test]
fn a_hooks_rewritten_input_meets_the_deny_rules_as_it_will_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(root.join("build")).unwrap();
    let allow = r#"printf '%s' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "rm -rf build", "timeout": "60000"}}}'"#;
    let pass = r#"printf '%s' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "rm -rf build", "timeout": "60000"}}}'"#;
    for (hook, mode) in [(allow, "default"), (pass, "bypassPermissions")] {
        std::fs::write(
            config.join("settings.json"),
            json!({
                "permissions": {"allow": ["Bash"], "deny": ["Bash(rm:*)"]},
                "hooks": {"PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": hook}]}
                ]}
            })
            .to_string(),
        )
        .unwrap();
        let turn = jsonl(
            &[json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
            "input": {"command": "ls"}})],
        );
        let out = toolwright(&["run", "--json", "--mode", mode, "-"], &root, Some(&turn));
        assert!(out.status.success(), "{}", text(&out.stderr));
        let message: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(message["content"][0]["is_error"], true, "{mode}: {message}");
        assert!(
            message["content"][0]["content"]
                .as_str()
                .is_some_and(|t| t.contains("denied")),
            "{mode}: {message}"
        );
        assert!(root.join("build").is_dir(), "{mode}: the rm ran");
    }
}

/// `run`'s line for a call names the input that ran: a hook's rewrite is shown, with the
/// model's input beside it (the model asked for `echo model`, `echo hook` ran). The hook's
/// `permissionDecisionReason` for its allow is shown too (Claude Code shows it to the user),
/// on the call's line even when it spans lines.
#[test]
fn run_shows_the_input_a_hook_rewrote() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    let rewrite = r#"printf '%s' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "echo is\nharmless", "updatedInput": {"command": "echo hook"}}}'"#;
    std::fs::write(
        config.join("settings.json"),
        json!({"hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": rewrite}]}
        ]}})
        .to_string(),
    )
    .unwrap();
    let call = |id: &str, command: &str| json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}});
    let out = toolwright(
        &["run", "-"],
        &root,
        Some(&jsonl(&[call("toolu_1", "echo model")])),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    let header = shown.lines().next().unwrap_or_default();
    assert!(
        header.contains("Bash(echo hook) (input rewritten from Bash(echo model))"),
        "{shown}"
    );
    assert!(
        header.contains("allow · PreToolUse hook: echo is harmless"),
        "{shown}"
    );
    assert!(shown.contains("    hook"), "{shown}");
    // Without a rewrite, the model's input alone.
    std::fs::write(config.join("settings.json"), "{}").unwrap();
    let out = toolwright(
        &["run", "--mode", "bypassPermissions", "-"],
        &root,
        Some(&jsonl(&[call("toolu_2", "echo model")])),
    );
    let shown = text(&out.stdout);
    assert!(
        shown.contains("Bash(echo model)") && !shown.contains("rewritten"),
        "{shown}"
    );
    // A rewrite the deny rules refuse is named too: the line says what was denied (found by
    // review: it named the model's `touch` beside a denial by an `rm` rule).
    std::fs::write(root.join("victim"), "").unwrap();
    let rewrite = r#"printf '%s' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"command": "rm -f victim"}}}'"#;
    std::fs::write(
        config.join("settings.json"),
        json!({"permissions": {"deny": ["Bash(rm:*)"]}, "hooks": {"PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": rewrite}]}
        ]}})
        .to_string(),
    )
    .unwrap();
    let out = toolwright(
        &["run", "-"],
        &root,
        Some(&jsonl(&[call("toolu_3", "touch something")])),
    );
    let shown = text(&out.stdout);
    let header = shown.lines().next().unwrap_or_default();
    assert!(
        header.contains("Bash(rm -f victim) (input rewritten from Bash(touch something))")
            && header.contains("deny · rule Bash(rm:*)"),
        "{shown}"
    );
    assert!(root.join("victim").exists());
    // A call nobody rewrote is not said to be, though its relative path was resolved for
    // the rules (found by an adversarial review: a denied Grep of `secret` read "input
    // rewritten from Grep(TOKEN)").
    std::fs::create_dir_all(root.join("secret")).unwrap();
    std::fs::write(
        config.join("settings.json"),
        json!({"permissions": {"deny": ["Read(./secret/**)"]}}).to_string(),
    )
    .unwrap();
    let grep = json!({"type": "tool_use", "id": "toolu_4", "name": "Grep",
        "input": {"pattern": "TOKEN", "path": "secret"}});
    let out = toolwright(&["run", "-"], &root, Some(&jsonl(&[grep])));
    let shown = text(&out.stdout);
    let header = shown.lines().next().unwrap_or_default();
    assert!(
        header.contains("Grep(TOKEN)") && header.contains("deny") && !header.contains("rewritten"),
        "{shown}"
    );
}

/// At the end of a run its MCP servers are shut down as MCP says (stdin closed, time to exit
/// on their own), not killed at once: a server that saves its state on the end of its input
/// gets to.
#[test]
fn run_lets_mcp_servers_exit_on_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let log = root.join("server.log");
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fault_matrix/fake_mcp.py");
    let config = json!({"mcpServers": {"fake": {
        "command": "python3",
        "args": [fake, "slow-exit"],
        "env": {"FAKE_MCP_LOG": log},
    }}})
    .to_string();
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "mcp__fake__work", "input": {}}),
    ]);
    let out = toolwright(
        &[
            "run",
            "--json",
            "--mode",
            "bypassPermissions",
            "--mcp-config",
            &config,
            "-",
        ],
        &root,
        Some(&turn),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(message.to_string().contains("done {}"), "{message}");
    let events = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(events.ends_with("stdin closed\nstate saved\n"), "{events}");
}

/// An `async: true` hook a call started still runs when the run is over: `run` waits for it
/// (within its timeout) and says so, where exiting killed it before it did anything.
/// Its context comes with the message, as an agent's next request would carry it.
#[test]
fn run_waits_for_async_hooks_before_exiting() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    let done = root.join("audit.log");
    let hook = format!(
        r#"cat > /dev/null; sleep 0.5; echo audited >> '{}'; echo '{{"hookSpecificOutput": {{"hookEventName": "PostToolUse", "additionalContext": "audit done"}}}}'"#,
        done.display()
    );
    std::fs::write(
        config.join("settings.json"),
        json!({"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": hook, "async": true, "timeout": 30}]}]}})
            .to_string(),
    )
    .unwrap();
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Glob", "input": {"pattern": "*"}}),
    ]);
    let out = toolwright(&["run", "--json", "-"], &root, Some(&turn));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(&done).unwrap_or_default(),
        "audited\n",
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stderr).contains("waiting for 1 background hook to finish"),
        "{}",
        text(&out.stderr)
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(message.to_string().contains("audit done"), "{message}");
}

/// The text mode shows a tool's output with its control characters escaped: a command's
/// output cannot clear the screen, retitle the terminal or move the cursor over what was
/// printed before.
#[test]
fn run_text_mode_escapes_terminal_codes() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let turn = jsonl(&[json!({
        "type": "tool_use", "id": "toolu_1", "name": "Bash",
        "input": {"command": "printf 'before\\033[2J\\033]0;title\\007after\\n'"}
    })]);
    let out = toolwright(
        &["run", "--mode", "bypassPermissions", "-"],
        &root,
        Some(&turn),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(
        shown.contains("before\\u{1b}[2J\\u{1b}]0;title\\u{7}after"),
        "{shown}"
    );
    // `--json` keeps the output as the tool returned it.
    let out = toolwright(
        &["run", "--json", "--mode", "bypassPermissions", "-"],
        &root,
        Some(&turn),
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        message["content"][0]["content"],
        "before\u{1b}[2J\u{1b}]0;title\u{7}after"
    );
    // The call's line shows a tab in its input as `\t`, as it does a line break (found by
    // review: a tab was written as it is).
    let turn = jsonl(&[json!({
        "type": "tool_use", "id": "toolu_2", "name": "Bash",
        "input": {"command": "echo a\necho b\techo c"}
    })]);
    let out = toolwright(
        &["run", "--mode", "bypassPermissions", "-"],
        &root,
        Some(&turn),
    );
    let header = text(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(
        header.contains("Bash(echo a\\necho b\\techo c)"),
        "{header}"
    );
}

#[test]
fn a_deferral_does_not_swallow_another_hooks_ask() {
    // `defer` outranks `ask` among PreToolUse decisions, but `toolwright run` does not
    // honour deferrals: the call must still ask (and, unanswerable here, be refused), not
    // fall through to the allow rule.
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    let decide = |decision: &str| {
        format!(
            r#"printf '%s' '{{"hookSpecificOutput": {{"hookEventName": "PreToolUse", "permissionDecision": "{decision}", "permissionDecisionReason": "hook says {decision}"}}}}'"#
        )
    };
    let hooks = |decisions: &[&str]| {
        let hooks: Vec<Value> = decisions
            .iter()
            .map(|d| json!({"type": "command", "command": decide(d)}))
            .collect();
        json!({"permissions": {"allow": ["Bash(touch:*)"]},
               "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": hooks}]}})
    };
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "touch made.txt"}}),
    ]);
    for (decisions, runs) in [(&["defer"][..], true), (&["ask", "defer"][..], false)] {
        std::fs::write(config.join("settings.json"), hooks(decisions).to_string()).unwrap();
        let _ = std::fs::remove_file(root.join("made.txt"));
        let out = toolwright(&["run", "--json", "-"], &root, Some(&turn));
        assert!(out.status.success(), "{}", text(&out.stderr));
        let message: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            root.join("made.txt").exists(),
            runs,
            "{decisions:?}: {message}"
        );
        if !runs {
            let result = message["content"][0]["content"].to_string();
            assert!(
                result.contains("Permission to use Bash has been denied"),
                "{result}"
            );
        }
    }
}

#[test]
fn a_read_deny_rule_holds_for_a_search_of_the_whole_project() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join(".no-user-config")).unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::create_dir_all(root.join("secrets")).unwrap();
    std::fs::write(root.join("secrets/api.txt"), "TOKEN=hunter2\n").unwrap();
    std::fs::write(root.join("notes.txt"), "TOKEN is documented\n").unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        json!({"permissions": {"deny": ["Read(./secrets/**)"]}}).to_string(),
    )
    .unwrap();
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Grep", "input": {"pattern": "TOKEN", "output_mode": "content"}}),
        json!({"type": "tool_use", "id": "toolu_2", "name": "Glob", "input": {"pattern": "**/*.txt"}}),
    ]);
    let out = toolwright(&["run", "--json", "-"], &root, Some(&turn));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let grep = message["content"][0]["content"].to_string();
    let glob = message["content"][1]["content"].to_string();
    assert!(
        grep.contains("notes.txt") && !grep.contains("hunter2"),
        "{grep}"
    );
    assert!(
        glob.contains("notes.txt") && !glob.contains("secrets"),
        "{glob}"
    );
}

/// A Glob or Grep without `path` searches the cwd, and the Read rules judge that directory
/// as they judge a `path` naming it: a deny rule on it denies (not "No files found"), and a
/// pattern that climbs out (`../out/*`) is judged where it leads (an allow rule there lets
/// it run in dontAsk mode; without one it asks, naming the directory).
#[test]
fn a_search_without_a_path_is_judged_on_the_directory_it_walks() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let proj = root.join("proj");
    std::fs::create_dir_all(proj.join(".no-user-config")).unwrap();
    std::fs::create_dir_all(root.join("out")).unwrap();
    std::fs::write(proj.join("a.txt"), "TOKEN\n").unwrap();
    std::fs::write(root.join("out/b.txt"), "TOKEN\n").unwrap();
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "t1", "name": "Grep", "input": {"pattern": "TOKEN"}}),
        json!({"type": "tool_use", "id": "t2", "name": "Glob", "input": {"pattern": "*.txt"}}),
    ]);
    let deny = json!({"permissions": {"deny": [format!("Read(/{})", proj.display())]}});
    let out = toolwright(
        &["run", "--json", "--settings", &deny.to_string(), "-"],
        &proj,
        Some(&turn),
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    for i in 0..2 {
        assert_eq!(
            message["content"][i]["content"],
            format!("Permission to read {} has been denied.", proj.display()),
            "{message}"
        );
    }

    let climb = jsonl(&[
        json!({"type": "tool_use", "id": "t1", "name": "Glob", "input": {"pattern": "../out/*"}}),
    ]);
    let allow = json!({"permissions": {"allow": [format!("Read(/{}/**)", root.join("out").display()), format!("Read(/{})", root.join("out").display())]}});
    let out = toolwright(
        &[
            "run",
            "--json",
            "--mode",
            "dontAsk",
            "--settings",
            &allow.to_string(),
            "-",
        ],
        &proj,
        Some(&climb),
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        message["content"][0]["content"],
        root.join("out/b.txt").display().to_string(),
        "{message}"
    );
    let out = toolwright(
        &["permissions", "check", "Glob", r#"{"pattern":"../out/*"}"#],
        &proj,
        None,
    );
    let shown = text(&out.stdout);
    assert!(
        shown.contains("decision: ask")
            && shown.contains(&format!("{}, which is outside", root.join("out").display())),
        "{shown}"
    );
}

#[test]
fn settings_env_reaches_tools_as_in_claude_code() {
    // The settings' `env` is in the environment of what the session starts; an untrusted
    // folder's own settings do not set any.
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("settings.json"),
        r#"{"env": {"TW_USER_VAR": "from user settings", "TW_NUMBER": 3000}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        r#"{"env": {"TW_PROJECT_VAR": "from the project"}}"#,
    )
    .unwrap();
    let line = json!({"type": "tool_use", "id": "t1", "name": "Bash",
        "input": {"command": "echo \"[$TW_USER_VAR] [$TW_NUMBER] [$TW_PROJECT_VAR]\""}})
    .to_string();
    let out = toolwright(
        &["run", "--json", "--mode", "bypassPermissions", "-"],
        &root,
        Some(&line),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        message["content"][0]["content"], "[from user settings] [3000] []",
        "{message}"
    );
}

#[test]
fn tools_and_hooks_never_wait_on_the_terminal() {
    // Under a real terminal (a pty from `script`), a command or hook that reads /dev/tty
    // (a password prompt) must fail at once, not be stopped by SIGTTIN until its timeout:
    // children start in a session of their own, with no controlling terminal.
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    let hook = r#"if read -r x < /dev/tty; then echo "read the terminal"; else echo "had no terminal"; fi > hook.txt"#;
    std::fs::write(
        config.join("settings.json"),
        json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook, "timeout": 60}]}]}})
            .to_string(),
    )
    .unwrap();
    let turn = jsonl(
        &[json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
        "input": {"command": "read -r x < /dev/tty && echo read:$x", "timeout": 60000}})],
    );
    std::fs::write(root.join("turn.jsonl"), turn).unwrap();
    let inner = format!(
        "{} run --json --mode bypassPermissions turn.jsonl > out.json 2> err.txt",
        env!("CARGO_BIN_EXE_toolwright")
    );
    let status = Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .current_dir(&root)
        .env("CLAUDE_CONFIG_DIR", &config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("`script` (util-linux) runs the binary under a pty");
    let err = std::fs::read_to_string(root.join("err.txt")).unwrap_or_default();
    assert!(status.success(), "{err}");
    let message: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("out.json")).unwrap()).unwrap();
    let all = message.to_string();
    assert!(all.contains("No such device or address"), "{message}");
    assert_eq!(
        std::fs::read_to_string(root.join("hook.txt")).unwrap(),
        "had no terminal\n"
    );
    assert!(!all.contains("timed out"), "{message}");
}

/// Under a terminal each command leads a session of its own: what it leaves there in groups
/// of their own (job control, `set -m; cmd &`), outside its process group and no longer its
/// descendant once the shell is gone, is still stopped with it, and the result says so.
#[test]
fn job_control_leftovers_are_stopped_with_their_command() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join(".no-user-config")).unwrap();
    let marker = format!("1160.{}", std::process::id());
    let turn = jsonl(
        &[json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
        "input": {"command": format!("set -m; sleep {marker} >/dev/null 2>&1 & echo started")}})],
    );
    std::fs::write(root.join("turn.jsonl"), turn).unwrap();
    let inner = format!(
        "{} run --json --mode bypassPermissions turn.jsonl > out.json 2> err.txt",
        env!("CARGO_BIN_EXE_toolwright")
    );
    let status = Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .current_dir(&root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("`script` (util-linux) runs the binary under a pty");
    let err = std::fs::read_to_string(root.join("err.txt")).unwrap_or_default();
    assert!(status.success(), "{err}");
    let message: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("out.json")).unwrap()).unwrap();
    let text = message["content"][0]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("started\nStopped the processes this command left running"),
        "{message}"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while process_alive(&marker) {
        assert!(
            std::time::Instant::now() < deadline,
            "the job outlived its command"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn run_reads_the_sse_format_and_reports_a_truncated_stream() {
    let dir = tempfile::tempdir().unwrap();
    let sse = |events: &[Value]| -> String {
        events
            .iter()
            .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
            .collect()
    };
    let events = [
        json!({"type": "message_start", "message": {"id": "m"}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "Bash"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"echo one\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t2", "name": "Bash"}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": "}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "message_stop"}),
    ];
    let out = toolwright(&["run", "--json"], dir.path(), Some(&sse(&events)));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][0]["content"], "one");
    // Invalid JSON in input_json_delta: the block still gets a result, an input error.
    assert_eq!(message["content"][1]["is_error"], true);
    assert!(
        message["content"][1]["content"]
            .as_str()
            .unwrap()
            .contains("InputValidationError")
    );

    // Cut before message_stop: the blocks that closed still run, the exit code is 1.
    let truncated = sse(&events[..4]);
    let out = toolwright(&["run", "--json"], dir.path(), Some(&truncated));
    assert_eq!(out.status.code(), Some(1));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"].as_array().unwrap().len(), 1);
    assert!(
        text(&out.stderr).contains("truncated"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn bad_inputs_say_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let line = "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Bash\",\"input\":{\"command\":\"echo ok\"}}\n{nope\n";
    let out = toolwright(&["run"], dir.path(), Some(line));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("line 2: not valid JSON"),
        "{}",
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("✓ Bash(echo ok)"),
        "the block before the bad line still ran"
    );

    let out = toolwright(&["run", "no-such-file.jsonl"], dir.path(), None);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot read no-such-file.jsonl"));

    let out = toolwright(&["run", "--mode", "yolo", "-"], dir.path(), Some(""));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unknown permission mode `yolo`"),
        "{}",
        text(&out.stderr)
    );
    // `manual` is Claude Code's alias of `default` (2.1.200), as settings accept it.
    let out = toolwright(
        &["run", "--mode", "manual", "-"],
        dir.path(),
        Some("{\"type\":\"text\",\"text\":\"done\"}\n"),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));

    let out = toolwright(&["run", "--cwd", "/no/such/dir", "-"], dir.path(), Some(""));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("cannot use /no/such/dir as the project directory"));

    // A TMPDIR that does not exist is named, with what it is for.
    let missing = dir.path().join("no-such-tmp");
    let out = toolwright_with_env(&["run", "-"], dir.path(), Some(""), &[("TMPDIR", &missing)]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "cannot create the session's temporary directory in {} (TMPDIR names",
            missing.display()
        )),
        "{stderr}"
    );

    // Broken `--settings` stops the run instead of running without its rules, and does
    // not say that what stopped it was "ignored".
    for bad in [
        r#"{"permissions": {"deny": ["Bash(rm:*)"]}"#,
        "no-such-settings.json",
        r#"{"permissions": {"allow": ["mcp__*"]}}"#,
        r#"{"permissions": {"defaultMode": "yolo"}}"#,
    ] {
        let out = toolwright(&["run", "--settings", bad, "-"], dir.path(), Some(""));
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("bad --settings") && !text(&out.stderr).contains("ignored"),
            "{}",
            text(&out.stderr)
        );
    }

    // So does an `--mcp-config` that cannot be used, instead of running without its servers.
    for bad in [
        "{\"mcpServers\": ",
        "no-such-mcp.json",
        "{\"mcpServers\": []}",
        "{\"mcpServers\": {\"x\": {\"type\": \"http\", \"url\": \"not a url\"}}}",
        "{\"mcpServers\": {\"x\": {}}}",
    ] {
        let out = toolwright(&["run", "--mcp-config", bad, "-"], dir.path(), Some(""));
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", text(&out.stderr));
        // The command stops: no "the server is skipped", as if it ran on without it (found
        // by review).
        assert!(
            text(&out.stderr).contains("bad --mcp-config")
                && !text(&out.stderr).contains("skipped"),
            "{}",
            text(&out.stderr)
        );
    }
    // A relative `--mcp-config` file is found from where the command runs, as `--settings`
    // files are, although `--cwd` points elsewhere: its server is started.
    {
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        let marker = dir.path().join("mcp-started");
        let config = serde_json::json!({"mcpServers": {"rel": {"command": "sh",
            "args": ["-c", format!("touch '{}'", marker.display())]}}});
        std::fs::write(dir.path().join("rel-mcp.json"), config.to_string()).unwrap();
        let args = [
            "run",
            "--mcp-config",
            "rel-mcp.json",
            "--cwd",
            elsewhere.to_str().unwrap(),
            "-",
        ];
        let turn = jsonl(&[json!({"type": "text", "text": "done"})]);
        let out = toolwright(&args, dir.path(), Some(&turn));
        assert!(out.status.success(), "{}", text(&out.stderr));
        assert!(marker.exists(), "{}", text(&out.stderr));
    }

    // A relative `--settings` file is found from where the command runs, by the hooks as by
    // the permissions: its PreToolUse hook runs although `--cwd` points elsewhere.
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        dir.path().join("guard.json"),
        r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo '{\"decision\": \"block\", \"reason\": \"guarded\"}'"}]}]}}"#,
    )
    .unwrap();
    let line = r#"{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"echo ran"}}"#;
    let run_with = |settings: &str| {
        let args = [
            "run",
            "--json",
            "--mode",
            "bypassPermissions",
            "--settings",
            settings,
            "--cwd",
            project.to_str().unwrap(),
            "-",
        ];
        let out = toolwright(&args, dir.path(), Some(line));
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let stdout = run_with("guard.json");
    assert!(stdout.contains("guarded"), "{stdout}");
    // ...and by the permissions.
    std::fs::write(
        dir.path().join("deny.json"),
        r#"{"permissions": {"deny": ["Bash(echo:*)"]}}"#,
    )
    .unwrap();
    let stdout = run_with("deny.json");
    assert!(stdout.contains("denied"), "{stdout}");

    // Settings that disable bypass mode win over `--mode bypassPermissions`.
    let config = dir.path().join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("settings.json"),
        r#"{"permissions": {"disableBypassPermissionsMode": "disable"}}"#,
    )
    .unwrap();
    let out = toolwright(
        &["run", "--mode", "bypassPermissions", "-"],
        dir.path(),
        Some(""),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("bypass is disabled by settings"),
        "{}",
        text(&out.stderr)
    );
    // `permissions check` decides as such a session would.
    let out = toolwright(
        &[
            "permissions",
            "check",
            "--mode",
            "bypassPermissions",
            "Bash",
            r#"{"command":"ls"}"#,
        ],
        dir.path(),
        None,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("bypass is disabled by settings"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn tools_lists_the_build_with_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolwright(&["tools", "--json", "--schemas"], dir.path(), None);
    assert!(out.status.success());
    let tools: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for expected in [
        "Bash",
        "Glob",
        "Grep",
        "Read",
        "Edit",
        "Write",
        "NotebookEdit",
    ] {
        assert!(names.contains(&expected), "{names:?}");
    }
    let bash = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Bash")
        .unwrap();
    assert_eq!(bash["input_schema"]["required"], json!(["command"]));
    assert_eq!(bash["input_schema"]["additionalProperties"], false);
}

/// `tools` lists what a session would have: the settings' `env` turns on the tools an
/// environment variable gates (Claude Code applies that `env` to its own process).
#[test]
fn tools_answers_environment_gates_from_the_settings_env() {
    let dir = tempfile::tempdir().unwrap();
    let names = |args: &[&str]| -> Vec<String> {
        let out = toolwright(args, dir.path(), None);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let tools: Value = serde_json::from_slice(&out.stdout).unwrap();
        tools
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let plain = names(&["tools", "--json"]);
    assert!(plain.iter().any(|n| n == "TodoWrite"), "{plain:?}");
    assert!(!plain.iter().any(|n| n == "TaskCreate"), "{plain:?}");
    let settings = json!({"env": {"TOOLWRIGHT_ENABLE_TASKS": "1"}}).to_string();
    let gated = names(&["tools", "--json", "--settings", &settings]);
    assert!(gated.iter().any(|n| n == "TaskCreate"), "{gated:?}");
    assert!(!gated.iter().any(|n| n == "TodoWrite"), "{gated:?}");
    // A tool-wide deny rule removes a tool, as in a session; simple mode leaves Bash, Read
    // and Edit; with tool search off there is no ToolSearch.
    let denied = json!({"permissions": {"deny": ["WebFetch"]}}).to_string();
    let listed = names(&["tools", "--json", "--settings", &denied]);
    assert!(!listed.iter().any(|n| n == "WebFetch"), "{listed:?}");
    assert!(plain.iter().any(|n| n == "WebFetch"), "{plain:?}");
    let simple = json!({"env": {"CLAUDE_CODE_SIMPLE": "1"}}).to_string();
    assert_eq!(
        names(&["tools", "--json", "--settings", &simple]),
        ["Bash", "Read", "Edit"]
    );
    assert!(plain.iter().any(|n| n == "ToolSearch"), "{plain:?}");
    let off = json!({"env": {"ENABLE_TOOL_SEARCH": "false"}}).to_string();
    let listed = names(&["tools", "--json", "--settings", &off]);
    assert!(!listed.iter().any(|n| n == "ToolSearch"), "{listed:?}");
    // `run` then answers a ToolSearch call as the agent loop would: no such tool.
    let call = json!({"type": "tool_use", "id": "t1", "name": "ToolSearch",
        "input": {"query": "select:Read"}});
    let out = toolwright(
        &["run", "--json", "--settings", &off, "-"],
        dir.path(),
        Some(&format!("{call}\n")),
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        message["content"][0]["content"],
        "<tool_use_error>Error: No such tool available: ToolSearch</tool_use_error>"
    );
    // In `auto` mode, below its threshold (the built-in tools alone), tool search is off
    // too, as for the agent loop's requests.
    let auto = json!({"env": {"ENABLE_TOOL_SEARCH": "auto"}}).to_string();
    let listed = names(&["tools", "--json", "--settings", &auto]);
    assert!(!listed.iter().any(|n| n == "ToolSearch"), "{listed:?}");
    let out = toolwright(
        &["run", "--json", "--settings", &auto, "-"],
        dir.path(),
        Some(&format!("{call}\n")),
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        message["content"][0]["content"],
        "<tool_use_error>Error: No such tool available: ToolSearch</tool_use_error>"
    );
    // With tool search on, a deferred tool's call whose input fails the schema is told
    // that its schema was not sent, as the agent loop tells it (its request did not carry
    // the schema), in `--json` and in the text view alike.
    let call = json!({"type": "tool_use", "id": "t2", "name": "WebFetch",
        "input": {"url": "http://127.0.0.1:1/"}});
    let out = toolwright(
        &["run", "--json", "-"],
        dir.path(),
        Some(&format!("{call}\n")),
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let said = message["content"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        said.contains("The required parameter `prompt` is missing")
            && said.contains("call ToolSearch with query \"select:WebFetch\"")
            && said.ends_with("</tool_use_error>"),
        "{said}"
    );
    let out = toolwright(&["run", "-"], dir.path(), Some(&format!("{call}\n")));
    assert!(
        text(&out.stdout).contains("select:WebFetch"),
        "{}",
        text(&out.stdout)
    );
    // Settings that cannot be used stop the command, as they stop a session.
    for bad in [
        &["tools", "--settings", "missing.json"][..],
        &["tools", "--settings", "{\"env\": "][..],
        &["tools", "--cwd", "/no/such/dir"][..],
    ] {
        let out = toolwright(bad, dir.path(), None);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(text(&out.stderr).contains("toolwright: "), "{bad:?}");
    }
}

/// The settings' `env` reaches the tools, but not where the settings themselves are read
/// from: a user settings file that sets `CLAUDE_CONFIG_DIR` still has its rules applied.
#[test]
fn settings_env_does_not_move_the_settings_it_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("settings.json"),
        json!({"env": {"CLAUDE_CONFIG_DIR": root.join("elsewhere"), "FROM_SETTINGS": "yes"},
               "permissions": {"allow": ["Bash(touch:*)", "Bash(echo:*)"]}})
        .to_string(),
    )
    .unwrap();
    // The trust record there trusts the folder, whose own settings allow `mkdir`.
    std::fs::write(
        config.join(".claude.json"),
        json!({"projects": {root.display().to_string(): {"hasTrustDialogAccepted": true}}})
            .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Bash(mkdir:*)"]}}).to_string(),
    )
    .unwrap();
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "touch made.txt"}}),
        json!({"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "echo $FROM_SETTINGS $CLAUDE_CONFIG_DIR"}}),
        json!({"type": "tool_use", "id": "toolu_3", "name": "Bash", "input": {"command": "mkdir made_dir"}}),
    ]);
    let out = toolwright(&["run", "--json", "-"], &root, Some(&turn));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][0].get("is_error"), None, "{message}");
    assert!(root.join("made.txt").exists(), "{message}");
    // The tools see the settings' env.
    assert_eq!(
        message["content"][1]["content"],
        format!("yes {}", root.join("elsewhere").display()),
        "{message}"
    );
    assert_eq!(message["content"][2].get("is_error"), None, "{message}");
    assert!(root.join("made_dir").is_dir());
}

/// A persisted result lands in the session's own directory, which only its user can enter.
#[test]
fn persisted_results_live_in_a_private_session_directory() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let turn = jsonl(
        &[json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
        "input": {"command": "seq 1 40000"}})],
    );
    let out = toolwright(&["run", "--json", "-"], &root, Some(&turn));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let content = message["content"][0]["content"].as_str().unwrap();
    let saved = content
        .split("Full output saved to: ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .unwrap_or_else(|| panic!("not persisted: {content}"));
    let saved = std::path::Path::new(saved);
    assert!(saved.is_file());
    let session_dir = saved.parent().unwrap().parent().unwrap();
    let mode = std::fs::metadata(session_dir).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{}", session_dir.display());
    std::fs::remove_dir_all(session_dir).unwrap();
}

/// Hooks see a file tool's path as the tool will use it (Claude Code's
/// `backfillObservableInput`): absolute, `~` expanded, `..` collapsed. A protector guarding
/// `$HOME/.ssh/*` blocks `~/.ssh/authorized_keys`, and a logger sees `<root>/ok.txt` for
/// `<root>/sub/../ok.txt`; the call itself still gets the model's input.
#[test]
fn hooks_see_the_absolute_path_a_file_tool_uses() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let home = root.join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    let log = root.join("seen.log");
    let protect = format!(
        r#"fp=$(jq -r .tool_input.file_path); echo "pre $fp" >> '{log}'; case "$fp" in "$HOME"/.ssh/*) echo "protected: $fp" >&2; exit 2;; esac"#,
        log = log.display()
    );
    let after = format!(
        r#"jq -r '"post " + .tool_input.file_path' >> '{}'"#,
        log.display()
    );
    std::fs::write(
        config.join("settings.json"),
        json!({"hooks": {
            "PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": protect}]}],
            "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": after}]}]
        }})
        .to_string(),
    )
    .unwrap();
    let write = |id: &str, path: &str| json!({"type": "tool_use", "id": id, "name": "Write", "input": {"file_path": path, "content": "x\n"}});
    let dotted = format!("{}/sub/../ok.txt", root.display());
    let turn = jsonl(&[
        write("toolu_1", "~/.ssh/authorized_keys"),
        write("toolu_2", &dotted),
    ]);
    let out = toolwright_with_env(
        &["run", "--json", "--mode", "bypassPermissions", "-"],
        &root,
        Some(&turn),
        &[("HOME", &home)],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let blocked = message["content"][0]["content"].to_string();
    assert!(
        blocked.contains(&format!(
            "protected: {}",
            home.join(".ssh/authorized_keys").display()
        )),
        "{message}"
    );
    assert!(!home.join(".ssh/authorized_keys").exists());
    assert_eq!(message["content"][1]["is_error"], Value::Null, "{message}");
    assert_eq!(std::fs::read_to_string(root.join("ok.txt")).unwrap(), "x\n");
    let ok = root.join("ok.txt").display().to_string();
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        format!(
            "pre {}\npre {ok}\npost {ok}\n",
            home.join(".ssh/authorized_keys").display()
        )
    );
}

/// `BASH_DEFAULT_TIMEOUT_MS` and `BASH_MAX_TIMEOUT_MS`, set in the settings' `env` as users
/// of Claude Code set them, size Bash's default timeout and its ceiling.
#[test]
fn bash_timeouts_follow_the_settings_env() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("settings.json"),
        json!({
            "env": {"BASH_DEFAULT_TIMEOUT_MS": "300", "BASH_MAX_TIMEOUT_MS": "400"},
            "permissions": {"allow": ["Bash"]},
        })
        .to_string(),
    )
    .unwrap();
    // One call a run: a Bash failure would cancel the calls beside it.
    let run = |input: Value| {
        let turn =
            jsonl(&[json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": input})]);
        let out = toolwright(&["run", "--json", "-"], &root, Some(&turn));
        assert!(out.status.success(), "{}", text(&out.stderr));
        let message: Value = serde_json::from_slice(&out.stdout).unwrap();
        message["content"][0].clone()
    };
    // No timeout: the default from the settings; above the ceiling from the settings:
    // reduced to it (either 30 s sleep would have printed its text otherwise).
    for input in [
        json!({"command": "sleep 30; echo not-applied"}),
        json!({"command": "sleep 30; echo not-applied", "timeout": 600000}),
    ] {
        let result = run(input);
        assert_eq!(result["is_error"], true, "{result}");
        assert!(
            result["content"].to_string().contains("Command timed out"),
            "{result}"
        );
    }
    // Within it: as asked.
    assert_eq!(
        run(json!({"command": "echo quick", "timeout": 350}))["content"],
        "quick"
    );
}

/// `BASH_MAX_OUTPUT_LENGTH` (the settings' `env` sets it too) is the longest Bash output the
/// model sees whole, as in Claude Code: 38 KB of `seq` is shown inline under a limit of
/// 100,000 and saved to a file under the default 30,000.
#[test]
fn bash_output_length_follows_the_settings_env() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    let turn = jsonl(
        &[json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
        "input": {"command": "seq 1 8000"}})],
    );
    let run = |settings: &Value| {
        std::fs::write(config.join("settings.json"), settings.to_string()).unwrap();
        let out = toolwright(&["run", "--json", "-"], &root, Some(&turn));
        assert!(out.status.success(), "{}", text(&out.stderr));
        let message: Value = serde_json::from_slice(&out.stdout).unwrap();
        message["content"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let allow = json!({"permissions": {"allow": ["Bash"]}});
    let persisted = run(&allow);
    assert!(persisted.contains("<persisted-output>"), "{persisted}");
    let inline = run(&json!({"permissions": {"allow": ["Bash"]},
        "env": {"BASH_MAX_OUTPUT_LENGTH": "100000"}}));
    assert!(!inline.contains("persisted-output"), "{}", &inline[..200]);
    assert!(
        inline.ends_with("7999\n8000"),
        "{}",
        &inline[inline.len() - 50..]
    );
}

/// A broken settings file is reported once, though permissions and hooks both read it.
#[test]
fn a_broken_settings_file_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("settings.json"), "{\"env\": ").unwrap();
    let line = json!({"type": "tool_use", "id": "t1", "name": "Bash",
        "input": {"command": "echo ran"}})
    .to_string();
    let out = toolwright(
        &["run", "--json", "--mode", "bypassPermissions", "-"],
        &root,
        Some(&line),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    let shown = config.join("settings.json").display().to_string();
    assert_eq!(stderr.matches(&shown).count(), 1, "{stderr}");
}

/// `toolwright run` (bypass mode) on one Bash call of `command` in `dir`, returned once a
/// process whose command line holds `marker` runs.
fn run_bash_until_it_runs(dir: &Path, command: &str, marker: &str) -> std::process::Child {
    let input = dir.join("turn.jsonl");
    std::fs::write(
        &input,
        jsonl(&[
            json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}}),
        ]),
    )
    .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["run", "--json", "--mode", "bypassPermissions"])
        .arg(&input)
        .current_dir(dir)
        .env("CLAUDE_CONFIG_DIR", dir.join(".no-user-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !process_alive(marker) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child
}

/// SIGTERM and Ctrl-C end `toolwright run` the way they end `agent`: its commands (which
/// run in sessions of their own, out of the terminal's reach) are killed, and it exits with
/// 128 + the signal's number.
#[test]
fn a_signal_ends_run_and_its_commands() {
    for (signal, code, seconds) in [("-TERM", 143, 1001), ("-INT", 130, 1002)] {
        let dir = tempfile::tempdir().unwrap();
        let marker = format!("{seconds}.{}", std::process::id());
        let mut child = run_bash_until_it_runs(dir.path(), &format!("sleep {marker}"), &marker);
        let _ = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status();
        let status = wait_at_most(
            &mut child,
            std::time::Duration::from_secs(30),
            "the run did not end on the signal",
        );
        assert_eq!(status.code(), Some(code), "{signal}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while process_alive(&marker) {
            assert!(
                std::time::Instant::now() < deadline,
                "the command outlived the run ({signal})"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        // The next user message says that the user interrupted, as the agent loop's does.
        let out = child.wait_with_output().unwrap();
        let message: Value = serde_json::from_slice(&out.stdout).unwrap();
        let content = message["content"].as_array().unwrap();
        assert_eq!(content[0]["is_error"], true, "{message}");
        assert_eq!(
            content.last().unwrap()["text"],
            "[Request interrupted by user for tool use]",
            "{message}"
        );
    }
}

/// A signal while PostToolBatch hooks run ends the run as one during the calls does: the
/// hook's process group is killed, the exit status is the signal's, and the message says
/// the user interrupted.
#[test]
fn a_signal_during_post_tool_batch_hooks_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("1003.{}", std::process::id());
    // In a file: the marker must be on no command line but the hook's.
    let settings = dir.path().join("settings.json");
    std::fs::write(
        &settings,
        json!({"hooks": {"PostToolBatch": [{"hooks": [
            {"type": "command", "command": format!("sleep {marker}")}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let input = dir.path().join("turn.jsonl");
    std::fs::write(
        &input,
        jsonl(&[
            json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "echo ran"}}),
        ]),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["run", "--json", "--mode", "bypassPermissions", "--settings"])
        .arg(&settings)
        .arg(&input)
        .current_dir(dir.path())
        .env("CLAUDE_CONFIG_DIR", dir.path().join(".no-user-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !process_alive(&marker) {
        assert!(
            std::time::Instant::now() < deadline,
            "the hook never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let status = wait_at_most(
        &mut child,
        std::time::Duration::from_secs(30),
        "the run did not end on the signal",
    );
    assert_eq!(status.code(), Some(130));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while process_alive(&marker) {
        assert!(
            std::time::Instant::now() < deadline,
            "the hook outlived the run"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][0]["content"], "ran", "{message}");
    assert_eq!(
        message["content"][1]["text"], "[Request interrupted by user for tool use]",
        "{message}"
    );
}

/// A live SSE stream is over at its `message_stop`, whether or not the connection is (a
/// gateway may keep it open, or send `data: [DONE]` first): the run ends then.
#[test]
fn a_live_stream_ends_at_message_stop() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
    let sse = [
        event("message_start", json!({"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant", "content": [], "usage": {"input_tokens": 1, "output_tokens": 1}}})),
        event("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}})),
        event("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"echo live\"}"}})),
        event("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        event("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}})),
        event("message_stop", json!({"type": "message_stop"})),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["run", "--json", "--mode", "bypassPermissions"])
        .current_dir(dir.path())
        .env("CLAUDE_CONFIG_DIR", dir.path().join(".no-user-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(sse.as_bytes()).unwrap();
    stdin.flush().unwrap();
    // Standard input stays open.
    let status = wait_at_most(
        &mut child,
        std::time::Duration::from_secs(30),
        "the run waited for the connection to close after message_stop",
    );
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][0]["content"], "live", "{message}");
}

/// A response without tool_use blocks has no next user message: `--json` prints none (a
/// message without content, which the API refuses), and the run says why.
#[test]
fn a_response_without_calls_prints_no_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolwright(
        &["run", "--json", "-"],
        dir.path(),
        Some(&jsonl(&[json!({"type": "text", "text": "Nothing to do."})])),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "");
    assert!(
        text(&out.stderr).contains("no tool_use blocks"),
        "{}",
        text(&out.stderr)
    );
    // An input with nothing in it is no response (`curl … | toolwright run` whose request
    // failed before its first byte): exit 1, said, not a turn that ended without calls.
    for empty in ["", "\n\n", "\u{feff}\r\n  \n"] {
        let out = toolwright(&["run", "--json", "-"], dir.path(), Some(empty));
        assert_eq!(
            out.status.code(),
            Some(1),
            "{empty:?}: {}",
            text(&out.stderr)
        );
        assert_eq!(text(&out.stdout), "");
        assert!(
            text(&out.stderr)
                .contains("the input is malformed: it is empty (no model response was read)"),
            "{empty:?}: {}",
            text(&out.stderr)
        );
    }
}

/// Ctrl-C in the middle of the demo ends it through its destructors: its temporary project
/// is removed (killed by the signal, it stayed behind).
#[test]
fn ctrl_c_ends_the_demo_and_removes_its_project() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .arg("demo")
        .current_dir(dir.path())
        .env("CLAUDE_CONFIG_DIR", dir.path().join(".no-user-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut project = None;
    let mut line = String::new();
    while project.is_none() {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "no project line");
        project = line
            .trim()
            .strip_prefix("project:")
            .and_then(|rest| rest.split_whitespace().next())
            .map(std::path::PathBuf::from);
    }
    let project = project.unwrap();
    assert!(project.exists());
    // The replay takes about a second from here.
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    // Keep reading, so the demo never blocks on a full pipe.
    let reader = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut rest);
    });
    let status = wait_at_most(
        &mut child,
        std::time::Duration::from_secs(30),
        "the demo did not end on Ctrl-C",
    );
    let _ = reader.join();
    // 130, or 0 if the replay was already over when the signal came.
    assert!(matches!(status.code(), Some(130 | 0)), "{status:?}");
    assert!(!project.exists(), "{} was left behind", project.display());
}

/// Runs `command` (its output piped), sends it SIGINT once `started` exists (the MCP server
/// it opens has started), and returns what it printed once it ended (within 10 s).
fn interrupted_once_started(command: &mut Command, started: &Path) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until("the server never started", || started.exists());
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    wait_at_most(
        &mut child,
        std::time::Duration::from_secs(10),
        "Ctrl-C did not end the run while its session opened",
    );
    child.wait_with_output().unwrap()
}

/// Ctrl-C while the session still opens (an MCP server that never answers `initialize`, with
/// half a minute to do so) ends the run there, with 130, the server gone with it.
#[test]
fn ctrl_c_while_the_session_opens_ends_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join(".claude.json"),
        json!({"projects": {root.display().to_string(): {"hasTrustDialogAccepted": true}}})
            .to_string(),
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        json!({"enableAllProjectMcpServers": true}).to_string(),
    )
    .unwrap();
    let marker = format!("1003.{}", std::process::id());
    let started = root.join("server-started");
    let server = json!({"mcpServers": {"mute": {"command": "sh", "args": ["-c", format!("touch {}; exec sleep {marker}", started.display())]}}});
    std::fs::write(root.join(".mcp.json"), server.to_string()).unwrap();
    let input = root.join("turn.jsonl");
    std::fs::write(
        &input,
        jsonl(&[json!({"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": input.display().to_string()}})]),
    )
    .unwrap();
    let out = interrupted_once_started(
        Command::new(env!("CARGO_BIN_EXE_toolwright"))
            .args(["run", "--json"])
            .arg(&input)
            .current_dir(&root)
            .env("CLAUDE_CONFIG_DIR", &config)
            .env("MCP_TIMEOUT", "30000"),
        &started,
    );
    assert_eq!(out.status.code(), Some(130));
    // Every block still gets its result (none ran), and the run says why it ended.
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    let message: Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout:?}"));
    // Its one result, then the interrupt text (as the agent loop adds it).
    assert_eq!(
        message["content"].as_array().map(Vec::len),
        Some(2),
        "{message}"
    );
    assert_eq!(message["content"][0]["tool_use_id"], "t1");
    assert_eq!(message["content"][0]["is_error"], true);
    assert_eq!(
        message["content"][1]["text"],
        "[Request interrupted by user for tool use]"
    );
    assert!(stderr.contains("cancelled by a signal"), "{stderr}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while process_alive(&marker) {
        assert!(
            std::time::Instant::now() < deadline,
            "the server outlived the run"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // `--strict-mcp-config`: only the servers given on the command line; the project's is
    // not started at all.
    std::fs::remove_file(&started).ok();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args([
            "run",
            "--json",
            "--strict-mcp-config",
            "--mcp-config",
            r#"{"mcpServers": {}}"#,
        ])
        .arg(&input)
        .current_dir(&root)
        .env("CLAUDE_CONFIG_DIR", &config)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!started.exists(), "the project's server was started");
}

/// A second signal exits at once, but not before killing what the run started: a command
/// that ignores SIGTERM, still in its grace period after the first signal, does not outlive
/// the run.
#[test]
fn a_second_signal_kills_a_command_still_in_its_grace() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("1004.{}", std::process::id());
    let mut child = run_bash_until_it_runs(
        dir.path(),
        &format!("trap '' TERM; sleep {marker}"),
        &marker,
    );
    let pid = child.id().to_string();
    // Pressed until the run ends (two presses close together may count as one).
    let mut status = None;
    for _ in 0..10 {
        let _ = Command::new("kill").args(["-INT", &pid]).status();
        std::thread::sleep(std::time::Duration::from_millis(100));
        status = child.try_wait().unwrap();
        if status.is_some() {
            break;
        }
    }
    let status = match status {
        Some(s) => s,
        None => wait_at_most(
            &mut child,
            std::time::Duration::from_secs(10),
            "the run did not end on the signals",
        ),
    };
    assert_eq!(status.code(), Some(130));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while process_alive(&marker) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command outlived the run"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// One Ctrl-C delivered twice a few milliseconds apart (`timeout`, `make` or a script that
/// forwards it to the process and its group) is one press: the run ends as after one, with
/// every block's result printed, instead of exiting at once with none.
#[test]
fn the_same_signal_twice_at_once_is_one_press() {
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("1005.{}", std::process::id());
    // A command that outlives SIGTERM keeps the run going through its grace period, when
    // the second delivery used to end the run on the spot.
    let child = run_bash_until_it_runs(
        dir.path(),
        &format!("trap '' TERM; sleep {marker}"),
        &marker,
    );
    let pid = child.id().to_string();
    let _ = Command::new("sh")
        .args(["-c", "kill -INT $0; sleep 0.005; kill -INT $0", &pid])
        .status();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {:?} / {}", text(&out.stdout), text(&out.stderr)));
    assert_eq!(message["content"][0]["tool_use_id"], "t1", "{message}");
}

/// A background command still running when `run` ends is stopped with it, and `run` says
/// so (its result told the model it runs), naming where its output is.
#[test]
fn run_says_which_background_commands_it_stops() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("turn.jsonl");
    std::fs::write(
        &input,
        jsonl(&[
            json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sleep 30", "run_in_background": true}}),
        ]),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["run", "--mode", "bypassPermissions"])
        .arg(&input)
        .current_dir(dir.path())
        .env("CLAUDE_CONFIG_DIR", dir.path().join(".no-user-config"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("background command b")
            && stderr.contains("(sleep 30) is stopped as the run ends")
            && stderr.contains(".output"),
        "{stderr}"
    );

    // A signal stops them too, and the run says so as well.
    let marker = format!("1004.{}", std::process::id());
    std::fs::write(
        &input,
        jsonl(&[
            json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "sleep 31", "run_in_background": true}}),
            json!({"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": format!("sleep {marker}")}}),
        ]),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["run", "--mode", "bypassPermissions"])
        .arg(&input)
        .current_dir(dir.path())
        .env("CLAUDE_CONFIG_DIR", dir.path().join(".no-user-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !process_alive(&marker) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    wait_at_most(
        &mut child,
        std::time::Duration::from_secs(30),
        "the run did not end on the signal",
    );
    let out = child.wait_with_output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("(sleep 31) is stopped as the run ends"),
        "{stderr}"
    );
}

/// Standard input is a live stream: each block runs as soon as its line is complete, while
/// the rest of the response is still to come (`curl ... | toolwright run`), and its result
/// is printed then. The test waits for the first result before writing the second block:
/// a run that read its input to the end first would never print it.
#[test]
fn run_runs_blocks_from_standard_input_as_they_arrive() {
    use std::io::{BufRead as _, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["run", "--mode", "bypassPermissions"])
        .current_dir(dir.path())
        .env("CLAUDE_CONFIG_DIR", dir.path().join(".no-user-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if lines_tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let block = |id: &str, word: &str| {
        format!(
            "{}\n",
            json!({"type": "tool_use", "id": id, "name": "Bash", "input": {"command": format!("echo {word}")}})
        )
    };
    stdin.write_all(block("t1", "first").as_bytes()).unwrap();
    stdin.flush().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut seen = Vec::new();
    while !seen.iter().any(|l: &String| l.trim() == "first") {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("no result for the first block while the input stays open: {seen:?}"),
        }
    }
    assert!(seen.iter().any(|l| l.contains("[t1]")), "{seen:?}");
    // The rest of the response, then its end.
    stdin.write_all(block("t2", "second").as_bytes()).unwrap();
    drop(stdin);
    let status = wait_at_most(
        &mut child,
        std::time::Duration::from_secs(60),
        "the run did not end with its input",
    );
    assert!(status.success(), "{status:?}");
    let rest: Vec<String> = lines.iter().collect();
    assert!(
        rest.iter().any(|l| l.contains("[t2]")) && rest.iter().any(|l| l.trim() == "second"),
        "{rest:?}"
    );
}

/// Standard input that cannot be read at all (a directory) is an error with exit 2 and no
/// message on stdout, as a file that cannot be read is: `--json` prints no user message
/// without tool_results.
#[test]
fn unreadable_standard_input_prints_no_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["run", "--json"])
        .current_dir(dir.path())
        .env("CLAUDE_CONFIG_DIR", dir.path().join(".no-user-config"))
        .stdin(std::fs::File::open(dir.path()).unwrap())
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot read standard input"), "{stderr}");
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
}

/// Input that is not valid UTF-8 is read with U+FFFD for the bad bytes, with a warning: the
/// blocks around them still run (the whole input used to be refused, nothing run).
#[test]
fn run_reads_input_that_is_not_utf8_with_replacement_characters() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    let good = json!({"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": dir.path().join("a.txt")}});
    let mut bytes = format!("{good}\n").into_bytes();
    bytes.extend_from_slice(b"{\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"Read\",\"input\":{\"file_path\":\"/nowhere/\xff.txt\"}}\n");
    let input = dir.path().join("turn.jsonl");
    std::fs::write(&input, bytes).unwrap();
    let out = toolwright(
        &["run", "--json", input.to_str().unwrap()],
        dir.path(),
        None,
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("is not valid UTF-8"), "{stderr}");
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        message["content"][0]["content"]
            .as_str()
            .unwrap()
            .contains("alpha"),
        "{message}"
    );
    assert_eq!(message["content"][1]["tool_use_id"], "t2", "{message}");
}

/// Parallel Reads of one file: a Read answers "File unchanged since last read" only when an
/// earlier result in the message shows the file (the executor numbers the calls before their
/// tasks start, and spawned tasks may begin in any order). Run many times, as the race was
/// rare.
#[test]
fn parallel_reads_of_one_file_never_point_at_a_later_result() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a.txt");
    std::fs::write(&file, "alpha\nbeta\n").unwrap();
    let blocks: Vec<Value> = (1..=6)
        .map(|i| json!({"type": "tool_use", "id": format!("t{i}"), "name": "Read", "input": {"file_path": file, "limit": 2}}))
        .collect();
    let input = dir.path().join("turn.jsonl");
    std::fs::write(&input, jsonl(&blocks)).unwrap();
    for round in 0..150 {
        let out = toolwright(
            &["run", "--json", input.to_str().unwrap()],
            dir.path(),
            None,
        );
        let message: Value = serde_json::from_slice(&out.stdout).unwrap();
        let texts: Vec<&str> = message["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["content"].as_str().unwrap_or_default())
            .collect();
        assert!(texts[0].contains("alpha"), "round {round}: {texts:?}");
        for (i, text) in texts.iter().enumerate() {
            if text.starts_with("File unchanged") {
                assert!(
                    texts[..i].iter().any(|t| t.contains("alpha")),
                    "round {round}: {texts:?}"
                );
            }
        }
    }
}

/// A bare `Edit` deny stops Write even where a PreToolUse hook allows every call, and a bare
/// `Read` deny stops Glob and Grep without a `path` (a search of the working directory):
/// the session does not offer them at all, so a call of one is a call of a tool that does
/// not exist. (The engine's own check of a call, after a hook's allow too, sees the family:
/// `crates/tool-perms/tests/review/review27_paths.rs`.)
#[test]
fn bare_family_denies_hold_after_a_hook_allow_and_without_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    let allow = r#"printf '%s' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'"#;
    let settings = json!({"permissions": {"deny": ["Edit", "Read"]},
        "hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": allow}]}]}});
    std::fs::write(config.join("settings.json"), settings.to_string()).unwrap();
    std::fs::write(root.join("secret.txt"), "s3cr3t\n").unwrap();
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": root.join("out.txt"), "content": "x"}}),
        json!({"type": "tool_use", "id": "t2", "name": "Glob", "input": {"pattern": "*"}}),
        json!({"type": "tool_use", "id": "t3", "name": "Grep", "input": {"pattern": "s3cr3t"}}),
    ]);
    let out = toolwright(&["run", "--json", "-"], &root, Some(&turn));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!root.join("out.txt").exists(), "{message}");
    for (i, tool) in ["Write", "Glob", "Grep"].iter().enumerate() {
        let result = message["content"][i]["content"].to_string();
        assert!(
            result.contains(&format!("No such tool available: {tool}")),
            "{tool}: {result}"
        );
        assert_eq!(message["content"][i]["is_error"], true, "{tool}: {result}");
    }
}

/// Results that cannot be written (a full disk) are no success: the run says so and exits
/// 1, where it exited 0 with nothing delivered.
#[test]
fn run_fails_when_its_output_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    let input = dir.path().join("turn.jsonl");
    std::fs::write(
        &input,
        jsonl(&[
            json!({"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": dir.path().join("a.txt")}}),
        ]),
    )
    .unwrap();
    for json_mode in [true, false] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolwright"));
        cmd.arg("run");
        if json_mode {
            cmd.arg("--json");
        }
        let out = cmd
            .arg(&input)
            .current_dir(dir.path())
            .env("CLAUDE_CONFIG_DIR", dir.path().join(".no-user-config"))
            .stdin(Stdio::null())
            .stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("cannot write to standard output") && stderr.contains("No space left"),
            "{stderr}"
        );
    }
}

/// Writes `settings` as the user settings of a test project in `root` (the tests'
/// `CLAUDE_CONFIG_DIR`).
fn user_settings(root: &Path, settings: &Value) {
    let config = root.join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("settings.json"), settings.to_string()).unwrap();
}

/// What hooks add for the model (a PostToolUse hook's additionalContext) follows the
/// tool_results in `run --json`, as the agent loop sends it; a hook's systemMessage is the
/// user's, on stderr. The text mode shows the context under the call.
#[test]
fn run_json_forwards_hook_context_after_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let hook = r#"printf '%s' '{"systemMessage": "note for the user", "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "remember the lint step"}}'"#;
    user_settings(
        &root,
        &json!({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook}]}]}}),
    );
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "echo one"}}),
        json!({"type": "tool_use", "id": "toolu_2", "name": "Glob", "input": {"pattern": "*.nothing"}}),
    ]);
    let args = ["run", "--json", "--mode", "bypassPermissions", "-"];
    let out = toolwright(&args, &root, Some(&turn));
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let content = message["content"].as_array().unwrap();
    assert_eq!(content.len(), 3, "{message}");
    assert_eq!(content[0]["type"], "tool_result", "{message}");
    assert_eq!(content[0]["content"], "one", "{message}");
    assert_eq!(content[1]["type"], "tool_result", "{message}");
    assert_eq!(content[1]["tool_use_id"], "toolu_2", "{message}");
    assert_eq!(content[2]["type"], "text", "{message}");
    assert!(
        content[2]["text"]
            .as_str()
            .unwrap()
            .contains("remember the lint step"),
        "{message}"
    );
    assert!(stderr.contains("note for the user"), "{stderr}");
    assert!(
        !text(&out.stdout).contains("note for the user"),
        "{message}"
    );

    let out = toolwright(
        &["run", "--mode", "bypassPermissions", "-"],
        &root,
        Some(&turn),
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("remember the lint step"), "{stdout}");
}

/// The Skill tool's result only says the skill is launching: its body travels as a message
/// after the result, and `run --json` carries it.
#[test]
fn run_json_carries_a_skills_body() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    user_settings(&root, &json!({}));
    let skill = root.join(".claude/skills/release-notes");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\ndescription: Writes release notes\n---\nCollect the merged changes and group them by area.\n",
    )
    .unwrap();
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Skill", "input": {"skill": "release-notes"}}),
    ]);
    let args = ["run", "--json", "--mode", "bypassPermissions", "-"];
    let out = toolwright(&args, &root, Some(&turn));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let content = message["content"].as_array().unwrap();
    assert_eq!(content[0]["type"], "tool_result", "{message}");
    assert_eq!(content[0].get("is_error"), None, "{message}");
    assert!(
        content[1..].iter().any(|b| b["type"] == "text"
            && b["text"]
                .as_str()
                .unwrap()
                .contains("Collect the merged changes and group them by area.")),
        "{message}"
    );
}

/// A hook's `continue: false` stops the turn: the model's message says so after the
/// results, and stderr tells the user. As in the agent loop, the other calls of the same
/// response still run (the agent makes no further request after it).
#[test]
fn run_reports_a_hook_stopping_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let hook = r#"printf '%s' '{"continue": false, "stopReason": "build is red"}'"#;
    user_settings(
        &root,
        &json!({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook}]}]}}),
    );
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "echo one"}}),
        json!({"type": "tool_use", "id": "toolu_2", "name": "Glob", "input": {"pattern": "*.nothing"}}),
    ]);
    let args = ["run", "--json", "--mode", "bypassPermissions", "-"];
    let out = toolwright(&args, &root, Some(&turn));
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let content = message["content"].as_array().unwrap();
    assert_eq!(content[0]["content"], "one", "{message}");
    assert_eq!(content[1]["tool_use_id"], "toolu_2", "{message}");
    assert!(
        content[2..].iter().any(|b| b["type"] == "text"
            && b["text"].as_str().unwrap()
                == "<system-reminder>\nPostToolUse:Bash hook stopped continuation: build is red\n</system-reminder>"),
        "{message}"
    );
    assert!(
        stderr.contains("stopped the turn") && stderr.contains("build is red"),
        "{stderr}"
    );
}

/// A saved non-streaming Messages API response (one JSON document, compact or pretty)
/// is a recorded turn: its tool_use blocks run.
#[test]
fn run_replays_a_non_streaming_message() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let response = json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "echo one"}},
            {"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "echo two"}},
        ],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 20},
    });
    for (name, body) in [
        (
            "pretty.json",
            serde_json::to_string_pretty(&response).unwrap(),
        ),
        ("compact.json", response.to_string()),
    ] {
        let file = root.join(name);
        std::fs::write(&file, body).unwrap();
        let out = toolwright(
            &[
                "run",
                "--json",
                "--mode",
                "bypassPermissions",
                file.to_str().unwrap(),
            ],
            &root,
            None,
        );
        assert!(out.status.success(), "{name}: {}", text(&out.stderr));
        let message: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            message,
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "one"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "two"},
            ]}),
            "{name}"
        );
    }
}

/// An SSE recording saved with a UTF-8 byte order mark is still SSE.
#[test]
fn run_reads_an_sse_recording_with_a_bom() {
    let dir = tempfile::tempdir().unwrap();
    let events = [
        json!({"type": "message_start", "message": {"id": "m"}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t1", "name": "Bash"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"echo one\"}"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_stop"}),
    ];
    let sse: String = events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect();
    let file = dir.path().join("turn.sse");
    std::fs::write(&file, format!("\u{feff}{sse}")).unwrap();
    let out = toolwright(&["run", "--json", file.to_str().unwrap()], dir.path(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        message,
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "one"},
        ]})
    );
}

/// What a background (`async: true`) hook delivered during the replay follows the calls'
/// texts in `run --json`, as an agent sends it with its next request.
#[test]
fn run_json_carries_what_a_background_hook_delivered() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let hook = r#"case "$(cat)" in *'"Glob"'*) printf '%s' '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "late note: the glob was checked"}}'; touch "$CLAUDE_PROJECT_DIR/hook-done";; esac"#;
    user_settings(
        &root,
        &json!({"hooks": {"PostToolUse": [{"hooks": [
            {"type": "command", "command": hook, "async": true}
        ]}]}}),
    );
    // The Bash call waits until the hook is done, then a second more for it to be collected.
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Glob", "input": {"pattern": "*.txt"}}),
        json!({"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {
            "command": "for i in $(seq 100); do [ -f hook-done ] && break; sleep 0.1; done; sleep 1; echo waited"}}),
    ]);
    let out = toolwright(
        &["run", "--json", "--mode", "bypassPermissions", "-"],
        &root,
        Some(&turn),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let texts: Vec<&str> = message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "text")
        .filter_map(|b| b["text"].as_str())
        .collect();
    assert_eq!(
        texts
            .iter()
            .filter(|t| t.contains("late note: the glob was checked"))
            .count(),
        1,
        "{message}"
    );
}

/// `tools` reads each tool's flags on the smallest input its schema accepts, as `serve`
/// reads its annotations: Read, Glob and Grep are read-only and run in parallel; Bash, whose
/// flags depend on its command, gets the cautious answer.
#[test]
fn tools_reports_the_flags_of_a_real_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolwright(&["tools", "--json"], dir.path(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let flags = |name: &str| {
        let tool = list
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is listed"));
        (tool["read_only"].clone(), tool["concurrency_safe"].clone())
    };
    for name in ["Read", "Glob", "Grep", "TaskOutput"] {
        assert_eq!(flags(name), (json!(true), json!(true)), "{name}");
    }
    for name in ["Bash", "Edit", "Write"] {
        assert_eq!(flags(name), (json!(false), json!(false)), "{name}");
    }
    // The table shows one line per tool; a flag that no input sets is `no`, one that
    // depends on the input `by input`.
    let out = toolwright(&["tools"], dir.path(), None);
    let table = text(&out.stdout);
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_default()
    };
    assert_eq!(row("Write"), "Write no no", "{table}");
    assert_eq!(row("Bash"), "Bash by input", "{table}");
    assert_eq!(row("Read"), "Read yes yes", "{table}");
    let rows = table
        .lines()
        .filter(|l| l.starts_with("NotebookEdit"))
        .count();
    assert_eq!(rows, 1, "{table}");
    assert!(table.lines().all(|l| !l.starts_with("Jupyter")), "{table}");
}

/// `permissions check` refuses, with exit 2, a call no session would make: a tool this
/// build does not have, or an input its schema refuses (a session refuses those before any
/// permission is decided). MCP tools and the Agent tool are taken as named.
#[test]
fn permissions_check_refuses_calls_no_session_would_make() {
    let dir = tempfile::tempdir().unwrap();
    for (tool, input, says) in [
        (
            "NoSuchTool",
            "{}",
            "this build has no tool named `NoSuchTool`",
        ),
        (
            "Bash",
            r#"{"cmd": "x"}"#,
            "the input is not one Bash accepts",
        ),
    ] {
        let out = toolwright(&["permissions", "check", tool, input], dir.path(), None);
        assert_eq!(out.status.code(), Some(2), "{tool}");
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
    }
    for (tool, input) in [
        ("mcp__docs__search", "{}"),
        ("Agent", r#"{"description": "d", "prompt": "p"}"#),
        ("Bash", r#"{"command": "ls", "timeout": "60000"}"#),
    ] {
        let out = toolwright(&["permissions", "check", tool, input], dir.path(), None);
        assert_eq!(out.status.code(), Some(0), "{tool}: {}", text(&out.stderr));
    }
    // A tool this build has that a session here would not (its environment gate shut,
    // `CLAUDE_CODE_SIMPLE`, tool search off): refused, saying why, as `run` answers its
    // call "No such tool available" (found by review 37: reported `allow`).
    let task = r#"{"subject": "s", "description": "d"}"#;
    let yes = Path::new("1");
    let no = Path::new("false");
    for (tool, input, env, says) in [
        ("TaskCreate", task, vec![], "env:TOOLWRIGHT_ENABLE_TASKS"),
        (
            "TodoWrite",
            r#"{"todos": []}"#,
            vec![("TOOLWRIGHT_ENABLE_TASKS", yes)],
            "env:!TOOLWRIGHT_ENABLE_TASKS",
        ),
        (
            "Glob",
            r#"{"pattern": "*"}"#,
            vec![("CLAUDE_CODE_SIMPLE", yes)],
            "CLAUDE_CODE_SIMPLE",
        ),
        (
            "ToolSearch",
            r#"{"query": "x"}"#,
            vec![("ENABLE_TOOL_SEARCH", no)],
            "tool search is off",
        ),
    ] {
        let out = toolwright_with_env(
            &["permissions", "check", tool, input],
            dir.path(),
            None,
            &env,
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{tool}: {err}");
        assert!(
            err.contains(&format!("a session here has no tool `{tool}`")) && err.contains(says),
            "{tool}: {err}"
        );
    }
    // In `auto` mode tool search depends on the MCP servers' tools, which the check does not
    // start: ToolSearch is decided, not refused (found by code review 37).
    let out = toolwright_with_env(
        &["permissions", "check", "ToolSearch", r#"{"query": "x"}"#],
        dir.path(),
        None,
        &[("ENABLE_TOOL_SEARCH", Path::new("auto"))],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The settings' `env` opens the gate as it would in a session.
    let out = toolwright(
        &[
            "permissions",
            "check",
            "--settings",
            r#"{"env": {"TOOLWRIGHT_ENABLE_TASKS": "1"}}"#,
            "TaskCreate",
            task,
        ],
        dir.path(),
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// `permissions check` decides a built-in tool's call as a session does, with the tool's own
/// check: a Glob whose pattern climbs out of the project, or is absolute, asks as it would
/// in a session (the stand-in looked at `path` only, and allowed both).
/// A relative link moved (or copied as a link) by one command of a line names another place
/// from where it lands: what the rest of the line reaches through it is judged there
/// (`d/e/lk -> ../../out` names the project's `out`; moved to `d/lk2`, the directory beside
/// the project).
#[test]
fn a_link_moved_earlier_in_the_line_is_judged_where_it_then_leads() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let project = root.join("p1");
    std::fs::create_dir_all(project.join("d/e")).unwrap();
    std::fs::create_dir_all(project.join("out")).unwrap();
    std::fs::create_dir_all(root.join("out")).unwrap();
    std::os::unix::fs::symlink("../../out", project.join("d/e/lk")).unwrap();
    for (command, want) in [
        ("mv d/e/lk d/lk2 && echo x > d/lk2/f", "ask"),
        ("mv d/e d2 && cat d2/lk/o.txt", "ask"),
        ("cp -a d/e/lk d/lk3 && cat d/lk3/o.txt", "ask"),
        ("mv d/e/lk d/e/lk2 && cat d/e/lk2/o.txt", "allow"),
        ("cp d/e/lk copy.txt", "allow"),
    ] {
        let input = json!({ "command": command }).to_string();
        let out = toolwright(
            &[
                "permissions",
                "check",
                "--json",
                "--mode",
                "acceptEdits",
                "Bash",
                &input,
            ],
            &project,
            None,
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["decision"], want, "{command}: {report}");
    }
}

/// A line allowed for several reasons says the grant, not a read-only command's reason: `ls
/// && touch b.txt` in acceptEdits is allowed by the mode.
#[test]
fn the_reason_of_an_allowed_line_is_its_grant() {
    let dir = tempfile::tempdir().unwrap();
    let input = json!({"command": "ls && touch b.txt"}).to_string();
    let out = toolwright(
        &[
            "permissions",
            "check",
            "--json",
            "--mode",
            "acceptEdits",
            "Bash",
            &input,
        ],
        dir.path(),
        None,
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["decision"], "allow", "{report}");
    assert_eq!(report["reason"], "allowed: acceptEdits mode", "{report}");
}

#[test]
fn permissions_check_asks_the_built_in_tool_itself() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    for (input, want) in [
        (r#"{"pattern": "*.rs"}"#, "allow"),
        (r#"{"pattern": "../other/*"}"#, "ask"),
        (r#"{"pattern": "/etc/host*"}"#, "ask"),
    ] {
        let out = toolwright(
            &["permissions", "check", "--json", "Glob", input],
            &project,
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{input}: {}", text(&out.stderr));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["decision"], want, "{input}: {report}");
    }
    // A relative path is resolved against the cwd before the rules see it, as in a session.
    std::fs::create_dir_all(project.join("secrets")).unwrap();
    let rules = r#"{"deny": ["Read(./secrets/**)"]}"#;
    for (tool, input) in [
        ("Grep", r#"{"pattern": "x", "path": "secrets"}"#),
        ("Glob", r#"{"pattern": "*", "path": "secrets"}"#),
    ] {
        let out = toolwright(
            &[
                "permissions",
                "check",
                "--json",
                "--rules",
                rules,
                tool,
                input,
            ],
            &project,
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{input}: {}", text(&out.stderr));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["decision"], "deny", "{tool} {input}: {report}");
    }
}

/// `agent`'s arguments are checked before anything starts: an empty prompt, no requests
/// (`--max-turns 0`) and `--max-tokens 0` are bad arguments (exit 2), never sent to the API.
#[test]
fn agent_refuses_arguments_the_api_would() {
    let dir = tempfile::tempdir().unwrap();
    for (args, said) in [
        (&["agent", " "][..], "the prompt is empty"),
        (&["agent", "hi", "--max-turns", "0"][..], "--max-turns"),
        (&["agent", "hi", "--max-tokens", "0"][..], "--max-tokens"),
    ] {
        let out = toolwright(args, dir.path(), None);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains(said),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

/// An empty `--settings` or `--mcp-config` value is a bad argument that says so (it was read
/// as the current directory: "Is a directory").
#[test]
fn empty_settings_values_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["run", "--settings", "", "-"][..],
        &["run", "--mcp-config", "", "-"][..],
        &["permissions", "check", "--settings", "", "Bash", "{}"][..],
        &["tools", "--settings", ""][..],
    ] {
        let out = toolwright(args, dir.path(), Some(""));
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains("a value is required")
                && !text(&out.stderr).contains("Is a directory"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

/// `tools` prints a table whose columns line up whatever the names and gates
/// (`AskUserQuestion`, `env:!TOOLWRIGHT_ENABLE_TASKS` were wider than their columns).
#[test]
fn the_tools_table_lines_up() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolwright(&["tools"], dir.path(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    let header = table.lines().next().unwrap();
    let column = |heading: &str| header.find(heading).unwrap();
    for heading in ["read-only", "parallel", "gate", "description"] {
        let at = column(heading);
        for row in table.lines().skip(1) {
            assert!(
                row.len() > at && row[..at].ends_with("  ") && !row[at..].starts_with(' '),
                "{heading} not at column {at} in {row:?}"
            );
        }
    }
    assert!(table.lines().any(|r| r.starts_with("AskUserQuestion ")));
}

/// `toolwright serve` registered as the user's MCP server (`claude mcp add -s user
/// toolwright -- toolwright serve` writes it into `~/.claude.json`, which toolwright reads
/// too): the `serve` started as a server loads only the servers given to it explicitly, so
/// it answers at once instead of starting another `serve`, which started another, until the
/// startup timeout (hundreds of processes a second).
#[test]
fn serve_registered_as_the_users_own_server_does_not_start_itself_again() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join(".no-user-config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join(".claude.json"),
        json!({"mcpServers": {"self": {"command": env!("CARGO_BIN_EXE_toolwright"), "args": ["serve"]}}})
            .to_string(),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["tools", "--json", "--mcp"])
        .current_dir(dir.path())
        .env("CLAUDE_CONFIG_DIR", &config)
        .env("MCP_TIMEOUT", "60000")
        .env_remove("TOOLWRIGHT_MCP_DEPTH")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        listed.iter().any(|t| t["name"] == "mcp__self__Read"),
        "{stderr}\n{listed:?}"
    );
    // The nested `serve` offers no MCP tools of its own (it loaded none).
    assert!(
        !listed.iter().any(|t| t["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("mcp__self__mcp__"))),
        "{listed:?}"
    );
}

/// `tools --mcp-config` (or `--mcp`) connects the session's MCP servers and lists their tools
/// beside the built-ins, as a session has them: named `mcp__server__tool`, deferred, with the
/// server in `--json`; without it nothing is connected. A server config that cannot be used
/// stops the command, as it stops `run`.
#[test]
fn tools_lists_the_mcp_servers_tools_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"mcpServers": {"tw": {
        "command": env!("CARGO_BIN_EXE_toolwright"), "args": ["serve"]}}})
    .to_string();
    let out = toolwright(
        &["tools", "--json", "--mcp-config", &config],
        dir.path(),
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let read = listed
        .iter()
        .find(|t| t["name"] == "mcp__tw__Read")
        .unwrap_or_else(|| panic!("{listed:?}"));
    assert_eq!(read["mcp_server"], "tw");
    assert_eq!(read["deferred"], true);
    assert_eq!(read["read_only"], true);
    assert!(
        listed
            .iter()
            .any(|t| t["name"] == "Read" && t.get("mcp_server").is_none())
    );
    // The table names the server where a built-in names its gate.
    let out = toolwright(&["tools", "--mcp-config", &config], dir.path(), None);
    let table = text(&out.stdout);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("mcp__tw__Read ") && l.contains(" mcp:tw ")),
        "{table}"
    );
    // Not asked: no server is connected.
    let out = toolwright(&["tools", "--json"], dir.path(), None);
    let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        !listed.iter().any(|t| t.get("mcp_server").is_some()),
        "{listed:?}"
    );
    let out = toolwright(
        &["tools", "--mcp-config", "{\"mcpServers\": "],
        dir.path(),
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("bad --mcp-config"),
        "{}",
        text(&out.stderr)
    );
}

/// `run`'s text mode shows a result that is no text (ToolSearch's tool references) as a line
/// saying what it is, not as nothing.
#[test]
fn run_shows_results_that_are_not_text() {
    let dir = tempfile::tempdir().unwrap();
    let line =
        r#"{"type":"tool_use","id":"t1","name":"ToolSearch","input":{"query":"select:WebFetch"}}"#;
    let out = toolwright(&["run", "-"], dir.path(), Some(line));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("[tools loaded: WebFetch]"),
        "{}",
        text(&out.stdout)
    );
}

/// A `--cwd` that names a file is bad input, as a missing one is (the session ran its
/// commands elsewhere and read no settings); a `--settings` pipe or device that gives
/// nothing is refused with the way to say "none"; a rule's escape sequences reach the
/// terminal shown, not run.
#[test]
fn a_file_as_cwd_an_empty_settings_pipe_and_escapes_in_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain.txt");
    std::fs::write(&file, "x").unwrap();
    let file = file.to_str().unwrap();
    for args in [
        &["run", "--cwd", file, "-"][..],
        &["tools", "--cwd", file][..],
        &[
            "permissions",
            "check",
            "--cwd",
            file,
            "Bash",
            r#"{"command":"ls"}"#,
        ][..],
    ] {
        let out = toolwright(args, dir.path(), Some(""));
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        assert!(
            text(&out.stderr).contains("is not a directory"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    let out = toolwright(
        &[
            "permissions",
            "check",
            "--settings",
            "/dev/null",
            "Bash",
            r#"{"command":"ls"}"#,
        ],
        dir.path(),
        None,
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("it gave nothing"),
        "{}",
        text(&out.stderr)
    );
    // Read from standard input, the advice names what the flag gives: an `--mcp-config`
    // is no settings (it said "give the settings another way").
    let out = toolwright(&["tools", "--mcp-config", "/dev/stdin"], dir.path(), None);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("give the MCP configuration another way")
            && !text(&out.stderr).contains("settings"),
        "{}",
        text(&out.stderr)
    );
    let rules = r#"{"permissions":{"allow":["Bash(evil:*)\u001b[2K\rwarning: none"]}}"#;
    let out = toolwright(
        &[
            "permissions",
            "check",
            "--settings",
            rules,
            "Bash",
            r#"{"command":"ls"}"#,
        ],
        dir.path(),
        None,
    );
    let stderr = text(&out.stderr);
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\r'),
        "{stderr:?}"
    );
    assert!(stderr.contains("\\u{1b}[2K"), "{stderr}");
}

/// An interrupt while a call's PreToolUse hooks run: the model reads the rejection and the
/// interrupt, not a note that the hooks were cancelled (Claude Code drops that note before
/// the request).
#[test]
fn hooks_cancelled_by_an_interrupt_are_not_the_models_news() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let marker = root.join("hook-started");
    let settings = json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command",
        "command": format!("touch '{}'; sleep 20", marker.display())}]}]}});
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Glob", "input": {"pattern": "*"}}),
    ]);
    std::fs::write(root.join("turn.jsonl"), turn).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args([
            "run",
            "--json",
            "--settings",
            &settings.to_string(),
            "turn.jsonl",
        ])
        .current_dir(&root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !marker.exists() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the hook never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        !message.to_string().contains("hooks were cancelled"),
        "{message}"
    );
    assert_eq!(message["content"][0]["tool_use_id"], "toolu_1", "{message}");
}

/// A result too large for the conversation, saved by one `run --json`, can be Read by the
/// next run (another session), as the path the model was given promises; a file in another
/// user's or a shared directory named like one is not.
#[test]
fn a_result_saved_by_one_run_is_read_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let big = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_big", "name": "Bash", "input": {"command": "seq 1 20000"}}),
    ]);
    let out = toolwright(
        &["run", "--json", "--mode", "bypassPermissions", "-"],
        &root,
        Some(&big),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    let at =
        printed.find("Full output saved to: ").expect("saved") + "Full output saved to: ".len();
    let saved: String = printed[at..]
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '\\')
        .collect();
    assert!(std::path::Path::new(&saved).is_file(), "{saved}");
    let read = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": saved, "limit": 2}}),
    ]);
    let out = toolwright(&["run", "--json", "-"], &root, Some(&read));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        message["content"][0]["content"], "     1→1\n     2→2",
        "{message}"
    );
    // A directory named like a session's but open to others is not one.
    let tmp = std::env::temp_dir();
    let fake = tempfile::Builder::new()
        .prefix("toolwright-fake-")
        .tempdir_in(&tmp)
        .unwrap();
    std::fs::create_dir(fake.path().join("tool-results")).unwrap();
    let planted = fake.path().join("tool-results/x.txt");
    std::fs::write(&planted, "planted").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(fake.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let read = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_fake", "name": "Read", "input": {"file_path": planted}}),
    ]);
    let out = toolwright(&["run", "--json", "-"], &root, Some(&read));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(!message.to_string().contains("planted"), "{message}");
}

/// Found by review: `permissions check` judged a relative `file_path` as no path at all (a
/// deny rule on it answered "allow" in bypass mode), though a session refuses such a path;
/// and it did not say that an untrusted folder's allow rules were ignored, as a session
/// does, so a rule that did nothing gave no hint why.
#[test]
fn permissions_check_judges_a_relative_path_and_names_ignored_grants() {
    let dir = tempfile::tempdir().unwrap();
    let proj = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(proj.join("src")).unwrap();
    let out = toolwright(
        &[
            "permissions",
            "check",
            "--mode",
            "bypassPermissions",
            "--settings",
            r#"{"permissions":{"deny":["Edit(./src/**)"]}}"#,
            "Edit",
            r#"{"file_path":"src/main.rs","old_string":"a","new_string":"b"}"#,
        ],
        &proj,
        None,
    );
    let (shown, warned) = (text(&out.stdout), text(&out.stderr));
    assert!(shown.contains("decision: deny"), "{shown}{warned}");
    assert!(
        warned.contains(&format!(
            "`file_path` src/main.rs is relative: a session refuses it (the path must be absolute); decided for {}",
            proj.join("src/main.rs").display()
        )),
        "{warned}"
    );

    // A path the tool trims to an absolute one is no relative path (found by review).
    let out = toolwright(
        &[
            "permissions",
            "check",
            "--settings",
            r#"{"permissions":{"deny":["Read(//etc/hostname)"]}}"#,
            "Read",
            r#"{"file_path":" /etc/hostname"}"#,
        ],
        &proj,
        None,
    );
    let (shown, warned) = (text(&out.stdout), text(&out.stderr));
    assert!(shown.contains("decision: deny"), "{shown}{warned}");
    assert!(!warned.contains("is relative"), "{warned}");

    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    std::fs::write(
        proj.join(".claude/settings.json"),
        r#"{"permissions":{"allow":["Read(../out/**)"]}}"#,
    )
    .unwrap();
    let out = toolwright(
        &[
            "permissions",
            "check",
            "--mode",
            "dontAsk",
            "Read",
            &serde_json::json!({"file_path": proj.join("../out/o.txt")}).to_string(),
        ],
        &proj,
        None,
    );
    let warned = text(&out.stderr);
    assert!(
        text(&out.stdout).contains("decision: deny"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        warned.contains("this folder is not trusted")
            && warned.contains("Not applied: its allow rules ("),
        "{warned}"
    );
}

/// Found by review: the shells of hooks and of Bash were looked up in `PATH`, so a settings
/// `env` whose `PATH` lacks `/bin` made a blocking PreToolUse hook fail to start, which does
/// not block: the call it was to stop ran. Both start by path now.
#[test]
fn a_path_without_bin_does_not_unblock_a_hook() {
    let dir = tempfile::tempdir().unwrap();
    let settings = serde_json::json!({
        "env": {"PATH": "/nonexistent"},
        "permissions": {"allow": ["Bash", "Grep"]},
        "hooks": {"PreToolUse": [{"matcher": "Grep", "hooks": [
            {"type": "command", "command": "echo blocked by the hook >&2; exit 2"}
        ]}]}
    });
    let lines = jsonl(&[
        serde_json::json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "echo hi"}}),
        serde_json::json!({"type": "tool_use", "id": "t2", "name": "Grep", "input": {"pattern": "x"}}),
    ]);
    let out = toolwright(
        &["run", "--json", "--settings", &settings.to_string(), "-"],
        dir.path(),
        Some(&lines),
    );
    let message: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    let content = &message["content"];
    assert_eq!(content[0]["content"], "hi", "{message}");
    assert!(
        content[1]["content"]
            .as_str()
            .is_some_and(|t| t.contains("blocked by the hook")),
        "{message}"
    );
}

/// Found by review: `permissions check` did not apply the settings' `env`, which the engine
/// reads (a ripgrep configuration file may turn off its filters), and answered otherwise
/// than a session: `rg S` allowed where `run` denied it under `Read(.env)`.
#[test]
fn permissions_check_applies_the_settings_env_as_a_session() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".env"), "S=1\n").unwrap();
    let settings = serde_json::json!({
        "env": {"RIPGREP_CONFIG_PATH": "/nonexistent/rgrc"},
        "permissions": {"deny": ["Read(.env)"]}
    })
    .to_string();
    let out = toolwright(
        &[
            "permissions",
            "check",
            "--settings",
            &settings,
            "Bash",
            r#"{"command":"rg S"}"#,
        ],
        dir.path(),
        None,
    );
    let shown = text(&out.stdout);
    assert!(
        shown.contains("decision: deny"),
        "{shown}{}",
        text(&out.stderr)
    );
}

/// Found by review: `permissions check --cwd` named a directory that is not UTF-8 by its
/// lossy copy, which does not exist, where `run` works there.
#[test]
fn permissions_check_takes_a_cwd_that_is_not_utf8() {
    use std::os::unix::ffi::OsStrExt as _;
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join(std::ffi::OsStr::from_bytes(b"bad\xff"));
    std::fs::create_dir_all(odd.join(".claude")).unwrap();
    std::fs::write(
        odd.join(".claude/settings.json"),
        r#"{"permissions":{"deny":["Bash(rm:*)"]}}"#,
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["permissions", "check", "--cwd"])
        .arg(&odd)
        .args(["Bash", r#"{"command":"rm x"}"#])
        .env("CLAUDE_CONFIG_DIR", dir.path().join(".no-user-config"))
        .output()
        .unwrap();
    assert!(
        text(&out.stdout).contains("decision: deny"),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Whether process `pid` runs (exists, and is no zombie waiting to be reaped).
fn pid_running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with(['Z', 'X']))
    })
}

/// Waits (at most 30 s) for `file` to hold a process id, and returns it.
fn pid_written_to(file: &Path) -> u32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Some(pid) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nothing wrote {}",
            file.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Found by review: Ctrl-C on `run` while an MCP server (here this binary's `serve`) runs a
/// command for it left the command running, re-parented to init: the run told the server
/// the call was cancelled and killed it at once, before it could act (its commands run in
/// process groups of their own, out of reach of a kill of its group). The servers now get a
/// short grace (SIGTERM, on which `serve` kills its commands) before they are killed. The
/// server reads its input through a pipe that holds the cancellation back, so it cannot
/// have acted on that before the run ends it.
#[test]
fn a_signal_gives_mcp_servers_time_to_stop_their_commands() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let pid_file = root.join("command.pid");
    let marker = format!("1011.{}", std::process::id());
    let turn = root.join("turn.jsonl");
    std::fs::write(
        &turn,
        jsonl(&[
            json!({"type": "tool_use", "id": "m1", "name": "mcp__d__Bash", "input": {
            "command": format!("echo $$ > '{}'; sleep {marker}; echo done", pid_file.display())}}),
        ]),
    )
    .unwrap();
    let held_back = format!(
        r#"while IFS= read -r line; do case "$line" in *notifications/cancelled*) sleep 5;; esac; printf '%s\n' "$line"; done | exec '{}' serve --mode acceptEdits"#,
        env!("CARGO_BIN_EXE_toolwright")
    );
    let mcp = json!({"mcpServers": {"d": {"command": "sh", "args": ["-c", held_back]}}});
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args([
            "run",
            "--json",
            "--settings",
            r#"{"permissions":{"allow":["mcp__d"]}}"#,
            "--mcp-config",
            &mcp.to_string(),
        ])
        .arg(&turn)
        .current_dir(&root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = pid_written_to(&pid_file);
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let status = wait_at_most(
        &mut child,
        std::time::Duration::from_secs(30),
        "the run did not end on Ctrl-C",
    );
    let out = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(130), "{}", text(&out.stderr));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while pid_running(pid) {
        if std::time::Instant::now() > deadline {
            // Its process group (the command's own) goes, so that no test leaves it behind.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
            panic!("the MCP server's command outlived the run");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(
        !process_alive(&marker),
        "the command's sleep outlived the run"
    );
}

/// Found by review: a PermissionRequest hook's `interrupt: true` (with its deny) or its
/// `continue: false` stops the turn as a user's rejection does in the agent loop: the
/// response's later calls not yet started are not run, the next message ends with the
/// interrupt text, and stderr says what stopped the turn (it said nothing, and `--json` had
/// no interrupt text).
#[test]
fn a_permission_request_hook_that_interrupts_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {"file_path": root.join("a.txt"), "content": "x"}}),
        json!({"type": "tool_use", "id": "toolu_2", "name": "Bash", "input": {"command": "echo later > later.txt"}}),
    ]);
    for (answer, reason) in [
        (
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": "not on Fridays", "interrupt": true}}}),
            "not on Fridays",
        ),
        (
            json!({"continue": false, "stopReason": "the build is red"}),
            "the build is red",
        ),
    ] {
        let hook = format!("cat > /dev/null; echo '{answer}'");
        user_settings(
            &root,
            &json!({"permissions": {"allow": ["Bash(echo:*)"]},
                "hooks": {"PermissionRequest": [{"matcher": "Write", "hooks": [{"type": "command", "command": hook}]}]}}),
        );
        let out = toolwright(&["run", "--json", "-"], &root, Some(&turn));
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let message: Value = serde_json::from_slice(&out.stdout).unwrap();
        let content = message["content"].as_array().unwrap();
        assert_eq!(content.len(), 3, "{message}");
        assert!(
            content[0]["content"].as_str().unwrap().contains(reason),
            "{message}"
        );
        assert_eq!(content[1]["tool_use_id"], "toolu_2", "{message}");
        assert!(
            content[1]["content"]
                .as_str()
                .unwrap()
                .contains("doesn't want to proceed"),
            "{message}"
        );
        assert_eq!(
            content[2]["text"], "[Request interrupted by user for tool use]",
            "{message}"
        );
        assert!(!root.join("later.txt").exists(), "{message}");
        assert!(
            stderr.contains("a PermissionRequest hook stopped the turn at Write(")
                && stderr.contains("[toolu_1]")
                && stderr.contains(reason)
                && stderr.contains("the response's 1 later call had not started and was not run"),
            "{stderr}"
        );
        // The text mode says it too.
        let out = toolwright(&["run", "-"], &root, Some(&turn));
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(
            stderr.contains("a PermissionRequest hook stopped the turn") && stderr.contains(reason),
            "{stderr}"
        );
    }
}

/// Found by review: after a signal while the session opened (an MCP server slow to start),
/// `--json` had no interrupt text, and a call of a tool that does not exist was answered as
/// refused rather than as unknown.
#[test]
fn a_signal_while_the_session_opens_says_the_user_interrupted() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let started = root.join("server-started");
    let marker = format!("1012.{}", std::process::id());
    let mcp = json!({"mcpServers": {"slow": {"command": "sh", "args": ["-c",
        format!("touch '{}'; exec sleep {marker}", started.display())]}}});
    let turn = root.join("turn.jsonl");
    std::fs::write(
        &turn,
        jsonl(&[
            json!({"type": "tool_use", "id": "t1", "name": "Glob", "input": {"pattern": "*"}}),
            json!({"type": "tool_use", "id": "t2", "name": "Nope", "input": {}}),
        ]),
    )
    .unwrap();
    let out = interrupted_once_started(
        Command::new(env!("CARGO_BIN_EXE_toolwright"))
            .args(["run", "--json", "--mcp-config", &mcp.to_string()])
            .arg(&turn)
            .current_dir(&root)
            .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
            .env("MCP_TIMEOUT", "30000"),
        &started,
    );
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let content = message["content"].as_array().unwrap();
    assert_eq!(content.len(), 3, "{message}");
    assert_eq!(content[0]["tool_use_id"], "t1", "{message}");
    assert!(
        content[0]["content"]
            .as_str()
            .unwrap()
            .contains("doesn't want to proceed"),
        "{message}"
    );
    assert_eq!(content[1]["tool_use_id"], "t2", "{message}");
    assert_eq!(
        content[1]["content"],
        "<tool_use_error>Error: No such tool available: Nope</tool_use_error>",
        "{message}"
    );
    assert_eq!(
        content[2]["text"], "[Request interrupted by user for tool use]",
        "{message}"
    );
}

/// Found by review: Ctrl-C while the run only waits for a background (`async`) hook, every
/// call done, interrupted no tool use: the message has no interrupt text.
#[test]
fn a_signal_while_waiting_for_background_hooks_interrupts_no_call() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let marker = format!("1013.{}", std::process::id());
    user_settings(
        &root,
        &json!({"hooks": {"PostToolUse": [{"hooks": [{"type": "command",
            "command": format!("cat > /dev/null; sleep {marker}"), "async": true, "timeout": 60}]}]}}),
    );
    let turn = root.join("turn.jsonl");
    std::fs::write(
        &turn,
        jsonl(&[
            json!({"type": "tool_use", "id": "t1", "name": "Glob", "input": {"pattern": "*"}}),
        ]),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["run", "--json"])
        .arg(&turn)
        .current_dir(&root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("waiting for 1 background hook") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "no waiting line");
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][0]["tool_use_id"], "t1", "{message}");
    assert_eq!(message["content"][0].get("is_error"), None, "{message}");
    assert!(
        !message.to_string().contains("[Request interrupted by user"),
        "{message}"
    );
}

/// Found by review: every demo left the session directory of its bundled MCP server (this
/// binary's `serve`) in the temporary directory, killed before it could remove it; after
/// Ctrl-C too.
#[test]
fn the_demo_leaves_nothing_in_the_temporary_directory() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let leftovers = || -> Vec<String> {
        std::fs::read_dir(&tmp)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect()
    };
    let out = toolwright_with_env(
        &["demo", "--no-pace"],
        dir.path(),
        None,
        &[("TMPDIR", &tmp)],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("✓ mcp__docs__Grep(mean)"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(leftovers(), Vec::<String>::new());

    // Ctrl-C in the middle of a paced demo, its MCP server connected.
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .arg("demo")
        .current_dir(dir.path())
        .env("CLAUDE_CONFIG_DIR", dir.path().join(".no-user-config"))
        .env("TMPDIR", &tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("server `docs`") {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "no server line");
    }
    let _ = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status();
    let reader = std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut rest);
    });
    let status = wait_at_most(
        &mut child,
        std::time::Duration::from_secs(30),
        "the demo did not end on Ctrl-C",
    );
    let _ = reader.join();
    assert!(matches!(status.code(), Some(130 | 0)), "{status:?}");
    assert_eq!(leftovers(), Vec::<String>::new());
}

/// Found by review: the text mode showed the first 20 lines of a result and nothing to say
/// that more were left out.
#[test]
fn run_text_mode_says_how_many_lines_it_leaves_out() {
    let dir = tempfile::tempdir().unwrap();
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "seq 1 25"}}),
    ]);
    let out = toolwright(
        &["run", "--mode", "bypassPermissions", "-"],
        dir.path(),
        Some(&turn),
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("\n    20\n"), "{stdout}");
    assert!(!stdout.contains("\n    21\n"), "{stdout}");
    assert!(
        stdout.contains("\n    … 5 more lines (--json shows all)\n"),
        "{stdout}"
    );
}

/// Found by review: in the text mode a line break in a command or in a tool_use id (the
/// model's to choose) broke the line a call gets, and could forge another call's line.
#[test]
fn run_text_mode_keeps_each_call_on_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let turn = jsonl(&[json!({"type": "tool_use",
        "id": "t1\n✓ Read(/etc/passwd)  [t9]  allow  1.0 ms\r",
        "name": "Bash",
        "input": {"command": "true\n✓ Write(/x)  [t8]  allow  1.0 ms"}})]);
    let out = toolwright(
        &["run", "--mode", "bypassPermissions", "-"],
        dir.path(),
        Some(&turn),
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let call_lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("✓") || l.starts_with("✗"))
        .collect();
    assert_eq!(call_lines.len(), 1, "{stdout}");
    assert!(
        call_lines[0].contains(r"true\n✓ Write(/x)")
            && call_lines[0].contains(r"[t1\n✓ Read(/etc/passwd)  [t9]  allow  1.0 ms\r]"),
        "{stdout}"
    );
    assert!(!stdout.contains('\r'), "{stdout:?}");
}

/// Found by review: an unknown key in what the command line gave to `permissions check`
/// (`--rules '{"Deny":[...]}'`, an inline `--settings` with `permissions.Deny`) was only a
/// warning, and the check said allow with exit code 0, though the rule meant was missing.
/// It is bad input (exit code 2), said with the flag's name (not a Rust name such as
/// `FlagSettings (inline)`); `run` stops on it the same way.
#[test]
fn an_unknown_key_given_on_the_command_line_stops_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let input = r#"{"command":"rm -rf build"}"#;
    for (args, expected) in [
        (
            vec!["--rules", r#"{"Deny":["Bash(rm:*)"]}"#],
            "--rules: error: unknown key `permissions.Deny`",
        ),
        (
            vec!["--settings", r#"{"permissions":{"Deny":["Bash(rm:*)"]}}"#],
            "--settings: error: unknown key `permissions.Deny`",
        ),
        (
            vec![
                "--settings",
                "{}",
                "--settings",
                r#"{"deny":["Bash(rm:*)"]}"#,
            ],
            "--settings #2: error: `deny` belongs under `permissions`",
        ),
    ] {
        let mut argv = vec!["permissions", "check"];
        argv.extend(&args);
        argv.extend(["Bash", input]);
        let out = toolwright(&argv, dir.path(), None);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(!stderr.contains("(inline)"), "{stderr}");
    }
    // `run` with the same `--settings` stops too.
    let out = toolwright(
        &[
            "run",
            "--settings",
            r#"{"permissions":{"Deny":["Bash(rm:*)"]}}"#,
            "-",
        ],
        dir.path(),
        Some(""),
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--settings: error: unknown key `permissions.Deny`"),
        "{stderr}"
    );
}

/// Found by review: with a user `defaultMode` of bypassPermissions, a project that disables
/// bypass and `--mode plan`, `permissions check` warned "turns bypassPermissions off; using
/// default mode" while deciding in plan mode. The warning is said only when no `--mode` is
/// given.
#[test]
fn the_bypass_off_warning_is_not_said_under_a_mode_flag() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("settings.json"),
        r#"{"permissions":{"defaultMode":"bypassPermissions"}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
    std::fs::write(
        dir.path().join(".claude/settings.json"),
        r#"{"permissions":{"disableBypassPermissionsMode":"disable"}}"#,
    )
    .unwrap();
    let env = [("CLAUDE_CONFIG_DIR", config.as_path())];
    let input = r#"{"command":"ls"}"#;
    let out = toolwright_with_env(
        &["permissions", "check", "Bash", input],
        dir.path(),
        None,
        &env,
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("turns bypassPermissions off; using default mode"),
        "{stderr}"
    );
    let out = toolwright_with_env(
        &["permissions", "check", "--mode", "plan", "Bash", input],
        dir.path(),
        None,
        &env,
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        text(&out.stdout).contains("mode: plan"),
        "{}",
        text(&out.stdout)
    );
    assert!(!stderr.contains("turns bypassPermissions off"), "{stderr}");
}

/// `permissions check` prints a settings diagnostic with its own severity: a project file
/// that cannot be read is `FILE: error: …`, not `warning: FILE: error: …`.
#[test]
fn a_settings_error_is_printed_once_as_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
    std::fs::write(dir.path().join(".claude/settings.json"), "{ not json").unwrap();
    let out = toolwright(
        &["permissions", "check", "Bash", r#"{"command":"ls"}"#],
        dir.path(),
        None,
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("settings.json: error: "), "{stderr}");
    assert!(!stderr.contains("warning: "), "{stderr}");
}

/// A write past the file-size limit (`ulimit -f`) is the call's error ("File too large"),
/// not the end of the run: `SIGXFSZ`, whose default action killed the process (every result
/// of the turn lost, the temporary file left behind), is caught. The file keeps its old
/// content, no temporary file stays, the calls before and after get their results, and a
/// command the Bash tool runs still gets the default action (it is killed, status 153, as
/// in a shell) rather than an inherited ignore.
#[test]
fn a_write_past_the_file_size_limit_is_the_calls_error() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let old: String = (1..=1000).map(|n| format!("{n}\n")).collect();
    std::fs::write(root.join("big.txt"), &old).unwrap();
    let turn = jsonl(&[
        json!({"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": root.join("big.txt")}}),
        json!({"type": "tool_use", "id": "toolu_2", "name": "Write", "input": {"file_path": root.join("big.txt"), "content": "y".repeat(200_000)}}),
        json!({"type": "tool_use", "id": "toolu_3", "name": "Bash", "input": {"command": "head -c 200000 /dev/zero > zeros; echo \"status $?\""}}),
    ]);
    std::fs::write(root.join("turn.jsonl"), &turn).unwrap();
    // 100 blocks of 1 KiB: the 200 KB write goes past it.
    let out = Command::new("bash")
        .args(["-c", "ulimit -f 100; exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_toolwright"))
        .args(["run", "--json", "--mode", "bypassPermissions", "turn.jsonl"])
        .current_dir(&root)
        .env("CLAUDE_CONFIG_DIR", root.join(".no-user-config"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let content = message["content"].as_array().unwrap();
    assert_eq!(content.len(), 3, "{message}");
    assert_eq!(content[0].get("is_error"), None, "{message}");
    assert_eq!(content[1]["is_error"], true, "{message}");
    assert!(
        content[1]["content"]
            .as_str()
            .unwrap()
            .contains("File too large"),
        "{message}"
    );
    assert!(
        content[2]["content"]
            .as_str()
            .unwrap()
            .contains("status 153"),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(root.join("big.txt")).unwrap(), old);
    let left: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tw-tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// `tools --json` marks a tool deferred only where a model gets it so: with tool search on
/// (ToolSearch listed). With `ENABLE_TOOL_SEARCH=false` every schema goes to the model in
/// full, and no tool was to be marked deferred (every deferrable one was).
#[test]
fn tools_marks_tools_deferred_only_with_tool_search_on() {
    let dir = tempfile::tempdir().unwrap();
    let listed = |search: &str| {
        let out = toolwright_with_env(
            &["tools", "--json"],
            dir.path(),
            None,
            &[("ENABLE_TOOL_SEARCH", Path::new(search))],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let tools: Value = serde_json::from_slice(&out.stdout).unwrap();
        let names: Vec<String> = tools
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        let deferred = tools
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["deferred"] == true)
            .count();
        (names, deferred)
    };
    let (names, deferred) = listed("false");
    assert!(!names.iter().any(|n| n == "ToolSearch"), "{names:?}");
    assert_eq!(deferred, 0, "{names:?}");
    let (names, deferred) = listed("true");
    assert!(names.iter().any(|n| n == "ToolSearch"), "{names:?}");
    assert!(deferred > 0, "{names:?}");
}
