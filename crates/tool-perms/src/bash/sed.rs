//! GNU sed command lines: what read-only analysis and acceptEdits mode allow, and the files
//! a script names.
//!
//! sed is powerful: its `e` command and the `e` flag of `s` run shell commands, `w`/`W` and
//! the `w` flag write files, `r`/`R` read them, `-f` reads a script from a file. Only two
//! narrow forms are auto-allowed: `sed -n` with a print-only script (read-only), and, in
//! acceptEdits mode, substitutions without the `e`/`w` flags and `p`/`d` commands. Anything
//! not understood is refused (asked).
//!
//! The files a script names are found by reading it as GNU sed does ([`script_files`]:
//! `-e` pieces, commands on lines of their own or after `;`, addresses, blocks, the text of
//! `a`/`i`/`c`, labels, comments, `s`/`y` with any delimiter and bracket expressions read
//! both as GNU sed 4.9 and as earlier versions read them); the caller checks each as the
//! path it is, written or read. A script file (`-f`), a computed script and a script that
//! cannot be read are said to be unseen ([`Unseen`]).

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

    /// The scripts sed runs that the command line holds: the `-e` ones, else (no `-f`
    /// either) the first operand.
    fn scripts(&self) -> Vec<&'a str> {
        if self.script_is_operand() {
            self.operands.first().map(|(_, s)| *s).into_iter().collect()
        } else {
            self.expressions.clone()
        }
    }
}

/// Whether `sed ARGS` may run a shell command: a script with the GNU `e` command (`1e rm
/// x`) or an `s` command with the `e` flag (`s/.*/rm x/e`), read as GNU sed reads it
/// ([`Reader`], both readings of bracket expressions); one read from a file (not seen here)
/// or one that reading cannot take apart. `true` when the line is not understood.
pub(crate) fn may_execute(args: &[&str]) -> bool {
    let Some(call) = SedCall::parse(args) else {
        return true;
    };
    if !call.script_files.is_empty() {
        return true;
    }
    let reading = read_script(&joined_script(&call.scripts()));
    !reading.read || reading.executes
}

/// The scripts of a sed command line as GNU sed runs them: `-e` pieces joined by line
/// breaks, a computed word's text without its `"\0"` mark.
fn joined_script(scripts: &[&str]) -> String {
    scripts
        .iter()
        .map(|s| s.strip_prefix('\0').unwrap_or(s))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A path in the arguments: the index of the argument and the byte offset of the path in it
/// (`-fFILE`: 2).
pub(crate) type ArgPath = (usize, usize);

/// The paths `sed ARGS` names on its command line: its script files (read), then its files
/// (read, or written in place), each as (index in `args`, byte offset of the path in it).
/// With `-i ''` both readings count (BSD: the first operand is the script; GNU: it is a
/// file). `None` when the command line is not understood.
pub(crate) fn paths(args: &[&str]) -> Option<(Vec<ArgPath>, Vec<ArgPath>)> {
    let call = SedCall::parse(args)?;
    let skip_script = call.script_is_operand() && !call.bsd_empty_suffix;
    let files = call
        .operands
        .iter()
        .skip(usize::from(skip_script))
        .map(|(i, _)| (*i, 0))
        .collect();
    Some((call.script_files, files))
}

/// A file a sed script names: `r FILE` and `R FILE` read it, `w FILE`, `W FILE` and the `w
/// FILE` flag of `s` write it (GNU sed creates or empties it as it reads the script, before
/// any line, even when a later command is an error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScriptFile {
    /// The name as sed takes it: the rest of its line, blanks before it left out. Never
    /// GNU sed's own names (`/dev/stdin`, `/dev/stdout`, `/dev/stderr`).
    pub(crate) name: String,
    /// Whether sed writes it (else it reads it).
    pub(crate) writes: bool,
    /// The command that names it, with its address, as written (`$W y.txt`, `s/a/b/w out`).
    pub(crate) command: String,
    /// The name comes from a script the shell computes and has an expansion in it (`w
    /// .git/hooks/$N`): what it names is the shell's to say.
    pub(crate) computed: bool,
}

/// Why the files sed's scripts use are not all known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unseen {
    /// A script read from a file (`-f FILE`, the first one's name): it may read and write
    /// any file.
    ScriptFile(String),
    /// A script the shell computes (`sed "$S"`, `sed "s/$a/b/"`): a computed path.
    Computed,
    /// A script this reading cannot take apart (shown as [`shown`] shows it), with the
    /// letter of a command that names a file in it: whether one that writes (`w`, `W`).
    Unreadable {
        /// The script, as a message quotes it.
        shown: String,
        /// Whether it has a `w` or a `W`.
        may_write: bool,
    },
}

impl Unseen {
    /// Whether what is not seen may write files.
    pub(crate) fn may_write(&self) -> bool {
        match self {
            Unseen::ScriptFile(_) | Unseen::Computed => true,
            Unseen::Unreadable { may_write, .. } => *may_write,
        }
    }
}

/// The files sed's scripts use ([`script_files`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ScriptFiles {
    /// Each file its scripts name, in order, once for each use.
    pub(crate) files: Vec<ScriptFile>,
    /// Why there may be others, when there may.
    pub(crate) unseen: Option<Unseen>,
}

/// The files the scripts of `sed ARGS` name (`-e` pieces joined by line breaks, as GNU sed
/// joins them, or the script operand), read as GNU sed reads a script ([`Reader`]). A
/// computed word is `"\0"` and its text without quotes: its script is [`Unseen::Computed`],
/// and the names in it are still read (a literal one is checked as written, one with an
/// expansion as a computed path). `None` when the command line is not understood.
pub(crate) fn script_files(args: &[&str]) -> Option<ScriptFiles> {
    let call = SedCall::parse(args)?;
    let scripts = call.scripts();
    let computed = scripts.iter().any(|s| s.starts_with('\0'));
    let script = joined_script(&scripts);
    let ScriptReading {
        mut files, read, ..
    } = read_script(&script);
    if computed {
        for f in &mut files {
            f.computed = f.name.contains(['$', '`']);
        }
    }
    let unseen = if let Some(&(index, offset)) = call.script_files.first() {
        let name = args.get(index)?.get(offset..)?;
        Some(Unseen::ScriptFile(name.trim_start_matches('\0').to_owned()))
    } else if computed {
        Some(Unseen::Computed)
    } else if !read && script.contains(['r', 'R', 'w', 'W']) {
        Some(Unseen::Unreadable {
            shown: shown(&script),
            may_write: script.contains(['w', 'W']),
        })
    } else {
        None
    };
    Some(ScriptFiles { files, unseen })
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

/// What [`read_script`] found in a script.
struct ScriptReading {
    /// The files it names, once each.
    files: Vec<ScriptFile>,
    /// Whether one of the readings took the whole script without an error.
    read: bool,
    /// Whether it has an `e` command or an `s` command with the `e` flag (in the part a
    /// reading took).
    executes: bool,
}

/// `script` read as GNU sed 4.9 reads it and as older versions do (which end a regex at the
/// delimiter inside a bracket expression: `s/[/]/x/`): the union of what both found. A
/// reading that stops at an error keeps the files named before it: GNU sed has made them by
/// then.
fn read_script(script: &str) -> ScriptReading {
    let mut found = ScriptReading {
        files: Vec::new(),
        read: false,
        executes: false,
    };
    let readings: &[bool] = if script.contains('[') {
        &[true, false]
    } else {
        &[true]
    };
    for &brackets in readings {
        let mut reader = Reader::new(script, brackets);
        found.read |= reader.program().is_some();
        found.executes |= reader.executes;
        for f in reader.files {
            if !found.files.contains(&f) {
                found.files.push(f);
            }
        }
    }
    found
}

/// GNU sed's reading of a script (its `compile_program`), for the files it names: commands
/// separated by `;` or line breaks, each with up to two addresses (`N`, `$`, `/re/`,
/// `\cREc`, `first~step`, `addr,+N`, `addr,~N`, `0,/re/`) and `!`; `{`/`}`; the text of `a`,
/// `i`, `c` and `e` (to the first line break without a backslash before it; `a\` starts it
/// on the next line); labels (to a blank or `;`); comments; `s` and `y` with any delimiter,
/// a backslash escaping any character (a line break too), the `w` flag taking the rest of the
/// line; `r`, `R`, `w`, `W` taking the rest of the line as the file name. Where it refuses a
/// script GNU sed refuses it too (an unknown command or flag, an unterminated `s`, extra
/// characters after a command), and what it takes for text or a name GNU sed takes so.
struct Reader<'a> {
    text: &'a str,
    chars: Vec<(usize, char)>,
    i: usize,
    /// GNU sed 4.9's reading of a bracket expression in a regex (`[/]`, `[]/]`, `[[:alpha:]/]`:
    /// the delimiter inside is a member); without it, the regex ends at the delimiter.
    brackets: bool,
    files: Vec<ScriptFile>,
    /// Whether an `e` command or an `s///e` flag was read.
    executes: bool,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str, brackets: bool) -> Self {
        Self {
            text,
            chars: text.char_indices().collect(),
            i: 0,
            brackets,
            files: Vec::new(),
            executes: false,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).map(|(_, c)| *c)
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        let here = self.peek() == Some(c);
        self.i += usize::from(here);
        here
    }

    /// The byte offset of character `i` (the end of the text past the last).
    fn offset(&self, i: usize) -> usize {
        self.chars.get(i).map_or(self.text.len(), |(o, _)| *o)
    }

    /// Spaces and tabs (GNU sed's `in_nonblank`).
    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.i += 1;
        }
    }

    fn digits(&mut self) -> bool {
        let from = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        self.i > from
    }

    /// To the next line break (left for the caller) or the end.
    fn skip_to_line_end(&mut self) {
        while self.peek().is_some_and(|c| c != '\n') {
            self.i += 1;
        }
    }

    /// The whole script; `None` at the first thing GNU sed refuses.
    fn program(&mut self) -> Option<()> {
        loop {
            while self
                .peek()
                .is_some_and(|c| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c' | ';'))
            {
                self.i += 1;
            }
            let Some(c) = self.peek() else {
                return Some(());
            };
            if c == '#' {
                self.skip_to_line_end();
                continue;
            }
            let start = self.i;
            let addressed = self.addresses()?;
            self.skip_blanks();
            if self.eat('!') {
                self.skip_blanks();
                if self.peek() == Some('!') {
                    return None;
                }
            }
            match self.next()? {
                '{' => {}
                '}' if !addressed => self.end_of_command()?,
                'a' | 'i' | 'c' => self.text(false)?,
                'e' => {
                    self.executes = true;
                    self.text(true)?;
                }
                ':' if !addressed => {
                    if self.label()? == 0 {
                        return None;
                    }
                }
                'b' | 't' | 'T' | 'v' => {
                    self.label()?;
                }
                'q' | 'Q' | 'l' | 'L' => {
                    self.skip_blanks();
                    self.digits();
                    self.end_of_command()?;
                }
                '=' | 'd' | 'D' | 'F' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x'
                | 'z' => self.end_of_command()?,
                c @ ('r' | 'R' | 'w' | 'W') => self.file(start, matches!(c, 'w' | 'W'))?,
                's' => self.substitution(start)?,
                'y' => {
                    let delim = self.delimiter()?;
                    self.delimited(delim, false)?;
                    self.delimited(delim, false)?;
                    self.end_of_command()?;
                }
                _ => return None,
            }
        }
    }

    /// Optional `addr1[,addr2]`: `Some(true)` when there is one.
    fn addresses(&mut self) -> Option<bool> {
        if !self.address(false)? {
            return Some(false);
        }
        self.skip_blanks();
        if self.eat(',') {
            self.skip_blanks();
            if !self.address(true)? {
                return None;
            }
        }
        Some(true)
    }

    /// One address: `Some(false)` when there is none here.
    fn address(&mut self, second: bool) -> Option<bool> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.digits();
                if self.eat('~') {
                    self.digits();
                }
            }
            Some('+' | '~') if second => {
                self.i += 1;
                if !self.digits() {
                    return None;
                }
            }
            Some('$') => self.i += 1,
            Some('/') => {
                self.i += 1;
                self.delimited('/', true)?;
                self.regex_flags();
            }
            Some('\\') => {
                self.i += 1;
                let delim = self.delimiter()?;
                self.delimited(delim, true)?;
                self.regex_flags();
            }
            _ => return Some(false),
        }
        Some(true)
    }

    /// The `I` and `M` flags of a regex address.
    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.i += 1;
        }
    }

    /// The delimiter of `s`, `y` or `\cREc`: any character but a line break or a backslash.
    fn delimiter(&mut self) -> Option<char> {
        self.next().filter(|c| !matches!(c, '\n' | '\\'))
    }

    /// To the unescaped `delim` (GNU sed's `match_slash`): a backslash escapes any character,
    /// a line break too; an unescaped line break or the end is an error. In a regex read
    /// with [`brackets`](Self::brackets), a bracket expression is passed over whole.
    fn delimited(&mut self, delim: char, regex: bool) -> Option<()> {
        loop {
            match self.next()? {
                '\n' => return None,
                c if c == delim => return Some(()),
                '\\' => {
                    self.next()?;
                }
                '[' if regex && self.brackets => self.bracket()?,
                _ => {}
            }
        }
    }

    /// A bracket expression after its `[`, read as GNU sed's `snarf_char_class` reads it: a
    /// leading `^`, then a leading `]` (a member); `[:`, `[=` or `[.` opens a class that only
    /// its own closing character right before a `]` closes (`[[:a::]]` is still open after
    /// `::]`); a backslash is a member. To the `]` that ends it; a line break or the end, an
    /// error.
    fn bracket(&mut self) -> Option<()> {
        let mut ch = self.next()?;
        if ch == '^' {
            ch = self.next()?;
        }
        if ch == ']' {
            ch = self.next()?;
        }
        // 0: outside a class; 1: after a `[`; 2: after the class's opening `.`, `:` or `=`
        // (`delim`); 3: after its closing one, before the `]`.
        let mut state = 0u8;
        let mut delim = '\0';
        loop {
            match ch {
                '\n' => return None,
                '.' | ':' | '=' if state == 1 => {
                    delim = ch;
                    state = 2;
                    ch = self.next()?;
                    continue;
                }
                c if state == 2 && c == delim => {
                    state = 3;
                    ch = self.next()?;
                    continue;
                }
                '[' => {
                    if state == 0 {
                        state = 1;
                    }
                    ch = self.next()?;
                    continue;
                }
                ']' if state <= 1 => return Some(()),
                ']' if state == 3 => state = 0,
                _ => {}
            }
            // Another character: after a `[` back outside, after a class's closing
            // character back inside the class.
            state &= !1;
            ch = self.next()?;
        }
    }

    /// The end of a command: blanks, then `;`, a line break, the end, or a `}` or `#` that
    /// follows (left for the next command).
    fn end_of_command(&mut self) -> Option<()> {
        self.skip_blanks();
        match self.peek() {
            None | Some('}' | '#') => Some(()),
            Some('\n' | ';') => {
                self.i += 1;
                Some(())
            }
            _ => None,
        }
    }

    /// A label (`:a`, `b end`, `v 4.2`): after blanks, to a blank, a `;`, a line break or
    /// the end. Its length. One holding a `#` or a `}` is not understood (`None`): GNU sed
    /// 4.9 ends a label there (`b#` is a branch, then a comment to the line's end), older
    /// versions take them into it, and the two readings differ in what runs after it.
    fn label(&mut self) -> Option<usize> {
        self.skip_blanks();
        let from = self.i;
        while let Some(c) = self.peek().filter(|c| !c.is_whitespace() && *c != ';') {
            if matches!(c, '#' | '}') {
                return None;
            }
            self.i += 1;
        }
        Some(self.i - from)
    }

    /// The text of `a`, `i`, `c` (or the command of `e`, which may be empty): after blanks,
    /// `\` and the character after it start it (`a\` and a line break: the next line), to
    /// the first line break without a backslash before it.
    fn text(&mut self, may_be_empty: bool) -> Option<()> {
        self.skip_blanks();
        match self.peek() {
            None => return may_be_empty.then_some(()),
            Some('\n') if may_be_empty => return Some(()),
            Some('\\') => {
                self.i += 1;
                // The character after it is the text's first (a line break: none).
                if self.next().is_none() {
                    return Some(());
                }
            }
            Some(_) => {}
        }
        while let Some(c) = self.next() {
            match c {
                '\\' => {
                    self.next();
                }
                '\n' => break,
                _ => {}
            }
        }
        Some(())
    }

    /// The file of `r`, `R`, `w`, `W` or the `w` flag: after blanks, the rest of the line;
    /// empty, an error. The command began at `start`.
    fn file(&mut self, start: usize, writes: bool) -> Option<()> {
        self.skip_blanks();
        let from = self.i;
        self.skip_to_line_end();
        let name = &self.text[self.offset(from)..self.offset(self.i)];
        if name.is_empty() {
            return None;
        }
        // Written, `/dev/stdin` is the file standard input was opened from where GNU sed
        // does not take it for its own name (`--posix`, `POSIXLY_CORRECT`): `w /dev/stdin`
        // with `< FILE` would empty FILE, which its redirection checked only as a read. No
        // script needs it: not understood.
        if writes && name == "/dev/stdin" {
            return None;
        }
        // GNU sed's own names: its standard input, output and error, no files.
        if !matches!(name, "/dev/stdin" | "/dev/stdout" | "/dev/stderr") {
            self.files.push(ScriptFile {
                name: name.to_owned(),
                writes,
                command: self.text[self.offset(start)..self.offset(self.i)]
                    .trim()
                    .to_owned(),
                computed: false,
            });
        }
        Some(())
    }

    /// `s` after its letter: the regex, the replacement, then the flags (`g`, `p`, `e`, `i`,
    /// `I`, `m`, `M`, a number, blanks), up to the end of the command or `w FILE`.
    fn substitution(&mut self, start: usize) -> Option<()> {
        let delim = self.delimiter()?;
        self.delimited(delim, true)?;
        self.delimited(delim, false)?;
        loop {
            match self.peek() {
                None | Some('}' | '#') => return Some(()),
                Some('\n' | ';') => {
                    self.i += 1;
                    return Some(());
                }
                Some('e') => {
                    self.executes = true;
                    self.i += 1;
                }
                Some(' ' | '\t' | 'g' | 'p' | 'i' | 'I' | 'm' | 'M') => self.i += 1,
                Some(c) if c.is_ascii_digit() => self.i += 1,
                Some('w') => {
                    self.i += 1;
                    return self.file(start, true);
                }
                _ => return None,
            }
        }
    }
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
            // A `[` in a replacement opens nothing: the `e` after it runs (GNU sed 4.9:
            // `echo x | sed 's/x/[/;e echo RAN'` prints RAN).
            "s/x/[/;e rm x",
            "y/x/[/;e rm x",
            "s/x/[/e",
            // Across `-e` pieces, joined by a line break.
            "s/a/b/\ne rm x",
            // Not taken apart (GNU sed refuses it, or versions read it differently): asked.
            "s/a/b",
            "b#x\ne id",
        ] {
            assert!(may_execute(&["-e", script, "f"]), "{script}");
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
            assert!(!may_execute(&["-e", script, "f"]), "{script}");
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

    /// The files `sed ARGS` names, as (name, writes, command).
    fn named(args: &[&str]) -> Vec<(String, bool, String)> {
        script_files(args)
            .unwrap()
            .files
            .into_iter()
            .map(|f| (f.name, f.writes, f.command))
            .collect()
    }

    fn file(name: &str, writes: bool, command: &str) -> (String, bool, String) {
        (name.to_owned(), writes, command.to_owned())
    }

    #[test]
    fn commands_that_name_files() {
        for (script, files) in [
            (
                "r /etc/hostname",
                vec![file("/etc/hostname", false, "r /etc/hostname")],
            ),
            ("1R x", vec![file("x", false, "1R x")]),
            ("s/a/b/;$W y.txt", vec![file("y.txt", true, "$W y.txt")]),
            ("s/a/b/w out", vec![file("out", true, "s/a/b/w out")]),
            ("s/a/b/gpw out", vec![file("out", true, "s/a/b/gpw out")]),
            ("s/a/b/ w  out", vec![file("out", true, "s/a/b/ w  out")]),
            ("/x/,/y/ w out\np", vec![file("out", true, "/x/,/y/ w out")]),
            ("s/r/w/g;1!G", vec![]),
            ("a read this\n2w out", vec![file("out", true, "2w out")]),
            ("s/a\\/r/b/gw o", vec![file("o", true, "s/a\\/r/b/gw o")]),
            // The name is the rest of the line: `;` and `}` too.
            ("w out;p}", vec![file("out;p}", true, "w out;p}")]),
            ("/a/{w x\n}", vec![file("x", true, "w x")]),
            (":a;w x", vec![file("x", true, "w x")]),
            ("b end;w x;:end", vec![file("x;:end", true, "w x;:end")]),
            ("y/abc/xyz/;w x", vec![file("x", true, "w x")]),
            // Text, a replacement, a regex, a comment, a command `e` runs: no file.
            ("a w x", vec![]),
            ("a foo\\\nw x", vec![]),
            ("i\\\nw x", vec![]),
            ("c\\\ntext\\\nw x\nw y", vec![file("y", true, "w y")]),
            ("s/w x/y/", vec![]),
            ("/w x/p", vec![]),
            ("# w x\np", vec![]),
            ("1e w x", vec![]),
            // GNU sed's own names.
            ("w /dev/stdout", vec![]),
            ("s/a/b/w /dev/stderr", vec![]),
            ("r /dev/stdin", vec![]),
            // A bracket expression, in both readings (GNU sed 4.9 and before).
            ("s/[/]/x/w a", vec![file("a", true, "s/[/]/x/w a")]),
            ("s/[/]/w b/", vec![file("b/", true, "s/[/]/w b/")]),
            (
                "s/[[:alpha:]/]/x/w c",
                vec![file("c", true, "s/[[:alpha:]/]/x/w c")],
            ),
            // Made before the error after it.
            ("w x\ns/a", vec![file("x", true, "w x")]),
        ] {
            assert_eq!(named(&["-n", script, "f"]), files, "{script:?}");
        }
    }

    #[test]
    fn what_cannot_be_seen() {
        let unseen = |args: &[&str]| script_files(args).unwrap().unseen;
        assert_eq!(
            unseen(&["-i", "-ffix.sed", "f"]),
            Some(Unseen::ScriptFile("fix.sed".into()))
        );
        assert_eq!(
            unseen(&["-e", "p", "--file=x.sed", "f"]),
            Some(Unseen::ScriptFile("x.sed".into()))
        );
        // With `-f`, the `-e` pieces are read too.
        assert_eq!(
            named(&["-e", "w out", "-f", "x.sed", "f"]),
            vec![file("out", true, "w out")]
        );
        assert_eq!(unseen(&["-i", "\0$S", "f"]), Some(Unseen::Computed));
        let computed = script_files(&["-n", "\0s/$a/b/w .git/hooks/$N", "f"]).unwrap();
        assert_eq!(computed.unseen, Some(Unseen::Computed));
        assert_eq!(computed.files.len(), 1);
        assert!(computed.files[0].computed && computed.files[0].name == ".git/hooks/$N");
        assert_eq!(
            unseen(&["-n", "s/a/b/w", "f"]),
            Some(Unseen::Unreadable {
                shown: "s/a/b/w".into(),
                may_write: true
            })
        );
        assert_eq!(
            unseen(&["-n", "1r", "f"]),
            Some(Unseen::Unreadable {
                shown: "1r".into(),
                may_write: false
            })
        );
        // No letter of a command that names a file: none, understood or not.
        assert_eq!(unseen(&["-n", "1!G;h;$!d", "f"]), None);
        assert_eq!(unseen(&["-n", "s/a/b/q", "f"]), None);
        assert_eq!(unseen(&["-n", "y/r/w/", "f"]), None);
        assert!(script_files(&["-x", "f"]).is_none());
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
            Some((vec![], vec![(2, 0), (3, 0)]))
        );
        assert_eq!(paths(&["-n", "1p", "f"]), Some((vec![], vec![(2, 0)])));
        assert_eq!(
            paths(&["-nfs.sed", "f"]),
            Some((vec![(0, 3)], vec![(1, 0)]))
        );
        assert_eq!(
            paths(&["--file=s.sed", "f"]),
            Some((vec![(0, 7)], vec![(1, 0)]))
        );
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
