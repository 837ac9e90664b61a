//! The tool_result content model, in the Anthropic Messages API's shape.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Largest image, decoded, a content block may carry: the Messages API refuses an image
/// whose base64 text is over 5 MiB (5,242,880 characters, 3,932,160 bytes decoded), and
/// one refused image fails every later request of the conversation.
pub const MAX_IMAGE_BYTES: usize = 3_932_160;

/// Largest side, in pixels, of an image the Messages API accepts.
pub const MAX_IMAGE_SIDE: usize = 8000;

/// One block of tool_result content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Where the image data is.
        source: ImageSource,
    },
    /// A reference to a deferred tool, which loads its schema (ToolSearch results).
    ToolReference {
        /// The tool's name.
        tool_name: String,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }

    /// An image block from base64 `data` of `media_type` (`image/png`, ...).
    pub fn image(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        Self::Image {
            source: ImageSource::Base64 {
                media_type: media_type.into(),
                data: data.into(),
            },
        }
    }
}

/// The source of an image block.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSource {
    /// Inline base64 data.
    Base64 {
        /// The MIME type.
        media_type: String,
        /// The base64 data.
        data: String,
    },
}

/// The content of a tool_result: a string or a list of blocks, as the API accepts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    /// Plain text.
    Text(String),
    /// Blocks (text, images, tool references).
    Blocks(Vec<ContentBlock>),
}

impl ToolResultContent {
    /// Renders a JSON value as content: a string stays text, anything else is compact JSON.
    pub fn from_json(value: &Value) -> Self {
        match value {
            Value::String(s) => Self::Text(s.clone()),
            Value::Null => Self::Text(String::new()),
            other => Self::Text(other.to_string()),
        }
    }

    /// Whether the content is empty in Claude Code's sense: an empty or whitespace-only
    /// string, no blocks, or only empty text blocks.
    pub fn is_empty(&self) -> bool {
        match self {
            Self::Text(s) => s.trim().is_empty(),
            Self::Blocks(blocks) => blocks
                .iter()
                .all(|b| matches!(b, ContentBlock::Text { text } if text.trim().is_empty())),
        }
    }

    /// Whether any block is an image (such content is never persisted to disk).
    pub fn has_image(&self) -> bool {
        matches!(self, Self::Blocks(blocks) if blocks.iter().any(|b| matches!(b, ContentBlock::Image { .. })))
    }

    /// The size used for the persistence threshold: the string's length, or the sum of the
    /// text blocks' lengths, in characters.
    pub fn text_len(&self) -> usize {
        match self {
            Self::Text(s) => s.chars().count(),
            Self::Blocks(blocks) => blocks
                .iter()
                .map(|b| match b {
                    ContentBlock::Text { text } => text.chars().count(),
                    _ => 0,
                })
                .sum(),
        }
    }

    /// The size of the text in bytes (text blocks summed; images and references skipped),
    /// without copying it.
    pub fn text_bytes(&self) -> usize {
        match self {
            Self::Text(s) => s.len(),
            Self::Blocks(blocks) => blocks
                .iter()
                .map(|b| match b {
                    ContentBlock::Text { text } => text.len(),
                    _ => 0,
                })
                .sum(),
        }
    }

    /// All text of the content, blocks joined by newlines (images and references skipped).
    pub fn joined_text(&self) -> String {
        match self {
            Self::Text(s) => s.clone(),
            Self::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// A `tool_result` block for the next user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResultBlock {
    /// The id of the tool_use this answers.
    pub tool_use_id: String,
    /// The content.
    pub content: ToolResultContent,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

impl ToolResultBlock {
    /// A successful result; applies the empty-result rule with `tool_name`.
    pub fn success(
        tool_use_id: impl Into<String>,
        tool_name: &str,
        content: ToolResultContent,
    ) -> Self {
        Self {
            tool_use_id: tool_use_id.into(),
            content: content.or_empty_notice(tool_name),
            is_error: false,
        }
    }

    /// A failed result with `text` for the model.
    pub fn error(tool_use_id: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            tool_use_id: tool_use_id.into(),
            content: ToolResultContent::Text(text.into()),
            is_error: true,
        }
    }

    /// The API's JSON for this block (`{"type":"tool_result", ...}`).
    pub fn to_api_json(&self) -> Value {
        let mut value = serde_json::json!({
            "type": "tool_result",
            "tool_use_id": self.tool_use_id,
            "content": self.content,
        });
        if self.is_error {
            value["is_error"] = Value::Bool(true);
        }
        value
    }
}

impl ToolResultContent {
    /// Claude Code's empty-result rule: empty content becomes `(NAME completed with no
    /// output)`, so the model never sees a blank result.
    pub fn or_empty_notice(self, tool_name: &str) -> Self {
        if self.is_empty() {
            Self::Text(empty_result_notice(tool_name))
        } else {
            self
        }
    }
}

/// The text that replaces an empty result: `(NAME completed with no output)`.
pub fn empty_result_notice(tool_name: &str) -> String {
    format!("({tool_name} completed with no output)")
}

/// Whether `c` can make a text read differently from what it is: a control character (C0,
/// DEL, C1) or an invisible formatting one (soft hyphen, zero-width characters, bidirectional
/// controls and isolates, word joiners, line and paragraph separators, the byte-order mark).
/// For hosts that show model- or server-written text to a person and must escape or refuse
/// such characters.
pub fn is_hidden_char(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_rule_covers_every_empty_shape() {
        for content in [
            ToolResultContent::Text("  \n".into()),
            ToolResultContent::Blocks(vec![]),
            ToolResultContent::Blocks(vec![ContentBlock::text(""), ContentBlock::text(" ")]),
        ] {
            let block = ToolResultBlock::success("id1", "Bash", content);
            assert_eq!(
                block.content,
                ToolResultContent::Text("(Bash completed with no output)".into())
            );
        }
        let kept = ToolResultBlock::success("id1", "Bash", ToolResultContent::Text("ok".into()));
        assert_eq!(kept.content, ToolResultContent::Text("ok".into()));
        let image = ToolResultContent::Blocks(vec![ContentBlock::image("image/png", "AAAA")]);
        assert!(!image.is_empty());
        assert!(image.has_image());
    }

    #[test]
    fn api_json_shape() {
        let block = ToolResultBlock::error("toolu_1", "nope");
        assert_eq!(
            block.to_api_json(),
            serde_json::json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "nope", "is_error": true})
        );
        let blocks = ToolResultContent::Blocks(vec![
            ContentBlock::text("a"),
            ContentBlock::ToolReference {
                tool_name: "Read".into(),
            },
        ]);
        assert_eq!(
            serde_json::to_value(&blocks).unwrap(),
            serde_json::json!([{"type": "text", "text": "a"}, {"type": "tool_reference", "tool_name": "Read"}])
        );
        assert_eq!(blocks.text_len(), 1);
    }
}
