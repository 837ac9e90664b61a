//! Bash command analysis: the tree-sitter walk, rule patterns, wrappers and read-only commands.

pub mod commands;
mod options;
pub mod parse;
pub mod pattern;
mod sed;

/// Whether `command` only reads: the parser understood all of it, every simple command
/// (after safe wrappers and environment assignments) is on the built-in read-only list, and
/// no redirection writes a file other than `/dev/null`. Anything else is not read-only
/// (fail-closed). Bash uses this for its read-only and concurrency-safe flags, and plan mode
/// for what it lets run.
pub fn is_read_only_command(command: &str) -> bool {
    use commands::{effective_words, is_read_only};
    use parse::{RedirectKind, analyze};
    let analysis = analyze(command);
    analysis.is_simple()
        && !analysis.commands.is_empty()
        && analysis
            .commands
            .iter()
            .all(|c| effective_words(c).is_some_and(is_read_only))
        && analysis.redirects.iter().all(|r| match r.kind {
            RedirectKind::Write => r.target.value.as_deref() == Some("/dev/null"),
            RedirectKind::Read | RedirectKind::FdDup => true,
        })
}
