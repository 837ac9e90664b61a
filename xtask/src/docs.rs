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
    code_spans(text)
        .into_iter()
        .map(|t| t.trim().trim_end_matches(':').trim_end_matches('/'))
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

/// The inline code spans of Markdown `text`, as CommonMark reads them: a run of n backticks
/// opens a span that the next run of exactly n backticks closes (so ``` `` a`b `` ``` is one
/// span, `a`b`); a run never closed is literal text. Fenced code blocks are skipped: a
/// diagram's backticks must not shift which text counts as code.
fn code_spans(text: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut in_fence = false;
    // Byte ranges of the text outside fenced blocks, line by line.
    let mut pieces: Vec<(usize, usize)> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            match pieces.last_mut() {
                Some((_, end)) if *end == start => *end = at,
                _ => pieces.push((start, at)),
            }
        }
    }
    for (start, end) in pieces {
        let piece = &text[start..end];
        let bytes = piece.as_bytes();
        let run_at = |i: usize| bytes[i..].iter().take_while(|&&b| b == b'`').count();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'`' {
                i += 1;
                continue;
            }
            let n = run_at(i);
            let open_end = i + n;
            // The next run of exactly n backticks closes the span.
            let mut j = open_end;
            let mut close = None;
            while j < bytes.len() {
                if bytes[j] == b'`' {
                    let m = run_at(j);
                    if m == n {
                        close = Some(j);
                        break;
                    }
                    j += m;
                } else {
                    j += 1;
                }
            }
            match close {
                Some(j) => {
                    spans.push(&piece[open_end..j]);
                    i = j + n;
                }
                None => i = open_end,
            }
        }
    }
    spans
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

    /// A double-backtick span or a fenced block with an odd number of backticks does not
    /// shift which text counts as code: the paths after it are still checked.
    #[test]
    fn double_backticks_and_fences_do_not_hide_later_paths() {
        let text = "Use ``a`b`` then see `crates/nope.rs`.\n\
                    ```text\n a ` diagram\n```\n\
                    and `docs/gone.md`, but not ``` `` ``` or an unclosed ` tick.";
        assert_eq!(named_paths(text), ["crates/nope.rs", "docs/gone.md"]);
    }

    #[test]
    fn the_real_doc_names_only_existing_paths() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        check(root).unwrap();
    }
}
