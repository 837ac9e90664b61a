//! Review 38's finding on text blocks: the parser gave a response's text only as deltas,
//! with nothing where one text block ended and the next began, so every reader glued the
//! model's blocks into one ("Found the bug.It is in a.rs.").

use tool_exec::{AnthropicStream, StreamEvent};

/// A response of an empty text block, two text blocks (the second's first text in its
/// `content_block_start`, as a gateway may send it) and another empty one: a
/// `NextTextBlock` comes right before the second's first text, whatever the cut of the
/// input, and nowhere else (the first text has no block before it, an empty block no text).
#[test]
fn another_text_block_is_said_before_its_first_text() {
    let events = [
        r#"{"type":"message_start","message":{"id":"m"}}"#,
        r#"{"type":"content_block_start","index":9,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_stop","index":9}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Found "}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"the bug."}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"It is "}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"in a.rs."}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"message_stop"}"#,
    ];
    let text: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    for size in [1, 5, 64, text.len()] {
        let mut parser = AnthropicStream::new();
        let mut got = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        for chunk in chars.chunks(size) {
            got.extend(parser.feed(&chunk.iter().collect::<String>()).unwrap());
        }
        got.extend(parser.finish().unwrap());
        let texts: Vec<&StreamEvent> = got
            .iter()
            .filter(|e| matches!(e, StreamEvent::Text(_) | StreamEvent::NextTextBlock))
            .collect();
        assert_eq!(
            texts,
            [
                &StreamEvent::Text("Found ".into()),
                &StreamEvent::Text("the bug.".into()),
                &StreamEvent::NextTextBlock,
                &StreamEvent::Text("It is ".into()),
                &StreamEvent::Text("in a.rs.".into()),
            ],
            "chunk size {size}"
        );
    }
}
