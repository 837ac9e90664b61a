//! Review 39's findings on the demo: `CLAUDE_CODE_SIMPLE` in the environment turned its
//! Glob and Grep calls into unknown tools (the demo is to show the same thing everywhere),
//! and its hook said the machine had no `python` on a machine that has one.

use std::process::Command;

/// The demo under `CLAUDE_CODE_SIMPLE=1` runs every call it was recorded with.
#[test]
fn the_demo_ignores_simple_mode_in_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolwright"))
        .args(["demo", "--no-pace"])
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .env("CLAUDE_CONFIG_DIR", dir.path().join(".no-user-config"))
        .env("CLAUDE_CODE_SIMPLE", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.contains("unknown tool"), "{stdout}");
    assert!(stdout.contains("✓ Glob(**/*.py)"), "{stdout}");
    assert!(stdout.contains("✓ mcp__docs__Grep(mean)"), "{stdout}");
    // Its hook says why it rewrites without saying what this machine has.
    assert!(
        stdout.contains("hook: The hook rewrote `python` to `python3`")
            && !stdout.contains("this machine has no"),
        "{stdout}"
    );
}
