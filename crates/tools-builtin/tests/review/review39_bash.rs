//! Review 39, the Bash tool's result for a command the tool itself ends: at its timeout, the
//! shell's status is a number, as for a command killed by a signal from inside
//! (`Exit code 143` for the SIGTERM the tool sends first, 137 when SIGKILL ends it), so that
//! hook scripts reading `^Exit code (\d+)` from a PostToolUseFailure `error` keep working.

use std::time::{Duration, Instant};

use serde_json::json;
use tool_core::{ProgressSender, Tool, ToolError, ToolUseContext};
use tools_builtin::Bash;

/// Found by review: a `sleep` killed at its 1-second timeout said `Exit code unknown
/// (killed by a signal)`. The tool sends SIGTERM to the group, which ends bash: 128 + 15.
/// A shell that ignores SIGTERM is ended by SIGKILL after the grace: 128 + 9. (Both start
/// with `sleep`, which is killed at its timeout rather than moved to the background.)
#[tokio::test]
async fn a_command_ended_at_its_timeout_has_a_numeric_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolUseContext::new(dir.path());
    for (command, code) in [("sleep 30", 143), ("sleep 0; trap '' TERM; sleep 30", 137)] {
        let started = Instant::now();
        let bash = Bash::default();
        let input = bash
            .parse_input(json!({"command": command, "timeout": 1000}))
            .unwrap();
        let err = bash
            .call(input, ctx.clone(), ProgressSender::none())
            .await
            .unwrap_err();
        // A guard against a hang, not a timing assertion.
        assert!(started.elapsed() < Duration::from_secs(60));
        let ToolError::Shell {
            exit_code,
            interrupted,
            ..
        } = &err
        else {
            panic!("{command}: {err:?}")
        };
        assert!(interrupted, "{command}");
        assert_eq!(*exit_code, Some(code), "{command}: {err:?}");
        let text = err.to_model_text();
        let first = text.lines().next().unwrap_or_default();
        assert_eq!(first, format!("Exit code {code}"), "{text}");
        assert!(text.contains("Command timed out after 1000 ms"), "{text}");
    }
}
