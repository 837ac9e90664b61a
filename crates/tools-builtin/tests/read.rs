//! Read: golden texts, notices, refusals, images, notebooks, the read cache.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;

use common::{ctx, fail, run, text};
use serde_json::json;
use tool_core::{ContentBlock, ContentHash, ToolResultContent};
use tools_builtin::Read;
use tools_builtin::read::{EMPTY_FILE_NOTICE, FILE_UNCHANGED_MESSAGE};

#[tokio::test]
async fn numbered_lines_default_offset_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.txt");
    fs::write(&f, "one\r\ntwo\nthree\n").unwrap();
    let c = ctx(dir.path());
    let p = f.to_str().unwrap();
    assert_eq!(
        text(&Read, &c, json!({"file_path": p})).await,
        "     1\u{2192}one\n     2\u{2192}two\n     3\u{2192}three"
    );
    assert_eq!(
        text(&Read, &c, json!({"file_path": p, "offset": 2, "limit": 1})).await,
        "     2\u{2192}two"
    );
    // The structured output has Claude Code's shape.
    let out = run(&Read, &c, json!({"file_path": p, "offset": 3}))
        .await
        .unwrap();
    assert_eq!(
        out.structured,
        json!({"type": "text", "file": {"filePath": p, "content": "three", "numLines": 1, "startLine": 3, "totalLines": 3}})
    );
}

#[tokio::test]
async fn long_lines_are_cut_and_many_lines_capped_at_2000() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("long.txt");
    let mut body = format!("{}\n", "x".repeat(2500));
    for i in 2..=2100 {
        body.push_str(&format!("l{i}\n"));
    }
    fs::write(&f, &body).unwrap();
    let c = ctx(dir.path());
    let out = text(&Read, &c, json!({"file_path": f})).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2001);
    assert_eq!(
        lines[0],
        format!("     1\u{2192}{}... [line truncated]", "x".repeat(2000))
    );
    assert_eq!(lines[1999], "  2000\u{2192}l2000");
    // The file goes on: the model is told, and a Write of what it saw is refused (it would
    // drop lines 2001-2100).
    assert!(
        lines[2000].contains("PARTIAL view of the file: lines 1-2000 of 2100 are shown"),
        "{}",
        lines[2000]
    );
    let err = fail(
        &tools_builtin::Write,
        &c,
        json!({"file_path": f, "content": "x"}),
    )
    .await;
    assert!(err.text.contains("PARTIAL view"), "{}", err.text);
    assert_eq!(fs::read_to_string(&f).unwrap(), body);
    let rest = text(&Read, &c, json!({"file_path": f, "offset": 2001})).await;
    assert!(!rest.contains("PARTIAL"), "{rest}");
    assert!(rest.ends_with("  2100\u{2192}l2100"), "{rest}");
    // Seen to its end, but line 1 was cut: a Write of what was shown would lose the rest
    // of it, and is still refused.
    let err = fail(
        &tools_builtin::Write,
        &c,
        json!({"file_path": f, "content": "x"}),
    )
    .await;
    assert!(
        err.text
            .contains("lines longer than 2000 characters were cut"),
        "{}",
        err.text
    );
    assert!(!err.text.contains("PARTIAL"), "{}", err.text);
    assert_eq!(fs::read_to_string(&f).unwrap(), body);
}

#[tokio::test]
async fn empty_file_and_offset_past_end_notices() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.txt");
    fs::write(&empty, "").unwrap();
    let c = ctx(dir.path());
    assert_eq!(
        text(&Read, &c, json!({"file_path": empty})).await,
        EMPTY_FILE_NOTICE
    );
    let short = dir.path().join("short.txt");
    fs::write(&short, "a\nb\n").unwrap();
    assert_eq!(
        text(&Read, &c, json!({"file_path": short, "offset": 10})).await,
        "<system-reminder>Warning: the file exists but is shorter than the provided offset (10). The file has 2 lines.</system-reminder>"
    );
}

#[tokio::test]
async fn bad_inputs_get_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let missing = fail(&Read, &c, json!({"file_path": dir.path().join("nope.txt")})).await;
    assert_eq!(missing.code, Some(2));
    assert!(
        missing
            .text
            .starts_with("<tool_use_error>File does not exist."),
        "{}",
        missing.text
    );
    let relative = fail(&Read, &c, json!({"file_path": "a.txt"})).await;
    assert!(
        relative.text.contains("must be an absolute path"),
        "{}",
        relative.text
    );
    let directory = fail(&Read, &c, json!({"file_path": dir.path()})).await;
    assert!(
        directory.text.contains("EISDIR") && directory.text.contains("directory"),
        "{}",
        directory.text
    );
    let unknown = fail(&Read, &c, json!({"file_path": "/x", "bogus": 1})).await;
    assert!(
        unknown
            .text
            .contains("An unexpected parameter `bogus` was provided"),
        "{}",
        unknown.text
    );

    let bin = dir.path().join("data.raw");
    fs::write(&bin, b"abc\0def").unwrap();
    let binary = fail(&Read, &c, json!({"file_path": bin})).await;
    assert!(
        binary
            .text
            .starts_with("This tool cannot read binary files."),
        "{}",
        binary.text
    );
    let exe = dir.path().join("tool.exe");
    fs::write(&exe, b"text-looking").unwrap();
    let binary = fail(&Read, &c, json!({"file_path": exe})).await;
    assert!(binary.text.contains("binary .exe file"), "{}", binary.text);
    #[cfg(unix)]
    assert!(
        fail(&Read, &c, json!({"file_path": "/dev/zero"}))
            .await
            .text
            .contains("not a regular file")
    );
    let pdf = dir.path().join("doc.pdf");
    fs::write(&pdf, b"%PDF-1.4\n").unwrap();
    assert!(
        fail(&Read, &c, json!({"file_path": pdf}))
            .await
            .text
            .contains("PDF")
    );
}

#[tokio::test]
async fn images_come_back_as_image_blocks() {
    let dir = tempfile::tempdir().unwrap();
    use base64::Engine as _;
    // Found by its bytes: no name says what it is.
    let png = dir.path().join("pic");
    let bytes = encoded(1, 1, image::ImageFormat::Png);
    fs::write(&png, &bytes).unwrap();
    let out = run(&Read, &ctx(dir.path()), json!({"file_path": png}))
        .await
        .unwrap();
    assert_eq!(
        out.content,
        ToolResultContent::Blocks(vec![ContentBlock::image(
            "image/png",
            base64::engine::general_purpose::STANDARD.encode(&bytes)
        )])
    );
    // A header cut before its size: the API would refuse it, and every later request.
    let cut = dir.path().join("cut.png");
    fs::write(&cut, &bytes[..16]).unwrap();
    let err = fail(&Read, &ctx(dir.path()), json!({"file_path": cut})).await;
    assert!(err.text.contains("header cannot be read"), "{}", err.text);
    // A whole header and cut data (a PNG without its end, a JPEG of its header alone): the
    // API would refuse them too.
    let jpeg = encoded(40, 30, image::ImageFormat::Jpeg);
    for (name, data) in [
        (
            "trunc.png",
            encoded(300, 200, image::ImageFormat::Png)[..60].to_vec(),
        ),
        ("trunc.jpg", jpeg[..jpeg.len() / 2].to_vec()),
    ] {
        let path = dir.path().join(name);
        fs::write(&path, data).unwrap();
        let err = fail(&Read, &ctx(dir.path()), json!({"file_path": path})).await;
        assert!(
            err.text.contains("the image cannot be decoded")
                && err.text.contains("truncated or corrupt"),
            "{name}: {}",
            err.text
        );
    }
    assert_eq!(out.structured["type"], "image");
    assert_eq!(out.structured["file"]["originalSize"], bytes.len());
    let big = dir.path().join("big.gif");
    let mut gif = b"GIF89a".to_vec();
    gif.resize(5 << 20, 0);
    fs::write(&big, gif).unwrap();
    assert!(
        fail(&Read, &ctx(dir.path()), json!({"file_path": big}))
            .await
            .text
            .contains("too large")
    );
    // A small file can still be too wide for the API (8000 pixels a side at most).
    let png_of = |w: u32, h: u32| {
        let mut v = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        v.extend_from_slice(&w.to_be_bytes());
        v.extend_from_slice(&h.to_be_bytes());
        v.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        v
    };
    let wide = dir.path().join("wide.png");
    fs::write(&wide, png_of(9000, 200)).unwrap();
    let e = fail(&Read, &ctx(dir.path()), json!({"file_path": wide})).await;
    assert!(e.text.contains("9000x200 pixels"), "{}", e.text);
    fs::write(&wide, encoded(8000, 20, image::ImageFormat::Png)).unwrap();
    run(&Read, &ctx(dir.path()), json!({"file_path": wide}))
        .await
        .unwrap();
}

/// A real `w`x`h` image (a gradient) encoded as `format`.
fn encoded(w: u32, h: u32, format: image::ImageFormat) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x + y) % 256) as u8])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, format).unwrap();
    out.into_inner()
}

/// A `side`x`side` image of pseudo-random noise (which PNG cannot compress), the same on
/// every run.
fn noise(side: u32) -> image::RgbImage {
    let mut state = 0x2545_f491_u32;
    image::RgbImage::from_fn(side, side, move |_, _| {
        let mut px = [0u8; 3];
        for c in &mut px {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            *c = state.to_le_bytes()[0];
        }
        image::Rgb(px)
    })
}

/// An image over the API's limits (bytes, or pixels on a side) comes back scaled down as a
/// JPEG within them, as Claude Code does; it was refused ("Resize or compress it first").
#[tokio::test]
async fn images_over_the_limits_are_scaled_down() {
    let dir = tempfile::tempdir().unwrap();
    // Noise does not compress: a 1400x1400 PNG of it is about 5.9 MB.
    let noisy = noise(1400);
    let heavy = dir.path().join("heavy.png");
    noisy.save(&heavy).unwrap();
    let on_disk = fs::metadata(&heavy).unwrap().len();
    assert!(on_disk > tool_core::MAX_IMAGE_BYTES as u64, "{on_disk}");
    // Transparent (black under the transparency) with opaque black text: on white.
    let wide = dir.path().join("wide.png");
    image::RgbaImage::from_fn(9000, 4, |x, _| {
        if x < 4500 {
            image::Rgba([0, 0, 0, 0])
        } else {
            image::Rgba([0, 0, 0, 255])
        }
    })
    .save(&wide)
    .unwrap();
    for (path, side) in [(&heavy, 1400), (&wide, 1568)] {
        let out = run(&Read, &ctx(dir.path()), json!({"file_path": path}))
            .await
            .unwrap();
        let ToolResultContent::Blocks(blocks) = &out.content else {
            panic!("{:?}", out.content)
        };
        let [ContentBlock::Image { source }] = blocks.as_slice() else {
            panic!("{blocks:?}")
        };
        let tool_core::ImageSource::Base64 { media_type, data } = source;
        assert_eq!(media_type, "image/jpeg");
        use base64::Engine as _;
        let jpeg = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        assert!(jpeg.len() <= tool_core::MAX_IMAGE_BYTES);
        let shown = image::load_from_memory(&jpeg).unwrap();
        assert_eq!(shown.width().max(shown.height()), side);
        if path == &wide {
            let rgb = shown.to_rgb8();
            let at = |x: u32| rgb.get_pixel(x, 0).0[0];
            assert!(at(100) > 200, "the transparent half is white: {}", at(100));
            assert!(at(1400) < 60, "the black half stays black: {}", at(1400));
        }
        assert_eq!(
            out.structured["file"]["originalSize"],
            fs::metadata(path).unwrap().len()
        );
    }
}

/// A small PNG whose header asks for more pixels than the tool decodes (40000x40000, 1.6 GB
/// decoded) is refused from its header, before any memory is taken, saying why: a file of a
/// few megabytes must not take gigabytes, or abort the process where memory is limited.
#[tokio::test]
async fn an_image_too_large_to_decode_is_refused_from_its_header() {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    fn chunk(kind: &[u8], data: &[u8]) -> Vec<u8> {
        let mut out = (data.len() as u32).to_be_bytes().to_vec();
        let typed: Vec<u8> = kind.iter().chain(data).copied().collect();
        out.extend(&typed);
        out.extend(crc32(&typed).to_be_bytes());
        out
    }
    let mut header = 40_000u32.to_be_bytes().to_vec();
    header.extend(40_000u32.to_be_bytes());
    header.extend([8, 0, 0, 0, 0]); // 8-bit grayscale
    // A zlib stream of one stored block of ten zero bytes: the start of the first rows.
    let idat = [
        0x78, 0x01, 0x01, 0x0a, 0x00, 0xf5, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x0a, 0x00,
        0x01,
    ];
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &header));
    png.extend(chunk(b"IDAT", &idat));
    png.extend(chunk(b"IEND", &[]));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.png");
    fs::write(&path, &png).unwrap();
    let err = fail(&Read, &ctx(dir.path()), json!({"file_path": path}))
        .await
        .text;
    assert!(
        err.contains("40000x40000") && err.contains("over the 512 MiB this tool decodes"),
        "{err}"
    );
}

/// An image within the API's limits but over 500 KB comes back re-encoded as a lighter
/// JPEG of the same size in pixels, as Claude Code does; a lighter one comes back as it is.
#[tokio::test]
async fn images_over_500_kb_are_re_encoded_as_jpeg() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    let decoded = |out: &tool_core::ToolOutput| {
        let ToolResultContent::Blocks(blocks) = &out.content else {
            panic!("{:?}", out.content)
        };
        let [ContentBlock::Image { source }] = blocks.as_slice() else {
            panic!("{blocks:?}")
        };
        let tool_core::ImageSource::Base64 { media_type, data } = source;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .unwrap();
        (media_type.clone(), bytes)
    };
    // About 1 MB of PNG noise.
    let heavy = dir.path().join("heavy.png");
    noise(600).save(&heavy).unwrap();
    let on_disk = fs::metadata(&heavy).unwrap().len();
    assert!(
        on_disk > 500 * 1024 && on_disk < tool_core::MAX_IMAGE_BYTES as u64,
        "{on_disk}"
    );
    let out = run(&Read, &ctx(dir.path()), json!({"file_path": heavy}))
        .await
        .unwrap();
    let (media_type, bytes) = decoded(&out);
    assert_eq!(media_type, "image/jpeg");
    assert!(
        (bytes.len() as u64) < on_disk,
        "{} >= {on_disk}",
        bytes.len()
    );
    let shown = image::load_from_memory(&bytes).unwrap();
    assert_eq!((shown.width(), shown.height()), (600, 600));
    assert_eq!(out.structured["file"]["originalSize"], on_disk);
    // A light one is left alone, byte for byte.
    let light = dir.path().join("light.png");
    noise(200).save(&light).unwrap();
    let out = run(&Read, &ctx(dir.path()), json!({"file_path": light}))
        .await
        .unwrap();
    assert_eq!(
        decoded(&out),
        ("image/png".to_owned(), fs::read(&light).unwrap())
    );
}

#[tokio::test]
async fn notebooks_render_cell_by_cell() {
    let dir = tempfile::tempdir().unwrap();
    let nb = dir.path().join("n.ipynb");
    fs::write(
        &nb,
        r##"{"cells": [
 {"cell_type": "markdown", "id": "m1", "metadata": {}, "source": ["# Title\n", "text"]},
 {"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": 1, "source": "print(1)",
  "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}]}
], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"##,
    )
    .unwrap();
    let c = ctx(dir.path());
    let out = run(&Read, &c, json!({"file_path": nb})).await.unwrap();
    assert_eq!(
        out.content,
        ToolResultContent::Blocks(vec![
            ContentBlock::text(
                "<cell id=\"m1\"><cell_type>markdown</cell_type># Title\ntext</cell id=\"m1\">"
            ),
            ContentBlock::text("<cell id=\"c1\">print(1)</cell id=\"c1\">"),
            ContentBlock::text("1\n"),
        ])
    );
    assert!(c.file_state().get(&nb).is_some());
    fs::write(&nb, "{not json").unwrap();
    common::bump_mtime(&nb);
    assert!(
        fail(&Read, &c, json!({"file_path": nb}))
            .await
            .text
            .contains("not valid JSON")
    );
}

/// A `.ipynb` without a `cells` array (an nbformat 3 notebook keeps them under
/// `worksheets`; `cells` of another type; not an object) is refused, not shown as empty: it
/// is not recorded as read, so a Write cannot overwrite what it holds unseen. A notebook
/// whose `cells` array is empty is empty.
#[tokio::test]
async fn a_notebook_without_a_cells_array_is_refused_not_called_empty() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    for (name, content, want) in [
        (
            "v3.ipynb",
            json!({"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": [
                {"cell_type": "code", "input": "print('important')", "language": "python", "outputs": []}]}]}),
            "nbformat 3",
        ),
        (
            "str.ipynb",
            json!({"cells": "nope"}),
            "not a Jupyter notebook",
        ),
        (
            "obj.ipynb",
            json!({"cells": {"0": {}}}),
            "not a Jupyter notebook",
        ),
        ("arr.ipynb", json!([1, 2]), "not a Jupyter notebook"),
    ] {
        let nb = dir.path().join(name);
        fs::write(&nb, content.to_string()).unwrap();
        let err = fail(&Read, &c, json!({"file_path": nb})).await.text;
        assert!(
            err.contains("Notebook has no `cells` array") && err.contains(want),
            "{name}: {err}"
        );
        assert!(!err.contains(EMPTY_FILE_NOTICE), "{name}: {err}");
        assert!(
            c.file_state().get(&nb).is_none(),
            "{name} was recorded as read"
        );
    }
    let empty = dir.path().join("empty.ipynb");
    fs::write(
        &empty,
        json!({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).to_string(),
    )
    .unwrap();
    let out = run(&Read, &c, json!({"file_path": empty})).await.unwrap();
    assert_eq!(
        out.content.joined_text(),
        tools_builtin::read::NOTEBOOK_NO_CELLS_NOTICE
    );
}

/// A notebook's text counts against the output token limit, as a text file's does.
#[tokio::test]
async fn a_notebook_over_the_token_limit_is_refused_with_a_way_to_read_it() {
    let dir = tempfile::tempdir().unwrap();
    let nb = dir.path().join("long.ipynb");
    let output = "x".repeat(1000) + "\n";
    let cells: Vec<_> = (0..120)
        .map(|i| {
            json!({"cell_type": "code", "id": format!("c{i}"), "metadata": {}, "execution_count": 1,
            "source": "print('x' * 1000)",
            "outputs": [{"output_type": "stream", "name": "stdout", "text": [output]}]})
        })
        .collect();
    fs::write(
        &nb,
        json!({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}).to_string(),
    )
    .unwrap();
    let c = ctx(dir.path());
    let err = fail(&Read, &c, json!({"file_path": nb})).await.text;
    assert!(
        err.contains("exceeds maximum allowed tokens (25000)") && err.contains("jq '.cells[:20]'"),
        "{err}"
    );
    assert!(c.file_state().get(&nb).is_none());
    // Asked for, the whole notebook comes back.
    let out = run(&Read, &c, json!({"file_path": nb, "allow_large": true}))
        .await
        .unwrap();
    assert!(out.content.joined_text().contains(&"x".repeat(1000)));
}

#[tokio::test]
async fn notebook_images_the_api_would_refuse_become_notes() {
    use base64::Engine as _;
    // A PNG header: signature, then an IHDR chunk with the width and height.
    let png = |w: u32, h: u32| {
        let mut b = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
        b.extend_from_slice(b"IHDR");
        b.extend_from_slice(&w.to_be_bytes());
        b.extend_from_slice(&h.to_be_bytes());
        b.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        base64::engine::general_purpose::STANDARD.encode(b)
    };
    let output = |data: String| json!({"output_type": "display_data", "metadata": {}, "data": {"image/png": data}});
    // JPEG bytes under the `image/png` key: shown as what they are (the API refuses a
    // mismatched type).
    let jpeg =
        base64::engine::general_purpose::STANDARD.encode(encoded(16, 16, image::ImageFormat::Jpeg));
    let real_png =
        base64::engine::general_purpose::STANDARD.encode(encoded(100, 50, image::ImageFormat::Png));
    let dir = tempfile::tempdir().unwrap();
    let nb = dir.path().join("plots.ipynb");
    let notebook = json!({"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": 1,
        "source": "plot()", "outputs": [output(real_png), output(png(9000, 10)), output("!!".into()), output(jpeg.clone()), output(png(100, 50))]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
    fs::write(&nb, notebook.to_string()).unwrap();
    // Called directly: a notebook's structured output has no image data to render again.
    let out = tool_core::Tool::call(
        &Read,
        json!({"file_path": nb}),
        ctx(dir.path()),
        tool_core::ProgressSender::none(),
    )
    .await
    .unwrap()
    .data;
    let ToolResultContent::Blocks(blocks) = &out.content else {
        panic!("{:?}", out.content)
    };
    let types: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Image {
                source: tool_core::ImageSource::Base64 { media_type, .. },
            } => Some(media_type.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(types, ["image/png", "image/jpeg"], "{blocks:?}");
    let notes = out.content.joined_text();
    assert!(notes.contains("9000x10 pixels"), "{notes}");
    assert!(notes.contains("Image output omitted"), "{notes}");
    // A header without its data: a note, not an image.
    assert!(notes.contains("the image cannot be decoded"), "{notes}");
}

#[tokio::test]
async fn records_the_read_and_dedups_an_unchanged_reread() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.txt");
    fs::write(&f, "alpha\nbeta\n").unwrap();
    let c = ctx(dir.path());
    let first = text(&Read, &c, json!({"file_path": f})).await;
    assert!(first.contains("alpha"));
    let state = c.file_state().get(&f).unwrap();
    assert_eq!(state.disk_hash, Some(ContentHash::of(b"alpha\nbeta\n")));
    assert_eq!(
        (state.offset, state.limit, state.content.as_str()),
        (Some(1), None, "alpha\nbeta")
    );
    assert_eq!(
        text(&Read, &c, json!({"file_path": f})).await,
        FILE_UNCHANGED_MESSAGE
    );
    // Another range is not deduplicated.
    assert_eq!(
        text(&Read, &c, json!({"file_path": f, "limit": 1})).await,
        "     1\u{2192}alpha"
    );
    // A changed file is read again.
    fs::write(&f, "gamma\n").unwrap();
    common::bump_mtime(&f);
    assert_eq!(
        text(&Read, &c, json!({"file_path": f, "limit": 1})).await,
        "     1\u{2192}gamma"
    );
}

/// Parallel Reads of one file: the one that started last may finish first, and the ones
/// before it must still show the file, as their results come before its. "Unchanged since
/// last read" refers only to a Read whose result comes earlier (a smaller call order).
#[tokio::test]
async fn a_read_started_earlier_never_refers_to_a_later_ones_result() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.txt");
    fs::write(&f, "alpha\n").unwrap();
    let c = ctx(dir.path());
    let (r1, r2, r3) = (
        c.clone().with_tool_use_id("r1"),
        c.clone().with_tool_use_id("r2"),
        c.clone().with_tool_use_id("r3"),
    );
    // r3 finishes first: it shows the file.
    assert!(
        text(&Read, &r3, json!({"file_path": f}))
            .await
            .contains("alpha")
    );
    // r1 and r2 come before it in the message: they show the file too...
    assert!(
        text(&Read, &r1, json!({"file_path": f}))
            .await
            .contains("alpha")
    );
    // ...r2 may refer to r1, whose result is before its own.
    assert_eq!(
        text(&Read, &r2, json!({"file_path": f})).await,
        FILE_UNCHANGED_MESSAGE
    );
    // A later call refers to any of them.
    assert_eq!(
        text(&Read, &c.with_tool_use_id("r4"), json!({"file_path": f})).await,
        FILE_UNCHANGED_MESSAGE
    );
}

/// Parallel Reads of one notebook, as of a text file: a Read that started earlier shows the
/// notebook even when one started after it finished first, and "unchanged since last read"
/// refers only to a Read whose result comes earlier.
#[tokio::test]
async fn a_notebook_read_started_earlier_never_refers_to_a_later_ones_result() {
    let dir = tempfile::tempdir().unwrap();
    let nb = dir.path().join("n.ipynb");
    fs::write(
        &nb,
        r#"{"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": "print(1)", "outputs": []}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"#,
    )
    .unwrap();
    let c = ctx(dir.path());
    let (r1, r2, r3) = (
        c.clone().with_tool_use_id("r1"),
        c.clone().with_tool_use_id("r2"),
        c.clone().with_tool_use_id("r3"),
    );
    // r3 finishes first: it shows the cells.
    assert!(
        text(&Read, &r3, json!({"file_path": nb}))
            .await
            .contains("print(1)")
    );
    // r1 comes before it in the message: it shows them too.
    let first = text(&Read, &r1, json!({"file_path": nb})).await;
    assert!(first.contains("print(1)"), "{first}");
    // r2 may refer to r1, whose result is before its own.
    assert_eq!(
        text(&Read, &r2, json!({"file_path": nb})).await,
        FILE_UNCHANGED_MESSAGE
    );
    // A later call refers to any of them.
    assert_eq!(
        text(&Read, &c.with_tool_use_id("r4"), json!({"file_path": nb})).await,
        FILE_UNCHANGED_MESSAGE
    );
}

#[tokio::test]
async fn token_cap_gives_a_partial_view_or_an_error_for_explicit_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("wide.txt");
    let line = "y".repeat(1500);
    fs::write(&f, format!("{line}\n").repeat(200)).unwrap();
    let c = ctx(dir.path());
    let partial = text(&Read, &c, json!({"file_path": f})).await;
    assert!(
        partial.contains("PARTIAL view"),
        "{}",
        &partial[partial.len() - 300..]
    );
    assert!(partial.lines().count() < 200);
    // A partial view does not allow replacing the whole file...
    let refused = fail(
        &tools_builtin::Write,
        &c,
        json!({"file_path": f, "content": "short\n"}),
    )
    .await;
    assert!(
        refused.text.contains("only partly shown"),
        "{}",
        refused.text
    );
    assert_eq!(refused.code, Some(2));
    // ...but the part that was shown can be edited.
    let g = dir.path().join("headed.txt");
    fs::write(
        &g,
        format!("first line\n{}", format!("{line}\n").repeat(200)),
    )
    .unwrap();
    assert!(
        text(&Read, &c, json!({"file_path": g}))
            .await
            .contains("PARTIAL view")
    );
    common::run(
        &tools_builtin::Edit,
        &c,
        json!({"file_path": g, "old_string": "first line", "new_string": "1st line"}),
    )
    .await
    .unwrap();
    // The Edit changed what was seen; the rest is still unseen, so Write still refuses.
    let refused = fail(
        &tools_builtin::Write,
        &c,
        json!({"file_path": g, "content": "short\n"}),
    )
    .await;
    assert!(
        refused.text.contains("only partly shown"),
        "{}",
        refused.text
    );
    assert!(fs::read_to_string(&g).unwrap().starts_with("1st line\n"));
    let err = fail(
        &Read,
        &c,
        json!({"file_path": f, "offset": 1, "limit": 200}),
    )
    .await;
    assert!(
        err.text.contains("exceeds maximum allowed tokens (25000)"),
        "{}",
        err.text
    );
    let all = text(
        &Read,
        &c,
        json!({"file_path": f, "offset": 1, "limit": 200, "allow_large": true}),
    )
    .await;
    assert_eq!(all.lines().count(), 200);
    // After the whole file was read, Write may replace it.
    common::run(
        &tools_builtin::Write,
        &c,
        json!({"file_path": f, "content": "short\n"}),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn bom_and_utf16_files_read_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let bom = dir.path().join("bom.txt");
    fs::write(&bom, b"\xEF\xBB\xBFhi\n").unwrap();
    assert_eq!(
        text(&Read, &c, json!({"file_path": bom})).await,
        "     1\u{2192}hi"
    );
    let utf16 = dir.path().join("u16.txt");
    let mut bytes = vec![0xFF, 0xFE];
    for u in "h\u{e9}\r\nx".encode_utf16() {
        bytes.extend_from_slice(&u.to_le_bytes());
    }
    fs::write(&utf16, bytes).unwrap();
    assert_eq!(
        text(&Read, &c, json!({"file_path": utf16})).await,
        "     1\u{2192}h\u{e9}\n     2\u{2192}x"
    );
}

/// A UTF-16 file with one stray byte (an odd length) or an unpaired surrogate is shown with
/// U+FFFD there, as bad UTF-8 is, instead of not at all; a Write of what was shown is then
/// refused (the bytes behind U+FFFD would be lost), and the file is left as it was.
#[tokio::test]
async fn a_damaged_utf16_file_is_shown_with_replacement_characters() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let odd = dir.path().join("odd.txt");
    let odd_bytes = b"\xff\xfea\x00b\x00\n\x00c\x00\n".to_vec();
    fs::write(&odd, &odd_bytes).unwrap();
    assert_eq!(
        text(&Read, &c, json!({"file_path": odd})).await,
        "     1\u{2192}ab\n     2\u{2192}c\u{FFFD}"
    );
    let surrogate = dir.path().join("surr.txt");
    fs::write(&surrogate, b"\xfe\xff\x00a\xd8\x00\x00\n\x00b").unwrap();
    assert_eq!(
        text(&Read, &c, json!({"file_path": surrogate})).await,
        "     1\u{2192}a\u{FFFD}\n     2\u{2192}b"
    );
    let err = fail(
        &tools_builtin::Write,
        &c,
        json!({"file_path": odd, "content": "x"}),
    )
    .await;
    assert!(
        err.text.contains("UTF-8") || err.text.contains("U+FFFD"),
        "{}",
        err.text
    );
    assert_eq!(fs::read(&odd).unwrap(), odd_bytes);
}

/// A Read given up on (cancelled: the model gets an interruption, not the content) does not
/// count as seen: the next Read shows the file, not the "unchanged" stub.
#[tokio::test]
async fn a_cancelled_read_does_not_make_the_next_one_a_stub() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.txt");
    std::fs::write(&f, "the content\n").unwrap();
    let c = ctx(dir.path());
    let cancelled = c.child();
    cancelled.cancellation().cancel();
    assert!(
        run(&Read, &cancelled, json!({"file_path": f}))
            .await
            .is_err()
    );
    let shown = text(&Read, &c, json!({"file_path": f})).await;
    assert!(shown.contains("the content"), "{shown}");
}

/// A line cut by one Read, then shortened by an Edit, then seen whole by a new Read of the
/// whole file: Write is no longer refused for "cut lines".
#[tokio::test]
async fn a_whole_uncut_reread_clears_the_cut_lines_flag() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("long.txt");
    let long = "y".repeat(2500);
    fs::write(&f, format!("head\n{long}\ntail\n")).unwrap();
    let c = ctx(dir.path());
    let first = text(&Read, &c, json!({"file_path": f})).await;
    assert!(first.contains("[line truncated]"), "{first}");
    // The Edit matches its text against the file itself: the long line is shortened.
    text(
        &tools_builtin::Edit,
        &c,
        json!({"file_path": f, "old_string": long, "new_string": "y".repeat(500)}),
    )
    .await;
    // Still refused: the line was cut when last seen.
    let err = fail(
        &tools_builtin::Write,
        &c,
        json!({"file_path": f, "content": "fresh\n"}),
    )
    .await;
    assert!(err.text.contains("lines longer than"), "{}", err.text);
    let again = text(&Read, &c, json!({"file_path": f})).await;
    assert!(!again.contains("[line truncated]"), "{again}");
    run(
        &tools_builtin::Write,
        &c,
        json!({"file_path": f, "content": "fresh\n"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&f).unwrap(), "fresh\n");
}

/// The image blocks of a call's content: (media type, decoded bytes).
fn shown_images(content: &ToolResultContent) -> Vec<(String, Vec<u8>)> {
    use base64::Engine as _;
    let ToolResultContent::Blocks(blocks) = content else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Image {
                source: tool_core::ImageSource::Base64 { media_type, data },
            } => Some((
                media_type.clone(),
                base64::engine::general_purpose::STANDARD
                    .decode(data)
                    .unwrap(),
            )),
            _ => None,
        })
        .collect()
}

/// A light image wider than 1568 pixels is scaled down as Claude Code scales it (the API
/// refuses a request of many images when one is over 2000 pixels on a side).
#[tokio::test]
async fn a_light_but_wide_image_is_scaled_to_1568_pixels() {
    let dir = tempfile::tempdir().unwrap();
    let wide = dir.path().join("wide.png");
    image::RgbImage::from_fn(2500, 100, |x, y| {
        image::Rgb([(x % 256) as u8, (y % 256) as u8, 0])
    })
    .save(&wide)
    .unwrap();
    assert!(fs::metadata(&wide).unwrap().len() < 500 * 1024);
    let out = run(&Read, &ctx(dir.path()), json!({"file_path": wide}))
        .await
        .unwrap();
    let images = shown_images(&out.content);
    assert_eq!(images.len(), 1);
    let shown = image::load_from_memory(&images[0].1).unwrap();
    assert_eq!(shown.width().max(shown.height()), 1568);
    // A light image within 1568 pixels is left alone.
    let small = dir.path().join("small.png");
    image::RgbImage::from_fn(1568, 20, |x, _| image::Rgb([(x % 256) as u8, 0, 0]))
        .save(&small)
        .unwrap();
    let out = run(&Read, &ctx(dir.path()), json!({"file_path": small}))
        .await
        .unwrap();
    assert_eq!(
        shown_images(&out.content),
        [("image/png".to_owned(), fs::read(&small).unwrap())]
    );
}

/// A notebook's images are scaled and re-encoded as Read's are, and all of them together
/// stay within a cap: the ones past it become notes.
#[tokio::test]
async fn notebook_images_are_scaled_and_capped_in_total() {
    use base64::Engine as _;
    let dir = tempfile::tempdir().unwrap();
    // Wide but light: scaled to 1568 pixels.
    let mut wide = Vec::new();
    image::RgbImage::from_fn(2500, 100, |x, _| image::Rgb([(x % 256) as u8, 0, 0]))
        .write_to(
            &mut std::io::Cursor::new(&mut wide),
            image::ImageFormat::Png,
        )
        .unwrap();
    // About 1 MB of PNG noise: re-encoded as a lighter JPEG.
    let mut heavy = Vec::new();
    noise(600)
        .write_to(
            &mut std::io::Cursor::new(&mut heavy),
            image::ImageFormat::Png,
        )
        .unwrap();
    // GIFs of 3.5 MB (within the API's limits; not re-encoded here): together far over the
    // cap. (A real GIF, padded after its end: one that does not decode is refused.)
    let mut gif = encoded(100, 100, image::ImageFormat::Gif);
    gif.resize(3_500_000, 0);
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let output = |mime: &str, data: String| json!({"output_type": "display_data", "metadata": {}, "data": {mime: data}});
    let mut outputs = vec![
        output("image/png", b64(&wide)),
        output("image/png", b64(&heavy)),
    ];
    for _ in 0..8 {
        outputs.push(output("image/png", b64(&gif)));
    }
    let nb = dir.path().join("plots.ipynb");
    let notebook = json!({"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "execution_count": 1,
        "source": "plot()", "outputs": outputs}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
    fs::write(&nb, notebook.to_string()).unwrap();
    let out = tool_core::Tool::call(
        &Read,
        json!({"file_path": nb}),
        ctx(dir.path()),
        tool_core::ProgressSender::none(),
    )
    .await
    .unwrap()
    .data;
    let images = shown_images(&out.content);
    let first = image::load_from_memory(&images[0].1).unwrap();
    assert_eq!(first.width().max(first.height()), 1568);
    assert_eq!(images[1].0, "image/jpeg");
    assert!(images[1].1.len() < heavy.len());
    assert_eq!(image::load_from_memory(&images[1].1).unwrap().width(), 600);
    let total: usize = images.iter().map(|(_, b)| b.len().div_ceil(3) * 4).sum();
    assert!(total <= 20 * 1024 * 1024, "{total} bytes of base64");
    assert!(images.len() > 2 && images.len() < 10, "{}", images.len());
    let notes = out.content.joined_text();
    assert!(
        notes.contains("[Image output omitted: the images of one read carry at most 20 MB"),
        "{notes}"
    );
}

/// A text file whose first bytes happen to spell a PDF or GIF signature (notes about the
/// formats) is read as the text it is, and can then be edited; it was sent to the PDF
/// parser ("failed parsing cross reference table") or returned as a 30496x29537 "image",
/// and no Edit could follow. A file named as an image is still an image, and a GIF that
/// does not decode (cut to its header) is refused, not sent: the API refuses it, and with
/// it every later request of the conversation.
#[tokio::test]
async fn text_that_starts_like_a_pdf_or_an_image_is_text() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    for (name, body) in [
        (
            "pdf_notes.md",
            &b"%PDF-1.7 is the header line every PDF starts with.\nSee ISO 32000.\n"[..],
        ),
        (
            "gif_notes.md",
            b"GIF89a was introduced in 1989 as an extension of GIF87a.\nIt added animation.\n",
        ),
        (
            "gif2.txt",
            b"GIF89a\n\x01\n\x01\nThis text file only looks like a GIF header.\n",
        ),
        ("riff", b"RIFF1234WEBP is how a WebP file starts.\n"),
    ] {
        let path = dir.path().join(name);
        fs::write(&path, body).unwrap();
        let shown = text(&Read, &c, json!({"file_path": path})).await;
        let first = String::from_utf8_lossy(body)
            .lines()
            .next()
            .unwrap()
            .to_owned();
        assert!(
            shown.starts_with(&format!("     1\u{2192}{first}")),
            "{name}: {shown}"
        );
        let last = String::from_utf8_lossy(body)
            .lines()
            .last()
            .unwrap()
            .to_owned();
        text(
            &tools_builtin::Edit,
            &c,
            json!({"file_path": path, "old_string": last, "new_string": "edited"}),
        )
        .await;
        assert!(
            fs::read_to_string(&path).unwrap().ends_with("edited\n"),
            "{name}"
        );
    }
    // Not UTF-8 (Latin-1, cp1252 notes): still text, by their names.
    for (name, body, first) in [
        (
            "gif_latin1.md",
            &b"GIF89a was introduced in 1989. caf\xe9\n"[..],
            "GIF89a was introduced",
        ),
        (
            "pdf_cp1252.txt",
            b"%PDF-1.7 is \x93the\x94 version\n",
            "%PDF-1.7 is ",
        ),
    ] {
        let path = dir.path().join(name);
        fs::write(&path, body).unwrap();
        let shown = text(&Read, &c, json!({"file_path": path})).await;
        assert!(
            shown.starts_with(&format!("     1\u{2192}{first}")),
            "{name}: {shown}"
        );
    }
    // A real GIF, whole and cut to its 13-byte header.
    let mut gif = Vec::new();
    image::DynamicImage::new_rgb8(4, 3)
        .write_to(&mut std::io::Cursor::new(&mut gif), image::ImageFormat::Gif)
        .unwrap();
    let whole = dir.path().join("t.gif");
    fs::write(&whole, &gif).unwrap();
    let out = run(&Read, &c, json!({"file_path": whole})).await.unwrap();
    assert_eq!(out.structured["type"], "image", "{:?}", out.content);
    let cut = dir.path().join("cut.gif");
    fs::write(&cut, &gif[..13]).unwrap();
    let err = fail(&Read, &c, json!({"file_path": cut})).await;
    assert!(err.text.contains("Cannot return"), "{}", err.text);
    // Without a name that says so, a real (binary) GIF is still found by its bytes.
    let unnamed = dir.path().join("picture");
    fs::write(&unnamed, &gif).unwrap();
    let out = run(&Read, &c, json!({"file_path": unnamed})).await.unwrap();
    assert_eq!(out.structured["type"], "image");
}

/// A binary file named for its format is refused by Read's validation, as Claude Code's
/// `validateInput` does (so the model sees a `<tool_use_error>`), whether it exists or not.
#[tokio::test]
async fn a_binary_extension_is_refused_by_validation() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    fs::write(dir.path().join("bin.dat"), b"\x00\x01\x02").unwrap();
    for name in ["bin.dat", "missing.zip"] {
        let err = fail(&Read, &c, json!({"file_path": dir.path().join(name)})).await;
        assert_eq!(err.code, Some(4), "{name}: {}", err.text);
        assert!(
            err.text
                .starts_with("<tool_use_error>This tool cannot read binary files."),
            "{name}: {}",
            err.text
        );
    }
}

/// The command a notebook's too-large output points to holds the path as one shell word:
/// a repository's file name (`my $(x) "nb".ipynb`) cannot end the quotes or run a command
/// substitution when the model runs it. An ordinary path keeps Claude Code's double quotes.
#[tokio::test]
async fn a_notebooks_pointer_command_quotes_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let big = "y".repeat(12_000);
    let notebook = json!({"cells": [{"cell_type": "code", "id": "c1", "metadata": {},
        "execution_count": 1, "source": "print()",
        "outputs": [{"output_type": "stream", "name": "stdout", "text": big}]}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    .to_string();
    for (name, word) in [
        ("plain.ipynb", "\"PATH\"".to_owned()),
        ("my $(x) \"nb\".ipynb", "'PATH'".to_owned()),
        ("it's $HOME.ipynb", "'PATH'".to_owned()),
        ("-n.ipynb", "\"./PATH\"".to_owned()),
    ] {
        let path = dir.path().join(name);
        fs::write(&path, &notebook).unwrap();
        let shown = text(&Read, &c, json!({"file_path": path})).await;
        // (Shown relative to the working directory, as the notebook's path is.)
        let display = if word.starts_with('\'') {
            name.replace('\'', "'\\''")
        } else {
            name.to_owned()
        };
        let expected = format!(
            "Use Bash with: cat {} | jq '.cells[0].outputs'",
            word.replace("PATH", &display)
        );
        assert!(shown.contains(&expected), "{name}: {shown}");
    }
}

/// Read's schema said `limit` could be 0 (`"minimum": 0`) while `limit: 0` was refused as
/// "limit must be at least 1.", and `limit: -5` was told it "must be at least 0": the schema
/// and every refusal now say 1.
#[tokio::test]
async fn the_schema_and_the_refusals_agree_that_limit_is_at_least_one() {
    use tool_core::Tool as _;
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.txt");
    fs::write(&f, "one\n").unwrap();
    let c = ctx(dir.path());
    assert_eq!(Read.input_schema()["properties"]["limit"]["minimum"], 1);
    for limit in [0, -5] {
        let err = fail(&Read, &c, json!({"file_path": f, "limit": limit})).await;
        assert!(
            err.text.contains("at least 1") && !err.text.contains("at least 0"),
            "limit {limit}: {}",
            err.text
        );
    }
    assert_eq!(
        text(&Read, &c, json!({"file_path": f, "limit": 1})).await,
        "     1\u{2192}one"
    );
}
