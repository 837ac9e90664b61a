//! Checks that `docs/architecture.md` only names paths that exist, so the code map cannot rot
//! silently.

use std::path::Path;

/// Every backquoted token in `text` that names a workspace path: a top-level directory
/// (`crates/`, `examples`), something under one (`crates/tool-core/src/tool.rs`), or a
/// top-level file (`deny.toml`). Tokens with spaces or wildcards are not paths.
pub fn named_paths(text: &str) -> Vec<String> {
    const DIRS: &[&str] = &[
        "crates", "xtask", "docs", "tests", "src", "examples", "benches", ".ci",
    ];
    const FILES: &[&str] = &["Cargo.toml", "deny.toml", "README.md"];
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(|t| t.trim_end_matches(':').trim_end_matches('/'))
        .filter(|t| !t.contains(' ') && !t.contains('*'))
        .filter(|t| {
            FILES.contains(t)
                || DIRS.iter().any(|d| {
                    t.strip_prefix(d)
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                })
        })
        .map(str::to_owned)
        .collect()
}

/// Fails when a path named in `docs/architecture.md` is missing.
pub fn check(root: &Path) -> super::Result {
    let doc = root.join("docs/architecture.md");
    let text = std::fs::read_to_string(&doc).map_err(|e| format!("{}: {e}", doc.display()))?;
    let missing: Vec<String> = named_paths(&text)
        .into_iter()
        .filter(|p| !root.join(p).exists())
        .collect();
    if missing.is_empty() {
        println!("check-docs: every path docs/architecture.md names exists");
        Ok(())
    } else {
        Err(format!(
            "docs/architecture.md names missing paths: {}",
            missing.join(", ")
        )
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_paths_in_backquotes_only() {
        let text = "See `crates/tool-core/src/tool.rs` and `tool_core::Tool`, `cargo xtask ci`, \
                    `deny.toml`, `crates/*`, `examples/tools-word-count`, `xtask/`, `srcery`, `src`.";
        assert_eq!(
            named_paths(text),
            [
                "crates/tool-core/src/tool.rs",
                "deny.toml",
                "examples/tools-word-count",
                "xtask",
                "src"
            ]
        );
    }

    #[test]
    fn the_real_doc_names_only_existing_paths() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        check(root).unwrap();
    }
}
