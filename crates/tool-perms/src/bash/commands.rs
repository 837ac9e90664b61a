//! What a simple command is: the strings rules are matched against (wrappers and safe
//! environment assignments stripped), read-only commands, and which arguments are paths.

use super::options::{self, Safe, names_long, short_bundle_has, short_option_in};
use super::parse::{SimpleCommand, Word, basename};
use super::{file_uses, sed};

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

fn val(w: &Word) -> Option<&str> {
    if w.plain { w.value.as_deref() } else { None }
}

/// How many wrappers (`sudo nice timeout ...`) are followed at most.
pub(crate) const MAX_WRAPPERS: usize = 8;
/// How many readings of one simple command deny and ask rules are matched against at most.
const MAX_DENY_READINGS: usize = 32;

/// How many words a safe wrapper takes before its command (`timeout 5`, `nice -n 5`,
/// `stdbuf -oL`, `nohup`, `time -p`, `command -p`, `builtin`, `noglob`), read with the
/// wrapper's option table (the wrappers marked safe there). `None` when `words` does not
/// start with one, or with one whose options are not all understood, not plain words, or
/// not among those allowed there (bash's `time` takes only `-p`).
pub fn safe_wrapper_len(words: &[Word]) -> Option<usize> {
    let name = val(words.first()?)?;
    let spec = options::wrapper_spec(name).filter(|s| s.safe != Safe::No)?;
    let read = options::read_options(words, spec);
    let before = words.get(1..read.start)?;
    let understood = read.unsure_from.is_none()
        && read.start < words.len()
        && before.iter().all(|w| match (val(w), spec.safe) {
            (None, _) => false,
            (Some("--"), _) => true,
            (Some(v), Safe::Only(allowed)) => allowed.contains(&v),
            (Some(_), _) => true,
        });
    understood.then_some(read.start)
}

/// Where the command the shell itself runs starts in `words`: after the wrappers that run
/// their command in the shell (`builtin`, `command -p`, `time -p`, `noglob`), so that
/// `builtin cd` moves the shell and `nice cd` does not.
pub(crate) fn shell_command_start(words: &[Word]) -> usize {
    let mut start = 0;
    for _ in 0..MAX_WRAPPERS {
        let here = &words[start..];
        let in_shell = here
            .first()
            .and_then(val)
            .and_then(options::wrapper_spec)
            .is_some_and(|s| s.in_shell);
        match safe_wrapper_len(here).filter(|_| in_shell) {
            Some(n) => start += n,
            None => break,
        }
    }
    start
}

/// Where the command run by a wrapper starts in `words` (any wrapper deny and ask rules see
/// through: `sudo`, `env`, `nice`, `timeout`, `exec`, ..., with any options). `None` when
/// `words` does not start with a wrapper followed by a command. Otherwise the indices of
/// the possible starts, the reading with the wrapper's option table first, and whether that
/// reading is certain (every option understood). When it is not, every later word that is
/// not an option is a possible start too: deny and ask rules look at all of them.
pub fn wrapped_command_starts(words: &[Word]) -> Option<(Vec<usize>, bool)> {
    let name = basename(words.first()?.value.as_deref()?);
    if let Some(found) = runner_command_starts(name, words) {
        return found;
    }
    let spec = options::wrapper_spec(name)?;
    let read = options::read_options(words, spec);
    let starts = options::command_starts(words, read);
    // `entr -s STRING`: a shell string, which the reading does not analyse.
    let shell_string = name == "entr"
        && words[1..read.start.min(words.len())].iter().any(|w| {
            w.value
                .as_deref()
                .is_some_and(|v| short_bundle_has(v, &['s']))
        });
    (!starts.is_empty()).then_some((starts, read.unsure_from.is_none() && !shell_string))
}

/// The first wrapper (its name as written) with a glob among its own words, and that glob
/// (`nice -n * push`, where `*` may be `5 git`): the words bash makes of it may move where
/// the wrapped command starts, and be its name, so no reading of what runs is sure. An
/// assignment (`env X=* ls`) stays one whatever it expands to. xargs, GNU parallel and xe
/// count as wrappers here (`xargs -a * push`, where `*` may be `f git`). `None` when no
/// wrapper of `commands` has one.
pub fn glob_among_wrapper_words(commands: &[SimpleCommand]) -> Option<(String, String)> {
    let assignment = |w: &Word| {
        w.raw.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    // xargs, GNU parallel and xe are read by the analysis's own code, not the wrapper
    // tables; the command they run is a command of the analysis of its own.
    let runner_spec = |words: &[Word]| -> Option<&'static options::OptionSpec> {
        match basename(words.first()?.value.as_deref()?) {
            "xargs" => Some(&options::XARGS),
            "parallel" | "sem" => Some(&options::PARALLEL),
            "xe" => Some(&options::XE),
            _ => None,
        }
    };
    commands.iter().find_map(|c| {
        let mut words = &c.words[..];
        for _ in 0..=MAX_WRAPPERS {
            if let Some(spec) = runner_spec(words) {
                let start = options::read_options(words, spec).start.min(words.len());
                let glob = words[1..start].iter().find(|w| w.glob)?;
                return Some((words[0].raw.clone(), glob.raw.clone()));
            }
            let (starts, _) = wrapped_command_starts(words)?;
            let start = starts[0].min(words.len());
            if let Some(glob) = words[1..start].iter().find(|w| w.glob && !assignment(w)) {
                return Some((words[0].raw.clone(), glob.raw.clone()));
            }
            words = &words[start..];
        }
        None
    })
}

/// How many places where a program runner's command may start are read at most.
const MAX_RUNNER_STARTS: usize = 8;

/// [`wrapped_command_starts`] for the programs that run a command their arguments give
/// after a word or a subcommand of their own, which no wrapper table can say: `nix develop
/// [INSTALLABLE] -c CMD`, `nix shell PKG… --command CMD`, `gdb [OPTIONS] --args CMD`, `perf
/// stat|record|trace|ftrace [OPTIONS] CMD` (`perf stat record`, `perf trace record` too).
/// `Some(None)` when `name` is one of them but runs no command written out here (`nix
/// develop` alone, `gdb PROG`, `perf report`; [`runs_a_program_it_is_given`] says whether
/// it runs one some other way); `None` for another program. A computed word where the
/// marker may be makes every later word that is not an option a possible start (uncertain).
fn runner_command_starts(name: &str, words: &[Word]) -> Option<Option<(Vec<usize>, bool)>> {
    // After `from`: every word that is not an option, as a possible start.
    let later = |from: usize| -> Vec<usize> {
        (from + 1..words.len())
            .filter(|&j| {
                !words[j]
                    .value
                    .as_deref()
                    .is_some_and(|v| v.starts_with('-'))
            })
            .take(MAX_RUNNER_STARTS)
            .collect()
    };
    // The first of `markers` from `from` on, the command after it; a computed word before
    // it may be the marker.
    let after_marker = |from: usize, markers: &[&str]| -> Option<(Vec<usize>, bool)> {
        for (j, w) in words.iter().enumerate().skip(from) {
            match w.value.as_deref() {
                None => return Some((later(j), false)).filter(|(s, _)| !s.is_empty()),
                Some(v) if markers.contains(&v) => {
                    return (j + 1 < words.len()).then(|| (vec![j + 1], true));
                }
                _ => {}
            }
        }
        None
    };
    match name {
        "nix" => {
            let at = nix_subcommand(words)?;
            match words.get(at).and_then(|w| w.value.as_deref()) {
                // `nix develop -c CMD ARGS`, `nix shell PKG --command CMD ARGS`.
                Some("develop" | "shell") => Some(after_marker(at + 1, &["-c", "--command"])),
                // Another subcommand, or a computed one
                // ([`runs_a_program_it_is_given`]).
                _ => Some(None),
            }
        }
        // `gdb [OPTIONS] --args PROG ARGS` (getopt_long_only: `-args` too). Commands its
        // options give that may run another one (`-ex 'shell rm x'`) make it uncertain.
        "gdb" => Some(after_marker(1, &["--args", "-args"]).map(|(starts, sure)| {
            let options: Vec<&str> = words[1..starts[0]]
                .iter()
                .map(|w| w.value.as_deref().unwrap_or("\0"))
                .collect();
            (starts, sure && !gdb_runs_unseen(&options))
        })),
        "perf" => {
            let at = perf_subcommand(words)?;
            let sub = words.get(at).and_then(|w| w.value.as_deref());
            let spec = match sub {
                Some("stat") => &options::PERF_STAT,
                Some("record") => &options::PERF_RECORD,
                Some("trace") => &options::PERF_TRACE,
                Some("ftrace") => &options::PERF_FTRACE,
                // Another subcommand, or a computed one ([`runs_a_program_it_is_given`]).
                _ => return Some(None),
            };
            let mut from = at;
            let mut read = options::read_options(&words[from..], spec);
            // `perf stat record CMD`, `perf trace record CMD`: the same options again.
            if matches!(sub, Some("stat" | "trace"))
                && read.unsure_from.is_none()
                && words
                    .get(from + read.start)
                    .and_then(|w| w.value.as_deref())
                    == Some("record")
            {
                from += read.start;
                read = options::read_options(&words[from..], spec);
            }
            let starts: Vec<usize> = options::command_starts(&words[from..], read)
                .into_iter()
                .map(|s| s + from)
                .collect();
            // `perf stat --pre CMD`/`--post CMD` run shell commands the reading does not see.
            let shell_commands = words[at..from + read.start.min(words.len() - from)]
                .iter()
                .filter_map(|w| w.value.as_deref())
                .any(|v| names_long(v, "--pre") || names_long(v, "--post"));
            Some(
                (!starts.is_empty())
                    .then_some((starts, read.unsure_from.is_none() && !shell_commands)),
            )
        }
        _ => None,
    }
}

/// Whether a git subcommand runs a command its arguments give: `git rebase -x CMD`
/// (`--exec`), `git bisect run CMD`, `git submodule foreach CMD`, `git filter-branch
/// --tree-filter CMD` (any `--*-filter`), `git difftool -x CMD` (`--extcmd`).
fn git_runs_given_command(words: &[Word]) -> bool {
    let Some((at, _, _)) = git_globals(words) else {
        return false;
    };
    let Some(sub) = words.get(at).and_then(|w| w.value.as_deref()) else {
        return false;
    };
    let args: Vec<&str> = words[at + 1..]
        .iter()
        .map(|w| w.value.as_deref().unwrap_or(""))
        .collect();
    let options = || args.iter().take_while(|a| **a != "--");
    let short_x = |a: &&str| a.starts_with('-') && !a.starts_with("--") && a.contains('x');
    match sub {
        "rebase" => options().any(|a| short_x(a) || names_long(a, "--exec")),
        "difftool" => options().any(|a| short_x(a) || names_long(a, "--extcmd")),
        "bisect" => args.first() == Some(&"run"),
        "submodule" => args.contains(&"foreach"),
        "filter-branch" => options().any(|a| {
            a.starts_with("--") && a.split('=').next().is_some_and(|n| n.ends_with("-filter"))
        }),
        _ => false,
    }
}

/// gdb commands that run nothing but the program gdb was given, or print.
const GDB_QUIET_COMMANDS: &[&str] = &[
    "run",
    "r",
    "start",
    "bt",
    "bt full",
    "backtrace",
    "backtrace full",
    "where",
    "thread apply all bt",
    "thread apply all bt full",
    "thread apply all backtrace",
    "info registers",
    "info threads",
    "info sharedlibrary",
    "continue",
    "c",
    "kill",
    "quit",
    "q",
];

/// Whether gdb's command line `args` (its options, up to `--args`) gives it commands that
/// may run another program: an `-ex`/`-iex` command not among [`GDB_QUIET_COMMANDS`]
/// (`shell CMD`, `!CMD`, `pipe`, `python`, `make`, ...), a command file (`-x`, `-ix`,
/// `--command`, `--init-command`), or a computed word (`\0`).
fn gdb_runs_unseen(args: &[&str]) -> bool {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if *a == "\0" {
            return true;
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (*a, None),
        };
        let name = name.trim_start_matches('-');
        if !a.starts_with('-') {
            continue;
        }
        match name {
            "ex" | "eval-command" | "iex" | "init-eval-command" => {
                let command = inline.or_else(|| {
                    i += 1;
                    args.get(i - 1).copied()
                });
                if command.is_none_or(|c| !GDB_QUIET_COMMANDS.contains(&c.trim())) {
                    return true;
                }
            }
            "x" | "command" | "ix" | "init-command" => return true,
            "args" => break,
            _ => {}
        }
    }
    false
}

/// Where nix's subcommand is: the word after `nix`, or, after nix's own options (some of
/// which take values), the first `develop`, `shell` or `run`, or a computed word that may
/// be it; `None` when there is none.
fn nix_subcommand(words: &[Word]) -> Option<usize> {
    let first = words.get(1)?;
    if !first.value.as_deref().is_some_and(|v| v.starts_with('-')) {
        return Some(1);
    }
    words
        .iter()
        .enumerate()
        .skip(2)
        .find_map(|(j, w)| match w.value.as_deref() {
            None => Some(j),
            Some("develop" | "shell" | "run") => Some(j),
            _ => None,
        })
}

/// Where perf's subcommand is, after its own options (`--buildid-dir DIR`, `--exec-path`,
/// `--no-pager`, `-v`, …): the first word that is not one; `None` when there is none.
fn perf_subcommand(words: &[Word]) -> Option<usize> {
    let mut i = 1;
    while let Some(w) = words.get(i) {
        match w.value.as_deref() {
            Some("--buildid-dir" | "--debugfs-dir") => i += 2,
            Some(v) if v.starts_with('-') => i += 1,
            _ => return Some(i),
        }
    }
    None
}

/// The name of the command `cmd` finally runs, through every wrapper (`builtin cd` is `cd`,
/// `sudo -u x git` is `git`), by the wrappers' option tables.
pub fn effective_name(cmd: &SimpleCommand) -> Option<&str> {
    let mut words = &cmd.words[..];
    for _ in 0..MAX_WRAPPERS {
        match wrapped_command_starts(words) {
            Some((starts, _)) => words = &words[starts[0]..],
            None => break,
        }
    }
    words.first()?.value.as_deref().map(basename)
}

/// Whether `cmd` changes the shell's directory (`cd`, `pushd`, `popd`, also behind
/// `builtin`/`command` or another wrapper).
pub fn changes_directory(cmd: &SimpleCommand) -> bool {
    matches!(effective_name(cmd), Some("cd" | "pushd" | "popd"))
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
    let mut todo: Vec<&[Word]> = vec![&cmd.words[..]];
    for _ in 0..MAX_DENY_READINGS {
        let Some(words) = todo.pop() else { break };
        push(&mut c.deny, join_raw(words));
        let values = brace_expanded_values(words);
        if let Some(values) = &values {
            let v = values.join(" ");
            push(&mut c.deny, v.clone());
            if let Some(first) = values.first()
                && first.contains('/')
            {
                let base = basename(first);
                push(&mut c.deny, format!("{base}{}", &v[first.len()..]));
            }
        }
        // A computed word among the leading options is only an option's value there (`git
        // -C "$(git rev-parse --show-toplevel)" push`): read as written.
        let spelled = values.unwrap_or_else(|| {
            words
                .iter()
                .map(|w| w.value.clone().unwrap_or_else(|| w.raw.clone()))
                .collect()
        });
        for reading in past_leading_options(&spelled) {
            push(&mut c.deny, reading);
        }
        // git runs `git push` as the program `git-push` in its exec path, and `git foo` as
        // a `git-foo` on `PATH`: either run by its own name is git with that subcommand.
        if let Some((first, rest)) = spelled.split_first()
            && let Some(sub) = basename(first).strip_prefix("git-")
            && !sub.is_empty()
        {
            let mut reading = format!("git {sub}");
            for word in rest {
                reading.push(' ');
                reading.push_str(word);
            }
            push(&mut c.deny, reading);
        }
        if let Some((starts, _)) = wrapped_command_starts(words) {
            todo.extend(starts.iter().rev().map(|&s| &words[s..]));
        }
        // The command ssh runs on the other end (`ssh localhost rm x`): deny and ask rules
        // see it, the path checks do not (its paths are the remote machine's).
        if let SshCommand::At(at) = ssh_remote_command(words) {
            todo.push(&words[at..]);
        }
    }
    for a in c.allow.clone() {
        push(&mut c.deny, a);
    }
    c
}

/// The words bash runs: their values, static brace lists expanded (`r{m,} x` is `rm r x`,
/// `git {push,origin} master` is `git push origin master`), the command name included;
/// `None` when a word is computed otherwise, or too big to expand.
fn brace_expanded_values(words: &[Word]) -> Option<Vec<String>> {
    let mut parts = Vec::with_capacity(words.len() + 2);
    for w in words {
        match &w.value {
            Some(v) => parts.push(v.clone()),
            None => parts.extend(crate::engine::expand_braces(&w.raw)?),
        }
    }
    Some(parts)
}

/// Deny and ask readings of a command line with the program's own options before its
/// subcommand left out: `git --no-pager push`, `git -C . push`, `kubectl -n prod delete`,
/// `cargo +nightly publish` are also read as `git push`, `kubectl delete`, `cargo
/// publish`, so that `Bash(git push:*)` sees them. Only when an option follows the program
/// directly (`git log --grep push` stays `git log`). git's global options are read with
/// its own table (which take a value); for another program each word after an option
/// without `=` may be its value or the subcommand, and both readings are given, at most
/// [`MAX_OPTION_READINGS`] of them (a deny rule may then see a word that was a value: a
/// question too many, never a command missed).
fn past_leading_options(words: &[String]) -> Vec<String> {
    let program = words.first().map(|w| basename(w)).unwrap_or_default();
    leading_option_walk(words)
        .0
        .into_iter()
        .map(|from| format!("{program} {}", words[from..].join(" ")))
        .collect()
}

/// Where the readings of [`past_leading_options`] start in `words`, and the last index
/// the walk over the leading options looked at (the words that decided where they start;
/// 1 when there are no leading options).
fn leading_option_walk(words: &[String]) -> (Vec<usize>, usize) {
    let is_option =
        |w: &str| w.len() > 1 && w != "--" && (w.starts_with('-') || w.starts_with('+'));
    let mut out = Vec::new();
    if words.len() < 3 || !(is_option(&words[1]) || words[1] == "--") {
        return (out, 1);
    }
    let program = basename(&words[0]);
    if program == "git" {
        // Known options are read by git's table; after an unknown one the next word is read
        // both as its value and as the subcommand. `--` ends them.
        let mut i = 1;
        while let Some(w) = words.get(i).filter(|w| is_option(w) || *w == "--") {
            if w == "--" {
                i += 1;
                break;
            }
            let known_flag = GIT_GLOBAL_OPTIONS.contains(&w.as_str())
                || GIT_HARMLESS_FLAGS.contains(&w.as_str())
                || w.contains('=');
            let takes_value = GIT_VALUE_OPTIONS.contains(&w.as_str());
            let unknown = !known_flag && !takes_value;
            if unknown && i + 1 < words.len() {
                out.push(i + 1);
            }
            i += 1 + usize::from(takes_value || unknown);
        }
        if i < words.len() {
            out.push(i);
        }
        return (out, i);
    }
    let mut after_option = false;
    for j in 1..words.len() {
        let w = words[j].as_str();
        if w == "--" {
            if j + 1 < words.len() {
                out.push(j + 1);
            }
            return (out, j + 1);
        }
        if is_option(w) {
            after_option = !w.contains('=');
            continue;
        }
        out.push(j);
        if !after_option || out.len() >= MAX_OPTION_READINGS {
            return (out, j);
        }
        after_option = false;
    }
    (out, words.len())
}

/// How many readings [`past_leading_options`] gives a program's leading options at most.
const MAX_OPTION_READINGS: usize = 16;

/// Where the wrappers before a reading leave its relative (and absolute) paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum WrappedPaths {
    /// Where the shell is: as for the command alone.
    AsWritten,
    /// In another directory (`env -C DIR`, `sudo -D DIR`, `sudo -i`, `nsenter --wd`,
    /// `proot -w DIR`, `conda run --cwd DIR`): relative paths are somewhere not known here.
    OtherDirectory,
    /// Under another root (`chroot DIR`, `nsenter --root`, `bwrap`, `proot -r DIR`,
    /// `firejail --private`): every path is.
    OtherRoot,
}

/// How the wrapper at the start of `words` (up to its command at `start`) moves the paths
/// of the command it runs.
fn wrapper_moves_paths(words: &[Word], start: usize) -> WrappedPaths {
    let Some(name) = words.first().and_then(val).map(basename) else {
        return WrappedPaths::AsWritten;
    };
    let opts: Vec<&str> = words[1..start.min(words.len())]
        .iter()
        .filter_map(|w| w.value.as_deref())
        .collect();
    let has = |letters: &[char], longs: &[&str]| {
        opts.iter()
            .any(|v| short_bundle_has(v, letters) || longs.iter().any(|l| names_long(v, l)))
    };
    match name {
        "chroot" => WrappedPaths::OtherRoot,
        "nsenter" | "unshare" if has(&['r', 'R'], &["--root"]) => WrappedPaths::OtherRoot,
        "sudo" if has(&['R'], &["--chroot"]) => WrappedPaths::OtherRoot,
        "nsenter" | "unshare" if has(&['w', 'W'], &["--wd", "--wdns"]) => {
            WrappedPaths::OtherDirectory
        }
        "env" if has(&['C'], &["--chdir"]) => WrappedPaths::OtherDirectory,
        "sudo" | "doas" if has(&['D', 'i'], &["--chdir", "--login"]) => {
            WrappedPaths::OtherDirectory
        }
        // A service runs in `/` (or the home directory) unless told to stay.
        "systemd-run" if !has(&['d'], &["--same-dir", "--scope"]) => WrappedPaths::OtherDirectory,
        // bwrap builds a new root of its mounts: a path may name anything there.
        "bwrap" => WrappedPaths::OtherRoot,
        "proot"
            if has(
                &['r', 'R', 'S', 'b', 'm'],
                &["--rootfs", "--bind", "--mount"],
            ) =>
        {
            WrappedPaths::OtherRoot
        }
        "proot" if has(&['w'], &["--pwd", "--cwd"]) => WrappedPaths::OtherDirectory,
        "firejail"
            if opts.iter().any(|v| {
                ["--chroot", "--overlay", "--bind", "--private", "--tmpfs"]
                    .iter()
                    .any(|l| v.split('=').next().is_some_and(|n| n.starts_with(l)))
            }) =>
        {
            WrappedPaths::OtherRoot
        }
        "conda" | "mamba" | "micromamba" if has(&[], &["--cwd"]) => WrappedPaths::OtherDirectory,
        "flatpak-spawn" if has(&[], &["--directory"]) => WrappedPaths::OtherDirectory,
        // `gdb -cd DIR` (or `--cd=DIR`) runs its program there.
        "gdb"
            if opts
                .iter()
                .any(|v| matches!(v.split('=').next(), Some("-cd" | "--cd"))) =>
        {
            WrappedPaths::OtherDirectory
        }
        _ => WrappedPaths::AsWritten,
    }
}

/// Every reading of `words` through its wrappers, `words` first: `sudo -u x cat f` is read
/// as itself and as `cat f` (any wrapper, with every start its option table allows, at most
/// `MAX_DENY_READINGS`), each with where its wrappers leave its paths ([`WrappedPaths`]).
/// Path checks look at all of them, as deny rules do: a path behind `env`, `sudo` or
/// `setsid` is as much read as one behind nothing.
pub fn wrapped_readings(words: &[Word]) -> Vec<(&[Word], WrappedPaths)> {
    let mut readings = Vec::new();
    let mut todo: Vec<(&[Word], WrappedPaths)> = vec![(words, WrappedPaths::AsWritten)];
    while readings.len() < MAX_DENY_READINGS {
        let Some((words, moved)) = todo.pop() else {
            break;
        };
        readings.push((words, moved));
        if let Some((starts, _)) = wrapped_command_starts(words) {
            todo.extend(
                starts
                    .iter()
                    .rev()
                    .map(|&s| (&words[s..], moved.max(wrapper_moves_paths(words, s)))),
            );
        }
    }
    readings
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathUse {
    /// Reads them.
    Read,
    /// Writes or deletes them.
    Write,
}

/// Commands whose positional arguments are file paths, and how they use them; any other
/// command given a word bash expands as a glob (`echo secrets/*`) reads the directory the
/// glob lists (`listed_directory`), as `ls` of it would.
pub fn path_use(name: &str, words: &[Word]) -> Option<PathUse> {
    table_path_use(name, words).or_else(|| lists_by_glob(words).then_some(PathUse::Read))
}

/// Whether a word after the command name is one bash expands as a glob: it lists a
/// directory.
fn lists_by_glob(words: &[Word]) -> bool {
    words.iter().skip(1).any(|w| w.glob)
}

/// [`path_use`] of the commands known by name.
fn table_path_use(name: &str, words: &[Word]) -> Option<PathUse> {
    Some(match name {
        // `link FILE1 FILE2` is `ln FILE1 FILE2` (a hard link).
        "rm" | "rmdir" | "mkdir" | "touch" | "mv" | "cp" | "ln" | "link" | "chmod" | "chown"
        | "chgrp" | "truncate" | "shred" | "install" | "rsync" | "dd" | "tee" | "unlink" => {
            PathUse::Write
        }
        // In place, or with a script that writes a file it names (`w out`) or may (`-f
        // FILE`): each path its own use ([`read_path_args`]). (`gsed` is GNU sed's name
        // beside a BSD sed.)
        "sed" | "gsed"
            if sed_in_place(words)
                || sed_may_be_in_place(words)
                || sed_script_files(words).is_none_or(|s| {
                    s.files.iter().any(|f| f.writes)
                        || s.unseen.as_ref().is_some_and(sed::Unseen::may_write)
                }) =>
        {
            PathUse::Write
        }
        // gawk's in-place editing (`-i inplace`) writes its files back.
        "awk" | "gawk" if awk_in_place(words) => PathUse::Write,
        // Editors write what they open, and the files their commands name cannot be seen
        // ([`file_uses`]: `vim -S F` reads F, `+CMD` and `-c CMD` name no file).
        _ if file_uses::is_editor(name) => PathUse::Write,
        // A named pipe or a device node is made where its operand says.
        "mkfifo" | "mknod" => PathUse::Write,
        // A shell reads the script file it runs (`bash FILE`, `sh -v FILE`; not `bash -c`),
        // as `source FILE` does; with no operand, the file `xargs` appends (or its input).
        _ if SCRIPT_SHELLS.contains(&name) && shell_script_files(name, words).is_some() => {
            PathUse::Read
        }
        // An interpreter reads the script file it runs (`python FILE`, `node FILE`, `perl
        // -w FILE`, `make -f FILE`; not `python -c`, `-m`, `node -e`), and `perl -i` writes
        // the files it loops over; an in-place rewriter (`sponge`, `dos2unix`, `gofmt -w`,
        // `black`, `chattr`, …) writes its files, or only reads them (`gofmt` alone, `black
        // --check`): each file its own use ([`file_uses`]).
        // A compressor replaces its file by the compressed one (`xz F`, `bzip2 F`, `zstd --rm
        // F`), or only reads it (`xz -c`, `xzcat`, `zstd F` keeps it but writes `F.zst`
        // beside it): each file its own use ([`file_uses`]).
        // Programs whose files are named by options of their own (`openssl -in F -out G`,
        // `cpp IN OUT`, `xmllint --output F`, `uudecode -o F`, `rename FROM TO FILES`, the
        // binutils that rewrite objects and archives, `ld -o`, `as -o`, `gpg -o`, `mktemp`,
        // `fallocate`, `cpio -O`, `sqlite3 DB`): each file its own use.
        _ if file_uses::is_interpreter(name)
            || file_uses::is_rewriter(name)
            || file_uses::is_compressor(name)
            || file_uses::is_converter(name) =>
        {
            match file_uses::file_uses(name, words) {
                Some(u) if u.files.iter().any(|(_, u)| *u == PathUse::Write) => PathUse::Write,
                _ => PathUse::Read,
            }
        }
        // `sdiff -o FILE` writes the merge there: every path counts as written.
        "sdiff" if has_option(words, &['o'], &["--output"]) => PathUse::Write,
        // Each file its own use ([`file_uses`]): the archive read and the members written
        // into a directory; the input read and the pieces written; a file compressed and
        // replaced, or only read (`gzip -c`, `zcat`); the local files `scp` sends and
        // receives; the files `zip` reads and the archive it writes; the configuration `git
        // config` sets, the directory `git init DIR` and `git clone URL DIR` fill.
        "unzip" | "split" | "csplit" | "gzip" | "gunzip" | "zcat" | "scp" | "zip" => PathUse::Write,
        "git" if file_uses::file_uses(name, words).is_some() => PathUse::Write,
        // git's diff family writes what it prints to `--output=F` (git takes abbreviated
        // long options): every path counts as written.
        "git" if git_writes_output(words) => PathUse::Write,
        // Given two paths, one outside the repository (`/dev/null`, `~/.aws/credentials`),
        // or outside any repository, `git diff` compares the files themselves (an implicit
        // `--no-index`): its operands are checked as paths read (a revision names no file
        // and passes).
        "git" if git_subcommand(words) == Some("diff") => PathUse::Read,
        // Subcommands that print the files they are given (`git blame .env`, `git log -p --
        // .env`): their operands are checked as paths read (a revision names no file and
        // passes). What they print of files they are not given: [`git_content`].
        "git"
            if matches!(
                git_subcommand(words),
                Some("blame" | "annotate" | "log" | "show" | "whatchanged" | "grep")
            ) =>
        {
            PathUse::Read
        }
        // Readers that can also write a file they are given (`sort -o F`, `uniq IN OUT`,
        // `xxd IN OUT`, `tree -o F`, `less -o LOG`, `find -fprint F`): when used so, every
        // path counts as written (which one is the output is not worked out).
        "sort" | "uniq" | "xxd" | "tree" | "less" | "base64" | "find" if !is_read_only(words) => {
            PathUse::Write
        }
        // Each file its own use: [`file_uses`].
        // (Each path's own use overrides it; what is appended to them is written.)
        "curl" | "wget" | "tar" | "patch" => PathUse::Write,
        // Readers that write what they print to `-o FILE`, and `zless`'s log and lesskey
        // files (less's options): every path counts as written.
        "shuf" | "iconv" if has_option(words, &['o'], &["--output"]) => PathUse::Write,
        "zless"
            if has_option(
                words,
                &['o', 'O', 'k'],
                &[
                    "--log-file",
                    "--LOG-FILE",
                    "--lesskey-file",
                    "--lesskey-src",
                ],
            ) =>
        {
            PathUse::Write
        }
        // `shuf -e ARGS` shuffles its operands, `shuf -i LO-HI` numbers: no file.
        "shuf" if has_option(words, &['e', 'i'], &["--echo", "--input-range"]) => return None,
        // `hd` is `hexdump -C`; `dir` and `vdir` are `ls`; the binutils that only read.
        "cat" | "head" | "tail" | "less" | "more" | "bat" | "nl" | "wc" | "od" | "xxd"
        | "hexdump" | "hd" | "strings" | "sort" | "uniq" | "cut" | "paste" | "column" | "file"
        | "stat" | "diff" | "cmp" | "grep" | "egrep" | "fgrep" | "rg" | "sed" | "gsed" | "awk"
        | "gawk" | "mawk" | "nawk" | "jq" | "base64" | "md5sum" | "sha1sum" | "sha224sum"
        | "sha256sum" | "sha384sum" | "sha512sum" | "shasum" | "cksum" | "ls" | "dir" | "vdir"
        | "objdump" | "readelf" | "nm" | "size" | "find" | "tree" | "du" | "tac" | "rev"
        | "fold" | "realpath" | "readlink" | "source" | "." | "cd" | "tr" | "xargs" | "comm"
        | "expand" | "unexpand" | "date" | "fmt" | "pr" | "base32" | "bzcat" | "zgrep"
        | "zegrep" | "zfgrep" | "zless" | "basenc" | "b2sum" | "sum" | "join" | "shuf"
        | "iconv" | "uuencode" | "look" | "sdiff" | "diff3" => PathUse::Read,
        _ => return None,
    })
}

/// Whether `sed WORDS` rewrites its files in place (`-i`, `-i.bak`, `-ni`, `--in-place`,
/// `--in-place=.bak`).
pub fn sed_in_place(words: &[Word]) -> bool {
    words.iter().any(|w| {
        w.value
            .as_deref()
            .is_some_and(|v| short_bundle_has(v, &['i']) || names_long(v, "--in-place"))
    })
}

/// Whether `awk WORDS` (gawk) rewrites its files in place: it includes the `inplace`
/// library (`-i inplace`, `-iinplace`, `--include=inplace`, `-i inplace.awk`, a path to
/// it), or an include whose name is computed (which may be it).
pub fn awk_in_place(words: &[Word]) -> bool {
    let inplace = |w: &Word| {
        w.value.as_deref().is_none_or(|v| {
            let name = basename(v);
            name.strip_suffix(".awk").unwrap_or(name) == "inplace"
        })
    };
    let mut iter = words.iter().skip(1);
    while let Some(w) = iter.next() {
        let Some(v) = w.value.as_deref() else {
            continue;
        };
        if v == "--" {
            break;
        }
        let value = if v == "-i" || (v.len() > 4 && "--include".starts_with(v)) {
            iter.next().cloned()
        } else if let Some(rest) = v.strip_prefix("--include=") {
            Some(option_value_path(rest, w))
        } else if let Some(rest) = v.strip_prefix("-i").filter(|_| !v.starts_with("--")) {
            Some(option_value_path(rest, w))
        } else {
            // Another option taking the next word (`-f FILE`, `-v x=1`) skips it.
            if v.len() == 2 && v.starts_with('-') && "fFveElW".contains(&v[1..]) {
                iter.next();
            }
            continue;
        };
        if value.as_ref().is_some_and(inplace) {
            return true;
        }
    }
    false
}

/// The shells that run a script file given as their first operand (`bash FILE ARGS`).
const SCRIPT_SHELLS: &[&str] = &[
    "sh", "bash", "rbash", "zsh", "dash", "ksh", "ksh93", "mksh", "pdksh", "oksh", "ash", "yash",
    "posh", "fish", "csh", "tcsh",
];

/// The script file the shell `name` runs (`bash FILE ARGS`, `sh -v FILE`, `bash -- FILE`,
/// `bash -o pipefail FILE`): its first operand, its options read as the shell reads them
/// (`-o`/`-O` and `+o`/`+O` take the next word, `--rcfile F` too). Empty when it has none
/// (it runs its standard input, or the file `xargs` appends) or it is `/dev/stdin`; `None`
/// when it runs no file: a command string (`-c`), its input with the operands as its
/// arguments (`-s`), or nothing (`--help`, `--version`). A computed word where an option
/// may be could be the script or an option: it is given (a path that cannot be checked),
/// and so is the operand after it. The words after the script are its arguments, no files
/// of the shell's.
pub fn shell_script_files(name: &str, words: &[Word]) -> Option<Vec<Word>> {
    // Short options that take the next word (fish's also the rest of their bundle), and
    // letters that end the options (zsh's and csh's `-b`).
    let (values, ends) = match name {
        "fish" => ("Cpdof", ""),
        "zsh" => ("oO", "b"),
        "csh" | "tcsh" => ("", "b"),
        _ => ("oO", ""),
    };
    let long_values: &[&str] = match name {
        "fish" => &[
            "init-command",
            "debug",
            "debug-output",
            "profile",
            "profile-startup",
            "features",
        ],
        "zsh" => &["emulate"],
        _ => &["rcfile", "init-file"],
    };
    let mut out = Vec::new();
    let mut rest = words.iter().skip(1);
    let mut options = true;
    while let Some(w) = rest.next() {
        let Some(v) = w.value.as_deref() else {
            // A computed word: the script, or an option before it.
            out.push(w.clone());
            if !options || is_surely_operand(w) {
                return Some(out);
            }
            continue;
        };
        if !options || !(v.starts_with('-') || v.starts_with('+')) || v == "+" {
            if !matches!(
                v,
                "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0"
            ) {
                out.push(w.clone());
            }
            return Some(out);
        }
        // `-` is `--` (bash; POSIX sh ignores it as the first operand).
        if v == "--" || v == "-" {
            options = false;
            continue;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (long, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            match long {
                // Prints, or runs a command string.
                "help" | "version" | "command" => return (!out.is_empty()).then_some(out),
                _ if long_values.contains(&long) && !inline => {
                    rest.next();
                }
                _ => {}
            }
            continue;
        }
        let minus = v.starts_with('-');
        let letters = &v[1..];
        if minus && letters.contains(['c', 's']) {
            // A command string, or the script its input holds (the operands are its
            // arguments).
            return (!out.is_empty()).then_some(out);
        }
        if minus && letters.contains(|c| ends.contains(c)) {
            options = false;
            continue;
        }
        if name == "fish" {
            // getopt: the first letter that takes a value takes the rest of the bundle, else
            // the next word.
            if let Some(at) = letters.find(|c| values.contains(c))
                && at + 1 == letters.len()
            {
                rest.next();
            }
            continue;
        }
        for _ in letters.chars().filter(|c| values.contains(*c)) {
            rest.next();
        }
    }
    Some(out)
}

/// How a command reads the whole tree under a directory it is given (`grep -r`, `rg`,
/// `cp -r`): the files inside are read though they are not named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeRead {
    /// Symlinks inside the tree are followed (`grep -R`, `rg -L`, `cp -L`).
    pub follow_links: bool,
    /// Hidden files and those ignored by `.gitignore` and the like are skipped (`rg`
    /// without `--hidden`/`-uu`/`--no-ignore`): ripgrep's own filters.
    pub rg_filters: Option<(bool, bool)>,
    /// With no directory given, the tree is the working directory (`grep -r x`, `rg x`).
    pub defaults_to_cwd: bool,
    /// Only the entries directly in the directory are read (`diff DIR1 DIR2` without `-r`).
    pub direct_only: bool,
    /// Only names (and sizes) are listed, no file read: what lies in the tree itself is
    /// listed as `ls` lists it, and only what a followed link reaches is held against the
    /// Read rules (`find -L`, `ls -LR`, `du -L`: [`lists_trees_through_links`]).
    pub names_only: bool,
}

/// The static words of a command line's arguments before `--`: where its options are.
pub fn option_words(words: &[Word]) -> impl Iterator<Item = &str> {
    words
        .get(1..)
        .unwrap_or_default()
        .iter()
        .filter_map(|w| w.value.as_deref())
        .take_while(|v| *v != "--")
}

/// Whether an option before `--` holds one of the short `letters` in its bundle or names one
/// of the long options `longs` (abbreviations included, as `names_long` reads them).
pub fn has_option(words: &[Word], letters: &[char], longs: &[&str]) -> bool {
    option_words(words)
        .any(|v| short_bundle_has(v, letters) || longs.iter().any(|l| names_long(v, l)))
}

/// Whether `name` without a path operand lists the working directory (`ls`, `find`, `du`,
/// `tree`): it reads the directory as `ls .` does, so a rule that covers the directory
/// itself (`Read(./)`) covers it too.
pub fn lists_the_cwd_by_default(name: &str) -> bool {
    matches!(name, "ls" | "dir" | "vdir" | "find" | "du" | "tree")
}

/// Whether `name WORDS` reads directory trees ([`TreeRead`]), and how.
pub fn reads_trees(name: &str, words: &[Word]) -> Option<TreeRead> {
    let opts: Vec<&str> = option_words(words).filter(|v| v.starts_with('-')).collect();
    let has = |letters: &[char], longs: &[&str]| {
        opts.iter()
            .any(|v| short_bundle_has(v, letters) || longs.iter().any(|l| names_long(v, l)))
    };
    match name {
        "grep" | "egrep" | "fgrep" => {
            let recurse_dir = grep_recurses_directories(words);
            let deref = has(&['R'], &["--dereference-recursive"]);
            (deref || recurse_dir || has(&['r'], &["--recursive"])).then_some(TreeRead {
                follow_links: deref,
                rg_filters: None,
                defaults_to_cwd: true,
                direct_only: false,
                names_only: false,
            })
        }
        "rg" => {
            let u = opts
                .iter()
                .filter(|v| !v.starts_with("--"))
                .map(|v| v.matches('u').count())
                .sum::<usize>();
            let u = u + opts
                .iter()
                .filter(|v| names_long(v, "--unrestricted"))
                .count();
            let no_ignore = u >= 1 || has(&[], &["--no-ignore"]);
            let hidden = u >= 2 || has(&['.'], &["--hidden"]);
            // A configuration file (RIPGREP_CONFIG_PATH) may turn the filters off, a `-g`
            // glob overrides them (`rg -g '*' x` searches hidden files), and so does a `!.env`
            // in an ignore file given by `--ignore-file`.
            let configured = std::env::var_os("RIPGREP_CONFIG_PATH").is_some_and(|v| !v.is_empty())
                || has(&['g'], &["--glob", "--iglob", "--ignore-file"]);
            Some(TreeRead {
                follow_links: has(&['L'], &["--follow"]),
                rg_filters: (!configured).then_some((!hidden, !no_ignore)),
                defaults_to_cwd: true,
                direct_only: false,
                names_only: false,
            })
        }
        // GNU diff follows links unless told not to. Without `-r` it still reads the files
        // directly in the directories it compares (`diff -N . src` prints `./.env`).
        "diff" => Some(TreeRead {
            follow_links: !has(&[], &["--no-dereference"]),
            rg_filters: None,
            defaults_to_cwd: false,
            direct_only: !has(&['r'], &["--recursive"]),
            names_only: false,
        }),
        "tar" => file_uses::tar_reads_trees(words),
        // `zip -r ARCHIVE DIR` stores the files the links below DIR point to, unless `-y`.
        "zip" => has(&['r', 'R'], &["--recurse-paths", "--recurse-patterns"]).then_some(TreeRead {
            follow_links: !has(&['y'], &["--symlinks"]),
            rg_filters: None,
            defaults_to_cwd: false,
            direct_only: false,
            names_only: false,
        }),
        // `scp -r DIR host:` sends the tree (links followed); into a local destination, what
        // arrives is checked as written ([`file_uses`]).
        "scp" => (has(&['r'], &[]) && file_uses::scp_uploads(words)).then_some(TreeRead {
            follow_links: true,
            rg_filters: None,
            defaults_to_cwd: false,
            direct_only: false,
            names_only: false,
        }),
        // `gzip -r DIR` (and `-rc`, which prints them) reads every file below DIR.
        "gzip" | "gunzip" | "zcat" => has(&['r'], &["--recursive"]).then_some(TreeRead {
            follow_links: false,
            rg_filters: None,
            defaults_to_cwd: false,
            direct_only: false,
            names_only: false,
        }),
        "cp" | "rsync" => {
            has(&['r', 'R', 'a'], &["--recursive", "--archive"]).then_some(TreeRead {
                follow_links: has(&['L'], &["--dereference", "--copy-links"]),
                rg_filters: None,
                defaults_to_cwd: false,
                direct_only: false,
                names_only: false,
            })
        }
        _ => None,
    }
}

/// Whether `name WORDS` walks the trees it is given through the symbolic links in them,
/// listing what it finds there (names, sizes) without reading files: `find -L` or
/// `-follow`, `ls`/`dir`/`vdir` with `-R` and `-L` (`--dereference`), `du -L`
/// (`--dereference`), `tree -l`. A link in such a tree lists the directory it leads to,
/// outside the working directories too (`find -L .` through `keys -> ~/.ssh`).
/// (`-H`, `--dereference-command-line`: only the operands, which are checked as paths.)
pub fn lists_trees_through_links(name: &str, words: &[Word]) -> bool {
    match name {
        "find" => words
            .iter()
            .skip(1)
            .filter_map(|w| w.value.as_deref())
            .any(|v| v == "-L" || v == "-follow"),
        "ls" | "dir" | "vdir" => {
            has_option(words, &['R'], &["--recursive"])
                && has_option(words, &['L'], &["--dereference"])
        }
        "du" => has_option(words, &['L'], &["--dereference"]),
        "tree" => has_option(words, &['l'], &[]),
        _ => false,
    }
}

/// Whether `name WORDS` removes or changes the whole tree under each directory it names, in
/// place: `rm -r`, `chmod -R` / `chown -R` / `chgrp -R`, and `mv`, whose sources leave their
/// place with everything under them. The files inside are written though they are not named.
pub fn changes_trees(name: &str, words: &[Word]) -> bool {
    match name {
        "mv" => true,
        "rm" => has_option(words, &['r', 'R'], &["--recursive"]),
        "chmod" | "chown" | "chgrp" => has_option(words, &['R'], &["--recursive"]),
        "tar" => file_uses::tar_removes_trees(words),
        // `git mv DIR`, `git rm -r DIR`.
        "git" => file_uses::file_uses(name, words).is_some_and(|u| u.changes_trees),
        _ => false,
    }
}

/// The files `xargs` reads its arguments from (`-a FILE`, `-aFILE`, `--arg-file[=]FILE`),
/// among its options before the command it runs.
pub fn xargs_arg_files(words: &[Word]) -> Vec<Word> {
    let mut out = Vec::new();
    let Some(sv) = short_values("xargs") else {
        return out;
    };
    let mut rest = words.get(1..).unwrap_or_default().iter();
    while let Some(w) = rest.next() {
        let Some(v) = w.value.as_deref() else {
            // A computed word: an option or the command; what follows is not read here.
            break;
        };
        if v == "--" || !v.starts_with('-') || v == "-" {
            break;
        }
        let value = |attached: &str, rest: &mut std::slice::Iter<'_, Word>| {
            if attached.is_empty() {
                rest.next().cloned()
            } else {
                Some(Word {
                    raw: attached.to_owned(),
                    value: Some(attached.to_owned()),
                    plain: w.plain,
                    glob: w.glob,
                })
            }
        };
        if v.starts_with("--") {
            let (name, attached) = v.split_once('=').unwrap_or((v, ""));
            if name.len() > 3 && "--arg-file".starts_with(name) {
                out.extend(value(attached, &mut rest));
            } else if attached.is_empty()
                && [
                    "--delimiter",
                    "--max-args",
                    "--max-procs",
                    "--max-chars",
                    "--process-slot-var",
                ]
                .iter()
                .any(|l| l.starts_with(name) && name.len() > 3)
            {
                rest.next();
            }
            continue;
        }
        if let Some((letter, attached, required)) = short_value_in(v, &sv) {
            if letter == 'a' {
                out.extend(value(attached, &mut rest));
            } else if required && attached.is_empty() {
                rest.next();
            }
        }
    }
    out
}

/// Whether grep's `-d ACTION` / `--directories=ACTION` says `recurse`, in any spelling getopt
/// and grep's own argument matching take: the value attached or the next word, bundled
/// (`-id rec`), abbreviated (`--dir rec`), anywhere before `--` (GNU grep permutes). A
/// computed value may be `recurse`.
fn grep_recurses_directories(words: &[Word]) -> bool {
    let Some(sv) = short_values("grep") else {
        return false;
    };
    let recurse =
        |value: Option<&str>| value.is_none_or(|v| v.len() >= 3 && "recurse".starts_with(v));
    let mut rest = words.get(1..).unwrap_or_default().iter();
    while let Some(w) = rest.next() {
        let Some(v) = w.value.as_deref() else {
            continue;
        };
        if v == "--" {
            break;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, x)) => (n, Some(x)),
                None => (long, None),
            };
            // `--di` is the shortest that names `--directories` alone.
            if name.len() >= 2 && "directories".starts_with(name) {
                let value = match attached {
                    Some(x) => Some(x),
                    None => rest.next().and_then(|w| w.value.as_deref()),
                };
                if recurse(value) {
                    return true;
                }
            }
            continue;
        }
        if let Some((letter, attached, _)) = short_value_in(v, &sv) {
            let value = if attached.is_empty() {
                rest.next().and_then(|w| w.value.as_deref())
            } else {
                Some(attached)
            };
            if letter == 'd' && recurse(value) {
                return true;
            }
        }
    }
    false
}

/// Whether an awk command line may read or write files its arguments do not name: a
/// program from a file (`-f`, `--file`, `--include`, `--exec`), or a program with an output
/// redirection or pipe (`print > "f"`, `| "cmd"`), `getline`, `system` or `close`. A `>`
/// that is a comparison (`$1 > 5`) counts too: the program is not taken apart.
pub fn awk_may_use_other_files(words: &[Word]) -> bool {
    let mut args = words[1..].iter().map(|w| w.value.as_deref());
    while let Some(arg) = args.next() {
        let Some(arg) = arg else { return true };
        if arg == "--" {
            return args
                .next()
                .is_none_or(|a| a.is_none_or(program_may_use_files));
        }
        if let Some(opt) = arg.strip_prefix('-').filter(|o| !o.is_empty()) {
            // A program from a file, or options of one awk or another that take one
            // (mawk's `-W exec FILE`).
            if ["--file", "--include", "--exec", "--source"]
                .iter()
                .any(|l| names_long(arg, l))
                || short_bundle_has(arg, &['f', 'E', 'i', 'e', 'W'])
            {
                return true;
            }
            // `-F SEP`, `-v VAR=VALUE`, `-l LIB` and their long forms: the value is the
            // next word (unless given with `=`).
            let long_with_value = ["--assign", "--field-separator", "--load"]
                .iter()
                .any(|l| names_long(arg, l))
                && !arg.contains('=');
            if (opt.len() == 1 && "Fvl".contains(opt)) || long_with_value {
                args.next();
            }
            continue;
        }
        return program_may_use_files(arg);
    }
    false
}

/// A jq command line as jq reads it: options anywhere (a short option may be bundled, a long
/// one is spelled out), `--` ends them.
struct JqCommandLine {
    /// The index of its program among the arguments: the first operand, not the value of an
    /// option (with `-f`, the file holding the program). `None` when it has none (under
    /// `xargs`, the first word appended is its program).
    program: Option<usize>,
    /// An option makes it read files its operands do not name: the program from a file
    /// (`-f`, `--from-file`), a module directory (`-L`, `--library-path`), a test file
    /// whose programs may load modules (`--run-tests`).
    other_files: bool,
    /// Its program is not on the command line (`-f`, `--from-file`, `--run-tests`): what
    /// modules it loads is not known.
    unseen_program: bool,
}

/// [`JqCommandLine`] of jq's arguments; `None` when a computed word may be an option or the
/// program.
fn jq_command_line(args: &[Option<&str>]) -> Option<JqCommandLine> {
    let mut program = None;
    let mut other_files = false;
    let mut unseen_program = false;
    let mut options_done = false;
    let mut values = 0;
    for (i, arg) in args.iter().enumerate() {
        // The values of `--arg NAME VALUE`, `--argjson NAME JSON`, `--slurpfile NAME FILE`,
        // `--rawfile NAME FILE`, `--indent N`, `-L DIR`: not its program.
        if values > 0 {
            values -= 1;
            continue;
        }
        let arg = (*arg)?;
        // jq's test for an option: a dash, then a letter or a second dash (`-`, `-1` and
        // `-(…)` are operands).
        let option = !options_done
            && arg
                .strip_prefix('-')
                .is_some_and(|r| r.starts_with(|c: char| c == '-' || c.is_ascii_alphabetic()));
        if !option {
            // After `--args`/`--jsonargs` the operands that follow the program are values
            // too, but the first one is still the program.
            program.get_or_insert(i);
            continue;
        }
        match arg {
            "--" => options_done = true,
            "--arg" | "--argjson" | "--slurpfile" | "--rawfile" => values = 2,
            "--indent" | "-L" | "--library-path" => values = 1,
            _ => {}
        }
        let unseen = short_bundle_has(arg, &['f'])
            || ["--from-file", "--run-tests"]
                .iter()
                .any(|l| names_long(arg, l));
        unseen_program |= unseen;
        other_files |= unseen || short_bundle_has(arg, &['L']) || names_long(arg, "--library-path");
    }
    Some(JqCommandLine {
        program,
        other_files,
        unseen_program,
    })
}

/// Whether a jq command line reads modules or data files that no word of it names: its
/// program loads them (`import "secrets/k" as $k;`, `include "m";`, from the working
/// directory or a `-L` directory), or its program is in a file (`-f`), which may. Those
/// files cannot be checked. A computed word is checked as a path of its own.
fn jq_loads_unnamed_files(words: &[Word]) -> bool {
    let args: Vec<Option<&str>> = words[1..].iter().map(|w| w.value.as_deref()).collect();
    jq_command_line(&args).is_some_and(|line| {
        line.unseen_program
            || line
                .program
                .and_then(|i| args[i])
                .is_some_and(jq_program_loads_modules)
    })
}

/// Whether a jq command line may read files its arguments do not name: a program from a
/// file, a module directory ([`JqCommandLine::other_files`]), or a program that loads
/// modules or data files (`import`, `include`, `modulemeta`), which jq finds through a path
/// the program spells. Only the program is read as one: input files and the values of
/// options (`--arg include x`) are not.
fn jq_may_use_other_files(args: &[&str]) -> bool {
    let args: Vec<Option<&str>> = args.iter().map(|a| Some(*a)).collect();
    jq_command_line(&args).is_none_or(|line| {
        line.other_files
            || line
                .program
                .and_then(|i| args[i])
                .is_some_and(jq_program_loads_modules)
    })
}

/// Whether jq's arguments hold its program (an operand that is not the value of an option),
/// one that reads no other file ([`jq_may_use_other_files`]): the words appended to it are
/// only its input files. A computed word may be anything.
fn jq_reads_only_its_operands(args: &[Word]) -> bool {
    let args: Vec<Option<&str>> = args.iter().map(|w| w.value.as_deref()).collect();
    jq_command_line(&args).is_some_and(|line| {
        !line.other_files
            && line
                .program
                .and_then(|i| args[i])
                .is_some_and(|p| !jq_program_loads_modules(p))
    })
}

/// Whether a jq program uses `import`, `include` or `modulemeta` as a keyword or function
/// (not as a field `.include`, a variable `$import`, a format or inside a string literal).
/// Comments run to the end of the line. A string's interpolation `\(…)` is code.
fn jq_program_loads_modules(program: &str) -> bool {
    const WORDS: &[&str] = &["import", "include", "modulemeta"];
    let b = program.as_bytes();
    // Open interpolations: the parenthesis depth inside each.
    let mut interpolations: Vec<usize> = Vec::new();
    let mut in_string = false;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if in_string {
            match c {
                b'\\' if b.get(i + 1) == Some(&b'(') => {
                    interpolations.push(0);
                    in_string = false;
                    i += 2;
                }
                b'\\' => i += 2,
                b'"' => {
                    in_string = false;
                    i += 1;
                }
                _ => i += 1,
            }
            continue;
        }
        match c {
            b'"' => {
                in_string = true;
                i += 1;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'(' => {
                if let Some(depth) = interpolations.last_mut() {
                    *depth += 1;
                }
                i += 1;
            }
            b')' => {
                match interpolations.last_mut() {
                    Some(0) => {
                        interpolations.pop();
                        in_string = true;
                    }
                    Some(depth) => *depth -= 1,
                    None => {}
                }
                i += 1;
            }
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let field = start > 0 && matches!(b[start - 1], b'.' | b'$' | b'@');
                if !field && WORDS.contains(&&program[start..i]) {
                    return true;
                }
            }
            _ => i += 1,
        }
    }
    false
}

/// Whether `words` run a program or a shell command the line gives them some other way than
/// as their command (which the wrappers' reading sees): an option's value (`tar
/// --to-command=…`, `rg --pre …`, `sort --compress-program …`), a script (`sed 'e …'`,
/// `awk '{system(…)}'`), the shell's history (`fc`). Deny and ask rules cannot be matched
/// against what that runs.
pub(crate) fn runs_a_program_it_is_given(words: &[Word]) -> bool {
    let Some(name) = words.first().and_then(|w| w.value.as_deref()).map(basename) else {
        return false;
    };
    // A word that is computed or a brace list (`sed "$s"`, `tar $OPTS`, `sed {"e x",}`) may
    // be the script or the option that runs a program.
    if matches!(
        name,
        "sed"
            | "gsed"
            | "tar"
            | "gtar"
            | "bsdtar"
            | "rg"
            | "sort"
            | "awk"
            | "gawk"
            | "mawk"
            | "nawk"
            | "ssh"
            | "slogin"
            | "scp"
            | "sftp"
            | "rsync"
            | "zip"
            | "nix"
            | "perf"
            | "make"
            | "gmake"
            | "entr"
    ) && words[1..].iter().any(|w| w.value.is_none())
    {
        return true;
    }
    let args: Vec<&str> = words[1..]
        .iter()
        .map(|w| w.value.as_deref().unwrap_or(""))
        .collect();
    let long = |names: &[&str]| {
        args.iter()
            .take_while(|a| **a != "--")
            .any(|a| names.iter().any(|l| names_long(a, l)))
    };
    match name {
        "sed" | "gsed" => sed::may_execute(&args),
        "tar" | "gtar" | "bsdtar" => {
            long(&[
                "--to-command",
                "--use-compress-program",
                "--checkpoint-action",
                "--info-script",
                "--new-volume-script",
                "--rsh-command",
                "--rmt-command",
            ]) || args
                .iter()
                .any(|a| short_option_in(a, &['I', 'F'], "bCfgHKLNTVX"))
                // The old style, a first word of letters without a dash (`tar xIf PROG …`).
                || args.first().is_some_and(|a| {
                    !a.starts_with('-')
                        && a.chars().all(|c| c.is_ascii_alphabetic())
                        && a.contains(['I', 'F'])
                })
        }
        "rg" => long(&["--pre", "--hostname-bin"]),
        // `git grep -O<cmd>` / `--open-files-in-pager=<cmd>` runs the program it is given.
        "git" => {
            args.iter().position(|a| *a == "grep").is_some_and(|at| {
                args[at + 1..].iter().take_while(|a| **a != "--").any(|a| {
                    names_long(a, "--open-files-in-pager")
                        || a.starts_with("-O")
                        || short_bundle_has(a, &['O'])
                })
            }) || git_runs_given_command(words)
        }
        "sort" => long(&["--compress-program"]),
        // `--filter=COMMAND` hands each piece to a shell command.
        "split" => long(&["--filter"]),
        // ssh's remote command (or the commands of its input, for a login shell), when
        // what it runs there cannot be read as the words written here: `ssh HOST 'a; b'`,
        // `ssh HOST`.
        "ssh" | "slogin" => {
            ssh_runs_a_local_command(name, &args)
                || match ssh_remote_command(words) {
                    SshCommand::None => false,
                    SshCommand::Input => true,
                    SshCommand::At(at) => words[at..]
                        .iter()
                        .enumerate()
                        .any(|(k, w)| remote_word_runs_unseen(w, k == 0)),
                }
        }
        "scp" | "sftp" => ssh_runs_a_local_command(name, &args),
        // `nix run INSTALLABLE`: the program a package names; `nix develop` and `nix shell`
        // without `-c`: a shell reading its input (or a derivation's phases).
        "nix" => match nix_subcommand(words).and_then(|at| args.get(at - 1)) {
            Some(&"run") => true,
            Some(&("develop" | "shell")) => runner_command_starts(name, words).flatten().is_none(),
            _ => false,
        },
        // gdb runs the commands of `-ex` and `-x` (`shell CMD`, `pipe`, `python`, ...).
        "gdb" => gdb_runs_unseen(&args),
        // `perf stat --pre CMD`/`--post CMD` run shell commands; `perf sched record CMD`,
        // `perf mem record CMD`, … run one its tables here do not read.
        "perf" => {
            let at = perf_subcommand(words).unwrap_or(words.len());
            match args.get(at.wrapping_sub(1)).copied() {
                Some("stat") => long(&["--pre", "--post"]),
                Some("record" | "trace" | "ftrace") => false,
                Some(_) => args[at..].contains(&"record"),
                None => false,
            }
        }
        // hyperfine runs its benchmarks (and `--prepare`, `--setup`, `--cleanup`) through a
        // shell; expect runs a Tcl script (`spawn`, `exec`) from `-c`, a file or its input.
        "hyperfine" => {
            !args
                .iter()
                .all(|a| matches!(*a, "--version" | "-V" | "--help" | "-h"))
                || args.is_empty()
        }
        "expect" => !args.iter().all(|a| matches!(*a, "-v" | "--version")) || args.is_empty(),
        // `make --eval=TEXT` / `-E TEXT`: a makefile whose recipes are on the command line.
        "make" | "gmake" => args
            .iter()
            .take_while(|a| **a != "--")
            .any(|a| names_long(a, "--eval") || short_option_in(a, &['E'], "CfIjloOW")),
        // `entr -s STRING` runs its utility as a shell string.
        "entr" => args
            .iter()
            .take_while(|a| a.starts_with('-') && **a != "--")
            .any(|a| short_bundle_has(a, &['s'])),
        // `-e CMD` / `--rsh=CMD` is the program rsync starts to reach the other end (each
        // one given is judged, though rsync uses the last); a plain `ssh` is the usual one. The remote shell may also
        // come from `RSYNC_RSH` (see `computed_by`).
        "rsync" => rsync_remote_shells(&args)
            .iter()
            .any(|shell| !is_plain_ssh(shell)),
        // An editor run from a command line (no terminal to edit on) runs Ex commands: from
        // `-c`, `--cmd`, `+CMD`, a script (`-S`, `-s`, `-u`), its input (`-e`, `ex`), each of
        // which may run a shell command (`!rm x`, `:call system(…)`), in spellings too many to
        // list (`-c!…`, `-nc…`, `+/x/|!…`). Whatever runs cannot be checked.
        "vi" | "vim" | "nvim" | "gvim" | "view" | "vimdiff" | "ex" | "evim" | "rvim" | "rview"
        | "gview" | "gvimdiff" | "vim.basic" | "vim.tiny" | "vim.nox" | "vim.gtk3" | "editor"
        | "eview" | "rgview" | "rgvim" | "nvimdiff" | "vim.gtk" | "vim.athena" | "nvi"
        | "elvis" | "vile" | "vis" => true,
        // `-TT CMD` / `--unzip-command CMD` tests the archive with that command (also
        // `-TTCMD`, and in a bundle, `-rTT`).
        "zip" => args.iter().take_while(|a| **a != "--").any(|a| {
            (a.starts_with('-') && !a.starts_with("--") && a.contains("TT"))
                || names_long(a, "--unzip-command")
        }),
        "awk" | "gawk" | "mawk" | "nawk" => awk_runs_commands(&args),
        // `ed` runs the shell commands of its input (`!cmd`), or of its file operand (`ed
        // '!cmd'`).
        "ed" => true,
        // `--diff-program=PROG` compares with that program.
        "sdiff" | "diff3" => long(&["--diff-program"]),
        // It runs commands from the history (`fc -s`), or an editor on them; `fc -l` lists.
        "fc" => !args.first().is_some_and(|a| {
            a.starts_with('-') && a[1..].contains('l') && !a[1..].contains(['s', 'e'])
        }),
        "tmux" => tmux_runs_commands(&args),
        // `screen CMD` runs a command (in a window of a session it starts, `-dm`), `screen
        // -X stuff …` types into one: only listing and the version run nothing.
        "screen" => {
            args.is_empty()
                || !args.iter().all(|a| {
                    matches!(
                        *a,
                        "-ls" | "-list" | "-v" | "-version" | "--version" | "-wipe" | "-q"
                    )
                })
        }
        // `at` and `batch` run the shell commands of their standard input (or `-f FILE`)
        // later; `at -l` lists, `-d`/`-r` remove, `-c` prints a job, `-V` the version.
        "at" => !args
            .iter()
            .any(|a| short_option_in(a, &['l', 'd', 'r', 'c', 'V'], "qtf")),
        "batch" => true,
        // `proot -q CMD` runs the command under that emulator.
        "proot" => args
            .iter()
            .take_while(|a| a.starts_with('-'))
            .any(|a| short_option_in(a, &['q'], "rbmwvkiRS") || names_long(a, "--qemu")),
        _ => false,
    }
}

/// tmux's commands that run no shell command (they list, query, kill or move): with none
/// of their arguments holding a format's `#(…)`, which runs one.
const TMUX_QUIET_COMMANDS: &[&str] = &[
    "ls",
    "list-sessions",
    "lsw",
    "list-windows",
    "lsp",
    "list-panes",
    "lsc",
    "list-clients",
    "lsb",
    "list-buffers",
    "lscm",
    "list-commands",
    "lsk",
    "list-keys",
    "has",
    "has-session",
    "show",
    "show-options",
    "showw",
    "show-window-options",
    "showenv",
    "show-environment",
    "showb",
    "show-buffer",
    "showmsgs",
    "show-messages",
    "info",
    "server-info",
    "capturep",
    "capture-pane",
    "display",
    "display-message",
    "kill-session",
    "kill-server",
    "killw",
    "kill-window",
    "killp",
    "kill-pane",
    "detach",
    "detach-client",
    "selectw",
    "select-window",
    "selectp",
    "select-pane",
    "rename",
    "rename-session",
    "renamew",
    "rename-window",
];

/// Whether a tmux command line may run a shell command: a new session, window or pane
/// (`new 'rm x'`, `split-window`, `respawn-pane`), `run-shell`, `if-shell`, `pipe-pane`,
/// keys typed into a shell (`send-keys`), a configuration file (`-f`, `source-file`), `-c
/// CMD`, a format's `#(…)`, a command sequence (`ls \; new …`), or a command not listed in
/// [`TMUX_QUIET_COMMANDS`] (tmux also takes unambiguous prefixes of their names). `tmux`
/// alone starts a session with a shell.
fn tmux_runs_commands(args: &[&str]) -> bool {
    if args
        .iter()
        .any(|a| a.contains("#(") || *a == ";" || a.ends_with(';'))
    {
        return true;
    }
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let Some(flags) = a.strip_prefix('-').filter(|f| !f.is_empty()) else {
            break;
        };
        i += 1;
        if *a == "--" {
            break;
        }
        for (k, c) in flags.char_indices() {
            match c {
                // `-c CMD` runs a shell command, `-f FILE` a configuration.
                'c' | 'f' => return true,
                'V' => return false,
                'L' | 'S' | 'T' => {
                    if k + 1 == flags.len() {
                        i += 1;
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    args.get(i)
        .is_none_or(|command| !TMUX_QUIET_COMMANDS.contains(command))
}

/// The ssh configuration keys whose value is a command run (or a library loaded) on this
/// machine: `-o ProxyCommand=…` runs a program before any connection.
const SSH_LOCAL_COMMAND_KEYS: &[&str] = &[
    "proxycommand",
    "localcommand",
    "knownhostscommand",
    "pkcs11provider",
    "securitykeyprovider",
];

/// Whether `text` (an ssh `-o` value such as `ProxyCommand=rm x` or `ProxyCommand rm x`, or
/// a whole ssh command line) names a key whose value runs on this machine, in any case, as
/// ssh reads keys.
fn ssh_option_runs_a_command(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    SSH_LOCAL_COMMAND_KEYS.iter().any(|key| lower.contains(key))
}

/// Whether ssh, slogin, scp or sftp (`name`, with `args`) run a program or load code on
/// this machine that their options give: an `-o` value naming a key such as `ProxyCommand`
/// ([`SSH_LOCAL_COMMAND_KEYS`]); a configuration file (`-F`, which may set those keys); ssh's
/// `-I` (a PKCS#11 library); scp's and sftp's `-S PROGRAM` (the ssh they start) and `-D
/// PROGRAM` (a local SFTP server); sftp's `-b FILE` (a batch whose `!` lines run commands).
///
/// Options are read as OpenSSH's getopt reads them (the option strings of OpenSSH 9): up
/// to the first operand, or `--`; ssh reads a second run of options after the host name
/// (`ssh host -o ProxyCommand=…`), up to the remote command, whose own options are not
/// its. A value left out at the end is no value.
fn ssh_runs_a_local_command(name: &str, args: &[&str]) -> bool {
    // Short options that take a value; `dangerous` those whose value runs or loads
    // something here (`o` is judged by its key).
    let (values, dangerous) = match name {
        "scp" => ("cDFiJlMoPSX", "DFS"),
        "sftp" => ("bBcDFiJloPRsSX", "bDFS"),
        _ => ("bBcDeEFiIJlLmoOpPQRSwW", "FI"),
    };
    let mut i = 0;
    // ssh: the options before the host name, then those after it.
    let runs = if name == "ssh" || name == "slogin" {
        2
    } else {
        1
    };
    for run in 0..runs {
        while let Some(a) = args.get(i) {
            if *a == "--" {
                return false;
            }
            let Some(bundle) = a.strip_prefix('-').filter(|b| !b.is_empty()) else {
                break;
            };
            i += 1;
            for (at, c) in bundle.char_indices() {
                if !values.contains(c) {
                    continue;
                }
                let rest = &bundle[at + c.len_utf8()..];
                let value = if rest.is_empty() {
                    i += 1;
                    args.get(i - 1).copied().unwrap_or("")
                } else {
                    rest
                };
                if dangerous.contains(c) || (c == 'o' && ssh_option_runs_a_command(value)) {
                    return true;
                }
                break;
            }
        }
        // The host name, before ssh's second run of options.
        if run + 1 < runs {
            i += 1;
        }
    }
    false
}

/// What `ssh` runs on the other end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SshCommand {
    /// Nothing: no destination, or an option that runs no command (`-N`, `-W`, `-s`, `-G`,
    /// `-V`, `-Q`, `-O`), or a command line not understood.
    None,
    /// A login shell, which runs the commands of ssh's input.
    Input,
    /// The remote command, from this index of the words.
    At(usize),
}

/// Where the remote command of `ssh [OPTIONS] DESTINATION [OPTIONS] [--] [COMMAND…]` starts,
/// its options read as OpenSSH's getopt reads them (see [`ssh_runs_a_local_command`]: a
/// second run of options after the destination, up to `--` or the command). A computed word
/// among the options may be an option or the destination: the command is not told (the
/// computed word makes ssh [`runs_a_program_it_is_given`] anyway).
fn ssh_remote_command(words: &[Word]) -> SshCommand {
    if !words
        .first()
        .and_then(|w| w.value.as_deref())
        .is_some_and(|n| matches!(basename(n), "ssh" | "slogin"))
    {
        return SshCommand::None;
    }
    const VALUES: &str = "bBcDeEFiIJlLmoOpPQRSwW";
    let mut i = 1;
    let mut quiet = false;
    let mut host = false;
    for run in 0..2 {
        while let Some(w) = words.get(i) {
            let Some(v) = w.value.as_deref() else {
                return SshCommand::None;
            };
            if v == "--" {
                i += 1;
                break;
            }
            let Some(bundle) = v.strip_prefix('-').filter(|b| !b.is_empty()) else {
                break;
            };
            i += 1;
            for (at, c) in bundle.char_indices() {
                quiet |= matches!(c, 'N' | 'W' | 's' | 'G' | 'V' | 'Q' | 'O');
                if VALUES.contains(c) {
                    if at + c.len_utf8() == bundle.len() {
                        i += 1;
                    }
                    break;
                }
            }
        }
        if run == 0 {
            if words.get(i).is_none_or(|w| w.value.is_none()) {
                return SshCommand::None;
            }
            host = true;
            i += 1;
        }
    }
    match () {
        _ if quiet || !host => SshCommand::None,
        _ if i < words.len() => SshCommand::At(i),
        _ => SshCommand::Input,
    }
}

/// Whether a word of ssh's remote command (`first`: its first word) may run something the
/// words here do not show: ssh joins them with spaces for the remote shell, which splits,
/// expands and runs what they hold (`'a; b'`, `'$(x)'`, a computed word), and an assignment
/// or a pattern as the first word hides the command.
fn remote_word_runs_unseen(w: &Word, first: bool) -> bool {
    let Some(v) = w.value.as_deref() else {
        return true;
    };
    v.chars().any(|c| {
        c.is_whitespace()
            || matches!(
                c,
                ';' | '&' | '|' | '<' | '>' | '(' | ')' | '$' | '`' | '\\' | '\'' | '"'
            )
            || (first && matches!(c, '=' | '*' | '?' | '[' | ']' | '{' | '}' | '~' | '#'))
    })
}

/// Every remote shell rsync is given (`-e CMD`, `--rsh=CMD`, `--rsh CMD`; `-e` in a bundle,
/// `-avze CMD`, or attached, `-eCMD`), in order: rsync uses the last.
fn rsync_remote_shells(args: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if *a == "--" {
            break;
        }
        let next = |i: usize| args.get(i).map_or_else(String::new, |v| (*v).to_owned());
        if let Some(long) = a.strip_prefix("--") {
            // popt, which reads rsync's options, takes no abbreviation.
            match long.split_once('=') {
                Some(("rsh", value)) => out.push(value.to_owned()),
                None if long == "rsh" => {
                    out.push(next(i));
                    i += 1;
                }
                _ => {}
            }
            continue;
        }
        let Some(bundle) = a.strip_prefix('-').filter(|b| !b.is_empty()) else {
            continue;
        };
        for (at, c) in bundle.char_indices() {
            // Short options of rsync that take a value: the rest of the bundle, else the
            // next word (the same letters as rsync's entry in `short_values`).
            if !"efBMT@".contains(c) {
                continue;
            }
            let rest = &bundle[at + c.len_utf8()..];
            let value = if rest.is_empty() {
                i += 1;
                next(i - 1)
            } else {
                rest.to_owned()
            };
            if c == 'e' {
                out.push(value);
            }
            break;
        }
    }
    out
}

/// Whether an rsync remote shell is a plain `ssh`: ssh with options that run or load
/// nothing here (see [`ssh_runs_a_local_command`]).
fn is_plain_ssh(shell: &str) -> bool {
    let words: Vec<&str> = shell.split_whitespace().collect();
    words.first().is_some_and(|w| basename(w) == "ssh")
        && !ssh_option_runs_a_command(shell)
        && !ssh_runs_a_local_command("ssh", &words[1..])
}

/// Whether an awk command line may run a command: its program (the first operand, or the
/// `-e`/`--source` texts) calls `system` or uses a pipe to or from a command (`print |
/// "cmd"`, `"cmd" | getline`; not `|` in a regex, `/a|b/`, or a string, `"|"`), or it comes
/// from a file (`-f`), not seen here. `-F` and `-v` values are no program.
fn awk_runs_commands(args: &[&str]) -> bool {
    let runs = |program: &str| program.contains("system") || awk_pipes(program);
    let mut sources = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        match *a {
            "--" => return !sources && args.get(i).is_some_and(|p| runs(p)),
            "-f" | "--file" => return true,
            "-e" | "--source" => {
                sources = true;
                if args.get(i).is_some_and(|p| runs(p)) {
                    return true;
                }
                i += 1;
            }
            "-F" | "-v" | "--field-separator" | "--assign" => i += 1,
            a if a.starts_with("-f") || a.starts_with("--file=") || a.starts_with("-W") => {
                return true;
            }
            a if a.starts_with("--source=") || a.starts_with("-e") => {
                sources = true;
                if runs(a) {
                    return true;
                }
            }
            a if a.starts_with('-') && a.len() > 1 => {}
            program => return !sources && runs(program),
        }
    }
    false
}

/// Whether an awk program has a `|` outside strings, regexes and bracket classes: a pipe to
/// or from a command (`|&` too). Read loosely: a `/` starts a regex where an operand may.
fn awk_pipes(program: &str) -> bool {
    let chars: Vec<char> = program.chars().collect();
    let mut i = 0;
    // The last character that was not blank: a `/` after an operand is a division.
    let mut last = '(';
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            '/' if !(last.is_alphanumeric() || matches!(last, ')' | ']' | '_' | '$')) => {
                i += 1;
                while i < chars.len() && chars[i] != '/' {
                    match chars[i] {
                        '\\' => i += 1,
                        '[' => {
                            while i < chars.len() && chars[i] != ']' {
                                i += 1;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            '#' => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '|' if chars.get(i + 1) != Some(&'|') && last != '|' => return true,
            _ => {}
        }
        if !c.is_whitespace() {
            last = chars.get(i).copied().unwrap_or(c);
        }
        i += 1;
    }
    false
}

fn program_may_use_files(program: &str) -> bool {
    // `ARGV` counts too: a program that sets `ARGV[1] = ".env"` reads that file.
    program.contains(['>', '|'])
        || ["getline", "system", "close", "ARGV", "ARGC"]
            .iter()
            .any(|f| program.contains(f))
}

/// Commands whose first positional argument is a pattern or script, not a path, unless the
/// script is given by an option (`grep -e`, `awk -f`, `jq -f`, bundled as in `grep -ie`,
/// abbreviated as in `grep --regexp=`): then every positional is a file (for `jq -f`, the
/// first one is the program file).
fn first_positional_is_script(name: &str, words: &[Word]) -> bool {
    let given_by_option = |letters: &[char], longs: &[&str]| has_option(words, letters, longs);
    match name {
        "grep" | "egrep" | "fgrep" | "zgrep" | "zegrep" | "zfgrep" => {
            !given_by_option(&['e', 'f'], &["--regexp", "--file"])
        }
        // `rg --files DIR` lists DIR: no pattern (`--files-with-matches` is another option).
        "rg" => {
            !given_by_option(&['e', 'f'], &["--regexp", "--file"])
                && !option_words(words).any(|v| v == "--files")
        }
        "awk" | "gawk" | "mawk" | "nawk" => {
            !given_by_option(&['e', 'f', 'E'], &["--file", "--source", "--exec"])
        }
        "jq" => !given_by_option(&['f'], &["--from-file"]),
        // `look STRING [FILE]`: the string it looks for.
        "look" => true,
        _ => false,
    }
}

/// The short options of a command that take a value (`required`: the rest of the bundle,
/// else the next word; `optional`: only ever the rest of the bundle), and those whose value
/// names a file it reads or writes (`grep -f FILE`, `date -r FILE`, `cp -t DIR`).
struct ShortValues {
    required: &'static str,
    optional: &'static str,
    files: &'static [char],
}

fn short_values(name: &str) -> Option<ShortValues> {
    let (required, optional, files): (&'static str, &'static str, &'static [char]) = match name {
        "date" => ("dfrs", "I", &['f', 'r']),
        // `-d DATE`, `-r FILE` (its times are read), `-t STAMP`.
        "touch" => ("drt", "", &['r']),
        // `-r FILE` (its size is read), `-s SIZE`.
        "truncate" => ("rs", "", &['r']),
        "cp" | "mv" | "ln" => ("St", "", &['t']),
        "install" => ("gmotS", "", &['t']),
        // `-e CMD`, `-f RULE`, `-B SIZE`, `-M OPT`, `-@ SECS`, `-T DIR` (its temporary files).
        "rsync" => ("efBMT@", "", &['T']),
        "grep" | "egrep" | "fgrep" | "zgrep" | "zegrep" | "zfgrep" => ("ABCDdefm", "", &['f']),
        "rg" => ("ABCdEefgjMmrTt", "", &['f']),
        "awk" | "gawk" | "mawk" | "nawk" => ("fFveEilW", "dDLop", &['f', 'E', 'i']),
        "diff" => ("CDFILSUWXx", "", &['X']),
        "du" => ("BdtX", "", &['X']),
        "sort" => ("kSTto", "", &['o', 'T']),
        "head" => ("cn", "", &[]),
        "fmt" => ("gpw", "", &[]),
        "pr" => ("DhlNowW", "eiSns", &[]),
        "base32" => ("w", "", &[]),
        "tail" => ("cns", "", &[]),
        "cut" => ("bcdf", "", &[]),
        "uniq" => ("fsw", "", &[]),
        "tree" => ("LPIHTo", "", &['o']),
        "less" | "zless" => ("bhjkoOpPtTxyz#", "", &['k', 'o', 'O', 'T']),
        "basenc" => ("w", "", &[]),
        "b2sum" => ("l", "", &[]),
        // `-1 FIELD`, `-2 FIELD`, `-a FILENUM`, `-e EMPTY`, `-j FIELD`, `-o FORMAT`, `-t CHAR`.
        "join" => ("12aejotv", "", &[]),
        // `-i LO-HI`, `-n COUNT`, `-o FILE` (written).
        "shuf" => ("ino", "", &['o']),
        // `-f FROM`, `-t TO`, `-o FILE` (written).
        "iconv" => ("fto", "", &['o']),
        "ls" | "dir" | "vdir" => ("ITw", "", &[]),
        "stat" => ("c", "", &[]),
        // `-L DIR`: modules are read from it.
        "jq" => ("fL", "", &['f', 'L']),
        // `-f NAMEFILE`: the names to examine (an error quotes each line); `-m MAGIC`.
        "file" => ("efFmP", "", &['f', 'm']),
        // `-a FILE`: the arguments are read from it (and shown to the command it runs).
        "xargs" => ("adEILnPs", "eil", &['a']),
        // `-f FORMAT_FILE` (an error quotes it), `-e FORMAT`, `-n LENGTH`, `-s OFFSET`.
        "hexdump" | "hd" => ("efns", "", &['f']),
        // `-t CHAR`: where the string ends.
        "look" => ("t", "", &[]),
        // `-o FILE` (the merge, written), `-I RE`, `-w WIDTH`.
        "sdiff" => ("oIw", "", &['o']),
        // `-L LABEL`.
        "diff3" => ("L", "", &[]),
        // `-i SKIP`, `-n LIMIT`.
        "cmp" => ("in", "", &[]),
        // `-m MODE`.
        "mkfifo" | "mknod" => ("m", "", &[]),
        _ => return None,
    };
    Some(ShortValues {
        required,
        optional,
        files,
    })
}

/// The options of a command that changes files whose value names a reference file, which
/// it only reads (stats) to copy its times, mode, owner or size (`touch -r F`, `chmod
/// --reference=F`): its short letters and its long option.
fn reference_options(name: &str) -> (&'static [char], &'static str) {
    match name {
        "touch" | "truncate" => (&['r'], "--reference"),
        "chmod" | "chown" | "chgrp" => (&[], "--reference"),
        _ => (&[], ""),
    }
}

/// Long options whose value always names a file the command reads (`--opt=FILE` or
/// `--opt FILE`, in any spelling getopt accepts).
fn file_long_options(name: &str) -> &'static [&'static str] {
    match name {
        "diff" => &["--from-file", "--to-file", "--exclude-from"],
        "sdiff" => &["--output"],
        "grep" | "egrep" | "fgrep" | "zgrep" | "zegrep" | "zfgrep" => &["--file", "--exclude-from"],
        "rg" => &["--file", "--ignore-file"],
        "awk" | "gawk" | "mawk" | "nawk" => &["--file", "--include", "--exec"],
        "jq" => &["--from-file", "--rawfile", "--slurpfile", "--library-path"],
        "date" => &["--file", "--reference"],
        // The reference file whose times, mode, owner or size are copied: only read
        // ([`reference_options`]).
        "touch" | "chmod" | "chown" | "chgrp" | "truncate" => &["--reference"],
        "wc" => &["--files0-from"],
        "sort" => &["--files0-from", "--output"],
        "less" | "zless" => &[
            "--log-file",
            "--LOG-FILE",
            "--lesskey-file",
            "--lesskey-src",
        ],
        "du" => &["--files0-from", "--exclude-from"],
        "hexdump" | "hd" => &["--format-file"],
        "xargs" => &["--arg-file"],
        "shuf" => &["--output", "--random-source"],
        "iconv" => &["--output"],
        "rsync" => &[
            "--backup-dir",
            "--partial-dir",
            "--temp-dir",
            "--compare-dest",
            "--copy-dest",
            "--link-dest",
            "--exclude-from",
            "--include-from",
            "--files-from",
            "--log-file",
            "--password-file",
            "--early-input",
            "--write-batch",
            "--only-write-batch",
            "--read-batch",
        ],
        _ => &[],
    }
}

/// Long options of a copying command (or a reader) whose value, which may be the next word
/// (`--exclude node_modules`, `fmt --width 40`), names no file (those are
/// [`file_long_options`]; `--target-directory` is read apart). Options whose value is
/// optional (`--backup[=CONTROL]`) take it only after `=` and are not listed.
fn long_values(name: &str) -> &'static [&'static str] {
    match name {
        "touch" => &["--date", "--time"],
        "truncate" => &["--size"],
        "chown" | "chgrp" => &["--from"],
        "fmt" => &["--width", "--prefix", "--goal"],
        "pr" => &[
            "--pages",
            "--columns",
            "--date-format",
            "--header",
            "--length",
            "--first-line-number",
            "--indent",
            "--width",
            "--page-width",
        ],
        "base32" | "basenc" => &["--wrap"],
        "sdiff" => &[
            "--ignore-matching-lines",
            "--width",
            "--tabsize",
            "--diff-program",
        ],
        "diff3" => &["--label", "--diff-program"],
        "cmp" => &["--ignore-initial", "--bytes"],
        "mkfifo" | "mknod" => &["--mode"],
        "b2sum" => &["--length"],
        "shuf" => &["--input-range", "--head-count"],
        "iconv" => &["--from-code", "--to-code"],
        "cp" => &["--suffix", "--sparse", "--no-preserve"],
        "mv" | "ln" => &["--suffix"],
        "install" => &[
            "--suffix",
            "--group",
            "--mode",
            "--owner",
            "--strip-program",
        ],
        "rsync" => &[
            "--info",
            "--debug",
            "--stderr",
            "--suffix",
            "--chmod",
            "--chown",
            "--usermap",
            "--groupmap",
            "--rsh",
            "--rsync-path",
            "--max-delete",
            "--max-size",
            "--min-size",
            "--max-alloc",
            "--block-size",
            "--compress-choice",
            "--zc",
            "--compress-level",
            "--zl",
            "--skip-compress",
            "--filter",
            "--exclude",
            "--include",
            "--address",
            "--port",
            "--sockopts",
            "--out-format",
            "--log-file-format",
            "--bwlimit",
            "--stop-after",
            "--stop-at",
            "--protocol",
            "--iconv",
            "--checksum-choice",
            "--cc",
            "--checksum-seed",
            "--timeout",
            "--contimeout",
            "--modify-window",
            "--outbuf",
            "--remote-option",
            "--copy-as",
        ],
        _ => &[],
    }
}

/// Whether the command reads files whose names it finds in another file (`wc
/// --files0-from=LIST`, binutils' `strings @LIST`): those paths cannot be checked.
pub fn reads_listed_files(name: &str, words: &[Word]) -> bool {
    (matches!(name, "wc" | "du" | "sort") && has_option(words, &[], &["--files0-from"]))
        || (takes_response_files(name) && words.iter().skip(1).any(|w| response_file(w).is_some()))
}

/// Whether `name` is one of the GNU binutils, which replace an argument `@FILE` with the
/// arguments FILE holds (its response file; before reading their options, so after `--`
/// too): the files listed there are read.
fn takes_response_files(name: &str) -> bool {
    matches!(
        name,
        "strings"
            | "objdump"
            | "readelf"
            | "nm"
            | "size"
            | "addr2line"
            | "c++filt"
            | "ar"
            | "ranlib"
            | "objcopy"
            | "strip"
            | "elfedit"
    )
}

/// The file a binutils `@FILE` argument names (an argument `@` alone names none).
fn response_file(w: &Word) -> Option<&str> {
    w.value
        .as_deref()
        .and_then(|v| v.strip_prefix('@'))
        .filter(|f| !f.is_empty())
}

/// In the bundle of short options `arg`, the first option that takes a value and that
/// value (empty when it is the next word, or absent for an optional one).
fn short_value_in<'a>(arg: &'a str, sv: &ShortValues) -> Option<(char, &'a str, bool)> {
    let rest = arg.strip_prefix('-').filter(|r| !r.starts_with('-'))?;
    for (k, c) in rest.char_indices() {
        let required = sv.required.contains(c);
        if required || sv.optional.contains(c) {
            return Some((c, &rest[k + c.len_utf8()..], required));
        }
    }
    None
}

/// What the next word is, after an option.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum Next {
    #[default]
    Any,
    /// The value of an option, not a path.
    Skip,
    /// The value of an option that names a file.
    Path,
    /// A name, then a file (`jq --rawfile NAME FILE`).
    NameThenPath,
    /// Two values, not paths (`jq --arg NAME VALUE`).
    SkipTwo,
    /// The destination directory (`cp -t DIR`, `--target-directory DIR`).
    Target,
}

/// The arguments of `words` that are paths for [`path_use`]: positionals (after the script of
/// grep/awk/jq; sed's files as its own parse finds them), the starting points of `find`,
/// values of options that name a file (`grep -f FILE`, `--from-file=FILE`, `date -rFILE`,
/// `cp -t DIR`), values of `--opt=/path` flags (of every `--opt=value` flag for commands
/// that write), and `dd`'s `if=`/`of=`.
pub fn path_args(name: &str, words: &[Word]) -> Vec<Word> {
    path_args_and_operands(name, words).paths
}

/// The indices in [`path_args`] of the files a command that changes its files only reads:
/// the reference file of `touch -r F`/`--reference=F`, `chmod`, `chown`, `chgrp` and
/// `truncate --reference=F`, whose times, mode, owner or size are copied onto the operands
/// (which are written). Every other path has the command's [`path_use`].
pub fn read_path_args(name: &str, words: &[Word]) -> Vec<usize> {
    path_args_and_operands(name, words).reads
}

/// Whether `words` names a path as an operand (not only as an option's value, as in `rg
/// -f PATTERNS` or `rg --ignore-file F`, which still search the working directory).
pub fn has_path_operands(name: &str, words: &[Word]) -> bool {
    path_args_and_operands(name, words).operands
}

/// Whether `rsync` deletes what its destination holds that the source lacks (`--delete`,
/// `--delete-after`, `--del`, ...): a mirror into a critical directory (`rsync -a --delete
/// empty/ ./`) empties it as `rm -rf` would.
pub fn deletes_in_destination(name: &str, words: &[Word]) -> bool {
    name == "rsync"
        // `--del` is `--delete-during`; `--delay-updates` deletes nothing.
        && option_words(words).any(|v| v == "--del" || v.starts_with("--delete"))
}

/// Where a command that copies, moves or links paths into a destination (`cp`, `mv`, `ln`,
/// `link`, `install`, `rsync`) puts them, by index in its [`path_args`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// The destination: the value of `-t DIR` / `--target-directory`, else the last operand.
    pub index: usize,
    /// `-t DIR` named it: it is a directory the sources go into.
    pub by_option: bool,
    /// The sources: the other operands (not options' values).
    pub sources: Vec<usize>,
    /// The sources are only read (`cp` with options all known and all before the first
    /// operand, none of which links, moves or writes elsewhere). Otherwise every path is
    /// written, as [`path_use`] says: `mv` removes its sources, `cp -l` links them (what is
    /// written to the copy changes them), `cp --parents` writes below the destination by
    /// the source's own path, and an option after an operand, an unknown option or a
    /// computed word (`$X` may be `--parents`) leaves the command line not understood.
    pub sources_read: bool,
    /// `cp --parents`: each source is written below the destination by its whole path as
    /// given (`cp --parents a/b dir` writes `dir/a/b`), not by its name alone.
    pub parents: bool,
    /// `-T` / `--no-target-directory`: a source directory's contents land in the destination
    /// itself (`cp -rT tpl .` writes `./.claude` from `tpl/.claude`), as they do for a
    /// source `DIR/.` and, with rsync, `DIR/`.
    pub contents: bool,
    /// `ln TARGET`: the link goes into the working directory, which the command line does
    /// not name; `index` is one past the path arguments (where a `.` is to be added).
    pub here: bool,
}

/// Whether `arg` names the long option `long`, which takes a value, as getopt_long reads
/// it: the whole name, or an abbreviation of it that is not itself a whole option of the
/// command (rsync's `--partial` is its own option, not `--partial-dir` cut short). Stricter
/// than [`names_long`], which also takes a longer name for a shorter one (right for
/// options that are refused, wrong for one whose value is taken from the next word).
fn names_value_option(name: &str, arg: &str, long: &str) -> bool {
    /// Whole options that are the start of a longer one (`--partial`, `--partial-dir`):
    /// they name themselves.
    const RSYNC: &[&str] = &[
        "--backup",
        "--checksum",
        "--compress",
        "--group",
        "--partial",
        "--log-file",
        "--exclude",
        "--include",
    ];
    let opt = arg.split_once('=').map_or(arg, |(n, _)| n);
    let whole = match name {
        "rsync" => RSYNC,
        "install" => &["--strip"],
        _ => &[],
    };
    opt.len() > 2
        && opt.starts_with("--")
        && long.starts_with(opt)
        && (opt == long || !whole.contains(&opt))
}

/// The backups a copying command makes of each file it writes over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backups {
    /// None asked for.
    None,
    /// `PATH<suffix>` beside each file written over.
    Suffix(String),
    /// Made, but where cannot be worked out from the command line: numbered backups
    /// (`--backup=numbered`, `t`, `existing`), a suffix that is computed, rsync's
    /// `--backup-dir`.
    Elsewhere,
}

/// The backups `name WORDS` makes ([`Backups`]), its options read as getopt reads them: `-b`
/// or `--backup[=CONTROL]` asks for them, and so does a suffix in any spelling (`-S SUF`,
/// `-SSUF`, `-bSSUF`, `-fS SUF`, `--suffix=SUF`, `--suf SUF`; GNU tools make backups
/// whenever one is given). The suffix is `~` by default. For rsync, `-b` / `--backup` with
/// `--suffix`. The environment (`SIMPLE_BACKUP_SUFFIX`, `VERSION_CONTROL`) is the
/// caller's to look at.
pub fn backups(name: &str, words: &[Word]) -> Backups {
    if !matches!(name, "cp" | "mv" | "ln" | "install" | "rsync") {
        return Backups::None;
    }
    let shorts = short_values(name);
    let mut asked = false;
    let mut elsewhere = false;
    // `Some(None)`: a suffix that is computed.
    let mut suffix: Option<Option<String>> = None;
    let mut rest = words.get(1..).unwrap_or_default().iter();
    while let Some(w) = rest.next() {
        let Some(v) = w.value.as_deref() else {
            continue;
        };
        if v == "--" {
            break;
        }
        if v.starts_with("--") {
            if names_value_option(name, v, "--suffix") {
                asked = true;
                suffix = Some(match v.split_once('=') {
                    Some((_, x)) => Some(x.to_owned()),
                    None => rest.next().and_then(|w| w.value.clone()),
                });
            } else if name == "rsync" && names_value_option(name, v, "--backup-dir") {
                // It implies `--backup`.
                asked = true;
                elsewhere = true;
            } else if names_long(v, "--backup") {
                asked = true;
                if let Some((_, control)) = v.split_once('=')
                    && !matches!(control, "simple" | "never" | "none" | "off")
                {
                    elsewhere = true;
                }
            }
            continue;
        }
        let Some(bundle) = v.strip_prefix('-').filter(|r| !r.is_empty()) else {
            continue;
        };
        for (k, c) in bundle.char_indices() {
            if c == 'b' {
                asked = true;
                continue;
            }
            if c == 'S' && name != "rsync" {
                asked = true;
                let value = &bundle[k + 1..];
                suffix = Some(if value.is_empty() {
                    rest.next().and_then(|w| w.value.clone())
                } else {
                    Some(value.to_owned())
                });
                break;
            }
            // Another option's value is the rest of the bundle (`-tDIR`), or the next word.
            if shorts.as_ref().is_some_and(|sv| sv.required.contains(c)) {
                if k + c.len_utf8() == bundle.len() {
                    rest.next();
                }
                break;
            }
        }
    }
    if !asked {
        Backups::None
    } else if elsewhere {
        Backups::Elsewhere
    } else {
        match suffix {
            None => Backups::Suffix("~".to_owned()),
            Some(Some(s)) => Backups::Suffix(s),
            Some(None) => Backups::Elsewhere,
        }
    }
}

/// Whether the words after the command name `name` put an option after an operand (GNU
/// tools and rsync take them anywhere): the last operand may then not be the destination.
/// An option's value given as the next word (`--exclude node_modules`, `-m 755`) is no
/// operand.
pub fn options_after_operands(name: &str, words: &[Word]) -> bool {
    let shorts = short_values(name);
    let takes_value = |v: &str| {
        if v.starts_with("--") {
            !v.contains('=')
                && (names_value_option(name, v, "--target-directory")
                    || file_long_options(name)
                        .iter()
                        .chain(long_values(name))
                        .any(|l| names_value_option(name, v, l)))
        } else {
            shorts
                .as_ref()
                .and_then(|sv| short_value_in(v, sv))
                .is_some_and(|(_, value, required)| required && value.is_empty())
        }
    };
    let mut operand_seen = false;
    let mut value_next = false;
    for w in words.iter().skip(1) {
        if std::mem::take(&mut value_next) {
            continue;
        }
        match w.value.as_deref() {
            Some("--") => return false,
            Some(v) if v.starts_with('-') && v != "-" => {
                if operand_seen {
                    return true;
                }
                value_next = takes_value(v);
            }
            _ => operand_seen = true,
        }
    }
    false
}

/// `cp`'s options known to change nothing but how the destination is written (no value).
const CP_FLAGS: &[&str] = &[
    "--archive",
    "--recursive",
    "--force",
    "--interactive",
    "--no-clobber",
    "--verbose",
    "--dereference",
    "--no-dereference",
    "--one-file-system",
    "--strip-trailing-slashes",
    "--preserve",
    "--update",
    "--reflink",
    "--debug",
];
/// ... and those that take a value after `=`.
const CP_VALUED: &[&str] = &[
    "--preserve",
    "--no-preserve",
    "--update",
    "--reflink",
    "--sparse",
    "--target-directory",
];
/// `cp`'s short options of the same kind (`-t DIR` apart).
const CP_SHORT: &str = "aRrpfinvLPHdux";

/// The [`Destination`] of a `cp`, `mv`, `ln`, `install` or `rsync` command line, when it
/// names one (two paths or more, or `-t DIR`; not `install -d`, which only creates).
pub fn destination(name: &str, words: &[Word]) -> Option<Destination> {
    if !matches!(name, "cp" | "mv" | "ln" | "link" | "install" | "rsync") {
        return None;
    }
    if name == "install" && has_option(words, &['d'], &["--directory"]) {
        return None;
    }
    let args = path_args_and_operands(name, words);
    let operands = &args.operand_indices;
    let (index, by_option) = match (args.target, operands.last()) {
        (Some(t), _) => (t, true),
        (None, Some(&last)) if operands.len() + args.dropped >= 2 => (last, false),
        (None, Some(_)) if name == "ln" => (args.paths.len(), true),
        // `ln -s /dev/null`: its one operand left out, the link still lands here.
        (None, None) if name == "ln" && args.dropped > 0 => (args.paths.len(), true),
        _ => return None,
    };
    let here = index == args.paths.len();
    let sources = operands.iter().copied().filter(|&i| i != index).collect();
    let parents = name == "cp" && has_option(words, &[], &["--parents"]);
    let contents = matches!(name, "cp" | "mv" | "install")
        && has_option(words, &['T'], &["--no-target-directory"]);
    Some(Destination {
        index,
        by_option,
        sources,
        sources_read: name == "cp" && cp_understood(words),
        parents,
        contents,
        here,
    })
}

/// Whether every word of a `cp` command line is a known option that neither links, moves
/// nor writes elsewhere, before the first operand, or a static operand.
fn cp_understood(words: &[Word]) -> bool {
    let mut operand_seen = false;
    let mut after_dashdash = false;
    let mut value_next = false;
    for w in &words[1..] {
        let Some(v) = w.value.as_deref() else {
            // A computed word may expand to an option (`--parents`) or to several words.
            return false;
        };
        if value_next {
            value_next = false;
            continue;
        }
        if after_dashdash || v == "-" || !v.starts_with('-') {
            operand_seen = true;
            continue;
        }
        if v == "--" {
            after_dashdash = true;
            continue;
        }
        if operand_seen {
            // GNU cp takes options after its operands: the last path may not be the
            // destination after all.
            return false;
        }
        if let Some(long) = v.strip_prefix("--") {
            let known = match long.split_once('=') {
                Some((name, _)) => CP_VALUED.contains(&format!("--{name}").as_str()),
                None if long == "target-directory" => {
                    value_next = true;
                    true
                }
                None => CP_FLAGS.contains(&v),
            };
            if !known {
                return false;
            }
            continue;
        }
        for (k, c) in v[1..].char_indices() {
            if c == 't' {
                // `-tDIR`, or `-t DIR`.
                value_next = v.len() == 1 + k + 1;
                break;
            }
            if !CP_SHORT.contains(c) {
                return false;
            }
        }
    }
    true
}

/// The path an option's value names (`--file=F`, `-fF`, `if=F`), marked as `w` is: bash
/// expands no `~` there (`--file=~/x` names `./~/x`), but for a word that looks like an
/// assignment, whose `~` right after the `=` it expands (`dd of=~/x` writes `$HOME/x`).
pub(crate) fn option_value_path(value: &str, w: &Word) -> Word {
    let value = if value.starts_with('~') && w.assignment_tilde().is_none() {
        format!("./{value}")
    } else {
        value.to_owned()
    };
    Word {
        raw: value.clone(),
        value: Some(value),
        plain: w.plain,
        glob: w.glob,
    }
}

/// What [`path_args_and_operands`] finds.
struct PathArgs {
    /// [`path_args`].
    paths: Vec<Word>,
    /// [`has_path_operands`].
    operands: bool,
    /// The index in `paths` of a `-t DIR` / `--target-directory=DIR` value (`cp`, `mv`, `ln`,
    /// `install`): the destination.
    target: Option<usize>,
    /// The indices in `paths` of the operands (not options' values).
    operand_indices: Vec<usize>,
    /// Operands left out of `paths`: devices a symbolic link points to (`ln -s /dev/null
    /// x`), before its destination.
    dropped: usize,
    /// [`read_path_args`].
    reads: Vec<usize>,
}

/// [`path_args`], whether one of them is an operand, and which one is a target directory.
fn path_args_and_operands(name: &str, words: &[Word]) -> PathArgs {
    // A command not known by name: the directories its glob words list, read.
    if table_path_use(name, words).is_none() {
        return PathArgs {
            paths: words.iter().skip(1).filter_map(listed_directory).collect(),
            operands: false,
            target: None,
            operand_indices: Vec::new(),
            dropped: 0,
            reads: Vec::new(),
        };
    }
    if SCRIPT_SHELLS.contains(&name) {
        let paths = shell_script_files(name, words).unwrap_or_default();
        return PathArgs {
            operands: !paths.is_empty(),
            operand_indices: (0..paths.len()).collect(),
            paths,
            target: None,
            dropped: 0,
            reads: Vec::new(),
        };
    }
    if matches!(name, "sed" | "gsed") {
        let (paths, reads) = sed_path_args(words);
        let operands = !paths.is_empty();
        return PathArgs {
            operand_indices: (0..paths.len()).collect(),
            paths,
            operands,
            target: None,
            dropped: 0,
            reads,
        };
    }
    if let Some(uses) = file_uses::file_uses(name, words) {
        let writes = uses.files.iter().any(|(_, u)| *u == PathUse::Write);
        let operands = !uses.files.is_empty();
        let mut paths: Vec<Word> = uses.files.into_iter().map(|(w, _)| w).collect();
        // A glob word that is none of its files (the arguments of the script an
        // interpreter runs: `python3 x.py secrets/*`) lists its directory: read, after its
        // files, for a command that only reads ([`glob_listings`]).
        if !writes {
            let listings = glob_listings(name, words, &paths);
            paths.extend(listings);
        }
        return PathArgs {
            operands,
            paths,
            target: None,
            operand_indices: Vec::new(),
            dropped: 0,
            reads: Vec::new(),
        };
    }
    if name == "git" {
        let (paths, operands) = git_path_args(words);
        return PathArgs {
            paths,
            operands,
            target: None,
            operand_indices: Vec::new(),
            dropped: 0,
            reads: Vec::new(),
        };
    }
    let takes_target = matches!(name, "cp" | "mv" | "ln" | "install");
    let mut target = None;
    let mut operand_indices = Vec::new();
    let mut operands = false;
    let mut out = Vec::new();
    let mut skip_script = first_positional_is_script(name, words);
    let mut after_dashdash = false;
    let mut find_expr = false;
    let mut next = Next::Any;
    let writes = path_use(name, words) == Some(PathUse::Write);
    let shorts = short_values(name);
    let file_longs = file_long_options(name);
    let as_path = option_value_path;
    // The reference file's option (only read: [`read_path_args`]), and whether the next
    // word is its value.
    let (reference_letters, reference_long) = reference_options(name);
    let mut reads = Vec::new();
    let mut next_is_reference = false;
    for w in &words[1..] {
        match std::mem::take(&mut next) {
            Next::Skip => continue,
            Next::Path => {
                if std::mem::take(&mut next_is_reference) {
                    reads.push(out.len());
                }
                out.push(w.clone());
                continue;
            }
            Next::Target => {
                target = Some(out.len());
                out.push(w.clone());
                continue;
            }
            Next::NameThenPath => {
                next = Next::Path;
                continue;
            }
            Next::SkipTwo => {
                next = Next::Skip;
                continue;
            }
            Next::Any => {}
        }
        let v = w.value.as_deref();
        // binutils read more arguments from `@FILE`, even after `--`: FILE is read (and
        // the files it lists, which [`reads_listed_files`] says cannot be checked).
        if takes_response_files(name)
            && let Some(file) = response_file(w)
        {
            out.push(as_path(file, w));
            continue;
        }
        if !after_dashdash {
            if v == Some("--") {
                after_dashdash = true;
                continue;
            }
            if let Some(v) = v {
                if name == "find" && !find_expr {
                    // Options before the start points, not the expression: `-H`, `-L`,
                    // `-P`, `-Olevel`, `-D debugopts`.
                    match v {
                        "-H" | "-L" | "-P" => continue,
                        "-D" => {
                            next = Next::Skip;
                            continue;
                        }
                        _ if v.starts_with("-O") => continue,
                        _ => {}
                    }
                }
                if name == "find" && (v.starts_with('-') || v == "(" || v == "!" || v == ")") {
                    find_expr = true;
                    // The files an expression writes (`-fprint F`, `-fls F`, ...), and the
                    // list of start points it reads (`-files0-from F`).
                    if matches!(
                        v,
                        "-fprint" | "-fprint0" | "-fprintf" | "-fls" | "-files0-from"
                    ) {
                        next = Next::Path;
                    }
                }
                if name == "jq" && v.starts_with("--") {
                    match v {
                        "--arg" | "--argjson" => {
                            next = Next::SkipTwo;
                            continue;
                        }
                        "--indent" => {
                            next = Next::Skip;
                            continue;
                        }
                        _ => {}
                    }
                }
                if v.starts_with("--") {
                    if takes_target && names_long(v, "--target-directory") {
                        match v.split_once('=') {
                            Some((_, value)) => {
                                target = Some(out.len());
                                out.push(as_path(value, w));
                            }
                            None => next = Next::Target,
                        }
                        continue;
                    }
                    // For the copying commands, whose option tables are whole, an option
                    // is read as getopt_long reads it.
                    let copying = matches!(name, "cp" | "mv" | "ln" | "install" | "rsync");
                    // jq takes no abbreviated option (`--slurp` is not `--slurpfile`).
                    let names_a_file = file_longs.iter().any(|l| {
                        if name == "jq" {
                            v == *l
                        } else if copying {
                            names_value_option(name, v, l)
                        } else {
                            names_long(v, l)
                        }
                    });
                    let reference = !reference_long.is_empty() && names_long(v, reference_long);
                    match v.split_once('=') {
                        Some((_, value))
                            if writes || names_a_file || value.starts_with(['/', '~', '.']) =>
                        {
                            if reference {
                                reads.push(out.len());
                            }
                            out.push(as_path(value, w));
                        }
                        None if names_a_file => {
                            next_is_reference = reference;
                            next = if name == "jq" && v != "--from-file" {
                                Next::NameThenPath
                            } else {
                                Next::Path
                            };
                        }
                        None if long_values(name)
                            .iter()
                            .any(|l| names_value_option(name, v, l)) =>
                        {
                            next = Next::Skip;
                        }
                        _ => {}
                    }
                    continue;
                }
                // jq reads `-1` or `-(…)` as an operand (its program): only a letter after
                // the dash makes an option.
                let jq_operand = name == "jq"
                    && v.strip_prefix('-').is_some_and(|r| {
                        !r.starts_with(|c: char| c == '-' || c.is_ascii_alphabetic())
                    });
                if v.starts_with('-') && v.len() > 1 && !jq_operand {
                    if let Some((_, value)) = v.split_once('=')
                        && (writes || value.starts_with(['/', '~', '.']))
                    {
                        out.push(as_path(value, w));
                    }
                    if let Some((letter, value, required)) =
                        shorts.as_ref().and_then(|sv| short_value_in(v, sv))
                    {
                        let file = shorts.as_ref().is_some_and(|sv| sv.files.contains(&letter));
                        let is_target = takes_target && letter == 't';
                        let reference = reference_letters.contains(&letter);
                        if is_target && !value.is_empty() {
                            target = Some(out.len());
                        }
                        match (value.is_empty(), file) {
                            (true, _) if !required => {}
                            (true, true) if is_target => next = Next::Target,
                            (true, true) => {
                                next_is_reference = reference;
                                next = Next::Path;
                            }
                            (true, false) => next = Next::Skip,
                            (false, true) => {
                                if reference {
                                    reads.push(out.len());
                                }
                                out.push(as_path(value, w));
                            }
                            (false, false) => {}
                        }
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
        operands = true;
        operand_indices.push(out.len());
        out.push(w.clone());
    }
    // A symbolic link's target is not changed, only the link's own path is written: a
    // device as the target (`ln -s /dev/null build.log`) is no file of the command's, where
    // its entry would be changed (`ln /dev/null x`, `rm /dev/null`). Any other target stays
    // a path written: what is later written through the link lands there.
    // (`ln -s /dev/null` alone links into the working directory: [`destination`] still
    // finds it there.)
    let mut dropped_count = 0;
    if makes_symlinks(name, words) {
        let dest = match target {
            Some(_) => None,
            None if operand_indices.len() >= 2 => operand_indices.last().copied(),
            None => None,
        };
        let dropped: Vec<usize> = operand_indices
            .iter()
            .copied()
            .filter(|&i| {
                Some(i) != dest && matches!(out[i].value.as_deref(), Some("/dev/null" | "/dev/tty"))
            })
            .collect();
        dropped_count = dropped.len();
        if !dropped.is_empty() {
            let shift = |i: usize| i - dropped.iter().filter(|&&d| d < i).count();
            operand_indices = operand_indices
                .into_iter()
                .filter(|i| !dropped.contains(i))
                .map(shift)
                .collect();
            target = target.map(shift);
            let mut at = 0;
            out.retain(|_| {
                at += 1;
                !dropped.contains(&(at - 1))
            });
        }
    }
    // `mknod NAME TYPE [MAJOR MINOR]`: only NAME is a path.
    if name == "mknod" && operand_indices.len() > 1 {
        let others = operand_indices.split_off(1);
        let mut at = 0;
        out.retain(|_| {
            at += 1;
            !others.contains(&(at - 1))
        });
    }
    // A glob word that is no path of the command's (a pattern, an option's value: `grep
    // x* f`, `--include=*.rs`) still lists its directory when bash expands it: for a
    // command that only reads (not through a tree it walks, whose roots are its operands),
    // that directory is read too.
    if !writes {
        let listings = glob_listings(name, words, &out);
        out.extend(listings);
    }
    if name == "jq" && jq_loads_unnamed_files(words) {
        out.push(Word {
            raw: "the modules and data files its jq program loads".to_owned(),
            value: None,
            plain: false,
            glob: false,
        });
    }
    PathArgs {
        paths: out,
        operands,
        target,
        operand_indices,
        dropped: dropped_count,
        reads,
    }
}

/// `ln`'s long options, for reading an abbreviated one as getopt_long does.
const LN_LONGS: &[&str] = &[
    "backup",
    "directory",
    "force",
    "interactive",
    "logical",
    "no-dereference",
    "no-target-directory",
    "physical",
    "relative",
    "suffix",
    "symbolic",
    "target-directory",
    "verbose",
    "help",
    "version",
];

/// `cp`'s long options, for the same.
const CP_LONGS: &[&str] = &[
    "archive",
    "attributes-only",
    "backup",
    "context",
    "copy-contents",
    "debug",
    "dereference",
    "force",
    "interactive",
    "keep-directory-symlink",
    "link",
    "no-clobber",
    "no-dereference",
    "no-preserve",
    "no-target-directory",
    "one-file-system",
    "parents",
    "path",
    "preserve",
    "recursive",
    "reflink",
    "remove-destination",
    "sparse",
    "strip-trailing-slashes",
    "suffix",
    "symbolic-link",
    "target-directory",
    "update",
    "verbose",
    "help",
    "version",
];

/// How an `ln` or `cp` command line makes links ([`link_options`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkOptions {
    /// `ln -s` / `--symbolic`, `cp -s` / `--symbolic-link`: it makes symbolic links.
    pub symbolic: bool,
    /// `ln -r` / `--relative`: ln makes each target relative to the link itself, from the
    /// target as the working directory reads it.
    pub relative: bool,
    /// `-T` / `--no-target-directory`: the last operand is the link (or copy) itself, even
    /// when it names a directory.
    pub no_target_directory: bool,
    /// `ln -n` / `--no-dereference`: a last operand that is a link to a directory is the
    /// link itself, not the directory it leads to.
    pub no_dereference: bool,
}

/// The options of an `ln` or `cp` command line that decide how it makes links, read as
/// getopt reads them: a letter in the value of `-S SUFFIX` or `-t DIR` is no option, nor is
/// the word after a long option that takes a value (`--t DIR`, `--sparse WHEN`); a long
/// option abbreviated only as far as it is unambiguous among the program's own; nothing
/// after `--`. `None` for another command.
pub fn link_options(name: &str, words: &[Word]) -> Option<LinkOptions> {
    let (longs, valued): (&[&str], &[&str]) = match name {
        "ln" => (LN_LONGS, &["suffix", "target-directory"]),
        "cp" => (
            CP_LONGS,
            &["no-preserve", "sparse", "suffix", "target-directory"],
        ),
        _ => return None,
    };
    let mut out = LinkOptions::default();
    let mut set = |long: &str| match (name, long) {
        ("ln", "symbolic") | ("cp", "symbolic-link") => out.symbolic = true,
        ("ln", "relative") => out.relative = true,
        (_, "no-target-directory") => out.no_target_directory = true,
        ("ln", "no-dereference") => out.no_dereference = true,
        _ => {}
    };
    let mut rest = words.get(1..).unwrap_or_default().iter();
    while let Some(w) = rest.next() {
        let Some(v) = w.value.as_deref() else {
            continue;
        };
        if v == "--" {
            break;
        }
        if let Some(opt) = v.strip_prefix("--") {
            let (opt, with_value) = match opt.split_once('=') {
                Some((n, _)) => (n, true),
                None => (opt, false),
            };
            // `cp --path` is an old name of `--parents`: one option (`--pa` is no ambiguity).
            let one = |l: &&'static str| if *l == "path" { "parents" } else { *l };
            let exact = longs.iter().find(|l| **l == opt).map(one);
            let mut prefixed: Vec<&str> = longs
                .iter()
                .filter(|l| l.starts_with(opt))
                .map(one)
                .collect();
            prefixed.dedup();
            let long = match (exact, prefixed.as_slice()) {
                (Some(l), _) => Some(l),
                (None, [l]) if !opt.is_empty() => Some(*l),
                _ => None,
            };
            if let Some(long) = long {
                set(long);
                if !with_value && valued.contains(&long) {
                    rest.next();
                }
            }
            continue;
        }
        let Some(bundle) = v.strip_prefix('-').filter(|b| !b.is_empty()) else {
            continue;
        };
        for (k, c) in bundle.char_indices() {
            match (name, c) {
                ("ln", 's') => set("symbolic"),
                ("cp", 's') => set("symbolic-link"),
                ("ln", 'r') => set("relative"),
                (_, 'T') => set("no-target-directory"),
                ("ln", 'n') => set("no-dereference"),
                (_, 'S' | 't') => {
                    if k + 1 == bundle.len() {
                        rest.next();
                    }
                    break;
                }
                _ => {}
            }
        }
    }
    Some(out)
}

/// Whether `name WORDS` makes symbolic links: `ln -s` (`--symbolic`), `cp -s`
/// (`--symbolic-link`), its options read by [`link_options`].
fn makes_symlinks(name: &str, words: &[Word]) -> bool {
    link_options(name, words).is_some_and(|o| o.symbolic)
}

/// The words after `sed` as [`sed`] reads them: a computed word is `"\0"` and its text
/// without quotes (`sed "s/$a/b/w out"`: the script is computed, the name in it is not).
fn sed_args(words: &[Word]) -> Vec<String> {
    words
        .get(1..)
        .unwrap_or_default()
        .iter()
        .map(|w| match &w.value {
            Some(v) => v.clone(),
            None => format!("\0{}", w.raw.replace(['"', '\''], "")),
        })
        .collect()
}

fn as_strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

/// A computed word that may be options (not surely an operand: `$OPTS`, `"$F"`).
fn may_be_options(w: &Word) -> bool {
    w.value.is_none() && !is_surely_operand(w)
}

/// [`sed::script_files`] of `sed WORDS`, with the files of the scripts a computed word that
/// may be options makes (`sed $OPTS 'w out' f`): read without those words (`$OPTS` as `-n`:
/// the next operand is the script), and each word right after one read as a script
/// (`$OPTS` as `-e`, also after the script: `sed s/a/b/ $X 'w out' f`). `None` when the
/// command line is not understood.
fn sed_script_files(words: &[Word]) -> Option<sed::ScriptFiles> {
    let mut found = sed::script_files(&as_strs(&sed_args(words)))?;
    let rest = words.get(1..).unwrap_or_default();
    if !rest.iter().any(may_be_options) {
        return Some(found);
    }
    let without: Vec<Word> = std::iter::once(words[0].clone())
        .chain(rest.iter().filter(|w| !may_be_options(w)).cloned())
        .collect();
    let mut more = sed::script_files(&as_strs(&sed_args(&without)))
        .map(|s| s.files)
        .unwrap_or_default();
    for pair in rest.windows(2) {
        if may_be_options(&pair[0])
            && let Some(script) = pair[1].value.as_deref()
            && let Some(s) = sed::script_files(&["-e", script])
        {
            more.extend(s.files);
        }
    }
    for f in more {
        if !found.files.contains(&f) {
            found.files.push(f);
        }
    }
    Some(found)
}

/// sed's paths, and the indices of those it only reads: its script files (`-f FILE`,
/// `-fFILE`, `--file=FILE`, read), its files (read, or written in place; both when a
/// computed word may be `-i`), as [`sed`] reads the command line (a computed word is an
/// operand), then the files its scripts name (`w FILE` written, `r FILE` read:
/// [`sed::script_files`]; a name with an expansion in a computed script is a computed
/// word), and, when its scripts may name others unseen (a script file, a computed script,
/// one that cannot be read), one computed word for them (written, unless they may only be
/// read: [`sed_unseen`] says why). When the command line is not understood, one computed
/// word: its paths cannot be checked.
fn sed_path_args(words: &[Word]) -> (Vec<Word>, Vec<usize>) {
    let args = sed_args(words);
    let args = as_strs(&args);
    let computed = || Word {
        raw: join_raw(words),
        value: None,
        plain: false,
        glob: false,
    };
    let (Some((script_files, files)), Some(script)) = (sed::paths(&args), sed_script_files(words))
    else {
        return (vec![computed()], Vec::new());
    };
    let in_place = sed_in_place(words);
    let may_be_in_place = sed_may_be_in_place(words);
    let mut out = Vec::new();
    let mut reads = Vec::new();
    // Each file read, or written in place, or both when a computed word may be `-i`.
    let named = script_files.into_iter().map(|p| (p, true, false)).chain(
        files
            .into_iter()
            .map(|p| (p, !in_place, in_place || may_be_in_place)),
    );
    for ((i, offset), read, written) in named {
        let Some(w) = words.get(i + 1) else {
            continue;
        };
        let word = match (&w.value, offset) {
            (Some(v), o) if o > 0 => {
                let Some(value) = v.get(o..) else {
                    continue;
                };
                Word {
                    raw: value.to_owned(),
                    value: Some(value.to_owned()),
                    plain: w.plain,
                    glob: w.glob,
                }
            }
            _ => w.clone(),
        };
        if read {
            reads.push(out.len());
            if written {
                out.push(word.clone());
            }
        }
        out.push(word);
    }
    for f in script.files {
        if !f.writes {
            reads.push(out.len());
        }
        out.push(if f.computed {
            Word {
                raw: f.name,
                value: None,
                plain: false,
                glob: false,
            }
        } else {
            // sed expands no `~` (`w ~/x` writes `./~/x`); the command as written is
            // its raw text, for messages.
            let value = if f.name.starts_with('~') {
                format!("./{}", f.name)
            } else {
                f.name
            };
            Word {
                raw: f.command,
                value: Some(value),
                plain: false,
                glob: false,
            }
        });
    }
    if let Some(unseen) = script.unseen {
        if !unseen.may_write() {
            reads.push(out.len());
        }
        out.push(computed());
    }
    (out, reads)
}

/// Whether a computed word of `sed WORDS` may be options that make it edit in place (`sed
/// $OPTS s/a/b/ f`, `"$F"` may be `-i`): any that is not surely an operand.
fn sed_may_be_in_place(words: &[Word]) -> bool {
    words.iter().skip(1).any(may_be_options)
}

/// What cannot be seen of the files a sed script uses, for the word `sed_path_args` adds
/// for them ([`SedUnseen`]). `None` for any other word of `sed WORDS`, and for a line not
/// understood or a computed script (a computed path).
pub fn sed_unseen(words: &[Word], arg: &Word) -> Option<SedUnseen> {
    if arg.value.is_some() || arg.raw != join_raw(words) {
        return None;
    }
    match sed::script_files(&as_strs(&sed_args(words)))?.unseen? {
        sed::Unseen::ScriptFile(name) => Some(SedUnseen {
            reason: format!("a sed script file (`-f {name}`)"),
            may_write: true,
        }),
        sed::Unseen::Unreadable { shown, may_write } => Some(SedUnseen {
            reason: format!("a sed script that may read or write other files (`{shown}`)"),
            may_write,
        }),
        sed::Unseen::Computed => None,
    }
}

/// The files a sed script may use that cannot be seen ([`sed_unseen`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SedUnseen {
    /// Why, as a message says it: "a sed script file (`-f fix.sed`)", "a sed script that
    /// may read or write other files (`SCRIPT`)".
    pub reason: String,
    /// Whether they may be written (a script file may write any file; a script that
    /// cannot be read and has a `w` or `W` in it), else only read.
    pub may_write: bool,
}

/// What a sed command line whose scripts name files (`r FILE`, `w FILE`, `s///w FILE`) does,
/// as a message says it: "a sed script that reads or writes other files (`r
/// /etc/hostname`)", naming the first such command. Each file is checked as the path it
/// is; this says why the command needs approval where none objects. `None` when its
/// scripts name no file.
pub fn sed_script_note(words: &[Word]) -> Option<String> {
    let files = sed_script_files(words)?.files;
    let first = files.first()?;
    Some(format!(
        "a sed script that reads or writes other files (`{}`)",
        first.command
    ))
}

/// The directories the glob words of a command that only reads list, those words that are
/// none of its `paths` (a pattern, an option's value, a script's argument: `grep x* f`,
/// `--include=*.rs`): each is read. None for a command that walks a tree, whose roots are
/// its operands (the listing would be taken for a root).
fn glob_listings(name: &str, words: &[Word], paths: &[Word]) -> Vec<Word> {
    if reads_trees(name, words).is_some() {
        return Vec::new();
    }
    words
        .iter()
        .skip(1)
        .filter(|w| w.glob && !paths.iter().any(|p| p.raw == w.raw))
        .filter_map(listed_directory)
        .collect()
}

/// The directory a word that bash expands as a glob lists: its text before the `/` that
/// precedes the first component holding an unquoted `*`, `?` or `[` (`secrets` for
/// `secrets/*.pem`, `.` for `*.txt`, `/` for `/*`, `~/.ssh` for `~/.ssh/*`), as a path
/// read. A glob word that is computed (`"$d"/*`) or a brace list is given as it is: a path
/// that cannot be computed, or the words its braces make. `None` for a word that is no glob.
pub(crate) fn listed_directory(w: &Word) -> Option<Word> {
    if !w.glob {
        return None;
    }
    let Some(value) = w.value.as_deref() else {
        return Some(w.clone());
    };
    // Where the first glob character is in the value: found in the word as written (a
    // quoted `*` is none), else, when the written word cannot be followed, the first `*`,
    // `?` or `[` of the value.
    let first_glob = match unquoted_glob_marks(&w.raw) {
        Some(marks) if marks.iter().map(|(c, _)| *c).eq(value.chars()) => {
            let chars = marks.iter().position(|(_, glob)| *glob)?;
            value.char_indices().nth(chars).map(|(i, _)| i)?
        }
        _ => value.find(['*', '?', '['])?,
    };
    let dir = match value[..first_glob].rfind('/') {
        Some(0) => "/",
        Some(i) => &value[..i],
        None => ".",
    };
    Some(Word {
        // As written, so that a `~` is read as bash reads it ([`Word::path_value`]).
        raw: w.raw.clone(),
        value: Some(dir.to_owned()),
        plain: w.plain,
        glob: false,
    })
}

/// Whether the commands of a line may turn bash's `nullglob` on, so that a glob matching
/// nothing is removed (`git zzz* push` runs `git push`). Read from the commands, not the
/// text: bash removes quotes before `shopt` reads its argument (`shopt -s "null"glob`), and
/// the argument may be a glob or a variable (`shopt -s nul?glob`, `shopt -s $o`). Any
/// `shopt` counts (also behind a wrapper: `builtin shopt`), as does a word or an assignment
/// naming `nullglob` once its quotes are removed (`bash -O nul"l"glob`,
/// `BASHOPTS=nul\lglob`), a `BASHOPTS` assignment that is computed, a file sourced (`source
/// f`, `. f`: what it runs is not seen), a command whose name is computed, zsh (its own
/// options and glob qualifiers remove globs too), and a shell or `env` given a glob or a
/// computed word (`bash -O $o`, `bash -O nul?glob`, `env "$v" bash`: any of them may be the
/// option, or set `BASHOPTS`).
pub fn may_turn_on_nullglob(commands: &[SimpleCommand]) -> bool {
    let names_nullglob = |text: &str| text.contains("nullglob");
    commands.iter().any(|c| {
        c.assignments.iter().any(|a| {
            let value = a.raw.split_once('=').map_or("", |(_, v)| v);
            let unquoted: Option<String> =
                unquoted_marks(value).map(|m| m.into_iter().map(|(c, _)| c).collect());
            names_nullglob(&a.raw)
                || unquoted.as_deref().is_some_and(names_nullglob)
                || (a.name == "BASHOPTS" && unquoted.is_none())
        }) || c
            .words
            .iter()
            .any(|w| names_nullglob(&w.raw) || w.value.as_deref().is_some_and(names_nullglob))
            || wrapped_readings(&c.words).iter().any(|(words, _)| {
                let Some(first) = words.first() else {
                    return false;
                };
                let Some(name) = first.value.as_deref().map(basename) else {
                    return true;
                };
                // (What `env` sets passes to any bash its command starts, which may be one that
                // the line's own commands run: `env "$v" xargs bash -c …`.)
                let given_unknowns = matches!(name, "bash" | "sh" | "rbash" | "env")
                    && c.words[1..].iter().any(|w| w.glob || w.value.is_none());
                matches!(name, "shopt" | "source" | "." | "zsh") || given_unknowns
            })
    })
}

/// A word of `cmd` with an unquoted glob (`git pu[s]h`, `npm publis?`, `git *`) that bash
/// may expand to a word the Bash rule `pattern` names for the program `cmd` runs (as
/// written or behind a wrapper, as deny readings follow them: [`candidates`]). The rule,
/// matched against the words as written, cannot tell whether it matches what runs: a file
/// named `push` makes `git pu[s]h` run `git push`, and the command can make that file
/// itself. Where in the command the glob is does not count (one glob may expand to many
/// words, an option may come before the subcommand); only whether it may spell one of the
/// rule's words, or, with `nullglob` (a glob that matches nothing is removed, so the words
/// after it move up), whether the rule names any word after its program. A rule that names
/// its program alone (`git:*`) matches whatever the glob gives. `None` when no such word.
pub fn glob_may_meet_rule<'c>(
    cmd: &'c SimpleCommand,
    pattern: &super::pattern::ShellPattern,
    nullglob: bool,
) -> Option<&'c Word> {
    use super::pattern::{RuleWord, ShellPattern};
    let (program, named) = pattern.named_words();
    if named.is_empty() {
        return None;
    }
    // A rule of whole words fixes where they stand; a `*` of a wildcard may stand for
    // several words, so there any glob that may be one of them counts.
    // (`git push *`, whose only star ends it, is `git push:*`.)
    let in_order: Option<Vec<&str>> = match pattern {
        ShellPattern::Prefix(_)
        | ShellPattern::Exact(_)
        | ShellPattern::Wildcard {
            optional_tail: true,
            ..
        } => named
            .iter()
            .map(|n| match n {
                RuleWord::Whole(n) => Some(n.as_str()),
                RuleWord::Part => None,
            })
            .collect(),
        ShellPattern::Wildcard { .. } => None,
    };
    let glob_anywhere = |args: &'c [Word]| {
        args.iter().filter(|w| may_be_any(w)).find(|g| {
            may_vanish(g, nullglob)
                || named.iter().any(|n| match n {
                    RuleWord::Part => true,
                    RuleWord::Whole(n) => may_be(g, n),
                })
        })
    };
    let mut todo: Vec<&[Word]> = vec![&cmd.words[..]];
    let mut seen = 0;
    while let Some(words) = todo.pop() {
        let Some((first, args)) = words.split_first() else {
            continue;
        };
        seen += 1;
        if seen > MAX_DENY_READINGS {
            // More readings than are followed: any glob may be one.
            return cmd.words.iter().find(|w| may_be_any(w));
        }
        if let Some((starts, _)) = wrapped_command_starts(words) {
            todo.extend(starts.iter().filter_map(|&s| words.get(s..)));
        }
        if let SshCommand::At(at) = ssh_remote_command(words) {
            todo.extend(words.get(at..));
        }
        let runs = match (&program, first.value.as_deref()) {
            (Some(RuleWord::Whole(p)), Some(name)) => basename(p) == basename(name),
            _ => true,
        };
        if !runs {
            continue;
        }
        let found = match &in_order {
            Some(rule) => {
                let exact = matches!(pattern, ShellPattern::Exact(_));
                glob_in_rule_position(words, rule, nullglob, exact)
            }
            _ => glob_anywhere(args),
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// For [`glob_may_meet_rule`], a rule of whole words (`git push:*`, `git push`): a glob of
/// `words` (a reading of a command through its wrappers, its program first, every word
/// static) that may put `rule`'s words (after its program) where the rule matches them, in
/// any reading deny and ask rules take ([`leading_option_walk`]: as written, and past the
/// program's leading options). In each such reading the words are compared with the rule's
/// position by position: a word that differs from the rule's before any glob means the
/// reading cannot match (`git add *`); a glob counts where it may be the rule's word at its
/// place, or, with `nullglob`, anywhere up to the rule's last word (it may vanish); the
/// first glob at or before the rule's last word decides, as the words it expands to are all
/// spelled by it. With `nullglob` an `exact` rule (`git push`) also meets globs after its
/// words when nothing else follows them: they may all vanish (`git push zzz*`).
///
/// A glob among the words the option walk looked at may change where it stops (bash may
/// expand it to options, to several words): from it on every word may start a reading (`git
/// -C * status push` runs `git -C + -C status push` with files `+` and `-C`, in the C
/// locale), and a reading that starts after it and matches the rule as written is that
/// glob's doing (`git ?-no-pager push` runs `git --no-pager push` with a file
/// `--no-pager`, which the line may make).
fn glob_in_rule_position<'c>(
    words: &'c [Word],
    rule: &[&str],
    nullglob: bool,
    exact: bool,
) -> Option<&'c Word> {
    let spelled: Vec<String> = words
        .iter()
        .map(|w| w.value.clone().unwrap_or_else(|| w.raw.clone()))
        .collect();
    let (mut starts, looked_at) = leading_option_walk(&spelled);
    starts.push(1);
    let option_glob = words
        .iter()
        .take(looked_at.saturating_add(1))
        .skip(1)
        .position(|w| w.glob || (w.value.is_none() && computed_may_vanish(&w.raw)))
        .map(|g| g + 1);
    if let Some(g) = option_glob {
        starts.extend(g..words.len());
    }
    starts.iter().find_map(|&s| {
        let rest = words.get(s..)?;
        for (at, w) in rest.iter().enumerate().take(rule.len()) {
            let named = rule[at];
            if may_be_any(w) {
                return (may_vanish(w, nullglob) || may_be(w, named)).then_some(w);
            }
            let value = w.value.as_deref()?;
            if value.contains([' ', '\t']) {
                // One word that is several of the rule's: compared as before, any glob
                // after it that may be any of its words.
                return glob_anywhere_of(&words[s + at..], rule, nullglob);
            }
            if value != named {
                return None;
            }
        }
        if rest.len() < rule.len() {
            return None;
        }
        // The rule's words, as written: after a glob among the options, which may have
        // moved them there.
        if let Some(g) = option_glob.filter(|&g| g < s) {
            return Some(&words[g]);
        }
        // A computed command name may be the program (`$x push`).
        if words[0].value.is_none() {
            return Some(&words[0]);
        }
        let after = &rest[rule.len()..];
        (exact && !after.is_empty() && after.iter().all(|w| may_vanish(w, nullglob)))
            .then(|| &after[0])
    })
}

/// The first glob or computed word of `words` that may be any of `rule`'s words, or may
/// vanish.
fn glob_anywhere_of<'c>(words: &'c [Word], rule: &[&str], nullglob: bool) -> Option<&'c Word> {
    words
        .iter()
        .filter(|w| may_be_any(w))
        .find(|g| may_vanish(g, nullglob) || rule.iter().any(|n| may_be(g, n)))
}

/// Whether bash may expand `w` to a word not written: an unquoted glob, or a computed word
/// (a parameter expansion, a command or arithmetic substitution, a brace list), whose value
/// is not known here and may be any word (`npm $(echo publish)`, `npm publis${x:-h}`).
fn may_be_any(w: &Word) -> bool {
    w.glob || w.value.is_none()
}

/// For a word that [`may_be_any`]: whether it may be `word`. A computed word may be
/// anything, but one whose expansions are all double-quoted is one word with its literal
/// text around them (`--git-dir="$D"` is never `push`).
fn may_be(w: &Word, word: &str) -> bool {
    if w.value.is_some() {
        return glob_may_be(&w.raw, word);
    }
    if computed_may_vanish(&w.raw) {
        return true;
    }
    quoted_expansions_as_stars(&w.raw).is_none_or(|pattern| glob_may_be(&pattern, word))
}

/// The computed word `raw`, whose expansions are all inside double quotes, as a glob that
/// its values match: each expansion (`$x`, `${…}`, `$(…)`, `$((…))`, a backquoted command)
/// a `*`, the quoted text around them escaped, the unquoted text as written. `None` when
/// that is not worked out here.
fn quoted_expansions_as_stars(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                out.push(chars.next()?);
            }
            '\'' => loop {
                match chars.next()? {
                    '\'' => break,
                    d => {
                        out.push('\\');
                        out.push(d);
                    }
                }
            },
            '"' => loop {
                match chars.next()? {
                    '"' => break,
                    '\\' => {
                        out.push('\\');
                        out.push(chars.next()?);
                    }
                    '`' => {
                        while chars.next()? != '`' {}
                        out.push('*');
                    }
                    '$' => {
                        match chars.next()? {
                            open @ ('{' | '(') => {
                                let close = if open == '{' { '}' } else { ')' };
                                let mut depth = 1usize;
                                while depth > 0 {
                                    match chars.next()? {
                                        // (Quotes inside are not followed: given up.)
                                        '"' | '\'' | '`' | '\\' => return None,
                                        d if d == open => depth += 1,
                                        d if d == close => depth -= 1,
                                        _ => {}
                                    }
                                }
                            }
                            d if d.is_ascii_alphabetic() || d == '_' => {
                                while chars
                                    .peek()
                                    .is_some_and(|d| d.is_ascii_alphanumeric() || *d == '_')
                                {
                                    chars.next();
                                }
                            }
                            d if d.is_ascii_digit() || "?#$!*-".contains(d) => {}
                            _ => return None,
                        }
                        out.push('*');
                    }
                    d => {
                        out.push('\\');
                        out.push(d);
                    }
                }
            },
            '$' | '`' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

/// For a word that [`may_be_any`]: whether it may expand to no word at all, so that the words
/// after it move up: a glob with `nullglob`, a computed word that [`computed_may_vanish`].
fn may_vanish(w: &Word, nullglob: bool) -> bool {
    match w.value {
        None => computed_may_vanish(&w.raw),
        Some(_) => w.glob && nullglob,
    }
}

/// Whether the computed word written `raw` may expand to no word or to several: when an
/// expansion, substitution or brace list in it is unquoted (`$x`, `$(true)`, `{,}`), or it
/// may expand an array's or the parameters' elements (`"$@"`, `"${a[@]}"`). A word that
/// is one double-quoted expansion (`"$x"`) stays one word, empty or not.
fn computed_may_vanish(raw: &str) -> bool {
    if raw.contains('@') {
        return true;
    }
    let mut chars = raw.chars();
    let mut double = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '\'' if !double => {
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                }
            }
            '"' => double = !double,
            '$' | '`' | '{' | '~' if !double => return true,
            _ => {}
        }
    }
    false
}

/// Whether the word `raw`, holding an unquoted glob, may expand to the word `word` (bash's
/// pattern matching: `*`, `?`, `[…]` classes; case ignored, as `nocaseglob` would). `true`
/// when that is not worked out here: an expansion, a brace list, an extended glob's `(`.
pub fn glob_may_be(raw: &str, word: &str) -> bool {
    if raw.contains(['{', '(']) {
        return true;
    }
    // (Too long to match character by character here: any word.)
    let Some(marks) = unquoted_marks(raw).filter(|m| m.len() <= 1_024) else {
        return true;
    };
    let word: Vec<char> = word.chars().collect();
    let mut memo = std::collections::HashMap::new();
    glob_chars_match(&marks, &word, &mut memo)
}

/// [`glob_may_be`] on the pattern's characters (each with whether it is unquoted) and the
/// word's; `memo` holds what was found for the tails tried (by their lengths), so that many
/// stars take no exponential time.
fn glob_chars_match(
    pattern: &[(char, bool)],
    word: &[char],
    memo: &mut std::collections::HashMap<(usize, usize), bool>,
) -> bool {
    let key = (pattern.len(), word.len());
    if let Some(&known) = memo.get(&key) {
        return known;
    }
    let found = glob_tail_match(pattern, word, memo);
    memo.insert(key, found);
    found
}

/// Whether two characters are the same but for case.
fn same_letter(a: char, b: char) -> bool {
    a == b || a.to_lowercase().eq(b.to_lowercase())
}

/// One step of [`glob_chars_match`].
fn glob_tail_match(
    pattern: &[(char, bool)],
    word: &[char],
    memo: &mut std::collections::HashMap<(usize, usize), bool>,
) -> bool {
    let Some((&(c, unquoted), rest)) = pattern.split_first() else {
        return word.is_empty();
    };
    match (c, unquoted) {
        ('*', true) => (0..=word.len()).any(|i| glob_chars_match(rest, &word[i..], memo)),
        ('?', true) => !word.is_empty() && glob_chars_match(rest, &word[1..], memo),
        ('[', true) => {
            let (close, class) = match bracket_class(rest) {
                Bracket::Class(close, class) => (close, class),
                // No unquoted `]` closes it: the `[` is literal.
                Bracket::Literal => {
                    return word.first() == Some(&'[') && glob_chars_match(rest, &word[1..], memo);
                }
                // Not read here: from this `[` on it may be anything.
                Bracket::Unsure => return true,
            };
            let Some(&w) = word.first() else {
                return false;
            };
            class.may_hold(w) && glob_chars_match(&rest[close + 1..], &word[1..], memo)
        }
        _ => {
            word.first().is_some_and(|&w| same_letter(w, c))
                && glob_chars_match(rest, &word[1..], memo)
        }
    }
}

/// The members of a bracket class, read by [`bracket_class`].
struct BracketClass {
    /// `[!…]` or `[^…]`.
    negated: bool,
    /// It holds a POSIX class, collating symbol or equivalence class (`[:alpha:]`,
    /// `[.p.]`, `[=p=]`), which may hold any character as far as this reads it.
    named: bool,
    /// Its characters and ranges (a character alone is the range from it to itself).
    ranges: Vec<(char, char)>,
}

impl BracketClass {
    /// Whether the class may match `w`, as written or with case ignored (as `nocaseglob`
    /// reads it: a hit when the lower or upper case of `w` is in a range). Each range is
    /// compared on its own characters, so that `[Z-a]` holds `_`.
    fn may_hold(&self, w: char) -> bool {
        if self.named {
            return true;
        }
        let holds = |f: char| self.ranges.iter().any(|&(a, b)| a <= f && f <= b);
        let as_written = holds(w);
        let any_case = w.to_lowercase().chain(w.to_uppercase()).any(holds);
        as_written != self.negated || any_case != self.negated
    }
}

/// What an unquoted `[` starts in a glob, read by [`bracket_class`].
enum Bracket {
    /// A class, and where its closing `]` is in the pattern after the `[`.
    Class(usize, BracketClass),
    /// No unquoted `]` closes it: the `[` is a character of its own.
    Literal,
    /// A `[` followed by `:`, `=` or `.` inside it that is no well-formed named member
    /// (`[s[:a[:]`): where bash closes the class depends on how it reads that group (and on
    /// its version), so the word may be anything.
    Unsure,
}

/// The class that `rest`, the pattern after an unquoted `[`, starts, and where its closing
/// `]` is in `rest` ([`Bracket`]). As bash's `BRACKMATCH` reads it: a `]` first (after `!`
/// or `^`) is a member, a quoted character is an ordinary member (`[p"]"]` holds `]`), and
/// `a-b` is a range unless the `-` is quoted or the `]` closing the class follows it. A
/// named member (`[:alpha:]`, `[.p.]`) whose `]` closes nothing is taken only as bash
/// surely takes it: unquoted, a class name of letters or a single character, and no `[` or
/// `]` before its `:]` or `.]` (bash gives up on the group at a `]`, so `[s[:a[:]` is closed
/// by the `]` of `:]`). Any other `[` with `:`, `=` or `.` after it, as a member or as the
/// end of a range, is [`Bracket::Unsure`], and so is every equivalence class (`[=p=]`),
/// which bash 5.2 reads one way or another by whether it matches.
fn bracket_class(rest: &[(char, bool)]) -> Bracket {
    let negated = matches!(rest.first(), Some(('!' | '^', true)));
    let mut class = BracketClass {
        negated,
        named: false,
        ranges: Vec::new(),
    };
    // Whether a `[` at `j` starts a group (`[:`, `[=`, `[.`), and where the group a well
    // formed one ends (the index of its `]`).
    let group = |j: usize| -> Option<Option<usize>> {
        if rest.get(j) != Some(&('[', true)) {
            return None;
        }
        let &(kind @ (':' | '=' | '.'), _) = rest.get(j + 1)? else {
            return None;
        };
        let end = (j + 2..rest.len().saturating_sub(1))
            .find(|&k| rest[k] == (kind, true) && rest[k + 1] == (']', true));
        let well_formed = end.filter(|&end| {
            let inner = &rest[j + 2..end];
            rest[j + 1].1
                && inner
                    .iter()
                    .all(|&(c, unquoted)| unquoted && !matches!(c, '[' | ']'))
                && match kind {
                    ':' => !inner.is_empty() && inner.iter().all(|(c, _)| c.is_ascii_lowercase()),
                    '.' => inner.len() == 1,
                    // bash 5.2 takes the character after an equivalence class that does not
                    // match for a member even when it is `]` (`[[=x=]]u]` holds `u`), and
                    // closes the class at that `]` when it matches: never sure.
                    _ => false,
                }
        });
        Some(well_formed.map(|end| end + 1))
    };
    let from = usize::from(negated);
    let mut i = from;
    loop {
        let Some(&(c, unquoted)) = rest.get(i) else {
            return Bracket::Literal;
        };
        if c == ']' && unquoted && i > from {
            return Bracket::Class(i, class);
        }
        match group(i) {
            Some(Some(close)) => {
                class.named = true;
                i = close + 1;
                continue;
            }
            Some(None) => return Bracket::Unsure,
            None => {}
        }
        let ends_range = matches!(rest.get(i + 2), Some((']', true)) | None);
        if matches!(rest.get(i + 1), Some(('-', true))) && !ends_range {
            if group(i + 2).is_some() {
                return Bracket::Unsure;
            }
            class.ranges.push((c, rest[i + 2].0));
            i += 3;
        } else {
            class.ranges.push((c, c));
            i += 1;
        }
    }
}

/// The characters a static word is made of once its quotes and backslashes are removed,
/// each with whether it is an unquoted glob character (`*`, `?`, `[`); `None` for a word
/// holding an expansion or an ANSI-C string, which this does not follow.
fn unquoted_glob_marks(raw: &str) -> Option<Vec<(char, bool)>> {
    let marks = unquoted_marks(raw)?;
    Some(
        marks
            .into_iter()
            .map(|(c, unquoted)| (c, unquoted && matches!(c, '*' | '?' | '[')))
            .collect(),
    )
}

/// The characters a static word is made of once its quotes and backslashes are removed,
/// each with whether it was written unquoted and unescaped; `None` for a word holding an
/// expansion or an ANSI-C string, which this does not follow.
fn unquoted_marks(raw: &str) -> Option<Vec<(char, bool)>> {
    let mut out = Vec::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(d) = chars.next()
                    && d != '\n'
                {
                    out.push((d, false));
                }
            }
            '\'' => loop {
                match chars.next()? {
                    '\'' => break,
                    d => out.push((d, false)),
                }
            },
            '"' => loop {
                match chars.next()? {
                    '"' => break,
                    '$' | '`' => return None,
                    '\\' => match chars.next()? {
                        d @ ('$' | '`' | '"' | '\\') => out.push((d, false)),
                        '\n' => {}
                        d => {
                            out.push(('\\', false));
                            out.push((d, false));
                        }
                    },
                    d => out.push((d, false)),
                }
            },
            '$' | '`' => return None,
            d => out.push((d, true)),
        }
    }
    Some(out)
}

/// The first character a word expands to when it is literal text, not an expansion, a
/// glob, a brace or an empty quote (`"Total: $n"` starts with `T`, `''$x` is unknown).
pub(crate) fn literal_start(raw: &str) -> Option<char> {
    let mut chars = raw.chars();
    let mut in_double = false;
    loop {
        let c = chars.next()?;
        match (c, in_double) {
            ('\'', false) => match chars.next()? {
                '\'' => {}
                d => return Some(d),
            },
            ('"', _) => in_double = !in_double,
            ('\\', false) => return chars.next().filter(|d| *d != '\n'),
            ('\\', true) => {
                return match chars.next()? {
                    d @ ('$' | '`' | '"' | '\\') => Some(d),
                    '\n' => None,
                    _ => Some('\\'),
                };
            }
            ('$' | '`', _) => return None,
            ('{' | '*' | '?' | '[' | '~', false) => return None,
            (d, _) => return Some(d),
        }
    }
}

/// Whether a computed word is surely an operand, not an option: one word that starts with
/// literal text other than `-` (`"https://$HOST/x"`; not `$URL`, which may split into `-o
/// FILE`).
pub(crate) fn is_surely_operand(w: &Word) -> bool {
    !may_split(w) && literal_start(&w.raw).is_some_and(|c| c != '-')
}

/// Whether a word may become several words, or words other than its text: an unquoted
/// expansion or substitution is split on whitespace (`x='-v a'`), a brace list or a glob
/// expands to several words. A quoted `"$x"` stays one word.
fn may_split(w: &Word) -> bool {
    if w.glob {
        return true;
    }
    if w.value.is_some() {
        return false;
    }
    let mut chars = w.raw.chars();
    let mut in_double = false;
    while let Some(c) = chars.next() {
        match (c, in_double) {
            ('\'', false) => {
                for d in chars.by_ref() {
                    if d == '\'' {
                        break;
                    }
                }
            }
            ('"', _) => in_double = !in_double,
            ('\\', _) => {
                chars.next();
            }
            ('$' | '`' | '{', false) => return true,
            _ => {}
        }
    }
    false
}

/// `printf -v NAME` assigns a variable (and evaluates an array subscript in NAME, which can
/// run a command). Bash reads printf's options only before the format, so the first argument
/// decides: static and not `-v`, or starting with literal text other than `-` (`"Total:
/// $n"`); a first word that could expand to `-v` (`"$fmt"`, `''$x`, a brace, a glob) is not
/// read-only.
fn printf_is_read_only(args: &[Word]) -> bool {
    match args.first() {
        None => true,
        Some(w) => match &w.value {
            Some(v) if !w.glob => !v.starts_with("-v"),
            _ => literal_start(&w.raw).is_some_and(|c| c != '-'),
        },
    }
}

/// `test`/`[`: `-v NAME` (and `-R`) look a variable up, evaluating an array subscript in NAME,
/// which can run a command (`-v 'a[$(cmd)]'`). Refused: those operators, any operand with a
/// subscript holding a substitution, a word that may become several (an unquoted `$x` may be
/// `-v a[$(cmd)]`), and two computed words in a row (the first could expand to `-v`, the
/// second to the subscript).
fn test_is_read_only(args: &[Word]) -> bool {
    let subscript = |a: &str| a.contains('[') && (a.contains("$(") || a.contains('`'));
    args.iter()
        .filter_map(|w| w.value.as_deref())
        .all(|a| !matches!(a, "-v" | "-R") && !subscript(a))
        && !args.iter().any(may_split)
        && !args
            .windows(2)
            .any(|w| w[0].value.is_none() && w[1].value.is_none())
}

/// Whether `words` (wrappers already stripped) is a built-in read-only command: one that
/// changes nothing, judged by its name, subcommand and flags. Options that write or run a
/// program are refused in every spelling getopt accepts (bundled short options,
/// abbreviated long ones). git is not read-only while the environment the command inherits
/// holds one of [`GIT_ENVIRONMENT`] ([`inherited_git_variable`]).
pub fn is_read_only(words: &[Word]) -> bool {
    let Some(name) = words.first().and_then(val) else {
        return false;
    };
    match name {
        "printf" => return printf_is_read_only(&words[1..]),
        "test" | "[" => return test_is_read_only(&words[1..]),
        _ => {}
    }
    let Some(args) = words[1..]
        .iter()
        .map(|w| w.value.as_deref())
        .collect::<Option<Vec<&str>>>()
    else {
        // Dynamic arguments are fine for commands that take no paths and no options that act.
        return matches!(
            name,
            "echo" | "true" | "false" | "seq" | "basename" | "dirname"
        );
    };
    let has = |flags: &[&str]| {
        args.iter().any(|a| {
            flags
                .iter()
                .any(|f| a == f || (f.starts_with("--") && a.starts_with(&format!("{f}="))))
        })
    };
    // An option in any spelling: a bundled short letter or an abbreviated long name.
    let any_option = |letters: &[char], longs: &[&str]| {
        args.iter()
            .any(|a| short_bundle_has(a, letters) || longs.iter().any(|l| names_long(a, l)))
    };
    match name {
        "ls" | "cat" | "head" | "tail" | "pwd" | "echo" | "grep" | "egrep" | "fgrep" | "stat"
        | "df" | "which" | "whereis" | "type" | "diff" | "cmp" | "cut" | "tr" | "nl" | "od"
        | "hexdump" | "strings" | "basename" | "dirname" | "realpath" | "readlink" | "uname"
        | "whoami" | "id" | "true" | "false" | "seq" | "sleep" | "column" | "fold" | "rev"
        | "tac" | "md5sum" | "sha1sum" | "sha256sum" | "sha512sum" | "shasum" | "cksum" | "hd"
        | "printenv" | "groups" | "ps" | "pgrep" | "more" | "nproc" | "arch" | "tty" | "locale"
        | "cal" | "paste" | "comm" | "expand" | "unexpand" | "cd" => true,
        "wc" | "du" => !any_option(&[], &["--files0-from"]),
        "command" => args.first().is_some_and(|a| *a == "-v" || *a == "-V"),
        // `--pre` and `--hostname-bin` run a program; `-z` runs decompressors.
        "rg" => {
            !has(&["--pre", "--pre-glob", "--search-zip"])
                && !any_option(&['z'], &["--hostname-bin"])
        }
        "find" => !has(&[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
            "-fls",
        ]),
        "tree" => !any_option(&['o', 'R'], &[]),
        "file" => !any_option(&['C'], &["--compile"]),
        "sort" => !args.iter().any(|a| {
            short_option_in(a, &['o'], "kStT")
                || ["--output", "--compress-program", "--files0-from"]
                    .iter()
                    .any(|l| names_long(a, l))
        }),
        // `uniq [IN [OUT]]`: its option values (`-f 1`) are no operands.
        "uniq" => uniq_operands(&args) <= 1,
        // `xxd [IN [OUT]]`: options end at the first operand (`xxd IN -x` writes `-x`).
        "xxd" => xxd_operands(&args) <= 1,
        "base64" => !any_option(&['o'], &["--output"]),
        // A lesskey file or lesskey text (`--lesskey-content`) can bind keys to shell
        // commands; less takes any unambiguous abbreviation of a long option
        // (`--lesskey-con=`), which `names_long` covers.
        "less" => {
            !any_option(
                &['o', 'O', 'k'],
                &[
                    "--log-file",
                    "--LOG-FILE",
                    "--lesskey-file",
                    "--lesskey-src",
                    "--lesskey-content",
                ],
            ) && !args.iter().any(|a| a.starts_with('+'))
        }
        "jq" => !jq_may_use_other_files(&args),
        // `bat cache` (its first operand) builds or clears (`--clear --target DIR`) its
        // cache, and `--generate-config-file` writes its configuration.
        "bat" => {
            !any_option(&[], &["--pager", "--generate-config-file"])
                && args.iter().find(|a| !a.starts_with('-')) != Some(&"cache")
        }
        // An operand sets the clock (`date MMDDhhmm`), so only options and `+FORMAT`; the
        // values of `-d`, `-f` and `-r` (`date -d yesterday`) are no operands.
        "date" => {
            !args
                .iter()
                .any(|a| short_option_in(a, &['s'], "dfrI") || names_long(a, "--set"))
                && {
                    let mut iter = args.iter();
                    let mut ok = true;
                    while let Some(a) = iter.next() {
                        if matches!(*a, "-d" | "-f" | "-r" | "--date" | "--file" | "--reference") {
                            iter.next();
                        } else if !(a.starts_with('-') || a.starts_with('+')) {
                            ok = false;
                        }
                    }
                    ok
                }
        }
        "hostname" => args.is_empty(),
        "env" => args.is_empty(),
        "sed" => sed::is_read_only_sed(&args),
        // Not with a variable in the environment the command inherits that sends git to
        // another repository or configuration, or makes it run a program.
        "git" => git_read_only(&args) && inherited_git_variable().is_none(),
        _ => false,
    }
}

/// git's environment variables that make it work on another repository than the one its
/// directory is in (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_COMMON_DIR`, `GIT_INDEX_FILE`, …), whose
/// configuration (and the programs it names: `core.fsmonitor`, `diff.external`) the
/// read-only check does not read; read another configuration (`GIT_CONFIG_GLOBAL`,
/// `GIT_CONFIG_COUNT`, `GIT_CONFIG_PARAMETERS`, …); or run a program (`GIT_EXEC_PATH`,
/// `GIT_EXTERNAL_DIFF`, `GIT_SSH_COMMAND`, `GIT_ASKPASS`, …). Not the pager and editor
/// variables (`GIT_PAGER`, `PAGER`, `GIT_EDITOR`): a read-only command opens no editor, and
/// the Bash tool runs it with no terminal, where git starts no pager.
pub const GIT_ENVIRONMENT: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_INDEX_FILE",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG_PARAMETERS",
    "GIT_EXEC_PATH",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_PROXY_COMMAND",
    "GIT_ASKPASS",
];

/// The first of [`GIT_ENVIRONMENT`] set (not empty) in this process's environment, which
/// every command the Bash tool runs inherits: with one, no git command is read-only
/// ([`is_read_only`]; it asks, and plan mode refuses it). Read at each check, as the engine
/// reads the environment for git's other checks. A value that changes nothing git reads or
/// runs is left out: `GIT_CONFIG_GLOBAL`/`GIT_CONFIG_SYSTEM` of `/dev/null`,
/// `GIT_CONFIG_COUNT` of `0`. (Run from a git hook, which sets `GIT_DIR` or
/// `GIT_INDEX_FILE`, git is therefore never read-only.) What the command line itself sets
/// (`GIT_DIR=… git log`, `export GIT_DIR=…; git log`) is another check's: an assignment
/// makes the line ask on its own.
pub fn inherited_git_variable() -> Option<&'static str> {
    GIT_ENVIRONMENT.iter().copied().find(|name| {
        std::env::var_os(name).is_some_and(|v| {
            let v = v.to_string_lossy();
            let harmless = v.is_empty()
                || (matches!(*name, "GIT_CONFIG_GLOBAL" | "GIT_CONFIG_SYSTEM") && v == "/dev/null")
                || (*name == "GIT_CONFIG_COUNT" && v.trim() == "0");
            !harmless
        })
    })
}

/// The variable of [`GIT_ENVIRONMENT`] that alone keeps `words` (wrappers stripped) from
/// being read-only: a git command [`is_read_only`] would take but for the environment it
/// inherits ([`inherited_git_variable`]). The permission question names it.
pub fn git_read_only_but_for(words: &[Word]) -> Option<&'static str> {
    let (name, rest) = words.split_first()?;
    if val(name) != Some("git") {
        return None;
    }
    let args = rest
        .iter()
        .map(|w| w.value.as_deref())
        .collect::<Option<Vec<&str>>>()?;
    if !git_read_only(&args) {
        return None;
    }
    inherited_git_variable()
}

/// Whether `words` (a read-only command, wrappers stripped) stays read-only whatever
/// arguments are appended to it (by `xargs` or `find -exec`): a command none of whose options
/// writes a file or runs a program (not `sort -o`, `rg --pre`, `uniq IN OUT`, ...).
pub fn reads_only_whatever_is_appended(words: &[Word]) -> bool {
    let name = words.first().and_then(val).map(basename);
    // The first word appended to a jq without a program is its program; a program may load
    // other files.
    if name == Some("jq") && !jq_reads_only_its_operands(&words[1..]) {
        return false;
    }
    name.is_some_and(|name| {
        matches!(
            name,
            "cat"
                | "head"
                | "tail"
                | "wc"
                | "grep"
                | "egrep"
                | "fgrep"
                | "ls"
                | "stat"
                | "nl"
                | "od"
                | "cut"
                | "basename"
                | "dirname"
                | "realpath"
                | "readlink"
                | "md5sum"
                | "sha1sum"
                | "sha256sum"
                | "sha512sum"
                | "shasum"
                | "cksum"
                | "strings"
                | "hexdump"
                | "hd"
                | "column"
                | "fold"
                | "rev"
                | "tac"
                | "comm"
                | "expand"
                | "unexpand"
                | "paste"
                | "diff"
                | "cmp"
                | "du"
                | "echo"
                | "jq"
        )
    })
}

/// The global options of git that change nothing a read-only subcommand does.
const GIT_GLOBAL_OPTIONS: &[&str] = &[
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--no-replace-objects",
];

/// git's global options that change only how paths and output are read.
const GIT_HARMLESS_FLAGS: &[&str] = &[
    "-p",
    "--paginate",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
];

/// git's global options that take their value as the next word.
pub(crate) const GIT_VALUE_OPTIONS: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--attr-source",
];

/// The subcommand of a `git` command after the global options [`git_read_only`] accepts.
fn git_subcommand(words: &[Word]) -> Option<&str> {
    words
        .iter()
        .skip(1)
        .map(|w| w.value.as_deref())
        .find(|v| !v.is_some_and(|v| GIT_GLOBAL_OPTIONS.contains(&v)))
        .flatten()
}

/// What a git command prints of the files in the repository (or its history), for the Read
/// deny rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitContent {
    /// Files it does not name, or names in a way that cannot be checked: a blob
    /// (`git show HEAD:.env`, `git show <object id>` with or without a pathspec, `git
    /// cat-file`), a search (`git grep`), a line range (`log -L`), a patch its pathspecs do
    /// not limit (`--full-diff`), a repository elsewhere or configured on the command line
    /// (`-C`, `-c`).
    Unnamed,
    /// A patch of the files its pathspecs select (of every file when it has none): the
    /// words after `--`, and the operands before it that are paths (those that exist; the
    /// others are revisions).
    Pathspecs {
        /// Operands before `--`: revisions or paths.
        operands: Vec<Word>,
        /// Words after `--`: paths.
        paths: Vec<Word>,
    },
    /// A patch of what changed in the files its pathspecs select (`git diff`): files git
    /// tracks, in the work tree, the index or the revisions it compares.
    Changes {
        /// Operands before `--`: revisions or paths.
        operands: Vec<Word>,
        /// Words after `--`: paths.
        paths: Vec<Word>,
        /// It compares the index or a revision's tree (`--cached`, `--staged`,
        /// `--merge-base`), not only the work tree with the index.
        trees: bool,
    },
}

/// The global options before git's subcommand: the index of the subcommand in `words`,
/// whether an option names another repository, work tree or configuration (or cannot be
/// told apart from one: anything but the options that change nothing git reads), and
/// whether one configures git (`-c`, `--config-env`: an alias may be any subcommand).
/// `None` when a computed word stands among them.
fn git_globals(words: &[Word]) -> Option<(usize, bool, bool)> {
    let mut i = 1;
    let mut elsewhere = false;
    let mut configured = false;
    while let Some(v) = words.get(i).map(|w| w.value.as_deref()) {
        let v = v?;
        if !v.starts_with('-') {
            break;
        }
        i += 1;
        if GIT_GLOBAL_OPTIONS.contains(&v) || GIT_HARMLESS_FLAGS.contains(&v) {
            continue;
        }
        elsewhere = true;
        configured |= v == "-c" || names_long(v, "--config-env");
        if GIT_VALUE_OPTIONS.contains(&v) {
            i += 1;
        }
    }
    Some((i, elsewhere, configured))
}

/// Whether git's global options set a configuration that runs a program or defines a
/// command (`-c alias.p=push`, `-c core.pager=…`, `core.sshCommand`, `include.path`, …), or
/// may (`--config-env`, a computed word among them). `-c color.ui=never` does not.
pub(crate) fn git_configured(words: &[Word]) -> bool {
    let mut i = 1;
    while let Some(w) = words.get(i) {
        // A computed word may be `-c`; a computed value of `-C DIR`, or of
        // `--git-dir="$D"` and the like, is not.
        let Some(v) = w.value.as_deref() else {
            let raw = w.raw.trim_start_matches(['"', '\'']);
            if [
                "--git-dir=",
                "--work-tree=",
                "--namespace=",
                "--attr-source=",
            ]
            .iter()
            .any(|p| raw.starts_with(p))
            {
                i += 1;
                continue;
            }
            return true;
        };
        if !v.starts_with('-') || v == "--" {
            return false;
        }
        if names_long(v, "--config-env") {
            return true;
        }
        if v == "-c" {
            let Some(setting) = words.get(i + 1).and_then(|w| w.value.as_deref()) else {
                return true;
            };
            if runs_a_program(setting) {
                return true;
            }
        }
        i += if GIT_VALUE_OPTIONS.contains(&v) { 2 } else { 1 };
    }
    false
}

/// Whether a pager or editor setting runs nothing but a pager or nothing at all (`cat`,
/// `less`, `more`, `true`, `:`, empty).
pub(crate) fn harmless_program(value: &str) -> bool {
    matches!(
        value.trim().trim_matches(['"', '\'']),
        "cat" | "less" | "more" | "true" | ":" | ""
    )
}

/// Whether a git `key=value` setting may run a program or define a command: an alias, a
/// hook, a filter, a driver, a pager or an editor (not `cat`, `less`, `more`, `true` or
/// `:`), a URL rewrite or a protocol that may run one. `color.ui=never` and the like do not.
pub(crate) fn runs_a_program(setting: &str) -> bool {
    let (key, value) = setting.split_once('=').unwrap_or((setting, ""));
    let key = key.to_ascii_lowercase();
    let parts: Vec<&str> = key.split('.').collect();
    let (Some(section), Some(name)) = (parts.first().copied(), parts.last().copied()) else {
        return true;
    };
    if parts.len() < 2 {
        return true;
    }
    let harmless_program = harmless_program(value);
    match section {
        "alias" | "include" | "includeif" | "pager" | "filter" | "credential" | "gpg" | "hook"
        | "trailer" | "protocol" | "url" | "sendemail" | "browser" | "web" | "man" => true,
        "core" => match name {
            "pager" | "editor" => !harmless_program,
            "sshcommand"
            | "fsmonitor"
            | "hookspath"
            | "askpass"
            | "gitproxy"
            | "alternaterefscommand" => true,
            _ => false,
        },
        "sequence" => name == "editor" && !harmless_program,
        "diff" => name == "external" || (parts.len() > 2 && matches!(name, "command" | "textconv")),
        "merge" => parts.len() > 2 && name == "driver",
        "difftool" | "mergetool" => matches!(name, "cmd" | "path"),
        "interactive" => name == "difffilter",
        "remote" => matches!(name, "receivepack" | "uploadpack" | "vcs"),
        "submodule" => name == "update",
        "uploadpack" => name == "packobjectshook",
        // The templates `git init` and `git clone` copy hooks from.
        "init" => name == "templatedir",
        // `git archive --format=tgz` pipes through `tar.<format>.command`.
        "tar" => parts.len() > 2 && name == "command",
        // Where git writes its traces: any file, `~/.bashrc` included.
        "trace2" => true,
        _ => false,
    }
}

/// Whether git's global options (`-C DIR`, `--git-dir`, `--work-tree`, `-c`) may make it
/// work in a repository other than the one it finds from its directory.
pub fn git_repository_elsewhere(words: &[Word]) -> bool {
    git_globals(words).is_none_or(|(_, elsewhere, _)| elsewhere)
}

/// The revision and diff options (`git log`, `show`, `whatchanged`, `diff`, and `blame`
/// through them) that take a value, which may be the next word (`--grep /fix/`).
const GIT_REVISION_VALUE_OPTIONS: &[&str] = &[
    // Revision walking and commit filtering.
    "--max-count",
    "--skip",
    "--max-age",
    "--min-age",
    "--since",
    "--since-as-filter",
    "--after",
    "--before",
    "--until",
    "--author",
    "--committer",
    "--grep",
    "--grep-reflog",
    "--encoding",
    "--date",
    "--default",
    "--diff-merges",
    "--decorate-refs",
    "--decorate-refs-exclude",
    // `--format`/`--pretty` only take `=VALUE` (git refuses `--format VALUE`).
    "--format",
    // Diff output.
    "--output",
    "--stat-width",
    "--stat-name-width",
    "--stat-graph-width",
    "--stat-count",
    "--color-moved-ws",
    "--word-diff-regex",
    "--ws-error-highlight",
    "--diff-filter",
    "--find-object",
    "--skip-to",
    "--rotate-to",
    "--src-prefix",
    "--dst-prefix",
    "--line-prefix",
    "--inter-hunk-context",
    "--ignore-matching-lines",
    "--anchored",
    "--diff-algorithm",
    "--output-indicator-new",
    "--output-indicator-old",
    "--output-indicator-context",
];

/// Which options of a git subcommand (one whose operands are checked as paths) take a value
/// (git takes `--opt=VALUE` or `--opt VALUE`, `-XVALUE` or `-X VALUE` for these), and which
/// of them name a file it reads (or writes).
struct GitValueOptions {
    /// Short options taking a value, and those of them naming a file.
    shorts: &'static str,
    short_files: &'static str,
    /// Long options taking a value (besides [`GIT_REVISION_VALUE_OPTIONS`] for every
    /// subcommand but grep), and those naming a file.
    longs: &'static [&'static str],
    long_files: &'static [&'static str],
    /// Whether the revision and diff options are taken too.
    revision: bool,
}

fn git_value_options(sub: &str) -> GitValueOptions {
    match sub {
        // `-e PATTERN`, `-f FILE`, context and counts; `-O[PAGER]` and `--color[=WHEN]` only
        // take a value in the same word.
        "grep" => GitValueOptions {
            shorts: "efABCm",
            short_files: "f",
            longs: &[
                "--file",
                "--max-depth",
                "--threads",
                "--context",
                "--after-context",
                "--before-context",
                "--max-count",
            ],
            long_files: &["--file"],
            revision: false,
        },
        // `-L RANGE`, `-S REVS-FILE`; `-M[N]`, `-C[N]` only in the same word (`-n`, `-l`,
        // `-e` are flags of blame's own).
        "blame" | "annotate" => GitValueOptions {
            shorts: "LS",
            short_files: "S",
            longs: &["--contents", "--ignore-rev", "--ignore-revs-file"],
            long_files: &["--contents", "--ignore-revs-file"],
            revision: true,
        },
        // `-n N`, `-S STRING`, `-G REGEX`, `-O ORDERFILE`, `-l N`, `-I REGEX`, log's
        // `-L RANGE:FILE` (its file is a path in a revision); `-U[N]`, `-M[N]`, `-C[N]`,
        // `-B[N]`, `-X[PARAMS]` only in the same word.
        _ => GitValueOptions {
            shorts: "nSGOlIL",
            short_files: "O",
            longs: &[],
            long_files: &["--output", "--output-directory"],
            revision: true,
        },
    }
}

/// A git subcommand's arguments as git reads them.
#[derive(Default)]
struct GitArgs<'a> {
    /// Its options, with a value given in the same word (`-S/x`, `--grep=/x`).
    options: Vec<&'a str>,
    /// Its operands before `--` (revisions or paths), not `git grep`'s pattern.
    operands: Vec<&'a Word>,
    /// The words after `--`: paths.
    paths: Vec<&'a Word>,
    /// Whether `--` ends its operands (those before it are then revisions, never paths).
    dashdash: bool,
    /// The files that options' values name (`git grep -f FILE`, `git blame --contents F`,
    /// an unknown option's `--opt=/path`).
    files: Vec<Word>,
}

/// The arguments of git's subcommand `sub` ([`GitArgs`]): the values of its options are
/// neither options nor operands (`git log --grep /fix/ -S /usr`), and `git grep`'s first
/// operand is its pattern unless `-e`/`-f` gives one. A computed word stands for an operand.
fn git_args<'a>(sub: &str, args: &'a [Word]) -> GitArgs<'a> {
    let table = git_value_options(sub);
    let takes_value = |long: &str| {
        table.longs.contains(&long)
            || (table.revision && GIT_REVISION_VALUE_OPTIONS.contains(&long))
    };
    let as_path = option_value_path;
    // An option giving a pattern, in any spelling (an abbreviated `--fi`, a bundle `-ie`):
    // then the first operand is a revision or a path.
    let mut pattern = sub == "grep"
        && !args
            .iter()
            .filter_map(|w| w.value.as_deref())
            .take_while(|v| *v != "--")
            .any(|v| short_bundle_has(v, &['e', 'f']) || names_long(v, "--file"));
    let mut out = GitArgs::default();
    let mut options_done = false;
    let mut words = args.iter();
    while let Some(w) = words.next() {
        let Some(v) = w.value.as_deref() else {
            // Anything, the pattern included: what follows is checked as paths.
            pattern = false;
            out.operands.push(w);
            continue;
        };
        if v == "--" {
            out.dashdash = true;
            out.paths.extend(words.by_ref());
            break;
        }
        if !options_done && v == "--end-of-options" {
            options_done = true;
            continue;
        }
        if !options_done && v.starts_with('-') && v.len() > 1 {
            out.options.push(v);
            if let Some(long) = v.strip_prefix("--").map(|l| l.split_once('=')) {
                let (name, value) = match long {
                    Some((name, value)) => (&v[..name.len() + 2], Some(value)),
                    None => (v, None),
                };
                let file = table.long_files.contains(&name);
                match value {
                    None if file => out.files.extend(words.next().cloned()),
                    None if takes_value(name) => {
                        words.next();
                    }
                    Some(value)
                        if file || (!takes_value(name) && value.starts_with(['/', '~', '.'])) =>
                    {
                        out.files.push(as_path(value, w));
                    }
                    _ => {}
                }
                continue;
            }
            let shorts = ShortValues {
                required: table.shorts,
                optional: "",
                files: &[],
            };
            match short_value_in(v, &shorts) {
                Some((letter, value, _)) => {
                    let file = table.short_files.contains(letter);
                    match (value.is_empty(), file) {
                        (true, true) => out.files.extend(words.next().cloned()),
                        (true, false) => {
                            words.next();
                        }
                        (false, true) => out.files.push(as_path(value, w)),
                        (false, false) => {}
                    }
                }
                None => {
                    if let Some((_, value)) = v.split_once('=')
                        && value.starts_with(['/', '~', '.'])
                    {
                        out.files.push(as_path(value, w));
                    }
                }
            }
            continue;
        }
        // `git grep -e a --and ( -e b --or -e c )`: parentheses are options of its own.
        if sub == "grep" && !options_done && matches!(v, "(" | ")") {
            out.options.push(v);
            continue;
        }
        if pattern {
            pattern = false;
            continue;
        }
        out.operands.push(w);
    }
    out
}

/// The paths of a git command whose operands are checked as paths read ([`path_use`]): the
/// files its options' values name, its operands (revisions are checked too, and pass), and
/// the words after `--`; not the values of its options nor `git grep`'s pattern. Also
/// whether it has operands.
fn git_path_args(words: &[Word]) -> (Vec<Word>, bool) {
    let at = words
        .iter()
        .skip(1)
        .position(|w| {
            !w.value
                .as_deref()
                .is_some_and(|v| GIT_GLOBAL_OPTIONS.contains(&v))
        })
        .map_or(words.len(), |i| i + 1);
    let Some(sub) = words.get(at) else {
        return (Vec::new(), false);
    };
    let Some(name) = sub.value.as_deref() else {
        // Not known: every word is a path.
        return (words[at..].to_vec(), true);
    };
    let args = git_args(name, &words[at + 1..]);
    let operands = !args.operands.is_empty() || !args.paths.is_empty();
    let mut out = args.files;
    out.extend(args.operands.into_iter().cloned());
    out.extend(args.paths.into_iter().cloned());
    (out, operands)
}

/// What `words` (a `git` command) prints of files' contents ([`GitContent`]), or `None` when
/// it prints none (`git status`, `git log --oneline`) or only the files it names as
/// operands (`git blame F`, checked as paths read).
pub fn git_content(words: &[Word]) -> Option<GitContent> {
    let Some((i, elsewhere, configured)) = git_globals(words) else {
        return Some(GitContent::Unnamed);
    };
    let sub = words.get(i)?.value.as_deref()?;
    let rest = &words[i + 1..];
    let args = git_args(sub, rest);
    let options = || args.options.iter().copied();
    // `REV:PATH` names a blob (or a tree) by its path in a revision.
    let blob = args
        .operands
        .iter()
        .any(|w| w.value.as_deref().is_none_or(|v| v.contains(':')));
    // An abbreviated or full object id (`0123abcd`): a commit, or a blob.
    let object_id = args.operands.iter().any(|w| {
        w.value.as_deref().is_some_and(|v| {
            // What follows it (`^{}`, `^{blob}`, `~0`, `@{…}`) may still name the blob.
            let id = v.split(['^', '~', '@']).next().unwrap_or(v);
            (4..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_hexdigit())
        })
    });
    // Options that print a patch (in log's family), or a line range's (`-L 1,5:.env`).
    // Short options may be bundled (`-pw`, `-wL1,5:.env`).
    let line_range = options().any(|v| v.starts_with("-L") || short_bundle_has(v, &['L']));
    let patch = options().any(|v| {
        // `-m` and `--diff-merges` print merges' patches (since git 2.31).
        let merges = names_long(v, "--diff-merges")
            && !v
                .split_once('=')
                .is_some_and(|(_, how)| matches!(how, "off" | "none"));
        merges
            || matches!(
                v,
                "-p" | "-u" | "--cc" | "-c" | "--dd" | "-W" | "-m" | "--check"
            )
            || short_option_in(v, &['p', 'u', 'W'], "nSGOlILUMCBX")
            || v.starts_with("-U")
            || [
                "--patch",
                "--patch-with-stat",
                "--patch-with-raw",
                "--unified",
                "--word-diff",
                "--color-words",
                "--function-context",
                "--binary",
                "--full-diff",
                "--remerge-diff",
            ]
            .iter()
            .any(|l| names_long(v, l))
    });
    // `--full-diff`: the pathspecs choose the commits, not what of them is printed (`git
    // log -p --full-diff -- src/main.rs` prints every file those commits changed; `git
    // diff` ignores it).
    let full_diff = sub != "diff" && options().any(|v| names_long(v, "--full-diff"));
    let no_patch = options().any(|v| {
        matches!(
            v,
            "-s" | "--no-patch" | "--stat" | "--numstat" | "--shortstat" | "--raw"
        ) || v.starts_with("--stat=")
            || ["--name-only", "--name-status", "--summary", "--dirstat"]
                .iter()
                .any(|l| names_long(v, l))
    });
    let shows = match sub {
        // `git fast-export` prints every blob of what it exports, `git unpack-file` writes
        // a blob to a file of its own, `git merge-file --object-id` merges blobs.
        "grep" | "cat-file" | "fast-export" | "unpack-file" => return Some(GitContent::Unnamed),
        "merge-file" if options().any(|v| names_long(v, "--object-id")) => {
            return Some(GitContent::Unnamed);
        }
        // A patch of the work tree, the index or revisions: what changed in every file
        // the pathspecs (or none: all) select.
        "diff" => blob || elsewhere || patch || !no_patch,
        // A bare object id may name a blob, whose content is shown whatever the patch
        // options (`git show -s <blob>`).
        "show" => blob || object_id || line_range || patch || !no_patch,
        "log" | "whatchanged" | "reflog" => line_range || patch,
        // Patches only when asked (`-p`, `--cc`); names otherwise.
        "diff-tree" | "diff-index" | "diff-files" => blob || elsewhere || patch,
        // `stash list` takes log's options (`-p`), `stash show` diff's.
        "stash" => {
            matches!(
                rest.first().and_then(|w| w.value.as_deref()),
                Some("show" | "list")
            ) && patch
        }
        "blame" | "annotate" => return elsewhere.then_some(GitContent::Unnamed),
        "range-diff" | "format-patch" | "archive" | "bundle" => true,
        // An alias defined on the command line may be any of the above.
        _ => return configured.then_some(GitContent::Unnamed),
    };
    if !shows {
        return None;
    }
    // An object id beside a pathspec (`git show <id> -- src/main.rs`) may be a blob or a
    // tree, which `git show` prints whatever the pathspec says; so may any revision name
    // (a tag can point at a blob) that is not a commit by its syntax ([`commit_by_syntax`]),
    // and the options that show every ref (`--tags`, `--all`). `git log` never prints a blob.
    let mut operands = args.operands.clone();
    let mut paths = args.paths.clone();
    let mut shown_object = false;
    if sub == "show" {
        shown_object =
            object_id || options().any(|v| GIT_SHOW_REF_OPTIONS.iter().any(|l| names_long(v, l)));
        let (commits, names): (Vec<&Word>, Vec<&Word>) = operands
            .iter()
            .partition(|w| w.value.as_deref().is_some_and(commit_by_syntax));
        if !names.is_empty() {
            if args.dashdash {
                // Before `--`, every operand is a revision.
                shown_object = true;
            } else {
                // Without `--`, an operand that names an existing file is a path and any
                // other a revision: as a pathspec, it passes only as one plain file that
                // exists (a revision that names none asks).
                operands = commits;
                paths.extend(names);
            }
        }
    }
    if elsewhere
        || blob
        || line_range
        || full_diff
        || shown_object
        || !matches!(sub, "show" | "log" | "whatchanged" | "reflog" | "diff")
    {
        return Some(GitContent::Unnamed);
    }
    let operands = operands.into_iter().cloned().collect();
    let paths = paths.into_iter().cloned().collect();
    Some(if sub == "diff" {
        let trees = options().any(|v| {
            ["--cached", "--staged", "--merge-base"]
                .iter()
                .any(|l| names_long(v, l))
        });
        GitContent::Changes {
            operands,
            paths,
            trees,
        }
    } else {
        GitContent::Pathspecs { operands, paths }
    })
}

/// The options of `git show` that show the objects every ref of a kind points to (tags may
/// point to blobs).
const GIT_SHOW_REF_OPTIONS: &[&str] = &[
    "--all",
    "--tags",
    "--branches",
    "--remotes",
    "--glob",
    "--stdin",
    "--alternate-refs",
    "--reflog",
    "--indexed-objects",
];

/// Whether a revision is a commit by its syntax alone, never a blob or a tree, without
/// reading the repository's refs: `HEAD` or `@` (git never lets `HEAD` hold another
/// object), also with a reflog entry (`HEAD@{1}`, `@{1}`), or any name peeled to a commit
/// (`NAME~N`, `NAME^`, `NAME^N`, `NAME^{commit}`, `NAME^{/text}`, `@{-1}~0`). A plain name
/// (`main`, `v1.0`) is not, nor `@{-1}` (the previous branch by name) or `@{u}`: a tag of
/// any name (one beside a branch of that name outranks it) may point to a blob.
fn commit_by_syntax(rev: &str) -> bool {
    // Where the name ends: at its first suffix (`~`, `^`, `@{`).
    let end = rev
        .char_indices()
        .find(|&(i, c)| matches!(c, '~' | '^') || rev[i..].starts_with("@{"))
        .map_or(rev.len(), |(i, _)| i);
    let (name, mut rest) = rev.split_at(end);
    let head = matches!(name, "HEAD" | "@" | "");
    if name.is_empty() && !rest.starts_with("@{") {
        return false;
    }
    let mut commit = head;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("@{") {
            let Some(close) = after.find('}') else {
                return false;
            };
            // A reflog entry of `HEAD` or of the branch checked out (`@{1}`, `@{yesterday}`)
            // is a commit. The branch checked out before (`@{-1}`) is named as a ref, which a
            // tag of that name outranks, and an upstream (`@{u}`, `@{push}`) is a
            // remote-tracking ref, which may point to anything; so may another ref's entries.
            let at = &after[..close];
            let other_ref = at.starts_with('-')
                || ["u", "upstream", "push"]
                    .iter()
                    .any(|n| at.eq_ignore_ascii_case(n));
            commit = commit && head && !other_ref;
            rest = &after[close + 1..];
        } else if let Some(after) = rest.strip_prefix("^{") {
            let Some(close) = after.find('}') else {
                return false;
            };
            match &after[..close] {
                "commit" => commit = true,
                // `^{/text}`: the youngest commit whose message matches.
                t if t.starts_with('/') => commit = true,
                // `^{}`: the tag peeled to whatever it points to.
                "" => {}
                _ => commit = false,
            }
            rest = &after[close + 1..];
        } else if let Some(after) = rest.strip_prefix(['~', '^']) {
            // `~N`, `^N`: an ancestor, or the commit itself (`~0`, `^0`).
            let digits = after.bytes().take_while(u8::is_ascii_digit).count();
            commit = true;
            rest = &after[digits..];
        } else {
            return false;
        }
    }
    commit
}

fn git_read_only(args: &[&str]) -> bool {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match *a {
            a if GIT_GLOBAL_OPTIONS.contains(&a) => i += 1,
            _ => break,
        }
    }
    let Some(sub) = args.get(i) else { return false };
    let rest = &args[i + 1..];
    // Options that write a file, read one from outside the repository, or run a program
    // (`git grep -O<pager>`), in any spelling git accepts (abbreviated, bundled).
    if rest.iter().any(|a| {
        [
            "--output",
            "--no-index",
            "--ext-diff",
            "--exec",
            "--open-files-in-pager",
            "--upload-pack",
            "--config",
            "--contents",
        ]
        .iter()
        .any(|l| names_long(a, l))
            || a.starts_with("-O")
            || (*sub == "grep" && short_bundle_has(a, &['O']))
    }) {
        return false;
    }
    // Operands and options, not the values of options that take the next word (`--sort
    // -creatordate`, `--contains HEAD` in `git branch`/`git tag`: there an optional commit).
    let (positional, options) = {
        let mut count = 0;
        let mut options: Vec<&str> = Vec::new();
        let mut iter = rest.iter();
        while let Some(&a) = iter.next() {
            if a.starts_with('-') {
                options.push(a);
                if matches!(*sub, "branch" | "tag")
                    && matches!(
                        a,
                        "--sort"
                            | "--contains"
                            | "--no-contains"
                            | "--merged"
                            | "--no-merged"
                            | "--points-at"
                    )
                {
                    iter.next();
                }
            } else {
                count += 1;
            }
        }
        (count, options)
    };
    let only = |ok: &[&str]| {
        options
            .iter()
            .all(|a| ok.iter().any(|o| a == o || a.starts_with(&format!("{o}="))))
    };
    match *sub {
        "status" | "log" | "diff" | "show" | "blame" | "shortlog" | "describe" | "rev-parse"
        | "rev-list" | "ls-files" | "ls-tree" | "cat-file" | "grep" | "merge-base"
        | "count-objects" | "whatchanged" | "name-rev" | "for-each-ref" | "show-ref"
        | "check-ignore" | "var" | "version" | "cherry" | "diff-tree" | "diff-index"
        | "diff-files" => true,
        // Not `-w`/`--web` (a browser) or `-i`/`--info` (info, a program of its own).
        "help" => !rest.iter().any(|a| {
            matches!(*a, "-w" | "-i")
                || names_long(a, "--web")
                || names_long(a, "--info")
                || short_bundle_has(a, &['w', 'i'])
        }),
        "--version" | "--help" => rest.is_empty(),
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
        // `git config KEY` (one operand) gets it, as `--get` does; `git config list` and
        // `git config get KEY` (git 2.46's subcommands) too. Not `git config edit`, which
        // opens an editor.
        "config"
            if (matches!(
                (positional, rest.iter().find(|a| !a.starts_with('-'))),
                (1, Some(&k)) if k != "edit"
            ) || matches!(
                (positional, rest.iter().find(|a| !a.starts_with('-'))),
                (2, Some(&"get"))
            )) && only(&[
                "--global",
                "--local",
                "--system",
                "--show-origin",
                "--null",
                "-z",
            ]) =>
        {
            true
        }
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
        // `git reflog -5`, `git reflog show`; not `expire` or `delete`.
        "reflog" => positional == 0 || rest.iter().find(|a| !a.starts_with('-')) == Some(&"show"),
        "worktree" => rest.first() == Some(&"list"),
        _ => false,
    }
}

/// Commands acceptEdits mode allows inside the working directories (`sed` only with the
/// scripts [`accept_edits_allows`] accepts).
pub fn is_accept_edits_command(name: &str) -> bool {
    matches!(
        name,
        "mkdir" | "touch" | "rm" | "rmdir" | "mv" | "cp" | "sed"
    )
}

/// Whether acceptEdits mode may run `words` (wrappers stripped) once its paths are checked:
/// one of [`is_accept_edits_command`] with static arguments, and for `sed` only
/// substitutions without the `e`/`w` flags and `p`/`d` commands, with the options `-i` (no
/// backup suffix), `-n`, `-E`, `-r`, `-e` (a sed script can run commands, write and read
/// other files).
pub fn accept_edits_allows(words: &[Word]) -> bool {
    let Some(name) = words.first().and_then(|w| w.value.as_deref()).map(basename) else {
        return false;
    };
    let Some(args) = words[1..]
        .iter()
        .map(|w| w.value.as_deref())
        .collect::<Option<Vec<&str>>>()
    else {
        return false;
    };
    is_accept_edits_command(name) && (name != "sed" || sed::accept_edits_allows_sed(&args))
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

/// How many operands (files) `uniq ARGS` names: GNU getopt permutes, so an operand may
/// come anywhere; `-f N`, `-s N` and `-w N` take the next word as their value.
fn uniq_operands(args: &[&str]) -> usize {
    let mut count = 0;
    let mut iter = args.iter();
    let mut after_dashes = false;
    while let Some(&a) = iter.next() {
        if after_dashes || a == "-" || !a.starts_with('-') {
            count += 1;
        } else if a == "--" {
            after_dashes = true;
        } else if matches!(
            a,
            "-f" | "-s" | "-w" | "--skip-fields" | "--skip-chars" | "--check-chars"
        ) {
            iter.next();
        }
    }
    count
}

/// How many operands (files) `xxd ARGS` names: options come first, and the first word
/// that is none ends them (`xxd IN -x` names the output `-x`); `-c`, `-g`, `-l`, `-o`,
/// `-s`, `-n` and `-R` (and their long spellings) take the next word as their value when
/// it is not attached (`-l16`).
fn xxd_operands(args: &[&str]) -> usize {
    let mut iter = args.iter().enumerate();
    while let Some((i, &a)) = iter.next() {
        if a == "--" {
            return args.len() - i - 1;
        }
        if a == "-" || !a.starts_with('-') {
            return args.len() - i;
        }
        if XXD_VALUED.contains(&a) {
            iter.next();
        }
    }
    0
}

/// xxd's options that take the next word as their value (when it is not attached).
/// Exactly these: xxd reads any other word starting so as the option with its value
/// attached (`-color` is `-c olor`).
pub(crate) const XXD_VALUED: [&str; 13] = [
    "-c",
    "-g",
    "-l",
    "-o",
    "-s",
    "-n",
    "-R",
    "-cols",
    "-groupsize",
    "-len",
    "-seek",
    "-offset",
    "-name",
];

/// What a git command prints of git's configuration files ([`git_config_files`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitConfigRead {
    /// Values from these files: the repository's own as `.git/…` (the engine finds the
    /// repository), the user's under `~`, or as named (`--file F`). Those git reads when no
    /// scope is given are marked `true`: only one that exists is read.
    Files(Vec<(String, bool)>),
    /// Values from files that cannot be told (another repository through `-C` or
    /// `--git-dir`, `-c include.path=…`, `--blob`, `--includes`, an option not known here).
    Unknown(String),
}

/// The configuration files a git command prints values from (`git config --get`, `--list`,
/// `git config NAME`, `git var -l`, `git remote -v`, `get-url`, `show`, `git ls-remote
/// --get-url`): what a `cat` of them would show of a token in a remote's URL. `None` for
/// any other git command, and for `git config` setting a value.
pub fn git_config_files(words: &[Word]) -> Option<GitConfigRead> {
    let (i, elsewhere, configured) = git_globals(words)?;
    let sub = words.get(i)?.value.as_deref()?;
    if !matches!(sub, "config" | "var" | "remote" | "ls-remote") {
        return None;
    }
    let Some(rest) = words[i + 1..]
        .iter()
        .map(|w| w.value.as_deref())
        .collect::<Option<Vec<&str>>>()
    else {
        return Some(GitConfigRead::Unknown("a computed word".into()));
    };
    let defaults = || {
        GitConfigRead::Files(
            [
                "/etc/gitconfig",
                "~/.gitconfig",
                "~/.config/git/config",
                ".git/config",
            ]
            .iter()
            .map(|f| ((*f).to_owned(), true))
            .collect(),
        )
    };
    let reads = match sub {
        "var" => rest.contains(&"-l"),
        "remote" => {
            let positionals: Vec<&str> = rest
                .iter()
                .copied()
                .filter(|a| !a.starts_with('-'))
                .collect();
            rest.iter().any(|a| {
                *a == "--verbose" || (a.starts_with("-v") && a.bytes().skip(1).all(|b| b == b'v'))
            }) || matches!(positionals.first(), Some(&("get-url" | "show")))
        }
        "ls-remote" => rest.iter().any(|a| names_long(a, "--get-url")),
        _ => true,
    };
    if !reads {
        return None;
    }
    if elsewhere || configured {
        return Some(GitConfigRead::Unknown(
            "git reads another repository's configuration, or more of it (`-C`, `--git-dir`, `-c`)"
                .into(),
        ));
    }
    if sub != "config" {
        return Some(defaults());
    }
    // `git config`: what it reads, from where; an option not known here leaves it unknown.
    let mut files: Vec<(String, bool)> = Vec::new();
    let mut positionals = 0;
    let mut setting = false;
    let mut iter = rest.iter();
    while let Some(&a) = iter.next() {
        match a {
            "--global" => files.extend([
                ("~/.gitconfig".to_owned(), true),
                ("~/.config/git/config".to_owned(), true),
            ]),
            "--system" => files.push(("/etc/gitconfig".to_owned(), true)),
            "--local" => files.push((".git/config".to_owned(), true)),
            // Without `extensions.worktreeConfig`, git reads `.git/config` for it.
            "--worktree" => files.extend([
                (".git/config".to_owned(), true),
                (".git/config.worktree".to_owned(), true),
            ]),
            "-f" | "--file" => files.push(((*iter.next()?).to_owned(), false)),
            "--get" | "--get-all" | "--get-regexp" | "--list" | "-l" | "--null" | "-z"
            | "--name-only" | "--show-origin" | "--show-scope" | "--bool" | "--int" | "--path"
            | "--bool-or-int" | "--no-includes" => {}
            "--default" | "--type" => {
                iter.next();
            }
            "--unset" | "--unset-all" | "--add" | "--replace-all" | "--rename-section"
            | "--remove-section" | "--edit" | "-e" => setting = true,
            _ if a.starts_with("--file=") => {
                files.push((a["--file=".len()..].to_owned(), false));
            }
            _ if a.starts_with("--type=") || a.starts_with("--default=") => {}
            _ if a.starts_with('-') => {
                return Some(GitConfigRead::Unknown(format!(
                    "`git config {a}` reads configuration this check does not follow"
                )));
            }
            "set" | "unset" | "rename-section" | "remove-section" | "edit" if positionals == 0 => {
                setting = true;
                positionals += 1;
            }
            _ => positionals += 1,
        }
    }
    // `git config NAME VALUE` sets NAME; with `get`/`list` (git 2.46) or one name it reads.
    let first_is_verb = rest
        .iter()
        .find(|a| !a.starts_with('-'))
        .is_some_and(|v| matches!(*v, "get" | "list"));
    if setting
        || (positionals >= 2 && !first_is_verb && !rest.iter().any(|a| a.starts_with("--get")))
    {
        return None;
    }
    Some(if files.is_empty() {
        defaults()
    } else {
        GitConfigRead::Files(files)
    })
}

/// Whether `words` (a `git` command) writes what it prints to a file: `--output=F` (git
/// takes abbreviated long options) of any command that formats revisions or diffs, and
/// `format-patch -o DIR` / `--output-directory`.
fn git_writes_output(words: &[Word]) -> bool {
    let sub = git_subcommand(words);
    let options = || option_words(words);
    (sub.is_some_and(|s| s != "config") && options().any(|v| names_long(v, "--output")))
        || (sub == Some("format-patch")
            && options().any(|v| {
                v.starts_with("-o") && !v.starts_with("--") || names_long(v, "--output-directory")
            }))
}
