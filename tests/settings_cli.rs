//! How the binary reads its settings: `--settings` pipes, the demo's isolation, malformed
//! hooks in `--settings`, what an untrusted folder's settings lose, misspelt keys, `~` under
//! a settings `env`, and two inputs reading standard input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

#[path = "support/binary.rs"]
mod binary;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
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
    // A command that refuses to start exits without reading its input: the pipe is then
    // closed, which is no failure of the test (what it printed is what is checked).
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

/// A `--settings` given as a pipe (`<(...)`) is read once, so every reader sees its rules:
/// read again, a pipe is empty, and its deny rules would be lost while its `env` applied.
#[test]
fn settings_from_a_pipe_keep_their_deny_rules() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::write(root.join("keep.txt"), "kept").unwrap();
    let call = json!({"type": "tool_use", "id": "t1", "name": "Bash",
        "input": {"command": "rm keep.txt"}});
    let out = bash(
        &root,
        r#"exec "$TW" run --json --mode bypassPermissions --settings <(echo '{"permissions": {"deny": ["Bash(rm:*)"]}}') -"#,
        &format!("{call}\n"),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][0]["is_error"], true, "{message}");
    assert!(root.join("keep.txt").exists(), "the rm ran: {message}");
    // A pipe that gives no JSON object is refused, not read as no settings.
    let out = bash(
        &root,
        r#"exec "$TW" run --json --settings <(echo 'not json') -"#,
        &format!("{call}\n"),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("is not a JSON object"),
        "{}",
        text(&out.stderr)
    );
    assert!(root.join("keep.txt").exists());
}

/// The demo's session reads none of the user's settings: a `defaultMode` or a deny rule in
/// `~/.claude/settings.json` (with no `CLAUDE_CONFIG_DIR`) changes nothing it shows.
#[test]
fn the_demo_ignores_the_users_settings() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::write(
        home.path().join(".claude/settings.json"),
        json!({"permissions": {"defaultMode": "plan", "deny": ["Read"]}}).to_string(),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["demo", "--no-pace"])
        .current_dir(home.path())
        .env("HOME", home.path())
        .env_remove("CLAUDE_CONFIG_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(!stdout.contains("(user settings)"), "{stdout}");
    assert!(
        stdout.contains("allow · rule Edit(./**) (project settings)"),
        "{stdout}"
    );
}

/// Hooks `--settings` defines that cannot be read stop the run, as broken rules do: running
/// on without a PreToolUse guard would fail open.
#[test]
fn broken_hooks_in_settings_given_on_the_command_line_stop_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let call = json!({"type": "tool_use", "id": "t1", "name": "Bash",
        "input": {"command": "touch ran"}});
    for hooks in [
        json!({"PreToolUse": {"matcher": "Bash", "hooks": []}}),
        json!({"PreTooluse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 2"}]}]}),
    ] {
        let settings = json!({"hooks": hooks}).to_string();
        let out = bash(
            &root,
            &format!("exec \"$TW\" run --json --mode bypassPermissions --settings '{settings}' -"),
            &format!("{call}\n"),
        );
        assert_eq!(out.status.code(), Some(2), "{hooks}: {}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("bad --settings"),
            "{}",
            text(&out.stderr)
        );
        assert!(!root.join("ran").exists(), "{hooks}");
    }
    // A guard of a handler type this layer does not run (Claude Code would run it) stops
    // the run as a broken guard does (found by review 36: the run went on unguarded); read
    // from the project's settings, it refuses the calls it would see. A guard whose `if`
    // cannot be read, given here, would never run: it stops the run too.
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "prompt", "prompt": "is this safe?"},
    ]}]});
    let settings = json!({"hooks": hooks}).to_string();
    let out = bash(
        &root,
        &format!("exec \"$TW\" run --json --mode bypassPermissions --settings '{settings}' -"),
        &format!("{call}\n"),
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad --settings") && err.contains("not supported by"),
        "{err}"
    );
    assert!(!root.join("ran").exists(), "{err}");
    let project = root.join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(
        project.join(".claude/settings.json"),
        json!({"hooks": hooks}).to_string(),
    )
    .unwrap();
    let out = bash(
        &project,
        "\"$TW\" trust . >/dev/null && exec \"$TW\" run --json --mode bypassPermissions -",
        &format!("{call}\n"),
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!project.join("ran").exists(), "{err}");
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][0]["is_error"], true, "{message}");
    assert!(
        message["content"][0]["content"]
            .to_string()
            .contains("not supported by"),
        "{message}"
    );
    let hooks = json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "exit 2", "if": "Bash(touch *"},
    ]}]});
    let settings = json!({"hooks": hooks}).to_string();
    let out = bash(
        &root,
        &format!("exec \"$TW\" run --json --mode bypassPermissions --settings '{settings}' -"),
        &format!("{call}\n"),
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad --settings") && err.contains("not a valid permission rule"),
        "{err}"
    );
    assert!(!root.join("ran").exists(), "{err}");
}

/// An untrusted folder whose settings set only an `env` says that it was not applied; one
/// that sets other things the session would apply names each (an allowlist of MCP servers,
/// a switch turning off the user's hooks), and one that only restricts is not reported.
#[test]
fn an_untrusted_folders_env_is_reported_as_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        json!({"env": {"TW_PROBE": "set by the folder"}}).to_string(),
    )
    .unwrap();
    let call = json!({"type": "tool_use", "id": "t1", "name": "Bash",
        "input": {"command": "echo \"probe=${TW_PROBE:-unset}\""}});
    let out = bash(
        &root,
        r#"exec "$TW" run --json --mode bypassPermissions -"#,
        &format!("{call}\n"),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][0]["content"], "probe=unset", "{message}");
    let err = text(&out.stderr);
    assert!(
        err.contains("this folder is not trusted") && err.contains("Not applied: its env ("),
        "{err}"
    );
    for (settings, said) in [
        (
            json!({"disableAllHooks": true, "allowedMcpServers": [{"serverName": "x"}]}),
            Some("Not applied: its disableAllHooks and allowedMcpServers ("),
        ),
        (
            json!({"permissions": {"allow": ["Bash"], "defaultMode": "acceptEdits", "deny": ["Read"]}}),
            Some("Not applied: its allow rules and defaultMode ("),
        ),
        (
            json!({"permissions": {"deny": ["Read"]}, "deniedMcpServers": [{"serverName": "x"}]}),
            None,
        ),
    ] {
        std::fs::write(root.join(".claude/settings.json"), settings.to_string()).unwrap();
        let out = bash(&root, r#"exec "$TW" run --json -"#, &format!("{call}\n"));
        let err = text(&out.stderr);
        match said {
            Some(said) => assert!(err.contains(said), "{settings}: {err}"),
            None => assert!(!err.contains("not trusted"), "{settings}: {err}"),
        }
    }
}

/// What docs/hooks.md says is skipped by design in any settings (a handler type this tool
/// layer does not run) is a notice in `--settings` too, not a stop. (A malformed `if` of a
/// guard given there stops the run: see the test above.)
#[test]
fn hooks_skipped_by_design_in_settings_are_notices() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let call = json!({"type": "tool_use", "id": "t1", "name": "Bash",
        "input": {"command": "echo ran"}});
    let hooks = json!({"Stop": [{"hooks": [{"type": "prompt", "prompt": "check"}]}]});
    let settings = json!({"hooks": hooks}).to_string();
    let out = bash(
        &root,
        &format!("exec \"$TW\" run --json --mode bypassPermissions --settings '{settings}' -"),
        &format!("{call}\n"),
    );
    assert!(out.status.success(), "{hooks}: {}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(message["content"][0]["content"], "ran", "{message}");
    assert!(text(&out.stderr).contains("toolwright: "), "{hooks}");
}

/// A malformed rule is reported once, with its file (the settings loader and the engine
/// both find it).
#[test]
fn a_malformed_rule_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        json!({"permissions": {"deny": ["Bash(rm:*", "Read()"]}}).to_string(),
    )
    .unwrap();
    let call = json!({"type": "tool_use", "id": "t1", "name": "Bash",
        "input": {"command": "echo hi"}});
    let out = bash(&root, r#"exec "$TW" run --json -"#, &format!("{call}\n"));
    let err = text(&out.stderr);
    assert_eq!(err.matches("`Bash(rm:*`").count(), 1, "{err}");
    assert_eq!(err.matches("`Read()`").count(), 1, "{err}");
    assert!(err.contains(".claude/settings.json"), "{err}");
}

/// A refused ask says why the call needed approval; only one a rule could settle mentions an
/// allow rule (a safety check's, a write to `.claude/`, is settled by no rule).
#[test]
fn a_refused_ask_says_why_and_whether_a_rule_could_help() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(root.join(".claude/settings.json"), "{}").unwrap();
    let refusal = |command: &str, settings: &str| {
        let call = json!({"type": "tool_use", "id": "t1", "name": "Bash",
            "input": {"command": command}});
        let out = bash(
            &root,
            &format!("exec \"$TW\" run --json --settings '{settings}' -"),
            &format!("{call}\n"),
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        let message: Value = serde_json::from_slice(&out.stdout).unwrap();
        message["content"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned()
    };
    let plain = refusal("touch y", "{}");
    assert!(
        plain.contains("It needed approval: `touch y` requires approval.")
            && plain.contains("an allow rule in the settings would let it run"),
        "{plain}"
    );
    let protected = refusal(
        "echo hi > .claude/settings.json",
        r#"{"permissions": {"allow": ["Bash"]}}"#,
    );
    assert!(
        protected.contains("protected directory") && !protected.contains("allow rule"),
        "{protected}"
    );
    // An ask rule outranks allow rules, and a PermissionRequest hook's allow does not lift
    // it: the refusal says both, and sends nobody to the settings for an allow rule.
    let approver = r#"echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}'"#;
    // (Hook commands hold quotes: these settings go in files.)
    let in_file = |name: &str, settings: Value| {
        std::fs::write(root.join(name), settings.to_string()).unwrap();
        root.join(name).display().to_string()
    };
    let ask_rule = refusal(
        "touch z",
        &in_file(
            "ask-rule.json",
            json!({"permissions": {"allow": ["Bash(touch:*)"], "ask": ["Bash(touch z)"]},
                "hooks": {"PermissionRequest": [{"matcher": "Bash",
                    "hooks": [{"type": "command", "command": approver}]}]}}),
        ),
    );
    assert!(
        ask_rule.contains("A PermissionRequest hook allowed the call, but an ask rule")
            && !ask_rule.contains("allow rule in the settings"),
        "{ask_rule}"
    );
    // A PreToolUse hook's ask likewise.
    let asker = r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"confirm every command"}}'"#;
    let hook_ask = refusal(
        "echo hi",
        &in_file(
            "hook-ask.json",
            json!({"permissions": {"allow": ["Bash(echo:*)"]},
                "hooks": {"PreToolUse": [{"matcher": "Bash",
                    "hooks": [{"type": "command", "command": asker}]}]}}),
        ),
    );
    assert!(
        hook_ask.contains("confirm every command") && !hook_ask.contains("allow rule"),
        "{hook_ask}"
    );
    // A tool that always asks the user (AskUserQuestion) is settled by no rule either, even
    // one that names it.
    let call = json!({"type": "tool_use", "id": "t1", "name": "AskUserQuestion",
        "input": {"questions": [{"question": "Which?", "header": "Pick",
            "options": [{"label": "a", "description": "A"}, {"label": "b", "description": "B"}],
            "multiSelect": false}]}});
    let out = bash(
        &root,
        r#"exec "$TW" run --json --settings '{"permissions": {"allow": ["AskUserQuestion"]}}' -"#,
        &format!("{call}\n"),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let asked = message["content"][0]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(
        asked.contains("Prompts are not available") && !asked.contains("allow rule"),
        "{asked}"
    );
}

/// A Bash call's own PostToolUse and PostToolUseFailure hooks run where its `cd` took the
/// session, and say so in `cwd`, as in Claude Code, whose Bash moves the process before the
/// hooks run: a hook that lints "the directory the agent is in" looks at the right one.
#[test]
fn post_hooks_see_the_directory_a_cd_moved_to() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("a/b")).unwrap();
    let log = root.join("hooks.log");
    // Each hook appends its event, its input's `cwd` and the directory it runs in.
    let hook = format!(
        r#"python3 -c 'import json,os,sys; i=json.load(sys.stdin); open("{}","a").write(json.dumps([i["hook_event_name"], i["tool_input"]["command"], i["cwd"], os.getcwd()])+"\n")'"#,
        log.display()
    );
    let settings = json!({"hooks": {
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook}]}],
        "PostToolUseFailure": [{"matcher": "Bash", "hooks": [{"type": "command", "command": hook}]}],
    }})
    .to_string();
    std::fs::write(root.join("post-settings.json"), &settings).unwrap();
    let calls = [
        json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "cd a && echo moved"}}),
        json!({"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "cd b && false"}}),
        json!({"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "pwd"}}),
    ];
    let stdin: String = calls.iter().map(|c| format!("{c}\n")).collect();
    let out = bash(
        &root,
        "exec \"$TW\" run --mode bypassPermissions --settings post-settings.json -",
        &stdin,
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&root.join("a/b").display().to_string()),
        "{stdout}"
    );
    let seen: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let at = |p: &str| root.join(p).display().to_string();
    assert_eq!(
        seen,
        [
            json!(["PostToolUse", "cd a && echo moved", at("a"), at("a")]),
            json!(["PostToolUseFailure", "cd b && false", at("a/b"), at("a/b")]),
            json!(["PostToolUse", "pwd", at("a/b"), at("a/b")]),
        ],
        "{}",
        text(&out.stderr)
    );
}

/// A PermissionRequest hook's `updatedPermissions` that cannot all be applied (here a
/// malformed WebFetch rule) are reported to the user, not dropped in silence; the call the
/// hook allowed runs, and the rules that could be applied hold.
#[test]
fn permission_updates_a_hook_could_not_apply_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let answer = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {
        "behavior": "allow",
        "updatedPermissions": [{"type": "addRules", "behavior": "allow", "destination": "session",
            "rules": [{"toolName": "WebFetch", "ruleContent": "example.com"}, {"toolName": "Bash", "ruleContent": "touch:*"}]}],
    }}});
    let settings = json!({"hooks": {"PermissionRequest": [{"hooks": [
        {"type": "command", "command": format!("cat > /dev/null; echo '{answer}'; touch asked-$$")},
    ]}]}});
    std::fs::write(root.join("pr-settings.json"), settings.to_string()).unwrap();
    let calls = [
        json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "touch one"}}),
        json!({"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "touch two"}}),
    ];
    let stdin: String = calls.iter().map(|c| format!("{c}\n")).collect();
    let out = bash(
        &root,
        "exec \"$TW\" run --settings pr-settings.json -",
        &stdin,
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        root.join("one").exists() && root.join("two").exists(),
        "{err}"
    );
    assert!(
        err.contains("PermissionRequest hook: its updatedPermissions were not all applied")
            && err.contains("WebFetch(example.com)")
            && err.contains("domain:"),
        "{err}"
    );
    // The Bash rule was added: the second call was not put to the hook.
    let asked = std::fs::read_dir(&root)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("asked-")
        })
        .count();
    assert_eq!(asked, 1, "{err}");
    // Rules asked to be saved to a settings file hold for the session, and the user is told
    // that nothing was written (found by review 36: silently not saved).
    assert!(!err.contains("hold for this session only"), "{err}");
    // `run`'s stderr with a PermissionRequest hook that allows with `updatedPermissions`.
    let allowing_with = |updates: serde_json::Value| {
        let answer = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow", "updatedPermissions": updates}}});
        let settings = json!({"hooks": {"PermissionRequest": [{"hooks": [
            {"type": "command", "command": format!("cat > /dev/null; echo '{answer}'")},
        ]}]}});
        std::fs::write(root.join("pr-settings.json"), settings.to_string()).unwrap();
        let out = bash(
            &root,
            "exec \"$TW\" run --settings pr-settings.json -",
            &stdin,
        );
        let err = text(&out.stderr);
        assert!(out.status.success(), "{err}");
        err
    };
    let err = allowing_with(json!([{"type": "addRules", "behavior": "allow",
        "destination": "localSettings", "rules": [{"toolName": "Bash", "ruleContent": "touch:*"}]}]));
    assert!(
        err.contains("save to localSettings hold for this session only"),
        "{err}"
    );
    assert!(!root.join(".claude").exists(), "{err}");
    // A mode or directory change is not applied (docs/hooks.md): the user is told so, as a
    // hook that echoes its `permission_suggestions` (acceptEdits for a write) expects one.
    let err = allowing_with(json!([
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"},
        {"type": "addDirectories", "directories": ["/tmp"], "destination": "session"},
    ]));
    assert_eq!(
        err.matches("its setMode (acceptEdits) and addDirectories were not applied")
            .count(),
        2,
        "once per call: {err}"
    );
}

/// `run` raises PostToolBatch once the turn's calls all have their results, as the agent loop
/// does before its next request: the hook sees every call with the result the model would
/// see, its context follows the results, and a block is reported. Not after a hook's stop.
#[test]
fn run_raises_post_tool_batch_after_the_calls() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let seen = root.join("batch.json");
    let hook = format!(
        "cat > '{}'; echo '{{\"hookSpecificOutput\":{{\"hookEventName\":\"PostToolBatch\",\"additionalContext\":\"batch checked\"}}}}'",
        seen.display()
    );
    let settings = json!({"hooks": {"PostToolBatch": [{"hooks": [
        {"type": "command", "command": hook},
        {"type": "command", "command": "echo 'lint failed' >&2; exit 2"},
    ]}]}})
    .to_string();
    let calls = [
        json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "mkdir -p sub && cd sub && echo one"}}),
        json!({"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "echo two"}}),
        json!({"type": "tool_use", "id": "t3", "name": "Read", "input": {"file_path": root.join("sub/../f.txt")}}),
    ];
    std::fs::write(root.join("f.txt"), "f\n").unwrap();
    let stdin: String = calls.iter().map(|c| format!("{c}\n")).collect();
    std::fs::write(root.join("batch-settings.json"), &settings).unwrap();
    let out = bash(
        &root,
        "exec \"$TW\" run --json --mode bypassPermissions --settings batch-settings.json -",
        &stdin,
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PostToolBatch");
    // The context after the calls: the `cd` of the first.
    assert_eq!(input["cwd"], root.join("sub").to_str().unwrap(), "{input}");
    let ids: Vec<&str> = input["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["t1", "t2", "t3"], "{input}");
    // The input as PreToolUse sees it: the file path made plain (one guard, every spelling).
    assert_eq!(
        input["tool_calls"][2]["tool_input"]["file_path"],
        root.join("f.txt").to_str().unwrap(),
        "{input}"
    );
    assert!(
        input["tool_calls"][1]["tool_response"]
            .to_string()
            .contains("two"),
        "{input}"
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    let content = message["content"].as_array().unwrap();
    assert_eq!(content[0]["tool_use_id"], "t1");
    assert!(
        content.last().unwrap()["text"]
            .as_str()
            .unwrap()
            .contains("batch checked"),
        "{message}"
    );
    assert!(
        err.contains("a PostToolBatch hook stopped the turn") && err.contains("lint failed"),
        "{err}"
    );

    // After a hook's `continue: false` the batch is not complete: no PostToolBatch.
    std::fs::remove_file(&seen).unwrap();
    let settings = json!({"hooks": {
        "PostToolUse": [{"hooks": [{"type": "command", "command": "echo '{\"continue\": false}'"}]}],
        "PostToolBatch": [{"hooks": [{"type": "command", "command": format!("cat > '{}'", seen.display())}]}],
    }})
    .to_string();
    std::fs::write(root.join("batch-settings.json"), &settings).unwrap();
    let out = bash(
        &root,
        "exec \"$TW\" run --json --mode bypassPermissions --settings batch-settings.json -",
        &stdin,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!seen.exists());
}

/// A `--mcp-config` file names the MCP servers the next session starts, as a `--settings`
/// file names its hooks: rewriting it is asked about even in bypass mode (and refused where
/// nobody can be asked), so a call cannot add a server to the next run.
#[test]
fn an_mcp_config_file_of_the_session_is_protected() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config = root.join("mcp.json");
    std::fs::write(&config, r#"{"mcpServers": {}}"#).unwrap();
    let read = json!({"type": "tool_use", "id": "t0", "name": "Read",
        "input": {"file_path": config}});
    let call = json!({"type": "tool_use", "id": "t1", "name": "Write",
        "input": {"file_path": config, "content": r#"{"mcpServers": {"evil": {"command": "/bin/true"}}}"#}});
    let out = bash(
        &root,
        r#"exec "$TW" run --json --mode bypassPermissions --mcp-config mcp.json -"#,
        &format!("{read}\n{call}\n"),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(message["content"][0]["is_error"], true, "{message}");
    assert_eq!(message["content"][1]["is_error"], true, "{message}");
    assert!(
        message["content"][1]["content"]
            .as_str()
            .unwrap()
            .contains("settings file of this session"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        r#"{"mcpServers": {}}"#
    );
    // Another file of the project is written as the mode allows.
    let other = root.join("notes.json");
    let call = json!({"type": "tool_use", "id": "t2", "name": "Write",
        "input": {"file_path": other, "content": "{}"}});
    let out = bash(
        &root,
        r#"exec "$TW" run --json --mode bypassPermissions --mcp-config mcp.json -"#,
        &format!("{call}\n"),
    );
    let message: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(message["content"][0]["is_error"], true, "{message}");
    assert_eq!(std::fs::read_to_string(&other).unwrap(), "{}");
}

/// Settings that turn bypass mode off while another level chooses it say so only when the
/// session would have started in that mode: under `--mode plan` the warning "using default
/// mode" would be false (the session runs in plan mode).
#[test]
fn the_bypass_off_warning_is_not_given_under_a_mode_flag() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join(".no-user-config")).unwrap();
    std::fs::write(
        root.join(".no-user-config/settings.json"),
        r#"{"permissions": {"defaultMode": "bypassPermissions"}}"#,
    )
    .unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        r#"{"permissions": {"disableBypassPermissionsMode": "disable"}}"#,
    )
    .unwrap();
    let call = json!({"type": "tool_use", "id": "t1", "name": "Glob",
        "input": {"pattern": "*.json"}});
    let warning = "turns bypassPermissions off";
    let out = bash(
        &root,
        r#"exec "$TW" run --json --mode plan -"#,
        &format!("{call}\n"),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains(warning),
        "{}",
        text(&out.stderr)
    );
    // Without the flag the settings' bypass is turned off, and that is said.
    let out = bash(&root, r#"exec "$TW" run --json -"#, &format!("{call}\n"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(warning), "{}", text(&out.stderr));
}

// What the 27th black-box review found in the binary's settings and session set-up:
// `permissions check` and a session expanding `~` alike under a settings `env` that sets
// `HOME`, misspelt keys in an inline `--settings`, two inputs reading standard input, the
// session directory left behind by a refusal, a NUL byte in a path, and the words of a
// fatal `--settings` problem.

/// Runs the binary in `cwd` with `args`, `stdin` on its standard input (none: `/dev/null`),
/// no user settings (`CLAUDE_CONFIG_DIR` an empty place) unless `env` says otherwise.
fn toolwright(args: &[&str], cwd: &Path, stdin: Option<&str>, env: &[(&str, &Path)]) -> Output {
    let mut cmd = binary::toolwright_command(args, cwd);
    cmd.env("CLAUDE_CONFIG_DIR", cwd.join(".no-user-config"))
        .envs(env.iter().copied());
    binary::output_with_stdin(cmd, stdin)
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

/// A PostToolUse hook's `continue: false` with, later in the same response, a
/// PermissionRequest hook's interrupt: the first stop's line does not say the other calls
/// still ran when the interrupt kept one from running (found by review 37: `touch later.txt`
/// was said to have run).
#[test]
fn a_hook_stop_does_not_claim_calls_ran_that_an_interrupt_kept_from_running() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let post = json!({"continue": false, "stopReason": "post says stop"});
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision":
        {"behavior": "deny", "message": "no way", "interrupt": true}}});
    let settings = json!({
        "permissions": {"allow": ["Bash(echo:*)", "Bash(touch:*)"]},
        "hooks": {
            "PostToolUse": [{"matcher": "Bash", "hooks": [
                {"type": "command", "command": format!("cat > /dev/null; echo '{post}'")}]}],
            "PermissionRequest": [{"matcher": "Write", "hooks": [
                {"type": "command", "command": format!("cat > /dev/null; echo '{deny}'")}]}],
        },
    });
    std::fs::write(root.join("s.json"), settings.to_string()).unwrap();
    let write = root.join("w.txt").display().to_string();
    let calls = [
        json!({"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "echo first"}}),
        json!({"type": "tool_use", "id": "t2", "name": "Write", "input": {"file_path": write, "content": "x"}}),
        json!({"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "touch later.txt"}}),
    ];
    let stdin: String = calls.iter().map(|c| format!("{c}\n")).collect();
    let out = bash(&root, "exec \"$TW\" run --settings s.json -", &stdin);
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!root.join("later.txt").exists(), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("a hook stopped the turn after Bash(echo first)"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(!line.contains("other calls still ran"), "{line}");
    // The Write refused by the hook, the Bash after it cancelled.
    assert!(
        line.contains("2 of the response's 2 other calls did not run (refused or cancelled)"),
        "{line}"
    );
    // Without the interrupt, the other calls ran, and it says so.
    let settings = json!({
        "permissions": {"allow": ["Bash(echo:*)", "Bash(touch:*)"]},
        "hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": format!("cat > /dev/null; echo '{post}'")}]}]},
    });
    std::fs::write(root.join("s.json"), settings.to_string()).unwrap();
    let stdin = format!("{}\n{}\n", calls[0], calls[2]);
    let out = bash(&root, "exec \"$TW\" run --settings s.json -", &stdin);
    let err = text(&out.stderr);
    assert!(root.join("later.txt").exists(), "{err}");
    assert!(
        err.contains("the response's other calls still ran"),
        "{err}"
    );
}
