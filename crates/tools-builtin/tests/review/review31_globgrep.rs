//! Glob and Grep, review 31: a Grep `glob` that let no file through (its files all in an
//! ignored directory) says that no file was searched, and why that may be, instead of a
//! bare "No files found"; an empty part (`src//*.ts`) in a relative pattern or a Grep `glob`
//! is one `/`, as it is in a path.

use std::fs;
use std::path::Path;

use crate::common::{ctx, set_mtime, text};
use serde_json::json;
use tools_builtin::{Glob, Grep};

/// A repository (a `.git` directory) whose `.gitignore` ignores `node_modules`, holding
/// `node_modules/lodash/debounce.js` (with `debounce` in it) and `src/app.js` (without).
fn repo_with_ignored_dir(root: &Path) {
    fs::create_dir_all(root.join(".git")).unwrap();
    fs::write(root.join(".gitignore"), "node_modules\n").unwrap();
    fs::create_dir_all(root.join("node_modules/lodash")).unwrap();
    fs::write(
        root.join("node_modules/lodash/debounce.js"),
        "function debounce() {}\n",
    )
    .unwrap();
    fs::create_dir_all(root.join("src")).unwrap();
    fs::write(root.join("src/app.js"), "let app = 1;\n").unwrap();
}

/// The note a Grep whose `glob` let no file through ends with.
fn nothing_searched_note(glob: &str) -> String {
    format!(
        "\n\n[No file was searched: no file matched the glob `{glob}`. Files that .gitignore, \
         .ignore or .rgignore rules ignore are skipped; to search an ignored directory or \
         file, give it as `path` (with a glob relative to it, if any).]"
    )
}

/// A Grep whose `glob` names only files in a gitignored directory searched no file at all:
/// the result says so (ripgrep warns that no file was searched), that ignored files are
/// skipped and that the directory can be given as `path`, in every output mode, instead of
/// a bare "No files found" that reads as "no file holds it". The remedy it gives finds the
/// file. A search that searched some file, with or without a match, one whose globs only
/// exclude (`!*`), or one without a `glob` is unchanged.
#[tokio::test]
async fn a_grep_glob_that_let_no_file_through_says_nothing_was_searched() {
    let dir = tempfile::tempdir().unwrap();
    repo_with_ignored_dir(dir.path());
    let c = ctx(dir.path());
    for (glob, mode, found) in [
        ("node_modules/**", "files_with_matches", "No files found"),
        ("**/lodash/*.js", "content", "No matches found"),
        (
            "node_modules/**/*.js",
            "count",
            "No matches found\n\nFound 0 total occurrences across 0 files.",
        ),
    ] {
        let out = text(
            &Grep,
            &c,
            json!({"pattern": "debounce", "glob": glob, "output_mode": mode}),
        )
        .await;
        assert_eq!(
            out,
            format!("{found}{}", nothing_searched_note(glob)),
            "{glob} ({mode})"
        );
    }
    // The remedy it names: the ignored directory given as `path`.
    let out = text(
        &Grep,
        &c,
        json!({"pattern": "debounce", "path": "node_modules", "glob": "**/*.js"}),
    )
    .await;
    assert_eq!(out, "Found 1 file\nnode_modules/lodash/debounce.js");
    // A file was searched (without a match): no note, as ripgrep says nothing then.
    let out = text(
        &Grep,
        &c,
        json!({"pattern": "debounce", "glob": "src/*.js"}),
    )
    .await;
    assert_eq!(out, "No files found");
    // A glob that only excludes says itself what it left out: no note.
    let out = text(&Grep, &c, json!({"pattern": "debounce", "glob": "!*"})).await;
    assert_eq!(out, "No files found");
    // No `glob`: no note either.
    let out = text(&Grep, &c, json!({"pattern": "nowhere"})).await;
    assert_eq!(out, "No files found");
    // The absolute-glob note keeps its own words, not this one.
    let absolute = format!("{}/node_modules/**", dir.path().display());
    let out = text(&Grep, &c, json!({"pattern": "debounce", "glob": absolute})).await;
    assert!(
        out.contains("starts with /, which anchors it there"),
        "{out}"
    );
    assert!(!out.contains("no file matched the glob"), "{out}");
}

/// `src/a.ts`, `src/b.ts` (newest first) and `src/sub/c.ts`, each holding `foo`.
fn ts_tree(root: &Path) {
    for (path, secs) in [("src/a.ts", 30), ("src/b.ts", 20), ("src/sub/c.ts", 10)] {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, "foo\n").unwrap();
        set_mtime(&p, secs);
    }
}

/// An empty part in a relative Glob pattern (`src//a.ts`, `src//*.ts`) is one `/`, as in a
/// path and as in an absolute pattern: the pattern finds what it finds without it (it found
/// nothing, as no walked path has an empty part). So is one in a Grep `glob`, kept or
/// excluded, anchored or not, and one after a wildcard in an absolute pattern. A pattern
/// starting with `//` is still the absolute one it was.
#[tokio::test]
async fn empty_parts_in_patterns_are_one_slash() {
    let dir = tempfile::tempdir().unwrap();
    ts_tree(dir.path());
    let c = ctx(dir.path());
    let abs = dir.path().display().to_string();
    for (input, expected) in [
        (json!({"pattern": "src//a.ts"}), "src/a.ts"),
        (json!({"pattern": "src//*.ts"}), "src/a.ts\nsrc/b.ts"),
        (json!({"pattern": "src///*.ts"}), "src/a.ts\nsrc/b.ts"),
        (json!({"pattern": "src//sub//*.ts"}), "src/sub/c.ts"),
        (
            json!({"pattern": "src/**//*.ts"}),
            "src/a.ts\nsrc/b.ts\nsrc/sub/c.ts",
        ),
        (json!({"pattern": ".//src//a.ts"}), "src/a.ts"),
        (
            json!({"pattern": "sub//*.ts", "path": "src"}),
            "src/sub/c.ts",
        ),
        (
            json!({"pattern": format!("{abs}/src/*//c.ts")}),
            "src/sub/c.ts",
        ),
        (
            json!({"pattern": format!("/{abs}//src/*.ts")}),
            "src/a.ts\nsrc/b.ts",
        ),
    ] {
        assert_eq!(text(&Glob, &c, input.clone()).await, expected, "{input}");
    }
    for (glob, expected) in [
        ("src//*.ts", "Found 2 files\nsrc/a.ts\nsrc/b.ts"),
        ("/src//sub/*.ts", "Found 1 file\nsrc/sub/c.ts"),
        (
            "src//**//*.ts",
            "Found 3 files\nsrc/a.ts\nsrc/b.ts\nsrc/sub/c.ts",
        ),
        ("!src//sub/**", "Found 2 files\nsrc/a.ts\nsrc/b.ts"),
    ] {
        assert_eq!(
            text(&Grep, &c, json!({"pattern": "foo", "glob": glob})).await,
            expected,
            "{glob}"
        );
    }
}
