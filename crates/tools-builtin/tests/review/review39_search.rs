//! Glob and Grep, review 39: a search that found nothing because its glob names a
//! version-control directory (never searched), or repeats the searched directory's own
//! path (a glob is matched relative to `path`), says that, not that ignore files may have
//! skipped the files; a line break (or another control character) in a listed name is
//! written as an escape, so that one result never reads as two paths.

use std::fs;

use crate::common::{ctx, text};
use serde_json::json;
use tools_builtin::{Glob, Grep};

/// A file and a directory whose names hold a line break (and a carriage return, an escape)
/// are listed with those as escapes (`notes\nsrc/main.rs`), one line each, by Glob and by
/// Grep in every output mode, and the count in Grep's header agrees with the lines. Found
/// by review: `notes<LF>src/main.rs` read as two paths, `notes` and `src/main.rs`.
#[tokio::test]
async fn names_with_line_breaks_are_listed_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("notes\nsrc");
    fs::create_dir_all(&odd).unwrap();
    fs::write(odd.join("main.rs"), "needle\n").unwrap();
    fs::write(dir.path().join("a\rb\u{1b}[2J.rs"), "needle\n").unwrap();
    let c = ctx(dir.path());
    let out = text(&Glob, &c, json!({"pattern": "**/*.rs"})).await;
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        ["a\\rb\\u{1b}[2J.rs", "notes\\nsrc/main.rs"],
        "{out}"
    );
    let out = text(&Grep, &c, json!({"pattern": "needle"})).await;
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        ["Found 2 files", "a\\rb\\u{1b}[2J.rs", "notes\\nsrc/main.rs"],
        "{out}"
    );
    let out = text(
        &Grep,
        &c,
        json!({"pattern": "needle", "output_mode": "count"}),
    )
    .await;
    assert!(out.contains("notes\\nsrc/main.rs:1"), "{out}");
    assert!(out.contains("a\\rb\\u{1b}[2J.rs:1"), "{out}");
    let out = text(
        &Grep,
        &c,
        json!({"pattern": "needle", "output_mode": "content"}),
    )
    .await;
    assert!(out.contains("notes\\nsrc/main.rs:1:needle"), "{out}");
    assert!(!out.contains('\r') && !out.contains('\u{1b}'), "{out:?}");
    // A plain name is listed as it is.
    fs::write(dir.path().join("plain name.rs"), "needle\n").unwrap();
    let out = text(&Glob, &c, json!({"pattern": "plain*"})).await;
    assert_eq!(out, "plain name.rs");
}
