//! Frontmatter: the `---` block that opens a skill's `SKILL.md` and an agent definition's
//! `.md` file, read as the subset of YAML those files use.
//!
//! What is read: `key: value` lines with plain, `"double"` (with escapes) or `'single'`
//! quoted values, inline `# comments` (not in a plain value holding `: `, which YAML
//! refuses and Claude Code reads again quoted), plain values continued on indented lines, block
//! scalars (`>` folds its lines with spaces, `|` keeps them; chomping `-` and `+` and an
//! indentation digit are honoured), flow lists `[a, b]` (kept as written, split by
//! [`Frontmatter::list`]) and block lists as `- item` lines.
//!
//! What it is not: a YAML parser. Nested mappings, anchors, multi-line flow collections and
//! quoted scalars spanning lines are not read. What cannot be read as written (a line that
//! is not `key: value`, a quote not closed on its line, a bad block header, a key given
//! twice) never fails the whole block: the line is skipped or its value taken as written,
//! and [`Frontmatter::warnings`] says so, line by line, with the file's line numbers.

/// A frontmatter value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A scalar (plain, quoted, or a block scalar), or a flow list `[a, b]` as written.
    Text(String),
    /// A block list (`- item` lines).
    List(Vec<String>),
}

/// A parsed frontmatter: its keys in file order (a key given twice appears twice; the first
/// counts) and what could not be read.
#[derive(Debug, Default)]
pub struct Frontmatter {
    entries: Vec<(String, Value)>,
    warnings: Vec<String>,
}

impl Frontmatter {
    /// What could not be read as written (`line N: ...`) and what was done instead; empty
    /// for a clean frontmatter.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// A key's value (the first, when it is given twice).
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// A key's text, when it has a non-empty one (not for a block list).
    pub fn text(&self, key: &str) -> Option<String> {
        match self.value(key)? {
            Value::Text(v) if !v.is_empty() => Some(v.clone()),
            _ => None,
        }
    }

    /// A key's list: its `- item` lines (empty items left out), or its text split as a
    /// list ([`split_list`]); `None` when the key is absent or empty.
    pub fn list(&self, key: &str) -> Option<Vec<String>> {
        match self.value(key)? {
            Value::List(items) => Some(items.iter().filter(|i| !i.is_empty()).cloned().collect()),
            Value::Text(v) if !v.is_empty() => Some(split_list(v)),
            Value::Text(_) => None,
        }
    }
}

/// Splits a list written on one line: a flow list `[Read, "Bash(ls *)"]`, a comma list
/// `Read, Grep` or a space-separated one `Read Grep Bash(ls *)` (mixed too). Commas and
/// whitespace inside parentheses or quotes do not split; quotes around an item are removed.
pub fn split_list(value: &str) -> Vec<String> {
    let v = value.trim();
    let v = v
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(v);
    let mut items = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for c in v.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                current.push(c);
            }
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                current.push(c);
            }
            (None, '(') => {
                depth += 1;
                current.push(c);
            }
            (None, ')') => {
                depth = depth.saturating_sub(1);
                current.push(c);
            }
            (None, c) if depth == 0 && (c == ',' || c.is_whitespace()) => {
                items.push(std::mem::take(&mut current));
            }
            (None, c) => current.push(c),
        }
    }
    items.push(current);
    items
        .iter()
        .map(|s| unquote(s.trim()))
        .filter(|s| !s.is_empty())
        .collect()
}

/// `value` without one pair of matching surrounding quotes.
fn unquote(value: &str) -> String {
    let v = value.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v[1..v.len() - 1].to_owned();
        }
    }
    v.to_owned()
}

/// `value` up to an inline comment (a `#` after whitespace), trimmed.
fn strip_comment(value: &str) -> &str {
    let mut prev_space = true;
    for (i, c) in value.char_indices() {
        if c == '#' && prev_space {
            return value[..i].trim_end();
        }
        prev_space = c.is_whitespace();
    }
    value.trim_end()
}

/// A quoted scalar at the start of `value` (which starts with `"` or `'`): its text and
/// what follows the closing quote, or `None` when the quote is not closed on the line.
/// Double quotes take the usual escapes (`\"`, `\\`, `\n`, `\t`, `\r`, `\0`, `\/`, `\ `;
/// another escape is kept as written); single quotes take `''` for a quote.
fn quoted(value: &str) -> Option<(String, &str)> {
    let mut chars = value.char_indices();
    let (_, open) = chars.next()?;
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        match (open, c) {
            ('\'', '\'') => {
                if value[i + 1..].starts_with('\'') {
                    chars.next();
                    out.push('\'');
                } else {
                    return Some((out, &value[i + 1..]));
                }
            }
            ('"', '"') => return Some((out, &value[i + 1..])),
            ('"', '\\') => {
                let (_, e) = chars.next()?;
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    '0' => out.push('\0'),
                    '"' | '\\' | '/' | ' ' => out.push(e),
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
            (_, c) => out.push(c),
        }
    }
    None
}

/// The end (exclusive) of a flow list starting `value`, or `None` when it is not closed on
/// the line. Brackets inside quotes do not count.
fn flow_end(value: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for (i, c) in value.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[') => depth += 1,
            (None, ']') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// How a block scalar ends (its chomping indicator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chomp {
    /// No indicator: one final line break.
    Clip,
    /// `-`: none.
    Strip,
    /// `+`: every final line break.
    Keep,
}

/// A block scalar header (`|`, `>`, with an optional chomping indicator and indentation
/// digit, in either order, and an optional comment): folded or not, the chomping, the
/// indentation. `None` when `value` is not a valid header.
fn block_header(value: &str) -> Option<(bool, Chomp, Option<usize>)> {
    let (header, rest) = value
        .find([' ', '\t'])
        .map_or((value, ""), |p| (&value[..p], value[p..].trim_start()));
    if !rest.is_empty() && !rest.starts_with('#') {
        return None;
    }
    let mut chars = header.chars();
    let folded = match chars.next()? {
        '>' => true,
        '|' => false,
        _ => return None,
    };
    let (mut chomp, mut indent) = (None, None);
    for c in chars {
        match c {
            '-' if chomp.is_none() => chomp = Some(Chomp::Strip),
            '+' if chomp.is_none() => chomp = Some(Chomp::Keep),
            '1'..='9' if indent.is_none() => indent = c.to_digit(10).map(|d| d as usize),
            _ => return None,
        }
    }
    Some((folded, chomp.unwrap_or(Chomp::Clip), indent))
}

/// The number of leading spaces of `line`.
fn leading_spaces(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// Reads a block scalar's content from `lines` (the lines after its header): the lines
/// that are blank or indented. Returns the value and how many lines it took.
fn block_scalar(
    lines: &[&str],
    folded: bool,
    chomp: Chomp,
    explicit_indent: Option<usize>,
) -> (String, usize) {
    let taken = lines
        .iter()
        .take_while(|l| l.trim().is_empty() || l.starts_with([' ', '\t']))
        .count();
    let indent = explicit_indent.unwrap_or_else(|| {
        lines[..taken]
            .iter()
            .find(|l| !l.trim().is_empty())
            .map_or(0, |l| leading_spaces(l))
    });
    let content: Vec<&str> = lines[..taken]
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                ""
            } else if leading_spaces(l) >= indent {
                &l[indent..]
            } else {
                l.trim_start()
            }
        })
        .collect();
    let trailing = content.iter().rev().take_while(|l| l.is_empty()).count();
    let body = &content[..content.len() - trailing];
    let mut text = if folded { fold(body) } else { body.join("\n") };
    match chomp {
        Chomp::Strip => {}
        Chomp::Clip if !body.is_empty() => text.push('\n'),
        Chomp::Clip => {}
        Chomp::Keep => {
            if !body.is_empty() {
                text.push('\n');
            }
            text.push_str(&"\n".repeat(trailing));
        }
    }
    (text, taken)
}

/// Folds block lines as YAML's `>` does: lines join with a space, an empty line is a line
/// break, and lines indented further keep their line breaks.
fn fold(lines: &[&str]) -> String {
    let mut out = String::new();
    let mut prev_more: Option<bool> = None;
    let mut blanks = 0;
    for line in lines {
        if line.is_empty() {
            blanks += 1;
            continue;
        }
        let more = line.starts_with([' ', '\t']);
        match prev_more {
            None => out.push_str(&"\n".repeat(blanks)),
            Some(prev) if blanks > 0 => {
                out.push_str(&"\n".repeat(blanks + usize::from(prev || more)));
            }
            Some(prev) if prev || more => out.push('\n'),
            Some(_) => out.push(' '),
        }
        blanks = 0;
        out.push_str(line);
        prev_more = Some(more);
    }
    out
}

/// `key: value` at the start of a line: the key (before the first `:` followed by
/// whitespace or the end) and the rest; `None` for a line that is not one.
fn split_key(line: &str) -> Option<(&str, &str)> {
    let bytes = line.as_bytes();
    let colon = (0..bytes.len())
        .find(|&i| bytes[i] == b':' && bytes.get(i + 1).is_none_or(u8::is_ascii_whitespace))?;
    let key = line[..colon].trim();
    (!key.is_empty()).then(|| (key, &line[colon + 1..]))
}

/// What the lines after a key continue.
#[derive(Debug, Clone, Copy)]
enum Open {
    /// A plain (unquoted) scalar: indented lines fold into it.
    Plain(usize),
    /// A key with nothing after it: `- item` lines make it a list, indented text a scalar.
    Empty(usize),
    /// A list: `- item` lines add to it.
    List(usize),
}

/// Parses frontmatter lines (without the `---` lines). Line
/// numbers in warnings are the file's (the first frontmatter line is line 2).
fn parse_frontmatter(lines: &[&str]) -> Frontmatter {
    let mut fm = Frontmatter::default();
    let mut open: Option<Open> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let n = i + 2;
        i += 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indented = line.starts_with([' ', '\t']);
        let item = trimmed
            .strip_prefix('-')
            .filter(|r| r.is_empty() || r.starts_with([' ', '\t']));
        if let (Some(item), Some(Open::Empty(k) | Open::List(k))) = (item, open) {
            let value = scalar_value(item.trim(), n, &fm.entries[k].0.clone(), &mut fm.warnings).0;
            match &mut fm.entries[k].1 {
                Value::List(items) => items.push(value),
                other => *other = Value::List(vec![value]),
            }
            open = Some(Open::List(k));
            continue;
        }
        if indented {
            match open {
                Some(Open::Plain(k) | Open::Empty(k)) => {
                    let more = strip_comment(trimmed);
                    if let Value::Text(text) = &mut fm.entries[k].1 {
                        if !text.is_empty() {
                            text.push(' ');
                        }
                        text.push_str(more);
                    }
                    open = Some(Open::Plain(k));
                }
                _ => fm.warnings.push(format!(
                    "line {n}: indented text with no value to continue; skipped"
                )),
            }
            continue;
        }
        if item.is_some() {
            fm.warnings.push(format!(
                "line {n}: a list item with no key to belong to; skipped"
            ));
            open = None;
            continue;
        }
        let Some((key, value)) = split_key(line) else {
            fm.warnings
                .push(format!("line {n}: not a `key: value` line; skipped"));
            open = None;
            continue;
        };
        if fm.entries.iter().any(|(k, _)| k == key) {
            fm.warnings.push(format!(
                "line {n}: `{key}` is given again; the first value is used"
            ));
        }
        let value = value.trim();
        let index = fm.entries.len();
        let (parsed, next) = if value.is_empty() {
            (Value::Text(String::new()), Some(Open::Empty(index)))
        } else if value.starts_with(['|', '>']) {
            if let Some((folded, chomp, indent)) = block_header(value) {
                let (text, taken) = block_scalar(&lines[i..], folded, chomp, indent);
                i += taken;
                (Value::Text(text), None)
            } else {
                fm.warnings.push(format!(
                    "line {n}: `{key}` has an invalid block scalar header \"{value}\"; the value is taken as written"
                ));
                (Value::Text(value.to_owned()), Some(Open::Plain(index)))
            }
        } else {
            let (text, plain) = scalar_value(value, n, key, &mut fm.warnings);
            (Value::Text(text), plain.then_some(Open::Plain(index)))
        };
        fm.entries.push((key.to_owned(), parsed));
        open = next;
    }
    fm
}

/// A one-line value: quoted (unescaped, a comment after it dropped), a flow list (kept as
/// written, up to its `]`), or plain (up to an inline comment). Also says whether it is
/// plain, so continuation lines may fold into it. A quote or bracket not closed on the line
/// is reported in `warnings` and the value taken as written.
fn scalar_value(value: &str, n: usize, key: &str, warnings: &mut Vec<String>) -> (String, bool) {
    if value.starts_with(['"', '\'']) {
        let q = &value[..1];
        return match quoted(value) {
            Some((text, rest)) => {
                let rest = rest.trim();
                if !rest.is_empty() && !rest.starts_with('#') {
                    warnings.push(format!(
                        "line {n}: text after the closing {q} of `{key}` is ignored: {rest}"
                    ));
                }
                (text, false)
            }
            None => {
                warnings.push(format!(
                    "line {n}: the value of `{key}` opens a {q} quote that is not closed on its line; the value is taken as written"
                ));
                (value.to_owned(), false)
            }
        };
    }
    if value.starts_with('[') {
        return match flow_end(value) {
            Some(end) => {
                let rest = value[end..].trim();
                if !rest.is_empty() && !rest.starts_with('#') {
                    warnings.push(format!(
                        "line {n}: text after the closing ] of `{key}` is ignored: {rest}"
                    ));
                }
                (value[..end].to_owned(), false)
            }
            None => {
                warnings.push(format!(
                    "line {n}: the value of `{key}` opens a [ list that is not closed on its line; the value is taken as written"
                ));
                (strip_comment(value).to_owned(), false)
            }
        };
    }
    // A plain value with `: ` in it is no YAML (a mapping inside a scalar): Claude Code's
    // reader then quotes the line and reads it again, so a ` #` in it (`Fix issue #42`) is
    // text, not a comment.
    if strip_comment(value).contains(": ") {
        return (value.trim_end().to_owned(), true);
    }
    (strip_comment(value).to_owned(), true)
}

/// Why a text has no frontmatter to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// The first line (after a byte-order mark) is not `---`.
    NotOpened,
    /// The first line opens a frontmatter that no `---` line closes.
    NotClosed,
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::NotOpened => "it does not start with a `---` line opening a frontmatter",
            Self::NotClosed => "the frontmatter opened on line 1 is not closed by a `---` line",
        })
    }
}

impl std::error::Error for Missing {}

/// Splits `text` into its frontmatter and the body after the closing `---` line. A
/// byte-order mark is skipped; lines may end in CRLF.
pub fn split(text: &str) -> Result<(Frontmatter, &str), Missing> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first = text.split_inclusive('\n').next().unwrap_or("");
    if first.trim_end() != "---" || !first.ends_with('\n') {
        return Err(Missing::NotOpened);
    }
    let rest = &text[first.len()..];
    let mut offset = 0;
    let mut lines = Vec::new();
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim_end() == "---" {
            return Ok((parse_frontmatter(&lines), &rest[offset..]));
        }
        lines.push(line);
    }
    Err(Missing::NotClosed)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Any frontmatter, however malformed (stray quotes, brackets, block headers,
        /// indentation, multi-byte characters, CRLF), parses without a panic, and the body is
        /// what follows the closing line.
        #[test]
        fn any_frontmatter_parses_without_panicking(
            lines in proptest::collection::vec(
                "[ \t]{0,3}(- )?[a-z_-]{0,6}(: ?)?[-a-zé #|>+0-9\\[\\](),'\"\\\\\t]{0,16}\r?",
                0..12,
            )
        ) {
            let lines: Vec<String> = lines.into_iter().filter(|l| l.trim_end() != "---").collect();
            let text = format!("---\n{}\n---\nthe body", lines.join("\n"));
            let (fm, body) = split(&text).unwrap();
            proptest::prop_assert_eq!(body, "the body");
            for (key, _) in &fm.entries {
                // Reading a value as a list never panics either.
                let _ = fm.list(key);
            }
        }
    }

    /// A plain value that holds `: ` is read whole, as Claude Code reads it after quoting
    /// it: a ` #` in it is text. Elsewhere ` #` starts a comment.
    #[test]
    fn a_plain_value_with_a_colon_keeps_its_hashes() {
        let (fm, _) = split(
            "---\ndescription: Use when asked. user: \"Fix issue #42\" # kept\nmodel: haiku # cheap\n---\n",
        )
        .unwrap();
        assert_eq!(
            fm.text("description").as_deref(),
            Some("Use when asked. user: \"Fix issue #42\" # kept")
        );
        assert_eq!(fm.text("model").as_deref(), Some("haiku"));
        // A `: ` only in the comment leaves the value valid YAML: the comment goes.
        let (fm, _) =
            split("---\nmodel: haiku # was: sonnet\ntools: Read, Grep # note: no Bash\n---\n")
                .unwrap();
        assert_eq!(fm.text("model").as_deref(), Some("haiku"));
        assert_eq!(fm.list("tools").unwrap(), ["Read", "Grep"]);
    }

    #[test]
    fn a_missing_or_unclosed_frontmatter_says_which() {
        assert_eq!(split("no frontmatter").unwrap_err(), Missing::NotOpened);
        assert_eq!(split("---").unwrap_err(), Missing::NotOpened);
        assert_eq!(split("--- x\n---\n").unwrap_err(), Missing::NotOpened);
        assert_eq!(split("---\na: b\n").unwrap_err(), Missing::NotClosed);
        // A byte-order mark, CRLF line ends and spaces after the dashes are fine.
        let (fm, body) = split("\u{feff}--- \r\na: b\r\n---  \r\nbody\r\n").unwrap();
        assert_eq!(fm.text("a").as_deref(), Some("b"));
        assert_eq!(body, "body\r\n");
    }

    #[test]
    fn lists_come_as_items_flow_lists_or_separated_text() {
        let (fm, _) = split(
            "---\nblock:\n  - Read\n  - \"Bash(git diff:*)\"\n  -\nflow: [Read, 'Agent(a, b)']\n\
             commas: Read, Grep , Glob\nspaces: Read Grep Bash(ls *)\nempty:\n---\n",
        )
        .unwrap();
        assert_eq!(fm.list("block").unwrap(), ["Read", "Bash(git diff:*)"]);
        assert_eq!(fm.list("flow").unwrap(), ["Read", "Agent(a, b)"]);
        assert_eq!(fm.list("commas").unwrap(), ["Read", "Grep", "Glob"]);
        assert_eq!(fm.list("spaces").unwrap(), ["Read", "Grep", "Bash(ls *)"]);
        assert_eq!(fm.list("empty"), None);
        assert_eq!(fm.list("absent"), None);
        assert_eq!(fm.text("block"), None);
        assert!(fm.warnings().is_empty(), "{:?}", fm.warnings());
    }
}
