//! Our tools, results and progress reports in MCP's shapes.

use serde_json::{Value, json};
use tool_core::{ContentBlock, ImageSource, Tool, ToolResultContent};

/// The MCP `tools/list` entry of a tool: its name, the model-facing prompt as description,
/// the input schema exactly as a model API gets it, and annotations from its safety flags.
///
/// The flags are per input, so they are read on a probe: the smallest input the schema
/// accepts (each required field with a placeholder of its type). A tool whose flags hold
/// whatever the input (Read is read-only, Write destructive, WebFetch open-world) gets its
/// own answer; a tool whose flags depend on the input (Bash) gets the answer for an unknown
/// command, which is the cautious one (not read-only, destructive). A built-in tool gets no
/// `idempotentHint`: no flag says it.
///
/// MCP's defaults are the cautious answers (`destructiveHint` and `openWorldHint` true), and
/// some clients approve on these hints: `destructiveHint` is sent only when true (its
/// `false` means "only additive updates", which no flag says). An upstream MCP tool's flags say only what its
/// server stated, so for it only the hints that are `true` are sent: one the server did not
/// state stays absent, never turned into a `false` that reads as "safe". Its
/// `idempotentHint: true` is passed on too ([`Tool::is_idempotent`]). Its `title` is the name
/// it is served under (`mcp__server__tool`), as for every tool, not its server's own title.
pub fn tool_entry(tool: &dyn Tool) -> Value {
    let schema = tool.input_schema();
    let probe = tool_core::schema::probe_input(&schema);
    let read_only = tool.is_read_only(&probe);
    let open_world = tool.is_open_world(&probe);
    let destructive = tool.is_destructive(&probe);
    let stated = |hint: bool| !tool.is_mcp() || hint;
    let mut annotations = json!({"title": tool.name()});
    if stated(read_only) {
        annotations["readOnlyHint"] = json!(read_only);
    }
    if stated(open_world) {
        annotations["openWorldHint"] = json!(open_world);
    }
    // MCP reads destructiveHint only for tools that are not read-only, and its `false`
    // says more than our flag: "only additive updates". A tool that destroys no data may
    // still do what cannot be undone (TaskStop kills a process, CronDelete drops a job),
    // so only `true` is stated; otherwise MCP's default (true) stands.
    if !read_only && destructive {
        annotations["destructiveHint"] = json!(true);
    }
    if tool.is_mcp() && tool.is_idempotent(&probe) {
        annotations["idempotentHint"] = json!(true);
    }
    json!({
        "name": tool.name(),
        "description": tool.prompt(),
        "inputSchema": schema,
        "annotations": annotations,
    })
}

/// Our tool_result content as MCP content blocks.
pub fn mcp_content(content: &ToolResultContent) -> Vec<Value> {
    match content {
        ToolResultContent::Text(text) => vec![json!({"type": "text", "text": text})],
        ToolResultContent::Blocks(blocks) => blocks
            .iter()
            .map(|b| match b {
                ContentBlock::Text { text } => json!({"type": "text", "text": text}),
                ContentBlock::Image {
                    source: ImageSource::Base64 { media_type, data },
                } => json!({"type": "image", "data": data, "mimeType": media_type}),
                ContentBlock::ToolReference { tool_name } => {
                    json!({"type": "text", "text": format!("tool: {tool_name}")})
                }
                other => json!({
                    "type": "text",
                    "text": serde_json::to_string(other).unwrap_or_else(|_| format!("{other:?}")),
                }),
            })
            .collect(),
    }
}

/// `(progress, total, message)` for one progress report of a call, given the last progress
/// sent (see `ProgressForwarder`).
pub(crate) fn progress_of(data: &Value, last: Option<f64>) -> (f64, Option<f64>, Option<String>) {
    // An MCP tool's report: forwarded as its server sent it.
    if let Some(progress) = data.get("progress").and_then(Value::as_f64) {
        let total = data.get("total").and_then(Value::as_f64);
        let message = data
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned);
        return (progress, total, message);
    }
    // Bash: the output so far, counted in bytes, with its last line as the message.
    if let Some(bytes) = data.get("totalBytes").and_then(Value::as_f64) {
        let message = data
            .get("output")
            .and_then(Value::as_str)
            .and_then(|out| out.lines().rev().find(|l| !l.trim().is_empty()))
            .map(|line| {
                format!(
                    "{} bytes of output; last line: {}",
                    bytes,
                    cut(line.trim(), 200)
                )
            });
        return (bytes, None, message);
    }
    // Anything else: one more step.
    let step = last.map_or(1.0, |l| l.floor() + 1.0);
    (step, None, Some(cut(&data.to_string(), 200)))
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(max).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An upstream MCP tool that stated no hints: its flags all read false.
    struct Unannotated;

    #[tool_core::async_trait]
    impl Tool for Unannotated {
        fn name(&self) -> &str {
            "mcp__up__thing"
        }
        fn mcp_info(&self) -> Option<tool_core::McpToolInfo> {
            Some(tool_core::McpToolInfo {
                server_name: "up".into(),
                tool_name: "thing".into(),
                source: None,
            })
        }
        fn input_schema(&self) -> Value {
            json!({"type": "object"})
        }
        fn description(&self) -> std::borrow::Cow<'_, str> {
            "a thing".into()
        }
        fn max_result_size(&self) -> tool_core::MaxResultSize {
            tool_core::MaxResultSize::Chars(1000)
        }
        async fn call(
            &self,
            _input: Value,
            _ctx: tool_core::ToolUseContext,
            _progress: tool_core::ProgressSender,
        ) -> Result<tool_core::ToolResult, tool_core::ToolError> {
            Err(tool_core::ToolError::msg("not called"))
        }
    }

    /// Hints never read "safe" where nothing said so: an upstream tool's unstated hints are
    /// left out (MCP's cautious defaults); Edit is destructive, Bash open-world.
    #[test]
    fn annotations_never_claim_safety_nobody_stated() {
        let up = tool_entry(&Unannotated);
        assert_eq!(
            up["annotations"],
            json!({"title": "mcp__up__thing"}),
            "{up}"
        );
        let edit = tool_entry(&tools_builtin::Edit);
        assert_eq!(edit["annotations"]["destructiveHint"], true, "{edit}");
        let bash = tool_entry(&tools_builtin::Bash::default());
        assert_eq!(bash["annotations"]["openWorldHint"], true, "{bash}");
        let read = tool_entry(&tools_builtin::Read);
        assert_eq!(read["annotations"]["readOnlyHint"], true, "{read}");
        assert_eq!(read["annotations"]["openWorldHint"], false, "{read}");
    }

    #[test]
    fn progress_increases_whatever_the_report() {
        assert_eq!(
            progress_of(&json!({"progress": 50, "total": 100}), Some(0.0)),
            (50.0, Some(100.0), None)
        );
        let (bytes, total, message) =
            progress_of(&json!({"output": "a\nb\n", "totalBytes": 4}), None);
        assert_eq!((bytes, total), (4.0, None));
        assert_eq!(message.as_deref(), Some("4 bytes of output; last line: b"));
        assert_eq!(progress_of(&json!({"x": 1}), Some(4.0)).0, 5.0);
        assert_eq!(progress_of(&json!({"x": 1}), None).0, 1.0);
    }
}
