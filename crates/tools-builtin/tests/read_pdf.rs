//! Read on PDFs: page text through lopdf, the `pages` parameter and its limits.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;

use common::{ctx, fail, run, text};
use serde_json::json;
use tools_builtin::Read;

/// A minimal, valid PDF with one Helvetica text line per page.
fn make_pdf(pages: &[String]) -> Vec<u8> {
    let n = pages.len();
    // Objects: 1 catalog, 2 pages, 3 font, then per page: page object, content stream.
    let mut objects: Vec<String> = Vec::new();
    objects.push("<< /Type /Catalog /Pages 2 0 R >>".to_owned());
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    objects.push(format!(
        "<< /Type /Pages /Kids [{}] /Count {n} >>",
        kids.join(" ")
    ));
    objects.push(
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_owned(),
    );
    for (i, line) in pages.iter().enumerate() {
        objects.push(format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
            5 + 2 * i
        ));
        let stream = format!("BT /F1 12 Tf 72 720 Td ({line}) Tj ET");
        objects.push(format!(
            "<< /Length {} >>\nstream\n{stream}\nendstream",
            stream.len()
        ));
    }
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, obj) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{obj}\nendobj\n", i + 1).as_bytes());
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
}
