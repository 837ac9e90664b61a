//! Session 35, the command line: `toolwright run`, which asks nobody, refuses EnterPlanMode
//! (plan mode could never be left: ExitPlanMode always asks) unless a PermissionRequest hook
//! can approve ExitPlanMode, as the non-interactive agent and `serve` refuse it. Found by
//! review: after an EnterPlanMode every later change was refused, even one the settings
//! allow. Real `toolwright run` processes in temporary directories.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

#[path = "support/binary.rs"]
mod binary;
use binary::{output_with_stdin, toolwright_command};

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
