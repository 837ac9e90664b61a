//! The Anthropic Messages API streaming format, turned into tool_use blocks the moment each
//! block closes.
//!
//! Feed the raw server-sent-events text in chunks of any size to [`AnthropicStream::feed`];
//! it returns what became complete: text (a [`StreamEvent::NextTextBlock`] where another
//! text block begins, so the blocks stay apart), finished tool_use blocks (input JSON
//! accumulated from `input_json_delta`s; without any, the `input` its `content_block_start`
//! gave, as the Anthropic SDKs read it), the stop reason, the end. A tool_use whose
//! accumulated input is not valid JSON is still returned (with the raw text as a JSON
//! string), so the pipeline answers it with an input error instead of losing it. A
//! malformed event is a [`StreamError`] that says which line and why; blocks already
//! returned stay returned, and events completed earlier in the same chunk are returned first
//! (the error then comes with the next call), so what a caller gets does not depend on how
//! the text was cut into chunks. After an error the parser only repeats it.

use std::collections::HashMap;

use serde_json::Value;

use crate::pipeline::ToolUse;

/// Something that became complete in the stream.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// The message started (`message_start`): its id and model, and the HTTP response's
    /// request id where a client knows it.
    MessageStart {
        /// The message id.
        id: String,
        /// The model that answers (`message.model`); empty when the event names none.
        model: String,
        /// The response's `request-id` header, which an HTTP client adds: the parser sees
        /// only the body, and gives `None`.
        request_id: Option<String>,
    },
    /// Another text block begins: the [`Text`](Self::Text) events after it are a new
    /// block's, not the one before's, so that the model's text blocks stay apart as it sent
    /// them. It comes right before the first text of each text block but the message's
    /// first (a block with no text has none).
    NextTextBlock,
    /// Text from a text block.
    Text(String),
    /// A tool_use block closed: it can start now.
    ToolUse(ToolUse),
    /// The stop reason arrived (`message_delta`).
    StopReason(String),
    /// Token usage: the response's so far, as the Anthropic SDKs read it. `message_start`
    /// gives the first values; every field a later `message_delta` reports (a number, not
    /// null) replaces its value, the others keep theirs. Each `Usage` event of a response
    /// supersedes the one before (a gateway may report the input tokens only at the end).
    Usage {
        /// Input tokens not read from or written to the prompt cache.
        input_tokens: u64,
        /// Output tokens.
        output_tokens: u64,
        /// Input tokens written to the prompt cache.
        cache_creation_input_tokens: u64,
        /// Input tokens read from the prompt cache.
        cache_read_input_tokens: u64,
    },
    /// The message ended (`message_stop`).
    MessageStop,
}

/// A stream that cannot be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamError {
    /// An event's data is not the JSON its type requires.
    #[error("malformed stream event `{event}` at line {line}: {reason}")]
    Malformed {
        /// The event type.
        event: String,
        /// The 1-based line of its `data:` field.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The API sent an `error` event: mid-stream, or before the response began (no
    /// `message_start` came first).
    #[error("the API reported an error {} ({kind}): {message}", api_error_when(*.before_start))]
    Api {
        /// The error type (`overloaded_error`, ...).
        kind: String,
        /// The message.
        message: String,
        /// Whether it came before `message_start`: the response never began.
        before_start: bool,
    },
    /// The stream ended without `message_stop`.
    #[error("the stream ended before message_stop (truncated response)")]
    Truncated,
    /// One event (a line, its data, or the accumulated input of the open tool_use blocks) passed
    /// [`MAX_EVENT_BYTES`]: a response no model sends, which would otherwise grow without
    /// bound.
    #[error(
        "the stream's {what} passed {limit} bytes (no response of the Messages API is that large)"
    )]
    TooLarge {
        /// What grew too large (`line`, `event data`, `tool_use input`).
        what: &'static str,
        /// The limit, in bytes.
        limit: usize,
    },
}

/// The most one line, one event's data, or the inputs of the tool_use blocks open at once may
/// hold (32 MiB): far past what a model writes in one response, and a bound on what a broken
/// or hostile endpoint can make the parser keep.
pub const MAX_EVENT_BYTES: usize = 32 * 1024 * 1024;

/// Where an `error` event came, as [`StreamError::Api`] says it.
fn api_error_when(before_start: bool) -> &'static str {
    if before_start {
        "before the response began"
    } else {
        "mid-stream"
    }
}

fn too_large(what: &'static str) -> StreamError {
    StreamError::TooLarge {
        what,
        limit: MAX_EVENT_BYTES,
    }
}

#[derive(Debug)]
enum Block {
    /// A text block; `started` once its first text was given.
    Text {
        started: bool,
    },
    ToolUse {
        id: String,
        name: String,
        json: String,
        /// The input `content_block_start` gave (`null` when it gave none), used when no
        /// delta brings any: a gateway may send the whole input there.
        start: Value,
        /// The bytes counted for `start` in the open input.
        start_len: usize,
    },
    Other,
}

/// An incremental parser of the streaming format. See the [module docs](self).
#[derive(Debug, Default)]
pub struct AnthropicStream {
    line_ends: LineEnds,
    pending: String,
    line_no: usize,
    event: Option<String>,
    data: String,
    data_line: usize,
    blocks: HashMap<u64, Block>,
    /// The ids of this message's tool_use blocks so far.
    tool_use_ids: ToolUseIds,
    /// The bytes of input the open tool_use blocks hold between them.
    open_input: usize,
    /// The response's usage so far: input, output, cache writes, cache reads.
    usage: [u64; 4],
    /// `message_start` was read: the response has begun.
    started: bool,
    /// A text block of this message gave text: the next one's starts another block.
    text_seen: bool,
    stopped: bool,
    failed: Option<StreamError>,
}

/// The tool_use ids of one message so far, with their block numbers. An id comes once in a
/// message: a second call with the same id would run too, and its result would carry the
/// same id, so the next request, with two tool_use blocks and two results of one id, is
/// refused by the API, after both calls had their effects. Every reader of a response checks
/// its tool_use blocks here before they run: [`AnthropicStream`], and a host reading a
/// non-streaming response or blocks one by one, so that all say it the same way.
#[derive(Debug, Clone, Default)]
pub struct ToolUseIds {
    blocks: HashMap<String, u64>,
}

/// A tool_use block whose id an earlier block of the same message has ([`ToolUseIds::add`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "block {block}'s tool_use ({name}) has the id {id:?} of block {first}: a tool_use id comes once in a message"
)]
pub struct RepeatedToolUseId {
    /// The block that repeats the id (its index in the message's `content`).
    pub block: u64,
    /// The tool it calls.
    pub name: String,
    /// The id.
    pub id: String,
    /// The earlier block with that id.
    pub first: u64,
}

impl ToolUseIds {
    /// No ids yet: the start of a message.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that block `block` is a tool_use of `name` with `id`; refuses it (and does
    /// not record it) when an earlier block of the message has that id.
    pub fn add(&mut self, block: u64, id: &str, name: &str) -> Result<(), RepeatedToolUseId> {
        if let Some(&first) = self.blocks.get(id) {
            return Err(RepeatedToolUseId {
                block,
                name: name.to_owned(),
                id: id.to_owned(),
                first,
            });
        }
        self.blocks.insert(id.to_owned(), block);
        Ok(())
    }

    /// Forgets every id: the next message starts (it may use them again).
    pub fn clear(&mut self) {
        self.blocks.clear();
    }
}

/// Line ends read as LF across the chunks of a stream: a CRLF, and a CR alone, which SSE
/// takes as a line end too (and which can end a JSON line, as whitespace, without changing
/// it). A CRLF split between two chunks is one line end.
#[derive(Debug, Clone, Default)]
pub struct LineEnds {
    after_cr: bool,
}

impl LineEnds {
    /// `chunk` with its line ends as LF (borrowed when it has none to change).
    pub fn as_lf<'a>(&mut self, chunk: &'a str) -> std::borrow::Cow<'a, str> {
        // An empty piece changes nothing: a CR before it may still meet its LF.
        if chunk.is_empty() {
            return std::borrow::Cow::Borrowed(chunk);
        }
        if !(chunk.contains('\r') || (self.after_cr && chunk.starts_with('\n'))) {
            self.after_cr = false;
            return std::borrow::Cow::Borrowed(chunk);
        }
        let mut out = String::with_capacity(chunk.len());
        for c in chunk.chars() {
            match c {
                '\r' => {
                    out.push('\n');
                    self.after_cr = true;
                    continue;
                }
                '\n' if self.after_cr => {}
                c => out.push(c),
            }
            self.after_cr = false;
        }
        std::borrow::Cow::Owned(out)
    }
}

impl AnthropicStream {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next chunk of SSE text; returns the events it completed.
    pub fn feed(&mut self, chunk: &str) -> Result<Vec<StreamEvent>, StreamError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        // SSE ends a line with CRLF, LF or a CR alone: all read as LF.
        let chunk = self.line_ends.as_lf(chunk);
        let chunk = chunk.as_ref();
        let before = self.pending.len();
        self.pending.push_str(chunk);
        // The complete lines are taken out at once and the rest kept: draining line by line
        // would move the rest of a large chunk once per line. Only the new text is searched:
        // a long line arriving in many chunks is not scanned again with each one.
        let Some(last) = chunk.rfind('\n').map(|i| before + i) else {
            if self.pending.len() > MAX_EVENT_BYTES {
                return self.fail(too_large("line"), Vec::new());
            }
            return Ok(Vec::new());
        };
        let rest = self.pending.split_off(last + 1);
        let lines = std::mem::replace(&mut self.pending, rest);
        let mut out = Vec::new();
        for line in lines.split_terminator('\n') {
            self.line_no += 1;
            if let Err(e) = self.line(line, &mut out) {
                return self.fail(e, out);
            }
        }
        Ok(out)
    }

    /// Records `e`; hands out the events completed before it first, if there are any.
    fn fail(
        &mut self,
        e: StreamError,
        out: Vec<StreamEvent>,
    ) -> Result<Vec<StreamEvent>, StreamError> {
        self.failed = Some(e.clone());
        self.pending.clear();
        if out.is_empty() { Err(e) } else { Ok(out) }
    }

    /// Ends the input: dispatches a last event without a trailing blank line (one whose data
    /// is not whole JSON was cut off: [`StreamError::Truncated`]), and reports a stream that
    /// never reached `message_stop`.
    pub fn finish(&mut self) -> Result<Vec<StreamEvent>, StreamError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let mut out = Vec::new();
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.line_no += 1;
            // A line without its newline only sets a field: the event is dispatched below.
            if let Err(e) = self.line(line.trim_end_matches('\r'), &mut out) {
                self.failed = Some(e.clone());
                return Err(e);
            }
        }
        // An event without the blank line that ends it: a complete one (a recording that lost
        // its last blank line) is read; one whose data is not whole JSON is where the stream
        // broke off, not a malformed event. (The SSE standard drops every such event; a
        // recording's last `message_stop` would go with it.)
        let cut_off = !self.stopped
            && !self.data.is_empty()
            && serde_json::from_str::<serde::de::IgnoredAny>(&self.data).is_err();
        if cut_off {
            self.failed = Some(StreamError::Truncated);
            return Err(StreamError::Truncated);
        }
        if let Err(e) = self.dispatch(&mut out) {
            self.failed = Some(e.clone());
            return Err(e);
        }
        if self.stopped {
            Ok(out)
        } else {
            Err(StreamError::Truncated)
        }
    }

    fn line(&mut self, line: &str, out: &mut Vec<StreamEvent>) -> Result<(), StreamError> {
        if line.is_empty() {
            return self.dispatch(out);
        }
        if line.starts_with(':') {
            return Ok(()); // SSE comment
        }
        let (field, value) = line
            .split_once(':')
            .map_or((line, ""), |(f, v)| (f, v.strip_prefix(' ').unwrap_or(v)));
        match field {
            "event" => self.event = Some(value.to_owned()),
            "data" => {
                if self.data.is_empty() {
                    self.data_line = self.line_no;
                } else {
                    self.data.push('\n');
                }
                if self.data.len() + value.len() > MAX_EVENT_BYTES {
                    return Err(too_large("event data"));
                }
                self.data.push_str(value);
            }
            _ => {}
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), StreamError> {
        if self.data.is_empty() {
            self.event = None;
            return Ok(());
        }
        let data = std::mem::take(&mut self.data);
        if self.stopped {
            // Nothing after `message_stop` belongs to the message: some gateways send a
            // `data: [DONE]` line there.
            self.event = None;
            return Ok(());
        }
        let malformed = |event: &str, reason: String| StreamError::Malformed {
            event: event.to_owned(),
            line: self.data_line,
            reason,
        };
        let json: Value = match tool_core::input::parse_model_json(&data) {
            Ok(json) => json,
            // Data that is no JSON object (`[DONE]`) under no event name, or one the API does
            // not send, is ignored, as the Anthropic SDK ignores events it does not know. A
            // broken object is an error whatever the name: it may be a lost delta.
            Err(_)
                if !data.trim_start().starts_with('{')
                    && !self.event.as_deref().is_some_and(is_message_event) =>
            {
                self.event = None;
                return Ok(());
            }
            Err(e) => {
                return Err(malformed(
                    self.event.as_deref().unwrap_or("?"),
                    e.to_string(),
                ));
            }
        };
        let kind = self
            .event
            .take()
            .or_else(|| json["type"].as_str().map(str::to_owned))
            .unwrap_or_default();
        let index = || match json.get("index") {
            None => Err(malformed(&kind, "missing `index`".into())),
            Some(index) => index.as_u64().ok_or_else(|| {
                malformed(
                    &kind,
                    format!("`index` is {index}, not a block number (0 or more)"),
                )
            }),
        };
        match kind.as_str() {
            "message_start" => {
                self.started = true;
                self.tool_use_ids.clear();
                self.text_seen = false;
                let text = |field: &str| {
                    json["message"][field]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned()
                };
                out.push(StreamEvent::MessageStart {
                    id: text("id"),
                    model: text("model"),
                    request_id: None,
                });
                if let Some(usage) = json["message"].get("usage") {
                    self.usage = [0; 4];
                    out.push(self.update_usage(usage));
                }
            }
            "content_block_start" => {
                // The index first: a malformed event yields nothing.
                let i = index()?;
                if let Some(Block::ToolUse { name, .. }) = self.blocks.get(&i) {
                    // The call's block never closed: it would be lost without a word.
                    return Err(malformed(
                        &kind,
                        format!("block {i} starts again while its tool_use ({name}) is still open"),
                    ));
                }
                let block = &json["content_block"];
                let parsed = match block["type"].as_str() {
                    Some("tool_use") => {
                        let id = block["id"].as_str().ok_or_else(|| {
                            malformed(&kind, "tool_use block without `id`".into())
                        })?;
                        let name = block["name"].as_str().ok_or_else(|| {
                            malformed(&kind, "tool_use block without `name`".into())
                        })?;
                        // The stream is malformed there: the calls before it keep their
                        // results, this one never runs.
                        self.tool_use_ids
                            .add(i, id, name)
                            .map_err(|e| malformed(&kind, e.to_string()))?;
                        // The whole input may come here (a gateway, a proxy), with no
                        // delta after it: it is the call's input unless deltas bring one,
                        // as the Anthropic SDKs read it.
                        let start = block.get("input").cloned().unwrap_or(Value::Null);
                        // Bounded with the deltas: its event's size is an upper bound.
                        let start_len = if start.is_null() { 0 } else { data.len() };
                        if self.open_input + start_len > MAX_EVENT_BYTES {
                            return Err(too_large("tool_use input"));
                        }
                        self.open_input += start_len;
                        Block::ToolUse {
                            id: id.to_owned(),
                            name: name.to_owned(),
                            json: String::new(),
                            start,
                            start_len,
                        }
                    }
                    Some("text") => {
                        let text = block["text"].as_str().filter(|t| !t.is_empty());
                        if let Some(text) = text {
                            next_text_block(&mut self.text_seen, out);
                            out.push(StreamEvent::Text(text.to_owned()));
                        }
                        Block::Text {
                            started: text.is_some(),
                        }
                    }
                    _ => Block::Other,
                };
                self.blocks.insert(i, parsed);
            }
            "content_block_delta" => {
                let i = index()?;
                let delta = &json["delta"];
                match (self.blocks.get_mut(&i), delta["type"].as_str()) {
                    (Some(Block::ToolUse { json: acc, .. }), Some("input_json_delta")) => {
                        let part = delta["partial_json"].as_str().unwrap_or_default();
                        if self.open_input + part.len() > MAX_EVENT_BYTES {
                            return Err(too_large("tool_use input"));
                        }
                        self.open_input += part.len();
                        acc.push_str(part);
                    }
                    (Some(Block::Text { started }), Some("text_delta")) => {
                        let text = delta["text"].as_str().unwrap_or_default();
                        if !*started && !text.is_empty() {
                            *started = true;
                            next_text_block(&mut self.text_seen, out);
                        }
                        out.push(StreamEvent::Text(text.to_owned()));
                    }
                    (None, _) => {
                        return Err(malformed(
                            &kind,
                            format!("delta for block {i}, which never started"),
                        ));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let i = index()?;
                match self.blocks.remove(&i) {
                    Some(Block::ToolUse {
                        id,
                        name,
                        json: raw,
                        start,
                        start_len,
                    }) => {
                        self.open_input -= raw.len() + start_len;
                        // The deltas' JSON when they brought any (it replaces the start's
                        // input, as in the SDKs' `accumulate_event`), else the input the
                        // start gave, else `{}`.
                        let input = if raw.trim().is_empty() {
                            if start.is_null() {
                                Value::Object(serde_json::Map::new())
                            } else {
                                start
                            }
                        } else {
                            tool_core::input::parse_model_json(&raw).unwrap_or(Value::String(raw))
                        };
                        out.push(StreamEvent::ToolUse(ToolUse { id, name, input }));
                    }
                    Some(_) => {}
                    None => {
                        return Err(malformed(
                            &kind,
                            format!("stop for block {i}, which never started"),
                        ));
                    }
                }
            }
            "message_delta" => {
                if let Some(reason) = json["delta"]["stop_reason"].as_str() {
                    out.push(StreamEvent::StopReason(reason.to_owned()));
                }
                // Every field reported here is the final value (input tokens included: some
                // gateways report them only here), as the SDKs take it.
                if json["usage"].is_object() {
                    out.push(self.update_usage(&json["usage"]));
                }
            }
            "message_stop" => {
                if let Some((i, name)) = self
                    .blocks
                    .iter()
                    .filter_map(|(i, b)| match b {
                        Block::ToolUse { name, .. } => Some((*i, name.clone())),
                        _ => None,
                    })
                    .min()
                {
                    return Err(malformed(
                        &kind,
                        format!(
                            "the message ends with its tool_use block {i} ({name}) never stopped"
                        ),
                    ));
                }
                self.stopped = true;
                out.push(StreamEvent::MessageStop);
            }
            "error" => {
                return Err(StreamError::Api {
                    kind: json["error"]["type"].as_str().unwrap_or("error").to_owned(),
                    message: json["error"]["message"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned(),
                    before_start: !self.started,
                });
            }
            // `ping` and event types added later are ignored.
            _ => {}
        }
        Ok(())
    }
}

/// A text block's first text is next: after an earlier block's text (`text_seen`, the
/// message's so far), it is another block's. (A function of the one field, not a method:
/// its caller holds the block being read.)
fn next_text_block(text_seen: &mut bool, out: &mut Vec<StreamEvent>) {
    if *text_seen {
        out.push(StreamEvent::NextTextBlock);
    }
    *text_seen = true;
}

impl AnthropicStream {
    /// Takes every usage field `reported` gives as a number (a null or absent one keeps its
    /// value) and returns the response's usage so far.
    fn update_usage(&mut self, reported: &Value) -> StreamEvent {
        const FIELDS: [&str; 4] = [
            "input_tokens",
            "output_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ];
        for (value, field) in self.usage.iter_mut().zip(FIELDS) {
            if let Some(n) = reported[field].as_u64() {
                *value = n;
            }
        }
        let [input, output, creation, read] = self.usage;
        StreamEvent::Usage {
            input_tokens: input,
            output_tokens: output,
            cache_creation_input_tokens: creation,
            cache_read_input_tokens: read,
        }
    }
}

/// Whether `event` is an event name of the Messages API's stream, whose data must be JSON.
fn is_message_event(event: &str) -> bool {
    matches!(
        event,
        "message_start"
            | "content_block_start"
            | "content_block_delta"
            | "content_block_stop"
            | "message_delta"
            | "message_stop"
            | "error"
            | "ping"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sse(events: &[Value]) -> String {
        events
            .iter()
            .map(|e| format!("event: {}\ndata: {}\n\n", e["type"].as_str().unwrap(), e))
            .collect()
    }

    fn turn() -> String {
        sse(&[
            json!({"type": "message_start", "message": {"id": "msg_1"}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Looking."}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "ping"}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Glob", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"pattern\": \"**/*"}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ".rs\"}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "TodoWrite", "input": {}}}),
            json!({"type": "content_block_stop", "index": 2}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
            json!({"type": "message_stop"}),
        ])
    }

    /// A tool input with an escaped surrogate without its pair reaches the tool with U+FFFD
    /// in its place (as `JSON.parse` reads it), not as input that is no JSON; a text delta
    /// holding one does not break the stream. Found by review.
    #[test]
    fn a_lone_surrogate_escape_in_a_tool_input_is_the_replacement_character() {
        let text = sse(&[
            json!({"type": "message_start", "message": {"id": "msg_1"}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"content\": \"a\\ud800b\"}"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_stop"}),
        ]);
        let mut parser = AnthropicStream::new();
        let mut events = parser.feed(&text).unwrap();
        events.extend(parser.finish().unwrap());
        assert!(
            events.contains(&StreamEvent::ToolUse(ToolUse::new(
                "toolu_1",
                "Write",
                json!({"content": "a\u{fffd}b"})
            ))),
            "{events:?}"
        );
        // The event itself holding one (a text delta): read, not a malformed stream.
        let text = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
                    event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\\ud800\"}}\n\n";
        let mut parser = AnthropicStream::new();
        let events = parser.feed(text).unwrap();
        assert!(
            events.contains(&StreamEvent::Text("x\u{fffd}".into())),
            "{events:?}"
        );
    }

    #[test]
    fn tool_uses_complete_at_block_stop_whatever_the_chunking() {
        tool_uses_complete_with_line_ends(&turn());
        // SSE's other line ends: CRLF (split between chunks too) and a CR alone.
        tool_uses_complete_with_line_ends(&turn().replace('\n', "\r\n"));
        tool_uses_complete_with_line_ends(&turn().replace('\n', "\r"));
    }

    /// A CRLF split by an empty piece is still one line end.
    #[test]
    fn a_crlf_split_by_an_empty_piece_is_one_line_end() {
        let mut ends = LineEnds::default();
        let text: String = ["a\r", "", "\nb\r", "\r\n"]
            .iter()
            .map(|piece| ends.as_lf(piece).into_owned())
            .collect();
        assert_eq!(text, "a\nb\n\n");
    }

    fn tool_uses_complete_with_line_ends(text: &str) {
        for chunk_size in [1, 7, 64, text.len()] {
            let mut parser = AnthropicStream::new();
            let mut events = Vec::new();
            let bytes: Vec<char> = text.chars().collect();
            for chunk in bytes.chunks(chunk_size) {
                events.extend(parser.feed(&chunk.iter().collect::<String>()).unwrap());
            }
            events.extend(parser.finish().unwrap());
            assert_eq!(
                events,
                vec![
                    StreamEvent::MessageStart {
                        id: "msg_1".into(),
                        model: String::new(),
                        request_id: None,
                    },
                    StreamEvent::Text("Looking.".into()),
                    StreamEvent::ToolUse(ToolUse::new(
                        "toolu_1",
                        "Glob",
                        json!({"pattern": "**/*.rs"})
                    )),
                    StreamEvent::ToolUse(ToolUse::new("toolu_2", "TodoWrite", json!({}))),
                    StreamEvent::StopReason("tool_use".into()),
                    StreamEvent::MessageStop,
                ],
                "chunk size {chunk_size}"
            );
        }
    }

    /// `data: [DONE]` (some gateways' end marker) after `message_stop`, or under no event
    /// name, changes nothing; anything after `message_stop` is ignored; a broken JSON object
    /// is still an error.
    #[test]
    fn gateway_end_markers_are_ignored() {
        let text = format!("{}data: [DONE]\n\n", turn());
        let mut parser = AnthropicStream::new();
        let mut events = parser.feed(&text).unwrap();
        events.extend(parser.finish().unwrap());
        assert_eq!(events.last(), Some(&StreamEvent::MessageStop));
        assert_eq!(events.len(), 6);
        let after = format!("{}event: message_delta\ndata: {{oops\n\n", turn());
        let mut parser = AnthropicStream::new();
        assert!(parser.feed(&after).is_ok());
        assert!(parser.finish().is_ok());
        let mut parser = AnthropicStream::new();
        parser
            .feed("data: [DONE]\n\nevent: foo\ndata: nope\n\n")
            .unwrap();
        let err = parser
            .feed("data: {\"type\": \"content_block_delta\"\n\n")
            .unwrap_err();
        assert!(matches!(err, StreamError::Malformed { .. }), "{err}");
    }

    #[test]
    fn an_event_past_the_limit_is_refused_whatever_the_chunks() {
        // A line that never ends, fed in pieces: refused once it passes the limit.
        let mut parser = AnthropicStream::new();
        let piece = "x".repeat(1024 * 1024);
        let mut refused = None;
        for _ in 0..(MAX_EVENT_BYTES / piece.len() + 2) {
            if let Err(e) = parser.feed(&piece) {
                refused = Some(e);
                break;
            }
        }
        assert_eq!(refused, Some(too_large("line")));
        // A tool_use input past the limit, in deltas of ordinary lines.
        let mut parser = AnthropicStream::new();
        parser
            .feed("event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Write\",\"input\":{}}}\n\n")
            .unwrap();
        let delta = format!(
            "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}}}\n\n",
            "y".repeat(4 * 1024 * 1024)
        );
        let mut refused = None;
        for _ in 0..(MAX_EVENT_BYTES / (4 * 1024 * 1024) + 2) {
            if let Err(e) = parser.feed(&delta) {
                refused = Some(e);
                break;
            }
        }
        assert_eq!(refused, Some(too_large("tool_use input")));
        // The bound holds for the open blocks together: many blocks, opened and never
        // closed, each under the limit, cannot hold more than it between them. A block that
        // stops gives back what it held.
        let mut parser = AnthropicStream::new();
        // Each call its own id (one id comes once in a message).
        let start = |i: usize, id: usize| {
            format!(
                "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{i},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"t{id}\",\"name\":\"Write\",\"input\":{{}}}}}}\n\n"
            )
        };
        let delta = |i: usize| {
            format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{i},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}}}\n\n",
                "y".repeat(4 * 1024 * 1024)
            )
        };
        let stop =
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n";
        for n in 0..(MAX_EVENT_BYTES / (4 * 1024 * 1024) + 2) {
            parser.feed(&start(0, 1000 + n)).unwrap();
            parser.feed(&delta(0)).unwrap();
            parser.feed(stop).unwrap();
        }
        let mut refused = None;
        for i in 1..(MAX_EVENT_BYTES / (4 * 1024 * 1024) + 2) {
            parser.feed(&start(i, i)).unwrap();
            if let Err(e) = parser.feed(&delta(i)) {
                refused = Some(e);
                break;
            }
        }
        assert_eq!(refused, Some(too_large("tool_use input")));
        // Under the limit, a long line in many chunks parses as one.
        let mut parser = AnthropicStream::new();
        let text = format!(
            "event: message_start\ndata: {{\"type\":\"message_start\",\"message\":{{\"id\":\"{}\"}}}}\n\n",
            "m".repeat(100_000)
        );
        let mut events = Vec::new();
        for chunk in text.as_bytes().chunks(7) {
            events.extend(parser.feed(std::str::from_utf8(chunk).unwrap()).unwrap());
        }
        assert!(
            matches!(&events[..], [StreamEvent::MessageStart { id, .. }] if id.len() == 100_000),
            "{events:?}"
        );
    }

    #[test]
    fn malformed_and_truncated_streams_are_clear_errors() {
        let mut parser = AnthropicStream::new();
        let err = parser
            .feed("event: content_block_start\ndata: {not json\n\n")
            .unwrap_err();
        assert!(
            matches!(err, StreamError::Malformed { line: 2, .. }),
            "{err}"
        );

        let mut parser = AnthropicStream::new();
        let text = turn();
        let cut = &text[..text.find("message_delta").unwrap()];
        let events = parser.feed(cut).unwrap();
        assert_eq!(
            events
                .iter()
                .filter(|e| matches!(e, StreamEvent::ToolUse(_)))
                .count(),
            2
        );
        assert_eq!(parser.finish().unwrap_err(), StreamError::Truncated);

        // Cut in the middle of an event's data (a proxy that ended the body cleanly after
        // the upstream died): truncated, not malformed.
        let mut parser = AnthropicStream::new();
        let cut = &text[..text.find("message_delta").unwrap() + 30];
        parser.feed(cut).unwrap();
        assert_eq!(parser.finish().unwrap_err(), StreamError::Truncated);
        // A whole last event without its blank line is read as it is: an error event stays
        // the API's error (which the agent retries), not a truncation.
        let mut parser = AnthropicStream::new();
        parser
            .feed("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}")
            .unwrap();
        assert!(
            matches!(parser.finish().unwrap_err(), StreamError::Api { .. }),
            "an error event at the end"
        );

        let mut parser = AnthropicStream::new();
        let err = parser
            .feed("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the API reported an error before the response began (overloaded_error): Overloaded"
        );

        // An `index` that is there but no block number is said as it is, not as missing.
        for (index, said) in [
            ("-1", "`index` is -1, not a block number (0 or more)"),
            ("\"0\"", "`index` is \"0\", not a block number (0 or more)"),
            ("null", "`index` is null, not a block number (0 or more)"),
        ] {
            let mut parser = AnthropicStream::new();
            let err = parser
                .feed(&format!(
                    "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{index},\"content_block\":{{\"type\":\"text\",\"text\":\"\"}}}}\n\n"
                ))
                .unwrap_err();
            assert!(err.to_string().contains(said), "{index}: {err}");
        }
        let mut parser = AnthropicStream::new();
        let err = parser
            .feed("event: content_block_stop\ndata: {\"type\":\"content_block_stop\"}\n\n")
            .unwrap_err();
        assert!(err.to_string().contains("missing `index`"), "{err}");
    }

    #[test]
    fn a_tool_use_block_that_never_stops_is_an_error_not_a_lost_call() {
        let start = |i: u64, id: &str| json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": id, "name": "Bash"}});
        // The message ends with the block open.
        let text = sse(&[start(0, "t1"), json!({"type": "message_stop"})]);
        let err = AnthropicStream::new().feed(&text).unwrap_err();
        assert!(
            err.to_string()
                .contains("the message ends with its tool_use block 0 (Bash) never stopped"),
            "{err}"
        );
        // A second start on the open block.
        let text = sse(&[start(0, "t1"), start(0, "t2")]);
        let err = AnthropicStream::new().feed(&text).unwrap_err();
        assert!(
            err.to_string()
                .contains("block 0 starts again while its tool_use (Bash) is still open"),
            "{err}"
        );
        // A text block started on it: the malformed event yields no text first.
        let text = sse(&[
            start(0, "t1"),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "hi"}}),
        ]);
        let err = AnthropicStream::new().feed(&text).unwrap_err();
        assert!(err.to_string().contains("block 0 starts again"), "{err}");
    }

    /// Usage as the Anthropic SDKs read it: `message_start`'s, then every field a
    /// `message_delta` reports (not null) replacing it. A gateway that reports the input
    /// tokens only at the end (a recorded stream of one) is counted in full, and each `Usage`
    /// event carries the response's usage so far.
    #[test]
    fn message_delta_usage_fields_are_the_final_values() {
        let usage = |input, output, creation, read| StreamEvent::Usage {
            input_tokens: input,
            output_tokens: output,
            cache_creation_input_tokens: creation,
            cache_read_input_tokens: read,
        };
        let text = concat!(
            "event: message_start\n",
            "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[],",
            "\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}}\n\n",
            "event: message_delta\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},",
            "\"usage\":{\"input_tokens\":1000000,\"output_tokens\":1000,",
            "\"cache_read_input_tokens\":5000,\"cache_creation_input_tokens\":null}}\n\n",
            "event: message_stop\n",
            "data: {\"type\":\"message_stop\"}\n\n",
        );
        let mut parser = AnthropicStream::new();
        let events = parser.feed(text).unwrap();
        let reported: Vec<&StreamEvent> = events
            .iter()
            .filter(|e| matches!(e, StreamEvent::Usage { .. }))
            .collect();
        assert_eq!(
            reported,
            [&usage(0, 0, 0, 0), &usage(1_000_000, 1000, 0, 5000)]
        );
        // A field the delta leaves out keeps message_start's value.
        let text = sse(&[
            json!({"type": "message_start", "message": {"id": "m", "usage": {"input_tokens": 40, "output_tokens": 1, "cache_creation_input_tokens": 7}}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 20}}),
            json!({"type": "message_stop"}),
        ]);
        let events = AnthropicStream::new().feed(&text).unwrap();
        let last = events
            .iter()
            .rfind(|e| matches!(e, StreamEvent::Usage { .. }))
            .unwrap();
        assert_eq!(last, &usage(40, 20, 7, 0));
    }

    /// Found by review: a second tool_use block with the id of an earlier one in the same
    /// message ran too, and two results with that id went back (a request the API
    /// refuses). It is a malformed stream: the first call is still returned, the second
    /// never is. Another message may use the id again (a recording of several).
    #[test]
    fn a_tool_use_id_repeated_in_a_message_is_a_malformed_stream() {
        let call = |i: u64, id: &str| {
            [
                json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": id, "name": "Bash", "input": {}}}),
                json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": \"echo x\"}"}}),
                json!({"type": "content_block_stop", "index": i}),
            ]
        };
        let start = json!({"type": "message_start", "message": {"id": "m"}});
        let mut events = vec![start.clone()];
        events.extend(call(0, "toolu_1"));
        events.extend(call(1, "toolu_1"));
        let mut parser = AnthropicStream::new();
        let got = parser.feed(&sse(&events)).unwrap();
        assert_eq!(
            got.iter()
                .filter_map(|e| match e {
                    StreamEvent::ToolUse(t) => Some(t.id.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>(),
            ["toolu_1"]
        );
        let err = parser.finish().unwrap_err();
        assert!(
            matches!(&err, StreamError::Malformed { event, .. } if event == "content_block_start")
                && err
                    .to_string()
                    .contains("block 1's tool_use (Bash) has the id \"toolu_1\" of block 0"),
            "{err}"
        );
        // Distinct ids, and the same id in the next message: read as they are.
        let mut events = vec![start.clone()];
        events.extend(call(0, "toolu_1"));
        events.extend(call(1, "toolu_2"));
        events.push(json!({"type": "message_stop"}));
        let mut parser = AnthropicStream::new();
        assert!(parser.feed(&sse(&events)).is_ok());
        let mut parser = AnthropicStream::new();
        parser.feed(&sse(&events)).unwrap();
        let mut again = vec![start];
        again.extend(call(0, "toolu_1"));
        assert!(parser.feed(&sse(&again)).is_ok());
    }

    /// Found by review: a tool_use whose whole input comes in `content_block_start` (a
    /// gateway's stream), with no `input_json_delta`, runs with that input, not `{}`. As
    /// in the Anthropic SDKs' `accumulate_event`, deltas that bring JSON replace the
    /// start's input (the API's own start input is `{}`); an empty delta keeps it.
    #[test]
    fn a_tool_input_given_whole_at_block_start_is_the_input() {
        let start = |input: Value| json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "Bash", "input": input}});
        let delta = |part: &str| json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": part}});
        let stop = json!({"type": "content_block_stop", "index": 0});
        let input_of = |events: &[Value]| {
            let mut parser = AnthropicStream::new();
            let got = parser.feed(&sse(events)).unwrap();
            match &got[..] {
                [StreamEvent::ToolUse(call)] => call.input.clone(),
                other => panic!("{other:?}"),
            }
        };
        let given = json!({"command": "echo hello > marker.txt"});
        assert_eq!(input_of(&[start(given.clone()), stop.clone()]), given);
        assert_eq!(
            input_of(&[start(given.clone()), delta(""), stop.clone()]),
            given
        );
        // Deltas replace it, as in the SDKs.
        assert_eq!(
            input_of(&[
                start(given),
                delta("{\"command\": "),
                delta("\"ls\"}"),
                stop.clone()
            ]),
            json!({"command": "ls"})
        );
        // No input at all, or null: `{}`.
        let bare = json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "Bash"}});
        assert_eq!(input_of(&[bare, stop.clone()]), json!({}));
        assert_eq!(input_of(&[start(Value::Null), stop]), json!({}));
    }

    #[test]
    fn invalid_tool_json_is_kept_as_a_string() {
        let mut parser = AnthropicStream::new();
        let text = sse(&[
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "Bash"}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"command\": "}}),
            json!({"type": "content_block_stop", "index": 0}),
        ]);
        let events = parser.feed(&text).unwrap();
        assert_eq!(
            events,
            vec![StreamEvent::ToolUse(ToolUse::new(
                "t",
                "Bash",
                json!("{\"command\": ")
            ))]
        );
    }

    /// Found by review: an `error` event that opens the stream (no `message_start` before
    /// it: the response never began) was said to come "mid-stream"; it says that the
    /// response never began, and one after `message_start` still says mid-stream. Both stay
    /// [`StreamError::Api`] with the API's error type (the agent retries an overload).
    #[test]
    fn an_error_before_the_response_began_is_not_called_mid_stream() {
        let error = json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
        let mut parser = AnthropicStream::new();
        let err = parser
            .feed(&format!(
                ": comment\nevent: ping\ndata: {{\"type\":\"ping\"}}\n\n{}",
                sse(std::slice::from_ref(&error))
            ))
            .unwrap_err();
        assert!(
            matches!(&err, StreamError::Api { kind, .. } if kind == "overloaded_error"),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "the API reported an error before the response began (overloaded_error): Overloaded"
        );
        let mut parser = AnthropicStream::new();
        parser
            .feed(&sse(&[
                json!({"type": "message_start", "message": {"id": "m"}}),
            ]))
            .unwrap();
        let err = parser.feed(&sse(&[error])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the API reported an error mid-stream (overloaded_error): Overloaded"
        );
    }
}
