//! Review 40 of the file tools: a missing file's refusal says which file the model may have
//! meant, as Claude Code's Read and Edit do (`suggestPathUnderCwd`, else
//! `findSimilarFile`), and Grep's and Glob's refusal of a missing search path names the path
//! under the cwd (`suggestPathUnderCwd` alone).

use std::fs;
use std::path::Path;

use crate::common::{ctx, fail};
use serde_json::{Value, json};
use tool_core::{ProgressSender, RuleSource, SourcedRule, Tool, ToolPermissionContext};
use tools_builtin::{Edit, Glob, Grep, Read};

/// The refusal Read and Edit give for a missing file with the working directory `cwd`.
fn missing(cwd: &Path) -> String {
    format!(
        "File does not exist. Note: your current working directory is {}.",
        cwd.display()
    )
}

/// The failure of `input` given straight to `tool`'s `call` (no `validate_input` first):
/// the file went missing between the two, or Read's validation left it to the call.
async fn call_error(tool: &dyn Tool, c: &tool_core::ToolUseContext, input: Value) -> String {
    let input = tool.parse_input(input).unwrap();
    match tool.call(input, c.clone(), ProgressSender::none()).await {
        Ok(out) => panic!("call succeeded: {:?}", out.data.content),
        Err(e) => e.to_model_text(),
    }
}

/// A validation refusal's text without the `<tool_use_error>` it is wrapped in.
fn bare(text: String) -> String {
    text.strip_prefix("<tool_use_error>")
        .and_then(|t| t.strip_suffix("</tool_use_error>"))
        .map_or(text.clone(), str::to_owned)
}

/// Read's and Edit's texts for `file`, through validation and through the call alone,
/// without the `<tool_use_error>` a validation refusal is wrapped in (Read leaves a path
/// outside the working directories to its call).
async fn refusals(c: &tool_core::ToolUseContext, file: &Path) -> Vec<String> {
    let read = json!({"file_path": file});
    let edit = json!({"file_path": file, "old_string": "x", "new_string": "y"});
    vec![
        bare(fail(&Read, c, read.clone()).await.text),
        bare(fail(&Edit, c, edit.clone()).await.text),
        call_error(&Read, c, read).await,
        call_error(&Edit, c, edit).await,
    ]
}

fn deny(list: &[&str]) -> ToolPermissionContext {
    ToolPermissionContext {
        deny: list
            .iter()
            .map(|r| SourcedRule {
                source: RuleSource::ProjectSettings,
                rule: (*r).to_owned(),
            })
            .collect(),
        ..Default::default()
    }
}

/// `src/main.js` missing beside `src/main.ts`: the refusal names `main.ts`, the file's name
/// alone as Claude Code gives it. Of several namesakes the first by name is named, so the
/// hint does not depend on the order the directory lists them in; one a Read deny rule
/// covers is never named.
#[tokio::test]
async fn a_missing_file_names_its_namesake_with_another_extension() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::create_dir(root.join("src")).unwrap();
    fs::write(root.join("src/main.ts"), "x\n").unwrap();
    let asked = root.join("src/main.js");
    let c = ctx(&root);
    for text in refusals(&c, &asked).await {
        assert_eq!(text, format!("{} Did you mean main.ts?", missing(&root)));
    }

    for other in ["main.py", "main.c", "main.rs"] {
        fs::write(root.join("src").join(other), "x\n").unwrap();
    }
    for text in refusals(&c, &asked).await {
        assert!(text.ends_with(" Did you mean main.c?"), "{text}");
    }
    let c = ctx(&root).with_permission(deny(&["Read(./src/main.c)", "Read(**/*.py)"]));
    for text in refusals(&c, &asked).await {
        assert!(text.ends_with(" Did you mean main.rs?"), "{text}");
    }
}

/// The model dropped the project folder: `<parent>/src/lib.rs` asked for, with the cwd
/// `<parent>/proj` holding `src/lib.rs`. The refusal names the path under the cwd, before
/// any namesake; not when a Read deny rule covers it.
#[tokio::test]
async fn a_path_missing_the_project_folder_is_suggested_under_the_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let parent = fs::canonicalize(dir.path()).unwrap();
    let root = parent.join("proj");
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/lib.rs"), "x\n").unwrap();
    let c = ctx(&root);
    // `<parent>/src` does not exist.
    let asked = parent.join("src/lib.rs");
    let hint = format!(" Did you mean {}?", root.join("src/lib.rs").display());
    for text in refusals(&c, &asked).await {
        assert_eq!(text, format!("{}{hint}", missing(&root)));
    }
    // `<parent>/src` exists, with a namesake of another extension in it: the path under the
    // cwd comes first.
    fs::create_dir(parent.join("src")).unwrap();
    fs::write(parent.join("src/lib.c"), "x\n").unwrap();
    for text in refusals(&c, &asked).await {
        assert!(text.ends_with(&hint), "{text}");
    }
    // Denied under the cwd: no hint. Nor is the namesake beside the path asked for named:
    // it is outside the working directories, and Edit refuses before anyone was asked.
    let c = ctx(&root).with_permission(deny(&["Read(./src/**)"]));
    for text in refusals(&c, &asked).await {
        assert_eq!(text, missing(&root));
    }
    // Inside a working directory it is named.
    let c = ctx(&root).with_working_directories(vec![parent.join("src")]);
    let c = c.with_permission(deny(&["Read(./src/**)"]));
    for text in refusals(&c, &asked).await {
        assert!(text.ends_with(" Did you mean lib.c?"), "{text}");
    }
    // A path inside the cwd is not re-rooted (`<cwd>/proj/src/lib.rs` is not looked for).
    let c = ctx(&root);
    fs::create_dir_all(root.join("proj/src")).unwrap();
    fs::write(root.join("proj/src/lib.py"), "x\n").unwrap();
    let inside = root.join("src/lib.py");
    fs::remove_file(root.join("src/lib.rs")).unwrap();
    for text in refusals(&c, &inside).await {
        assert_eq!(text, missing(&root));
    }
}

/// Nothing alike, or no directory to look in: the plain refusal, no error of the look.
#[tokio::test]
async fn a_missing_file_with_nothing_alike_gets_the_plain_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::create_dir(root.join("src")).unwrap();
    // Other stems: `main.js.bak` is `main.js` with an extension, `mainx` another name.
    for other in ["other.ts", "mainx.ts", "main.js.bak", "Main.ts"] {
        fs::write(root.join("src").join(other), "x\n").unwrap();
    }
    let c = ctx(&root);
    let plain = missing(&root);
    for asked in [root.join("src/main.js"), root.join("nodir/deeper/main.js")] {
        for text in refusals(&c, &asked).await {
            assert_eq!(text, plain, "{}", asked.display());
        }
    }
}

/// A namesake whose name holds a line break is named with the break escaped, as Glob and
/// Grep list names: the hint stays one line that cannot pass for more text.
#[tokio::test]
async fn a_suggested_name_has_its_line_breaks_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    fs::write(root.join("notes\nsrc.ts"), "x\n").unwrap();
    let c = ctx(&root);
    for text in refusals(&c, &root.join("notes\nsrc.js")).await {
        assert!(text.ends_with(" Did you mean notes\\nsrc.ts?"), "{text}");
    }
}

/// Grep's and Glob's refusals of `path` (through validation, without the
/// `<tool_use_error>` it is wrapped in, and through the call alone), in that order.
async fn search_refusals(c: &tool_core::ToolUseContext, path: &Path) -> Vec<String> {
    let grep = json!({"pattern": "x", "path": path});
    let glob = json!({"pattern": "*.rs", "path": path});
    vec![
        bare(fail(&Grep, c, grep.clone()).await.text),
        bare(fail(&Glob, c, glob.clone()).await.text),
        call_error(&Grep, c, grep).await,
        call_error(&Glob, c, glob).await,
    ]
}

/// The refusals Grep and Glob give for the missing `path` with the working directory `cwd`,
/// as [`search_refusals`] orders them, each followed by `hint`.
fn missing_roots(path: &Path, cwd: &Path, hint: &str) -> Vec<String> {
    let note = format!(
        "{}. Note: your current working directory is {}.{hint}",
        path.display(),
        cwd.display()
    );
    let grep = format!("Path does not exist: {note}");
    let glob = format!("Directory does not exist: {note}");
    vec![grep.clone(), glob.clone(), grep, glob]
}

/// Grep's and Glob's "does not exist" refusal of a search path that left out the project
/// folder ends with Claude Code's "Did you mean …?" naming the path under the cwd
/// (`suggestPathUnderCwd`), as Read's does; not when a Read deny rule covers it.
#[tokio::test]
async fn a_search_path_missing_the_project_folder_is_suggested_under_the_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let parent = fs::canonicalize(dir.path()).unwrap();
    let root = parent.join("proj");
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/lib.rs"), "x\n").unwrap();
    let c = ctx(&root);
    let asked = parent.join("src");
    let hint = format!(" Did you mean {}?", root.join("src").display());
    assert_eq!(
        search_refusals(&c, &asked).await,
        missing_roots(&asked, &root, &hint)
    );
    // Grep takes a file as its path too.
    let file = parent.join("src/lib.rs");
    let grep = json!({"pattern": "x", "path": file});
    let text = fail(&Grep, &c, grep).await.text;
    assert!(
        text.ends_with(&format!(
            " Did you mean {}?</tool_use_error>",
            root.join("src/lib.rs").display()
        )),
        "{text}"
    );
    // Denied under the cwd: no hint.
    let c = ctx(&root).with_permission(deny(&["Read(./src)"]));
    assert_eq!(
        search_refusals(&c, &asked).await,
        missing_roots(&asked, &root, "")
    );
}

/// Grep and Glob give only the path under the cwd, never a namesake with another extension
/// (Claude Code's Grep and Glob call `suggestPathUnderCwd` alone), and a path inside the cwd
/// is not re-rooted; a suggested name's line breaks are escaped.
#[tokio::test]
async fn a_missing_search_path_gets_no_namesake_hint() {
    let dir = tempfile::tempdir().unwrap();
    let parent = fs::canonicalize(dir.path()).unwrap();
    let root = parent.join("proj");
    fs::create_dir_all(root.join("proj/src")).unwrap();
    fs::create_dir_all(root.join("src.d")).unwrap();
    fs::write(root.join("src.ts"), "x\n").unwrap();
    let c = ctx(&root);
    for asked in [root.join("src.rs"), root.join("src")] {
        assert_eq!(
            search_refusals(&c, &asked).await,
            missing_roots(&asked, &root, ""),
            "{}",
            asked.display()
        );
    }
    fs::create_dir(root.join("notes\nsrc")).unwrap();
    let asked = parent.join("notes\nsrc");
    let hint = format!(" Did you mean {}\\nsrc?", root.join("notes").display());
    for text in search_refusals(&c, &asked).await {
        assert!(text.ends_with(&hint), "{text}");
    }
}
