//! WebFetch in the binary, review 28: `permissions check` reports the URLs a session refuses
//! before any permission is decided, and `run` names each call's input on its line.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use crate::binary;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs the binary in `cwd` with `args`, `stdin` on its standard input (none: `/dev/null`),
/// and no user settings (`CLAUDE_CONFIG_DIR` an empty place).
fn toolwright(args: &[&str], cwd: &Path, stdin: Option<&str>) -> Output {
    let mut cmd = binary::toolwright_command(args, cwd);
    cmd.env("CLAUDE_CONFIG_DIR", cwd.join(".no-user-config"));
    binary::output_with_stdin(cmd, stdin)
}

/// A temp dir, by its real path.
fn temp_root() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    (dir, root)
}

/// `permissions check` of WebFetch `input` with every WebFetch call allowed.
fn check_allowed(root: &Path, input: &Value) -> Output {
    let allow = json!({"permissions": {"allow": ["WebFetch"]}}).to_string();
    toolwright(
        &[
            "permissions",
            "check",
            "--settings",
            &allow,
            "WebFetch",
            &input.to_string(),
        ],
        root,
        None,
    )
}

/// Found by review: `permissions check` allowed WebFetch URLs a session refuses before any
/// permission is decided ("Invalid URL …"): a `file:` URL, a host that is no public name, a
/// URL with a user name and password, one over 2,000 characters. Each is reported as that
/// refusal (exit 2), as a NUL byte's is; a URL a session fetches is still decided.
#[test]
fn permissions_check_reports_the_urls_a_session_refuses() {
    let (_dir, root) = temp_root();
    let long = format!("https://example.com/{}", "a".repeat(2000));
    for (url, said) in [
        (
            "file:///etc/passwd",
            "only http and https URLs can be fetched",
        ),
        (
            "http://intranet/x",
            "the host name must be a public domain name",
        ),
        (
            "http://u:p@localhost/x",
            "URLs with a user name or password are not fetched",
        ),
        (long.as_str(), "the limit is 2000"),
    ] {
        let out = check_allowed(&root, &json!({"url": url, "prompt": "x"}));
        let err = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{url}: {}{err}",
            text(&out.stdout)
        );
        assert!(
            err.contains("a session would refuse this call before any permission is decided")
                && err.contains(said),
            "{url}: {err}"
        );
        assert!(!text(&out.stdout).contains("decision: allow"), "{url}");
    }
    let out = check_allowed(&root, &json!({"url": "https://docs.rs/x", "prompt": "x"}));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("decision: allow"),
        "{}",
        text(&out.stdout)
    );
}

/// Found by review: `run`'s line for a WebFetch call did not name its URL (`✗ WebFetch
/// [t1]  deny · …`) while Bash, Read and Write calls name their input. WebFetch names its
/// URL now, and the other built-ins without one their natural input: a notebook's path, a
/// skill's name, a task's id, an agent's description.
#[test]
fn run_names_each_calls_input() {
    let (_dir, root) = temp_root();
    let notebook = root.join("nb.ipynb");
    let calls = [
        (
            "WebFetch",
            json!({"url": "https://example.com/page", "prompt": "x"}),
            "WebFetch(https://example.com/page)".to_owned(),
        ),
        (
            "NotebookEdit",
            json!({"notebook_path": notebook, "new_source": "x"}),
            format!("NotebookEdit({})", notebook.display()),
        ),
        (
            "Skill",
            json!({"skill": "review"}),
            "Skill(review)".to_owned(),
        ),
        (
            "TaskOutput",
            json!({"task_id": "bg7"}),
            "TaskOutput(bg7)".to_owned(),
        ),
        ("TaskGet", json!({"taskId": "3"}), "TaskGet(3)".to_owned()),
        (
            "Agent",
            json!({"description": "find bugs", "prompt": "look"}),
            "Agent(find bugs)".to_owned(),
        ),
    ];
    let turn: String = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input, _))| {
            format!(
                "{}\n",
                json!({"type": "tool_use", "id": format!("t{i}"), "name": name, "input": input})
            )
        })
        .collect();
    let out = toolwright(&["run", "-"], &root, Some(&turn));
    let stdout = text(&out.stdout);
    for (i, (_, _, label)) in calls.iter().enumerate() {
        let line = stdout
            .lines()
            .find(|l| l.contains(&format!("  [t{i}]  ")))
            .unwrap_or_else(|| panic!("no line for t{i}: {stdout}{}", text(&out.stderr)));
        assert!(
            line[line.find(' ').unwrap() + 1..].starts_with(&format!("{label}  [t{i}]")),
            "{line}"
        );
    }
}
