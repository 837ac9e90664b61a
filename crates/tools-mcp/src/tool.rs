//! [`McpTool`]: one remote tool as an ordinary [`Tool`].

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};
use tool_core::{
    ContentBlock, InterruptBehavior, MaxResultSize, McpMeta, McpToolInfo, ProgressSender, Tool,
    ToolError, ToolOutput, ToolResult, ToolResultContent, ToolUseContext,
};

use crate::client::ServerConn;
use crate::naming::mcp_tool_name;
use crate::schema::prepare_mcp_input_schema;

/// Default persistence threshold of MCP results, in characters.
pub const DEFAULT_MAX_RESULT_CHARS: usize = 100_000;
/// Ceiling of a tool's `_meta["anthropic/maxResultSizeChars"]`.
pub const MAX_RESULT_CHARS_CEILING: usize = 500_000;
/// Tokens counted for one image against `MAX_MCP_OUTPUT_TOKENS` (an estimate; the API
/// charges by pixel count, about 1,600 tokens for a large image).
pub const IMAGE_TOKEN_ESTIMATE: usize = 1_600;

/// A tool of an MCP server, wrapped as a Toolwright [`Tool`]. Created by
/// [`McpManager`](crate::McpManager); hosts only see it as `Arc<dyn Tool>`.
///
/// Annotations are hints: `readOnlyHint` makes the tool read-only and concurrency-safe for
/// scheduling, never allowed without a permission check (the base permission check is a
/// passthrough).
pub struct McpTool {
    name: String,
    server: Arc<ServerConn>,
    tool_name: String,
    title: Option<String>,
    description: String,
    schema: Value,
    /// `(name the model uses, name on the server)` of the top-level properties renamed for
    /// the model API: arguments go back to the server's names before they are sent.
    renamed: Vec<(String, String)>,
    read_only: bool,
    destructive: bool,
    open_world: bool,
    idempotent: bool,
    requires_user_interaction: bool,
    always_load: bool,
    max_result_chars: usize,
    /// The tool's own `anthropic/maxResultSizeChars`: its text limit where it is above
    /// `MAX_MCP_OUTPUT_TOKENS`.
    own_max_chars: Option<usize>,
    search_hint: Option<String>,
}

impl fmt::Debug for McpTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .field("server", &self.server.name())
            .field("tool_name", &self.tool_name)
            .finish_non_exhaustive()
    }
}

impl McpTool {
    /// Builds the wrapper from the server's `Tool` JSON (`name`, `description`,
    /// `inputSchema`, `annotations`, `_meta`). `Err` says why its input schema cannot be
    /// made sane for the model API (the tool is then left out: one bad schema would fail
    /// every request).
    pub(crate) fn new(server: Arc<ServerConn>, raw: &Value) -> Result<Self, String> {
        let tool_name = raw["name"].as_str().unwrap_or_default().to_owned();
        let input = prepare_mcp_input_schema(&raw["inputSchema"])?;
        let annotations = &raw["annotations"];
        let meta = &raw["_meta"];
        let hint = |k: &str| annotations[k].as_bool().unwrap_or(false);
        let own_max_chars = meta["anthropic/maxResultSizeChars"]
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(|n| n.clamp(1, MAX_RESULT_CHARS_CEILING));
        let max_result_chars = own_max_chars.unwrap_or(DEFAULT_MAX_RESULT_CHARS);
        let title = raw["title"]
            .as_str()
            .or_else(|| annotations["title"].as_str())
            .map(str::to_owned);
        Ok(Self {
            name: mcp_tool_name(server.name(), &tool_name),
            tool_name,
            title,
            description: raw["description"].as_str().unwrap_or_default().to_owned(),
            schema: input.schema,
            renamed: input.renamed,
            read_only: hint("readOnlyHint"),
            destructive: hint("destructiveHint"),
            open_world: hint("openWorldHint"),
            idempotent: hint("idempotentHint"),
            requires_user_interaction: meta["anthropic/requiresUserInteraction"]
                == Value::Bool(true),
            always_load: meta["anthropic/alwaysLoad"] == Value::Bool(true)
                || server.config.always_load,
            max_result_chars,
            own_max_chars,
            search_hint: meta["anthropic/searchHint"].as_str().map(str::to_owned),
            server,
        })
    }

    /// The arguments under the server's own property names (see
    /// [`McpInputSchema::renamed`](crate::schema::McpInputSchema::renamed)).
    fn server_arguments(&self, mut arguments: Map<String, Value>) -> Map<String, Value> {
        for (model, server) in &self.renamed {
            if let Some(value) = arguments.remove(model) {
                arguments.insert(server.clone(), value);
            }
        }
        arguments
    }

    /// The tool's name on its server (what `tools/call` sends).
    pub fn remote_name(&self) -> &str {
        &self.tool_name
    }

    /// The configured name of its server.
    pub fn server_name(&self) -> &str {
        self.server.name()
    }
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn mcp_info(&self) -> Option<McpToolInfo> {
        Some(McpToolInfo {
            server_name: self.server.name().to_owned(),
            tool_name: self.tool_name.clone(),
            source: Some(self.server.config.scope.to_string()),
        })
    }

    fn input_schema(&self) -> Value {
        self.schema.clone()
    }

    fn description(&self) -> Cow<'_, str> {
        if self.description.is_empty() {
            Cow::Owned(format!(
                "Tool {} of MCP server {}",
                self.tool_name,
                self.server.name()
            ))
        } else {
            Cow::Borrowed(&self.description)
        }
    }

    fn search_hint(&self) -> Option<&str> {
        self.search_hint.as_deref()
    }

    fn user_facing_name(&self, _input: &Value) -> String {
        let shown = self.title.as_deref().unwrap_or(&self.tool_name);
        format!("{} - {shown} (MCP)", self.server.name())
    }

    fn should_defer(&self) -> bool {
        !self.always_load
    }

    fn always_load(&self) -> bool {
        self.always_load
    }

    /// The tool's own `maxResultSizeChars`, else the server's token limit (at 4 characters
    /// a token) or [`DEFAULT_MAX_RESULT_CHARS`], whichever is lower: the pipeline saves a
    /// text result over it whole to a file and shows its head and tail.
    fn max_result_size(&self) -> MaxResultSize {
        MaxResultSize::Chars(self.own_max_chars.unwrap_or_else(|| {
            self.max_result_chars
                .min(self.server.max_output_tokens().saturating_mul(4))
                .max(1)
        }))
    }

    /// MCP output is not validated (Claude Code's rule): any replacement is shown. The
    /// shape the hook was given (the content blocks, `[{"type": "text", "text": …}]`), or a
    /// whole `CallToolResult` (`{"content": [...]}`), is shown as the server's own content
    /// would be; anything else as given (a string as text, other JSON as its text).
    fn render_output(&self, output: &Value) -> Option<ToolResultContent> {
        let blocks = match output {
            Value::Array(items) => Some(items),
            Value::Object(o) => o.get("content").and_then(Value::as_array),
            _ => None,
        }
        .filter(|items| {
            !items.is_empty()
                && items
                    .iter()
                    .all(|b| b.get("type").is_some_and(Value::is_string))
        });
        Some(match blocks {
            Some(items) => {
                let mut blocks: Vec<ContentBlock> = items.iter().map(map_block).collect();
                match blocks.as_mut_slice() {
                    [ContentBlock::Text { text }] => ToolResultContent::Text(std::mem::take(text)),
                    _ => ToolResultContent::Blocks(blocks),
                }
            }
            None => ToolResultContent::from_json(output),
        })
    }

    fn interrupt_behavior(&self) -> InterruptBehavior {
        // The call can be cancelled cleanly: `notifications/cancelled` is sent.
        InterruptBehavior::Cancel
    }

    fn requires_user_interaction(&self) -> bool {
        self.requires_user_interaction
    }

    fn is_concurrency_safe(&self, _input: &Value) -> bool {
        self.read_only
    }

    fn is_read_only(&self, _input: &Value) -> bool {
        self.read_only
    }

    fn is_destructive(&self, _input: &Value) -> bool {
        self.destructive
    }

    fn is_open_world(&self, _input: &Value) -> bool {
        self.open_world
    }

    fn is_idempotent(&self, _input: &Value) -> bool {
        self.idempotent
    }

    async fn call(
        &self,
        input: Value,
        ctx: ToolUseContext,
        progress: ProgressSender,
    ) -> Result<ToolResult, ToolError> {
        let arguments = match input {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Err(ToolError::msg(format!(
                    "{}: input must be a JSON object, got {}",
                    self.name,
                    tool_core::json_type(&other)
                )));
            }
        };
        let arguments = self.server_arguments(arguments);
        let raw = self
            .server
            .call_tool(&self.tool_name, arguments, ctx.cancellation(), progress)
            .await?;
        // Only a result with images is cut (images are never saved to a file): at the
        // server's token limit, or at the tool's own size when that is larger.
        let server_max = self.server.max_output_tokens();
        let max_tokens = self
            .own_max_chars
            .map_or(server_max, |chars| chars.div_ceil(4).max(server_max));
        map_call_result(self.server.name(), &self.tool_name, &raw, max_tokens)
    }
}

/// A JSON value a server sent where another type belongs, for a message: `the string
/// "yes"`, `the number 2`, `an array`.
pub(crate) fn described(value: &Value) -> String {
    match value {
        // A long string is shown as `a string`.
        Value::String(_) => match tool_core::shown_setting(value) {
            quoted if quoted.starts_with('"') => format!("the string {quoted}"),
            other => other,
        },
        Value::Number(n) => format!("the number {n}"),
        other => tool_core::shown_setting(other),
    }
}

/// Maps a `CallToolResult` (as JSON) to a tool result: text, images, resource links and
/// embedded resources become content blocks (without them, a legacy `toolResult` or else
/// `structuredContent` is shown as text); `structuredContent` and `_meta` go to
/// [`McpMeta`]. [`ToolOutput::structured`], what hooks see, is the raw `content` array, or
/// the text shown in its place when it is empty. `isError: true` (or any value but a
/// boolean) becomes `Err` with the server's text. Output with images over `max_tokens` (estimated at 4 characters a token,
/// [`IMAGE_TOKEN_ESTIMATE`] an image) is cut with a note. Text alone is left whole, as Claude
/// Code leaves it: the pipeline
/// saves what is over the tool's [`max_result_size`](Tool::max_result_size) to a file and
/// shows its head and tail, so the end of a long log is not lost.
pub fn map_call_result(
    server: &str,
    tool: &str,
    raw: &Value,
    max_tokens: usize,
) -> Result<ToolResult, ToolError> {
    let content = raw["content"].as_array().cloned().unwrap_or_default();
    let mut blocks: Vec<ContentBlock> = content.iter().map(map_block).collect();
    // What hooks see (`tool_response`): the raw `content` array, or, when there is none to
    // show and the model is shown a legacy `toolResult` or the `structuredContent` as text,
    // that same text, as Claude Code's `transformMCPResult` gives its hooks (a hook that
    // audits or redacts MCP output must see what the model sees).
    let mut hook_output = None;
    // The result of servers older than `content` (`toolResult`): its value as text, as
    // Claude Code shows it (`String(result.toolResult)`; here a non-string as JSON).
    if blocks.is_empty()
        && let Some(legacy) = raw.get("toolResult").filter(|v| !v.is_null())
    {
        let text = match legacy {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        hook_output = Some(Value::String(text.clone()));
        blocks.push(ContentBlock::text(text));
    }
    // `isError` is a boolean in MCP's schema. Another value (`"yes"`, `"true"`, `1`) is no
    // success: the TypeScript SDK (Claude Code's client) refuses such a result whole, and
    // rmcp does not read it as a `CallToolResult` either. Taken as an error, the server's
    // text is still shown, with a note saying what was wrong (a server that meant "no error"
    // with `"false"` gets told too).
    let (is_error, wrong_flag) = match raw.get("isError") {
        None | Some(Value::Null) => (false, None),
        Some(Value::Bool(flag)) => (*flag, None),
        Some(other) => (
            true,
            Some(format!(
                "[MCP server \"{}\": tool \"{}\" returned a result whose `isError` is \
                 {}, not true or false; it is taken as an error]",
                tool_core::escape_hidden(server),
                tool_core::escape_hidden(tool),
                described(other)
            )),
        ),
    };
    if is_error {
        let text = ToolResultContent::Blocks(blocks).joined_text();
        // A server that gives its error only as `structuredContent` still says what it was.
        let text = match raw.get("structuredContent") {
            _ if !text.trim().is_empty() => text,
            Some(sc) if !sc.is_null() => sc.to_string(),
            _ if wrong_flag.is_some() => String::new(),
            _ => format!(
                "MCP server \"{}\": tool \"{}\" reported an error without a message",
                tool_core::escape_hidden(server),
                tool_core::escape_hidden(tool)
            ),
        };
        let text = match wrong_flag {
            Some(note) if text.is_empty() => note,
            Some(note) => format!("{text}\n{note}"),
            None => text,
        };
        return Err(ToolError::msg(text));
    }
    let structured_content = raw.get("structuredContent").cloned();
    if blocks.is_empty()
        && let Some(sc) = &structured_content
    {
        let text = sc.to_string();
        hook_output = Some(Value::String(text.clone()));
        blocks.push(ContentBlock::text(text));
    }
    let has_image = blocks
        .iter()
        .any(|b| matches!(b, ContentBlock::Image { .. }));
    let blocks = if has_image {
        apply_token_limit(blocks, max_tokens)
    } else {
        blocks
    };
    let content_out = match blocks.as_slice() {
        [ContentBlock::Text { text }] => ToolResultContent::Text(text.clone()),
        _ => ToolResultContent::Blocks(blocks),
    };
    let mut result = ToolResult::new(ToolOutput {
        content: content_out,
        structured: hook_output.unwrap_or(Value::Array(content)),
    });
    let meta = raw.get("_meta").cloned();
    if meta.is_some() || structured_content.is_some() {
        result.mcp_meta = Some(McpMeta {
            meta,
            structured_content,
        });
    }
    Ok(result)
}

/// An image from a server as the model API will take it, or a note saying why it is not
/// passed on ([`tool_core::check_image`]: JPEG, PNG, GIF and WebP within the API's limits;
/// one image it refuses fails every later request of the conversation, as the block stays
/// in the history). The type is read from the bytes (a server's `mimeType` may be wrong)
/// and the data is re-encoded as plain base64.
fn image_block(mime: &str, data: &str) -> ContentBlock {
    use base64::Engine as _;
    let omitted = |why: &str| {
        ContentBlock::text(format!(
            "[Image ({}, {} base64 characters) omitted: {why}]",
            if mime.is_empty() { "no type" } else { mime },
            data.len()
        ))
    };
    // Before decoding: far too long whatever whitespace it holds.
    if data.len() / 2 > tool_core::MAX_IMAGE_BYTES {
        return omitted(
            &tool_core::ImageRejection::TooLarge {
                size: data.len() / 4 * 3,
            }
            .to_string(),
        );
    }
    let Some(bytes) = crate::resources::decode_base64(data) else {
        return omitted("its data is not valid base64");
    };
    match tool_core::check_image(&bytes) {
        Ok(media_type) => ContentBlock::image(
            media_type,
            base64::engine::general_purpose::STANDARD.encode(&bytes),
        ),
        Err(why) => omitted(&why.to_string()),
    }
}

fn map_block(block: &Value) -> ContentBlock {
    let s = |k: &str| block[k].as_str().unwrap_or_default();
    match s("type") {
        "text" => match block["text"].as_str() {
            Some(text) => ContentBlock::text(text),
            // Shown as an unsupported block is, rather than taken for no output.
            None => ContentBlock::text(format!(
                "[Malformed MCP text content (its \"text\" is not a string)]: {block}"
            )),
        },
        "image" => image_block(s("mimeType"), s("data")),
        "audio" => ContentBlock::text(format!(
            "[Audio content ({}, {} base64 characters) is not supported and was omitted]",
            s("mimeType"),
            s("data").len()
        )),
        "resource_link" => {
            let mut text = format!("[Resource link: {}] {}", s("name"), s("uri"));
            if let Some(mime) = block["mimeType"].as_str() {
                text.push_str(&format!(" ({mime})"));
            }
            if let Some(desc) = block["description"].as_str() {
                text.push_str(&format!(": {desc}"));
            }
            ContentBlock::text(text)
        }
        "resource" => {
            let res = &block["resource"];
            let uri = res["uri"].as_str().unwrap_or_default();
            let mime = res["mimeType"].as_str();
            if let Some(text) = res["text"].as_str() {
                ContentBlock::text(format!("[Resource from {uri}]\n{text}"))
            } else if let Some(blob) = res["blob"].as_str() {
                match mime {
                    Some(m) if m.starts_with("image/") => image_block(m, blob),
                    _ => ContentBlock::text(format!(
                        "[Binary resource {uri} ({}), {} base64 characters, omitted]",
                        mime.unwrap_or("unknown type"),
                        blob.len()
                    )),
                }
            } else {
                ContentBlock::text(format!("[Resource {uri}]"))
            }
        }
        other => ContentBlock::text(format!(
            "[Unsupported MCP content type \"{other}\"]: {block}"
        )),
    }
}

/// The note appended when a result exceeds `MAX_MCP_OUTPUT_TOKENS`.
pub fn truncation_note(max_tokens: usize) -> String {
    format!(
        "[OUTPUT TRUNCATED - exceeded {max_tokens} token limit]\n\nThe tool output was truncated. \
         If this MCP server provides pagination or filtering tools, use them to retrieve \
         specific portions of the data. The limit can be raised with MAX_MCP_OUTPUT_TOKENS."
    )
}

/// The note that takes the place of images left out because no image fitted beside the
/// text within `max_tokens`.
fn images_left_out_note(count: usize, max_tokens: usize) -> String {
    let what = if count == 1 {
        "1 image was".to_owned()
    } else {
        format!("{count} images were")
    };
    format!(
        "[{what} left out: with them the output exceeded the {max_tokens} token limit. \
         The limit can be raised with MAX_MCP_OUTPUT_TOKENS.]"
    )
}

/// Cuts content with images to `max_tokens` (4 characters a token, an image
/// [`IMAGE_TOKEN_ESTIMATE`]) and appends [`truncation_note`]. When no image would be kept,
/// the images are left out instead, with a note after the text in the one text block, and
/// the text is kept whole: without images the result is text, which the pipeline saves
/// whole to a file when it is large (the pipeline never saves a result with images; a cut
/// one saved would pass for the full output).
fn apply_token_limit(blocks: Vec<ContentBlock>, max_tokens: usize) -> Vec<ContentBlock> {
    let budget_chars = max_tokens.saturating_mul(4);
    let image_chars = IMAGE_TOKEN_ESTIMATE * 4;
    let total: usize = blocks
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.chars().count(),
            _ => image_chars,
        })
        .sum();
    if total <= budget_chars {
        return blocks;
    }
    // Whether an image comes before the budget runs out (text before it counted whole).
    let mut before = 0usize;
    let mut image_fits = false;
    for block in &blocks {
        match block {
            ContentBlock::Text { text } => before = before.saturating_add(text.chars().count()),
            _ if before.saturating_add(image_chars) <= budget_chars => {
                image_fits = true;
                break;
            }
            _ => break,
        }
    }
    if !image_fits {
        let images = blocks
            .iter()
            .filter(|b| !matches!(b, ContentBlock::Text { .. }))
            .count();
        // One text block, the note after a blank line: a single text is saved line by line
        // (two blocks would be saved as a JSON array, one long line to a Read).
        let mut text = blocks
            .into_iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&images_left_out_note(images, max_tokens));
        return vec![ContentBlock::text(text)];
    }
    let mut left = budget_chars;
    let mut out = Vec::new();
    for block in blocks {
        match block {
            ContentBlock::Text { text } => {
                let n = text.chars().count();
                if n <= left {
                    left -= n;
                    out.push(ContentBlock::Text { text });
                } else {
                    let cut: String = text.chars().take(left).collect();
                    if !cut.is_empty() {
                        out.push(ContentBlock::text(cut));
                    }
                    break;
                }
            }
            other => {
                if image_chars <= left {
                    left -= image_chars;
                    out.push(other);
                } else {
                    break;
                }
            }
        }
    }
    out.push(ContentBlock::text(truncation_note(max_tokens)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_blocks_and_errors() {
        let raw = json!({
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "image", "mimeType": "image/png", "data": "AAAA"},
                {"type": "resource_link", "uri": "file:///x", "name": "x", "mimeType": "text/plain"},
                {"type": "resource", "resource": {"uri": "demo://a", "text": "body"}}
            ],
            "structuredContent": {"n": 1}
        });
        let r = map_call_result("s", "t", &raw, 25_000).unwrap();
        let ToolResultContent::Blocks(b) = &r.data.content else {
            panic!("blocks expected")
        };
        assert_eq!(b.len(), 4);
        assert_eq!(
            b[2],
            ContentBlock::text("[Resource link: x] file:///x (text/plain)")
        );
        assert_eq!(b[3], ContentBlock::text("[Resource from demo://a]\nbody"));
        assert_eq!(
            r.mcp_meta.unwrap().structured_content,
            Some(json!({"n": 1}))
        );
        let err = map_call_result(
            "s",
            "t",
            &json!({"isError": true, "content": [{"type": "text", "text": "bad"}]}),
            25_000,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "bad");
        // An error given only as structured content still says what it was.
        let err = map_call_result(
            "s",
            "t",
            &json!({"isError": true, "content": [], "structuredContent": {"error": "quota"}}),
            25_000,
        )
        .unwrap_err();
        assert_eq!(err.to_string(), r#"{"error":"quota"}"#);
        let err = map_call_result("s", "t", &json!({"isError": true}), 25_000).unwrap_err();
        assert!(err.to_string().contains("without a message"), "{err}");
    }

    fn b64(bytes: &[u8]) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(bytes)
    }

    /// The first bytes of a `w` x `h` PNG (enough for the size check).
    fn png_header(w: u32, h: u32) -> Vec<u8> {
        let mut b = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13];
        b.extend_from_slice(b"IHDR");
        b.extend_from_slice(&w.to_be_bytes());
        b.extend_from_slice(&h.to_be_bytes());
        b.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
        b
    }

    #[test]
    fn images_the_api_would_refuse_become_notes() {
        let png = [
            &[0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A][..],
            &[0; 16],
        ]
        .concat();
        // A real PNG labelled wrongly, with line breaks in its base64: passed on as PNG.
        let wrapped = {
            let plain = b64(&png);
            format!("{}\n{}", &plain[..10], &plain[10..])
        };
        match image_block("image/jpeg", &wrapped) {
            ContentBlock::Image {
                source: tool_core::ImageSource::Base64 { media_type, data },
            } => {
                assert_eq!(media_type, "image/png");
                assert_eq!(data, b64(&png));
            }
            other => panic!("{other:?}"),
        }
        let note = |mime: &str, data: &str| match image_block(mime, data) {
            ContentBlock::Text { text } => text,
            other => panic!("{other:?}"),
        };
        assert!(
            note("image/svg+xml", &b64(b"<svg/>")).contains("not a JPEG, PNG, GIF or WebP image")
        );
        assert!(note("image/png", "not base64 at all!").contains("not valid base64"));
        // Over 8000 pixels on a side: the API would refuse it.
        let header = png_header;
        assert!(note("image/png", &b64(&header(9000, 10))).contains("9000x10 pixels"));
        assert!(matches!(
            image_block("image/png", &b64(&header(8000, 8000))),
            ContentBlock::Image { .. }
        ));
        let huge = [&png[..], &vec![0; tool_core::MAX_IMAGE_BYTES]].concat();
        assert!(note("image/png", &b64(&huge)).contains(&format!(
            "{} bytes; the maximum is 3932160 bytes",
            huge.len()
        )));
        // The limit is on the base64 text: 4,000,000 bytes are 5,333,336 characters.
        let over = [&png[..], &vec![0; 4_000_000 - png.len()]].concat();
        assert!(note("image/png", &b64(&over)).contains("the maximum is 3932160 bytes"));
        let at = [&png[..], &vec![0; tool_core::MAX_IMAGE_BYTES - png.len()]].concat();
        assert!(matches!(
            image_block("image/png", &b64(&at)),
            ContentBlock::Image { .. }
        ));
        // The same check for an image resource.
        let raw = json!({"content": [{"type": "resource", "resource": {"uri": "x://i", "mimeType": "image/bmp", "blob": b64(b"BM....")}}]});
        let r = map_call_result("s", "t", &raw, 25_000).unwrap();
        assert!(
            r.data.content.joined_text().contains("omitted"),
            "{:?}",
            r.data.content
        );
    }

    #[test]
    fn limits_output_with_images_and_leaves_text_whole() {
        let png = b64(&png_header(10, 10));
        let raw = json!({"content": [
            {"type": "image", "mimeType": "image/png", "data": png},
            {"type": "text", "text": "x".repeat(10_000)},
        ]});
        // 2,000 tokens: the image counts 1,600, so 400 tokens (1,600 characters) of text.
        let r = map_call_result("s", "t", &raw, 2_000).unwrap();
        let text = r.data.content.joined_text();
        assert!(text.starts_with(&"x".repeat(1_600)));
        assert!(!text.contains(&"x".repeat(1_601)));
        assert!(text.contains("[OUTPUT TRUNCATED - exceeded 2000 token limit]"));
        // Text alone is not cut here: the pipeline saves it to a file, tail included.
        let raw = json!({"content": [{"type": "text", "text": "x".repeat(1000) + "END"}]});
        let r = map_call_result("s", "t", &raw, 100).unwrap();
        assert_eq!(r.data.content.joined_text(), "x".repeat(1000) + "END");
    }

    /// Text over the limit followed by an image: no image fits beside the text, so the
    /// images are left out with a note and the text is kept whole. Without images the result
    /// is text, which the pipeline saves whole to a file; cut here, the cut text was what
    /// the pipeline saved, and the model was told the full output was in that file. The note
    /// goes inside the one text block (after a blank line): two text blocks would be saved
    /// as a JSON array, one long line to a Read, instead of the text line by line.
    #[test]
    fn images_that_do_not_fit_are_left_out_and_the_text_kept_whole() {
        let png = b64(&png_header(10, 10));
        let text = "x".repeat(120_000) + "END";
        let raw = json!({"content": [
            {"type": "text", "text": text},
            {"type": "image", "mimeType": "image/png", "data": png},
            {"type": "image", "mimeType": "image/png", "data": png},
        ]});
        let r = map_call_result("s", "t", &raw, 25_000).unwrap();
        let ToolResultContent::Text(joined) = &r.data.content else {
            panic!("one text expected, got blocks")
        };
        assert!(
            joined.starts_with(&format!("{text}\n\n[")),
            "the text was cut"
        );
        assert!(
            joined.ends_with(
                "[2 images were left out: with them the output exceeded the 25000 token limit. \
                 The limit can be raised with MAX_MCP_OUTPUT_TOKENS.]"
            ),
            "{}",
            &joined[text.len()..]
        );
        assert!(!joined.contains("OUTPUT TRUNCATED"));

        // Several text blocks become one text, in their order, the note after them.
        let raw = json!({"content": [
            {"type": "text", "text": text},
            {"type": "image", "mimeType": "image/png", "data": png},
            {"type": "text", "text": "last"},
        ]});
        let r = map_call_result("s", "t", &raw, 25_000).unwrap();
        let ToolResultContent::Text(joined) = &r.data.content else {
            panic!("one text expected, got blocks")
        };
        assert!(
            joined.starts_with(&format!("{text}\nlast\n\n[1 image was left out")),
            "{}",
            &joined[text.len()..]
        );
    }
}
