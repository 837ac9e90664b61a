//! Glob and Grep, review 25: `.` parts and a leading `~/` in patterns.

use std::fs;
use std::path::Path;

use crate::common::{ctx, set_mtime, text};
use serde_json::json;
use tool_core::{PermissionSubject, Tool, ToolUseContext};
use tools_builtin::{Glob, Grep};

/// `src/a.rs`, `src/b.rs` (newest first), `src/deep/c.rs` and `top.rs`, each holding `foo`.
fn tree(root: &Path) {
    for (path, secs) in [
        ("src/a.rs", 30),
        ("src/b.rs", 20),
        ("src/deep/c.rs", 10),
        ("top.rs", 5),
    ] {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, "foo\n").unwrap();
        set_mtime(&p, secs);
    }
}

/// A `.` part (a leading `./`, an inner `/./`) names the directory it stands in, as in a
/// shell: `./src/*.rs` finds what `src/*.rs` finds (it found nothing: no walked path
/// starts with `./`). Grep's `glob` filter reads them the same way.
#[tokio::test]
async fn dot_parts_in_patterns_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let c = ctx(dir.path());
    for (input, expected) in [
        (json!({"pattern": "./src/*.rs"}), "src/a.rs\nsrc/b.rs"),
        (json!({"pattern": "src/./*.rs"}), "src/a.rs\nsrc/b.rs"),
        (json!({"pattern": "././src/./*.rs"}), "src/a.rs\nsrc/b.rs"),
        (
            json!({"pattern": "./**/*.rs"}),
            "src/a.rs\nsrc/b.rs\nsrc/deep/c.rs\ntop.rs",
        ),
        (json!({"pattern": "./*"}), "top.rs"),
        (json!({"pattern": "./a.rs", "path": "src"}), "src/a.rs"),
        (
            json!({"pattern": "./deep/./c.rs", "path": "src"}),
            "src/deep/c.rs",
        ),
    ] {
        assert_eq!(text(&Glob, &c, input.clone()).await, expected, "{input}");
    }
    // An absolute pattern's glob part too.
    let abs = format!("{}/src/*/./c.rs", dir.path().display());
    assert_eq!(
        text(&Glob, &c, json!({"pattern": abs})).await,
        "src/deep/c.rs"
    );
    for (glob, expected) in [
        (
            "./src/**",
            "Found 3 files\nsrc/a.rs\nsrc/b.rs\nsrc/deep/c.rs",
        ),
        ("src/./deep/*.rs", "Found 1 file\nsrc/deep/c.rs"),
        ("!./src/**", "Found 1 file\ntop.rs"),
    ] {
        assert_eq!(
            text(&Grep, &c, json!({"pattern": "foo", "glob": glob})).await,
            expected,
            "{glob}"
        );
    }
}

/// A context whose home directory is `home`.
fn with_home(cwd: &Path, home: &Path) -> ToolUseContext {
    ToolUseContext::new(cwd).with_home(Some(home.to_path_buf()))
}

/// A pattern starting with `~/` is searched in the home directory, as a `path` of `~` is
/// (it searched a directory named `~` below the working directory), and the permission
/// check judges that directory: the pattern hooks and rules see is the expanded one, whose
/// subject is the home directory.
#[tokio::test]
async fn a_leading_tilde_in_the_pattern_is_the_home_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (home, proj) = (dir.path().join("home"), dir.path().join("proj"));
    fs::create_dir_all(home.join("notes")).unwrap();
    fs::create_dir_all(&proj).unwrap();
    fs::write(home.join("a.txt"), "").unwrap();
    fs::write(home.join("notes/b.txt"), "").unwrap();
    fs::write(proj.join("c.txt"), "").unwrap();
    let c = with_home(&proj, &home);
    let found = text(&Glob, &c, json!({"pattern": "~/*.txt"})).await;
    assert_eq!(found, home.join("a.txt").display().to_string());
    let found = text(&Glob, &c, json!({"pattern": "~/**/*.txt", "path": "."})).await;
    let mut found: Vec<&str> = found.lines().collect();
    found.sort_unstable();
    let expected = [home.join("a.txt"), home.join("notes/b.txt")];
    assert_eq!(found, expected.map(|p| p.display().to_string()));
    // What hooks and the permission rules see: the expanded pattern, judged as the
    // directory the search walks.
    let observed = Glob
        .observable_input(&json!({"pattern": "~/notes/*.txt"}), &c)
        .expect("the pattern is shown expanded");
    assert_eq!(
        observed["pattern"],
        json!(format!("{}/notes/*.txt", home.display()))
    );
    match Glob.permission_subject(&observed) {
        Some(PermissionSubject::Path { path, .. }) => assert_eq!(path, home.join("notes")),
        other => panic!("{other:?}"),
    }
    // `~` inside a name is a name.
    fs::create_dir_all(proj.join("x~")).unwrap();
    fs::write(proj.join("x~/d.txt"), "").unwrap();
    assert_eq!(
        text(&Glob, &c, json!({"pattern": "x~/*.txt"})).await,
        "x~/d.txt"
    );
}
