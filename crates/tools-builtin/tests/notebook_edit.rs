//! NotebookEdit: replace, insert and delete cells; every byte of the cells it does not
//! change stays as written, whatever the layout (escapes, tabs, one line).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;

use common::{ctx, fail, run, text};
use serde_json::json;
use tool_core::{NOT_READ_MESSAGE, tool_use_error};
use tools_builtin::{NotebookEdit, Read};

const NB: &str = r##"{
 "cells": [
  {
   "cell_type": "markdown",
   "id": "intro",
   "metadata": {
    "tags": [
     "x"
    ]
   },
   "source": [
    "# Title\n",
    "text"
   ]
  },
  {
   "cell_type": "code",
   "execution_count": 3,
   "id": "calc",
   "metadata": {},
   "outputs": [
    {
     "name": "stdout",
     "output_type": "stream",
     "text": [
      "2\n"
     ]
    }
   ],
   "source": [
    "print(1 + 1)"
   ]
  }
 ],
 "metadata": {
  "zeta": 1,
  "kernelspec": {
   "name": "python3"
  }
 },
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;

fn setup() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nb.ipynb");
    fs::write(&path, NB).unwrap();
    (dir, path)
}

#[tokio::test]
async fn replace_changes_only_the_cell() {
    let (dir, nb) = setup();
    let c = ctx(dir.path());
    let e = fail(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "calc", "new_source": "x"}),
    )
    .await;
    assert_eq!(e.text, tool_use_error(NOT_READ_MESSAGE));
    run(&Read, &c, json!({"file_path": nb})).await.unwrap();
    let out = text(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "calc", "new_source": "print(2 + 2)\nx = 1"}),
    )
    .await;
    assert_eq!(out, "Updated cell calc with print(2 + 2)\nx = 1");
    let expected = NB
        .replace("\"execution_count\": 3", "\"execution_count\": null")
        .replace(
            "\"outputs\": [\n    {\n     \"name\": \"stdout\",\n     \"output_type\": \"stream\",\n     \"text\": [\n      \"2\\n\"\n     ]\n    }\n   ]",
            "\"outputs\": []",
        )
        .replace("\"print(1 + 1)\"", "\"print(2 + 2)\\n\",\n    \"x = 1\"");
    assert_eq!(fs::read_to_string(&nb).unwrap(), expected);
    // The write counts as a read: a second edit needs no Read.
    text(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "cell-0", "new_source": "# New"}),
    )
    .await;
    assert!(fs::read_to_string(&nb).unwrap().contains("\"# New\""));
}

#[tokio::test]
async fn insert_and_delete() {
    let (dir, nb) = setup();
    let c = ctx(dir.path());
    run(&Read, &c, json!({"file_path": nb})).await.unwrap();
    let e = fail(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "new_source": "x", "edit_mode": "insert"}),
    )
    .await;
    assert_eq!(
        (e.text, e.code),
        (
            tool_use_error("Cell type is required when using edit_mode=insert."),
            Some(5)
        )
    );
    let out = run(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "intro", "new_source": "y = 2", "cell_type": "code", "edit_mode": "insert"}),
    )
    .await
    .unwrap();
    let new_id = out.structured["cell_id"].as_str().unwrap().to_owned();
    assert!(
        out.content
            .joined_text()
            .starts_with(&format!("Inserted cell {new_id} with y = 2"))
    );
    let doc: serde_json::Value = serde_json::from_str(&fs::read_to_string(&nb).unwrap()).unwrap();
    assert_eq!(doc["cells"][1]["id"], new_id.as_str());
    assert_eq!(doc["cells"][1]["source"], json!(["y = 2"]));
    assert_eq!(doc["cells"][1]["outputs"], json!([]));
    assert_eq!(
        text(
            &NotebookEdit,
            &c,
            json!({"notebook_path": nb, "cell_id": new_id, "new_source": "", "edit_mode": "delete"})
        )
        .await,
        format!("Deleted cell {new_id}")
    );
    assert_eq!(fs::read_to_string(&nb).unwrap(), NB);
}

#[tokio::test]
async fn bad_inputs() {
    let (dir, nb) = setup();
    let c = ctx(dir.path());
    run(&Read, &c, json!({"file_path": nb})).await.unwrap();
    let e = fail(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "nope", "new_source": "x"}),
    )
    .await;
    assert_eq!(
        (e.text, e.code),
        (
            tool_use_error("Cell with ID \"nope\" not found in notebook."),
            Some(8)
        )
    );
    // `cell-+5` is no index.
    let e = fail(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "cell-+5", "new_source": "x"}),
    )
    .await;
    assert_eq!(e.code, Some(8), "{}", e.text);
    // `cell-N` past the last cell is said by its index, as Claude Code says it.
    let e = fail(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "cell-99", "new_source": "x"}),
    )
    .await;
    assert_eq!(
        (e.text, e.code),
        (
            tool_use_error("Cell with index 99 does not exist in notebook."),
            Some(7)
        )
    );
    let e = fail(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "new_source": "x"}),
    )
    .await;
    assert_eq!(e.code, Some(7));
    let txt = dir.path().join("a.txt");
    fs::write(&txt, "").unwrap();
    assert_eq!(
        fail(
            &NotebookEdit,
            &c,
            json!({"notebook_path": txt, "cell_id": "a", "new_source": "x"})
        )
        .await
        .code,
        Some(2)
    );
    let missing = dir.path().join("m.ipynb");
    assert_eq!(
        fail(
            &NotebookEdit,
            &c,
            json!({"notebook_path": missing, "cell_id": "a", "new_source": "x"})
        )
        .await
        .code,
        Some(1)
    );
    let broken = dir.path().join("b.ipynb");
    fs::write(&broken, "{oops").unwrap();
    c.file_state().insert(
        &broken,
        tool_core::FileState::written("{oops".into(), u64::MAX),
    );
    let e = fail(
        &NotebookEdit,
        &c,
        json!({"notebook_path": broken, "cell_id": "a", "new_source": "x"}),
    )
    .await;
    assert_eq!(
        (e.text, e.code),
        (tool_use_error("Notebook is not valid JSON."), Some(6))
    );
    assert_eq!(fs::read_to_string(&broken).unwrap(), "{oops");
}

/// A notebook saved with CRLF line endings keeps them: only the edited cell changes.
#[tokio::test]
async fn a_crlf_notebook_keeps_its_line_endings() {
    let (dir, nb) = setup();
    fs::write(&nb, NB.replace('\n', "\r\n")).unwrap();
    let c = ctx(dir.path());
    run(&Read, &c, json!({"file_path": nb})).await.unwrap();
    text(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "intro", "new_source": "# Title\ntext"}),
    )
    .await;
    // The same source: the file is byte for byte what it was.
    assert_eq!(fs::read_to_string(&nb).unwrap(), NB.replace('\n', "\r\n"));
}

/// A notebook too large for Read to show is refused before it is loaded, with what was
/// wrong.
#[tokio::test]
async fn a_notebook_too_large_to_read_is_refused_up_front() {
    let (dir, nb) = setup();
    // Sparse: the size without the disk space.
    fs::OpenOptions::new()
        .write(true)
        .open(&nb)
        .unwrap()
        .set_len(tools_builtin::read::MAX_NOTEBOOK_BYTES + 1)
        .unwrap();
    let c = ctx(dir.path());
    let e = fail(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "intro", "new_source": "x"}),
    )
    .await;
    assert!(
        e.text
            .contains("more than the 104857600 bytes a notebook may have"),
        "{}",
        e.text
    );
}

/// A directory named like a notebook is refused as Edit and Write refuse one, not as a file
/// that was never read.
#[tokio::test]
async fn a_directory_named_like_a_notebook_is_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let nb = dir.path().join("x.ipynb");
    fs::create_dir(&nb).unwrap();
    let c = ctx(dir.path());
    let e = fail(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "a", "new_source": "x"}),
    )
    .await;
    assert_eq!(
        (e.text, e.code),
        (
            tool_use_error(format!("Path is a directory, not a file: {}", nb.display())),
            None
        )
    );
    assert!(nb.is_dir());
}

/// Numbers in cells the edit does not touch are written back as they were, byte for byte:
/// a float serde_json would parse one ULP off, Python's exponent form, an integer past 64
/// bits, and the NaN that Python's json module writes.
#[tokio::test]
async fn numbers_in_untouched_cells_keep_their_text() {
    let dir = tempfile::tempdir().unwrap();
    let nb = dir.path().join("numbers.ipynb");
    let original = r##"{
 "cells": [
  {
   "cell_type": "code",
   "execution_count": 1,
   "id": "data",
   "metadata": {},
   "outputs": [
    {
     "data": {
      "application/json": {
       "x": 0.21526736620564346,
       "y": 3.4e-05,
       "z": 123456789012345678901234567890,
       "w": NaN,
       "v": [-Infinity, Infinity, -0.0, 1E+2, 10.50]
      }
     },
     "metadata": {},
     "output_type": "execute_result"
    }
   ],
   "source": "compute()"
  },
  {
   "cell_type": "markdown",
   "id": "notes",
   "metadata": {},
   "source": "old"
  }
 ],
 "metadata": {},
 "nbformat": 4,
 "nbformat_minor": 5
}
"##;
    fs::write(&nb, original).unwrap();
    let c = ctx(dir.path());
    run(&Read, &c, json!({"file_path": nb})).await.unwrap();
    text(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "notes", "new_source": "new"}),
    )
    .await;
    let after = fs::read_to_string(&nb).unwrap();
    // The untouched cell stays as written, its one-line array too.
    assert_eq!(after, original.replace("\"old\"", "\"new\""));
    for number in [
        "0.21526736620564346",
        "3.4e-05",
        "123456789012345678901234567890",
        "NaN",
    ] {
        assert!(after.contains(number), "{number} lost: {after}");
    }
    common::bump_mtime(&nb);
    let shown = text(&Read, &c, json!({"file_path": nb})).await;
    assert!(
        shown.contains("<cell id=\"notes\"><cell_type>markdown</cell_type>new"),
        "{shown}"
    );
}

/// A notebook of a great many tiny values is refused with a clear error, not parsed into
/// tens of millions of nodes.
#[tokio::test]
async fn a_notebook_of_too_many_values_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let nb = dir.path().join("many.ipynb");
    let zeros = vec!["0"; 5_000_000].join(",");
    fs::write(
        &nb,
        format!(
            r#"{{"cells": [], "metadata": {{"z": [{zeros}]}}, "nbformat": 4, "nbformat_minor": 5}}"#
        ),
    )
    .unwrap();
    let c = ctx(dir.path());
    let err = fail(&Read, &c, json!({"file_path": nb})).await.text;
    assert!(err.contains("too many JSON values"), "{err}");
}

/// Another tool's layout (Python's `json.dumps` with tabs and `\u` escapes, or everything on
/// one line): the cells an edit does not touch stay byte for byte, and new text follows the
/// document's indentation.
#[tokio::test]
async fn untouched_cells_keep_their_layout_and_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let tabs = dir.path().join("tabs.ipynb");
    let original = "{\n\t\"cells\": [\n\t\t{\n\t\t\t\"cell_type\": \"markdown\",\n\t\t\t\"metadata\": {},\n\t\t\t\"source\": \"caf\\u00e9 \\u2014 ok \\/ \\u001B\"\n\t\t},\n\t\t{\n\t\t\t\"cell_type\": \"markdown\",\n\t\t\t\"metadata\": {},\n\t\t\t\"source\": \"old\"\n\t\t}\n\t],\n\t\"metadata\": {},\n\t\"nbformat\": 4,\n\t\"nbformat_minor\": 4\n}";
    fs::write(&tabs, original).unwrap();
    run(&Read, &c, json!({"file_path": tabs})).await.unwrap();
    text(
        &NotebookEdit,
        &c,
        json!({"notebook_path": tabs, "cell_id": "cell-1", "new_source": "new"}),
    )
    .await;
    let after = fs::read_to_string(&tabs).unwrap();
    assert_eq!(after, original.replace("\"old\"", "\"new\""));
    // Inserted at the end, in tabs.
    text(
        &NotebookEdit,
        &c,
        json!({"notebook_path": tabs, "cell_id": "cell-1", "new_source": "x = 1",
               "edit_mode": "insert", "cell_type": "code"}),
    )
    .await;
    assert_eq!(
        fs::read_to_string(&tabs).unwrap(),
        original.replace(
            "\"old\"\n\t\t}",
            "\"new\"\n\t\t},\n\t\t{\n\t\t\t\"cell_type\": \"code\",\n\t\t\t\"metadata\": {},\n\t\t\t\"execution_count\": null,\n\t\t\t\"outputs\": [],\n\t\t\t\"source\": \"x = 1\"\n\t\t}"
        )
    );

    // One line: stays one line.
    let flat = dir.path().join("flat.ipynb");
    let original = r#"{"cells":[{"cell_type":"code","execution_count":1,"metadata":{},"outputs":[],"source":"a"},{"cell_type":"markdown","metadata":{},"source":"b \u00e9"}],"metadata":{},"nbformat":4,"nbformat_minor":4}"#;
    fs::write(&flat, original).unwrap();
    run(&Read, &c, json!({"file_path": flat})).await.unwrap();
    text(
        &NotebookEdit,
        &c,
        json!({"notebook_path": flat, "cell_id": "cell-0", "new_source": "z"}),
    )
    .await;
    assert_eq!(
        fs::read_to_string(&flat).unwrap(),
        original.replace(
            r#""execution_count":1,"metadata":{},"outputs":[],"source":"a""#,
            r#""execution_count":null,"metadata":{},"outputs":[],"source":"z""#
        )
    );
}

/// Deleting the first, a middle, the last and the only cell, and inserting at the start and
/// into an empty list, leave valid JSON with the other cells as they were.
#[tokio::test]
async fn deletes_and_inserts_at_the_edges_keep_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let nb = dir.path().join("edges.ipynb");
    let cell = |s: &str| {
        format!(
            "  {{\n   \"cell_type\": \"markdown\",\n   \"metadata\": {{}},\n   \"source\": \"{s}\"\n  }}"
        )
    };
    let doc = |cells: &[&str]| {
        let cells: Vec<String> = cells.iter().map(|s| cell(s)).collect();
        let list = if cells.is_empty() {
            "[]".to_owned()
        } else {
            format!("[\n{}\n ]", cells.join(",\n"))
        };
        format!(
            "{{\n \"cells\": {list},\n \"metadata\": {{}},\n \"nbformat\": 4,\n \"nbformat_minor\": 4\n}}\n"
        )
    };
    fs::write(&nb, doc(&["a", "b", "c", "d"])).unwrap();
    run(&Read, &c, json!({"file_path": nb})).await.unwrap();
    let edit = |input: serde_json::Value| {
        let c = c.clone();
        let mut input = input;
        input["notebook_path"] = json!(nb);
        async move { text(&NotebookEdit, &c, input).await }
    };
    edit(json!({"cell_id": "cell-0", "new_source": "", "edit_mode": "delete"})).await;
    assert_eq!(fs::read_to_string(&nb).unwrap(), doc(&["b", "c", "d"]));
    edit(json!({"cell_id": "cell-2", "new_source": "", "edit_mode": "delete"})).await;
    assert_eq!(fs::read_to_string(&nb).unwrap(), doc(&["b", "c"]));
    edit(json!({"cell_id": "cell-0", "new_source": "", "edit_mode": "delete"})).await;
    assert_eq!(fs::read_to_string(&nb).unwrap(), doc(&["c"]));
    edit(json!({"cell_id": "cell-0", "new_source": "", "edit_mode": "delete"})).await;
    assert_eq!(fs::read_to_string(&nb).unwrap(), doc(&[]));
    edit(json!({"new_source": "y", "edit_mode": "insert", "cell_type": "markdown"})).await;
    assert_eq!(fs::read_to_string(&nb).unwrap(), doc(&["y"]));
    edit(json!({"new_source": "x", "edit_mode": "insert", "cell_type": "markdown"})).await;
    assert_eq!(fs::read_to_string(&nb).unwrap(), doc(&["x", "y"]));
    edit(json!({"cell_id": "cell-0", "new_source": "m", "edit_mode": "insert", "cell_type": "markdown"})).await;
    assert_eq!(fs::read_to_string(&nb).unwrap(), doc(&["x", "m", "y"]));
}

/// A cell that is not an object is refused, not "updated" with nothing written; a markdown
/// cell made code loses its `attachments` (nbformat allows them on markdown and raw cells
/// only).
#[tokio::test]
async fn a_malformed_cell_is_refused_and_attachments_go_with_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let nb = dir.path().join("odd.ipynb");
    let original = r#"{"cells": [5, {"attachments": {"a.png": {"image/png": "iVBO"}}, "cell_type": "markdown", "metadata": {}, "source": "![a](attachment:a.png)"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}"#;
    fs::write(&nb, original).unwrap();
    run(&Read, &c, json!({"file_path": nb})).await.unwrap();
    let e = fail(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "cell-0", "new_source": "print(1)"}),
    )
    .await;
    assert!(
        e.text
            .contains("Cell \"cell-0\" is not a cell (a JSON object) but a number"),
        "{}",
        e.text
    );
    assert_eq!(fs::read_to_string(&nb).unwrap(), original);
    text(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "cell-1", "new_source": "print(2)", "cell_type": "code"}),
    )
    .await;
    let after: serde_json::Value = serde_json::from_str(&fs::read_to_string(&nb).unwrap()).unwrap();
    let cell = &after["cells"][1];
    assert_eq!(cell["cell_type"], "code");
    assert!(cell.get("attachments").is_none(), "{cell}");
    assert_eq!(cell["outputs"], json!([]));
    assert_eq!(after["cells"][0], 5);
}
