//! The contract each tool offers the executor and the permission engine: flags, result
//! size, and the path permission rules are matched against.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use serde_json::json;
use tool_core::{FileAccess, MaxResultSize, PermissionSubject, find_tool};

fn subject(path: &str, access: FileAccess) -> Option<PermissionSubject> {
    Some(PermissionSubject::Path {
        path: PathBuf::from(path),
        access,
    })
}

#[test]
fn flags_sizes_and_permission_subjects() {
    let tools = tools_builtin::file_tools();
    let get = |name: &str| find_tool(&tools, name).unwrap().clone();
    let read = get("Read");
    let input = json!({"file_path": "/w/./a/../b.txt"});
    assert!(read.is_concurrency_safe(&input) && read.is_read_only(&input));
    assert_eq!(read.max_result_size(), MaxResultSize::Unbounded);
    assert_eq!(
        read.permission_subject(&input),
        subject("/w/b.txt", FileAccess::Read)
    );

    for name in ["Write", "Edit"] {
        let tool = get(name);
        let input = if name == "Write" {
            json!({"file_path": "/w/x.rs", "content": ""})
        } else {
            json!({"file_path": "/w/x.rs", "old_string": "a", "new_string": "b"})
        };
        assert!(
            !tool.is_concurrency_safe(&input) && !tool.is_read_only(&input),
            "{name}"
        );
        assert_eq!(
            tool.permission_subject(&input),
            subject("/w/x.rs", FileAccess::Write),
            "{name}"
        );
    }
    let nb = get("NotebookEdit");
    let input = json!({"notebook_path": "/w/n.ipynb", "new_source": "x", "cell_id": "a"});
    assert!(!nb.is_concurrency_safe(&input));
    assert_eq!(
        nb.permission_subject(&input),
        subject("/w/n.ipynb", FileAccess::Write)
    );

    let glob = get("Glob");
    let input = json!({"pattern": "*.rs", "path": "/w/src"});
    assert!(glob.is_concurrency_safe(&input) && glob.is_read_only(&input));
    assert_eq!(
        glob.permission_subject(&input),
        subject("/w/src", FileAccess::Read)
    );
    assert_eq!(
        glob.permission_subject(&json!({"pattern": "/etc/**/*.conf"})),
        subject("/etc", FileAccess::Read)
    );

    let grep = get("Grep");
    let input = json!({"pattern": "x", "path": "/w"});
    assert!(grep.is_concurrency_safe(&input) && grep.is_read_only(&input));
    assert_eq!(
        grep.permission_subject(&input),
        subject("/w", FileAccess::Read)
    );
}

/// A hook's replacement output is taken only in the tool's own output shape.
#[test]
fn replacement_outputs_must_have_the_tool_shape() {
    use tool_core::{Tool, ToolResultContent};
    let bash: &dyn Tool = &tools_builtin::Bash::default();
    assert_eq!(bash.render_output(&json!({"nope": 1})), None);
    assert_eq!(bash.render_output(&json!("just text")), None);
    let redacted = json!({"stdout": "token=[REDACTED]\n", "stderr": "", "interrupted": false});
    assert_eq!(
        bash.render_output(&redacted),
        Some(ToolResultContent::Text("token=[REDACTED]".into()))
    );
    let read: &dyn Tool = &tools_builtin::Read;
    assert_eq!(read.render_output(&json!({"type": "text"})), None);
    let text = json!({"type": "text", "file": {"filePath": "/w/a.txt", "content": "one\ntwo",
        "numLines": 2, "startLine": 5, "totalLines": 9}});
    assert_eq!(
        read.render_output(&text),
        Some(ToolResultContent::Text("     5→one\n     6→two".into()))
    );
}
