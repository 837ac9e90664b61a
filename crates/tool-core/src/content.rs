//! The tool_result content model, in the Anthropic Messages API's shape.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Largest image, decoded, a content block may carry: the Messages API refuses an image
/// whose base64 text is over 5 MiB (5,242,880 characters, 3,932,160 bytes decoded), and
/// one refused image fails every later request of the conversation.
pub const MAX_IMAGE_BYTES: usize = 3_932_160;

/// Largest side, in pixels, of an image the Messages API accepts.
pub const MAX_IMAGE_SIDE: usize = 8000;

/// Why an image cannot be passed to the model (see [`check_image`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ImageRejection {
    /// Over [`MAX_IMAGE_BYTES`].
    #[error("{size} bytes; the maximum is {MAX_IMAGE_BYTES} bytes")]
    TooLarge {
        /// The image's size in bytes.
        size: usize,
    },
    /// Over [`MAX_IMAGE_SIDE`] pixels on a side.
    #[error("{width}x{height} pixels; the maximum is {MAX_IMAGE_SIDE} on a side")]
    TooWide {
        /// Width in pixels.
        width: usize,
        /// Height in pixels.
        height: usize,
    },
    /// Not a JPEG, PNG, GIF or WebP image, by its first bytes.
    #[error("not a JPEG, PNG, GIF or WebP image")]
    UnknownFormat,
    /// The header does not give its size: truncated or corrupt (the API would refuse it).
    #[error("its header cannot be read (truncated or corrupt)")]
    Unreadable,
}

/// The media type of `head` (the first bytes of a file) when it is one of the image
/// formats the Messages API takes (PNG, JPEG, GIF, WebP), read from its magic bytes.
pub fn image_media_type(head: &[u8]) -> Option<&'static str> {
    if head.starts_with(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]) {
        Some("image/png")
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if head.len() >= 12 && &head[..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// Whether the Messages API will take `image` as an image block, and under which media
/// type: the type is read from the bytes (a label from a file name or a server may be
/// wrong, and the API refuses a mismatch), the size and the sides are within the API's
/// limits. One image the API refuses fails every later request of the conversation (the
/// block stays in the history), so every tool that returns images checks them here.
pub fn check_image(image: &[u8]) -> Result<&'static str, ImageRejection> {
    let media_type = image_media_type(image).ok_or(ImageRejection::UnknownFormat)?;
    if image.len() > MAX_IMAGE_BYTES {
        return Err(ImageRejection::TooLarge { size: image.len() });
    }
    // A header that does not give the size: the API would refuse the image too.
    let dim = imagesize::blob_size(image).map_err(|_| ImageRejection::Unreadable)?;
    if dim.width.max(dim.height) > MAX_IMAGE_SIDE {
        return Err(ImageRejection::TooWide {
            width: dim.width,
            height: dim.height,
        });
    }
    Ok(media_type)
}

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
    /// output)`, so the model never sees a blank result. Blank text blocks beside others
    /// (an image with an empty caption) are dropped: the Messages API refuses a text block
    /// that is empty or only whitespace, and the refused block would stay in the history.
    pub fn or_empty_notice(self, tool_name: &str) -> Self {
        if self.is_empty() {
            return Self::Text(empty_result_notice(tool_name));
        }
        match self {
            Self::Blocks(mut blocks) => {
                blocks.retain(
                    |b| !matches!(b, ContentBlock::Text { text } if text.trim().is_empty()),
                );
                Self::Blocks(blocks)
            }
            text => text,
        }
    }
}

/// The text that replaces an empty result: `(NAME completed with no output)`.
pub fn empty_result_notice(tool_name: &str) -> String {
    format!("({tool_name} completed with no output)")
}

/// Whether `c` can make a text read differently from what it is, where a person reads it
/// (a terminal, a diagnostic, a prompt): a control character (Unicode's Cc: C0, DEL, C1), a
/// format character (Cf: the soft hyphen, zero-width spaces and joiners, bidirectional
/// controls and isolates, the byte order mark, tag characters, ...), a line or paragraph
/// separator (Zl, Zp), or white space other than ASCII's (a no-break space, an ideographic
/// space). For hosts that show model- or server-written text and must escape or refuse such
/// characters: [`escape_controls`], [`escape_hidden`].
pub fn is_hidden_char(c: char) -> bool {
    c.is_control()
        || (c.is_whitespace() && !c.is_ascii())
        || matches!(c,
            '\u{00AD}' | '\u{0600}'..='\u{0605}' | '\u{061C}' | '\u{06DD}' | '\u{070F}'
            | '\u{0890}'..='\u{0891}' | '\u{08E2}' | '\u{180E}' | '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}'
            | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}' | '\u{110BD}' | '\u{110CD}'
            | '\u{13430}'..='\u{1343F}' | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0001}' | '\u{E0020}'..='\u{E007F}')
}

/// `text` with its hidden characters ([`is_hidden_char`]) but the line feed as visible
/// escapes (`\r`, `\t`, `\u{1b}`, `\u{200b}`), everything else as it is: for text of
/// several lines a person reads on a terminal, where a carriage return or an escape
/// sequence would rewrite the line and a zero-width character would hide a difference.
pub fn escape_controls(text: &str) -> String {
    escape(text, true)
}

/// `text` with every hidden character ([`is_hidden_char`]), the line feed too, as a visible
/// escape (`\n`, `\r`, `\t`, `\u{200b}`): for a name or a value a diagnostic quotes on one
/// line (a settings key, a server's name, a path), which must not print a line of its own
/// that passes for another message, or look like another name.
pub fn escape_hidden(text: &str) -> String {
    escape(text, false)
}

/// `text` with its control characters and the line and paragraph separators (U+2028,
/// U+2029) as visible escapes (`\n`, `\r`, `\t`, `\u{1b}`), everything else as it is: for
/// one line of a listing that is given back as it stands (a path a search found, which Read
/// must find again), where only what would break the line is escaped.
pub fn escape_line_breaks(text: &str) -> String {
    escape_where(text, false, |c| {
        c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
    })
}

fn escape(text: &str, keep_line_feeds: bool) -> String {
    escape_where(text, keep_line_feeds, is_hidden_char)
}

/// `text` with the characters `escaped` picks (the line feed kept when `keep_line_feeds`)
/// as visible escapes.
fn escape_where(text: &str, keep_line_feeds: bool, escaped: impl Fn(char) -> bool) -> String {
    if !text.chars().any(&escaped) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' if keep_line_feeds => out.push('\n'),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if escaped(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hidden characters become escapes; the line feed stays in text of several lines and
    /// is escaped in a name; visible text, letters of any script, stays as it is. Found by
    /// review: diagnostics printed a zero-width space in a settings key raw.
    #[test]
    fn hidden_characters_are_escaped() {
        assert_eq!(
            escape_controls("a\rb\tc\u{1b}[2J\u{200b}d\ne ä"),
            "a\\rb\\tc\\u{1b}[2J\\u{200b}d\ne ä"
        );
        for (c, shown) in [
            ('\u{200b}', "\\u{200b}"),
            ('\u{a0}', "\\u{a0}"),
            ('\u{3000}', "\\u{3000}"),
            ('\u{2028}', "\\u{2028}"),
            ('\u{2029}', "\\u{2029}"),
            ('\u{202e}', "\\u{202e}"),
            ('\u{feff}', "\\u{feff}"),
            ('\u{e0041}', "\\u{e0041}"),
            ('\u{fff9}', "\\u{fff9}"),
            ('\u{110bd}', "\\u{110bd}"),
            ('\u{1b}', "\\u{1b}"),
            ('\t', "\\t"),
            ('\n', "\\n"),
            ('\u{85}', "\\u{85}"),
        ] {
            assert_eq!(
                escape_hidden(&format!("a{c}b")),
                format!("a{shown}b"),
                "{c:?}"
            );
        }
        for text in ["permissions", "Bash(rm -rf /tmp/é中)", "a b", "\\(x\\)"] {
            assert_eq!(escape_hidden(text), text);
        }
    }

    #[test]
    fn images_are_checked_by_their_bytes_and_the_api_limits() {
        let png = |w: u32, h: u32| {
            let mut b = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
            b.extend_from_slice(b"IHDR");
            b.extend_from_slice(&w.to_be_bytes());
            b.extend_from_slice(&h.to_be_bytes());
            b.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
            b
        };
        assert_eq!(check_image(&png(8000, 8000)), Ok("image/png"));
        assert_eq!(
            check_image(&png(8001, 10)),
            Err(ImageRejection::TooWide {
                width: 8001,
                height: 10
            })
        );
        assert_eq!(
            check_image(&png(10, 9000)).unwrap_err().to_string(),
            "10x9000 pixels; the maximum is 8000 on a side"
        );
        assert_eq!(check_image(b"GIF89a\x01\0\x01\0\0\0\0"), Ok("image/gif"));
        // Only the signature: the API would refuse it.
        assert_eq!(
            check_image(&[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A]),
            Err(ImageRejection::Unreadable)
        );
        assert_eq!(check_image(b"GIF8"), Err(ImageRejection::UnknownFormat));
        assert_eq!(check_image(b"<svg/>"), Err(ImageRejection::UnknownFormat));
        let mut big = png(10, 10);
        big.resize(MAX_IMAGE_BYTES, 0);
        assert_eq!(check_image(&big), Ok("image/png"));
        big.push(0);
        assert_eq!(
            check_image(&big).unwrap_err().to_string(),
            "3932161 bytes; the maximum is 3932160 bytes"
        );
    }

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
        // Blank text beside other blocks is dropped (the API refuses blank text blocks).
        let captioned = ToolResultContent::Blocks(vec![
            ContentBlock::text(""),
            ContentBlock::image("image/png", "AAAA"),
            ContentBlock::text(" \n"),
            ContentBlock::text("caption"),
        ]);
        assert_eq!(
            captioned.or_empty_notice("mcp__x__shot"),
            ToolResultContent::Blocks(vec![
                ContentBlock::image("image/png", "AAAA"),
                ContentBlock::text("caption"),
            ])
        );
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
