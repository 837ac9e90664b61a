//! Black-box review 35 of the file tools' encodings: an Edit of a CR CR LF file with text
//! copied from Read's view, a notebook with a UTF-8 byte order mark (and a UTF-16 one), a
//! Write over a damaged UTF-16 file, hints when `old_string` differs from the file only in
//! Unicode normalization or invisible characters, and U+FFFD in `old_string` where the file
//! also has bytes that are not UTF-8 (which Read shows as U+FFFD too).

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{ctx, fail, text};
use serde_json::json;
use tools_builtin::{Edit, NotebookEdit, Read, Write};

fn put(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path
}

/// Finding 1: a file whose lines end in CR CR LF. Read shows each line with its first CR
/// (`1,alice\r`); text copied from that view (`\r\n` being a CR and then the line break)
/// is matched as given, and the new text's line breaks are written with the file's
/// ending. The file is not touched by an edit that fails.
#[tokio::test]
async fn a_cr_cr_lf_file_is_edited_with_text_copied_from_reads_view() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let csv = put(
        dir.path(),
        "win.csv",
        b"id,name\r\r\n1,alice\r\r\n2,bob\r\r\n",
    );
    let shown = text(&Read, &c, json!({"file_path": csv})).await;
    assert!(shown.contains("1,alice\r\n"), "{shown:?}");

    text(
        &Edit,
        &c,
        json!({"file_path": csv, "old_string": "1,alice\r\n2,bob\r",
               "new_string": "1,alice\r\n2,robert\r"}),
    )
    .await;
    assert_eq!(
        fs::read(&csv).unwrap(),
        b"id,name\r\r\n1,alice\r\r\n2,robert\r\r\n"
    );

    // A line added after one of them, in the same view: it ends as the others do.
    text(
        &Edit,
        &c,
        json!({"file_path": csv, "old_string": "2,robert\r",
               "new_string": "2,robert\r\n3,carol\r"}),
    )
    .await;
    assert_eq!(
        fs::read(&csv).unwrap(),
        b"id,name\r\r\n1,alice\r\r\n2,robert\r\r\n3,carol\r\r\n"
    );

    // Not found: the file stays byte for byte.
    let before = fs::read(&csv).unwrap();
    let f = fail(
        &Edit,
        &c,
        json!({"file_path": csv, "old_string": "1,alice\r\n9,zed\r", "new_string": "x"}),
    )
    .await;
    assert!(
        f.text.contains("String to replace not found in file."),
        "{}",
        f.text
    );
    assert_eq!(fs::read(&csv).unwrap(), before);

    // A file with both endings, one line CR CR LF: the same.
    let mixed = put(dir.path(), "mixed.txt", b"x\r\r\ny\nz\r\n");
    text(&Read, &c, json!({"file_path": mixed})).await;
    text(
        &Edit,
        &c,
        json!({"file_path": mixed, "old_string": "x\r\ny", "new_string": "X\r\nY"}),
    )
    .await;
    assert_eq!(fs::read(&mixed).unwrap(), b"X\r\r\nY\nz\r\n");

    // A plain CRLF file still takes CRLF text (normalised) and LF text.
    let win = put(dir.path(), "win.txt", b"one\r\ntwo\r\nthree\r\n");
    text(&Read, &c, json!({"file_path": win})).await;
    text(
        &Edit,
        &c,
        json!({"file_path": win, "old_string": "one\r\ntwo", "new_string": "one\r\n2"}),
    )
    .await;
    text(
        &Edit,
        &c,
        json!({"file_path": win, "old_string": "2\nthree", "new_string": "2\n3\nfour"}),
    )
    .await;
    assert_eq!(fs::read(&win).unwrap(), b"one\r\n2\r\n3\r\nfour\r\n");
}

fn notebook_json() -> String {
    let nb = json!({"cells": [
            {"cell_type": "code", "execution_count": null, "id": "c1", "metadata": {},
             "outputs": [], "source": ["print('h\u{e9}llo')\n", "x=1"]},
            {"cell_type": "markdown", "id": "c2", "metadata": {}, "source": ["# T\u{ed}tulo"]}
        ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
    serde_json::to_string_pretty(&nb).unwrap() + "\n"
}

/// Finding 2: a notebook that starts with a UTF-8 byte order mark is read (the mark
/// skipped), and NotebookEdit writes it back with the mark, the rest as the same edit of
/// the notebook without one. A UTF-16 notebook (with its byte order mark) is read and
/// edited too, kept UTF-16; a damaged one is refused as UTF-16.
#[tokio::test]
async fn a_notebook_with_a_byte_order_mark_is_read_and_edited_keeping_it() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let plain_text = notebook_json();
    let plain = put(dir.path(), "plain.ipynb", plain_text.as_bytes());
    let mut bom_bytes = b"\xEF\xBB\xBF".to_vec();
    bom_bytes.extend_from_slice(plain_text.as_bytes());
    let bom = put(dir.path(), "bom.ipynb", &bom_bytes);
    let mut utf16 = vec![0xFF, 0xFE];
    for unit in plain_text.encode_utf16() {
        utf16.extend_from_slice(&unit.to_le_bytes());
    }
    let u16 = put(dir.path(), "u16.ipynb", &utf16);

    let edit =
        |p: &PathBuf| json!({"notebook_path": p, "cell_id": "c2", "new_source": "# Nuevo\nline2"});
    let plain_shown = text(&Read, &c, json!({"file_path": plain})).await;
    text(&NotebookEdit, &c, edit(&plain)).await;
    let edited = fs::read(&plain).unwrap();
    assert_ne!(edited, plain_text.as_bytes());

    let shown = text(&Read, &c, json!({"file_path": bom})).await;
    assert_eq!(
        shown.replace("bom.ipynb", "plain.ipynb"),
        plain_shown,
        "the notebook with a BOM reads as the one without"
    );
    text(&NotebookEdit, &c, edit(&bom)).await;
    let mut want = b"\xEF\xBB\xBF".to_vec();
    want.extend_from_slice(&edited);
    assert_eq!(fs::read(&bom).unwrap(), want);

    // UTF-16 little-endian: read, edited, written back UTF-16 with its mark.
    let shown = text(&Read, &c, json!({"file_path": u16})).await;
    assert_eq!(shown.replace("u16.ipynb", "plain.ipynb"), plain_shown);
    text(&NotebookEdit, &c, edit(&u16)).await;
    let mut want = vec![0xFF, 0xFE];
    for unit in String::from_utf8(edited.clone()).unwrap().encode_utf16() {
        want.extend_from_slice(&unit.to_le_bytes());
    }
    assert_eq!(fs::read(&u16).unwrap(), want);

    // A UTF-16 notebook with an unpaired surrogate: said to be UTF-16, not "not UTF-8".
    let mut broken = utf16.clone();
    broken.extend_from_slice(&[0x00, 0xD8]);
    let bad = put(dir.path(), "bad16.ipynb", &broken);
    let f = fail(&Read, &c, json!({"file_path": bad})).await;
    assert!(f.text.contains("UTF-16"), "{}", f.text);
    assert!(f.text.contains("unpaired surrogate"), "{}", f.text);
    assert!(!f.text.contains("UTF-8"), "{}", f.text);
}

/// Finding 3: Write over a UTF-16 file with an unpaired surrogate (which Read showed as
/// U+FFFD) is refused saying so, as Edit's refusal does, without sending the model to Edit
/// (which refuses the file too) or to iconv.
#[tokio::test]
async fn write_over_a_damaged_utf16_file_says_what_is_wrong_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let bytes = b"\xff\xfea\x00\n\x00\x00\xd8b\x00\n\x00";
    let lone = put(dir.path(), "lone16.txt", bytes);
    text(&Read, &c, json!({"file_path": lone})).await;
    let f = fail(&Write, &c, json!({"file_path": lone, "content": "a\nb\n"})).await;
    assert!(
        f.text.contains("UTF-16") && f.text.contains("unpaired surrogate at byte 6"),
        "{}",
        f.text
    );
    assert!(!f.text.contains("Edit instead"), "{}", f.text);
    assert!(!f.text.contains("iconv"), "{}", f.text);
    assert!(!f.text.contains("not valid UTF-8"), "{}", f.text);
    let e = fail(
        &Edit,
        &c,
        json!({"file_path": lone, "old_string": "a", "new_string": "A"}),
    )
    .await;
    assert!(
        e.text.contains("unpaired surrogate at byte 6"),
        "{}",
        e.text
    );
    assert_eq!(fs::read(&lone).unwrap(), bytes);

    // An odd length: the stray last byte is named.
    let odd_bytes = b"\xff\xfea\x00\n\x00b";
    let odd = put(dir.path(), "odd16.txt", odd_bytes);
    text(&Read, &c, json!({"file_path": odd})).await;
    let f = fail(&Write, &c, json!({"file_path": odd, "content": "a\n"})).await;
    assert!(
        f.text.contains("UTF-16") && f.text.contains("odd number of bytes"),
        "{}",
        f.text
    );
    assert!(!f.text.contains("Edit instead"), "{}", f.text);
    assert_eq!(fs::read(&odd).unwrap(), odd_bytes);
}

/// The first line and the `String:` line of Claude Code's refusal, and the hint after.
fn hint_of(text: &str, old: &str) -> String {
    let body = text
        .strip_prefix("<tool_use_error>")
        .and_then(|t| t.strip_suffix("</tool_use_error>"))
        .unwrap_or(text);
    let want = format!("String to replace not found in file.\nString: {old}\n");
    assert!(body.starts_with(&want), "{body:?}");
    let hint = &body[want.len()..];
    assert!(!hint.is_empty() && !hint.contains('\n'), "{body:?}");
    hint.to_owned()
}

/// Finding 4: `old_string` not found, but found once the Unicode normalization form is
/// ignored (the file in NFD, the string in NFC, or the reverse) or once the file's
/// zero-width characters are: the refusal keeps Claude Code's text and adds a one-line
/// hint saying so. The file is not changed.
#[tokio::test]
async fn not_found_hints_at_normalization_and_invisible_characters() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let nfd_bytes = "cafe\u{301} time\n".as_bytes();
    let nfd = put(dir.path(), "nfd.txt", nfd_bytes);
    text(&Read, &c, json!({"file_path": nfd})).await;
    let old = "caf\u{e9} time";
    let f = fail(
        &Edit,
        &c,
        json!({"file_path": nfd, "old_string": old, "new_string": "coffee time"}),
    )
    .await;
    let hint = hint_of(&f.text, old);
    assert!(
        hint.contains("the file has this text with some characters decomposed (Unicode NFD")
            && hint.contains("where old_string has them composed (NFC)"),
        "{hint}"
    );
    assert_eq!(fs::read(&nfd).unwrap(), nfd_bytes);

    // The reverse: the file composed, the string decomposed.
    let nfc = put(dir.path(), "nfc.txt", "caf\u{e9} time\n".as_bytes());
    text(&Read, &c, json!({"file_path": nfc})).await;
    let old = "cafe\u{301} time";
    let f = fail(
        &Edit,
        &c,
        json!({"file_path": nfc, "old_string": old, "new_string": "coffee time"}),
    )
    .await;
    let hint = hint_of(&f.text, old);
    assert!(
        hint.contains("the file has this text with some characters composed (Unicode NFC)")
            && hint.contains("where old_string has them decomposed (NFD)"),
        "{hint}"
    );

    // A zero-width space inside the text.
    let zw_bytes = "a\u{200b}b c\u{200d}d\n".as_bytes();
    let zw = put(dir.path(), "zw.txt", zw_bytes);
    text(&Read, &c, json!({"file_path": zw})).await;
    let f = fail(
        &Edit,
        &c,
        json!({"file_path": zw, "old_string": "ab", "new_string": "X"}),
    )
    .await;
    let hint = hint_of(&f.text, "ab");
    assert!(hint.contains("U+200B"), "{hint}");
    assert!(
        !hint.contains("U+200D"),
        "only those inside the text: {hint}"
    );
    assert_eq!(fs::read(&zw).unwrap(), zw_bytes);

    // Invisible characters in old_string that the file does not have.
    let plain = put(dir.path(), "plain.txt", b"hello world\n");
    text(&Read, &c, json!({"file_path": plain})).await;
    let old = "hello\u{200b} world";
    let f = fail(
        &Edit,
        &c,
        json!({"file_path": plain, "old_string": old, "new_string": "X"}),
    )
    .await;
    let hint = hint_of(&f.text, old);
    assert!(
        hint.contains("old_string has invisible characters (U+200B)"),
        "{hint}"
    );

    // Text that is not there in any form: no hint.
    let f = fail(
        &Edit,
        &c,
        json!({"file_path": zw, "old_string": "zz", "new_string": "X"}),
    )
    .await;
    assert_eq!(
        f.text,
        "<tool_use_error>String to replace not found in file.\nString: zz</tool_use_error>"
    );
}

/// Finding 5: a file with a byte that is not UTF-8 and a real U+FFFD on two lines that
/// Read shows alike (`x � y`). An Edit of `x \u{FFFD} y` without replace_all matches two
/// lines as the model sees the text: it is refused as ambiguous (Claude Code's text, and a
/// note on the bytes), and the file stays as it was.
#[tokio::test]
async fn fffd_in_old_string_counts_the_matches_the_model_sees() {
    let dir = tempfile::tempdir().unwrap();
    let c = ctx(dir.path());
    let bytes = b"x \xff y\nx \xef\xbf\xbd y\n";
    let p = put(dir.path(), "fffd.txt", bytes);
    let shown = text(&Read, &c, json!({"file_path": p})).await;
    assert_eq!(shown.matches("x \u{FFFD} y").count(), 2, "{shown}");
    let f = fail(
        &Edit,
        &c,
        json!({"file_path": p, "old_string": "x \u{FFFD} y", "new_string": "Z"}),
    )
    .await;
    assert!(
        f.text.contains(
            "Found 2 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true."
        ),
        "{}",
        f.text
    );
    assert!(f.text.contains("not UTF-8"), "{}", f.text);
    assert_eq!(fs::read(&p).unwrap(), bytes);

    // One line alone, found by its context, is edited (the stray byte kept).
    text(
        &Edit,
        &c,
        json!({"file_path": p, "old_string": "y\nx \u{FFFD} y", "new_string": "y\nZ"}),
    )
    .await;
    assert_eq!(fs::read(&p).unwrap(), b"x \xff y\nZ\n");
}
