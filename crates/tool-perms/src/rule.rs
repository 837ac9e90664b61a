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

/// The top-level input fields of Claude Code's tools (and Toolwright's built-in ones), which
/// a deny or ask rule of Claude Code's `Tool(param:value)` form (2.1.178+) may name:
/// `Bash(run_in_background:true)`, `Agent(model:opus)`. Names are the tools' rule names
/// (`Task` is `Agent`).
pub const TOOL_INPUT_FIELDS: &[(&str, &[&str])] = &[
    (
        "Agent",
        &[
            "description",
            "effort",
            "isolation",
            "mode",
            "model",
            "name",
            "prompt",
            "run_in_background",
            "subagent_type",
            "team_name",
        ],
    ),
    (
        "Bash",
        &[
            "command",
            "dangerouslyDisableSandbox",
            "description",
            "run_in_background",
            "timeout",
        ],
    ),
    ("CronCreate", &["cron", "durable", "prompt", "recurring"]),
    ("CronDelete", &["id"]),
    (
        "Edit",
        &["file_path", "new_string", "old_string", "replace_all"],
    ),
    ("EnterWorktree", &["name", "path"]),
    ("ExitWorktree", &["action", "discard_changes"]),
    ("Glob", &["path", "pattern"]),
    (
        "Grep",
        &[
            "-A",
            "-B",
            "-C",
            "-i",
            "-n",
            "-o",
            "context",
            "glob",
            "head_limit",
            "multiline",
            "offset",
            "output_mode",
            "path",
            "pattern",
            "type",
        ],
    ),
    ("ListMcpResourcesTool", &["server"]),
    ("Monitor", &["command", "description", "timeout_ms", "ws"]),
    (
        "NotebookEdit",
        &[
            "cell_id",
            "cell_type",
            "edit_mode",
            "new_source",
            "notebook_path",
        ],
    ),
    (
        "PowerShell",
        &["command", "description", "run_in_background", "timeout"],
    ),
    (
        "Read",
        &["allow_large", "file_path", "limit", "offset", "pages"],
    ),
    ("ReadMcpResourceTool", &["server", "uri"]),
    (
        "ScheduleWakeup",
        &["delaySeconds", "noop", "prompt", "reason", "stop"],
    ),
    ("Skill", &["args", "skill"]),
    ("TaskCreate", &["activeForm", "description", "subject"]),
    ("TaskGet", &["taskId"]),
    ("TaskOutput", &["block", "task_id", "timeout"]),
    ("TaskStop", &["shell_id", "task_id"]),
    (
        "TaskUpdate",
        &[
            "activeForm",
            "description",
            "owner",
            "status",
            "subject",
            "taskId",
        ],
    ),
    ("WebFetch", &["offset", "prompt", "url"]),
    ("WebSearch", &["query"]),
    ("Write", &["content", "file_path"]),
];

/// The fields a tool's own rule content already matches (its command, path or URL): Claude
/// Code ignores a `Tool(param:value)` rule on one of them, with a warning.
pub const PRIMARY_INPUT_FIELDS: &[&str] = &["command", "file_path", "path", "notebook_path", "url"];

/// Rule content of Claude Code's `Tool(param:value)` form ([`field_rule`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRule {
    /// The input field named (`run_in_background`).
    pub field: String,
    /// The value it must have, as written: `*` stands for any characters, everything else
    /// is exact.
    pub value: String,
    /// The field is one the tool's own rule content already matches
    /// ([`PRIMARY_INPUT_FIELDS`]): Claude Code ignores the rule.
    pub primary: bool,
}

/// The `Tool(param:value)` reading of rule content `content` on tool `tool_name`: `Some`
/// when the text before its first `:` is one of that tool's top-level input fields
/// ([`TOOL_INPUT_FIELDS`]), written exactly. On an MCP tool (`tool_name` is
/// `mcp__<server>__<tool>`, [`is_mcp_tool_name`]), whose fields its server decides, any
/// property name the model can be given ([`is_mcp_field_name`]) is a field, and none is
/// primary: an MCP tool's rules have no content of their own that would stand for it.
pub fn field_rule(tool_name: &str, content: &str) -> Option<FieldRule> {
    let (field, value) = content.split_once(':')?;
    if is_mcp_tool_name(tool_name) {
        return is_mcp_field_name(field).then(|| FieldRule {
            field: field.to_owned(),
            value: value.to_owned(),
            primary: false,
        });
    }
    let (_, fields) = TOOL_INPUT_FIELDS
        .iter()
        .find(|(tool, _)| *tool == tool_name)?;
    fields.contains(&field).then(|| FieldRule {
        field: field.to_owned(),
        value: value.to_owned(),
        primary: PRIMARY_INPUT_FIELDS.contains(&field),
    })
}

/// The rule that does what a path rule written on a tool whose path rules are never
/// consulted means: path rules are written `Edit(...)` for the tools that write (Write,
/// NotebookEdit, MultiEdit) and `Read(...)` for the ones that search (Glob, Grep, LS), so
/// `Write(./x)` means `Edit(./x)` and `Grep(src/**)` means `Read(src/**)`. `content` is the
/// rule's content as parsed (unescaped); the rule returned is escaped ([`format_rule`]).
/// `None` for another tool, and for content of the `Tool(param:value)` form
/// ([`field_rule`]: `Write(file_path:/etc/**)`, `Write(content:*key*)`), which is a rule on
/// that tool's input field as written (one Claude Code ignores when the field is the path
/// itself), not a path rule: no path rule means it.
pub fn path_rule_meant(tool_name: &str, content: &str) -> Option<String> {
    let meant = match tool_name {
        "Write" | "NotebookEdit" | "MultiEdit" => "Edit",
        "Glob" | "Grep" | "LS" => "Read",
        _ => return None,
    };
    if field_rule(tool_name, content).is_some() {
        return None;
    }
    Some(format_rule(meant, Some(content)))
}

/// Whether `name` names one MCP tool, `mcp__<server>__<tool>`: a non-empty server and tool
/// part and no `*` (a name pattern is not one tool).
pub fn is_mcp_tool_name(name: &str) -> bool {
    name.strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .is_some_and(|(server, tool)| !server.is_empty() && !tool.is_empty())
        && !name.contains('*')
}

/// Whether `name` can be a top-level property of an MCP tool's input as the model sends
/// it: 1 to 64 ASCII letters, digits, `_`, `.` or `-`, the names the Messages API takes in
/// a tool's input schema (tools-mcp gives a server's property of any other name a new name
/// of this kind for the model, which is the name the call's input then has).
pub fn is_mcp_field_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

impl FieldRule {
    /// Whether a call's `input` has this rule's field set to a value it matches: a string,
    /// a boolean or a number, as its text (`true`, `5000`); a field left out, `null`, an
    /// array or an object never matches. Returns the field and value as a message shows
    /// them (`run_in_background: true`).
    pub fn matches(&self, input: &serde_json::Value) -> Option<String> {
        use serde_json::Value;
        let text = match input.get(&self.field)? {
            Value::String(s) => s.clone(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.to_string(),
            _ => return None,
        };
        wildcard_matches(&self.value, &text).then(|| format!("{}: {text}", self.field))
    }
}

/// Whether `text` matches `pattern`, whose every `*` stands for any characters (none too) and
/// everything else for itself. Takes time proportional to the product of the lengths at
/// worst (a star moves on one character at a time), never more.
fn wildcard_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // Where the last star was and where the text was when it was met.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            // The last star takes one more character.
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
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

    /// `*` stands for any characters (none too), everything else for itself; only a
    /// scalar field matches, and a field left out never does.
    #[test]
    fn field_rules_match_scalar_fields() {
        let rule = field_rule("Agent", "model:op*s").unwrap();
        assert!(!rule.primary);
        assert_eq!(
            rule.matches(&serde_json::json!({"model": "opus"}))
                .as_deref(),
            Some("model: opus")
        );
        assert!(rule.matches(&serde_json::json!({"model": "ops"})).is_some());
        assert!(
            rule.matches(&serde_json::json!({"model": "opusx"}))
                .is_none()
        );
        assert!(rule.matches(&serde_json::json!({})).is_none());
        assert!(
            rule.matches(&serde_json::json!({"model": ["opus"]}))
                .is_none()
        );
        let any = field_rule("Bash", "timeout:*").unwrap();
        assert!(any.matches(&serde_json::json!({"timeout": 5000})).is_some());
        assert!(any.matches(&serde_json::json!({"timeout": null})).is_none());
        assert!(wildcard_matches("a*b*c", "aXbYbc"));
        assert!(!wildcard_matches("a*b*c", "aXbYb"));
        assert!(wildcard_matches("**", ""));
        assert!(field_rule("Bash", "command:rm*").unwrap().primary);
        assert_eq!(field_rule("Bash", "git:*"), None);
        // An MCP tool's fields are its server's: any name the model can be given, none
        // of them primary (its rules have no content of their own).
        let mcp = field_rule("mcp__gh__x", "owner:prod").unwrap();
        assert_eq!((mcp.field.as_str(), mcp.value.as_str()), ("owner", "prod"));
        assert!(!field_rule("mcp__fs__read", "path:/etc/*").unwrap().primary);
        assert_eq!(
            field_rule("mcp__gh__x", "repo:a:b").map(|r| r.value),
            Some("a:b".to_owned())
        );
        for content in ["prod", ":prod", "the owner:prod", "$filter:x", "*:x"] {
            assert_eq!(field_rule("mcp__gh__x", content), None, "{content}");
        }
        // Not one MCP tool: a server-wide name or a pattern.
        for name in [
            "mcp__gh",
            "mcp__gh__",
            "mcp____x",
            "mcp__gh__*",
            "mcp__*__x",
        ] {
            assert_eq!(field_rule(name, "owner:prod"), None, "{name}");
        }
    }

    #[test]
    fn path_rules_on_tools_never_consulted_name_the_rule_meant() {
        for (tool, content, meant) in [
            ("Write", "./x", Some("Edit(./x)")),
            ("NotebookEdit", "n.ipynb", Some("Edit(n.ipynb)")),
            ("MultiEdit", "/etc/**", Some("Edit(/etc/**)")),
            ("Glob", "src/**", Some("Read(src/**)")),
            ("Grep", "./secrets/**", Some("Read(./secrets/**)")),
            ("LS", "~/x", Some("Read(~/x)")),
            // Escaped again as a rule is written.
            ("Write", "a(b)", Some("Edit(a\\(b\\))")),
            // Field rules are no path rules.
            ("Write", "file_path:/etc/**", None),
            ("Write", "content:*key*", None),
            ("Grep", "pattern:secret", None),
            ("NotebookEdit", "notebook_path:x", None),
            // Tools whose path rules are consulted, or that take none.
            ("Edit", "./x", None),
            ("Read", "./x", None),
            ("Bash", "ls", None),
        ] {
            assert_eq!(
                path_rule_meant(tool, content).as_deref(),
                meant,
                "{tool}({content})"
            );
        }
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
