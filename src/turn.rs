//! Reading a recorded model turn: the raw SSE text of the Messages API streaming format, or
//! JSONL with one tool_use block a line (optionally with `at_ms` for pacing).
//!
//! Both become a list of [`TurnItem`]s, each with the time (from the start of the turn) at
//! which it became available, so a replay can hand blocks to the executor the way a live
//! stream would.

use std::time::Duration;

use serde_json::Value;
use tool_exec::{AnthropicStream, StreamError, StreamEvent, ToolUse};

/// One thing the model produced, and when.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnItem {
    /// Text for the user.
    Text(String),
    /// A complete tool_use block.
    ToolUse(ToolUse),
}

/// A parsed turn: items with their arrival offsets, and where parsing stopped if the input
/// was bad (everything before it is kept).
#[derive(Debug, Default)]
pub struct Turn {
    /// `(arrival offset, item)`, in order.
    pub items: Vec<(Duration, TurnItem)>,
    /// When the model's response ended.
    pub end: Duration,
    /// The first problem found, with its line number.
    pub error: Option<String>,
}

#[cfg(test)]
impl Turn {
    /// The tool_use blocks, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = &ToolUse> {
        self.items.iter().filter_map(|(_, item)| match item {
            TurnItem::ToolUse(t) => Some(t),
            TurnItem::Text(_) => None,
        })
    }
}

/// Whether `text` is in the SSE format (its first non-empty line is an SSE field).
pub fn looks_like_sse(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with("event:") || l.starts_with("data:") || l.starts_with(':'))
}

/// Parses a turn in either format. `per_delta` paces SSE input: each `content_block_delta`
/// event is taken to arrive that long after the previous event (a model's token rate).
pub fn parse(text: &str, per_delta: Duration) -> Turn {
    if looks_like_sse(text) {
        parse_sse(text, per_delta)
    } else {
        parse_jsonl(text)
    }
}

fn parse_sse(text: &str, per_delta: Duration) -> Turn {
    let mut parser = AnthropicStream::new();
    let mut turn = Turn::default();
    let mut now = Duration::ZERO;
    // Feed event by event so that each completed block gets the time it would arrive at.
    for chunk in text.split_inclusive("\n\n") {
        if chunk.contains("content_block_delta") {
            now += per_delta;
        }
        match parser.feed(chunk) {
            Ok(events) => push_events(&mut turn, now, events),
            Err(e) => {
                turn.error = Some(e.to_string());
                turn.end = now;
                return turn;
            }
        }
    }
    match parser.finish() {
        Ok(events) => push_events(&mut turn, now, events),
        Err(StreamError::Truncated) => turn.error = Some(StreamError::Truncated.to_string()),
        Err(e) => turn.error = Some(e.to_string()),
    }
    turn.end = now;
    turn
}

fn push_events(turn: &mut Turn, now: Duration, events: Vec<StreamEvent>) {
    for event in events {
        match event {
            StreamEvent::Text(t) => match turn.items.last_mut() {
                Some((_, TurnItem::Text(prev))) => prev.push_str(&t),
                _ => turn.items.push((now, TurnItem::Text(t))),
            },
            StreamEvent::ToolUse(t) => turn.items.push((now, TurnItem::ToolUse(t))),
            StreamEvent::MessageStart { .. }
            | StreamEvent::StopReason(_)
            | StreamEvent::Usage { .. }
            | StreamEvent::MessageStop => {}
        }
    }
}

fn parse_jsonl(text: &str) -> Turn {
    let mut turn = Turn::default();
    let mut last = Duration::ZERO;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let fail = |why: String| format!("line {}: {why}", i + 1);
        let value: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                turn.error = Some(fail(format!("not valid JSON: {e}")));
                break;
            }
        };
        let at = value
            .get("at_ms")
            .and_then(Value::as_u64)
            .map_or(last, Duration::from_millis);
        last = last.max(at);
        match value.get("type").and_then(Value::as_str) {
            Some("tool_use") => {
                let (Some(id), Some(name)) = (value["id"].as_str(), value["name"].as_str()) else {
                    turn.error = Some(fail("a tool_use needs string `id` and `name`".into()));
                    break;
                };
                let input = value
                    .get("input")
                    .cloned()
                    .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
                turn.items
                    .push((at, TurnItem::ToolUse(ToolUse::new(id, name, input))));
            }
            Some("text") => turn.items.push((
                at,
                TurnItem::Text(value["text"].as_str().unwrap_or_default().to_owned()),
            )),
            other => {
                turn.error = Some(fail(format!(
                    "expected {{\"type\":\"tool_use\",...}} or {{\"type\":\"text\",...}}, found type {}",
                    other.map_or_else(|| "none".to_owned(), |t| format!("`{t}`"))
                )));
                break;
            }
        }
    }
    turn.end = last;
    turn
}

/// Replaces `from` with `to` in every string of `value` (the demo's `{{ROOT}}` placeholder).
pub fn replace_in_strings(value: &mut Value, from: &str, to: &str) {
    match value {
        Value::String(s) if s.contains(from) => *s = s.replace(from, to),
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| replace_in_strings(v, from, to)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|v| replace_in_strings(v, from, to)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jsonl_with_pacing_and_errors() {
        let text = "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Read\",\"input\":{\"file_path\":\"/a\"},\"at_ms\":5}\n\n\
                    {\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"Glob\",\"input\":{\"pattern\":\"*\"}}\n\
                    {oops\n\
                    {\"type\":\"tool_use\",\"id\":\"t3\",\"name\":\"Glob\"}\n";
        let turn = parse(text, Duration::ZERO);
        let ids: Vec<&str> = turn.tool_uses().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["t1", "t2"]);
        assert_eq!(turn.items[1].0, Duration::from_millis(5));
        assert!(
            turn.error
                .as_deref()
                .unwrap()
                .starts_with("line 4: not valid JSON"),
            "{:?}",
            turn.error
        );
    }

    #[test]
    fn sse_is_detected_and_paced() {
        let text = include_str!("demo/turn.sse");
        assert!(looks_like_sse(text));
        let turn = parse(text, Duration::from_millis(10));
        assert!(turn.error.is_none(), "{:?}", turn.error);
        assert_eq!(turn.tool_uses().count(), 9);
        let times: Vec<Duration> = turn.items.iter().map(|(t, _)| *t).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        // Each delta event is taken to arrive 10 ms after the previous one.
        let deltas = u32::try_from(text.matches("event: content_block_delta").count()).unwrap();
        assert_eq!(turn.end, Duration::from_millis(10) * deltas);
    }

    #[test]
    fn placeholders_are_replaced_everywhere() {
        let mut v = json!({"a": "{{ROOT}}/x", "b": ["{{ROOT}}"], "c": 1});
        replace_in_strings(&mut v, "{{ROOT}}", "/tmp/d");
        assert_eq!(v, json!({"a": "/tmp/d/x", "b": ["/tmp/d"], "c": 1}));
    }
}
