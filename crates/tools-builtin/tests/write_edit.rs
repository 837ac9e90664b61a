//! Write and Edit: read-before-write, stale refusals with Claude Code's codes, exact-match
//! rules, and preservation of line endings, encodings and permissions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;

use common::{bump_mtime, ctx, fail, run, text};
use serde_json::json;
use tool_core::{MODIFIED_MESSAGE, NOT_READ_MESSAGE, tool_use_error};
use tools_builtin::{Edit, Read, Write};

#[tokio::test]
async fn write_creates_without_a_read_and_makes_parents() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("sub/dir/new.txt");
    let c = ctx(dir.path());
    let out = run(&Write, &c, json!({"file_path": f, "content": "hello\n"}))
        .await
        .unwrap();
    assert_eq!(
        out.content.joined_text(),
        format!("File created successfully at: {}", f.display())
    );
    assert_eq!(out.structured["type"], "create");
    assert_eq!(fs::read_to_string(&f).unwrap(), "hello\n");
    // Written counts as read: a second write needs no Read.
    let out = run(&Write, &c, json!({"file_path": f, "content": "bye\n"}))
        .await
        .unwrap();
    assert_eq!(
        out.content.joined_text(),
        format!("The file {} has been updated successfully.", f.display())
    );
    assert_eq!(out.structured["type"], "update");
    assert_eq!(out.structured["originalFile"], "hello\n");
    assert_eq!(
        out.structured["structuredPatch"][0]["lines"],
        json!(["-hello", "+bye"])
    );
}

#[tokio::test]
async fn write_refuses_unread_and_changed_files_with_codes() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("a.txt");
    fs::write(&f, "v1\n").unwrap();
    let c = ctx(dir.path());
    let err = fail(&Write, &c, json!({"file_path": f, "content": "x"})).await;
    assert_eq!(
        (err.text, err.code),
        (tool_use_error(NOT_READ_MESSAGE), Some(2))
    );
    text(&Read, &c, json!({"file_path": f})).await;
    // An mtime bump with the same content is not a change (decision 7).
    bump_mtime(&f);
    run(&Write, &c, json!({"file_path": f, "content": "v2\n"}))
        .await
        .unwrap();
    // A real change is.
    fs::write(&f, "changed by user\n").unwrap();
    bump_mtime(&f);
    let err = fail(&Write, &c, json!({"file_path": f, "content": "v3\n"})).await;
    assert_eq!(
        (err.text, err.code),
        (tool_use_error(MODIFIED_MESSAGE), Some(3))
    );
    assert_eq!(fs::read_to_string(&f).unwrap(), "changed by user\n");
}

#[tokio::test]
async fn write_keeps_crlf_bom_utf16_and_mode() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let crlf = dir.path().join("crlf.txt");
    fs::write(&crlf, "a\r\nb\r\n").unwrap();
    text(&Read, &c, json!({"file_path": crlf})).await;
    run(&Write, &c, json!({"file_path": crlf, "content": "x\ny\n"}))
        .await
        .unwrap();
    assert_eq!(fs::read(&crlf).unwrap(), b"x\r\ny\r\n");

    let bom = dir.path().join("bom.txt");
    fs::write(&bom, b"\xEF\xBB\xBFold").unwrap();
    text(&Read, &c, json!({"file_path": bom})).await;
    run(&Write, &c, json!({"file_path": bom, "content": "new"}))
        .await
        .unwrap();
    assert_eq!(fs::read(&bom).unwrap(), b"\xEF\xBB\xBFnew");

    let u16 = dir.path().join("u16.txt");
    fs::write(&u16, [0xFF, 0xFE, b'o', 0]).unwrap();
    text(&Read, &c, json!({"file_path": u16})).await;
    run(&Write, &c, json!({"file_path": u16, "content": "ok"}))
        .await
        .unwrap();
    assert_eq!(fs::read(&u16).unwrap(), [0xFF, 0xFE, b'o', 0, b'k', 0]);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let script = dir.path().join("run.sh");
        fs::write(&script, "echo 1\n").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o750)).unwrap();
        text(&Read, &c, json!({"file_path": script})).await;
        run(
            &Write,
            &c,
            json!({"file_path": script, "content": "echo 2\n"}),
        )
        .await
        .unwrap();
        assert_eq!(
            fs::metadata(&script).unwrap().permissions().mode() & 0o777,
            0o750
        );
    }
}

#[tokio::test]
async fn edit_replaces_exactly_once_and_reports_a_patch() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("code.rs");
    fs::write(&f, "fn a() {}\nfn b() {}\n").unwrap();
    let c = ctx(dir.path());
    text(&Read, &c, json!({"file_path": f})).await;
    let out = run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "fn b", "new_string": "fn c"}),
    )
    .await
    .unwrap();
    assert_eq!(
        out.content.joined_text(),
        format!("The file {} has been updated successfully.", f.display())
    );
    assert_eq!(fs::read_to_string(&f).unwrap(), "fn a() {}\nfn c() {}\n");
    assert_eq!(out.structured["originalFile"], "fn a() {}\nfn b() {}\n");
    assert_eq!(out.structured["replaceAll"], false);
    assert_eq!(
        out.structured["structuredPatch"],
        json!([{"oldStart": 1, "oldLines": 2, "newStart": 1, "newLines": 2, "lines": [" fn a() {}", "-fn b() {}", "+fn c() {}"]}])
    );
    // Our own edit counts as a read: edit again straight away.
    run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "fn a", "new_string": "fn z"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&f).unwrap(), "fn z() {}\nfn c() {}\n");
}

#[tokio::test]
async fn edit_refusals_have_claude_code_texts_and_codes() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.txt");
    fs::write(&f, "x = 1\nx = 1\n").unwrap();
    let c = ctx(dir.path());
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "x", "new_string": "y"}),
    )
    .await;
    assert_eq!(
        (e.text, e.code),
        (tool_use_error(NOT_READ_MESSAGE), Some(6))
    );
    text(&Read, &c, json!({"file_path": f})).await;
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "x = 1", "new_string": "x = 2"}),
    )
    .await;
    assert_eq!(e.code, Some(9));
    assert_eq!(
        e.text,
        tool_use_error(
            "Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nString: x = 1"
        )
    );
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "zzz", "new_string": "y"}),
    )
    .await;
    assert_eq!(
        (e.text, e.code),
        (
            tool_use_error("String to replace not found in file.\nString: zzz"),
            Some(8)
        )
    );
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "x", "new_string": "x"}),
    )
    .await;
    assert_eq!(e.code, Some(1));
    assert!(
        e.text
            .contains("No changes to make: old_string and new_string are exactly the same.")
    );
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "", "new_string": "y"}),
    )
    .await;
    assert_eq!(
        (e.text, e.code),
        (
            tool_use_error("Cannot create new file - file already exists."),
            Some(3)
        )
    );
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": dir.path().join("none.txt"), "old_string": "a", "new_string": "b"}),
    )
    .await;
    assert_eq!(e.code, Some(4));
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": dir.path().join("n.ipynb"), "old_string": "", "new_string": "{}"}),
    )
    .await;
    assert_eq!(e.code, Some(5));
    // replace_all changes every occurrence.
    let out = run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "x = 1", "new_string": "x = 2", "replace_all": true}),
    )
    .await
    .unwrap();
    assert!(
        out.content
            .joined_text()
            .contains("All occurrences of 'x = 1' were successfully replaced with 'x = 2'")
    );
    assert_eq!(fs::read_to_string(&f).unwrap(), "x = 2\nx = 2\n");
    // A change behind our back.
    fs::write(&f, "someone else\n").unwrap();
    bump_mtime(&f);
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "someone", "new_string": "y"}),
    )
    .await;
    assert_eq!(
        (e.text, e.code),
        (tool_use_error(MODIFIED_MESSAGE), Some(7))
    );
}

#[tokio::test]
async fn edit_rechecks_right_before_the_write() {
    use tool_core::{ProgressSender, Tool};
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("race.txt");
    fs::write(&f, "one\n").unwrap();
    let c = ctx(dir.path());
    text(&Read, &c, json!({"file_path": f})).await;
    let input = Edit
        .parse_input(json!({"file_path": f, "old_string": "one", "new_string": "two"}))
        .unwrap();
    Edit.validate_input(&input, &c).await.unwrap();
    // The file changes between validation and the call.
    fs::write(&f, "one, edited elsewhere\n").unwrap();
    bump_mtime(&f);
    let err = Edit
        .call(input, c.clone(), ProgressSender::none())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_model_text(),
        "File has been unexpectedly modified. Read it again before attempting to write it."
    );
    assert_eq!(fs::read_to_string(&f).unwrap(), "one, edited elsewhere\n");
}

#[tokio::test]
async fn edit_creates_a_missing_file_with_empty_old_string() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("made.txt");
    let c = ctx(dir.path());
    run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "", "new_string": "fresh\n"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&f).unwrap(), "fresh\n");
    // A file holding only a byte-order mark is empty: it is filled, and keeps its BOM.
    let bom = dir.path().join("bom-only.txt");
    fs::write(&bom, b"\xEF\xBB\xBF").unwrap();
    text(&Read, &c, json!({"file_path": bom})).await;
    run(
        &Edit,
        &c,
        json!({"file_path": bom, "old_string": "", "new_string": "filled\n"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read(&bom).unwrap(), b"\xEF\xBB\xBFfilled\n");
}

#[tokio::test]
async fn edit_keeps_crlf_bom_utf16_mode_and_curly_quotes() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let crlf = dir.path().join("win.txt");
    fs::write(&crlf, "a\r\nb\r\nc\r\n").unwrap();
    text(&Read, &c, json!({"file_path": crlf})).await;
    run(
        &Edit,
        &c,
        json!({"file_path": crlf, "old_string": "a\nb", "new_string": "a\nB\nb2"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read(&crlf).unwrap(), b"a\r\nB\r\nb2\r\nc\r\n");

    let bom = dir.path().join("bom.txt");
    fs::write(&bom, b"\xEF\xBB\xBFkeep me\n").unwrap();
    text(&Read, &c, json!({"file_path": bom})).await;
    run(
        &Edit,
        &c,
        json!({"file_path": bom, "old_string": "keep", "new_string": "kept"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read(&bom).unwrap(), b"\xEF\xBB\xBFkept me\n");

    let u16 = dir.path().join("u16.txt");
    let enc = |s: &str| {
        let mut v = vec![0xFF, 0xFE];
        for u in s.encode_utf16() {
            v.extend_from_slice(&u.to_le_bytes());
        }
        v
    };
    fs::write(&u16, enc("caf\u{e9}\r\n")).unwrap();
    text(&Read, &c, json!({"file_path": u16})).await;
    run(
        &Edit,
        &c,
        json!({"file_path": u16, "old_string": "caf\u{e9}", "new_string": "tea"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read(&u16).unwrap(), enc("tea\r\n"));

    // UTF-16 big-endian (FE FF): read as text, edited, written back big-endian.
    let be = dir.path().join("be.txt");
    let enc_be = |s: &str| {
        let mut v = vec![0xFE, 0xFF];
        for u in s.encode_utf16() {
            v.extend_from_slice(&u.to_be_bytes());
        }
        v
    };
    fs::write(&be, enc_be("hi \u{e9}\nsecond\n")).unwrap();
    let shown = text(&Read, &c, json!({"file_path": be})).await;
    assert!(
        shown.contains("hi \u{e9}") && shown.contains("second"),
        "{shown:?}"
    );
    run(
        &Edit,
        &c,
        json!({"file_path": be, "old_string": "second", "new_string": "2nd"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read(&be).unwrap(), enc_be("hi \u{e9}\n2nd\n"));

    let quotes = dir.path().join("q.md");
    fs::write(&quotes, "He said \u{201C}hi\u{201D}.\n").unwrap();
    text(&Read, &c, json!({"file_path": quotes})).await;
    run(
        &Edit,
        &c,
        json!({"file_path": quotes, "old_string": "\"hi\"", "new_string": "\"hello\""}),
    )
    .await
    .unwrap();
    assert_eq!(
        fs::read_to_string(&quotes).unwrap(),
        "He said \u{201C}hello\u{201D}.\n"
    );

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let script = dir.path().join("x.sh");
        fs::write(&script, "echo a\n").unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o700)).unwrap();
        text(&Read, &c, json!({"file_path": script})).await;
        run(
            &Edit,
            &c,
            json!({"file_path": script, "old_string": "a", "new_string": "b"}),
        )
        .await
        .unwrap();
        assert_eq!(
            fs::metadata(&script).unwrap().permissions().mode() & 0o777,
            0o700
        );
    }
    // A binary file is refused, not mangled.
    let bin = dir.path().join("b.dat");
    fs::write(&bin, b"\0\xC3\x28 bad utf8").unwrap();
    // Recorded as seen (Read refuses binary files, so it cannot be read first).
    let mut seen = tool_core::FileState::written(
        String::new(),
        tool_core::mtime_ms(&fs::metadata(&bin).unwrap()),
    );
    seen.disk_hash = Some(tool_core::ContentHash::of(b"\0\xC3\x28 bad utf8"));
    c.file_state().insert(&bin, seen);
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": bin, "old_string": "bad", "new_string": "good"}),
    )
    .await;
    assert!(e.text.contains("not UTF-8 or UTF-16 text"), "{}", e.text);
    assert_eq!(fs::read(&bin).unwrap(), b"\0\xC3\x28 bad utf8");
}

/// A text file with a few bytes that are not UTF-8 (a Latin-1 `£` in a UTF-8 file), which
/// Read shows as U+FFFD: Edit changes the text around them and keeps those bytes as they
/// are, in a CRLF file too; a string that names them (as U+FFFD) is not found, and the
/// model is told why; the result shows them as Read does. Write stays refused (it would
/// replace them with what the model saw).
#[tokio::test]
async fn edit_keeps_the_bytes_of_a_file_that_are_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let f = dir.path().join("prices.txt");
    fs::write(&f, b"hello world\nprice: 5\xa3\nend line\n").unwrap();
    let shown = text(&Read, &c, json!({"file_path": f})).await;
    assert!(shown.contains("price: 5\u{FFFD}"), "{shown}");
    let out = run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "hello", "new_string": "HELLO"}),
    )
    .await
    .unwrap();
    assert_eq!(
        fs::read(&f).unwrap(),
        b"HELLO world\nprice: 5\xa3\nend line\n"
    );
    assert_eq!(
        out.structured["originalFile"],
        "hello world\nprice: 5\u{FFFD}\nend line\n"
    );
    // On the same line as the stray byte, and replacing every match.
    run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "e", "new_string": "E", "replace_all": true}),
    )
    .await
    .unwrap();
    assert_eq!(
        fs::read(&f).unwrap(),
        b"HELLO world\npricE: 5\xa3\nEnd linE\n"
    );
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "5\u{FFFD}", "new_string": "6"}),
    )
    .await;
    assert_eq!(e.code, Some(8), "{}", e.text);
    assert!(e.text.contains("bytes that are not UTF-8"), "{}", e.text);
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "HELLO", "new_string": "\u{10FE41}"}),
    )
    .await;
    assert!(e.text.contains("U+10FE00"), "{}", e.text);
    // Nor can old_string name the byte by the character that stands for it.
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "5\u{10FEA3}", "new_string": "5"}),
    )
    .await;
    assert!(e.text.contains("U+10FE00"), "{}", e.text);
    let e = fail(&Write, &c, json!({"file_path": f, "content": "x\n"})).await;
    assert!(
        e.text.contains("not valid UTF-8") && e.text.contains("Change it with Edit"),
        "{}",
        e.text
    );
    assert_eq!(
        fs::read(&f).unwrap(),
        b"HELLO world\npricE: 5\xa3\nEnd linE\n"
    );

    // CRLF line endings and a byte-order mark are kept with the stray bytes.
    let crlf = dir.path().join("crlf.txt");
    fs::write(&crlf, b"\xef\xbb\xbfa\xe9\r\nb\r\n").unwrap();
    text(&Read, &c, json!({"file_path": crlf})).await;
    run(
        &Edit,
        &c,
        json!({"file_path": crlf, "old_string": "b\n", "new_string": "b\nc\n"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read(&crlf).unwrap(), b"\xef\xbb\xbfa\xe9\r\nb\r\nc\r\n");

    // A file whose text already holds one of the characters that would stand for its
    // bytes cannot be edited without doubt: refused, untouched.
    let odd = dir.path().join("odd.txt");
    let mut bytes = "x \u{10FE41} y\n".as_bytes().to_vec();
    bytes.extend(b"\xff\n");
    fs::write(&odd, &bytes).unwrap();
    text(&Read, &c, json!({"file_path": odd})).await;
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": odd, "old_string": "x", "new_string": "z"}),
    )
    .await;
    assert!(e.text.contains("not UTF-8 or UTF-16 text"), "{}", e.text);
    assert_eq!(fs::read(&odd).unwrap(), bytes);
}

/// A damaged UTF-16 file (a stray last byte, so an odd number of bytes; an unpaired
/// surrogate), which Read shows as UTF-16 text with U+FFFD: Edit refuses it saying what is
/// wrong with it, not that it is not UTF-16 text, and leaves every byte as it was.
#[tokio::test]
async fn edit_of_a_damaged_utf16_file_says_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let odd = dir.path().join("odd.txt");
    let mut odd_bytes = vec![0xFF, 0xFE];
    for u in "hello world\n".encode_utf16() {
        odd_bytes.extend(u.to_le_bytes());
    }
    odd_bytes.push(0);
    fs::write(&odd, &odd_bytes).unwrap();
    let shown = text(&Read, &c, json!({"file_path": odd})).await;
    assert!(shown.contains("hello world"), "{shown}");
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": odd, "old_string": "hello", "new_string": "howdy"}),
    )
    .await;
    assert!(
        e.text.contains("UTF-16") && e.text.contains("odd number of bytes"),
        "{}",
        e.text
    );
    assert!(!e.text.contains("not UTF-8 or UTF-16 text"), "{}", e.text);
    assert_eq!(fs::read(&odd).unwrap(), odd_bytes);

    let surrogate = dir.path().join("surr.txt");
    // A pair (U+1F600) first, then `a` and a lone high surrogate at byte 8.
    let surrogate_bytes = b"\xfe\xff\xd8\x3d\xde\x00\x00a\xd8\x00\x00\n\x00b".to_vec();
    fs::write(&surrogate, &surrogate_bytes).unwrap();
    assert_eq!(
        text(&Read, &c, json!({"file_path": surrogate})).await,
        "     1\u{2192}\u{1F600}a\u{FFFD}\n     2\u{2192}b"
    );
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": surrogate, "old_string": "b", "new_string": "c"}),
    )
    .await;
    assert!(
        e.text.contains("UTF-16") && e.text.contains("unpaired surrogate at byte 8"),
        "{}",
        e.text
    );
    assert_eq!(fs::read(&surrogate).unwrap(), surrogate_bytes);
}

/// Overwriting a file over 1 GiB is refused before its content is read into memory.
#[tokio::test]
async fn write_refuses_to_overwrite_a_file_too_large_to_read() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("huge.log");
    {
        let file = fs::File::create(&f).unwrap();
        std::io::Write::write_all(&mut &file, b"first line\n").unwrap();
        // A hole: 1 GiB and a byte on paper, no disk used.
        file.set_len((1 << 30) + 1).unwrap();
    }
    let c = ctx(dir.path());
    let err = fail(&Write, &c, json!({"file_path": f, "content": "small"})).await;
    assert!(
        err.text
            .contains("File is too large to overwrite with Write"),
        "{}",
        err.text
    );
    assert_eq!(fs::metadata(&f).unwrap().len(), (1 << 30) + 1);
}

/// A file with both CRLF and LF endings, which Read shows with LF only: the model's text is
/// matched whatever the endings, each match keeps its own, and deleting a line takes its
/// CRLF with it.
#[tokio::test]
async fn edit_matches_across_mixed_line_endings() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let mixed = dir.path().join("mixed.txt");
    fs::write(&mixed, "line1\r\nline2\r\nline3\nline4\r\n").unwrap();
    text(&Read, &c, json!({"file_path": mixed})).await;
    run(
        &Edit,
        &c,
        json!({"file_path": mixed, "old_string": "line2\nline3\nline4", "new_string": "two\nthree"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read(&mixed).unwrap(), b"line1\r\ntwo\r\nthree\r\n");

    let del = dir.path().join("del.txt");
    fs::write(&del, "a\r\nb\r\nc\n").unwrap();
    text(&Read, &c, json!({"file_path": del})).await;
    run(
        &Edit,
        &c,
        json!({"file_path": del, "old_string": "b", "new_string": ""}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read(&del).unwrap(), b"a\r\nc\n");

    // Ambiguity is counted across endings; replace_all replaces each with its own.
    let twice = dir.path().join("twice.txt");
    fs::write(&twice, "x\r\ny\nx\ny\r\n").unwrap();
    text(&Read, &c, json!({"file_path": twice})).await;
    let err = run(
        &Edit,
        &c,
        json!({"file_path": twice, "old_string": "x\ny", "new_string": "z\nw"}),
    )
    .await
    .unwrap_err();
    assert!(err.text.contains("Found 2 matches"), "{}", err.text);
    run(
        &Edit,
        &c,
        json!({"file_path": twice, "old_string": "x\ny", "new_string": "z\nw", "replace_all": true}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read(&twice).unwrap(), b"z\r\nw\nz\nw\r\n");

    // Deleting adjacent matches (each after other text on its line, so no line break goes
    // with it): no overlap, no panic.
    let adjacent = dir.path().join("adjacent.txt");
    fs::write(&adjacent, "x\r\ny\nb\nb\n").unwrap();
    text(&Read, &c, json!({"file_path": adjacent})).await;
    run(
        &Edit,
        &c,
        json!({"file_path": adjacent, "old_string": "\nb", "new_string": "", "replace_all": true}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read(&adjacent).unwrap(), b"x\r\ny\n");

    // Line breaks added by a match of one line take that line's ending (the last line,
    // without a break of its own, takes the one before it).
    let insert = dir.path().join("insert.txt");
    for (old, new, want) in [
        (
            "two",
            "two\ninserted",
            &b"one\r\ntwo\r\ninserted\r\nthree\r\nlast\n"[..],
        ),
        ("last", "last\nmore", b"one\r\ntwo\r\nthree\r\nlast\nmore\n"),
    ] {
        fs::write(&insert, "one\r\ntwo\r\nthree\r\nlast\n").unwrap();
        text(&Read, &c, json!({"file_path": insert})).await;
        run(
            &Edit,
            &c,
            json!({"file_path": insert, "old_string": old, "new_string": new}),
        )
        .await
        .unwrap();
        assert_eq!(fs::read(&insert).unwrap(), want, "{old:?} -> {new:?}");
    }
    fs::write(&insert, "a\nb\r\nend").unwrap();
    text(&Read, &c, json!({"file_path": insert})).await;
    run(
        &Edit,
        &c,
        json!({"file_path": insert, "old_string": "end", "new_string": "end\nmore"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read(&insert).unwrap(), b"a\nb\r\nend\r\nmore");
}

/// On Linux a name in NFD (as unpacked from a macOS archive) and the same name in NFC are
/// two files. The decomposed file is read, edited and written where it is, under either
/// spelling, and Write never makes a composed twin beside it.
#[tokio::test]
async fn a_decomposed_file_name_is_the_file_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let decomposed = root.join("cafe\u{301}.txt");
    let composed = root.join("caf\u{e9}.txt");
    fs::write(&decomposed, "old\n").unwrap();
    let c = ctx(&root);
    assert!(
        text(&Read, &c, json!({"file_path": decomposed}))
            .await
            .contains("old")
    );
    run(
        &Edit,
        &c,
        json!({"file_path": decomposed, "old_string": "old", "new_string": "edited"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&decomposed).unwrap(), "edited\n");
    // The name typed composed finds the same file.
    assert!(
        text(&Read, &c, json!({"file_path": composed}))
            .await
            .contains("edited")
    );
    run(
        &Write,
        &c,
        json!({"file_path": composed, "content": "written\n"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&decomposed).unwrap(), "written\n");
    assert!(
        !composed.exists(),
        "Write made a second file beside the first"
    );
}

/// Write replaces the whole file: a Read of part of it (a range, or the first 2,000 lines)
/// is not enough, until Reads of the same content have shown every line.
#[tokio::test]
async fn write_needs_every_line_seen_by_reads_of_the_same_content() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("long.txt");
    let body: String = (1..=2500).map(|n| format!("line {n}\n")).collect();
    fs::write(&f, &body).unwrap();
    let c = ctx(dir.path());
    let partly = "The file was only partly shown";
    // A small range of a long file.
    text(
        &Read,
        &c,
        json!({"file_path": f, "offset": 2490, "limit": 5}),
    )
    .await;
    let err = fail(&Write, &c, json!({"file_path": f, "content": "x"})).await;
    assert!(err.text.contains(partly), "{}", err.text);
    // The first 2,000 lines: lines 2001-2489 and 2495-2500 are still unseen.
    text(&Read, &c, json!({"file_path": f})).await;
    let err = fail(&Write, &c, json!({"file_path": f, "content": "x"})).await;
    assert!(err.text.contains(partly), "{}", err.text);
    text(
        &Read,
        &c,
        json!({"file_path": f, "offset": 2001, "limit": 500}),
    )
    .await;
    run(&Write, &c, json!({"file_path": f, "content": "replaced\n"}))
        .await
        .unwrap();
    assert_eq!(fs::read_to_string(&f).unwrap(), "replaced\n");
}

/// Read cuts a line over 2,000 characters (`... [line truncated]`) and shows bytes that are
/// not UTF-8 as U+FFFD. Every line was shown, but not as it is: a Write of what the model saw
/// would destroy the cut text or the original bytes, so it is refused, saying why. Edit,
/// which matches its text against the file itself, still works.
#[tokio::test]
async fn write_after_a_read_that_cut_a_line_or_decoded_lossily_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let long = dir.path().join("long.txt");
    let body = format!("short\n{}\nend\n", "y".repeat(2500));
    fs::write(&long, &body).unwrap();
    let shown = text(&Read, &c, json!({"file_path": long})).await;
    assert!(shown.contains("... [line truncated]"), "{shown}");
    let as_seen = format!("short\n{}... [line truncated]\nend\n", "y".repeat(2000));
    let err = fail(&Write, &c, json!({"file_path": long, "content": as_seen})).await;
    assert_eq!(err.code, Some(2), "{}", err.text);
    assert!(
        err.text.contains("longer than 2000 characters"),
        "{}",
        err.text
    );
    assert_eq!(fs::read_to_string(&long).unwrap(), body);
    // Edit is not refused: its old_string is matched against the file.
    run(
        &Edit,
        &c,
        json!({"file_path": long, "old_string": "short", "new_string": "first"}),
    )
    .await
    .unwrap();
    let edited = body.replacen("short", "first", 1);
    assert_eq!(fs::read_to_string(&long).unwrap(), edited);
    // The edit did not show the model the cut line: Write is still refused.
    let err = fail(&Write, &c, json!({"file_path": long, "content": "x\n"})).await;
    assert!(
        err.text.contains("longer than 2000 characters"),
        "{}",
        err.text
    );
    assert_eq!(fs::read_to_string(&long).unwrap(), edited);

    // Ranges add up to every line, but one of them cut a line: still refused.
    let ranged = dir.path().join("ranged.txt");
    fs::write(&ranged, &body).unwrap();
    text(
        &Read,
        &c,
        json!({"file_path": ranged, "offset": 2, "limit": 1}),
    )
    .await;
    text(
        &Read,
        &c,
        json!({"file_path": ranged, "offset": 1, "limit": 1}),
    )
    .await;
    text(&Read, &c, json!({"file_path": ranged, "offset": 3})).await;
    let err = fail(&Write, &c, json!({"file_path": ranged, "content": "x\n"})).await;
    assert!(
        err.text.contains("longer than 2000 characters"),
        "{}",
        err.text
    );
    assert_eq!(fs::read_to_string(&ranged).unwrap(), body);

    // A long line the model wrote itself was seen whole: reading it back cut does not stop
    // the next Write.
    let own = dir.path().join("own.txt");
    run(&Write, &c, json!({"file_path": own, "content": body}))
        .await
        .unwrap();
    text(&Read, &c, json!({"file_path": own})).await;
    run(&Write, &c, json!({"file_path": own, "content": "new\n"}))
        .await
        .unwrap();

    // Latin-1: `é` is the byte E9, shown as U+FFFD.
    let latin = dir.path().join("latin1.txt");
    fs::write(&latin, b"caf\xe9\n").unwrap();
    let shown = text(&Read, &c, json!({"file_path": latin})).await;
    assert!(shown.contains("caf\u{FFFD}"), "{shown}");
    let err = fail(
        &Write,
        &c,
        json!({"file_path": latin, "content": "caf\u{e9}\n"}),
    )
    .await;
    assert_eq!(err.code, Some(2), "{}", err.text);
    assert!(err.text.contains("not valid UTF-8"), "{}", err.text);
    assert_eq!(fs::read(&latin).unwrap(), b"caf\xe9\n");
}

/// A large file with both CRLF and LF endings: edits far into it land where they should and
/// every other line keeps its own ending.
#[tokio::test]
async fn edit_of_a_long_mixed_ending_file_keeps_every_ending() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let f = dir.path().join("mixed-long.txt");
    let ending = |n: usize| if n.is_multiple_of(3) { "\n" } else { "\r\n" };
    let line = |n: usize| format!("line {n} \u{e9}t\u{e9}");
    let body: String = (0..20_000)
        .map(|n| format!("{}{}", line(n), ending(n)))
        .collect();
    fs::write(&f, &body).unwrap();
    // Every line read (the first Read shows a part): the edits below reach all of them.
    for offset in (1..=20_000).step_by(2000) {
        text(
            &Read,
            &c,
            json!({"file_path": f, "offset": offset, "limit": 2000}),
        )
        .await;
    }
    // Lines 15001 and 15002 end in CRLF, line 15003 in LF.
    run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "line 15001 \u{e9}t\u{e9}\nline 15002 \u{e9}t\u{e9}\nline 15003", "new_string": "A\nB\nline 15003"}),
    )
    .await
    .unwrap();
    run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "15003 \u{e9}t\u{e9}\nline 15004", "new_string": "C\nline 15004"}),
    )
    .await
    .unwrap();
    let expected: String = (0..20_000)
        .map(|n| match n {
            15001 => format!("A{}", ending(n)),
            15002 => format!("B{}", ending(n)),
            15003 => format!("line C{}", ending(n)),
            _ => format!("{}{}", line(n), ending(n)),
        })
        .collect();
    assert_eq!(fs::read_to_string(&f).unwrap(), expected);
    // Deleting a whole line takes its own ending; a replace_all across endings keeps each.
    run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "line 19998 \u{e9}t\u{e9}\nline 19999 \u{e9}t\u{e9}", "new_string": ""}),
    )
    .await
    .unwrap();
    let gone = format!(
        "{}{}{}{}",
        line(19998),
        ending(19998),
        line(19999),
        ending(19999)
    );
    let expected = expected.replace(&gone, "");
    assert_eq!(fs::read_to_string(&f).unwrap(), expected);
    run(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "7 \u{e9}t\u{e9}\nline", "new_string": "7!\nline", "replace_all": true}),
    )
    .await
    .unwrap();
    let expected = expected
        .replace("7 \u{e9}t\u{e9}\r\nline", "7!\r\nline")
        .replace("7 \u{e9}t\u{e9}\nline", "7!\nline");
    assert_eq!(fs::read_to_string(&f).unwrap(), expected);
}

/// Large reads and writes fill the read cache's byte budget: the small file read before them
/// is still known to have been read (only its cached content goes), so it can be edited.
#[tokio::test]
async fn byte_heavy_writes_do_not_forget_an_earlier_read() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let a = dir.path().join("a.txt");
    fs::write(&a, "small\n").unwrap();
    text(&Read, &c, json!({"file_path": a})).await;
    let big = "z".repeat(13 * 1024 * 1024);
    for name in ["b.txt", "c.txt"] {
        run(
            &Write,
            &c,
            json!({"file_path": dir.path().join(name), "content": big}),
        )
        .await
        .unwrap();
    }
    run(
        &Edit,
        &c,
        json!({"file_path": a, "old_string": "small", "new_string": "edited"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&a).unwrap(), "edited\n");
    // The big files are still known too.
    run(
        &Write,
        &c,
        json!({"file_path": dir.path().join("b.txt"), "content": "b\n"}),
    )
    .await
    .unwrap();
}

/// With no home directory, a `~` path cannot be expanded: it is refused, rather than read as
/// a directory named `~` under the working directory.
#[tokio::test]
async fn a_tilde_path_without_a_home_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path()).with_home(None);
    for (tool, input) in [
        (
            &Write as &dyn tool_core::Tool,
            json!({"file_path": "~/x.txt", "content": "x"}),
        ),
        (
            &Edit,
            json!({"file_path": "~/x.txt", "old_string": "", "new_string": "x"}),
        ),
        (&Read, json!({"file_path": "~/x.txt"})),
        (&Read, json!({"file_path": "~"})),
    ] {
        let err = fail(tool, &c, input).await;
        assert!(
            err.text.contains("no home directory"),
            "{}: {}",
            tool.name(),
            err.text
        );
    }
    assert!(!dir.path().join("~").exists(), "a directory `~` was made");
    // With a home directory, `~` is expanded.
    let home = dir.path().join("home");
    fs::create_dir(&home).unwrap();
    let c = ctx(dir.path()).with_home(Some(home.clone()));
    run(&Write, &c, json!({"file_path": "~/x.txt", "content": "x"}))
        .await
        .unwrap();
    assert_eq!(fs::read_to_string(home.join("x.txt")).unwrap(), "x");
}

/// After a Read that showed only part of a file (a PARTIAL view, a range), Edit changes only
/// lines a Read showed: text past what the model saw is not replaced on a guess, and the
/// refusal says which lines to read. Reading that part makes the edit possible.
#[tokio::test]
async fn edit_changes_only_lines_a_read_showed() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let f = dir.path().join("big.txt");
    let body: String = (1..=3000).map(|i| format!("line {i} text\n")).collect();
    fs::write(&f, &body).unwrap();
    let shown = text(&Read, &c, json!({"file_path": f})).await;
    assert!(
        shown.contains("PARTIAL view"),
        "{}",
        &shown[shown.len() - 300..]
    );
    let err = fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "line 2500 text", "new_string": "EDITED"}),
    )
    .await;
    assert!(
        err.text
            .contains("The text to replace is on line 2500, which no Read has shown")
            && err.text.contains("lines 1-2000 were shown"),
        "{}",
        err.text
    );
    // Text that starts on the last line shown and runs past it: only the lines past it
    // are named unseen (found by review 38: "lines 2000-2001, which no Read has shown"
    // beside "lines 1-2000 were shown").
    let err = fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "2000 text\nline 2001", "new_string": "x"}),
    )
    .await;
    assert!(
        err.text
            .contains("on lines 2000-2001, and no Read has shown line 2001:")
            && err.text.contains("lines 1-2000 were shown"),
        "{}",
        err.text
    );
    // replace_all over shown and unshown lines: refused as a whole.
    let err = fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": " text\n", "new_string": " t\n", "replace_all": true}),
    )
    .await;
    assert!(
        err.text.contains("line 2001, which no Read has shown"),
        "{}",
        err.text
    );
    assert_eq!(fs::read_to_string(&f).unwrap(), body);
    // A line that was shown can be edited; the lines shown move with the lines it adds.
    text(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "line 10 text", "new_string": "line ten\nmore\nmore"}),
    )
    .await;
    text(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "line 2000 text", "new_string": "line 2000 seen"}),
    )
    .await;
    let err = fail(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "line 2001 text", "new_string": "x"}),
    )
    .await;
    assert!(
        err.text.contains("on line 2003, which no Read has shown")
            && err.text.contains("lines 1-2002 were shown"),
        "{}",
        err.text
    );
    // Read the part, then edit it.
    text(
        &Read,
        &c,
        json!({"file_path": f, "offset": 2492, "limit": 20}),
    )
    .await;
    text(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "line 2500 text", "new_string": "EDITED"}),
    )
    .await;
    let after = fs::read_to_string(&f).unwrap();
    assert!(after.contains("line ten\nmore\nmore\n") && after.contains("EDITED\n"));
    assert!(after.contains("line 2000 seen\n"));
    assert_eq!(after.lines().count(), 3002);
}

/// A Read of a range the model asked for counts for the whole file, as in Claude Code: Edit
/// may change any line after it (also after a Read past the end). Only a Read cut to a
/// PARTIAL view limits Edit to what it showed, in a file of mixed line endings too.
#[tokio::test]
async fn a_ranged_read_counts_for_the_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let f = dir.path().join("ranged.txt");
    let body: String = (1..=300).map(|i| format!("row {i}\n")).collect();
    fs::write(&f, &body).unwrap();
    text(
        &Read,
        &c,
        json!({"file_path": f, "offset": 100, "limit": 20}),
    )
    .await;
    text(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "row 5\n", "new_string": "row five\n"}),
    )
    .await;
    let g = dir.path().join("past.txt");
    fs::write(&g, &body).unwrap();
    text(&Read, &c, json!({"file_path": g, "offset": 5000})).await;
    text(
        &Edit,
        &c,
        json!({"file_path": g, "old_string": "row 7\n", "new_string": "row seven\n"}),
    )
    .await;
    // Mixed endings: the old string written with CRLF is still checked against what was
    // shown.
    let m = dir.path().join("mixed.txt");
    let mixed: String = (1..=3000)
        .map(|i| format!("l{i}{}", if i % 2 == 0 { "\n" } else { "\r\n" }))
        .collect();
    fs::write(&m, &mixed).unwrap();
    text(&Read, &c, json!({"file_path": m})).await;
    let err = fail(
        &Edit,
        &c,
        json!({"file_path": m, "old_string": "l2501\r\nl2502", "new_string": "x"}),
    )
    .await;
    assert!(
        err.text
            .contains("on lines 2501-2502, which no Read has shown"),
        "{}",
        err.text
    );
    assert_eq!(fs::read_to_string(&m).unwrap(), mixed);
}

/// A Read of a range after a PARTIAL view of the same lines reads again (not "unchanged"),
/// so the range counts for the whole file; a file an Edit creates after the old one was
/// deleted is known whole (the old file's partial Reads do not limit it).
#[tokio::test]
async fn a_range_after_a_partial_view_counts_and_a_created_file_is_whole() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let f = dir.path().join("again.txt");
    let body: String = (1..=3000).map(|i| format!("n {i}\n")).collect();
    fs::write(&f, &body).unwrap();
    let shown = text(&Read, &c, json!({"file_path": f})).await;
    assert!(shown.contains("PARTIAL view"));
    let again = text(&Read, &c, json!({"file_path": f, "limit": 2000})).await;
    assert!(!again.contains("unchanged"), "{}", &again[..100]);
    text(
        &Edit,
        &c,
        json!({"file_path": f, "old_string": "n 2500\n", "new_string": "m 2500\n"}),
    )
    .await;

    let g = dir.path().join("recreated.txt");
    fs::write(&g, &body).unwrap();
    text(&Read, &c, json!({"file_path": g})).await;
    fs::remove_file(&g).unwrap();
    text(
        &Edit,
        &c,
        json!({"file_path": g, "old_string": "", "new_string": "a\nb\nc\n"}),
    )
    .await;
    text(
        &Edit,
        &c,
        json!({"file_path": g, "old_string": "a\n", "new_string": "z\n"}),
    )
    .await;
    text(&Write, &c, json!({"file_path": g, "content": "whole\n"})).await;
    assert_eq!(fs::read_to_string(&g).unwrap(), "whole\n");
}

/// A Bash command that reads one file and shows it counts as reading it for the
/// read-before-edit rule, as in Claude Code: after `cat` of the whole file, Edit and Write
/// both may change it; after `head` (or `sed -n`, `grep` on the one file) Edit may, Write
/// only after a Read of every line. What showed nothing, a pipeline, a file the command did
/// not read (a decoy behind a link, a quoted `~`, a name with a leading space) or a file
/// changed since does not count.
#[tokio::test]
async fn a_bash_read_of_one_file_counts_as_a_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let c = ctx(&root);
    let bash = tools_builtin::Bash::default();
    let f = root.join("notes.txt");
    fs::write(&f, "one\ntwo\nthree\n").unwrap();
    let edit = |old: &str, new: &str| json!({"file_path": f, "old_string": old, "new_string": new});
    let not_read = tool_use_error(NOT_READ_MESSAGE);

    // Nothing shown, a pipeline: not a read.
    for command in [
        "head -n 0 notes.txt",
        "grep nothing-like-this notes.txt",
        "cat notes.txt | head -n 1",
    ] {
        let _ = run(&bash, &c, json!({"command": command})).await;
        let e = fail(&Edit, &c, edit("two", "2")).await;
        assert_eq!(e.text, not_read, "{command}");
    }
    // Decoys: the command read another file than the path names for Edit.
    fs::create_dir_all(root.join("elsewhere/sub")).unwrap();
    fs::write(root.join("elsewhere/notes.txt"), "decoy\n").unwrap();
    std::os::unix::fs::symlink(root.join("elsewhere/sub"), root.join("link")).unwrap();
    fs::create_dir_all(root.join("~")).unwrap();
    fs::write(root.join("~/notes.txt"), "decoy\n").unwrap();
    fs::write(root.join(" notes.txt"), "decoy\n").unwrap();
    let home_ctx = c.clone().with_home(Some(root.clone()));
    for command in [
        "cat link/../notes.txt",
        "cat '~/notes.txt'",
        "cat ' notes.txt'",
    ] {
        run(&bash, &home_ctx, json!({"command": command}))
            .await
            .unwrap();
        let e = fail(&Edit, &home_ctx, edit("two", "2")).await;
        assert_eq!(e.text, not_read, "{command}");
    }

    // `head`: counted, and a Read right after it shows the file (the model saw it in a
    // Bash result, not a Read's: no "unchanged" stub).
    run(&bash, &c, json!({"command": "head -n 1 notes.txt"}))
        .await
        .unwrap();
    let shown = text(&Read, &c, json!({"file_path": f})).await;
    assert!(shown.contains("three"), "{shown}");
    // Edit anywhere; Write refused until every line is read.
    let g = root.join("g.txt");
    fs::write(&g, "alpha\nbeta\ngamma\n").unwrap();
    run(&bash, &c, json!({"command": "sed -n 1p g.txt"}))
        .await
        .unwrap();
    run(
        &Edit,
        &c,
        json!({"file_path": g, "old_string": "gamma", "new_string": "3"}),
    )
    .await
    .unwrap();
    assert_eq!(fs::read_to_string(&g).unwrap(), "alpha\nbeta\n3\n");
    let e = fail(&Write, &c, json!({"file_path": g, "content": "x\n"})).await;
    assert!(e.text.contains("only partly shown"), "{}", e.text);

    // Output cut to a preview (the model saw its first lines only): not a read.
    let big = root.join("big.txt");
    let lines: String = (0..5000).map(|i| format!("filler line {i}\n")).collect();
    fs::write(&big, format!("{lines}the unique tail\n")).unwrap();
    run(&bash, &c, json!({"command": "cat big.txt"}))
        .await
        .unwrap();
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": big, "old_string": "the unique tail", "new_string": "x"}),
    )
    .await;
    assert_eq!(e.text, not_read);

    // `cat` of the whole file: Write may replace it.
    let h = root.join("h.txt");
    fs::write(&h, "alpha\nbeta\n").unwrap();
    run(
        &bash,
        &c,
        json!({"command": format!("cat {}", h.display())}),
    )
    .await
    .unwrap();
    run(&Write, &c, json!({"file_path": h, "content": "gamma\n"}))
        .await
        .unwrap();
    assert_eq!(fs::read_to_string(&h).unwrap(), "gamma\n");

    // Changed on disk after the command: refused as modified.
    let k = root.join("k.txt");
    fs::write(&k, "a\n").unwrap();
    run(&bash, &c, json!({"command": "grep -n a k.txt"}))
        .await
        .unwrap();
    fs::write(&k, "a changed\n").unwrap();
    bump_mtime(&k);
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": k, "old_string": "a", "new_string": "b"}),
    )
    .await;
    assert!(e.text.contains("modified"), "{}", e.text);
}

/// An edit whose new text differs from the old only in what the file's own style overrides
/// (straight quotes where the file has curly ones, LF where it has CRLF) would change
/// nothing: it is refused with Claude Code's words, not answered "updated successfully".
#[tokio::test]
async fn an_edit_that_would_change_nothing_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let quotes = dir.path().join("quotes.txt");
    fs::write(&quotes, "say \u{201c}hi\u{201d} and don\u{2019}t\n").unwrap();
    let crlf = dir.path().join("win.txt");
    fs::write(&crlf, "a\r\nb\r\n").unwrap();
    text(&Read, &c, json!({"file_path": quotes})).await;
    text(&Read, &c, json!({"file_path": crlf})).await;
    for (file, old, new) in [
        (&quotes, "\"hi\"", "\u{201c}hi\u{201d}"),
        (&quotes, "don't", "don\u{2019}t"),
        (&crlf, "a\r\nb", "a\nb"),
    ] {
        let before = fs::read(file).unwrap();
        let err = fail(
            &Edit,
            &c,
            json!({"file_path": file, "old_string": old, "new_string": new}),
        )
        .await;
        assert!(
            err.text.contains("Original and edited file match exactly"),
            "{old:?} -> {new:?}: {}",
            err.text
        );
        assert_eq!(fs::read(file).unwrap(), before);
    }
    // A real change in such a file still goes through, in the file's style.
    run(
        &Edit,
        &c,
        json!({"file_path": quotes, "old_string": "\"hi\"", "new_string": "\"bye\""}),
    )
    .await
    .unwrap();
    assert_eq!(
        fs::read_to_string(&quotes).unwrap(),
        "say \u{201c}bye\u{201d} and don\u{2019}t\n"
    );
}

/// A path ending in `/` names a directory: a Write of `newdir/` made a file `newdir`, and a
/// Read of `a.txt/` read the file (POSIX refuses both).
#[tokio::test]
async fn a_path_ending_in_a_slash_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let file = dir.path().join("a.txt");
    fs::write(&file, "x\n").unwrap();
    let new_dir = format!("{}/newdir/", dir.path().display());
    let err = fail(&Write, &c, json!({"file_path": new_dir, "content": "x"})).await;
    assert!(err.text.contains("ends with /,"), "{}", err.text);
    assert!(!dir.path().join("newdir").exists());
    let slashed = format!("{}/", file.display());
    let err = fail(&Read, &c, json!({"file_path": slashed})).await;
    assert!(
        err.text.contains("names a directory, not a file"),
        "{}",
        err.text
    );
    let err = fail(
        &Edit,
        &c,
        json!({"file_path": slashed, "old_string": "x", "new_string": "y"}),
    )
    .await;
    assert!(err.text.contains("ends with /,"), "{}", err.text);
    assert_eq!(fs::read_to_string(&file).unwrap(), "x\n");
    // So does a path ending in `/.` or `/..`.
    for tail in ["/.", "/.."] {
        let err = fail(
            &Write,
            &c,
            json!({"file_path": format!("{}/newer{tail}", dir.path().display()), "content": "x"}),
        )
        .await;
        assert!(err.text.contains("names a directory"), "{}", err.text);
    }
    assert!(!dir.path().join("newer").exists());
}

/// A path a deny rule forbids is refused by the file tools' own validation, before the file
/// system is looked at (Claude Code's `validateInput`): the same answer whether the file
/// exists or not, and never "read it first" for a file the model may not edit. (Write of an
/// existing denied file said "File has not been read yet", sending the model to Read it;
/// Read said "does not exist" for a missing denied file and denied an existing one.)
#[tokio::test]
async fn a_denied_path_is_refused_before_the_file_system_is_looked_at() {
    use tool_core::{RuleSource, SourcedRule, ToolPermissionContext};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    fs::create_dir_all(root.join("locked")).unwrap();
    fs::create_dir_all(root.join("secrets")).unwrap();
    fs::write(root.join("locked/exists.txt"), "x\n").unwrap();
    fs::write(root.join("secrets/key.txt"), "k\n").unwrap();
    let c = ctx(&root).with_permission(ToolPermissionContext {
        deny: ["Edit(./locked/**)", "Read(./secrets/**)"]
            .iter()
            .map(|r| SourcedRule {
                source: RuleSource::ProjectSettings,
                rule: (*r).to_owned(),
            })
            .collect(),
        ..Default::default()
    });
    let denied =
        tool_use_error("File is in a directory that is denied by your permission settings.");
    for name in [
        "locked/exists.txt",
        "locked/missing.txt",
        "secrets/key.txt",
        "secrets/nope.txt",
    ] {
        let path = root.join(name);
        let write = fail(&Write, &c, json!({"file_path": path, "content": "y"})).await;
        assert_eq!(write.text, denied, "Write {name}");
        assert_eq!(write.code, Some(1), "Write {name}");
        let edit = fail(
            &Edit,
            &c,
            json!({"file_path": path, "old_string": "x", "new_string": "y"}),
        )
        .await;
        assert_eq!(edit.text, denied, "Edit {name}");
    }
    for name in ["secrets/key.txt", "secrets/nope.txt", "secrets"] {
        let read = fail(&Read, &c, json!({"file_path": root.join(name)})).await;
        assert_eq!(read.text, denied, "Read {name}");
    }
    // Reading what only an Edit rule covers is not refused; the files are as they were.
    assert_eq!(
        text(
            &Read,
            &c,
            json!({"file_path": root.join("locked/exists.txt")})
        )
        .await,
        "     1\u{2192}x"
    );
    assert_eq!(
        fs::read_to_string(root.join("secrets/key.txt")).unwrap(),
        "k\n"
    );
    assert!(!root.join("locked/missing.txt").exists());
}
