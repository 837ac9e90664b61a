//! `cargo xtask bench [all|exec|files|shell|hooks|mcp|perms|search|memory]`: runs the
//! benchmarks and writes one report, every figure a ratio against a baseline measured in the
//! same run (or, where there is no baseline, against its absolute target), to
//! `target/bench/report.md` and `target/bench/report.json`.
//!
//! Each section builds what it needs in release (`cargo bench --no-run` for criterion and
//! scenario benches, `cargo build --release` for example binaries), prepares its inputs and
//! fills its rows. A section that fails leaves an `error` row saying why and the others still
//! run; the task then exits non-zero. See docs/performance.md.

use std::path::Path;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

pub(crate) mod build;
mod corpus;
mod criterion;
mod exec;
mod files;
mod mcp;
mod memory;
mod micro;
mod process;
mod report;
mod scenario;

use build::Exes;
use report::{Extra, Machine, Row, Status};

/// The sections, in the order `all` runs them.
pub const SECTIONS: &[&str] = &[
    "exec", "files", "shell", "hooks", "perms", "search", "memory", "mcp",
];

/// What a section produced.
#[derive(Debug, Default)]
pub struct Section {
    /// Its rows of the main table.
    pub rows: Vec<Row>,
    /// Tables that follow the main one.
    pub extras: Vec<Extra>,
    /// How the figures were made.
    pub notes: Vec<String>,
}

fn run_section(root: &Path, exes: &Exes, name: &str, out: &mut Section) -> crate::Result {
    match name {
        "exec" => exec::run(root, exes, out),
        "files" => files::run(root, exes, out),
        "shell" => micro::shell(root, exes, out),
        "hooks" => micro::hooks(root, exes, out),
        "perms" => micro::perms(root, exes, out),
        "search" => micro::search(root, exes, out),
        "memory" => memory::run(root, exes, out),
        "mcp" => mcp::run(root, exes, out),
        other => Err(format!("unknown bench section `{other}`").into()),
    }
}

/// The sections `args` selects.
pub fn selected(args: &[String]) -> crate::Result<Vec<&'static str>> {
    if args.is_empty() || args.iter().any(|a| a == "all") {
        return Ok(SECTIONS.to_vec());
    }
    args.iter()
        .map(|a| {
            SECTIONS
                .iter()
                .copied()
                .find(|s| *s == a.as_str())
                .ok_or_else(|| {
                    format!(
                        "unknown bench `{a}`: expected all or one of {}",
                        SECTIONS.join(", ")
                    )
                    .into()
                })
        })
        .collect()
}

fn machine(sections: &[&str]) -> Machine {
    let cpus = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Machine {
        cpus,
        cpu_model,
        date: report::utc_date(secs),
        sections: sections.iter().map(|s| (*s).to_owned()).collect(),
    }
}

/// Writes `text` to `path` through a temporary file and a rename.
fn write_atomically(path: &Path, text: &str) -> crate::Result {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(())
}

/// Runs the chosen sections and writes the report.
pub fn run(root: &Path, args: &[String]) -> crate::Result {
    let sections = selected(args)?;
    let started = Instant::now();
    let mut all = Section::default();
    // One build of everything any section runs (see build.rs); a failure is the report's
    // one row.
    let exes = match build::build_all() {
        Ok(exes) => exes,
        Err(e) => {
            all.rows.push(Row::failed(
                "build",
                "release build of the benches",
                e.to_string(),
            ));
            Exes::default()
        }
    };
    let build_secs = started.elapsed().as_secs_f64();
    for name in &sections {
        if all.rows.iter().any(|r| r.section == "build") {
            break;
        }
        let t = Instant::now();
        println!("\n=== bench {name}");
        let mut out = Section::default();
        if let Err(e) = run_section(root, &exes, name, &mut out) {
            eprintln!("bench {name}: {e}");
            out.rows
                .push(Row::failed(name, format!("{name} section"), e.to_string()));
        }
        println!("=== bench {name}: {:.0} s", t.elapsed().as_secs_f64());
        all.rows.extend(out.rows);
        all.extras.extend(out.extras);
        all.notes.extend(out.notes);
    }
    all.notes.push(format!(
        "the whole run took {:.0} s, of which {build_secs:.0} s building",
        started.elapsed().as_secs_f64()
    ));
    let machine = machine(&sections);
    let md = report::markdown(&machine, &all.rows, &all.extras, &all.notes);
    let json = report::json(&machine, &all.rows, &all.extras, &all.notes);
    let dir = root.join("target/bench");
    std::fs::create_dir_all(&dir)?;
    write_atomically(&dir.join("report.md"), &md)?;
    write_atomically(
        &dir.join("report.json"),
        &serde_json::to_string_pretty(&json)?,
    )?;
    println!("\n{md}");
    println!(
        "(written to {} and report.json)",
        dir.join("report.md").display()
    );
    let errors = all
        .rows
        .iter()
        .filter(|r| r.status() == Status::Error)
        .count();
    if errors > 0 {
        return Err(format!("{errors} figure(s) could not be measured; see the report").into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selects_sections() {
        let s = |a: &[&str]| selected(&a.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>());
        assert_eq!(s(&[]).unwrap(), SECTIONS);
        assert_eq!(s(&["all"]).unwrap(), SECTIONS);
        assert_eq!(s(&["mcp", "exec"]).unwrap(), ["mcp", "exec"]);
        let err = s(&["speed"]).unwrap_err().to_string();
        assert!(err.contains("unknown bench `speed`"), "{err}");
    }

    #[test]
    fn reports_are_written_atomically() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.md");
        write_atomically(&path, "one").unwrap();
        write_atomically(&path, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        assert!(!dir.path().join("report.tmp").exists());
    }
}
