//! Fuzzing tool input validation (on stable, with proptest): arbitrary JSON, and objects
//! built from each built-in tool's own schema (its field names, values of every type,
//! strings that are paths to every kind of file: text, binary, directory, notebook,
//! symlinks in and out, a FIFO, devices, missing and relative paths), through the same
//! steps the pipeline runs before a call: the schema parse, the safety flags, the
//! permission subject, `validate_input`. Properties: no panic, no hang; every refusal says
//! what is wrong.
//!
//! `TOOLWRIGHT_FUZZ_SECS=60 cargo test -p tools-builtin --test fuzz_inputs` (or `cargo
//! xtask fuzz inputs`) runs for a minute instead of the quick pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tool_core::{Tool, ToolUseContext};

/// Every built-in tool with a stable place in this crate.
fn tools() -> Vec<Arc<dyn Tool>> {
    let mut v: Vec<Arc<dyn Tool>> = vec![
        Arc::new(tools_builtin::AskUserQuestion),
        Arc::new(tools_builtin::Bash::default()),
        Arc::new(tools_builtin::Edit),
        Arc::new(tools_builtin::EnterPlanMode),
        Arc::new(tools_builtin::ExitPlanMode),
        Arc::new(tools_builtin::Glob),
        Arc::new(tools_builtin::Grep),
        Arc::new(tools_builtin::NotebookEdit),
        Arc::new(tools_builtin::Read),
        Arc::new(tools_builtin::Skill),
        Arc::new(tools_builtin::TaskOutput),
        Arc::new(tools_builtin::TaskStop),
        Arc::new(tools_builtin::TodoWrite),
        Arc::new(tools_builtin::ToolSearch),
        Arc::new(tools_builtin::WebFetch),
        Arc::new(tools_builtin::Write),
    ];
    #[cfg(feature = "proactive")]
    v.push(Arc::new(tools_builtin::Sleep));
    v.sort_by(|a, b| a.name().cmp(b.name()));
    v
}

/// A project with one file of every kind.
struct Sandbox {
    _dir: tempfile::TempDir,
    root: PathBuf,
    paths: Vec<String>,
}

fn sandbox() -> Sandbox {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let outside = root.join("outside");
    std::fs::create_dir_all(root.join("src/sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(root.join("src/a.rs"), "fn main() {}\n// “quotes” \r\n").unwrap();
    std::fs::write(root.join("bin.dat"), [0u8, 159, 146, 150, 0, 1]).unwrap();
    std::fs::write(root.join("img.png"), b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    std::fs::write(root.join("doc.pdf"), b"%PDF-1.4 broken").unwrap();
    std::fs::write(
        root.join("nb.ipynb"),
        r#"{"cells": [{"cell_type": "code", "id": "c1", "source": "x", "metadata": {}, "outputs": []}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"#,
    )
    .unwrap();
    std::fs::write(root.join("bad.ipynb"), "{not json").unwrap();
    std::fs::write(root.join("utf16.txt"), [0xFF, 0xFE, b'h', 0, b'i', 0]).unwrap();
    std::fs::write(outside.join("secret.txt"), "s").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("link_out")).unwrap();
    std::os::unix::fs::symlink(root.join("src"), root.join("link_dir")).unwrap();
    std::os::unix::fs::symlink(root.join("missing"), root.join("dangling")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(root.join("pipe"))
        .status()
        .unwrap();
    assert!(fifo.success());
    let mut paths: Vec<String> = [
        "src/a.rs",
        "src",
        "src/sub",
        "bin.dat",
        "img.png",
        "doc.pdf",
        "nb.ipynb",
        "bad.ipynb",
        "utf16.txt",
        "link_out",
        "link_dir",
        "dangling",
        "pipe",
        "missing.txt",
        "new/dir/f.txt",
        "outside/secret.txt",
    ]
    .iter()
    .map(|p| root.join(p).display().to_string())
    .collect();
    paths.extend(
        [
            "/dev/null",
            "/dev/zero",
            "/dev/stdin",
            "/",
            "~",
            "~/x",
            "relative.txt",
            "./src",
            "../",
            "",
            " ",
            "\u{0}",
            "C:\\x",
            "//double",
            "/proc/self/status",
        ]
        .iter()
        .map(|s| (*s).to_owned()),
    );
    Sandbox {
        _dir: dir,
        root,
        paths,
    }
}

fn value(paths: Vec<String>) -> impl Strategy<Value = Value> {
    let words = proptest::sample::select(
        &[
            "*",
            "**/*.rs",
            "[",
            "(",
            "fn",
            "ls -la",
            "rm -rf /",
            "sleep 1",
            "xxx",
            "https://example.com",
            "http://[::1",
            "file:///etc/passwd",
            "code",
            "markdown",
            "insert",
            "delete",
            "replace",
            "content",
            "files_with_matches",
            "count",
            "c1",
            "select:Read",
            "+x",
            "pending",
            "completed",
        ][..],
    )
    .prop_map(|s| Value::String(s.to_owned()));
    let leaf = prop_oneof![
        1 => Just(Value::Null),
        1 => any::<bool>().prop_map(Value::Bool),
        1 => any::<i64>().prop_map(Value::from),
        1 => (-5i64..200).prop_map(Value::from),
        1 => any::<f64>().prop_map(|f| json!(f)),
        3 => proptest::sample::select(paths).prop_map(Value::String),
        2 => words,
        1 => any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(2, 16, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z_]{1,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The field names of a tool's input schema.
fn fields(tool: &dyn Tool) -> Vec<String> {
    let schema = tool.input_schema();
    let mut names: Vec<String> = schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    names.push("unknown_field".to_owned());
    names
}

/// An input for one of `tools`: an object of its own fields (some missing, some extra), or
/// any JSON at all.
fn input(tools: &[Arc<dyn Tool>], paths: Vec<String>) -> impl Strategy<Value = (usize, Value)> {
    let count = tools.len();
    let fields: Vec<Vec<String>> = tools.iter().map(|t| fields(t.as_ref())).collect();
    (0..count).prop_flat_map(move |i| {
        let names = fields[i].clone();
        let object = proptest::collection::vec(
            (proptest::sample::select(names), value(paths.clone())),
            0..6,
        )
        .prop_map(|kv| {
            let mut m = Map::new();
            for (k, v) in kv {
                m.insert(k, v);
            }
            Value::Object(m)
        });
        (Just(i), prop_oneof![5 => object, 1 => value(paths.clone())])
    })
}

#[path = "../../../tests/support/fuzz.rs"]
mod fuzz_support;
use fuzz_support::fuzz;

fn check(
    tool: &dyn Tool,
    ctx: &ToolUseContext,
    raw: Value,
    rt: &tokio::runtime::Runtime,
) -> Result<(), TestCaseError> {
    let name = tool.name().to_owned();
    let input = match tool.parse_input(raw.clone()) {
        Ok(input) => input,
        Err(e) => {
            let text = e.to_model_text();
            prop_assert!(
                text.trim().len() > 10,
                "{}: unclear schema error {:?} for {}",
                name,
                text,
                raw
            );
            return Ok(());
        }
    };
    // What the executor and the permission check ask before validation.
    let _ = tool.is_concurrency_safe(&input);
    let _ = tool.is_read_only(&input);
    let _ = tool.is_destructive(&input);
    let _ = tool.permission_subject(&input);
    let _ = tool.user_facing_name(&input);
    let validated = rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(20), tool.validate_input(&input, ctx)).await
    });
    match validated {
        Err(_) => prop_assert!(false, "{}: validate_input hung on {}", name, raw),
        Ok(Err(e)) => prop_assert!(
            e.message.trim().len() > 5,
            "{}: unclear refusal {:?} for {}",
            name,
            e.message,
            raw
        ),
        Ok(Ok(())) => {}
    }
    Ok(())
}

#[test]
fn fuzz_tool_inputs() {
    let sb = sandbox();
    let tools = tools();
    let ctx = ToolUseContext::new(&sb.root).with_home(Some(sb.root.join("home")));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    fuzz(
        file!(),
        1500,
        input(&tools, sb.paths.clone()),
        |(i, raw)| check(tools[i].as_ref(), &ctx, raw, &rt),
    );
}

#[test]
fn every_kind_of_path_for_every_tool() {
    // The fixed corners of the generator (every kind of file, for every tool with a path
    // field), on every run.
    let sb = sandbox();
    let ctx = ToolUseContext::new(&sb.root);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for tool in tools() {
        for field in ["file_path", "notebook_path", "path"] {
            if !fields(tool.as_ref()).iter().any(|f| f == field) {
                continue;
            }
            for p in &sb.paths {
                let raw = json!({
                    field: p, "content": "x", "old_string": "x", "new_string": "y",
                    "pattern": "x", "new_source": "x", "cell_id": "c1",
                });
                if let Err(e) = check(tool.as_ref(), &ctx, raw, &rt) {
                    panic!("{e}");
                }
            }
        }
    }
}
