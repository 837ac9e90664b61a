//! Rule strings: `Tool` or `Tool(content)`, Claude Code's escaping, legacy names and
//! validation.

use std::fmt;

/// A rule string split into its tool name and optional content, as Claude Code parses it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RuleValueParsed {
    /// The tool name, legacy names normalised (`Task` -> `Agent`).
    pub tool_name: String,
    /// The unescaped content between the parentheses; `None` for a tool-wide rule (also for
    /// `Tool()` and `Tool(*)`).
    pub content: Option<String>,
}

/// Why a rule string is malformed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RuleSyntaxError {
    /// The rule as written.
    pub rule: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for RuleSyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid permission rule `{}`: {}",
            self.rule, self.reason
        )
    }
}

impl std::error::Error for RuleSyntaxError {}

pub use tool_core::normalize_tool_name;

/// Unescapes rule content: `\(` -> `(`, `\)` -> `)`, then `\\` -> `\`.
pub fn unescape_content(content: &str) -> String {
    content
        .replace("\\(", "(")
        .replace("\\)", ")")
        .replace("\\\\", "\\")
}

/// Escapes rule content the reverse way of [`unescape_content`].
pub fn escape_content(content: &str) -> String {
    content
        .replace('\\', "\\\\")
        .replace('(', "\\(")
        .replace(')', "\\)")
}

/// Formats a rule from a tool name and optional content (escaping the content).
pub fn format_rule(tool_name: &str, content: Option<&str>) -> String {
    match content {
        Some(c) => format!("{tool_name}({})", escape_content(c)),
        None => tool_name.to_owned(),
    }
}

/// Parses a rule string the way Claude Code does, without validation: the first unescaped
/// `(` and the last unescaped `)`, which must be the final character; anything else makes the
/// whole string a tool name. `Tool()`, `Tool(*)` and `WebFetch(domain:*)` are tool-wide.
pub fn parse_rule_lenient(rule: &str) -> RuleValueParsed {
    let bytes = rule.as_bytes();
    let open =
        (0..bytes.len()).find(|&i| bytes[i] == b'(' && !tool_core::rule_char_is_escaped(bytes, i));
    let close = (0..bytes.len())
        .rev()
        .find(|&i| bytes[i] == b')' && !tool_core::rule_char_is_escaped(bytes, i));
    match (open, close) {
        (Some(o), Some(c)) if c == bytes.len() - 1 && c > o && o > 0 => {
            let name = normalize_tool_name(&rule[..o]).to_owned();
            let raw = &rule[o + 1..c];
            let content = unescape_content(raw);
            // `Tool(*)` names the whole tool, and so does `WebFetch(domain:*)` (every host,
            // however written: `domain:*.`, `domain:＊`, as the domain rules read it).
            let every_host = name == "WebFetch"
                && matches!(
                    crate::domain::DomainPattern::parse(&content),
                    Ok(crate::domain::DomainPattern::Any)
                );
            let content = if content.is_empty() || content == "*" || every_host {
                None
            } else {
                Some(content)
            };
            RuleValueParsed {
                tool_name: name,
                content,
            }
        }
        _ => RuleValueParsed {
            tool_name: normalize_tool_name(rule).to_owned(),
            content: None,
        },
    }
}

/// Parses and validates a rule string: rejects empty rules, mismatched or misplaced
/// parentheses, empty `()`, an empty tool name and whitespace around the name.
pub fn parse_rule(rule: &str) -> Result<RuleValueParsed, RuleSyntaxError> {
    match tool_core::rule_syntax_problem(rule) {
        Some(reason) => Err(RuleSyntaxError {
            rule: rule.to_owned(),
            reason: reason.to_owned(),
        }),
        None => Ok(parse_rule_lenient(rule)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backslash_before_the_content_is_no_tool_name() {
        // Found by the rule-parser fuzz test: it read as the tool `\()` and did not read
        // back from its own text.
        let err = parse_rule("\\()()").unwrap_err();
        assert_eq!(err.reason, "a tool name cannot contain `\\`");
    }

    #[test]
    fn a_closing_parenthesis_in_the_tool_name_is_refused() {
        // Found by the rule-parser fuzz test: `)Bash(*)` was saved as `)Bash`, which does
        // not read back.
        let err = parse_rule(")Bash(*)").unwrap_err();
        assert_eq!(err.reason, "a tool name cannot contain `)`");
    }

    /// `WebFetch(domain:*)` is `WebFetch` (Claude Code's equivalence): a deny of it removes
    /// the tool as a bare deny does, where it used to leave it listed and refuse each call.
    #[test]
    fn every_domain_is_the_whole_web_fetch_tool() {
        for rule in [
            "WebFetch(domain:*)",
            "WebFetch(domain:*.)",
            "WebFetch(domain: * )",
            "WebFetch(domain:*\u{3002})",
            "WebFetch(domain:\u{ff0a})",
        ] {
            let parsed = parse_rule(rule).unwrap();
            assert_eq!(parsed.tool_name, "WebFetch", "{rule}");
            assert_eq!(parsed.content, None, "{rule}");
        }
        assert_eq!(
            parse_rule("WebFetch(domain:*.example.com)")
                .unwrap()
                .content
                .as_deref(),
            Some("domain:*.example.com")
        );
        // Another tool's `domain:*` is its own content.
        assert_eq!(
            parse_rule("mcp__web__fetch(domain:*)")
                .unwrap()
                .content
                .as_deref(),
            Some("domain:*")
        );
    }

    #[test]
    fn parses_and_unescapes() {
        assert_eq!(
            parse_rule("Bash").unwrap(),
            RuleValueParsed {
                tool_name: "Bash".into(),
                content: None
            }
        );
        assert_eq!(parse_rule("Bash(*)").unwrap().content, None);
        let r = parse_rule("Bash(echo \\(hi\\))").unwrap();
        assert_eq!(r.content.as_deref(), Some("echo (hi)"));
        assert_eq!(parse_rule("Task(Explore)").unwrap().tool_name, "Agent");
        assert!(parse_rule("Bash(").is_err());
        assert!(parse_rule("Bash()").is_err());
        assert!(parse_rule("").is_err());
        assert!(parse_rule("(x)").is_err());
        assert!(parse_rule("Bash(x) y").is_err());
        assert_eq!(
            format_rule("Bash", Some("echo (hi)")),
            "Bash(echo \\(hi\\))"
        );
    }
}
