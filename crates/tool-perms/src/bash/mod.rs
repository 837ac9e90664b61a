//! Bash command analysis: the tree-sitter walk, rule patterns, wrappers and read-only commands.

pub mod commands;
pub(crate) mod file_uses;
mod options;
pub mod parse;
pub mod pattern;
mod sed;
pub(crate) mod values;

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
/// (fail-closed); so is git while this process's environment, which the command inherits,
/// holds a variable that sends it elsewhere or makes it run a program
/// ([`commands::inherited_git_variable`]). Bash uses this for its read-only and concurrency-safe flags, and plan mode
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

/// A command that reads one file and shows what it read, as Read would: see
/// [`single_file_read`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SingleFileRead {
    /// The file, as written (relative to where the command runs, or absolute, or `~/…`).
    pub path: String,
    /// Whether its output is the whole file as it is (`cat FILE`, no options): compared
    /// with the file before it counts as a whole read.
    pub whole: bool,
}

/// grep's and rg's options that take a value and leave what is shown lines of the file.
const GREP_CONTEXT: &[&str] = &[
    "-A",
    "-B",
    "-C",
    "-m",
    "--max-count",
    "--context",
    "--after-context",
    "--before-context",
];

/// Whether `command` is one of the commands Claude Code counts as reading a file for the
/// read-before-edit rule: `cat`, `head`, `tail`, `nl`, `bat`, `sed -n 'X,Yp'`, `grep` or
/// `rg` on one file named as written (no expansion, glob or `-`), alone (no pipe, list,
/// substitution or redirection), with options that take no file.
pub fn single_file_read(command: &str) -> Option<SingleFileRead> {
    let analysis = parse::analyze(command);
    let [cmd] = analysis.commands.as_slice() else {
        return None;
    };
    if !analysis.is_simple()
        || !analysis.redirects.is_empty()
        || !cmd.assignments.is_empty()
        || cmd.appended_args
        || cmd.words.iter().any(|w| w.glob)
    {
        return None;
    }
    // A command sent to the background shows nothing before the call ends.
    if command.trim_end().ends_with('&') {
        return None;
    }
    // Each word as the path it names (a quoted `~` is a name, not the home directory).
    let words: Vec<std::borrow::Cow<'_, str>> = cmd
        .words
        .iter()
        .map(parse::Word::path_value)
        .collect::<Option<_>>()?;
    let words: Vec<&str> = words.iter().map(AsRef::as_ref).collect();
    let (&name, args) = words.split_first()?;
    // Options that take the next word as their value, per program; any other option must
    // stand alone. (grep's `-e`/`-f` and `-r` are not here: a pattern from an option or a
    // recursive search is no read of one file.)
    let (with_value, no_value): (&[&str], &[&str]) = match name {
        "cat" => (&[], &["-n", "-b", "-A", "-E", "-T", "-v", "-s", "-e", "-t"]),
        // Not `-v`: its header would pass for shown content when the count is 0.
        "head" | "tail" => (&["-n", "-c"], &["-q"]),
        "nl" => (
            &["-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"],
            &["-p"],
        ),
        "bat" => (
            &[
                "-r",
                "--line-range",
                "-l",
                "--language",
                "-H",
                "--highlight-line",
                "--style",
                "--theme",
                "--tabs",
                "--wrap",
                "--color",
                "--paging",
                "--decorations",
                "--terminal-width",
            ],
            &["-p", "-pp", "--plain", "-n", "--number", "-A", "--show-all"],
        ),
        // Options that show lines of the file (not a count, a file name or help: rg's `-h`
        // is `--help`, its `-E` an encoding).
        "grep" => (
            GREP_CONTEXT,
            &[
                "-n",
                "-i",
                "-v",
                "-w",
                "-x",
                "-H",
                "-h",
                "-F",
                "-E",
                "-P",
                "-s",
                "-in",
                "-ni",
                "-nw",
                "-wn",
                "-iw",
                "-wi",
                "--line-number",
                "--ignore-case",
                "--invert-match",
                "--word-regexp",
                "--fixed-strings",
                "--color=never",
            ],
        ),
        "rg" => (
            GREP_CONTEXT,
            &[
                "-n",
                "-i",
                "-v",
                "-w",
                "-x",
                "-H",
                "-F",
                "-S",
                "-s",
                "-N",
                "-in",
                "-ni",
                "--line-number",
                "--ignore-case",
                "--invert-match",
                "--word-regexp",
                "--fixed-strings",
                "--smart-case",
                "--case-sensitive",
                "--no-line-number",
                "--color=never",
            ],
        ),
        "sed" => {
            // Only `sed -n 'X,Yp' FILE`: lines printed as they are.
            let [n, script, file] = args else {
                return None;
            };
            let range = script.strip_suffix('p')?;
            let line =
                |s: &str| s == "$" || (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
            let ok = *n == "-n" && range.split(',').count() <= 2 && range.split(',').all(line);
            return ok
                .then(|| SingleFileRead {
                    path: (*file).to_owned(),
                    whole: false,
                })
                .filter(|r| r.path != "-" && !r.path.starts_with('-'));
        }
        _ => return None,
    };
    let mut operands = Vec::new();
    let mut options = false;
    let mut rest = args.iter();
    while let Some(&arg) = rest.next() {
        if arg == "--" {
            operands.extend(rest.by_ref().copied());
            break;
        }
        if arg.starts_with('-') && arg != "-" {
            options = true;
            let known = match arg.split_once('=') {
                // `--lines=20`, `--line-range=1:10`.
                Some((flag, _)) => with_value.contains(&flag) || no_value.contains(&arg),
                None if no_value.contains(&arg) => true,
                None if with_value.contains(&arg) => rest.next().is_some(),
                // A short option with its value attached (`-n20`, `-ba`, `-A3`, `-r1:10`), or
                // head's and tail's count alone (`-20`).
                None => {
                    (!arg.starts_with("--")
                        && arg.len() > 2
                        && arg.get(..2).is_some_and(|flag| with_value.contains(&flag)))
                        || (matches!(name, "head" | "tail")
                            && arg[1..].bytes().all(|b| b.is_ascii_digit()))
                }
            };
            if !known {
                return None;
            }
        } else {
            operands.push(arg);
        }
    }
    // grep and rg take their pattern first.
    let file = match (name, operands.as_slice()) {
        ("grep" | "rg", [_pattern, file]) => *file,
        ("grep" | "rg", _) => return None,
        (_, [file]) => *file,
        _ => return None,
    };
    (file != "-").then(|| SingleFileRead {
        path: file.to_owned(),
        whole: name == "cat" && !options,
    })
}

#[cfg(test)]
mod tests {
    use super::{SingleFileRead, may_change_directory, single_file_read};

    #[test]
    fn commands_that_read_one_file_are_told_from_the_rest() {
        let read = |path: &str, whole| {
            Some(SingleFileRead {
                path: path.to_owned(),
                whole,
            })
        };
        for (command, expected) in [
            ("cat src/main.rs", read("src/main.rs", true)),
            ("cat '/tmp/a b.txt'", read("/tmp/a b.txt", true)),
            ("cat -n notes.md", read("notes.md", false)),
            ("head -n 20 a.txt", read("a.txt", false)),
            ("head -20 a.txt", read("a.txt", false)),
            ("tail -n20 a.txt", read("a.txt", false)),
            ("nl -ba a.txt", read("a.txt", false)),
            ("sed -n '5,9p' a.txt", read("a.txt", false)),
            ("sed -n 12p a.txt", read("a.txt", false)),
            ("sed -n '3,$p' a.txt", read("a.txt", false)),
            ("grep -n fn src/lib.rs", read("src/lib.rs", false)),
            ("rg -C3 'Tool' src/lib.rs", read("src/lib.rs", false)),
            ("bat -r 1:10 a.txt", read("a.txt", false)),
            (
                "cat -- -odd",
                read("-odd", false).map(|r| SingleFileRead { whole: true, ..r }),
            ),
            // A quoted `~` is a name in the working directory; spaces are kept.
            ("cat '~/x'", read("./~/x", true)),
            ("cat ~/x", read("~/x", true)),
            ("cat ' a.txt'", read(" a.txt", true)),
        ] {
            assert_eq!(single_file_read(command), expected, "{command}");
        }
        for command in [
            "cat a b",
            "cat",
            "cat -",
            "cat a | head",
            "cat a > b",
            "cat a && echo",
            "cat $F",
            "cat *.rs",
            "X=1 cat a",
            "cat $(ls)",
            "sed -i 's/a/b/' a",
            "sed -n 's/a/b/p' a",
            "grep -r x .",
            "grep -e x a",
            "grep x a b",
            "grep x",
            "head -n",
            "tail -f log",
            "less a",
            // What shows no line of the file, or not this file's.
            "grep -c x a",
            "grep -l x a",
            "rg -h x a",
            "rg -E utf-8 a",
            "cat a &",
            "head -v -n 0 a",
            "grep -o x a",
            "cat -\u{e9} a",
        ] {
            assert_eq!(single_file_read(command), None, "{command}");
        }
    }

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
