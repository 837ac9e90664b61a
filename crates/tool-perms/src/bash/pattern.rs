//! The three kinds of Bash rule content: legacy prefix (`cmd:*`), wildcard and exact.

/// A compiled Bash rule content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellPattern {
    /// `cmd:*`: the command equals `cmd` or starts with `cmd ` (word boundary).
    Prefix(String),
    /// A pattern with an unescaped `*`: whole-string glob where `*` matches anything.
    Wildcard {
        /// Literal pieces between the stars.
        pieces: Vec<String>,
        /// The pattern ends in ` *` and that is its only star: the trailing ` *` is optional.
        optional_tail: bool,
    },
    /// Anything else: string equality (after unescaping `\*` and `\\`).
    Exact(String),
}

impl ShellPattern {
    /// Compiles rule content (already unescaped from the rule's parentheses).
    pub fn parse(content: &str) -> Self {
        if let Some(prefix) = content.strip_suffix(":*")
            && !prefix.is_empty()
            && !has_unescaped_star(prefix)
        {
            return Self::Prefix(unescape_stars(prefix));
        }
        if !has_unescaped_star(content) {
            return Self::Exact(unescape_stars(content));
        }
        let mut pieces = Vec::new();
        let mut cur = String::new();
        let mut chars = content.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(n @ ('*' | '\\')) => cur.push(n),
                    Some(n) => {
                        cur.push('\\');
                        cur.push(n);
                    }
                    None => cur.push('\\'),
                },
                '*' => pieces.push(std::mem::take(&mut cur)),
                c => cur.push(c),
            }
        }
        pieces.push(cur);
        let optional_tail = pieces.len() == 2 && pieces[1].is_empty() && pieces[0].ends_with(' ');
        Self::Wildcard {
            pieces,
            optional_tail,
        }
    }

    /// Whether the pattern matches a whole simple command.
    pub fn matches(&self, command: &str) -> bool {
        match self {
            Self::Prefix(p) => {
                command == p
                    || (command.starts_with(p.as_str())
                        && command[p.len()..].starts_with([' ', '\t']))
            }
            Self::Exact(e) => command == e,
            Self::Wildcard {
                pieces,
                optional_tail,
            } => {
                if *optional_tail {
                    let head = pieces[0].trim_end_matches(' ');
                    if command == head {
                        return true;
                    }
                }
                glob_match(pieces, command)
            }
        }
    }

    /// The first word every command this pattern matches starts with, when the pattern fixes
    /// it (used to index rules); `None` for wildcards whose first word is open.
    pub fn first_word(&self) -> Option<&str> {
        let lit = match self {
            Self::Prefix(p) | Self::Exact(p) => p.as_str(),
            Self::Wildcard { pieces, .. } => {
                let head = pieces.first()?;
                if !head.contains([' ', '\t']) {
                    return None;
                }
                head.as_str()
            }
        };
        Some(first_word(lit))
    }

    /// Whether the pattern accepts arguments appended after it (prefix rules and wildcards
    /// ending in `*`): needed for `xargs CMD`, whose arguments arrive at run time.
    pub fn accepts_appended_args(&self) -> bool {
        match self {
            Self::Prefix(_) => true,
            Self::Wildcard { pieces, .. } => pieces.last().is_some_and(String::is_empty),
            Self::Exact(_) => false,
        }
    }
}

/// A word a rule names, for [`ShellPattern::named_words`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleWord {
    /// The whole word, as written in the rule.
    Whole(String),
    /// Part of a word a `*` of the rule completes (`push` of `git push*`): any word may be it.
    Part,
}

impl ShellPattern {
    /// The words the rule names literally, split at blanks: its program first (`None` when
    /// a `*` may stand for it, as in `* push:*`), then the others. A glob in a command
    /// (`git pu[s]h`) that may expand to one of these may make the rule match what runs.
    pub fn named_words(&self) -> (Option<RuleWord>, Vec<RuleWord>) {
        let blank = |c: char| c == ' ' || c == '\t';
        let mut words: Vec<RuleWord> = Vec::new();
        let mut program_open = false;
        match self {
            Self::Prefix(p) | Self::Exact(p) => {
                words.extend(
                    p.split(blank)
                        .filter(|w| !w.is_empty())
                        .map(|w| RuleWord::Whole(w.to_owned())),
                );
            }
            Self::Wildcard { pieces, .. } => {
                let last = pieces.len().saturating_sub(1);
                for (i, piece) in pieces.iter().enumerate() {
                    let tokens: Vec<&str> = piece.split(blank).collect();
                    let n = tokens.len();
                    for (j, token) in tokens.into_iter().enumerate() {
                        if token.is_empty() {
                            continue;
                        }
                        // A token touching a `*` is only part of a word.
                        let part = (j == 0 && i > 0) || (j + 1 == n && i < last);
                        words.push(if part {
                            RuleWord::Part
                        } else {
                            RuleWord::Whole(token.to_owned())
                        });
                    }
                    if i == 0 && !piece.starts_with(|c: char| !blank(c)) {
                        program_open = true;
                    }
                }
            }
        }
        if program_open || words.is_empty() {
            return (None, words);
        }
        match words.remove(0) {
            RuleWord::Part => (None, words),
            whole => (Some(whole), words),
        }
    }
}

/// The text before the first space or tab.
pub fn first_word(s: &str) -> &str {
    s.split([' ', '\t']).next().unwrap_or("")
}

fn has_unescaped_star(s: &str) -> bool {
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == '*' {
            return true;
        }
    }
    false
}

/// `s` as an exact pattern: `\` and `*` escaped, so that [`ShellPattern::parse`] reads it as
/// that one command, never as a wildcard (`find . -name '*.rs'` stored by "don't ask again"
/// must not match `find . -name 'x' -delete -o -name 'y.rs'`).
pub fn escape_stars(s: &str) -> String {
    s.replace('\\', "\\\\").replace('*', "\\*")
}

fn unescape_stars(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n @ ('*' | '\\')) => out.push(n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Whole-string glob: `pieces` are the literals between stars (at least two pieces when there
/// is a star).
fn glob_match(pieces: &[String], s: &str) -> bool {
    let Some((first, rest)) = pieces.split_first() else {
        return s.is_empty();
    };
    let Some(mut remaining) = s.strip_prefix(first.as_str()) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return remaining.is_empty();
    };
    for piece in middle {
        match remaining.find(piece.as_str()) {
            Some(i) => remaining = &remaining[i + piece.len()..],
            None => return false,
        }
    }
    remaining.len() >= last.len() && remaining.ends_with(last.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert!(ShellPattern::parse("npm test:*").matches("npm test"));
        assert!(ShellPattern::parse("npm test:*").matches("npm test --watch"));
        assert!(!ShellPattern::parse("ls:*").matches("lsof"));
        assert!(ShellPattern::parse("ls *").matches("ls"));
        assert!(ShellPattern::parse("ls *").matches("ls -la"));
        assert!(!ShellPattern::parse("ls *").matches("lsof"));
        assert!(ShellPattern::parse("ls*").matches("lsof"));
        assert!(ShellPattern::parse("git * main").matches("git push origin main"));
        assert!(!ShellPattern::parse("git * main").matches("git push origin main2"));
        assert!(ShellPattern::parse("echo \\*").matches("echo *"));
        assert!(!ShellPattern::parse("echo \\*").matches("echo hi"));
        assert!(ShellPattern::parse("a*b*a").matches("aba"));
        assert!(!ShellPattern::parse("a*b*a").matches("ab"));
    }
}
