//! Session 35, the command line: `toolwright run`, which asks nobody, refuses EnterPlanMode
//! (plan mode could never be left: ExitPlanMode always asks) unless a PermissionRequest hook
//! can approve ExitPlanMode, as the non-interactive agent and `serve` refuse it. Found by
//! review: after an EnterPlanMode every later change was refused, even one the settings
//! allow. Real `toolwright run` processes in temporary directories.

use std::path::Path;

use crate::binary::{output_with_stdin, toolwright_command};

/// `toolwright run --json` of EnterPlanMode then a Write of `new.txt` in `project`, with
/// `settings`: the two results' texts.
fn enter_then_write(project: &Path, settings: &str) -> (String, String) {
    let calls = [
        serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "EnterPlanMode", "input": {}}),
        serde_json::json!({"type": "tool_use", "id": "toolu_2", "name": "Write",
            "input": {"file_path": project.join("new.txt"), "content": "hi\n"}}),
    ];
    let input: String = calls.iter().map(|c| format!("{c}\n")).collect();
    let mut command = toolwright_command(&["run", "--json", "--settings", settings], project);
    command
        .env("HOME", project.join(".home"))
        .env("CLAUDE_CONFIG_DIR", project.join(".home/.claude"));
    let out = output_with_stdin(command, Some(&input));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let message: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    let text = |n: usize| message["content"][n]["content"].to_string();
    (text(0), text(1))
}

#[test]
fn run_refuses_enter_plan_mode_when_nobody_can_approve_leaving_it() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let (enter, write) = enter_then_write(&project, r#"{"permissions":{"allow":["Write"]}}"#);
    assert!(
        enter.contains("EnterPlanMode is not available in this session"),
        "{enter}"
    );
    assert!(write.contains("File created successfully"), "{write}");
    assert_eq!(
        std::fs::read_to_string(project.join("new.txt")).unwrap(),
        "hi\n"
    );
    // With a PermissionRequest hook for ExitPlanMode, plan mode can be left: entered.
    std::fs::remove_file(project.join("new.txt")).unwrap();
    let hooked = r#"{"permissions":{"allow":["Write"]},"hooks":{"PermissionRequest":[{"matcher":"ExitPlanMode","hooks":[{"type":"command","command":"echo '{}'"}]}]}}"#;
    let (enter, write) = enter_then_write(&project, hooked);
    assert!(enter.contains("Entered plan mode"), "{enter}");
    assert!(write.contains("Plan mode is active"), "{write}");
}

/// A concurrency cap higher than the open-file limit holds is lowered to what it holds, and
/// said: every command runs (waiting its turn) instead of failing with "Too many open
/// files". Found by review: with `ulimit -n 256` and a cap of 150, 71 of 150 `sleep`
/// commands failed to start.
#[test]
fn a_cap_past_the_open_file_limit_is_fitted_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let project = std::fs::canonicalize(dir.path()).unwrap();
    let calls: String = (0..150)
        .map(|n| {
            format!(
                "{}\n",
                serde_json::json!({"type": "tool_use", "id": format!("toolu_{n}"), "name": "Bash",
                    "input": {"command": "sleep 0.05; echo ran"}})
            )
        })
        .collect();
    // Soft and hard limit both 256 (as `ulimit -n` sets them), which the binary cannot raise.
    let mut command = std::process::Command::new("sh");
    command
        .arg("-c")
        .arg("ulimit -n 256 && exec \"$0\" run --json --mode bypassPermissions")
        .arg(env!("CARGO_BIN_EXE_toolwright"))
        .current_dir(&project)
        .env("HOME", project.join(".home"))
        .env("CLAUDE_CONFIG_DIR", project.join(".home/.claude"))
        .env("TOOLWRIGHT_MAX_TOOL_USE_CONCURRENCY", "150");
    let out = output_with_stdin(command, Some(&calls));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let message: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    let results = message["content"].as_array().unwrap();
    assert_eq!(results.len(), 150, "{stderr}");
    let failed: Vec<String> = results
        .iter()
        .map(|r| r["content"].to_string())
        .filter(|text| !text.contains("ran"))
        .collect();
    assert!(
        failed.is_empty(),
        "{} failed: {:?}",
        failed.len(),
        &failed[..failed.len().min(3)]
    );
    assert!(
        stderr.contains("the open-file limit (256, `ulimit -n`) holds about 24 calls at once"),
        "{stderr}"
    );
}
