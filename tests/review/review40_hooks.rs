//! Review 40: a wrong-typed `disableAllHooks` or `allowManagedHooksOnly` in a `--settings`
//! value only warned "…; ignored" and the hooks ran, while a misspelt key there stops the
//! command (docs/cli.md: errors in what the command line gave stop it). Every error the
//! hooks loader finds in a key of a command-line value stops the command now. Each test runs
//! the real binary with a real hook script in a temp dir.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::json;

use crate::binary;

/// A temp dir, by its real path, with an empty user configuration (`config/`) and a hook
/// script `hook.sh` that creates `hook-ran` when it runs.
fn temp_root() -> (tempfile::TempDir, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("config")).unwrap();
    let script = root.join("hook.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\n", root.join("hook-ran").display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, root)
}

/// `toolwright run -` in `root` with `args` after it and one Bash call on its input.
fn run(root: &Path, args: &[&str]) -> Output {
    let mut all = vec!["run", "-"];
    all.extend_from_slice(args);
    let mut cmd = binary::toolwright_command(&all, root);
    cmd.env("CLAUDE_CONFIG_DIR", root.join("config"))
        .env("HOME", root)
        .env_remove("ANTHROPIC_MODEL");
    let call = json!({"type": "tool_use", "id": "toolu_1", "name": "Bash",
        "input": {"command": "echo ran"}});
    binary::output_with_stdin(cmd, Some(&format!("{call}\n")))
}

/// Found by review: `--settings '{"disableAllHooks":"true"}'` warned that the key was
/// ignored and ran the call with its hooks; now the command stops with exit 2, naming the
/// key, and no hook runs: in another value than the hooks', in the same one, and in a
/// `--settings` file. (`allowManagedHooksOnly` in a command-line value stops it in any case:
/// the permission settings loader refuses a managed-only key there.)
#[test]
fn a_wrong_typed_hooks_switch_on_the_command_line_stops_the_command() {
    let (_dir, root) = temp_root();
    let hook = root.join("hook.sh").display().to_string();
    let hooks = json!({"PreToolUse": [{"matcher": "Bash",
        "hooks": [{"type": "command", "command": hook}]}]});
    let file = root.join("switch.json");
    std::fs::write(&file, json!({"disableAllHooks": "true"}).to_string()).unwrap();
    let file = file.display().to_string();

    // The hook runs when the switches are read (so the test would see it run).
    let out = run(&root, &["--settings", &json!({"hooks": hooks}).to_string()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(root.join("hook-ran").exists(), "the hook did not run");
    std::fs::remove_file(root.join("hook-ran")).unwrap();

    let cases = [
        (
            "disableAllHooks",
            vec![
                json!({"hooks": hooks}).to_string(),
                json!({"disableAllHooks": "true"}).to_string(),
            ],
        ),
        (
            "disableAllHooks",
            vec![json!({"hooks": hooks, "disableAllHooks": 1}).to_string()],
        ),
        (
            "disableAllHooks",
            vec![json!({"hooks": hooks}).to_string(), file],
        ),
        (
            "allowManagedHooksOnly",
            vec![json!({"hooks": hooks, "allowManagedHooksOnly": "yes"}).to_string()],
        ),
    ];
    for (key, values) in cases {
        let mut args = Vec::new();
        for v in &values {
            args.extend(["--settings", v.as_str()]);
        }
        let out = run(&root, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{values:?}: {stderr}");
        assert!(
            stderr.contains("bad --settings")
                && stderr.contains(key)
                && !stderr.contains("ignored"),
            "{values:?}: {stderr}"
        );
        assert!(
            !root.join("hook-ran").exists(),
            "{values:?}: the hook ran: {stderr}"
        );
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("ran"),
            "{values:?}"
        );
    }
}
