//! Reading a model turn: the raw SSE text of the Messages API streaming format, a saved
//! non-streaming response (one `{"type":"message",...}` document, compact or
//! pretty-printed), or JSONL with one tool_use block a line (optionally with `at_ms` for
//! pacing). A leading UTF-8 byte order mark is ignored.
//!
//! All become [`TurnItem`]s, each with the time (from the start of the turn) at which it
//! became available, so a replay can hand blocks to the executor the way a live stream
//! would. [`TurnParser`] reads the text as it arrives (a live stream on standard input) and
//! hands out each item once it is complete; [`parse`] reads a whole recorded turn.

use std::time::Duration;

use serde_json::Value;
use tool_exec::stream::ToolUseIds;
use tool_exec::{AnthropicStream, StreamEvent, ToolUse};

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
    /// Why the model stopped (`tool_use`, `end_turn`, `max_tokens`, …), if the response
    /// said.
    pub stop_reason: Option<String>,
    /// The output tokens the response reported, if it did.
    pub output_tokens: Option<u64>,
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

/// Whether `kind` is the type of a block a response's `content` may hold that is not the
/// client's to run or show: the model's thinking (`thinking`, `redacted_thinking`), and the
/// calls of server tools and their results (`server_tool_use`, `mcp_tool_use`,
/// `web_search_tool_result` and the other `..._tool_result` blocks, `container_upload`).
/// A non-streaming response's `content` skips every block but text and tool_use; a JSONL
/// line skips these, and says what any other type is (an API error, a whole response).
fn skipped_block(kind: &str) -> bool {
    matches!(
        kind,
        "thinking"
            | "redacted_thinking"
            | "server_tool_use"
            | "mcp_tool_use"
            | "mcp_tool_result"
            | "container_upload"
    ) || kind.ends_with("_tool_result")
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

/// Parses a whole turn in any of the formats. `per_delta` paces SSE input: each
/// `content_block_delta` event is taken to arrive that long after the previous event (a
/// model's token rate). A non-streaming response has no timing: its blocks all arrive at 0.
pub fn parse(text: &str, per_delta: Duration) -> Turn {
    let mut parser = TurnParser::new(per_delta);
    let mut items = parser.feed(text);
    let mut turn = parser.finish();
    items.append(&mut turn.items);
    turn.items = items;
    turn
}

/// An incremental reader of a turn: text goes in as it arrives, split anywhere, and each
/// item comes out as soon as it is complete (an SSE block at its `content_block_stop`, a
/// JSONL line at its newline), so that a live stream's blocks can run while the rest of the
/// response is still coming. The format is decided by the first non-empty line. A
/// non-streaming response (one JSON document) is only complete at the end of the input.
///
/// After the first problem no more items come out; [`TurnParser::error`] says what it was.
#[derive(Debug, Default)]
pub struct TurnParser {
    format: Format,
    /// Text received and not yet read.
    pending: String,
    /// How much of `pending` is known to hold no end of the unit it starts (a line, an
    /// event): the next search starts there, so a long line or event arriving in small
    /// pieces is searched once, not once per piece.
    scanned: usize,
    /// See [`parse`].
    per_delta: Duration,
    /// The SSE text deltas not yet handed out, with the time of the first: one item up to
    /// the next block or the end, as the model wrote it.
    text: Option<(Duration, String)>,
    error: Option<String>,
    /// When the last event arrived, in the recorded timing.
    now: Duration,
    /// See [`Turn::stop_reason`].
    stop_reason: Option<String>,
    /// See [`Turn::output_tokens`].
    output_tokens: Option<u64>,
    /// Line ends read as LF (a CR alone too, as SSE reads it), across the pieces.
    line_ends: tool_exec::LineEnds,
    /// Whether anything but white space (and a byte order mark) came in: an input without
    /// is no response (a request that failed before its first byte), not a turn without
    /// calls.
    saw_text: bool,
    /// The tool_use ids of a JSONL turn or a non-streaming response so far: an id comes
    /// once, as in the SSE form (whose parser keeps its own).
    tool_use_ids: ToolUseIds,
}

#[derive(Debug, Default)]
enum Format {
    /// Nothing but blank lines yet, or a first line still incomplete.
    #[default]
    Undecided,
    Sse {
        parser: Box<AnthropicStream>,
        /// `message_stop` was read: what follows is not this turn's.
        stopped: bool,
    },
    Jsonl {
        /// Lines read so far, for error messages.
        line_no: usize,
        /// Blocks read so far: the number of the next one, as a response's `content`
        /// would have it.
        blocks: u64,
    },
    /// A non-streaming response (or input that is neither SSE nor JSONL from its first
    /// line): read when the input ends.
    Whole,
}

impl TurnParser {
    /// A parser at the start of a turn; `per_delta` as for [`parse`].
    pub fn new(per_delta: Duration) -> Self {
        Self {
            per_delta,
            ..Self::default()
        }
    }

    /// The first problem found, if any: nothing after it is read.
    pub fn error(&self) -> Option<&str> {
        self.error.as_deref()
    }

    /// Whether the response is over: an SSE stream read to its `message_stop`. A live
    /// reader stops there (a gateway may keep the connection open).
    pub fn is_complete(&self) -> bool {
        matches!(self.format, Format::Sse { stopped: true, .. })
    }

    /// Reads the next piece of the input; returns the items it completed, in order.
    pub fn feed(&mut self, chunk: &str) -> Vec<(Duration, TurnItem)> {
        let mut out = Vec::new();
        if self.error.is_some() {
            return out;
        }
        let chunk = self.line_ends.as_lf(chunk);
        let chunk = chunk.as_ref();
        let chunk = if matches!(self.format, Format::Undecided) && self.pending.is_empty() {
            tool_core::without_bom(chunk)
        } else {
            chunk
        };
        if !self.saw_text {
            self.saw_text = !chunk.trim().is_empty();
        }
        self.pending.push_str(chunk);
        self.advance(&mut out, false);
        out
    }

    /// Ends the input: hands out what is left, and the turn's end time and first problem
    /// (the items are only those not handed out by [`TurnParser::feed`]).
    pub fn finish(mut self) -> Turn {
        let mut items = Vec::new();
        if self.error.is_none() && !self.saw_text {
            self.error = Some("it is empty (no model response was read)".to_owned());
        }
        if self.error.is_none() {
            self.advance(&mut items, true);
        }
        if self.error.is_none()
            && let Format::Sse { parser, .. } = &mut self.format
        {
            match parser.finish() {
                Ok(events) => self.push_events(&mut items, events),
                Err(e) => self.error = Some(e.to_string()),
            }
        }
        self.flush_text(&mut items);
        Turn {
            items,
            end: self.now,
            error: self.error,
            stop_reason: self.stop_reason,
            output_tokens: self.output_tokens,
        }
    }
}

impl TurnParser {
    /// Reads what `pending` holds complete (all of it when `at_end`), deciding the format
    /// first if it is still open.
    fn advance(&mut self, out: &mut Vec<(Duration, TurnItem)>, at_end: bool) {
        if matches!(self.format, Format::Undecided) {
            match self.decide(at_end) {
                Some(format) => {
                    self.format = format;
                    // The format's own search starts afresh (what `decide` passed over may
                    // hold blank lines, which JSONL counts).
                    self.scanned = 0;
                }
                None => return,
            }
        }
        let pending = std::mem::take(&mut self.pending);
        // Where the search for the first unit's end resumes: a blank line ending an event
        // may have begun up to two bytes before.
        let mut resume = self.scanned.saturating_sub(2);
        while !pending.is_char_boundary(resume) {
            resume -= 1;
        }
        let mut read = 0;
        match self.format {
            Format::Sse { .. } => {
                while self.error.is_none() {
                    let Some(len) = event_len(&pending[read..], resume, at_end) else {
                        break;
                    };
                    self.sse_event(&pending[read..read + len], out);
                    read += len;
                    resume = 0;
                }
            }
            Format::Jsonl { .. } => read = self.jsonl_lines(&pending, resume, at_end, out),
            Format::Whole if at_end => {
                read = pending.len();
                let document = pending.trim_start();
                // Read as `JSON.parse` reads it (a lone surrogate's escape is U+FFFD); the text
                // keeps its length, so what follows the response is found at the same place.
                let repaired = tool_core::input::lone_surrogates_replaced(document);
                let document = repaired.as_deref().unwrap_or(document);
                let mut values = serde_json::Deserializer::from_str(document).into_iter::<Value>();
                let first = values.next();
                let rest = &document[values.byte_offset()..];
                match first {
                    // A response, and perhaps more after it (a second document pasted on):
                    // the response's blocks run, and what follows is said to be left out.
                    Some(Ok(message)) if message["type"] == "message" => {
                        self.message(&message, out);
                        let more = rest.trim_start();
                        if self.error.is_none() && !more.is_empty() {
                            let at = pending.len() - more.len();
                            self.error = Some(format!(
                                "line {}: the response is followed by more (a second document?): what follows it was not read",
                                pending[..at].matches('\n').count() + 1
                            ));
                        }
                    }
                    // One JSON document over several lines, but no response: say what it
                    // is (an API error, kept as the body of a failed request, most likely).
                    // One on a single line is read as a JSONL line, which says the same.
                    Some(Ok(other)) if rest.trim().is_empty() && pending.trim().contains('\n') => {
                        self.error = Some(format!(
                            "expected a response ({{\"type\":\"message\",...}}), SSE events or JSONL blocks, {}",
                            found_instead(&other, FoundIn::Input)
                        ));
                    }
                    _ => {
                        self.format = Format::Jsonl {
                            line_no: 0,
                            blocks: 0,
                        };
                        self.jsonl_lines(&pending, 0, true, out);
                    }
                }
            }
            Format::Undecided | Format::Whole => {}
        }
        if self.error.is_none() {
            self.pending = pending;
            self.pending.drain(..read);
            // What is left was searched to its end.
            self.scanned = self.pending.len();
        }
    }

    /// The format, from the first non-empty line once it is complete (or at the end).
    fn decide(&mut self, at_end: bool) -> Option<Format> {
        let pending = self.pending.as_str();
        let mut start = 0;
        let first = loop {
            // The newlines before `scanned` end blank lines at most: a line with text in it
            // would have been decided on.
            let from = start.max(self.scanned);
            match pending[from..].find('\n').map(|i| from + i) {
                Some(end) if pending[start..end].trim().is_empty() => start = end + 1,
                Some(end) => break &pending[start..end],
                None if at_end => break &pending[start..],
                None => {
                    self.scanned = pending.len();
                    return None;
                }
            }
        };
        // `curl -i` output: the body follows the response's headers.
        if first.starts_with("HTTP/") {
            self.error = Some(format!(
                "line 1 is an HTTP status line (`{}`): give the response body only (curl without -i or -D -)",
                first.trim()
            ));
            return None;
        }
        if looks_like_sse(first) {
            return Some(Format::Sse {
                parser: Box::new(AnthropicStream::new()),
                stopped: false,
            });
        }
        // JSONL only when its first line is a block: a document spread over lines (a
        // pretty-printed response) or a whole response on one line is read at the end.
        let block = tool_core::input::parse_model_json(first.trim()).is_ok_and(|v| {
            v.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| matches!(t, "tool_use" | "text") || skipped_block(t))
        });
        Some(if block || first.trim().is_empty() {
            Format::Jsonl {
                line_no: 0,
                blocks: 0,
            }
        } else {
            Format::Whole
        })
    }

    /// One SSE event (its text up to and including the blank line that ends it).
    fn sse_event(&mut self, event: &str, out: &mut Vec<(Duration, TurnItem)>) {
        let Format::Sse { parser, stopped } = &mut self.format else {
            return;
        };
        if *stopped {
            // A response ends at `message_stop`: events after it (a second message pasted
            // on) are not this turn's, and are said to be left out, not dropped silently.
            // Pings, and the `data: [DONE]` some gateways send at the end, are no message.
            let more = event.lines().any(|l| {
                let l = l.trim_start();
                let done = l
                    .strip_prefix("data:")
                    .is_some_and(|d| d.trim() == "[DONE]");
                (l.starts_with("data:") || l.starts_with("event:")) && !l.contains("ping") && !done
            });
            if more {
                self.error = Some(
                    "the stream goes on after `message_stop` (a second message?): what follows it was not read"
                        .into(),
                );
            }
            return;
        }
        if event.contains("content_block_delta") {
            self.now += self.per_delta;
        }
        match parser.feed(event) {
            Ok(events) => {
                *stopped = events.iter().any(|e| matches!(e, StreamEvent::MessageStop));
                self.push_events(out, events);
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    fn push_events(&mut self, out: &mut Vec<(Duration, TurnItem)>, events: Vec<StreamEvent>) {
        for event in events {
            match event {
                StreamEvent::Text(t) => match &mut self.text {
                    Some((_, text)) => text.push_str(&t),
                    None => self.text = Some((self.now, t)),
                },
                // Each text block is an item of its own, as the model wrote it.
                StreamEvent::NextTextBlock => self.flush_text(out),
                StreamEvent::ToolUse(t) => {
                    self.flush_text(out);
                    out.push((self.now, TurnItem::ToolUse(t)));
                }
                StreamEvent::StopReason(reason) => self.stop_reason = Some(reason),
                StreamEvent::Usage { output_tokens, .. } if output_tokens > 0 => {
                    self.output_tokens = Some(output_tokens);
                }
                StreamEvent::MessageStart { .. }
                | StreamEvent::Usage { .. }
                | StreamEvent::MessageStop => {}
            }
        }
    }

    /// Hands out the text block read so far; one of white space only (a "\n\n" before a
    /// call) is nothing to show.
    fn flush_text(&mut self, out: &mut Vec<(Duration, TurnItem)>) {
        if let Some((at, text)) = self.text.take()
            && !text.trim().is_empty()
        {
            out.push((at, TurnItem::Text(text)));
        }
    }

    /// Reads the complete lines of `text` (all of it when `at_end`) as JSONL, the first
    /// line's end searched from `resume`; returns how many bytes it read.
    fn jsonl_lines(
        &mut self,
        text: &str,
        mut resume: usize,
        at_end: bool,
        out: &mut Vec<(Duration, TurnItem)>,
    ) -> usize {
        let mut read = 0;
        while self.error.is_none() && read < text.len() {
            let rest = &text[read..];
            let line = match rest[resume..].find('\n') {
                Some(i) => &rest[..=resume + i],
                None if at_end => rest,
                None => break,
            };
            read += line.len();
            resume = 0;
            self.jsonl_line(line, out);
        }
        read
    }

    fn jsonl_line(&mut self, line: &str, out: &mut Vec<(Duration, TurnItem)>) {
        let Format::Jsonl { line_no, blocks } = &mut self.format else {
            return;
        };
        *line_no += 1;
        let line_no = *line_no;
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let block = *blocks;
        *blocks += 1;
        let fail = |why: String| Some(format!("line {line_no}: {why}"));
        let value: Value = match tool_core::input::parse_model_json(line) {
            Ok(v) => v,
            Err(e) => {
                self.error = fail(format!("not valid JSON: {e}"));
                return;
            }
        };
        let at = value
            .get("at_ms")
            .and_then(Value::as_u64)
            .map_or(self.now, Duration::from_millis);
        self.now = self.now.max(at);
        match value.get("type").and_then(Value::as_str) {
            Some("tool_use") => match tool_use(&value) {
                // Said as the SSE form says it: this call never runs, those before it do.
                Some(tool_use) => {
                    match self.tool_use_ids.add(block, &tool_use.id, &tool_use.name) {
                        Ok(()) => out.push((at, TurnItem::ToolUse(tool_use))),
                        Err(e) => self.error = fail(e.to_string()),
                    }
                }
                None => self.error = fail("a tool_use needs string `id` and `name`".into()),
            },
            Some("text") => out.push((
                at,
                TurnItem::Text(value["text"].as_str().unwrap_or_default().to_owned()),
            )),
            // As in a response's `content`: the model's thinking, a server tool's work.
            Some(kind) if skipped_block(kind) => {}
            _ => {
                self.error = fail(format!(
                    "expected {{\"type\":\"tool_use\",...}} or {{\"type\":\"text\",...}}, {}",
                    found_instead(&value, FoundIn::Input)
                ));
            }
        }
    }

    /// The text and tool_use blocks of a non-streaming response's `content`, in order, all
    /// at 0 (it has no timing). Other blocks (thinking, server tool calls and their
    /// results) are not the client's to run.
    fn message(&mut self, message: &Value, out: &mut Vec<(Duration, TurnItem)>) {
        self.stop_reason = message["stop_reason"].as_str().map(str::to_owned);
        self.output_tokens = message["usage"]["output_tokens"].as_u64();
        let Some(blocks) = message.get("content").and_then(Value::as_array) else {
            self.error = Some("a `message` needs a `content` array of blocks".into());
            return;
        };
        for (i, block) in blocks.iter().enumerate() {
            match block.get("type").and_then(Value::as_str) {
                Some("tool_use") => match tool_use(block) {
                    Some(t) => {
                        // Said as the SSE form says it, with the same block numbers: this
                        // call never runs, those before it do.
                        if let Err(e) = self.tool_use_ids.add(i as u64, &t.id, &t.name) {
                            self.error = Some(e.to_string());
                            return;
                        }
                        self.flush_text(out);
                        out.push((Duration::ZERO, TurnItem::ToolUse(t)));
                    }
                    None => {
                        self.error = Some(format!(
                            "content block {i}: a tool_use needs string `id` and `name`"
                        ));
                        return;
                    }
                },
                Some("text") => {
                    // A block each, as the model wrote them.
                    self.flush_text(out);
                    let text = block["text"].as_str().unwrap_or_default();
                    self.text = Some((Duration::ZERO, text.to_owned()));
                }
                Some(_) => {}
                // No block at all (a string, an array, an object without a string `type`):
                // the response is malformed there, as at a tool_use without a name.
                None => {
                    self.error = Some(format!(
                        "content block {i}: expected a content block ({{\"type\":...}}), {}",
                        found_instead(block, FoundIn::Content)
                    ));
                    return;
                }
            }
        }
    }
}

/// The length of the first complete SSE event in `text` (up to and including the blank
/// line that ends it; all of `text` when `at_end`), if there is one, searched from `from`.
fn event_len(text: &str, from: usize, at_end: bool) -> Option<usize> {
    let mut from = from;
    while let Some(i) = text[from..].find('\n') {
        let end = from + i + 1;
        let rest = &text[end..];
        if rest.starts_with('\n') {
            return Some(end + 1);
        }
        if rest.starts_with("\r\n") {
            return Some(end + 2);
        }
        from = end;
    }
    (at_end && !text.is_empty()).then_some(text.len())
}

/// Where a value that is no response or block was found: what to say of an array differs.
#[derive(Clone, Copy)]
enum FoundIn {
    /// A JSONL line or a whole document, where an array is most likely blocks that belong
    /// one per line.
    Input,
    /// An element of a response's `content`, which holds the blocks themselves.
    Content,
}

/// What `value`, where a response or a block was expected (`found_in`), is instead.
fn found_instead(value: &Value, found_in: FoundIn) -> String {
    match (value.get("type"), value) {
        (Some(Value::String(t)), _) if t == "error" => format!(
            "found an API error ({}: {})",
            value["error"]["type"].as_str().unwrap_or("unknown"),
            value["error"]["message"].as_str().unwrap_or("no message")
        ),
        (Some(Value::String(t)), _) => format!("found type `{t}`"),
        (Some(t), _) => {
            let t = t.to_string();
            let shown = if t.chars().count() > 40 {
                format!("{}…", t.chars().take(40).collect::<String>())
            } else {
                t
            };
            format!("found an object whose `type` is not a string ({shown})")
        }
        (None, Value::Array(_)) => match found_in {
            FoundIn::Input => "found a JSON array (give one block per line)".to_owned(),
            FoundIn::Content => {
                "found a JSON array, where a block must be an object (`content` holds the blocks themselves, not lists of them)".to_owned()
            }
        },
        (None, Value::Object(_)) => "found an object without a `type`".to_owned(),
        (None, _) => "found a JSON value that is not an object".to_owned(),
    }
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

    /// A line holding an escaped surrogate without its pair is read (U+FFFD in its place,
    /// as `JSON.parse` reads it), and the lines after it run: found by review, the run
    /// stopped there with "unexpected end of hex escape" and later blocks got no result.
    #[test]
    fn a_lone_surrogate_escape_is_no_malformed_line() {
        let text = "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Write\",\"input\":{\"content\":\"a\\ud800b\"}}\n\
                    {\"type\":\"tool_use\",\"id\":\"t2\",\"name\":\"Glob\",\"input\":{\"pattern\":\"*\"}}\n";
        let turn = parse(text, Duration::ZERO);
        assert_eq!(turn.error, None);
        let uses: Vec<_> = turn.tool_uses().collect();
        assert_eq!(uses.len(), 2);
        assert_eq!(uses[0].input, json!({"content": "a\u{fffd}b"}));
        // A whole response too.
        let whole = json!({"type": "message", "content": [
            {"type": "tool_use", "id": "t1", "name": "Write", "input": {"content": "PLACEHOLDER"}}
        ]})
        .to_string()
        .replace("PLACEHOLDER", "\\udc00");
        let turn = parse(&whole, Duration::ZERO);
        assert_eq!(turn.error, None);
        assert_eq!(
            turn.tool_uses().next().map(|t| t.input.clone()),
            Some(json!({"content": "\u{fffd}"}))
        );
    }

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

    /// `curl -i` output (the response's headers before its body) is said as what it is,
    /// not as a line that is no JSON (found by review), whether it is read whole or in
    /// pieces.
    #[test]
    fn http_headers_before_the_body_are_named() {
        let text =
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\nevent: message_start\n";
        let said = "line 1 is an HTTP status line (`HTTP/1.1 200 OK`): give the response body only";
        let turn = parse(text, Duration::ZERO);
        assert!(
            turn.error.as_deref().unwrap_or_default().starts_with(said),
            "{:?}",
            turn.error
        );
        let mut parser = TurnParser::new(Duration::ZERO);
        for piece in ["HTTP/2 2", "00\n", "x\n"] {
            assert!(parser.feed(piece).is_empty());
        }
        let turn = parser.finish();
        assert!(
            turn.error
                .as_deref()
                .unwrap_or_default()
                .starts_with("line 1 is an HTTP status line (`HTTP/2 200`)"),
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

    /// The turn read in pieces, split anywhere (a live stream), is the turn read whole:
    /// the same items, in order, and the same problem, in every format.
    #[test]
    fn a_turn_read_in_pieces_is_the_turn_read_whole() {
        let sse = include_str!("demo/turn.sse");
        let message = json!({"type": "message", "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}},
        ]});
        let inputs = [
            sse.to_owned(),
            format!("\u{feff}{sse}"),
            sse.replace('\n', "\r\n"),
            format!("{sse}\n{sse}"),
            sse[..sse.len() / 2].to_owned(),
            "\n{\"type\":\"text\",\"text\":\"é\"}\n{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Glob\",\"at_ms\":9}\n{oops}\n".to_owned(),
            "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Glob\"}".to_owned(),
            message.to_string(),
            serde_json::to_string_pretty(&message).unwrap(),
            "[1]\n".to_owned(),
            String::new(),
            format!("{message} {{\"x\":1}}"),
            "{\"type\":\"thinking\",\"thinking\":\"hm\"}\n{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Glob\"}\n".to_owned(),
            // A repeated id stops the input there, in every split.
            "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Glob\"}\n{\"type\":\"text\",\"text\":\"x\"}\n{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Glob\"}\n".to_owned(),
        ];
        for input in &inputs {
            let whole = parse(input, Duration::from_millis(3));
            assert!(
                !whole.items.is_empty() || whole.error.is_some() || input.is_empty(),
                "{input:?}"
            );
            for size in [1, 2, 5, 17, 64, 1000] {
                let mut parser = TurnParser::new(Duration::from_millis(3));
                let mut items = Vec::new();
                let chars: Vec<char> = input.chars().collect();
                for piece in chars.chunks(size) {
                    items.extend(parser.feed(&piece.iter().collect::<String>()));
                }
                let mut rest = parser.finish();
                items.append(&mut rest.items);
                assert_eq!(items, whole.items, "{input:?} in pieces of {size}");
                assert_eq!(rest.error, whole.error, "{input:?} in pieces of {size}");
                assert_eq!(rest.end, whole.end, "{input:?} in pieces of {size}");
            }
        }
    }

    /// Each block comes out as soon as it is complete, before the input ends: a JSONL line
    /// at its newline, an SSE block at its `content_block_stop`.
    #[test]
    fn blocks_come_out_as_they_complete() {
        let mut parser = TurnParser::new(Duration::ZERO);
        let line = "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Glob\"}";
        assert!(parser.feed(line).is_empty(), "no newline yet");
        let items = parser.feed("\n{\"type\":");
        assert!(matches!(&items[..], [(_, TurnItem::ToolUse(t))] if t.id == "t1"));

        let sse = include_str!("demo/turn.sse");
        let stop = "\"content_block_stop\", \"index\": 1}\n\n";
        let cut = sse.find(stop).unwrap() + stop.len();
        let mut parser = TurnParser::new(Duration::ZERO);
        assert!(
            parser.feed(&sse[..cut - 2]).is_empty(),
            "the stop event is not over"
        );
        let items = parser.feed(&sse[cut - 2..cut]);
        assert!(
            matches!(&items[..], [(_, TurnItem::Text(_)), (_, TurnItem::ToolUse(t))] if t.id == "toolu_01"),
            "{items:?}"
        );
        assert!(parser.error().is_none());
    }

    /// SSE lines may end with a CR alone (the SSE format allows it), JSONL lines too: read
    /// as LF, in any split (a CRLF split between two reads is one line end).
    #[test]
    fn a_lone_cr_ends_a_line() {
        let sse = include_str!("demo/turn.sse");
        let whole = parse(sse, Duration::ZERO);
        let jsonl = "{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Glob\"}\n{\"type\":\"text\",\"text\":\"x\"}\n";
        for (input, expected) in [
            (sse.replace('\n', "\r"), &whole.items),
            (sse.replace('\n', "\r\n"), &whole.items),
            (
                jsonl.replace('\n', "\r"),
                &parse(jsonl, Duration::ZERO).items,
            ),
        ] {
            for size in [1, 2, 3, 1000, usize::MAX] {
                let mut parser = TurnParser::new(Duration::ZERO);
                let mut items = Vec::new();
                let chars: Vec<char> = input.chars().collect();
                for piece in chars.chunks(size.min(chars.len())) {
                    items.extend(parser.feed(&piece.iter().collect::<String>()));
                }
                let mut rest = parser.finish();
                items.append(&mut rest.items);
                assert_eq!(rest.error, None, "pieces of {size}");
                assert_eq!(&items, expected, "pieces of {size}");
            }
        }
    }

    /// `data: [DONE]` after `message_stop` (some gateways end so) is no second message; the
    /// stream is complete at `message_stop`, and says why it stopped.
    #[test]
    fn a_stream_is_complete_at_message_stop() {
        let sse = include_str!("demo/turn.sse");
        let mut parser = TurnParser::new(Duration::ZERO);
        let stop = sse.find("event: message_stop").unwrap();
        parser.feed(&sse[..stop]);
        assert!(!parser.is_complete());
        parser.feed(&sse[stop..]);
        assert!(parser.is_complete());
        parser.feed("data: [DONE]\n\n");
        let turn = parser.finish();
        assert_eq!(turn.error, None);
        assert_eq!(turn.stop_reason.as_deref(), Some("tool_use"));
        assert!(turn.output_tokens.is_some_and(|n| n > 0), "{turn:?}");

        let message = json!({"type": "message", "content": [], "stop_reason": "max_tokens", "usage": {"output_tokens": 50}});
        let turn = parse(&message.to_string(), Duration::ZERO);
        assert_eq!(turn.stop_reason.as_deref(), Some("max_tokens"));
        assert_eq!(turn.output_tokens, Some(50));
    }

    /// A pretty-printed JSON document that is no response says what it is (an API error's
    /// body, kept from a failed request), not that line 1 is no JSON.
    #[test]
    fn a_document_that_is_no_response_says_what_it_is() {
        let error = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        for text in [
            serde_json::to_string_pretty(&error).unwrap(),
            error.to_string(),
        ] {
            let turn = parse(&text, Duration::ZERO);
            let problem = turn.error.unwrap_or_default();
            assert!(
                problem.contains("found an API error (overloaded_error: Overloaded)"),
                "{problem}"
            );
        }
        let turn = parse(
            &serde_json::to_string_pretty(&json!({"role": "assistant", "content": []})).unwrap(),
            Duration::ZERO,
        );
        assert!(
            turn.error
                .as_deref()
                .is_some_and(|e| e.contains("an object without a `type`")),
            "{:?}",
            turn.error
        );
    }

    /// Found by review: an element of a non-streaming response's `content` that is no block
    /// (a string, an object without a `type`) is said, as a tool_use without a `name` is,
    /// instead of being skipped without a word; the blocks before it still come out.
    #[test]
    fn a_content_element_that_is_no_block_is_reported() {
        let t1 = json!({"type": "tool_use", "id": "t1", "name": "Glob", "input": {}});
        let t3 = json!({"type": "tool_use", "id": "t3", "name": "Glob", "input": {}});
        for (element, found) in [
            (json!("str"), "found a JSON value that is not an object"),
            (json!({"id": "x"}), "found an object without a `type`"),
        ] {
            let message = json!({"type": "message", "content": [t1, element, t3]});
            let turn = parse(&message.to_string(), Duration::ZERO);
            let ids: Vec<&str> = turn.tool_uses().map(|t| t.id.as_str()).collect();
            assert_eq!(ids, ["t1"], "{message}");
            let error = turn.error.unwrap_or_default();
            assert!(
                error.starts_with("content block 1: expected a content block")
                    && error.contains(found),
                "{error}"
            );
        }
    }

    /// Found by review: an array inside a response's `content` is said to be one, without
    /// the JSONL advice to give one block per line (which a response's `content` has no use
    /// for); an object whose `type` is there but no string is said to be that, not an object
    /// without a `type`. The blocks before it still come out.
    #[test]
    fn a_content_element_is_said_as_what_it_is() {
        let t1 = json!({"type": "tool_use", "id": "t1", "name": "Glob", "input": {}});
        let t3 = json!({"type": "tool_use", "id": "t3", "name": "Glob", "input": {}});
        for (element, found) in [
            (
                json!([]),
                "found a JSON array, where a block must be an object",
            ),
            (
                json!({"type": 5}),
                "found an object whose `type` is not a string (5)",
            ),
            (
                json!({"type": null}),
                "found an object whose `type` is not a string (null)",
            ),
        ] {
            let message = json!({"type": "message", "content": [t1, element, t3]});
            let turn = parse(&message.to_string(), Duration::ZERO);
            let ids: Vec<&str> = turn.tool_uses().map(|t| t.id.as_str()).collect();
            assert_eq!(ids, ["t1"], "{message}");
            let error = turn.error.unwrap_or_default();
            assert!(
                error.starts_with("content block 1: expected a content block")
                    && error.contains(found)
                    && !error.contains("one block per line")
                    && !error.contains("without a `type`"),
                "{message}: {error}"
            );
        }
        // A JSONL line keeps its advice, and says a `type` that is no string as it is.
        let turn = parse(
            "[]
",
            Duration::ZERO,
        );
        let error = turn.error.unwrap_or_default();
        assert!(error.contains("give one block per line"), "{error}");
        let turn = parse("{\"type\":true}\n", Duration::ZERO);
        let error = turn.error.unwrap_or_default();
        assert!(
            error.contains("an object whose `type` is not a string (true)"),
            "{error}"
        );
    }

    /// Found by review: a JSONL line holding a block that a non-streaming response may hold
    /// and the client does not run (`thinking`, `redacted_thinking`, a server tool's call or
    /// result) is skipped, as it is in a response's `content`, instead of ending the input
    /// as malformed; a JSONL input may open with one, and its blocks still come out line by
    /// line.
    #[test]
    fn jsonl_skips_the_blocks_a_response_skips() {
        let lines = [
            json!({"type": "thinking", "thinking": "hm", "signature": "s"}),
            json!({"type": "redacted_thinking", "data": "abc"}),
            json!({"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}),
            json!({"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}),
            json!({"type": "tool_use", "id": "t1", "name": "Glob", "input": {}}),
            json!({"type": "thinking", "thinking": "more", "signature": "s"}),
            json!({"type": "tool_use", "id": "t2", "name": "Glob", "input": {}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let turn = parse(&text, Duration::ZERO);
        assert_eq!(turn.error, None);
        let ids: Vec<&str> = turn.tool_uses().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["t1", "t2"]);
        // Read as it comes: t1 is out at its newline, before the input ends.
        let mut parser = TurnParser::new(Duration::ZERO);
        let upto_t1: String = lines[..5].iter().map(|l| format!("{l}\n")).collect();
        let items = parser.feed(&upto_t1);
        assert!(
            matches!(&items[..], [(_, TurnItem::ToolUse(t))] if t.id == "t1"),
            "{items:?}"
        );
    }

    /// Found by review: a complete non-streaming response followed by more (a second
    /// document pasted on) ran nothing (`line 1: not valid JSON: trailing characters`):
    /// the response's blocks come out, and the turn says that what follows was not read,
    /// naming its line.
    #[test]
    fn a_response_followed_by_more_runs_its_blocks() {
        let message = json!({"type": "message", "content": [
            {"type": "tool_use", "id": "t1", "name": "Glob", "input": {}},
            {"type": "tool_use", "id": "t2", "name": "Glob", "input": {}},
        ]});
        for (text, line) in [
            (format!("{message} {{\"x\":1}}"), 1),
            (
                format!(
                    "{}\n\n{message}\n",
                    serde_json::to_string_pretty(&message).unwrap()
                ),
                serde_json::to_string_pretty(&message)
                    .unwrap()
                    .lines()
                    .count()
                    + 2,
            ),
        ] {
            let turn = parse(&text, Duration::ZERO);
            let ids: Vec<&str> = turn.tool_uses().map(|t| t.id.as_str()).collect();
            assert_eq!(ids, ["t1", "t2"], "{text}");
            let error = turn.error.unwrap_or_default();
            assert!(
                error.starts_with(&format!("line {line}: the response is followed by more")),
                "{error}"
            );
        }
    }

    #[test]
    fn placeholders_are_replaced_everywhere() {
        let mut v = json!({"a": "{{ROOT}}/x", "b": ["{{ROOT}}"], "c": 1});
        replace_in_strings(&mut v, "{{ROOT}}", "/tmp/d");
        assert_eq!(v, json!({"a": "/tmp/d/x", "b": ["/tmp/d"], "c": 1}));
    }
}
