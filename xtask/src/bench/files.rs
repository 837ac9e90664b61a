//! `files`: Grep (files_with_matches and content) against `rg`, Glob against `fdfind`, on the
//! generated corpus and on a real source tree. Both sides run as whole processes (ours is the
//! `tool_once` example: one tool call through tool-core's API, output printed), so both pay
//! process start; each pair runs interleaved, median of the timed runs after one warm-up,
//! which also checks that both print the same paths or lines.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use super::build::{Exes, Kind};
use super::process;
use super::report::{Figure, Row, Target, Unit};
use super::{Section, corpus};

const SECTION: &str = "files";
/// Timed runs per comparison on the generated tree (each side, interleaved).
const GENERATED_RUNS: usize = 9;
/// Timed runs per comparison on the real source tree.
const REAL_RUNS: usize = 7;

/// `rg` as Claude Code runs it for Grep (hidden files, VCS directories skipped, long lines
/// elided).
const RG: &[&str] = &[
    "--no-config",
    "--hidden",
    "--max-columns",
    "500",
    "--glob",
    "!.git",
    "--glob",
    "!.svn",
    "--glob",
    "!.hg",
    "--glob",
    "!.bzr",
    "--glob",
    "!.jj",
    "--glob",
    "!.sl",
];

/// `fdfind` as Glob walks: hidden files, ignore files not honoured, VCS directories skipped.
const FD: &[&str] = &[
    "--hidden",
    "--no-ignore",
    "--type",
    "f",
    "--exclude",
    ".git",
    "--exclude",
    ".svn",
    "--exclude",
    ".hg",
    "--exclude",
    ".bzr",
    "--exclude",
    ".jj",
    "--exclude",
    ".sl",
];

/// How a tool's output is compared with the baseline's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Grep files_with_matches: a `Found N files` header, then paths.
    FilesWithMatches,
    /// Grep content: `path:line:text` lines.
    Content,
    /// Glob: paths (at most 100, then a truncation note).
    Paths,
}

/// The lines of `ours` (the tool's text) and `theirs` (the baseline's stdout) that carry the
/// result, sorted, so that the two can be compared whatever order each printed in.
pub fn normalise(shape: Shape, ours: &str, theirs: &str) -> (Vec<String>, Vec<String>) {
    let sorted = |lines: Vec<&str>| {
        let mut v: Vec<String> = lines.into_iter().map(str::to_owned).collect();
        v.sort();
        v
    };
    let ours_lines: Vec<&str> = ours.lines().filter(|l| !l.is_empty()).collect();
    let ours_lines = match shape {
        Shape::FilesWithMatches => ours_lines
            .into_iter()
            .filter(|l| !(l.starts_with("Found ") || *l == "No files found"))
            .collect(),
        Shape::Content => ours_lines
            .into_iter()
            .filter(|l| *l != "No matches found")
            .collect(),
        Shape::Paths => ours_lines
            .into_iter()
            .filter(|l| *l != "No files found" && !l.starts_with("(Results are truncated"))
            .collect(),
    };
    let theirs_lines: Vec<&str> = theirs
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.strip_prefix("./").unwrap_or(l))
        .collect();
    (sorted(ours_lines), sorted(theirs_lines))
}

/// One comparison: our tool's input and the baseline's command line.
struct Case {
    figure: String,
    tool: &'static str,
    input: serde_json::Value,
    baseline: &'static str,
    args: Vec<String>,
    shape: Shape,
}

fn cases(pattern_fwm: &str, pattern_content: &str, glob: &str, label: &str) -> Vec<Case> {
    let rg = |extra: &[&str]| -> Vec<String> {
        RG.iter().chain(extra).map(|s| (*s).to_owned()).collect()
    };
    let basename = glob.rsplit('/').next().unwrap_or(glob).to_owned();
    let mut fd: Vec<String> = FD.iter().map(|s| (*s).to_owned()).collect();
    fd.extend(["--glob".to_owned(), basename]);
    vec![
        Case {
            figure: format!("Grep files_with_matches `{pattern_fwm}`, {label}"),
            tool: "Grep",
            input: json!({"pattern": pattern_fwm, "head_limit": 0}),
            baseline: "rg -l",
            args: rg(&["-l", pattern_fwm]),
            shape: Shape::FilesWithMatches,
        },
        Case {
            figure: format!("Grep content `{pattern_content}`, {label}"),
            tool: "Grep",
            input: json!({"pattern": pattern_content, "output_mode": "content", "head_limit": 0}),
            baseline: "rg -n",
            args: rg(&["-n", pattern_content]),
            shape: Shape::Content,
        },
        Case {
            figure: format!("Glob `{glob}`, {label}"),
            tool: "Glob",
            input: json!({"pattern": glob}),
            baseline: "fdfind",
            args: fd,
            shape: Shape::Paths,
        },
    ]
}

fn measure(tool_once: &Path, dir: &Path, case: &Case, runs: usize) -> crate::Result<Row> {
    let ours_cmd = || {
        let mut c = Command::new(tool_once);
        c.args([case.tool, &case.input.to_string()])
            .current_dir(dir);
        c
    };
    let program = if case.baseline == "fdfind" {
        "fdfind"
    } else {
        "rg"
    };
    let theirs_cmd = || {
        let mut c = Command::new(program);
        c.args(&case.args).current_dir(dir);
        c
    };
    // Warm-up (page cache) and the output check.
    let (_, ours_out) = process::timed(&mut ours_cmd())?;
    let (_, theirs_out) = process::timed(&mut theirs_cmd())
        .map_err(|e| format!("{e} (is {program} installed? apt-get install ripgrep fd-find)"))?;
    let (a, b) = normalise(
        case.shape,
        &String::from_utf8_lossy(&ours_out.stdout),
        &String::from_utf8_lossy(&theirs_out.stdout),
    );
    let unit = match case.shape {
        Shape::Content => "lines",
        Shape::FilesWithMatches | Shape::Paths => "paths",
    };
    let note = if a == b {
        format!("same {} {unit}", a.len())
    } else {
        let only_ours = a.iter().filter(|l| b.binary_search(l).is_err()).count();
        let only_theirs = b.iter().filter(|l| a.binary_search(l).is_err()).count();
        let truncated = case.shape == Shape::Paths && a.len() == 100 && only_ours == 0;
        if truncated {
            format!("Glob lists the newest 100 of {} {unit}", b.len())
        } else {
            format!(
                "OUTPUT DIFFERS: ours {} {unit}, {program} {} ({only_ours} only ours, {only_theirs} only theirs)",
                a.len(),
                b.len()
            )
        }
    };
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for i in 0..runs {
        // Alternate who goes first, so neither always runs on the other's warm cache.
        if i % 2 == 0 {
            ours.push(process::timed(&mut ours_cmd())?.0);
            theirs.push(process::timed(&mut theirs_cmd())?.0);
        } else {
            theirs.push(process::timed(&mut theirs_cmd())?.0);
            ours.push(process::timed(&mut ours_cmd())?.0);
        }
    }
    let ms = |v: Vec<std::time::Duration>| {
        let xs: Vec<f64> = v.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        Figure::from_samples(&xs).ok_or("no runs")
    };
    Ok(Row::compare(
        SECTION,
        case.figure.clone(),
        Unit::Millis,
        ms(ours)?,
        (case.baseline, ms(theirs)?),
        Target::RatioAtMost(1.15),
    )
    .with_note(note))
}

/// Whether `program --version` runs.
fn runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `rg` and `fdfind` present, installed from Debian's packages when missing.
fn ensure_baselines() -> crate::Result {
    if runs("rg") && runs("fdfind") {
        return Ok(());
    }
    println!("==> apt-get install -y ripgrep fd-find (the baselines)");
    let installed = Command::new("apt-get")
        .args([
            "install",
            "-y",
            "--no-install-recommends",
            "ripgrep",
            "fd-find",
        ])
        .status()
        .is_ok_and(|s| s.success());
    if installed && runs("rg") && runs("fdfind") {
        Ok(())
    } else {
        Err("the baselines `rg` and `fdfind` are missing and could not be installed: run `apt-get install ripgrep fd-find` (as root)".into())
    }
}

/// Runs the section.
pub fn run(root: &Path, exes: &Exes, out: &mut Section) -> crate::Result {
    ensure_baselines()?;
    let tool_once = exes.get(Kind::Example, "tool_once")?;
    let generated = corpus::generated(root)?;
    let mut corpora: Vec<(PathBuf, Vec<Case>, usize)> = vec![(
        generated,
        cases(
            r"needle_\d+",
            r"fn \w+_handler\(",
            "**/*.toml",
            "generated tree",
        ),
        GENERATED_RUNS,
    )];
    match corpus::real() {
        Some(dir) => corpora.push((
            dir,
            cases(
                r"unsafe impl.*Sync for",
                r"fn main\(\)",
                "**/build.rs",
                "cargo registry sources",
            ),
            REAL_RUNS,
        )),
        None => out.notes.push(
            "files: no real source tree (~/.cargo/registry/src) here; only the generated corpus ran"
                .into(),
        ),
    }
    let mut sizes = BTreeMap::new();
    for (dir, cases, runs) in &corpora {
        sizes.insert(dir.display().to_string(), count_files(dir));
        for case in cases {
            println!("==> files: {}", case.figure);
            out.rows.push(
                measure(tool_once, dir, case, *runs)
                    .unwrap_or_else(|e| Row::failed(SECTION, case.figure.clone(), e.to_string())),
            );
        }
    }
    let described: Vec<String> = sizes
        .iter()
        .map(|(d, n)| format!("`{d}` ({n} files)"))
        .collect();
    out.notes.push(format!(
        "files: both sides are whole processes (our tool through the `tool_once` example, one call via tool-core's API, vs `rg`/`fdfind`), interleaved, median of {GENERATED_RUNS} (generated) or {REAL_RUNS} (real tree) runs after a warm-up run that also compares the outputs; corpora: {}; the generated tree comes from seed {:#x}",
        described.join(", "),
        corpus::SEED
    ));
    Ok(())
}

fn count_files(dir: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => n += 1,
                _ => {}
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_compare_whatever_the_order_and_headers() {
        let (a, b) = normalise(
            Shape::FilesWithMatches,
            "Found 2 files\nsrc/b.rs\nsrc/a.rs",
            "src/a.rs\nsrc/b.rs\n",
        );
        assert_eq!(a, b);
        let (a, b) = normalise(Shape::FilesWithMatches, "No files found", "");
        assert!(a.is_empty() && b.is_empty());
        let (a, b) = normalise(
            Shape::Content,
            "x.rs:3:fn main()\na.rs:1:fn main()",
            "a.rs:1:fn main()\nx.rs:3:fn main()\n",
        );
        assert_eq!(a, b);
        let (a, b) = normalise(Shape::Content, "a.rs:1:x", "a.rs:2:x\n");
        assert_ne!(a, b);
        let (a, b) = normalise(
            Shape::Paths,
            "b/c.toml\na.toml\n(Results are truncated. Consider using a more specific path or pattern.)",
            "./a.toml\n./b/c.toml\n",
        );
        assert_eq!(a, ["a.toml", "b/c.toml"]);
        assert_eq!(a, b);
    }

    #[test]
    fn baselines_take_the_same_pattern() {
        let cs = cases("needle", r"fn \w+", "**/*.toml", "t");
        assert_eq!(cs[0].args.last().map(String::as_str), Some("needle"));
        assert!(cs[0].args.iter().any(|a| a == "-l"));
        assert_eq!(cs[1].args.last().map(String::as_str), Some(r"fn \w+"));
        assert_eq!(cs[1].input["output_mode"], "content");
        assert_eq!(&cs[2].args[cs[2].args.len() - 2..], ["--glob", "*.toml"]);
    }
}
