//! `cargo xtask profiles`: builds the `toolwright` binary for each profile and proves that a
//! feature-gated tool is compiled out of the profile that leaves it out.
//!
//! Two proofs, for each gated family. Its code: the feature (or the crate) that holds it is
//! in the profile's build as cargo resolves it (`cargo tree`), so code of a family a profile
//! leaves out is not compiled in, whether or not any listing shows it. Its tools: every
//! gated tool carries a marker string in its prompt (`toolwright-gated-tool:FAMILY`), which
//! must be in the `internal` binary and absent from the `external` one; and `toolwright tools`
//! of each binary lists them or not.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Each gated tool and the marker of its family (in its prompt).
pub const GATED: &[(&str, &str)] = &[
    ("Sleep", "toolwright-gated-tool:proactive"),
    ("EnterWorktree", "toolwright-gated-tool:worktree"),
    ("ExitWorktree", "toolwright-gated-tool:worktree"),
    ("CronCreate", "toolwright-gated-tool:agent-triggers"),
    ("CronList", "toolwright-gated-tool:agent-triggers"),
    ("CronDelete", "toolwright-gated-tool:agent-triggers"),
    ("REPL", "toolwright-gated-tool:repl"),
    ("WordCount", "toolwright-gated-tool:word-count"),
];

/// Where the code of a gated family lives.
#[derive(Debug, Clone, Copy)]
enum Code {
    /// Behind this feature of this package.
    Feature(&'static str, &'static str),
    /// In a crate of its own.
    Package(&'static str),
}

/// Each gated family (the end of its marker) and where its code lives.
const FAMILIES: &[(&str, Code)] = &[
    ("proactive", Code::Feature("tools-builtin", "proactive")),
    ("worktree", Code::Feature("tools-builtin", "worktree")),
    (
        "agent-triggers",
        Code::Feature("tools-builtin", "agent-triggers"),
    ),
    ("repl", Code::Feature("tools-builtin", "repl")),
    ("word-count", Code::Package("tools-word-count")),
];

/// The packages of the binary's build with `features` (and no default ones), each with the
/// features cargo resolves for it: what is compiled in, whatever a listing says.
fn resolved(features: &str) -> super::Result<BTreeMap<String, BTreeSet<String>>> {
    let out = super::cargo()
        .args([
            "tree",
            "-p",
            "toolwright",
            "--no-default-features",
            "--features",
            features,
            "-e",
            "normal",
            "--prefix",
            "none",
            "-f",
            "{p}|{f}",
        ])
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )
        .into());
    }
    Ok(parse_tree(&String::from_utf8_lossy(&out.stdout)))
}

/// Reads `cargo tree -f '{p}|{f}' --prefix none`: one `name version (path)|f1,f2` line per
/// package, ` (*)` after one already shown.
fn parse_tree(text: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut packages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in text.lines() {
        let Some((package, features)) = line.split_once('|') else {
            continue;
        };
        let Some(name) = package.split_whitespace().next() else {
            continue;
        };
        let features = features.trim_end_matches(" (*)");
        packages.entry(name.to_owned()).or_default().extend(
            features
                .split(',')
                .filter(|f| !f.is_empty())
                .map(str::to_owned),
        );
    }
    packages
}

/// Whether `code` is in a build whose packages are `packages`.
fn compiled_in(code: Code, packages: &BTreeMap<String, BTreeSet<String>>) -> bool {
    match code {
        Code::Feature(package, feature) => packages
            .get(package)
            .is_some_and(|features| features.contains(feature)),
        Code::Package(package) => packages.contains_key(package),
    }
}

/// The profiles: name and the features it builds with (`--no-default-features` plus these).
pub const PROFILES: &[(&str, &str)] = &[("external", "external"), ("internal", "internal")];

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Builds `profile` and copies its binary to `target/profiles/<profile>/toolwright`.
pub fn build(root: &Path, profile: &str) -> super::Result<PathBuf> {
    let features = PROFILES
        .iter()
        .find(|(name, _)| *name == profile)
        .map(|(_, f)| *f)
        .ok_or_else(|| format!("unknown profile `{profile}`: expected external or internal"))?;
    let step = format!("build the {profile} profile");
    println!("==> {step}");
    let exes = crate::bench::build::build_reporting_executables(
        super::cargo().args([
            "build",
            "--bin",
            "toolwright",
            "--no-default-features",
            "--features",
            features,
        ]),
        &step,
    )?;
    // Where cargo says it put the binary (the target directory may be anywhere).
    let built = exes.get(crate::bench::build::Kind::Bin, "toolwright")?;
    let dir = root.join("target/profiles").join(profile);
    std::fs::create_dir_all(&dir)?;
    let dest = dir.join("toolwright");
    std::fs::copy(built, &dest).map_err(|e| format!("copy {}: {e}", built.display()))?;
    Ok(dest)
}

/// Builds both profiles, checks every marker, prints each profile's tools and size.
pub fn check(root: &Path) -> super::Result {
    let mut failures = Vec::new();
    for (profile, features) in PROFILES {
        let packages = resolved(features)?;
        for (family, code) in FAMILIES {
            let present = compiled_in(*code, &packages);
            let expected = *profile == "internal";
            println!(
                "profiles: {profile}: {family} code {}",
                if present { "compiled in" } else { "left out" }
            );
            if present != expected {
                failures.push(format!(
                    "the {family} family's code ({code:?}) is {} the {profile} build",
                    if present { "in" } else { "missing from" }
                ));
            }
        }
        let binary = build(root, profile)?;
        let bytes = std::fs::read(&binary)?;
        for (tool, marker) in GATED {
            let present = contains(&bytes, marker.as_bytes());
            let expected = *profile == "internal";
            println!(
                "profiles: {profile}: {tool} marker {}",
                if present { "present" } else { "absent" }
            );
            if present != expected {
                failures.push(format!(
                    "{tool} ({marker}) is {} the {profile} binary",
                    if present { "in" } else { "missing from" }
                ));
            }
        }
        // The build's own list: no user's or project's settings (a deny rule would hide a
        // tool), no switch of the caller's (`CLAUDE_CODE_SIMPLE` leaves three tools).
        let clean = tempfile::tempdir()?;
        let listing = Command::new(&binary)
            .args(["tools", "--json"])
            .current_dir(clean.path())
            .env("CLAUDE_CONFIG_DIR", clean.path())
            .env_remove("CLAUDE_CODE_SIMPLE")
            .env_remove("TOOLWRIGHT_ENABLE_TASKS")
            .env_remove("CLAUDE_CODE_ENABLE_TASKS")
            .output()?;
        if !listing.status.success() {
            failures.push(format!(
                "`toolwright tools --json` failed in the {profile} profile"
            ));
            continue;
        }
        let tools: serde_json::Value = serde_json::from_slice(&listing.stdout)?;
        let names: Vec<&str> = tools
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str())
            .collect();
        println!(
            "profiles: {profile}: {} bytes, tools: {}",
            bytes.len(),
            names.join(", ")
        );
        // Every feature-gated tool of the build must be proven absent above: one added
        // without its row in GATED would never be checked.
        for tool in tools.as_array().into_iter().flatten() {
            let gated = tool["gate"]
                .as_str()
                .is_some_and(|g| g.starts_with("feature:"));
            let name = tool["name"].as_str().unwrap_or_default();
            if gated && !GATED.iter().any(|(t, _)| *t == name) {
                failures.push(format!(
                    "{name} is gated by a feature but has no row in xtask's GATED list, so its absence is never proven"
                ));
            }
        }
        for (tool, _) in GATED {
            if names.contains(tool) != (*profile == "internal") {
                failures.push(format!(
                    "`toolwright tools` of the {profile} profile lists {tool} wrongly"
                ));
            }
        }
    }
    if failures.is_empty() {
        println!("profiles: every gated tool is compiled out of the profile that leaves it out");
        Ok(())
    } else {
        Err(failures.join("; ").into())
    }
}

#[cfg(test)]
mod tests {
    use super::{FAMILIES, GATED, compiled_in, contains, parse_tree};

    /// The family of a marker (`toolwright-gated-tool:FAMILY`).
    fn family(marker: &str) -> &str {
        marker.rsplit(':').next().unwrap_or(marker)
    }

    /// Every gated tool's family has its code's place in FAMILIES: one without would never
    /// be proven left out.
    #[test]
    fn every_gated_family_says_where_its_code_is() {
        for (tool, marker) in GATED {
            assert!(
                FAMILIES.iter().any(|(f, _)| *f == family(marker)),
                "{tool}: no FAMILIES row for {}",
                family(marker)
            );
        }
    }

    #[test]
    fn cargo_tree_lines_are_read_with_their_features() {
        let text = "toolwright v0.1.0 (/w)|external\n\
                    tools-builtin v0.1.0 (/w/crates/tools-builtin)|repl,worktree\n\
                    tools-builtin v0.1.0 (/w/crates/tools-builtin)|repl,worktree (*)\n\
                    tool-core v0.1.0 (/w/crates/tool-core)|\n";
        let packages = parse_tree(text);
        let feature = |p, f| super::Code::Feature(p, f);
        assert!(compiled_in(feature("tools-builtin", "worktree"), &packages));
        assert!(!compiled_in(
            feature("tools-builtin", "proactive"),
            &packages
        ));
        assert!(compiled_in(super::Code::Package("tool-core"), &packages));
        assert!(!compiled_in(
            super::Code::Package("tools-word-count"),
            &packages
        ));
        assert!(packages["tool-core"].is_empty());
    }

    #[test]
    fn byte_search() {
        assert!(contains(
            b"xx toolwright-gated-tool:proactive yy",
            b"toolwright-gated-tool:proactive"
        ));
        assert!(!contains(
            b"toolwright-gated-tool:pro",
            b"toolwright-gated-tool:proactive"
        ));
    }
}
