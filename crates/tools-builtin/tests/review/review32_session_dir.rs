//! A session's directory removed while a call is still finishing (an exit on a second
//! signal removes it while the runtime runs on) is not made again by that call: the
//! results directory inside it is made on first use inside its parent only. Found by
//! `tests/review/review30_signals.rs`, which left the directory behind now and then: a Bash call
//! whose failed output was saved after the exit's clean-up re-created it.

use crate::common;

use serde_json::json;
use tool_core::ToolUseContext;
use tools_builtin::Bash;

/// A project, and a results directory inside a session directory that is gone.
fn removed_session() -> (tempfile::TempDir, ToolUseContext, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("big.txt"), "0123456789\n".repeat(2000)).unwrap();
    let session = dir.path().join("session");
    let ctx = common::ctx(&project).with_results_dir(session.join("tool-results"));
    (dir, ctx, session)
}

/// A failed command whose output is longer than its error shows: the output would be saved
/// in the results directory; its session's directory is not made for it.
#[tokio::test]
async fn a_failed_commands_saved_output_does_not_make_a_removed_session_again() {
    let (_dir, ctx, session) = removed_session();
    let failure = common::run(
        &Bash::default(),
        &ctx,
        json!({"command": "cat big.txt missing.txt"}),
    )
    .await
    .expect_err("the command fails");
    assert!(failure.text.contains("missing.txt"), "{}", failure.text);
    assert!(
        !session.exists(),
        "the removed session's directory was made again: {}",
        failure.text
    );
}

/// Output past the memory cap spills to a file in the results directory: not inside a
/// session directory made again. The command still gives its head and tail.
#[tokio::test]
async fn spilled_output_does_not_make_a_removed_session_again() {
    let (_dir, ctx, session) = removed_session();
    let out = common::run(
        &Bash::default(),
        &ctx,
        json!({"command": "head -c 3000000 /dev/zero | tr '\\0' 'a'; echo; echo THE-END"}),
    )
    .await
    .unwrap();
    let text = out.content.joined_text();
    assert!(text.trim_end().ends_with("THE-END"), "{text}");
    assert!(
        !session.exists(),
        "the removed session's directory was made again"
    );
}

/// A background command's output file goes in the results directory too: starting one
/// there fails, saying where, rather than making the session's directory again.
#[tokio::test]
async fn a_background_command_does_not_make_a_removed_session_again() {
    let (_dir, ctx, session) = removed_session();
    let result = common::run(
        &Bash::default(),
        &ctx,
        json!({"command": "echo hi", "run_in_background": true}),
    )
    .await;
    assert!(
        !session.exists(),
        "the removed session's directory was made again"
    );
    let failure = result.expect_err("no place for the task's output");
    assert!(failure.text.contains("tool-results"), "{}", failure.text);
}

/// The function itself: a directory in a parent that does not exist is not made, and says
/// so; an existing one is left as it is, and a new one is owner-only.
#[test]
fn create_private_dir_makes_no_parent() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("gone/results");
    let e = tool_core::create_private_dir(&nested).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    assert!(!dir.path().join("gone").exists());
    let made = dir.path().join("results");
    tool_core::create_private_dir(&made).unwrap();
    tool_core::create_private_dir(&made).unwrap();
    let mode = std::fs::metadata(&made).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700);
    std::fs::write(dir.path().join("file"), "").unwrap();
    assert!(tool_core::create_private_dir(&dir.path().join("file")).is_err());
}
