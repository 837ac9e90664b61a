//! GNU sed command lines: what read-only analysis and acceptEdits mode allow.
//!
//! sed is powerful: its `e` command and the `e` flag of `s` run shell commands, `w`/`W` and
//! the `w` flag write files, `r`/`R` read them, `-f` reads a script from a file. Only two
//! narrow forms are auto-allowed: `sed -n` with a print-only script (read-only), and, in
//! acceptEdits mode, substitutions without the `e`/`w` flags and `p`/`d` commands. Anything
//! not understood is refused (asked).

/// A sed command line, options read as GNU sed reads them (options may follow operands).
#[derive(Debug, Default)]
struct SedCall<'a> {
    /// `-n`, `--quiet`, `--silent`.
    quiet: bool,
    /// `-i`/`--in-place`, with its backup suffix (empty without one).
    in_place: Option<&'a str>,
    /// `-i ''`: BSD (macOS) sed's empty backup suffix as its own word. GNU sed reads that word
    /// as the script and the next one as a file.
    bsd_empty_suffix: bool,
    /// Scripts given with `-e`/`--expression`.
    expressions: Vec<&'a str>,
    /// Script files given with `-f`/`--file`: the index of the argument holding the name and
    /// the byte offset of the name in it (`-fFILE`, `--file=FILE`).
    script_files: Vec<(usize, usize)>,
    /// Other short options.
    short_flags: String,
    /// Other long options, by full name (without dashes, before `=`).
    long_options: Vec<&'a str>,
    /// A long option was abbreviated (`--expr`): read as GNU sed reads it, but never
    /// auto-allowed.
    abbreviated: bool,
    /// The script (when no `-e`/`-f`) and the files, with their argument indices.
    operands: Vec<(usize, &'a str)>,
}

/// GNU sed's long options.
const LONG_OPTIONS: &[&str] = &[
    "quiet",
    "silent",
    "debug",
    "expression",
    "file",
    "follow-symlinks",
    "in-place",
    "line-length",
    "posix",
    "regexp-extended",
    "separate",
    "sandbox",
    "unbuffered",
    "null-data",
    "zero-terminated",
    "binary",
    "help",
    "version",
];

/// The long option `name` names: itself, or the only one it abbreviates.
fn resolve_long(name: &str) -> Option<&'static str> {
    if let Some(l) = LONG_OPTIONS.iter().find(|l| **l == name) {
        return Some(l);
    }
    let mut found = LONG_OPTIONS
        .iter()
        .filter(|l| !name.is_empty() && l.starts_with(name));
    match (found.next(), found.next()) {
        (Some(l), None) => Some(l),
        _ => None,
    }
}

impl<'a> SedCall<'a> {
    /// Reads `args` (after the command name); `None` when an option is not understood or a
    /// value is missing.
    fn parse(args: &[&'a str]) -> Option<Self> {
        let mut call = Self::default();
        let mut i = 0;
        let mut options_done = false;
        while let Some(&a) = args.get(i) {
            let at = i;
            i += 1;
            if options_done || a == "-" || !a.starts_with('-') {
                call.operands.push((at, a));
                continue;
            }
            if a == "--" {
                options_done = true;
                continue;
            }
            if let Some(long) = a.strip_prefix("--") {
                let (written, value) = match long.split_once('=') {
                    Some((n, v)) => (n, Some((at, 2 + n.len() + 1, v))),
                    None => (long, None),
                };
                // As getopt reads it: the exact name, else the only one it abbreviates.
                let name = resolve_long(written)?;
                call.abbreviated |= name != written;
                let mut take = || {
                    value.or_else(|| {
                        i += 1;
                        args.get(i - 1).map(|v| (i - 1, 0, *v))
                    })
                };
                match name {
                    "quiet" | "silent" if value.is_none() => call.quiet = true,
                    "expression" => call.expressions.push(take()?.2),
                    "file" => {
                        let (idx, offset, _) = take()?;
                        call.script_files.push((idx, offset));
                    }
                    "in-place" => call.in_place = Some(value.map_or("", |v| v.2)),
                    "line-length" => {
                        take()?;
                        call.long_options.push(name);
                    }
                    _ => call.long_options.push(name),
                }
                continue;
            }
            for (k, c) in a.char_indices().skip(1) {
                let after = k + c.len_utf8();
                let rest = &a[after..];
                let mut value = || {
                    if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).map(|v| (i - 1, 0, *v))
                    } else {
                        Some((at, after, rest))
                    }
                };
                match c {
                    'n' => call.quiet = true,
                    'E' | 'r' | 's' | 'z' | 'u' | 'b' => call.short_flags.push(c),
                    'i' => {
                        call.in_place = Some(rest);
                        if rest.is_empty() && args.get(i) == Some(&"") {
                            call.bsd_empty_suffix = true;
                            i += 1;
                        }
                        break;
                    }
                    'e' => {
                        call.expressions.push(value()?.2);
                        break;
                    }
                    'f' => {
                        let (idx, offset, _) = value()?;
                        call.script_files.push((idx, offset));
                        break;
                    }
                    'l' => {
                        value()?;
                        call.short_flags.push(c);
                        break;
                    }
                    _ => return None,
                }
            }
        }
        Some(call)
    }

    /// Whether the script is the first operand (no `-e`, no `-f`).
    fn script_is_operand(&self) -> bool {
        self.expressions.is_empty() && self.script_files.is_empty()
    }

    /// The scripts sed runs: the `-e` ones, else the first operand. Empty with `-f`.
    fn scripts(&self) -> Vec<&'a str> {
        if !self.script_files.is_empty() {
            Vec::new()
        } else if self.expressions.is_empty() {
            self.operands.first().map(|(_, s)| *s).into_iter().collect()
        } else {
            self.expressions.clone()
        }
    }
}

/// Whether `sed ARGS` may run a shell command: a script with the GNU `e` command (`1e rm
/// x`) or an `s` command with the `e` flag (`s/.*/rm x/e`), or one read from a file (not
/// seen here). `true` when the line is not understood.
pub(crate) fn may_execute(args: &[&str]) -> bool {
    let Some(call) = SedCall::parse(args) else {
        return true;
    };
    !call.script_files.is_empty() || call.scripts().iter().any(|s| script_executes(s))
}

/// Whether a sed script has an `e` command or an `s///e` flag, read loosely: each command's
/// address (line numbers, `$`, `/re/`, `first~step`, ranges, `!`) is passed over.
fn script_executes(script: &str) -> bool {
    let chars: Vec<char> = script.chars().collect();
    let mut i = 0;
    // Skips a delimited part from `i` (at the delimiter), honouring backslashes; returns the
    // index after the closing delimiter.
    // Skips a delimited part from `i` (at the delimiter), honouring backslashes and bracket
    // expressions (`/[/]/`: the `/` in brackets does not end it); returns the index after
    // the closing delimiter.
    let skip_delimited = |mut i: usize, delim: char| -> usize {
        i += 1;
        while i < chars.len() && chars[i] != delim {
            match chars[i] {
                '\\' => i += 1,
                '[' => {
                    i += 1;
                    // `[]…]` and `[^]…]`: a leading `]` is a member.
                    if chars.get(i) == Some(&'^') {
                        i += 1;
                    }
                    if chars.get(i) == Some(&']') {
                        i += 1;
                    }
                    while i < chars.len() && chars[i] != ']' {
                        i += 1;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        i + 1
    };
    while i < chars.len() {
        // The address.
        loop {
            match chars.get(i) {
                Some(c) if c.is_whitespace() || c.is_ascii_digit() => i += 1,
                Some('$' | ',' | '!' | '~' | '+' | ';' | '{' | '}') => i += 1,
                // A regex address, and the `I`/`M` flags that may follow it.
                Some('/') => {
                    i = skip_delimited(i, '/');
                    while matches!(chars.get(i), Some('I' | 'M')) {
                        i += 1;
                    }
                }
                Some('\\') => match chars.get(i + 1) {
                    Some(&d) => {
                        i = skip_delimited(i + 1, d);
                        while matches!(chars.get(i), Some('I' | 'M')) {
                            i += 1;
                        }
                    }
                    None => return false,
                },
                _ => break,
            }
        }
        match chars.get(i) {
            None => return false,
            Some('e') => return true,
            Some('s' | 'y') => {
                let is_s = chars[i] == 's';
                let Some(&delim) = chars.get(i + 1) else {
                    return false;
                };
                let mut j = skip_delimited(i + 1, delim);
                j = skip_delimited(j - 1, delim);
                // The flags, up to the end of the command.
                while let Some(&c) = chars.get(j) {
                    if matches!(c, ';' | '\n' | '}') {
                        break;
                    }
                    if is_s && c == 'e' {
                        return true;
                    }
                    // `w FILE` takes the rest of the line.
                    if c == 'w' {
                        while chars.get(j).is_some_and(|c| *c != '\n') {
                            j += 1;
                        }
                        break;
                    }
                    j += 1;
                }
                i = j;
            }
            // Commands whose argument is the rest of the line (`a text`, `r file`, `w file`,
            // a comment): skipped to its end. (A label, `:a` or `b a`, ends at `;` too in
            // GNU sed: the commands after it are read.)
            Some('a' | 'i' | 'c' | 'r' | 'R' | 'w' | 'W' | '#') => {
                while chars.get(i).is_some_and(|c| *c != '\n') {
                    i += 1;
                }
            }
            Some(_) => {
                i += 1;
                while chars.get(i).is_some_and(|c| !matches!(c, ';' | '\n' | '}')) {
                    i += 1;
                }
            }
        }
    }
    false
}

/// The paths `sed ARGS` reads or writes: its script files and its files, each as (index in
/// `args`, byte offset of the path in it). With `-i ''` both readings count (BSD: the first
/// operand is the script; GNU: it is a file). `None` when the command line is not
/// understood.
pub(crate) fn paths(args: &[&str]) -> Option<Vec<(usize, usize)>> {
    let call = SedCall::parse(args)?;
    let skip_script = call.script_is_operand() && !call.bsd_empty_suffix;
    let mut out = call.script_files.clone();
    out.extend(
        call.operands
            .iter()
            .skip(usize::from(skip_script))
            .map(|(i, _)| (*i, 0)),
    );
    Some(out)
}

/// Whether `sed ARGS` may read or write files its command line does not name: a script from
/// a file, or a script that is not a plain edit and has `r`/`R`/`w`/`W` in it (`1r .env`,
/// `w out`, `s/a/b/w out`). Their names are in the script, which is not taken apart: the
/// caller treats them as paths that cannot be checked. `true` when the line is not
/// understood.
pub(crate) fn may_use_script_files(args: &[&str]) -> bool {
    let Some(call) = SedCall::parse(args) else {
        return true;
    };
    !call.script_files.is_empty()
        || call.scripts().iter().any(|s| {
            // A computed script (`sed "$S"`) may hold anything.
            s.contains('\0') || (!is_edit_script(s) && s.contains(['r', 'R', 'w', 'W']))
        })
}

/// Why the files `sed ARGS` may use cannot be checked, when [`may_use_script_files`] says
/// so for a command line that is understood and whose scripts are all written out: "a sed
/// script file (`-f fix.sed`)", or "a sed script that reads or writes other files (`r
/// /etc/hostname`)" naming the first command that does (`r`, `R`, `w`, `W`, `s///w`), or
/// "a sed script that may read or write other files (`SCRIPT`)" when none is found (one of
/// those letters in a script that is not a plain edit). `None` otherwise: a line not
/// understood or a computed script is a computed path.
pub(crate) fn script_files_reason(args: &[&str]) -> Option<String> {
    let call = SedCall::parse(args)?;
    if let Some(&(index, offset)) = call.script_files.first() {
        let name = args.get(index)?.get(offset..)?;
        return Some(format!("a sed script file (`-f {}`)", shown(name)));
    }
    let scripts = call.scripts();
    if scripts.iter().any(|s| s.contains('\0')) {
        return None;
    }
    let risky: Vec<&str> = scripts
        .into_iter()
        .filter(|s| !is_edit_script(s) && s.contains(['r', 'R', 'w', 'W']))
        .collect();
    if let Some(command) = risky.iter().find_map(|s| file_command(s)) {
        return Some(format!(
            "a sed script that reads or writes other files (`{}`)",
            shown(command)
        ));
    }
    risky.first().map(|s| {
        format!(
            "a sed script that may read or write other files (`{}`)",
            shown(s)
        )
    })
}

/// A script or command as a message quotes it: its first line, at most 80 characters.
fn shown(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or("");
    let mut out: String = line.chars().take(80).collect();
    if out.len() < text.trim().len() {
        out.push('…');
    }
    out
}

/// The first command of a sed script that names a file (`r F`, `R F`, `w F`, `W F`, an `s`
/// with the `w` flag), with its address, as written (to the end of its line); read as
/// loosely as [`script_executes`] reads a script.
fn file_command(script: &str) -> Option<&str> {
    let chars: Vec<(usize, char)> = script.char_indices().collect();
    let at = |i: usize| chars.get(i).map(|(_, c)| *c);
    let offset = |i: usize| chars.get(i).map_or(script.len(), |(o, _)| *o);
    let line_end = |i: usize| {
        let mut j = i;
        while at(j).is_some_and(|c| c != '\n') {
            j += 1;
        }
        j
    };
    // From `i` at a delimiter, the index after the next unescaped one.
    let skip_delimited = |mut i: usize, delim: char| -> usize {
        i += 1;
        while at(i).is_some_and(|c| c != delim) {
            if at(i) == Some('\\') {
                i += 1;
            }
            i += 1;
        }
        i + 1
    };
    let mut i = 0;
    while i < chars.len() {
        while at(i).is_some_and(|c| c.is_whitespace() || matches!(c, ';' | '{' | '}')) {
            i += 1;
        }
        let start = i;
        // The address.
        loop {
            match at(i) {
                Some(c) if c.is_ascii_digit() || matches!(c, '$' | ',' | '!' | '~' | '+' | ' ') => {
                    i += 1;
                }
                Some('/') => {
                    i = skip_delimited(i, '/');
                    while matches!(at(i), Some('I' | 'M')) {
                        i += 1;
                    }
                }
                Some('\\') => match at(i + 1) {
                    Some(d) => {
                        i = skip_delimited(i + 1, d);
                        while matches!(at(i), Some('I' | 'M')) {
                            i += 1;
                        }
                    }
                    None => return None,
                },
                _ => break,
            }
        }
        let end = line_end(i);
        match at(i)? {
            'r' | 'R' | 'w' | 'W' => return Some(script[offset(start)..offset(end)].trim()),
            's' | 'y' => {
                let is_s = at(i) == Some('s');
                let delim = at(i + 1)?;
                let mut j = skip_delimited(i + 1, delim);
                j = skip_delimited(j - 1, delim);
                while let Some(c) = at(j) {
                    if matches!(c, ';' | '\n' | '}') {
                        break;
                    }
                    if is_s && c == 'w' {
                        return Some(script[offset(start)..offset(end)].trim());
                    }
                    j += 1;
                }
                i = j;
            }
            // Text to the end of the line (`a text`, `i text`, `c text`, a comment).
            'a' | 'i' | 'c' | '#' => i = end,
            _ => {
                i += 1;
                while at(i).is_some_and(|c| !matches!(c, ';' | '\n' | '}')) {
                    i += 1;
                }
            }
        }
    }
    None
}

/// Whether `sed ARGS` only prints lines: `-n` (or `--quiet`), no `-i`, no `-f`, options that
/// change nothing but the reading (`-E -r -s -z -u`), and scripts made of line numbers,
/// `$`, `,`, `;` and `p`.
pub(crate) fn is_read_only_sed(args: &[&str]) -> bool {
    let Some(call) = SedCall::parse(args) else {
        return false;
    };
    let scripts = call.scripts();
    call.quiet
        && !call.abbreviated
        && call.in_place.is_none()
        && call.script_files.is_empty()
        && call.short_flags.chars().all(|c| "Ersuz".contains(c))
        && call.long_options.iter().all(|o| {
            matches!(
                *o,
                "regexp-extended"
                    | "separate"
                    | "null-data"
                    | "zero-terminated"
                    | "unbuffered"
                    | "posix"
                    | "debug"
                    | "sandbox"
            )
        })
        && !scripts.is_empty()
        && scripts.iter().all(|s| {
            s.chars()
                .all(|c| c.is_ascii_digit() || matches!(c, ',' | '$' | 'p' | ';' | ' '))
        })
}

/// Whether acceptEdits may run `sed ARGS` (its files are checked separately): options only
/// `-i`/`--in-place` without a backup suffix (a suffix can name another file; BSD's `-i ''`
/// is none), `-n`, `-E`,
/// `-r` and `-e`/`--expression`; every script made of `s` commands without the `e` and `w`
/// flags and `p`/`d` commands, each with optional addresses.
pub(crate) fn accept_edits_allows_sed(args: &[&str]) -> bool {
    let Some(call) = SedCall::parse(args) else {
        return false;
    };
    let scripts = call.scripts();
    call.in_place.is_none_or(str::is_empty)
        && !call.abbreviated
        && call.script_files.is_empty()
        && call.short_flags.chars().all(|c| "Er".contains(c))
        && call.long_options.iter().all(|o| *o == "regexp-extended")
        && !scripts.is_empty()
        && scripts.iter().all(|s| is_edit_script(s))
}

/// A cursor over a sed script.
struct Script<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
}

impl Script<'_> {
    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn eat(&mut self, c: char) -> bool {
        self.chars.next_if_eq(&c).is_some()
    }

    fn skip_blanks(&mut self) {
        while self.chars.next_if(|c| *c == ' ' || *c == '\t').is_some() {}
    }

    fn digits(&mut self) -> bool {
        let mut any = false;
        while self.chars.next_if(char::is_ascii_digit).is_some() {
            any = true;
        }
        any
    }

    /// Text up to the unescaped `delim`, as GNU sed's `match_slash` reads it: a backslash
    /// escapes any character (a line break included); an unescaped line break is an error.
    fn delimited(&mut self, delim: char) -> bool {
        while let Some(c) = self.chars.next() {
            match c {
                '\\' if self.chars.next().is_none() => return false,
                '\\' => {}
                '\n' => return false,
                c if c == delim => return true,
                _ => {}
            }
        }
        false
    }

    /// One address: a line number (`N`, `N~M`), `$`, or a regex (`/re/`, `\cREc`) with its
    /// `I`/`M` flags. `None` on a syntax error, `Some(false)` when there is none.
    fn address(&mut self) -> Option<bool> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.digits();
                if self.eat('~') && !self.digits() {
                    return None;
                }
            }
            Some('$') => {
                self.chars.next();
            }
            Some('/') => {
                self.chars.next();
                if !self.delimited('/') {
                    return None;
                }
                while self.chars.next_if(|c| matches!(c, 'I' | 'M')).is_some() {}
            }
            Some('\\') => {
                self.chars.next();
                let delim = self.chars.next().filter(|d| *d != '\n' && *d != '\\')?;
                if !self.delimited(delim) {
                    return None;
                }
                while self.chars.next_if(|c| matches!(c, 'I' | 'M')).is_some() {}
            }
            _ => return Some(false),
        }
        Some(true)
    }

    /// Optional `addr1[,addr2]` and `!`.
    fn addresses(&mut self) -> bool {
        match self.address() {
            None => return false,
            Some(true) => {
                self.skip_blanks();
                if self.eat(',') {
                    self.skip_blanks();
                    if self.eat('+') || self.eat('~') {
                        if !self.digits() {
                            return false;
                        }
                    } else if self.address() != Some(true) {
                        return false;
                    }
                }
            }
            Some(false) => {}
        }
        self.skip_blanks();
        if self.eat('!') {
            self.skip_blanks();
        }
        true
    }

    /// `s/re/replacement/flags` after the `s`: flags limited to `g p i I m M` and a number.
    fn substitution(&mut self) -> bool {
        let Some(delim) = self.chars.next().filter(|d| *d != '\n' && *d != '\\') else {
            return false;
        };
        if !self.delimited(delim) || !self.delimited(delim) {
            return false;
        }
        while self
            .chars
            .next_if(|c| matches!(c, 'g' | 'p' | 'i' | 'I' | 'm' | 'M') || c.is_ascii_digit())
            .is_some()
        {}
        true
    }

    /// The end of a command: blanks, then `;`, a line break or the end of the script.
    fn end_of_command(&mut self) -> bool {
        self.skip_blanks();
        self.peek().is_none() || self.eat(';') || self.eat('\n')
    }
}

/// Whether a sed script only substitutes (no `e`/`w` flag), prints or deletes lines.
fn is_edit_script(script: &str) -> bool {
    let mut s = Script {
        chars: script.chars().peekable(),
    };
    let mut commands = 0;
    loop {
        while s
            .chars
            .next_if(|c| matches!(c, ' ' | '\t' | '\n' | ';'))
            .is_some()
        {}
        if s.peek().is_none() {
            return commands > 0;
        }
        if !s.addresses() {
            return false;
        }
        let ok = match s.chars.next() {
            Some('s') => s.substitution(),
            Some('p' | 'd') => true,
            _ => false,
        };
        if !ok || !s.end_of_command() {
            return false;
        }
        commands += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_that_run_commands() {
        for script in [
            "1e rm x",
            "e",
            "$e touch y",
            "/x/e date",
            "s/.*/rm x/e",
            "s|a|b|ge",
            "1d;2e ls",
            "/a/,/b/{e id\n}",
            "/x/Ie rm -rf x",
            "/[/]/e",
            ":a;e rm x",
            "s/x/y/;T;e rm x",
            "b end;e id",
            "\\%x%Me date",
            "s/e/f/;e",
        ] {
            assert!(script_executes(script), "{script}");
        }
        for script in [
            "s/hello/there/",
            "s/e/E/g",
            "/e/d",
            "1,5p",
            "a echo e",
            "y/abe/xyz/",
            "s/x/y/w out.e",
            "\\%e%d",
        ] {
            assert!(!script_executes(script), "{script}");
        }
        assert!(may_execute(&["-n", "1e rm v10", "t.txt"]));
        assert!(may_execute(&["-f", "script.sed", "t.txt"]));
        assert!(!may_execute(&["-i", "s/a/b/", "t.txt"]));
    }

    #[test]
    fn edit_scripts() {
        for ok in [
            "s/a/b/",
            "s/a/b/g",
            "s|a|b|2",
            "s/a\\/b/c/",
            "s/(a)/\\1b/gI",
            "/^#/d",
            "3d;$d",
            "2,/x/ s/a/b/",
            "1!s/a/b/",
            "0,/re/d",
            "1~2p",
            "$!d",
            "\\,x,d",
            "s/a/b\\\nc/",
            "s/a/b/ ; p",
        ] {
            assert!(is_edit_script(ok), "{ok:?}");
        }
        for bad in [
            "",
            "s/a/b/e",
            "s/a/b/w /tmp/x",
            "s/a/b/gw x",
            "s/a\\/b/c/w /tmp/x",
            "s/a/b/;e touch x",
            "s/a/b/\ne x",
            "r /etc/shadow",
            "1R x",
            "W x",
            "1!G;h;$!d",
            "/x/{s/a/b/}",
            "s/a/b",
            "s/a\nb/c/",
            "s/[/]/x/w y",
            "y/abc/xyz/",
            "s/a/b/ # c",
            "1,",
            "/x",
            "s\\a\\b\\",
        ] {
            assert!(!is_edit_script(bad), "{bad:?}");
        }
    }

    #[test]
    fn commands_that_name_files() {
        for (script, command) in [
            ("r /etc/hostname", Some("r /etc/hostname")),
            ("1R x", Some("1R x")),
            ("s/a/b/;$W y.txt", Some("$W y.txt")),
            ("s/a/b/w out", Some("s/a/b/w out")),
            ("/x/,/y/ w out\np", Some("/x/,/y/ w out")),
            ("s/r/w/g;1!G", None),
            ("a read this\n2w out", Some("2w out")),
            ("s/a\\/r/b/gw o", Some("s/a\\/r/b/gw o")),
        ] {
            assert_eq!(file_command(script), command, "{script:?}");
        }
        assert_eq!(
            script_files_reason(&["-i", "r /etc/hostname", "f"]).as_deref(),
            Some("a sed script that reads or writes other files (`r /etc/hostname`)")
        );
        assert_eq!(
            script_files_reason(&["-i", "-ffix.sed", "f"]).as_deref(),
            Some("a sed script file (`-f fix.sed`)")
        );
        assert_eq!(
            script_files_reason(&["-i", "1!G;h;$!d", "f"]).as_deref(),
            None,
            "no r/R/w/W: the script names no file"
        );
        assert_eq!(
            script_files_reason(&["-i", "y/r/w/", "f"]).as_deref(),
            Some("a sed script that may read or write other files (`y/r/w/`)")
        );
        assert_eq!(script_files_reason(&["-i", "\0computed", "f"]), None);
        assert_eq!(script_files_reason(&["-x", "f"]), None);
    }

    #[test]
    fn options() {
        assert!(accept_edits_allows_sed(&["-i", "s/a/b/", "f"]));
        assert!(accept_edits_allows_sed(&[
            "-i", "-e", "s/a/b/", "-e", "1d", "f"
        ]));
        assert!(accept_edits_allows_sed(&[
            "--in-place",
            "--expression=s/a/b/",
            "f"
        ]));
        assert!(!accept_edits_allows_sed(&["-i.bak", "s/a/b/", "f"]));
        assert!(!accept_edits_allows_sed(&["-ie", "s/a/b/", "f"]));
        assert!(!accept_edits_allows_sed(&["-i", "-f", "x.sed", "f"]));
        assert!(!accept_edits_allows_sed(&["-i", "--expr=s/a/b/", "f"]));
        assert!(!accept_edits_allows_sed(&["-i", "-e"]));
        // BSD `-i ''`: the empty suffix is skipped, the next operand is the script.
        assert!(accept_edits_allows_sed(&["-i", "", "s/a/b/g", "f"]));
        assert!(!accept_edits_allows_sed(&["-i", "", "1e x", "f"]));
        assert_eq!(
            paths(&["-i", "", "s/a/b/", "f"]),
            Some(vec![(2, 0), (3, 0)])
        );
        assert_eq!(paths(&["-n", "1p", "f"]), Some(vec![(2, 0)]));
        assert_eq!(paths(&["-nfs.sed", "f"]), Some(vec![(0, 3), (1, 0)]));
        assert_eq!(paths(&["--file=s.sed", "f"]), Some(vec![(0, 7), (1, 0)]));
        assert_eq!(paths(&["-x", "f"]), None);
        assert!(is_read_only_sed(&["-n", "1,5p", "f"]));
        assert!(is_read_only_sed(&["1p", "-n", "f"]));
        assert!(!is_read_only_sed(&["-n", "1p", "-ne", "1e x", "f"]));
        assert!(!is_read_only_sed(&["-n", "1p", "--expression=1e x", "f"]));
        // After `--`, `-e` is a file.
        assert!(is_read_only_sed(&["-n", "--", "1p", "-e"]));
        assert!(!is_read_only_sed(&["1p", "f"]));
    }
}
