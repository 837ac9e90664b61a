//! Glob and Grep: ripgrep semantics and Claude Code's output texts.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::path::Path;

use common::{assert_rerun_passed, ctx, fail, rerun_test, run, set_mtime, text};
use serde_json::json;
use tools_builtin::{Glob, Grep};

fn tree(root: &Path) {
    let files = [
        (
            "src/main.rs",
            "fn main() {\n    println!(\"Hello\");\n}\n",
            30,
        ),
        (
            "src/lib.rs",
            "pub fn hello() {}\n// TODO: more\nfn other() {}\n",
            20,
        ),
        ("README.md", "# hello world\nTODO list\n", 10),
        (".hidden/conf.rs", "fn hidden_hello() {}\n", 5),
        ("target/gen.rs", "fn generated_hello() {}\n", 40),
        (".git/config", "hello from git\n", 50),
    ];
    for (path, body, secs) in files {
        let p = root.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, body).unwrap();
        set_mtime(&p, secs);
    }
    fs::write(root.join(".gitignore"), "target/\n").unwrap();
    set_mtime(&root.join(".gitignore"), 1);
}

#[tokio::test]
async fn glob_matches_like_rg_newest_first_hidden_included_gitignore_not_honoured() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let c = ctx(dir.path());
    // A pattern without a slash matches at any depth (ripgrep --glob semantics).
    assert_eq!(
        text(&Glob, &c, json!({"pattern": "*.rs"})).await,
        "target/gen.rs\nsrc/main.rs\nsrc/lib.rs\n.hidden/conf.rs"
    );
    assert_eq!(
        text(&Glob, &c, json!({"pattern": "src/**/*.rs"})).await,
        "src/main.rs\nsrc/lib.rs"
    );
    assert_eq!(
        text(&Glob, &c, json!({"pattern": "*.rs", "path": "src"})).await,
        "src/main.rs\nsrc/lib.rs"
    );
    let abs = format!("{}/src/*.rs", dir.path().display());
    assert_eq!(
        text(&Glob, &c, json!({"pattern": abs})).await,
        "src/main.rs\nsrc/lib.rs"
    );
    assert_eq!(
        text(&Glob, &c, json!({"pattern": "*.nothing"})).await,
        "No files found"
    );
    let out = run(&Glob, &c, json!({"pattern": "*.md"})).await.unwrap();
    assert_eq!(out.structured["filenames"], json!(["README.md"]));
    assert_eq!(out.structured["numFiles"], 1);
    assert_eq!(out.structured["truncated"], false);
}

#[tokio::test]
async fn glob_caps_at_100_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..120 {
        let p = dir.path().join(format!("f{i:03}.txt"));
        fs::write(&p, "x").unwrap();
        set_mtime(&p, i);
    }
    let c = ctx(dir.path());
    let out = text(&Glob, &c, json!({"pattern": "*.txt"})).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[0], "f119.txt");
    assert_eq!(lines[99], "f020.txt");
    assert_eq!(lines[100], tools_builtin::glob::TRUNCATED_NOTE);
}

#[tokio::test]
async fn glob_bad_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    assert!(
        fail(&Glob, &c, json!({"pattern": "a[", "path": dir.path()}))
            .await
            .text
            .contains("Invalid glob pattern `a[`")
    );
    let e = fail(
        &Glob,
        &c,
        json!({"pattern": "*", "path": dir.path().join("nope")}),
    )
    .await;
    assert_eq!(e.code, Some(1));
    assert!(e.text.contains("Directory does not exist"));
    fs::write(dir.path().join("plain"), "x").unwrap();
    let e = fail(
        &Glob,
        &c,
        json!({"pattern": "*", "path": dir.path().join("plain/below")}),
    )
    .await;
    assert!(e.text.contains("Not a directory"), "{}", e.text);
    fs::write(dir.path().join("f"), "").unwrap();
    assert_eq!(
        fail(
            &Glob,
            &c,
            json!({"pattern": "*", "path": dir.path().join("f")})
        )
        .await
        .code,
        Some(2)
    );
    assert!(
        fail(&Glob, &c, json!({"pattern": "a\u{0}b"}))
            .await
            .text
            .contains("null")
    );
}

#[tokio::test]
async fn grep_files_with_matches_honours_gitignore_and_skips_vcs() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let c = ctx(dir.path());
    // Newest first; target/ is gitignored (a .git dir makes it a repository); .git is skipped;
    // hidden files are searched.
    assert_eq!(
        text(&Grep, &c, json!({"pattern": "hello", "-i": true})).await,
        "Found 4 files\nsrc/main.rs\nsrc/lib.rs\nREADME.md\n.hidden/conf.rs"
    );
    assert_eq!(
        text(&Grep, &c, json!({"pattern": "hello"})).await,
        "Found 3 files\nsrc/lib.rs\nREADME.md\n.hidden/conf.rs"
    );
    assert_eq!(
        text(&Grep, &c, json!({"pattern": "hello", "glob": "*.md"})).await,
        "Found 1 file\nREADME.md"
    );
    assert_eq!(
        text(
            &Grep,
            &c,
            json!({"pattern": "hello", "type": "rust", "path": "src"})
        )
        .await,
        "Found 1 file\nsrc/lib.rs"
    );
    assert_eq!(
        text(&Grep, &c, json!({"pattern": "nomatch"})).await,
        "No files found"
    );
}

#[tokio::test]
async fn grep_content_mode_prints_like_rg() {
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    let c = ctx(dir.path());
    assert_eq!(
        text(
            &Grep,
            &c,
            json!({"pattern": "TODO", "output_mode": "content"})
        )
        .await,
        "README.md:2:TODO list\nsrc/lib.rs:2:// TODO: more"
    );
    assert_eq!(
        text(
            &Grep,
            &c,
            json!({"pattern": "TODO", "output_mode": "content", "-n": false})
        )
        .await,
        "README.md:TODO list\nsrc/lib.rs:// TODO: more"
    );
    assert_eq!(
        text(
            &Grep,
            &c,
            json!({"pattern": "TODO", "output_mode": "content", "-C": 1})
        )
        .await,
        "README.md-1-# hello world\nREADME.md:2:TODO list\n--\nsrc/lib.rs-1-pub fn hello() {}\nsrc/lib.rs:2:// TODO: more\nsrc/lib.rs-3-fn other() {}"
    );
    assert_eq!(
        text(
            &Grep,
            &c,
            json!({"pattern": "T.DO", "output_mode": "content", "-o": true, "path": "README.md"})
        )
        .await,
        "2:TODO"
    );
    assert_eq!(
        text(&Grep, &c, json!({"pattern": "main\\(\\) \\{.*Hello", "output_mode": "content", "multiline": true, "path": "src"})).await,
        "src/main.rs:1:fn main() {\nsrc/main.rs:2:    println!(\"Hello\");"
    );
    assert_eq!(
        text(
            &Grep,
            &c,
            json!({"pattern": "zzz", "output_mode": "content"})
        )
        .await,
        "No matches found"
    );
}

#[tokio::test]
async fn grep_count_and_pagination() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..5 {
        fs::write(dir.path().join(format!("f{i}.txt")), "hit\nhit\nmiss\n").unwrap();
    }
    let c = ctx(dir.path());
    assert_eq!(
        text(
            &Grep,
            &c,
            json!({"pattern": "hit", "output_mode": "count", "head_limit": 2})
        )
        .await,
        "f0.txt:2\nf1.txt:2\n\nFound 4 total occurrences across 2 files. with pagination = limit: 2"
    );
    assert_eq!(
        text(
            &Grep,
            &c,
            json!({"pattern": "hit", "output_mode": "content", "head_limit": 3, "offset": 1})
        )
        .await,
        "f0.txt:2:hit\nf1.txt:1:hit\nf1.txt:2:hit\n\n[Showing results with pagination = limit: 3, offset: 1]"
    );
    assert_eq!(
        text(&Grep, &c, json!({"pattern": "hit", "offset": 9})).await,
        "No entries at this offset"
    );
    let out = text(&Grep, &c, json!({"pattern": "hit", "head_limit": 0})).await;
    assert!(out.starts_with("Found 5 files\n"), "{out}");
}

#[tokio::test]
async fn grep_bad_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let e = fail(&Grep, &c, json!({"pattern": "fn (", "path": dir.path()})).await;
    assert!(
        e.text.contains("Invalid regex pattern `fn (`"),
        "{}",
        e.text
    );
    assert!(
        fail(&Grep, &c, json!({"pattern": "x", "type": "nosuchtype"}))
            .await
            .text
            .contains("nosuchtype")
    );
    assert!(
        fail(
            &Grep,
            &c,
            json!({"pattern": "x", "glob": "a[", "path": dir.path()})
        )
        .await
        .text
        .contains("Invalid glob")
    );
    assert!(
        fail(&Grep, &c, json!({"pattern": "x", "path": "missing"}))
            .await
            .text
            .contains("does not exist")
    );
    assert!(
        fail(&Grep, &c, json!({"pattern": "x", "output_mode": "lines"}))
            .await
            .text
            .contains("InputValidationError")
    );
    // A FIFO (or a device) is refused, not read until it ends: nothing ever writes to this
    // one, so searching it would block forever.
    let fifo = dir.path().join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for path in [fifo.as_path(), Path::new("/dev/zero")] {
        let e = fail(&Grep, &c, json!({"pattern": "x", "path": path})).await;
        assert!(
            e.text.contains("not a regular file or a directory"),
            "{}",
            e.text
        );
    }
    // A path that cannot be inspected says why, instead of "does not exist".
    fs::write(dir.path().join("plain"), "x").unwrap();
    let e = fail(
        &Grep,
        &c,
        json!({"pattern": "x", "path": dir.path().join("plain/below")}),
    )
    .await;
    assert!(e.text.contains("Not a directory"), "{}", e.text);
}

#[tokio::test]
async fn read_deny_rules_hold_for_searches_of_the_whole_tree() {
    use tool_core::{RuleSource, SourcedRule, ToolPermissionContext};
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    fs::create_dir_all(dir.path().join("secrets/deep")).unwrap();
    fs::write(
        dir.path().join("secrets/deep/key.rs"),
        "fn hello_key() {}\n",
    )
    .unwrap();
    fs::write(dir.path().join(".env"), "hello=token\n").unwrap();
    let deny = |rules: &[&str]| {
        ctx(dir.path()).with_permission(ToolPermissionContext {
            deny: rules
                .iter()
                .map(|r| SourcedRule {
                    source: RuleSource::ProjectSettings,
                    rule: (*r).to_owned(),
                })
                .collect(),
            ..Default::default()
        })
    };
    let open = ctx(dir.path());
    let all = text(&Grep, &open, json!({"pattern": "hello", "-i": true})).await;
    assert!(
        all.contains("secrets/deep/key.rs") && all.contains(".env"),
        "{all}"
    );

    let c = deny(&["Read(./secrets/**)", "Read(./.env)"]);
    let found = text(&Grep, &c, json!({"pattern": "hello", "-i": true})).await;
    assert!(
        !found.contains("secrets") && !found.contains(".env"),
        "{found}"
    );
    assert!(found.contains("src/main.rs"), "{found}");
    let content = text(
        &Grep,
        &c,
        json!({"pattern": "hello", "-i": true, "output_mode": "content"}),
    )
    .await;
    assert!(
        !content.contains("hello_key") && !content.contains("token"),
        "{content}"
    );
    let listed = text(&Glob, &c, json!({"pattern": "**/*"})).await;
    assert!(
        !listed.contains("secrets") && !listed.contains(".env"),
        "{listed}"
    );
    assert!(listed.contains("src/lib.rs"), "{listed}");
    // A rule on the directory itself hides what is under it.
    let c = deny(&["Read(./secrets)"]);
    let listed = text(&Glob, &c, json!({"pattern": "**/*.rs"})).await;
    assert!(!listed.contains("secrets"), "{listed}");
}

/// Files an ask rule covers are not read unasked by a search of their directory: Grep
/// leaves them out and says which (a Read of one then asks), in every output mode. Glob,
/// which reads no content, still lists them.
#[tokio::test]
async fn read_ask_rules_keep_files_out_of_searches_and_say_so() {
    use tool_core::{RuleSource, SourcedRule, ToolPermissionContext};
    let dir = tempfile::tempdir().unwrap();
    tree(dir.path());
    fs::create_dir_all(dir.path().join("secrets/deep")).unwrap();
    fs::write(
        dir.path().join("secrets/deep/key.rs"),
        "fn hello_key() {}\n",
    )
    .unwrap();
    fs::write(dir.path().join(".env"), "hello=token\n").unwrap();
    let c = ctx(dir.path()).with_permission(ToolPermissionContext {
        ask: ["Read(./secrets/**)", "Read(.env)"]
            .iter()
            .map(|r| SourcedRule {
                source: RuleSource::ProjectSettings,
                rule: (*r).to_owned(),
            })
            .collect(),
        ..Default::default()
    });
    let note = "[Not searched, as an ask rule covers them: .env, secrets]";
    for mode in ["files_with_matches", "content", "count"] {
        let found = text(
            &Grep,
            &c,
            json!({"pattern": "hello", "-i": true, "output_mode": mode}),
        )
        .await;
        assert!(
            !found.contains("hello_key") && !found.contains("token") && !found.contains("key.rs"),
            "{mode}: {found}"
        );
        assert!(found.ends_with(note), "{mode}: {found}");
    }
    let out = run(&Grep, &c, json!({"pattern": "hello"})).await.unwrap();
    assert_eq!(out.structured["notSearched"], json!([".env", "secrets"]));
    assert_eq!(out.structured["notSearchedCount"], 2);
    // Without the rules nothing is said.
    let open = text(
        &Grep,
        &ctx(dir.path()),
        json!({"pattern": "hello", "-i": true}),
    )
    .await;
    assert!(
        open.contains(".env") && !open.contains("Not searched"),
        "{open}"
    );
    let listed = text(&Glob, &c, json!({"pattern": "**/*"})).await;
    assert!(
        listed.contains(".env") && listed.contains("key.rs"),
        "{listed}"
    );
    // A search of the directory the rule covers was asked about itself (and allowed, to get
    // here): what the rule covers inside it is searched.
    let inside = text(
        &Grep,
        &c,
        json!({"pattern": "hello", "path": dir.path().join("secrets"), "output_mode": "content"}),
    )
    .await;
    assert!(
        inside.contains("hello_key") && !inside.contains("Not searched"),
        "{inside}"
    );
    // Many paths kept out: the count says how many, the list the first 20 in order.
    let many = dir.path().join("many");
    fs::create_dir(&many).unwrap();
    for i in 0..70 {
        fs::write(many.join(format!("s{i:02}.key")), "hello\n").unwrap();
    }
    let c = ctx(dir.path()).with_permission(ToolPermissionContext {
        ask: vec![SourcedRule {
            source: RuleSource::ProjectSettings,
            rule: "Read(**/*.key)".to_owned(),
        }],
        ..Default::default()
    });
    let out = run(&Grep, &c, json!({"pattern": "hello", "path": &many}))
        .await
        .unwrap();
    assert_eq!(out.structured["notSearchedCount"], 70);
    let listed: Vec<String> = (0..20).map(|i| format!("many/s{i:02}.key")).collect();
    assert_eq!(out.structured["notSearched"], json!(listed));
    // A rule over the working directory itself: a search of it was asked about it, with a
    // `path` naming it or without one (the cwd is then its subject), and the user said yes:
    // what the rule covers is searched.
    let c = ctx(dir.path()).with_permission(ToolPermissionContext {
        ask: vec![SourcedRule {
            source: RuleSource::ProjectSettings,
            rule: format!("Read(/{})", dir.path().display()),
        }],
        ..Default::default()
    });
    for input in [
        json!({"pattern": "hello", "output_mode": "content"}),
        json!({"pattern": "hello", "output_mode": "content", "path": ""}),
        json!({"pattern": "hello", "path": dir.path(), "output_mode": "content"}),
    ] {
        let searched = text(&Grep, &c, input).await;
        assert!(
            searched.contains("hello_key") && !searched.contains("Not searched"),
            "{searched}"
        );
    }
}

// ----- review findings -----
// ----- review findings -----

/// Content and count modes name no files in the structured output (Claude Code's shape:
/// `numFiles: 0, filenames: []` in content mode, `filenames: []` in count mode): it goes to
/// PostToolUse hooks as `tool_response`, and a search matching everywhere must not send
/// every path there. Count mode's `numFiles` is the total its summary line reports.
#[tokio::test]
async fn grep_structured_output_names_only_the_page_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..40 {
        fs::write(dir.path().join(format!("f{i:02}.txt")), "hit\nhit\n").unwrap();
    }
    let c = ctx(dir.path());
    let out = run(
        &Grep,
        &c,
        json!({"pattern": "hit", "output_mode": "content", "head_limit": 3}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["numFiles"], 0, "{}", out.structured);
    assert_eq!(out.structured["filenames"], json!([]), "{}", out.structured);
    assert_eq!(out.structured["numLines"], 3);

    let out = run(
        &Grep,
        &c,
        json!({"pattern": "hit", "output_mode": "count", "head_limit": 3}),
    )
    .await
    .unwrap();
    assert_eq!(out.structured["filenames"], json!([]), "{}", out.structured);
    assert_eq!(out.structured["numFiles"], 3);
    assert_eq!(out.structured["numMatches"], 6);
    assert!(
        out.content
            .joined_text()
            .ends_with("Found 6 total occurrences across 3 files. with pagination = limit: 3"),
        "{}",
        out.content.joined_text()
    );

    let out = run(&Grep, &c, json!({"pattern": "hit", "head_limit": 3}))
        .await
        .unwrap();
    assert_eq!(out.structured["numFiles"], 3);
    assert_eq!(out.structured["filenames"].as_array().unwrap().len(), 3);
}

/// An offset past the end says `No entries at this offset`; count mode still appends the
/// total of its page, which is empty: Claude Code sums the lines it shows ("Found 178 total
/// occurrences across 5 files. with pagination = limit: 5", with 16+1+60+19+82 above it).
#[tokio::test]
async fn grep_count_offset_past_the_end_totals_the_empty_page() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..5 {
        fs::write(dir.path().join(format!("f{i}.txt")), "hit\nhit\nmiss\n").unwrap();
    }
    let c = ctx(dir.path());
    assert_eq!(
        text(
            &Grep,
            &c,
            json!({"pattern": "hit", "output_mode": "count", "offset": 9})
        )
        .await,
        "No entries at this offset\n\nFound 0 total occurrences across 0 files. with pagination = offset: 9"
    );
    for mode in ["content", "files_with_matches"] {
        assert_eq!(
            text(
                &Grep,
                &c,
                json!({"pattern": "hit", "output_mode": mode, "offset": 50})
            )
            .await,
            "No entries at this offset",
            "{mode}"
        );
    }
}

/// ripgrep reads `.rgignore` as it reads `.ignore` and `.gitignore`.
#[tokio::test]
async fn grep_honours_rgignore() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("gen")).unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(dir.path().join("gen/out.rs"), "needle\n").unwrap();
    fs::write(dir.path().join("src/lib.rs"), "needle\n").unwrap();
    fs::write(dir.path().join("src/skip.rs"), "needle\n").unwrap();
    fs::write(dir.path().join(".rgignore"), "gen/\n").unwrap();
    fs::write(dir.path().join("src/.rgignore"), "skip.rs\n").unwrap();
    let c = ctx(dir.path());
    assert_eq!(
        text(&Grep, &c, json!({"pattern": "needle"})).await,
        "Found 1 file\nsrc/lib.rs"
    );
    // Glob does not honour ignore files by default (CLAUDE_CODE_GLOB_NO_IGNORE).
    let mut listed: Vec<String> = text(&Glob, &c, json!({"pattern": "**/*.rs"}))
        .await
        .lines()
        .map(str::to_owned)
        .collect();
    listed.sort();
    assert_eq!(listed, ["gen/out.rs", "src/lib.rs", "src/skip.rs"]);
}

/// A NUL byte is refused in each of Grep's string fields, naming the field.
#[tokio::test]
async fn grep_refuses_null_bytes_in_every_path_like_field() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "x\n").unwrap();
    let c = ctx(dir.path());
    for (field, input) in [
        ("pattern", json!({"pattern": "x\u{0}"})),
        ("path", json!({"pattern": "x", "path": "a.txt\u{0}"})),
        ("glob", json!({"pattern": "x", "glob": "*.txt\u{0}"})),
        ("type", json!({"pattern": "x", "type": "rust\u{0}"})),
    ] {
        let e = fail(&Grep, &c, input).await;
        assert!(
            e.text
                .contains(&format!("The {field} parameter contains a null byte")),
            "{field}: {}",
            e.text
        );
    }
    let e = fail(&Glob, &c, json!({"pattern": "*", "path": "a\u{0}"})).await;
    assert!(
        e.text.contains("The path parameter contains a null byte"),
        "{}",
        e.text
    );
}

/// An absolute pattern with `..` is resolved lexically, as `/proj/*.rs` would be.
#[tokio::test]
async fn glob_absolute_pattern_with_dot_dot_is_normalised() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    fs::create_dir_all(&proj).unwrap();
    fs::create_dir_all(dir.path().join("x")).unwrap();
    fs::write(proj.join("a.rs"), "").unwrap();
    let c = ctx(&proj);
    for via in ["x", "missing", "x/./../x"] {
        let pattern = format!("{}/{via}/../proj/*.rs", dir.path().display());
        assert_eq!(
            text(&Glob, &c, json!({"pattern": pattern})).await,
            "a.rs",
            "{pattern}"
        );
    }
    let pattern = format!("{}/proj/./sub/../*.rs", dir.path().display());
    assert_eq!(text(&Glob, &c, json!({"pattern": pattern})).await, "a.rs");
}

/// A relative pattern with `..` is read as the absolute one it names: `src/../src/*.rs`
/// finds `src`'s files, `../sib/*.rs` the sibling's (ripgrep's globs never match `..`, so
/// these found nothing, and the permission asked about a search that could find nothing).
/// Inside the working directories it is allowed; climbing out asks.
#[tokio::test]
async fn glob_relative_pattern_with_dot_dot_is_read_from_where_it_leads() {
    use tool_core::{PermissionResult, Tool};
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path().join("proj");
    fs::create_dir_all(proj.join("src")).unwrap();
    fs::create_dir_all(dir.path().join("sib")).unwrap();
    fs::write(proj.join("src/a.rs"), "").unwrap();
    fs::write(dir.path().join("sib/b.rs"), "").unwrap();
    let c = ctx(&proj);
    assert_eq!(
        text(&Glob, &c, json!({"pattern": "src/../src/*.rs"})).await,
        "src/a.rs"
    );
    let found = text(&Glob, &c, json!({"pattern": "../sib/*.rs"})).await;
    assert!(found.ends_with("sib/b.rs"), "{found}");
    // Judged as the session judges it: the tool names where the search goes (the cwd when
    // no `path` is given), the permission engine decides.
    let engine = tool_perms::PermissionEngine::new(
        &tool_core::ToolPermissionContext::default(),
        tool_perms::PathRoots::for_cwd(&proj),
    )
    .unwrap();
    let allowed = |input: serde_json::Value| {
        let (c, engine) = (c.clone(), &engine);
        async move {
            let input = Glob.observable_input(&input, &c).unwrap_or(input);
            matches!(
                engine.decide(&Glob, &input, &c).await,
                PermissionResult::Allow { .. }
            )
        }
    };
    assert!(allowed(json!({"pattern": "src/../src/*.rs"})).await);
    assert!(!allowed(json!({"pattern": "../sib/*.rs"})).await);
    assert!(!allowed(json!({"pattern": "src/../../sib/*.rs"})).await);
    // A link on the way leads out: asked about, though spelled inside.
    std::os::unix::fs::symlink(dir.path().join("sib"), proj.join("out")).unwrap();
    assert!(!allowed(json!({"pattern": "src/../out/*.rs"})).await);
    assert!(!allowed(json!({"pattern": "*.rs", "path": "out"})).await);
    assert!(allowed(json!({"pattern": "*.rs", "path": "src"})).await);
    // With a `path` (the pipeline makes it absolute), the permission subject is where the
    // pattern leads, not the path it starts from.
    let input = json!({"pattern": "../../sib/*.rs", "path": proj.join("src")});
    match Glob.permission_subject(&input) {
        Some(tool_core::PermissionSubject::Path { path, .. }) => {
            assert_eq!(path, dir.path().join("sib"));
        }
        other => panic!("{other:?}"),
    }
    // The base is joined as a path: its `[slug]` is a name, not a glob class.
    fs::create_dir_all(proj.join("app/[slug]/edit")).unwrap();
    fs::write(proj.join("app/[slug]/page.tsx"), "").unwrap();
    assert_eq!(
        text(
            &Glob,
            &c,
            json!({"pattern": "../*.tsx", "path": "app/[slug]/edit"})
        )
        .await,
        "app/[slug]/page.tsx"
    );
}

/// A search root that cannot be listed is an error that says so, as ripgrep's "Permission
/// denied", not "No files found". Root lists any directory, so as root the test runs itself
/// again as `nobody` (setpriv) on the same directory.
#[tokio::test]
async fn an_unreadable_search_root_is_an_error() {
    use std::os::unix::fs::PermissionsExt;
    const DIR: &str = "TOOLWRIGHT_TEST_UNREADABLE_ROOT";
    if let Ok(dir) = std::env::var(DIR) {
        let c = ctx(Path::new(&dir));
        let grep = fail(&Grep, &c, json!({"pattern": "hello", "path": "locked"})).await;
        let glob = fail(&Glob, &c, json!({"pattern": "*", "path": "locked"})).await;
        for e in [grep, glob] {
            assert!(
                e.text.contains("Cannot search") && e.text.contains("Permission denied"),
                "{}",
                e.text
            );
        }
        // Inside a search, what cannot be read is named, not passed over in silence (a
        // search finding nothing would read as "nothing matches").
        for mode in ["files_with_matches", "count", "content"] {
            let found = text(&Grep, &c, json!({"pattern": "hello", "output_mode": mode})).await;
            assert!(
                found.contains("open.txt")
                    && found.ends_with(
                        "[Not searched, as they could not be read: locked (Permission denied (os error 13)), noread.txt (Permission denied (os error 13))]"
                    ),
                "{mode}: {found}"
            );
        }
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let locked = dir.path().join("locked");
    fs::create_dir_all(&locked).unwrap();
    fs::write(locked.join("f.txt"), "hello\n").unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    fs::write(dir.path().join("open.txt"), "hello\n").unwrap();
    let noread = dir.path().join("noread.txt");
    fs::write(&noread, "hello\n").unwrap();
    fs::set_permissions(&noread, fs::Permissions::from_mode(0o000)).unwrap();
    // Where the directory can be listed all the same (as root), `nobody` runs a copy of
    // this test binary beside the directory.
    let as_nobody = fs::read_dir(&locked).is_ok();
    let out = rerun_test(
        "an_unreadable_search_root_is_an_error",
        DIR,
        dir.path(),
        as_nobody.then(|| dir.path().join("search-test")).as_deref(),
    );
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    assert_rerun_passed(&out.expect("setpriv cannot run a command as nobody"));
}

/// Count mode counts what `rg -c` counts: matching lines, and with `multiline` each match
/// (the searcher hands neighbouring matches over as one block). `rg -U --multiline-dotall
/// -c 'o\nb'` says 3 for this file.
#[tokio::test]
async fn grep_count_in_multiline_mode_counts_each_match() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("m.txt"),
        "foo\nbar\nfoo\nbaz foo\nbar\nqux\n",
    )
    .unwrap();
    fs::write(dir.path().join("n.txt"), "foo foo\nfoo\n").unwrap();
    let c = ctx(dir.path());
    let count = |pattern: &str, multiline: bool| {
        let c = c.clone();
        let input = json!({"pattern": pattern, "output_mode": "count", "multiline": multiline, "path": "."});
        async move { text(&Grep, &c, input).await }
    };
    assert_eq!(
        count("o\\nb", true).await,
        "m.txt:3\n\nFound 3 total occurrences across 1 file."
    );
    // Lines without multiline (rg -c); with it, lines still for a pattern that cannot match
    // a line end (ripgrep searches it line by line), matches for one that can.
    assert_eq!(
        count("foo", false).await,
        "m.txt:3\nn.txt:2\n\nFound 5 total occurrences across 2 files."
    );
    assert_eq!(
        count("foo", true).await,
        "m.txt:3\nn.txt:2\n\nFound 5 total occurrences across 2 files."
    );
    assert_eq!(
        count("o\\s", true).await,
        "m.txt:3\nn.txt:3\n\nFound 6 total occurrences across 2 files."
    );
    // Every character, the line ends too: 28 and 12 (`rg -U -c '(?s).'`).
    assert_eq!(
        count("(?s).", true).await,
        "m.txt:28\nn.txt:12\n\nFound 40 total occurrences across 2 files."
    );
}

/// Found by review: in multiline mode an empty match at the end of a block was counted
/// again past the block's own line end (`^$` on one empty line said 2, content mode showed
/// one line, `rg -U -c` says 1), and a file that turns out binary after its first matches
/// was counted, where `rg -c` leaves it out (`rg -l` lists it, and so do we).
#[tokio::test]
async fn grep_count_agrees_with_rg_at_block_ends_and_on_late_binary_files() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("two.txt"), "a\n\nb\n").unwrap();
    fs::write(dir.path().join("x.txt"), "a b a\nc\na\n").unwrap();
    let c = ctx(dir.path());
    let count = |pattern: &str, path: &str| {
        let c = c.clone();
        let input =
            json!({"pattern": pattern, "output_mode": "count", "multiline": true, "path": path});
        async move { text(&Grep, &c, input).await }
    };
    // What `rg -U --multiline-dotall -c` says for each.
    assert_eq!(
        count("^$", "two.txt").await,
        "1\n\nFound 1 total occurrence across 1 file."
    );
    assert_eq!(
        count("^", "x.txt").await,
        "3\n\nFound 3 total occurrences across 1 file."
    );
    assert_eq!(
        count("a", "x.txt").await,
        "2\n\nFound 2 total occurrences across 1 file."
    );
    assert_eq!(
        count("x*", "x.txt").await,
        "3\n\nFound 3 total occurrences across 1 file."
    );

    let bin = tempfile::tempdir().unwrap();
    let mut late_nul = b"needle 1\nneedle 2\n".to_vec();
    late_nul.extend(std::iter::repeat_n(b'x', 200_000));
    late_nul.extend(b"\n\0\nneedle 3\n");
    fs::write(bin.path().join("late_nul.bin"), late_nul).unwrap();
    fs::write(bin.path().join("plain.txt"), "needle\n").unwrap();
    let c = ctx(bin.path());
    let search = |mode: &str| {
        let c = c.clone();
        let input = json!({"pattern": "needle", "output_mode": mode});
        async move { text(&Grep, &c, input).await }
    };
    assert_eq!(
        search("count").await,
        "plain.txt:1\n\nFound 1 total occurrence across 1 file."
    );
    let files = search("files_with_matches").await;
    assert!(
        files.starts_with("Found 2 files") && files.contains("late_nul.bin"),
        "{files}"
    );
}

/// The pagination of `files_with_matches` is Claude Code's header, `Found 3 files limit: 3`
/// (`, offset: 1` after it), not the bracketed note of content mode.
#[tokio::test]
async fn grep_files_with_matches_pagination_reads_as_claude_codes() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..5 {
        let p = dir.path().join(format!("f{i}.txt"));
        fs::write(&p, "hit\n").unwrap();
        set_mtime(&p, 10 + i);
    }
    let c = ctx(dir.path());
    assert_eq!(
        text(&Grep, &c, json!({"pattern": "hit", "head_limit": 3})).await,
        "Found 3 files limit: 3\nf4.txt\nf3.txt\nf2.txt"
    );
    assert_eq!(
        text(
            &Grep,
            &c,
            json!({"pattern": "hit", "head_limit": 3, "offset": 1})
        )
        .await,
        "Found 3 files limit: 3, offset: 1\nf3.txt\nf2.txt\nf1.txt"
    );
}

/// An invalid pattern is quoted as written, with the caret under it (not inside the group
/// the matcher wraps it in), and a new line outside multiline mode gets ripgrep's hint.
#[tokio::test]
async fn grep_regex_errors_quote_the_pattern_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let e = fail(&Grep, &c, json!({"pattern": "fn ("})).await;
    assert!(
        e.text
            .contains("regex parse error:\n    fn (\n       ^\nerror: unclosed group"),
        "{}",
        e.text
    );
    assert!(!e.text.contains("(?:"), "{}", e.text);
    let e = fail(&Grep, &c, json!({"pattern": "a\\nb"})).await;
    assert!(e.text.contains("multiline: true"), "{}", e.text);
    let e = fail(&Grep, &c, json!({"pattern": "(?<=a)b"})).await;
    assert!(e.text.contains("look-around"), "{}", e.text);
}

/// A file the call names is searched whole, as `rg` searches it: a NUL byte far into it (past
/// the first buffer) still lets every line before it show, and content mode agrees with
/// count mode (a buffered search dropped the matches of the buffer the NUL was in).
#[tokio::test]
async fn a_named_file_with_a_late_nul_shows_every_line_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes: Vec<u8> = (0..20_000)
        .flat_map(|i| format!("foo {i:05}\n").into_bytes())
        .collect();
    bytes.extend_from_slice(b"\0 trailing\n");
    fs::write(dir.path().join("log.txt"), bytes).unwrap();
    let c = ctx(dir.path());
    let shown = text(
        &Grep,
        &c,
        json!({"pattern": "foo", "path": "log.txt", "output_mode": "content", "head_limit": 0}),
    )
    .await;
    assert_eq!(
        shown.lines().filter(|l| l.contains(":foo ")).count(),
        20_000,
        "{}",
        &shown[shown.len().saturating_sub(200)..]
    );
    let counted = text(
        &Grep,
        &c,
        json!({"pattern": "foo", "path": "log.txt", "output_mode": "count"}),
    )
    .await;
    assert!(counted.starts_with("20000\n"), "{counted}");
}
