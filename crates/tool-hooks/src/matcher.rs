//! Matcher groups' `matcher` strings (Claude Code's syntax) and the `if` condition seam.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::thread;
use std::time::Duration;

use serde_json::Value;

/// A parsed `matcher` string of a matcher group.
///
/// - `"*"`, `""` (or absent) match everything; nothing else does (`" "`, `" * "` do not).
/// - A string of only letters, digits, `_`, `-`, space, `,` and `|`, once whitespace around
///   it is set aside, is an exact name or a list of exact names split on `|` or `,`
///   (surrounding whitespace ignored). One of separators or whitespace only (`"|"`,
///   `" , "`, `" "`, `"\t"`) names nothing and matches nothing. **Decision**: a tab or line
///   break around a list (`"Bash\n"`, `"\tRead|Edit"`) is set aside as spaces are; Claude
///   Code reads such a matcher as a regular expression that needs that character in the
///   tool name, so its hooks (a guard's too) never run. Loading the settings warns about
///   it, and about such whitespace around a regex.
/// - Anything else is a JavaScript regular expression ([`JsRegex`]), matched
///   **unanchored** as Claude Code's `new RegExp(matcher).test(name)` does, so `Edit.*`
///   also matches `NotebookEdit`, `B\ash` is `Bash`, and lookaround and backreferences
///   (`^(?!mcp__)`) work.
#[derive(Debug, Clone, PartialEq)]
pub enum Matcher {
    /// Matches every value.
    All,
    /// Matches values equal to one of the names (none when the list is empty).
    Exact(Vec<String>),
    /// Matches values the regular expression finds a match in (unanchored).
    Regex(JsRegex),
}

/// A regular expression read and run as JavaScript's `new RegExp(source)` (no flags) reads
/// and runs it, by an ECMAScript engine (`regress`), Annex B included: `\a` is `a`, `[^]`
/// is any character, `\cB` is a control character, `\u{41}` is `u` 41 times, `(?i)` is a
/// syntax error. As in JavaScript, the pattern and the value are sequences of UTF-16 code
/// units (`^.$` does not match an emoji, which is two of them; `\uD83D\uDE00` does).
/// **Decision**: ES2025's modifier groups (`(?i:bash)`) and group names repeated in
/// alternatives are read, as engines that implement ES2025 read them; node 20 and 22 reject
/// them.
///
/// Like JavaScript's, the engine backtracks with no step limit, so a search runs on a
/// thread of its own and is given a second: one that has not ended by then counts as a
/// match (a guard behind the matcher runs: it fails closed), and is left to end on its
/// thread. Each value's verdict is kept (a few hundred per pattern; an overrun one for
/// good), so a value is searched once, not at every event.
#[derive(Clone)]
pub struct JsRegex {
    source: String,
    re: Arc<regress::Regex>,
    verdicts: Arc<Verdicts>,
}

/// How long a matcher's search may run on one value before it counts as a match.
pub(crate) const MATCH_DEADLINE: Duration = Duration::from_secs(1);

/// How many values' verdicts a pattern keeps: a session meets a handful of tool names.
const KEPT_VERDICTS: usize = 256;

/// What a [`JsRegex`] knows of the values it was asked about, shared by its clones.
#[derive(Default)]
struct Verdicts {
    known: Mutex<Known>,
    /// Held while a search runs, so that a value asked for twice at once is searched once.
    searching: Mutex<()>,
    /// How many searches were started (for the tests).
    started: AtomicUsize,
}

#[derive(Default)]
struct Known {
    /// Whether each value matched, for the values whose search ended in time.
    ended: HashMap<Box<str>, bool>,
    /// The values whose search overran the deadline: they count as matches, and are never
    /// forgotten (a second search would burn another thread).
    overran: HashSet<Box<str>>,
    /// Those of them not yet reported ([`JsRegex::take_overrun`]).
    unsaid: Vec<String>,
}

impl Known {
    fn get(&self, value: &str) -> Option<bool> {
        if self.overran.contains(value) {
            return Some(true);
        }
        self.ended.get(value).copied()
    }
}

impl JsRegex {
    /// Compiles `source` as JavaScript's `new RegExp(source)` does; the error's reason is
    /// the one a JavaScript engine rejects it with (`Invalid group modifier` for `(?i)bash`).
    pub fn new(source: &str) -> Result<Self, MatcherError> {
        let rejected = |reason: &dyn fmt::Display| MatcherError {
            pattern: source.to_owned(),
            reason: format!("JavaScript would not compile it: {reason}"),
        };
        let units = for_regress(source).map_err(|e| rejected(&e))?;
        let re = regress::Regex::from_unicode(units.into_iter(), regress::Flags::default())
            .map_err(|e| rejected(&e))?;
        Ok(Self {
            source: source.to_owned(),
            re: Arc::new(re),
            verdicts: Arc::default(),
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the pattern matches somewhere in `value` (JavaScript's `RegExp.test`); `true`
    /// when the search did not end within a second. Blocks for at most about that long,
    /// once per value.
    pub fn is_match(&self, value: &str) -> bool {
        if let Some(known) = self.known(value) {
            return known;
        }
        let _one = self
            .verdicts
            .searching
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Another caller may have searched it while this one waited.
        if let Some(known) = self.known(value) {
            return known;
        }
        self.verdicts.started.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::sync_channel(1);
        let re = Arc::clone(&self.re);
        let units: Vec<u16> = value.encode_utf16().collect();
        // Not on the caller's thread (an async worker): a search past the deadline is left
        // running there, since the engine cannot be stopped.
        let spawned = thread::Builder::new()
            .name("hook-matcher".to_owned())
            .spawn(move || {
                let _ = tx.send(re.find_from_ucs2(&units, 0).next().is_some());
            });
        if spawned.is_err() {
            // No thread to be had (out of resources): a match, as an overrun is, but not
            // kept, so that the next call searches again.
            return true;
        }
        let mut known = match rx.recv_timeout(MATCH_DEADLINE) {
            Ok(matched) => {
                let mut known = self
                    .verdicts
                    .known
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if known.ended.len() >= KEPT_VERDICTS {
                    known.ended.clear();
                }
                known.ended.insert(value.into(), matched);
                return matched;
            }
            // Past the deadline, or the search panicked: a match either way.
            Err(_) => self
                .verdicts
                .known
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        };
        known.overran.insert(value.into());
        known.unsaid.push(value.to_owned());
        true
    }

    fn known(&self, value: &str) -> Option<bool> {
        self.verdicts
            .known
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(value)
    }

    /// The values whose search overran [`MATCH_DEADLINE`] since the last call: each is
    /// returned once, for the user to be told.
    pub(crate) fn take_overrun(&self) -> Vec<String> {
        std::mem::take(
            &mut self
                .verdicts
                .known
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .unsaid,
        )
    }
}

/// `source` as UTF-16 code units for regress, with what regress reads as JavaScript does
/// only with the `u` flag rewritten to what JavaScript reads without it: `\u{41}` is an
/// escaped `u` and a quantifier (`u{41}`), and an escaped high surrogate is a code unit of
/// its own (regress joined `\uD83D\uDE00` into one code point, which no unit of the value
/// equals). Group names (`(?<\u{41}>`, `\k<\u{41}>`) keep their escapes, which JavaScript
/// reads in them always. A quantified `\b` or `\B` (`\b+`), which regress takes, is
/// JavaScript's "Nothing to repeat".
fn for_regress(source: &str) -> Result<Vec<u32>, &'static str> {
    let units: Vec<u32> = source.encode_utf16().map(u32::from).collect();
    let is = |i: usize, c: char| units.get(i) == Some(&u32::from(c));
    let digit = |i: usize| units.get(i).is_some_and(|&u| (0x30..=0x39).contains(&u));
    let hex4 = |i: usize| -> Option<u32> {
        let digits = units.get(i..i + 4)?;
        digits
            .iter()
            .try_fold(0, |n, &d| Some(n * 16 + char::from_u32(d)?.to_digit(16)?))
    };
    // `*`, `+`, `?`, `{2}`, `{2,}` or `{2,3}` at `i` (a `{` that starts none is a `{`).
    let quantifier = |mut i: usize| {
        if is(i, '*') || is(i, '+') || is(i, '?') {
            return true;
        }
        if !is(i, '{') || !digit(i + 1) {
            return false;
        }
        i += 1;
        while digit(i) {
            i += 1;
        }
        if is(i, ',') {
            i += 1;
            while digit(i) {
                i += 1;
            }
        }
        is(i, '}')
    };
    let group_name = |i: usize| {
        is(i, '(') && is(i + 1, '?') && is(i + 2, '<') && !is(i + 3, '=') && !is(i + 3, '!')
    };
    // Without a named group `\k<name>` is an escaped `k` followed by `<name>` (Annex B).
    let named_groups = (0..units.len()).any(group_name);
    let mut out = Vec::with_capacity(units.len());
    let (mut i, mut in_class) = (0, false);
    while i < units.len() {
        let in_name = !in_class
            && (group_name(i) || (named_groups && is(i, '\\') && is(i + 1, 'k') && is(i + 2, '<')));
        if in_name {
            // Copied as written up to the `>` that ends the name.
            while i < units.len() {
                out.push(units[i]);
                i += 1;
                if is(i - 1, '>') {
                    break;
                }
            }
            continue;
        }
        if is(i, '\\') && is(i + 1, 'u') {
            if is(i + 2, '{') {
                out.push(u32::from('u'));
                i += 2;
                continue;
            }
            if let Some(unit @ 0xD800..=0xDBFF) = hex4(i + 2) {
                out.push(unit);
                i += 6;
                continue;
            }
        }
        if !in_class && is(i, '\\') && (is(i + 1, 'b') || is(i + 1, 'B')) && quantifier(i + 2) {
            return Err("Nothing to repeat");
        }
        if is(i, '\\') {
            // An escape: the next unit is not read for itself (`\\u{2}`, `\[`).
            out.extend(units.get(i..(i + 2).min(units.len())).unwrap_or_default());
            i += 2;
            continue;
        }
        if is(i, '[') {
            in_class = true;
        } else if is(i, ']') {
            in_class = false;
        }
        out.push(units[i]);
        i += 1;
    }
    Ok(out)
}

impl fmt::Debug for JsRegex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("JsRegex").field(&self.source).finish()
    }
}

impl PartialEq for JsRegex {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

/// What to warn about a matcher written with whitespace other than plain spaces at its start
/// or end (`"Bash\n"`, `"\tRead"`), saying what `matcher` (its parse) matches: most likely a
/// slip (a copied line break), which Claude Code reads as a regular expression that needs
/// that character in the tool name (its hooks never run). `None` for any other matcher.
pub(crate) fn stray_whitespace_warning(pattern: &str, matcher: &Matcher) -> Option<String> {
    let start = &pattern[..pattern.len() - pattern.trim_start().len()];
    let end = &pattern[pattern.trim_end().len()..];
    let mut stray: Vec<char> = Vec::new();
    for c in start.chars().chain(end.chars()) {
        if c != ' ' && !stray.contains(&c) {
            stray.push(c);
        }
    }
    if stray.is_empty() {
        return None;
    }
    let shown: Vec<String> = stray.iter().map(|c| format!("{c:?}")).collect();
    let what = match matcher {
        Matcher::Exact(names) if names.is_empty() => {
            "it names nothing and matches nothing (only an absent matcher, \"\" or \"*\" match \
             everything)"
                .to_owned()
        }
        Matcher::Exact(names) => format!(
            "it is read as the exact names {:?}, as if that whitespace were not there (Claude \
             Code reads it as a regular expression that needs it in the name, and never runs \
             the group)",
            names.join("|")
        ),
        Matcher::Regex(_) => {
            "it is a regular expression (whitespace is set aside only around exact names), and \
             that whitespace is part of it: it matches only values that contain it (no tool \
             name does)"
                .to_owned()
        }
        Matcher::All => return None,
    };
    Some(format!(
        "the matcher {pattern:?} has {} at its start or end; {what}",
        shown.join(", ")
    ))
}

/// A matcher string that is neither an exact list nor a regular expression JavaScript
/// compiles ([`JsRegex`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid matcher regex {pattern:?}: {reason}")]
pub struct MatcherError {
    /// The matcher as written.
    pub pattern: String,
    /// Why JavaScript would not compile it (the engine's error).
    pub reason: String,
}

fn is_exact_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' ' | ',' | '|')
}

/// FileChanged and StopFailure keep the older, narrower exact set.
fn is_narrow_exact_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '|')
}

impl Matcher {
    /// Parses a matcher string. `None` (no `matcher` key) matches everything.
    pub fn parse(pattern: Option<&str>) -> Result<Self, MatcherError> {
        Self::parse_with(pattern, is_exact_char)
    }

    /// Parses a matcher string for `event`: like [`parse`](Self::parse), except that on
    /// FileChanged and StopFailure only letters, digits, `_` and `|` make an exact list
    /// (anything else is a regex there).
    pub fn parse_for_event(event: &str, pattern: Option<&str>) -> Result<Self, MatcherError> {
        match event {
            "FileChanged" | "StopFailure" => Self::parse_with(pattern, is_narrow_exact_char),
            _ => Self::parse(pattern),
        }
    }

    fn parse_with(pattern: Option<&str>, exact: fn(char) -> bool) -> Result<Self, MatcherError> {
        let Some(pattern) = pattern else {
            return Ok(Self::All);
        };
        // The string as written, as Claude Code tests it (`!matcher || matcher === '*'`): a
        // blank one (`" "`) is an exact list naming nothing, `" * "` or `"\t"` a regex that
        // needs a space or a tab; neither matches every tool.
        if pattern.is_empty() || pattern == "*" {
            return Ok(Self::All);
        }
        // Whitespace around the string never makes a list a regex: `"Bash\n"` is Bash.
        let trimmed = pattern.trim();
        if trimmed.chars().all(exact) {
            let names: Vec<String> = trimmed
                .split(['|', ','])
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            // Only separators (`"|"`, `" , "`) name no value: they match nothing, as in
            // Claude Code. Only `"*"`, `""` or no matcher match everything.
            return Ok(Self::Exact(names));
        }
        // Claude Code's `new RegExp(matcher)`: one JavaScript rejects (`(?i)bash`) runs no
        // hook there; here it is reported, and on guard events it refuses the calls.
        JsRegex::new(pattern).map(Self::Regex)
    }

    /// Whether `value` (a tool name, a SessionStart source, ...) matches. A tool's legacy
    /// names count as its name, as in Claude Code: `Task` matches Agent, `^BashOutput$`
    /// matches TaskOutput ([`tool_core::normalize_tool_name`]).
    pub fn is_match(&self, value: &str) -> bool {
        let current = tool_core::normalize_tool_name(value);
        // The value, its current name and the current name's legacy names.
        let any_name = |is: &dyn Fn(&str) -> bool| {
            is(value)
                || (current != value && is(current))
                || tool_core::legacy_tool_names(current).any(is)
        };
        match self {
            Self::All => true,
            Self::Exact(patterns) => patterns
                .iter()
                .any(|p| tool_core::normalize_tool_name(p) == current),
            Self::Regex(re) => any_name(&|n| re.is_match(n)),
        }
    }

    /// The values a regular expression's search overran [`MATCH_DEADLINE`] on (counted as
    /// matches) since the last call, each returned once, for the user to be told.
    pub(crate) fn take_overrun(&self) -> Vec<String> {
        match self {
            Self::Regex(re) => re.take_overrun(),
            Self::All | Self::Exact(_) => Vec::new(),
        }
    }
}

/// Evaluates a handler's `if` condition: exactly one permission rule (`Bash(git *)`,
/// `Edit(*.ts)`) against a tool call.
///
/// `tool-hooks` does not parse permission rules itself; the host (tool-exec) implements
/// this with tool-perms' rule matcher. Contract:
/// - `rule` is the `if` string as written in settings.
/// - For `Bash` rules the implementation must check **each subcommand** of the command
///   (after stripping leading `VAR=value` assignments, looking inside `$(...)` and
///   backticks), returning `true` if any subcommand matches, and must **fail open**
///   (return `true`) when the command cannot be parsed.
/// - A malformed rule (unbalanced parentheses, no tool name before `(`: see
///   [`if_rule_problem`]) matches nothing (`false`): the hook never runs, as in Claude
///   Code, whose `if` reads such a string as a tool name no tool has. It is not silent:
///   [`HooksConfig`](crate::HooksConfig) reports it as a diagnostic when the hooks are
///   loaded.
/// - It says how a rule matched ([`RuleMatcher::match_rule`]): a match the call was
///   not seen whole for (a command that does not say what it runs, a tool the matcher
///   cannot see) is [`IfMatch::FailOpen`]: the hook runs, so that a guard's deny or ask
///   holds, but an `allow` it returns (and its `updatedInput`) is not honoured.
/// - It says whether a rule covers the whole call, as an allow rule must
///   ([`RuleMatcher::covers_call`]): a hook chosen by an `if` that matched one subcommand
///   of `npm test; rm -rf x` runs (a guard must), but approves nothing.
pub trait RuleMatcher: Send + Sync {
    /// Whether `rule` matches the call of `tool_name` with `tool_input`.
    fn matches(&self, rule: &str, tool_name: &str, tool_input: &Value) -> bool;

    /// How `rule` matches the call: [`IfMatch::Exact`] or [`IfMatch::No`] by
    /// [`matches`](Self::matches) unless the implementation says more. One that fails open
    /// overrides this to return [`IfMatch::FailOpen`] there.
    fn match_rule(&self, rule: &str, tool_name: &str, tool_input: &Value) -> IfMatch {
        if self.matches(rule, tool_name, tool_input) {
            IfMatch::Exact
        } else {
            IfMatch::No
        }
    }

    /// Whether `rule`, read as an allow rule, covers all of the call: for a shell command,
    /// whether it matches **every** subcommand, as an allow rule with the same pattern must
    /// (`Bash(npm test *)` covers `npm test && npm test --ci`, not `npm test; rm -rf x`).
    /// Asked of a hook whose `if` matched ([`IfMatch::Exact`]) and that approves the call:
    /// its allow (with the `updatedInput` or `updatedPermissions` that come with it) counts
    /// only when this is `true`; otherwise it is treated as a hook whose `if` matched by
    /// failing open (it guards, never approves).
    ///
    /// The default is conservative, for a host that does not say more: a call whose input
    /// has a `command` string is cut into its parts at every `;`, `&`, `|` and line break
    /// (`>&` and `&>` are redirections, not separators; a separator inside quotes cuts too,
    /// so such a command is covered only when each piece matches on its own), and each part
    /// must match exactly ([`match_rule`](Self::match_rule), as a command of its own); a
    /// command with a substitution or process substitution (`$(`, a backquote, `<(`, `>(`)
    /// is never covered. Any other call is covered when the rule matches it exactly. A host
    /// with a shell parser should override this with its own allow-rule matching.
    fn covers_call(&self, rule: &str, tool_name: &str, tool_input: &Value) -> bool {
        covers_by_parts(self, rule, tool_name, tool_input)
    }
}

/// [`RuleMatcher::covers_call`]'s default: each part of a shell command (see
/// [`command_parts`]) must match `rule` exactly through `matcher`; another call must match
/// it exactly.
fn covers_by_parts<M: RuleMatcher + ?Sized>(
    matcher: &M,
    rule: &str,
    tool_name: &str,
    tool_input: &Value,
) -> bool {
    let Some(command) = tool_input.get("command").and_then(Value::as_str) else {
        return matcher.match_rule(rule, tool_name, tool_input) == IfMatch::Exact;
    };
    let Some(parts) = command_parts(command) else {
        return false;
    };
    if parts.is_empty() {
        return matcher.match_rule(rule, tool_name, tool_input) == IfMatch::Exact;
    }
    parts.iter().all(|part| {
        let mut input = tool_input.clone();
        input["command"] = Value::String((*part).to_owned());
        matcher.match_rule(rule, tool_name, &input) == IfMatch::Exact
    })
}

/// The parts of a shell command, cut at every `;`, `&`, `|`, carriage return and line feed,
/// trimmed, empty ones left out: more cuts than a shell makes (inside quotes too), never
/// fewer. `&` next to `>` or `<` (`2>&1`, `&>`, `<&3`) is part of a redirection, not a
/// separator. `None` when the command has a command or process substitution (`$(`, a
/// backquote, `<(`, `>(`): a part that runs inside another cannot be cut out of it.
pub(crate) fn command_parts(command: &str) -> Option<Vec<&str>> {
    if ["$(", "`", "<(", ">("].iter().any(|s| command.contains(s)) {
        return None;
    }
    let bytes = command.as_bytes();
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let cut = match b {
            b';' | b'|' | b'\n' | b'\r' => true,
            b'&' => {
                let before = i.checked_sub(1).map(|j| bytes[j]);
                let after = bytes.get(i + 1).copied();
                !(matches!(before, Some(b'>' | b'<')) || after == Some(b'>'))
            }
            _ => false,
        };
        if cut {
            parts.push(&command[start..i]);
            start = i + 1;
        }
    }
    parts.push(&command[start..]);
    Some(
        parts
            .into_iter()
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect(),
    )
}

/// How a hook's `if` rule matched a call ([`RuleMatcher::match_rule`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfMatch {
    /// The rule matched what the call does: the hook runs and its answer counts in full.
    Exact,
    /// The call could not be matched as written (a command whose text does not say what
    /// it runs, a tool the matcher cannot see), so the hook runs in case it matches: its
    /// deny, ask or `continue: false` stand, but an `allow` it returns is no decision and
    /// its `updatedInput` is ignored (an approver for `Bash(npm test *)` must not approve
    /// `X=rm; $X -rf ~`).
    FailOpen,
    /// The rule does not match: the hook does not run.
    No,
}

/// What is wrong with an `if` rule that the permission rule parser (tool-perms', which the
/// host's [`RuleMatcher`] uses) refuses, so that the hook never runs; `None` for a rule it
/// accepts: [`tool_core::rule_syntax_problem`], the check behind that parser.
pub fn if_rule_problem(rule: &str) -> Option<&'static str> {
    tool_core::rule_syntax_problem(rule)
}

/// The tool name of a permission rule, read as tool-perms' lenient parse reads it: what
/// comes before the first unescaped `(` when the rule ends with its closing `)`, else the
/// whole rule.
fn rule_tool_name(rule: &str) -> &str {
    let bytes = rule.as_bytes();
    let open =
        (0..bytes.len()).find(|&i| bytes[i] == b'(' && !tool_core::rule_char_is_escaped(bytes, i));
    let close = (0..bytes.len())
        .rev()
        .find(|&i| bytes[i] == b')' && !tool_core::rule_char_is_escaped(bytes, i));
    match (open, close) {
        (Some(o), Some(c)) if c == bytes.len() - 1 && c > o && o > 0 => &rule[..o],
        _ => rule,
    }
}

/// What makes the tool an `if` rule (a valid one: see [`if_rule_problem`]) names one no
/// tool can have, so that the hook never runs; `None` when some tool may have it. Without a
/// list of tool names (tool-core has none), only what no name can be is told: a character
/// other than ASCII letters, digits, `_` and `-` (the names the Messages API takes: a `*`
/// is no wildcard there, as an `if` names one tool exactly), and `mcp__SERVER` without a
/// tool (MCP tools are `mcp__SERVER__TOOL`). A misspelt name (`Bsah`) is not told here;
/// one that differs from a call's tool only in case is, when the call comes
/// ([`if_names_in_other_case`]).
pub(crate) fn if_tool_name_problem(rule: &str) -> Option<String> {
    let name = rule_tool_name(rule);
    let shown = tool_core::escape_hidden(name);
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-')))
    {
        return Some(format!(
            "names the tool `{shown}`, and no tool's name has {c:?}: an `if` names one tool exactly, with no wildcard (the group's matcher selects several tools), so it matches no call"
        ));
    }
    if let Some(rest) = name.strip_prefix("mcp__")
        && rest
            .split_once("__")
            .is_none_or(|(server, tool)| server.is_empty() || tool.is_empty())
    {
        return Some(format!(
            "names `{shown}`, which is no MCP tool (those are named `mcp__SERVER__TOOL`; the group's matcher selects a server's tools, `mcp__SERVER__.*`), so it matches no call"
        ));
    }
    None
}

/// The tool name of `rule` when it differs from the tool `tool_name` (or one of its legacy
/// names) only in case, as `bash(touch *)` does from `Bash`: such an `if` never matches
/// that tool's calls, since names are matched with their case. `None` when it names the tool
/// as it is, or another tool.
pub(crate) fn if_names_in_other_case<'a>(rule: &'a str, tool_name: &str) -> Option<&'a str> {
    let name = rule_tool_name(rule);
    let current = tool_core::normalize_tool_name(tool_name);
    let (mut exact, mut other_case) = (false, false);
    let mut check = |n: &str| {
        exact |= n == name || n == tool_core::normalize_tool_name(name);
        other_case |= n.eq_ignore_ascii_case(name);
    };
    check(tool_name);
    check(current);
    for legacy in tool_core::legacy_tool_names(current) {
        check(legacy);
    }
    (other_case && !exact).then_some(name)
}

/// A small built-in [`RuleMatcher`] used when the host supplies none.
///
/// It understands `Tool`, `Tool(*)` and `Tool(glob)` where the glob (`*` = any run of
/// characters, anchored) is tested against the tool's primary input field (`command`,
/// `file_path`, `notebook_path`, `path`, `url`, `pattern`, `query`); for `Bash` each
/// subcommand split on `&&`, `||`, `;`, `|` and newlines is tested after stripping leading
/// `VAR=value` words, and a trailing `:*` in the specifier is read as a prefix match. It is
/// not tool-perms' matcher (no path normalisation, no `$()` analysis); hosts should install
/// the real one with [`HookRunner::with_rule_matcher`](crate::HookRunner::with_rule_matcher).
#[derive(Debug, Clone, Copy, Default)]
pub struct BasicRuleMatcher;

const PRIMARY_FIELDS: &[&str] = &[
    "command",
    "file_path",
    "notebook_path",
    "path",
    "url",
    "pattern",
    "query",
];

/// Anchored glob match where `*` matches any run of characters.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let mut rest = text;
    for (i, part) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(part);
        } else if let Some(pos) = rest.find(part) {
            rest = &rest[pos + part.len()..];
        } else {
            return false;
        }
    }
    true
}

fn split_subcommands(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in command.split(['\n', ';']) {
        for a in piece.split("&&") {
            for b in a.split("||") {
                for c in b.split('|') {
                    let words: Vec<&str> = c.split_whitespace().collect();
                    let start = words
                        .iter()
                        .position(|w| {
                            !(w.contains('=')
                                && w.split('=').next().is_some_and(|n| {
                                    !n.is_empty()
                                        && n.chars()
                                            .all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                                }))
                        })
                        .unwrap_or(words.len());
                    let sub = words[start..].join(" ");
                    if !sub.is_empty() {
                        out.push(sub);
                    }
                }
            }
        }
    }
    out
}

impl RuleMatcher for BasicRuleMatcher {
    fn matches(&self, rule: &str, tool_name: &str, tool_input: &Value) -> bool {
        if if_rule_problem(rule).is_some() {
            return false;
        }
        let rule = rule.trim();
        let (name, spec) = match (rule.find('('), rule.ends_with(')')) {
            (Some(open), true) => (&rule[..open], Some(&rule[open + 1..rule.len() - 1])),
            _ => (rule, None),
        };
        if !glob_match(name, tool_name) {
            return false;
        }
        let spec = match spec {
            None | Some("") | Some("*") => return true,
            Some(s) => s,
        };
        let spec = match spec.strip_suffix(":*") {
            Some(prefix) => format!("{prefix}*"),
            None => spec.to_owned(),
        };
        let Some(value) = PRIMARY_FIELDS
            .iter()
            .find_map(|f| tool_input.get(*f).and_then(Value::as_str))
        else {
            return false;
        };
        if tool_name == "Bash" {
            let subs = split_subcommands(value);
            if subs.is_empty() {
                return true;
            }
            subs.iter().any(|s| glob_match(&spec, s))
        } else {
            glob_match(&spec, value)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matcher_forms() {
        assert!(Matcher::parse(None).unwrap().is_match("Bash"));
        assert!(Matcher::parse(Some("")).unwrap().is_match("Bash"));
        assert!(Matcher::parse(Some("*")).unwrap().is_match("Bash"));
        let m = Matcher::parse(Some("Edit|Write")).unwrap();
        assert!(m.is_match("Edit") && m.is_match("Write") && !m.is_match("NotebookEdit"));
        let m = Matcher::parse(Some("Edit, Write")).unwrap();
        assert!(m.is_match("Write") && !m.is_match("Edit, Write"));
        let m = Matcher::parse(Some("Edit.*")).unwrap();
        assert!(m.is_match("NotebookEdit") && m.is_match("Edit"));
        let m = Matcher::parse(Some("mcp__memory__.*")).unwrap();
        assert!(m.is_match("mcp__memory__create") && !m.is_match("mcp__other__x"));
        assert!(
            !Matcher::parse(Some("mcp__memory"))
                .unwrap()
                .is_match("mcp__memory__create")
        );
        let m = Matcher::parse(Some("^Bash$")).unwrap();
        assert!(m.is_match("Bash") && !m.is_match("BashOutput"));
        // Legacy names, as Claude Code: exact and regex matchers alike.
        let m = Matcher::parse(Some("Task")).unwrap();
        assert!(m.is_match("Agent") && m.is_match("Task") && !m.is_match("TaskStop"));
        let m = Matcher::parse(Some("Agent|KillShell")).unwrap();
        assert!(m.is_match("Task") && m.is_match("TaskStop") && !m.is_match("TaskOutput"));
        let m = Matcher::parse(Some("^BashOutput$")).unwrap();
        assert!(m.is_match("TaskOutput") && !m.is_match("Bash"));
        let m = Matcher::parse(Some("^Agent$")).unwrap();
        assert!(m.is_match("Task") && !m.is_match("TaskList"));
        assert!(Matcher::parse(Some("(unclosed")).is_err());
        // JavaScript lookaround and backreferences.
        let m = Matcher::parse(Some("^(?!mcp__).*")).unwrap();
        assert!(m.is_match("Bash") && !m.is_match("mcp__memory__create"));
        let m = Matcher::parse(Some("(?<=Notebook)Edit")).unwrap();
        assert!(m.is_match("NotebookEdit") && !m.is_match("Edit"));
        let m = Matcher::parse(Some(r"^(\w)\1")).unwrap();
        assert!(m.is_match("llm_tool") && !m.is_match("Bash"));
        // FileChanged: `,` is not an exact-list separator there, so this is a regex.
        let m = Matcher::parse_for_event("FileChanged", Some("a,b")).unwrap();
        assert!(matches!(m, Matcher::Regex(_)) && m.is_match("xa,by") && !m.is_match("a"));
        let m = Matcher::parse_for_event("FileChanged", Some(".envrc|package_json")).unwrap();
        assert!(m.is_match(".envrc"));
        let m = Matcher::parse(Some("startup|resume")).unwrap();
        assert!(m.is_match("resume") && !m.is_match("clear"));
    }

    /// A value's verdict is kept, by the pattern's clones too: asked again, it starts no
    /// second search. Past the cap the verdicts that ended are forgotten, an overrun one
    /// (a match) never is.
    #[test]
    fn a_value_is_searched_once() {
        let re = JsRegex::new("^Ba.h$").unwrap();
        let copy = re.clone();
        let started = || re.verdicts.started.load(Ordering::Relaxed);
        assert!(re.is_match("Bash") && copy.is_match("Bash") && re.is_match("Bash"));
        assert!(!re.is_match("Edit") && !copy.is_match("Edit"));
        assert_eq!(started(), 2);
        re.verdicts
            .known
            .lock()
            .unwrap()
            .overran
            .insert("Edit".into());
        for i in 0..=KEPT_VERDICTS {
            assert!(!re.is_match(&format!("tool{i}")));
        }
        assert_eq!(started(), 3 + KEPT_VERDICTS);
        assert!(re.is_match("Edit"), "the overrun verdict was forgotten");
        assert_eq!(started(), 3 + KEPT_VERDICTS);
    }

    /// Only an absent matcher, `""` and `"*"` match everything, as in Claude Code, which
    /// tests the raw string: `" "` is an exact list naming nothing, `"\t"` and `" * "` are
    /// regexes that need a space or a tab (they were trimmed to `""` and `"*"` and matched
    /// every tool). Spaces around names in a list still do not count.
    #[test]
    fn a_blank_matcher_is_no_catch_all() {
        for blank in [" ", "  ", "\t", " * ", "\n"] {
            let m = Matcher::parse(Some(blank)).unwrap();
            for value in ["Bash", "Read", "mcp__srv__tool", "startup"] {
                assert!(!m.is_match(value), "{blank:?} matched {value}");
            }
            let m = Matcher::parse_for_event("FileChanged", Some(blank)).unwrap();
            assert!(!m.is_match(".envrc"), "{blank:?}");
        }
        assert_eq!(Matcher::parse(Some(" ")).unwrap(), Matcher::Exact(vec![]));
        // Not a catch-all either: a regex that does not compile (the group is skipped and
        // reported), as `new RegExp("* ")` throws.
        assert!(Matcher::parse(Some("* ")).is_err());
        assert!(Matcher::parse(Some(" * ")).unwrap().is_match("a  b"));
        let m = Matcher::parse(Some(" Edit | Write ")).unwrap();
        assert!(m.is_match("Edit") && m.is_match("Write") && !m.is_match("Bash"));
    }

    /// A command is cut at every separator a shell may read (more, never fewer: inside
    /// quotes too), redirections that hold `&` (`2>&1`, `&>`, `<&3`) are not cut, and a
    /// command with a substitution has no parts that can be told apart.
    #[test]
    fn command_parts_cut_at_every_separator() {
        assert_eq!(
            command_parts("a; b & c && d || e | f |& g\nh\ri").unwrap(),
            ["a", "b", "c", "d", "e", "f", "g", "h", "i"]
        );
        assert_eq!(
            command_parts("a 2>&1 &> x <&3").unwrap(),
            ["a 2>&1 &> x <&3"]
        );
        assert_eq!(command_parts("echo 'x;y'").unwrap(), ["echo 'x", "y'"]);
        assert!(command_parts("  ").unwrap().is_empty());
        for s in ["a $(b)", "a `b`", "a <(b)", "a >(b)"] {
            assert_eq!(command_parts(s), None, "{s}");
        }
    }

    #[test]
    fn basic_rule_matcher() {
        let m = BasicRuleMatcher;
        assert!(m.matches("Bash", "Bash", &json!({"command": "ls"})));
        assert!(m.matches(
            "Bash(git *)",
            "Bash",
            &json!({"command": "cd x && git push"})
        ));
        assert!(!m.matches("Bash(git *)", "Bash", &json!({"command": "ls -la"})));
        assert!(m.matches("Bash(rm:*)", "Bash", &json!({"command": "FOO=1 rm -rf x"})));
        assert!(m.matches("Edit(*.ts)", "Edit", &json!({"file_path": "/a/b.ts"})));
        assert!(!m.matches("Edit(*.ts)", "Edit", &json!({"file_path": "/a/b.rs"})));
        assert!(!m.matches("Edit(*.ts)", "Write", &json!({"file_path": "/a/b.ts"})));
        assert!(m.matches("mcp__srv__*", "mcp__srv__tool", &json!({})));
    }
}
