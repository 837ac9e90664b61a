//! What a simple command is: the strings rules are matched against (wrappers and safe
//! environment assignments stripped), read-only commands, and which arguments are paths.

use super::parse::{SimpleCommand, Word, basename};

/// Environment variables whose assignment before a command cannot change what runs
/// (Claude Code's safe list, trimmed): stripped before allow rules match.
pub const SAFE_ENV_VARS: &[&str] = &[
    "GOEXPERIMENT",
    "GOOS",
    "GOARCH",
    "CGO_ENABLED",
    "GO111MODULE",
    "RUST_BACKTRACE",
    "RUST_LOG",
    "NODE_ENV",
    "PYTHONUNBUFFERED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD",
    "PYTEST_DEBUG",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_TIME",
    "LC_COLLATE",
    "LC_MESSAGES",
    "CHARSET",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "TZ",
    "LS_COLORS",
    "LSCOLORS",
    "GREP_COLOR",
    "GREP_COLORS",
    "GCC_COLORS",
    "TIME_STYLE",
    "BLOCK_SIZE",
    "BLOCKSIZE",
    "CI",
    "DEBUG",
];

/// The strings one simple command is matched against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Candidates {
    /// For allow rules: as written, then with safe env assignments and safe wrappers stripped.
    pub allow: Vec<String>,
    /// For deny and ask rules: every reading (any assignment and wrapper stripped, quotes
    /// removed, `/bin/rm` as `rm`).
    pub deny: Vec<String>,
}

fn push(v: &mut Vec<String>, s: String) {
    if !s.is_empty() && !v.contains(&s) {
        v.push(s);
    }
}

fn join_raw(words: &[Word]) -> String {
    words
        .iter()
        .map(|w| w.raw.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

fn join_value(words: &[Word]) -> Option<String> {
    let mut parts = Vec::with_capacity(words.len());
    for w in words {
        parts.push(w.value.as_deref()?);
    }
    Some(parts.join(" "))
}

fn val(w: &Word) -> Option<&str> {
    if w.plain { w.value.as_deref() } else { None }
}

fn is_duration(s: &str) -> bool {
    let digits = s.trim_end_matches(['s', 'm', 'h', 'd']);
    !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
        && digits.chars().filter(|&c| c == '.').count() <= 1
        && s.len() - digits.len() <= 1
}

/// How many words a safe wrapper takes before its command (`timeout 5`, `nice -n 5`,
/// `stdbuf -oL`, `nohup`, `time`, `command`, `builtin`, `noglob`), or `None` when `words`
/// does not start with one.
pub fn safe_wrapper_len(words: &[Word]) -> Option<usize> {
    let name = val(words.first()?)?;
    let arg = |i: usize| words.get(i).and_then(val);
    let mut i = 1;
    match name {
        "timeout" => loop {
            match arg(i)? {
                "-k" | "-s" | "--kill-after" | "--signal" => i += 2,
                "--preserve-status" | "--foreground" | "-v" | "--verbose" => i += 1,
                a if a.starts_with("--kill-after=") || a.starts_with("--signal=") => i += 1,
                a if a.starts_with("-k") || a.starts_with("-s") => i += 1,
                "--" => i += 1,
                a if is_duration(a) => {
                    i += 1;
                    break;
                }
                _ => return None,
            }
        },
        "time" => {
            if arg(i) == Some("-p") {
                i += 1;
            }
        }
        "nice" => match arg(i)? {
            "-n" => i += 2,
            a if a.starts_with("--adjustment=") => i += 1,
            a if a.starts_with('-')
                && a[1..].chars().all(|c| c.is_ascii_digit())
                && a.len() > 1 =>
            {
                i += 1
            }
            _ => {}
        },
        "stdbuf" => {
            while let Some(a) = arg(i) {
                let ok = ["-i", "-o", "-e", "--input=", "--output=", "--error="]
                    .iter()
                    .any(|p| a.starts_with(p))
                    && a.len() > 2;
                if !ok {
                    break;
                }
                i += 1;
            }
            if i == 1 {
                return None;
            }
        }
        "nohup" | "builtin" | "noglob" => {}
        "command" => {
            if arg(i).is_some_and(|a| a.starts_with('-') && a != "--" && a != "-p") {
                return None;
            }
            if arg(i) == Some("-p") {
                i += 1;
            }
        }
        _ => return None,
    }
    if arg(i) == Some("--") {
        i += 1;
    }
    (i < words.len()).then_some(i)
}

/// Wrappers that deny and ask rules see through (any options).
fn any_wrapper_len(words: &[Word]) -> Option<usize> {
    if let Some(n) = safe_wrapper_len(words) {
        return Some(n);
    }
    let name = words.first()?.value.as_deref().map(basename)?;
    if !matches!(
        name,
        "sudo"
            | "doas"
            | "busybox"
            | "env"
            | "exec"
            | "nohup"
            | "nice"
            | "timeout"
            | "time"
            | "stdbuf"
            | "ionice"
            | "coproc"
            | "watch"
            | "setsid"
            | "command"
            | "builtin"
            | "noglob"
            | "chronic"
            | "unbuffer"
            | "caffeinate"
            | "taskset"
    ) {
        return None;
    }
    let mut i = 1;
    while let Some(w) = words.get(i) {
        let v = w.value.as_deref().unwrap_or("-");
        let opt = v.starts_with('-') || (name == "env" && v.contains('='));
        let number = matches!(name, "timeout" | "nice" | "taskset")
            && v.chars().next().is_some_and(|c| c.is_ascii_digit());
        if !opt && !number {
            break;
        }
        i += 1;
        if matches!(
            v,
            "-u" | "-g" | "-n" | "-k" | "-s" | "-C" | "-c" | "-p" | "-a"
        ) && name != "env"
        {
            i += 1;
        }
    }
    (i < words.len()).then_some(i)
}

/// The strings `cmd` is matched against.
pub fn candidates(cmd: &SimpleCommand) -> Candidates {
    let mut c = Candidates::default();
    let safe_env = cmd
        .assignments
        .iter()
        .all(|a| a.safe_value && SAFE_ENV_VARS.contains(&a.name.as_str()));
    if safe_env {
        let mut words = &cmd.words[..];
        push(&mut c.allow, join_raw(words));
        while let Some(n) = safe_wrapper_len(words) {
            words = &words[n..];
            push(&mut c.allow, join_raw(words));
        }
    }
    if !cmd.assignments.is_empty() {
        push(&mut c.allow, cmd.text_with_assignments());
    }
    // Deny: every reading.
    push(&mut c.deny, cmd.text_with_assignments());
    let mut words = &cmd.words[..];
    for _ in 0..16 {
        push(&mut c.deny, join_raw(words));
        if let Some(v) = join_value(words) {
            push(&mut c.deny, v.clone());
            if let Some(first) = words.first().and_then(|w| w.value.as_deref())
                && first.contains('/')
            {
                let base = basename(first);
                push(&mut c.deny, format!("{base}{}", &v[first.len()..]));
            }
        }
        match any_wrapper_len(words) {
            Some(n) => words = &words[n..],
            None => break,
        }
    }
    for a in c.allow.clone() {
        push(&mut c.deny, a);
    }
    c
}

/// The simple command after safe assignments and safe wrappers: what read-only and
/// path checks look at. `None` when an unsafe assignment precedes it.
pub fn effective_words(cmd: &SimpleCommand) -> Option<&[Word]> {
    if !cmd
        .assignments
        .iter()
        .all(|a| a.safe_value && SAFE_ENV_VARS.contains(&a.name.as_str()))
    {
        return None;
    }
    let mut words = &cmd.words[..];
    while let Some(n) = safe_wrapper_len(words) {
        words = &words[n..];
    }
    Some(words)
}

/// How a command uses the paths it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathUse {
    /// Reads them.
    Read,
    /// Writes or deletes them.
    Write,
}

/// Commands whose positional arguments are file paths, and how they use them.
pub fn path_use(name: &str, words: &[Word]) -> Option<PathUse> {
    Some(match name {
        "rm" | "rmdir" | "mkdir" | "touch" | "mv" | "cp" | "ln" | "chmod" | "chown" | "chgrp"
        | "truncate" | "shred" | "install" | "rsync" | "dd" | "tee" | "unlink" => PathUse::Write,
        "sed"
            if words.iter().any(|w| {
                w.value.as_deref().is_some_and(|v| {
                    v == "-i" || v.starts_with("-i") || v.starts_with("--in-place")
                })
            }) =>
        {
            PathUse::Write
        }
        "cat" | "head" | "tail" | "less" | "more" | "bat" | "nl" | "wc" | "od" | "xxd"
        | "hexdump" | "strings" | "sort" | "uniq" | "cut" | "paste" | "column" | "file"
        | "stat" | "diff" | "cmp" | "grep" | "egrep" | "fgrep" | "rg" | "sed" | "awk" | "jq"
        | "base64" | "md5sum" | "sha1sum" | "sha256sum" | "sha512sum" | "shasum" | "cksum"
        | "ls" | "find" | "tree" | "du" | "tac" | "rev" | "fold" | "realpath" | "readlink"
        | "source" | "." | "vim" | "vi" | "nano" | "emacs" | "cd" | "tr" | "xargs" => PathUse::Read,
        _ => return None,
    })
}

/// Commands whose first positional argument is a pattern or script, not a path.
fn first_positional_is_script(name: &str, words: &[Word]) -> bool {
    match name {
        "grep" | "egrep" | "fgrep" | "rg" => !words.iter().any(|w| {
            w.value.as_deref().is_some_and(|v| {
                v == "-e"
                    || v == "-f"
                    || v.starts_with("--regexp")
                    || v.starts_with("--file")
                    || (v.starts_with("-e") && v.len() > 2)
            })
        }),
        "sed" => !words.iter().any(|w| {
            w.value
                .as_deref()
                .is_some_and(|v| v == "-e" || v == "-f" || v.starts_with("--expression"))
        }),
        "awk" => !words
            .iter()
            .any(|w| w.value.as_deref().is_some_and(|v| v == "-f")),
        "jq" => true,
        _ => false,
    }
}

/// The arguments of `words` that are paths for [`path_use`]: positionals (after the script of
/// grep/sed/awk/jq), the starting points of `find`, and values of `--opt=/path` flags.
pub fn path_args(name: &str, words: &[Word]) -> Vec<Word> {
    let mut out = Vec::new();
    let mut skip_script = first_positional_is_script(name, words);
    let mut after_dashdash = false;
    let mut find_expr = false;
    for w in &words[1..] {
        let v = w.value.as_deref();
        if !after_dashdash {
            if v == Some("--") {
                after_dashdash = true;
                continue;
            }
            if let Some(v) = v {
                if name == "find" && (v.starts_with('-') || v == "(" || v == "!" || v == ")") {
                    find_expr = true;
                }
                if v.starts_with('-') && v.len() > 1 {
                    if let Some((_, value)) = v.split_once('=')
                        && value.starts_with(['/', '~', '.'])
                    {
                        out.push(Word {
                            raw: value.to_owned(),
                            value: Some(value.to_owned()),
                            plain: w.plain,
                            glob: w.glob,
                        });
                    }
                    continue;
                }
            }
        }
        if find_expr {
            continue;
        }
        if skip_script {
            skip_script = false;
            continue;
        }
        out.push(w.clone());
    }
    out
}

/// Whether `words` (wrappers already stripped) is a built-in read-only command: one that
/// changes nothing, judged by its name, subcommand and flags.
pub fn is_read_only(words: &[Word]) -> bool {
    let Some(name) = words.first().and_then(val) else {
        return false;
    };
    let args: Vec<&str> = match words[1..]
        .iter()
        .map(|w| w.value.as_deref())
        .collect::<Option<Vec<_>>>()
    {
        Some(a) => a,
        // Dynamic arguments are fine for commands that take no paths.
        None => {
            return matches!(
                name,
                "echo"
                    | "printf"
                    | "true"
                    | "false"
                    | "test"
                    | "["
                    | "seq"
                    | "basename"
                    | "dirname"
            );
        }
    };
    let has = |flags: &[&str]| {
        args.iter().any(|a| {
            flags
                .iter()
                .any(|f| a == f || (f.starts_with("--") && a.starts_with(&format!("{f}="))))
        })
    };
    let positionals = || args.iter().filter(|a| !a.starts_with('-')).count();
    match name {
        "ls" | "cat" | "head" | "tail" | "wc" | "pwd" | "echo" | "grep" | "egrep" | "fgrep"
        | "stat" | "du" | "df" | "which" | "whereis" | "type" | "diff" | "cmp" | "cut" | "tr"
        | "nl" | "od" | "hexdump" | "strings" | "basename" | "dirname" | "realpath"
        | "readlink" | "uname" | "whoami" | "id" | "true" | "false" | "test" | "[" | "seq"
        | "sleep" | "jq" | "column" | "fold" | "rev" | "tac" | "md5sum" | "sha1sum"
        | "sha256sum" | "sha512sum" | "shasum" | "cksum" | "printenv" | "groups" | "ps"
        | "pgrep" | "less" | "more" | "bat" | "nproc" | "arch" | "tty" | "locale" | "cal"
        | "paste" | "comm" | "expand" | "unexpand" | "cd" => true,
        "printf" => !has(&["-v"]),
        "command" => args.first().is_some_and(|a| *a == "-v" || *a == "-V"),
        "rg" => !has(&["--pre", "--pre-glob", "--search-zip", "-z"]),
        "find" => !has(&[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ]),
        "tree" => !has(&["-o", "-R"]),
        "file" => !has(&["-C", "--compile"]),
        "sort" => {
            !has(&["-o", "--output", "--compress-program"])
                && !args.iter().any(|a| a.starts_with("-o"))
        }
        "uniq" | "xxd" => positionals() <= 1,
        "base64" => !has(&["-o", "--output"]),
        "date" => {
            !has(&["-s", "--set"])
                && args
                    .iter()
                    .all(|a| a.starts_with('-') || a.starts_with('+'))
        }
        "hostname" => args.is_empty(),
        "env" => args.is_empty(),
        "sed" => {
            has(&["-n"])
                && !args.iter().any(|a| {
                    a.starts_with("-i") || a.starts_with("--in-place") || *a == "-f" || *a == "-e"
                })
                && args
                    .iter()
                    .find(|a| !a.starts_with('-'))
                    .is_some_and(|script| {
                        script
                            .chars()
                            .all(|c| c.is_ascii_digit() || matches!(c, ',' | '$' | 'p' | ';' | ' '))
                    })
        }
        "git" => git_read_only(&args),
        _ => false,
    }
}

fn git_read_only(args: &[&str]) -> bool {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match *a {
            "--no-pager" | "-P" | "--no-optional-locks" | "--no-replace-objects" => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else { return false };
    let rest = &args[i + 1..];
    if rest.iter().any(|a| {
        a.starts_with("--output")
            || *a == "--no-index"
            || a.starts_with("--ext-diff")
            || a.starts_with("--exec")
            || *a == "-O"
            || a.starts_with("--open-files-in-pager")
            || a.starts_with("--upload-pack")
            || a.starts_with("--config")
    }) {
        return false;
    }
    let positional = rest.iter().filter(|a| !a.starts_with('-')).count();
    let only = |ok: &[&str]| {
        rest.iter()
            .filter(|a| a.starts_with('-'))
            .all(|a| ok.iter().any(|o| a == o || a.starts_with(&format!("{o}="))))
    };
    match *sub {
        "status" | "log" | "diff" | "show" | "blame" | "shortlog" | "describe" | "rev-parse"
        | "rev-list" | "ls-files" | "ls-tree" | "cat-file" | "grep" | "merge-base"
        | "count-objects" | "whatchanged" | "name-rev" | "for-each-ref" | "show-ref"
        | "check-ignore" | "var" | "help" | "version" | "cherry" => true,
        "branch" => {
            positional == 0
                && only(&[
                    "-a",
                    "--all",
                    "-r",
                    "--remotes",
                    "-v",
                    "-vv",
                    "--verbose",
                    "--list",
                    "-l",
                    "--show-current",
                    "--no-color",
                    "--color",
                    "--sort",
                    "--merged",
                    "--no-merged",
                    "--contains",
                ])
        }
        "tag" => {
            (positional == 0 || rest.iter().any(|a| *a == "-l" || *a == "--list"))
                && only(&[
                    "-l",
                    "--list",
                    "-n",
                    "--sort",
                    "--contains",
                    "--points-at",
                    "--merged",
                ])
        }
        "remote" => rest.is_empty() || rest == ["-v"] || rest.first() == Some(&"get-url"),
        "config" => {
            rest.iter()
                .any(|a| matches!(*a, "--get" | "--get-all" | "--list" | "-l" | "--get-regexp"))
                && only(&[
                    "--get",
                    "--get-all",
                    "--list",
                    "-l",
                    "--get-regexp",
                    "--show-origin",
                    "--global",
                    "--local",
                    "--system",
                    "--null",
                    "-z",
                    "--name-only",
                ])
        }
        "stash" => matches!(rest.first(), Some(&"list") | Some(&"show")),
        "reflog" => rest.is_empty() || rest.first() == Some(&"show"),
        "worktree" => rest.first() == Some(&"list"),
        _ => false,
    }
}

/// Commands acceptEdits mode allows inside the working directories.
pub fn is_accept_edits_command(name: &str) -> bool {
    matches!(
        name,
        "mkdir" | "touch" | "rm" | "rmdir" | "mv" | "cp" | "sed"
    )
}

/// Reads a file: compat decision 9 applies `Read` deny rules to these commands' paths.
pub fn is_simple_reader(name: &str) -> bool {
    matches!(path_use(name, &[]), Some(PathUse::Read))
}

/// Whether a wrapper command (`bash -c`, `eval`, `xargs`) may be looked through for allow
/// decisions: only when nothing but safe assignments and safe wrappers precede it (so
/// `sudo bash -c ...` or `BASH_ENV=x bash -c ...` are not).
pub fn is_transparent(cmd: &SimpleCommand) -> bool {
    cmd.transparent
        && effective_words(cmd)
            .and_then(|w| w.first())
            .and_then(val)
            .map(basename)
            .is_some_and(|n| {
                matches!(
                    n,
                    "bash" | "sh" | "zsh" | "dash" | "ksh" | "ash" | "mksh" | "eval" | "xargs"
                )
            })
}
