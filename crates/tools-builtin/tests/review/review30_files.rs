//! Review 30 of the file tools: the "unchanged" stub a host can turn off, Bash
//! `head`/`tail`/`sed -n` that showed a whole file, a notebook nested too deeply, a file that
//! only starts like a PNG, a notebook without cells.

use std::fs;

use crate::common::{ctx, fail, run, text};
use serde_json::json;
use tools_builtin::read::{EMPTY_FILE_NOTICE, FILE_UNCHANGED_MESSAGE};
use tools_builtin::{Edit, NotebookEdit, Read, Write};

/// A host whose Reads may reach another conversation (an MCP server: one client across
/// several chats, several clients) turns the "unchanged since last read" stub off with
/// `ToolOptions::reads_always_return_content`: the same Read again returns the content,
/// and the read still counts for a later Edit and Write. Without the option (`agent`,
/// `run`), the second Read is the stub, as in Claude Code.
#[tokio::test]
async fn a_host_can_make_every_read_return_the_content() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let f = root.join("notes.txt");
    fs::write(&f, "alpha\nbeta\n").unwrap();

    // The default: a repeated Read is the stub.
    let c = ctx(&root);
    text(&Read, &c, json!({"file_path": f})).await;
    let again = text(&Read, &c, json!({"file_path": f})).await;
    assert_eq!(again, FILE_UNCHANGED_MESSAGE);

    // Turned off: the content each time, for a whole file and for a range.
    let mut options = c.options().clone();
    options.reads_always_return_content = true;
    let c = ctx(&root).with_options(options);
    for _ in 0..3 {
        let shown = text(&Read, &c, json!({"file_path": f})).await;
        assert_eq!(shown, "     1\u{2192}alpha\n     2\u{2192}beta", "{shown}");
        let range = text(&Read, &c, json!({"file_path": f, "offset": 2, "limit": 1})).await;
        assert_eq!(range, "     2\u{2192}beta");
    }
    // The reads still count: Edit, then Write after a whole Read of the new content.
    run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "beta", "new_string": "gamma"}),
    )
    .await
    .unwrap();
    text(&Read, &c, json!({"file_path": f})).await;
    run(&Write, &c, json!({"file_path": f, "content": "whole\n"}))
        .await
        .unwrap();
    assert_eq!(fs::read_to_string(&f).unwrap(), "whole\n");

    // Notebooks too.
    let nb = root.join("n.ipynb");
    let cell = json!({"cell_type": "code", "id": "c1", "metadata": {}, "source": "print(1)", "outputs": [], "execution_count": null});
    fs::write(
        &nb,
        json!({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).to_string(),
    )
    .unwrap();
    for _ in 0..2 {
        let shown = text(&Read, &c, json!({"file_path": nb})).await;
        assert!(shown.contains("print(1)"), "{shown}");
    }
}

/// A Bash `head`, `tail` or `sed -n` whose output is every line of the file, as it is,
/// counts as a whole read (as `cat` does): Write may replace the file after it, as after a
/// Read with a limit that covers it. One that showed part of the file, or a file whose
/// blank lines at the end the shown output cannot tell apart from none, still counts as a
/// partial read only.
#[tokio::test]
async fn a_bash_head_that_showed_every_line_counts_as_a_whole_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let c = ctx(&root);
    let bash = tools_builtin::Bash::default();
    for (name, command) in [
        ("h.txt", "head -n 5 h.txt"),
        ("t.txt", "tail -n 10 t.txt"),
        ("s.txt", "sed -n '1,$p' s.txt"),
        ("c.txt", "head -c 1000 c.txt"),
    ] {
        let f = root.join(name);
        fs::write(&f, "one\ntwo\nthree\n").unwrap();
        run(&bash, &c, json!({"command": command})).await.unwrap();
        run(&Write, &c, json!({"file_path": f, "content": "new\n"}))
            .await
            .unwrap_or_else(|e| panic!("{command}: {}", e.text));
        assert_eq!(fs::read_to_string(&f).unwrap(), "new\n", "{command}");
    }
    // Part of it: Write is still refused.
    let p = root.join("p.txt");
    fs::write(&p, "one\ntwo\nthree\n").unwrap();
    run(&bash, &c, json!({"command": "head -n 2 p.txt"}))
        .await
        .unwrap();
    let e = fail(&Write, &c, json!({"file_path": p, "content": "x\n"})).await;
    assert!(e.text.contains("only partly shown"), "{}", e.text);
    // Blank lines at the end that the output does not show: not whole.
    let b = root.join("b.txt");
    fs::write(&b, "one\ntwo\n\n\n").unwrap();
    run(&bash, &c, json!({"command": "head -n 2 b.txt"}))
        .await
        .unwrap();
    let e = fail(&Write, &c, json!({"file_path": b, "content": "x\n"})).await;
    assert!(e.text.contains("only partly shown"), "{}", e.text);
}

/// A notebook nested deeper than the reader goes is refused as that, with the depth, for
/// Read and NotebookEdit alike: it is valid JSON, and "not valid JSON" sent the model
/// looking for a syntax error.
#[tokio::test]
async fn a_notebook_nested_too_deeply_is_told_so() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let c = ctx(&root);
    let deep = format!("{}1{}", "[".repeat(130), "]".repeat(130));
    let nb = root.join("deep.ipynb");
    fs::write(
        &nb,
        format!(
            r#"{{"cells": [{{"cell_type": "code", "id": "c1", "metadata": {{"x": {deep}}}, "source": "1", "outputs": [], "execution_count": null}}], "metadata": {{}}, "nbformat": 4, "nbformat_minor": 5}}"#
        ),
    )
    .unwrap();
    assert!(serde_json::from_str::<serde_json::Value>(&fs::read_to_string(&nb).unwrap()).is_err());
    let e = fail(&Read, &c, json!({"file_path": nb})).await;
    assert!(
        e.text.contains("nested") && e.text.contains("128") && !e.text.contains("not valid JSON"),
        "{}",
        e.text
    );
    // As though it had been read (Read refuses it): NotebookEdit parses it to edit it.
    let bytes = fs::read(&nb).unwrap();
    let mtime = tool_core::mtime_ms(&fs::metadata(&nb).unwrap());
    let hash = tool_core::ContentHash::of(&bytes);
    let seen = tool_core::FileState::read(String::from_utf8(bytes).unwrap(), mtime, hash, 1, None);
    c.file_state().insert(&nb, seen);
    let e = fail(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "c1", "new_source": "2"}),
    )
    .await;
    assert!(
        e.text.contains("nested") && e.text.contains("128") && !e.text.contains("not valid JSON"),
        "{}",
        e.text
    );
}

/// A file whose first bytes are PNG's signature but whose header is no PNG header is no
/// oversized image: without an extension it is read as the text it is; named `.png` it is
/// refused as an image that cannot be decoded, never as "too large" with the pixel count
/// its text spells.
#[tokio::test]
async fn a_file_that_only_starts_like_a_png_is_no_huge_image() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let c = ctx(&root);
    // The text after the signature spells a huge width and height where PNG's header has
    // them; a shorter one spells none.
    let bytes = b"\x89PNG\r\n\x1a\n fake text after png magic\n";
    for (i, bytes) in [&bytes[..], b"\x89PNG\r\n\x1a\n fake text\n"]
        .into_iter()
        .enumerate()
    {
        let plain = root.join(format!("notes{i}"));
        fs::write(&plain, bytes).unwrap();
        let shown = text(&Read, &c, json!({"file_path": plain})).await;
        assert!(shown.contains("fake text"), "{shown}");
        let named = root.join(format!("fake{i}.png"));
        fs::write(&named, bytes).unwrap();
        let e = fail(&Read, &c, json!({"file_path": named})).await;
        assert!(
            (e.text.contains("cannot be decoded") || e.text.contains("header cannot be read"))
                && !e.text.contains("too large"),
            "{}",
            e.text
        );
    }
    // A bigger one (over the API's 5 MB, so scaled down if it were an image): the same.
    let mut big = bytes.to_vec();
    big.extend(std::iter::repeat_n(b'z', 6 * 1024 * 1024));
    let large = root.join("large.png");
    fs::write(&large, &big).unwrap();
    let e = fail(&Read, &c, json!({"file_path": large})).await;
    assert!(
        e.text.contains("cannot be decoded") && !e.text.contains("too large"),
        "{}",
        e.text
    );
}

/// A notebook with an empty `cells` array is said to have no cells, not to be an empty
/// file (it is not: it has metadata, which an overwrite would lose).
#[tokio::test]
async fn a_notebook_without_cells_is_said_to_have_none() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let c = ctx(&root);
    let nb = root.join("empty.ipynb");
    fs::write(
        &nb,
        json!({"cells": [], "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}).to_string(),
    )
    .unwrap();
    let shown = text(&Read, &c, json!({"file_path": nb})).await;
    assert_ne!(shown, EMPTY_FILE_NOTICE);
    assert!(shown.contains("no cells"), "{shown}");
    assert!(!shown.contains("empty"), "{shown}");
}
