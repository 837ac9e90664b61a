//! Read on PDFs: page text through lopdf, the `pages` parameter and its limits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;

use common::{ctx, fail, run, text};
use serde_json::json;
use tools_builtin::Read;

/// A minimal, valid PDF with one Helvetica text line per page.
fn make_pdf(pages: &[String]) -> Vec<u8> {
    let contents: Vec<(&str, Vec<u8>)> = pages
        .iter()
        .map(|line| {
            (
                "",
                format!("BT /F1 12 Tf 72 720 Td ({line}) Tj ET").into_bytes(),
            )
        })
        .collect();
    pdf_of_contents(&contents)
}

/// A valid PDF with one page per content stream, each given with the extra entries of its
/// dictionary (such as its `/Filter`) and its bytes as stored.
fn pdf_of_contents(contents: &[(&str, Vec<u8>)]) -> Vec<u8> {
    let n = contents.len();
    // Objects: 1 catalog, 2 pages, 3 font, then per page: page object, content stream.
    let mut objects: Vec<Vec<u8>> = Vec::new();
    objects.push(b"<< /Type /Catalog /Pages 2 0 R >>".to_vec());
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    objects.push(format!("<< /Type /Pages /Kids [{}] /Count {n} >>", kids.join(" ")).into_bytes());
    objects.push(
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
    );
    for (i, (dict, stream)) in contents.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ).into_bytes());
        let mut obj = format!("<< /Length {} {dict} >>\nstream\n", stream.len()).into_bytes();
        obj.extend_from_slice(stream);
        obj.extend_from_slice(b"\nendstream");
        objects.push(obj);
    }
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, obj) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(obj);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn pages(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("Text of page {i}")).collect()
}

#[tokio::test]
async fn small_pdf_reads_every_page() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("doc.pdf");
    fs::write(&f, make_pdf(&pages(2))).unwrap();
    let c = ctx(dir.path());
    let out = text(&Read, &c, json!({"file_path": f})).await;
    assert!(out.starts_with("<page number=\"1\">\n"), "{out}");
    assert!(
        out.contains("Text of page 1") && out.contains("Text of page 2"),
        "{out}"
    );
    let structured = run(&Read, &c, json!({"file_path": f, "pages": "2"}))
        .await
        .unwrap()
        .structured;
    assert_eq!(structured["type"], "pdf");
    assert_eq!(structured["file"]["totalPages"], 2);
    assert_eq!(structured["file"]["pages"][0]["page"], 2);
}

#[tokio::test]
async fn large_pdf_needs_pages_and_at_most_20() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("big.pdf");
    fs::write(&f, make_pdf(&pages(25))).unwrap();
    let c = ctx(dir.path());
    let e = fail(&Read, &c, json!({"file_path": f})).await;
    assert!(
        e.text
            .contains("This PDF has 25 pages, which is too many to read at once."),
        "{}",
        e.text
    );
    let out = text(&Read, &c, json!({"file_path": f, "pages": "3-4"})).await;
    assert!(
        out.contains("Text of page 3") && out.contains("Text of page 4") && !out.contains("page 5"),
        "{out}"
    );
    assert!(
        fail(&Read, &c, json!({"file_path": f, "pages": "1-21"}))
            .await
            .text
            .contains("maximum of 20 pages")
    );
    assert!(
        fail(&Read, &c, json!({"file_path": f, "pages": "30"}))
            .await
            .text
            .contains("the PDF has 25 pages")
    );
    assert!(
        fail(&Read, &c, json!({"file_path": f, "pages": "x"}))
            .await
            .text
            .contains("Invalid pages parameter")
    );
    let broken = dir.path().join("broken.pdf");
    fs::write(&broken, b"%PDF-1.4\ngarbage").unwrap();
    assert!(
        fail(&Read, &c, json!({"file_path": broken}))
            .await
            .text
            .contains("Could not read the PDF")
    );
}

/// The text of the pages read is capped as a text file's is (25,000 tokens by default):
/// asking for fewer pages gets through.
#[tokio::test]
async fn pdf_text_over_the_token_cap_asks_for_fewer_pages() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dense.pdf");
    let dense: Vec<String> = (1..=4)
        .map(|i| format!("page {i} {}", "word ".repeat(6_000)))
        .collect();
    fs::write(&f, make_pdf(&dense)).unwrap();
    let c = ctx(dir.path());
    let e = fail(&Read, &c, json!({"file_path": f})).await;
    assert!(
        e.text.contains("exceeds maximum allowed tokens (25000)")
            && e.text.contains("pages parameter"),
        "{}",
        e.text
    );
    let out = text(&Read, &c, json!({"file_path": f, "pages": "2"})).await;
    assert!(
        out.contains("page 2 word"),
        "{}",
        &out[..100.min(out.len())]
    );
    // One page alone over the cap: fewer pages cannot help; the error says what can.
    let g = dir.path().join("one dense page.pdf");
    fs::write(&g, make_pdf(&[format!("big {}", "word ".repeat(30_000))])).unwrap();
    let e = fail(&Read, &c, json!({"file_path": g})).await;
    assert!(
        e.text.contains("The text of page 1 alone")
            && e.text
                .contains(&format!("pdftotext -f 1 -l 1 '{}'", g.display()))
            && !e.text.contains("pages parameter"),
        "{}",
        e.text
    );
}

/// A zlib stream of `n` spaces, built bit by bit (a literal, then copies of 258 bytes at
/// distance 1 under the fixed Huffman codes): 13 bits per 258 bytes, so a 1 GiB bomb takes
/// 6.6 MB and no time to make.
fn zlib_of_spaces(n: u64) -> Vec<u8> {
    struct Bits {
        out: Vec<u8>,
        acc: u64,
        len: u32,
    }
    impl Bits {
        /// `count` bits of `value`, lowest first (deflate's order for headers and extras).
        fn put(&mut self, value: u64, count: u32) {
            self.acc |= value << self.len;
            self.len += count;
            while self.len >= 8 {
                self.out.push(self.acc as u8);
                self.acc >>= 8;
                self.len -= 8;
            }
        }
        /// A Huffman code, highest bit first.
        fn code(&mut self, code: u64, count: u32) {
            let reversed = (0..count).fold(0, |r, i| (r << 1) | ((code >> i) & 1));
            self.put(reversed, count);
        }
    }
    assert!(n > 0 && (n - 1).is_multiple_of(258));
    let mut bits = Bits {
        out: vec![0x78, 0x01],
        acc: 0,
        len: 0,
    };
    bits.put(1, 1); // the last block
    bits.put(1, 2); // fixed Huffman codes
    bits.code(0x30 + u64::from(b' '), 8);
    for _ in 0..(n - 1) / 258 {
        bits.code(0b1100_0101, 8); // length 258
        bits.code(0, 5); // distance 1
    }
    bits.code(0, 7); // end of block
    bits.put(0, 7);
    let (n, m) = (u128::from(n), 65521u128);
    let a = (1 + 32 * n) % m;
    let b = (n + 32 * n * (n + 1) / 2) % m;
    let mut out = bits.out;
    out.extend_from_slice(&(((b << 16) | a) as u32).to_be_bytes());
    out
}

/// A PDF whose one page's content inflates to 1 GiB (from 6.6 MB on disk) is refused
/// before lopdf inflates it, instead of taking the process's memory.
#[tokio::test]
async fn a_decompression_bomb_is_refused_before_it_is_inflated() {
    let dir = tempfile::tempdir().unwrap();
    let spaces = 1 + 258 * 4_161_600; // just over 1 GiB
    let f = dir.path().join("bomb.pdf");
    fs::write(
        &f,
        pdf_of_contents(&[("/Filter /FlateDecode", zlib_of_spaces(spaces))]),
    )
    .unwrap();
    let err = fail(&Read, &ctx(dir.path()), json!({"file_path": f})).await;
    assert!(
        err.text.contains("inflate to over 256 MiB") && err.text.contains("pdftotext"),
        "{}",
        err.text
    );
    // The same bomb under twelve more zlib layers, as an object stream (inflated while the
    // file loads), or claiming to be an image (a page's content is inflated all the same).
    let mut layered = zlib_of_spaces(spaces);
    for _ in 0..12 {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, &layered).unwrap();
        layered = e.finish().unwrap();
    }
    let thirteen = vec!["/FlateDecode"; 13].join(" ");
    for (dict, stream) in [
        (format!("/Filter [{thirteen}]"), layered),
        (
            "/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode".to_owned(),
            zlib_of_spaces(spaces),
        ),
        (
            "/Subtype /Image /Filter /FlateDecode".to_owned(),
            zlib_of_spaces(spaces),
        ),
    ] {
        fs::write(&f, pdf_of_contents(&[(dict.as_str(), stream)])).unwrap();
        common::bump_mtime(&f);
        let err = fail(&Read, &ctx(dir.path()), json!({"file_path": f})).await;
        assert!(
            err.text.contains("inflate to over 256 MiB"),
            "{dict}: {}",
            err.text
        );
    }
    // Only the pages read count: a bomb on page 2 does not stop page 1.
    let text_page = "BT /F1 12 Tf 72 720 Td (First page) Tj ET"
        .as_bytes()
        .to_vec();
    fs::write(
        &f,
        pdf_of_contents(&[
            ("", text_page),
            ("/Filter /FlateDecode", zlib_of_spaces(spaces)),
        ]),
    )
    .unwrap();
    common::bump_mtime(&f);
    let first = text(
        &Read,
        &ctx(dir.path()),
        json!({"file_path": f, "pages": "1"}),
    )
    .await;
    assert!(first.contains("First page"), "{first}");
    let err = fail(
        &Read,
        &ctx(dir.path()),
        json!({"file_path": f, "pages": "2"}),
    )
    .await;
    assert!(err.text.contains("inflate to over 256 MiB"), "{}", err.text);
    // The same stream at 1 MiB is read: spaces, so no text.
    let one_mib = 1 + 258 * 4064;
    fs::write(
        &f,
        pdf_of_contents(&[("/Filter /FlateDecode", zlib_of_spaces(one_mib))]),
    )
    .unwrap();
    common::bump_mtime(&f);
    let out = text(&Read, &ctx(dir.path()), json!({"file_path": f})).await;
    assert!(out.contains("No text could be extracted"), "{out}");
}
