//! The values a command line's own variables may hold, when the line spells every one of
//! them out: `d=build`, `export d=build`, `for d in build dist`, quoted or escaped too
//! (`X='secrets/*'`, whose value keeps its glob: an unquoted `$X` expands it, `"$X"` does
//! not).
//!
//! A removal through such a variable (`for d in build dist; do rm -rf "$d"; done`) is then
//! checked as a removal of each value, instead of being asked about because the variable
//! might hold `/` or the home. Everything here errs towards "not known": a variable the line
//! may set in any other way (`read`, `${d:=x}`, `declare -u`, arithmetic, an expanded
//! value or one with a quoted blank, a loop over a glob or `"$@"`) has no values, and the
//! caller keeps asking.
//!
//! What this module never does: decide whether a path is safe. It only says which words a
//! variable may stand for; the engine checks those words as it checks any written path.

use std::collections::BTreeMap;

use super::parse::{Analysis, SimpleCommand};

/// At most this many of a line's variables have their values looked for
/// ([`plain_values`]): each is a scan of the line.
const MAX_NAMES: usize = 64;

/// At most this many words are made from one operand (the product of its variables'
/// values): past it the operand stays computed.
const MAX_SUBSTITUTED: usize = 64;

/// Variables bash sets by itself (`PWD` after a `cd`, `REPLY` after `read`, `RANDOM`): what
/// the line assigns them is not what they hold later.
const SHELL_MANAGED: &[&str] = &[
    "PWD",
    "OLDPWD",
    "REPLY",
    "OPTARG",
    "OPTIND",
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "LINENO",
    "PPID",
    "UID",
    "EUID",
    "GROUPS",
    "SHLVL",
    "HOSTNAME",
    "HOSTTYPE",
    "MACHTYPE",
    "OSTYPE",
    "FUNCNAME",
    "PIPESTATUS",
    "DIRSTACK",
    "COLUMNS",
    "LINES",
    "EPOCHSECONDS",
    "EPOCHREALTIME",
    "HISTCMD",
    "IFS",
];

/// Builtins that may give a named variable a value the text does not spell (`read d`,
/// `unset d`, `getopts o d`, `let d=1+1`, `declare -u d=x`, `local d`): a line that runs
/// one knows no variable's values.
const ASSIGNING_BUILTINS: &[&str] = &[
    "read",
    "mapfile",
    "readarray",
    "unset",
    "getopts",
    "let",
    "declare",
    "typeset",
    "local",
    "readonly",
    "eval",
    "source",
    ".",
    "wait",
    "printf",
    "coproc",
];

/// The variables `analysis` (of the command line `text`) assigns only plain words, each
/// with every value it may take somewhere in the line: the values of its assignments
/// (`d=build`, `export d=build`, a prefix `d=build cmd`) and the words of its `for`/`select`
/// lists. Empty when the line may set variables out of sight (`read`, `eval`, `printf -v`,
/// `declare`, arithmetic, `IFS`).
///
/// That the variable may be unset where a command runs (before its assignment, past a
/// prefix assignment, outside a branch) is not among the values: [`substituted`] adds it.
pub(crate) fn plain_values(text: &str, analysis: &Analysis) -> BTreeMap<String, Vec<String>> {
    let mut known = BTreeMap::new();
    // As bash reads it: a backslash-newline joins the lines (`d\<newline>=x` is `d=x`).
    let joined = text.replace("\\\n", "");
    let text = joined.as_str();
    if analysis.hidden_assignment
        || text.contains("IFS")
        || text.contains("((")
        || analysis.commands.iter().any(runs_an_assigning_builtin)
        || declares(text)
    {
        return known;
    }
    let names = analysis
        .assigned
        .iter()
        .map(|a| a.name.as_str())
        .chain(
            analysis
                .commands
                .iter()
                .flat_map(|c| c.assignments.iter().map(|a| a.name.as_str())),
        )
        .chain(analysis.commands.iter().flat_map(|c| {
            c.words.iter().filter_map(|w| {
                let (name, _) = w.value.as_deref()?.split_once('=')?;
                Some(name)
            })
        }));
    let mut tried = std::collections::HashSet::new();
    for name in names {
        if !tried.insert(name) || !is_plain_name(name) {
            continue;
        }
        // Each is a scan of the text: a line of more names than this knows none past them.
        if tried.len() > MAX_NAMES {
            break;
        }
        if let Some(values) = values_in(text, name) {
            known.insert(name.to_owned(), values);
        }
    }
    known
}

/// `raw` (an operand as written) with each variable of the line that has plain values
/// replaced by each of them (`"$d"/dist` for `d` in `build dist` is `"build"/dist` and
/// `"dist"/dist`), and by nothing too, unless it is in `set` (the loops whose body the
/// command is in, [`SimpleCommand::set_by_loops`](super::parse::SimpleCommand)): where it
/// runs, the variable may not be set yet, or no longer (`d=x true; rm -rf "$HOME/$d"`).
/// Other expansions are kept as written (`"$HOME/$d"` is `"$HOME/build"`). A value's glob
/// characters are spliced in as they are: [`plain_word`] takes them as a glob where the
/// expansion was unquoted (`$X` for `X='a/*'` is `a/*`, a glob; `"$X"` is none). `None` when it
/// names none of those variables, holds a single quote, a backslash or a backquote, or would
/// make more than [`MAX_SUBSTITUTED`] words.
pub(crate) fn substituted(
    raw: &str,
    known: &BTreeMap<String, Vec<String>>,
    set: &[String],
) -> Option<Vec<String>> {
    if known.is_empty() || raw.contains(['\'', '\\', '`']) {
        return None;
    }
    let mut words = vec![String::new()];
    let mut any = false;
    let mut rest = raw;
    let append = |words: &mut Vec<String>, piece: &str| {
        for w in words.iter_mut() {
            w.push_str(piece);
        }
    };
    while let Some(at) = rest.find('$') {
        append(&mut words, &rest[..at]);
        let after = &rest[at + 1..];
        let (name, len) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}')?;
            (&braced[..end], end + 3)
        } else if after.starts_with('(') {
            // A command substitution, kept whole.
            let len = balanced_parens(after)?;
            append(&mut words, &rest[at..at + 1 + len]);
            rest = &rest[at + 1 + len..];
            continue;
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end + 1)
        };
        match known.get(name).filter(|_| is_plain_name(name)) {
            Some(values) => {
                let unset = (!set.iter().any(|s| s == name)).then_some("");
                let values: Vec<&str> = values.iter().map(String::as_str).chain(unset).collect();
                if words.len() * values.len().max(1) > MAX_SUBSTITUTED {
                    return None;
                }
                words = words
                    .iter()
                    .flat_map(|w| values.iter().map(move |v| format!("{w}{v}")))
                    .collect();
                any = true;
            }
            None => append(&mut words, &rest[at..at + len.max(1)]),
        }
        rest = &rest[at + len.max(1)..];
    }
    append(&mut words, rest);
    words.sort();
    words.dedup();
    any.then_some(words)
}

/// The word `raw` is when nothing in it expands but globs (plain characters, double quotes,
/// `*`, `?`, `[…]`): its text without the quotes, and whether a glob character stands
/// outside them (`"build"/*` is `build/*`, a glob; `"a*"` is no glob).
pub(crate) fn plain_word(raw: &str) -> Option<(String, bool)> {
    let mut quoted = false;
    let mut glob = false;
    for (i, c) in raw.char_indices() {
        match c {
            '"' => quoted = !quoted,
            '*' | '?' | '[' | ']' => glob |= !quoted,
            // A `~` bash expands (`~/"$d"` with `d` empty is `~/`).
            '~' if i == 0 && (raw.len() == 1 || raw[1..].starts_with('/')) => {}
            c if is_plain_char(c) => {}
            _ => return None,
        }
    }
    Some((raw.replace('"', ""), glob))
}

/// The length of the parenthesised text `text` starts with (`(pwd)/x` is 5), `None` when
/// it does not close.
pub(crate) fn balanced_parens(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Every value `name` is given in `text`, when each mention of it that may set it is a
/// plain assignment or a `for`/`select` list of plain words.
fn values_in(text: &str, name: &str) -> Option<Vec<String>> {
    if SHELL_MANAGED.contains(&name) || name.starts_with("BASH") || name.starts_with("COMP") {
        return None;
    }
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut values = Vec::new();
    for (i, _) in text.match_indices(name) {
        let before = &text[..i];
        let after = &text[i + name.len()..];
        if before.ends_with(ident) || after.starts_with(ident) {
            continue;
        }
        // `$d`: a use.
        if before.ends_with('$') {
            continue;
        }
        // `${d}` is a use; `${d:=x}`, `${d=x}`, `${d[0]}`, … may assign or are not plain.
        if before.ends_with("${") {
            if after.starts_with('}') {
                continue;
            }
            return None;
        }
        // `for d in a b`, `select d in a b`.
        let keyword = before.trim_end_matches([' ', '\t']);
        if keyword.len() < before.len()
            && ["for", "select"].iter().any(|k| {
                keyword
                    .strip_suffix(k)
                    .is_some_and(|b| !b.ends_with(ident) && !b.ends_with(['$', '-', '.', '/']))
            })
        {
            values.extend(listed_words(after)?);
            continue;
        }
        if let Some(value) = after.strip_prefix('=') {
            let at_word_start =
                before.is_empty() || before.ends_with([' ', '\t', '\n', ';', '&', '|', '(']);
            if !at_word_start {
                return None;
            }
            // A value with a glob character is kept as it is: an assignment expands no
            // glob (`X=secrets/*` holds `secrets/*`), an unquoted `$X` does.
            let (word, end) = literal_text(value, true)?;
            let next = &value[end..];
            if !(next.is_empty() || next.starts_with([' ', '\t', '\n', ';', '&', '|', ')']))
                || word.starts_with('-')
            {
                return None;
            }
            values.push(word);
            continue;
        }
        // `d+=x`, `d[0]=x`: not plain.
        if after.starts_with("+=") || after.starts_with('[') {
            return None;
        }
        // Any other mention (`echo d`, `${#d}`, `${!d}`) sets nothing.
    }
    values.sort();
    values.dedup();
    Some(values)
}

/// The words of a `for`/`select` list, `after` starting after its variable (` in a b; do`),
/// when each is plain; `None` for a loop over the positional parameters (`for d; do`) or a
/// list with anything that expands (`*/`, `"$@"`, `$(ls)`, `{a,b}`, quotes).
fn listed_words(after: &str) -> Option<Vec<String>> {
    let list = after.trim_start_matches([' ', '\t']).strip_prefix("in")?;
    if !list.starts_with([' ', '\t']) {
        return None;
    }
    let mut words = Vec::new();
    let mut rest = list;
    loop {
        rest = rest.trim_start_matches([' ', '\t']);
        if rest.is_empty() || rest.starts_with([';', '\n']) {
            break;
        }
        // An unquoted glob in the list expands to names found on the disk: not known here.
        let (word, end) = literal_text(rest, false)?;
        if word.is_empty() || word.starts_with('-') {
            return None;
        }
        words.push(word);
        rest = &rest[end..];
        if !(rest.is_empty() || rest.starts_with([' ', '\t', ';', '\n'])) {
            return None;
        }
    }
    // An empty list never sets it: what it holds is not known here.
    (!words.is_empty()).then_some(words)
}

/// The literal text of the shell word `text` starts with, and where the word ends: plain
/// characters, glob characters (`*`, `?`, `[`, `]`), single- or double-quoted runs of them,
/// and backslash-escaped ones (`'secrets/*'`, `"a"b`, `secrets/\*`). The word ends at the
/// first unquoted blank or separator (`;`, `&`, `|`, `)`, a line break). `None` for anything
/// else in it (an expansion, a `~`, a brace, a quoted blank), and, without `unquoted_globs`,
/// for a glob character outside quotes (which bash expands in a `for` list).
pub(crate) fn literal_text(text: &str, unquoted_globs: bool) -> Option<(String, usize)> {
    let literal = |c: char| is_plain_char(c) || matches!(c, '*' | '?' | '[' | ']');
    let mut out = String::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        match c {
            ' ' | '\t' | '\n' | ';' | '&' | '|' | ')' => return Some((out, i)),
            '\'' | '"' => {
                chars.next();
                loop {
                    let (_, d) = chars.next()?;
                    if d == c {
                        break;
                    }
                    if !literal(d) {
                        return None;
                    }
                    out.push(d);
                }
            }
            '\\' => {
                chars.next();
                let (_, d) = chars.next()?;
                if !literal(d) {
                    return None;
                }
                out.push(d);
            }
            '*' | '?' | '[' | ']' if !unquoted_globs => return None,
            c if literal(c) => {
                chars.next();
                out.push(c);
            }
            _ => return None,
        }
    }
    Some((out, text.len()))
}

/// Whether `word` is a value this module knows as written: not empty, of plain characters
/// only, not an option (`-rf`).
pub(crate) fn plain_value(word: &str) -> bool {
    !word.is_empty() && word.chars().all(is_plain_char) && !word.starts_with('-')
}

/// Whether `name` is a variable name (`d`, `_x1`), not a positional or special parameter.
fn is_plain_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name != "_"
}

/// A character that means itself in a word, quoted or not, and in a value: no expansion,
/// quote, glob, brace, `~` or separator.
fn is_plain_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_-./:,+@%=".contains(c)
}

/// Whether `text` runs a declaration that may give a variable a value or an attribute it
/// does not spell (`unset d`, `local d`, `declare -u d=x`, `export -n d`): the parser keeps
/// these out of its commands, so they are looked for as words.
fn declares(text: &str) -> bool {
    let separator = |c: char| c.is_whitespace() || ";&|(){}`".contains(c);
    ["unset", "declare", "typeset", "local", "readonly", "export"]
        .iter()
        .any(|keyword| {
            text.match_indices(keyword).any(|(i, _)| {
                let before = text[..i].chars().next_back();
                let after = &text[i + keyword.len()..];
                before.is_none_or(separator)
                    && after.chars().next().is_none_or(separator)
                    && (*keyword != "export"
                        || after
                            .trim_start_matches([' ', '\t'])
                            .starts_with(['-', '+']))
            })
        })
}

/// Whether `cmd` runs a builtin that may set a variable the text does not spell (`printf`
/// only when its first argument may be `-v NAME`: `printf '%s\n' $X` sets nothing).
fn runs_an_assigning_builtin(cmd: &SimpleCommand) -> bool {
    let words = super::parse::effective_part(cmd);
    words.first().is_none_or(|w| match w.value.as_deref() {
        None => true,
        Some("printf") => words.get(1).is_some_and(|first| match &first.value {
            Some(v) if !first.glob => v.starts_with("-v"),
            _ => super::commands::literal_start(&first.raw).is_none_or(|c| c == '-'),
        }),
        Some(v) => ASSIGNING_BUILTINS.contains(&v),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bash::parse::analyze;

    fn values(text: &str) -> BTreeMap<String, Vec<String>> {
        plain_values(text, &analyze(text))
    }

    fn list(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| (*w).to_owned()).collect()
    }

    /// A loop over plain words and plain assignments are known, with every value.
    #[test]
    fn plain_loops_and_assignments_are_known() {
        let v = values("for d in build dist; do rm -rf \"$d\"; done");
        assert_eq!(v.get("d"), Some(&list(&["build", "dist"])));
        let v = values("X=build; rm -rf \"$X/dist\"; X=out");
        assert_eq!(v.get("X"), Some(&list(&["build", "out"])));
        let v = values("export T=tmp && rm -rf ${T}");
        assert_eq!(v.get("T"), Some(&list(&["tmp"])));
        let v = values("for d in usr\ndo rm -rf /\"$d\"; done");
        assert_eq!(v.get("d"), Some(&list(&["usr"])));
    }

    /// Anything that may give a variable another value makes it unknown.
    #[test]
    fn other_ways_of_setting_a_variable_make_it_unknown() {
        for text in [
            "for d in */; do rm -rf \"$d\"; done",
            "for d in \"$@\"; do rm -rf \"$d\"; done",
            "for d; do rm -rf \"$d\"; done",
            "for d in a ~; do rm -rf \"$d\"; done",
            "for d in a $(ls); do rm -rf \"$d\"; done",
            "for d in a {b,c}; do rm -rf \"$d\"; done",
            "d=a; d+=/..; rm -rf \"$d\"",
            "d=a; read d; rm -rf \"$d\"",
            "d=a; unset d; rm -rf \"/$d\"",
            "d=a; declare -n d=HOME; rm -rf \"$d\"",
            "d=a; local d; rm -rf \"$d\"",
            "d=a; : ${d:=/}; rm -rf \"$d\"",
            "d=a; ((d=1)); rm -rf \"$d\"",
            "d=a; IFS=/; rm -rf $d",
            "d=a; bash -c 'd=/'; rm -rf \"$d\"",
            "d=\"a b\"; rm -rf $d",
            "d=~; rm -rf \"$d\"",
            "d=-rf; rm \"$d\" x",
            "d[0]=/; rm -rf \"$d\"",
            "PWD=build; cd /; rm -rf \"$PWD\"",
            "d=a; eval \"$x\"; rm -rf \"$d\"",
            "d=a; getopts ab d; rm -rf \"$d\"",
        ] {
            assert!(
                !values(text).contains_key("d") && !values(text).contains_key("PWD"),
                "{text}: {:?}",
                values(text)
            );
        }
    }

    /// A value quoted or escaped is known as bash reads it, its glob characters kept (an
    /// assignment expands no glob); a `for` list's quoted glob is known, an unquoted one
    /// (names found on the disk) is not. `printf` without `-v` sets nothing.
    #[test]
    fn quoted_values_keep_their_globs() {
        let v = values("X='secrets/*'; echo $X");
        assert_eq!(v.get("X"), Some(&list(&["secrets/*"])));
        let v = values("X=secrets/\\*; Y=\"a\"'b'; echo $X");
        assert_eq!(v.get("X"), Some(&list(&["secrets/*"])));
        assert_eq!(v.get("Y"), Some(&list(&["ab"])));
        let v = values("X=secrets/*; echo $X");
        assert_eq!(v.get("X"), Some(&list(&["secrets/*"])));
        let v = values("for X in 'secrets/*' b; do echo $X; done");
        assert_eq!(v.get("X"), Some(&list(&["b", "secrets/*"])));
        let v = values("X='secrets/*'; printf '%s\\n' $X");
        assert_eq!(v.get("X"), Some(&list(&["secrets/*"])));
        for text in [
            "for X in secrets/*; do echo $X; done",
            "X='a b*'; echo $X",
            "X='~/x'; echo $X",
            "X=\"$Y/*\"; echo $X",
            "X='a'; printf -v X '%s' b; echo $X",
            "X='a'; printf \"$f\" b; echo $X",
        ] {
            assert!(
                !values(text).contains_key("X"),
                "{text}: {:?}",
                values(text)
            );
        }
    }

    /// An operand is substituted only where it names a known variable; what else expands
    /// is kept as written, and a word is plain only when nothing in it expands but globs.
    /// A variable is also taken as unset, unless the command is in the body of a loop over
    /// its words.
    #[test]
    fn operands_are_substituted_word_by_word() {
        let known: BTreeMap<String, Vec<String>> = [
            ("d".to_owned(), list(&["build", "dist"])),
            ("e".to_owned(), list(&["x"])),
        ]
        .into();
        let set = list(&["d", "e"]);
        let plain = |raw: &str, set: &[String]| {
            substituted(raw, &known, set).map(|ws| {
                ws.iter()
                    .map(|w| plain_word(w).map(|(v, _)| v))
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            plain("\"$d\"/out", &set),
            Some(vec![Some("build/out".into()), Some("dist/out".into())])
        );
        assert_eq!(
            plain("/\"${d}\"", &set),
            Some(vec![Some("/build".into()), Some("/dist".into())])
        );
        // Not in the loop over its words: it may be unset there.
        assert_eq!(
            plain("\"$e/\"", &[]),
            Some(vec![Some("/".into()), Some("x/".into())])
        );
        assert_eq!(
            substituted("\"$HOME/$d\"", &known, &set),
            Some(list(&["\"$HOME/build\"", "\"$HOME/dist\""]))
        );
        assert_eq!(
            substituted("$(pwd)/$d", &known, &set),
            Some(list(&["$(pwd)/build", "$(pwd)/dist"]))
        );
        assert_eq!(plain_word("\"build\"/*"), Some(("build/*".into(), true)));
        assert_eq!(plain_word("\"a*\""), Some(("a*".into(), false)));
        assert_eq!(plain_word("$HOME/x"), None);
        for raw in ["$f", "'$d'", "\\$d", "`echo $d`", "x", "${d:-/}"] {
            assert_eq!(substituted(raw, &known, &set), None, "{raw}");
        }
    }
}
