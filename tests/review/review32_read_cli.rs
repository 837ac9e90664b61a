//! Review 32, the file tools: Read told the model whether a path outside the working
//! directories existed before the permission step (a missing `~/.ssh/id_ed25519` got "File
//! does not exist", an existing one a permission refusal), so any path on the machine could
//! be probed without approval. Outside the working directories the permission step comes
//! first now; inside them a missing file is still said at once. Real `toolwright run`
//! processes in temporary directories.

use std::path::Path;

use serde_json::{Value, json};

use crate::binary::{output_with_stdin, toolwright_command};

/// `toolwright run --json` of `calls` in `project` with `mode`, the user's settings kept out
/// of the way; the tool_result blocks it printed.
fn run(project: &Path, mode: &str, calls: &[Value]) -> Vec<Value> {
    let input: String = calls.iter().map(|c| format!("{c}\n")).collect();
    let mut command = toolwright_command(&["run", "--json", "--mode", mode], project);
    command
        .env("HOME", project.join(".home"))
        .env("CLAUDE_CONFIG_DIR", project.join(".home/.claude"));
    let out = output_with_stdin(command, Some(&input));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let message: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr)));
    message["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["type"] == "tool_result")
        .cloned()
        .collect()
}

fn read(id: &str, path: &Path) -> Value {
    json!({"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": path}})
}

/// What the model reads of a result, with the path of the file taken out.
fn text_without(result: &Value, path: &Path) -> String {
    result["content"]
        .as_str()
        .unwrap_or_default()
        .replace(&path.display().to_string(), "PATH")
}

#[test]
fn a_missing_file_outside_the_project_is_refused_as_an_existing_one_is() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let project = root.join("project");
    let outside = root.join("outside");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let existing = outside.join("id_ed25519");
    let missing = outside.join("id_rsa");
    let outside_dir = outside.join("keys");
    std::fs::write(&existing, "secret\n").unwrap();
    std::fs::create_dir(&outside_dir).unwrap();
    let results = run(
        &project,
        "default",
        &[
            read("toolu_1", &existing),
            read("toolu_2", &missing),
            read("toolu_3", &outside_dir),
        ],
    );
    assert_eq!(results.len(), 3, "{results:?}");
    let refusal = text_without(&results[0], &existing);
    assert!(
        refusal.contains("outside the working directories"),
        "{refusal}"
    );
    for (result, path) in [(&results[1], &missing), (&results[2], &outside_dir)] {
        assert_eq!(result["is_error"], true, "{result}");
        assert_eq!(
            text_without(result, path),
            refusal,
            "a missing file or a directory outside the project is told apart from a file"
        );
    }
}

/// Once the call is allowed (bypassPermissions), a missing file outside is said, with the
/// usual text; inside the project a missing file is said at once in any mode.
#[test]
fn a_missing_file_is_still_said_where_the_call_may_look() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let project = root.join("project");
    std::fs::create_dir_all(&project).unwrap();
    let missing_outside = root.join("gone.txt");
    let missing_inside = project.join("gone.txt");
    let results = run(
        &project,
        "bypassPermissions",
        &[read("toolu_1", &missing_outside)],
    );
    let text = results[0]["content"].as_str().unwrap_or_default();
    assert!(text.contains("File does not exist."), "{text}");
    let results = run(&project, "default", &[read("toolu_1", &missing_inside)]);
    let text = results[0]["content"].as_str().unwrap_or_default();
    assert!(text.contains("File does not exist."), "{text}");
    assert_eq!(results[0]["is_error"], true);
}
