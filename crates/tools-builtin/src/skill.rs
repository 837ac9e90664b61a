//! Skill: loads a skill, `.claude/skills/<name>/SKILL.md`, into the conversation (Claude
//! Code's `SkillTool`).
//!
//! Skills are found, in Claude Code's precedence order (managed > personal > project), in
//! the managed settings directory's `.claude/skills`, then the user's `skills` (`$CLAUDE_CONFIG_DIR/skills`, else `~/.claude/skills`),
//! then the project's `.claude/skills` directories, nearest first ([`skill_roots`],
//! [`tool_core::project_dirs`]: the working directory and its parents up to the project's git
//! root, or only up to the project directory outside a repository). The first skill of a
//! name wins, so a repository cannot replace a user's own skill.
//!
//! `SKILL.md` may start with a `---` frontmatter block, read as the YAML subset skills use:
//! `key: value` lines with plain, `"double"` (with escapes) or `'single'` quoted values,
//! inline `# comments`, plain values continued on indented lines, block scalars (`>` folds
//! its lines with spaces, `|` keeps them; chomping `-` and `+` and an indentation digit are
//! honoured), and lists as `- item` lines. The keys used are `description`,
//! `allowed-tools` (a `- item` list, a flow list `[a, b]`, or one line split on commas and
//! on whitespace outside parentheses: `Read Grep Bash(ls *)`), `model`, `argument-hint`,
//! `when_to_use` and `disable-model-invocation`. What the parser cannot read (a line that
//! is not `key: value`, a quote not closed on its line, a bad block header, a key given
//! twice, a frontmatter never closed) never fails the skill: it is skipped or taken as
//! written, as [`SkillInfo::warnings`] says line by line (also logged).
//!
//! The body, with `$ARGUMENTS` replaced by `args` (or the arguments appended when it has no
//! placeholder) and `${CLAUDE_SKILL_DIR}` by the skill's directory, is added to the
//! conversation as a user message after the tool result, as Claude Code does; the result
//! itself says `Launching skill: <name>`. Permission rules match the skill's name
//! (`Skill(name)`).
use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_core::{
    ContentBlock, MaxResultSize, Message, PermissionSubject, ProgressSender, ToolError, ToolResult,
    ToolResultContent, ToolUseContext, TypedTool, ValidationError, async_trait,
};

/// Input of the Skill tool.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct SkillInput {
    /// The skill name. E.g., "commit", "review-pr", or "pdf"
    pub skill: String,
    /// Optional arguments for the skill
    pub args: Option<String>,
}

/// Output of the Skill tool (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillOutput {
    /// Always true for a loaded skill.
    pub success: bool,
    /// The skill's name.
    pub command_name: String,
    /// The tools the skill's frontmatter allows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
    /// The model the skill asks for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// Where a skill was found, in precedence order: of skills with the same name, the
/// managed one wins over the user's, and the user's over the project's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillSource {
    /// The managed (enterprise policy) skills: `.claude/skills` in the managed settings
    /// directory ([`tool_core::managed_settings_dir`]).
    Managed,
    /// The user's `$CLAUDE_CONFIG_DIR/skills`, else `~/.claude/skills`.
    User,
    /// A project's `.claude/skills`.
    Project,
}

/// A discovered skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillInfo {
    /// The name: the skill directory's name.
    pub name: String,
    /// The directory holding `SKILL.md`.
    pub dir: PathBuf,
    /// Project or user.
    pub source: SkillSource,
    /// The frontmatter's `description`.
    pub description: Option<String>,
    /// The frontmatter's `allowed-tools`.
    pub allowed_tools: Option<Vec<String>>,
    /// The frontmatter's `model`.
    pub model: Option<String>,
    /// The frontmatter's `argument-hint`.
    pub argument_hint: Option<String>,
    /// The frontmatter's `when_to_use`.
    pub when_to_use: Option<String>,
    /// The frontmatter's `disable-model-invocation`.
    pub disable_model_invocation: bool,
    /// The text after the frontmatter.
    pub body: String,
    /// What in the frontmatter could not be read as written (`line N: ...`), and what was
    /// done instead; empty for a clean frontmatter.
    pub warnings: Vec<String>,
}

/// A frontmatter value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FmValue {
    /// A scalar (plain, quoted, or a block scalar), or a flow list `[a, b]` as written.
    Text(String),
    /// A block list (`- item` lines).
    List(Vec<String>),
}

/// A parsed frontmatter: its keys in file order (a key given twice appears twice; the first
/// counts) and what could not be read.
#[derive(Debug, Default)]
struct Frontmatter {
    entries: Vec<(String, FmValue)>,
    warnings: Vec<String>,
}

impl Frontmatter {
    fn value(&self, key: &str) -> Option<&FmValue> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// A key's text, when it has a non-empty one.
    fn get(&self, key: &str) -> Option<String> {
        match self.value(key)? {
            FmValue::Text(v) if !v.is_empty() => Some(v.clone()),
            _ => None,
        }
    }

    /// A key's list: its `- item` lines, or its text split as a tool list
    /// ([`split_tool_list`]).
    fn list(&self, key: &str) -> Option<Vec<String>> {
        match self.value(key)? {
            FmValue::List(items) => Some(items.clone()),
            FmValue::Text(v) if !v.is_empty() => Some(split_tool_list(v)),
            FmValue::Text(_) => None,
        }
    }
}

/// Splits a tool list written on one line: a flow list `[Read, "Bash(ls *)"]`, a comma list
/// `Read, Grep` or a space-separated one `Read Grep Bash(ls *)` (mixed too). Commas and
/// whitespace inside parentheses or quotes do not split; quotes around an item are removed.
fn split_tool_list(value: &str) -> Vec<String> {
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

/// Parses frontmatter lines (without the `---` lines): the subset of YAML skills use. Line
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
                FmValue::List(items) => items.push(value),
                other => *other = FmValue::List(vec![value]),
            }
            open = Some(Open::List(k));
            continue;
        }
        if indented {
            match open {
                Some(Open::Plain(k) | Open::Empty(k)) => {
                    let more = strip_comment(trimmed);
                    if let FmValue::Text(text) = &mut fm.entries[k].1 {
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
            (FmValue::Text(String::new()), Some(Open::Empty(index)))
        } else if value.starts_with(['|', '>']) {
            if let Some((folded, chomp, indent)) = block_header(value) {
                let (text, taken) = block_scalar(&lines[i..], folded, chomp, indent);
                i += taken;
                (FmValue::Text(text), None)
            } else {
                fm.warnings.push(format!(
                    "line {n}: `{key}` has an invalid block scalar header \"{value}\"; the value is taken as written"
                ));
                (FmValue::Text(value.to_owned()), Some(Open::Plain(index)))
            }
        } else {
            let (text, plain) = scalar_value(value, n, key, &mut fm.warnings);
            (FmValue::Text(text), plain.then_some(Open::Plain(index)))
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
    (strip_comment(value).to_owned(), true)
}

/// Splits `text` into its frontmatter and body. A file that opens a frontmatter (`---`
/// on its first line) without closing it has none: the whole file is the body, and a
/// warning says so.
fn split_frontmatter(text: &str) -> (Frontmatter, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return (Frontmatter::default(), text);
    };
    let mut offset = 0;
    let mut lines = Vec::new();
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        let line = line.trim_end_matches(['\n', '\r']);
        if line.trim_end() == "---" {
            return (parse_frontmatter(&lines), &rest[offset..]);
        }
        lines.push(line);
    }
    let fm = Frontmatter {
        warnings: vec![
            "the frontmatter opened on line 1 is not closed by a `---` line; the whole file is the body"
                .to_owned(),
        ],
        ..Frontmatter::default()
    };
    (fm, text)
}

/// Reads the skill in `dir` (`dir/SKILL.md`), or `None` when there is none.
pub fn load_skill(dir: &Path, source: SkillSource) -> Option<SkillInfo> {
    let text = std::fs::read_to_string(dir.join("SKILL.md")).ok()?;
    let (fm, body) = split_frontmatter(&text);
    let dir_name = dir.file_name()?.to_string_lossy().into_owned();
    for warning in &fm.warnings {
        tracing::warn!(file = %dir.join("SKILL.md").display(), "skill frontmatter: {warning}");
    }
    Some(SkillInfo {
        name: dir_name,
        dir: dir.to_path_buf(),
        source,
        description: fm.get("description"),
        allowed_tools: fm.list("allowed-tools"),
        model: fm.get("model").filter(|m| m != "inherit"),
        argument_hint: fm.get("argument-hint"),
        when_to_use: fm.get("when_to_use"),
        disable_model_invocation: fm
            .get("disable-model-invocation")
            .is_some_and(|v| v == "true"),
        body: body.to_owned(),
        warnings: fm.warnings,
    })
}

/// The skill directories searched, in precedence order (Claude Code's: managed, then
/// personal, then project): `.claude/skills` in the managed settings directory,
/// the user's (`$CLAUDE_CONFIG_DIR/skills`, else `~/.claude/skills`), then the project's `.claude/skills` directories nearest first (see
/// [`tool_core::project_dirs`]). Of skills with the same name, the first found wins: a cloned
/// repository's `commit` skill does not replace the user's own.
pub fn skill_roots(ctx: &ToolUseContext) -> Vec<(PathBuf, SkillSource)> {
    roots_with_managed(ctx, &tool_core::managed_settings_dir())
}

/// [`skill_roots`] with the managed settings directory `managed`.
fn roots_with_managed(ctx: &ToolUseContext, managed: &Path) -> Vec<(PathBuf, SkillSource)> {
    let mut roots = vec![(managed.join(".claude/skills"), SkillSource::Managed)];
    // The user's configuration directory, as for settings and agents: `CLAUDE_CONFIG_DIR`,
    // else `~/.claude`.
    let user_config = std::env::var_os("CLAUDE_CONFIG_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| ctx.home().map(|home| home.join(".claude")));
    if let Some(config) = user_config {
        roots.push((config.join("skills"), SkillSource::User));
    }
    roots.extend(
        tool_core::project_dirs(ctx.cwd(), ctx.project_dir(), ctx.home())
            .into_iter()
            .map(|dir| (dir.join(".claude/skills"), SkillSource::Project)),
    );
    roots
}

/// Every skill the context can see, first of each name only, in precedence order then name
/// order.
pub fn discover_skills(ctx: &ToolUseContext) -> Vec<SkillInfo> {
    discover_in(skill_roots(ctx))
}

/// Every skill in `roots`, first of each name only.
fn discover_in(roots: Vec<(PathBuf, SkillSource)>) -> Vec<SkillInfo> {
    let mut seen = HashSet::new();
    let mut skills = Vec::new();
    for (root, source) in roots {
        let Ok(entries) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        dirs.sort();
        for dir in dirs {
            if let Some(skill) = load_skill(&dir, source)
                && seen.insert(skill.name.clone())
            {
                skills.push(skill);
            }
        }
    }
    skills
}

/// The skill `name` (a leading `/` is ignored), by precedence.
pub fn find_skill(ctx: &ToolUseContext, name: &str) -> Option<SkillInfo> {
    find_in(skill_roots(ctx), name)
}

/// The skill `name` in the first of `roots` that has it.
fn find_in(roots: Vec<(PathBuf, SkillSource)>, name: &str) -> Option<SkillInfo> {
    let name = name.trim().trim_start_matches('/');
    if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
        return None;
    }
    roots
        .into_iter()
        .find_map(|(root, source)| load_skill(&root.join(name), source))
}

/// The skill's text for the conversation: arguments and directory substituted, as Claude
/// Code substitutes them: `$ARGUMENTS[N]` and `$N` are the N-th argument (0-based, split as
/// a shell splits words), `$ARGUMENTS` all of them; when the body has none of these, the
/// arguments follow it as an `ARGUMENTS:` line.
pub fn render_skill(skill: &SkillInfo, args: Option<&str>) -> String {
    let args = args.unwrap_or("").trim();
    let body = skill
        .body
        .replace("${CLAUDE_SKILL_DIR}", &skill.dir.to_string_lossy());
    let words =
        shlex::split(args).unwrap_or_else(|| args.split_whitespace().map(str::to_owned).collect());
    // Without arguments, `$1` is left as written (a skill's `awk '{print $1}'`);
    // `$ARGUMENTS[1]` is still a placeholder, and becomes empty.
    let (mut body, indexed) = substitute_indexed(&body, &words, !words.is_empty());
    if body.contains("$ARGUMENTS") {
        body = body.replace("$ARGUMENTS", args);
    } else if !indexed && !args.is_empty() {
        body = format!("{}\n\nARGUMENTS: {args}", body.trim_end());
    }
    format!(
        "Base directory for this skill: {}\n\n{}",
        skill.dir.display(),
        body.trim()
    )
}

/// `body` with `$ARGUMENTS[N]` (and `$N` when `bare` is set) replaced by the N-th of
/// `words` (empty when there is none), and whether any was.
fn substitute_indexed(body: &str, words: &[String], bare: bool) -> (String, bool) {
    let mut out = String::with_capacity(body.len());
    let mut replaced = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (digits, skip) = match after.strip_prefix("ARGUMENTS[") {
            Some(inner) => {
                let n = inner.chars().take_while(char::is_ascii_digit).count();
                if n > 0 && inner[n..].starts_with(']') {
                    (&inner[..n], "ARGUMENTS[".len() + n + 1)
                } else {
                    ("", 0)
                }
            }
            None if !bare => ("", 0),
            None => {
                let n = after.chars().take_while(char::is_ascii_digit).count();
                // `$1abc` is no placeholder.
                let word_follows = after[n..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_');
                if word_follows {
                    ("", 0)
                } else {
                    (&after[..n], n)
                }
            }
        };
        match digits.parse::<usize>() {
            Ok(i) if skip > 0 => {
                out.push_str(words.get(i).map_or("", String::as_str));
                replaced = true;
                rest = &after[skip..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    (out, replaced)
}

/// The Skill tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Skill;

#[async_trait]
impl TypedTool for Skill {
    type Input = SkillInput;
    type Output = SkillOutput;
    const NAME: &'static str = "Skill";

    fn description(&self) -> Cow<'_, str> {
        "Execute a skill within the main conversation".into()
    }

    fn prompt(&self) -> Cow<'_, str> {
        "Execute a skill within the main conversation.\n\n\
When users ask you to perform tasks, check if any of the available skills match. Skills provide specialized capabilities and domain knowledge.\n\n\
How to invoke:\n\
- Use this tool with the skill name and optional arguments\n\
- Examples: `skill: \"pdf\"`, `skill: \"commit\", args: \"-m 'Fix bug'\"`\n\n\
Important:\n\
- When a skill matches the user's request, invoke it before generating any other response about the task\n\
- Do not invoke a skill that is already running"
            .into()
    }

    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(100_000)
    }

    fn permission_subject(&self, input: &SkillInput) -> Option<PermissionSubject> {
        Some(PermissionSubject::Name(
            input.skill.trim().trim_start_matches('/').to_owned(),
        ))
    }

    async fn validate_input(
        &self,
        input: &SkillInput,
        ctx: &ToolUseContext,
    ) -> Result<(), ValidationError> {
        let name = input.skill.trim().trim_start_matches('/');
        if name.is_empty() {
            return Err(ValidationError::with_code(
                format!("Invalid skill format: {}", input.skill),
                1,
            ));
        }
        match find_skill(ctx, name) {
            None => Err(ValidationError::with_code(
                format!("Unknown skill: {name}"),
                2,
            )),
            Some(s) if s.disable_model_invocation => Err(ValidationError::with_code(
                format!(
                    "Skill {name} cannot be used with Skill tool due to disable-model-invocation"
                ),
                4,
            )),
            Some(_) => Ok(()),
        }
    }

    async fn call(
        &self,
        input: SkillInput,
        ctx: ToolUseContext,
        _progress: ProgressSender,
    ) -> Result<ToolResult<SkillOutput>, ToolError> {
        let name = input.skill.trim().trim_start_matches('/');
        let skill = find_skill(&ctx, name)
            .ok_or_else(|| ToolError::msg(format!("Unknown skill: {name}")))?;
        let text = render_skill(&skill, input.args.as_deref());
        Ok(ToolResult::new(SkillOutput {
            success: true,
            command_name: skill.name.clone(),
            allowed_tools: skill.allowed_tools.clone(),
            model: skill.model.clone(),
        })
        .with_message(Message::User(vec![ContentBlock::text(text)])))
    }

    fn to_content(&self, output: &SkillOutput) -> ToolResultContent {
        ToolResultContent::Text(format!("Launching skill: {}", output.command_name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skill(body: &str) -> SkillInfo {
        SkillInfo {
            name: "s".into(),
            dir: PathBuf::from("/skills/s"),
            source: SkillSource::Project,
            description: None,
            allowed_tools: None,
            model: None,
            argument_hint: None,
            when_to_use: None,
            disable_model_invocation: false,
            body: body.into(),
            warnings: Vec::new(),
        }
    }

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
            let (fm, body) = split_frontmatter(&text);
            proptest::prop_assert_eq!(body, "the body");
            for (_, value) in &fm.entries {
                if let FmValue::Text(v) = value {
                    // A tool list split never panics either.
                    let _ = split_tool_list(v);
                }
            }
        }
    }

    /// A managed skill wins over the user's, the user's over the project's.
    #[test]
    fn managed_then_personal_then_project() {
        let tmp = tempfile::tempdir().unwrap();
        let write = |root: &Path, name: &str, body: &str| {
            let dir = root.join(".claude/skills").join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("SKILL.md"), body).unwrap();
        };
        let (managed, home, project) = (
            tmp.path().join("etc"),
            tmp.path().join("home"),
            tmp.path().join("project"),
        );
        std::fs::create_dir_all(project.join(".git")).unwrap();
        for (root, body) in [
            (&managed, "managed"),
            (&home, "user"),
            (&project, "project"),
        ] {
            write(root, "all", body);
        }
        write(&home, "mine", "user");
        write(&project, "mine", "project");
        write(&project, "ours", "project");
        let ctx = ToolUseContext::new(&project).with_home(Some(home.clone()));
        let roots = || roots_with_managed(&ctx, &managed);
        assert_eq!(
            roots().into_iter().map(|(_, s)| s).collect::<Vec<_>>(),
            [
                SkillSource::Managed,
                SkillSource::User,
                SkillSource::Project
            ]
        );
        let found = |name: &str| find_in(roots(), name).map(|k| (k.source, k.body));
        assert_eq!(found("all"), Some((SkillSource::Managed, "managed".into())));
        assert_eq!(found("mine"), Some((SkillSource::User, "user".into())));
        assert_eq!(
            found("ours"),
            Some((SkillSource::Project, "project".into()))
        );
        let listed: Vec<(String, SkillSource)> = discover_in(roots())
            .into_iter()
            .map(|k| (k.name, k.source))
            .collect();
        assert_eq!(
            listed,
            [
                ("all".to_owned(), SkillSource::Managed),
                ("mine".to_owned(), SkillSource::User),
                ("ours".to_owned(), SkillSource::Project),
            ]
        );
    }

    #[test]
    fn arguments_are_substituted_by_position_and_whole() {
        let render = |body: &str, args: &str| {
            render_skill(&skill(body), Some(args))
                .trim_start_matches("Base directory for this skill: /skills/s\n\n")
                .to_owned()
        };
        // Split as a shell splits words; 0-based.
        assert_eq!(
            render("from $ARGUMENTS[0] to $1 ($2)", "'a b.txt' c.txt"),
            "from a b.txt to c.txt ()"
        );
        assert_eq!(render("all: $ARGUMENTS", "x y"), "all: x y");
        // No placeholder: the arguments follow.
        assert_eq!(render("Do it.", "x y"), "Do it.\n\nARGUMENTS: x y");
        // A `$` that is no placeholder stays; without arguments `$1` stays too.
        assert_eq!(render("costs $ and $x", ""), "costs $ and $x");
        assert_eq!(render("awk '{print $1}'", ""), "awk '{print $1}'");
        // `$ARGUMENTS[N]` without arguments is empty, not `[N]`.
        assert_eq!(render("File: $ARGUMENTS[0].", ""), "File: .");
        assert_eq!(render("$0abc $0", "v"), "$0abc v");
        // Not an index: `$ARGUMENTS` itself is replaced.
        assert_eq!(render("$ARGUMENTS[z]", "a"), "a[z]");
    }
}
