//! Bash command analysis: the tree-sitter walk, rule patterns, wrappers and read-only commands.

pub mod commands;
pub(crate) mod file_uses;
mod options;
pub mod parse;
pub mod pattern;
mod sed;

/// Whether `command` may change the shell's working directory (`cd`, `pushd`, `popd`
/// anywhere in it, after wrappers), or cannot be parsed well enough to tell (fail-closed).
/// A Bash call that does must not run beside others: its new directory is carried to the
/// next call by a context modifier, which only a call that runs alone may leave.
pub fn may_change_directory(command: &str) -> bool {
    let analysis = parse::analyze(command);
    !analysis.is_simple() || analysis.commands.iter().any(commands::changes_directory)
}

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

#[cfg(test)]
mod tests {
    use super::may_change_directory;

    #[test]
    fn directory_changes_are_found_anywhere_in_a_command() {
        for command in [
            "cd src",
            "cd src && ls",
            "ls; pushd x",
            "env cd /",
            "popd",
            "ls $(",
        ] {
            assert!(may_change_directory(command), "{command}");
        }
        for command in ["ls", "cat cd", "echo cd && pwd", "grep -r cd ."] {
            assert!(!may_change_directory(command), "{command}");
        }
    }
}
