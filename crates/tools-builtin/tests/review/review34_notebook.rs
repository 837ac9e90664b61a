//! Black-box review 34 of the notebook tools: the "too large" cut-off is per cell (the sum
//! of its outputs), the token-cap refusal names `allow_large`, an empty `cell_id` is no id,
//! only code cells show outputs, and a notebook Read's structured output has Claude Code's
//! shape.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{ctx, fail, run, text};
use base64::Engine as _;
use serde_json::{Value, json};
use tool_core::{ContentBlock, ImageSource, ToolResultContent};
use tools_builtin::{NotebookEdit, Read};

fn write_nb(dir: &Path, name: &str, cells: Value) -> PathBuf {
    let path = dir.join(name);
    let nb = json!({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
    fs::write(&path, serde_json::to_string_pretty(&nb).unwrap()).unwrap();
    path
}

fn stream(text: String) -> Value {
    json!({"name": "stdout", "output_type": "stream", "text": text})
}

/// The pointer a cell's outputs become when they are too large together.
fn pointer(path: &str, index: usize) -> String {
    format!(
        "Outputs are too large to include. Use Bash with: cat \"{path}\" | jq '.cells[{index}].outputs'"
    )
}

/// A PNG of pseudo-random noise (which PNG cannot compress): `side`x`side`, in base64.
fn noise_png(side: u32) -> String {
    let mut state = 0x2545_f491_u32;
    let img = image::RgbImage::from_fn(side, side, move |_, _| {
        let mut px = [0u8; 3];
        for c in &mut px {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            *c = state.to_le_bytes()[0];
        }
        image::Rgb(px)
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).unwrap();
    base64::engine::general_purpose::STANDARD.encode(out.into_inner())
}

fn image_blocks(content: &ToolResultContent) -> Vec<(String, String)> {
    let ToolResultContent::Blocks(blocks) = content else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Image {
                source: ImageSource::Base64 { media_type, data },
            } => Some((media_type.clone(), data.clone())),
            _ => None,
        })
        .collect()
}

/// Finding 1: the reviewer's training notebook (one cell, 80 stream outputs of about 1.8k
/// characters each: 148 KB) rendered past the 25,000-token cap, so it could be neither
/// read nor edited. Claude Code sums a cell's outputs: past 10,000 characters together
/// they become one pointer. Three outputs of 6,000 are one pointer too; three of 3,000
/// (9,000 together) are shown.
#[tokio::test]
async fn a_cells_outputs_too_large_together_become_one_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let epochs: Vec<Value> = (0..80)
        .map(|e| stream(format!("epoch {e}: {}\n", "0.1234 ".repeat(250))))
        .collect();
    let train = write_nb(
        dir.path(),
        "train.ipynb",
        json!([
            {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# T"},
            {"cell_type": "code", "execution_count": 1, "id": "train", "metadata": {},
             "outputs": epochs, "source": "train()"}
        ]),
    );
    let out = match run(&Read, &c, json!({"file_path": train})).await {
        Ok(out) => out,
        Err(f) => panic!("the training notebook could not be read: {}", f.text),
    };
    let shown = out.content.joined_text();
    assert!(shown.contains(&pointer("train.ipynb", 1)), "{shown}");
    assert!(!shown.contains("epoch 0:"), "{shown}");
    assert_eq!(
        out.structured["file"]["cells"][1]["outputs"],
        json!([{"output_type": "stream", "text": pointer("train.ipynb", 1)}])
    );
    // Read, it can be edited.
    text(
        &NotebookEdit,
        &c,
        json!({"notebook_path": train, "cell_id": "m", "new_source": "# Training"}),
    )
    .await;

    let three = |len: usize| -> Value {
        json!([{"cell_type": "code", "execution_count": 1, "id": "c", "metadata": {},
            "outputs": (0..3).map(|i| stream(format!("{i}{}", "z".repeat(len - 1)))).collect::<Vec<_>>(),
            "source": "run()"}])
    };
    let big = write_nb(dir.path(), "big.ipynb", three(6000));
    let shown = text(&Read, &c, json!({"file_path": big})).await;
    assert!(shown.contains(&pointer("big.ipynb", 0)), "{shown}");
    assert_eq!(shown.matches("Outputs are too large").count(), 1, "{shown}");
    assert!(!shown.contains(&"z".repeat(5999)), "{shown}");
    let small = write_nb(dir.path(), "small.ipynb", three(3000));
    let shown = text(&Read, &c, json!({"file_path": small})).await;
    assert!(!shown.contains("Outputs are too large"), "{shown}");
    assert_eq!(shown.matches(&"z".repeat(2999)).count(), 3, "{shown}");
}

/// Images are not counted in a cell's sum (Read shows them as image blocks, bounded on
/// their own): a plot of more than 10,000 characters of base64 beside a short text is
/// shown. A cell whose text is too large loses its whole outputs list, its image too, to
/// the pointer, as in Claude Code.
#[tokio::test]
async fn images_are_not_counted_but_go_with_a_cells_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let png = noise_png(100);
    assert!(png.len() > 10_000, "{}", png.len());
    let plot = json!({"output_type": "display_data", "metadata": {},
        "data": {"image/png": png, "text/plain": "<Figure size 640x480 with 1 Axes>"}});
    let nb = write_nb(
        dir.path(),
        "plots.ipynb",
        json!([
            {"cell_type": "code", "execution_count": 1, "id": "p", "metadata": {},
             "outputs": [stream("ok\n".into()), plot.clone()], "source": "plot()"},
            {"cell_type": "code", "execution_count": 2, "id": "q", "metadata": {},
             "outputs": [stream("w".repeat(10_001)), plot], "source": "noisy()"}
        ]),
    );
    let out = run(&Read, &c, json!({"file_path": nb})).await.unwrap();
    let images = image_blocks(&out.content);
    assert_eq!(images, [("image/png".to_owned(), png.clone())]);
    let shown = out.content.joined_text();
    assert!(shown.contains(&pointer("plots.ipynb", 1)), "{shown}");
    assert!(!shown.contains(&pointer("plots.ipynb", 0)), "{shown}");
    // The structured output carries the image as it was shown, in Claude Code's shape.
    assert_eq!(
        out.structured["file"]["cells"][0]["outputs"],
        json!([
            {"output_type": "stream", "text": "ok\n"},
            {"output_type": "display_data", "text": "<Figure size 640x480 with 1 Axes>",
             "image": {"image_data": png, "media_type": "image/png"}}
        ])
    );
}

/// The token-cap refusal names the way out that counts as a read for NotebookEdit
/// (`allow_large`); the jq commands it also gives do not.
#[tokio::test]
async fn the_token_cap_refusal_names_allow_large() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let cells: Vec<Value> = (0..120)
        .map(|i| {
            json!({"cell_type": "code", "id": format!("c{i}"), "metadata": {}, "execution_count": 1,
                "source": "print('x' * 1000)", "outputs": [stream("x".repeat(1000) + "\n")]})
        })
        .collect();
    let nb = write_nb(dir.path(), "long.ipynb", json!(cells));
    let err = fail(&Read, &c, json!({"file_path": nb})).await.text;
    assert!(
        err.contains("exceeds maximum allowed tokens (25000)")
            && err.contains("allow_large: true")
            && err.contains("NotebookEdit"),
        "{err}"
    );
    run(&Read, &c, json!({"file_path": nb, "allow_large": true}))
        .await
        .unwrap();
    text(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "c3", "new_source": "pass"}),
    )
    .await;
}

/// Finding 2: an empty `cell_id` is no id (Claude Code's `if (!cell_id)`): an insert goes
/// at the beginning, a replace or a delete is told the id must be given.
#[tokio::test]
async fn an_empty_cell_id_is_no_id() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let nb = write_nb(
        dir.path(),
        "n.ipynb",
        json!([
            {"cell_type": "markdown", "id": "a", "metadata": {}, "source": "first"},
            {"cell_type": "markdown", "id": "b", "metadata": {}, "source": "second"}
        ]),
    );
    run(&Read, &c, json!({"file_path": nb})).await.unwrap();
    for mode in ["replace", "delete"] {
        let err = fail(
            &NotebookEdit,
            &c,
            json!({"notebook_path": nb, "cell_id": "", "new_source": "x", "edit_mode": mode}),
        )
        .await;
        assert!(
            err.text
                .contains("Cell ID must be specified when not inserting a new cell."),
            "{mode}: {}",
            err.text
        );
    }
    text(
        &NotebookEdit,
        &c,
        json!({"notebook_path": nb, "cell_id": "", "new_source": "new", "cell_type": "markdown",
            "edit_mode": "insert"}),
    )
    .await;
    let doc: Value = serde_json::from_str(&fs::read_to_string(&nb).unwrap()).unwrap();
    let sources: Vec<&str> = doc["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["new", "first", "second"]);
}

/// Findings 3 and 4: only code cells show outputs (a markdown cell carrying `outputs` does
/// not), and the structured output is Claude Code's: `language`, `execution_count` and
/// `outputs` on code cells only, each output `{output_type, text}`.
#[tokio::test]
async fn only_code_cells_have_outputs_language_and_execution_count() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let nb = write_nb(
        dir.path(),
        "n.ipynb",
        json!([
            {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# Notes",
             "execution_count": 4, "outputs": [stream("stale markdown output\n".into())]},
            {"cell_type": "code", "execution_count": 3, "id": "c", "metadata": {},
             "outputs": [stream("2\n".into()),
                {"output_type": "error", "ename": "E", "evalue": "v", "traceback": ["t1", "t2"]}],
             "source": "print(2)"},
            {"cell_type": "code", "execution_count": null, "id": "d", "metadata": {},
             "outputs": [], "source": "pass"}
        ]),
    );
    let out = run(&Read, &c, json!({"file_path": nb})).await.unwrap();
    let shown = out.content.joined_text();
    assert!(!shown.contains("stale markdown output"), "{shown}");
    assert!(
        shown.contains("2\n") && shown.contains("E: v\nt1\nt2"),
        "{shown}"
    );
    assert_eq!(
        out.structured["file"]["cells"],
        json!([
            {"cellType": "markdown", "cell_id": "m", "source": "# Notes"},
            {"cellType": "code", "cell_id": "c", "source": "print(2)", "language": "python",
             "execution_count": 3, "outputs": [
                {"output_type": "stream", "text": "2\n"},
                {"output_type": "error", "text": "E: v\nt1\nt2"}]},
            {"cellType": "code", "cell_id": "d", "source": "pass", "language": "python"}
        ])
    );
}

/// A hook's replacement output in the new shape renders as the call did, its images too
/// (`run` checks that for every call); an image the API would refuse becomes a note, not an
/// image block.
#[tokio::test]
async fn a_replacement_output_renders_its_images_and_refuses_bad_ones() {
    use tool_core::Tool as _;
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let png = noise_png(20);
    let nb = write_nb(
        dir.path(),
        "n.ipynb",
        json!([{"cell_type": "code", "execution_count": 1, "id": "p", "metadata": {},
            "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"image/png": png}}],
            "source": "plot()"}]),
    );
    let out = run(&Read, &c, json!({"file_path": nb})).await.unwrap();
    assert_eq!(image_blocks(&out.content).len(), 1);
    let mut replaced = out.structured.clone();
    replaced["file"]["cells"][0]["outputs"][0]["image"]["image_data"] = json!("!!not base64");
    let rendered = Read.render_output(&replaced).unwrap();
    assert!(image_blocks(&rendered).is_empty(), "{rendered:?}");
    assert!(
        rendered.joined_text().contains("[Image output omitted"),
        "{rendered:?}"
    );
}

/// A hook's replacement output carries as many images as a read shows at most (20), not the
/// 40 it names: all of them go with every later request of the conversation.
#[tokio::test]
async fn a_replacement_output_shows_no_more_images_than_a_read() {
    use tool_core::Tool as _;
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let png = noise_png(20);
    let nb = write_nb(
        dir.path(),
        "n.ipynb",
        json!([{"cell_type": "code", "execution_count": 1, "id": "p", "metadata": {},
            "outputs": [{"output_type": "display_data", "metadata": {}, "data": {"image/png": png}}],
            "source": "plot()"}]),
    );
    let out = run(&Read, &c, json!({"file_path": nb})).await.unwrap();
    let mut replaced = out.structured.clone();
    let one = replaced["file"]["cells"][0]["outputs"][0].clone();
    replaced["file"]["cells"][0]["outputs"] = json!(vec![one; 40]);
    let rendered = Read.render_output(&replaced).unwrap();
    assert_eq!(image_blocks(&rendered).len(), 20, "images shown");
    assert!(
        rendered
            .joined_text()
            .contains("[Image output omitted: a read shows at most 20 images]"),
        "{rendered:?}"
    );
}
