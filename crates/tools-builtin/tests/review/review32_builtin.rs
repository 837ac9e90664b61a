//! Review 32, built-in tools: a Grep `type` that matches no file (an unknown type name, or a
//! known type with no file of it under the path) says so instead of a bare "No files
//! found"; a skill's description with control characters (escape sequences, NUL, BEL, C1
//! controls) no longer carries them into the listing the model reads. Real files in
//! temporary directories, called as the pipeline calls the tools.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::common::{ctx, fail, text};
use serde_json::json;
use tool_core::{Tool, ToolUseContext};
use tools_builtin::skill::skills_listing;
use tools_builtin::{Grep, Skill};

// ----- Grep's `type` -----

/// An unknown `type` (`rustt`, `Rust`, `rs`) is an input error that names the type, says
/// it is unrecognized (ripgrep's `unrecognized file type: rustt`), suggests the type meant
/// (by spelling, by case, by extension) and says what the known types look like: it said
/// only "unrecognized file type", with nothing to go on.
#[tokio::test]
async fn an_unknown_grep_type_is_refused_with_what_the_types_are() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.rs"), "needle\n").unwrap();
    let c = ctx(dir.path());
    for (given, meant) in [
        ("rustt", "rust"),
        ("Rust", "rust"),
        ("rs", "rust"),
        ("pyy", "py"),
    ] {
        let e = fail(&Grep, &c, json!({"pattern": "needle", "type": given})).await;
        assert!(
            e.text.contains(&format!(
                "Invalid file type `{given}`: unrecognized file type"
            )),
            "{given}: {}",
            e.text
        );
        assert!(
            e.text.contains(&format!("Did you mean `{meant}`")),
            "{given}: {}",
            e.text
        );
        // What the known types look like, and how to list them.
        assert!(
            e.text.contains("rg --type-list") && e.text.contains("js, ts, py, rust"),
            "{given}: {}",
            e.text
        );
        assert!(e.text.contains("glob"), "{given}: {}", e.text);
    }
    // A name nothing is close to gets no suggestion, only what the types look like.
    let e = fail(&Grep, &c, json!({"pattern": "needle", "type": "qqqqqqqq"})).await;
    assert!(!e.text.contains("Did you mean"), "{}", e.text);
    assert!(e.text.contains("rg --type-list"), "{}", e.text);
    // The long refusal of a huge type stays bounded (review 27's rule).
    let long = "t".repeat(30_000);
    let e = fail(&Grep, &c, json!({"pattern": "x", "type": long})).await;
    assert!(e.text.chars().count() < 2_000, "{}", e.text.len());
}

/// The note a Grep whose known `type` found no file of it ends with.
fn no_file_of_type_note(what: &str) -> String {
    format!(
        "\n\n[No file was searched: {what}. Files that .gitignore, .ignore or .rgignore \
         rules ignore are skipped; to search an ignored directory or file, give it as `path`.]"
    )
}

/// A known `type` with no file of it under the path searched no file at all: the result
/// says so, naming the type and its globs, in every output mode (it was a bare "No files
/// found", which reads as "no such file holds it"). With a `glob` too, the note names both.
/// A type whose files were searched without a match says nothing more; a named file is
/// searched whatever its type (as ripgrep does).
#[tokio::test]
async fn a_known_grep_type_without_files_says_nothing_was_searched() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("notes.txt"), "needle\n").unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("src/lib.py"), "nothing here\n").unwrap();
    let c = ctx(dir.path());
    let none = "no file of type `rust` (*.rs) was found";
    for (mode, found) in [
        ("files_with_matches", "No files found"),
        ("content", "No matches found"),
        (
            "count",
            "No matches found\n\nFound 0 total occurrences across 0 files.",
        ),
    ] {
        let out = text(
            &Grep,
            &c,
            json!({"pattern": "needle", "type": "rust", "output_mode": mode}),
        )
        .await;
        assert_eq!(
            out,
            format!("{found}{}", no_file_of_type_note(none)),
            "{mode}"
        );
    }
    // With a glob that picks files, none of which is there: one note that names both.
    let out = text(
        &Grep,
        &c,
        json!({"pattern": "needle", "type": "rust", "glob": "docs/**"}),
    )
    .await;
    assert_eq!(
        out,
        format!(
            "No files found{}",
            no_file_of_type_note("no file of type `rust` (*.rs) matched the glob `docs/**`")
        )
    );
    // A file the glob picks is searched whatever its type (ripgrep's globs win over its
    // types): no note.
    let out = text(
        &Grep,
        &c,
        json!({"pattern": "needle", "type": "rust", "glob": "src/**"}),
    )
    .await;
    assert_eq!(out, "No files found");
    // A type of several globs names the first few.
    let out = text(&Grep, &c, json!({"pattern": "needle", "type": "js"})).await;
    assert_eq!(
        out,
        format!(
            "No files found{}",
            no_file_of_type_note(
                "no file of type `js` (*.cjs, *.js, *.jsx, *.mjs, *.vue) was found"
            )
        )
    );
    // Files of the type were searched, without a match: no note.
    let out = text(&Grep, &c, json!({"pattern": "needle", "type": "py"})).await;
    assert_eq!(out, "No files found");
    // A file of the type with a match is found.
    let out = text(&Grep, &c, json!({"pattern": "nothing", "type": "py"})).await;
    assert_eq!(out, "Found 1 file\nsrc/lib.py");
    // A named file is searched whatever its type.
    let out = text(
        &Grep,
        &c,
        json!({"pattern": "needle", "type": "rust", "path": "notes.txt"}),
    )
    .await;
    assert_eq!(out, "Found 1 file\nnotes.txt");
    // Without a type, unchanged.
    let out = text(&Grep, &c, json!({"pattern": "absent"})).await;
    assert_eq!(out, "No files found");
}

// ----- Skill descriptions with control characters -----

fn write_skill(project: &Path, name: &str, text: &str) {
    let dir = project.join(".claude/skills").join(name);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("SKILL.md"), text).unwrap();
}

/// A project (a git repository) with the Skill tool and an empty home.
fn skill_ctx(root: &Path) -> (PathBuf, ToolUseContext) {
    let root = fs::canonicalize(root).unwrap();
    let project = root.join("project");
    fs::create_dir_all(project.join(".git")).unwrap();
    fs::create_dir_all(root.join("home")).unwrap();
    let ctx = ctx(&project)
        .with_home(Some(root.join("home")))
        .with_tools(vec![Arc::new(Skill) as Arc<dyn Tool>])
        .with_session_id("sess-32");
    (project, ctx)
}

/// A skill's `description` (and `when_to_use`, and the body's first line for a skill
/// without a description) with control characters written into the file (an ANSI escape
/// sequence, NUL, BEL, a C1 CSI, DEL, a file separator) reaches the listing the model
/// reads with each such character shown as a visible escape (`\u{1b}`), never as itself:
/// they were carried in raw. Line breaks, tabs, carriage returns and the other whitespace
/// controls are folded into one space, as a multi-line description always was.
#[test]
fn control_characters_of_a_skill_description_do_not_reach_the_listing() {
    let tmp = tempfile::tempdir().unwrap();
    let (project, ctx) = skill_ctx(tmp.path());
    write_skill(
        &project,
        "colour",
        "---\ndescription: \u{1b}[31mRED\u{1b}[0m and\u{0} nul\u{7}\n---\nBody.\n",
    );
    write_skill(
        &project,
        "c1",
        "---\ndescription: csi\u{9b}2J del\u{7f} fs\u{1c}\nwhen_to_use: when\u{1b}]0;title\u{7}\n---\nBody.\n",
    );
    write_skill(
        &project,
        "spaces",
        "---\ndescription: \"one\\ttwo\\r\\nthree\"\n---\nBody.\n",
    );
    write_skill(&project, "cr", "---\ndescription: back\rover\n---\nBody.\n");
    write_skill(&project, "bodyline", "# Title\u{1b}[2J here\n\nmore\n");
    write_skill(
        &project,
        "quoted",
        "---\ndescription: \"zero\\0end\"\n---\nx\n",
    );

    let listing = skills_listing(&ctx).expect("a listing");
    assert!(
        !listing.chars().any(|c| c != '\n' && c.is_control()),
        "a control character reached the listing: {listing:?}"
    );
    for line in [
        r"- colour: \u{1b}[31mRED\u{1b}[0m and\u{0} nul\u{7}",
        r"- c1: csi\u{9b}2J del\u{7f} fs\u{1c} - when\u{1b}]0;title\u{7}",
        "- spaces: one two three",
        "- cr: back over",
        r"- bodyline: Title\u{1b}[2J here",
        r"- quoted: zero\u{0}end",
    ] {
        assert!(
            listing.lines().any(|l| l == line),
            "no line {line:?} in:\n{listing}"
        );
    }
    // Every line the listing has is a skill's or its header's.
    for l in listing.lines().skip(2) {
        assert!(l.starts_with("- "), "{l:?}\n{listing}");
    }
}
