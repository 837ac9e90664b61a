//! Reading a recorded model turn: the raw SSE text of the Messages API streaming format, a
//! saved non-streaming response (one `{"type":"message",...}` document, compact or
//! pretty-printed), or JSONL with one tool_use block a line (optionally with `at_ms` for
//! pacing). A leading UTF-8 byte order mark is ignored.
//!
//! All become a list of [`TurnItem`]s, each with the time (from the start of the turn) at
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

impl Turn {
    /// The tool_use blocks, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = &ToolUse> {
        self.items.iter().filter_map(|(_, item)| match item {
            TurnItem::ToolUse(t) => Some(t),
            TurnItem::Text(_) => None,
        })
    }
}

/// Whether `text` is in the SSE format (its first non-empty line is an SSE field; a leading
/// byte order mark does not count).
pub fn looks_like_sse(text: &str) -> bool {
    tool_core::without_bom(text)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .is_some_and(|l| {
            ["event:", "data:", "id:", "retry:", ":"]
                .iter()
                .any(|field| l.starts_with(field))
        })
}

/// Parses a turn in any of the formats. `per_delta` paces SSE input: each
/// `content_block_delta` event is taken to arrive that long after the previous event (a
/// model's token rate). A non-streaming response has no timing: its blocks all arrive at 0.
pub fn parse(text: &str, per_delta: Duration) -> Turn {
    let text = tool_core::without_bom(text);
    if looks_like_sse(text) {
        return parse_sse(text, per_delta);
    }
    match whole_message(text) {
        Some(message) => parse_message(&message),
        None => parse_jsonl(text),
    }
}

/// `text` as one non-streaming Messages API response (`{"type":"message",...}`), if it is
/// one JSON document of that type.
fn whole_message(text: &str) -> Option<Value> {
    let text = text.trim_start();
    if !text.starts_with('{') {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    (value.get("type").and_then(Value::as_str) == Some("message")).then_some(value)
}

/// The text and tool_use blocks of a non-streaming response's `content`, in order. Other
/// blocks (thinking, server tool calls and their results) are not the client's to run.
fn parse_message(message: &Value) -> Turn {
    let mut turn = Turn::default();
    let Some(blocks) = message.get("content").and_then(Value::as_array) else {
        turn.error = Some("a `message` needs a `content` array of blocks".into());
        return turn;
    };
    for (i, block) in blocks.iter().enumerate() {
        match block.get("type").and_then(Value::as_str) {
            Some("tool_use") => match tool_use(block) {
                Some(t) => turn.items.push((Duration::ZERO, TurnItem::ToolUse(t))),
                None => {
                    turn.error = Some(format!(
                        "content block {i}: a tool_use needs string `id` and `name`"
                    ));
                    break;
                }
            },
            Some("text") => {
                let text = block["text"].as_str().unwrap_or_default();
                match turn.items.last_mut() {
                    Some((_, TurnItem::Text(prev))) => prev.push_str(text),
                    _ => turn
                        .items
                        .push((Duration::ZERO, TurnItem::Text(text.to_owned()))),
                }
            }
            _ => {}
        }
    }
    turn
}

/// A `{"type":"tool_use","id":...,"name":...,"input":...}` block (no input: `{}`).
fn tool_use(block: &Value) -> Option<ToolUse> {
    let (id, name) = (block["id"].as_str()?, block["name"].as_str()?);
    let input = block
        .get("input")
        .cloned()
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    Some(ToolUse::new(id, name, input))
}

fn parse_sse(text: &str, per_delta: Duration) -> Turn {
    let mut parser = AnthropicStream::new();
    let mut turn = Turn::default();
    let mut now = Duration::ZERO;
    let mut stopped = false;
    // Feed event by event so that each completed block gets the time it would arrive at.
    for chunk in text.split_inclusive("\n\n") {
        if stopped {
            // A response ends at `message_stop`: events after it (a second message pasted
            // on) are not this turn's, and are said to be left out, not dropped silently.
            let more = chunk.lines().any(|l| {
                let l = l.trim_start();
                (l.starts_with("data:") || l.starts_with("event:")) && !l.contains("ping")
            });
            if more {
                turn.error = Some(
                    "the stream goes on after `message_stop` (a second message?): what follows it was not read"
                        .into(),
                );
                break;
            }
            continue;
        }
        if chunk.contains("content_block_delta") {
            now += per_delta;
        }
        match parser.feed(chunk) {
            Ok(events) => {
                stopped = events.iter().any(|e| matches!(e, StreamEvent::MessageStop));
                push_events(&mut turn, now, events);
            }
            Err(e) => {
                turn.error = Some(e.to_string());
                turn.end = now;
                return turn;
            }
        }
    }
    if turn.error.is_some() {
        turn.end = now;
        return turn;
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
                let Some(tool_use) = tool_use(&value) else {
                    turn.error = Some(fail("a tool_use needs string `id` and `name`".into()));
                    break;
                };
                turn.items.push((at, TurnItem::ToolUse(tool_use)));
            }
            Some("text") => turn.items.push((
                at,
                TurnItem::Text(value["text"].as_str().unwrap_or_default().to_owned()),
            )),
            other => {
                let found = match (other, &value) {
                    (Some(t), _) => format!("found type `{t}`"),
                    (None, Value::Array(_)) => {
                        "found a JSON array (give one block per line)".to_owned()
                    }
                    (None, Value::Object(_)) => "found an object without a `type`".to_owned(),
                    (None, _) => "found a JSON value that is not an object".to_owned(),
                };
                turn.error = Some(fail(format!(
                    "expected {{\"type\":\"tool_use\",...}} or {{\"type\":\"text\",...}}, {found}"
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

    /// A line that is JSON but no block says what it found.
    #[test]
    fn a_line_that_is_no_block_says_what_it_is() {
        for (line, found) in [
            (r#"[{"type":"text","text":"x"}]"#, "found a JSON array"),
            (
                r#"{"role":"assistant","content":[]}"#,
                "an object without a `type`",
            ),
            ("42", "not an object"),
            (r#"{"type":"image"}"#, "found type `image`"),
        ] {
            let turn = parse(&format!("{line}\n"), Duration::ZERO);
            let error = turn.error.unwrap_or_default();
            assert!(
                error.starts_with("line 1: expected") && error.contains(found),
                "{line}: {error}"
            );
        }
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
    fn a_bom_does_not_hide_the_sse_format() {
        let text = format!("\u{feff}{}", include_str!("demo/turn.sse"));
        assert!(looks_like_sse(&text));
        let turn = parse(&text, Duration::ZERO);
        assert!(turn.error.is_none(), "{:?}", turn.error);
        assert_eq!(turn.tool_uses().count(), 9);
    }

    /// A stream may open with any SSE field: `id:` and `retry:` too (the parser ignores
    /// them), not only `event:`, `data:` or a comment.
    #[test]
    fn a_stream_opening_with_id_or_retry_is_sse() {
        for lead in ["id: 5\n", "retry: 100\n", "id: 5\nretry: 100\n"] {
            let text = format!("{lead}{}", include_str!("demo/turn.sse"));
            assert!(looks_like_sse(&text), "{lead:?}");
            let turn = parse(&text, Duration::ZERO);
            assert!(turn.error.is_none(), "{lead:?}: {:?}", turn.error);
            assert_eq!(turn.tool_uses().count(), 9);
        }
    }

    /// What comes after `message_stop` (a second message pasted on) is not run, and the
    /// turn says so instead of ending as if nothing followed.
    #[test]
    fn events_after_message_stop_are_reported() {
        let one = include_str!("demo/turn.sse");
        let text = format!("{one}\n{one}");
        let turn = parse(&text, Duration::ZERO);
        assert_eq!(turn.tool_uses().count(), 9);
        let error = turn.error.unwrap_or_default();
        assert!(error.contains("after `message_stop`"), "{error}");
        // Pings after the end are no second message.
        let turn = parse(
            &format!("{one}\nevent: ping\ndata: {{\"type\": \"ping\"}}\n\n"),
            Duration::ZERO,
        );
        assert!(turn.error.is_none(), "{:?}", turn.error);
    }

    #[test]
    fn a_non_streaming_message_is_a_turn() {
        let message = json!({
            "id": "msg_1", "type": "message", "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}},
                {"type": "tool_use", "id": "t2", "name": "Glob"},
            ],
            "stop_reason": "tool_use",
        });
        for text in [
            message.to_string(),
            format!(
                "\u{feff}{}\n",
                serde_json::to_string_pretty(&message).unwrap()
            ),
        ] {
            let turn = parse(&text, Duration::from_millis(10));
            assert!(turn.error.is_none(), "{:?}", turn.error);
            assert_eq!(turn.items[0].1, TurnItem::Text("Looking.".into()));
            let uses: Vec<&ToolUse> = turn.tool_uses().collect();
            assert_eq!(uses.len(), 2);
            assert_eq!(uses[0].input, json!({"file_path": "/a"}));
            assert_eq!(uses[1].input, json!({}));
        }
        let broken = json!({"type": "message", "content": [
            {"type": "tool_use", "id": "t1", "name": "Glob", "input": {}},
            {"type": "tool_use", "name": "Glob"},
        ]});
        let turn = parse(&broken.to_string(), Duration::ZERO);
        assert_eq!(turn.tool_uses().count(), 1);
        assert!(
            turn.error
                .as_deref()
                .unwrap()
                .starts_with("content block 1:"),
            "{:?}",
            turn.error
        );
    }

    #[test]
    fn placeholders_are_replaced_everywhere() {
        let mut v = json!({"a": "{{ROOT}}/x", "b": ["{{ROOT}}"], "c": 1});
        replace_in_strings(&mut v, "{{ROOT}}", "/tmp/d");
        assert_eq!(v, json!({"a": "/tmp/d/x", "b": ["/tmp/d"], "c": 1}));
    }
}
