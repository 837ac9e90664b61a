//! Glob and Grep, review 39: a search that found nothing because its glob names a
//! version-control directory (never searched), or repeats the searched directory's own
//! path (a glob is matched relative to `path`), says that, not that ignore files may have
//! skipped the files; a line break (or another control character) in a listed name is
//! written as an escape, so that one result never reads as two paths.

use std::fs;
use std::path::Path;

use crate::common::{ctx, text};
use serde_json::json;
use tools_builtin::{Glob, Grep};

/// A repository without any ignore file: `src/sub/b.py` and `.git/needle.txt`, both with
/// `needle` in them.
fn repo_without_ignore_files(root: &Path) {
    fs::create_dir_all(root.join(".git")).unwrap();
    fs::write(root.join(".git/needle.txt"), "needle\n").unwrap();
    fs::create_dir_all(root.join("src/sub")).unwrap();
    fs::write(root.join("src/sub/b.py"), "needle\n").unwrap();
}

/// A Grep whose glob names `.git` says that `.git` is never searched and can be given as
/// `path`; one whose glob repeats `path` (`src/sub/*.py` in `src`) says that the glob is
/// matched relative to `path` and gives the glob that is (`sub/*.py`). Neither talks of
/// ignore files, of which the tree has none. Found by review: both said "Files that
/// .gitignore, .ignore or .rgignore rules ignore are skipped". The remedies each note gives
/// find the file.
#[tokio::test]
async fn grep_says_why_a_glob_let_no_file_through() {
    let dir = tempfile::tempdir().unwrap();
    repo_without_ignore_files(dir.path());
    let c = ctx(dir.path());
    for mode in ["files_with_matches", "content", "count"] {
        let out = text(
            &Grep,
            &c,
            json!({"pattern": "needle", "glob": ".git/*", "output_mode": mode}),
        )
        .await;
        assert!(!out.contains("gitignore"), "{mode}: {out}");
        assert!(
            out.contains(
                "[No file was searched: the glob `.git/*` names a path in .git, a \
                 version-control directory, which is never searched; to search it, give it \
                 as `path`.]"
            ),
            "{mode}: {out}"
        );
        let out = text(
            &Grep,
            &c,
            json!({"pattern": "needle", "path": "src", "glob": "src/sub/*.py", "output_mode": mode}),
        )
        .await;
        assert!(!out.contains("gitignore"), "{mode}: {out}");
        assert!(
            out.contains(
                "[No file was searched: a glob is matched against paths relative to `path` \
                 (src), and the glob `src/sub/*.py` repeats it; give it relative to `path`: \
                 `sub/*.py`.]"
            ),
            "{mode}: {out}"
        );
    }
    // What the notes advise finds the files.
    let out = text(&Grep, &c, json!({"pattern": "needle", "path": ".git"})).await;
    assert!(out.contains("needle.txt"), "{out}");
    let out = text(
        &Grep,
        &c,
        json!({"pattern": "needle", "path": "src", "glob": "sub/*.py"}),
    )
    .await;
    assert!(out.contains("src/sub/b.py"), "{out}");
    // Other VCS directories, at any depth, in a list of globs.
    let out = text(
        &Grep,
        &c,
        json!({"pattern": "needle", "glob": "*.md,**/.hg/**"}),
    )
    .await;
    assert!(
        out.contains("the glob `**/.hg/**` names a path in .hg"),
        "{out}"
    );
    // A glob that repeats `path` where the repetition exists below it (`src/src/...`) is
    // matched there: no note of a repetition.
    fs::create_dir_all(dir.path().join("src/src/sub")).unwrap();
    let out = text(
        &Grep,
        &c,
        json!({"pattern": "needle", "path": "src", "glob": "src/sub/*.py"}),
    )
    .await;
    assert!(!out.contains("repeats it"), "{out}");
    assert!(
        out.contains("no file matched the glob `src/sub/*.py`"),
        "{out}"
    );
}

/// A Glob whose pattern repeats `path` (`src/sub/*.py` in `src`) says that the pattern is
/// matched relative to `path`, with the pattern that is; one that names `.git` says it is
/// never searched. Found by review: both answered a bare "No files found".
#[tokio::test]
async fn glob_says_why_a_pattern_found_nothing() {
    let dir = tempfile::tempdir().unwrap();
    repo_without_ignore_files(dir.path());
    let c = ctx(dir.path());
    let out = text(&Glob, &c, json!({"pattern": "src/sub/*.py", "path": "src"})).await;
    assert_eq!(
        out,
        "No files found\n(A pattern is matched against paths relative to `path` (src), and \
         the pattern `src/sub/*.py` repeats it; give it relative to `path`: `sub/*.py`.)"
    );
    let out = text(&Glob, &c, json!({"pattern": "sub/*.py", "path": "src"})).await;
    assert_eq!(out, "src/sub/b.py");
    let out = text(&Glob, &c, json!({"pattern": ".git/*"})).await;
    assert_eq!(
        out,
        "No files found\n(The pattern `.git/*` names a path in .git, a version-control \
         directory, which is never searched; to search it, give it as `path`.)"
    );
    let out = text(&Glob, &c, json!({"pattern": "*", "path": ".git"})).await;
    assert_eq!(out, ".git/needle.txt");
    // A pattern that matched nothing for no reason its text gives stays bare.
    let out = text(&Glob, &c, json!({"pattern": "*.go"})).await;
    assert_eq!(out, "No files found");
}

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
