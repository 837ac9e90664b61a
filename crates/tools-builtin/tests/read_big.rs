//! Read streams: a 256 MiB file (1 GiB in `cargo xtask`-style manual runs: change `SIZE`) read with offset/limit stays far below its size in memory.
//! In its own test binary so that the process's peak RSS belongs to this test alone.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::io::Write as _;

use serde_json::json;
use tools_builtin::Read;

/// The sparse file size: 256 MiB keeps the debug-build test at a few seconds while still
/// being four times the memory bound checked below.
const SIZE: u64 = 256 << 20;

fn peak_rss_kib() -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

#[tokio::test]
async fn huge_file_with_offset_and_limit_is_streamed() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("huge.log");
    {
        let mut file = fs::File::create(&f).unwrap();
        for i in 1..=1000 {
            writeln!(file, "line {i}").unwrap();
        }
        // The rest is a hole: SIZE bytes on paper, no disk used.
        file.set_len(SIZE).unwrap();
    }
    let before = peak_rss_kib();
    let c = common::ctx(dir.path());
    let out = common::text(
        &Read,
        &c,
        json!({"file_path": f, "offset": 500, "limit": 2}),
    )
    .await;
    assert_eq!(out, "   500\u{2192}line 500\n   501\u{2192}line 501");
    if let (Some(before), Some(after)) = (before, peak_rss_kib()) {
        assert!(
            after < before + 64 * 1024,
            "peak RSS grew from {before} KiB to {after} KiB"
        );
    }
    // The full-file hash was computed while streaming.
    let state = c.file_state().get(&f).unwrap();
    assert!(state.disk_hash.is_some());

    // A limit far past the token cap over millions of real lines: measured while
    // streaming (the error gives the range's size), never held in memory.
    let lines = dir.path().join("lines.log");
    {
        let mut file = std::io::BufWriter::new(fs::File::create(&lines).unwrap());
        for i in 1..=3_000_000 {
            writeln!(file, "line {i:07}").unwrap();
        }
    }
    let before = peak_rss_kib();
    for input in [
        json!({"file_path": lines, "offset": 1, "limit": 100_000_000}),
        json!({"file_path": lines, "limit": 100_000_000, "allow_large": true}),
    ] {
        let err = common::run(&Read, &c, input).await.unwrap_err().text;
        assert!(err.contains("exceeds"), "{err}");
        // Six columns and an arrow of three bytes (up to line 999,999), then seven.
        let tokens =
            (999_999 * (6 + 3 + 12 + 1) + 2_000_001 * (7 + 3 + 12 + 1) - 1_usize).div_ceil(4);
        assert!(err.contains(&format!("({tokens} tokens)")), "{err}");
    }
    if let (Some(before), Some(after)) = (before, peak_rss_kib()) {
        assert!(
            after < before + 64 * 1024,
            "peak RSS grew from {before} KiB to {after} KiB"
        );
    }
}
