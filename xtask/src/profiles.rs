//! `cargo xtask profiles`: builds the `toolwright` binary for each profile and proves that a
//! feature-gated tool is compiled out of the profile that leaves it out.
//!
//! Every gated tool carries a marker string in its prompt (`toolwright-gated-tool:NAME`).
//! The marker must be in the `internal` binary and absent from the `external` one: the
//! tool's code is not there at all, not merely switched off.

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
    for (profile, _) in PROFILES {
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
        let listing = Command::new(&binary).args(["tools", "--json"]).output()?;
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
    use super::contains;

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
