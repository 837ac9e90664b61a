//! Deferred tools as ToolSearch expects them (Claude Code's semantics 7.2 and 7.3).
//!
//! When tool search is on for a request, the tools sent are the tools that are not deferred,
//! ToolSearch itself, and the deferred tools already *discovered*: named by a
//! `tool_reference` block inside a tool_result of the conversation so far. Those carry
//! `defer_loading: true`, and the request carries the [`TOOL_SEARCH_BETA`] header. The
//! deferred pool is announced to the model by a meta user message prepended to every request
//! (`<available-deferred-tools>`, names sorted one per line), merged into the first user
//! message as its first text block (what the API receives once adjacent user messages are
//! merged). When tool search is off, every tool is sent with its full schema and ToolSearch
//! is left out.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{Value, json};
use tool_core::Tool;
use tools_builtin::tool_search::{TOOL_SEARCH_NAME, deferred_tools_announcement, is_deferred_tool};

use super::client::TOOL_SEARCH_BETA;

/// Whether deferred tools are withheld (`ENABLE_TOOL_SEARCH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSearchMode {
    /// Every tool is sent with its schema; ToolSearch is not offered (`standard`).
    Off,
    /// Deferred tools are always withheld (`tst`).
    Always,
    /// Deferred tools are withheld when their definitions would take at least this percentage
    /// of the context window (`tst-auto`, `auto:N`).
    Auto {
        /// The threshold, in percent of the context window.
        percent: u32,
    },
}

/// The context window assumed for the `auto` threshold, in tokens.
pub const CONTEXT_WINDOW_TOKENS: u64 = 200_000;

/// Characters per token of the `auto` threshold's fallback estimate.
const CHARS_PER_TOKEN: f64 = 2.5;

use tool_core::env_truthy as truthy;

/// Whether `base_url` is Anthropic's own API (tool search is assumed to work there; a
/// proxy must opt in with `ENABLE_TOOL_SEARCH`).
fn is_anthropic_host(base_url: &str) -> bool {
    let rest = base_url
        .split_once("://")
        .map_or(base_url, |(_, rest)| rest);
    let host = rest
        .split(['/', ':', '?', '#'])
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    host == "anthropic.com" || host.ends_with(".anthropic.com")
}

/// The whole number `text` begins with, as JavaScript's `parseInt(text, 10)` reads it:
/// white space skipped, a sign, then digits up to the first other character (`5%` is 5,
/// `1.5` is 1); `None` (NaN) without a digit. Saturates instead of growing past `i32`.
fn js_parse_int(text: &str) -> Option<i32> {
    let text = text.trim_start();
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    if end == 0 {
        return None;
    }
    let magnitude = digits[..end].bytes().fold(0i32, |n, d| {
        n.saturating_mul(10).saturating_add(i32::from(d - b'0'))
    });
    Some(if negative { -magnitude } else { magnitude })
}

impl ToolSearchMode {
    /// The mode from `ENABLE_TOOL_SEARCH` and `CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS`, as
    /// Claude Code reads them: `auto:0` or a truthy value -> always; `auto:100` or a defined
    /// falsy value (`0`, `false`, `no`, `off`) -> off; `auto` / `auto:N` -> auto at N%
    /// (default 10; N read as `parseInt` reads it, clamped to 0..=100: `auto:-1` is always,
    /// `auto:5%` 5%); any other value (`AUTO` too) -> the default, always; unset (or empty) -> always,
    /// except against a base URL that is not an Anthropic host (a proxy), where it is off.
    pub fn from_env(base_url: &str) -> Self {
        let var = |name: &str| std::env::var(name).ok();
        Self::from_values(
            var("ENABLE_TOOL_SEARCH").as_deref(),
            var("CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS").as_deref(),
            base_url,
        )
    }

    /// [`from_env`](Self::from_env) with the values given.
    pub fn from_values(
        enable_tool_search: Option<&str>,
        disable_betas: Option<&str>,
        base_url: &str,
    ) -> Self {
        if disable_betas.is_some_and(truthy) {
            return Self::Off;
        }
        // An empty value reads as unset (Claude Code tests `!process.env.ENABLE_TOOL_SEARCH`).
        let Some(value) = enable_tool_search.filter(|v| !v.is_empty()) else {
            return if is_anthropic_host(base_url) {
                Self::Always
            } else {
                Self::Off
            };
        };
        // `auto` is matched as written (not `AUTO`, not ` auto`), as Claude Code does; N is
        // read as JavaScript's `parseInt` reads it (`5%` is 5, `1.5` is 1) and clamped to
        // 0..=100, no number meaning the default, 10.
        if value == "auto" {
            return Self::Auto { percent: 10 };
        }
        if let Some(n) = value.strip_prefix("auto:") {
            return match js_parse_int(n).map(|p| p.clamp(0, 100)) {
                Some(0) => Self::Always,
                Some(100) => Self::Off,
                Some(p) => Self::Auto {
                    percent: p.unsigned_abs(),
                },
                None => Self::Auto { percent: 10 },
            };
        }
        // Truthy -> always; defined falsy -> off; any other value is neither and falls
        // through to the default, `tst` (always). Only an unset variable is off against a
        // proxy.
        let value = value.trim().to_ascii_lowercase();
        if matches!(value.as_str(), "0" | "false" | "no" | "off") {
            Self::Off
        } else {
            Self::Always
        }
    }
}

/// Whether tool search is off in this environment (`ENABLE_TOOL_SEARCH`, a proxy's
/// `ANTHROPIC_BASE_URL`), whatever the model: `run` then answers a ToolSearch call as the
/// agent loop would, as a call of a tool that does not exist.
pub fn off_in_env() -> bool {
    mode_in_env() == ToolSearchMode::Off
}

/// `tools` as a request in this environment offers them: without ToolSearch where tool
/// search is off (in `auto` mode, below its threshold), a call of it then being a call of a
/// tool that does not exist, as in the agent loop. For `run` and `tools`, which have no
/// model: any but a `haiku` one.
pub fn offered_in_env(mut tools: Vec<Arc<dyn Tool>>) -> Vec<Arc<dyn Tool>> {
    if !tool_search_enabled(mode_in_env(), "", &tools) {
        tools.retain(|t| t.name() != TOOL_SEARCH_NAME);
    }
    tools
}

/// The tool search mode of this environment (`ENABLE_TOOL_SEARCH`, a proxy's
/// `ANTHROPIC_BASE_URL`), as the agent loop reads it.
pub fn mode_in_env() -> ToolSearchMode {
    let base_url = std::env::var("ANTHROPIC_BASE_URL")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "https://api.anthropic.com".to_owned());
    ToolSearchMode::from_env(base_url.trim())
}

/// The API's definition of a tool.
pub fn tool_definition(tool: &dyn Tool) -> Value {
    json!({"name": tool.name(), "description": tool.prompt(), "input_schema": tool.input_schema()})
}

/// The names of the tools `tool_reference` blocks in tool_results of `messages` load.
pub fn discovered_tools(messages: &[Value]) -> HashSet<String> {
    let mut found = HashSet::new();
    for message in messages {
        let Some(blocks) = message["content"].as_array() else {
            continue;
        };
        for block in blocks.iter().filter(|b| b["type"] == "tool_result") {
            for inner in block["content"].as_array().into_iter().flatten() {
                if inner["type"] == "tool_reference"
                    && let Some(name) = inner["tool_name"].as_str()
                {
                    found.insert(name.to_owned());
                }
            }
        }
    }
    found
}

/// What one request carries about tools.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolsForRequest {
    /// The tool definitions.
    pub tools: Vec<Value>,
    /// The `<available-deferred-tools>` announcement, when tool search is on.
    pub announcement: Option<String>,
    /// The `anthropic-beta` values it needs.
    pub betas: Vec<String>,
    /// The deferred tools whose schemas it does not carry (not yet discovered); empty when
    /// tool search is off.
    pub withheld: HashSet<String>,
    /// Whether tool search is on for the request (ToolSearch is offered); when it is off, a
    /// ToolSearch call is answered as a call of a tool that does not exist.
    pub tool_search: bool,
}

/// Claude Code's hint after the input error of a call to a deferred tool whose schema was
/// not sent (`buildSchemaNotSentHint`): without it the model tends to send the same
/// stringly-typed input again.
pub fn schema_not_sent_hint(name: &str) -> String {
    format!(
        "\n\nThis tool's schema was not sent to the API \u{2014} it was not in the discovered-tool \
         set derived from message history. Without the schema in your prompt, typed parameters \
         (arrays, numbers, booleans) get emitted as strings and the client-side parser rejects \
         them. Load the tool first: call ToolSearch with query \"select:{name}\", then retry \
         this call."
    )
}

/// Adds [`schema_not_sent_hint`] to a tool_result block (API JSON) whose input failed the
/// schema: inside its `<tool_use_error>` tags, where Claude Code puts it.
pub fn add_schema_not_sent_hint(result: &mut Value, name: &str) {
    let hint = schema_not_sent_hint(name);
    let text = match &mut result["content"] {
        Value::String(text) => text,
        Value::Array(blocks) => match blocks.iter_mut().rev().find_map(|b| match &mut b["text"] {
            Value::String(text) => Some(text),
            _ => None,
        }) {
            Some(text) => text,
            None => return,
        },
        _ => return,
    };
    match text.strip_suffix("</tool_use_error>") {
        Some(inner) => *text = format!("{inner}{hint}</tool_use_error>"),
        None => text.push_str(&hint),
    }
}

/// Whether tool search is on for a request of `model` with `tools` (Claude Code's
/// `isToolSearchEnabled`): off for `haiku` models, without ToolSearch in the list, without
/// deferred tools, and in auto mode below the threshold.
pub fn tool_search_enabled(mode: ToolSearchMode, model: &str, tools: &[Arc<dyn Tool>]) -> bool {
    if mode == ToolSearchMode::Off || model.to_ascii_lowercase().contains("haiku") {
        return false;
    }
    if !tools.iter().any(|t| t.name() == TOOL_SEARCH_NAME) {
        return false;
    }
    let deferred = tools.iter().filter(|t| is_deferred_tool(t.as_ref()));
    match mode {
        ToolSearchMode::Off => false,
        ToolSearchMode::Always => deferred.count() > 0,
        ToolSearchMode::Auto { percent } => {
            let chars: usize = deferred
                .map(|t| t.name().len() + t.prompt().len() + t.input_schema().to_string().len())
                .sum();
            #[expect(clippy::cast_precision_loss, reason = "an estimate")]
            let threshold = (CONTEXT_WINDOW_TOKENS * u64::from(percent) / 100) as f64;
            #[expect(clippy::cast_precision_loss, reason = "an estimate")]
            let chars = chars as f64;
            chars > 0.0 && chars >= threshold * CHARS_PER_TOKEN
        }
    }
}

/// The tools, announcement and betas of a request of `model` over `tools`, given the
/// conversation so far.
pub fn tools_for_request(
    mode: ToolSearchMode,
    model: &str,
    tools: &[Arc<dyn Tool>],
    messages: &[Value],
) -> ToolsForRequest {
    if !tool_search_enabled(mode, model, tools) {
        return ToolsForRequest {
            tools: tools
                .iter()
                .filter(|t| t.name() != TOOL_SEARCH_NAME)
                .map(|t| tool_definition(t.as_ref()))
                .collect(),
            announcement: None,
            betas: Vec::new(),
            withheld: HashSet::new(),
            tool_search: false,
        };
    }
    let discovered = discovered_tools(messages);
    let mut definitions = Vec::with_capacity(tools.len());
    let mut withheld = HashSet::new();
    for tool in tools {
        if !is_deferred_tool(tool.as_ref()) {
            definitions.push(tool_definition(tool.as_ref()));
        } else if discovered.contains(tool.name()) {
            let mut definition = tool_definition(tool.as_ref());
            definition["defer_loading"] = Value::Bool(true);
            definitions.push(definition);
        } else {
            withheld.insert(tool.name().to_owned());
        }
    }
    ToolsForRequest {
        tools: definitions,
        announcement: deferred_tools_announcement(tools),
        betas: vec![TOOL_SEARCH_BETA.to_owned()],
        withheld,
        tool_search: true,
    }
}

/// What stands in for a tool_result's `tool_reference` blocks once none is left: with tool
/// search off for the request, and when the tools they loaded are gone.
pub const REFERENCES_REMOVED_SEARCH_OFF: &str =
    "[Tool references removed - tool search not enabled]";
/// See [`REFERENCES_REMOVED_SEARCH_OFF`].
pub const REFERENCES_REMOVED_TOOLS_GONE: &str =
    "[Tool references removed - tools no longer available]";

/// `messages` as a request planned as `plan` may carry them (Claude Code's
/// `stripToolReferenceBlocksFromUserMessage` and `stripUnavailableToolReferences...`): the API
/// refuses a `tool_reference` without tool search's beta, and one that names a tool the
/// request does not define. So with tool search off every `tool_reference` block goes; with
/// it on, those naming a tool no longer in the request (an MCP server dropped it). A
/// tool_result left with no content says why in a text block. Only requests change: the
/// conversation keeps its blocks, so a later request with the tools back sends them again.
pub fn without_stale_tool_references(messages: &[Value], plan: &ToolsForRequest) -> Vec<Value> {
    let defined: HashSet<&str> = plan
        .tools
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    let stale = |inner: &Value| {
        inner["type"] == "tool_reference"
            && (!plan.tool_search
                || !inner["tool_name"]
                    .as_str()
                    .is_some_and(|n| defined.contains(n)))
    };
    let any_stale = messages.iter().any(|m| {
        m["content"].as_array().is_some_and(|blocks| {
            blocks.iter().any(|b| {
                b["type"] == "tool_result"
                    && b["content"].as_array().is_some_and(|c| c.iter().any(stale))
            })
        })
    });
    if !any_stale {
        return messages.to_vec();
    }
    let removed = if plan.tool_search {
        REFERENCES_REMOVED_TOOLS_GONE
    } else {
        REFERENCES_REMOVED_SEARCH_OFF
    };
    messages
        .iter()
        .map(|message| {
            let mut message = message.clone();
            for block in message["content"].as_array_mut().into_iter().flatten() {
                if block["type"] != "tool_result" {
                    continue;
                }
                let Some(content) = block["content"].as_array_mut() else {
                    continue;
                };
                if !content.iter().any(stale) {
                    continue;
                }
                content.retain(|inner| !stale(inner));
                if content.is_empty() {
                    content.push(json!({"type": "text", "text": removed}));
                }
            }
            message
        })
        .collect()
}

/// The messages of a request: `messages` with `announcement` as the first text block of the
/// first user message.
pub fn with_announcement(messages: &[Value], announcement: Option<&str>) -> Vec<Value> {
    let mut out = messages.to_vec();
    let Some(text) = announcement else {
        return out;
    };
    let block = json!({"type": "text", "text": text});
    match out.first_mut() {
        Some(first) if first["role"] == "user" => {
            let content = match first["content"].take() {
                Value::String(s) => vec![block, json!({"type": "text", "text": s})],
                Value::Array(mut blocks) => {
                    blocks.insert(0, block);
                    blocks
                }
                _ => vec![block],
            };
            first["content"] = Value::Array(content);
        }
        _ => out.insert(0, json!({"role": "user", "content": [block]})),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_follows_claude_codes_reading() {
        let api = "https://api.anthropic.com";
        let proxy = "http://127.0.0.1:9";
        let m = ToolSearchMode::from_values;
        assert_eq!(m(None, None, api), ToolSearchMode::Always);
        assert_eq!(m(None, None, proxy), ToolSearchMode::Off);
        assert_eq!(m(Some("true"), None, proxy), ToolSearchMode::Always);
        assert_eq!(m(Some("false"), None, api), ToolSearchMode::Off);
        assert_eq!(
            m(Some("auto"), None, api),
            ToolSearchMode::Auto { percent: 10 }
        );
        assert_eq!(m(Some("auto:0"), None, api), ToolSearchMode::Always);
        assert_eq!(m(Some("auto:100"), None, api), ToolSearchMode::Off);
        assert_eq!(
            m(Some("auto:25"), None, api),
            ToolSearchMode::Auto { percent: 25 }
        );
        assert_eq!(m(Some("1"), Some("1"), api), ToolSearchMode::Off);
        // Defined falsy values turn it off; any other value is not falsy and falls through
        // to the default mode (`tst`, always), even against a proxy (only an unset variable
        // is turned off there).
        for off in ["0", "false", "No", " OFF "] {
            assert_eq!(m(Some(off), None, api), ToolSearchMode::Off, "{off}");
        }
        for other in ["banana", "2", "enabled"] {
            assert_eq!(m(Some(other), None, api), ToolSearchMode::Always, "{other}");
            assert_eq!(
                m(Some(other), None, proxy),
                ToolSearchMode::Always,
                "{other}"
            );
        }
        // `auto:N` is read as `parseInt` reads N, then clamped to 0..=100; `auto` is
        // matched as written (found by review 38: `auto:5%` was auto at 10%, `AUTO` auto).
        let cases = [
            ("auto:5%", ToolSearchMode::Auto { percent: 5 }),
            ("auto:1.5", ToolSearchMode::Auto { percent: 1 }),
            ("auto: 7", ToolSearchMode::Auto { percent: 7 }),
            ("auto:+30", ToolSearchMode::Auto { percent: 30 }),
            ("auto:-1", ToolSearchMode::Always),
            ("auto:250", ToolSearchMode::Off),
            ("auto:99999999999999999999999", ToolSearchMode::Off),
            ("auto:", ToolSearchMode::Auto { percent: 10 }),
            ("auto:x5", ToolSearchMode::Auto { percent: 10 }),
            ("AUTO", ToolSearchMode::Always),
            (" auto", ToolSearchMode::Always),
            ("AUTO:100", ToolSearchMode::Always),
        ];
        for (value, mode) in cases {
            assert_eq!(m(Some(value), None, api), mode, "{value}");
        }
        // An empty value reads as unset (`!process.env.ENABLE_TOOL_SEARCH`).
        assert_eq!(m(Some(""), None, api), ToolSearchMode::Always);
        assert_eq!(m(Some(""), None, proxy), ToolSearchMode::Off);
        assert!(is_anthropic_host("https://eu.api.anthropic.com:443/x"));
        assert!(!is_anthropic_host("https://anthropic.com.evil.example"));
    }

    #[test]
    fn discovered_tools_come_from_tool_references_in_results() {
        let messages = vec![
            json!({"role": "user", "content": "go"}),
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [
                {"type": "tool_reference", "tool_name": "TodoWrite"}]}]}),
            json!({"role": "assistant", "content": [{"type": "text", "text": "tool_reference WebFetch"}]}),
        ];
        let found = discovered_tools(&messages);
        assert_eq!(found, HashSet::from(["TodoWrite".to_owned()]));
    }

    #[test]
    fn stale_tool_references_are_left_out_of_requests() {
        let result = |id: &str, names: &[&str]| {
            let content: Vec<Value> = names
                .iter()
                .map(|n| json!({"type": "tool_reference", "tool_name": n}))
                .collect();
            json!({"type": "tool_result", "tool_use_id": id, "content": content})
        };
        let messages = vec![
            json!({"role": "user", "content": "go"}),
            json!({"role": "user", "content": [
                result("t1", &["mcp__a__one", "mcp__a__two"]),
                result("t2", &["mcp__a__two"]),
                {"type": "text", "text": "note"}]}),
        ];
        let plan = |tool_search: bool, names: &[&str]| ToolsForRequest {
            tools: names.iter().map(|n| json!({"name": n})).collect(),
            announcement: None,
            betas: Vec::new(),
            withheld: HashSet::new(),
            tool_search,
        };
        // Every reference still defined: the messages as they are.
        assert_eq!(
            without_stale_tool_references(&messages, &plan(true, &["mcp__a__one", "mcp__a__two"])),
            messages
        );
        // `two` is gone: its references go; a result left empty says why.
        let out = without_stale_tool_references(&messages, &plan(true, &["mcp__a__one"]));
        assert_eq!(
            out[1]["content"][0]["content"],
            json!([{"type": "tool_reference", "tool_name": "mcp__a__one"}])
        );
        assert_eq!(
            out[1]["content"][1]["content"],
            json!([{"type": "text", "text": REFERENCES_REMOVED_TOOLS_GONE}])
        );
        assert_eq!(
            out[1]["content"][2],
            json!({"type": "text", "text": "note"})
        );
        assert_eq!(out[0], messages[0]);
        // Tool search off: none is left, though the tools are defined.
        let out =
            without_stale_tool_references(&messages, &plan(false, &["mcp__a__one", "mcp__a__two"]));
        for result in out[1]["content"].as_array().unwrap().iter().take(2) {
            assert_eq!(
                result["content"],
                json!([{"type": "text", "text": REFERENCES_REMOVED_SEARCH_OFF}])
            );
        }
    }

    #[test]
    fn the_announcement_leads_the_first_user_message() {
        let messages = vec![json!({"role": "user", "content": "hello"})];
        let out = with_announcement(
            &messages,
            Some("<available-deferred-tools>\nX\n</available-deferred-tools>"),
        );
        assert_eq!(
            out[0]["content"][0]["text"],
            "<available-deferred-tools>\nX\n</available-deferred-tools>"
        );
        assert_eq!(out[0]["content"][1]["text"], "hello");
        assert_eq!(with_announcement(&messages, None), messages);
    }
}
