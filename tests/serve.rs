//! `toolwright serve` driven by a third-party MCP client: the MCP inspector CLI of
//! `../shared/mcp-peers` (installed by `.ci/run`; its path comes from `MCP_INSPECTOR_CLI`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// The inspector's path, or `None` (with a notice) outside CI when it is not installed.
fn inspector() -> Option<String> {
    match std::env::var("MCP_INSPECTOR_CLI") {
        Ok(path) if Path::new(&path).exists() => Some(path),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("MCP_INSPECTOR_CLI is not set in CI: .ci/run must install ../shared/mcp-peers")
        }
        _ => {
            eprintln!(
                "notice: MCP_INSPECTOR_CLI is not set; skipping (run `eval \"$(bash ../shared/mcp-peers/install.sh)\"`)"
            );
            None
        }
    }
}

fn call(inspector: &str, project: &Path, method_args: &[&str]) -> Value {
    let out = Command::new(inspector)
        .arg(env!("CARGO_BIN_EXE_toolwright"))
        .args(["serve", "--cwd", project.to_str().unwrap()])
        .args(method_args)
        .env("CLAUDE_CONFIG_DIR", project.join(".no-user-config"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "inspector failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_third_party_client_lists_and_calls_our_tools_through_the_pipeline() {
    let Some(inspector) = inspector() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join(".claude")).unwrap();
    std::fs::write(
        root.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(rm:*)"]}}"#,
    )
    .unwrap();
    std::fs::write(root.join("f.txt"), "served file\n").unwrap();

    let list = call(&inspector, &root, &["--method", "tools/list"]);
    let names: Vec<&str> = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for expected in ["Bash", "Read", "Edit", "Glob", "Grep", "Write"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    let read = list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "Read")
        .unwrap();
    assert_eq!(read["inputSchema"]["required"][0], "file_path");

    let ok = call(
        &inspector,
        &root,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "Bash",
            "--tool-arg",
            "command=echo served",
        ],
    );
    assert_eq!(ok["isError"], false);
    assert_eq!(ok["content"][0]["text"], "served");

    let path = root.join("f.txt");
    let arg = format!("file_path={}", path.display());
    let read = call(
        &inspector,
        &root,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "Read",
            "--tool-arg",
            &arg,
        ],
    );
    assert_eq!(read["content"][0]["text"], "     1→served file");

    // The project's deny rule applies to MCP clients too.
    let denied = call(
        &inspector,
        &root,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "Bash",
            "--tool-arg",
            "command=rm f.txt",
        ],
    );
    assert_eq!(denied["isError"], true);
    assert!(
        denied["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("denied"),
        "{denied}"
    );
    assert!(path.exists());

    let unknown = call(
        &inspector,
        &root,
        &["--method", "tools/call", "--tool-name", "Nope"],
    );
    assert_eq!(unknown["isError"], true);
}
