//! `memory`: the peak resident set (`VmHWM`, read by the process itself) of one process
//! running the Bash tool on a command that prints 1 GiB, and the Read tool on the last lines
//! of a 1 GiB file; each against the same binary doing the same call on a tiny input.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::Section;
use super::build::{Exes, Kind};
use super::process;
use super::report::{Figure, Row, Target, Unit};

const SECTION: &str = "memory";
/// Bytes printed and read: 1 GiB.
pub const GIB: u64 = 1 << 30;
/// The length of every line of the big file (so that it is exactly 1 GiB).
pub const LINE_LEN: u64 = 64;
/// The ceiling for both figures, in MiB.
pub const LIMIT_MIB: f64 = 64.0;
const RUNS: usize = 5;

/// The `peak_rss_kib=N` line `tool_once --peak-rss` prints last on standard error.
pub fn parse_peak_rss(stderr: &str) -> Option<u64> {
    stderr
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("peak_rss_kib="))
        .and_then(|n| n.parse().ok())
}

/// Line `n` (1-based) of the big file, newline included: exactly [`LINE_LEN`] bytes.
pub fn big_line(n: u64) -> String {
    format!(
        "{n:010} the quick brown fox jumps over the lazy dog {:08x}\n",
        n.wrapping_mul(2_654_435_761) & 0xffff_ffff
    )
}

/// A file deleted when dropped.
struct TempFile(PathBuf);

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn write_lines(path: &Path, lines: u64) -> crate::Result<TempFile> {
    let file = TempFile(path.to_path_buf());
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    for n in 1..=lines {
        w.write_all(big_line(n).as_bytes())?;
    }
    w.flush()?;
    Ok(file)
}

/// Peak RSS in MiB of `tool_once --peak-rss TOOL INPUT`, over [`RUNS`] runs; each run's output
/// must contain `expect`.
fn peak(
    tool_once: &Path,
    dir: &Path,
    tool: &str,
    input: &serde_json::Value,
    expect: &str,
) -> crate::Result<Figure> {
    let mut mib = Vec::new();
    for _ in 0..RUNS {
        let (_, out) = process::timed(
            Command::new(tool_once)
                .args(["--peak-rss", tool, &input.to_string()])
                .current_dir(dir),
        )?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !stdout.contains(expect) {
            return Err(format!(
                "{tool} printed no `{expect}`: {}",
                stdout.chars().take(300).collect::<String>()
            )
            .into());
        }
        let kib = parse_peak_rss(&String::from_utf8_lossy(&out.stderr))
            .ok_or("tool_once printed no peak_rss_kib")?;
        mib.push(kib as f64 / 1024.0);
    }
    Ok(Figure::from_samples(&mib).ok_or("no runs")?)
}

/// Runs the section.
pub fn run(root: &Path, exes: &Exes, out: &mut Section) -> crate::Result {
    let tool_once = exes.get(Kind::Example, "tool_once")?;
    let dir = root.join("target/bench");
    std::fs::create_dir_all(&dir)?;

    println!("==> memory: Bash printing 1 GiB");
    let big = json!({
        "command": format!("yes 'the quick brown fox jumps over the lazy dog' | head -c {GIB}"),
        "timeout": 600_000
    });
    let small = json!({"command": "echo hi"});
    let row = peak(tool_once, &dir, "Bash", &big, "the quick brown fox").and_then(|ours| {
        let base = peak(tool_once, &dir, "Bash", &small, "hi")?;
        Ok(Row::compare(
            SECTION,
            "peak RSS, Bash tool on a command printing 1 GiB",
            Unit::MiB,
            ours,
            ("same binary, `echo hi`", base),
            Target::Below(LIMIT_MIB),
        ))
    });
    out.rows.push(
        row.unwrap_or_else(|e| {
            Row::failed(SECTION, "peak RSS, Bash printing 1 GiB", e.to_string())
        }),
    );

    println!("==> memory: Read of a 1 GiB file (writing it first)");
    let lines = GIB / LINE_LEN;
    let row = (|| -> crate::Result<Row> {
        let big_file = write_lines(&dir.join("read-1gib.txt"), lines)?;
        let small_file = write_lines(&dir.join("read-small.txt"), 100)?;
        let last = big_line(lines);
        let ours = peak(
            tool_once,
            &dir,
            "Read",
            &json!({"file_path": big_file.0, "offset": lines - 99, "limit": 100}),
            last.trim_end(),
        )?;
        let base = peak(
            tool_once,
            &dir,
            "Read",
            &json!({"file_path": small_file.0}),
            big_line(100).trim_end(),
        )?;
        Ok(Row::compare(
            SECTION,
            "peak RSS, Read of the last 100 lines of a 1 GiB file",
            Unit::MiB,
            ours,
            ("same binary, 100-line file", base),
            Target::Below(LIMIT_MIB),
        ))
    })();
    out.rows.push(
        row.unwrap_or_else(|e| {
            Row::failed(SECTION, "peak RSS, Read of a 1 GiB file", e.to_string())
        }),
    );
    out.notes.push(format!(
        "memory: peak RSS is VmHWM of the `tool_once` process itself (the shell's children not included), median of {RUNS} runs; the 1 GiB file is written to target/bench/ and deleted after"
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn big_file_lines_are_fixed_width() {
        for n in [1, 99, GIB / LINE_LEN] {
            assert_eq!(big_line(n).len() as u64, LINE_LEN, "{:?}", big_line(n));
        }
        assert!(big_line(16_777_216).starts_with("0016777216 the quick"));
    }

    #[test]
    fn peak_rss_is_read_from_the_last_matching_line() {
        assert_eq!(
            parse_peak_rss("warning\npeak_rss_kib=12\npeak_rss_kib=4096\n"),
            Some(4096)
        );
        assert_eq!(parse_peak_rss("peak_rss_kib=x"), None);
        assert_eq!(parse_peak_rss(""), None);
    }

    #[test]
    fn written_files_go_away() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        {
            let f = write_lines(&path, 3).unwrap();
            assert_eq!(std::fs::metadata(&f.0).unwrap().len(), 3 * LINE_LEN);
        }
        assert!(!path.exists());
    }
}
