//! Splits a Bash command into simple commands with tree-sitter-bash.
//!
//! The walk is deliberately conservative: anything it does not understand makes the command
//! "complex", which means it is never auto-allowed (deny and ask rules still apply to every
//! simple command that could be found).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::ControlFlow;

use tree_sitter::{Node, Parser};

use super::commands::{MAX_WRAPPERS, effective_words, shell_command_start, wrapped_command_starts};
use super::options::{
    PARALLEL, XARGS, XE, command_starts, long_option_name, names_long, read_options,
    short_option_in, short_options, wrapper_script,
};

/// Above this many bytes (of UTF-8: as many characters for ASCII, fewer for other scripts)
/// a command is never auto-allowed.
pub const MAX_COMMAND_CHARS: usize = 10_000;
/// Above this many bytes a command is not analysed at all (the analysis is truncated): the
/// work stays bounded.
pub const MAX_ANALYZED_CHARS: usize = 100_000;
/// tree-sitter's error recovery takes quadratic time on some inputs (`$[$[$[...`): a parse
/// that takes longer is cancelled, and the analysis truncated.
const PARSE_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);
/// The directory after a `cd` to a directory that cannot be known (`cd $X`, `cd -`, `popd`):
/// relative paths there cannot be checked.
pub const UNKNOWN_DIR: &str = "\u{0}unknown directory";
/// How many directories a command may run in are followed before the directory counts as
/// unknown.
const MAX_DIRS: usize = 8;
/// How many simple commands (and, apart, how many redirections) the analysis of a command
/// over [`MAX_COMMAND_CHARS`] (never auto-allowed) lists at most: past that the walk stops and
/// the analysis is truncated, so that the work on a long command (here, and on each command's
/// rules and paths after) stays bounded. A shorter command has fewer than its length in
/// commands, all listed.
pub const MAX_LISTED_COMMANDS: usize = 1_000;
/// How many commands below the depth limit are listed at most ...
const MAX_SHALLOW_COMMANDS: usize = 1_000;
/// ... and how many bytes of each of their words are kept.
const MAX_SHALLOW_WORD: usize = 4_096;
/// How deep the syntax tree is walked.
const MAX_TREE_DEPTH: usize = 200;
/// How deep `bash -c` / `eval` payloads are followed.
const MAX_NESTING: usize = 4;
/// How many other readings of a wrapper's command line (options not understood) are
/// followed at most.
const MAX_READINGS: usize = 16;

/// One shell word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    /// The word as written (quotes included).
    pub raw: String,
    /// Its value after quote removal, when it is fully static (no expansion, substitution or
    /// brace expansion).
    pub value: Option<String>,
    /// Whether it is a plain unquoted, unescaped word.
    pub plain: bool,
    /// Whether it contains an unquoted glob character.
    pub glob: bool,
}

impl Word {
    /// For a plain word that looks like an assignment with a `~` right after its `=`
    /// (`NAME=~/x`, `NAME+=~`, `NAME[i]=~/x`), which bash expands (`cat a=~/x` reads
    /// `a=$HOME/x`, `dd of=~/x` writes `$HOME/x`): the text up to the `=` and what follows
    /// the `~`.
    pub fn assignment_tilde(&self) -> Option<(&str, &str)> {
        if self.value.as_deref() != Some(self.raw.as_str()) {
            return None;
        }
        let eq = self.raw.find('=')?;
        let (name, after) = (&self.raw[..eq], &self.raw[eq + 1..]);
        let name = name.strip_suffix('+').unwrap_or(name);
        let name = match name.find('[') {
            Some(i) if name.ends_with(']') => &name[..i],
            _ => name,
        };
        let is_name = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        let rest = after.strip_prefix('~')?;
        (is_name && (rest.is_empty() || rest.starts_with('/'))).then(|| (&self.raw[..=eq], rest))
    }

    /// The path the word names, for a path check: its value, but with a `~` bash does not
    /// expand made a name (`./~…`). Only `~` and `~/…` as written are the home directory:
    /// quoted or escaped, or with a quote before its `/` (`'~/x'`, `\~/x`, `~'/x'`), a `~` is
    /// a name. `None` for a computed word.
    pub fn path_value(&self) -> Option<std::borrow::Cow<'_, str>> {
        let v = self.value.as_deref()?;
        let home = self.raw == "~" || self.raw.starts_with("~/");
        Some(if v.starts_with('~') && !home {
            std::borrow::Cow::Owned(format!("./{v}"))
        } else {
            std::borrow::Cow::Borrowed(v)
        })
    }
}

/// A variable assignment before a command (`FOO=bar cmd`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// The variable name.
    pub name: String,
    /// As written.
    pub raw: String,
    /// Whether the value is plain and made of safe characters only.
    pub safe_value: bool,
}

/// The kind of a redirection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// Reads a file (`<`).
    Read,
    /// Writes a file (`>`, `>>`, `&>`, `>|`, `<>`).
    Write,
    /// Duplicates or closes a file descriptor (`2>&1`, `>&-`): no file involved.
    FdDup,
}

/// One redirection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// Read, write or fd dup.
    pub kind: RedirectKind,
    /// The target.
    pub target: Word,
    /// The directory relative targets resolve against (after a `cd`), as written.
    pub cwd: Option<String>,
    /// Other directories it may run in (an earlier `cd` may have failed): relative targets
    /// are checked against every one.
    pub other_cwds: Vec<Option<String>>,
    /// It empties its target before writing (`>`, `>|`, `&>`; not `>>` nor `<>`).
    pub truncates: bool,
    /// What the statement it is in is fed, as [`SimpleCommand::fed_by`] says for a command
    /// (`for f in $(find …); do : > "$f"; done`).
    pub fed_by: Option<Vec<Word>>,
    /// The placeholder find or xargs fill in the script it is in
    /// ([`SimpleCommand::placeholder`]: `-exec sh -c ': > {}' \;`).
    pub placeholder: Option<String>,
}

/// A simple command: assignments, words (name first), as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Leading assignments.
    pub assignments: Vec<Assignment>,
    /// The command name and its arguments.
    pub words: Vec<Word>,
    /// Arguments are appended at run time (`xargs CMD`): exact rules cannot match.
    pub appended_args: bool,
    /// With [`appended_args`](Self::appended_args): they are put in place of a placeholder
    /// (`find -exec CMD {} ;`, `xargs -I R CMD R`), not after the words, which keep their
    /// meaning (a destination stays the destination).
    pub filled_in_place: bool,
    /// The directory this command runs in after an earlier `cd`, as written ([`UNKNOWN_DIR`]
    /// when it cannot be known).
    pub cwd: Option<String>,
    /// Other directories it may run in (an earlier `cd` may have failed): relative paths are
    /// checked against every one.
    pub other_cwds: Vec<Option<String>>,
    /// A wrapper whose payload was analysed as commands of its own (`bash -c`, `eval`,
    /// `xargs`): deny and ask rules see it, allow decisions look at the payload only.
    pub transparent: bool,
    /// Its standard input is the output of an earlier stage of a pipeline (`cmd | rg x`):
    /// a command that reads either its input or the working directory reads the input.
    pub piped_input: bool,
    /// The words of the simple command of the pipeline stage before this command's, when
    /// that stage is one simple command (`find . -name x | xargs rm`: `find . -name x` for
    /// `xargs` and for the `rm` it runs): what its input is made of. Likewise the command
    /// whose output its operands that are one substitution each are (`rm $(find …)`), the
    /// substitution a `for` loop around it goes over (`for f in $(find …)`), the process
    /// substitution or here-string of one its statement reads (`done < <(find …)`, `<<<
    /// "$(find …)"`), and the find whose `-exec` runs the shell script it is in (`-exec sh -c
    /// 'rm "$1"' _ {} \;`, that action made `-print`).
    pub fed_by: Option<Vec<Word>>,
    /// The commands whose output its other operands that are one substitution each are,
    /// after the one [`fed_by`](Self::fed_by) names (`rm $(find . -name '*.pyc') $(find .
    /// -name main)`), and those of a `for` list's other substitutions (`for f in $(find A)
    /// $(find B)`).
    pub also_fed_by: Vec<Vec<Word>>,
    /// The placeholder that find or xargs replace with what they give it, in its own words
    /// when they run it ([`filled_in_place`](Self::filled_in_place): `X` in `xargs -I X rm
    /// X`, `{` for parallel's replacement strings), or in the text of the shell script this
    /// command is in (`{}` in `-exec sh -c 'rm {}' \;`, `%` in `xargs -I% sh -c 'rm %'`): a
    /// word holding it is what it is fed.
    pub placeholder: Option<String>,
    /// Run by `xargs`, `parallel` or `xe` (directly or behind wrappers): its appended
    /// arguments are what it reads, from its standard input or a file (`-a`), or is given
    /// after `:::`, not what `find -exec` found.
    pub run_by_xargs: bool,
    /// The variables of the `for` loops over plain words whose bodies it is in (`for d in
    /// build dist; do rm -rf "$d"; done`): set to one of their words where it runs. Any
    /// other variable the line sets may be unset where a command runs (an assignment after
    /// it, in a branch or a subshell, a prefix that does not stay).
    pub set_by_loops: Vec<String>,
}

impl SimpleCommand {
    /// The words as written, joined by single spaces (redirections removed).
    pub fn raw_text(&self) -> String {
        join(self.words.iter().map(|w| w.raw.as_str()))
    }

    /// The command name's static value, if any.
    pub fn name(&self) -> Option<&str> {
        self.words.first().and_then(|w| w.value.as_deref())
    }

    /// The full text with its assignments.
    pub fn text_with_assignments(&self) -> String {
        join(
            self.assignments
                .iter()
                .map(|a| a.raw.as_str())
                .chain(self.words.iter().map(|w| w.raw.as_str())),
        )
    }
}

fn join<'a>(parts: impl Iterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for p in parts {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(p);
    }
    out
}

/// Whether an argument of `export`/`declare`/... may spell a variable name that is not
/// written out: quotes, escapes, expansions, braces or glob characters before its `=`
/// (`CD''PATH=x`, `CD{PATH,}=x`).
fn hides_a_name(word: &str) -> bool {
    let name = word.split_once('=').map_or(word, |(n, _)| n);
    name.contains(['\'', '"', '\\', '$', '`', '{', '[', '*', '?'])
}

/// The end of the reason a declaration (`export`, `declare`, `local`, ...) gives.
const CHANGES_VARIABLES: &str = "changes the shell's variables";

/// The result of analysing one Bash command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    /// Every simple command found, in order, including those inside substitutions, subshells,
    /// functions, `bash -c`/`eval` payloads, `find -exec` and `xargs`.
    pub commands: Vec<SimpleCommand>,
    /// Every redirection found.
    pub redirects: Vec<Redirect>,
    /// Why the command cannot be proven simple (empty when it can).
    pub complex: Vec<String>,
    /// Part of the command was nested too deeply to be analysed in full: commands may be
    /// missing (those found below the depth limit are listed without their context), so
    /// deny and ask rules cannot be sure to have seen everything.
    pub truncated: bool,
    /// The command mentions `CDPATH` (or `cdable_vars`): a `cd` to a bare relative name
    /// (`cd .ssh`) may go to a directory found through it (or named by a variable), so such a
    /// `cd` leads to an unknown directory. (The
    /// Bash tool clears `CDPATH` from the environment, so only the command can set it.)
    pub cdpath: bool,
    /// The command mentions `lastpipe`: the last stage of a pipeline may run in the shell
    /// itself, so a `cd` there holds (`shopt -s lastpipe; echo | cd src; cat x`).
    pub lastpipe: bool,
    /// The command may set `BASH_ENV`, `ENV` or `ZDOTDIR` (it names one other than as
    /// `$NAME`): a shell it starts may read a startup file, which runs commands.
    pub startup_env: bool,
    /// The command may set a variable whose name is not written out (`export CD''PATH=x`,
    /// `read`, `printf -v`, `mapfile`, `source`, `eval`): it is read again as if it
    /// mentioned `CDPATH`.
    pub hidden_assignment: bool,
    /// Some command it runs is computed: its name (`$X args`, `r{m,} x`) or its script
    /// (`eval "$y"`, `bash -c "$y"`, a shell reading its script from stdin). Deny and ask
    /// rules cannot be matched against what that runs.
    pub computed_command: bool,
    /// Why a command that parsed in full runs something computed: git configured to run a
    /// program, a program given in an option or a script (`tar --to-command`, `sed 'e …'`).
    pub computed_why: Vec<String>,
    /// Programs find/xargs/parallel/xe run whose subcommand their input supplies (`xargs
    /// git`, `xargs -I{} git {}`): a deny or ask rule for such a program (`Bash(git push:*)`)
    /// cannot be matched against what runs; a rule for another program can.
    pub subcommand_from_input: Vec<String>,
    /// Variables the command's own statements assign, in order (`X=1;`, `export X=1`,
    /// `declare -x X=1`): a later command's environment may hold them, as if they were
    /// written before it (`export GIT_PAGER=sh; git log`), wherever the statement was
    /// (a subshell's too: the list errs on the side of more).
    pub assigned: Vec<Assignment>,
    /// The command mentions `RIPGREP_CONFIG_PATH`: ripgrep may read a configuration that
    /// turns its filters off.
    pub rg_config: bool,
    /// The command mentions a `GIT_` variable (`GIT_DIR`, `GIT_WORK_TREE`): git may work in
    /// a repository other than the one it finds from its directory.
    pub git_env: bool,
    /// The command may set `HOME` (it names the variable other than as `$HOME`): `~` and a
    /// bare `cd` lead to a directory not known here, and a word starting with `~` is
    /// computed.
    pub home: bool,
    /// The command may set `PS4` (it names the variable other than as `$PS4`), whose
    /// expansion runs code when `set -x` traces.
    pub ps4: bool,
    /// What runs cannot all be seen, though the command was parsed: a name rebound by
    /// `hash -p`, an alias, a `PS4` expanded by `set -x`. Like [`truncated`](Self::truncated),
    /// deny and ask rules cannot be sure to have seen everything: the reasons why.
    pub incomplete: Vec<String>,
    /// How bash matches the command's globs, as far as its commands (nested ones too) say:
    /// one names `dotglob` or `GLOBIGNORE` (a glob matches hidden names), `nocaseglob`
    /// (regardless of case), `globstar` (`**` goes down directories). Found once per
    /// analysis ([`GlobOptions::of`]).
    pub glob_options: GlobOptions,
    /// Variables the line assigns nothing but plain words, with every value each may take
    /// there (`for d in build dist`, `X=build`): a removal through one is checked for each
    /// value, and for the variable unset unless the command is in the body of a loop over
    /// its words ([`SimpleCommand::set_by_loops`]). Found once per analysis
    /// (`values::plain_values`).
    pub values: BTreeMap<String, Vec<String>>,
    /// Variables the line gives a value holding a glob character, quoted or not
    /// (`X='secrets/*'`, `a=("*.pem")`, `for f in 'a*'`): an unquoted expansion of one is
    /// split and expanded by bash (`echo $X` lists `secrets`). Such a word is marked as a
    /// glob ([`Word::glob`]) at the end of the analysis, as is one expanding a variable whose
    /// [`values`](Self::values) hold a glob; what a command prints (`X=$(…)`, `read X`) is
    /// not followed.
    pub glob_vars: Vec<String>,
}

/// The shell options a command's globs are matched under, as far as its text says
/// ([`Analysis::glob_options`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GlobOptions {
    /// Some command names `dotglob` or `GLOBIGNORE`.
    pub dotglob: bool,
    /// Some command names `nocaseglob`.
    pub nocaseglob: bool,
    /// Some command names `globstar`.
    pub globstar: bool,
}

impl GlobOptions {
    /// The options `commands` name, in their words or assignments as written: one pass.
    pub fn of(commands: &[SimpleCommand]) -> Self {
        let mut found = Self::default();
        let texts = commands.iter().flat_map(|c| {
            c.assignments
                .iter()
                .map(|a| a.raw.as_str())
                .chain(c.words.iter().map(|w| w.raw.as_str()))
        });
        for text in texts {
            found.dotglob |= text.contains("dotglob") || text.contains("GLOBIGNORE");
            found.nocaseglob |= text.contains("nocaseglob");
            found.globstar |= text.contains("globstar");
        }
        found
    }
}

impl Analysis {
    /// Whether the command could be fully understood.
    pub fn is_simple(&self) -> bool {
        self.complex.is_empty()
    }

    /// Whether the whole command was parsed: no syntax error, nothing cut off or too long
    /// (it may still hold constructs [`is_simple`](Self::is_simple) refuses to vouch for).
    pub fn is_parsed(&self) -> bool {
        !self.truncated
            && !self.complex.iter().any(|why| {
                why == NOT_PARSED
                    || why == SYNTAX_ERROR
                    || why.starts_with(READ_WRITE_REDIRECT)
                    || why.starts_with(TOO_LONG)
                    || why == HAS_NUL
            })
    }
}

/// The [`Analysis::complex`] reason for words after a redirection written before the
/// command name (`0<f git push`, `{fd}>&- git push`): bash runs those words.
pub const REDIRECT_BEFORE_NAME: &str = "words after a redirection before the command name";

/// [`Analysis::complex`] reasons that mean the command was not parsed in full.
const NOT_PARSED: &str = "the command could not be parsed";
const SYNTAX_ERROR: &str = "the command has a syntax error";
/// How the reason starts for a `<>` redirection, valid bash that tree-sitter-bash reads as
/// an error around its `>` ([`read_write_errors`]): still not parsed in full, but said for
/// what it is, a write.
const READ_WRITE_REDIRECT: &str = "a read-write redirection (`<>`)";

/// Whether `node` is the error tree-sitter-bash makes of the `>` of a `<>` redirection
/// (`cat <> x`, `3<>x`): an error node holding only `>`, right after the `<` of a
/// `file_redirect`.
fn read_write_operator(node: Node<'_>) -> bool {
    node.is_error()
        && node.child_count() == 1
        && node.child(0).is_some_and(|c| c.kind() == ">")
        && node.parent().is_some_and(|p| p.kind() == "file_redirect")
        && node
            .prev_sibling()
            .is_some_and(|p| p.kind() == "<" && p.end_byte() == node.start_byte())
}

/// The reason for the `<>` redirection whose error node is `node` ([`read_write_operator`]):
/// it opens its file for reading and writing, creating it.
fn read_write_reason(node: Node<'_>, src: &[u8]) -> String {
    let text = |n: Node<'_>| {
        String::from_utf8_lossy(src.get(n.byte_range()).unwrap_or_default()).into_owned()
    };
    let redirect = node.parent().map(text).unwrap_or_default();
    let target = node
        .parent()
        .and_then(|p| p.child_by_field_name("destination"))
        .map(text)
        .unwrap_or_default();
    format!(
        "{READ_WRITE_REDIRECT}: `{redirect}` opens {target} for reading and writing, creating it (a write of {target}), which the parser here does not read"
    )
}

/// When every error in the tree under `root` is the `>` of a `<>` redirection
/// ([`read_write_operator`]), the reasons to give for them; `None` when another error (or a
/// missing node) is there: a syntax error.
fn read_write_errors(root: Node<'_>, src: &[u8]) -> Option<Vec<String>> {
    let mut reasons = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if read_write_operator(node) {
            let why = read_write_reason(node, src);
            if !reasons.contains(&why) {
                reasons.push(why);
            }
            continue;
        }
        if node.is_error() || node.is_missing() {
            return None;
        }
        if node.has_error() {
            let mut cursor = node.walk();
            stack.extend(node.children(&mut cursor));
        }
    }
    Some(reasons)
}
const TOO_LONG: &str = "the command is longer than ";
const HAS_NUL: &str = "the command contains a NUL character";

/// How many commands and redirections the analysis of `len` bytes lists at most
/// ([`MAX_LISTED_COMMANDS`]).
fn listed_limit(len: usize) -> usize {
    if len > MAX_COMMAND_CHARS {
        MAX_LISTED_COMMANDS
    } else {
        usize::MAX
    }
}

/// How the reason of an analysis past [`MAX_LISTED_COMMANDS`] starts (in
/// [`Analysis::complex`]).
pub const TOO_MANY_COMMANDS: &str = "the command holds more than ";

/// Marks `out` as past [`MAX_LISTED_COMMANDS`]: truncated, with the reason said once.
fn too_many_commands(out: &mut Analysis) {
    out.truncated = true;
    let why = format!(
        "{TOO_MANY_COMMANDS}{MAX_LISTED_COMMANDS} simple commands or redirections: the rest were not analysed"
    );
    if !out.complex.contains(&why) {
        out.complex.push(why);
    }
}

/// Keeps at most `limit` commands and as many redirections in `out` ([`listed_limit`], after
/// a nested analysis or a second reading was added to it): past that it is truncated.
fn bound_listed(out: &mut Analysis, limit: usize) {
    if out.commands.len() > limit || out.redirects.len() > limit {
        out.commands.truncate(limit);
        out.redirects.truncate(limit);
        too_many_commands(out);
    }
}

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

fn with_parser<R>(f: impl FnOnce(&mut Parser) -> R) -> Option<R> {
    PARSER.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut parser = Parser::new();
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        slot.as_mut().map(f)
    })
}

/// Analyses a Bash command.
pub fn analyze(command: &str) -> Analysis {
    // A whitespace character a backslash escapes at the very end is an argument (`echo \ `),
    // which the parser reads only before a line end.
    let last = command.chars().next_back();
    if last.is_some_and(|c| c.is_whitespace() && c != '\n') {
        let before = &command[..command.len() - last.map_or(0, char::len_utf8)];
        if (before.len() - before.trim_end_matches('\\').len()) % 2 == 1 {
            return analyze(&format!("{command}\n"));
        }
    }
    let mut analysis = Analysis::default();
    if command.len() > MAX_COMMAND_CHARS {
        analysis
            .complex
            .push(format!("{TOO_LONG}{MAX_COMMAND_CHARS} bytes"));
    }
    if command.contains('\0') {
        analysis.complex.push(HAS_NUL.into());
    }
    if command.len() > MAX_ANALYZED_CHARS {
        analysis.truncated = true;
        return analysis;
    }
    analysis.cdpath = names_cd_search(command);
    analysis.lastpipe = command.contains("lastpipe");
    analysis.startup_env = names_startup_env(command);
    analysis.rg_config = command.contains("RIPGREP_CONFIG_PATH");
    analysis.git_env = command.contains("GIT_");
    analysis.home = names_variable(command, "HOME");
    analysis.ps4 = names_variable(command, "PS4");
    analyze_source(command, 0, 0, false, &mut analysis);
    // A variable set under a name not written out may be CDPATH or HOME: read again so.
    if analysis.hidden_assignment && !(analysis.cdpath && analysis.home) {
        let mut again = Analysis {
            cdpath: true,
            home: true,
            lastpipe: analysis.lastpipe,
            startup_env: analysis.startup_env,
            ps4: analysis.ps4,
            rg_config: analysis.rg_config,
            git_env: analysis.git_env,
            ..Analysis::default()
        };
        analyze_source(command, 0, 0, false, &mut again);
        traces_with_ps4(&mut again);
        again.glob_options = GlobOptions::of(&again.commands);
        mark_expanded_globs(&mut again);
        bound_listed(&mut again, listed_limit(command.len()));
        return again;
    }
    traces_with_ps4(&mut analysis);
    analysis.glob_options = GlobOptions::of(&analysis.commands);
    analysis.values = super::values::plain_values(command, &analysis);
    mark_expanded_globs(&mut analysis);
    bound_listed(&mut analysis, listed_limit(command.len()));
    analysis
}

/// Whether the command `words` prints only lines it reads from its standard input, as they
/// came, some of them or in another order (`sort`, `uniq`, `head -n 5`, `tail`, `tac`,
/// `shuf`, `cat`, `grep -v x`): no file operand, nothing that cuts or rewrites lines
/// (`grep -o`, `cut`, `sed`).
fn passes_lines_on(words: &[Word]) -> bool {
    let Some(program) = program_of(words) else {
        return false;
    };
    let grep = matches!(program, "grep" | "egrep" | "fgrep");
    if !grep
        && !matches!(
            program,
            "sort" | "uniq" | "head" | "tail" | "tac" | "shuf" | "cat"
        )
    {
        return false;
    }
    let mut operands = 0;
    let mut args = words[1..].iter();
    while let Some(w) = args.next() {
        let Some(v) = w.value.as_deref() else {
            return false;
        };
        if let Some(option) = v.strip_prefix('-').filter(|o| !o.is_empty()) {
            // grep's options that print parts of lines or read files or patterns from files.
            let cuts_or_reads = option.starts_with('-')
                && matches!(
                    option,
                    "-only-matching"
                        | "-recursive"
                        | "-dereference-recursive"
                        | "-file"
                        | "-regexp"
                )
                || !option.starts_with('-') && option.contains(['o', 'r', 'R', 'f', 'e']);
            // head's and tail's byte counts cut lines.
            let cuts_bytes = matches!(program, "head" | "tail")
                && (option.starts_with('c') || option.starts_with("-bytes"));
            if (grep && cuts_or_reads) || cuts_bytes {
                return false;
            }
            // A count or key its option takes (`head -n 5`, `sort -k 2`, `uniq -f 1`).
            let takes_value: &[&str] = match program {
                "head" | "tail" | "shuf" => &["n"],
                "sort" => &["k", "t", "o", "S", "T"],
                "uniq" => &["f", "s", "w"],
                _ => &["m", "A", "B", "C"],
            };
            if takes_value.contains(&option) {
                args.next();
            }
        } else if v != "-" {
            // (`-` is its standard input: `cat -` passes it on.)
            operands += 1;
        }
    }
    operands <= usize::from(grep)
}

/// Whether `command` names what makes a `cd` to a bare name go elsewhere: `CDPATH`, or
/// the `cdable_vars` option (`shopt -s cdable_vars; g=.git; cd g`).
fn names_cd_search(command: &str) -> bool {
    command.contains("CDPATH") || command.contains("cdable_vars")
}

/// `command` without the whitespace around it, except a whitespace character a backslash
/// escapes at its end: `echo \ ` (an argument that is one space) must not become `echo \`
/// (a backslash at the end of the input, which the parser takes for a syntax error).
///
/// A carriage return, vertical tab or form feed is kept: bash takes it for a word character
/// (`<<EOF<CR>` ends at a line `EOF<CR>`, which trimming would take away).
pub fn trim_command(command: &str) -> &str {
    let blank = |c: char| c.is_whitespace() && !matches!(c, '\r' | '\x0b' | '\x0c');
    let start = command.trim_start_matches(blank);
    let end = start.trim_end_matches(blank);
    let backslashes = end.len() - end.trim_end_matches('\\').len();
    if backslashes % 2 == 1
        && let Some(escaped) = start[end.len()..].chars().next()
    {
        return &start[..end.len() + escaped.len_utf8()];
    }
    end
}

/// Whether `text` names a variable that gives a shell a startup file (`BASH_ENV`, `ENV`,
/// zsh's `ZDOTDIR`) other than to read it ([`Analysis::startup_env`]).
fn names_startup_env(text: &str) -> bool {
    ["BASH_ENV", "ENV", "ZDOTDIR"]
        .iter()
        .any(|name| names_variable(text, name))
}

/// Whether `text` names the variable `name` other than to read it as `$name`: it may
/// assign it (`name=x`, `export name`, `read name`, `${name:=x}`).
fn names_variable(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        let read = before == Some('$') || (before == Some('{') && after == Some('}'));
        !read && !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// Marks the analysis incomplete when a command turns tracing on (`set -x`, `bash -x`)
/// and the command may set `PS4`: bash expands `PS4` before every command it traces, and
/// a substitution in it runs code no rule sees.
fn traces_with_ps4(a: &mut Analysis) {
    const WHY: &str = "`set -x` expands a `PS4` the command sets, which can run any command";
    if (a.ps4 || a.hidden_assignment)
        && a.commands.iter().any(enables_xtrace)
        && !a.incomplete.iter().any(|w| w == WHY)
    {
        a.incomplete.push(WHY.into());
        if !a.complex.iter().any(|w| w == WHY) {
            a.complex.push(WHY.into());
        }
    }
}

/// The words of `cmd` from the command its wrappers run (`nice set -x` is `set -x`).
pub(super) fn effective_part(cmd: &SimpleCommand) -> &[Word] {
    let mut words = &cmd.words[..];
    for _ in 0..MAX_WRAPPERS {
        match wrapped_command_starts(words) {
            Some((starts, _)) => words = &words[starts[0]..],
            None => break,
        }
    }
    words
}

/// The program `words` runs, by its base name (`/bin/rm` is `rm`); `None` when the first
/// word is computed or there is none.
fn program_of(words: &[Word]) -> Option<&str> {
    words.first().and_then(|w| w.value.as_deref()).map(basename)
}

/// The command substitution the word `node` is, alone or alone in double quotes (`$(cmd)`,
/// `` `cmd` ``, `"$(cmd)"`), or after a fixed `./` (`./$(cmd)`, `"./$(cmd)"`, `././$(cmd)`,
/// `./"$(cmd)"`), which names the same files. `src` is the text the tree was parsed from.
fn fed_substitution<'t>(node: Node<'t>, src: &[u8]) -> Option<Node<'t>> {
    if let Some(only) = only_substitution(node) {
        return Some(only);
    }
    let (substitution, end) = match node.kind() {
        "concatenation" => {
            let mut cursor = node.walk();
            let last = node.named_children(&mut cursor).last()?;
            (only_substitution(last)?, last.end_byte())
        }
        "string" => {
            let mut cursor = node.walk();
            let last = node.named_children(&mut cursor).last()?;
            (last.kind() == "command_substitution").then_some(())?;
            (last, last.end_byte() + 1)
        }
        _ => return None,
    };
    if end != node.end_byte() {
        return None;
    }
    let before = src.get(node.start_byte()..substitution.start_byte())?;
    let before = before.strip_prefix(b"\"").unwrap_or(before);
    let mut rest = before.strip_suffix(b"\"").unwrap_or(before);
    if rest.is_empty() {
        return None;
    }
    while let Some(after) = rest.strip_prefix(b"./") {
        rest = after;
    }
    rest.is_empty().then_some(substitution)
}

/// Whether `words` only print what they are given through variables (`printf '%s\n' "$@"`,
/// `echo "$f"`): what they print is what feeds those variables.
fn echoes_its_variables(words: &[Word]) -> bool {
    let variable = |w: &Word| {
        let text = w.raw.trim_matches('"');
        let name = text
            .strip_prefix("${")
            .and_then(|t| t.strip_suffix('}'))
            .or_else(|| text.strip_prefix('$'));
        w.value.is_none()
            && name.is_some_and(|n| {
                matches!(n, "@" | "*")
                    || (!n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
            })
    };
    let args: &[Word] = match program_of(words) {
        Some("printf") => match words.get(1) {
            // The format, a plain one that prints each as it is.
            Some(format) if format.value.as_deref().is_some_and(|f| !f.starts_with('-')) => {
                &words[2..]
            }
            _ => return false,
        },
        Some("echo") => {
            let options = words[1..]
                .iter()
                .take_while(|w| matches!(w.value.as_deref(), Some("-n" | "-e" | "-E")))
                .count();
            &words[1 + options..]
        }
        _ => return false,
    };
    !args.is_empty() && args.iter().all(variable)
}

/// Gives a command (or a redirection) fed by `fed` (and `also`) what `feeds` print: the
/// first is what feeds it, the others also do. One fed already keeps what feeds it, unless
/// that only prints what it is given through variables ([`echoes_its_variables`]: `printf
/// '%s\n' "$@" | xargs rm` in a script find runs, `echo "$f" | xargs rm` in a loop over
/// find's output): then what feeds those feeds it.
fn feed_one(fed: &mut Option<Vec<Word>>, also: &mut Vec<Vec<Word>>, feeds: &[Vec<Word>]) {
    let Some((first, others)) = feeds.split_first() else {
        return;
    };
    if fed.as_deref().is_none_or(echoes_its_variables) {
        *fed = Some(first.clone());
        also.extend(others.iter().cloned());
    }
}

/// Whether the statement `node` is one simple command, also with its output or errors
/// redirected (`find ~ 2>/dev/null`) or alone in a subshell (`(find …)`).
fn is_one_command(node: Node<'_>) -> bool {
    match node.kind() {
        "command" => true,
        "redirected_statement" => node.child_by_field_name("body").is_some_and(is_one_command),
        "subshell" => {
            let mut cursor = node.walk();
            let mut statements = node
                .named_children(&mut cursor)
                .filter(|c| c.kind() != "comment");
            statements.next().is_some_and(is_one_command) && statements.next().is_none()
        }
        _ => false,
    }
}

/// `words` from the program the wrappers before it run as it is (`command find`, `env
/// find`, `nice -n 5 find`, `sudo find`): their options, numbers and `NAME=value` words
/// skipped; the last word stays.
pub fn behind_wrappers(words: &[Word]) -> &[Word] {
    let mut words = words;
    while let [first, rest @ ..] = words
        && !rest.is_empty()
        && let Some(v) = first.value.as_deref()
    {
        let wrapper = matches!(
            basename(v),
            "sudo"
                | "doas"
                | "env"
                | "nice"
                | "nohup"
                | "command"
                | "busybox"
                | "timeout"
                | "stdbuf"
                | "ionice"
        );
        if !(wrapper || v.starts_with('-') || v.parse::<f64>().is_ok() || v.contains('=')) {
            break;
        }
        words = rest;
    }
    words
}

/// The command substitution the word `node` is, alone or alone in double quotes (`$(cmd)`,
/// `` `cmd` ``, `"$(cmd)"`).
fn only_substitution(node: Node<'_>) -> Option<Node<'_>> {
    match node.kind() {
        "command_substitution" => Some(node),
        "string" => {
            let mut cursor = node.walk();
            let mut parts = node.named_children(&mut cursor);
            let only = parts.next()?;
            (parts.next().is_none()
                && only.kind() == "command_substitution"
                && only.start_byte() == node.start_byte() + 1
                && only.end_byte() + 1 == node.end_byte())
            .then_some(only)
        }
        _ => None,
    }
}

/// The words of `find` (`find_words`) with the action that runs `exec` (the words of an
/// `-exec`, `-execdir`, `-ok` or `-okdir` up to its `;` or `+`) made `-print`: what find
/// hands a shell script it runs (`-exec sh -c 'rm "$1"' _ {} \;`) is what it would print
/// there. `None` when `exec` is no shell's script or is not found there.
fn handed_to_a_script(find_words: &[Word], exec: &[Word]) -> Option<Vec<Word>> {
    let found = Payloads::of(exec);
    if !matches!(found.main, Some(Inner::Script(_))) {
        return None;
    }
    let at = (1..find_words.len()).find(|&i| {
        find_words[i]
            .value
            .as_deref()
            .is_some_and(|v| matches!(v, "-exec" | "-execdir" | "-ok" | "-okdir"))
            && find_words.get(i + 1..i + 1 + exec.len()) == Some(exec)
    })?;
    let end = (at + 1 + exec.len() + 1).min(find_words.len());
    let mut words = find_words[..at].to_vec();
    words.push(Word {
        raw: "-print".into(),
        value: Some("-print".into()),
        plain: true,
        glob: false,
    });
    words.extend_from_slice(&find_words[end..]);
    Some(words)
}

/// Whether `cmd` may turn tracing on: `set -x`, `set -o xtrace`, `shopt -so xtrace`, a
/// shell run with `-x`, anything that names `xtrace` (`SHELLOPTS=xtrace`), or one of those
/// with a computed argument.
fn enables_xtrace(cmd: &SimpleCommand) -> bool {
    let words = effective_part(cmd);
    let name = program_of(words).unwrap_or_default();
    let args = words.get(1..).unwrap_or_default();
    let option_x = matches!(name, "set" | "shopt") || NESTED_SHELLS.contains(&name);
    cmd.assignments.iter().any(|a| a.raw.contains("xtrace"))
        || words.iter().any(|w| w.raw.contains("xtrace"))
        || (option_x
            && args.iter().any(|w| match w.value.as_deref() {
                None => true,
                Some(v) => super::options::short_bundle_has(v, &['x']),
            }))
}

/// Why what `cmd` makes later commands run cannot be seen: `hash -p` binds a name to any
/// program, an alias replaces a name with any text (bash expands aliases with
/// `expand_aliases`, `sh` always). `None` for anything else.
fn hides_what_runs(cmd: &SimpleCommand) -> Option<&'static str> {
    let words = effective_part(cmd);
    let name = program_of(words)?;
    let args = words.get(1..).unwrap_or_default();
    let any = |f: &dyn Fn(&str) -> bool| args.iter().any(|w| w.value.as_deref().is_none_or(f));
    match name {
        "hash" if any(&|v| super::options::short_bundle_has(v, &['p'])) => {
            Some("`hash -p` binds a command name to another program")
        }
        "alias" if any(&|v| v.contains('=')) => {
            Some("an alias makes a command name run other text")
        }
        "shopt" if any(&|v| v == "expand_aliases") => {
            Some("`expand_aliases` makes command names run the text of aliases")
        }
        _ if NESTED_SHELLS.contains(&name)
            && args
                .iter()
                .any(|w| w.value.as_deref() == Some("expand_aliases")) =>
        {
            Some("`expand_aliases` makes command names run the text of aliases")
        }
        _ => None,
    }
}

/// Why a command that assigns `BASH_CMDS` or `BASH_ALIASES` hides what runs.
const COMMAND_TABLES: &str =
    "`BASH_CMDS` or `BASH_ALIASES` binds a command name to another program or text";

/// Marks `out` incomplete: the command may assign `BASH_CMDS` (which binds a name to a
/// program like `hash -p`) or `BASH_ALIASES` (which defines an alias).
fn rebinds_command_names(out: &mut Analysis) {
    for list in [&mut out.incomplete, &mut out.complex] {
        if !list.iter().any(|w| w == COMMAND_TABLES) {
            list.push(COMMAND_TABLES.into());
        }
    }
}

/// Whether `text` names `BASH_CMDS` or `BASH_ALIASES` other than to read it as `$NAME`.
fn names_command_tables(text: &str) -> bool {
    names_variable(text, "BASH_CMDS") || names_variable(text, "BASH_ALIASES")
}

/// Whether an argument of a declaration (`declare`, `export`, `local`, ...) as written may
/// assign `BASH_CMDS` or `BASH_ALIASES` under a name not written out: one computed or
/// expanded (`"$n"`, `` `cmd` ``, `x{,}`, a glob), or one that spells them once its quotes
/// and escapes are removed (`BASH_""CMDS[ls]=x`).
fn declares_command_table(word: &str) -> bool {
    let name = word.split_once('=').map_or(word, |(n, _)| n);
    let name: String = name
        .chars()
        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
        .collect();
    name.contains(['$', '`', '{', '*', '?']) || names_command_tables(&name)
}

/// Whether `words` (a builtin that assigns variables it is given the names of, from its
/// name) may assign `BASH_CMDS` or `BASH_ALIASES` under a name not written out: `read`,
/// `mapfile` and `readarray` with a computed argument or one whose value spells them,
/// `printf -v` with such a name, a declaration by [`declares_command_table`] or with
/// `-n` (a name reference, through which a later assignment reaches any variable).
fn assigns_command_table(words: &[Word]) -> bool {
    let Some(name) = program_of(words) else {
        return false;
    };
    let args = words.get(1..).unwrap_or_default();
    let spells =
        |w: Option<&Word>| w.is_some_and(|w| w.value.as_deref().is_none_or(names_command_tables));
    match name {
        "read" | "mapfile" | "readarray" => args.iter().any(|w| spells(Some(w))),
        "printf" => args.iter().enumerate().any(|(i, w)| {
            let Some(v) = w.value.as_deref() else {
                return false;
            };
            if v == "--" || !v.starts_with('-') || !super::options::short_bundle_has(v, &['v']) {
                return false;
            }
            match v.split_once('v') {
                Some((_, rest)) if !rest.is_empty() => names_command_tables(rest),
                _ => spells(args.get(i + 1)),
            }
        }),
        "export" | "declare" | "typeset" | "local" | "readonly" => args.iter().any(|w| {
            declares_command_table(&w.raw)
                || w.value.as_deref().is_some_and(|v| {
                    v.starts_with('-') && super::options::short_bundle_has(v, &['n'])
                })
        }),
        _ => false,
    }
}

/// The text handed to tree-sitter: every non-ASCII character replaced by as many `a` bytes
/// as it has UTF-8 bytes, so byte offsets (and so node text taken from the original) are
/// unchanged. tree-sitter-bash 0.25.1's external scanner calls C `isdigit`/`isalpha` on the
/// lookahead code point, which is undefined behaviour (and crashed here) for code points above
/// 255; a non-ASCII character is an ordinary word character for bash, and `aa...` forms no
/// keyword, so the parse is the same. (A literal `$é` now reads as an expansion, which is
/// only more cautious.)
///
/// A carriage return, vertical tab or form feed is replaced by a `z` too. tree-sitter-bash
/// takes each for a blank, and a backslash before a carriage return and a line feed for a
/// line continuation (`\\\r?\n`); bash takes each for an ordinary word character, so that
/// `echo hi \<CR><LF>rm x` is `echo hi $'\r'` and then `rm x`, and `echo a<CR>#; rm x`
/// runs `rm x` (the `#` is inside a word, no comment). With a `z` the parser reads the words
/// and lines bash does (`z` is in no reserved word, no digit before a redirection). A
/// carriage return that ends a line (before its line feed, or the text's end) and no
/// backslash escapes is left a blank: there it splits nothing bash joins, and the parser
/// still reads the here-documents of lines ended by CR LF (`<<'EOF'<CR>`, whose delimiter a
/// `z` would make a syntax error to it).
fn parser_text(src: &str) -> std::borrow::Cow<'_, str> {
    let bash_word_byte = |c: char| matches!(c, '\r' | '\x0b' | '\x0c');
    if src.is_ascii() && !src.contains(bash_word_byte) {
        return std::borrow::Cow::Borrowed(src);
    }
    let bytes = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    for (i, c) in src.char_indices() {
        if c == '\r' && matches!(bytes.get(i + 1), None | Some(b'\n')) && {
            let backslashes = bytes[..i].iter().rev().take_while(|&&b| b == b'\\').count();
            backslashes % 2 == 0
        } {
            out.push(c);
        } else if bash_word_byte(c) {
            out.push('z');
        } else if c.is_ascii() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('a', c.len_utf8()));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The syntax tree of `src` (read as [`parser_text`]), or `None` when parsing failed or took
/// longer than [`PARSE_TIME_LIMIT`].
fn parse(src: &str) -> Option<tree_sitter::Tree> {
    let text = parser_text(src);
    let bytes = text.as_bytes();
    let deadline = std::time::Instant::now() + PARSE_TIME_LIMIT;
    let mut progress = |_: &tree_sitter::ParseState| {
        if std::time::Instant::now() > deadline {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    with_parser(|p| {
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
        let tree = p.parse_with_options(
            &mut |i, _| bytes.get(i..).unwrap_or_default(),
            None,
            Some(options),
        );
        if tree.is_none() {
            // A cancelled parse would resume on the next call.
            p.reset();
        }
        tree
    })
    .flatten()
}

/// The words of the simple command whose exit status is `command`'s (its last statement; of
/// a list, the last command; of a pipeline, the last stage), without its assignments and
/// redirections, as [`Word`]s (quotes removed where the value is static). `None` when the
/// command does not parse cleanly, or that command is not a simple one (a loop, a subshell,
/// a negation `! cmd`, ...). Bash uses it to tell `grep`'s "no match" exit 1 from a failure.
pub fn exit_status_command(command: &str) -> Option<Vec<Word>> {
    if command.len() > MAX_ANALYZED_CHARS {
        return None;
    }
    let tree = parse(command)?;
    let root = tree.root_node();
    if root.has_error() {
        return None;
    }
    fn last_named(node: Node<'_>) -> Option<Node<'_>> {
        let mut cursor = node.walk();
        node.named_children(&mut cursor)
            .filter(|n| n.kind() != "comment")
            .last()
    }
    let mut node = last_named(root)?;
    loop {
        node = match node.kind() {
            "list" | "pipeline" => last_named(node)?,
            "redirected_statement" => node.child_by_field_name("body")?,
            "command" => break,
            // `[ -f x ]` (and `[[ … ]]`) is a node of its own: its name is its bracket.
            "test_command" => {
                let text = node.utf8_text(command.as_bytes()).ok()?;
                let name = if text.starts_with("[[") { "[[" } else { "[" };
                return Some(vec![Word {
                    raw: name.to_owned(),
                    value: Some(name.to_owned()),
                    plain: true,
                    glob: false,
                }]);
            }
            _ => return None,
        };
    }
    let mut analysis = Analysis::default();
    let walker = Walker {
        src: command.as_bytes(),
        out: &mut analysis,
        depth: 0,
        nest: 0,
        dirs: vec![None],
        cd_failed: None,
        moved: false,
        bracket: false,
        shallow: 0,
        piped: false,
        last_stage_stdin: false,
        hidden: 0,
        fills: Vec::new(),
        xargs_runs: false,
        loop_vars: Vec::new(),
        pipeline_output: None,
        extra_for: None,
        substituted: None,
    };
    let mut cursor = node.walk();
    let words = node
        .named_children(&mut cursor)
        .filter_map(|child| match child.kind() {
            "command_name"
                if names_a_descriptor(child.named_child(0).unwrap_or(child), walker.src) =>
            {
                None
            }
            "command_name" => Some(walker.word(child.named_child(0).unwrap_or(child))),
            "file_redirect" | "herestring_redirect" | "heredoc_redirect" => {
                descriptor_word(child, walker.src).map(|d| walker.word(d))
            }
            "variable_assignment" => None,
            _ if names_a_descriptor(child, walker.src) => None,
            _ => Some(walker.word(child)),
        })
        .collect();
    Some(words)
}

/// Where a nested analysis left the shell's directory.
struct End {
    /// The directories it may be in, relative to where the analysis started (as written).
    dirs: Vec<Option<String>>,
    /// Whether a `cd` of the shell itself ran (outside subshells).
    moved: bool,
}

impl End {
    /// Where the shell may be after one of two readings of the same text.
    fn or(mut self, other: End) -> End {
        for d in other.dirs {
            if !self.dirs.contains(&d) {
                self.dirs.push(d);
            }
        }
        self.moved |= other.moved;
        self
    }
}

impl Analysis {
    /// An empty analysis for another reading of the text this one analyses: what the text
    /// may set (`CDPATH`, `HOME`, …) carried over.
    fn second_reading_context(&self) -> Analysis {
        Analysis {
            cdpath: self.cdpath,
            lastpipe: self.lastpipe,
            startup_env: self.startup_env,
            hidden_assignment: self.hidden_assignment,
            assigned: self.assigned.clone(),
            rg_config: self.rg_config,
            git_env: self.git_env,
            home: self.home,
            ps4: self.ps4,
            ..Analysis::default()
        }
    }
}

/// Analyses `src` (a payload `depth` levels down, inside `nest` levels of syntax tree); with
/// `bracket`, the command whose name starts at byte 0 is renamed `[` (see
/// [`Walker::bracket_test`]).
fn analyze_source(src: &str, depth: usize, nest: usize, bracket: bool, out: &mut Analysis) -> End {
    if names_command_tables(src) {
        rebinds_command_names(out);
    }
    let Some(tree) = parse(src) else {
        out.complex.push(NOT_PARSED.into());
        out.truncated = true;
        return End {
            dirs: vec![None],
            moved: false,
        };
    };
    let root = tree.root_node();
    // A here-document bash ends at another line than the parser does (`cat <<E"O"F` ends at
    // a line `EOF`, which the parser takes for body text; a body line `  EOF` ends it for
    // the parser only). The text changed so that the parser ends each where bash does (the
    // delimiter spelled plainly, body lines kept from ending it) is read too, so that deny
    // and ask rules see the commands after bash's end of the body.
    let (misread, edits, early) = misread_heredocs(root, src.as_bytes());
    if early && depth < MAX_NESTING {
        // The parser ends one earlier than bash: it reads body lines as commands too, more
        // than bash runs, but what follows may not be bash's reading. The text changed is
        // bash's reading; this one adds its commands and redirections for deny rules and
        // path checks, not its verdicts on lines bash does not run as commands.
        for why in misread {
            for list in [&mut out.incomplete, &mut out.complex] {
                if !list.contains(&why) {
                    list.push(why.clone());
                }
            }
        }
        let text = apply_edits(src, edits);
        let mut again = out.second_reading_context();
        let bash_end = analyze_source(&text, depth + 1, nest, bracket, &mut again);
        absorb_second_reading(out, again, listed_limit(src.len()));
        let mut over = out.second_reading_context();
        let parser_end = analyze_tree(src, root, depth, nest, bracket, &mut over, None);
        out.commands.extend(over.commands);
        out.redirects.extend(over.redirects);
        bound_listed(out, listed_limit(src.len()));
        return bash_end.or(parser_end);
    }
    analyze_tree(src, root, depth, nest, bracket, out, Some((misread, edits)))
}

/// [`analyze_source`] on the parse `root` of `src`; `heredocs`: the here-documents bash
/// ends elsewhere than the parser ([`misread_heredocs`]), `None` to leave them be.
fn analyze_tree(
    src: &str,
    root: Node<'_>,
    depth: usize,
    nest: usize,
    bracket: bool,
    out: &mut Analysis,
    heredocs: Option<(Vec<String>, Vec<Edit>)>,
) -> End {
    if root.has_error() {
        match read_write_errors(root, src.as_bytes()) {
            Some(reasons) => {
                for why in reasons {
                    if !out.complex.contains(&why) {
                        out.complex.push(why);
                    }
                }
            }
            None => out.complex.push(SYNTAX_ERROR.into()),
        }
    }
    if escaped_blank_starts_a_word(src.as_bytes(), root)
        && !out.complex.iter().any(|w| w == ESCAPED_BLANK_DROPPED)
    {
        out.complex.push(ESCAPED_BLANK_DROPPED.into());
    }
    // Bash deletes a backslash-newline (outside single quotes, comments and quoted
    // here-documents) before it splits words; tree-sitter-bash reads it as a blank. When one
    // joins two pieces (`tr\<newline>uncate`, `$\<newline>(cmd)`), the words bash runs differ
    // from the parse: complex, and the text as bash reads it is analysed too, so that deny
    // and ask rules see what runs.
    let continued = continuations(src.as_bytes(), &literal_ranges(root, src.as_bytes()));
    if let Some(joined) = continued {
        // Only ASCII bytes were taken out: still UTF-8.
        let joined = String::from_utf8_lossy(&joined).into_owned();
        if !out.complex.iter().any(|w| w == JOINED_BY_CONTINUATION) {
            out.complex.push(JOINED_BY_CONTINUATION.into());
        }
        if depth >= MAX_NESTING {
            if !out.complex.iter().any(|w| w == NESTED_TOO_DEEPLY) {
                out.complex.push(NESTED_TOO_DEEPLY.into());
            }
            out.truncated = true;
        } else {
            let mut again = Analysis {
                cdpath: out.cdpath || names_cd_search(&joined),
                lastpipe: out.lastpipe || joined.contains("lastpipe"),
                startup_env: out.startup_env || names_startup_env(&joined),
                rg_config: out.rg_config || joined.contains("RIPGREP_CONFIG_PATH"),
                git_env: out.git_env || joined.contains("GIT_"),
                home: out.home || names_variable(&joined, "HOME"),
                ps4: out.ps4 || names_variable(&joined, "PS4"),
                ..out.second_reading_context()
            };
            // Both readings start where this one does.
            analyze_source(&joined, depth + 1, nest, bracket, &mut again);
            absorb_second_reading(out, again, listed_limit(src.len()));
        }
    }
    // Where the parser ends a here-document later than bash, bash runs lines the parse
    // shows as body: what runs cannot all be seen, incomplete; the text changed so that the
    // parser ends it where bash does is read too.
    let mut reread = None;
    if let Some((misread, edits)) = heredocs {
        for why in misread {
            for list in [&mut out.incomplete, &mut out.complex] {
                if !list.contains(&why) {
                    list.push(why.clone());
                }
            }
        }
        if !edits.is_empty() {
            if depth >= MAX_NESTING {
                if !out.complex.iter().any(|w| w == NESTED_TOO_DEEPLY) {
                    out.complex.push(NESTED_TOO_DEEPLY.into());
                }
                out.truncated = true;
            } else {
                let text = apply_edits(src, edits);
                let mut again = out.second_reading_context();
                reread = Some(analyze_source(&text, depth + 1, nest, bracket, &mut again));
                absorb_second_reading(out, again, listed_limit(src.len()));
            }
        }
    }
    // `time`, `!` or `coproc` before a compound command (`time { rm x; }`, `! for …`):
    // tree-sitter-bash reads a command named `time` with `{` among its arguments, and a `}`
    // command after it, so the group's first command is never seen as itself. The text
    // without those words is analysed too (bash runs the group all the same).
    let prefixes = reserved_word_prefixes(root, src.as_bytes());
    if !prefixes.is_empty() {
        if !out.complex.iter().any(|w| w == PREFIXED_COMPOUND) {
            out.complex.push(PREFIXED_COMPOUND.into());
        }
        if depth >= MAX_NESTING {
            if !out.complex.iter().any(|w| w == NESTED_TOO_DEEPLY) {
                out.complex.push(NESTED_TOO_DEEPLY.into());
            }
            out.truncated = true;
        } else {
            let mut bytes = src.as_bytes().to_vec();
            for (start, end) in prefixes {
                bytes[start..end].fill(b' ');
            }
            // Only ASCII words were blanked: still UTF-8.
            let unprefixed = String::from_utf8_lossy(&bytes).into_owned();
            let mut again = out.second_reading_context();
            analyze_source(&unprefixed, depth + 1, nest, bracket, &mut again);
            absorb_second_reading(out, again, listed_limit(src.len()));
        }
    }
    let mut walker = Walker {
        src: src.as_bytes(),
        out,
        depth,
        nest,
        dirs: vec![None],
        cd_failed: None,
        moved: false,
        bracket,
        shallow: 0,
        piped: false,
        last_stage_stdin: false,
        hidden: 0,
        fills: Vec::new(),
        xargs_runs: false,
        loop_vars: Vec::new(),
        pipeline_output: None,
        extra_for: None,
        substituted: None,
    };
    walker.walk(root);
    let end = End {
        dirs: walker.dirs,
        moved: walker.moved,
    };
    match reread {
        Some(again) => end.or(again),
        None => end,
    }
}

struct Walker<'a> {
    src: &'a [u8],
    out: &'a mut Analysis,
    depth: usize,
    /// Current recursion depth of the tree walk (bounded so that deeply nested input cannot
    /// overflow the stack), nested analyses included.
    nest: usize,
    /// The directories the shell may be in after the `cd`s so far, as written (`None`: where
    /// it started); never empty.
    dirs: Vec<Option<String>>,
    /// Set by a `cd` of the shell: the directories if it fails.
    cd_failed: Option<Vec<Option<String>>>,
    /// Whether a `cd` of the shell itself was seen.
    moved: bool,
    /// How many commands below the depth limit were listed.
    shallow: usize,
    /// The source is a `[ ... ]` test with `[` replaced by a placeholder: the command whose
    /// name starts at byte 0 is `[`.
    bracket: bool,
    /// The commands walked now read the output of an earlier pipeline stage.
    piped: bool,
    /// The pipeline walked next has its standard input redirected: tree-sitter reads
    /// `a | b < f` as a redirection of the pipeline, bash gives it to its last stage.
    last_stage_stdin: bool,
    /// How many substitutions the parser did not show were analysed
    /// ([`Walker::hidden_substitutions`]).
    hidden: usize,
    /// The placeholders of the find/xargs whose command is being analysed (`None`: not
    /// known): their input takes their place in nested commands too (`xargs -I{} xargs {}`).
    fills: Vec<Option<String>>,
    /// The command whose payload is being analysed is `xargs`, `parallel` or `xe`
    /// ([`SimpleCommand::run_by_xargs`]).
    xargs_runs: bool,
    /// The variables of the `for` loops over plain words whose bodies are walked now
    /// ([`SimpleCommand::set_by_loops`]).
    loop_vars: Vec<String>,
    /// What the pipeline walked last prints, when that is known: the words of its last
    /// stage when it is one simple command, or of the stage before one that only passes
    /// lines on (`find . -name x | sort`: the find's).
    pipeline_output: Option<Vec<Word>>,
    /// The command or process substitution walked last (by node id) and the words of the
    /// one simple command whose output it is ([`Walker::substitution_output`]).
    substituted: Option<(usize, Vec<Word>)>,
    /// The last simple command of a redirected list, pipeline or `!` command (by node id)
    /// and that redirected statement's id: the words tree-sitter read as the redirection's
    /// extra targets are that command's arguments ([`Walker::outer_extra`]).
    extra_for: Option<(usize, usize)>,
}

const LINE_BREAK_IN_WORD: &str =
    "a line break inside a word: bash may run more commands than the parse shows";
const ESCAPED_BLANK_DROPPED: &str =
    "a backslash-escaped blank starts a word, which the parser leaves out (bash keeps it)";
const JOINED_BY_CONTINUATION: &str = "a backslash-newline joins two pieces of the command into one word, which the parser reads as two";
const NESTED_TOO_DEEPLY: &str = "shell commands nested too deeply";
const PREFIXED_COMPOUND: &str =
    "`time`, `!` or `coproc` before a compound command, which the parser misreads";
/// How many substitutions the parser did not show ([`Walker::hidden_substitutions`]) are
/// analysed at most in one source; past that the analysis is truncated.
const MAX_HIDDEN_SUBSTITUTIONS: usize = 32;

/// [`Analysis::complex`]: an arithmetic command (`((n++))`, `if ((x > 1))`).
const ARITHMETIC_COMMAND: &str = "unsupported shell syntax `((…))` (an arithmetic command)";

/// [`Analysis::complex`]: a `for ((…))` whose arithmetic reads a variable that is not one of
/// its own counters ([`Walker::c_style_for_head`]).
const C_STYLE_FOR_ARITHMETIC: &str = "the arithmetic of a `for ((…))` that refers to a variable other than the loop's own counters, or to a substitution, evaluates it as an expression, which can run a command";

/// The parts of the head of the compound command `node` that are no statements: a `for`'s
/// (or `select`'s) variable and list, a `for ((…))`'s expressions, a `case`'s word and an
/// item's patterns, a function's name ([`Walker::walk_part`]).
fn head_parts(node: Node<'_>) -> Vec<Node<'_>> {
    let fields: &[&str] = match node.kind() {
        "for_statement" => &["variable", "value"],
        "c_style_for_statement" => &["initializer", "condition", "update"],
        "case_statement" | "case_item" => &["value"],
        "function_definition" => &["name"],
        _ => return Vec::new(),
    };
    let mut cursor = node.walk();
    let mut parts = Vec::new();
    for field in fields {
        parts.extend(
            node.children_by_field_name(field, &mut cursor)
                .filter(|c| c.is_named()),
        );
    }
    parts
}

/// The names the arithmetic `node` assigns: an assignment's (`i=0`, `i += 2`, `i <<= 1`) and
/// an increment's or decrement's (`i++`, `--i`), each as the name it starts with (`a` for
/// `a[1]++`).
fn arithmetic_targets(node: Node<'_>, src: &[u8]) -> Vec<String> {
    let text = |n: Node<'_>| n.utf8_text(src).unwrap_or_default();
    let leading_name = |n: Node<'_>| -> Option<String> {
        let t = text(n);
        let end = t
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(t.len());
        let name = &t[..end];
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            .then(|| name.to_owned())
    };
    let mut names = Vec::new();
    let mut cursor = node.walk();
    'tree: loop {
        let n = cursor.node();
        match n.kind() {
            "variable_assignment" => {
                names.extend(n.child_by_field_name("name").and_then(leading_name));
            }
            "binary_expression" => {
                let assigns = n.child_by_field_name("operator").is_some_and(|op| {
                    let op = op.kind();
                    op.ends_with('=') && !matches!(op, "==" | "!=" | "<=" | ">=")
                });
                if assigns {
                    names.extend(n.child_by_field_name("left").and_then(leading_name));
                }
            }
            "postfix_expression" | "unary_expression" => {
                let mut c = n.walk();
                let steps = n.children(&mut c).any(|k| matches!(k.kind(), "++" | "--"));
                if steps {
                    let mut c = n.walk();
                    names.extend(n.named_children(&mut c).find_map(leading_name));
                }
            }
            _ => {}
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() || cursor.node() == node {
                break 'tree;
            }
        }
    }
    names
}

/// Whether `text` names the variable `name` other than where it is expanded (`$i`, `${i}`,
/// `${i:-x}`): a word `i` (`read i`, `i=x`, `a[i]`) may give it a value.
fn names_unexpanded(text: &str, name: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let expanded = text[..start].ends_with('$') || text[..start].ends_with("${");
            if &text[start..i] == name && !expanded {
                return true;
            }
        } else if b[i].is_ascii_digit() {
            // A number's digits and letters (`0x1f`, `16#ff`) name nothing.
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    false
}

/// The arithmetic `expr` with each of `names` (as a whole name, not inside a number) put as
/// `0`, for [`arithmetic_is_literal`].
fn with_names_as_zero(expr: &str, names: &[String]) -> String {
    let b = expr.as_bytes();
    let mut out = String::with_capacity(expr.len());
    let mut i = 0;
    while i < b.len() {
        let start = i;
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &expr[start..i];
            let expanded = expr[..start].ends_with('$');
            if !expanded && names.iter().any(|n| n == word) {
                out.push('0');
            } else {
                out.push_str(word);
            }
        } else if b[i].is_ascii_digit() {
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'#' | b'@' | b'_'))
            {
                i += 1;
            }
            out.push_str(&expr[start..i]);
        } else {
            let c = expr[start..].chars().next().unwrap_or_default();
            out.push(c);
            i += c.len_utf8().max(1);
        }
    }
    out
}

/// The node kinds [`Walker::walk_node`] handles.
const STATEMENTS: &[&str] = &[
    "program",
    "negated_command",
    "compound_statement",
    "do_group",
    "subshell",
    "pipeline",
    "list",
    "comment",
    "redirected_statement",
    "command",
    "test_command",
    "variable_assignment",
    "variable_assignments",
    "declaration_command",
    "unset_command",
    "function_definition",
    "if_statement",
    "while_statement",
    "for_statement",
    "c_style_for_statement",
    "case_statement",
    "case_item",
    "elif_clause",
    "else_clause",
    "file_redirect",
    "heredoc_redirect",
    "herestring_redirect",
];

const NESTED_SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "ash", "mksh", "fish"];

impl Walker<'_> {
    fn text(&self, node: Node<'_>) -> String {
        node.utf8_text(self.src)
            .map(str::to_owned)
            .unwrap_or_default()
    }

    fn complex(&mut self, why: impl Into<String>) {
        let why = why.into();
        if !self.out.complex.contains(&why) {
            self.out.complex.push(why);
        }
    }

    /// Walks the children of `node` in order; one run in the background (`cmd &`) runs in
    /// a subshell, so its `cd` does not move the shell.
    fn walk_children(&mut self, node: Node<'_>) {
        let heads = head_parts(node);
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            if child.next_sibling().is_some_and(|n| n.kind() == "&") {
                self.in_subshell(|w| w.walk_part(node, child, &heads));
            } else {
                self.walk_part(node, child, &heads);
            }
            // A `cd` may fail: what follows runs in either directory.
            if let Some(failed) = self.cd_failed.take() {
                self.dirs = union(&self.dirs, &failed);
            }
        }
    }

    /// Walks `child` of `node`: a statement, or one of the parts of `node`'s head, `heads`
    /// ([`head_parts`]). Those are no statements, nor syntax the walk does not know: the
    /// names in them (a `for`'s variable, a function's) expand nothing, and their words (a
    /// `for`'s list, a `case`'s word and patterns) and arithmetic (a `for ((…))`'s) are
    /// scanned for what they run, as a command's words are. One with a syntax error in it
    /// is walked as any other node.
    fn walk_part(&mut self, node: Node<'_>, child: Node<'_>, heads: &[Node<'_>]) {
        if !heads.contains(&child) || child.has_error() || child.is_missing() {
            self.walk(child);
            return;
        }
        match node.kind() {
            "function_definition" => {}
            "for_statement" if child.kind() == "variable_name" => {}
            _ => self.scan_word(child),
        }
    }

    /// Runs `f` in a subshell: the directory is restored after it.
    fn in_subshell(&mut self, f: impl FnOnce(&mut Self)) {
        let saved = self.dirs.clone();
        f(self);
        self.dirs = saved;
        self.cd_failed = None;
    }

    /// The glob words of a `for` (or `select`) list, which bash expands where the loop
    /// starts: recorded as a command of their own, named `for` and made of the list's glob
    /// words (`for f in secrets/* x` is `for secrets/*`), whose paths are the directories the
    /// globs list ([`super::commands::path_use`]), checked as reads. Its words that expand a
    /// parameter unquoted are among them: one that expands a glob is marked so at the end
    /// ([`Analysis::glob_vars`]).
    fn list_globs(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let globs: Vec<Word> = node
            .children_by_field_name("value", &mut cursor)
            .map(|value| self.word(value))
            .filter(|w| w.glob || !expanded_parameters(&w.raw, false).is_empty())
            .collect();
        let keyword = node
            .child(0)
            .map_or_else(|| "for".to_owned(), |k| self.text(k));
        self.record_globs(keyword, globs);
    }

    /// The elements of an array assignment that bash expands as globs (`a=(secrets/*)`,
    /// `a+=(*.pem)`, `declare -a a=(secrets/*)`, `local a=($X)`), where the assignment runs:
    /// recorded as a command of their own, named by the assignment up to its `(` (`a=(`), as
    /// a `for` list's are ([`Self::list_globs`]); an element that expands a parameter
    /// unquoted is among them, marked as a glob at the end when it expands one.
    fn array_globs(&mut self, node: Node<'_>) {
        let assignments: Vec<Node<'_>> = if node.kind() == "variable_assignment" {
            vec![node]
        } else {
            let mut cursor = node.walk();
            node.named_children(&mut cursor)
                .filter(|n| n.kind() == "variable_assignment")
                .collect()
        };
        for assignment in assignments {
            let Some(array) = assignment
                .child_by_field_name("value")
                .filter(|v| v.kind() == "array")
            else {
                continue;
            };
            let mut cursor = array.walk();
            let globs: Vec<Word> = array
                .named_children(&mut cursor)
                .filter(|e| e.kind() != "comment")
                .map(|element| self.word(element))
                .filter(|w| w.glob || !expanded_parameters(&w.raw, false).is_empty())
                .collect();
            let name = self
                .src
                .get(assignment.start_byte()..array.start_byte() + 1)
                .map_or_else(
                    || "(".to_owned(),
                    |b| String::from_utf8_lossy(b).into_owned(),
                );
            self.record_globs(name, globs);
        }
    }

    /// Records `globs`, words bash expands where the shell is now, as a command of their own
    /// named `keyword` ([`Self::list_globs`], [`Self::array_globs`]).
    fn record_globs(&mut self, keyword: String, globs: Vec<Word>) {
        if globs.is_empty() || self.full() {
            return;
        }
        let mut words = vec![Word {
            raw: keyword.clone(),
            value: Some(keyword),
            plain: true,
            glob: false,
        }];
        words.extend(globs);
        let (cwd, other_cwds) = self.dir_fields();
        self.out.commands.push(SimpleCommand {
            assignments: Vec::new(),
            words,
            appended_args: false,
            filled_in_place: false,
            cwd,
            other_cwds,
            transparent: false,
            piped_input: false,
            fed_by: None,
            also_fed_by: Vec::new(),
            placeholder: self.placeholder(),
            run_by_xargs: self.xargs_runs,
            set_by_loops: self.loop_vars.clone(),
        });
    }

    /// The directory fields of a command or redirection run now.
    fn dir_fields(&self) -> (Option<String>, Vec<Option<String>>) {
        let mut dirs = self.dirs.iter().cloned();
        (dirs.next().flatten(), dirs.collect())
    }

    /// Whether as many commands or redirections as are listed were found: the walk stops
    /// there, and the analysis is truncated.
    fn full(&mut self) -> bool {
        let limit = listed_limit(self.src.len());
        let full = self.out.commands.len() >= limit || self.out.redirects.len() >= limit;
        if full {
            too_many_commands(self.out);
        }
        full
    }

    fn walk(&mut self, node: Node<'_>) {
        if self.full() {
            return;
        }
        if self.nest >= MAX_TREE_DEPTH {
            self.too_deep(node);
            return;
        }
        self.nest += 1;
        self.walk_node(node);
        self.nest -= 1;
    }

    /// `node` is below the depth limit: the analysis is truncated, and the commands and
    /// redirections below it are listed without recursion (without directory tracking or the
    /// other checks), so that deny and ask rules still see them.
    fn too_deep(&mut self, node: Node<'_>) {
        self.complex("the command is nested too deeply");
        self.out.truncated = true;
        let mut cursor = node.walk();
        'tree: loop {
            let n = cursor.node();
            match n.kind() {
                "command" => self.shallow_command(n),
                "file_redirect" => self.record_redirect(n),
                _ => {}
            }
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() || cursor.node() == node {
                    break 'tree;
                }
            }
        }
    }

    /// A command found below the depth limit: its words (substitutions in them are found by
    /// the caller's traversal) and what it runs.
    fn shallow_command(&mut self, node: Node<'_>) {
        if self.shallow >= MAX_SHALLOW_COMMANDS {
            return;
        }
        self.shallow += 1;
        let word = |w: &Self, n: Node<'_>| {
            if n.byte_range().len() <= MAX_SHALLOW_WORD {
                return w.word(n);
            }
            let head = w.src.get(n.start_byte()..n.start_byte() + MAX_SHALLOW_WORD);
            Word {
                raw: String::from_utf8_lossy(head.unwrap_or_default()).into_owned(),
                value: None,
                plain: false,
                glob: false,
            }
        };
        let mut cursor = node.walk();
        let mut words = Vec::new();
        let mut assignments = Vec::new();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "variable_assignment" => assignments.push(Assignment {
                    name: String::new(),
                    raw: self.text(child),
                    safe_value: false,
                }),
                "command_name"
                    if names_a_descriptor(child.named_child(0).unwrap_or(child), self.src) =>
                {
                    self.complex(REDIRECT_BEFORE_NAME);
                }
                "command_name" => words.push(word(self, child.named_child(0).unwrap_or(child))),
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    words.extend(descriptor_word(child, self.src).map(|d| word(self, d)));
                }
                _ if names_a_descriptor(child, self.src) => {}
                _ => words.push(word(self, child)),
            }
        }
        if words.is_empty() {
            return;
        }
        self.expand(SimpleCommand {
            assignments,
            words,
            appended_args: false,
            filled_in_place: false,
            cwd: self.dir_fields().0,
            other_cwds: self.dir_fields().1,
            transparent: false,
            piped_input: self.piped,
            fed_by: None,
            also_fed_by: Vec::new(),
            placeholder: self.placeholder(),
            run_by_xargs: false,
            set_by_loops: self.loop_vars.clone(),
        });
    }

    fn walk_node(&mut self, node: Node<'_>) {
        if read_write_operator(node) {
            self.complex(read_write_reason(node, self.src));
            return;
        }
        if node.is_error() || node.is_missing() {
            self.complex(SYNTAX_ERROR);
            self.walk_unknown(node);
            return;
        }
        match node.kind() {
            // An arithmetic command (`((n++))`) is syntax the walk does not follow; what it
            // runs (substitutions) is still found.
            "compound_statement" if node.child(0).is_some_and(|c| c.kind() == "((") => {
                self.complex(ARITHMETIC_COMMAND);
                self.walk_unknown(node);
            }
            "program" | "compound_statement" | "do_group" => self.walk_children(node),
            "negated_command" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in children {
                    self.walk(child);
                }
                // `! cd x`: succeeds when the `cd` fails.
                if let Some(failed) = self.cd_failed.take() {
                    self.cd_failed = Some(std::mem::replace(&mut self.dirs, failed));
                }
            }
            "subshell" => self.in_subshell(|w| w.walk_children(node)),
            // Every stage of a pipeline runs in a subshell (the last one in the shell
            // itself with `lastpipe`).
            "pipeline" => {
                let mut cursor = node.walk();
                let stages: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                let outer = self.piped;
                let last_redirected = std::mem::take(&mut self.last_stage_stdin);
                let last = stages.len().saturating_sub(1);
                // The words of the stage before, when it was one simple command.
                let mut producer: Option<Vec<Word>> = None;
                for (i, stage) in stages.into_iter().enumerate() {
                    let start = self.out.commands.len();
                    let redirects = self.out.redirects.len();
                    self.piped = (outer || i > 0) && !(last_redirected && i == last);
                    if i == last && i > 0 && self.out.lastpipe {
                        // Whether the option is on when this runs is not known (the line may
                        // only mention it): the shell is where this stage leaves it, or
                        // where it was.
                        let before = self.dirs.clone();
                        self.walk(stage);
                        self.dirs = union(&before, &self.dirs);
                        self.cd_failed = None;
                    } else {
                        self.in_subshell(|w| w.walk(stage));
                    }
                    if let Some(words) = &producer {
                        self.feed(start, redirects, std::slice::from_ref(words));
                    }
                    let words = self.one_command_words(stage, start);
                    // A stage that prints some of the lines it reads, as they came (`sort`,
                    // `head`, `grep x`), passes on what the stage before it printed: `find
                    // . -name x | sort | xargs rm` removes what find finds (not one that reads
                    // a file instead: `sort < list`).
                    let reads_its_input = stage.kind() == "command";
                    producer = match words {
                        Some(w) if producer.is_some() && reads_its_input && passes_lines_on(&w) => {
                            producer
                        }
                        other => other,
                    };
                }
                self.piped = outer;
                self.pipeline_output = producer;
            }
            "list" => self.list(node),
            "comment" => {}
            "redirected_statement" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                // A redirection of standard input replaces what a pipe would have given.
                let outer_piped = self.piped;
                if self.redirects_stdin(&children) {
                    self.piped = false;
                    self.last_stage_stdin = true;
                }
                // tree-sitter reads the words after a redirection's target as more targets
                // (`cat 2>/dev/null .env`); bash passes them to the command.
                let extra: Vec<Node<'_>> = children
                    .iter()
                    .flat_map(|c| extra_destinations(*c, self.src))
                    .collect();
                // What a here-document's line goes on with (`cat <<EOF | sh`, `cd x <<EOF ||
                // cat .env`), which the parser puts inside the redirection: walked after the
                // statement, as the rest of the pipeline or list it starts.
                let continued: Vec<(HeredocGoesOn, Node<'_>)> = children
                    .iter()
                    .filter_map(|c| heredoc_goes_on(*c))
                    .collect();
                let before = self.dirs.clone();
                if !continued.is_empty() {
                    self.cd_failed = None;
                }
                // The commands of the statement redirected (not a pipeline's or a list's,
                // whose last item the redirection is), and the one simple command whose
                // output its standard input is (`done < <(find …)`, `<<< "$(find …)"`).
                let mut body: Option<(usize, usize)> = None;
                let mut fed: Option<Vec<Word>> = None;
                let redirects = self.out.redirects.len();
                for child in children {
                    let start = self.out.commands.len();
                    match child.kind() {
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                            self.redirect_with(child, continued.is_empty());
                            fed = self.stdin_substitution_output(child).or(fed);
                        }
                        "command" => {
                            let mut extra = extra.clone();
                            extra.extend(self.outer_extra(child));
                            self.command(child, &extra);
                            body = Some((start, self.out.commands.len()));
                        }
                        // bash gives the redirection, and the words after its target, to
                        // the last simple command of a list, pipeline or `!` command
                        // (`true && git >/dev/null push` runs `git push`).
                        kind @ ("pipeline" | "list" | "negated_command")
                            if !extra.is_empty() && last_simple_command(child).is_some() =>
                        {
                            // (Saved: this may be a list item before an outer one's last
                            // command, `(a && b >x y) && git >/dev/null push`.)
                            let outer = self.extra_for;
                            self.extra_for =
                                last_simple_command(child).map(|last| (last.id(), node.id()));
                            self.walk(child);
                            self.extra_for = outer;
                            if kind == "negated_command" {
                                body = Some((start, self.out.commands.len()));
                            }
                        }
                        kind => {
                            if !extra.is_empty() {
                                self.complex("words after a redirection of a compound command");
                                for e in &extra {
                                    self.scan_word(*e);
                                }
                            }
                            self.walk(child);
                            if !matches!(kind, "pipeline" | "list") {
                                body = Some((start, self.out.commands.len()));
                            }
                        }
                    }
                }
                // A loop reading what find prints (`while read f; do rm "$f"; done <
                // <(find …)`), or xargs (`xargs rm < <(find …)`), is fed by it as a
                // pipeline's stage is.
                if let (Some(words), Some((from, to))) = (fed, body) {
                    let to = to.min(self.out.commands.len());
                    for c in &mut self.out.commands[from.min(to)..to] {
                        feed_one(
                            &mut c.fed_by,
                            &mut c.also_fed_by,
                            std::slice::from_ref(&words),
                        );
                    }
                    let fed_redirects = self.out.redirects.len();
                    for r in &mut self.out.redirects[redirects.min(fed_redirects)..] {
                        feed_one(&mut r.fed_by, &mut Vec::new(), std::slice::from_ref(&words));
                    }
                }
                self.piped = outer_piped;
                self.last_stage_stdin = false;
                for (how, rest) in continued {
                    self.heredoc_line_goes_on(how, rest, &before);
                }
            }
            "command" => {
                let extra = self.outer_extra(node);
                self.command(node, &extra);
            }
            "test_command" => self.test_command(node),
            "variable_assignment" | "variable_assignments" => {
                self.complex("a variable assignment changes the shell for later commands");
                self.note_assigned(node);
                self.array_globs(node);
                self.scan(node);
            }
            "declaration_command" | "unset_command" => {
                let text = self.text(node);
                // Its arguments as the parser split them, an assignment by its name alone:
                // a value (`MSG="hello $USER"`) names no variable, whatever it holds.
                let mut cursor = node.walk();
                let args: Vec<String> = node
                    .named_children(&mut cursor)
                    .map(|arg| match arg.kind() {
                        "variable_assignment" => arg
                            .child_by_field_name("name")
                            .map_or_else(|| self.text(arg), |name| self.text(name)),
                        _ => self.text(arg),
                    })
                    .collect();
                // A name with quotes, escapes or expansions in it may spell any variable.
                if args.iter().any(|a| hides_a_name(a)) {
                    self.out.hidden_assignment = true;
                }
                // Among them `BASH_CMDS` and `BASH_ALIASES`, which rebind command names;
                // a name reference (`-n`) may reach them by a later assignment.
                if node.kind() == "declaration_command"
                    && args.iter().any(|a| {
                        declares_command_table(a)
                            || (a.starts_with('-') && super::options::short_bundle_has(a, &['n']))
                    })
                {
                    rebinds_command_names(self.out);
                }
                self.complex(format!("`{}` {CHANGES_VARIABLES}", first_word(&text)));
                if node.kind() == "declaration_command" {
                    self.note_assigned(node);
                    self.array_globs(node);
                }
                self.scan(node);
            }
            "function_definition" => {
                self.complex("a function definition can shadow commands");
                let name = node
                    .child_by_field_name("name")
                    .map(|n| self.text(n))
                    .unwrap_or_default();
                let moved = std::mem::replace(&mut self.moved, false);
                self.walk_children(node);
                // A function that changes directory, or replaces a command that does, moves
                // the shell wherever it is called: from here on the directory is not known.
                if self.moved
                    || matches!(
                        name.as_str(),
                        "cd" | "pushd" | "popd" | "builtin" | "command"
                    )
                {
                    self.dirs = vec![Some(UNKNOWN_DIR.to_owned())];
                    self.cd_failed = None;
                    self.moved = true;
                } else {
                    self.moved = moved;
                }
            }
            "if_statement"
            | "while_statement"
            | "for_statement"
            | "c_style_for_statement"
            | "case_statement"
            | "case_item"
            | "elif_clause"
            | "else_clause" => {
                self.complex("control flow (if/for/while/case) is not auto-allowed");
                // A `for NAME in …` (or `select`) assigns NAME what it lists, which may be
                // `/`, the home or a protected name, however plain the list looks (a link,
                // a word `IFS` splits): what is removed through it is asked about.
                let mut loop_var = None;
                if node.kind() == "for_statement"
                    && let Some(v) = node.child_by_field_name("variable")
                {
                    let name = self.text(v);
                    self.out.assigned.push(Assignment {
                        raw: format!("for {name}"),
                        name: name.clone(),
                        safe_value: false,
                    });
                    // A glob character in its list that bash does not expand there (quoted,
                    // escaped, in an expansion) is in what the variable holds.
                    let mut cursor = node.walk();
                    let holds_glob =
                        node.children_by_field_name("value", &mut cursor)
                            .any(|value| {
                                let raw = self.text(value);
                                holds_unexpanded_glob(&raw) || self.expands_a_glob_var(&raw, true)
                            });
                    if holds_glob {
                        self.note_glob_var(&name);
                    }
                    // In the body of a `for` (not `select`, whose variable is empty after
                    // an answer that is no choice) over plain words, its variable holds one.
                    let is_for = node.child(0).is_some_and(|k| self.text(k) == "for");
                    let mut cursor = node.walk();
                    let listed: Vec<Node<'_>> =
                        node.children_by_field_name("value", &mut cursor).collect();
                    let plain = !listed.is_empty()
                        && listed.iter().all(|w| {
                            w.kind() == "word" && super::values::plain_value(&self.text(*w))
                        });
                    if is_for && plain {
                        loop_var = Some(name);
                    }
                }
                // Bash expands a glob in the list (`for f in secrets/*`): it lists the
                // directory the glob names, as `ls` of it would ([`Self::list_globs`]).
                if node.kind() == "for_statement" {
                    self.list_globs(node);
                }
                if node.kind() == "c_style_for_statement" {
                    self.c_style_for_head(node);
                }
                if let Some(name) = &loop_var {
                    self.loop_vars.push(name.clone());
                }
                // A `for` over one substitution (`for f in $(find …)`) takes its variable's
                // words from what the substitution's command prints: the commands of its body
                // are fed by it, as those of a `while read` loop a pipeline feeds are.
                // Each substitution among its words feeds them (`for f in a $(find …)`,
                // `for f in $(find A) $(find B)`).
                let over_substitutions: Vec<(Node<'_>, Node<'_>)> = {
                    let mut cursor = node.walk();
                    let listed: Vec<Node<'_>> =
                        node.children_by_field_name("value", &mut cursor).collect();
                    listed
                        .into_iter()
                        .filter(|_| node.kind() == "for_statement")
                        .filter_map(|value| {
                            fed_substitution(value, self.src)
                                .map(|substitution| (value, substitution))
                        })
                        .collect()
                };
                if over_substitutions.is_empty() {
                    self.walk_children(node);
                } else {
                    let mut cursor = node.walk();
                    let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                    let heads = head_parts(node);
                    let mut feeds: Vec<Vec<Word>> = Vec::new();
                    let mut body = (self.out.commands.len(), self.out.redirects.len());
                    for child in children {
                        let start = self.out.commands.len();
                        self.pipeline_output = None;
                        self.walk_part(node, child, &heads);
                        if let Some((_, substitution)) =
                            over_substitutions.iter().find(|(value, _)| *value == child)
                        {
                            feeds.extend(self.substitution_output(*substitution, start));
                            body = (self.out.commands.len(), self.out.redirects.len());
                        }
                        if let Some(failed) = self.cd_failed.take() {
                            self.dirs = union(&self.dirs, &failed);
                        }
                    }
                    if !feeds.is_empty() {
                        self.feed(body.0, body.1, &feeds);
                    }
                }
                if loop_var.is_some() {
                    self.loop_vars.pop();
                }
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                self.redirect(node);
                for e in extra_destinations(node, self.src) {
                    self.complex("words after a redirection without a command");
                    self.scan_word(e);
                }
            }
            other => {
                self.complex(format!("unsupported shell syntax `{other}`"));
                self.walk_unknown(node);
            }
        }
    }

    /// Syntax the walk does not understand (or a syntax error): the statements inside are
    /// walked, substitutions too, arithmetic is checked; each node is visited once.
    fn walk_unknown(&mut self, node: Node<'_>) {
        self.arithmetic(node);
        self.hidden_code(node);
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            if STATEMENTS.contains(&child.kind()) || child.is_error() {
                self.walk(child);
            } else if matches!(
                child.kind(),
                "command_substitution" | "process_substitution"
            ) {
                self.scan_word(child);
            } else if self.nest >= MAX_TREE_DEPTH {
                self.too_deep(child);
            } else {
                self.nest += 1;
                self.walk_unknown(child);
                self.nest -= 1;
            }
        }
    }

    /// `a && b || c` is `(list (list a b) c)`: walked as one flat sequence, so that a long
    /// chain does not count as nesting. A `cd` may fail: after `&&` the next command runs in
    /// the new directory, after `||` in the old one, and what follows the list in either.
    fn list(&mut self, node: Node<'_>) {
        // A redirection of the whole list's input is the last item's (`a | b && c | d < f`).
        let last_redirected = std::mem::take(&mut self.last_stage_stdin);
        let start = self.dirs.clone();
        self.and_or(
            list_items(node),
            start.clone(),
            start,
            true,
            last_redirected,
        );
    }

    /// Walks the `items` of an and-or list in order (each with the operator before it:
    /// `Some(true)` for `&&`), from where the part before them left the shell if it
    /// succeeded (`succeeded`) and if it failed (`failed`); with `first`, the first item
    /// starts the list. `last_redirected`: the list's input is redirected, which is its last
    /// item's.
    fn and_or(
        &mut self,
        items: Vec<(Option<bool>, Node<'_>)>,
        mut succeeded: Vec<Option<String>>,
        mut failed: Vec<Option<String>>,
        first: bool,
        last_redirected: bool,
    ) {
        let last = items.len().saturating_sub(1);
        for (i, (op, item)) in items.into_iter().enumerate() {
            self.last_stage_stdin = last_redirected && i == last;
            self.dirs = match op {
                Some(false) => failed.clone(),
                _ => succeeded.clone(),
            };
            let before = self.dirs.clone();
            self.cd_failed = None;
            self.walk(item);
            let after = self.dirs.clone();
            let (ok, not_ok) = match self.cd_failed.take() {
                Some(f) => (after, f),
                None if after == before => (after.clone(), after),
                // Something else moved the shell (`eval cd`, a group): either way.
                None => {
                    let both = union(&before, &after);
                    (both.clone(), both)
                }
            };
            (succeeded, failed) = match op {
                _ if first && i == 0 => (ok, not_ok),
                Some(false) => (union(&ok, &succeeded), not_ok),
                _ => (ok, union(&not_ok, &failed)),
            };
        }
        self.dirs = union(&succeeded, &failed);
    }

    /// Looks for command and process substitutions anywhere below `node` and walks them (each
    /// in a subshell), and checks arithmetic contexts.
    fn scan(&mut self, node: Node<'_>) {
        if self.nest >= MAX_TREE_DEPTH {
            self.too_deep(node);
            return;
        }
        self.nest += 1;
        self.arithmetic(node);
        self.hidden_code(node);
        self.scan_node(node);
        self.nest -= 1;
    }

    /// Code bash runs that tree-sitter-bash does not show as a substitution. Some operands of
    /// `${…}` (the pattern of `${x#…}`, `${x,,…}`, `${x//…}`, a backticked default of
    /// `${x:-…}`) are leaf tokens, yet bash expands them, running the `$(…)`, `` `…` `` or
    /// `<(…)` they hold; and `${x@P}` expands a value as a prompt, which runs the
    /// substitutions in it.
    fn hidden_code(&mut self, node: Node<'_>) {
        const WHY: &str = "a substitution inside a `${…}` operand, or a `${x@P}` prompt expansion, runs code the parser does not see";
        let leaf = node.is_named()
            && node.child_count() == 0
            && !matches!(
                node.kind(),
                "raw_string"
                    | "ansi_c_string"
                    | "comment"
                    | "heredoc_body"
                    | "heredoc_content"
                    | "heredoc_start"
                    | "heredoc_end"
            );
        // Inside double quotes only `$(` and backticks substitute (`"a->(b)"` is text).
        let quoted = node.kind() == "string_content";
        // A single-quoted (or `$'…'`) operand of a `${…}` inside double quotes or an
        // unquoted here-document is no quoting to bash: `"${x:-'$(cmd)'}"` runs `cmd`.
        if matches!(node.kind(), "raw_string" | "ansi_c_string") && in_double_quoted_expansion(node)
        {
            let text = self.text(node);
            if has_unescaped_substitution(&text, false) {
                self.complex(WHY);
                self.hidden_substitutions(&text, false);
            }
        }
        if leaf {
            let text = self.text(node);
            if has_unescaped_substitution(&text, !quoted) {
                self.complex(WHY);
                self.hidden_substitutions(&text, !quoted);
            }
        }
        if node.kind() == "expansion" && self.text(node).trim_end_matches('}').ends_with("@P") {
            self.complex(WHY);
        }
    }

    /// The body of a here-document whose delimiter is not quoted: bash expands it as if it
    /// were in double quotes, running its `$(…)` and `` `…` `` (`\``, `\$` are literal,
    /// `\<newline>` is deleted). tree-sitter-bash shows no backtick there as a substitution,
    /// nor a `$(` after leading blanks or split by a backslash-newline: the text outside the
    /// substitutions and expansions it does show is searched for more.
    fn heredoc_body(&mut self, body: Node<'_>) {
        const WHY: &str =
            "a substitution in a here-document's body runs code the parser does not see";
        let (start, end) = (body.start_byte(), body.end_byte());
        let Some(text) = self.src.get(start..end) else {
            return;
        };
        let mut gaps = text.to_vec();
        let mut cursor = body.walk();
        for child in body.named_children(&mut cursor) {
            if matches!(
                child.kind(),
                "command_substitution"
                    | "process_substitution"
                    | "expansion"
                    | "simple_expansion"
                    | "arithmetic_expansion"
            ) {
                let from = child.start_byte().saturating_sub(start).min(gaps.len());
                let to = child.end_byte().saturating_sub(start).min(gaps.len());
                for b in &mut gaps[from..to] {
                    *b = b'_';
                }
            }
        }
        let gaps = String::from_utf8_lossy(&gaps).into_owned();
        if has_unescaped_substitution(&gaps, false) {
            self.complex(WHY);
            self.hidden_substitutions(&gaps, false);
        }
    }

    /// Analyses the substitutions bash runs in `text` (a token tree-sitter-bash shows as text:
    /// a `${…}` operand, a here-document's body, a string split by a backslash-newline), so
    /// that deny and ask rules see their commands: each is taken as far as the parser reads it
    /// when it starts the text. One that cannot be taken apart, or more than
    /// [`MAX_HIDDEN_SUBSTITUTIONS`], truncates the analysis.
    fn hidden_substitutions(&mut self, text: &str, process: bool) {
        let text = without_continuations(text);
        let mut from = 0;
        while let Some(at) = unescaped_substitution_at(&text, process, from) {
            if self.hidden >= MAX_HIDDEN_SUBSTITUTIONS {
                self.complex("too many substitutions the parser does not see");
                self.out.truncated = true;
                return;
            }
            self.hidden += 1;
            let probe = format!(": {}", &text[at..]);
            let found = parse(&probe).and_then(|tree| {
                let mut node = tree.root_node().descendant_for_byte_range(2, 3)?;
                loop {
                    if node.start_byte() != 2 {
                        return None;
                    }
                    if matches!(
                        node.kind(),
                        "command_substitution" | "process_substitution" | "arithmetic_expansion"
                    ) {
                        return Some(node.end_byte());
                    }
                    node = node.parent()?;
                }
            });
            let Some(end) = found.filter(|e| *e > 3) else {
                self.complex("a substitution the parser cannot take apart");
                self.out.truncated = true;
                return;
            };
            let Some(substitution) = probe.get(..end) else {
                self.out.truncated = true;
                return;
            };
            self.nested_script(substitution, false, false);
            from = at + end - 2;
        }
    }

    fn scan_node(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.scan_word(child);
        }
    }

    /// The head of a `for ((init; cond; update))`: arithmetic bash evaluates as the loop goes.
    /// The names it sets (`i=0`, `i++`, `i += 2`) are noted as assigned, their values not
    /// known. A name it reads is evaluated as an expression, which runs a command when the
    /// value holds a subscript with a substitution (`n='a[$(id)]'`): that is a reason to ask
    /// ([`C_STYLE_FOR_ARITHMETIC`]), as in any arithmetic context ([`Walker::arithmetic`]),
    /// unless the name is one of the loop's own counters: set to an integer by the
    /// initializer, and named elsewhere in the line only where it is expanded (`$i`,
    /// `${i}`), so that nothing else gives it a value.
    fn c_style_for_head(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let mut parts = Vec::new();
        let mut initializers = Vec::new();
        for field in ["initializer", "condition", "update"] {
            for part in node
                .children_by_field_name(field, &mut cursor)
                .filter(|c| c.is_named())
            {
                if field == "initializer" {
                    initializers.push(part);
                }
                parts.push(part);
            }
        }
        // The line outside the head's `((…))`, where something else could set a counter.
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let open = children.iter().find(|c| c.kind() == "((");
        let close = children.iter().find(|c| c.kind() == "))");
        let outside = match (open, close) {
            (Some(open), Some(close)) => {
                let before = self.src.get(..open.start_byte()).unwrap_or_default();
                let after = self.src.get(close.end_byte()..).unwrap_or_default();
                [before, after]
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .join("\n")
            }
            _ => String::from_utf8_lossy(self.src).into_owned(),
        };
        let counters: Vec<String> = initializers
            .iter()
            .filter(|p| p.kind() == "variable_assignment")
            .filter(|p| {
                p.child_by_field_name("value").is_some_and(|v| {
                    let value = self.text(v);
                    !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
                })
            })
            .filter_map(|p| p.child_by_field_name("name").map(|n| self.text(n)))
            .filter(|name| !names_unexpanded(&outside, name))
            .collect();
        for part in &parts {
            let raw = self.text(*part);
            for name in arithmetic_targets(*part, self.src) {
                self.out.assigned.push(Assignment {
                    name,
                    raw: raw.clone(),
                    safe_value: false,
                });
            }
        }
        if parts
            .iter()
            .any(|p| !arithmetic_is_literal(&with_names_as_zero(&self.text(*p), &counters)))
        {
            self.complex(C_STYLE_FOR_ARITHMETIC);
        }
    }

    /// Bash evaluates arithmetic (`$(( ))`, `$[ ]`, an indexed array's subscript, a substring's
    /// offset and length) recursively: a variable's value is an expression, and a subscript in
    /// it (`x='a[$(cmd)]'`) runs a command. Such a context that refers to a variable by name,
    /// or takes a substitution's output, is complex; integer literals, `$#`, `$?`, `${#x}` are
    /// fine. So is an indirect expansion `${!x}` (it looks up the name `x` holds).
    fn arithmetic(&mut self, node: Node<'_>) {
        const WHY: &str = "an arithmetic context (`$(( ))`, an array subscript, a substring offset, `${!x}`) that refers to a variable or a substitution evaluates it as an expression, which can run a command";
        let safe = match node.kind() {
            "arithmetic_expansion" => {
                let text = self.text(node);
                text.strip_prefix("$((")
                    .and_then(|t| t.strip_suffix("))"))
                    .or_else(|| text.strip_prefix("$[").and_then(|t| t.strip_suffix(']')))
                    .is_some_and(arithmetic_is_literal)
            }
            "subscript" => node
                .child_by_field_name("index")
                .map(|i| self.text(i))
                .is_some_and(|i| matches!(i.as_str(), "@" | "*") || arithmetic_is_literal(&i)),
            "expansion" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
                let kinds: Vec<&str> = children.iter().map(|c| c.kind()).collect();
                let indirect = kinds.get(1) == Some(&"!") && kinds.get(2) == Some(&"variable_name");
                // `${x:offset:length}`: everything after the first bare `:`.
                let substring = children
                    .iter()
                    .position(|c| !c.is_named() && c.kind() == ":")
                    .is_some_and(|at| {
                        children[at + 1..]
                            .iter()
                            .filter(|c| c.is_named())
                            .any(|c| !arithmetic_is_literal(&self.text(*c)))
                    });
                !indirect && !substring
            }
            _ => true,
        };
        if !safe {
            self.complex(WHY);
        }
    }

    fn redirect(&mut self, node: Node<'_>) {
        self.redirect_with(node, true);
    }

    /// [`Walker::redirect`]; without `goes_on`, what a here-document's line goes on with
    /// ([`heredoc_goes_on`]) is left to the caller.
    fn redirect_with(&mut self, node: Node<'_>, goes_on: bool) {
        match node.kind() {
            "heredoc_redirect" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                let quoted = children
                    .iter()
                    .find(|c| c.kind() == "heredoc_start")
                    .is_some_and(|s| quoted_delimiter(&self.text(*s)));
                // Words after the delimiter are the command's (its caller takes them).
                let arguments = extra_destinations(node, self.src);
                let rest = heredoc_goes_on(node).filter(|_| !goes_on).map(|(_, n)| n);
                for child in children {
                    if arguments.contains(&child) || rest == Some(child) {
                        continue;
                    }
                    match child.kind() {
                        "heredoc_body" if !quoted => {
                            self.heredoc_body(child);
                            self.scan(child);
                        }
                        "heredoc_body" | "heredoc_start" | "heredoc_end" | "file_descriptor" => {
                            self.scan(child)
                        }
                        // Its extra destinations are among `arguments`.
                        "file_redirect" | "herestring_redirect" => self.redirect(child),
                        _ => self.walk(child),
                    }
                }
            }
            "herestring_redirect" => self.scan(node),
            _ => {
                // Bash ends a redirection at a line break (a syntax error); tree-sitter reads
                // the next line's first word as its target.
                if has_line_break(&self.text(node)) {
                    self.complex(LINE_BREAK_IN_WORD);
                }
                let mut c = node.walk();
                if let Some(t) = node
                    .children_by_field_name("destination", &mut c)
                    .next()
                    .filter(|_| !closes_descriptor(node))
                {
                    self.scan_word(t);
                }
                self.record_redirect(node);
            }
        }
    }

    /// Walks what a here-document's line goes on with (`rest`, [`heredoc_goes_on`]) after
    /// the statement it ends, which started in `before`: a pipeline's later stages (the
    /// statement was its first stage, in a subshell: `cd x <<EOF | cat .env` reads `./.env`),
    /// or a list's next item (run where the statement left the shell if it succeeded, for
    /// `&&`, or failed, for `||`). Where the statement may have moved the shell (a list
    /// before the here-document: `cd x && cat <<EOF | y`) both directories count.
    fn heredoc_line_goes_on(
        &mut self,
        how: HeredocGoesOn,
        rest: Node<'_>,
        before: &[Option<String>],
    ) {
        let after = self.dirs.clone();
        let (ok, not_ok) = match self.cd_failed.take() {
            Some(failed) => (after, failed),
            None if after == before => (after.clone(), after),
            None => {
                let both = union(before, &after);
                (both.clone(), both)
            }
        };
        match how {
            HeredocGoesOn::Pipe => {
                // `| a | b && c`: the parser reads `(a | b) && c` as the pipeline's one stage;
                // bash runs `(… | a | b) && c`.
                let mut cursor = rest.walk();
                let mut stages: Vec<Node<'_>> = rest.named_children(&mut cursor).collect();
                let mut after_pipeline = Vec::new();
                if let [only] = stages[..]
                    && only.kind() == "list"
                {
                    let mut items = list_items(only);
                    if !items.is_empty() {
                        let (_, head) = items.remove(0);
                        after_pipeline = items;
                        stages = if head.kind() == "pipeline" {
                            let mut cursor = head.walk();
                            head.named_children(&mut cursor).collect()
                        } else {
                            vec![head]
                        };
                    }
                }
                let here = union(before, &union(&ok, &not_ok));
                self.dirs = here.clone();
                let outer = self.piped;
                self.piped = true;
                let last = stages.len().saturating_sub(1);
                for (i, stage) in stages.into_iter().enumerate() {
                    if i == last && self.out.lastpipe {
                        // The last stage may run in the shell itself (`lastpipe`).
                        self.walk(stage);
                        self.dirs = union(&here, &self.dirs);
                        self.cd_failed = None;
                    } else {
                        self.in_subshell(|w| w.walk(stage));
                    }
                }
                self.piped = outer;
                if !after_pipeline.is_empty() {
                    let now = self.dirs.clone();
                    self.and_or(after_pipeline, now.clone(), now, false, false);
                }
            }
            HeredocGoesOn::And | HeredocGoesOn::Or => {
                // `&& a || b`: the parser reads `a || b` as the list's next item; bash runs
                // `(… && a) || b`.
                let mut items = if rest.kind() == "list" {
                    list_items(rest)
                } else {
                    vec![(None, rest)]
                };
                if let Some(first) = items.first_mut() {
                    first.0 = Some(how == HeredocGoesOn::And);
                }
                self.and_or(items, ok, not_ok, false, false);
            }
        }
        self.cd_failed = None;
    }

    /// Records a file redirection (its target's substitutions are not walked here).
    fn record_redirect(&mut self, node: Node<'_>) {
        if self.full() {
            return;
        }
        let mut op = String::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            if !child.is_named() {
                op.push_str(child.kind());
            }
        }
        // (`<&-` and `>&-` take none: what the parser reads as one is the command's word.)
        let targets: Vec<Node<'_>> = if closes_descriptor(node) {
            Vec::new()
        } else {
            let mut c = node.walk();
            node.children_by_field_name("destination", &mut c).collect()
        };
        let target = match targets.first() {
            Some(t) => self.word(*t),
            None => Word {
                raw: String::new(),
                value: Some(String::new()),
                plain: true,
                glob: false,
            },
        };
        // The operator as written, up to the destination: tree-sitter-bash wraps the `<>`
        // of `1<>FILE` in an error node, leaving `<` among the tokens, yet bash opens FILE
        // for reading and writing (creating it).
        let head = {
            let end = targets.first().map_or(node.end_byte(), |t| t.start_byte());
            self.src
                .get(node.start_byte()..end)
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default()
        };
        let kind = match op.as_str() {
            "<" if head.contains('>') => RedirectKind::Write,
            "<" => RedirectKind::Read,
            // `>&2`, `>&-`, and `>&3-` (moves descriptor 3 there): no file.
            ">&" | "<&" | ">&-" | "<&-"
                if target.value.as_deref().is_some_and(|v| {
                    let digits = v.strip_suffix('-').unwrap_or(v);
                    v == "-" || (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
                }) =>
            {
                RedirectKind::FdDup
            }
            "<&" | "<&-" | ">&-" => RedirectKind::FdDup,
            _ => RedirectKind::Write,
        };
        let truncates = kind == RedirectKind::Write && matches!(op.as_str(), ">" | ">|" | "&>");
        self.out.redirects.push(Redirect {
            kind,
            target,
            cwd: self.dir_fields().0,
            other_cwds: self.dir_fields().1,
            truncates,
            fed_by: None,
            placeholder: self.placeholder(),
        });
    }

    fn scan_word(&mut self, node: Node<'_>) {
        match node.kind() {
            // A substitution runs in a subshell.
            "command_substitution" | "process_substitution" => {
                // In backticks, bash removes the backslash of `\``, `\$` and `\\` before
                // running the body: `` `echo \`cmd\`` `` runs `cmd`, which the parser reads
                // as a literal word.
                let text = self.text(node);
                if text.starts_with('`') && ["\\`", "\\$", "\\\\"].iter().any(|e| text.contains(e))
                {
                    self.complex("an escaped `, $ or \\ inside backticks is unescaped and run");
                    // The body as bash runs it, for deny and ask rules.
                    if let Some(body) = text.strip_prefix('`').and_then(|t| t.strip_suffix('`')) {
                        self.nested_script(&unescape_backticks(body), false, false);
                    }
                }
                let start = self.out.commands.len();
                self.pipeline_output = None;
                self.in_subshell(|w| w.walk_children(node));
                self.substituted = self
                    .substitution_output(node, start)
                    .map(|words| (node.id(), words));
            }
            _ => self.scan(node),
        }
    }

    /// The words of the statement `node` when it is one simple command, also with its
    /// output or errors redirected (`find ~ 2>/dev/null`), whose walk from command `start`
    /// on recorded that command alone: what it prints is that command's.
    fn one_command_words(&self, node: Node<'_>, start: usize) -> Option<Vec<Word>> {
        (is_one_command(node) && self.out.commands.len() == start + 1)
            .then(|| self.out.commands[start].words.clone())
    }

    /// Feeds the commands from `commands` on and the redirections from `redirects` on with
    /// what `feeds` print ([`SimpleCommand::fed_by`], [`SimpleCommand::also_fed_by`]):
    /// [`feed_one`].
    fn feed(&mut self, commands: usize, redirects: usize, feeds: &[Vec<Word>]) {
        for c in self.out.commands.iter_mut().skip(commands) {
            feed_one(&mut c.fed_by, &mut c.also_fed_by, feeds);
        }
        for r in self.out.redirects.iter_mut().skip(redirects) {
            feed_one(&mut r.fed_by, &mut Vec::new(), feeds);
        }
    }

    /// The placeholder of the find or xargs whose script is walked now, when known
    /// ([`SimpleCommand::placeholder`]).
    fn placeholder(&self) -> Option<String> {
        self.fills.last().cloned().flatten()
    }

    /// The words of the one simple command whose output the substitution `node` is
    /// (`$(find . -name x)`, `` `find …` ``, `<(find … | sort)`), its statements walked from
    /// command `start` on: its only statement, when that is one simple command, or a
    /// pipeline whose output is known ([`Walker::pipeline_output`]).
    fn substitution_output(&self, node: Node<'_>, start: usize) -> Option<Vec<Word>> {
        let mut cursor = node.walk();
        let mut statements = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "comment");
        let only = statements.next()?;
        if statements.next().is_some() {
            return None;
        }
        match only.kind() {
            "pipeline" => self.pipeline_output.clone(),
            _ => self.one_command_words(only, start),
        }
    }

    /// The words of the one simple command whose output the word `node` is, when it is
    /// nothing but the command substitution walked last (`$(find …)`, `` `find …` ``,
    /// `"$(find …)"`; [`Walker::substituted`]).
    fn substituted_output(&self, node: Node<'_>) -> Option<Vec<Word>> {
        let substitution = fed_substitution(node, self.src)?;
        self.substituted
            .as_ref()
            .filter(|(id, _)| *id == substitution.id())
            .map(|(_, words)| words.clone())
    }

    /// The words of the one simple command whose output the redirection `node` gives as
    /// standard input, walked just now: a process substitution read (`< <(find …)`), or a
    /// here-string of a command substitution (`<<< "$(find …)"`).
    fn stdin_substitution_output(&self, node: Node<'_>) -> Option<Vec<Word>> {
        let word = match node.kind() {
            "herestring_redirect" => {
                let mut cursor = node.walk();
                let mut words = node.named_children(&mut cursor);
                let only = words.next()?;
                return if words.next().is_none() {
                    self.substituted_output(only)
                } else {
                    None
                };
            }
            "file_redirect" => {
                // `<` of descriptor 0 (or none given): not `<>`, `<&`, `2<`.
                let mut cursor = node.walk();
                let operator: String = node
                    .children(&mut cursor)
                    .filter(|c| !c.is_named())
                    .map(|c| c.kind())
                    .collect();
                if operator != "<" || descriptor_of(node, self.src).is_some_and(|d| d != 0) {
                    return None;
                }
                let mut cursor = node.walk();
                node.children_by_field_name("destination", &mut cursor)
                    .next()?
            }
            _ => return None,
        };
        (word.kind() == "process_substitution")
            .then(|| {
                self.substituted
                    .as_ref()
                    .filter(|(id, _)| *id == word.id())
                    .map(|(_, words)| words.clone())
            })
            .flatten()
    }

    /// Whether an unquoted word below `node` holds a line break. Bash ends a command at an
    /// unquoted newline, but tree-sitter-bash reads `echo a<newline>\rm a` as one command whose
    /// word spans the break: what would run then differs from what is checked.
    fn line_break_in_word(&self, node: Node<'_>) -> bool {
        // Iterative: the input may be nested arbitrarily deep.
        let mut stack = vec![node];
        while let Some(node) = stack.pop() {
            match node.kind() {
                "word" | "number" => {
                    if has_line_break(&self.text(node)) {
                        return true;
                    }
                }
                // Quoted, or the words of other commands (checked when those are walked).
                "string"
                | "raw_string"
                | "ansi_c_string"
                | "heredoc_body"
                | "command_substitution"
                | "process_substitution" => {}
                _ => {
                    let mut cursor = node.walk();
                    stack.extend(node.named_children(&mut cursor));
                }
            }
        }
        false
    }

    fn word(&self, node: Node<'_>) -> Word {
        let raw = self.text(node);
        let (value, plain, glob) = self.word_value(node);
        Word {
            raw,
            value,
            plain,
            glob,
        }
    }

    /// (static value, plain, glob)
    fn word_value(&self, node: Node<'_>) -> (Option<String>, bool, bool) {
        let raw = self.text(node);
        match node.kind() {
            // (A `file_descriptor` here is digits too big for one, which bash takes for a
            // word: [`descriptor_word`].)
            "word" | "number" | "file_descriptor" => {
                let glob = has_unquoted_glob(&raw);
                let brace = raw.contains('{') && (raw.contains(',') || raw.contains(".."));
                let plain = !raw.contains('\\');
                // With HOME set by the command, `~` is a directory not known here.
                let value = if brace
                    || (raw.starts_with('~')
                        && (self.out.home || !(raw == "~" || raw.starts_with("~/"))))
                {
                    None
                } else {
                    Some(unescape_backslashes(&raw))
                };
                (value, plain, glob)
            }
            "ansi_c_string" => {
                // `$'\x72m'`: decoded for deny matching, never plain.
                let inner = raw
                    .strip_prefix("$'")
                    .and_then(|s| s.strip_suffix('\''))
                    .and_then(decode_ansi_c);
                (inner, false, false)
            }
            "raw_string" => {
                let inner = raw
                    .strip_prefix('\'')
                    .and_then(|s| s.strip_suffix('\''))
                    .map(str::to_owned);
                (inner, false, false)
            }
            "string" => {
                let mut cursor = node.walk();
                let all_static = node
                    .named_children(&mut cursor)
                    .all(|c| c.kind() == "string_content");
                let value = if all_static {
                    raw.strip_prefix('"')
                        .and_then(|s| s.strip_suffix('"'))
                        .map(unescape_double_quoted)
                } else {
                    None
                };
                (value, false, false)
            }
            "concatenation" => {
                let mut cursor = node.walk();
                let mut value = Some(String::new());
                let mut plain = true;
                let mut glob = false;
                for child in node.named_children(&mut cursor) {
                    let (v, p, g) = self.word_value(child);
                    plain &= p && child.kind() == "word";
                    glob |= g;
                    value = match (value, v) {
                        (Some(mut acc), Some(v)) => {
                            acc.push_str(&v);
                            Some(acc)
                        }
                        _ => None,
                    };
                }
                if raw.contains('{') && (raw.contains(',') || raw.contains("..")) {
                    value = None;
                }
                (value, plain && !raw.contains(['\'', '"', '\\']), glob)
            }
            _ => (None, false, false),
        }
    }

    /// A simple command; `extra` are words tree-sitter put after a redirection's target of
    /// the statement around it (they are arguments).
    /// Whether one of `nodes` redirects standard input (`< f`, `0<&-`, a here-document).
    /// The words after a redirection's target that belong to the simple command `node`
    /// although tree-sitter put the redirection on the list, pipeline or `!` command it ends
    /// ([`Walker::extra_for`]); empty for any other command.
    fn outer_extra<'t>(&mut self, node: Node<'t>) -> Vec<Node<'t>> {
        let Some((id, statement)) = self.extra_for else {
            return Vec::new();
        };
        if id != node.id() {
            return Vec::new();
        }
        self.extra_for = None;
        let mut up = node.parent();
        while let Some(n) = up {
            if n.id() == statement {
                let mut cursor = n.walk();
                let children: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
                return children
                    .iter()
                    .flat_map(|c| extra_destinations(*c, self.src))
                    .collect();
            }
            up = n.parent();
        }
        Vec::new()
    }

    fn redirects_stdin(&self, nodes: &[Node<'_>]) -> bool {
        nodes.iter().any(|c| {
            matches!(
                c.kind(),
                "file_redirect" | "heredoc_redirect" | "herestring_redirect"
            ) && {
                let t = self.text(*c);
                let t = t.trim_start();
                // Its descriptor: digits that fit an `int` written as part of it (`0<f`;
                // larger digits are a word, [`fits_a_descriptor`]), or another descriptor's,
                // written before it as a word of its own (`{fd}<f`, `00<f`).
                let digits = t.bytes().take_while(u8::is_ascii_digit).count();
                let op = &t[digits..];
                let mut before = self.src[..c.start_byte()]
                    .iter()
                    .rev()
                    .take_while(|b| !b" \t\n;&|()".contains(b))
                    .copied()
                    .collect::<Vec<u8>>();
                before.reverse();
                let fd = descriptor_value(&t.as_bytes()[..digits])
                    .or_else(|| descriptor_value(&before))
                    .or_else(|| before.last().filter(|&&b| b == b'}').map(|_| u64::MAX));
                (op.starts_with('<') && fd.is_none_or(|d| d == 0))
                    || (op.starts_with('>') && fd == Some(0))
            }
        })
    }

    fn command(&mut self, node: Node<'_>, extra: &[Node<'_>]) {
        let mut assignments = Vec::new();
        let mut words = Vec::new();
        let mut cursor = node.walk();
        let mut children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        children.extend_from_slice(extra);
        // Its own redirection of standard input replaces what a pipe would have given.
        let outer_piped = self.piped;
        if self.redirects_stdin(&children) {
            self.piped = false;
        }
        // Where the last word pushed ends: a word that starts right there is the same bash
        // word, which tree-sitter split (`{\x,.env}` read as `{` and `\x,.env}`).
        let mut last_end: Option<usize> = None;
        // The commands whose output operands that are one substitution each are (`rm
        // $(find …)`, `rm ./$(find …)`).
        let mut feeds: Vec<Vec<Word>> = Vec::new();
        // The command whose output its standard input is (`xargs rm <<< "$(find …)"`).
        let mut stdin_fed: Option<Vec<Word>> = None;
        // Its assignments: an array's globs are expanded when nothing else is on the line
        // (before a command, `a=(x*) cmd` puts the text in its environment).
        let mut array_assignments: Vec<Node<'_>> = Vec::new();
        for child in children {
            // The descriptor of a redirection (`0<f`, `{fd}>&-`) is no word of the command.
            let descriptor = match child.kind() {
                "command_name" => child.named_child(0).unwrap_or(child),
                _ => child,
            };
            if names_a_descriptor(descriptor, self.src) {
                if child.kind() == "command_name" {
                    // The words after the redirection are the command (`0<f git push`):
                    // judged as `<f git push` is.
                    self.complex(REDIRECT_BEFORE_NAME);
                }
                continue;
            }
            match child.kind() {
                "variable_assignment" => {
                    self.scan(child);
                    let raw = self.text(child);
                    let name = child
                        .child_by_field_name("name")
                        .map(|n| self.text(n))
                        .unwrap_or_default();
                    let safe_value = match child.child_by_field_name("value") {
                        None => true,
                        Some(v) => {
                            matches!(v.kind(), "word" | "number")
                                && self
                                    .text(v)
                                    .chars()
                                    .all(|c| c.is_ascii_alphanumeric() || "_-./:,+=@%".contains(c))
                        }
                    };
                    if child
                        .child_by_field_name("value")
                        .is_some_and(|v| self.gives_a_glob(&self.text(v)))
                    {
                        self.note_glob_var(&name);
                    }
                    array_assignments.push(child);
                    assignments.push(Assignment {
                        name,
                        raw,
                        safe_value,
                    });
                }
                "command_name" if self.bracket && child.start_byte() == 0 => {
                    words.push(Word {
                        raw: "[".into(),
                        value: Some("[".into()),
                        plain: true,
                        glob: false,
                    });
                }
                "command_name" => {
                    self.scan(child);
                    if self.line_break_in_word(child) {
                        self.complex(LINE_BREAK_IN_WORD);
                    }
                    let inner = child.named_child(0).unwrap_or(child);
                    let w = self.word(inner);
                    let name_ok = inner.kind() == "word"
                        && w.plain
                        && !w.glob
                        && w.value.as_deref().is_some_and(|v| {
                            !v.is_empty()
                                && v.chars()
                                    .all(|c| c.is_ascii_alphanumeric() || "_-./+@%:,".contains(c))
                                && !v.starts_with('-')
                        });
                    if !name_ok {
                        self.out.computed_command |= w.value.is_none();
                        self.complex(format!(
                            "the command name `{}` is quoted, escaped or computed",
                            truncate(&w.raw, 40)
                        ));
                    }
                    words.push(w);
                    last_end = Some(child.end_byte());
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    self.redirect(child);
                    stdin_fed = self.stdin_substitution_output(child).or(stdin_fed);
                    for e in extra_destinations(child, self.src) {
                        self.scan_word(e);
                        if words.is_empty() {
                            self.complex(REDIRECT_BEFORE_NAME);
                        }
                        words.push(self.word(e));
                    }
                }
                "subshell" => {
                    self.complex("unsupported shell syntax in a command");
                    self.walk(child);
                }
                _ => {
                    self.scan_word(child);
                    feeds.extend(self.substituted_output(child));
                    if self.line_break_in_word(child) {
                        self.complex(LINE_BREAK_IN_WORD);
                    }
                    let w = self.word(child);
                    match words.last_mut() {
                        // One bash word in two nodes: what it expands to is not worked out
                        // here (a brace list, a glob), so it is computed.
                        Some(last) if last_end == Some(child.start_byte()) => {
                            *last = Word {
                                raw: format!("{}{}", last.raw, w.raw),
                                value: None,
                                plain: false,
                                glob: last.glob || w.glob,
                            };
                        }
                        _ => words.push(w),
                    }
                    last_end = Some(child.end_byte());
                }
            }
        }
        // `! ! cmd`: bash takes every `!` as the reserved word; tree-sitter reads the second
        // as the command name (already complex as a name).
        while words.len() > 1 && words[0].plain && words[0].value.as_deref() == Some("!") {
            words.remove(0);
        }
        if assignments.is_empty() {
            reserved_word_prefix(&mut words, &mut assignments);
        }
        if words.is_empty() {
            self.piped = outer_piped;
            if !assignments.is_empty() {
                self.complex("a variable assignment changes the shell for later commands");
                self.out.assigned.extend(assignments);
            }
            for a in array_assignments {
                self.array_globs(a);
            }
            return;
        }
        // The first find's is what feeds it, the others also do.
        let first = feeds
            .iter()
            .position(|f| program_of(behind_wrappers(f)) == Some("find"))
            .unwrap_or(0);
        let fed = (!feeds.is_empty()).then(|| feeds.remove(first));
        let also_fed = feeds;
        let cmd = SimpleCommand {
            assignments,
            words,
            appended_args: false,
            filled_in_place: false,
            cwd: self.dir_fields().0,
            other_cwds: self.dir_fields().1,
            transparent: false,
            piped_input: self.piped,
            fed_by: fed,
            also_fed_by: also_fed,
            placeholder: self.placeholder(),
            run_by_xargs: false,
            set_by_loops: self.loop_vars.clone(),
        };
        self.piped = outer_piped;
        let start = self.out.commands.len();
        self.expand(cmd);
        // What it runs reads that input too (`xargs rm`'s `rm`).
        if let Some(words) = stdin_fed {
            for c in self.out.commands.iter_mut().skip(start) {
                feed_one(
                    &mut c.fed_by,
                    &mut c.also_fed_by,
                    std::slice::from_ref(&words),
                );
            }
        }
    }

    /// `[[ ... ]]` is syntax (no command, no redirection) and `[ ... ]` a command; both
    /// evaluate array subscripts in some operands.
    fn test_command(&mut self, node: Node<'_>) {
        let text = self.text(node);
        if text.starts_with("[[") {
            self.scan(node);
            self.double_bracket(node, &text);
        } else if text.starts_with('[') {
            self.bracket_test(&text);
        } else {
            self.complex("unsupported test syntax");
            self.scan(node);
        }
    }

    /// `[[ ]]`: bash evaluates an array subscript (`a[$(cmd)]`, which runs `cmd`) in the
    /// operand of `-v`/`-R`, and the operands of arithmetic comparisons as arithmetic (where a
    /// variable's value is evaluated as an expression, so `x='a[$(cmd)]'` runs `cmd`). Complex:
    /// `-v`/`-R`, an arithmetic comparison with an operand other than an integer literal,
    /// `$#`, `$?`, `${#x}`, and any operand with a subscript holding a substitution.
    fn double_bracket(&mut self, node: Node<'_>, text: &str) {
        const ARITHMETIC: &[&str] = &["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];
        let inner = text.get(2..).unwrap_or("");
        if inner.contains('[') && (inner.contains("$(") || inner.contains('`')) {
            self.complex("a `[[ ]]` operand with an array subscript holding a substitution");
            return;
        }
        let mut cursor = node.walk();
        'tree: loop {
            let n = cursor.node();
            if n.child_count() == 0 || n.kind() == "test_operator" {
                let op = self.text(n);
                if matches!(op.as_str(), "-v" | "-R") {
                    self.complex("`[[ ]]` with `-v` or `-R` evaluates an array subscript");
                    return;
                }
                if ARITHMETIC.contains(&op.as_str()) {
                    let parent = n.parent().filter(|p| {
                        p.kind() == "binary_expression"
                            && p.child_by_field_name("operator") == Some(n)
                    });
                    let literal = |field: &str| {
                        parent
                            .and_then(|p| p.child_by_field_name(field))
                            .map(|o| self.text(o).replace(['"', '\''], ""))
                            .is_some_and(|o| arithmetic_is_literal(&o))
                    };
                    if !(literal("left") && literal("right")) {
                        self.complex(
                            "`[[ ]]` compares as arithmetic, evaluating a variable's value as an expression",
                        );
                        return;
                    }
                }
            }
            // A substitution's own `[[ ]]` is checked when it is walked.
            let substitution = matches!(n.kind(), "command_substitution" | "process_substitution");
            if !substitution && cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'tree;
                }
            }
        }
    }

    /// `[ ... ]` is the command `[`: `>` and `<` inside are redirections (tree-sitter reads
    /// them as comparisons). The text is analysed again with `[` replaced by a placeholder
    /// word, so that tree-sitter reads it as a command, which is then named `[`.
    fn bracket_test(&mut self, text: &str) {
        if self.depth >= MAX_NESTING {
            self.nested_too_deeply();
            return;
        }
        let src = format!("_{}", text.get(1..).unwrap_or(""));
        let mut nested = Analysis {
            cdpath: self.out.cdpath || names_cd_search(&src),
            lastpipe: self.out.lastpipe || src.contains("lastpipe"),
            git_env: src.contains("GIT_"),
            home: self.out.home || names_variable(&src, "HOME"),
            ps4: names_variable(&src, "PS4"),
            ..Analysis::default()
        };
        analyze_source(&src, self.depth + 1, self.nest, true, &mut nested);
        self.merge(nested);
    }

    /// Follows `cd`, `pushd` and `popd` of the shell itself (bare, or behind `builtin`,
    /// `command`, `time`, `noglob`): later relative paths resolve against the new directory.
    /// Behind another wrapper (`nice cd`, `sudo cd`) it is a program that changes nothing.
    fn track_directory(&mut self, cmd: &SimpleCommand) {
        let value = |w: &Word| w.value.clone().unwrap_or_default();
        let words = &cmd.words[shell_command_start(&cmd.words)..];
        let Some(name) = words.first().map(value) else {
            return;
        };
        match name.as_str() {
            "cd" | "pushd" => {
                // `cd [-L|-P [-e]] [-@] [--] [dir]`, `pushd [-n] [dir]`.
                let mut rest = &words[1..];
                while let Some(v) = rest.first().map(value) {
                    if v == "--" {
                        rest = &rest[1..];
                        break;
                    }
                    let option = v.len() > 1
                        && v.starts_with('-')
                        && v[1..]
                            .chars()
                            .all(|c| matches!(c, 'L' | 'P' | 'e' | '@' | 'n'));
                    if !option {
                        break;
                    }
                    rest = &rest[1..];
                }
                // A `~` bash does not expand (`cd '~'`, `cd \~`, `cd ~'/x'`) is a name.
                let literal_tilde = rest
                    .first()
                    .and_then(Word::path_value)
                    .and_then(|p| match p {
                        std::borrow::Cow::Owned(p) => Some(p),
                        std::borrow::Cow::Borrowed(_) => None,
                    });
                let target = match rest.first().map(|w| w.value.as_deref()) {
                    None if name == "cd" => Some("~"),
                    Some(Some(_)) if literal_tilde.is_some() => literal_tilde.as_deref(),
                    None => {
                        self.complex("`pushd` without a directory swaps directories");
                        None
                    }
                    Some(Some("-")) => {
                        self.complex("`cd -` goes back to a directory not known here");
                        None
                    }
                    Some(Some(v))
                        if name == "pushd"
                            && v.len() > 1
                            && v.starts_with(['+', '-'])
                            && v[1..].chars().all(|c| c.is_ascii_digit()) =>
                    {
                        self.complex("`pushd +N` rotates the directory stack");
                        None
                    }
                    // Bash expands it to what it matches (`cd .gi?` goes to `.git`).
                    Some(Some(_)) if rest.first().is_some_and(|w| w.glob) => {
                        self.complex("`cd` to a glob, which goes where it matches");
                        None
                    }
                    Some(Some(v)) => Some(v),
                    Some(None) => {
                        self.complex("`cd` to a computed directory");
                        None
                    }
                };
                self.change_directory(target);
            }
            "popd" => {
                self.complex("`popd` returns to a directory not known here");
                self.change_directory(None);
            }
            _ => {}
        }
    }

    /// The shell goes to `target` (`None`: a directory not known here), if the `cd` succeeds.
    fn change_directory(&mut self, target: Option<&str>) {
        self.moved = true;
        let before = self.dirs.clone();
        // With CDPATH set, `cd name` may go to `$CDPATH/name` (`./name` and `../name` not).
        let through_cdpath = |t: &str| {
            self.out.cdpath
                && !t.is_empty()
                && !t.starts_with(['/', '~'])
                && !matches!(t, "." | ".." | "-")
                && !t.starts_with("./")
                && !t.starts_with("../")
        };
        // With HOME set by the command, `~` is not known either.
        let through_home = |t: &str| self.out.home && t.starts_with('~');
        self.dirs = match target {
            Some(t) if !through_cdpath(t) && !through_home(t) => {
                bounded(before.iter().map(|d| Some(join_dir(d.as_deref(), t))))
            }
            _ => vec![Some(UNKNOWN_DIR.to_owned())],
        };
        self.cd_failed = Some(before);
    }

    /// Records a simple command and follows what it runs (`bash -c`, `eval`, `find -exec`,
    /// `xargs`, `env -S`, wrappers of those).
    fn expand(&mut self, cmd: SimpleCommand) {
        if self.full() {
            return;
        }
        self.track_directory(&cmd);
        let sets_variables = match super::commands::effective_name(&cmd) {
            Some("read" | "mapfile" | "readarray" | "source" | ".") => true,
            // `builtin export …` and `command export …` are plain commands to tree-sitter.
            Some("export" | "declare" | "typeset" | "local" | "readonly") => {
                cmd.words.iter().skip(1).any(|w| hides_a_name(&w.raw))
            }
            Some("printf") => cmd
                .words
                .iter()
                .filter_map(|w| w.value.as_deref())
                .any(|v| super::options::short_bundle_has(v, &['v'])),
            // `set -a` / `set -o allexport`: every later assignment is exported, out of
            // sight of what reads the environment (`set -a; WGETRC=cfg; wget URL`).
            Some("set") => cmd.words.iter().skip(1).any(|w| {
                w.value.as_deref().is_none_or(|v| {
                    (v.starts_with(['-', '+']) && v[1..].contains('a')) || v == "allexport"
                })
            }),
            _ => false,
        };
        self.out.hidden_assignment |= sets_variables;
        if assigns_command_table(effective_part(&cmd)) {
            rebinds_command_names(self.out);
        }
        if let Some(why) = hides_what_runs(&cmd) {
            self.complex(why);
            if !self.out.incomplete.iter().any(|w| w == why) {
                self.out.incomplete.push(why.into());
            }
        }
        let found = Payloads::of(&cmd.words);
        // An `eval` behind nothing but wrappers that run in the shell runs in the shell.
        let in_shell = shell_command_start(&cmd.words) == found.start;
        let mut cmd = cmd;
        let same_as_effective =
            effective_words(&cmd).is_some_and(|w| w.len() == cmd.words.len() - found.start);
        cmd.transparent = found.certain
            && same_as_effective
            && match &found.main {
                Some(Inner::Script(_) | Inner::Eval(_)) => true,
                Some(Inner::Command(..)) => {
                    cmd.words
                        .get(found.start)
                        .and_then(|w| w.value.as_deref())
                        .map(basename)
                        == Some("xargs")
                }
                _ => false,
            };
        // What the wrappers run is computed (`sudo $X`, `command $X`), or not known for sure
        // (`bash -c "$y"`, whose computed word may be the script): deny and ask rules cannot
        // be matched against it.
        self.out.computed_command |= !found.certain
            || cmd
                .words
                .get(found.start)
                .is_some_and(|w| w.value.is_none());
        // git configured on its command line (`-c alias.p=push`, `-c core.pager=…`) or by
        // its variables (`GIT_PAGER`, `GIT_CONFIG_*`) may run an alias, a pager, an editor or
        // an ssh command: any program.
        let (wrappers, run) = cmd.words.split_at(found.start.min(cmd.words.len()));
        let assignments: Vec<Assignment> = cmd
            .assignments
            .iter()
            .cloned()
            .chain(wrapper_assignments(wrappers))
            .collect();
        self.computed_by(run, &assignments, env_computed(wrappers));
        let runner_is_xargs = cmd
            .words
            .get(found.start)
            .and_then(|w| w.value.as_deref())
            .map(basename)
            .is_some_and(|n| matches!(n, "xargs" | "parallel" | "xe"));
        // A shell script find runs on what it finds (`-exec sh -c 'rm "$1"' _ {} \;`) is
        // fed by the find, as a loop reading what it prints would be.
        let find_words = (program_of(run) == Some("find")).then(|| run.to_vec());
        self.out.commands.push(cmd);
        if !found.certain {
            self.complex(
                "the options of a wrapper or of xargs were not all understood: what it runs is uncertain",
            );
        }
        let outer_runner = std::mem::replace(&mut self.xargs_runs, runner_is_xargs);
        for (k, inner) in found.main.into_iter().chain(found.others).enumerate() {
            let handed = match (&find_words, &inner) {
                (Some(find), Inner::Command(exec, _)) => handed_to_a_script(find, exec),
                _ => None,
            };
            let start = self.out.commands.len();
            let redirects = self.out.redirects.len();
            self.run_inner(inner, 0, in_shell && k == 0);
            if let Some(producer) = handed {
                self.feed(start + 1, redirects, std::slice::from_ref(&producer));
            }
        }
        self.xargs_runs = outer_runner;
    }

    /// Analyses what a command runs; `in_shell`: an `eval` that runs in the shell itself.
    fn run_inner(&mut self, inner: Inner, level: usize, in_shell: bool) {
        match inner {
            Inner::Script(script) => {
                self.nested_script(&script, false, false);
            }
            Inner::Eval(script) => {
                self.nested_script(&script, in_shell, false);
            }
            Inner::Callback(script) => {
                // Run once for each chunk of lines, with the index and the line appended
                // (like xargs's command): a `cd` in it moves the shell again each time.
                if self.nested_script(&script, in_shell, true) {
                    self.moved_somewhere_unknown();
                }
            }
            Inner::Trap(script) => {
                // It runs on a signal or at exit, wherever the shell is then.
                let here = std::mem::replace(&mut self.dirs, vec![Some(UNKNOWN_DIR.to_owned())]);
                let moved = self.nested_script(&script, false, false);
                self.dirs = here;
                // A `DEBUG`, `ERR` or `RETURN` trap runs in the shell between later
                // commands: one that changes directory moves the shell out of sight.
                if moved {
                    self.moved_somewhere_unknown();
                }
            }
            Inner::Split(script) => {
                self.complex("`env -S` splits a string into a command");
                self.nested_script(&script, false, false);
            }
            Inner::Dynamic(why) => {
                // A computed payload (`eval "$x"`) may set any variable.
                self.out.hidden_assignment = true;
                self.out.computed_command = true;
                self.complex(why);
            }
            Inner::Unseen(why) => {
                self.out.computed_command = true;
                self.complex(why);
            }
            Inner::ScriptFile(why) => {
                // A sourced file may set any variable.
                self.out.hidden_assignment = true;
                self.complex(why);
            }
            Inner::Command(words, fill) => {
                let filled_in_place = matches!(fill, Fill::InPlace(_));
                let own_placeholder = match &fill {
                    Fill::InPlace(p) => p.clone(),
                    Fill::Appended => None,
                };
                let c = SimpleCommand {
                    assignments: Vec::new(),
                    words,
                    appended_args: true,
                    filled_in_place,
                    cwd: self.dir_fields().0,
                    other_cwds: self.dir_fields().1,
                    transparent: false,
                    piped_input: true,
                    fed_by: None,
                    also_fed_by: Vec::new(),
                    placeholder: own_placeholder,
                    run_by_xargs: self.xargs_runs,
                    set_by_loops: self.loop_vars.clone(),
                };
                if c.words
                    .first()
                    .is_some_and(|w| !w.plain || w.value.is_none())
                {
                    self.out.computed_command |= c.words.first().is_some_and(|w| w.value.is_none());
                    self.complex("a command run by find/xargs is quoted, escaped or computed");
                }
                let found = Payloads::of(&c.words);
                let (wrappers, run) = c.words.split_at(found.start.min(c.words.len()));
                self.out.computed_command |=
                    !found.certain || c.words.get(found.start).is_some_and(|w| w.value.is_none());
                // Their input names the command or its subcommand (`xargs env`, `xargs -I%
                // sudo %`, `xargs git`): what runs may be what a deny or ask rule names.
                if let Some(why) = input_supplies_command(&c.words, found.start, &fill, &self.fills)
                {
                    let program = run.first().and_then(|w| w.value.as_deref()).map(basename);
                    match program {
                        // Only a rule for this program can be dodged: the engine decides.
                        Some(program) if why == INPUT_SUBCOMMAND => {
                            if !self.out.subcommand_from_input.iter().any(|p| p == program) {
                                self.out.subcommand_from_input.push(program.to_owned());
                            }
                        }
                        _ => {
                            self.out.computed_command = true;
                            if !self.out.computed_why.iter().any(|w| w == why) {
                                self.out.computed_why.push(why.to_owned());
                            }
                        }
                    }
                }
                let assignments = wrapper_assignments(wrappers);
                self.computed_by(run, &assignments, env_computed(wrappers));
                if self.full() {
                    return;
                }
                self.out.commands.push(c);
                let nested: Vec<Inner> = found.main.into_iter().chain(found.others).collect();
                if nested.is_empty() {
                    return;
                }
                // A shell script with the input put in its place (`xargs -I{} sh -c '{}'`)
                // runs whatever the input says.
                if filled_in_place
                    && nested
                        .iter()
                        .any(|n| matches!(n, Inner::Script(_) | Inner::Eval(_)))
                {
                    self.out.computed_command = true;
                    self.complex("a shell script find/xargs fill in with their input");
                }
                // Not allowed anyway; analysed so that deny rules see inside.
                self.complex("a shell run by find/xargs");
                if level >= MAX_NESTING {
                    self.nested_too_deeply();
                    return;
                }
                let placeholder = match fill {
                    Fill::InPlace(p) => Some(p),
                    Fill::Appended => None,
                };
                let pushed = placeholder.is_some();
                self.fills.extend(placeholder);
                for n in nested {
                    self.run_inner(n, level + 1, false);
                }
                if pushed {
                    self.fills.pop();
                }
            }
        }
    }

    /// Notes a command that runs a program its configuration or arguments name (git
    /// configured to, `tar --to-command`, `sed 'e …'`): what runs is computed.
    ///
    /// The variables it reads may be the command's own (`assignments`: written before it,
    /// or given to a wrapper, `env VAR=… git`), or assigned by an earlier statement
    /// ([`Analysis::assigned`]); with a name the analysis could not read
    /// ([`Analysis::hidden_assignment`], or `any_variable`: `env "$v" git`), any of them.
    fn computed_by(&mut self, run: &[Word], assignments: &[Assignment], any_variable: bool) {
        let assignments: Vec<&Assignment> = assignments.iter().chain(&self.out.assigned).collect();
        let any_variable = any_variable || self.out.hidden_assignment;
        let program = run.first().and_then(|w| w.value.as_deref()).map(basename);
        let why = if git_runs_configured(run, &assignments, any_variable) {
            "git configured on its command line or by its variables may run any program".to_owned()
        } else if let Some((program, variable)) = program
            .and_then(|p| match p {
                "rsync" => Some(("rsync", "RSYNC_RSH")),
                "zip" => Some(("zip", "ZIPOPT")),
                _ => None,
            })
            .filter(|(_, variable)| any_variable || assignments.iter().any(|a| a.name == *variable))
        {
            // The variable gives the program a remote shell (`RSYNC_RSH`) or options
            // (`ZIPOPT="-TT cmd"`) that may run a command.
            format!("`{program}` reads `{variable}`, which may make it run a command")
        } else if let Some(shell) = program.filter(|p| {
            NESTED_SHELLS.contains(p)
                && (any_variable
                    || self.out.startup_env
                    || assignments
                        .iter()
                        .any(|a| matches!(a.name.as_str(), "BASH_ENV" | "ENV" | "ZDOTDIR")))
        }) {
            // Bash expands `BASH_ENV` (a `$(…)` in it runs) and runs the file it names
            // before its script; `sh` does so with `ENV`, zsh with `$ZDOTDIR/.zshenv`.
            format!(
                "`{shell}` may read a startup file the command names (`BASH_ENV`, `ENV`), whose commands run unseen"
            )
        } else if super::commands::runs_a_program_it_is_given(run) {
            let name = run
                .first()
                .and_then(|w| w.value.as_deref())
                .map_or("it", basename);
            format!("`{name}` runs a program or a command its arguments give")
        } else {
            return;
        };
        self.out.computed_command = true;
        if !self.out.computed_why.contains(&why) {
            self.out.computed_why.push(why);
        }
    }

    /// Notes the assignments of a statement that assigns (`X=1`, `A=1 B=2`, `export X=1`)
    /// in [`Analysis::assigned`], by name and as written.
    fn note_assigned(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        let nodes = if node.kind() == "variable_assignment" {
            vec![node]
        } else {
            children
        };
        for n in nodes
            .into_iter()
            .filter(|n| n.kind() == "variable_assignment")
        {
            let name = n
                .child_by_field_name("name")
                .map(|name| self.text(name))
                .unwrap_or_default();
            if n.child_by_field_name("value")
                .is_some_and(|v| self.gives_a_glob(&self.text(v)))
            {
                self.note_glob_var(&name);
            }
            self.out.assigned.push(Assignment {
                name,
                raw: self.text(n),
                safe_value: false,
            });
        }
    }

    /// Whether an assignment's value `raw` gives its variable a glob: a glob character in it
    /// (an assignment expands none, `X=a/*` holds `a/*`), or a variable noted before that
    /// holds one (`X=secrets/$Y`, `X="$Y"`).
    fn gives_a_glob(&self, raw: &str) -> bool {
        raw.contains(['*', '?', '[']) || self.expands_a_glob_var(raw, true)
    }

    /// Whether `raw` expands (outside double quotes, or anywhere with `quoted`) a variable
    /// the line was seen to give a glob so far ([`Analysis::glob_vars`]).
    fn expands_a_glob_var(&self, raw: &str, quoted: bool) -> bool {
        expanded_parameters(raw, quoted)
            .iter()
            .any(|p| p.as_ref().is_some_and(|n| self.out.glob_vars.contains(n)))
    }

    /// Notes that the line gives `name` a value holding a glob character
    /// ([`Analysis::glob_vars`]).
    fn note_glob_var(&mut self, name: &str) {
        if !name.is_empty() && !self.out.glob_vars.iter().any(|v| v == name) {
            self.out.glob_vars.push(name.to_owned());
        }
    }

    /// A payload nested beyond [`MAX_NESTING`] is not analysed: the analysis is truncated.
    fn nested_too_deeply(&mut self) {
        self.complex(NESTED_TOO_DEEPLY);
        self.out.truncated = true;
    }

    /// From here on the shell is in a directory not known here.
    fn moved_somewhere_unknown(&mut self) {
        self.dirs = vec![Some(UNKNOWN_DIR.to_owned())];
        self.cd_failed = None;
        self.moved = true;
    }

    /// Analyses a script run by `bash -c`, `eval`, ...; with `in_shell` (`eval`), a `cd` in it
    /// moves the shell. With `callback` (`mapfile -C`), it runs any number of times with
    /// arguments appended: its commands get appended arguments, and when it changes
    /// directory, later runs are somewhere not known here. Returns whether a `cd` in it
    /// moved its shell.
    fn nested_script(&mut self, script: &str, in_shell: bool, callback: bool) -> bool {
        if self.depth >= MAX_NESTING {
            self.nested_too_deeply();
            return false;
        }
        // The variables set before it may be in its environment (exported or not: `eval`
        // and `source` run in the shell itself; which were exported is not tracked), and
        // what it sets may hold after it (`eval "export X=…"`).
        let mut nested = Analysis {
            cdpath: self.out.cdpath || names_cd_search(script),
            lastpipe: self.out.lastpipe || script.contains("lastpipe"),
            startup_env: self.out.startup_env || names_startup_env(script),
            hidden_assignment: self.out.hidden_assignment,
            assigned: self.out.assigned.clone(),
            git_env: script.contains("GIT_"),
            home: self.out.home || names_variable(script, "HOME"),
            ps4: names_variable(script, "PS4"),
            ..Analysis::default()
        };
        let end = analyze_source(script, self.depth + 1, self.nest, false, &mut nested);
        if callback {
            for c in &mut nested.commands {
                c.appended_args = true;
            }
            if end.moved {
                // The first run where the shell is, later ones anywhere.
                self.dirs = union(&self.dirs, &[Some(UNKNOWN_DIR.to_owned())]);
            }
        }
        self.merge(nested);
        if in_shell && end.moved {
            // Wherever the script went, or (it may fail early) where it started.
            self.moved = true;
            let moved = self.dirs.iter().flat_map(|o| {
                end.dirs.iter().map(move |i| match i {
                    Some(i) => Some(join_dir(o.as_deref(), i)),
                    None => o.clone(),
                })
            });
            self.dirs = union(&self.dirs, &bounded(moved));
        }
        end.moved
    }

    /// Adds a nested analysis; its directories are relative to the current ones.
    fn merge(&mut self, nested: Analysis) {
        let outer = self.dirs.clone();
        let rebase = |cwd: &mut Option<String>, others: &mut Vec<Option<String>>| {
            let inner: Vec<Option<String>> = std::iter::once(cwd.take())
                .chain(others.drain(..))
                .collect();
            let all = bounded(outer.iter().flat_map(|o| {
                inner.iter().map(move |i| match i {
                    Some(i) => Some(join_dir(o.as_deref(), i)),
                    None => o.clone(),
                })
            }));
            let mut all = all.into_iter();
            *cwd = all.next().flatten();
            *others = all.collect();
        };
        // A payload that names CDPATH (`eval "CD""PATH=x"` reads `CDPATH=x`) may set it.
        // One that names HOME may set it.
        self.out.hidden_assignment |=
            nested.hidden_assignment || nested.cdpath || (nested.home && !self.out.home);
        self.out.git_env |= nested.git_env;
        self.out.ps4 |= nested.ps4;
        self.out.startup_env |= nested.startup_env;
        // What it assigns may hold after it: an `eval` or `source` runs in the shell (a
        // nested shell's assignments are kept too, erring on the side of more).
        add_assigned(&mut self.out.assigned, nested.assigned);
        for name in &nested.glob_vars {
            self.note_glob_var(name);
        }
        // What a nested script runs that is computed is computed for the whole line
        // (`bash -c 'eval "$x"'`).
        self.out.computed_command |= nested.computed_command;
        for why in nested.computed_why {
            if !self.out.computed_why.contains(&why) {
                self.out.computed_why.push(why);
            }
        }
        for program in nested.subcommand_from_input {
            if !self.out.subcommand_from_input.contains(&program) {
                self.out.subcommand_from_input.push(program);
            }
        }
        for why in nested.incomplete {
            if !self.out.incomplete.contains(&why) {
                self.out.incomplete.push(why);
            }
        }
        // What find or xargs fill in the script's text is what its words holding the
        // placeholder are ([`SimpleCommand::placeholder`]).
        // (In a script parallel runs, the argument stands where `"$PARALLEL_ARG"` is.)
        let placeholder = self.placeholder();
        let holds = |w: &Word| w.raw.contains(PARALLEL_ARG);
        for mut c in nested.commands {
            rebase(&mut c.cwd, &mut c.other_cwds);
            if c.placeholder.is_none() {
                c.placeholder = match &placeholder {
                    None if c.words.iter().any(holds) => Some(PARALLEL_ARG.to_owned()),
                    _ => placeholder.clone(),
                };
            }
            self.out.commands.push(c);
        }
        for mut r in nested.redirects {
            rebase(&mut r.cwd, &mut r.other_cwds);
            if r.placeholder.is_none() {
                r.placeholder = match &placeholder {
                    None if holds(&r.target) => Some(PARALLEL_ARG.to_owned()),
                    _ => placeholder.clone(),
                };
            }
            self.out.redirects.push(r);
        }
        for why in nested.complex {
            self.complex(why);
        }
        self.out.truncated |= nested.truncated;
        bound_listed(self.out, listed_limit(self.src.len()));
    }
}

/// The directory `dir` names when the shell is in `cwd` (both as written; `None`: where the
/// command started).
fn join_dir(cwd: Option<&str>, dir: &str) -> String {
    match cwd {
        _ if dir.starts_with(['/', '~']) => dir.to_owned(),
        Some(UNKNOWN_DIR) => UNKNOWN_DIR.to_owned(),
        Some(o) => format!("{o}/{dir}"),
        None => dir.to_owned(),
    }
}

/// Directories without repeats; more than [`MAX_DIRS`] are one unknown directory.
fn bounded(dirs: impl IntoIterator<Item = Option<String>>) -> Vec<Option<String>> {
    let mut out: Vec<Option<String>> = Vec::new();
    for d in dirs {
        if !out.contains(&d) {
            if out.len() == MAX_DIRS {
                return vec![Some(UNKNOWN_DIR.to_owned())];
            }
            out.push(d);
        }
    }
    if out.is_empty() {
        out.push(None);
    }
    out
}

/// The directories of `a` and of `b`, bounded.
fn union(a: &[Option<String>], b: &[Option<String>]) -> Vec<Option<String>> {
    bounded(a.iter().chain(b).cloned())
}

/// Whether the word `node` is the descriptor of the redirection right after it, as bash
/// reads it: digits that fit an `int` (`0<f`, `0>&1`, `0<<<x`; [`fits_a_descriptor`]) or a
/// `{name}` the shell assigns a new
/// descriptor to (`{fd}<f`, `{fd}>&-`), written directly before an operator that starts with
/// `<` or `>` (not `&>`, not a process substitution `<(…)`, which bash joins to the word).
/// tree-sitter-bash takes `0` and `{name}` for a word of the command (`git 0</dev/null push`
/// read as `git 0 push`); bash runs the command without them.
fn names_a_descriptor(node: Node<'_>, src: &[u8]) -> bool {
    if !matches!(node.kind(), "number" | "word" | "concatenation") {
        return false;
    }
    // (Where the parser found a syntax error it may leave the `{` of `{fd}` out of the
    // word: `fd}`.)
    let start = node.start_byte();
    let start = match src.get(start.wrapping_sub(1)..=start) {
        Some([b'{', c]) if *c != b'{' => start - 1,
        _ => start,
    };
    let Some(text) = src.get(start..node.end_byte()) else {
        return false;
    };
    let digits = fits_a_descriptor(text);
    let name = text
        .strip_prefix(b"{")
        .and_then(|t| t.strip_suffix(b"}"))
        .is_some_and(|n| {
            n.first()
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
                && n.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
        });
    let end = node.end_byte();
    (digits || name) && matches!(src.get(end), Some(b'<' | b'>')) && src.get(end + 1) != Some(&b'(')
}

/// Whether `text` is digits bash takes for a descriptor before a redirection: a number
/// that fits an `int` (leading zeros allowed: `000001<f` is descriptor 1). Larger digits are
/// a word of the command (`git 2147483648</dev/null push` runs `git 2147483648 push`).
fn fits_a_descriptor(text: &[u8]) -> bool {
    descriptor_value(text).is_some()
}

/// The descriptor `text` names when it is digits that fit an `int` ([`fits_a_descriptor`]).
fn descriptor_value(text: &[u8]) -> Option<u64> {
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n: u64 = std::str::from_utf8(text).ok()?.parse().ok()?;
    (n <= i32::MAX as u64).then_some(n)
}

/// The descriptor the redirection `node` names in its `descriptor` field (`2<f`), when bash
/// takes it for one ([`fits_a_descriptor`]).
fn descriptor_of(node: Node<'_>, src: &[u8]) -> Option<u64> {
    let d = node.child_by_field_name("descriptor")?;
    descriptor_value(src.get(d.start_byte()..d.end_byte())?)
}

/// The digits tree-sitter-bash took for the descriptor of the redirection `node` that bash
/// does not, a number too big for an `int`: a word of the command, written before the
/// redirection (`git 2147483648</dev/null push` runs `git 2147483648 push`).
fn descriptor_word<'t>(node: Node<'t>, src: &[u8]) -> Option<Node<'t>> {
    let d = node.child_by_field_name("descriptor")?;
    let text = src.get(d.start_byte()..d.end_byte())?;
    (!text.is_empty() && text.iter().all(u8::is_ascii_digit) && !fits_a_descriptor(text))
        .then_some(d)
}

/// The destinations of a file redirection after the first: tree-sitter reads the words
/// after a redirection's target as more targets (`cat 2>/dev/null .env`), bash passes them
/// to the command as arguments. Likewise the words after a here-document's delimiter (`cat
/// <<EOF .env`, `cat <<EOF >/dev/null .env`), which tree-sitter puts in the redirection.
/// And digits too big for a descriptor, which tree-sitter takes for the redirection's and
/// bash for a word (`git 2147483648</dev/null push` runs `git 2147483648 push`).
fn extra_destinations<'t>(node: Node<'t>, src: &[u8]) -> Vec<Node<'t>> {
    let mut out = extra_targets(node, src);
    if let Some(d) = descriptor_word(node, src) {
        out.insert(0, d);
    }
    out
}

/// [`extra_destinations`] but for the descriptor.
fn extra_targets<'t>(node: Node<'t>, src: &[u8]) -> Vec<Node<'t>> {
    let mut c = node.walk();
    match node.kind() {
        // `<&-` and `>&-` close a descriptor and take no target: the word after them is the
        // command's (`git <&- push` runs `git push`).
        "file_redirect" => node
            .children_by_field_name("destination", &mut c)
            .skip(usize::from(!closes_descriptor(node)))
            .collect(),
        "heredoc_redirect" => {
            let mut out: Vec<Node<'_>> = Vec::new();
            for child in node.named_children(&mut c) {
                if child.kind() == "file_redirect" {
                    out.extend(extra_destinations(child, src));
                }
            }
            let mut c = node.walk();
            out.extend(node.children_by_field_name("argument", &mut c));
            out.sort_by_key(Node::start_byte);
            out
        }
        _ => Vec::new(),
    }
}

/// Whether the file redirection `node` closes a descriptor (`<&-`, `>&-`, one token in
/// tree-sitter-bash's grammar, which still reads the next word as its destination).
fn closes_descriptor(node: Node<'_>) -> bool {
    let mut c = node.walk();
    node.children(&mut c)
        .any(|t| !t.is_named() && matches!(t.kind(), "<&-" | ">&-"))
}

/// `time` and `coproc` written as a command's first words are bash's reserved words (not
/// after an assignment, nor quoted): `time [-p] [--]` takes a pipeline, which may start with
/// `!` and more `time`s, and `coproc` a simple command; either command may start with
/// assignments (`time ! X=1 git push`, `coproc X=1 git push` run `git push`). tree-sitter
/// reads them as one command's words: the `!`s after `time` are dropped and the assignments
/// after the prefix moved to `assignments`, so that the command is read as `X=1 time git
/// push` is, the prefix a wrapper before it.
fn reserved_word_prefix(words: &mut Vec<Word>, assignments: &mut Vec<Assignment>) {
    let is = |w: Option<&Word>, text: &str| w.is_some_and(|w| w.raw == text);
    let mut i = 0;
    loop {
        if is(words.get(i), "time") {
            i += 1;
            if is(words.get(i), "-p") {
                i += 1;
            }
            if is(words.get(i), "--") {
                i += 1;
            }
        } else if i > 0 && is(words.get(i), "!") {
            words.remove(i);
        } else if is(words.get(i), "coproc") {
            // (After `coproc`, `time` and `!` are no reserved words.)
            i += 1;
            break;
        } else {
            break;
        }
    }
    if i == 0 {
        return;
    }
    while let Some(w) = words.get(i) {
        let Some((name, value)) = assignment_word(&w.raw) else {
            break;
        };
        let safe_value = value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:,+=@%".contains(c));
        let name = name.to_owned();
        let raw = words.remove(i).raw;
        assignments.push(Assignment {
            name,
            raw,
            safe_value,
        });
    }
}

/// The name and value of `raw` when bash takes it for an assignment before a command
/// (`X=1`, `X+=1`, `a[i]=1`), as written.
fn assignment_word(raw: &str) -> Option<(&str, &str)> {
    let eq = raw.find('=')?;
    let name = raw[..eq].strip_suffix('+').unwrap_or(&raw[..eq]);
    let base = match name.find('[') {
        Some(open) if name.ends_with(']') => &name[..open],
        Some(_) => return None,
        None => name,
    };
    let mut chars = base.chars();
    let first = chars.next()?;
    ((first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_'))
    .then(|| (base, &raw[eq + 1..]))
}

/// The simple command a redirection of the list, pipeline or `!` command `node` belongs to
/// in bash: its last one (through a redirected statement's body), if that is a simple
/// command.
fn last_simple_command(node: Node<'_>) -> Option<Node<'_>> {
    let mut node = node;
    loop {
        node = match node.kind() {
            "list" => list_items(node).pop()?.1,
            "pipeline" | "negated_command" => {
                let mut cursor = node.walk();
                node.named_children(&mut cursor)
                    .filter(|n| n.kind() != "comment")
                    .last()?
            }
            "redirected_statement" => node.child_by_field_name("body")?,
            "command" => return Some(node),
            _ => return None,
        };
    }
}

/// The items of the and-or list `node` in order, each with the operator before it
/// (`Some(true)` for `&&`, `Some(false)` for `||`, `None` for the first): `a && b || c` is
/// `(list (list a b) c)`, flattened so that a long chain does not count as nesting.
fn list_items(node: Node<'_>) -> Vec<(Option<bool>, Node<'_>)> {
    // Last item first.
    let mut pending: Vec<(Option<bool>, Node<'_>)> = Vec::new();
    let mut current = node;
    loop {
        let mut cursor = current.walk();
        let children: Vec<Node<'_>> = current.children(&mut cursor).collect();
        let mut and = None;
        let mut items = Vec::new();
        for c in &children {
            match c.kind() {
                "&&" => and = Some(true),
                "||" => and = Some(false),
                _ if c.is_named() => {
                    items.push((and.take(), *c));
                }
                _ => {}
            }
        }
        match items.split_first() {
            Some(((_, first), rest)) if first.kind() == "list" => {
                pending.extend(rest.iter().rev().copied());
                current = *first;
            }
            _ => {
                pending.extend(items.into_iter().rev());
                break;
            }
        }
    }
    pending.reverse();
    pending
}

/// How a here-document's line goes on after its redirections ([`heredoc_goes_on`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeredocGoesOn {
    /// `| CMD`: the statement is the first stage of a pipeline.
    Pipe,
    /// `&& CMD`: the statement is the first item of a list.
    And,
    /// `|| CMD`.
    Or,
}

/// What the line of the here-document `node` goes on with after its delimiter and
/// redirections, which tree-sitter-bash puts inside the `heredoc_redirect` (`cat <<EOF |
/// sh` is `cat` with a redirection holding the pipeline `sh`): how, and the node (a
/// pipeline of the later stages, or the list's next item). `None` for anything else.
fn heredoc_goes_on(node: Node<'_>) -> Option<(HeredocGoesOn, Node<'_>)> {
    if node.kind() != "heredoc_redirect" {
        return None;
    }
    if let (Some(op), Some(right)) = (
        node.child_by_field_name("operator"),
        node.child_by_field_name("right"),
    ) {
        return match op.kind() {
            "&&" => Some((HeredocGoesOn::And, right)),
            "||" => Some((HeredocGoesOn::Or, right)),
            _ => None,
        };
    }
    let mut cursor = node.walk();
    let pipeline = node
        .named_children(&mut cursor)
        .find(|c| c.kind() == "pipeline");
    pipeline.map(|p| (HeredocGoesOn::Pipe, p))
}

/// How find or xargs give the command they run its input.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fill {
    /// Appended after its words (`xargs CMD`).
    Appended,
    /// Put in place of a placeholder in its words (`find -exec CMD {} ;`, `xargs -I R CMD
    /// R`; [`SimpleCommand::filled_in_place`]); `None` when the placeholder is not known.
    InPlace(Option<String>),
}

enum Inner {
    /// A shell script run by another shell (`bash -c`, `su -c`, `flock -c`).
    Script(String),
    /// A script `eval` runs in the shell itself.
    Eval(String),
    /// A script a builtin runs in the shell itself besides doing its own work (`mapfile -C`'s
    /// callback): analysed like `eval`'s, the builtin itself still checked.
    Callback(String),
    /// A script the shell runs later, on a signal or at exit (`trap`'s action), in a
    /// directory not known here.
    Trap(String),
    /// A string `env -S` splits into a command: analysed as a script, always complex.
    Split(String),
    /// A command with arguments from input at run time (`find -exec`, `xargs`), and how
    /// they are given to it.
    Command(Vec<Word>, Fill),
    /// Something runs that cannot be known.
    Dynamic(String),
    /// A script another shell runs that is not in sight (its standard input, a computed
    /// file name, what xargs appends): like [`Dynamic`](Self::Dynamic), but run by a child,
    /// which sets none of this shell's variables.
    Unseen(String),
    /// A script file the shell itself reads (`source f`, `. f`): what it holds is not
    /// known, as for any script a command runs (`bash f`), but its name is written out.
    ScriptFile(String),
}

/// What a simple command runs, found through its wrappers.
struct Payloads {
    /// What the command found by the wrappers' option tables runs.
    main: Option<Inner>,
    /// What other readings run, when an option was not understood.
    others: Vec<Inner>,
    /// Index of the command found by the option tables.
    start: usize,
    /// Whether every option on the way was understood.
    certain: bool,
}

impl Payloads {
    fn of(words: &[Word]) -> Self {
        let mut found = Self {
            main: None,
            others: Vec::new(),
            start: 0,
            certain: true,
        };
        let mut budget = MAX_READINGS;
        let (start, main) = found.follow(words, &mut budget);
        found.start = start;
        found.main = main;
        found
    }

    /// Follows the wrappers of `words`; returns where the command they run starts and what
    /// it runs. Other readings go to `others`.
    fn follow(&mut self, words: &[Word], budget: &mut usize) -> (usize, Option<Inner>) {
        let mut start = 0;
        for _ in 0..MAX_WRAPPERS {
            let here = &words[start..];
            match wrapper_script(here) {
                Some((true, script)) => {
                    self.certain = false;
                    self.others.push(script.map_or_else(
                        || Inner::Dynamic("`env -S` with a computed string".into()),
                        Inner::Split,
                    ));
                }
                Some((false, script)) => self.others.push(script.map_or_else(
                    || Inner::Dynamic("a wrapper runs a computed shell command string".into()),
                    Inner::Script,
                )),
                None => {}
            }
            let Some((starts, sure)) = wrapped_command_starts(here) else {
                break;
            };
            if let Some(script) = watch_script(here, starts[0]) {
                self.others.push(script);
            }
            if !sure {
                self.certain = false;
                for &alt in &starts[1..] {
                    if *budget == 0 {
                        break;
                    }
                    *budget -= 1;
                    let (_, inner) = self.follow(&here[alt..], budget);
                    self.others.extend(inner);
                }
            }
            start += starts[0];
        }
        let here = &words[start..];
        let (main, others, sure) = payload_of(here);
        self.certain &= sure;
        self.others.extend(others);
        (start, main)
    }
}

/// `watch` runs its command words joined by spaces through `sh -c` (unless `-x`/`--exec`):
/// the script, when `words` is a watch whose command starts at `start`.
fn watch_script(words: &[Word], start: usize) -> Option<Inner> {
    let name = program_of(words)?;
    let options = words.get(1..start)?;
    let exec = options.iter().any(|w| {
        w.value
            .as_deref()
            .is_some_and(|v| short_option_in(v, &['x'], "nqd") || names_long(v, "--exec"))
    });
    if name != "watch" || exec {
        return None;
    }
    let mut script = String::new();
    for w in &words[start..] {
        match &w.value {
            Some(v) => {
                script.push_str(v);
                script.push(' ');
            }
            None => return Some(Inner::Dynamic("`watch` of a computed command".into())),
        }
    }
    Some(Inner::Script(script))
}

/// What `words` itself runs (no wrappers): the script of `bash -c` and `eval`, the command of
/// `find -exec` and `xargs`. Returns the main reading, other readings (xargs options not all
/// understood), and whether the reading is certain.
fn payload_of(words: &[Word]) -> (Option<Inner>, Vec<Inner>, bool) {
    let name = program_of(words).unwrap_or_default();
    let mut args = words.get(1..).unwrap_or_default();
    if NESTED_SHELLS.contains(&name) {
        return shell_script(name, args);
    }
    // The builtins take `--` as the end of their options (`eval -- rm x` runs `rm x`).
    if matches!(name, "eval" | "source" | ".")
        && args.first().and_then(|w| w.value.as_deref()) == Some("--")
    {
        args = &args[1..];
    }
    let main = match name {
        "eval" => {
            let mut script = String::new();
            for a in args {
                match &a.value {
                    Some(v) => {
                        script.push_str(v);
                        script.push(' ');
                    }
                    None => {
                        return (
                            Some(Inner::Dynamic("`eval` of a computed string".into())),
                            Vec::new(),
                            true,
                        );
                    }
                }
            }
            Some(Inner::Eval(script))
        }
        // A file named in the command is a script as `bash f` runs one; standard input, a
        // process substitution or a computed name is a script not in sight.
        "source" | "." => Some(match args.first() {
            Some(w)
                if !w.raw.contains(['$', '`', '(', ')'])
                    && !w.value.as_deref().is_some_and(reads_standard_input) =>
            {
                Inner::ScriptFile(format!("`{name}` runs a script file"))
            }
            _ => Inner::Dynamic(format!("`{name}` runs a script that is not in sight")),
        }),
        // `script -c CMD [FILE]` and `sg GROUP -c CMD` (or `sg GROUP CMD …`) run a shell
        // command string.
        "script" => script_command(args),
        "sg" => sg_command(args),
        "trap" => trap_action(args),
        "mapfile" | "readarray" => mapfile_callback(args),
        "find" => {
            // Every action that runs a command, wherever it is (one may be the value of
            // another primary, `-name -exec`: listing it too only adds a reading). Its
            // command ends at `;`, or at `+` right after `{}`.
            let mut found: Vec<Inner> = Vec::new();
            for (i, a) in args.iter().enumerate() {
                let a = a.value.as_deref().unwrap_or("");
                if matches!(a, "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let rest = &args[i + 1..];
                    let end = exec_end(rest);
                    if end > 0 {
                        found.push(Inner::Command(
                            rest[..end].to_vec(),
                            Fill::InPlace(Some("{}".to_owned())),
                        ));
                    }
                }
            }
            let mut found = found.into_iter();
            let main = found.next();
            return (main, found.collect(), true);
        }
        "xargs" => {
            let read = read_options(words, &XARGS);
            let starts = command_starts(words, read);
            // `-I R` (`-i`, `--replace`): each input line takes R's place.
            let replaces = |s: usize| {
                words[1..s].iter().any(|w| {
                    w.value.as_deref().is_some_and(|v| {
                        super::options::short_bundle_has(v, &['I', 'i'])
                            || super::options::names_long(v, "--replace")
                    })
                })
            };
            let mut readings = starts.iter().map(|&s| {
                let fill = if replaces(s) {
                    Fill::InPlace(xargs_placeholder(&words[1..s]))
                } else {
                    Fill::Appended
                };
                Inner::Command(words[s..].to_vec(), fill)
            });
            // Bare xargs runs echo.
            let main = readings.next();
            return (main, readings.collect(), read.unsure_from.is_none());
        }
        // `sem` is `parallel --semaphore`: it runs its command once, in the background.
        "parallel" | "sem" => return parallel_payload(words),
        "xe" => return xe_payload(words),
        _ => None,
    };
    (main, Vec::new(), true)
}

/// The separators GNU parallel puts between its command and its arguments (`:::`, `:::+`)
/// or the files it reads them from (`::::`, `::::+`).
fn parallel_separator(w: &Word) -> bool {
    matches!(w.value.as_deref(), Some(":::" | ":::+" | "::::" | "::::+"))
}

/// The byte ranges of GNU parallel's replacement strings in `text`: `{}`, `{.}`, `{/}`,
/// `{//}`, `{/.}`, `{#}`, `{%}`, the `--plus` ones (`{..}`, `{+/}`, …), each optionally
/// with a position (`{2}`, `{3/.}`); a `${…}` is the shell's.
fn parallel_replacements(text: &str) -> Vec<(usize, usize)> {
    const FORMS: &[&str] = &[
        "", ".", "/", "//", "/.", "#", "%", "..", "...", "/..", "/...", "+/", "+.", "+..", "+...",
    ];
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = b[i..].iter().position(|&c| c == b'{') {
        let at = i + p;
        i = at + 1;
        if at > 0 && b[at - 1] == b'$' {
            continue;
        }
        let Some(len) = b[at + 1..].iter().take(8).position(|&c| c == b'}') else {
            continue;
        };
        let inner = &text[at + 1..at + 1 + len];
        if FORMS.contains(&inner.trim_start_matches(|c: char| c.is_ascii_digit())) {
            out.push((at, at + len + 2));
            i = at + len + 2;
        }
    }
    out
}

/// Where the argument goes in a script GNU parallel runs, as analysed
/// ([`parallel_payload`]).
const PARALLEL_ARG: &str = "\"$PARALLEL_ARG\"";

/// What GNU parallel runs (`words` starts with `parallel`): its command, the words before
/// `:::`/`::::` (or all of them when its arguments come from its input), run through a shell
/// once for each argument, which takes the place of a replacement string (`{}`, `{.}`, …)
/// or is appended; with no command the arguments themselves are command lines. A command of
/// plain words is checked as xargs's is ([`Inner::Command`]); one with shell syntax is
/// analysed as a script, with `"$PARALLEL_ARG"` where the argument goes (so a command name
/// taken from it is computed). Arguments that are commands are analysed as scripts when
/// written out, else (and wherever several are joined into one command line) what runs is
/// computed; so is what options make it run out of sight (Perl code in `{= … =}` or
/// `--rpl`, `--ssh`, a compress program, a profile, `--shebang`, an SQL queue).
fn parallel_payload(words: &[Word]) -> (Option<Inner>, Vec<Inner>, bool) {
    let read = read_options(words, &PARALLEL);
    let certain = read.unsure_from.is_none();
    let options_end = read.unsure_from.map_or(read.start, |_| words.len());
    let options = words.get(1..options_end).unwrap_or_default();
    let mut found: Vec<Inner> = Vec::new();
    let (mut quote, mut custom_sep, mut several, mut arg_file) = (false, false, false, false);
    let mut replace: Option<Option<String>> = None;
    for w in options {
        let Some(v) = w.value.as_deref() else {
            continue;
        };
        if let Some(long) = long_option_name(&PARALLEL, v) {
            match long {
                "rpl"
                | "parens"
                | "filter"
                | "ssh"
                | "compress-program"
                | "compressprogram"
                | "use-compress-program"
                | "usecompressprogram"
                | "decompress-program"
                | "decompressprogram"
                | "use-decompress-program"
                | "usedecompressprogram"
                | "profile"
                | "shebang"
                | "hashbang"
                | "sql"
                | "sql-master"
                | "sqlmaster"
                | "sql-worker"
                | "sqlworker"
                | "sql-and-worker"
                | "sqlandworker" => {
                    found.push(Inner::Dynamic(format!(
                        "`parallel --{long}` runs code or commands not in sight"
                    )));
                }
                "quote" => quote = true,
                "arg-sep" | "argsep" | "arg-file-sep" | "argfilesep" => custom_sep = true,
                "max-args" | "maxargs" | "max-replace-args" | "maxreplaceargs" | "xargs" => {
                    several = true;
                }
                "arg-file" | "argfile" => arg_file = true,
                _ => {}
            }
        }
    }
    for (c, value) in short_options(options, &PARALLEL) {
        match c {
            'q' => quote = true,
            'J' => found.push(Inner::Dynamic(
                "`parallel -J` reads options from a profile not in sight".into(),
            )),
            'n' | 'N' | 'X' | 'm' | 'L' => several = true,
            'a' => arg_file = true,
            'I' => replace = value,
            _ => {}
        }
    }
    let starts = command_starts(words, read);
    if starts.is_empty() {
        // No command and no separator: the lines of its input (or argument file) are the
        // commands.
        found.push(Inner::Dynamic(
            "`parallel` with no command runs its input as commands".into(),
        ));
    }
    for s in starts {
        let rest = &words[s..];
        let sep = if custom_sep {
            rest.len()
        } else {
            rest.iter()
                .position(parallel_separator)
                .unwrap_or(rest.len())
        };
        let command = &rest[..sep];
        let args = &rest[sep..];
        if command.is_empty() {
            // The arguments are the command lines.
            let groups = args.iter().filter(|w| parallel_separator(w)).count();
            let one_list =
                groups == 1 && args.first().and_then(|w| w.value.as_deref()) == Some(":::");
            for a in args.iter().filter(|w| !parallel_separator(w)) {
                if let Some(v) = &a.value {
                    found.push(Inner::Script(v.clone()));
                }
            }
            if !one_list || several || arg_file || args.iter().any(|w| w.value.is_none()) {
                found.push(Inner::Dynamic(
                    "`parallel` with no command runs its arguments or input as commands".into(),
                ));
            }
            continue;
        }
        found.extend(parallel_command(command, quote, replace.as_ref()));
    }
    let mut found = found.into_iter();
    let main = found.next();
    (main, found.collect(), certain)
}

/// What runs for GNU parallel's command `command` ([`parallel_payload`]): with `--quote`
/// its words as they are; else their text joined with blanks, run by a shell. `replace`:
/// the `-I` replacement string given (`Some(None)`: computed).
fn parallel_command(command: &[Word], quote: bool, replace: Option<&Option<String>>) -> Vec<Inner> {
    let values: Option<Vec<&str>> = command.iter().map(|w| w.value.as_deref()).collect();
    let Some(values) = values else {
        return vec![Inner::Dynamic(
            "`parallel` runs a computed command line through a shell".into(),
        )];
    };
    let text = values.join(" ");
    if text.contains("{=") {
        return vec![Inner::Dynamic(
            "`parallel` runs Perl code in a replacement string `{= … =}`".into(),
        )];
    }
    let mut ranges = parallel_replacements(&text);
    match replace {
        Some(Some(r)) if !r.is_empty() => {
            ranges.extend(
                text.match_indices(r.as_str())
                    .map(|(at, m)| (at, at + m.len())),
            );
            ranges.sort_unstable();
        }
        Some(None) => {
            return vec![Inner::Dynamic(
                "`parallel -I` with a computed replacement string".into(),
            )];
        }
        _ => {}
    }
    let placeholder = replace
        .and_then(Option::as_deref)
        .filter(|r| !r.is_empty())
        .unwrap_or("{");
    let fill = if ranges.is_empty() {
        Fill::Appended
    } else {
        Fill::InPlace(Some(placeholder.to_owned()))
    };
    if quote {
        return vec![Inner::Command(command.to_vec(), fill)];
    }
    // Plain words (replacement strings aside) read the same split on blanks as the shell
    // reads them: checked as xargs's command is.
    let mut stripped = text.clone();
    for &(a, b) in ranges.iter().rev() {
        if b <= stripped.len() && a <= b {
            stripped.replace_range(a..b, "");
        }
    }
    let plain = stripped.chars().all(|c| {
        c.is_ascii_alphanumeric()
            || c.is_whitespace()
            || matches!(c, '_' | '.' | '/' | ':' | '@' | '%' | '+' | '-')
    });
    if plain && !text.contains('\n') {
        let split = text
            .split_whitespace()
            .map(|piece| Word {
                raw: piece.to_owned(),
                value: Some(piece.to_owned()),
                plain: true,
                glob: false,
            })
            .collect();
        return vec![Inner::Command(split, fill)];
    }
    // Shell syntax: the script the shell runs, the argument standing where it goes.
    let mut script = String::with_capacity(text.len() + 16);
    let mut at = 0;
    for &(a, b) in &ranges {
        if a < at {
            continue;
        }
        script.push_str(&text[at..a]);
        script.push_str(PARALLEL_ARG);
        at = b;
    }
    script.push_str(&text[at..]);
    if ranges.is_empty() {
        script.push(' ');
        script.push_str(PARALLEL_ARG);
    }
    vec![Inner::Script(script)]
}

/// What xe runs (`words` starts with `xe`): `-s SCRIPT` through `sh -c`; in `-p` mode the
/// command of each `PATTERN COMMAND… +` group, whose words `%` and the argument fill (what
/// runs is taken from the input); else the words after its options (up to `--` with `-a`,
/// the separator with `-A`), the argument in place of the first word equal to the
/// replacement string (`-I`, `{}` by default) or appended, as xargs's command. With no
/// command it runs `printf`.
fn xe_payload(words: &[Word]) -> (Option<Inner>, Vec<Inner>, bool) {
    let read = read_options(words, &XE);
    let certain = read.unsure_from.is_none();
    let options = words.get(1..read.start).unwrap_or_default();
    let (mut script, mut pattern, mut args_after_dashes) = (None, false, false);
    let mut separator: Option<Option<String>> = None;
    let mut replace = Some("{}".to_owned());
    for (c, value) in short_options(options, &XE) {
        match (c, value) {
            ('s', Some(v)) => script = Some(v),
            ('p', _) => pattern = true,
            ('a', _) => args_after_dashes = true,
            ('A', Some(v)) => separator = Some(v),
            ('I', Some(v)) => replace = v,
            _ => {}
        }
    }
    let mut found: Vec<Inner> = Vec::new();
    if let Some(script) = script {
        found.push(script.map_or_else(
            || Inner::Dynamic("`xe -s` with a computed script".into()),
            Inner::Script,
        ));
    } else {
        for s in command_starts(words, read) {
            let rest = &words[s..];
            if pattern {
                for group in rest.split(|w| w.value.as_deref() == Some("+")) {
                    if let Some(command) = group.get(1..).filter(|c| !c.is_empty()) {
                        found.push(Inner::Command(command.to_vec(), Fill::InPlace(None)));
                    }
                }
                continue;
            }
            let end = if args_after_dashes {
                rest.iter()
                    .position(|w| w.value.as_deref() == Some("--"))
                    .unwrap_or(rest.len())
            } else if let Some(sep) = &separator {
                match sep {
                    Some(sep) => rest
                        .iter()
                        .position(|w| w.value.as_deref() == Some(sep.as_str()))
                        .unwrap_or(rest.len()),
                    None => rest.len(),
                }
            } else {
                rest.len()
            };
            let command = &rest[..end];
            if command.is_empty() {
                continue;
            }
            let fill = match &replace {
                None => Fill::InPlace(None),
                Some(r)
                    if !r.is_empty() && command.iter().any(|w| w.value.as_deref() == Some(r)) =>
                {
                    Fill::InPlace(Some(r.clone()))
                }
                Some(_) => Fill::Appended,
            };
            found.push(Inner::Command(command.to_vec(), fill));
        }
    }
    let mut found = found.into_iter();
    let main = found.next();
    (main, found.collect(), certain)
}

/// The placeholder `-I R`, `-iR`, `-i` or `--replace[=R]` sets among xargs's `options` (the
/// last one given; `{}` when `-i` or `--replace` has no value); `None` when there is none or
/// it is computed.
fn xargs_placeholder(options: &[Word]) -> Option<String> {
    let mut found = None;
    let mut i = 0;
    while let Some(w) = options.get(i) {
        i += 1;
        let Some(v) = w.value.as_deref() else {
            continue;
        };
        if v == "--" {
            break;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (name, value) = long
                .split_once('=')
                .map_or((long, None), |(n, v)| (n, Some(v)));
            if names_long(v, "--replace") {
                found = Some(value.unwrap_or("{}").to_owned());
            } else if value.is_none()
                && !name.is_empty()
                && XARGS.long_value.iter().any(|l| l.starts_with(name))
            {
                i += 1;
            }
            continue;
        }
        let Some(bundle) = v.strip_prefix('-') else {
            continue;
        };
        for (k, c) in bundle.char_indices() {
            let rest = &bundle[k + c.len_utf8()..];
            match c {
                'I' if rest.is_empty() => {
                    found = options.get(i).and_then(|w| w.value.clone());
                    i += 1;
                }
                'I' | 'i' if !rest.is_empty() => found = Some(rest.to_owned()),
                'i' => found = Some("{}".to_owned()),
                c if XARGS.short_value.contains(c) && rest.is_empty() => i += 1,
                c if XARGS.short_value.contains(c) || XARGS.short_optional.contains(c) => {}
                _ => continue,
            }
            break;
        }
    }
    found
}

/// Programs whose first argument is never a subcommand (a file, a pattern, a mode, a
/// process): their input may supply it without naming what runs.
const NO_SUBCOMMAND: &[&str] = &[
    "rm",
    "rmdir",
    "mkdir",
    "touch",
    "cp",
    "mv",
    "ln",
    "chmod",
    "chown",
    "chgrp",
    "unlink",
    "shred",
    "truncate",
    "kill",
    "gzip",
    "gunzip",
    "bzip2",
    "bunzip2",
    "xz",
    "unxz",
    "zstd",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "file",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "cksum",
    "echo",
    "printf",
    "dos2unix",
    "unix2dos",
];

/// Why a command asks when find/xargs take a subcommand from their input (see
/// [`Analysis::subcommand_from_input`]).
pub const INPUT_SUBCOMMAND: &str = "find/xargs take the subcommand of the program they run from their input (no subcommand written after it, or the placeholder where it goes)";

/// Why what a command find or xargs run (`words`, the command its wrappers run starting at
/// `start`) runs is taken from their input: the command's name — a wrapper or xargs with no
/// command written after it (`xargs env`, `xargs nice -n 5`, `xargs timeout 5`, `xargs
/// sudo`, `xargs xargs`), or the placeholder where the command goes (`xargs -I% env %`) —
/// or its subcommand: no word after the program that is surely its subcommand (`xargs
/// git`, `xargs git -C dir`), or the placeholder where one may be (`xargs -I{} git {}`),
/// unless the program takes no subcommand (a read-only command, `rm`, `touch`, ...).
/// `outer` are the placeholders of the find/xargs this one runs under. `None` when both are
/// written out.
fn input_supplies_command(
    words: &[Word],
    start: usize,
    fill: &Fill,
    outer: &[Option<String>],
) -> Option<&'static str> {
    const NAME: &str = "find/xargs take the command they run from their input (a wrapper with no command after it, or the placeholder where the command goes)";
    const SUBCOMMAND: &str = INPUT_SUBCOMMAND;
    const PROGRAM: &str = "find/xargs give the program they run words from their input that may make it run another program (`find -exec`, `rg --pre`, `sort --compress-program`)";
    // git's global options from input (`-c alias.x='!rm v'`) run any program: computed
    // under any rule, as `xargs find .` is.
    const GIT: &str = "find/xargs give git its subcommand or global options from their input (`-c alias.x='!cmd'` runs any program)";
    let placeholders: Vec<&Option<String>> = match fill {
        Fill::InPlace(p) => outer.iter().chain(std::iter::once(p)).collect(),
        Fill::Appended => outer.iter().collect(),
    };
    let holds = |w: &Word| {
        let text = w.value.as_deref().unwrap_or(&w.raw);
        placeholders
            .iter()
            .any(|p| p.as_deref().is_none_or(|p| text.contains(p)))
    };
    let appended = *fill == Fill::Appended;
    let run = words.get(start..).unwrap_or_default();
    let Some(first) = run.first() else {
        return Some(NAME);
    };
    if holds(first) {
        return Some(NAME);
    }
    let name = basename(first.value.as_deref()?);
    if appended {
        if let Some(spec) = super::options::wrapper_spec(name) {
            let read = read_options(run, spec);
            // A script position past the written words (`env -S`, `flock FILE -c` with
            // nothing after) is the first word the input appends.
            if (read.start >= run.len() && read.script.is_none() && !read.lookup)
                || read.script.is_some_and(|(i, _)| i >= run.len())
            {
                return Some(NAME);
            }
        }
        if name == "xargs" && command_starts(run, read_options(run, &XARGS)).is_empty() {
            return Some(NAME);
        }
    }
    if runs_what_input_gives(run, name, appended, &holds) {
        return Some(PROGRAM);
    }
    if NO_SUBCOMMAND.contains(&name) || super::commands::is_read_only(&run[..1]) {
        return None;
    }
    // The program's leading options, and words that may be their values, come before the
    // subcommand; the first word that is surely not one of them is the subcommand.
    let subcommand = if name == "git" { GIT } else { SUBCOMMAND };
    let mut after_option = false;
    for w in &run[1..] {
        if holds(w) {
            return Some(subcommand);
        }
        match w.value.as_deref() {
            Some("--") => after_option = false,
            Some(v) if v.len() > 1 && v.starts_with(['-', '+']) => after_option = !v.contains('='),
            _ if after_option => after_option = false,
            _ => return None,
        }
    }
    appended.then_some(subcommand)
}

/// Whether the program `run` (named `name`) that find/xargs run may run a program the words
/// from their input give it: find or fd given words appended (`-exec CMD ;`, `--exec CMD`:
/// a placeholder fills in one word only, which cannot hold a whole `-exec`), or a program
/// that runs a program an option or its script names ([`runs_a_program_it_is_given`]:
/// `rg --pre`, `sort --compress-program`, `sed 'e …'`, `awk '{system(…)}'`, `tar
/// --to-command`) given words appended or a word that holds a placeholder (`holds`), which
/// counts as computed.
///
/// [`runs_a_program_it_is_given`]: super::commands::runs_a_program_it_is_given
fn runs_what_input_gives(
    run: &[Word],
    name: &str,
    appended: bool,
    holds: &dyn Fn(&Word) -> bool,
) -> bool {
    if appended && matches!(name, "find" | "gfind" | "fd" | "fdfind") {
        return true;
    }
    if !appended && !run[1..].iter().any(holds) {
        return false;
    }
    let computed = || Word {
        raw: "\"$INPUT\"".to_owned(),
        value: None,
        plain: false,
        glob: false,
    };
    let mut filled: Vec<Word> = std::iter::once(run[0].clone())
        .chain(
            run[1..]
                .iter()
                .map(|w| if holds(w) { computed() } else { w.clone() }),
        )
        .collect();
    if appended {
        filled.push(computed());
    }
    super::commands::runs_a_program_it_is_given(&filled)
}

/// The action `trap [-lpP] [--] [ACTION] SIGNAL...` sets: its first operand, unless it only
/// lists or prints (`-l`, `-p`), or resets (`-`) or ignores (`''`) the signals.
fn trap_action(args: &[Word]) -> Option<Inner> {
    let mut rest = args;
    match rest.first().and_then(|w| w.value.as_deref()) {
        Some("--") => rest = &rest[1..],
        // Lists the signals or prints the traps: sets nothing.
        Some(v)
            if v.len() > 1
                && v.starts_with('-')
                && v[1..].chars().all(|c| matches!(c, 'l' | 'p' | 'P')) =>
        {
            return None;
        }
        _ => {}
    }
    match rest.first().map(|w| w.value.as_deref()) {
        None | Some(Some("" | "-")) => None,
        Some(Some(action)) => Some(Inner::Trap(action.to_owned())),
        Some(None) => Some(Inner::Dynamic("`trap` with a computed action".into())),
    }
}

/// The callback of `mapfile`/`readarray` (`-C CALLBACK`, evaluated with the index and the
/// line appended), in any spelling the builtin's getopt accepts (`-tC'cmd'`, `-C cmd`); the
/// last one given, as bash keeps.
fn mapfile_callback(args: &[Word]) -> Option<Inner> {
    let computed = || Some(Inner::Dynamic("`mapfile` with a computed option".into()));
    // bash keeps the last `-C` given.
    let mut callback: Option<&str> = None;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let Some(v) = w.value.as_deref() else {
            return computed();
        };
        if v == "--" || v.len() < 2 || !v.starts_with('-') {
            break;
        }
        i += 1;
        for (k, c) in v.char_indices().skip(1) {
            if !"dnOsuCc".contains(c) {
                continue;
            }
            // The option's value: the rest of the word, or the next word.
            let value = match &v[k + c.len_utf8()..] {
                "" => {
                    i += 1;
                    match args.get(i - 1).map(|w| w.value.as_deref()) {
                        Some(Some(next)) => next,
                        Some(None) => return computed(),
                        None => return None,
                    }
                }
                rest => rest,
            };
            if c == 'C' {
                callback = Some(value);
            }
            break;
        }
    }
    callback.map(|c| Inner::Callback(c.to_owned()))
}

/// What `script ARGS` runs: the `-c`/`--command` string (`script -qc 'make' /dev/null`,
/// also after the file, as getopt permutes), reading `script`'s options that take a value
/// (`-E never`, `-O log`, `--log-out log`); nothing seen otherwise (an interactive shell,
/// reading the Bash tool's empty input). A computed word may be `-c`: computed.
fn script_command(args: &[Word]) -> Option<Inner> {
    const SHORT_VALUES: &str = "EOIBTmo";
    const LONG_VALUES: &[&str] = &[
        "--echo",
        "--log-out",
        "--log-in",
        "--log-io",
        "--log-timing",
        "--logging-format",
        "--output-limit",
        "--timing",
    ];
    let found = |v: Option<String>| {
        Some(match v {
            Some(script) => Inner::Script(script),
            None => Inner::Dynamic("`script -c` of a computed command".into()),
        })
    };
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        let Some(a) = w.value.as_deref() else {
            return Some(Inner::Dynamic("`script` with a computed word".into()));
        };
        if a == "--" {
            return None;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (format!("--{n}"), Some(v.to_owned())),
                None => (a.to_owned(), None),
            };
            if names_long_option(&name, "--command") {
                return found(value.or_else(|| args.get(i).and_then(|w| w.value.clone())));
            }
            if value.is_none() && LONG_VALUES.iter().any(|l| names_long_option(&name, l)) {
                i += 1;
            }
            continue;
        }
        let Some(bundle) = a.strip_prefix('-').filter(|b| !b.is_empty()) else {
            continue;
        };
        for (k, c) in bundle.char_indices() {
            let rest = &bundle[k + c.len_utf8()..];
            if c == 'c' {
                return found(if rest.is_empty() {
                    args.get(i).and_then(|w| w.value.clone())
                } else {
                    Some(rest.to_owned())
                });
            }
            if SHORT_VALUES.contains(c) {
                if rest.is_empty() {
                    i += 1;
                }
                break;
            }
        }
    }
    None
}

/// What `sg GROUP [-c] COMMAND` runs: a shell command string (the words after the group).
fn sg_command(args: &[Word]) -> Option<Inner> {
    let args = match args.first().and_then(|w| w.value.as_deref()) {
        Some("-") => &args[1..],
        _ => args,
    };
    let rest = args.get(1..).filter(|r| !r.is_empty())?;
    let rest = match rest.first().and_then(|w| w.value.as_deref()) {
        Some("-c") => &rest[1..],
        _ => rest,
    };
    let mut script = String::new();
    for w in rest {
        match &w.value {
            Some(v) => {
                script.push_str(v);
                script.push(' ');
            }
            None => return Some(Inner::Dynamic("`sg` of a computed command".into())),
        }
    }
    Some(Inner::Script(script))
}

/// Whether `arg` is the long option `long` or an abbreviation of it (no `=value`).
fn names_long_option(arg: &str, long: &str) -> bool {
    arg.len() > 2 && arg.starts_with("--") && long.starts_with(arg)
}

/// The script a shell runs with `-c`: the first operand after all options (`bash -c -e
/// 'cmd'`, `bash -o pipefail -c 'cmd'`, `bash --rcfile F -c 'cmd'`). `None` when it runs a
/// script file or stdin. A computed word among the options could be `-c`, and a startup file
/// it is given (`--rcfile F`) runs code besides the script: the reading is then uncertain,
/// and the first operand is analysed as a script anyway (for deny rules).
fn shell_script(name: &str, args: &[Word]) -> (Option<Inner>, Vec<Inner>, bool) {
    let mut i = 0;
    let mut dash_c = false;
    let mut from_stdin = false;
    let mut sure = true;
    while let Some(w) = args.get(i) {
        let Some(a) = w.value.as_deref() else {
            sure = false;
            i += 1;
            continue;
        };
        if a == "--" || a == "-" {
            from_stdin |= a == "-";
            i += 1;
            break;
        }
        if matches!(a, "--version" | "--help") {
            // Prints and exits: runs no script.
            return (None, Vec::new(), true);
        }
        if let Some(long) = a.strip_prefix("--") {
            // A startup file named on the command line (`--rcfile F -i`) runs before the
            // script: what the shell runs is then not only the script. (The user's own
            // startup files, of `-i` or `--login`, are not the command's doing.)
            sure &= matches!(
                long,
                "norc" | "noprofile" | "login" | "posix" | "restricted" | "verbose" | "noediting"
            );
            i += if matches!(long, "rcfile" | "init-file") {
                2
            } else {
                1
            };
            continue;
        }
        if let Some(letters) = a.strip_prefix('-').or_else(|| a.strip_prefix('+')) {
            dash_c |= a.starts_with('-') && letters.contains('c');
            from_stdin |= a.starts_with('-') && letters.contains('s');
            i += 1 + letters.chars().filter(|c| matches!(c, 'o' | 'O')).count();
            continue;
        }
        break;
    }
    // Without `-c` and without a script file (`bash`, `bash -s`, `sh -`, `bash
    // /dev/stdin`), the shell runs what its standard input holds: a here-document, a pipe
    // (`echo 'rm x' | sh`), not seen here.
    from_stdin |= args
        .get(i)
        .is_none_or(|w| w.value.as_deref().is_some_and(reads_standard_input));
    // A script file whose name is computed (`bash -- "$y"`) is not in sight either.
    if !dash_c && args.get(i).is_some_and(|w| w.value.is_none()) {
        return (
            Some(Inner::Unseen(format!(
                "`{name}` runs a script whose name is computed"
            ))),
            Vec::new(),
            sure,
        );
    }
    if !dash_c && from_stdin {
        return (
            Some(Inner::Unseen(format!(
                "`{name}` runs the script its standard input holds"
            ))),
            Vec::new(),
            sure,
        );
    }
    let operand = match args.get(i) {
        Some(w) => Some(match &w.value {
            Some(script) => Inner::Script(script.clone()),
            None => Inner::Dynamic(format!("`{name} -c` with a computed script")),
        }),
        // `xargs sh -c`: the script is what xargs appends.
        None if dash_c => Some(Inner::Unseen(format!(
            "`{name} -c` without a script in sight (one appended at run time)"
        ))),
        None => None,
    };
    match (dash_c, sure) {
        (true, _) => (operand, Vec::new(), sure),
        (false, true) => (None, Vec::new(), true),
        (false, false) => (None, operand.into_iter().collect(), false),
    }
}

/// Whether `words` run git configured to run a program: by its `-c` options
/// ([`git_configured`](super::commands::git_configured)), or by `assignments` before it
/// (`GIT_PAGER='…'`, `GIT_SSH_COMMAND`, `GIT_CONFIG_*`, …; a pager or editor of `cat`,
/// `less`, `more`, `true` or `:` runs nothing else).
fn git_runs_configured(words: &[Word], assignments: &[&Assignment], any_variable: bool) -> bool {
    if words.first().and_then(|w| w.value.as_deref()).map(basename) != Some("git") {
        return false;
    }
    super::commands::git_configured(words)
        || any_variable
        || assignments.iter().any(|a| {
            let harmless =
                super::commands::harmless_program(a.raw.split_once('=').map_or("", |(_, v)| v));
            a.name.starts_with("GIT_CONFIG")
                || matches!(
                    a.name.as_str(),
                    "GIT_SSH"
                        | "GIT_SSH_COMMAND"
                        | "GIT_EXTERNAL_DIFF"
                        | "GIT_ASKPASS"
                        | "GIT_EXEC_PATH"
                        | "GIT_PROXY_COMMAND"
                )
                || (matches!(
                    a.name.as_str(),
                    "GIT_PAGER"
                        | "PAGER"
                        | "GIT_EDITOR"
                        | "GIT_SEQUENCE_EDITOR"
                        | "EDITOR"
                        | "VISUAL"
                ) && !harmless)
        })
}

/// The variables the wrappers before a command set in its environment (`env VAR=… git`,
/// `sudo VAR=… git`): every word of theirs that has the form of an assignment.
fn wrapper_assignments(wrappers: &[Word]) -> Vec<Assignment> {
    wrappers
        .iter()
        .skip(1)
        .filter_map(|w| {
            let value = w.value.as_deref()?;
            let (name, _) = value.split_once('=')?;
            let ident = !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            ident.then(|| Assignment {
                name: name.to_owned(),
                raw: value.to_owned(),
                safe_value: false,
            })
        })
        .collect()
}

/// Whether `env` is among the wrappers with a computed word that may be an assignment
/// (`env "$v" git`): it may set any variable.
fn env_computed(wrappers: &[Word]) -> bool {
    wrappers
        .iter()
        .any(|w| w.value.as_deref().map(basename) == Some("env"))
        && wrappers.iter().any(|w| w.value.is_none())
}

/// Whether a script path is the process's own standard input (`/dev/stdin`, `/dev/fd/0`,
/// `/proc/self/fd/0`).
fn reads_standard_input(path: &str) -> bool {
    matches!(
        path,
        "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0" | "/proc/thread-self/fd/0"
    )
}

/// The last path component of a command name (`/bin/rm` -> `rm`).
pub fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// The parameters the shell word `raw` expands outside double quotes (`$X`, `${X}`,
/// `${a[@]}`, `${X%.c}`, `pre$X`), and inside them too with `quoted`, by name (`@`, `1` for
/// the special and positional ones); `None` for an indirect one (`${!x}`), which may be any.
/// Those in single quotes or after a backslash are none, nor is a command substitution
/// (`$(…)`, `` `…` ``).
fn expanded_parameters(raw: &str, quoted: bool) -> Vec<Option<String>> {
    let chars: Vec<char> = raw.chars().collect();
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut in_double = false;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '\'' if !in_double => {
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            }
            '"' => {
                in_double = !in_double;
                i += 1;
            }
            '`' => {
                i += 1;
                while i < chars.len() && chars[i] != '`' {
                    if chars[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            '$' => {
                let Some(&next) = chars.get(i + 1) else {
                    break;
                };
                match next {
                    // A command substitution or arithmetic: skipped whole.
                    '(' => {
                        let mut depth = 0usize;
                        i += 1;
                        while i < chars.len() {
                            match chars[i] {
                                '(' => depth += 1,
                                ')' => {
                                    depth = depth.saturating_sub(1);
                                    if depth == 0 {
                                        break;
                                    }
                                }
                                _ => {}
                            }
                            i += 1;
                        }
                        i += 1;
                    }
                    '{' => {
                        let start = i + 2;
                        let mut depth = 1usize;
                        let mut end = start;
                        while end < chars.len() {
                            match chars[end] {
                                '{' => depth += 1,
                                '}' => {
                                    depth -= 1;
                                    if depth == 0 {
                                        break;
                                    }
                                }
                                _ => {}
                            }
                            end += 1;
                        }
                        if quoted || !in_double {
                            let inner: String = chars[start..end.min(chars.len())].iter().collect();
                            if inner.starts_with('!') && inner.len() > 1 {
                                out.push(None);
                            } else {
                                let inner = inner
                                    .strip_prefix('#')
                                    .filter(|r| !r.is_empty())
                                    .map_or(inner.as_str(), |_| "");
                                let name: String = match inner.chars().next() {
                                    Some(c) if c.is_ascii_digit() => {
                                        inner.chars().take_while(char::is_ascii_digit).collect()
                                    }
                                    Some(c) if ident(c) => {
                                        inner.chars().take_while(|c| ident(*c)).collect()
                                    }
                                    Some(c) if "@*#?-$!".contains(c) => c.to_string(),
                                    _ => String::new(),
                                };
                                if !name.is_empty() {
                                    out.push(Some(name));
                                }
                            }
                        }
                        i = end + 1;
                    }
                    // `$'…'`, `$"…"`: quoted text.
                    '\'' | '"' => i += 1,
                    c if ident(c) && !c.is_ascii_digit() => {
                        let end = chars[i + 1..]
                            .iter()
                            .position(|c| !ident(*c))
                            .map_or(chars.len(), |p| i + 1 + p);
                        if quoted || !in_double {
                            out.push(Some(chars[i + 1..end].iter().collect()));
                        }
                        i = end;
                    }
                    c if c.is_ascii_digit() || "@*#?-$!".contains(c) => {
                        if quoted || !in_double {
                            out.push(Some(c.to_string()));
                        }
                        i += 2;
                    }
                    _ => i += 1,
                }
            }
            _ => i += 1,
        }
    }
    out
}

/// Whether the shell word `raw` holds a glob character bash does not expand where it stands
/// (quoted or escaped: `'a*'`, `"a*"`, `a\*`), which a variable it is given then holds. An
/// unquoted one (`"$d"/*`) expands to the names it finds.
fn holds_unexpanded_glob(raw: &str) -> bool {
    let mut chars = raw.chars();
    let (mut single, mut double) = (false, false);
    while let Some(c) = chars.next() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '\\' if !single && chars.next().is_some_and(|d| matches!(d, '*' | '?' | '[')) => {
                return true;
            }
            '*' | '?' | '[' if single || double => return true,
            _ => {}
        }
    }
    false
}

/// Marks as a glob ([`Word::glob`]) each word after a command's name that expands, outside
/// double quotes, a variable that may hold a glob ([`Analysis::glob_vars`], or
/// [`Analysis::values`] with one): bash splits and expands it (`X='secrets/*'; echo $X`
/// lists `secrets`). An indirect expansion (`${!x}`) may be any of them.
fn mark_expanded_globs(analysis: &mut Analysis) {
    let globbing = |v: &String| v.contains(['*', '?', '[']);
    let may_glob = |name: &Option<String>| match name {
        Some(n) => match analysis.values.get(n) {
            Some(values) => values.iter().any(globbing),
            None => analysis.glob_vars.contains(n),
        },
        None => !analysis.glob_vars.is_empty() || analysis.values.values().flatten().any(globbing),
    };
    let mut marked = Vec::new();
    for (c, cmd) in analysis.commands.iter().enumerate() {
        for (i, w) in cmd.words.iter().enumerate().skip(1) {
            if !w.glob
                && w.value.is_none()
                && expanded_parameters(&w.raw, false).iter().any(may_glob)
            {
                marked.push((c, i));
            }
        }
    }
    for (c, i) in marked {
        analysis.commands[c].words[i].glob = true;
    }
}

fn first_word(s: &str) -> &str {
    s.split_whitespace().next().unwrap_or("")
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// Whether `text` holds a line break other than a backslash-newline continuation (which
/// bash removes before it splits words). A carriage return is none: bash takes it for a
/// word character (and the parser too, [`parser_text`]); after a backslash it is an escaped
/// carriage return, so the line feed after it does end the line.
fn has_line_break(text: &str) -> bool {
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '\n' => return true,
            _ => {}
        }
    }
    false
}

/// Whether a here-document's delimiter (its `heredoc_start`) is quoted (`'EOF'`, `"EOF"`,
/// `\EOF`, `E'O'F`): its body is then literal text, else bash expands it.
fn quoted_delimiter(start: &str) -> bool {
    start.contains(['\'', '"', '\\'])
}

/// A here-document's delimiter word as bash reads it ([`heredoc_word`]).
#[derive(Debug, Clone, PartialEq, Eq)]
struct HeredocWord {
    /// The delimiter: the word after quote removal (bash expands nothing else in it).
    delimiter: Vec<u8>,
    /// Whether any part of the word is quoted or escaped: the body is then literal text.
    quoted: bool,
    /// How many bytes of the text the word takes.
    len: usize,
}

/// The here-document delimiter word at the start of `text` (what follows `<<` or `<<-` and
/// the blanks after it), as bash reads it: the word ends at an unquoted blank, line break or
/// metacharacter (`;&|<>()`), and its delimiter is the word after quote removal — `E"O"F`,
/// `E'O'F`, `E""OF`, `\EOF`, `$'EOF'` and `$"EOF"` are all `EOF` (`$'…'` decoded as bash
/// decodes it), and any quoting makes the body literal. `None` for what this reading does
/// not follow (bash may read it otherwise than the parser, so the caller treats it as a
/// misread): an empty word, a backslash-newline, a line break inside quotes, a substitution
/// (`$(`, `${`, `$[`, a backtick), a word starting with `#`.
fn heredoc_word(text: &[u8]) -> Option<HeredocWord> {
    /// The rest of a double-quoted part from `from` (after its `"`) into `out`: a backslash
    /// is removed before `$`, `` ` ``, `"` and `\` only. Returns where the part ends.
    fn double_quoted(b: &[u8], from: usize, out: &mut Vec<u8>) -> Option<usize> {
        let mut j = from;
        loop {
            match *b.get(j)? {
                b'"' => return Some(j + 1),
                b'\\' => {
                    let next = *b.get(j + 1)?;
                    match next {
                        b'$' | b'`' | b'"' | b'\\' => out.push(next),
                        b'\n' => return None,
                        _ => out.extend_from_slice(&[b'\\', next]),
                    }
                    j += 2;
                }
                b'$' if matches!(b.get(j + 1), Some(b'(' | b'{' | b'[')) => return None,
                b'`' | b'\n' => return None,
                c => {
                    out.push(c);
                    j += 1;
                }
            }
        }
    }
    if text.first() == Some(&b'#') {
        return None;
    }
    let mut delimiter = Vec::new();
    let mut quoted = false;
    let mut i = 0;
    while let Some(&c) = text.get(i) {
        match c {
            b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' => break,
            b'\\' => {
                let next = *text.get(i + 1)?;
                if next == b'\n' {
                    return None;
                }
                delimiter.push(next);
                quoted = true;
                i += 2;
            }
            b'\'' => {
                let len = text.get(i + 1..)?.iter().position(|&b| b == b'\'')?;
                delimiter.extend_from_slice(&text[i + 1..i + 1 + len]);
                quoted = true;
                i += len + 2;
            }
            b'"' => {
                i = double_quoted(text, i + 1, &mut delimiter)?;
                quoted = true;
            }
            b'$' if text.get(i + 1) == Some(&b'\'') => {
                let mut j = i + 2;
                loop {
                    match *text.get(j)? {
                        b'\\' => j += 2,
                        b'\'' => break,
                        _ => j += 1,
                    }
                }
                let inner = std::str::from_utf8(text.get(i + 2..j)?).ok()?;
                delimiter.extend_from_slice(decode_ansi_c(inner)?.as_bytes());
                quoted = true;
                i = j + 1;
            }
            b'$' if text.get(i + 1) == Some(&b'"') => {
                i = double_quoted(text, i + 2, &mut delimiter)?;
                quoted = true;
            }
            b'$' if matches!(text.get(i + 1), Some(b'(' | b'{' | b'[')) => return None,
            b'`' => return None,
            _ => {
                delimiter.push(c);
                i += 1;
            }
        }
    }
    (!delimiter.is_empty() && !delimiter.contains(&b'\n')).then_some(HeredocWord {
        delimiter,
        quoted,
        len: i,
    })
}

/// Where bash ends a here-document ([`bash_heredoc_end`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BashEnd {
    /// At the delimiter spanning this byte range (after the tabs `<<-` strips).
    At(usize, usize),
    /// No line ends it: the body runs to the end of the text.
    Unterminated,
    /// At a line it joined across a backslash-newline, which the parser never does.
    Joined,
}

/// Where bash ends a here-document whose body starts at `from`: the byte range of the
/// delimiter on the line that ends it (after the tabs `<<-` strips), as the parser's
/// `heredoc_end` should span it. A line of an unquoted here-document that ends in an odd
/// number of backslashes is joined with the next, as bash joins it; inside `$(…)` or `<(…)`
/// a line that starts with the delimiter and has a `)` after it ends the body too (bash's
/// backward compatibility).
fn bash_heredoc_end(
    src: &[u8],
    from: usize,
    word: &HeredocWord,
    dash: bool,
    in_substitution: bool,
) -> BashEnd {
    let delimiter = word.delimiter.as_slice();
    let mut i = from;
    while i < src.len() {
        let line_start = i;
        let mut line = Vec::new();
        let mut joined = false;
        loop {
            let newline = src[i..].iter().position(|&c| c == b'\n').map(|p| i + p);
            let seg_end = newline.unwrap_or(src.len());
            let seg = &src[i..seg_end];
            let backslashes = seg.iter().rev().take_while(|&&c| c == b'\\').count();
            if !word.quoted && backslashes % 2 == 1 && newline.is_some() {
                line.extend_from_slice(&seg[..seg.len() - 1]);
                joined = true;
                i = seg_end + 1;
                continue;
            }
            line.extend_from_slice(seg);
            i = newline.map_or(src.len(), |n| n + 1);
            break;
        }
        let tabs = if dash {
            line.iter().take_while(|&&c| c == b'\t').count()
        } else {
            0
        };
        let content = &line[tabs..];
        let ends = content == delimiter
            || (in_substitution
                && content.starts_with(delimiter)
                && content[delimiter.len()..].contains(&b')'));
        if ends {
            if joined {
                return BashEnd::Joined;
            }
            let at = line_start + tabs;
            return BashEnd::At(at, at + delimiter.len());
        }
    }
    BashEnd::Unterminated
}

/// The delimiter tree-sitter-bash's scanner takes from the word at the start of `text`
/// (its `advance_word`): a leading `'` or `"` quotes up to the same quote (or a line end), else
/// the word runs to the next blank; a backslash takes the byte after it as it is. No other
/// quote removal: `E"O"F` stays `E"O"F`, `"E"OF` is `E`, and `EOF)` is `EOF)`.
fn parser_heredoc_delimiter(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let quote = text.first().copied().filter(|&c| c == b'\'' || c == b'"');
    let mut i = usize::from(quote.is_some());
    while let Some(&c) = text.get(i) {
        let stop = match quote {
            // (A carriage return, vertical tab or form feed is a `z` in the parser's text,
            // but for a carriage return that ends the line: [`parser_text`].)
            Some(q) => c == q || c == b'\n' || (c == b'\r' && text.get(i + 1) == Some(&b'\n')),
            None => {
                matches!(c, b' ' | b'\t' | b'\n')
                    || (c == b'\r' && matches!(text.get(i + 1), None | Some(b'\n')))
            }
        };
        if stop || c == 0 {
            break;
        }
        if c == b'\\' {
            i += 1;
            match text.get(i) {
                Some(&next) if next != 0 => out.push(next),
                _ => break,
            }
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

/// The end of every reason a misread here-document gives.
const HEREDOC_MISREAD_END: &str = "so the commands after it cannot all be seen";

/// `bytes` as a reason shows them: at most 40 characters, control characters escaped.
fn shown(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == 40 {
            out.push('…');
            break;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// A change to the text for a second reading: the byte range it replaces, and the text put
/// there (an empty range inserts it).
type Edit = (usize, usize, String);

/// How bash and the parser end one here-document ([`heredoc_reading`]).
#[derive(Debug, Clone, PartialEq, Eq)]
enum HeredocReading {
    /// At the same line.
    Same,
    /// The parser ends it at a body line, before bash's end: it reads the rest of the body as
    /// commands, which is more than bash runs but may hide what bash runs after its end (a
    /// `<<X` or a quote in those lines). The insertions that keep the parser from ending it
    /// at those lines give a second reading in which it ends where bash does.
    Early(Vec<Edit>),
    /// The parser ends it after bash does, or where bash does not: what bash runs after its
    /// end may be hidden in the parse. Why, and the changes (if any) that make the parser end
    /// it where bash does, for a second reading that deny rules can see.
    Misread(String, Vec<Edit>),
}

/// The here-documents in `root` that bash ends at another line than tree-sitter-bash does
/// ([`heredoc_reading`]): the reasons for each one the parser ends later than bash (or not
/// where bash does), and the changes to `src` for a second reading in which the parser ends
/// them where bash does. Those it ends earlier are no reason (it then reads body lines as
/// commands too), but they are read again; the walk stops at the first of them, since the
/// parse after it is not bash's (the second reading checks the rest), and says so (`true`).
///
/// The substitutions around each node are kept on a stack as the walk goes down and up, so
/// the walk takes time linear in the tree (asking each here-document's ancestors would take
/// time quadratic in the depth: tree-sitter finds a node's parent from the root).
/// The most here-documents one command may hold for [`misread_heredocs`] to work out where
/// bash ends each.
const MAX_HEREDOCS: usize = 32;

fn misread_heredocs(root: Node<'_>, src: &[u8]) -> (Vec<String>, Vec<Edit>, bool) {
    let mut reasons: Vec<String> = Vec::new();
    let mut edits = Vec::new();
    let mut cursor = root.walk();
    // The substitutions that enclose the cursor's node: their ids, and where each opens
    // when it is a backtick substitution.
    let mut around: Vec<(usize, Option<usize>)> = Vec::new();
    // The kind of the cursor node's parent.
    let mut parent_kinds: Vec<&'static str> = Vec::new();
    // The lines whose rest a second reading already moves ([`line_goes_on`]), by where they
    // end.
    let mut wrapped: Vec<usize> = Vec::new();
    // Each here-document is compared with the text after it: a command with more than
    // MAX_HEREDOCS is not worked out (the comparisons and second readings would take time
    // that grows with the square of the text, or worse) and asks.
    let mut heredocs = 0usize;
    'tree: loop {
        let node = cursor.node();
        if matches!(node.kind(), "heredoc_redirect" | "heredoc_start") {
            heredocs += 1;
            if heredocs > MAX_HEREDOCS {
                let why = format!(
                    "more than {MAX_HEREDOCS} here-documents: where bash ends each is not worked out"
                );
                return (vec![why], Vec::new(), false);
            }
        }
        let context = || SubstitutionContext {
            in_substitution: around.iter().any(|(_, tick)| tick.is_none()),
            backtick: around.iter().rev().find_map(|(_, tick)| *tick),
        };
        let reading = if node.kind() == "heredoc_redirect" {
            Some(heredoc_reading(node, src, context(), &mut wrapped))
        } else if node.kind() == "heredoc_start" && parent_kinds.last() != Some(&"heredoc_redirect")
        {
            Some(unfit_heredoc_reading(node, src, context()))
        } else {
            None
        };
        match reading {
            Some(HeredocReading::Misread(why, more)) => {
                if !reasons.contains(&why) {
                    reasons.push(why);
                }
                edits.extend(more);
            }
            Some(HeredocReading::Early(more)) => {
                edits.extend(more);
                return (reasons, edits, true);
            }
            Some(HeredocReading::Same) | None => {}
        }
        if cursor.goto_first_child() {
            match node.kind() {
                "command_substitution" if src.get(node.start_byte()) == Some(&b'`') => {
                    around.push((node.id(), Some(node.start_byte())));
                }
                "command_substitution" | "process_substitution" => around.push((node.id(), None)),
                _ => {}
            }
            parent_kinds.push(node.kind());
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'tree;
            }
            parent_kinds.pop();
            if around
                .last()
                .is_some_and(|(id, _)| *id == cursor.node().id())
            {
                around.pop();
            }
        }
    }
    (reasons, edits, false)
}

/// `src` with `edits` made ([`misread_heredocs`]); an edit that overlaps one before it is left
/// out (the second reading checks the here-documents again).
fn apply_edits(src: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| (e.0, e.1));
    edits.dedup();
    let extra: usize = edits.iter().map(|e| e.2.len()).sum();
    let mut text = String::with_capacity(src.len() + extra);
    let mut at = 0;
    for (start, end, with) in edits {
        if start < at
            || end > src.len()
            || !src.is_char_boundary(start)
            || !src.is_char_boundary(end)
        {
            continue;
        }
        text.push_str(&src[at..start]);
        text.push_str(&with);
        at = end;
    }
    text.push_str(&src[at..]);
    text
}

/// The delimiter `word` (at `at` in `src`) spelled plainly, with the byte range it replaces
/// ([`misread_heredocs`]): `'EOF' `, or `EOF ` when unquoted (the blank ends the word where
/// bash ends it, before a `)` or a backtick that follows it); `None` when it is already
/// written so, or cannot be spelled so (a quote or a backslash in it, a blank or
/// metacharacter when unquoted).
fn plain_spelling(src: &[u8], at: usize, word: &HeredocWord) -> Option<Edit> {
    let written = src.get(at..at + word.len)?;
    let blank_after = src
        .get(at + word.len)
        .is_none_or(|c| c.is_ascii_whitespace());
    match std::str::from_utf8(&word.delimiter) {
        // The parser takes a backslash as an escape even in single quotes: a delimiter
        // with one has no spelling both read alike.
        Ok(d) if word.quoted && !d.contains(['\'', '\\']) => Some(format!("'{d}' ")),
        Ok(d)
            if !word.quoted
                && !d.bytes().any(|b| {
                    b.is_ascii_whitespace()
                        || matches!(
                            b,
                            b';' | b'&'
                                | b'|'
                                | b'<'
                                | b'>'
                                | b'('
                                | b')'
                                | b'\''
                                | b'"'
                                | b'\\'
                                | b'$'
                                | b'`'
                        )
                }) =>
        {
            Some(format!("{d} "))
        }
        _ => None,
    }
    .filter(|p| !(blank_after && p.trim_end().as_bytes() == written))
    .map(|p| (at, at + word.len, p))
}

/// Where the backtick substitution opened at `open` closes for bash: at the first backtick
/// after it that no backslash escapes (quotes do not count there).
fn closing_backtick(src: &[u8], open: usize) -> Option<usize> {
    let mut i = open + 1;
    while let Some(&c) = src.get(i) {
        match c {
            b'\\' => i += 2,
            b'`' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The insertions that keep the parser from ending a here-document at a line of bash's body
/// (`from..to`): before the first character after the blanks of each line that starts with
/// the parser's delimiter `parser` (after blanks, as the parser skips them), a character that
/// is neither in bash's delimiter nor the start of the parser's, so no line becomes bash's
/// end or stops being body text. `None` when no such character is found.
fn keep_body_lines(
    src: &[u8],
    from: usize,
    to: usize,
    parser: &[u8],
    delimiter: &[u8],
) -> Option<Vec<Edit>> {
    let mark = [b'_', b'x', b'Q', b'z', b'9', b'k']
        .into_iter()
        .find(|c| !delimiter.contains(c) && parser.first() != Some(c))?;
    let mut edits = Vec::new();
    let mut i = from;
    while i < to {
        let line_end = src[i..to]
            .iter()
            .position(|&c| c == b'\n')
            .map_or(to, |p| i + p);
        let first = src[i..line_end]
            .iter()
            .position(|&c| !matches!(c, b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c'))
            .map(|p| i + p);
        if let Some(first) = first
            && !parser.is_empty()
            && src[first..line_end].starts_with(parser)
        {
            edits.push((first, first, char::from(mark).to_string()));
        }
        i = line_end + 1;
    }
    Some(edits)
}

/// The substitutions around a here-document ([`misread_heredocs`] works them out as it
/// walks the tree).
#[derive(Debug, Clone, Copy)]
struct SubstitutionContext {
    /// Whether it is inside `$(…)` or `<(…)`.
    in_substitution: bool,
    /// Where the innermost backtick substitution around it opens.
    backtick: Option<usize>,
}

/// The line that ends a here-document whose body bash ends at the closing backtick `close`
/// (its delimiter `delimiter`), put before that backtick; `from` is where bash's body starts
/// (`None`: after the backtick, the body is empty).
fn end_before_backtick(src: &[u8], close: usize, from: Option<usize>, delimiter: &str) -> Edit {
    let line = if close > 0 && src[close - 1] == b'\n' && from.is_some_and(|f| f <= close) {
        format!("{delimiter}\n")
    } else {
        format!("\n{delimiter}\n")
    };
    (close, close, line)
}

/// How bash reads a here-document the parser could not fit into one (its `heredoc_start`
/// `node` is in a syntax error: `$(cat <<EOF)`, whose word the parser takes to the next
/// blank): always misread; the changes for a second reading spell the delimiter plainly and,
/// inside backticks, end the body before the closing backtick as bash does. `context`: the
/// substitutions around it.
fn unfit_heredoc_reading(
    node: Node<'_>,
    src: &[u8],
    context: SubstitutionContext,
) -> HeredocReading {
    let at = node.start_byte();
    let SubstitutionContext {
        in_substitution,
        mut backtick,
    } = context;
    if backtick.is_none() {
        // In a syntax error the parser shows a backtick that opens a substitution as a
        // token of its own before the here-document: an odd number of them opens one.
        let mut ticks = Vec::new();
        let mut before = node.prev_sibling();
        while let Some(n) = before {
            if n.kind() == "`" {
                ticks.push(n.start_byte());
            }
            before = n.prev_sibling();
        }
        if ticks.len() % 2 == 1 {
            backtick = ticks.first().copied();
        }
    }
    let close = backtick.and_then(|open| closing_backtick(src, open));
    let limited = close.map_or(src, |c| &src[..c]);
    let word = limited.get(at..).and_then(heredoc_word);
    let written = word
        .as_ref()
        .map_or(src.get(at..node.end_byte()).unwrap_or_default(), |w| {
            &src[at..at + w.len]
        });
    let why = format!(
        "the parser could not read the here-document `<<{}` (a syntax error around it), {HEREDOC_MISREAD_END}",
        shown(written)
    );
    let Some(word) = word else {
        return HeredocReading::Misread(why, Vec::new());
    };
    let mut edits: Vec<Edit> = plain_spelling(src, at, &word).into_iter().collect();
    let reads_alike = !edits.is_empty() || parser_heredoc_delimiter(written) == word.delimiter;
    if let (Some(close), Ok(d)) = (close, std::str::from_utf8(&word.delimiter))
        && reads_alike
    {
        let dash = node.prev_sibling().is_some_and(|p| p.kind() == "<<-");
        let from = limited[at..]
            .iter()
            .position(|&c| c == b'\n')
            .map(|p| at + p + 1);
        let unterminated = from.is_none_or(|f| {
            !limited[f..].contains(&b'\\')
                && bash_heredoc_end(limited, f, &word, dash, in_substitution)
                    == BashEnd::Unterminated
        });
        if unterminated {
            edits.push(end_before_backtick(src, close, from, d));
        }
    }
    HeredocReading::Misread(why, edits)
}

/// How bash and the parser end the here-document `node` (a `heredoc_redirect`), with the
/// same quoting of the body ([`HeredocReading`]). Bash's end is worked out from its reading
/// of the delimiter word ([`heredoc_word`], [`bash_heredoc_end`]); inside backticks bash
/// ends the body at the closing backtick at the latest. A `heredoc_end` that covers less of
/// bash's end line than bash's delimiter, with only blanks after it (`EOF` of a line
/// `EOF\r`, whose delimiter is `EOF\r` for bash when the line of the `<<` ends in `\r` too),
/// is the same end. `context`: the substitutions around it.
fn heredoc_reading(
    node: Node<'_>,
    src: &[u8],
    context: SubstitutionContext,
    wrapped: &mut Vec<usize>,
) -> HeredocReading {
    let mut cursor = node.walk();
    let (mut dash, mut start, mut body, mut end) = (false, None, None, None);
    for child in node.children(&mut cursor) {
        match child.kind() {
            "<<-" => dash = true,
            "heredoc_start" => start = start.or(Some(child)),
            "heredoc_body" => body = body.or(Some(child)),
            "heredoc_end" => end = end.or(Some(child)),
            _ => {}
        }
    }
    let Some(start) = start else {
        return HeredocReading::Misread(
            format!("the parser found no delimiter for a here-document, {HEREDOC_MISREAD_END}"),
            Vec::new(),
        );
    };
    let mut at = start.start_byte();
    // The parser takes a descriptor written before `<<` into the word when it is `0`
    // (`0<<EOF` is a `heredoc_start` `0<<EOF`), and then never ends the body: the word bash
    // reads starts after the operator.
    let mut fd = None;
    let written_start = src.get(at..start.end_byte()).unwrap_or_default();
    let digits = written_start
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    if digits > 0 && written_start[digits..].starts_with(b"<<") {
        let mut k = digits + 2;
        if written_start.get(k) == Some(&b'-') {
            dash = true;
            k += 1;
        }
        while written_start
            .get(k)
            .is_some_and(|&c| c == b' ' || c == b'\t')
        {
            k += 1;
        }
        fd = Some((at, digits));
        at += k;
    } else {
        // Or before it, in the redirection.
        let before = src.get(node.start_byte()..at).unwrap_or_default();
        let zeros = before.iter().take_while(|&&c| c == b'0').count();
        if zeros > 0 && before[zeros..].starts_with(b"<<") {
            fd = Some((node.start_byte(), zeros));
        }
    }
    let start_text = src.get(at..start.end_byte()).unwrap_or_default();
    let SubstitutionContext {
        in_substitution,
        backtick,
    } = context;
    // Inside backticks bash reads the text up to the closing backtick only.
    let close = backtick.and_then(|open| closing_backtick(src, open));
    let limited = close.map_or(src, |c| &src[..c]);
    let Some(word) = limited.get(at..).and_then(heredoc_word) else {
        return HeredocReading::Misread(
            format!(
                "bash may read the here-document delimiter `{}` otherwise than the parser (a substitution, a line break or nothing in it), {HEREDOC_MISREAD_END}",
                shown(start_text)
            ),
            Vec::new(),
        );
    };
    let written = &src[at..at + word.len];
    let parser_word = parser_heredoc_delimiter(&src[at..]);
    let mut edits: Vec<Edit> = plain_spelling(src, at, &word).into_iter().collect();
    // Without the descriptor (`0<<` is `<<`; another one changes only where the body goes,
    // not what runs) the parser ends the body as bash does.
    if let Some((from, len)) = fd {
        edits.push((from, from + len, " ".repeat(len)));
    }
    // Why the parser's end is not bash's, in words: the first cause found.
    let why = |edits: Vec<Edit>| {
        let (w, d) = (shown(written), shown(&word.delimiter));
        let spelled = written
            .iter()
            .any(|c| matches!(c, b'\'' | b'"' | b'\\' | b'$'));
        let why = if parser_word != word.delimiter && spelled {
            format!(
                "bash takes the here-document delimiter `{w}` as `{d}` (quotes and escapes removed) and ends the body at another line than the parser, {HEREDOC_MISREAD_END}"
            )
        } else if parser_word != word.delimiter {
            format!(
                "the parser takes `{}` for the delimiter of the here-document `<<{d}` (bash's word ends before what follows it), {HEREDOC_MISREAD_END}",
                shown(&parser_word)
            )
        } else if let Some((from, len)) = fd {
            format!(
                "the parser does not find the end of a here-document written `{}<<{w}`, {HEREDOC_MISREAD_END}",
                shown(&src[from..from + len])
            )
        } else {
            format!(
                "bash ends the here-document `<<{w}` at another line than the parser, {HEREDOC_MISREAD_END}"
            )
        };
        HeredocReading::Misread(why, edits)
    };
    // The parser's idea of whether the body is literal must be bash's.
    if quoted_delimiter(&String::from_utf8_lossy(start_text)) != word.quoted {
        let how = if word.quoted {
            "literal text"
        } else {
            "text with expansions"
        };
        return HeredocReading::Misread(
            format!(
                "bash reads the body of the here-document `<<{}` as {how} and the parser does not, {HEREDOC_MISREAD_END}",
                shown(written)
            ),
            edits,
        );
    }
    // A `;`, `&` or `)` after the delimiter on its line ends the command for bash; the
    // parser's grammar takes none there and reads what follows as the command's arguments
    // (`cat <<EOF; rm x` as `cat rm x`). The second reading moves the rest of the line after
    // the bodies, the statement in braces (`{ cat <<EOF` … `EOF` `} ; rm x`).
    if backtick.is_none()
        && (node.has_error() || parser_word != word.delimiter)
        && let Some(goes_on) = line_goes_on(node, src, at + word.len, &word, dash, in_substitution)
    {
        let why = format!(
            "bash ends the command at the `{}` after the here-document `<<{}` on its line, where the parser reads on, {HEREDOC_MISREAD_END}",
            shown(&src[goes_on.op..goes_on.op + 1]),
            shown(written)
        );
        if !wrapped.contains(&goes_on.line_end) {
            wrapped.push(goes_on.line_end);
            edits.extend(goes_on.edits);
        }
        return HeredocReading::Misread(why, edits);
    }
    let in_backticks = |edits: Vec<Edit>| {
        HeredocReading::Misread(
            format!(
                "the here-document `<<{}` is inside backticks, where bash ends its body at the closing backtick at the latest, {HEREDOC_MISREAD_END}",
                shown(written)
            ),
            edits,
        )
    };
    // Where bash's body starts: after the line break that ends the line of the `<<` (the
    // parser's body may start later, past blank lines and leading blanks it skipped).
    let anchor = match (body, end) {
        (Some(b), _) if b.end_byte() > b.start_byte() => b.start_byte(),
        (_, Some(e)) => e.start_byte(),
        (Some(b), None) => b.start_byte(),
        (None, None) => return why(edits),
    };
    let floor = start.end_byte();
    let mut k = anchor.min(src.len());
    while k > floor && src[k - 1].is_ascii_whitespace() {
        k -= 1;
    }
    let from = src[k..anchor.min(src.len())]
        .iter()
        .position(|&c| c == b'\n')
        .map(|p| k + p + 1);
    if backtick.is_some() && close.is_none() {
        return in_backticks(edits);
    }
    let parser_end = end
        .filter(|e| !e.is_missing() && e.end_byte() > e.start_byte())
        .map(|e| (e.start_byte(), e.end_byte()));
    let bash_end = match from {
        Some(from) if from <= limited.len() => {
            if close.is_some() && limited[from..].contains(&b'\\') {
                // Bash takes escapes out of the text in backticks before it reads it.
                return in_backticks(edits);
            }
            bash_heredoc_end(limited, from, &word, dash, in_substitution)
        }
        // The line of the `<<` runs past the closing backtick: the body is empty.
        _ if close.is_some() => BashEnd::Unterminated,
        _ => return why(edits),
    };
    match (bash_end, parser_end) {
        (BashEnd::Joined, _) => HeredocReading::Misread(
            format!(
                "bash joins a line of the here-document `<<{}` that ends in a backslash with the next one and ends the body at the joined line, which the parser does not, {HEREDOC_MISREAD_END}",
                shown(written)
            ),
            edits,
        ),
        (BashEnd::Unterminated, _) if close.is_some() => {
            // Bash ends the body at the closing backtick: a delimiter line put before it
            // makes the parser end it there too, when the parser reads the delimiter as bash.
            let reads_alike = parser_word == word.delimiter;
            let plain = edits.iter().any(|e| e.0 == at);
            if let (Some(close), Ok(d)) = (close, std::str::from_utf8(&word.delimiter))
                && (reads_alike || plain)
            {
                edits.push(end_before_backtick(src, close, from, d));
            }
            in_backticks(edits)
        }
        (BashEnd::Unterminated, None) => HeredocReading::Same,
        // Nothing follows the parser's end: nothing runs after it for either (a last line
        // `EOF` of a command whose `<<EOF` line ends in `\r`, its `\r\n` trimmed).
        (BashEnd::Unterminated, Some((_, e))) if src[e..].iter().all(u8::is_ascii_whitespace) => {
            HeredocReading::Same
        }
        (BashEnd::Unterminated, Some((s, e))) => {
            // The body runs to the end: a line the parser ends it at, put after everything,
            // changes nothing bash runs.
            let parser = &src[s..e];
            match (
                from.and_then(|f| {
                    keep_body_lines(src, f.min(s), src.len(), parser, &word.delimiter)
                }),
                std::str::from_utf8(parser),
            ) {
                (Some(mut keep), Ok(p)) => {
                    let line = if src.last() == Some(&b'\n') {
                        format!("{p}\n")
                    } else {
                        format!("\n{p}\n")
                    };
                    keep.push((src.len(), src.len(), line));
                    HeredocReading::Early(keep)
                }
                _ => why(edits),
            }
        }
        (BashEnd::At(..), None) => why(edits),
        (BashEnd::At(a, b), Some((s, e))) => {
            let line_start = src[..a]
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |p| p + 1);
            if s == a && e <= b && src[e..b].iter().all(u8::is_ascii_whitespace) {
                HeredocReading::Same
            } else if s < line_start {
                match from
                    .and_then(|f| {
                        keep_body_lines(src, f.min(s), line_start, &src[s..e], &word.delimiter)
                    })
                    .filter(|keep| !keep.is_empty())
                {
                    Some(keep) => HeredocReading::Early(keep),
                    None => why(edits),
                }
            } else {
                why(edits)
            }
        }
    }
}

/// A here-document's line that goes on after its delimiter word with a control operator the
/// parser does not take there ([`line_goes_on`]).
struct LineGoesOn {
    /// Where the operator is.
    op: usize,
    /// Where the line ends: its line break, or the end of the text.
    line_end: usize,
    /// The changes for a second reading that the parser reads as bash does; none when they
    /// cannot be worked out.
    edits: Vec<Edit>,
}

/// Whether the line of the here-document `node` (its delimiter `word`, read as bash reads it,
/// ends at `after_word`; `dash`: `<<-`; `in_substitution`: inside `$(…)` or `<(…)`) goes on
/// with a `;`, `&` or `)` that ends the command
/// for bash ([`line_operator`]); if so, the changes that make the parser read it as bash:
/// the statement the here-document is in (from the start of its pipeline or list) put in
/// braces that close after the bodies of its here-documents, and the rest of the line moved
/// after the closing brace (`{ cat <<EOF` … `EOF` `} ; rm x`, `} & rm x`, `} ); rm x`). A body
/// that runs to the end of the text gets its delimiter line put there first.
fn line_goes_on(
    node: Node<'_>,
    src: &[u8],
    after_word: usize,
    word: &HeredocWord,
    dash: bool,
    in_substitution: bool,
) -> Option<LineGoesOn> {
    let line_end = src
        .get(after_word..)?
        .iter()
        .position(|&c| c == b'\n')
        .map_or(src.len(), |p| after_word + p);
    let (op, more) = line_operator(src, after_word, line_end)?;
    let edits = (|| {
        let start = statement_start(node)?;
        let mut chain = vec![(word.clone(), dash)];
        for (at, dash) in more {
            let w = heredoc_word(src.get(at..)?)?;
            // Its delimiter line, put at the end, must end it for the parser too.
            if parser_heredoc_delimiter(&src[at..at + w.len]) != w.delimiter {
                return None;
            }
            chain.push((w, dash));
        }
        // Where the bodies end for bash, one after the other; the delimiter lines of those
        // that run to the end.
        let mut next = (line_end + 1).min(src.len());
        let mut closing = String::new();
        // Whether the last body ends at a line `EOF)` (inside `$(…)`), where the rest goes
        // before the `)`.
        let mut glued = false;
        for (w, dash) in &chain {
            if glued {
                return None;
            }
            let end = if next >= src.len() {
                BashEnd::Unterminated
            } else {
                bash_heredoc_end(src, next, w, *dash, in_substitution)
            };
            match end {
                BashEnd::At(_, b) if src.get(b).is_some_and(|&c| c != b'\n') => {
                    next = b;
                    glued = true;
                }
                BashEnd::At(_, b) => {
                    next = src[b..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .map_or(src.len(), |p| b + p + 1);
                }
                BashEnd::Unterminated => {
                    next = src.len();
                    closing.push_str(std::str::from_utf8(&w.delimiter).ok()?);
                    closing.push('\n');
                }
                BashEnd::Joined => return None,
            }
        }
        let rest = std::str::from_utf8(&src[op..line_end]).ok()?;
        let mut tail = String::new();
        if glued || (next == src.len() && src.last() != Some(&b'\n')) {
            tail.push('\n');
        }
        tail.push_str(&closing);
        tail.push_str("} ");
        tail.push_str(rest);
        tail.push('\n');
        Some(vec![
            (start, start, "{ ".to_owned()),
            (op, line_end, String::new()),
            (next, next, tail),
        ])
    })()
    .unwrap_or_default();
    Some(LineGoesOn {
        op,
        line_end,
        edits,
    })
}

/// Where the statement the here-document `node` is a redirection of starts: the start of
/// the pipeline, list or negation around it (what a `;` or `&` after it ends for bash).
/// `None` when it is not a redirection of a statement.
fn statement_start(node: Node<'_>) -> Option<usize> {
    let mut n = node
        .parent()
        .filter(|p| p.kind() == "redirected_statement")?;
    while let Some(p) = n.parent().filter(|p| {
        matches!(
            p.kind(),
            "redirected_statement" | "list" | "pipeline" | "negated_command"
        )
    }) {
        n = p;
    }
    Some(n.start_byte())
}

/// The first `;`, `&` (not `&&`, `|&`, `>&`, `<&`, `&>`) or unmatched `)` in `src[from..to]`
/// (the rest of a here-document's line) outside quotes, substitutions and the groups opened
/// there: what ends the command for bash. With it, where the words of the here-documents
/// (`<<`, `<<-`: `true`) before it start. `None` when there is none, a comment comes first,
/// or a quote or substitution does not close on the line. A `{` opens a group only where a
/// command starts (after `|`, `&&`, `||`, `(` or another group's `{`); elsewhere it is an
/// argument (`cat <<EOF { ; rm x` runs `rm x`).
fn line_operator(src: &[u8], from: usize, to: usize) -> Option<(usize, Vec<(usize, bool)>)> {
    let word_start = |i: usize| {
        i.checked_sub(1)
            .and_then(|k| src.get(k))
            .is_none_or(|c| matches!(c, b' ' | b'\t' | b';' | b'&' | b'|' | b'(' | b')'))
    };
    // Whether a command starts at `i`: what comes before it on the rest of the line (the
    // line starts inside the here-document's command) is an operator or a group's opening.
    let command_start = |i: usize| {
        let before = src[from..i]
            .iter()
            .rposition(|c| !matches!(c, b' ' | b'\t'))
            .map(|k| from + k);
        before.is_some_and(|k| match src[k] {
            b'|' | b'&' | b'(' => true,
            b'{' => word_start(k),
            _ => false,
        })
    };
    let mut heredocs = Vec::new();
    let mut depth = 0usize;
    let mut i = from;
    while i < to {
        match src[i] {
            b'\\' => i += 2,
            b'\'' => i += 2 + src.get(i + 1..to)?.iter().position(|&c| c == b'\'')?,
            b'"' | b'`' => i = skip_quoted(src, i, to)?,
            b'$' if src.get(i + 1) == Some(&b'\'') => {
                let mut j = i + 2;
                loop {
                    match *src.get(j).filter(|_| j < to)? {
                        b'\\' => j += 2,
                        b'\'' => break,
                        _ => j += 1,
                    }
                }
                i = j + 1;
            }
            b'$' if matches!(src.get(i + 1), Some(b'(' | b'{' | b'[')) => {
                i = skip_group(src, i + 1, to)?;
            }
            b'(' => {
                depth += 1;
                i += 1;
            }
            b')' if depth == 0 => return Some((i, heredocs)),
            b')' => {
                depth -= 1;
                i += 1;
            }
            b'{' if word_start(i)
                && command_start(i)
                && matches!(src.get(i + 1), Some(b' ' | b'\t')) =>
            {
                depth += 1;
                i += 1;
            }
            b'}' if word_start(i) && depth > 0 => {
                depth -= 1;
                i += 1;
            }
            b';' if depth == 0 => return Some((i, heredocs)),
            b'&' => {
                let double = src.get(i + 1) == Some(&b'&');
                let other = double
                    || src.get(i + 1) == Some(&b'>')
                    || i.checked_sub(1)
                        .and_then(|k| src.get(k))
                        .is_some_and(|c| matches!(c, b'>' | b'<' | b'|'));
                if depth == 0 && !other {
                    return Some((i, heredocs));
                }
                i += if double { 2 } else { 1 };
            }
            b'<' if src.get(i + 1) == Some(&b'<') && src.get(i + 2) == Some(&b'<') => i += 3,
            b'<' if src.get(i + 1) == Some(&b'<') => {
                let dash = src.get(i + 2) == Some(&b'-');
                let mut j = i + 2 + usize::from(dash);
                while matches!(src.get(j), Some(b' ' | b'\t')) {
                    j += 1;
                }
                heredocs.push((j, dash));
                i = j.max(i + 1);
            }
            b'#' if word_start(i) => return None,
            _ => i += 1,
        }
    }
    None
}

/// Where the quoted part that opens at `open` (a `"` or a backtick) ends in `src[..to]`: the
/// index after its closing quote; substitutions inside double quotes are skipped.
fn skip_quoted(src: &[u8], open: usize, to: usize) -> Option<usize> {
    let quote = *src.get(open)?;
    let mut j = open + 1;
    while j < to {
        match src[j] {
            b'\\' => j += 2,
            c if c == quote => return Some(j + 1),
            b'$' if quote == b'"' && matches!(src.get(j + 1), Some(b'(' | b'{' | b'[')) => {
                j = skip_group(src, j + 1, to)?;
            }
            b'`' if quote == b'"' => j = skip_quoted(src, j, to)?,
            _ => j += 1,
        }
    }
    None
}

/// Where the group that opens at `open` (`(`, `{` or `[`) closes in `src[..to]`: the index
/// after its closing bracket; quotes inside are skipped.
fn skip_group(src: &[u8], open: usize, to: usize) -> Option<usize> {
    let (opening, closing) = match src.get(open)? {
        b'(' => (b'(', b')'),
        b'{' => (b'{', b'}'),
        _ => (b'[', b']'),
    };
    let mut depth = 0usize;
    let mut j = open;
    while j < to {
        match src[j] {
            b'\\' => j += 2,
            b'\'' => j += 2 + src.get(j + 1..to)?.iter().position(|&c| c == b'\'')?,
            b'"' | b'`' => j = skip_quoted(src, j, to)?,
            c if c == opening => {
                depth += 1;
                j += 1;
            }
            c if c == closing => {
                depth -= 1;
                j += 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => j += 1,
        }
    }
    None
}

/// Whether `node` is the body (or part of it) of a here-document whose delimiter is quoted.
fn in_quoted_heredoc(node: Node<'_>, src: &[u8]) -> bool {
    let mut n = node;
    while let Some(parent) = n.parent() {
        if parent.kind() == "heredoc_redirect" {
            let mut cursor = parent.walk();
            let start = parent
                .named_children(&mut cursor)
                .find(|c| c.kind() == "heredoc_start");
            return start
                .and_then(|s| s.utf8_text(src).ok())
                .is_some_and(quoted_delimiter);
        }
        n = parent;
    }
    false
}

/// Whether a backslash-escaped blank that starts a word of `src` is in no word of the parse
/// (nor in quotes, a comment or a here-document body): tree-sitter-bash leaves it out before
/// another word (`\  npm test` read as `npm test`) or alone on its line (`\ ` read as
/// nothing), where bash keeps it (the command ` `, given `npm` and `test`). One the parse
/// keeps (`echo \ ` at a line's end, `My\ Documents`, `a\  b`) is read alike.
fn escaped_blank_starts_a_word(src: &[u8], root: Node<'_>) -> bool {
    let starts = |i: usize| i == 0 || b" \t\n;&|()<>".contains(&src[i - 1]);
    let candidates: Vec<usize> = (0..src.len().saturating_sub(1))
        .filter(|&i| src[i] == b'\\' && matches!(src[i + 1], b' ' | b'\t') && starts(i))
        .collect();
    if candidates.is_empty() {
        return false;
    }
    let mut quoted = Vec::new();
    let mut cursor = root.walk();
    'tree: loop {
        let n = cursor.node();
        if matches!(
            n.kind(),
            "word"
                | "number"
                | "concatenation"
                | "string"
                | "raw_string"
                | "ansi_c_string"
                | "comment"
                | "heredoc_body"
        ) {
            quoted.push((n.start_byte(), n.end_byte()));
        } else if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'tree;
            }
        }
    }
    // Left out, it matters where it names the command (`\ ` alone, or first on its line)
    // or where another word follows it (`\  npm test`); the last argument of a command
    // (`echo \ `) is only an argument less.
    let blank = |b: u8| matches!(b, b' ' | b'\t');
    let names_a_command = |i: usize| {
        let before = src[..i].iter().rposition(|&b| !blank(b));
        before.is_none_or(|j| b"\n;&|(".contains(&src[j]))
    };
    let more_follows = |i: usize| {
        src[i + 2..]
            .iter()
            .find(|&&b| !blank(b))
            .is_some_and(|b| !b"\n;&|)#".contains(b))
    };
    candidates.iter().any(|&i| {
        !quoted.iter().any(|&(a, b)| a <= i && i < b) && (names_a_command(i) || more_follows(i))
    })
}

/// The byte ranges of `root`'s text where bash keeps a backslash-newline as it is: single
/// quotes, ANSI-C quotes (`$'…'`), comments, and the bodies of here-documents with a quoted
/// delimiter.
fn literal_ranges(root: Node<'_>, src: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    'tree: loop {
        let n = cursor.node();
        let literal = match n.kind() {
            "raw_string" | "ansi_c_string" | "comment" => true,
            "heredoc_body" => in_quoted_heredoc(n, src),
            _ => false,
        };
        if literal {
            out.push((n.start_byte(), n.end_byte()));
        } else if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'tree;
            }
        }
    }
    out.sort_unstable();
    out
}

/// Adds a second reading of the same source (the text as bash joins it across
/// backslash-newlines, or without the `time`/`!`/`coproc` the parser misreads) to `out`: its
/// commands, redirections and reasons, and whatever it says about variables the line may
/// set (one that names `CDPATH` or `HOME` may set it); at most `limit` commands
/// ([`bound_listed`]).
fn absorb_second_reading(out: &mut Analysis, again: Analysis, limit: usize) {
    out.hidden_assignment |= again.hidden_assignment || again.cdpath || (again.home && !out.home);
    out.startup_env |= again.startup_env;
    add_assigned(&mut out.assigned, again.assigned);
    for name in again.glob_vars {
        if !out.glob_vars.contains(&name) {
            out.glob_vars.push(name);
        }
    }
    out.rg_config |= again.rg_config;
    out.git_env |= again.git_env;
    out.ps4 |= again.ps4;
    out.computed_command |= again.computed_command;
    for why in again.computed_why {
        if !out.computed_why.contains(&why) {
            out.computed_why.push(why);
        }
    }
    for program in again.subcommand_from_input {
        if !out.subcommand_from_input.contains(&program) {
            out.subcommand_from_input.push(program);
        }
    }
    for why in again.incomplete {
        if !out.incomplete.contains(&why) {
            out.incomplete.push(why);
        }
    }
    out.commands.extend(again.commands);
    out.redirects.extend(again.redirects);
    for why in again.complex {
        if !out.complex.contains(&why) {
            out.complex.push(why);
        }
    }
    out.truncated |= again.truncated;
    bound_listed(out, limit);
}

/// Adds the assignments `more` (of a nested script or a second reading) that `assigned` does
/// not hold yet.
fn add_assigned(assigned: &mut Vec<Assignment>, more: Vec<Assignment>) {
    for a in more {
        if !assigned.contains(&a) {
            assigned.push(a);
        }
    }
}

/// Where the command an `-exec`/`-ok` of `find` runs ends in `rest` (the words after the
/// primary): at `;`, or at `+` right after `{}`; all of `rest` when neither comes.
pub(crate) fn exec_end(rest: &[Word]) -> usize {
    rest.iter()
        .enumerate()
        .position(|(k, w)| match w.value.as_deref() {
            Some(";") => true,
            Some("+") => k > 0 && rest[k - 1].value.as_deref() == Some("{}"),
            _ => false,
        })
        .unwrap_or(rest.len())
}

/// The reserved words that open a compound command.
const COMPOUND_OPENERS: &[&str] = &[
    "{", "((", "[[", "for", "while", "until", "if", "case", "select", "function",
];

/// The byte ranges of `time` (with `-p`), `coproc` (with its name) and `!` where they come
/// before a compound command, which tree-sitter-bash does not know there: it reads
/// `time { rm x; }` as a command `time { rm x` and a command `}`.
fn reserved_word_prefixes(root: Node<'_>, src: &[u8]) -> Vec<(usize, usize)> {
    let text = |n: Node<'_>| n.utf8_text(src).unwrap_or("");
    let opener = |n: Node<'_>| n.kind() == "word" && COMPOUND_OPENERS.contains(&text(n));
    let mut out = Vec::new();
    let mut cursor = root.walk();
    'tree: loop {
        let n = cursor.node();
        match n.kind() {
            "command" => {
                let mut c = n.walk();
                let words: Vec<Node<'_>> = n
                    .child_by_field_name("name")
                    .and_then(|c| c.named_child(0))
                    .into_iter()
                    .chain(n.children_by_field_name("argument", &mut c))
                    .collect();
                let name = words.first().map(|w| text(*w)).unwrap_or("");
                let skip = match name {
                    // `time`, `!` and `coproc` in any number and order (`! ! {`, `time time
                    // {`, `time coproc {`).
                    "time" | "!" => {
                        1 + words[1..]
                            .iter()
                            .take_while(|w| {
                                matches!(text(**w), "-p" | "--" | "!" | "time" | "coproc")
                            })
                            .count()
                    }
                    // `coproc NAME { …; }` or `coproc { …; }`.
                    "coproc" => {
                        if words.get(1).is_some_and(|w| opener(*w)) {
                            1
                        } else {
                            2
                        }
                    }
                    _ => 0,
                };
                if skip > 0
                    && let Some(next) = words.get(skip).filter(|w| opener(**w))
                {
                    out.push((n.start_byte(), next.start_byte()));
                }
            }
            "negated_command" => {
                let inner = n.named_child(0).filter(|c| c.kind() == "command");
                let name = inner
                    .and_then(|c| c.child_by_field_name("name"))
                    .and_then(|c| c.named_child(0));
                if let (Some(bang), Some(name)) = (n.child(0), name)
                    && text(bang) == "!"
                    && opener(name)
                {
                    out.push((bang.start_byte(), bang.end_byte()));
                }
            }
            _ => {}
        }
        if cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                break 'tree;
            }
        }
    }
    out
}

/// Bash deletes every backslash-newline outside `literal` ranges before it splits words.
/// When one has a non-blank character on both sides (as bash reads them, after the
/// deletion), it joins two pieces into one word (`tr\<newline>uncate`, `$\<newline>(cmd)`,
/// `a\<newline>#`), which tree-sitter-bash reads as two (the pair is a blank in its
/// grammar): the text with every such backslash-newline deleted, else `None`. A break after
/// a list or pipeline operator before a word (`&&\<newline>cmd`) joins nothing that matters.
fn continuations(src: &[u8], literal: &[(usize, usize)]) -> Option<Vec<u8>> {
    let blank = |c: u8| matches!(c, b' ' | b'\t' | b'\n');
    let is_break = |i: usize| src.get(i) == Some(&b'\\') && src.get(i + 1) == Some(&b'\n');
    let mut joined = Vec::with_capacity(src.len());
    let mut joins = false;
    let mut ranges = literal.iter().peekable();
    // The last character as bash reads it, and whether it was escaped.
    let mut prev: Option<(u8, bool)> = None;
    let mut i = 0;
    while i < src.len() {
        while ranges.peek().is_some_and(|r| r.1 <= i) {
            ranges.next();
        }
        if let Some(&&(start, end)) = ranges.peek()
            && start <= i
        {
            joined.extend_from_slice(&src[i..end]);
            prev = src.get(end.saturating_sub(1)).map(|c| (*c, false));
            i = end;
            continue;
        }
        if is_break(i) {
            let mut j = i + 2;
            while is_break(j) {
                j += 2;
            }
            let next = src.get(j).copied();
            let after_operator = |p: u8| {
                matches!(p, b';' | b'|' | b'&')
                    && next.is_some_and(|n| n.is_ascii_alphanumeric() || n == b'_')
            };
            if let (Some((p, escaped)), Some(n)) = (prev, next)
                && (escaped || !blank(p))
                && !blank(n)
                && (escaped || !after_operator(p))
            {
                joins = true;
            }
            i += 2;
            continue;
        }
        let c = src[i];
        joined.push(c);
        if c == b'\\'
            && let Some(&d) = src.get(i + 1)
        {
            joined.push(d);
            prev = Some((d, true));
            i += 2;
        } else {
            prev = Some((c, false));
            i += 1;
        }
    }
    joins.then_some(joined)
}

/// The body of a backtick substitution as bash runs it: the backslash of `\``, `\$` and
/// `\\` removed.
fn unescape_backticks(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&n) = chars.peek()
            && matches!(n, '`' | '$' | '\\')
        {
            out.push(n);
            chars.next();
        } else {
            out.push(c);
        }
    }
    out
}

/// Skips the backslash-newlines at `i` in `bytes` (bash deletes them).
fn skip_continuations(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i) == Some(&b'\\') && bytes.get(i + 1) == Some(&b'\n') {
        i += 2;
    }
    i
}

/// Where `text` holds the first `$(` or backtick, and with `process` a `<(` or `>(`, not
/// escaped by a backslash (the start of a substitution, in bash's eyes), from byte `from`.
/// A backslash-newline is deleted by bash: `$\<newline>(` is `$(`.
fn unescaped_substitution_at(text: &str, process: bool, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = from;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'`' => return Some(i),
            b'$' if bytes.get(skip_continuations(bytes, i + 1)) == Some(&b'(') => return Some(i),
            b'<' | b'>'
                if process && bytes.get(skip_continuations(bytes, i + 1)) == Some(&b'(') =>
            {
                return Some(i);
            }
            _ => i += 1,
        }
    }
    None
}

/// Whether `text` holds the start of a substitution ([`unescaped_substitution_at`]).
fn has_unescaped_substitution(text: &str, process: bool) -> bool {
    unescaped_substitution_at(text, process, 0).is_some()
}

/// Whether `node` is an operand of a `${…}` expansion (in the same command: a `$(…)` in
/// between starts a new one). Inside double quotes or a here-document's body bash does not
/// take `'…'` or `$'…'` there for quoting; unquoted it does, but after a syntax error
/// tree-sitter-bash may no longer show the here-document a line belongs to: any such
/// operand counts.
fn in_double_quoted_expansion(node: Node<'_>) -> bool {
    let mut at = node.parent();
    while let Some(p) = at {
        match p.kind() {
            "expansion" => return true,
            "command_substitution" | "process_substitution" | "program" => return false,
            _ => {}
        }
        at = p.parent();
    }
    false
}

/// `text` with every backslash-newline deleted (as bash does outside single quotes; `\\`
/// is an escaped backslash).
fn without_continuations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('\n') => {}
            Some(d) => {
                out.push(c);
                out.push(d);
            }
            None => out.push(c),
        }
    }
    out
}

/// Whether an arithmetic expression refers to no variable and takes no substitution's
/// output: integer literals (`10`, `0x1f`, `16#ff`), operators, parentheses, `$#`, `$?`,
/// `$$`, `$!` and lengths (`${#x}`, `${#x[@]}`). Double quotes are ignored.
fn arithmetic_is_literal(expr: &str) -> bool {
    let name = |s: &str| {
        s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let length = |inner: &str| {
        inner.strip_prefix('#').is_some_and(|n| {
            let n = n
                .strip_suffix("[@]")
                .or_else(|| n.strip_suffix("[*]"))
                .unwrap_or(n);
            name(n)
        })
    };
    let b = expr.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || b"+-*/%<>=!&|^~?:,()\"".contains(&c) {
            i += 1;
        } else if c.is_ascii_digit() {
            while i < b.len()
                && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'#' | b'@' | b'_'))
            {
                i += 1;
            }
        } else if c == b'$' {
            match b.get(i + 1) {
                Some(b'#' | b'?' | b'$' | b'!') => i += 2,
                Some(b'{') => {
                    let Some(end) = expr[i + 2..].find('}') else {
                        return false;
                    };
                    let inner = &expr[i + 2..i + 2 + end];
                    if !(matches!(inner, "#" | "?" | "$" | "!") || length(inner)) {
                        return false;
                    }
                    i += 2 + end + 1;
                }
                _ => return false,
            }
        } else {
            return false;
        }
    }
    true
}

fn has_unquoted_glob(raw: &str) -> bool {
    let mut escaped = false;
    for c in raw.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '*' | '?' | '[' => return true,
            _ => {}
        }
    }
    false
}

fn unescape_backslashes(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next()
                && n != '\n'
            {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The value bash gives `$'inner'`, or `None` when it is no text: bash builds the value
/// as bytes, so `\xHH` and `\NNN` are single bytes (`$'\xc3\xa9'` is `é`, `$'\351'` no
/// UTF-8 at all), and the value ends at its first NUL (`$'.env\x00zz'` is `.env`), as a C
/// string does; `\cX` is the control character of `X` (`\c@` a NUL).
fn decode_ansi_c(inner: &str) -> Option<String> {
    let mut out: Vec<u8> = Vec::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    let push = |out: &mut Vec<u8>, c: char| {
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            push(&mut out, c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push(b'\n'),
            Some('t') => out.push(b'\t'),
            Some('r') => out.push(b'\r'),
            Some('a') => out.push(0x07),
            Some('b') => out.push(0x08),
            Some('e' | 'E') => out.push(0x1b),
            Some('f') => out.push(0x0c),
            Some('v') => out.push(0x0b),
            Some(d @ ('x' | 'u' | 'U')) => {
                let max = match d {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut hex = String::new();
                // `\x{HHH}` (bash 5.2): the digits in braces, empty for 0.
                let braced = d == 'x' && chars.peek() == Some(&'{');
                if braced {
                    chars.next();
                    while chars.peek().is_some_and(|c| *c != '}') {
                        hex.extend(chars.next());
                    }
                    chars.next();
                    if hex.is_empty() {
                        hex.push('0');
                    }
                } else {
                    while hex.len() < max && chars.peek().is_some_and(char::is_ascii_hexdigit) {
                        hex.extend(chars.next());
                    }
                }
                let value = u32::from_str_radix(&hex, 16).ok();
                if braced && value.is_none_or(|v| v > 0xff) {
                    // Not a byte: what bash makes of it is not worked out here.
                    return None;
                }
                match (d, value) {
                    ('x', Some(byte)) => out.push(byte as u8),
                    // Bash writes a surrogate or a code past U+10FFFF as bytes that are
                    // no UTF-8.
                    (_, Some(code)) => push(&mut out, char::from_u32(code)?),
                    _ => {
                        out.push(b'\\');
                        push(&mut out, d);
                        out.extend_from_slice(hex.as_bytes());
                    }
                }
            }
            Some(o @ '0'..='7') => {
                let mut oct = String::from(o);
                while oct.len() < 3 && chars.peek().is_some_and(|c| ('0'..='7').contains(c)) {
                    oct.extend(chars.next());
                }
                // Up to three digits, the byte being the value's low eight bits (`\777`).
                out.push((u32::from_str_radix(&oct, 8).unwrap_or(0) & 0xff) as u8);
            }
            Some('c') => match chars.next() {
                // `\c\\` is the control character of a backslash.
                Some('\\') => {
                    if chars.peek() == Some(&'\\') {
                        chars.next();
                    }
                    out.push(0x1c);
                }
                Some('?') => out.push(0x7f),
                Some(x) if x.is_ascii() => out.push((x as u8) & 0x1f),
                Some(x) => {
                    out.extend_from_slice(b"\\c");
                    push(&mut out, x);
                }
                None => out.extend_from_slice(b"\\c"),
            },
            Some(quoted @ ('\\' | '\'' | '"' | '?')) => push(&mut out, quoted),
            // An escape bash does not know keeps its backslash (`$'\q'` is `\q`).
            Some(other) => {
                out.push(b'\\');
                push(&mut out, other);
            }
            None => out.push(b'\\'),
        }
        if let Some(nul) = out.iter().position(|&b| b == 0) {
            out.truncate(nul);
            break;
        }
    }
    String::from_utf8(out).ok()
}

fn unescape_double_quoted(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some(&n @ ('"' | '\\' | '$' | '`')) => {
                    out.push(n);
                    chars.next();
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(a: &Analysis) -> Vec<String> {
        a.commands.iter().map(SimpleCommand::raw_text).collect()
    }

    /// `$'...'` decodes to what bash makes of it, byte for byte (asked of a real bash), or
    /// to nothing when that is no UTF-8: a NUL ends the value, `\xHH` is one byte.
    #[test]
    fn ansi_c_strings_decode_as_bash_does() {
        let samples = [
            r".env\x00zz",
            r".env\0zz",
            r".env\c@zz",
            r"\u0000x",
            r"a\x00b",
            r"donn\xc3\xa9es",
            r"donn\303\251es",
            r"\351",
            r"\777",
            r"\cax\c?\c[",
            r"\c\\x",
            r"\U0001F600",
            r"\uD800",
            r"\x",
            r"\xZ",
            r".en\x{76}",
            r"\x{2e}env",
            r".env\x{0}zz",
            r".env\x{}zz",
            r#"\q\'\"\?\\"#,
            r"r\x6d",
            r"\n\t\e",
            "tab\there",
        ];
        for inner in samples {
            // In a UTF-8 locale (the one the Bash tool's shells have), `\u` writes UTF-8.
            let out = std::process::Command::new("bash")
                .env("LC_ALL", "C.UTF-8")
                .arg("-c")
                .arg(format!("printf '%s' $'{inner}'"))
                .output()
                .expect("bash runs");
            let expected = String::from_utf8(out.stdout).ok();
            assert_eq!(decode_ansi_c(inner), expected, "$'{inner}'");
        }
        assert_eq!(decode_ansi_c(r".env\x00zz").as_deref(), Some(".env"));
        assert_eq!(decode_ansi_c(r"\351"), None);
    }

    /// Trimming keeps an escaped whitespace character at the end: it is an argument.
    #[test]
    fn trimming_keeps_escaped_whitespace() {
        assert_eq!(trim_command("  ls -l \n"), "ls -l");
        assert_eq!(trim_command("echo \\ \n"), "echo \\ ");
        assert_eq!(trim_command("echo \\\\ \n"), "echo \\\\");
        assert_eq!(trim_command("echo \\\n"), "echo \\\n");
        assert_eq!(trim_command("cat <<E\r\nE\r\n"), "cat <<E\r\nE\r");
        let a = analyze("echo \\ \n");
        assert!(a.is_simple(), "{:?}", a.complex);
        let a = analyze(trim_command("echo \\ \n"));
        assert!(a.is_simple(), "{:?}", a.complex);
    }

    #[test]
    fn splits_compounds_and_substitutions() {
        let a = analyze("git status && rm -rf x; echo $(whoami) | tee out.txt");
        assert!(a.is_simple(), "{:?}", a.complex);
        assert_eq!(
            names(&a),
            [
                "git status",
                "rm -rf x",
                "whoami",
                "echo $(whoami)",
                "tee out.txt"
            ]
        );
    }

    #[test]
    fn obfuscated_names_are_complex_but_readable() {
        for cmd in ["r''m -rf /", "\\rm -rf /", "\"rm\" -rf /", "$X -rf /"] {
            let a = analyze(cmd);
            assert!(!a.is_simple(), "{cmd}");
        }
        let a = analyze("r''m -rf /");
        assert_eq!(a.commands[0].name(), Some("rm"));
    }

    #[test]
    fn nested_shells_and_exec() {
        let a = analyze("bash -c 'ls && rm -rf /tmp/x'");
        assert_eq!(
            names(&a),
            ["bash -c 'ls && rm -rf /tmp/x'", "ls", "rm -rf /tmp/x"]
        );
        let a = analyze("find . -name '*.tmp' -exec rm {} \\;");
        assert_eq!(a.commands[1].raw_text(), "rm {}");
        let a = analyze("ls | xargs -0 rm -f");
        assert_eq!(
            a.commands.last().map(SimpleCommand::raw_text).as_deref(),
            Some("rm -f")
        );
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        for (open, close) in [
            ("$(", ")"),
            ("(", ")"),
            ("{ ", "; }"),
            ("\"$(", ")\""),
            ("`", "`"),
        ] {
            let cmd = format!("{}ls{}", open.repeat(20_000), close.repeat(20_000));
            let a = analyze(&cmd);
            assert!(!a.is_simple());
        }
    }

    #[test]
    fn non_ascii_text_keeps_its_words() {
        let a = analyze("echo \"héllo wörld\" && git commit -m '日本語' && ls ü*");
        assert!(a.is_simple(), "{:?}", a.complex);
        assert_eq!(a.commands[0].words[1].value.as_deref(), Some("héllo wörld"));
        assert_eq!(a.commands[1].raw_text(), "git commit -m '日本語'");
        assert_eq!(a.commands[2].words[1].raw, "ü*");
        // Never handed to the C scanner as a code point above 255.
        for cmd in [
            "${\u{10FFFF}",
            "x{\u{1F600}}",
            "$((\u{FFFD}))",
            "<<\u{0100}\n\u{0100}\n\u{0100}",
        ] {
            let _ = analyze(cmd);
        }
    }

    #[test]
    fn arithmetic_literals() {
        for ok in [
            "1 + 2",
            "$# * 2",
            "${#x}",
            "${#a[@]}",
            "0x1f",
            "16#ff",
            "(1 ? 2 : 3)",
            "\"1\"",
        ] {
            assert!(arithmetic_is_literal(ok), "{ok}");
        }
        for bad in [
            "x",
            "$x",
            "${x}",
            "a[1]",
            "$(echo 1)",
            "`id`",
            "${#a[i]}",
            "$1",
            "'1'",
        ] {
            assert!(!arithmetic_is_literal(bad), "{bad}");
        }
    }

    #[test]
    fn continuation_lines_are_not_line_breaks() {
        assert!(!has_line_break("2>/dev/null \\\nsrc"));
        assert!(has_line_break("x\nrm"));
        assert!(has_line_break("x \\\\\nrm"));
        // Bash takes `\<CR>` for an escaped carriage return: the line feed after it ends
        // the line (only a backslash right before the line feed continues it).
        assert!(has_line_break("x \\\r\nrm"));
        assert!(!has_line_break("x\r"));
    }

    #[test]
    fn continuations_that_join_words() {
        let joins = |cmd: &str| {
            let tree = parse(cmd).expect("parsed");
            continuations(
                cmd.as_bytes(),
                &literal_ranges(tree.root_node(), cmd.as_bytes()),
            )
            .map(|j| String::from_utf8(j).expect("utf-8"))
        };
        assert_eq!(joins("tr\\\nuncate x").as_deref(), Some("truncate x"));
        assert_eq!(joins("a\\ \\\nb").as_deref(), Some("a\\ b"));
        assert_eq!(joins("echo \"$\\\n(x)\"").as_deref(), Some("echo \"$(x)\""));
        assert_eq!(joins("a\\\n\\\nb").as_deref(), Some("ab"));
        // Joined while the single-quoted one is kept.
        assert_eq!(
            joins("echo 'a\\\nb' c\\\nd").as_deref(),
            Some("echo 'a\\\nb' cd")
        );
        for keeps in [
            "cargo test \\\n  --all",
            "ls\\\n -la",
            "ls \\\n\\\n-la",
            "a &&\\\nb",
            "a |\\\nb",
            "echo 'a\\\nb'",
            "echo $'a\\\nb'",
            "ls # a\\\nb",
            "echo a\\\\\nb",
            "cat <<'EOF'\na\\\nb\nEOF",
        ] {
            assert_eq!(joins(keeps), None, "{keeps}");
        }
        for joined in [
            "a |\\\n|b",
            "a &\\\n>b",
            "a \\;\\\nb",
            "cat <<EOF\na\\\nb\nEOF",
        ] {
            assert!(joins(joined).is_some(), "{joined}");
        }
    }

    #[test]
    fn substitutions_split_by_a_continuation() {
        assert!(has_unescaped_substitution("$\\\n(x)", false));
        assert!(has_unescaped_substitution("$\\\n\\\n(x)", false));
        assert!(has_unescaped_substitution("<\\\n(x)", true));
        assert!(!has_unescaped_substitution("<\\\n(x)", false));
        assert!(!has_unescaped_substitution("\\$\\\n(x)", false));
        assert!(!has_unescaped_substitution("\\`x\\`", false));
        assert!(has_unescaped_substitution("\\\\`x`", false));
        assert_eq!(without_continuations("a\\\nb\\\\\nc"), "ab\\\\\nc");
    }

    #[test]
    fn directories_after_cd() {
        let dirs = |cmd: &str| {
            let a = analyze(cmd);
            let c = a.commands.last().cloned();
            c.map(|c| (c.cwd, c.other_cwds))
        };
        assert_eq!(dirs("cd src && ls"), Some((Some("src".into()), vec![])));
        assert_eq!(dirs("cd src || ls"), Some((None, vec![])));
        assert_eq!(dirs("cd src; ls"), Some((Some("src".into()), vec![None])));
        assert_eq!(dirs("(cd src) && ls"), Some((None, vec![])));
        assert_eq!(dirs("cd src | ls"), Some((None, vec![])));
        assert_eq!(
            dirs("cd a && cd b && ls"),
            Some((Some("a/b".into()), vec![]))
        );
        assert_eq!(
            dirs("eval cd src && ls"),
            Some((None, vec![Some("src".into())]))
        );
        assert_eq!(
            dirs("cd $X && ls"),
            Some((Some(UNKNOWN_DIR.into()), vec![]))
        );
    }

    #[test]
    fn truncation() {
        assert!(!analyze("ls && rm x").truncated);
        let deep = format!("{}rm x{}", "$(".repeat(300), ")".repeat(300));
        let a = analyze(&deep);
        assert!(a.truncated);
        assert!(a.commands.iter().any(|c| c.name() == Some("rm")));
        assert!(analyze(&"eval ".repeat(10)).truncated);
        assert!(analyze(&"a".repeat(MAX_ANALYZED_CHARS + 1)).truncated);
    }

    #[test]
    fn redirects() {
        let a = analyze("echo hi > out.txt 2>&1");
        assert_eq!(a.redirects.len(), 2);
        assert_eq!(a.redirects[0].kind, RedirectKind::Write);
        assert_eq!(a.redirects[1].kind, RedirectKind::FdDup);
        assert_eq!(names(&a), ["echo hi"]);
    }
}
