//! Structured patches (Claude Code's `structuredPatch`), computed with `similar`.

use serde::{Deserialize, Serialize};
use std::time::Duration;

use similar::{ChangeTag, TextDiff};

/// One hunk of a structured patch, as Claude Code reports edits to hooks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hunk {
    /// First line of the hunk in the old text (1-based).
    pub old_start: usize,
    /// Lines of the old text in the hunk.
    pub old_lines: usize,
    /// First line of the hunk in the new text (1-based).
    pub new_start: usize,
    /// Lines of the new text in the hunk.
    pub new_lines: usize,
    /// The lines, each prefixed with ` `, `-` or `+`, without line terminators.
    pub lines: Vec<String>,
}

/// How long the line diff may search for the smallest patch. Two large unrelated texts
/// cost O(N·D) otherwise (minutes for a few MB); past the deadline the patch is still
/// correct, only less minimal.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// The hunks turning `old` into `new`, with three lines of context.
pub(crate) fn structured_patch(old: &str, new: &str) -> Vec<Hunk> {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old, new);
    let mut hunks = Vec::new();
    for group in diff.grouped_ops(3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let mut lines = Vec::new();
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                let value = change.value();
                let value = value.strip_suffix('\n').unwrap_or(value);
                let value = value.strip_suffix('\r').unwrap_or(value);
                lines.push(format!("{sign}{value}"));
            }
        }
        hunks.push(Hunk {
            old_start: old_range.start + 1,
            old_lines: old_range.len(),
            new_start: new_range.start + 1,
            new_lines: new_range.len(),
            lines,
        });
    }
    hunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_hunk_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n";
        let hunks = structured_patch(old, new);
        assert_eq!(hunks.len(), 1);
        assert_eq!(
            (
                hunks[0].old_start,
                hunks[0].old_lines,
                hunks[0].new_start,
                hunks[0].new_lines
            ),
            (2, 7, 2, 7)
        );
        assert_eq!(
            hunks[0].lines,
            [" 2", " 3", " 4", "-5", "+five", " 6", " 7", " 8"]
        );
        assert!(structured_patch("same", "same").is_empty());
    }
}
