//! Splits a Bash command into simple commands with tree-sitter-bash.
//!
//! The walk is deliberately conservative: anything it does not understand makes the command
//! "complex", which means it is never auto-allowed (deny and ask rules still apply to every
//! simple command that could be found).

use std::cell::RefCell;

use tree_sitter::{Node, Parser};

/// Above this many characters a command is never auto-allowed.
pub const MAX_COMMAND_CHARS: usize = 10_000;
/// How deep the syntax tree is walked.
const MAX_TREE_DEPTH: usize = 200;
/// How deep `bash -c` / `eval` payloads are followed.
const MAX_NESTING: usize = 4;

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
    /// The directory this command runs in after an earlier `cd`, as written.
    pub cwd: Option<String>,
    /// A wrapper whose payload was analysed as commands of its own (`bash -c`, `eval`,
    /// `xargs`): deny and ask rules see it, allow decisions look at the payload only.
    pub transparent: bool,
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
}

impl Analysis {
    /// Whether the command could be fully understood.
    pub fn is_simple(&self) -> bool {
        self.complex.is_empty()
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
    let mut analysis = Analysis::default();
    if command.len() > MAX_COMMAND_CHARS {
        analysis.complex.push(format!(
            "the command is longer than {MAX_COMMAND_CHARS} characters"
        ));
    }
    if command.contains('\0') {
        analysis
            .complex
            .push("the command contains a NUL character".into());
    }
    analyze_into(command, 0, &mut analysis);
    analysis
}

/// The text handed to tree-sitter: every non-ASCII character replaced by as many `a` bytes
/// as it has UTF-8 bytes, so byte offsets (and so node text taken from the original) are
/// unchanged. tree-sitter-bash 0.25.1's external scanner calls C `isdigit`/`isalpha` on the
/// lookahead code point, which is undefined behaviour (and crashed here) for code points above
/// 255; a non-ASCII character is an ordinary word character for bash, and `aa...` forms no
/// keyword, so the parse is the same. (A literal `$é` now reads as an expansion, which is
/// only more cautious.)
fn parser_text(src: &str) -> std::borrow::Cow<'_, str> {
    if src.is_ascii() {
        return std::borrow::Cow::Borrowed(src);
    }
    let mut out = String::with_capacity(src.len());
    for c in src.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n('a', c.len_utf8()));
        }
    }
    std::borrow::Cow::Owned(out)
}

fn analyze_into(src: &str, depth: usize, out: &mut Analysis) {
    let text = parser_text(src);
    let tree = with_parser(|p| p.parse(text.as_ref(), None)).flatten();
    let Some(tree) = tree else {
        out.complex.push("the command could not be parsed".into());
        return;
    };
    let root = tree.root_node();
    if root.has_error() {
        out.complex.push("the command has a syntax error".into());
    }
    let mut walker = Walker {
        src: src.as_bytes(),
        out,
        depth,
        nest: 0,
        cwd: None,
    };
    walker.walk(root);
}

struct Walker<'a> {
    src: &'a [u8],
    out: &'a mut Analysis,
    depth: usize,
    /// Current recursion depth of the tree walk (bounded so that deeply nested input cannot
    /// overflow the stack).
    nest: usize,
    cwd: Option<String>,
}

const LINE_BREAK_IN_WORD: &str =
    "a line break inside a word: bash may run more commands than the parse shows";

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

    fn walk_children(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            self.walk(child);
        }
    }

    fn walk(&mut self, node: Node<'_>) {
        if self.nest >= MAX_TREE_DEPTH {
            self.complex("the command is nested too deeply");
            return;
        }
        self.nest += 1;
        self.walk_node(node);
        self.nest -= 1;
    }

    fn walk_node(&mut self, node: Node<'_>) {
        if node.is_error() || node.is_missing() {
            self.complex("the command has a syntax error");
            self.scan(node);
            return;
        }
        match node.kind() {
            "program" | "list" | "pipeline" | "negated_command" | "compound_statement"
            | "subshell" | "do_group" => self.walk_children(node),
            "comment" => {}
            "redirected_statement" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in children {
                    match child.kind() {
                        "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                            self.redirect(child)
                        }
                        _ => self.walk(child),
                    }
                }
            }
            "command" => self.command(node),
            "test_command" => self.scan(node),
            "variable_assignment" | "variable_assignments" => {
                self.complex("a variable assignment changes the shell for later commands");
                self.scan(node);
            }
            "declaration_command" | "unset_command" => {
                self.complex(format!(
                    "`{}` changes the shell's variables",
                    first_word(&self.text(node))
                ));
                self.scan(node);
            }
            "function_definition" => {
                self.complex("a function definition can shadow commands");
                self.walk_children(node);
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
                self.walk_children(node);
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => self.redirect(node),
            other => {
                self.complex(format!("unsupported shell syntax `{other}`"));
                self.scan(node);
                self.walk_children(node);
            }
        }
    }

    /// Looks for command and process substitutions anywhere below `node` and walks them.
    fn scan(&mut self, node: Node<'_>) {
        if self.nest >= MAX_TREE_DEPTH {
            self.complex("the command is nested too deeply");
            return;
        }
        self.nest += 1;
        self.scan_node(node);
        self.nest -= 1;
    }

    fn scan_node(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
            match child.kind() {
                "command_substitution" | "process_substitution" => self.walk_children(child),
                _ => self.scan(child),
            }
        }
    }

    fn redirect(&mut self, node: Node<'_>) {
        match node.kind() {
            "heredoc_redirect" => {
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
                for child in children {
                    match child.kind() {
                        "heredoc_body" | "heredoc_start" | "heredoc_end" | "file_descriptor" => {
                            self.scan(child)
                        }
                        "file_redirect" | "herestring_redirect" => self.redirect(child),
                        _ => self.walk(child),
                    }
                }
            }
            "herestring_redirect" => self.scan(node),
            _ => {
                let mut op = String::new();
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    if !child.is_named() {
                        op.push_str(child.kind());
                    }
                }
                let targets: Vec<Node<'_>> = {
                    let mut c = node.walk();
                    node.children_by_field_name("destination", &mut c).collect()
                };
                for t in &targets {
                    self.scan_word(*t);
                }
                let target = match targets.first() {
                    Some(t) => self.word(*t),
                    None => Word {
                        raw: String::new(),
                        value: Some(String::new()),
                        plain: true,
                        glob: false,
                    },
                };
                let kind = match op.as_str() {
                    "<" => RedirectKind::Read,
                    ">&" | "<&" | ">&-" | "<&-"
                        if target
                            .value
                            .as_deref()
                            .is_some_and(|v| v == "-" || v.chars().all(|c| c.is_ascii_digit())) =>
                    {
                        RedirectKind::FdDup
                    }
                    "<&" | "<&-" | ">&-" => RedirectKind::FdDup,
                    _ => RedirectKind::Write,
                };
                self.out.redirects.push(Redirect {
                    kind,
                    target,
                    cwd: self.cwd.clone(),
                });
            }
        }
    }

    fn scan_word(&mut self, node: Node<'_>) {
        match node.kind() {
            "command_substitution" | "process_substitution" => self.walk_children(node),
            _ => self.scan(node),
        }
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
                    if self.text(node).contains(['\n', '\r']) {
                        return true;
                    }
                }
                "string" | "raw_string" | "ansi_c_string" | "heredoc_body" => {}
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
            "word" | "number" => {
                let glob = has_unquoted_glob(&raw);
                let brace = raw.contains('{') && (raw.contains(',') || raw.contains(".."));
                let plain = !raw.contains('\\');
                let value =
                    if brace || (raw.starts_with('~') && !(raw == "~" || raw.starts_with("~/"))) {
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
                    .map(decode_ansi_c);
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

    fn command(&mut self, node: Node<'_>) {
        let mut assignments = Vec::new();
        let mut words = Vec::new();
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.named_children(&mut cursor).collect();
        for child in children {
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
                    assignments.push(Assignment {
                        name,
                        raw,
                        safe_value,
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
                        self.complex(format!(
                            "the command name `{}` is quoted, escaped or computed",
                            truncate(&w.raw, 40)
                        ));
                    }
                    words.push(w);
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    self.redirect(child)
                }
                "subshell" => {
                    self.complex("unsupported shell syntax in a command");
                    self.walk(child);
                }
                _ => {
                    self.scan_word(child);
                    if self.line_break_in_word(child) {
                        self.complex(LINE_BREAK_IN_WORD);
                    }
                    words.push(self.word(child));
                }
            }
        }
        if words.is_empty() {
            if !assignments.is_empty() {
                self.complex("a variable assignment changes the shell for later commands");
            }
            return;
        }
        let cmd = SimpleCommand {
            assignments,
            words,
            appended_args: false,
            cwd: self.cwd.clone(),
            transparent: false,
        };
        self.expand(cmd);
    }

    /// Records a simple command and follows what it runs (`bash -c`, `eval`, `find -exec`,
    /// `xargs`, wrappers of those).
    fn expand(&mut self, cmd: SimpleCommand) {
        let name = cmd.name().map(basename).unwrap_or_default().to_owned();
        if name == "cd" || name == "pushd" {
            match cmd.words.get(1) {
                Some(w) => match &w.value {
                    Some(v) => self.cwd = Some(v.clone()),
                    None => self.complex("`cd` to a computed directory"),
                },
                None => self.cwd = Some("~".into()),
            }
        }
        let inner = self.inner_payload(&cmd, &name);
        let mut cmd = cmd;
        cmd.transparent = match &inner {
            Some(Inner::Script(_)) => true,
            Some(Inner::Command(_)) => skip_wrappers(&name, &cmd.words[1..]).0 == "xargs",
            _ => false,
        };
        self.out.commands.push(cmd);
        match inner {
            Some(Inner::Script(script)) => self.nested_script(&script),
            Some(Inner::Command(words)) => {
                let c = SimpleCommand {
                    assignments: Vec::new(),
                    words,
                    appended_args: true,
                    cwd: self.cwd.clone(),
                    transparent: false,
                };
                if c.words
                    .first()
                    .is_some_and(|w| !w.plain || w.value.is_none())
                {
                    self.complex("a command run by find/xargs is quoted, escaped or computed");
                }
                let n = c.name().map(basename).unwrap_or_default().to_owned();
                let nested = self.inner_payload(&c, &n);
                self.out.commands.push(c);
                if nested.is_some() {
                    self.complex("a shell run by find/xargs");
                }
                if let Some(Inner::Script(script)) = nested {
                    // Not allowed anyway; analysed so that deny rules see inside.
                    self.nested_script(&script);
                }
            }
            Some(Inner::Dynamic(why)) => self.complex(why),
            None => {}
        }
    }

    fn nested_script(&mut self, script: &str) {
        if self.depth >= MAX_NESTING {
            self.complex("shell commands nested too deeply");
            return;
        }
        let mut nested = Analysis::default();
        analyze_into(script, self.depth + 1, &mut nested);
        for mut c in nested.commands {
            if c.cwd.is_none() {
                c.cwd.clone_from(&self.cwd);
            }
            self.out.commands.push(c);
        }
        self.out.redirects.extend(nested.redirects);
        for why in nested.complex {
            self.complex(why);
        }
    }

    fn inner_payload(&self, cmd: &SimpleCommand, name: &str) -> Option<Inner> {
        let args = &cmd.words[1..];
        // Skip wrappers to find nested shells behind them (`timeout 5 bash -c ...`).
        let (name, args) = skip_wrappers(name, args);
        if NESTED_SHELLS.contains(&name) {
            let mut i = 0;
            while i < args.len() {
                let a = args[i].value.as_deref()?;
                if a == "--" || !a.starts_with('-') && !a.starts_with('+') {
                    return None; // a script file or stdin: not a -c payload
                }
                if a.starts_with('-') && !a.starts_with("--") && a.contains('c') {
                    return Some(match args.get(i + 1).and_then(|w| w.value.clone()) {
                        Some(script) => Inner::Script(script),
                        None => Inner::Dynamic(format!("`{name} -c` with a computed script")),
                    });
                }
                if a == "-o" || a == "+o" || a == "-O" || a == "+O" {
                    i += 1;
                }
                i += 1;
            }
            return None;
        }
        match name {
            "eval" => {
                let mut script = String::new();
                for a in args {
                    match &a.value {
                        Some(v) => {
                            script.push_str(v);
                            script.push(' ');
                        }
                        None => return Some(Inner::Dynamic("`eval` of a computed string".into())),
                    }
                }
                Some(Inner::Script(script))
            }
            "source" | "." => Some(Inner::Dynamic(format!("`{name}` runs a script file"))),
            "find" => {
                let mut i = 0;
                while i < args.len() {
                    let a = args[i].value.as_deref().unwrap_or("");
                    if matches!(a, "-exec" | "-execdir" | "-ok" | "-okdir") {
                        let mut words = Vec::new();
                        for w in &args[i + 1..] {
                            let v = w.value.as_deref().unwrap_or("");
                            if v == ";" || v == "+" {
                                break;
                            }
                            words.push(w.clone());
                        }
                        if words.is_empty() {
                            return None;
                        }
                        return Some(Inner::Command(words));
                    }
                    i += 1;
                }
                None
            }
            "xargs" => {
                let mut i = 0;
                while i < args.len() {
                    let Some(a) = args[i].value.as_deref() else {
                        return Some(Inner::Dynamic("`xargs` with computed options".into()));
                    };
                    if a == "--" {
                        i += 1;
                        break;
                    }
                    if !a.starts_with('-') {
                        break;
                    }
                    let takes_value = matches!(
                        a,
                        "-I" | "-L" | "-n" | "-P" | "-d" | "-E" | "-s" | "-a" | "-i" | "-e"
                    );
                    i += if takes_value { 2 } else { 1 };
                }
                let words = args.get(i..).map(<[Word]>::to_vec).unwrap_or_default();
                if words.is_empty() {
                    // Bare xargs runs echo.
                    return None;
                }
                Some(Inner::Command(words))
            }
            _ => None,
        }
    }
}

enum Inner {
    Script(String),
    Command(Vec<Word>),
    Dynamic(String),
}

/// Skips `timeout N`, `nice`, `nohup`, `time`, `stdbuf`, `env VAR=x`, `sudo` and friends, to
/// find the command they run.
fn skip_wrappers<'a>(name: &'a str, args: &'a [Word]) -> (&'a str, &'a [Word]) {
    let mut name = name;
    let mut args = args;
    for _ in 0..8 {
        if !matches!(
            name,
            "timeout"
                | "nice"
                | "nohup"
                | "time"
                | "stdbuf"
                | "env"
                | "sudo"
                | "doas"
                | "command"
                | "builtin"
                | "exec"
                | "noglob"
                | "ionice"
                | "coproc"
                | "watch"
                | "setsid"
                | "chronic"
        ) {
            break;
        }
        let mut i = 0;
        while i < args.len() {
            let v = args[i].value.as_deref().unwrap_or("");
            let is_opt = v.starts_with('-') || (name == "env" && v.contains('='));
            let is_duration =
                name == "timeout" && v.chars().next().is_some_and(|c| c.is_ascii_digit());
            if !is_opt && !is_duration {
                break;
            }
            i += 1;
            if is_duration {
                break;
            }
        }
        match args.get(i) {
            Some(w) => {
                name = w.value.as_deref().map(basename).unwrap_or("");
                args = &args[i + 1..];
            }
            None => break,
        }
    }
    (name, args)
}

/// The last path component of a command name (`/bin/rm` -> `rm`).
pub fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
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

fn decode_ansi_c(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('e' | 'E') => out.push('\u{1b}'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some(d @ ('x' | 'u' | 'U')) => {
                let max = match d {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut hex = String::new();
                while hex.len() < max && chars.peek().is_some_and(char::is_ascii_hexdigit) {
                    hex.extend(chars.next());
                }
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push('\\');
                        out.push(d);
                        out.push_str(&hex);
                    }
                }
            }
            Some(o @ '0'..='7') => {
                let mut oct = String::from(o);
                while oct.len() < 3 && chars.peek().is_some_and(|c| ('0'..='7').contains(c)) {
                    oct.extend(chars.next());
                }
                if let Some(ch) = u32::from_str_radix(&oct, 8).ok().and_then(char::from_u32) {
                    out.push(ch);
                }
            }
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
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
    fn redirects() {
        let a = analyze("echo hi > out.txt 2>&1");
        assert_eq!(a.redirects.len(), 2);
        assert_eq!(a.redirects[0].kind, RedirectKind::Write);
        assert_eq!(a.redirects[1].kind, RedirectKind::FdDup);
        assert_eq!(names(&a), ["echo hi"]);
    }
}
