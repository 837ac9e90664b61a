//! The crate layering check: which workspace crate may depend on which.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Workspace crates and, for each, the workspace crates it depends on (normal and build
/// dependencies; dev-dependencies are free, they never ship), and any path dependency
/// outside the workspace, which the check cannot see into.
#[derive(Debug, Default)]
pub struct Graph {
    pub crates: BTreeMap<String, Vec<String>>,
}

impl Graph {
    /// Reads the graph with `cargo metadata --no-deps` on `manifest`.
    pub fn from_cargo_metadata(manifest: &Path) -> super::Result<Self> {
        let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args([
                "metadata",
                "--format-version",
                "1",
                "--no-deps",
                "--offline",
                "--manifest-path",
            ])
            .arg(manifest)
            .output()
            .map_err(|e| format!("could not run cargo metadata: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "cargo metadata failed for {}: {}",
                manifest.display(),
                String::from_utf8_lossy(&output.stderr).trim()
            )
            .into());
        }
        let metadata: Value = serde_json::from_slice(&output.stdout)?;
        Self::from_metadata_json(&metadata)
    }

    /// Builds the graph from `cargo metadata` JSON.
    pub fn from_metadata_json(metadata: &Value) -> super::Result<Self> {
        let packages = metadata["packages"]
            .as_array()
            .ok_or("cargo metadata: no `packages` array")?;
        let names: Vec<&str> = packages.iter().filter_map(|p| p["name"].as_str()).collect();
        let mut crates = BTreeMap::new();
        for package in packages {
            let name = package["name"]
                .as_str()
                .ok_or("cargo metadata: package without a name")?;
            let mut deps: Vec<String> = package["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|d| d["kind"].as_str() != Some("dev"))
                .filter(|d| {
                    d["name"].as_str().is_some_and(|n| names.contains(&n)) || d["path"].is_string()
                })
                .filter_map(|d| d["name"].as_str())
                .map(str::to_owned)
                .collect();
            deps.sort();
            deps.dedup();
            crates.insert(name.to_owned(), deps);
        }
        Ok(Self { crates })
    }
}

/// One dependency against the layering.
#[derive(Debug, PartialEq, Eq)]
pub struct Violation {
    pub from: String,
    pub to: String,
    pub rule: &'static str,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} depends on {}, against the layering: {}",
            self.from, self.to, self.rule
        )
    }
}

fn is_tool_crate(name: &str) -> bool {
    name.starts_with("tools-")
}

fn is_known(name: &str) -> bool {
    matches!(
        name,
        "tool-core"
            | "tool-perms"
            | "tool-hooks"
            | "tool-exec"
            | "tool-registry"
            | "toolwright"
            | "xtask"
    ) || is_tool_crate(name)
}

/// Whether `from` may depend on `to`, and the rule that says so (docs/architecture.md).
fn allowed(from: &str, to: &str) -> Result<(), &'static str> {
    let ok = match from {
        "tool-core" => false,
        "tool-perms" | "tool-hooks" => to == "tool-core",
        "tool-exec" => matches!(to, "tool-core" | "tool-perms" | "tool-hooks"),
        "tool-registry" => to == "tool-core" || is_tool_crate(to),
        f if is_tool_crate(f) => matches!(to, "tool-core" | "tool-perms"),
        // The facade and the binary sit on top and may use anything but the dev tooling,
        // which may use anything.
        "toolwright" => to != "xtask",
        "xtask" => true,
        _ => false,
    };
    if ok {
        return Ok(());
    }
    Err(match from {
        "tool-core" => "tool-core depends on no crate of ours",
        "tool-perms" | "tool-hooks" => "tool-perms and tool-hooks know tool-core only",
        "tool-exec" => "tool-exec knows tool-core, tool-perms and tool-hooks only",
        "tool-registry" => "tool-registry knows tool-core and the tool crates only",
        "toolwright" => "xtask is dev tooling: nothing that ships depends on it",
        _ => "tool crates know tool-core and tool-perms only",
    })
}

/// Every dependency of the graph that goes against the layering.
pub fn check(graph: &Graph) -> Vec<Violation> {
    let mut out = Vec::new();
    for (from, deps) in &graph.crates {
        if !is_known(from) {
            let rule = "crate has no place in the layering (add it to xtask/src/layers.rs and docs/architecture.md)";
            out.push(Violation {
                from: from.clone(),
                to: "(any)".into(),
                rule,
            });
            continue;
        }
        for to in deps {
            if !graph.crates.contains_key(to) {
                out.push(Violation {
                    from: from.clone(),
                    to: to.clone(),
                    rule: "a path dependency outside the workspace: what it depends on is not \
                           checked (make it a member, or take it from a registry)",
                });
                continue;
            }
            if let Err(rule) = allowed(from, to) {
                out.push(Violation {
                    from: from.clone(),
                    to: to.clone(),
                    rule,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> Graph {
        Graph {
            crates: edges
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.iter().map(|s| (*s).to_owned()).collect()))
                .collect(),
        }
    }

    #[test]
    fn the_designed_graph_passes() {
        let g = graph(&[
            ("tool-core", &[]),
            ("tool-perms", &["tool-core"]),
            ("tool-hooks", &["tool-core"]),
            ("tool-exec", &["tool-core", "tool-perms", "tool-hooks"]),
            ("tools-builtin", &["tool-core", "tool-perms"]),
            ("tools-mcp", &["tool-core"]),
            (
                "tool-registry",
                &["tool-core", "tools-builtin", "tools-mcp"],
            ),
            ("toolwright", &["tool-exec", "tool-registry"]),
        ]);
        assert_eq!(check(&g), vec![]);
    }

    #[test]
    fn wrong_edges_are_reported() {
        let g = graph(&[
            ("tool-core", &["tool-perms"]),
            ("tool-hooks", &["tool-perms"]),
            ("tools-builtin", &["tools-mcp", "tool-exec"]),
            ("tool-registry", &["tool-exec"]),
            ("tool-mystery", &[]),
        ]);
        let found: Vec<(String, String)> = check(&g).into_iter().map(|v| (v.from, v.to)).collect();
        assert_eq!(
            found,
            vec![
                ("tool-core".into(), "tool-perms".into()),
                ("tool-hooks".into(), "tool-perms".into()),
                ("tool-mystery".into(), "(any)".into()),
                ("tool-registry".into(), "tool-exec".into()),
                ("tools-builtin".into(), "tools-mcp".into()),
                ("tools-builtin".into(), "tool-exec".into()),
            ]
        );
    }

    /// A path dependency that is no member of the workspace (a vendored crate that could
    /// depend on anything) is reported; so is the binary depending on the dev tooling.
    #[test]
    fn path_dependencies_outside_the_workspace_and_xtask_are_reported() {
        let metadata = serde_json::json!({"packages": [
            {"name": "tools-builtin", "dependencies": [
                {"name": "mcp-shim", "kind": null, "path": "/w/vendor/mcp-shim"},
                {"name": "serde", "kind": null},
                {"name": "tool-core", "kind": null, "path": "/w/crates/tool-core"}]},
            {"name": "tool-core", "dependencies": []},
            {"name": "toolwright", "dependencies": [{"name": "xtask", "kind": "build", "path": "/w/xtask"}]},
            {"name": "xtask", "dependencies": [{"name": "toolwright", "kind": null, "path": "/w"}]}
        ]});
        let g = Graph::from_metadata_json(&metadata).unwrap();
        let found: Vec<(String, String)> = check(&g).into_iter().map(|v| (v.from, v.to)).collect();
        assert_eq!(
            found,
            vec![
                ("tools-builtin".into(), "mcp-shim".into()),
                ("toolwright".into(), "xtask".into()),
            ]
        );
    }

    #[test]
    fn dev_dependencies_are_free() {
        let metadata = serde_json::json!({"packages": [
            {"name": "tool-core", "dependencies": [{"name": "tool-exec", "kind": "dev"}, {"name": "serde", "kind": null}]},
            {"name": "tool-exec", "dependencies": [{"name": "tool-core", "kind": null}]}
        ]});
        let g = Graph::from_metadata_json(&metadata).unwrap();
        assert_eq!(g.crates["tool-core"], Vec::<String>::new());
        assert_eq!(check(&g), vec![]);
    }
}
