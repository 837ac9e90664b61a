//! Fuzzing the Anthropic SSE adapter (`AnthropicStream`, on stable, with proptest): valid
//! streams built from random blocks, the same streams mutated (events dropped, duplicated,
//! corrupted, fields removed), and arbitrary text, each cut into random chunks. Properties:
//! no panic; the events and the error do not depend on how the text is chunked; every error
//! says what is wrong; a valid stream yields every tool_use exactly once, with its input.
//!
//! `TOOLWRIGHT_FUZZ_SECS=60 cargo test -p tool-exec --test fuzz_sse` (or `cargo xtask fuzz
//! sse`) runs for a minute instead of the quick pass.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use serde_json::{Value, json};
use tool_exec::{AnthropicStream, StreamError, StreamEvent};

/// One content block of a generated message.
#[derive(Debug, Clone)]
enum Block {
    Text(Vec<String>),
    ToolUse {
        name: String,
        input: Value,
        cuts: Vec<usize>,
    },
    Thinking,
}

fn block() -> impl Strategy<Value = Block> {
    let input = prop_oneof![
        Just(json!({})),
        "[a-z ]{0,20}".prop_map(|s| json!({"command": s})),
        ("[a-z/]{1,12}", 0..100u32).prop_map(|(p, n)| json!({"file_path": p, "limit": n})),
        any::<String>().prop_map(|s| json!({"content": s})),
    ];
    prop_oneof![
        proptest::collection::vec(any::<String>(), 0..4).prop_map(Block::Text),
        (
            "[A-Za-z_]{1,12}",
            input,
            proptest::collection::vec(0..64usize, 0..4)
        )
            .prop_map(|(name, input, cuts)| Block::ToolUse { name, input, cuts }),
        Just(Block::Thinking),
    ]
}

/// The events of a valid message with these blocks.
fn events(blocks: &[Block]) -> Vec<Value> {
    let mut out = vec![
        json!({"type": "message_start", "message": {"id": "msg_1", "usage": {"input_tokens": 5}}}),
    ];
    for (i, b) in blocks.iter().enumerate() {
        match b {
            Block::Text(parts) => {
                out.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}));
                for p in parts {
                    out.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": p}}));
                }
            }
            Block::ToolUse { name, input, cuts } => {
                out.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": {}}}));
                let text = input.to_string();
                let chars: Vec<char> = text.chars().collect();
                let mut at: Vec<usize> = cuts.iter().map(|c| c % (chars.len() + 1)).collect();
                at.sort_unstable();
                at.dedup();
                let mut last = 0;
                for c in at.into_iter().chain([chars.len()]) {
                    let piece: String = chars[last..c].iter().collect();
                    out.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": piece}}));
                    last = c;
                }
            }
            Block::Thinking => {
                out.push(json!({"type": "content_block_start", "index": i, "content_block": {"type": "thinking", "thinking": ""}}));
                out.push(json!({"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": "hmm"}}));
            }
        }
        out.push(json!({"type": "content_block_stop", "index": i}));
        if i % 2 == 1 {
            out.push(json!({"type": "ping"}));
        }
    }
    out.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}));
    out.push(json!({"type": "message_stop"}));
    out
}

/// SSE text for `events`, with the `event:` line or not, LF or CRLF.
fn sse(events: &[Value], event_lines: bool, crlf: bool) -> String {
    let nl = if crlf { "\r\n" } else { "\n" };
    let mut out = String::new();
    for e in events {
        if event_lines {
            out.push_str(&format!("event: {}{nl}", e["type"].as_str().unwrap_or("?")));
        }
        out.push_str(&format!("data: {e}{nl}{nl}"));
    }
    out
}

/// A change to one event of a valid stream.
#[derive(Debug, Clone)]
enum Mutation {
    Drop(prop::sample::Index),
    Duplicate(prop::sample::Index),
    Swap(prop::sample::Index, prop::sample::Index),
    RemoveField(prop::sample::Index, &'static str),
    Garbage(prop::sample::Index, String),
    Truncate(prop::sample::Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let idx = any::<prop::sample::Index>();
    prop_oneof![
        idx.clone().prop_map(Mutation::Drop),
        idx.clone().prop_map(Mutation::Duplicate),
        (idx.clone(), any::<prop::sample::Index>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        (
            idx.clone(),
            proptest::sample::select(
                &[
                    "index",
                    "type",
                    "delta",
                    "content_block",
                    "id",
                    "name",
                    "message"
                ][..]
            )
        )
            .prop_map(|(i, f)| Mutation::RemoveField(i, f)),
        (idx.clone(), any::<String>()).prop_map(|(i, g)| Mutation::Garbage(i, g)),
        idx.prop_map(Mutation::Truncate),
    ]
}

fn apply(events: &mut Vec<Value>, m: &Mutation) -> Option<String> {
    if events.is_empty() {
        return None;
    }
    match m {
        Mutation::Drop(i) => {
            events.remove(i.index(events.len()));
        }
        Mutation::Duplicate(i) => {
            let at = i.index(events.len());
            events.insert(at, events[at].clone());
        }
        Mutation::Swap(a, b) => {
            let (a, b) = (a.index(events.len()), b.index(events.len()));
            events.swap(a, b);
        }
        Mutation::RemoveField(i, f) => {
            let at = i.index(events.len());
            if let Some(obj) = events[at].as_object_mut() {
                obj.remove(*f);
            }
        }
        Mutation::Garbage(i, g) => {
            let at = i.index(events.len());
            events[at] = Value::String(g.clone());
        }
        // A stream cut short: the text up to a point.
        Mutation::Truncate(i) => {
            let text = sse(events, true, false);
            let cut = i.index(text.chars().count() + 1);
            return Some(text.chars().take(cut).collect());
        }
    }
    None
}

/// What a parser made of `text` fed in pieces cut at `cuts` (character offsets): the events,
/// then the error if there was one.
fn parse(text: &str, cuts: &[usize]) -> (Vec<StreamEvent>, Option<StreamError>) {
    let chars: Vec<char> = text.chars().collect();
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (chars.len() + 1)).collect();
    at.sort_unstable();
    at.dedup();
    let mut parser = AnthropicStream::new();
    let mut events = Vec::new();
    let mut last = 0;
    for c in at.into_iter().chain([chars.len()]) {
        let piece: String = chars[last..c].iter().collect();
        last = c;
        match parser.feed(&piece) {
            Ok(e) => events.extend(e),
            Err(e) => return (events, Some(e)),
        }
    }
    match parser.finish() {
        Ok(e) => {
            events.extend(e);
            (events, None)
        }
        Err(e) => (events, Some(e)),
    }
}

/// A stream as text: valid, mutated, or arbitrary.
fn stream_text() -> impl Strategy<Value = String> {
    let valid = (
        proptest::collection::vec(block(), 0..5),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(b, ev, crlf)| sse(&events(&b), ev, crlf));
    let mutated = (
        proptest::collection::vec(block(), 0..5),
        proptest::collection::vec(mutation(), 1..4),
        any::<bool>(),
    )
        .prop_map(|(b, ms, crlf)| {
            let mut ev = events(&b);
            for m in &ms {
                if let Some(text) = apply(&mut ev, m) {
                    return text;
                }
            }
            sse(&ev, true, crlf)
        });
    let noise = proptest::collection::vec(
        prop_oneof![
            Just("event: ".to_owned()),
            Just("data: ".to_owned()),
            Just("\n".to_owned()),
            Just("\r\n".to_owned()),
            Just(": comment\n".to_owned()),
            Just("{\"type\":\"message_stop\"}".to_owned()),
            Just("{\"type\":\"content_block_stop\",\"index\":0}".to_owned()),
            any::<String>(),
        ],
        0..12,
    )
    .prop_map(|v| v.concat());
    prop_oneof![3 => valid, 4 => mutated, 2 => noise, 1 => any::<String>()]
}

#[path = "../../../tests/support/fuzz.rs"]
mod fuzz_support;
use fuzz_support::fuzz;

#[test]
fn fuzz_sse_chunking_and_errors() {
    fuzz(
        file!(),
        1500,
        (
            stream_text(),
            proptest::collection::vec(any::<usize>(), 0..12),
        ),
        |(text, cuts)| {
            let whole = parse(&text, &[]);
            let chunked = parse(&text, &cuts);
            prop_assert_eq!(&whole, &chunked, "chunking changed the result");
            if let Some(e) = &whole.1 {
                prop_assert!(e.to_string().len() > 20, "an unclear error: {}", e);
            }
            Ok(())
        },
    );
}

#[test]
fn fuzz_sse_valid_streams_lose_no_tool_use() {
    fuzz(
        file!(),
        800,
        (
            proptest::collection::vec(block(), 0..6),
            any::<bool>(),
            any::<bool>(),
            proptest::collection::vec(any::<usize>(), 0..12),
        ),
        |(blocks, event_lines, crlf, cuts)| {
            let text = sse(&events(&blocks), event_lines, crlf);
            let (events, error) = parse(&text, &cuts);
            prop_assert!(error.is_none(), "a valid stream failed: {:?}", error);
            let got: Vec<_> = events
                .iter()
                .filter_map(|e| match e {
                    StreamEvent::ToolUse(t) => {
                        Some((t.id.clone(), t.name.clone(), t.input.clone()))
                    }
                    _ => None,
                })
                .collect();
            let expected: Vec<_> = blocks
                .iter()
                .enumerate()
                .filter_map(|(i, b)| match b {
                    Block::ToolUse { name, input, .. } => {
                        Some((format!("toolu_{i}"), name.clone(), input.clone()))
                    }
                    _ => None,
                })
                .collect();
            prop_assert_eq!(got, expected);
            prop_assert_eq!(events.last(), Some(&StreamEvent::MessageStop));
            Ok(())
        },
    );
}
