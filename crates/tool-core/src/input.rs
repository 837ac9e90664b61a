//! The schema step of a call: checking the model's raw input against a tool's schema and
//! reporting problems in the exact text models have learned to act on.
//!
//! [`check_input`] walks the (normalised) schema and the input together. It first repairs what
//! streaming breaks (an array or object that arrives as a JSON-encoded string; a `null` for an
//! optional field), then collects every problem in three classes, in Claude Code's order:
//! missing required parameters, unexpected parameters, and type mismatches. [`InputError`]
//! renders them as
//!
//! ```text
//! <tool_use_error>InputValidationError: Read failed due to the following issue:
//! The required parameter `file_path` is missing</tool_use_error>
//! ```

use std::fmt;

use serde_json::{Map, Value};

use crate::error::tool_use_error;

/// One problem with an input.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum InputIssue {
    /// A required parameter is absent.
    Missing {
        /// Where (`a.b[0].c`).
        path: String,
    },
    /// A parameter the schema does not allow.
    Unexpected {
        /// Where.
        path: String,
    },
    /// A parameter of the wrong JSON type.
    WrongType {
        /// Where.
        path: String,
        /// The type the schema wants (`string`, `number`, `array`, ...).
        expected: String,
        /// The type that arrived.
        received: &'static str,
    },
    /// A number below the schema's `minimum` (a negative `offset`).
    TooSmall {
        /// Where.
        path: String,
        /// The smallest value allowed.
        minimum: String,
        /// The value that arrived.
        received: String,
    },
    /// A value the schema does not list (`enum`, or `oneOf` constants): a todo's
    /// `"status": "done"`.
    NotAllowed {
        /// Where.
        path: String,
        /// The values allowed, as JSON (`"pending"`).
        allowed: Vec<String>,
        /// The value that arrived, as JSON.
        received: String,
    },
    /// A number above the schema's `maximum` (a TaskOutput `timeout` past its cap).
    TooLarge {
        /// Where.
        path: String,
        /// The largest value allowed.
        maximum: String,
        /// The value that arrived.
        received: String,
    },
    /// An array with fewer or more items than the schema's `minItems`/`maxItems`, or a
    /// string with fewer or more characters than its `minLength`/`maxLength` (counted as
    /// JavaScript counts them, in UTF-16 units): AskUserQuestion's five questions.
    WrongLength {
        /// Where.
        path: String,
        /// `items` or `characters`.
        unit: &'static str,
        /// The bound passed: `at least 1`, `at most 4`.
        bound: String,
        /// The length that arrived.
        received: u64,
    },
}

impl fmt::Display for InputIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing { path } => write!(f, "The required parameter `{path}` is missing"),
            Self::Unexpected { path } => write!(f, "An unexpected parameter `{path}` was provided"),
            Self::WrongType {
                path,
                expected,
                received,
            } => {
                write!(
                    f,
                    "The parameter `{path}` type is expected as `{expected}` but provided as `{received}`"
                )
            }
            Self::TooSmall {
                path,
                minimum,
                received,
            } => write!(
                f,
                "The parameter `{path}` must be at least {minimum}, but is {received}"
            ),
            Self::NotAllowed {
                path,
                allowed,
                received,
            } => write!(
                f,
                "The parameter `{path}` must be one of {}, but is {received}",
                allowed.join(", ")
            ),
            Self::TooLarge {
                path,
                maximum,
                received,
            } => write!(
                f,
                "The parameter `{path}` must be at most {maximum}, but is {received}"
            ),
            Self::WrongLength {
                path,
                unit,
                bound,
                received,
            } => write!(
                f,
                "The parameter `{path}` must have {bound} {unit}, but has {received}"
            ),
        }
    }
}

/// Why an input failed the schema step. Its [`to_model_text`](InputError::to_model_text) is
/// what the model sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct InputError {
    tool: String,
    issues: Vec<InputIssue>,
    raw: Option<String>,
}

impl InputError {
    /// An error made of classified issues (sorted into Claude Code's order here).
    pub fn from_issues(tool: &str, mut issues: Vec<InputIssue>) -> Self {
        issues.sort_by_key(|i| match i {
            InputIssue::Missing { .. } => 0,
            InputIssue::Unexpected { .. } => 1,
            InputIssue::WrongType { .. }
            | InputIssue::TooSmall { .. }
            | InputIssue::TooLarge { .. }
            | InputIssue::WrongLength { .. }
            | InputIssue::NotAllowed { .. } => 2,
        });
        Self {
            tool: tool.to_owned(),
            issues,
            raw: None,
        }
    }

    /// An error the classes do not cover (a bad enum value, a custom check), with the
    /// validator's own message.
    pub fn other(tool: &str, message: impl Into<String>) -> Self {
        Self {
            tool: tool.to_owned(),
            issues: Vec::new(),
            raw: Some(message.into()),
        }
    }

    /// The input was not a JSON object at all. A string that opens as an object and does
    /// not parse is the model's input JSON as streamed, broken (a stray comma, cut off):
    /// said so, with where, rather than "received string".
    pub fn not_an_object(tool: &str, value: &Value) -> Self {
        if let Value::String(raw) = value
            && raw.trim_start().starts_with('{')
            && let Err(e) = serde_json::from_str::<Value>(raw)
        {
            return Self::other(
                tool,
                format!("{tool}'s input is not valid JSON ({e}); it must be one JSON object"),
            );
        }
        Self::other(
            tool,
            format!(
                "{tool} expects a JSON object as input, but received {}",
                json_type(value)
            ),
        )
    }

    /// The classified issues (empty for an unclassified error).
    pub fn issues(&self) -> &[InputIssue] {
        &self.issues
    }

    /// The message without the wrapping tags.
    pub fn message(&self) -> String {
        if self.issues.is_empty() {
            return self
                .raw
                .clone()
                .unwrap_or_else(|| format!("{} received an invalid input", self.tool));
        }
        let noun = if self.issues.len() == 1 {
            "issue"
        } else {
            "issues"
        };
        let lines: Vec<String> = self.issues.iter().map(ToString::to_string).collect();
        format!(
            "{} failed due to the following {noun}:\n{}",
            self.tool,
            lines.join("\n")
        )
    }

    /// `<tool_use_error>InputValidationError: ...</tool_use_error>`.
    pub fn to_model_text(&self) -> String {
        tool_use_error(format_args!("InputValidationError: {}", self.message()))
    }
}

/// JSON text the model wrote (a tool_use's input, a line of a recorded response) read as
/// JavaScript's `JSON.parse` reads it, which is what Claude Code does: an escaped UTF-16
/// surrogate without its pair (`"\ud800"`, valid JSON by RFC 8259) is read as U+FFFD, the
/// character it becomes once written as UTF-8, where `serde_json` refuses the whole text.
/// Anything else that is not JSON fails with `serde_json`'s error.
pub fn parse_model_json(text: &str) -> serde_json::Result<Value> {
    match serde_json::from_str(text) {
        Err(e) if text.contains("\\u") => match lone_surrogates_replaced(text) {
            Some(repaired) => serde_json::from_str(&repaired),
            None => Err(e),
        },
        parsed => parsed,
    }
}

/// `text` with each escaped UTF-16 surrogate that has no pair (`\ud800` alone, or a low
/// one alone) written `\ufffd`, as [`parse_model_json`] reads it; `None` when it has none.
/// The text keeps its length (each escape is six characters either way).
pub fn lone_surrogates_replaced(text: &str) -> Option<String> {
    /// The code unit of the `\uXXXX` escape at the start of `s`.
    fn unit(s: &str) -> Option<u16> {
        let hex = s.strip_prefix("\\u")?.get(..4)?;
        u16::from_str_radix(hex, 16).ok()
    }
    let is_high = |u: u16| (0xD800..0xDC00).contains(&u);
    let is_low = |u: u16| (0xDC00..0xE000).contains(&u);
    let mut out = String::with_capacity(text.len());
    let mut replaced = false;
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match unit(rest) {
            Some(u) if is_high(u) && unit(&rest[6..]).is_some_and(is_low) => {
                out.push_str(&rest[..12]);
                rest = &rest[12..];
            }
            Some(u) if is_high(u) || is_low(u) => {
                out.push_str("\\ufffd");
                rest = &rest[6..];
                replaced = true;
            }
            // Any other escape (`\\` too) is two characters, kept as they are.
            _ => {
                let len = rest[1..].chars().next().map_or(1, |c| 1 + c.len_utf8());
                out.push_str(&rest[..len]);
                rest = &rest[len..];
            }
        }
    }
    out.push_str(rest);
    replaced.then_some(out)
}

/// The JSON type name of a value as the error text spells it.
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A URL as a message shows it: scheme, host, port and path; its user info
/// (`user:password@`) replaced by `redacted@`, and its query (where API keys and tokens
/// sit), fragment (an `#access_token=…`) and anything after the path that looks like a
/// parameter (`&`, `=`, `;`) replaced by `?redacted`. Read as text, not parsed: a URL too
/// malformed to parse (a bad port, an unclosed `[`, a password holding `/`, `#` or `?`) is
/// redacted too, which is when it is most likely to be shown. When it is unclear which `@`
/// ends the user info, more is hidden rather than less (at worst the host shown is wrong).
pub fn redact_url(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, url),
    };
    let host_end = |text: &str| text.find(['/', '?', '#']).unwrap_or(text.len());
    let host_like = |host: &str| {
        !host.is_empty()
            && host.chars().all(|c| {
                c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']' | '%')
            })
    };
    // The `@` that ends the user info: the first one with plain user info before it (no `/`,
    // `?` or `#`) and a host after it; else the last one with a host after it (a password
    // holding `/`); else none (an `@` in a query or a path).
    let ats: Vec<usize> = rest.match_indices('@').map(|(i, _)| i).collect();
    let after = |at: usize| &rest[at + 1..];
    let with_host = |at: &usize| host_like(&after(*at)[..host_end(after(*at))]);
    let at = ats
        .iter()
        .find(|at| !rest[..**at].contains(['/', '?', '#']) && with_host(at))
        .or_else(|| ats.iter().rev().find(|at| with_host(at)))
        .copied();
    let (host_and_tail, had_user_info) = match at {
        Some(at) => (after(at), true),
        None => (rest, false),
    };
    let (authority, tail) = host_and_tail.split_at(host_end(host_and_tail));
    let host = if had_user_info {
        format!("redacted@{authority}")
    } else {
        authority.to_owned()
    };
    let tail = match tail.find(['?', '#', '&', '=', ';']) {
        Some(end) if tail[end..].starts_with('#') => tail[..end].to_owned(),
        Some(end) => format!("{}?redacted", &tail[..end]),
        None => tail.to_owned(),
    };
    match scheme {
        Some(scheme) => format!("{scheme}://{host}{tail}"),
        None => format!("{host}{tail}"),
    }
}

/// A value as a configuration diagnostic shows it: `true`, `5`, `null` and short strings as
/// they are, anything else by its type (`an array`, `an object`, `a string`), so that a
/// message about a malformed setting never echoes a whole value (a header with a token, a
/// URL with a key).
pub fn shown_setting(value: &Value) -> String {
    match value {
        Value::String(s) if s.chars().count() <= 20 && !s.chars().any(char::is_control) => {
            format!("{s:?}")
        }
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
        scalar => scalar.to_string(),
    }
}

/// Repairs and checks `input` against a normalised `schema`; see the [module docs](self).
/// `deny_unknown_fields` rejects top-level keys the schema does not list even when the schema
/// itself allows them. Returns the repaired input.
pub fn check_input(
    tool: &str,
    schema: &Value,
    input: Value,
    deny_unknown_fields: bool,
) -> Result<Value, InputError> {
    let Value::Object(_) = &input else {
        return Err(InputError::not_an_object(tool, &input));
    };
    let mut input = input;
    let mut issues = Vec::new();
    walk(schema, &mut input, "", deny_unknown_fields, &mut issues);
    if issues.is_empty() {
        Ok(input)
    } else {
        Err(InputError::from_issues(tool, issues))
    }
}

fn schema_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn type_matches(ty: &str, value: &Value) -> bool {
    match ty {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => {
            value.as_i64().is_some()
                || value.as_u64().is_some()
                || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

/// The schema's length bounds an array or a string passes, if it passes one.
fn length_issue(schema: &Value, value: &Value, path: &str) -> Option<InputIssue> {
    let (len, unit, min_key, max_key) = match value {
        Value::Array(items) => (items.len(), "items", "minItems", "maxItems"),
        Value::String(s) => (
            s.encode_utf16().count(),
            "characters",
            "minLength",
            "maxLength",
        ),
        _ => return None,
    };
    let len = u64::try_from(len).unwrap_or(u64::MAX);
    let issue = |bound: String| InputIssue::WrongLength {
        path: path.to_owned(),
        unit,
        bound,
        received: len,
    };
    if let Some(min) = schema.get(min_key).and_then(Value::as_u64)
        && len < min
    {
        return Some(issue(format!("at least {min}")));
    }
    if let Some(max) = schema.get(max_key).and_then(Value::as_u64)
        && len > max
    {
        return Some(issue(format!("at most {max}")));
    }
    None
}

fn join_path(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_owned()
    } else {
        format!("{base}.{key}")
    }
}

fn walk(
    schema: &Value,
    value: &mut Value,
    path: &str,
    deny_unknown: bool,
    issues: &mut Vec<InputIssue>,
) {
    let types = schema_types(schema);
    // Streaming artefact: an array or object sent as a JSON-encoded string.
    if let Value::String(s) = value {
        let wants_container = types.iter().any(|t| *t == "array" || *t == "object");
        if wants_container
            && !types.contains(&"string")
            && let Ok(decoded) = parse_model_json(s.trim())
            && types.iter().any(|t| type_matches(t, &decoded))
        {
            *value = decoded;
        }
    }
    // A boolean or a number sent as a string (`"true"`, `"100"`), as Claude Code's
    // `semanticBoolean`/`semanticNumber` accept them: the value it spells.
    if let Value::String(s) = value
        && !types.contains(&"string")
    {
        let spelled = s.trim();
        if types.contains(&"boolean") && matches!(spelled, "true" | "false") {
            *value = Value::Bool(spelled == "true");
        } else if (types.contains(&"number") || types.contains(&"integer"))
            && let Ok(n) = serde_json::from_str::<serde_json::Number>(spelled)
        {
            *value = Value::Number(n);
        }
    }
    if !types.is_empty() && !types.iter().any(|t| type_matches(t, value)) {
        let received = json_type(value);
        // Claude Code's schemas call an integer a `number`; a number that is not whole
        // (`10.5`) is told what it should have been, not "a number, got a number".
        let expected = types
            .iter()
            .map(|t| {
                if *t == "integer" && received != "number" {
                    "number"
                } else {
                    t
                }
            })
            .collect::<Vec<_>>()
            .join(" | ");
        issues.push(InputIssue::WrongType {
            path: path.to_owned(),
            expected,
            received,
        });
        return;
    }
    if let (Some(n), Some(min)) = (
        value.as_f64(),
        schema.get("minimum").and_then(Value::as_f64),
    ) && n < min
    {
        issues.push(InputIssue::TooSmall {
            path: path.to_owned(),
            minimum: schema["minimum"].to_string(),
            received: value.to_string(),
        });
        return;
    }
    if let Some(allowed) = allowed_values(schema)
        && !allowed.contains(&&*value)
    {
        issues.push(InputIssue::NotAllowed {
            path: path.to_owned(),
            allowed: allowed.iter().map(ToString::to_string).collect(),
            received: value.to_string(),
        });
        return;
    }
    if let (Some(n), Some(max)) = (
        value.as_f64(),
        schema.get("maximum").and_then(Value::as_f64),
    ) && n > max
    {
        issues.push(InputIssue::TooLarge {
            path: path.to_owned(),
            maximum: schema["maximum"].to_string(),
            received: value.to_string(),
        });
        return;
    }
    if let Some(issue) = length_issue(schema, value, path) {
        issues.push(issue);
        return;
    }
    // A whole number written as a float (`10.0`) where only an integer fits: the integer,
    // so that the typed layer's integer fields accept what this step accepted.
    if types.contains(&"integer")
        && !types.contains(&"number")
        && value.as_i64().is_none()
        && value.as_u64().is_none()
        && let Some(f) = value.as_f64()
        && f.fract() == 0.0
    {
        #[expect(
            clippy::cast_possible_truncation,
            reason = "a whole number inside the i64 range converts exactly"
        )]
        if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
            *value = Value::from(f as i64);
        } else if (0.0..1.844_674_407_370_955_2e19).contains(&f) {
            #[expect(clippy::cast_sign_loss, reason = "checked non-negative")]
            let n = f as u64;
            *value = Value::from(n);
        } else {
            // Past 64 bits (`1e30`, `99999999999999999999`): no integer field holds it, and
            // the typed layer would say so in serde's words, without the parameter.
            issues.push(if f > 0.0 {
                InputIssue::TooLarge {
                    path: path.to_owned(),
                    maximum: u64::MAX.to_string(),
                    received: value.to_string(),
                }
            } else {
                InputIssue::TooSmall {
                    path: path.to_owned(),
                    minimum: i64::MIN.to_string(),
                    received: value.to_string(),
                }
            });
            return;
        }
    }
    match value {
        Value::Object(map) => walk_object(schema, map, path, deny_unknown, issues),
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) {
                for (i, item) in items.iter_mut().enumerate() {
                    walk(item_schema, item, &format!("{path}[{i}]"), false, issues);
                }
            }
        }
        _ => {}
    }
}

/// The values `schema` lists, when it is a closed list: an `enum`, or a `oneOf`/`anyOf` of
/// `const`s (how schemars writes a documented Rust enum).
fn allowed_values(schema: &Value) -> Option<Vec<&Value>> {
    if let Some(Value::Array(values)) = schema.get("enum") {
        return Some(values.iter().collect());
    }
    ["oneOf", "anyOf"].iter().find_map(|key| {
        let alternatives = schema.get(*key)?.as_array()?;
        alternatives.iter().map(|alt| alt.get("const")).collect()
    })
}

fn walk_object(
    schema: &Value,
    map: &mut Map<String, Value>,
    path: &str,
    deny_unknown: bool,
    issues: &mut Vec<InputIssue>,
) {
    let empty = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // A null for an optional declared field means "absent". Keys a free-form object does not
    // declare (a `metadata` map) keep their nulls: there a null is data ("delete this key").
    map.retain(|k, v| {
        !v.is_null()
            || !props.contains_key(k)
            || required.contains(&k.as_str())
            || allows_null(props.get(k))
    });
    for name in &required {
        if !map.contains_key(*name) {
            issues.push(InputIssue::Missing {
                path: join_path(path, name),
            });
        }
    }
    let closed = deny_unknown || schema.get("additionalProperties") == Some(&Value::Bool(false));
    let mut keys: Vec<String> = map.keys().cloned().collect();
    keys.sort();
    for key in keys {
        let child_path = join_path(path, &key);
        match props.get(&key) {
            Some(prop_schema) => {
                if let Some(v) = map.get_mut(&key) {
                    walk(prop_schema, v, &child_path, false, issues);
                }
            }
            None if closed => issues.push(InputIssue::Unexpected { path: child_path }),
            None => {}
        }
    }
}

fn allows_null(schema: Option<&Value>) -> bool {
    schema.is_some_and(|s| schema_types(s).contains(&"null"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An escaped surrogate without its pair is U+FFFD, as JavaScript's `JSON.parse` (and so
    /// Claude Code) reads it; a pair, an escaped backslash before `u`, and text that is not
    /// JSON for another reason are read as before. Found by review: a model's Write of
    /// `"a\ud800b"` was refused as "not valid JSON (unexpected end of hex escape)", and a
    /// recorded turn holding one stopped there.
    #[test]
    fn a_lone_surrogate_escape_is_read_as_the_replacement_character() {
        let read = |text: &str| parse_model_json(text).map_err(|e| e.to_string());
        assert_eq!(
            read(r#"{"c":"a\ud800b"}"#),
            Ok(serde_json::json!({"c": "a\u{fffd}b"}))
        );
        assert_eq!(
            read(r#"{"c":"\udc00"}"#),
            Ok(serde_json::json!({"c": "\u{fffd}"}))
        );
        assert_eq!(
            read(r#"{"c":"\ud800\ud800\udc00x\ud83d"}"#),
            Ok(serde_json::json!({"c": "\u{fffd}\u{10000}x\u{fffd}"}))
        );
        // `\\ud800` is a backslash, then the letters: nothing to repair.
        assert_eq!(
            read(r#"{"c":"\\ud800"}"#),
            Ok(serde_json::json!({"c": "\\ud800"}))
        );
        assert_eq!(
            read(r#"{"c":"😀\ud800"}"#),
            Ok(serde_json::json!({"c": "😀\u{fffd}"}))
        );
        // Other faults keep serde_json's error.
        let broken = read(r#"{"c":"\ud800"#).unwrap_err();
        assert!(broken.contains("EOF"), "{broken}");
        assert!(read(r#"{"c":"\uzzzz"}"#).is_err());
        assert_eq!(lone_surrogates_replaced(r#"{"c":"ok"}"#), None);
        let repaired = lone_surrogates_replaced(r#"["\ud800"]"#).unwrap();
        assert_eq!(repaired.len(), r#"["\ud800"]"#.len());
    }
    use serde_json::json;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "file_path": {"type": "string"},
                "limit": {"type": "integer"},
                "edits": {"type": "array", "items": {"type": "object", "properties": {"old": {"type": "string"}}, "required": ["old"]}},
                "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}}
            },
            "required": ["file_path"]
        })
    }

    #[test]
    fn every_issue_class_in_order() {
        let err = check_input(
            "Edit",
            &schema(),
            json!({"limit": "x", "extra": 1, "edits": [{"old": 3}, {}]}),
            true,
        )
        .unwrap_err();
        assert_eq!(
            err.to_model_text(),
            "<tool_use_error>InputValidationError: Edit failed due to the following issues:\n\
             The required parameter `file_path` is missing\n\
             The required parameter `edits[1].old` is missing\n\
             An unexpected parameter `extra` was provided\n\
             The parameter `edits[0].old` type is expected as `string` but provided as `number`\n\
             The parameter `limit` type is expected as `number` but provided as `string`</tool_use_error>"
        );
    }

    /// A fraction where a whole number goes, and a number below the minimum, say what was
    /// wrong ("expected as `number` but provided as `number`" and serde's "invalid value:
    /// integer `-1`, expected u64" said nothing useful).
    #[test]
    fn a_fraction_or_a_number_below_the_minimum_is_named() {
        let schema = json!({
            "type": "object",
            "properties": {"offset": {"type": "integer", "minimum": 0}},
        });
        let err = check_input("Read", &schema, json!({"offset": 10.5}), true).unwrap_err();
        assert!(
            err.message().ends_with(
                "The parameter `offset` type is expected as `integer` but provided as `number`"
            ),
            "{}",
            err.message()
        );
        let err = check_input("Read", &schema, json!({"offset": -1}), true).unwrap_err();
        assert!(
            err.message()
                .ends_with("The parameter `offset` must be at least 0, but is -1"),
            "{}",
            err.message()
        );
        assert!(check_input("Read", &schema, json!({"offset": 0}), true).is_ok());
    }

    /// A number above the maximum, and a value an enum does not list, are named with their
    /// path (serde's "unknown variant `done`" said neither which field nor which item).
    #[test]
    fn a_number_above_the_maximum_or_an_unlisted_value_is_named() {
        let schema = json!({
            "type": "object",
            "properties": {
                "timeout": {"type": "number", "minimum": 0, "maximum": 600_000},
                "todos": {"type": "array", "items": {"type": "object", "properties": {
                    "status": {"oneOf": [
                        {"type": "string", "const": "pending", "description": "Not started."},
                        {"type": "string", "const": "completed"}]}}}},
                "mode": {"type": "string", "enum": ["a", "b"]},
            },
        });
        let err = check_input("T", &schema, json!({"timeout": 600_001}), true).unwrap_err();
        assert_eq!(
            err.message(),
            "T failed due to the following issue:\nThe parameter `timeout` must be at most 600000, but is 600001"
        );
        assert!(check_input("T", &schema, json!({"timeout": 600_000}), true).is_ok());
        let err = check_input(
            "T",
            &schema,
            json!({"todos": [{"status": "pending"}, {"status": "done"}], "mode": "c"}),
            true,
        )
        .unwrap_err();
        assert_eq!(
            err.message(),
            "T failed due to the following issues:\n\
             The parameter `mode` must be one of \"a\", \"b\", but is \"c\"\n\
             The parameter `todos[1].status` must be one of \"pending\", \"completed\", but is \"done\""
        );
        assert!(
            check_input(
                "T",
                &schema,
                json!({"todos": [{"status": "completed"}], "mode": "b"}),
                true
            )
            .is_ok()
        );
    }

    #[test]
    fn single_issue_uses_singular() {
        let err = check_input("Read", &schema(), json!({}), true).unwrap_err();
        assert_eq!(
            err.message(),
            "Read failed due to the following issue:\nThe required parameter `file_path` is missing"
        );
    }

    #[test]
    fn booleans_and_numbers_sent_as_strings_are_read() {
        let out = check_input(
            "Edit",
            &schema(),
            json!({"file_path": "/a", "limit": " 100 ", "opts": {"deep": "true"}}),
            true,
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"file_path": "/a", "limit": 100, "opts": {"deep": true}})
        );
        // Anything else stays a type error; a string field is left alone.
        for bad in [
            json!({"limit": "ten"}),
            json!({"opts": {"deep": "yes"}}),
            json!({"limit": "1.5"}),
        ] {
            let mut input = bad.clone();
            input["file_path"] = json!("/a");
            assert!(
                check_input("Edit", &schema(), input, true).is_err(),
                "{bad}"
            );
        }
        let out = check_input("Edit", &schema(), json!({"file_path": "100"}), true).unwrap();
        assert_eq!(out["file_path"], "100");
    }

    #[test]
    fn json_encoded_strings_are_decoded() {
        let out = check_input(
            "Edit",
            &schema(),
            json!({"file_path": "/a", "edits": "[{\"old\": \"x\"}]", "opts": " {\"deep\": true} "}),
            true,
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"file_path": "/a", "edits": [{"old": "x"}], "opts": {"deep": true}})
        );
        // A string that is not JSON stays a type error.
        let err = check_input(
            "Edit",
            &schema(),
            json!({"file_path": "/a", "edits": "[oops"}),
            true,
        )
        .unwrap_err();
        assert_eq!(err.issues().len(), 1);
    }

    #[test]
    fn nulls_for_optional_fields_are_dropped_and_unknowns_allowed_when_open() {
        let out = check_input(
            "T",
            &schema(),
            json!({"file_path": "/a", "limit": null, "other": 1}),
            false,
        )
        .unwrap();
        assert_eq!(out, json!({"file_path": "/a", "other": 1}));
        // An undeclared key of an open object keeps its null (a metadata map's "delete").
        let out = check_input(
            "T",
            &schema(),
            json!({"file_path": "/a", "other": null}),
            false,
        )
        .unwrap();
        assert_eq!(out, json!({"file_path": "/a", "other": null}));
        let err = check_input("T", &schema(), json!({"file_path": null}), false).unwrap_err();
        assert_eq!(
            err.issues(),
            &[InputIssue::WrongType {
                path: "file_path".into(),
                expected: "string".into(),
                received: "null"
            }]
        );
    }

    #[test]
    fn non_object_input() {
        let err = check_input("T", &schema(), json!([1]), true).unwrap_err();
        assert_eq!(
            err.to_model_text(),
            "<tool_use_error>InputValidationError: T expects a JSON object as input, but received array</tool_use_error>"
        );
        // The model's input JSON as streamed, broken: said so, with where.
        let err = check_input("T", &schema(), json!("{\"file_path\": \"/a\",}"), true).unwrap_err();
        assert_eq!(
            err.to_model_text(),
            "<tool_use_error>InputValidationError: T's input is not valid JSON (trailing comma at line 1 column 20); it must be one JSON object</tool_use_error>"
        );
        // A string that is no attempt at an object is a string.
        let err = check_input("T", &schema(), json!("ls"), true).unwrap_err();
        assert!(err.to_model_text().contains("but received string"));
    }

    /// A whole number too large for any integer field is named with its parameter, not
    /// left to serde's "invalid type: floating point `1e+30`, expected u64".
    #[test]
    fn an_integer_past_64_bits_is_named() {
        let schema = json!({"type": "object",
            "properties": {"offset": {"type": "integer", "minimum": 0}}});
        for (input, said) in [
            (
                json!({"offset": 1e30}),
                "The parameter `offset` must be at most 18446744073709551615, but is 1e+30",
            ),
            (
                serde_json::from_str::<Value>(r#"{"offset": 99999999999999999999}"#).unwrap(),
                "The parameter `offset` must be at most 18446744073709551615, but is 1e+20",
            ),
        ] {
            let err = check_input("Read", &schema, input, false).unwrap_err();
            assert!(
                err.to_model_text().contains(said),
                "{}",
                err.to_model_text()
            );
        }
    }

    #[test]
    fn integers_accept_whole_floats_only() {
        let out = check_input(
            "T",
            &schema(),
            json!({"file_path": "/a", "limit": 3.0}),
            true,
        )
        .unwrap();
        // Repaired to an integer, so that a typed `u64` field reads it.
        assert!(out["limit"].is_u64(), "{out}");
        assert_eq!(
            serde_json::from_value::<u64>(out["limit"].clone()).unwrap(),
            3
        );
        assert!(
            check_input(
                "T",
                &schema(),
                json!({"file_path": "/a", "limit": 3.5}),
                true
            )
            .is_err()
        );
    }
    #[test]
    fn a_url_is_shown_without_its_credentials() {
        for (url, shown) in [
            ("https://api.example.com/v1", "https://api.example.com/v1"),
            (
                "https://u:p@gw.example:99999/",
                "https://redacted@gw.example:99999/",
            ),
            (
                "https://127.0.0.1:1/anthropic?api-key=SECRET/v1/messages",
                "https://127.0.0.1:1/anthropic?redacted",
            ),
            ("http://h/p?token=SECRET#frag", "http://h/p?redacted"),
            ("http://h/p#frag", "http://h/p"),
            (
                "https://u:p@[bad/v1?token=SECRET",
                "https://redacted@[bad/v1?redacted",
            ),
            ("http://h?token=SECRET", "http://h?redacted"),
            ("user:pass@host/x", "redacted@host/x"),
            // A password holding `/`, `#` or `?` is hidden whole.
            (
                "https://gw:k3y/Zz+SECRET@gw.example/v1",
                "https://redacted@gw.example/v1",
            ),
            (
                "https://gw:abc#SECRET@gw.example/v1",
                "https://redacted@gw.example/v1",
            ),
            (
                "https://gw:abc?SECRET@gw.example/v1?k=SECRET",
                "https://redacted@gw.example/v1?redacted",
            ),
            ("http://h/a@b/c", "http://redacted@b/c"),
            ("", ""),
            // An `@` in the query or the fragment is no user info.
            (
                "https://api.example/v1?email=user@example.com&key=SECRET",
                "https://api.example/v1?redacted",
            ),
            ("https://h/cb#x@y&access_token=SECRET", "https://h/cb"),
            (
                "https://u:p@host/x?e=a@b.com&token=SECRET",
                "https://redacted@host/x?redacted",
            ),
            (
                "https://h/p?next=/x@evil.com/y&token=SECRET",
                "https://redacted@evil.com/y?redacted",
            ),
            ("https://h/p;jsessionid=SECRET", "https://h/p?redacted"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
            assert!(!redact_url(url).contains("SECRET") && !redact_url(url).contains(":p@"));
        }
    }
}
