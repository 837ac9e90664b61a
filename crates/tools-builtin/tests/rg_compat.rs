//! Grep's output compared line for line with the `rg` binary over a generated corpus, for
//! each option. Skipped (with a note) when `rg` is not installed, except under `CI=true`,
//! where it fails: CI installs Debian's ripgrep.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use tools_builtin::Grep;

/// Whether `rg` runs here. Missing: fails under `CI=true` (`.ci/run` installs ripgrep),
/// otherwise prints a notice and the test returns early.
fn rg_available() -> bool {
    let available = Command::new("rg")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !available {
        let msg = "rg is not installed (Debian's ripgrep): the ripgrep comparison cannot run";
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("{msg}");
        }
        eprintln!("SKIPPED: {msg}");
    }
    available
}

/// A small deterministic corpus: nested dirs, hidden files, an ignored dir, long lines,
/// binary files, CRLF lines.
fn corpus(root: &Path) {
    let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let words = [
        "foo1", "bar", "Foo22", "baz", "start", "end", "qux", "FOO3", "alpha", "omega",
    ];
    let exts = ["rs", "py", "txt", "md"];
    for d in 0..6 {
        for f in 0..8 {
            let dir = match d {
                0 => root.to_path_buf(),
                1 => root.join(".hidden"),
                2 => root.join("ignored"),
                _ => root.join(format!("d{d}/sub{}", f % 2)),
            };
            fs::create_dir_all(&dir).unwrap();
            let mut body = String::new();
            let lines = 5 + next() % 30;
            for _ in 0..lines {
                let n = 1 + next() % 8;
                let line: Vec<&str> = (0..n)
                    .map(|_| words[(next() % words.len() as u64) as usize])
                    .collect();
                body.push_str(&line.join(" "));
                body.push_str(if next() % 9 == 0 { "\r\n" } else { "\n" });
            }
            if f == 3 {
                body.push_str(&"foo1 ".repeat(150));
                body.push('\n');
            }
            let ext = exts[f % exts.len()];
            fs::write(dir.join(format!("f{f}.{ext}")), body).unwrap();
        }
    }
    fs::write(root.join("bin.dat"), b"foo1\0binary").unwrap();
    fs::create_dir_all(root.join(".git")).unwrap();
    fs::write(root.join(".git/HEAD"), "foo1 in git\n").unwrap();
    fs::write(root.join(".gitignore"), "ignored/\n").unwrap();
}

const CLAUDE_RG_FLAGS: &[&str] = &[
    "--no-config",
    "--color=never",
    "--no-heading",
    "--hidden",
    "--max-columns=500",
    "--sort=path",
    "--glob=!.git",
    "--glob=!.svn",
    "--glob=!.hg",
    "--glob=!.bzr",
    "--glob=!.jj",
    "--glob=!.sl",
];

fn rg(root: &Path, args: &[&str]) -> Vec<String> {
    let out = Command::new("rg")
        .args(CLAUDE_RG_FLAGS)
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

async fn ours(root: &Path, input: Value) -> Vec<String> {
    let c = common::ctx(root);
    let out = common::run(&Grep, &c, input).await.unwrap();
    out.structured["content"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn content_mode_matches_rg_line_for_line() {
    if !rg_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let root = dir.path();
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"pattern": "foo\\d+"}), vec!["-n", "foo\\d+"]),
        (
            json!({"pattern": "foo\\d+", "-n": false}),
            vec!["-N", "foo\\d+"],
        ),
        (
            json!({"pattern": "foo\\d+", "-i": true}),
            vec!["-n", "-i", "foo\\d+"],
        ),
        (
            json!({"pattern": "omega", "-C": 2}),
            vec!["-n", "-C", "2", "omega"],
        ),
        (
            json!({"pattern": "omega", "-A": 1, "-B": 3}),
            vec!["-n", "-A", "1", "-B", "3", "omega"],
        ),
        (
            json!({"pattern": "ba[rz]", "-o": true}),
            vec!["-n", "-o", "ba[rz]"],
        ),
        (
            json!({"pattern": "start.*\\n.*end", "multiline": true}),
            vec!["-n", "-U", "--multiline-dotall", "start.*\\n.*end"],
        ),
        (
            json!({"pattern": "alpha", "glob": "*.rs"}),
            vec!["-n", "--glob", "*.rs", "alpha"],
        ),
        (
            json!({"pattern": "alpha", "type": "py"}),
            vec!["-n", "--type", "py", "alpha"],
        ),
        (json!({"pattern": "qux$"}), vec!["-n", "qux$"]),
    ];
    for (mut input, args) in cases {
        input["output_mode"] = json!("content");
        input["head_limit"] = json!(0);
        let expected = rg(root, &args);
        assert!(
            !expected.is_empty(),
            "rg found nothing for {args:?}: the case tests nothing"
        );
        assert_eq!(ours(root, input.clone()).await, expected, "input {input}");
    }
}

#[tokio::test]
async fn files_and_count_modes_match_rg() {
    if !rg_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let root = dir.path();
    let c = common::ctx(root);
    let out = common::run(&Grep, &c, json!({"pattern": "foo1", "head_limit": 0}))
        .await
        .unwrap();
    let mut files: Vec<String> = out.structured["filenames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    files.sort();
    let mut expected = rg(root, &["-l", "foo1"]);
    expected.sort();
    assert_eq!(files, expected);
    assert_eq!(
        ours(
            root,
            json!({"pattern": "foo1", "output_mode": "count", "head_limit": 0})
        )
        .await,
        rg(root, &["-c", "foo1"])
    );
}
